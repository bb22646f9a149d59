r"""SimpleMKL's reduced-gradient descent of the kernel weights on the simplex.

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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from methods._qp import BoxQP, QPResult, solve_box_qp

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
        t = (lo * d_hi - hi * d_lo) / (d_hi - d_lo) if d_hi != d_lo else lo + width / 2
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
