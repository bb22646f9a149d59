"""Kernel PCA map and KLMNN (KPCA, then LMNN), baselines of kdml Sec. 5.

KLMNN follows kdml's reference [3] (Chatpatanasiri et al.): the training points are
mapped onto their kernel principal components, and the project's one LMNN learns a
Mahalanobis metric in those coordinates. :class:`KPCAMap` alone is the KPCA
projection of kdml Fig. 3.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    clone,
)
from sklearn.decomposition import KernelPCA
from sklearn.utils.validation import check_is_fitted, validate_data

KPCA_KERNELS = ("gaussian", "linear")


def _check_kpca_params(
    owner: str,
    kernel: object,
    sigma: object,
    n_components: object,
    *,
    integer: bool = True,
) -> None:
    """Raise a ValueError naming ``owner``'s first invalid KPCA parameter.

    ``n_components`` must be None or >= 1 (an integer if ``integer``; KLMNN takes
    any real and truncates it, as it always has); the upper bound, the number of
    training samples, is checked (KPCAMap) or applied as a cap (KLMNN) in ``fit``.
    ``sigma`` is checked with either kernel (the Gaussian's width is computed
    first).
    """
    if kernel not in KPCA_KERNELS:
        raise ValueError(f"{owner}: kernel={kernel!r}; choose one of {KPCA_KERNELS}.")
    if not (isinstance(sigma, numbers.Real) and sigma > 0):
        raise ValueError(
            f"{owner}: sigma must be a real number > 0 (the Gaussian width, "
            f"k(x, z) = exp(-||x - z||^2 / (2 sigma^2))); got {sigma!r}."
        )
    kind = numbers.Integral if integer else numbers.Real
    if n_components is not None and not (
        isinstance(n_components, kind) and n_components >= 1
    ):
        raise ValueError(
            f"{owner}: n_components must be "
            + ("an integer" if integer else "a number")
            + " >= 1, or None for every "
            f"component with a non-zero eigenvalue; got {n_components!r}."
        )


class KPCAMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Kernel PCA onto ``n_components`` centred principal components (kdml Fig. 3).

    The KPCA map of kdml Sec. 5, Fig. 3, and the first step of :class:`KLMNN`. kdml
    gives no equation for KPCA; Sec. 5 describes it in words: "KPCA's
    2-dimensional principal subspace was identified based on 10% of the available
    training data ... and the test points were projected onto that subspace", and
    Sec. 1 (Related Work) names the KPCA-based kernelization of [3]. Kernel PCA is
    Schoelkopf, Smola and Mueller, "Nonlinear component analysis as a kernel
    eigenvalue problem", Neural Computation 1998 (computed here by scikit-learn's
    ``KernelPCA``).

    Parameters
    ----------
    n_components : int or None, default=2
        1 <= n_components <= n_samples; None: every component with a non-zero
        eigenvalue (full rank).
    kernel : {"gaussian", "linear"}, default="gaussian"
    sigma : float, default=1.0
        Gaussian width (> 0), ``k(x, z) = exp(-||x - z||^2 / (2 sigma^2))``.

    Attributes
    ----------
    kpca_ : sklearn.decomposition.KernelPCA
        The fitted kernel PCA; ``transform`` is its ``transform``.
    n_features_in_ : int
    """

    def __init__(
        self, n_components: int | None = 2, kernel: str = "gaussian", sigma: float = 1.0
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma

    def fit(self, X, y=None) -> KPCAMap:
        """Fit the kernel PCA on ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self
        """
        _check_kpca_params("KPCAMap", self.kernel, self.sigma, self.n_components)
        X = validate_data(self, X, dtype=np.float64)
        n = X.shape[0]
        if self.n_components is not None and self.n_components > n:
            raise ValueError(
                f"KPCAMap: n_components={self.n_components} is larger than allowed: "
                f"1 <= n_components <= n_samples ({n}). Lower n_components."
            )
        kw = {"kernel": "rbf", "gamma": 1.0 / (2.0 * self.sigma**2)}
        if self.kernel == "linear":
            kw = {"kernel": "linear"}
        self.kpca_ = KernelPCA(
            n_components=self.n_components,
            eigen_solver="dense",
            remove_zero_eig=self.n_components is None,
            **kw,
        ).fit(X)
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.kpca_.transform(X)

    @property
    def _n_features_out(self) -> int:
        """Width of ``transform``'s output, for ``get_feature_names_out``."""
        return self.kpca_.eigenvalues_.shape[0]


class KLMNN(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Kernel LMNN as kdml's reference [3]: KPCA, then the project's LMNN.

    kdml gives no equation for KLMNN; Sec. 1 (Related Work: "a Kernel Principal
    Component Analysis (KPCA)-based kernelized algorithm is developed in [3], such
    that many DML methods, such as LMNN, can be kernelized") and Sec. 5 (one of the
    two kernelized baselines) describe it in words. The LMNN step minimizes the
    LMNN objective as lmnnmkl writes it in eq. 18 (without the kernel weights P),
    on the KPCA coordinates (:class:`KPCAMap`). Reference [3] is Chatpatanasiri,
    Korsrilabutr, Tangchanachaianan and Kijsirikul, "A new kernelization framework
    for Mahalanobis distance learning algorithms" (the "KPCA trick"),
    Neurocomputing 2010 (earlier version: arXiv:0804.1441); the kdml text has no
    reference list, so [3] is identified by that description.

    Parameters
    ----------
    n_components : int or None, default=None
        KPCA dimension, >= 1, capped at the number of training points (None: full
        rank).
    kernel, sigma
        As :class:`KPCAMap`; errors name KLMNN's parameters.
    lmnn : estimator or None
        The LMNN to run on the KPCA coordinates (None: ``LMNN()`` with defaults).

    Attributes
    ----------
    kpca_ : KPCAMap
        The fitted KPCA map (its ``n_components`` capped at the training size).
    lmnn_ : LMNN
        The fitted clone of ``lmnn`` on the KPCA coordinates; ``transform`` is
        ``lmnn_.transform(kpca_.transform(X))``.
    objective_, n_iter_, converged_
        ``lmnn_``'s.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    """

    def __init__(
        self,
        n_components: int | None = None,
        kernel: str = "gaussian",
        sigma: float = 1.0,
        lmnn=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.lmnn = lmnn

    def fit(self, X, y) -> KLMNN:
        """Fit the KPCA map, then LMNN on the training points' coordinates.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        from methods.metric_learning import LMNN

        # here, not only in KPCAMap: the error names this estimator's parameter
        _check_kpca_params(
            "KLMNN", self.kernel, self.sigma, self.n_components, integer=False
        )
        X, y = validate_data(self, X, y, dtype=np.float64)
        k = self.n_components
        if k is not None:  # an upper bound: small (inner-CV) training sets get n
            k = min(int(k), X.shape[0])
        self.kpca_ = KPCAMap(k, self.kernel, self.sigma).fit(X)
        Z = self.kpca_.transform(X)
        self.lmnn_ = clone(self.lmnn if self.lmnn is not None else LMNN()).fit(Z, y)
        self.classes_ = (
            self.lmnn_.classes_ if hasattr(self.lmnn_, "classes_") else (np.unique(y))
        )
        for attr in ("objective_", "n_iter_", "converged_"):
            if hasattr(self.lmnn_, attr):
                setattr(self, attr, getattr(self.lmnn_, attr))
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.lmnn_.transform(self.kpca_.transform(X))

    @property
    def _n_features_out(self) -> int:
        """Width of ``transform``'s output, for ``get_feature_names_out``."""
        lmnn = self.lmnn_
        if hasattr(lmnn, "_n_features_out"):
            return lmnn._n_features_out
        return lmnn.components_.shape[0]
