r"""KOMD: Kernel Optimization of the Margin Distribution (arbf Sec. 3, eq. 2).

The game of Aiolli, Da San Martino and Sperduti (2008) as stated in arbf Sec. 3:
the adversary picks a distribution over the positives and one over the negatives,
``gamma in Gamma``, to minimise the regularised squared distance between the two
convex combinations in feature space,

.. math::

    \min_{\gamma \in \Gamma} (1 - \lambda)\, \gamma^\top Y K Y \gamma
        + \lambda\, \gamma^\top \gamma .

Scaling of the identity term: exactly as eq. 2, ``lam * ||gamma||^2`` with the
unit identity (not multiplied by the trace or the mean diagonal of ``K``), and the
quadratic term weighted by ``1 - lam``. MKLpy's KOMD hands cvxopt the matrix
``(1 - lam) Y K Y + lam I`` as ``P`` of ``1/2 x'Px``, i.e. one half of this
objective: the minimiser is the same; our ``objective_`` is eq. 2 itself.

Scoring: ``w = sum_i y_i gamma_i phi(x_i)`` and the ranking score is
``f(x) = sum_i y_i gamma_i k(x_i, x) + b`` with ``b`` the midpoint of the
gamma-weighted mean scores of the two classes,
``b = -1/2 sum_i gamma_i (K Y gamma)_i``; the bias does not change the ranking
(AUC), only ``predict``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from methods._kernels import KernelEstimatorMixin
from methods._validation import (
    check_input_kernel,
    check_psd_kernel,
    validate_test_kernel,
)
from methods.komd._smo import KOMD_TOL, komd_smo

KOMD_SOLVERS = ("smo", "cvxopt")


def binary_labels(estimator: BaseEstimator, y: np.ndarray, name: str) -> np.ndarray:
    """Set ``classes_`` and return labels in {-1, +1} (+1 = ``classes_[1]``)."""
    check_classification_targets(y)
    classes, y_enc = np.unique(y, return_inverse=True)
    if len(classes) != 2:
        raise ValueError(
            f"Only binary classification is supported. {name} is a binary method "
            "(arbf Sec. 3: distributions over the positives and the negatives); "
            f"y has {len(classes)} classes "
            f"{classes[:5].tolist()}. Pass two classes, or wrap it in "
            "sklearn.multiclass.OneVsRestClassifier."
        )
    estimator.classes_ = classes
    return np.where(y_enc == 1, 1.0, -1.0)


def uniform_gamma(y: np.ndarray) -> np.ndarray:
    """The solution at ``lam = 1`` (arbf Sec. 3): uniform over each class."""
    pos = y > 0
    return np.where(pos, 1.0 / pos.sum(), 1.0 / (~pos).sum())


def komd_objective(
    K: np.ndarray, y: np.ndarray, lam: float, gamma: np.ndarray
) -> float:
    """Value of arbf eq. 2 at ``gamma``."""
    a = y * gamma
    return float((1.0 - lam) * a @ K @ a + lam * gamma @ gamma)


def solve_komd_cvxopt(K: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Dense reference: eq. 2 as a cvxopt QP (slow, tight tolerances)."""
    import cvxopt
    from cvxopt import solvers

    n = len(y)
    H = (1.0 - lam) * np.outer(y, y) * K + lam * np.eye(n)
    P = cvxopt.matrix(2.0 * (H + H.T) / 2.0)
    q = cvxopt.matrix(np.zeros(n))
    G = cvxopt.matrix(-np.eye(n))
    h = cvxopt.matrix(np.zeros(n))
    A = cvxopt.matrix(np.vstack([(y > 0), (y < 0)]).astype(float))
    b = cvxopt.matrix(np.ones(2))
    opts = {
        "show_progress": False,
        "abstol": 1e-12,
        "reltol": 1e-11,
        "feastol": 1e-12,
        "maxiters": 200,
    }
    sol = solvers.qp(P, q, G, h, A, b, options=opts)
    gamma = np.maximum(np.asarray(sol["x"]).ravel(), 0.0)
    # project back onto the two simplices (round-off of the interior point)
    for mask in (y > 0, y < 0):
        gamma[mask] /= gamma[mask].sum()
    return gamma


def solve_komd(
    K: np.ndarray,
    y: np.ndarray,
    lam: float,
    gamma0: np.ndarray | None = None,
    *,
    solver: str = "smo",
    tol: float = KOMD_TOL,
    max_iter: int | None = None,
) -> tuple[np.ndarray, int, bool]:
    """Minimise eq. 2; return ``(gamma, n_iter, converged)``.

    ``gamma0`` warm-starts the SMO (ARBF's gamma step); it must lie in ``Gamma``.
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    if solver == "cvxopt":
        return solve_komd_cvxopt(K, y, lam), 1, True
    K = np.ascontiguousarray(K, dtype=np.float64)
    gamma = uniform_gamma(y) if gamma0 is None else np.array(gamma0, dtype=np.float64)
    if max_iter is None:
        max_iter = max(1_000_000, 200 * len(y))
    n_iter, gap = komd_smo(K, y, float(lam), gamma, float(tol), int(max_iter))
    # the gradient is updated incrementally: restart once from a fresh one so the
    # stopping test is judged on an exact gradient
    more, gap = komd_smo(K, y, float(lam), gamma, float(tol), int(max_iter))
    n_iter += more
    return gamma, int(n_iter), bool(gap <= tol)


class KOMD(KernelEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""KOMD classifier with a fixed kernel (arbf Sec. 3, eq. 2).

    Parameters
    ----------
    lam : float in [0, 1], default=0.5
        ``lambda`` of eq. 2: 0 is the hard-margin SVM (distance of the convex
        hulls), 1 the distance of the class centroids (uniform ``gamma``).
    kernel : {"gaussian", "linear", "poly", "precomputed"} or callable, \
            default="gaussian"
        The paper's RBF ``exp(-beta0 ||x - z||^2)`` is ``kernel="gaussian"`` with
        ``sigma = 1 / sqrt(2 beta0)``. "precomputed": ``fit(K_train)``,
        ``decision_function(K_test (n_test, n_train))``.
    sigma, degree, normalize
        Kernel parameters (as :func:`methods.kernels.pairwise_kernel`), with the
        SVM family's and FDA's defaults (``sigma=1.0``, ``degree=2``, no
        normalization) and options (``normalize`` None or ``"cosine"``).
        ``normalize`` is not for ``kernel="precomputed"`` (a ``ValueError``:
        normalize the Gram matrices beforehand).
    solver : {"smo", "cvxopt"}, default="smo"
        Compiled two-constraint SMO, or the dense cvxopt QP (reference).
    tol : float, default=1e-8
        SMO stopping tolerance on the per-class KKT gap.
    max_iter : int or None
        Cap on SMO pair updates (default ``max(10**6, 200 n)``).
    check_psd : bool, default=True
        Check that a user-supplied kernel (callable or precomputed) gives a
        positive semi-definite training Gram matrix, and raise
        :class:`~methods.exceptions.NonPSDKernelError` otherwise (an asymmetric
        one too). The check is a Cholesky certificate (O(n^3 / 3); the
        eigendecomposition only when it fails): a runner that fits many models on
        one Gram matrix checks it once with :func:`~methods.check_psd_kernel` and
        passes ``check_psd=False``. Named kernels are PSD by construction and never
        checked.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    gamma_ : ndarray of shape (n_train,)
        The adversary's distribution of eq. 2 (one simplex per class); not a
        kernel width.
    dual_coef_ : ndarray of shape (1, n_train)
        ``y_i gamma_i`` (as the SVM family's ``y_i alpha_i``, one problem).
    support_ : ndarray of int
        Training samples with ``gamma_i > 0``.
    intercept_ : ndarray of shape (1,)
        The midpoint bias ``b`` (module docstring).
    objective_ : float
        Eq. 2 at ``gamma_``.
    n_iter_ : int
        SMO pair updates.
    converged_ : bool
    fit_status_ : int
        0 if the SMO reached ``tol``, 1 if it stopped at ``max_iter`` (as the SVM
        family's).
    n_features_in_ : int
    X_fit_ : ndarray of shape (n_train, n_features)
        Training data (absent with ``kernel="precomputed"``).
    """

    paper_name = "KOMD"

    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0.0, 1.0, closed="both")],
        "kernel": [StrOptions({"linear", "poly", "gaussian", "precomputed"}), callable],
        "sigma": [Interval(Real, 0.0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "normalize": [StrOptions({"cosine"}), None],
        "solver": [StrOptions(set(KOMD_SOLVERS))],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "check_psd": ["boolean"],
    }

    def __init__(
        self,
        lam: float = 0.5,
        kernel="gaussian",
        sigma: float = 1.0,
        degree: int = 2,
        normalize: str | None = None,
        solver: str = "smo",
        tol: float = KOMD_TOL,
        max_iter: int | None = None,
        check_psd: bool = True,
    ):
        self.lam = lam
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.check_psd = check_psd

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit on features (or a square Gram matrix with ``kernel="precomputed"``)."""
        self._validate_params()
        in_dtype = getattr(X, "dtype", None)
        X, y = validate_data(self, X, y, dtype=np.float64)
        ys = binary_labels(self, y, "KOMD")
        if self.kernel == "precomputed":
            self._check_training_gram(X)
            K = X
            if self.check_psd:
                check_input_kernel(K, in_dtype)
            # a refit on a Gram matrix keeps no training points of an earlier fit
            self.__dict__.pop("X_fit_", None)
        else:
            self.X_fit_ = X
            K = self._gram(X)
            if self.check_psd and callable(self.kernel):
                check_psd_kernel(K, what="training Gram matrix of the callable kernel")
        gamma, n_iter, converged = solve_komd(
            K, ys, self.lam, solver=self.solver, tol=self.tol, max_iter=self.max_iter
        )
        if not converged:
            # max_iter=None is the SMO's own cap, which "max_iter=None" hides
            cap = (
                f"max_iter={self.max_iter}"
                if self.max_iter is not None
                else f"its default cap of {n_iter} pair updates (max_iter=None)"
            )
            warnings.warn(
                f"KOMD's SMO stopped at {cap} before the KKT gap reached "
                f"tol={self.tol}; raise max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.gamma_ = gamma
        coef = ys * gamma
        f = K @ coef
        # one problem, in the SVM family's shapes (methods/README.md)
        self.dual_coef_ = coef[None, :]
        self.intercept_ = np.array([-0.5 * float(gamma @ f)])
        self.support_ = np.flatnonzero(coef != 0.0)
        self.objective_ = komd_objective(K, ys, self.lam, gamma)
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.fit_status_ = 0 if converged else 1
        return self

    def decision_function(self, X) -> np.ndarray:
        """Ranking score ``sum_i y_i gamma_i k(x_i, x) + b``; > 0 means classes_[1]."""
        check_is_fitted(self)
        if self.kernel == "precomputed":
            Kt = validate_test_kernel(self, X)
        else:
            X = validate_data(self, X, dtype=np.float64, reset=False)
            Kt = self._gram(X, self.X_fit_)
        return Kt @ self.dual_coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int)]
