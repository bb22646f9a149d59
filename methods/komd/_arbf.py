r"""ARBF: an anisotropic RBF kernel learned in KOMD's game (arbf Alg. 1, Sec. 4).

Kernel: ``K_beta(x, z) = exp(-sum_r beta_r (x_r - z_r)^2)`` (arbf Sec. 4), one width
per feature. Algorithm 1 alternates, from ``beta = beta0 * 1``:

1. gamma step, eq. 2: KOMD on ``K_beta`` (the compiled SMO, warm-started);
2. beta step, eq. 3: ``max_beta Q(beta, gamma) - mu C(beta)`` with
   ``Q = gamma' Y K_beta Y gamma`` and ``C(beta) = 1/2 beta' C beta``, where
   ``C_ij = exp(-tau/m ||f_i - f_j||^2)`` correlates the feature columns ``f`` of
   the training data (eq. 1).

The beta step is one exponentiated-gradient step (Sec. 4.2): with
``beta = exp(-alpha)``, ``A_r = a' (D_r * K_beta) a`` (``a = y * gamma``, ``D_r`` the
squared differences of feature r) and the objective ``J = Q - w C``,
``dJ/dalpha_r = beta_r (A_r + w (C beta)_r)`` and one ascent step of size ``s`` in
``alpha`` gives ``beta_r <- beta_r * Delta_r`` with
``Delta_r = exp(-s beta_r (A_r + w (C beta)_r))``; beta stays positive.

Readings of Sec. 4.2 (named options, see ``mu_role``):

- ``mu_role="step"`` (default, the update as printed): ``mu`` is the step ``s`` of
  the update ``beta <- exp(-alpha - mu (dQ/dalpha - dC/dalpha))``, with ``w = 1``.
  The paper prints ``dC/dalpha_r = + C_r beta e^{-alpha_r}``; the chain rule gives
  ``-C_r beta e^{-alpha_r}`` (``d beta / d alpha = -beta``). With the printed sign
  the correlation term would *raise* the widths of correlated features, against
  the stated intent of eq. 1 ("this player will prefer uncorrelated features"), so
  we use the chain-rule sign. (Measured: with the printed sign both terms raise
  beta and it diverges, NaN within 20 iterations at mu >= 10 on heart.)
- ``mu_role="weight"``: ``mu`` is the weight of eq. 3 (``w = mu``) and the step is
  ``eta``, which the paper does not give. With ``eta = 1`` and ``mu = 1`` both
  readings give the same update.

- ``correlation="raw"`` (default, eq. 1 as printed): ``C`` on the feature columns
  as they are. On the [-1, 1]-scaled data of Sec. 5 a column has n entries, so
  ``||f_i - f_j||^2`` is O(n) and ``C`` is the identity up to < 0.1 off the diagonal
  at tau = 1 and ~1e-100 at tau = 100 (heart): the tau grid {1, 10, 100, 1000} is
  inert and ``C(beta) ~ 1/2 ||beta||^2``. ``correlation="pearson"``: each column
  centred and scaled to unit norm, so ``C_ij = exp(-2 tau/m (1 - rho_ij))`` is a
  function of the features' Pearson correlation ``rho``, the "redundancy (or
  correlation matrix)" eq. 1 names, and the tau grid spans C ~ all-ones (tau = 1)
  to C ~ I (tau = 1000). A reading, run as a check (arbf report, "Check runs").

``step`` is the default because the update printed in Sec. 4.2 is the algorithm
the paper runs and has ``mu`` as its only step; ``weight`` is a check (arbf
report, "Check runs"). Under either reading ``Q`` (~1e-3 with gamma on the two
simplices) is small beside ``C(beta)`` (~1e-2 to 1e-1), so the C term shrinks
beta almost uniformly and ARBF stays close to KOMD with a smaller beta0.

Kernel update (Sec. 4.2): the paper writes ``K <- K * exp((1 - Delta_r) D_r)``; the
new factor of feature r is ``exp(-beta_r Delta_r D_r) = exp(-beta_r D_r)
exp(beta_r (1 - Delta_r) D_r)``, so the exponent needs the factor ``beta_r``, which
we include. All features at once: ``K <- K * exp(sum_r beta_r (1 - Delta_r) D_r)``.
We apply it to the exponent ``E = sum_r beta_r D_r`` (``K = exp(-E)``), which is
the same update without the ``0 * inf`` of a multiplicative update once entries
of ``K`` underflow. One update costs one weighted distance matrix, O(n^2 m), the
same order as recomputing ``K_beta``; ``benchmarks/bench_komd.py`` times both.

The model after ``t`` iterations is KOMD on ``K_{beta_t}``: ``t = 0`` is KOMD with
the isotropic ``beta0`` (sigma = 1 / sqrt(2 beta0)), and a fit with ``n_iter = T``
solves T + 1 gamma steps. ``staged_decision_function`` yields the scores after
iterations 1..T (scikit-learn's gradient-boosting convention).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from numbers import Integral, Real

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from methods.komd._komd import binary_labels, komd_objective, solve_komd
from methods.komd._smo import KOMD_TOL

#: Bound on |exponent| of one multiplicative beta update (a factor e^{+-30}):
#: keeps beta finite when mu * gradient is huge; the count is ``n_clipped_``.
MAX_LOG_STEP = 30.0


def auc(positive: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC as the Mann-Whitney statistic (ties count one half).

    Equal to ``sklearn.metrics.roc_auc_score(positive, score)`` (tested) without
    its input validation, which costs ~25x the computation at these sizes and
    ARBF evaluates the AUC after every iteration.
    """
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    ranks = rankdata(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def weighted_sqdist(X: np.ndarray, Z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_r w_r (x_r - z_r)^2`` for every pair (w may have any sign)."""
    XW = X * w
    E = (XW * X).sum(1)[:, None] + (Z * Z * w).sum(1)[None, :] - 2.0 * XW @ Z.T
    return E


def anisotropic_rbf(X: np.ndarray, Z: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``K_beta(x, z) = exp(-sum_r beta_r (x_r - z_r)^2)`` (arbf Sec. 4)."""
    return np.exp(-np.maximum(weighted_sqdist(X, Z, beta), 0.0))


def feature_correlation(X: np.ndarray, tau: float, columns: str = "raw") -> np.ndarray:
    """``C_ij = exp(-tau/m ||f_i - f_j||^2)`` over the feature columns (arbf eq. 1).

    ``columns="raw"``: ``f_i`` is feature i's column of ``X`` as it is.
    ``columns="pearson"``: each column centred and scaled to unit norm (a constant
    column becomes 0), so ``||f_i - f_j||^2 = 2 (1 - rho_ij)`` with ``rho`` the
    Pearson correlation of the two features (module docstring, "Readings").
    """
    F = X.T
    if columns == "pearson":
        F = F - F.mean(axis=1, keepdims=True)
        norm = np.linalg.norm(F, axis=1, keepdims=True)
        F = np.divide(F, norm, out=np.zeros_like(F), where=norm > 0)
    sq = (F * F).sum(1)
    d = np.maximum(sq[:, None] + sq[None, :] - 2.0 * F @ F.T, 0.0)
    return np.exp(-tau / X.shape[1] * d)


def update_exponent(
    E: np.ndarray, X: np.ndarray, beta: np.ndarray, new_beta: np.ndarray
) -> np.ndarray:
    """Incremental kernel update of Sec. 4.2 on the exponent ``E`` (``K = exp(-E)``).

    ``K_new = K * exp(sum_r beta_r (1 - Delta_r) D_r)`` with
    ``Delta = new_beta / beta``, i.e. ``E_new = E + sum_r (new_beta_r - beta_r) D_r``.
    """
    E = np.maximum(E + weighted_sqdist(X, X, new_beta - beta), 0.0)
    np.fill_diagonal(E, 0.0)
    return E


def game_gradient_terms(X: np.ndarray, K: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``A_r = a' (D_r * K) a`` for every feature r, in O(n^2 m) (arbf Sec. 4.1).

    ``(x_ir - x_jr)^2 = x_ir^2 + x_jr^2 - 2 x_ir x_jr`` and ``K`` symmetric give
    ``A_r = 2 (sum_i x_ir^2 a_i (K a)_i - (a * x_r)' K (a * x_r))``;
    ``dQ/dbeta_r = -A_r``.
    """
    Ka = K @ a
    Z = a[:, None] * X
    return 2.0 * ((X * X).T @ (a * Ka) - np.einsum("ir,ir->r", Z, K @ Z))


def beta_objective(
    X: np.ndarray,
    y: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    C: np.ndarray,
    weight: float,
) -> float:
    """``J(beta) = Q(beta, gamma) - weight * 1/2 beta' C beta`` (arbf eq. 3)."""
    a = y * gamma
    K = anisotropic_rbf(X, X, beta)
    return float(a @ K @ a - weight * 0.5 * beta @ C @ beta)


def beta_gradient(
    X: np.ndarray,
    K: np.ndarray,
    y: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    C: np.ndarray,
    weight: float,
) -> np.ndarray:
    """``dJ/dbeta = -A - weight * C beta`` (arbf Sec. 4.1, with K = K_beta)."""
    return -game_gradient_terms(X, K, y * gamma) - weight * (C @ beta)


class ARBF(ClassifierMixin, BaseEstimator):
    r"""KOMD with a learned anisotropic RBF kernel (arbf Algorithm 1, eqs. 1-3).

    Parameters
    ----------
    lam : float in [0, 1], default=0.5
        KOMD's lambda (eq. 2), chosen by KOMD validation (Alg. 1 step 0).
    beta0 : float > 0, default=0.1
        Initial isotropic width ``beta = beta0 * 1`` (Alg. 1 step 0).
    mu : float >= 0, default=10
        Step of the beta update (``mu_role="step"``) or weight of C (``"weight"``).
    tau : float >= 0, default=100
        Width of the feature-correlation kernel C (eq. 1).
    n_iter : int >= 0, default=20
        T, the number of gamma/beta alternations; 0 is plain KOMD.
    mu_role : {"step", "weight"}, default="step"
        Reading of Sec. 4.2 (module docstring).
    eta : float > 0, default=1.0
        Step of the beta update when ``mu_role="weight"``.
    correlation : {"raw", "pearson"}, default="raw"
        The feature columns eq. 1's C is computed on (module docstring).
    tol, max_iter
        Of KOMD's SMO.

    Attributes
    ----------
    classes_, n_features_in_
    beta_ : (m,) final widths; beta_path_ : (T+1, m), row t = beta_t.
    gamma_ : (n,), gamma_path_ : (T+1, n); intercept_path_ : (T+1,).
    train_auc_ : (T+1,) training AUC of the model after t iterations.
    validation_auc_ : (T+1,) AUC on ``eval_set`` per iteration, or None.
    objective_path_ : (T+1,) game value Q(beta_t, gamma_{t}) per iteration.
    objective_ : eq. 2 at the final (beta, gamma).
    dual_coef_ : (1, n) ``y_i gamma_i`` of the final KOMD (on K_{beta_T});
    support_ : samples with ``gamma_i > 0`` there; intercept_ : (1,) its bias
    (``intercept_path_[-1]``). The SVM family's shapes, one problem.
    constant_features_ : indices of features constant on the training data (they
        do not change K_beta; their beta is reported but has no effect).
    n_iter_ (T), n_smo_iter_, converged_ (every SMO converged), fit_status_ (0 if
    converged_, 1 if a gamma step stopped at max_iter), n_clipped_.
    X_fit_ : (n, m) training points; y_fit_ : (n,) their labels in {-1, +1}
    (+1 is ``classes_[1]``).
    """

    paper_name = "ARBF"

    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0.0, 1.0, closed="both")],
        "beta0": [Interval(Real, 0.0, None, closed="neither")],
        "mu": [Interval(Real, 0.0, None, closed="left")],
        "tau": [Interval(Real, 0.0, None, closed="left")],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "mu_role": [StrOptions({"step", "weight"})],
        "eta": [Interval(Real, 0.0, None, closed="neither")],
        "correlation": [StrOptions({"raw", "pearson"})],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        lam: float = 0.5,
        beta0: float = 0.1,
        mu: float = 10.0,
        tau: float = 100.0,
        n_iter: int = 20,
        mu_role: str = "step",
        eta: float = 1.0,
        correlation: str = "raw",
        tol: float = KOMD_TOL,
        max_iter: int | None = None,
    ):
        self.lam = lam
        self.beta0 = beta0
        self.mu = mu
        self.tau = tau
        self.n_iter = n_iter
        self.mu_role = mu_role
        self.eta = eta
        self.correlation = correlation
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y, eval_set: tuple | None = None):
        """Run Algorithm 1 for ``n_iter`` iterations.

        ``eval_set=(X_val, y_val)`` records ``validation_auc_`` per iteration; it
        must hold both classes (AUC is undefined otherwise), labelled as ``y``,
        with one label per row of ``X_val`` (a ``ValueError`` otherwise).
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        ys = binary_labels(self, y, "ARBF")
        Xv = yv = None
        if eval_set is not None:
            Xv = validate_data(self, eval_set[0], dtype=np.float64, reset=False)
            yv = column_or_1d(eval_set[1])
            if len(yv) != len(Xv):
                raise ValueError(
                    f"ARBF eval_set: X_val has {len(Xv)} samples but y_val has "
                    f"{len(yv)}; pass eval_set=(X_val, y_val) of the same length."
                )
            unknown = np.setdiff1d(np.unique(yv), self.classes_)
            if unknown.size:
                raise ValueError(
                    f"ARBF eval_set has labels {unknown.tolist()} that are not the "
                    f"training classes {self.classes_.tolist()}: validation AUC "
                    "needs y_val labelled as y."
                )
            if len(np.unique(yv)) < 2:
                raise ValueError(
                    "ARBF eval_set has one class only "
                    f"({np.unique(yv).tolist()}): validation AUC is undefined. Use a "
                    "stratified validation split with both classes."
                )
            yv = np.where(yv == self.classes_[1], 1.0, -1.0)
        n, m = X.shape
        self.constant_features_ = np.flatnonzero(np.ptp(X, axis=0) == 0.0)
        step, weight = (self.mu, 1.0) if self.mu_role == "step" else (self.eta, self.mu)
        C = feature_correlation(X, self.tau, self.correlation)
        beta = np.full(m, float(self.beta0))
        E = np.maximum(weighted_sqdist(X, X, beta), 0.0)
        np.fill_diagonal(E, 0.0)
        gamma = None
        T = int(self.n_iter)
        betas, gammas, bs, q_path, tr_auc, va_auc = [], [], [], [], [], []
        n_smo, converged, n_clipped = 0, True, 0
        for t in range(T + 1):
            K = np.exp(-E)
            gamma, it, ok = solve_komd(
                K, ys, self.lam, gamma, tol=self.tol, max_iter=self.max_iter
            )
            n_smo += it
            converged &= ok
            a = ys * gamma
            f = K @ a
            b = -0.5 * float(gamma @ f)
            betas.append(beta.copy())
            gammas.append(gamma.copy())
            bs.append(b)
            q_path.append(float(a @ f))
            tr_auc.append(auc(ys > 0, f))
            if Xv is not None:
                va_auc.append(auc(yv > 0, anisotropic_rbf(Xv, X, beta) @ a))
            if t == T:
                break
            # beta step: one exponentiated ascent step on eq. 3 (Sec. 4.2)
            g_alpha = beta * (game_gradient_terms(X, K, a) + weight * (C @ beta))
            log_delta = -step * g_alpha
            n_clipped += int(np.sum(np.abs(log_delta) > MAX_LOG_STEP))
            log_delta = np.clip(log_delta, -MAX_LOG_STEP, MAX_LOG_STEP)
            new_beta = beta * np.exp(log_delta)
            # incremental kernel update: K <- K * exp(sum_r beta_r (1 - Delta_r) D_r)
            E = update_exponent(E, X, beta, new_beta)
            beta = new_beta
        if not converged:
            warnings.warn(
                "ARBF: a KOMD gamma step stopped at max_iter before reaching tol; "
                "raise max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.X_fit_ = X
        self.y_fit_ = ys
        self.beta_path_ = np.array(betas)
        self.gamma_path_ = np.array(gammas)
        self.intercept_path_ = np.array(bs)
        self.objective_path_ = np.array(q_path)
        self.train_auc_ = np.array(tr_auc)
        self.validation_auc_ = np.array(va_auc) if Xv is not None else None
        self.beta_ = beta
        self.gamma_ = gamma
        # the final KOMD in the SVM family's shapes (methods/README.md); the
        # decision is computed from the paths, as the staged ones
        self.dual_coef_ = (ys * gamma)[None, :]
        self.support_ = np.flatnonzero(self.dual_coef_[0] != 0.0)
        self.intercept_ = np.array([bs[-1]])
        self.objective_ = komd_objective(K, ys, self.lam, gamma)
        self.n_iter_ = T
        self.n_smo_iter_ = n_smo
        self.converged_ = bool(converged)
        self.fit_status_ = 0 if self.converged_ else 1
        self.n_clipped_ = n_clipped
        return self

    def _stage_decision(self, X: np.ndarray, t: int) -> np.ndarray:
        K = anisotropic_rbf(X, self.X_fit_, self.beta_path_[t])
        return K @ (self.y_fit_ * self.gamma_path_[t]) + self.intercept_path_[t]

    def decision_function(self, X) -> np.ndarray:
        """Ranking score of the final model (KOMD on K_{beta_T}); > 0: classes_[1]."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._stage_decision(X, len(self.beta_path_) - 1)

    def staged_decision_function(self, X) -> Iterator[np.ndarray]:
        """Scores after iterations 1, ..., T (as GradientBoosting's)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        for t in range(1, len(self.beta_path_)):
            yield self._stage_decision(X, t)

    def predict(self, X) -> np.ndarray:
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int)]
