"""Kernels with learned per-feature weights: the WRBF-SVM of wrbf.

- :mod:`methods.feature_weighted._kernel`: the weighted RBF kernel (wrbf Eq. (9)),
  the dual objective (5) and its gradient (11)-(15).
- :mod:`methods.feature_weighted._descent`: the descent on the weights (Sec. 4.3)
  and the C-SVM solves it calls.
- :mod:`methods.feature_weighted._estimator`: :class:`WRBFSVM`.
"""

from methods.feature_weighted._descent import wrbf_descent
from methods.feature_weighted._estimator import WRBFSVM
from methods.feature_weighted._kernel import (
    wrbf_dual_objective,
    wrbf_gradient,
    wrbf_kernel,
)

__all__ = [
    "WRBFSVM",
    "wrbf_descent",
    "wrbf_dual_objective",
    "wrbf_gradient",
    "wrbf_kernel",
]
