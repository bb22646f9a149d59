"""Reference solver: cvxopt's dense interior-point ``qp``. Slow, obviously correct."""

from __future__ import annotations

import numpy as np

from methods._qp._problems import BoxQP
from methods._qp._result import QPResult


def rho_from_kkt(problem: BoxQP, z: np.ndarray, tol: float = 1e-8) -> float:
    """LIBSVM's ``rho``: mean of ``s_a G_a`` over free variables, else the midpoint."""
    G = problem.s * (problem.K[np.ix_(problem.idx, problem.idx)] @ (problem.s * z))
    G = G + problem.p
    sG = problem.s * G
    scale = max(float(np.max(problem.U)), 1.0)
    free = (z > tol * scale) & (z < problem.U - tol * scale)
    if np.any(free):
        return float(np.mean(sG[free]))
    # No free variable: rho lies in [lb, ub] given by the bound variables (LIBSVM).
    up = ((problem.s > 0) & (z < problem.U - tol * scale)) | (
        (problem.s < 0) & (z > tol * scale)
    )
    low = ((problem.s > 0) & (z > tol * scale)) | (
        (problem.s < 0) & (z < problem.U - tol * scale)
    )
    ub = np.min(sG[low]) if np.any(low) else np.inf
    lb = np.max(sG[up]) if np.any(up) else -np.inf
    if np.isfinite(ub) and np.isfinite(lb):
        return float((ub + lb) / 2)
    return float(ub if np.isfinite(ub) else lb)


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
