"""Multiple kernel learning on the simplex: SimpleMKL, MKL_m and ε-MKL (mlsvm Sec. VI).

- :mod:`methods.mkl._descent`: SimpleMKL's reduced-gradient descent of the weights
  (arrays in, dict out; no estimator state).
- :mod:`methods.mkl._bank`: the stack of base kernels and its normalization.
- :mod:`methods.mkl._estimators`: the three estimators, one inner dual each.
"""

from methods.mkl._bank import MKL_NORMALIZATIONS
from methods.mkl._descent import (
    combine_kernels,
    kernel_quadratic_forms,
    reduced_gradient_mkl,
)
from methods.mkl._estimators import EpsMKL, MKLm, SimpleMKL

__all__ = [
    "MKL_NORMALIZATIONS",
    "EpsMKL",
    "MKLm",
    "SimpleMKL",
    "combine_kernels",
    "kernel_quadratic_forms",
    "reduced_gradient_mkl",
]
