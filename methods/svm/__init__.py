"""The SVM family of mlsvm Table I: SVM, SVM_m, ε-SVM and SVM-FDA on one base.

:class:`~methods.svm._base.BaseKernelSVM` does kernels, validation, one-vs-one and
prediction; each estimator of :mod:`methods.svm._estimators` supplies its dual.
"""

from methods.svm._base import BaseKernelSVM
from methods.svm._estimators import SVM, SVMFDA, EpsSVM, SVMm, within_class_scatter

__all__ = ["SVM", "SVMFDA", "BaseKernelSVM", "EpsSVM", "SVMm", "within_class_scatter"]
