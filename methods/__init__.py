"""The methods of the five papers as scikit-learn estimators, plus kernels and solvers.

Each family lives in its own package (svm, mkl, feature_weighted, fda); the public
names are re-exported here. The conventions every estimator follows (multi-class,
kernel width, fitted attributes) are in methods/README.md.
"""

from methods._validation import check_psd_kernel
from methods.exceptions import NonPSDKernelError
from methods.fda import FDA
from methods.feature_weighted import WRBFSVM
from methods.mkl import EpsMKL, MKLm, SimpleMKL
from methods.svm import SVM, SVMFDA, EpsSVM, SVMm

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
