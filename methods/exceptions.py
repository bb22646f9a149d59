"""Custom exceptions of the methods package (as metric-learn's ``exceptions.py``)."""

from __future__ import annotations

from numpy.linalg import LinAlgError


class NonPSDKernelError(LinAlgError):
    """A kernel (Gram) matrix is not positive semi-definite beyond round-off.

    Raised by the kernel estimators when the training Gram matrix has an eigenvalue
    below ``-abs(w).max() * len(w) * eps`` (the tolerance metric-learn uses in
    ``_check_sdp_from_eigen``). Subclasses :class:`numpy.linalg.LinAlgError`, so
    code that already catches linear-algebra failures catches it too.
    """
