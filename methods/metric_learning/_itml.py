"""Information-theoretic metric learning (Davis et al., ICML 2007), baseline of kdml.

ITML minimizes the LogDet divergence ``D_ld(M, M0)`` subject to pair constraints
``d_M(x_i, x_j) <= u`` (same class) and ``>= l`` (different classes), with slack
(weight ``gamma``), by cyclic Bregman projections (Davis et al. Algorithm 1).

Kernelized form (Davis et al. Sec. 4): with ``kernel="gaussian"`` or
``"precomputed"`` ITML runs on the coordinates ``Z = V diag(kappa)^1/2`` of the
training points in the span of their feature vectors (``Z Z^T = K0``) with
``M0 = I``. Every update ``M += beta M v v^T M`` stays in that span, so this is the
learned kernel ``K = K0 + K0 S K0`` of the paper; a test point is mapped to
``z(x) = diag(kappa)^-1/2 V^T k(X, x)``. Its feature-space distance to a training
point adds ``k(x, x) - ||z(x)||^2``, the same for every training point, so kNN
rankings from test to training points are exactly those of the kernelized ITML.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from methods._kernels import pairwise_kernel
from methods._validation import check_input_kernel, validate_test_kernel
from methods.metric_learning._itml_kernels import bregman_passes

KERNELS = (None, "linear", "gaussian", "precomputed")


def itml_projection(
    M: np.ndarray, v: np.ndarray, xi: float, lam: float, delta: int, gamma: float
) -> tuple[np.ndarray, float, float, float]:
    """One Bregman projection of ``(M, xi)`` onto ``v^T M v = xi`` (Davis Alg. 1).

    ``delta = +1`` for a similarity (upper bound) constraint, ``-1`` for a
    dissimilarity (lower bound) one; ``lam`` is the constraint's dual variable
    (>= 0), which caps the step. The step ``alpha`` solves
    ``1/p' = 1/xi'`` with ``p' = v^T M' v = p / (1 - delta alpha p)`` and
    ``1/xi' = 1/xi + delta alpha / gamma``, i.e.
    ``alpha = delta gamma/(gamma+1) (1/p - 1/xi)`` (``gamma = inf``: no slack).

    Returns ``(M', xi', lam', alpha)``.
    """
    p = float(v @ M @ v)
    if p <= 0.0:
        return M, xi, lam, 0.0
    frac = 1.0 if np.isinf(gamma) else gamma / (gamma + 1.0)
    alpha = min(lam, delta * frac * (1.0 / p - 1.0 / xi))
    beta = delta * alpha / (1.0 - delta * alpha * p)
    xi_new = xi if np.isinf(gamma) else 1.0 / (1.0 / xi + delta * alpha / gamma)
    Mv = M @ v
    M_new = M + beta * np.outer(Mv, Mv)
    return M_new, xi_new, lam - alpha, alpha


def itml_solve(
    Z: np.ndarray,
    pairs: np.ndarray,
    delta: np.ndarray,
    bounds: np.ndarray,
    *,
    gamma: float = 1.0,
    max_iter: int = 1000,
    tol: float = 1e-3,
    M0: np.ndarray | None = None,
) -> tuple[np.ndarray, int, bool]:
    """Cyclic Bregman projections over all constraints until the duals settle.

    Stops when ``||lam - lam_old||_1 / (||lam|| + ||lam_old||) < tol`` after a
    pass (Davis et al.'s stopping rule). Returns ``(M, n_passes, converged)``.
    The passes are compiled (:func:`~methods.metric_learning._itml_kernels.
    bregman_passes`); :func:`itml_solve_python` is the same loop over
    :func:`itml_projection` in numpy, the reference of the tests and the benchmark.
    """
    d = Z.shape[1]
    M = np.eye(d) if M0 is None else np.array(M0, dtype=np.float64, order="C")
    lam = np.zeros(len(pairs))
    xi = np.array(bounds, dtype=np.float64)
    V = np.ascontiguousarray(Z[pairs[:, 0]] - Z[pairs[:, 1]], dtype=np.float64)
    it, converged = bregman_passes(
        M,
        V,
        np.asarray(delta, dtype=np.int64),
        xi,
        lam,
        float(gamma),
        int(max_iter),
        float(tol),
    )
    return 0.5 * (M + M.T), int(it), bool(converged)


def itml_solve_python(
    Z: np.ndarray,
    pairs: np.ndarray,
    delta: np.ndarray,
    bounds: np.ndarray,
    *,
    gamma: float = 1.0,
    max_iter: int = 1000,
    tol: float = 1e-3,
    M0: np.ndarray | None = None,
) -> tuple[np.ndarray, int, bool]:
    """:func:`itml_solve` as a numpy loop over :func:`itml_projection` (reference)."""
    d = Z.shape[1]
    M = np.eye(d) if M0 is None else np.array(M0, dtype=float)
    lam = np.zeros(len(pairs))
    xi = np.array(bounds, dtype=float)
    V = Z[pairs[:, 0]] - Z[pairs[:, 1]]
    converged = False
    it = 0
    while it < int(max_iter):
        it += 1
        lam_old = lam.copy()
        for c in range(len(pairs)):
            M, xi[c], lam[c], _ = itml_projection(
                M, V[c], xi[c], lam[c], int(delta[c]), gamma
            )
        denom = np.linalg.norm(lam) + np.linalg.norm(lam_old)
        if denom == 0 or np.abs(lam - lam_old).sum() / denom < tol:
            converged = True
            break
    return 0.5 * (M + M.T), it, converged


class ITML(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Information-theoretic metric learning (Davis et al. 2007), kdml's baseline [4].

    kdml gives no equation for ITML; Sec. 1 (Related Work) and Sec. 5 describe it
    in words: a kernelized method "based on minimizing the Kullback-Leibler
    divergence between two distributions", one of the two kernelized baselines of
    the experiments. The method is Davis, Kulis, Jain, Sra and Dhillon,
    "Information-theoretic metric learning", ICML 2007 (its LogDet problem and
    Bregman projections: module docstring). The kdml text has no reference
    list; [4] is identified by the name ITML. Cf. lmnnmkl Sec. 2 (text before
    eq. 2): the kernelized ITML metric ``M = I + Phi(X)^T S Phi(X)`` is the
    optimal form ``M_l = eta_h I + Phi_l(X)^T A_l Phi_l(X)`` with ``eta_h = 1``.

    Parameters
    ----------
    gamma : float, default=1.0
        Slack weight, > 0 (``inf``: hard constraints).
    n_constraints : int or None, default=None
        Number of random pair constraints, >= 1; None: ``20 c^2`` (Davis et al.'s
        code).
    bounds_percentiles : tuple of float, default=(5.0, 95.0)
        ``u`` and ``l`` as percentiles of the pairwise distances under ``M0 = I``
        (5th and 95th, as in Davis et al.): two numbers in [0, 100], the first
        (similar pairs' bound ``u``) below the second (dissimilar pairs' ``l``).
    kernel : {None, "linear", "gaussian", "precomputed"}, default=None
        None/"linear": ITML on the features; "gaussian"/"precomputed": the
        kernelized form (module docstring).
    sigma : float, default=1.0
        Gaussian width (> 0), ``k(x, z) = exp(-||x - z||^2 / (2 sigma^2))``.
    max_iter : int, default=1000
        Passes over the constraints, >= 1. A fit that stops there before the duals
        settle sets ``converged_ = False`` and issues a ``ConvergenceWarning``
        (counted in a run record's ``inner_convergence_warnings``).
    tol : float, default=1e-3
        Dual stopping tolerance, >= 0 (Davis et al.'s rule, :func:`itml_solve`;
        0 runs all ``max_iter`` passes).
    rcond : float, default=1e-10
        Kernelized form: eigenvalues of the training Gram matrix at or below
        ``rcond`` times the largest are dropped from the coordinates ``Z``; in
        [0, 1).
    random_state : int, default=0
        Seed of the constraint sampling.
    check_psd : bool, default=True
        With ``kernel="precomputed"``, check that the training kernel matrix is
        symmetric and positive semi-definite, and raise
        :class:`~methods.exceptions.NonPSDKernelError` otherwise (the SVM family's
        rule, :func:`~methods.check_psd_kernel`). ``False`` fits on any square
        matrix as before: its symmetric part, negative directions dropped with the
        ones below ``rcond``. A caller that fits many models on one Gram matrix
        checks it once and passes ``check_psd=False``. Ignored without a
        precomputed kernel (the Gaussian one is PSD by construction).

    Attributes
    ----------
    components_ : ndarray of shape (d, d)
        ``L`` with ``metric_ = L^T L``; ``d`` the features, or the kept kernel
        coordinates of the kernelized form.
    metric_ : ndarray of shape (d, d)
    bounds_ : tuple of float
        ``(u, l)``.
    n_iter_ : int
        Passes run.
    converged_ : bool
        Whether the duals settled to ``tol`` before ``max_iter`` passes.
    kernel_basis_ : ndarray of shape (n_train, d)
        Kernelized form only: the kept eigenvectors of the training Gram matrix
        over the square roots of their eigenvalues, so that the kernel
        coordinates are ``z(x) = K(x, X_train) kernel_basis_``.
    X_fit_ : ndarray of shape (n_train, n_features)
        ``kernel="gaussian"`` only: the training points.
    classes_ : ndarray
    n_features_in_ : int
        Number of features, or of training points with ``kernel="precomputed"``.
    """

    def __init__(
        self,
        gamma: float = 1.0,
        n_constraints: int | None = None,
        bounds_percentiles: tuple[float, float] = (5.0, 95.0),
        kernel: str | None = None,
        sigma: float = 1.0,
        max_iter: int = 1000,
        tol: float = 1e-3,
        rcond: float = 1e-10,
        random_state: int = 0,
        check_psd: bool = True,
    ):
        self.gamma = gamma
        self.n_constraints = n_constraints
        self.bounds_percentiles = bounds_percentiles
        self.kernel = kernel
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond
        self.random_state = random_state
        self.check_psd = check_psd

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # as LMNN and the kernel classifiers: cross-validation (and a MetricKNN
        # around this learner, whose tag is its learner's) slices a precomputed
        # Gram matrix by rows and columns, not by rows only
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _check_params(self) -> None:
        """Raise a ValueError naming the first invalid parameter and its range."""
        if self.kernel not in KERNELS:
            raise ValueError(f"ITML: kernel={self.kernel!r}; choose one of {KERNELS}.")
        if not (isinstance(self.gamma, numbers.Real) and self.gamma > 0):
            raise ValueError(f"ITML: gamma must be > 0 (or inf); got {self.gamma!r}.")
        nc = self.n_constraints
        if nc is not None and not (isinstance(nc, numbers.Integral) and nc >= 1):
            raise ValueError(
                f"ITML: n_constraints must be an integer >= 1, or None for 20 c^2 "
                f"(c classes); got {nc!r}."
            )
        bp = self.bounds_percentiles
        try:
            lo, hi = (float(b) for b in bp)
        except (TypeError, ValueError):
            lo = hi = np.nan
        if not 0.0 <= lo < hi <= 100.0:
            raise ValueError(
                "ITML: bounds_percentiles must be two numbers (lower, upper) with "
                "0 <= lower < upper <= 100, the percentiles of the pair distances "
                f"that give u and l (Davis et al.: (5, 95)); got {bp!r}."
            )
        if not (isinstance(self.sigma, numbers.Real) and self.sigma > 0):
            raise ValueError(
                f"ITML: sigma must be a real number > 0 (the Gaussian width); got "
                f"{self.sigma!r}."
            )
        mi = self.max_iter
        if not (isinstance(mi, numbers.Integral) and mi >= 1):
            raise ValueError(
                f"ITML: max_iter must be an integer >= 1 (passes over the "
                f"constraints); got {mi!r}."
            )
        if not (isinstance(self.tol, numbers.Real) and self.tol >= 0):
            raise ValueError(
                f"ITML: tol must be a real number >= 0 (the relative change of the "
                f"duals that ends the passes); got {self.tol!r}."
            )
        if not (isinstance(self.rcond, numbers.Real) and 0 <= self.rcond < 1):
            raise ValueError(
                "ITML: rcond must be a real number in [0, 1) (kernel eigenvalues at "
                f"or below rcond times the largest are dropped); got {self.rcond!r}."
            )
        if not isinstance(self.check_psd, (bool, np.bool_)):
            raise ValueError(
                f"ITML: check_psd must be True or False; got {self.check_psd!r}."
            )

    def _coordinates_fit(self, X, in_dtype=None):
        if self.kernel in (None, "linear"):
            return X
        K = (
            X
            if self.kernel == "precomputed"
            else pairwise_kernel(X, kernel="gaussian", sigma=self.sigma)
        )
        if self.kernel == "precomputed" and K.shape[0] != K.shape[1]:
            raise ValueError(
                f"ITML(kernel='precomputed') needs a square training Gram matrix; "
                f"got shape {K.shape}."
            )
        if self.kernel == "precomputed" and self.check_psd:
            check_input_kernel(K, in_dtype)
        w, V = np.linalg.eigh(0.5 * (K + K.T))
        keep = w > self.rcond * max(w[-1], 1e-300)
        self.kernel_basis_ = V[:, keep] / np.sqrt(w[keep])
        return V[:, keep] * np.sqrt(w[keep])

    def _coordinates(self, X):
        if self.kernel in (None, "linear"):
            return X
        K = (
            X
            if self.kernel == "precomputed"
            else pairwise_kernel(X, self.X_fit_, kernel="gaussian", sigma=self.sigma)
        )
        return K @ self.kernel_basis_

    def fit(self, X, y) -> ITML:
        """Learn the metric from random pair constraints (Davis et al. Alg. 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            training kernel matrix if ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._check_params()
        in_dtype = getattr(X, "dtype", None)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"ITML needs at least 2 classes to form dissimilar pairs (one class "
                f"is not enough); got "
                f"{self.classes_.tolist()}."
            )
        # a refit under another kernel keeps nothing of the earlier one's
        for attr in ("X_fit_", "kernel_basis_"):
            self.__dict__.pop(attr, None)
        if self.kernel not in (None, "linear", "precomputed"):
            self.X_fit_ = X
        Z = self._coordinates_fit(X, in_dtype)
        rng = check_random_state(self.random_state)
        n = len(y)
        nc = (
            20 * len(self.classes_) ** 2
            if self.n_constraints is None
            else self.n_constraints
        )
        i = rng.randint(0, n, size=4 * nc)
        j = rng.randint(0, n, size=4 * nc)
        ok = i != j
        i, j = i[ok][:nc], j[ok][:nc]
        pairs = np.column_stack([i, j])
        delta = np.where(codes[i] == codes[j], 1, -1)
        dist = np.sum((Z[i] - Z[j]) ** 2, axis=1)
        lo, hi = self.bounds_percentiles
        # the percentiles of all pair distances of a sample, as in Davis et al.
        ii = rng.randint(0, n, size=min(5000, n * n))
        jj = rng.randint(0, n, size=len(ii))
        allD = np.sum((Z[ii] - Z[jj]) ** 2, axis=1)
        allD = allD[ii != jj]
        u, l_ = np.percentile(allD, [lo, hi]) if allD.size else (dist.min(), dist.max())
        u = max(u, 1e-12)
        bounds = np.where(delta == 1, u, l_)
        M, it, conv = itml_solve(
            Z,
            pairs,
            delta,
            bounds,
            gamma=float(self.gamma),
            max_iter=self.max_iter,
            tol=self.tol,
        )
        w, U = np.linalg.eigh(M)
        w = np.clip(w, 0.0, None)
        self.components_ = (U * np.sqrt(w)).T  # M = L^T L
        self.metric_ = M
        self.bounds_ = (float(u), float(l_))
        self.n_iter_ = it
        self.converged_ = conv
        if not conv:
            # as LMNN's and KDML's: the runner counts ConvergenceWarnings into the
            # record, which converged_ never reaches (MetricKNN wraps this estimator)
            warnings.warn(
                f"ITML stopped at max_iter={self.max_iter} passes before the dual "
                f"variables settled (tol={self.tol:g}); the last iterate is kept. "
                "Increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def transform(self, X) -> np.ndarray:
        """``z(x) L^T``: Euclidean distances here are the learned metric."""
        check_is_fitted(self)
        if self.kernel == "precomputed":
            X = validate_test_kernel(self, X)
        else:
            X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._coordinates(X) @ self.components_.T

    def get_mahalanobis_matrix(self) -> np.ndarray:
        check_is_fitted(self)
        return self.metric_

    @property
    def _n_features_out(self) -> int:
        """Width of ``transform``'s output, for ``get_feature_names_out``."""
        return self.components_.shape[0]
