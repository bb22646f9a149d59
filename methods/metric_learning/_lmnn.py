r"""Large margin nearest neighbour (LMNN) metric learning.

Weinberger & Saul (JMLR 2009, Eq. 13), as lmnnmkl writes it in Eq. 18 without the
kernel weights P: with target neighbours :math:`N(i)` (the ``k`` same-class nearest
neighbours of :math:`x_i` in the input metric, fixed before learning),

.. math:: \min_{M \succeq 0}\; (1-\gamma) \sum_i \sum_{j \in N(i)} d_M^2(x_i, x_j)
    + \gamma \sum_i \sum_{j \in N(i)} \sum_l (1 - Y_{il})
      \left[m + d_M^2(x_i, x_j) - d_M^2(x_i, x_l)\right]_+

with :math:`d_M^2(x, z) = (x - z)^T M (x - z)`, :math:`\gamma` = ``push_weight``
and :math:`m` = ``margin`` (1 in both papers). On a precomputed kernel the features
are the rows of the kernel matrix, the empirical kernel map of lmnnmkl Eq. 2:
:math:`d_A^2(\Phi(x_i), \Phi(x_j)) = (K^i - K^j)^T A (K^i - K^j)`, so the learned
matrix is lmnnmkl's :math:`A` (n x n) and the problem is lmnnmkl Eq. 3.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from methods._validation import check_input_kernel, validate_test_kernel
from methods.metric_learning._lmnn_solver import solve_lmnn


def _squared_distances(X: np.ndarray) -> np.ndarray:
    xx = np.einsum("ij,ij->i", X, X)
    D = xx[:, None] + xx[None, :] - 2.0 * (X @ X.T)
    np.maximum(D, 0.0, out=D)
    np.fill_diagonal(D, 0.0)
    return D


def check_neighbor_classes(y: np.ndarray, n_neighbors: int, *, what: str = "LMNN"):
    """Raise a ValueError unless there are >= 2 classes with >= k + 1 members each.

    Returns ``(classes, codes)`` as :func:`numpy.unique` with ``return_inverse``.
    """
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    names = classes.tolist()
    if len(classes) < 2:
        raise ValueError(
            f"{what} needs at least 2 classes (it pushes other-class impostors away); "
            f"got only class {names[0]!r}. Fit it on data with several classes "
            "(check the fold: a stratified split keeps every class in it)."
        )
    small = counts < n_neighbors + 1
    if small.any():
        head = (
            f"{what} with n_neighbors={n_neighbors} needs n_neighbors + 1 = "
            f"{n_neighbors + 1} samples per class (each sample needs {n_neighbors} "
            "same-class target neighbours); "
        )
        if counts.min() < 2:
            # no n_neighbors >= 1 fits a class of one: only the data can change
            c = int(np.argmin(counts))
            raise ValueError(
                head + f"class {names[c]!r} has a single sample, which has no "
                "same-class target neighbour at any n_neighbors. The class needs at "
                f"least n_neighbors + 1 = {n_neighbors + 1} samples: drop it or merge "
                "it into another class (stratified folds keep class sizes even)."
            )
        c = int(np.argmax(small))
        raise ValueError(
            head + f"class {names[c]!r} has {counts[c]}. "
            f"Lower n_neighbors to at most {int(counts.min()) - 1}, or drop or merge "
            "the class (stratified folds keep class sizes even)."
        )
    return classes, codes.ravel()


def target_neighbors(
    X: np.ndarray,
    y: np.ndarray,
    n_neighbors: int,
    *,
    metric: str = "euclidean",
) -> np.ndarray:
    r"""The ``k`` same-class nearest neighbours of every sample (W&S 2009 Sec. 3.1).

    Parameters
    ----------
    X : ndarray of shape (n, d), or (n, n) squared distances if ``metric`` is
        ``"precomputed"``.
    y : ndarray of shape (n,)
    n_neighbors : int
        ``k``.
    metric : {"euclidean", "precomputed"}, default="euclidean"

    Returns
    -------
    ndarray of shape (n, k), int
        Row ``i`` lists the targets of sample ``i``, nearest first; ties go to the
        lower index (stable sort). A sample is never its own target.
    """
    y = np.asarray(y)
    _, codes = check_neighbor_classes(y, n_neighbors, what="target_neighbors")
    if metric == "euclidean":
        D = _squared_distances(np.asarray(X, dtype=np.float64))
    elif metric == "precomputed":
        D = np.asarray(X, dtype=np.float64)
        if D.ndim != 2 or D.shape[0] != D.shape[1]:
            raise ValueError(
                f"A precomputed distance matrix must be square; got shape {D.shape}."
            )
    else:
        raise ValueError(
            f"metric must be 'euclidean' or 'precomputed'; got {metric!r}."
        )
    if D.shape[0] != len(y):
        raise ValueError(f"X has {D.shape[0]} samples but y has {len(y)} labels.")
    tn = np.empty((len(y), n_neighbors), dtype=np.int64)
    for c in np.unique(codes):
        idx = np.flatnonzero(codes == c)
        Dc = D[np.ix_(idx, idx)].copy()
        np.fill_diagonal(Dc, np.inf)
        order = np.argsort(Dc, axis=1, kind="stable")[:, :n_neighbors]
        tn[idx] = idx[order]
    return tn


_find_targets = target_neighbors  # LMNN.fit's argument shadows the public name


def _row_space(X: np.ndarray) -> np.ndarray | None:
    """Orthonormal basis (d, r) of the row space of X, or None if it is all of R^d.

    Rank as :func:`numpy.linalg.matrix_rank`: singular values above
    ``s_max * max(n, d) * eps``; the rest are round-off.
    """
    n, d = X.shape
    if n > d:  # an (n, d) sample of more than d points rarely lacks a direction;
        return None  # an SVD to find out would cost more than it saves
    _, s, Vt = np.linalg.svd(X, full_matrices=False)
    r = int(np.sum(s > s.max(initial=0.0) * max(n, d) * np.finfo(np.float64).eps))
    if r == d:
        return None
    return Vt[: max(r, 1)].T


def lmnn_loss(
    M: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    target_neighbors: np.ndarray,
    push_weight: float = 0.5,
    margin: float = 1.0,
) -> tuple[float, np.ndarray]:
    r"""LMNN objective and its subgradient in ``M``, written densely (the reference).

    .. math:: f(M) = (1-\gamma) \sum_{i, j \in N(i)} d_M^2(x_i, x_j)
        + \gamma \sum_{i, j \in N(i)} \sum_{l: y_l \ne y_i}
          [m + d_M^2(x_i, x_j) - d_M^2(x_i, x_l)]_+

    (W&S 2009 Eq. 13; lmnnmkl Eq. 18 without P), and

    .. math:: \partial f = (1-\gamma) \sum C_{ij}
        + \gamma \sum_{\text{active}} (C_{ij} - C_{il}), \quad
        C_{ab} = (x_a - x_b)(x_a - x_b)^T,

    with a triplet active when its hinge argument is > 0. Slow: one outer product
    per triplet, for tests on small problems.

    Parameters
    ----------
    M : ndarray of shape (d, d)
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    target_neighbors : ndarray of shape (n, k), int
    push_weight : float, default=0.5
        :math:`\gamma`.
    margin : float, default=1.0

    Returns
    -------
    value : float
    gradient : ndarray of shape (d, d)
    """
    M = np.asarray(M, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    gamma = float(push_weight)
    value = 0.0
    grad = np.zeros_like(M)
    for i in range(X.shape[0]):
        for j in target_neighbors[i]:
            u = X[i] - X[j]
            d_ij = u @ M @ u
            C_ij = np.outer(u, u)
            value += (1.0 - gamma) * d_ij
            grad += (1.0 - gamma) * C_ij
            for l in np.flatnonzero(y != y[i]):
                v = X[i] - X[l]
                h = margin + d_ij - v @ M @ v
                if h > 0.0:
                    value += gamma * h
                    grad += gamma * (C_ij - np.outer(v, v))
    return float(value), grad


class LMNN(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Large margin nearest neighbour metric learning (W&S 2009; lmnnmkl Eq. 18).

    Learns :math:`M = L^T L \succeq 0` minimizing (W&S 2009 Eq. 13, lmnnmkl Eq. 18
    without P)

    .. math:: (1-\gamma) \sum_{i, j \in N(i)} d_M^2(x_i, x_j)
        + \gamma \sum_{i, j \in N(i)} \sum_{l: y_l \ne y_i}
          [m + d_M^2(x_i, x_j) - d_M^2(x_i, x_l)]_+ ,

    where :math:`N(i)` holds the ``n_neighbors`` same-class nearest neighbours of
    :math:`x_i` in the input metric, fixed before learning.

    Solver: L-BFGS on :math:`L` (no eigendecomposition per step; PSD by
    construction), with the hinge evaluated over the impostor pairs that a
    triangle-inequality bound from a reference point cannot rule out (the active
    set) -- exact, so ``solver="dense"`` (every triplet at every evaluation) follows
    the same path and serves as the reference. On wide inputs (d >= 128, e.g. kernel
    maps) where that bound rules out few pairs, an evaluation takes every distance
    from one GEMM instead (same objective up to rounding, ~2.5x faster per step on a
    1000-point kernel map). When X's row space is smaller than
    R^d (d > n, low-rank kernels) and ``init="identity"``, it solves in that space,
    which is the same path. See :mod:`methods.metric_learning._lmnn_solver`.

    On a full-rank kernel map (n = d) the objective's infimum is about 0 (the n
    points can be placed freely), so the learned metric depends on where the solver
    stops: ``tol`` and ``max_iter`` act as regularizers there.

    Parameters
    ----------
    n_neighbors : int, default=5
        ``k`` target neighbours per sample (W&S 2009; lmnnmkl Sec. 6 uses 5).
    push_weight : float, default=0.5
        :math:`\gamma` of lmnnmkl Eq. 18 (W&S's :math:`\mu`), the weight of the push
        term; the pull term has ``1 - push_weight``.
    margin : float, default=1.0
        The unit margin :math:`m`.
    kernel : {None, "precomputed"}, default=None
        ``None``: ``X`` holds features. ``"precomputed"``: ``fit(K_train)`` with the
        (n, n) kernel matrix, ``transform(K_test)`` with (n_test, n_train) blocks;
        the rows are the empirical kernel map of lmnnmkl Eq. 2 and the learned
        matrix is lmnnmkl's :math:`A` (Eq. 3). The estimator is then tagged
        pairwise, so cross-validation slices rows and columns.
    kernel_neighbors : {"feature_space", "kernel_map"}, default="feature_space"
        With ``kernel="precomputed"``, the input metric that picks the target
        neighbours (lmnnmkl leaves it open): ``"feature_space"`` is the kernel's own
        distance :math:`K_{ii} + K_{jj} - 2 K_{ij}` (the Euclidean distance on raw
        features for a linear kernel); ``"kernel_map"`` is the Euclidean distance
        between rows of K (the metric of :math:`A = I`). Ignored without a kernel.
    init : "identity" or ndarray of shape (d, d), default="identity"
        Start metric: ``"identity"`` (lmnnmkl's :math:`A_0 = I`), or a PSD matrix
        :math:`M_0` (a warm start, e.g. LMNN-MKL_P's metric step). The solver starts
        from its symmetric square root; directions where :math:`M_0` is exactly 0
        stay 0 (the gradient in :math:`L` vanishes there).
    max_iter : int, default=1000
        L-BFGS iterations, at least 1 (scipy's L-BFGS-B takes a step even at
        ``maxiter=0``; the unlearned metric is ``init`` itself).
    tol : float, default=1e-7
        Stop when an iteration lowers the objective by less than ``tol`` relative
        (L-BFGS-B ``ftol``).
    solver : {"active_set", "dense"}, default="active_set"
        ``"dense"`` evaluates every triplet at every step (the reference).
    verbose : bool, default=False
    check_psd : bool, default=True
        With ``kernel="precomputed"``, check that the training kernel matrix is
        symmetric and positive semi-definite, and raise
        :class:`~methods.exceptions.NonPSDKernelError` otherwise (the SVM family's
        rule, :func:`~methods.check_psd_kernel`; a Cholesky certificate, O(n^3 / 3),
        the eigendecomposition only when it fails). A caller that fits many models
        on one Gram matrix, or builds it PSD (the LMNN-MKL estimators' sums and
        combinations of checked kernels), checks it once and passes
        ``check_psd=False``. Ignored without a kernel.

    Attributes
    ----------
    components_ : ndarray of shape (n_features_in_, n_features_in_)
        :math:`L`; the learned metric is :math:`M = L^T L`.
    objective_ : float
        The objective at ``components_``.
    n_iter_ : int
        L-BFGS iterations.
    converged_ : bool
        True if L-BFGS stopped on ``tol``; False on ``max_iter`` or on a failed line
        search (the objective is non-smooth at active-set changes).
    target_neighbors_ : ndarray of shape (n_samples, n_neighbors)
        Indices into the training set.
    n_active_ : int
        Active triplets (hinge > 0) at the last evaluation.
    solver_info_ : dict
        Solver status, message, evaluation counts and time.
    classes_ : ndarray
    n_features_in_ : int

    References
    ----------
    .. [1] K. Q. Weinberger and L. K. Saul. Distance metric learning for large margin
       nearest neighbor classification. JMLR 10:207-244, 2009.
    .. [2] Lmnnmkl: J. Wang, H. T. Do, A. Woznica, A. Kalousis. Metric learning with
       multiple kernels. NIPS 2011 (Eqs. 2, 3, 18).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from methods.metric_learning import LMNN
    >>> X, y = load_iris(return_X_y=True)
    >>> lmnn = LMNN(n_neighbors=3).fit(X, y)
    >>> lmnn.transform(X).shape
    (150, 4)
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "push_weight": [Interval(Real, 0, 1, closed="both")],
        "margin": [Interval(Real, 0, None, closed="neither")],
        "kernel": [None, StrOptions({"precomputed"})],
        "kernel_neighbors": [StrOptions({"feature_space", "kernel_map"})],
        "init": [StrOptions({"identity"}), "array-like"],
        # from 1: scipy's L-BFGS-B takes a step at maxiter=0 too
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions({"active_set", "dense"})],
        "verbose": ["verbose"],
        "check_psd": ["boolean"],
    }

    def __init__(
        self,
        n_neighbors: int = 5,
        push_weight: float = 0.5,
        margin: float = 1.0,
        kernel: str | None = None,
        kernel_neighbors: str = "feature_space",
        init="identity",
        max_iter: int = 1000,
        tol: float = 1e-7,
        solver: str = "active_set",
        verbose: bool = False,
        check_psd: bool = True,
    ):
        self.n_neighbors = n_neighbors
        self.push_weight = push_weight
        self.margin = margin
        self.kernel = kernel
        self.kernel_neighbors = kernel_neighbors
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.verbose = verbose
        self.check_psd = check_psd

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.target_tags.required = True
        return tags

    def _initial_L(self, d: int) -> np.ndarray:
        if isinstance(self.init, str):
            return np.eye(d)
        M0 = check_array(self.init, ensure_2d=True, dtype=np.float64)
        if M0.shape != (d, d):
            raise ValueError(
                f"init must be a ({d}, {d}) matrix for {d} input features"
                f"{' (kernel columns)' if self.kernel else ''}; got shape {M0.shape}."
            )
        w, V = np.linalg.eigh((M0 + M0.T) / 2.0)
        tol = np.abs(w).max(initial=0.0) * d * np.finfo(np.float64).eps
        if w.size and w.min() < -tol:
            raise ValueError(
                f"init is not positive semi-definite (smallest eigenvalue "
                f"{w.min():.3g}); pass a PSD matrix M0 or init='identity'."
            )
        return (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, target_neighbors: np.ndarray | None = None):
        """Learn the metric.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            kernel matrix if ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
        target_neighbors : ndarray of shape (n_samples, n_neighbors), default=None
            Fixed target neighbours (indices into X); default: computed from the
            input metric (see ``kernel_neighbors``).

        Returns
        -------
        self
        """
        in_dtype = getattr(X, "dtype", None)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(
                "Precomputed kernel matrix must be a square (n_train, n_train) matrix. "
                f"Input is a {X.shape[0]}x{X.shape[1]} matrix."
            )
        if self.kernel == "precomputed" and self.check_psd:
            check_input_kernel(X, in_dtype)
        self.classes_, codes = check_neighbor_classes(y, self.n_neighbors)
        if target_neighbors is None:
            if (
                self.kernel == "precomputed"
                and self.kernel_neighbors == "feature_space"
            ):
                diag = np.diag(X)
                D = np.maximum(diag[:, None] + diag[None, :] - X - X.T, 0.0)
                np.fill_diagonal(D, 0.0)
                tn = _find_targets(D, codes, self.n_neighbors, metric="precomputed")
            else:
                tn = _find_targets(X, codes, self.n_neighbors)
        else:
            tn = np.asarray(target_neighbors, dtype=np.int64)
            if tn.shape != (X.shape[0], self.n_neighbors):
                raise ValueError(
                    f"target_neighbors must have shape ({X.shape[0]}, "
                    f"{self.n_neighbors}); got {tn.shape}."
                )
            if tn.min() < 0 or tn.max() >= X.shape[0]:
                raise ValueError(
                    "target_neighbors holds indices outside the training set."
                )
        d = X.shape[1]
        basis = _row_space(X) if isinstance(self.init, str) else None
        if basis is not None:
            # exact: from L0 = I every L-BFGS iterate is I + V (L_r - I) V^T with V
            # spanning X's row space, so solve in those r coordinates
            X_solve, L0 = X @ basis, np.eye(basis.shape[1])
        else:
            X_solve, L0 = X, self._initial_L(d)
        out = solve_lmnn(
            X_solve,
            tn,
            codes,
            L0,
            push_weight=self.push_weight,
            margin=self.margin,
            max_iter=self.max_iter,
            tol=self.tol,
            active_set=self.solver == "active_set",
            verbose=bool(self.verbose),
        )
        L = out.pop("L")
        if basis is not None:
            L = np.eye(d) + basis @ (L - np.eye(basis.shape[1])) @ basis.T
        self.components_ = L
        out["n_solver_features"] = X_solve.shape[1]
        self.objective_ = out["objective"]
        self.n_iter_ = out["n_iter"]
        self.converged_ = bool(out["converged"])
        self.n_active_ = out["n_active"]
        self.target_neighbors_ = tn
        self.solver_info_ = out
        self._n_features_out = self.components_.shape[0]
        if out["status"] == 1:
            warnings.warn(
                f"LMNN stopped at max_iter={self.max_iter} before the objective "
                f"settled (tol={self.tol}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def transform(self, X) -> np.ndarray:
        """Map ``X`` to the learned space, ``X @ components_.T``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_), or the
            (n_samples, n_train) kernel block if ``kernel="precomputed"``.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_)
        """
        check_is_fitted(self, "components_")
        if self.kernel == "precomputed":
            X = validate_test_kernel(self, X)
        else:
            X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.components_.T

    def get_mahalanobis_matrix(self) -> np.ndarray:
        """The learned PSD matrix :math:`M = L^T L` (lmnnmkl's A on a kernel)."""
        check_is_fitted(self, "components_")
        return self.components_.T @ self.components_
