"""The kernel bank of the MKL estimators: build the stack of base kernels, normalize.

Training blocks are ``(n, n, m)`` stacks; test blocks ``(n_test, n_train, m)`` are
scaled with the factors fitted on the training block (``kernel_scales_``), so a
test kernel never sees test-set statistics.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from sklearn.utils.validation import check_array, validate_data

from methods._kernels import KernelSpec, bank20, pairwise_kernel

MKL_NORMALIZATIONS = (None, "cosine", "unit_trace", "feature_variance")


def _stack_scale(K: np.ndarray, normalize: str | None) -> float:
    """Factor giving the training block unit trace or unit feature-space variance."""
    if normalize == "unit_trace":
        size = float(np.trace(K))
    elif normalize == "feature_variance":
        # (1/n) sum_i ||phi_i - phi_bar||^2 = mean(diag K) - mean(K)
        size = float(np.mean(np.diag(K)) - np.mean(K))
    else:
        return 1.0
    # A zero (or numerically null) kernel is left as it is rather than blown up.
    return 1.0 / size if size > np.finfo(float).eps * max(np.abs(K).max(), 1.0) else 1.0


class KernelBankMixin:
    """Builds the training and test stacks of an MKL estimator from ``kernel``.

    Reads ``kernel`` ("bank20", "precomputed" or a list of :class:`KernelSpec`) and
    ``normalize``; sets ``kernel_specs_``, ``kernel_scales_`` and ``X_fit_``.
    """

    @property
    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _specs(self) -> list[KernelSpec]:
        if isinstance(self.kernel, str):  # "bank20"; "precomputed" never gets here
            specs = bank20(normalize=None)
        else:
            specs = list(self.kernel)
            bad = [s for s in specs if not isinstance(s, KernelSpec)]
            if bad or not specs:
                raise TypeError(
                    f"{type(self).__name__}: kernel must be 'precomputed', 'bank20' or "
                    "a non-empty list of methods.kernels.KernelSpec; got "
                    f"{self.kernel!r}."
                )
        if self.normalize == "cosine":
            # Cosine normalization of a rescaled kernel is the cosine of the raw one.
            specs = [replace(s, normalize="cosine") for s in specs]
        return specs

    def _raw_block(self, spec: KernelSpec, X: np.ndarray, Y: np.ndarray | None):
        # "mean_diag" needs the training diagonal for test blocks: it is applied as
        # a fitted scale instead (see _train_stack), so the block is built raw.
        norm = None if spec.normalize == "mean_diag" else spec.normalize
        return pairwise_kernel(
            X, Y, kernel=spec.kernel, degree=spec.degree, sigma=spec.sigma,
            normalize=norm,
        )  # fmt: skip

    def _train_stack(self, X: np.ndarray) -> np.ndarray:
        """Training stack ``(n, n, m)``; sets ``kernel_scales_`` (and the specs)."""
        if self._precomputed:
            if self.normalize == "cosine":
                raise ValueError(
                    "normalize='cosine' needs the self-similarities of the test "
                    "points, which a precomputed stack does not carry. Normalize the "
                    "stack beforehand (methods.kernels.cosine_normalize) and pass "
                    "normalize=None, or pass raw X with kernel='bank20'."
                )
            stack = X[:, :, None] if X.ndim == 2 else X
            if X.ndim not in (2, 3) or stack.shape[0] != stack.shape[1]:
                raise ValueError(
                    "Precomputed kernel stack must be square in its first two axes, "
                    "of shape (n_train, n_train) or (n_train, n_train, n_kernels); "
                    f"got shape {X.shape}."
                )
            self.kernel_specs_ = None
            # a refit on a stack keeps no training points of an earlier fit
            self.__dict__.pop("X_fit_", None)
            scales = np.array([_stack_scale(stack[:, :, k], self.normalize)
                               for k in range(stack.shape[2])])  # fmt: skip
            self.kernel_scales_ = scales
            return stack * scales if np.any(scales != 1.0) else stack
        specs = self._specs()
        stack = np.empty((X.shape[0], X.shape[0], len(specs)))
        scales = np.ones(len(specs))
        for k, spec in enumerate(specs):
            K = self._raw_block(spec, X, None)
            if spec.normalize == "mean_diag" and self.normalize != "cosine":
                d = float(np.mean(np.diag(K)))
                scales[k] = 1.0 / d if d > 0 else 1.0
                K = K * scales[k]
            s = _stack_scale(K, self.normalize)
            scales[k] *= s
            stack[:, :, k] = K * s
        self.kernel_specs_ = specs
        self.kernel_scales_ = scales
        self.X_fit_ = np.array(X, copy=True)
        return stack

    def _test_stack(self, X: np.ndarray) -> np.ndarray:
        """Test stack ``(n_test, n_train, m)`` scaled with the training factors."""
        name = type(self).__name__
        n_train, m = self.dual_coef_.shape[1], self.kernel_weights_.shape[1]
        if self._precomputed:
            # Dtype, sparsity, NaN/inf and 1-D input first, with sklearn's messages.
            X = check_array(X, allow_nd=True, dtype=np.float64)
            stack = X[:, :, None] if X.ndim == 2 else X
            if X.ndim > 3 or stack.shape[1:] != (n_train, m):
                one = " or (n_test, n_train) for one kernel" if m == 1 else ""
                raise ValueError(
                    f"X has {X.shape[1]} features, but {name} is expecting "
                    f"{n_train} features as input: with kernel='precomputed', pass "
                    "the kernel stack between test and training points, of shape "
                    f"(n_test, {n_train}, {m}){one}; got shape {X.shape}."
                )
            X = validate_data(self, X, reset=False, allow_nd=True, dtype=np.float64)
            stack = X[:, :, None] if X.ndim == 2 else X
            return stack * self.kernel_scales_
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = np.empty((X.shape[0], n_train, m))
        for k, spec in enumerate(self.kernel_specs_):
            out[:, :, k] = (
                self._raw_block(spec, X, self.X_fit_) * self.kernel_scales_[k]
            )
        return out

    # -- fit / predict --------------------------------------------------------
