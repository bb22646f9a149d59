"""The methods of the five papers as scikit-learn estimators, plus kernels and solvers.

Each family lives in its own private module; the public names are re-exported here.
"""

from methods._base import check_psd_kernel
from methods._fda import FDA
from methods._mkl import EpsMKL, MKLm, SimpleMKL
from methods._svm import SVM, SVMFDA, EpsSVM, SVMm
from methods._wrbf import WRBFSVM
from methods.exceptions import NonPSDKernelError

__all__ = [
    "FDA",
    "SVM",
    "SVMFDA",
    "EpsSVM",
    "SVMm",
    "WRBFSVM",
    "EpsMKL",
    "MKLm",
    "SimpleMKL",
    "NonPSDKernelError",
    "check_psd_kernel",
]
