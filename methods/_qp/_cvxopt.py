"""Reference solver: cvxopt's dense interior-point ``qp``. Slow, obviously correct."""

from __future__ import annotations

import numpy as np

from methods._qp._problems import BoxQP
from methods._qp._result import QPResult


def rho_bounds(
    problem: BoxQP, z: np.ndarray, tol: float = 1e-8
) -> tuple[float | None, float, float]:
    """The KKT interval of the offset ``rho`` at ``z`` (LIBSVM's ``calculate_rho``).

    The KKT conditions ask ``s_a G_a <= rho`` for ``z_a = U_a, s_a = +1`` and
    ``z_a = 0, s_a = -1``, ``s_a G_a >= rho`` for the other two kinds, and
    ``s_a G_a = rho`` for a free variable, where ``G = Qz + p``.

    Parameters
    ----------
    problem : BoxQP
        The QP.
    z : ndarray of shape (m,)
        A feasible point.
    tol : float, default=1e-8
        A variable within ``tol * max(U_max, 1)`` of a bound counts as at that
        bound (at its upper bound first, as LIBSVM, so one with ``U_a = 0`` is at
        its upper bound).

    Returns
    -------
    mean_free : float or None
        Mean of ``s_a G_a`` over the free variables; None if there is none.
    lb, ub : float
        The largest ``s_a G_a`` of the first two kinds and the smallest of the
        other two (``-inf`` / ``inf`` when there are none). Without a free
        variable ``z`` is optimal iff ``lb <= ub``, up to a solver's tolerance on
        ``lb - ub``.
    """
    g = problem.coef(z)
    G = problem.s * (problem.K @ g)[problem.idx] + problem.p
    sG = problem.s * G
    scale = max(float(np.max(problem.U)), 1.0)
    at_top = z >= problem.U - tol * scale
    at_zero = (z <= tol * scale) & ~at_top
    free = ~(at_top | at_zero)
    mean_free = float(np.mean(sG[free])) if np.any(free) else None
    pos = problem.s > 0
    low = (at_top & pos) | (at_zero & ~pos)
    up = (at_zero & pos) | (at_top & ~pos)
    lb = float(np.max(sG[low])) if np.any(low) else -np.inf
    ub = float(np.min(sG[up])) if np.any(up) else np.inf
    return mean_free, lb, ub


def rho_from_kkt(problem: BoxQP, z: np.ndarray, tol: float = 1e-8) -> float:
    """LIBSVM's ``rho``: mean of ``s_a G_a`` over free variables, else the midpoint.

    With no free variable any ``rho`` in ``[lb, ub]`` of :func:`rho_bounds`
    satisfies the KKT conditions, and LIBSVM's ``calculate_rho`` takes the
    midpoint.
    """
    return _rho_of_bounds(*rho_bounds(problem, z, tol))


def _rho_of_bounds(mean_free: float | None, lb: float, ub: float) -> float:
    """LIBSVM's ``rho`` from :func:`rho_bounds`' output (the midpoint rule)."""
    if mean_free is not None:
        return mean_free
    if np.isfinite(ub) and np.isfinite(lb):
        return (ub + lb) / 2
    return ub if np.isfinite(ub) else lb


def solve_cvxopt(
    problem: BoxQP, *, tol: float = 1e-10, max_iter: int = 200
) -> QPResult:
    """Solve the box QP with ``cvxopt.solvers.qp`` on the dense m x m Hessian."""
    from cvxopt import matrix, solvers

    m = problem.n_vars
    Q = problem.dense_Q()
    G = np.vstack([-np.eye(m), np.eye(m)])
    h = np.concatenate([np.zeros(m), problem.U])
    opts = {
        "show_progress": False,
        "abstol": tol,
        "reltol": tol,
        "feastol": tol,
        "maxiters": max_iter,
    }
    sol = solvers.qp(
        matrix(Q),
        matrix(problem.p),
        matrix(G),
        matrix(h),
        matrix(problem.s[None, :]),
        matrix(0.0),
        options=opts,
    )
    z = np.clip(np.asarray(sol["x"]).ravel(), 0.0, problem.U)
    # cvxopt's equality multiplier y gives Qz + p + s*y - ... = 0, so rho = -y
    rho_eq = -float(np.asarray(sol["y"]).ravel()[0])
    return QPResult(
        z=z,
        rho=rho_eq,
        objective=problem.objective(z),
        n_iter=int(sol["iterations"]),
        converged=sol["status"] == "optimal",
        solver="cvxopt",
        info={
            "status": sol["status"],
            "gap": sol["gap"],
            "rho_kkt": rho_from_kkt(problem, z),
        },
    )
