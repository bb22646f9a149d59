"""Input checks shared by the estimators and the runner."""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dsymv
from scipy.linalg.lapack import dpotrf

from methods.exceptions import NonPSDKernelError

# Columns symmetrized per block: bounds the temporaries to ~n * 256 doubles.
_BLOCK = 256
# Power-iteration steps for the lower bound on ||K||_2 (O(n^2) each).
_POWER_STEPS = 4
# Smallest n symmetrized by the compiled pass (methods._psd_kernels). Below it the
# numpy blocks cost at most ~3 ms more (n = 1000, one thread), less than loading
# the pass's numba cache in a fresh process (~5 ms; ~130 ms more in a run that
# compiles nothing else), and a small cell (mlsvm Table I, n <= 476) then loads
# none of it (issue 14, benchmarks/README.md, session 10).
_COMPILED_FROM = 1000


def psd_tolerance(eigvals: np.ndarray) -> float:
    """numpy's ``matrix_rank`` tolerance, as metric-learn judges PSD matrices."""
    return float(np.abs(eigvals).max() * len(eigvals) * np.finfo(eigvals.dtype).eps)


def _raise_asymmetric(what: str, asym: float) -> None:
    raise NonPSDKernelError(
        f"The {what} is not symmetric (max |K - K'| = {asym:.3g}); a kernel "
        "matrix must be symmetric. Check the kernel function."
    )


def _check_from_eigenvalues(S: np.ndarray, asym: float, eps: float, what: str) -> None:
    """The exact rule on the symmetrized ``S`` (an eigendecomposition: O(n^3))."""
    w = np.linalg.eigvalsh(S)
    tol = psd_tolerance(w) * eps / np.finfo(np.float64).eps
    if asym > np.sqrt(eps) * max(float(np.abs(w).max(initial=0.0)), 1.0):
        _raise_asymmetric(what, asym)
    if len(w) and w.min() < -tol:
        raise NonPSDKernelError(
            f"The {what} is not positive semi-definite: smallest eigenvalue "
            f"{w.min():.3g} < -{tol:.3g} (tolerance abs(w).max() * n * eps). Use a "
            "PSD kernel, or pass check_psd=False to fit on it anyway."
        )


def _symmetrize_into(S: np.ndarray, K: np.ndarray) -> tuple[float, float]:
    """Lower triangle of ``S = (K + K') / 2``; returns (max |K - K'|, ||S||_F).

    Elementwise the same operations as ``(K + K.T) / 2``, so bit-identical, and
    LAPACK's potrf and numpy's ``eigvalsh`` (``UPLO="L"``) read only the lower
    triangle. One compiled pass over ``K`` (3x faster than numpy at n = 4000);
    numpy's column blocks (temporaries of ``n * _BLOCK`` doubles) for inputs
    that would need a copy to be C-ordered float64, and below ``_COMPILED_FROM``
    rows (no numba cache to load). Both fill the same lower triangle.
    """
    if (
        K.dtype == np.float64
        and (K.flags.c_contiguous or K.flags.f_contiguous)
        and K.shape[0] >= _COMPILED_FROM
    ):
        from methods._psd_kernels import symmetrize_lower

        # (K + K') / 2 and |K - K'| are the same for K.T, which is C-ordered.
        Kc = K if K.flags.c_contiguous else K.T
        asym, fro = symmetrize_lower(Kc, S.T)
        return float(asym), float(fro)
    return _symmetrize_blocks(S, K)


def _symmetrize_blocks(S: np.ndarray, K: np.ndarray) -> tuple[float, float]:
    """:func:`_symmetrize_into` in numpy column blocks (any dtype and layout)."""
    n = K.shape[0]
    asym = 0.0
    fro2 = 0.0
    for j0 in range(0, n, _BLOCK):
        j1 = min(j0 + _BLOCK, n)
        cols = K[j0:, j0:j1].astype(np.float64, copy=False)
        rows_t = K[j0:j1, j0:].T.astype(np.float64, copy=False)
        asym = max(asym, float(np.max(np.abs(cols - rows_t))))
        block = (cols + rows_t) / 2.0
        S[j0:, j0:j1] = block
        # The diagonal square block holds both triangles; the rest counts twice.
        fro2 += float(np.sum(block[: j1 - j0] ** 2))
        fro2 += 2.0 * float(np.sum(block[j1 - j0 :] ** 2))
    return asym, float(np.sqrt(fro2))


def check_psd_kernel(K: np.ndarray, *, what: str = "training kernel matrix") -> None:
    """Raise :class:`NonPSDKernelError` if the Gram matrix ``K`` is not PSD.

    Judged as metric-learn's ``_check_sdp_from_eigen``: the smallest eigenvalue of
    the symmetrized ``K`` must be at least ``-abs(w).max() * len(w) * eps``, with
    the machine epsilon of the input's precision (float32 Gram matrices carry
    float32 round-off); ``K`` must be symmetric up to
    ``sqrt(eps) * max(abs(w).max(), 1)``.

    A Cholesky factorization (``n^3 / 3`` flops, BLAS-3) certifies the common
    case: if ``S + delta I`` factors, with ``S = (K + K') / 2`` and ``delta``
    half the tolerance computed from a lower bound on ``abs(w).max()`` (power
    iteration), then ``min(w) >= -delta - e`` where ``e`` is the factorization's
    backward error (a few ``sqrt(n) eps ||S||`` in practice, against the other
    half of the tolerance, ``n eps ||S|| / 2``). Only when the certificate fails
    (an indefinite or nearly singular ``S``, or an asymmetry between the two
    bounds) is the verdict taken from the eigenvalues, exactly as before. Only
    lower triangles are formed; memory: one n x n float64 work array.

    Raises
    ------
    NonPSDKernelError
        ``K`` is not symmetric, or not PSD, beyond the tolerances above.
    ValueError
        ``K`` has a NaN or infinite entry (named by row and column).
    """
    K = np.asarray(K)
    dtype = K.dtype if K.dtype in (np.float16, np.float32) else np.float64
    eps = float(np.finfo(dtype).eps)
    n = K.shape[0] if K.ndim == 2 else 0
    if K.size and not np.all(np.isfinite(K)):
        # No eigenvalue verdict exists (eigvalsh fails on NaN, and an inf on the
        # diagonal would pass): name the entry, the likely cause and the fix.
        i, j = (int(a) for a in np.argwhere(~np.isfinite(K))[0])
        raise ValueError(
            f"The {what} has a non-finite entry ({K[i, j]} at row {i}, column "
            f"{j}); a kernel must give finite values. Check the input features "
            "and the kernel's parameters (e.g. a width or degree that overflows)."
        )
    if n == 0 or K.shape != (n, n):
        # Edge cases keep the reference path (and its errors).
        K64 = K.astype(np.float64, copy=False)
        asym = float(np.max(np.abs(K64 - K64.T))) if K64.size else 0.0
        _check_from_eigenvalues((K64 + K64.T) / 2.0, asym, eps, what)
        return
    # Zeros (lazily mapped): the upper triangle stays 0, read by no routine here.
    S = np.zeros((n, n), dtype=np.float64, order="F")
    asym, upper = _symmetrize_into(S, K)
    # Bounds on ||S||_2 = abs(w).max(): a lower one (the diagonal and a few power
    # steps; ||S v|| / ||v|| <= ||S||_2 for every v) and an upper one (Frobenius).
    lower = float(np.abs(np.diagonal(S)).max())
    v = np.ones(n)
    for _ in range(_POWER_STEPS):
        Sv = dsymv(1.0, S, v, lower=1)
        norm_v = float(np.linalg.norm(v))
        lower = max(lower, float(np.linalg.norm(Sv)) / norm_v)
        if not np.any(Sv):
            break
        v = Sv / float(np.linalg.norm(Sv))
    if asym > np.sqrt(eps) * max(upper, 1.0):
        _raise_asymmetric(what, asym)
    if asym <= np.sqrt(eps) * max(lower, 1.0):
        delta = 0.5 * lower * n * eps
        S.flat[:: n + 1] += delta
        _, info = dpotrf(S, lower=1, clean=0, overwrite_a=1)
        if info == 0:
            return  # certified PSD
    # No certificate: the exact rule (rebuild S, the factorization overwrote it).
    _symmetrize_into(S, K)
    _check_from_eigenvalues(S, asym, eps, what)


def check_input_kernel(
    K: np.ndarray, in_dtype: object, *, what: str = "precomputed training kernel matrix"
) -> None:
    """:func:`check_psd_kernel` of a Gram matrix a user passed to ``fit``.

    Input validation made it float64; a float16/float32 matrix carries that
    precision's round-off, so it is judged at the precision it came in
    (``in_dtype``, the input's dtype before validation).
    """
    if in_dtype in (np.float16, np.float32):
        K = K.astype(in_dtype)
    check_psd_kernel(K, what=what)


def is_clean_float_matrix(X: object, min_samples: int) -> bool:
    """True for a 2-D float64 ndarray with ``min_samples`` rows, a column, all finite.

    The finiteness test is scikit-learn's own first test (a finite sum); a sum that
    is not finite sends the input to the full check, which names the bad value.
    """
    if not (
        type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.shape[0] >= min_samples
        and X.shape[1] >= 1
    ):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(X.sum()))


def validate_float_input(
    estimator: object,
    X: object,
    y: object = "no_validation",
    *,
    reset: bool = True,
    ensure_min_samples: int = 1,
):
    """scikit-learn's ``validate_data(..., dtype=np.float64)``, fast for clean input.

    A grid search fits an estimator thousands of times on arrays that are already
    float64, finite and unnamed; scikit-learn's checks then cost about as much as
    a small QP (its dataframe probes, ~0.3 ms per call; issue 14). For such input
    -- ``X`` a 2-D float64 ndarray with a finite sum and enough rows, ``y`` (if
    given) a 1-D integer ndarray of the same length, and at predict time an
    estimator fitted on as many unnamed features -- this returns what
    ``validate_data`` returns (``X`` itself; ``y`` as a C-contiguous 1-D array) and
    sets or checks ``n_features_in_`` and ``feature_names_in_`` as it does.
    Everything else goes through ``validate_data``, with its errors.

    Parameters
    ----------
    estimator : estimator instance
    X : object
    y : object, default="no_validation"
        As for ``validate_data``: "no_validation" validates ``X`` only.
    reset : bool, default=True
        True in ``fit`` (sets ``n_features_in_``), False in ``predict``.
    ensure_min_samples : int, default=1

    Returns
    -------
    X, or (X, y)
    """
    no_y = isinstance(y, str) and y == "no_validation"
    fast = is_clean_float_matrix(X, ensure_min_samples)
    if fast and not no_y:
        fast = (
            type(y) is np.ndarray
            and y.ndim == 1
            and y.dtype.kind in "iu"
            and y.shape[0] == X.shape[0]
        )
    if fast and not reset:
        fast = getattr(estimator, "n_features_in_", None) == X.shape[1] and not hasattr(
            estimator, "feature_names_in_"
        )
    if not fast:
        from sklearn.utils.validation import validate_data

        return validate_data(
            estimator,
            X,
            y,
            reset=reset,
            dtype=np.float64,
            ensure_min_samples=ensure_min_samples,
        )
    if reset:
        estimator.__dict__.pop("feature_names_in_", None)
        estimator.n_features_in_ = X.shape[1]
    return X if no_y else (X, np.ascontiguousarray(y))


def validate_test_kernel(
    estimator: object, X: object, *, n_kernels: int | None = None
) -> np.ndarray:
    """``validate_data(estimator, X, reset=False)`` for a precomputed test kernel.

    The block between the test and the training points has one column per
    training point (``n_features_in_``); scikit-learn's own message for a block
    of another width ("X has 44 features, but ... is expecting 45 features")
    speaks of features. This one says which matrix was expected, as the SVM
    family's does. ``n_kernels``: a stack ``(n_test, n_train, n_kernels)`` (MKL,
    LMNN-MKL), whose third axis is checked too.
    """
    from sklearn.utils.validation import check_array, validate_data

    stack = n_kernels is not None
    X_arr = check_array(X, dtype=np.float64, allow_nd=stack)
    n_train = estimator.n_features_in_
    width = X_arr.shape[1]
    expected = (
        f"(n_test, n_train, n_kernels) = (n_test, {n_train}, {n_kernels})"
        if stack
        else f"(n_test, n_train) = (n_test, {n_train})"
    )
    wrong_stack = stack and (
        X_arr.ndim not in (2, 3)
        or ((X_arr.shape[2] if X_arr.ndim == 3 else 1) != n_kernels)
    )
    if width != n_train or wrong_stack:
        name = type(estimator).__name__
        block = "stack of kernels" if stack else "kernel"
        raise ValueError(
            f"X has {width} features, but {name} is expecting {n_train} features "
            f"as input: with kernel='precomputed', it takes the {block} between "
            f"the test and the {n_train} training points, of shape {expected}; "
            f"got shape {X_arr.shape}."
        )
    validate_data(estimator, X, reset=False, skip_check_array=True)
    return X_arr
