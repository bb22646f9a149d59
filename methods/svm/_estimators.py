r"""The SVM family of mlsvm Table I: SVM, SVM_m, eps-SVM and SVM-FDA.

All four solve a dual of the box-QP form of :mod:`methods._qp` and share
:class:`~methods.svm._base.BaseKernelSVM` (kernels, one-vs-one, prediction).

**Scale of C.** The duals are those the paper writes (mlsvm Eq. (15)), which are
the duals of primals with :math:`\tfrac12\|w\|^2` (LIBSVM's convention); the
primals (1), (7), (14) and (18) as printed omit the :math:`\tfrac12`. ``C`` here is
therefore LIBSVM's and scikit-learn's ``C``: ``SVM(C=c)`` equals
``sklearn.svm.SVC(C=c)``.

References
----------
.. [1] Paper A (key ``mlsvm``). A metric-learning-based SVM and MKL framework
   (``papers/A-mlsvm-metric-learning-svm-mkl.txt``; our copy carries no author or
   venue), Sec. II-A, III, IV-B and VII.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from numbers import Real
from typing import ClassVar

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from sklearn.utils._param_validation import Interval

from methods._qp import BoxQP, csvm_dual, svmm_dual
from methods.svm._base import BaseKernelSVM

_POSITIVE = Interval(Real, 0.0, None, closed="neither")


class SVM(BaseKernelSVM):
    r"""C-SVM, the baseline "SVM" of mlsvm Table I (Sec. II-A, Eq. (1)).

    Solves the LIBSVM dual of :math:`\min \tfrac12\|w\|^2 + C\sum_i \xi_i` s.t.
    :math:`y_i(w^T\phi(x_i) + b) \ge 1 - \xi_i`:

    .. math:: \max_\alpha \sum_i \alpha_i - \tfrac12 \sum_{ij} \alpha_i \alpha_j
        y_i y_j k(x_i, x_j) \quad \text{s.t.} \quad \sum_i \alpha_i y_i = 0,
        \ 0 \le \alpha_i \le C.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the margin slacks (LIBSVM's ``C``).
    kernel, degree, sigma, normalize, solver, tol, max_iter, check_psd
        See :class:`~methods.svm._base.BaseKernelSVM`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_pairs, n_train)
        :math:`y_i \alpha_i` per training sample and one-vs-one problem (0 for the
        samples outside the pair); ``n_pairs = 1`` with two classes.
    support_ : ndarray of shape (n_SV,)
        Training samples with a non-zero coefficient in some problem.
    intercept_ : ndarray of shape (n_pairs,)
        :math:`b = -\rho` (LIBSVM's ``rho``).
    objective_ : ndarray of shape (n_pairs,)
        Dual objective at the solution, as the paper's maximization (the negative
        of the minimized QP objective).
    n_iter_ : ndarray of shape (n_pairs,)
        Solver iterations per problem.
    fit_status_ : int
        0 if every problem converged, 1 if a solver stopped at ``max_iter``.
    converged_ : bool
    X_fit_ : ndarray of shape (n_train, n_features)
        Training data (absent with ``kernel="precomputed"``).
    n_features_in_ : int
        Number of features, or of training points with ``kernel="precomputed"``.

    See Also
    --------
    SVMm, EpsSVM, SVMFDA

    References
    ----------
    .. [1] Paper A (key ``mlsvm``), Sec. II-A, Eq. (1), and Table I.
    .. [2] C. Cortes, V. Vapnik. Support-vector networks. Machine Learning 20, 1995.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from methods.svm import SVM
    >>> X, y = load_iris(return_X_y=True)
    >>> SVM(C=1.0).fit(X, y).score(X, y) > 0.9
    True
    """

    paper_name: ClassVar[str] = "SVM"

    _parameter_constraints: ClassVar[dict] = {
        **BaseKernelSVM._parameter_constraints,
        "C": [_POSITIVE],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        kernel: str | Callable = "linear",
        degree: int = 2,
        sigma: float = 1.0,
        normalize: str | None = None,
        solver: str = "auto",
        tol: float | None = None,
        max_iter: int | None = None,
        check_psd: bool = True,
    ) -> None:
        self.C = C
        super().__init__(
            kernel=kernel,
            degree=degree,
            sigma=sigma,
            normalize=normalize,
            solver=solver,
            tol=tol,
            max_iter=max_iter,
            check_psd=check_psd,
        )

    def _binary_problem(
        self, K: np.ndarray, y: np.ndarray, X: np.ndarray | None
    ) -> BoxQP:
        return csvm_dual(K, y, self.C)


class SVMm(BaseKernelSVM):
    r"""SVM_m, the bandwidth-regularized SVM of mlsvm Sec. IV-B1, Eq. (14)-(15).

    Keeps every sample inside a band of width :math:`\epsilon` beyond its margin
    hyperplane (slack :math:`\eta_i`, penalty :math:`C_2`) besides the usual margin
    constraint (slack :math:`\xi_i`, penalty :math:`C_1`):

    .. math:: \min_{w,b,\xi,\eta} \tfrac12\|w\|^2 + C_1\sum_i\xi_i + C_2\sum_i\eta_i
        \quad \text{s.t.} \quad 1 - \xi_i \le y_i(w^T\phi(x_i) + b)
        \le 1 + \epsilon + \eta_i,\ \xi, \eta \ge 0,

    solved through its dual, mlsvm Eq. (15),

    .. math:: \max_{\alpha,\beta} \sum_i (\alpha_i - (1+\epsilon)\beta_i)
        - \tfrac12 \sum_{ij} (\alpha_i-\beta_i)(\alpha_j-\beta_j) y_i y_j
        k(x_i, x_j)

    s.t. :math:`\sum_i (\alpha_i - \beta_i) y_i = 0`, :math:`0 \le \alpha_i \le
    C_1`, :math:`0 \le \beta_i \le C_2`: 2n variables, solved on the n x n kernel.
    The decision function is :math:`f(x) = \sum_i y_i(\alpha_i - \beta_i)
    k(x, x_i) + b`. As :math:`\epsilon \to \infty` the band never binds and SVM_m
    is the C-SVM; :math:`\epsilon = 0` is eps-SVM (:class:`EpsSVM`).

    Parameters
    ----------
    C : float, default=1.0
        :math:`C_1`, penalty of the margin slacks :math:`\xi`.
    C2 : float, default=None
        Penalty of the band slacks :math:`\eta`; None means ``C / 3``, the
        setting of mlsvm Sec. VII.
    epsilon : float, default=3.0
        Band width relative to the margin (mlsvm Sec. VII uses 3).
    kernel, degree, sigma, normalize, solver, tol, max_iter, check_psd
        See :class:`~methods.svm._base.BaseKernelSVM`.

    Attributes
    ----------
    classes_, support_, intercept_, n_iter_, fit_status_, converged_, X_fit_, \
n_features_in_
        As in :class:`SVM`.
    dual_coef_ : ndarray of shape (n_pairs, n_train)
        :math:`y_i(\alpha_i - \beta_i)` per training sample.
    objective_ : ndarray of shape (n_pairs,)
        Value of the dual (15) at the solution (the maximization form).

    See Also
    --------
    SVM, EpsSVM

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> from methods.svm import SVMm
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> SVMm(C=1.0, epsilon=3.0).fit(X, y).score(X, y) > 0.95
    True
    """

    paper_name: ClassVar[str] = "SVM_m"

    _parameter_constraints: ClassVar[dict] = {
        **BaseKernelSVM._parameter_constraints,
        "C": [_POSITIVE],
        "C2": [_POSITIVE, None],
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        C2: float | None = None,
        epsilon: float = 3.0,
        kernel: str | Callable = "linear",
        degree: int = 2,
        sigma: float = 1.0,
        normalize: str | None = None,
        solver: str = "auto",
        tol: float | None = None,
        max_iter: int | None = None,
        check_psd: bool = True,
    ) -> None:
        self.C = C
        self.C2 = C2
        self.epsilon = epsilon
        super().__init__(
            kernel=kernel,
            degree=degree,
            sigma=sigma,
            normalize=normalize,
            solver=solver,
            tol=tol,
            max_iter=max_iter,
            check_psd=check_psd,
        )

    def _binary_problem(
        self, K: np.ndarray, y: np.ndarray, X: np.ndarray | None
    ) -> BoxQP:
        C2 = self.C / 3.0 if self.C2 is None else self.C2
        return svmm_dual(K, y, self.C, C2, self.epsilon)


class EpsSVM(BaseKernelSVM):
    r"""eps-SVM of Do et al., mlsvm Sec. III, Eq. (6)-(7): SVM_m with eps = 0.

    .. math:: \min_{w,b,\xi,\eta} \tfrac12\|w\|^2 + C_1\sum_i\xi_i + C_2\sum_i\eta_i
        \quad \text{s.t.} \quad 1 - \xi_i \le y_i(w^T\phi(x_i) + b) \le 1 + \eta_i,

    i.e. every sample is pulled onto its margin hyperplane. As mlsvm Sec. IV-B
    notes, this is SVM_m (Eq. (14)) with :math:`\epsilon = 0`, and it is solved by
    the SVM_m solver: the dual (15) with :math:`\epsilon = 0`.

    Parameters
    ----------
    C : float, default=1.0
        :math:`C_1`, penalty of the margin slacks :math:`\xi`.
    C2 : float, default=None
        Penalty of :math:`\eta`, the distance beyond the margin hyperplane; None
        means ``C / 3`` (mlsvm Sec. VII).
    kernel, degree, sigma, normalize, solver, tol, max_iter, check_psd
        See :class:`~methods.svm._base.BaseKernelSVM`.

    Attributes
    ----------
    classes_, dual_coef_, support_, intercept_, objective_, n_iter_, fit_status_, \
converged_, X_fit_, n_features_in_
        As in :class:`SVMm`.

    See Also
    --------
    SVMm

    References
    ----------
    .. [1] Paper A (key ``mlsvm``), Sec. III, Eq. (6)-(7), and Sec. IV-B.
    .. [2] H. Do, A. Kalousis, J. Wang, A. Woznica. A metric learning perspective
       of SVM: on the relation of LMNN and SVM. AISTATS 2012 (mlsvm's [9]).
    """

    paper_name: ClassVar[str] = "ε-SVM"

    _parameter_constraints: ClassVar[dict] = {
        **BaseKernelSVM._parameter_constraints,
        "C": [_POSITIVE],
        "C2": [_POSITIVE, None],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        C2: float | None = None,
        kernel: str | Callable = "linear",
        degree: int = 2,
        sigma: float = 1.0,
        normalize: str | None = None,
        solver: str = "auto",
        tol: float | None = None,
        max_iter: int | None = None,
        check_psd: bool = True,
    ) -> None:
        self.C = C
        self.C2 = C2
        super().__init__(
            kernel=kernel,
            degree=degree,
            sigma=sigma,
            normalize=normalize,
            solver=solver,
            tol=tol,
            max_iter=max_iter,
            check_psd=check_psd,
        )

    def _binary_problem(
        self, K: np.ndarray, y: np.ndarray, X: np.ndarray | None
    ) -> BoxQP:
        C2 = self.C / 3.0 if self.C2 is None else self.C2
        return svmm_dual(K, y, self.C, C2, 0.0)


def within_class_scatter(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    r"""FDA's :math:`S_W = \sum_c \sum_{x \in D_c} (x - m_c)(x - m_c)^T` (mlsvm Eq. 5).

    Unnormalized, as the paper writes it (a sum over samples, not a covariance).
    """
    X = np.asarray(X, dtype=np.float64)
    S = np.zeros((X.shape[1], X.shape[1]))
    for c in np.unique(y):
        Xc = X[y == c] - X[y == c].mean(axis=0)
        S += Xc.T @ Xc
    return S


# SVM-FDA's transform and transformed Gram matrix depend only on (Z, y, lam), not
# on C: a grid search over C on one fold reuses them. Keyed by a digest of the
# arrays' bytes, so a hit returns exactly what would be recomputed. The runner's
# search fits every (C, lam) of one inner split before the next split, so a
# transform is asked for again after (number of lams) others; GridSearchCV runs
# every inner split of one (C, lam) before the next lam, so there a transform comes
# back after (number of lams) x (inner splits) others (mlsvm Table I: 5 x 10 = 50):
# the cache holds that many, bounded by their bytes.
_TRANSFORM_CACHE: OrderedDict = OrderedDict()
_TRANSFORM_CACHE_SIZE = 128
_TRANSFORM_CACHE_MAX_BYTES = 32 * 2**20  # per entry (Q and the factor of M)
_TRANSFORM_CACHE_TOTAL_BYTES = 128 * 2**20  # all entries together


def _fda_transform(Z: np.ndarray, y: np.ndarray, lam: float) -> tuple:
    """``(cho_factor(M), Zt' Zt)`` with ``M = lam S_W + I``, ``Zt = L^{-1} Z'``."""
    digest = hashlib.sha1(np.ascontiguousarray(Z).view(np.uint8))
    digest.update(np.ascontiguousarray(y).view(np.uint8))
    key = (Z.shape, Z.dtype.str, y.dtype.str, float(lam), digest.hexdigest())
    hit = _TRANSFORM_CACHE.get(key)
    if hit is not None:
        _TRANSFORM_CACHE.move_to_end(key)
        return hit
    M = lam * within_class_scatter(Z, y) + np.eye(Z.shape[1])
    L = np.linalg.cholesky(M)
    Zt = solve_triangular(L, Z.T, lower=True)
    Q = Zt.T @ Zt
    # Shared between fits (kept writable: a read-only array would compile a second
    # numba specialization); the solvers only read K.
    out = (cho_factor(M, lower=True), Q)
    if _entry_bytes(out) > _TRANSFORM_CACHE_MAX_BYTES:
        return out
    _TRANSFORM_CACHE[key] = out
    total = sum(_entry_bytes(v) for v in _TRANSFORM_CACHE.values())
    while (
        len(_TRANSFORM_CACHE) > _TRANSFORM_CACHE_SIZE
        or total > _TRANSFORM_CACHE_TOTAL_BYTES
    ):
        total -= _entry_bytes(_TRANSFORM_CACHE.popitem(last=False)[1])
    return out


def _entry_bytes(entry: tuple) -> int:
    (c, _), Q = entry
    return int(c.nbytes + Q.nbytes)


class SVMFDA(BaseKernelSVM):
    r"""SVM-FDA of Xiong et al., mlsvm Sec. IV-B, Eq. (18): margin plus FDA scatter.

    .. math:: \min_{w,b,\xi} \tfrac12 w^T(\lambda S_W + I)w + C\sum_i \xi_i
        \quad \text{s.t.} \quad y_i(w^T x_i + b) \ge 1 - \xi_i,

    with :math:`S_W` the within-class scatter of the two classes
    (:func:`within_class_scatter`; Eq. (18) is printed without slacks, the
    experiments of Sec. VII tune C, so the soft-margin form is solved). As in
    mlsvm Eq. (5), :math:`S_W` is a sum over the samples, not a covariance, so the
    weight of a given :math:`\lambda` grows with the training-set size.

    **The transform.** With :math:`M = \lambda S_W + I` and
    :math:`\tilde w = M^{1/2} w`, :math:`\tilde x = M^{-1/2} x`, the problem is
    the standard SVM :math:`\min \tfrac12\|\tilde w\|^2 + C\sum_i\xi_i` on
    :math:`\tilde x`, since :math:`w^T x = \tilde w^T \tilde x`. So the exact
    equivalence for the objective :math:`w^T(\lambda S_W + I)w` is
    :math:`\tilde x = (\lambda S_W + I)^{-1/2} x`, not the
    :math:`\tilde x = (S_W + \lambda I)^{-1} x` that mlsvm states after Eq. (18)
    (that transform would match :math:`w^T (S_W + \lambda I)^2 w`). This class
    solves the C-SVM dual on the linear kernel
    :math:`\tilde K = X M^{-1} X^T` (computed with a Cholesky factor of M, which
    gives the same Gram matrix as the symmetric square root) and reports the
    primal weights in the original space, :math:`w = M^{-1} \sum_i y_i\alpha_i
    x_i`. With :math:`\lambda = 0` it is the linear :class:`SVM`.

    Linear kernel only: Eq. (18) is not kernelized (mlsvm Sec. IV-B, VII). With
    ``normalize="cosine"`` the rows of X are scaled to unit norm first, the
    feature space of the cosine-normalized linear kernel the other methods use.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the margin slacks (LIBSVM's ``C``).
    lam : float, default=1.0
        :math:`\lambda`, weight of the within-class scatter.
    kernel : {"linear"}, default="linear"
        Any other value raises ``ValueError``.
    normalize, solver, tol, max_iter, check_psd
        See :class:`~methods.svm._base.BaseKernelSVM` (``degree`` and ``sigma`` are
        unused).

    Attributes
    ----------
    coef_ : ndarray of shape (n_pairs, n_features)
        Primal weights :math:`w` in the original (normalized) feature space; the
        decision function is ``X @ coef_.T + intercept_``.
    classes_, dual_coef_, support_, intercept_, objective_, n_iter_, fit_status_, \
converged_, X_fit_, n_features_in_
        As in :class:`SVM`, for the SVM on :math:`\tilde x`.

    References
    ----------
    .. [1] Paper A (key ``mlsvm``), Sec. IV-B, Eq. (18), and Sec. VII.
    .. [2] T. Xiong, V. Cherkassky. A combined SVM and LDA approach for
       classification. IJCNN 2005 (mlsvm's [25]).
    """

    paper_name: ClassVar[str] = "SVM-FDA"
    supported_kernels: ClassVar[tuple[str, ...]] = ("linear",)
    _uses_gram: ClassVar[bool] = False

    _parameter_constraints: ClassVar[dict] = {
        **BaseKernelSVM._parameter_constraints,
        "C": [_POSITIVE],
        "lam": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        lam: float = 1.0,
        kernel: str | Callable = "linear",
        degree: int = 2,
        sigma: float = 1.0,
        normalize: str | None = None,
        solver: str = "auto",
        tol: float | None = None,
        max_iter: int | None = None,
        check_psd: bool = True,
    ) -> None:
        self.C = C
        self.lam = lam
        super().__init__(
            kernel=kernel,
            degree=degree,
            sigma=sigma,
            normalize=normalize,
            solver=solver,
            tol=tol,
            max_iter=max_iter,
            check_psd=check_psd,
        )

    def _features(self, X: np.ndarray) -> np.ndarray:
        if self.normalize == "cosine":
            norms = np.linalg.norm(X, axis=1, keepdims=True)
            return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)
        return X

    def _binary_problem(
        self, K: np.ndarray, y: np.ndarray, X: np.ndarray | None
    ) -> BoxQP:
        factor, Q = _fda_transform(self._features(X), y, self.lam)
        self._transforms.append(factor)
        return csvm_dual(Q, y, self.C)

    def fit(self, X, y) -> SVMFDA:
        """Fit the SVM on the transformed features, then map ``w`` back.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        self._transforms = []
        super().fit(X, y)
        Z = self._features(self.X_fit_)
        self.coef_ = np.vstack(
            [
                cho_solve(factor, Z.T @ self.dual_coef_[k])
                for k, factor in enumerate(self._transforms)
            ]
        )
        del self._transforms
        return self

    def _problem_decisions(self, X: np.ndarray) -> np.ndarray:
        return self._features(X) @ self.coef_.T + self.intercept_
