"""Input checks shared by the estimators and the runner."""

from __future__ import annotations

import numpy as np

from methods.exceptions import NonPSDKernelError


def psd_tolerance(eigvals: np.ndarray) -> float:
    """numpy's ``matrix_rank`` tolerance, as metric-learn judges PSD matrices."""
    return float(np.abs(eigvals).max() * len(eigvals) * np.finfo(eigvals.dtype).eps)


def check_psd_kernel(K: np.ndarray, *, what: str = "training kernel matrix") -> None:
    """Raise :class:`NonPSDKernelError` if the Gram matrix ``K`` is not PSD.

    Judged as metric-learn's ``_check_sdp_from_eigen``: the smallest eigenvalue of
    the symmetrized ``K`` must be at least ``-abs(w).max() * len(w) * eps``, with
    the machine epsilon of the input's precision (float32 Gram matrices carry
    float32 round-off). An eigendecomposition: O(n^3).
    """
    K = np.asarray(K)
    dtype = K.dtype if K.dtype in (np.float16, np.float32) else np.float64
    K = K.astype(np.float64, copy=False)
    eps = np.finfo(dtype).eps
    w = np.linalg.eigvalsh((K + K.T) / 2.0)
    tol = psd_tolerance(w) * eps / np.finfo(np.float64).eps
    asym = float(np.max(np.abs(K - K.T))) if K.size else 0.0
    if asym > np.sqrt(eps) * max(float(np.abs(w).max(initial=0.0)), 1.0):
        raise NonPSDKernelError(
            f"The {what} is not symmetric (max |K - K'| = {asym:.3g}); a kernel "
            "matrix must be symmetric. Check the kernel function."
        )
    if len(w) and w.min() < -tol:
        raise NonPSDKernelError(
            f"The {what} is not positive semi-definite: smallest eigenvalue "
            f"{w.min():.3g} < -{tol:.3g} (tolerance abs(w).max() * n * eps). Use a "
            "PSD kernel, or pass check_psd=False to fit on it anyway."
        )
