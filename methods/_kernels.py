"""Kernel functions and kernel banks used by the five papers.

Kernels (mlsvm Sec. VII; lmnnmkl Sec. 6):

- linear      ``k(x, y) = x . y``
- polynomial  ``k(x, y) = (x . y + 1) ** d``
- Gaussian    ``k(x, y) = exp(-||x - y||^2 / (2 sigma^2))``

Normalizations:

- ``"cosine"``  ``K_ij / sqrt(K_ii K_jj)`` (mlsvm Sec. VII). It needs the diagonal of
  both the row and the column points, so a test block uses the self-similarities of the
  test points, never those of the training points.
- ``"mean_diag"``  ``K / mean(diag(K_train))`` (lmnnmkl Sec. 6: "normalized by the mean
  of the diagonal"); the test block is divided by the *training* mean diagonal.

Kernel banks are stacks of shape ``(n_rows, n_cols, n_kernels)`` so that
scikit-learn's ``_safe_split`` slices them like any precomputed kernel.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

KERNELS = ("linear", "poly", "gaussian")
NORMALIZATIONS = (None, "cosine", "mean_diag")

# mlsvm Sec. VII, the bank of SimpleMKL: degrees 1..10 and ten bandwidths.
BANK20_DEGREES = tuple(range(1, 11))
BANK20_SIGMAS = (0.5, 1.0, 2.0, 5.0, 7.0, 10.0, 12.0, 15.0, 17.0, 20.0)


def _check_kernel_params(
    kernel: object, degree: object, sigma: object, where: str
) -> None:
    """Raise a ValueError for a width or degree the kernel formula cannot take.

    ``sigma = 0`` (or NaN) makes the Gaussian NaN, a negative one is the width
    ``|sigma|`` under another name, and a degree that is no integer >= 1 makes
    ``(x . y + 1) ** d`` NaN for negative ``x . y`` (or constant, ``d = 0``):
    each used to give a NaN or silently other kernel, which a solver then fitted.
    """
    if kernel == "gaussian":
        ok = (
            isinstance(sigma, numbers.Real)
            and not isinstance(sigma, bool)
            and np.isfinite(sigma)
            and sigma > 0
        )
        if not ok:
            raise ValueError(
                f"{where}: the Gaussian width sigma must be a finite number > 0; got "
                f"{sigma!r}."
            )
    elif kernel == "poly":
        ok = (
            isinstance(degree, numbers.Real)
            and not isinstance(degree, bool)
            and float(degree).is_integer()
            and degree >= 1
        )
        if not ok:
            raise ValueError(
                f"{where}: the polynomial degree must be an integer >= 1; got "
                f"{degree!r}."
            )


def _as_2d(X: np.ndarray, name: str) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array (n_samples, n_features); got shape {X.shape}."
        )
    return X


def squared_distances(X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances ``||x_i - y_j||^2``, clipped at 0."""
    X = _as_2d(X, "X")
    Y = X if Y is None else _as_2d(Y, "Y")
    xx = np.einsum("ij,ij->i", X, X)
    yy = xx if Y is X else np.einsum("ij,ij->i", Y, Y)
    D = xx[:, None] + yy[None, :] - 2.0 * (X @ Y.T)
    np.maximum(D, 0.0, out=D)
    if Y is X:
        np.fill_diagonal(D, 0.0)
    return D


def _callable_block(kernel: Callable, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``kernel(X, Y)`` as float64, checked to be the ``(len(X), len(Y))`` block.

    A callable that returns another shape (a transposed block, a flattened one, a
    column dropped) would otherwise fail deep inside a solver with a broadcasting
    or indexing error, or not at all.
    """
    K = np.asarray(kernel(X, Y), dtype=np.float64)
    if K.shape != (X.shape[0], Y.shape[0]):
        name = getattr(kernel, "__name__", repr(kernel))
        raise ValueError(
            f"The kernel callable {name} returned an array of shape {K.shape} for "
            f"X of shape {X.shape} and Y of shape {Y.shape}; a kernel callable "
            f"takes (X, Y) and returns the block K[i, j] = k(X[i], Y[j]) of shape "
            f"(len(X), len(Y)) = {(X.shape[0], Y.shape[0])}."
        )
    return K


def _raw_kernel(
    X: np.ndarray, Y: np.ndarray, kernel: str | Callable, degree: int, sigma: float
) -> np.ndarray:
    if callable(kernel):
        return _callable_block(kernel, X, Y)
    if kernel == "linear":
        return X @ Y.T
    if kernel == "poly":
        return (X @ Y.T + 1.0) ** degree
    if kernel == "gaussian":
        return np.exp(-squared_distances(X, Y) / (2.0 * sigma**2))
    raise ValueError(
        f"Unknown kernel {kernel!r}; choose one of {KERNELS} or pass a callable."
    )


def _self_similarity(
    X: np.ndarray, kernel: str | Callable, degree: int, sigma: float
) -> np.ndarray:
    """``k(x_i, x_i)`` for every row, without building the full Gram matrix."""
    if callable(kernel):
        return np.array(
            [_callable_block(kernel, x[None, :], x[None, :])[0, 0] for x in X]
        )
    sq = np.einsum("ij,ij->i", X, X)
    if kernel == "linear":
        return sq
    if kernel == "poly":
        return (sq + 1.0) ** degree
    if kernel == "gaussian":
        return np.ones(X.shape[0])
    raise ValueError(
        f"Unknown kernel {kernel!r}; choose one of {KERNELS} or pass a callable."
    )


def cosine_normalize(
    K: np.ndarray, diag_rows: np.ndarray, diag_cols: np.ndarray
) -> np.ndarray:
    """``K_ij / sqrt(d_i d_j)``; zero self-similarities leave their row/column at 0."""
    d_r = np.sqrt(np.asarray(diag_rows, dtype=np.float64))
    d_c = np.sqrt(np.asarray(diag_cols, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = K / np.outer(d_r, d_c)
    out[~np.isfinite(out)] = 0.0
    return out


def pairwise_kernel(
    X: np.ndarray,
    Y: np.ndarray | None = None,
    *,
    kernel: str | Callable = "linear",
    degree: int = 2,
    sigma: float = 1.0,
    normalize: str | None = None,
    train_diag_mean: float | None = None,
) -> np.ndarray:
    """Kernel block ``K[i, j] = k(X[i], Y[j])`` with an optional normalization.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
    Y : ndarray of shape (n_cols, n_features), default=None
        The column points (training points for a test block); ``None`` means ``X``.
    kernel : {"linear", "poly", "gaussian"} or callable
        A callable takes ``(X, Y)`` and returns the raw block.
    degree : int, default=2
        Degree ``d`` of the polynomial kernel ``(x . y + 1) ** d``.
    sigma : float, default=1.0
        Bandwidth of the Gaussian kernel ``exp(-||x - y||^2 / (2 sigma^2))``.
    normalize : {None, "cosine", "mean_diag"}
        See the module docstring.
    train_diag_mean : float, default=None
        For ``normalize="mean_diag"`` on a test block: the mean diagonal of the training
        Gram matrix. Required when ``Y`` is given with ``"mean_diag"``.

    Returns
    -------
    K : ndarray of shape (n_rows, n_cols)
    """
    if normalize not in NORMALIZATIONS:
        raise ValueError(
            f"Unknown normalize={normalize!r}; choose one of {NORMALIZATIONS}."
        )
    _check_kernel_params(kernel, degree, sigma, "pairwise_kernel")
    X = _as_2d(X, "X")
    same = Y is None
    Y = X if same else _as_2d(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features but Y has {Y.shape[1]}; both blocks must use "
            "the same features."
        )
    K = _raw_kernel(X, Y, kernel, degree, sigma)
    if normalize == "cosine":
        d_x = np.diag(K).copy() if same else _self_similarity(X, kernel, degree, sigma)
        d_y = d_x if same else _self_similarity(Y, kernel, degree, sigma)
        K = cosine_normalize(K, d_x, d_y)
    elif normalize == "mean_diag":
        if same:
            m = float(np.mean(np.diag(K)))
        elif train_diag_mean is None:
            raise ValueError(
                "normalize='mean_diag' on a test block needs train_diag_mean, the mean "
                "diagonal of the training Gram matrix."
            )
        else:
            m = float(train_diag_mean)
        K = K / m if m > 0 else K
    return K


@dataclass(frozen=True)
class KernelSpec:
    """One named kernel: ``kernel`` kind plus its parameter and normalization."""

    kernel: str
    degree: int = 2
    sigma: float = 1.0
    normalize: str | None = None

    def __post_init__(self) -> None:
        # at construction, so a bank with a bad member fails naming it, before
        # any Gram matrix is built
        if not callable(self.kernel) and self.kernel not in KERNELS:
            raise ValueError(
                f"{self!r}: unknown kernel {self.kernel!r}; choose one of {KERNELS}."
            )
        if self.normalize not in NORMALIZATIONS:
            raise ValueError(
                f"{self!r}: unknown normalize={self.normalize!r}; choose one of "
                f"{NORMALIZATIONS}."
            )
        _check_kernel_params(self.kernel, self.degree, self.sigma, repr(self))

    @property
    def label(self) -> str:
        if self.kernel == "poly":
            return f"poly{self.degree}"
        if self.kernel == "gaussian":
            return f"gauss{self.sigma:g}"
        return self.kernel

    def __call__(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        return pairwise_kernel(
            X,
            Y,
            kernel=self.kernel,
            degree=self.degree,
            sigma=self.sigma,
            normalize=self.normalize,
        )


def bank20(normalize: str | None = "cosine") -> list[KernelSpec]:
    """The 20-kernel bank of mlsvm Sec. VII: polynomial degree 1..10, ten Gaussians."""
    return [
        KernelSpec("poly", degree=d, normalize=normalize) for d in BANK20_DEGREES
    ] + [KernelSpec("gaussian", sigma=s, normalize=normalize) for s in BANK20_SIGMAS]


def nr_lmnn3(normalize: str | None = None) -> list[KernelSpec]:
    """NR-LMNN-MKL's three kernels (lmnnmkl Sec. 6) with 'linear' read as x . y.

    The check variant of the reading "the linear" kernel: the table uses the
    bank20 degree-1 polynomial x . y + 1 (members 0, 1, 10 of lmnn20).
    """
    return [
        KernelSpec("linear", normalize=normalize),
        KernelSpec("poly", degree=2, normalize=normalize),
        KernelSpec("gaussian", sigma=0.5, normalize=normalize),
    ]


BANKS = {"bank20": bank20}
BANKS["nr_lmnn3"] = nr_lmnn3


def nr_lmnn3_sigma_sq(normalize: str | None = None) -> list[KernelSpec]:
    """NR-LMNN-MKL's three kernels with the width read as exp(-||x-z||^2 / sigma^2).

    The check variant of the Gaussian convention: sigma = 0.5 in that reading is
    sigma = 0.5 / sqrt(2) in the project's exp(-||x-z||^2 / (2 sigma^2)); 'linear'
    stays the bank's degree-1 polynomial, as in the table.
    """
    return [
        KernelSpec("poly", degree=1, normalize=normalize),
        KernelSpec("poly", degree=2, normalize=normalize),
        KernelSpec("gaussian", sigma=0.5 / np.sqrt(2.0), normalize=normalize),
    ]


BANKS["nr_lmnn3_sigma_sq"] = nr_lmnn3_sigma_sq


def bank_specs(name: str, normalize: str | None) -> list[KernelSpec]:
    """A named kernel bank (``"bank20"``) with the given normalization."""
    if name not in BANKS:
        raise ValueError(
            f"Unknown kernel bank {name!r}; choose one of {sorted(BANKS)}."
        )
    return BANKS[name](normalize)


def kernel_stack(
    X: np.ndarray, Y: np.ndarray | None, specs: Sequence[KernelSpec]
) -> np.ndarray:
    """Stack of kernel blocks, shape ``(n_rows, n_cols, n_kernels)``."""
    X = _as_2d(X, "X")
    n_cols = X.shape[0] if Y is None else np.asarray(Y).shape[0]
    out = np.empty((X.shape[0], n_cols, len(specs)))
    for k, spec in enumerate(specs):
        out[:, :, k] = spec(X, Y)
    return out


class KernelEstimatorMixin:
    """What the kernel estimators share: their Gram matrix and the pairwise tag.

    The estimator holds ``kernel``, ``degree``, ``sigma`` and ``normalize``. With
    ``kernel="precomputed"`` it is tagged ``pairwise``, so scikit-learn's CV slices
    the Gram matrix by rows and columns (``_safe_split``) and a grid search sees
    train-by-train blocks.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _check_training_gram(self, K: np.ndarray) -> None:
        """Refuse a precomputed training Gram matrix the estimator cannot take.

        It must be square; and ``normalize`` needs the kernel function, so with a
        Gram matrix it must be None (it used to be ignored by the SVM family and
        KOMD: the model was fitted on the matrix as given).
        """
        if K.shape[0] != K.shape[1]:
            raise ValueError(
                "Precomputed matrix must be a square matrix. Input is a "
                f"{K.shape[0]}x{K.shape[1]} matrix."
            )
        if self.normalize is not None:
            raise ValueError(
                f"{type(self).__name__}: normalize={self.normalize!r} needs the "
                "kernel function; with kernel='precomputed' normalize the Gram "
                "matrices before fitting (methods.kernels.cosine_normalize; in "
                "kml-run, kernel.normalize) and use normalize=None."
            )

    def _gram(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        return pairwise_kernel(
            X,
            Y,
            kernel=self.kernel,
            degree=self.degree,
            sigma=self.sigma,
            normalize=self.normalize,
        )
