"""Input checks shared by the estimators and the runner."""

from __future__ import annotations

import numpy as np


def psd_tolerance(eigvals: np.ndarray) -> float:
    """numpy's ``matrix_rank`` tolerance, as metric-learn judges PSD matrices."""
    return float(np.abs(eigvals).max() * len(eigvals) * np.finfo(eigvals.dtype).eps)


def check_psd_gram(K: np.ndarray, *, what: str = "kernel matrix") -> None:
    """Raise :class:`~methods.exceptions.NonPSDKernelError` if ``K`` is not PSD.

    A Gram matrix is accepted when it is symmetric and its smallest eigenvalue is above
    ``-abs(w).max() * n * eps`` (round-off of a PSD matrix stays within that band).
    """
    from methods.exceptions import NonPSDKernelError

    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"The {what} must be square; got shape {K.shape}.")
    asym = float(np.max(np.abs(K - K.T))) if K.size else 0.0
    scale = float(np.max(np.abs(K))) if K.size else 0.0
    if asym > 1e-10 * max(scale, 1.0):
        raise NonPSDKernelError(
            f"The {what} is not symmetric (max |K - K'| = {asym:.3g}); a kernel matrix "
            "must be symmetric. Check the kernel function."
        )
    w = np.linalg.eigvalsh((K + K.T) / 2)
    tol = psd_tolerance(w)
    if w.min() < -tol:
        raise NonPSDKernelError(
            f"The {what} is not positive semi-definite: smallest eigenvalue "
            f"{w.min():.3g} < -{tol:.3g}. Use a valid (PSD) kernel, or add a small "
            "ridge to its diagonal."
        )
