r"""Multiple kernel learning on the simplex: SimpleMKL, MKL_m and ε-MKL.

All three learn a convex combination :math:`K(\mu) = \sum_k \mu_k K_k`,
:math:`\mu \in \Delta = \{\mu \ge 0, \sum_k \mu_k = 1\}`, by minimizing

.. math:: J(\mu) = \max_z \; -p^\top z - \tfrac12 g(z)^\top K(\mu)\, g(z)

over the simplex (mlsvm Eq. (23)), where :math:`J(\mu)` is the optimal value of the
inner SVM-like dual at fixed :math:`\mu`:

- SimpleMKL (mlsvm Eq. (2), the MKL of [2]): the C-SVM dual, :math:`z = \alpha`,
  :math:`g = y \circ \alpha`;
- MKL_m (mlsvm Eq. (22)): the SVM_m dual (mlsvm Eq. (15)), :math:`z = [\alpha;\beta]`,
  :math:`g = y \circ (\alpha - \beta)`;
- ε-MKL: MKL_m with :math:`\varepsilon = 0`.

By Danskin's theorem the gradient is (mlsvm Sec. VI-B, below Eq. (23))

.. math:: \partial J / \partial \mu_k = -\tfrac12 \sum_{ij} (\alpha_i - \beta_i)
    (\alpha_j - \beta_j) y_i y_j K_k(x_i, x_j) = -\tfrac12 g^\top K_k g ,

with :math:`\beta = 0` for SimpleMKL. The outer loop is SimpleMKL's reduced-gradient
descent ([2], Sec. 3 and Algorithm 1): the gradient is reduced with respect to the
largest weight, components that would leave the simplex are zeroed, the step first
runs to the boundary while that lowers :math:`J`, then a golden-section line search
on :math:`J` picks the step. Inner problems are warm-started from the previous ``z``.

Stopping ([2], Sec. 4.2): the relative duality gap

.. math:: \frac{J(\mu) - \big(-p^\top z - \max_k \tfrac12 g^\top K_k g\big)}{J(\mu)}
    = \frac{\max_k \tfrac12 g^\top K_k g - \sum_k \mu_k \tfrac12 g^\top K_k g}{J(\mu)}

(for SimpleMKL, :math:`-p^\top z = \sum_i \alpha_i`), or a maximal weight change below
``weight_tol``, or ``max_iter`` outer iterations.

Scale of C. mlsvm Eq. (22) writes ``C1/2 sum xi`` next to ``1/2 sum <w_k, w_k>/mu_k``,
which would put the box at ``C1/2``; mlsvm Eq. (15) (SVM_m) and [2] (SimpleMKL) put it
at ``C``. We use the box ``0 <= alpha <= C``, ``0 <= beta <= C2`` of Eq. (15), so that
with one kernel MKL_m is exactly SVM_m and SimpleMKL is exactly the C-SVM of SVC.
Likewise mlsvm Eq. (2) writes a squared-slack, p-norm MKL_gamma; the SimpleMKL the
paper runs (Sec. VII) is the hinge-loss, 1-norm MKL of [2], implemented here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import combinations
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from methods._kernels import KernelSpec, bank20, pairwise_kernel
from methods._qp import SOLVERS, BoxQP, QPResult, csvm_dual, solve_box_qp, svmm_dual

MKL_NORMALIZATIONS = (None, "cosine", "unit_trace", "feature_variance")

# Weights below this are set to exactly 0 before J is evaluated, as SimpleMKL's
# ``numericalprecision`` (1e-8) does, so the support of mu does not drift.
_WEIGHT_FLOOR = 1e-8
# Line search: stop once the directional derivative of J has shrunk below this
# fraction of its value at the start (SimpleMKL's golden search stops at a bracket of
# ``goldensearch_deltmax`` = 0.1 times the maximal step). A search that finds no
# decrease divides the fraction by 10, down to the floor, before the descent gives up;
# with exact inner solves a decrease is always found, so the floor only bounds the
# solves spent when inexact ones hide it (up to 40 per level).
_LINE_SEARCH_TOL = 1e-1
_LINE_SEARCH_TOL_FLOOR = 1e-4
_LINE_SEARCH_MAX_EVALS = 40
# Keep each secant trial this fraction of the bracket away from its ends.
_SAFEGUARD = 1e-3

# fit_status_ codes: 0 converged, 1 max_iter reached, 2 line search stalled.
_STATUS = {
    "single_kernel": 0,
    "duality_gap": 0,
    "weight_change": 0,
    "max_iter": 1,
    "stalled": 2,
}


# ---------------------------------------------------------------------------
# The outer solver: arrays in, dict out.
# ---------------------------------------------------------------------------


def combine_kernels(stack: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``K(mu) = sum_k mu_k K_k`` for a stack ``(n_rows, n_cols, n_kernels)``."""
    return stack @ mu


def kernel_quadratic_forms(stack: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``1/2 g' K_k g`` for every kernel ``k`` of a square stack (= ``-dJ/dmu_k``)."""
    n, _, m = stack.shape
    # g' [K_1 ... K_m] as one matrix-vector product over the (n, n * m) view.
    gK = (g @ stack.reshape(n, n * m)).reshape(n, m)
    return 0.5 * (g @ gK)


def _clean_weights(mu: np.ndarray) -> np.ndarray:
    mu = np.where(mu < _WEIGHT_FLOOR, 0.0, mu)
    return mu / mu.sum()


def _descent_direction(mu: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, int]:
    """SimpleMKL's descent direction ([2], Eq. (14)), reduced w.r.t. the largest weight.

    ``D_m = -(grad_m - grad_ref)`` for every ``m != ref``, except 0 for a zero weight
    whose reduced gradient is positive (it would go negative);
    ``D_ref = -sum_{m != ref} D_m`` so that ``sum D = 0`` and ``mu + t D`` stays on
    the affine hull of the simplex.
    """
    ref = int(np.argmax(mu))
    reduced = grad - grad[ref]
    D = -reduced
    D[(mu <= 0.0) & (reduced > 0.0)] = 0.0
    D[ref] = 0.0
    D[ref] = -D.sum()
    return D, ref


def _max_step(mu: np.ndarray, D: np.ndarray) -> tuple[float, int]:
    """Largest ``t`` with ``mu + t D >= 0`` and the weight that reaches 0 there."""
    neg = np.flatnonzero(D < 0.0)
    ratios = -mu[neg] / D[neg]
    k = int(np.argmin(ratios))
    return float(ratios[k]), int(neg[k])


class _Point(NamedTuple):
    """One evaluated ``mu``: ``J(mu)``, the inner solution and ``1/2 g' K_k g``."""

    mu: np.ndarray
    J: float
    result: QPResult
    problem: BoxQP
    forms: np.ndarray  # -dJ/dmu (mlsvm Sec. VI-B)


def _relative_gap(pt: _Point) -> float:
    """SimpleMKL's duality gap ([2], Sec. 4.2) relative to ``J``."""
    gap = float(pt.forms.max() - pt.mu @ pt.forms)
    return gap / max(abs(pt.J), np.finfo(float).tiny)


class _Evaluator:
    """``J(mu)`` and its gradient by one inner solve; counts solves and failures."""

    def __init__(
        self,
        stack: np.ndarray,
        make_problem: Callable[[np.ndarray], BoxQP],
        solver: str,
        inner_options: dict,
    ) -> None:
        self.stack = stack
        self.make_problem = make_problem
        self.solver = solver
        self.inner_options = inner_options
        self.n_solves = 0
        self.n_unconverged = 0

    def __call__(self, mu: np.ndarray, z0: np.ndarray | None) -> _Point:
        problem = self.make_problem(combine_kernels(self.stack, mu))
        options = dict(self.inner_options)
        # The cvxopt reference is an interior-point method: it cannot use a start.
        if z0 is not None and self.solver != "cvxopt":
            options["z0"] = z0
        res = solve_box_qp(problem, solver=self.solver, **options)
        self.n_solves += 1
        self.n_unconverged += not res.converged
        forms = kernel_quadratic_forms(self.stack, problem.coef(res.z))
        # The solvers minimize 1/2 z'Qz + p'z; J is the maximization form.
        return _Point(mu, -float(res.objective), res, problem, forms)


def _line_search(
    evaluate: _Evaluator,
    D: np.ndarray,
    start: _Point,
    end: _Point,
    t_max: float,
    eta: float,
) -> _Point:
    """Minimize ``phi(t) = J(mu + t D)`` over ``[0, t_max]``; return the best point.

    ``phi`` is convex, so its derivative ``phi'(t) = -D . forms(t)`` (free from each
    inner solution, mlsvm Sec. VI-B) is nondecreasing, negative at 0 and, when
    ``phi(t_max) >= phi(0)``, nonnegative at ``t_max``. Its root is found by
    regula falsi with the Illinois correction, until ``|phi'| <= eta |phi'(0)|``.
    We use the derivative rather than SimpleMKL's golden section on ``phi`` alone
    because ``t_max`` often lies orders of magnitude beyond the minimizer, where a
    golden section spends one solve per factor 1.6 of that ratio. Only a point with
    ``phi < phi(0)`` can be returned, so the objective never increases.
    """
    d0 = -float(D @ start.forms)
    lo, d_lo = 0.0, d0
    hi, d_hi = t_max, -float(D @ end.forms)
    best = end if end.J < start.J else start
    if d_hi <= 0.0:  # inexact inner solves only: phi still decreasing at t_max
        return best
    if d0 >= 0.0:  # inexact inner solves only: D is not a descent direction
        return best
    kept = None
    for _ in range(_LINE_SEARCH_MAX_EVALS):
        width = hi - lo
        if width <= 1e-12 * t_max:
            break
        # secant root of phi'; bisection when the two slopes coincide
        t = (
            (lo * d_hi - hi * d_lo) / (d_hi - d_lo) if d_hi != d_lo else lo + width / 2
        )
        t = min(max(t, lo + _SAFEGUARD * width), hi - _SAFEGUARD * width)
        pt = evaluate(_clean_weights(start.mu + t * D), best.result.z)
        d = -float(D @ pt.forms)
        if pt.J < best.J:
            best = pt
        if abs(d) <= eta * abs(d0) and pt.J < start.J:
            break
        if d < 0.0:
            lo, d_lo = t, d
            if kept == "hi":  # same end kept twice: halve it (Illinois)
                d_hi /= 2.0
            kept = "hi"
        else:
            hi, d_hi = t, d
            if kept == "lo":
                d_lo /= 2.0
            kept = "lo"
    return best


def reduced_gradient_mkl(
    stack: np.ndarray,
    make_problem: Callable[[np.ndarray], BoxQP],
    *,
    solver: str = "cvxopt",
    tol: float = 1e-2,
    weight_tol: float = 1e-6,
    max_iter: int = 500,
    inner_options: dict | None = None,
) -> dict:
    """SimpleMKL's reduced-gradient descent of ``J(mu)`` over the simplex.

    Parameters
    ----------
    stack : ndarray of shape (n, n, n_kernels)
        The base kernels on the training points.
    make_problem : callable
        Maps a combined ``(n, n)`` kernel to the inner :class:`~methods._qp.BoxQP`
        (``csvm_dual`` for SimpleMKL, ``svmm_dual`` for MKL_m and ε-MKL).
    solver : str, default="cvxopt"
        Inner QP solver, passed to :func:`~methods._qp.solve_box_qp`.
    tol : float, default=1e-2
        Stop when the relative duality gap is at most ``tol``.
    weight_tol : float, default=1e-6
        Stop when an iteration moves no weight by more than ``weight_tol``.
    max_iter : int, default=500
        Maximal number of outer iterations (gap check plus one descent step).
    inner_options : dict, default=None
        Extra keyword arguments of ``solve_box_qp`` (``tol``, ``max_iter``).

    Returns
    -------
    out : dict
        ``mu`` (final weights), ``result`` (the inner :class:`QPResult` at ``mu``),
        ``problem`` (the inner :class:`BoxQP` at ``mu``), ``objective`` (``J(mu)``),
        ``gap`` (relative duality gap), ``n_iter``, ``n_inner_solves``,
        ``n_inner_unconverged``, ``stop_reason`` (one of "single_kernel",
        "duality_gap", "weight_change", "max_iter", "stalled"),
        ``objective_history`` and ``weights_history`` (one entry per iteration that
        moved, the uniform start first).
    """
    m = stack.shape[2]
    evaluate = _Evaluator(stack, make_problem, solver, dict(inner_options or {}))
    # SimpleMKL starts from the uniform combination.
    cur = evaluate(np.full(m, 1.0 / m), None)
    J_hist, mu_hist = [cur.J], [cur.mu]
    eta = _LINE_SEARCH_TOL
    others = np.ones(m, dtype=bool)
    stop = "single_kernel" if m == 1 else "max_iter"
    n_iter = 1 if m == 1 else 0
    # An outer iteration computes the gap at the current weights and, above tol,
    # takes one descent step; a start that already meets tol counts as one.
    while m > 1 and n_iter < max_iter:
        n_iter += 1
        if _relative_gap(cur) <= tol:
            stop = "duality_gap"
            break
        D, ref = _descent_direction(cur.mu, -cur.forms)
        others[:] = True
        others[ref] = False
        if not np.any(D < 0.0):  # only reachable through round-off
            stop = "stalled"
            break
        mu_old = cur.mu
        # Walk to the boundary of the simplex while that lowers J, zeroing each
        # weight that reaches 0 and keeping the direction ([2], Algorithm 1).
        while True:
            t_max, nu = _max_step(cur.mu, D)
            mu_b = cur.mu + t_max * D
            mu_b[nu] = 0.0
            end = evaluate(_clean_weights(np.maximum(mu_b, 0.0)), cur.result.z)
            if end.J >= cur.J:
                cur = _line_search(evaluate, D, cur, end, t_max, eta)
                break
            cur = end
            # Weights that reached 0 stop moving; weights growing from 0 go on.
            D[(cur.mu == 0.0) & (D < 0.0)] = 0.0
            if nu == ref or not np.any(D[others]):
                # The reference weight itself, or every other moving weight, hit
                # 0: the direction is spent; the next iteration starts afresh.
                break
            D[ref] = 0.0
            D[ref] = -D.sum()
            if not np.any(D < 0.0):
                break
        step = float(np.max(np.abs(cur.mu - mu_old)))
        if step == 0.0:
            # No decrease along D at this line-search precision: refine it
            # (SimpleMKL divides goldensearch_deltmax by 10), else give up.
            if eta <= _LINE_SEARCH_TOL_FLOOR:
                stop = "stalled"
                break
            eta /= 10.0
            continue
        J_hist.append(cur.J)
        mu_hist.append(cur.mu)
        if step <= weight_tol:
            stop = "weight_change"
            break
    if stop == "max_iter" and _relative_gap(cur) <= tol:
        stop = "duality_gap"  # the last step of the budget reached tol
    return {
        "mu": cur.mu,
        "result": cur.result,
        "problem": cur.problem,
        "objective": cur.J,
        "gap": _relative_gap(cur),
        "n_iter": n_iter,
        "n_inner_solves": evaluate.n_solves,
        "n_inner_unconverged": evaluate.n_unconverged,
        "stop_reason": stop,
        "objective_history": np.asarray(J_hist),
        "weights_history": np.asarray(mu_hist),
    }


# ---------------------------------------------------------------------------
# Estimators
# ---------------------------------------------------------------------------


def _resolve_solver(name: str) -> str:
    # Until the fast paths of methods._qp are registered, "auto" means the reference.
    if name == "auto" and not any(s in SOLVERS for s in ("auto", "smo", "ipm")):
        return "cvxopt"
    return name


def _stack_scale(K: np.ndarray, normalize: str | None) -> float:
    """Factor giving the training block unit trace or unit feature-space variance."""
    if normalize == "unit_trace":
        size = float(np.trace(K))
    elif normalize == "feature_variance":
        # (1/n) sum_i ||phi_i - phi_bar||^2 = mean(diag K) - mean(K)
        size = float(np.mean(np.diag(K)) - np.mean(K))
    else:
        return 1.0
    # A zero (or numerically null) kernel is left as it is rather than blown up.
    return 1.0 / size if size > np.finfo(float).eps * max(np.abs(K).max(), 1.0) else 1.0


class _BaseMKL(ClassifierMixin, BaseEstimator):
    """Shared fit/predict of the simplex-constrained MKL classifiers.

    Hooks a subclass writes:

    - ``_inner_problem(K, y)`` (required): the inner :class:`~methods._qp.BoxQP` for
      the combined kernel ``K`` and labels ``y`` in {-1, +1}.
    - ``paper_name`` (required): the display name of the method in the paper.
    """

    paper_name: str = ""

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "kernel": [StrOptions({"precomputed", "bank20"}), list, tuple],
        "normalize": [StrOptions({"cosine", "unit_trace", "feature_variance"}), None],
        "solver": [StrOptions({"auto", "smo", "ipm", "cvxopt"})],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "weight_tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "inner_tol": [Interval(Real, 0.0, None, closed="neither"), None],
    }

    def _inner_problem(self, K: np.ndarray, y: np.ndarray) -> BoxQP:
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = (
            isinstance(self.kernel, str) and self.kernel == "precomputed"
        )
        return tags

    # -- kernels ------------------------------------------------------------

    @property
    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _specs(self) -> list[KernelSpec]:
        if isinstance(self.kernel, str):  # "bank20"; "precomputed" never gets here
            specs = bank20(normalize=None)
        else:
            specs = list(self.kernel)
            bad = [s for s in specs if not isinstance(s, KernelSpec)]
            if bad or not specs:
                raise TypeError(
                    f"{type(self).__name__}: kernel must be 'precomputed', 'bank20' or "
                    "a non-empty list of methods.kernels.KernelSpec; got "
                    f"{self.kernel!r}."
                )
        if self.normalize == "cosine":
            # Cosine normalization of a rescaled kernel is the cosine of the raw one.
            specs = [replace(s, normalize="cosine") for s in specs]
        return specs

    def _raw_block(self, spec: KernelSpec, X: np.ndarray, Y: np.ndarray | None):
        # "mean_diag" needs the training diagonal for test blocks: it is applied as
        # a fitted scale instead (see _train_stack), so the block is built raw.
        norm = None if spec.normalize == "mean_diag" else spec.normalize
        return pairwise_kernel(
            X, Y, kernel=spec.kernel, degree=spec.degree, sigma=spec.sigma,
            normalize=norm,
        )  # fmt: skip

    def _train_stack(self, X: np.ndarray) -> np.ndarray:
        """Training stack ``(n, n, m)``; sets ``kernel_scales_`` (and the specs)."""
        if self._precomputed:
            if self.normalize == "cosine":
                raise ValueError(
                    "normalize='cosine' needs the self-similarities of the test "
                    "points, which a precomputed stack does not carry. Normalize the "
                    "stack beforehand (methods.kernels.cosine_normalize) and pass "
                    "normalize=None, or pass raw X with kernel='bank20'."
                )
            stack = X[:, :, None] if X.ndim == 2 else X
            if X.ndim not in (2, 3) or stack.shape[0] != stack.shape[1]:
                raise ValueError(
                    "Precomputed kernel stack must be square in its first two axes, "
                    "of shape (n_train, n_train) or (n_train, n_train, n_kernels); "
                    f"got shape {X.shape}."
                )
            self.kernel_specs_ = None
            scales = np.array([_stack_scale(stack[:, :, k], self.normalize)
                               for k in range(stack.shape[2])])  # fmt: skip
            self.kernel_scales_ = scales
            return stack * scales if np.any(scales != 1.0) else stack
        specs = self._specs()
        stack = np.empty((X.shape[0], X.shape[0], len(specs)))
        scales = np.ones(len(specs))
        for k, spec in enumerate(specs):
            K = self._raw_block(spec, X, None)
            if spec.normalize == "mean_diag" and self.normalize != "cosine":
                d = float(np.mean(np.diag(K)))
                scales[k] = 1.0 / d if d > 0 else 1.0
                K = K * scales[k]
            s = _stack_scale(K, self.normalize)
            scales[k] *= s
            stack[:, :, k] = K * s
        self.kernel_specs_ = specs
        self.kernel_scales_ = scales
        self.X_fit_ = np.array(X, copy=True)
        return stack

    def _test_stack(self, X: np.ndarray) -> np.ndarray:
        """Test stack ``(n_test, n_train, m)`` scaled with the training factors."""
        name = type(self).__name__
        n_train, m = self.dual_coef_.shape[1], self.kernel_weights_.shape[1]
        if self._precomputed:
            # Dtype, sparsity, NaN/inf and 1-D input first, with sklearn's messages.
            X = check_array(X, allow_nd=True, dtype=np.float64)
            stack = X[:, :, None] if X.ndim == 2 else X
            if X.ndim > 3 or stack.shape[1:] != (n_train, m):
                one = " or (n_test, n_train) for one kernel" if m == 1 else ""
                raise ValueError(
                    f"X has {X.shape[1]} features, but {name} is expecting "
                    f"{n_train} features as input: with kernel='precomputed', pass "
                    "the kernel stack between test and training points, of shape "
                    f"(n_test, {n_train}, {m}){one}; got shape {X.shape}."
                )
            X = validate_data(self, X, reset=False, allow_nd=True, dtype=np.float64)
            stack = X[:, :, None] if X.ndim == 2 else X
            return stack * self.kernel_scales_
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = np.empty((X.shape[0], n_train, m))
        for k, spec in enumerate(self.kernel_specs_):
            out[:, :, k] = (
                self._raw_block(spec, X, self.X_fit_) * self.kernel_scales_[k]
            )
        return out

    # -- fit / predict --------------------------------------------------------

    def fit(self, X, y):
        """Learn the kernel weights and the classifier of every class pair.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples, \
n_kernels)
            Raw data, or with ``kernel="precomputed"`` the stack of base kernels on
            the training points (a 2-D Gram matrix is a stack of one kernel).
        y : array-like of shape (n_samples,)
            Class labels; two or more classes (more than two: one-vs-one).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        name = type(self).__name__
        X, y = validate_data(self, X, y, allow_nd=self._precomputed, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"{name} needs samples of at least 2 classes; y has only one class "
                f"({self.classes_[0]!r}) in {y.shape[0]} samples. Provide samples of "
                "both classes (with cross-validation, use stratified folds)."
            )
        stack = self._train_stack(X)
        n, m = stack.shape[0], stack.shape[2]
        pairs = list(combinations(range(self.classes_.shape[0]), 2))
        n_pairs = len(pairs)
        solver = _resolve_solver(self.solver)
        inner_options = {} if self.inner_tol is None else {"tol": self.inner_tol}

        self.kernel_weights_ = np.empty((n_pairs, m))
        self.dual_coef_ = np.zeros((n_pairs, n))
        self.intercept_ = np.empty(n_pairs)
        self.objective_ = np.empty(n_pairs)
        self.duality_gap_ = np.empty(n_pairs)
        self.n_iter_ = np.empty(n_pairs, dtype=np.int64)
        self.n_inner_solves_ = np.empty(n_pairs, dtype=np.int64)
        self.stop_reasons_ = []
        self.objective_history_ = []
        self.kernel_weights_history_ = []
        n_unconverged = 0
        for p, (i, j) in enumerate(pairs):
            idx = np.flatnonzero((y_idx == i) | (y_idx == j))
            # Class j is +1, so a positive decision value votes for classes_[j]
            # (for two classes: classes_[1], as in SVC).
            y_pm = np.where(y_idx[idx] == j, 1.0, -1.0)
            sub = stack if idx.shape[0] == n else stack[np.ix_(idx, idx)]
            out = reduced_gradient_mkl(
                sub,
                lambda K, y_pm=y_pm: self._inner_problem(K, y_pm),
                solver=solver,
                tol=self.tol,
                weight_tol=self.weight_tol,
                max_iter=self.max_iter,
                inner_options=inner_options,
            )
            self.kernel_weights_[p] = out["mu"]
            self.dual_coef_[p, idx] = out["problem"].coef(out["result"].z)
            self.intercept_[p] = -out["result"].rho
            self.objective_[p] = out["objective"]
            self.duality_gap_[p] = out["gap"]
            self.n_iter_[p] = out["n_iter"]
            self.n_inner_solves_[p] = out["n_inner_solves"]
            self.stop_reasons_.append(out["stop_reason"])
            self.objective_history_.append(out["objective_history"])
            self.kernel_weights_history_.append(out["weights_history"])
            n_unconverged += out["n_inner_unconverged"]
        self.support_ = np.flatnonzero(np.any(self.dual_coef_ != 0.0, axis=0))
        self.fit_status_ = max(_STATUS[r] for r in self.stop_reasons_)
        self.converged_ = self.fit_status_ == 0
        self._warn_from_fit_status(pairs, n_unconverged, solver)
        return self

    def _warn_from_fit_status(self, pairs, n_unconverged: int, solver: str) -> None:
        name = type(self).__name__
        for p, reason in enumerate(self.stop_reasons_):
            a, b = (self.classes_[c] for c in pairs[p])
            where = "" if len(pairs) == 1 else f" for classes ({a!r}, {b!r})"
            if reason == "max_iter":
                warnings.warn(
                    f"{name} did not converge{where}: max_iter={self.max_iter} outer "
                    f"iterations left a relative duality gap of "
                    f"{self.duality_gap_[p]:.2e} > tol={self.tol}. Increase max_iter "
                    "or loosen tol.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            elif reason == "stalled":
                warnings.warn(
                    f"{name} stopped{where}: the line search found no decrease of J "
                    f"with a relative duality gap of {self.duality_gap_[p]:.2e} > "
                    f"tol={self.tol}. The inner solutions are likely too inexact: "
                    "lower inner_tol or use solver='cvxopt', or loosen tol.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
        if n_unconverged:
            warnings.warn(
                f"{name}: {n_unconverged} inner QP solve(s) with solver={solver!r} "
                "stopped before converging; J and its gradient are approximate. "
                "Loosen inner_tol or use another solver.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _pair_decisions(self, X) -> np.ndarray:
        check_is_fitted(self)
        stack = self._test_stack(X)
        n_test, n_train, m = stack.shape
        # T[t, p, k] = sum_j K_k(x_t, x_j) coef_pj, then weight by mu_pk.
        T = np.einsum("tjk,pj->tpk", stack, self.dual_coef_, optimize=True)
        return np.einsum("tpk,pk->tp", T, self.kernel_weights_) + self.intercept_

    def decision_function(self, X) -> np.ndarray:
        """Decision values.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features) or (n_test, n_train, n_kernels)
            Raw test points, or with ``kernel="precomputed"`` the stack of base
            kernels between test and training points.

        Returns
        -------
        decision : ndarray of shape (n_test,) or (n_test, n_classes)
            Two classes: ``f(x) = sum_k mu_k sum_i coef_i K_k(x, x_i) + b``, positive
            for ``classes_[1]``. More classes: one-vs-one votes plus a confidence
            term in (-1/3, 1/3) from the summed pair decisions (the "ovr" shape of
            SVC), whose argmax is the prediction.
        """
        F = self._pair_decisions(X)
        n_classes = self.classes_.shape[0]
        if n_classes == 2:
            return F[:, 0]
        votes = np.zeros((F.shape[0], n_classes))
        conf = np.zeros((F.shape[0], n_classes))
        for p, (i, j) in enumerate(combinations(range(n_classes), 2)):
            win_j = F[:, p] > 0
            votes[:, j] += win_j
            votes[:, i] += ~win_j
            conf[:, j] += F[:, p]
            conf[:, i] -= F[:, p]
        # Monotone map of the confidences into (-1/3, 1/3): breaks vote ties only.
        return votes + conf / (3.0 * (np.abs(conf) + 1.0))

    def predict(self, X) -> np.ndarray:
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features) or (n_test, n_train, n_kernels)
            As in :meth:`decision_function`.

        Returns
        -------
        y_pred : ndarray of shape (n_test,)
        """
        d = self.decision_function(X)
        if d.ndim == 1:
            return self.classes_[(d > 0).astype(int)]
        return self.classes_[np.argmax(d, axis=1)]


_SHARED_PARAMS_DOC = """
    kernel : {"bank20", "precomputed"} or list of KernelSpec, default="bank20"
        The base kernels. "bank20" is the 20-kernel bank of mlsvm Sec. VII
        (:func:`methods.kernels.bank20`: polynomial degrees 1..10, Gaussian
        sigma in {0.5, ..., 20}) on raw X. "precomputed": ``fit`` takes a stack of
        shape (n, n, n_kernels) and ``predict`` one of shape (n_test, n_train,
        n_kernels); a 2-D Gram matrix is a stack of one kernel.
    normalize : {"unit_trace", "feature_variance", "cosine"} or None, \
default="unit_trace"
        Normalization of each base kernel, fitted on the training points and applied
        with the same factor to test blocks. "unit_trace": ``K / trace(K_train)``,
        SimpleMKL's own (``UnitTraceNormalization`` of the toolbox of [2]);
        "feature_variance": unit variance in feature space,
        ``K / (mean(diag K_train) - mean(K_train))``; "cosine":
        ``K_ij / sqrt(K_ii K_jj)`` (mlsvm Sec. VII, raw X only). The default is
        "unit_trace" because mlsvm Sec. VII runs SimpleMKL on "the same set of basic
        kernels as the one used in SimpleMKL", and MKL_m / ε-MKL as its variants.
        With kernel="precomputed" a factor is fitted per slice of the stack.
    solver : {"auto", "smo", "ipm", "cvxopt"}, default="auto"
        Inner QP solver (:func:`methods._qp.solve_box_qp`); "cvxopt" is the slow
        reference. Inner solves are warm-started from the previous solution when
        the solver accepts a start.
    tol : float, default=1e-2
        Stop when the relative duality gap is at most ``tol`` ([2], Sec. 4.2;
        0.01 is ``seuildualitygap`` of the SimpleMKL toolbox).
    weight_tol : float, default=1e-6
        Also stop when an iteration changes no weight by more than ``weight_tol``.
    max_iter : int, default=500
        Maximal number of outer iterations per class pair (SimpleMKL's
        ``nbitermax``).
    inner_tol : float, default=None
        Tolerance of the inner solver; None keeps the solver's default."""

_SHARED_ATTRS_DOC = """
    classes_ : ndarray of shape (n_classes,)
    kernel_weights_ : ndarray of shape (n_pairs, n_kernels)
        The weights ``mu`` on the simplex, one row per class pair
        (``n_pairs = n_classes (n_classes - 1) / 2``, pairs in the order of
        ``itertools.combinations``; one row for two classes).
    dual_coef_ : ndarray of shape (n_pairs, n_train)
        Per-sample coefficients ``coef_i`` of the decision function, 0 outside the
        pair and for non-support vectors.
    intercept_ : ndarray of shape (n_pairs,)
        ``b`` in ``f(x) = sum_k mu_k sum_i coef_i K_k(x, x_i) + b``.
    support_ : ndarray of int
        Training indices with a nonzero coefficient in some pair.
    objective_ : ndarray of shape (n_pairs,)
        ``J(mu)`` at the returned weights (maximization form of the inner dual).
    duality_gap_ : ndarray of shape (n_pairs,)
        Relative duality gap at the returned weights.
    objective_history_ : list of ndarray
        Per pair, ``J`` at the uniform start and after every iteration that moved;
        never increasing.
    kernel_weights_history_ : list of ndarray of shape (n_accepted, n_kernels)
        Per pair, the weights matching ``objective_history_``.
    n_iter_ : ndarray of shape (n_pairs,)
        Outer iterations: each computes the gap at the current weights and, above
        ``tol``, takes one descent step (a start that meets ``tol``, or a single
        kernel, counts as one).
    n_inner_solves_ : ndarray of shape (n_pairs,)
        Inner QP solves (gradient points, boundary points and line-search points).
    stop_reasons_ : list of str
        Per pair: "duality_gap", "weight_change", "single_kernel", "max_iter" or
        "stalled".
    fit_status_ : int
        0 if every pair converged, 1 if one hit ``max_iter``, 2 if a line search
        stalled above ``tol``.
    converged_ : bool
        ``fit_status_ == 0``.
    kernel_scales_ : ndarray of shape (n_kernels,)
        Factors applied to the base kernels (``normalize``).
    kernel_specs_ : list of KernelSpec or None
        The base kernels (None with kernel="precomputed").
    X_fit_ : ndarray of shape (n_train, n_features)
        Training points (raw-X path only).
    n_features_in_ : int"""

_REFERENCES_DOC = """
    .. [1] Paper A (key ``mlsvm``). A metric-learning-based SVM and MKL framework
       (``papers/A-mlsvm-metric-learning-svm-mkl.txt``; our copy carries no author
       or venue), Sec. II-A, VI and VII.
    .. [2] A. Rakotomamonjy, F. R. Bach, S. Canu, Y. Grandvalet. SimpleMKL. Journal
       of Machine Learning Research 9:2491-2521, 2008."""

# The snippets are pasted on their own lines of the class docstrings below.
_SHARED_PARAMS_DOC = _SHARED_PARAMS_DOC.lstrip("\n")
_SHARED_ATTRS_DOC = _SHARED_ATTRS_DOC.lstrip("\n")
_REFERENCES_DOC = _REFERENCES_DOC.lstrip("\n")


class SimpleMKL(_BaseMKL):
    __doc__ = rf"""SimpleMKL: 1-norm MKL with the hinge loss, by reduced gradient.

    Learns :math:`K(\mu) = \sum_k \mu_k K_k` on the simplex and a C-SVM on it,
    solving MKL_gamma (mlsvm Eq. (2), Sec. II-A, with the hinge loss and
    ``||mu||_1 = 1`` of [2]) as :math:`\min_\mu J(\mu)`,
    :math:`J(\mu) = \max_\alpha 1^\top\alpha - \frac12 \alpha^\top Y K(\mu) Y \alpha`,
    :math:`y^\top\alpha = 0`, :math:`0 \le \alpha \le C` ([2], Eq. (3)-(6)).
    More than two classes are handled one-vs-one, each pair with its own weights.

    Parameters
    ----------
    C : float, default=1.0
        Box constraint of the C-SVM dual.
{_SHARED_PARAMS_DOC}

    Attributes
    ----------
{_SHARED_ATTRS_DOC}

    See Also
    --------
    MKLm : MKL with the SVM_m inner problem.
    EpsMKL : MKL with the ε-SVM inner problem.

    References
    ----------
{_REFERENCES_DOC}

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from methods._mkl import SimpleMKL
    >>> X, y = make_classification(n_samples=40, n_features=4, random_state=0)
    >>> clf = SimpleMKL(C=10.0, solver="cvxopt").fit(X, y)
    >>> clf.kernel_weights_.shape
    (1, 20)
    >>> bool(abs(clf.kernel_weights_.sum() - 1.0) < 1e-12)
    True
    """

    paper_name = "SimpleMKL"

    def __init__(
        self,
        C: float = 1.0,
        *,
        kernel: str | Sequence[KernelSpec] = "bank20",
        normalize: str | None = "unit_trace",
        solver: str = "auto",
        tol: float = 1e-2,
        weight_tol: float = 1e-6,
        max_iter: int = 500,
        inner_tol: float | None = None,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.weight_tol = weight_tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol

    def _inner_problem(self, K: np.ndarray, y: np.ndarray) -> BoxQP:
        return csvm_dual(K, y, self.C)


class _BandMKL(_BaseMKL):
    """MKL whose inner problem is the SVM_m dual (mlsvm Eq. (15))."""

    _parameter_constraints: dict = {
        **_BaseMKL._parameter_constraints,
        "C2": [Interval(Real, 0.0, None, closed="neither"), None],
    }

    def _epsilon(self) -> float:
        raise NotImplementedError

    def _inner_problem(self, K: np.ndarray, y: np.ndarray) -> BoxQP:
        # mlsvm Sec. VII: "we set C2 to C1/3".
        C2 = self.C / 3.0 if self.C2 is None else self.C2
        return svmm_dual(K, y, self.C, C2, self._epsilon())


_BAND_PARAMS_DOC = """
    C : float, default=1.0
        ``C1``, the box of ``alpha`` (margin slacks).
    C2 : float, default=None
        The box of ``beta`` (band slacks); None means ``C / 3`` (mlsvm Sec. VII)."""

_BAND_PARAMS_DOC = _BAND_PARAMS_DOC.lstrip("\n")


class MKLm(_BandMKL):
    __doc__ = rf"""MKL_m: multiple kernel learning with the SVM_m inner problem.

    Solves mlsvm Eq. (22)-(23): :math:`\min_{{\mu \in \Delta}} J(\mu)` with
    :math:`J(\mu)` the optimum of the SVM_m dual (mlsvm Eq. (15)) for
    :math:`K(\mu)`,

    .. math:: J(\mu) = \max_{{\alpha, \beta}} \sum_i \alpha_i - (1 + \varepsilon)
        \sum_i \beta_i - \frac12 \sum_{{ij}} (\alpha_i - \beta_i)(\alpha_j - \beta_j)
        y_i y_j K(\mu)_{{ij}},

    :math:`\sum_i (\alpha_i - \beta_i) y_i = 0`, :math:`0 \le \alpha \le C`,
    :math:`0 \le \beta \le C_2`, by SimpleMKL's reduced gradient ([2]) with the
    gradient of mlsvm Sec. VI-B. It maximizes the margin and keeps the points within
    a band of width :math:`\varepsilon` times the margin. More than two classes:
    one-vs-one, each pair with its own weights.

    Parameters
    ----------
{_BAND_PARAMS_DOC}
    epsilon : float, default=3.0
        Band width relative to the margin (mlsvm Sec. VII: "ε is set to three").
{_SHARED_PARAMS_DOC}

    Attributes
    ----------
{_SHARED_ATTRS_DOC}

    See Also
    --------
    SimpleMKL : the C-SVM inner problem (the limit ``epsilon -> inf``).
    EpsMKL : ``epsilon = 0``.

    References
    ----------
{_REFERENCES_DOC}
    """

    paper_name = "MKL_m"

    _parameter_constraints: dict = {
        **_BandMKL._parameter_constraints,
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        C2: float | None = None,
        epsilon: float = 3.0,
        kernel: str | Sequence[KernelSpec] = "bank20",
        normalize: str | None = "unit_trace",
        solver: str = "auto",
        tol: float = 1e-2,
        weight_tol: float = 1e-6,
        max_iter: int = 500,
        inner_tol: float | None = None,
    ) -> None:
        self.C = C
        self.C2 = C2
        self.epsilon = epsilon
        self.kernel = kernel
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.weight_tol = weight_tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol

    def _epsilon(self) -> float:
        return float(self.epsilon)


class EpsMKL(_BandMKL):
    __doc__ = rf"""ε-MKL: multiple kernel learning with the ε-SVM inner problem.

    MKL_m (mlsvm Eq. (22)) with :math:`\varepsilon = 0`: the inner problem is the
    ε-SVM of mlsvm Eq. (7) written as SVM_m with a zero band (mlsvm Sec. VI-B), so
    the learned combination maximizes the margin and minimizes the summed distances
    to the margin hyperplanes. More than two classes: one-vs-one.

    Parameters
    ----------
{_BAND_PARAMS_DOC}
{_SHARED_PARAMS_DOC}

    Attributes
    ----------
{_SHARED_ATTRS_DOC}

    See Also
    --------
    MKLm : the same with a band ``epsilon > 0``.
    SimpleMKL : the C-SVM inner problem.

    References
    ----------
{_REFERENCES_DOC}
    """

    paper_name = "ε-MKL"

    def __init__(
        self,
        C: float = 1.0,
        *,
        C2: float | None = None,
        kernel: str | Sequence[KernelSpec] = "bank20",
        normalize: str | None = "unit_trace",
        solver: str = "auto",
        tol: float = 1e-2,
        weight_tol: float = 1e-6,
        max_iter: int = 500,
        inner_tol: float | None = None,
    ) -> None:
        self.C = C
        self.C2 = C2
        self.kernel = kernel
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.weight_tol = weight_tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol

    def _epsilon(self) -> float:
        return 0.0


__all__ = [
    "MKL_NORMALIZATIONS",
    "EpsMKL",
    "MKLm",
    "SimpleMKL",
    "combine_kernels",
    "kernel_quadratic_forms",
    "reduced_gradient_mkl",
]
