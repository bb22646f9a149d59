"""Box-constrained QP solvers for the SVM family.

Every solver takes a :class:`BoxQP` (``min 1/2 z'Qz + p'z  s.t.  s'z = 0,
0 <= z <= U``) and returns a :class:`QPResult`. :func:`solve_box_qp` dispatches on
``solver``:

- ``"smo"``: SMO with second-order working-set selection and shrinking
  (:mod:`methods._qp._smo`), LIBSVM's algorithm, compiled with numba.
- ``"ipm"``: a Mehrotra interior-point method with one n x n (or, for low-rank
  kernels, O(n r^2)) solve per step, polished by SMO (:mod:`methods._qp._ipm`).
- ``"cvxopt"``: the dense reference that the fast paths are tested against.
- ``"auto"``: SMO first; problems on which SMO is slow are handed to the IPM.

The "auto" rule
---------------
SMO's cost is unpredictable (~1000 iterations on the Gaussian-kernel duals of wdbc
whatever C, but 10^5 to 10^6 on the SVM_m and eps-SVM duals with a linear kernel
and C >= 100), while the IPM's is predictable (10-25 steps of known cost). So SMO
runs first under a work budget equal to the estimated cost of the IPM
(``AUTO_BUDGET = 1``, the ski-rental rule: never worse than twice the better of
the two, and SMO alone whenever it finishes within the budget). Work is counted
deterministically as the variables SMO visits plus a fixed cost per iteration
(``max_work`` of :func:`methods._qp._smo.solve_smo`), so the path and the result
do not depend on the machine's speed or load. Stages:

1. SMO with the budget of the cheapest IPM possible (rank 0: residuals only).
2. Pivoted Cholesky of K, stopped at rank n / 8 (cheap when it stops early),
   skipped when a Cholesky of one (n/8 + 1)-row principal submatrix already
   proves rank > n / 8 (:func:`rank_exceeds`; same verdict, ~1/4 of the cost on
   full-rank kernels). The rank r (or "dense") gives the IPM's cost; SMO resumes
   from where it stopped, up to that budget.
3. The IPM (low-rank if r <= n / 8, else dense; BLAS on one thread), polished
   by SMO (at most 100 m iterations). The IPM returns its best iterate when
   rounding stops its progress (ill-conditioned K), which the polish finishes.
4. If that fails: cvxopt's dense solution polished the same way; only if that
   fails too (K far from PSD) does SMO resume without budget.

Cost model (``_ipm_cost``), least-squares fits of timings on one core of this
machine: SMO ~34 ns per iteration plus ~2.1 ns per visited variable; an IPM step
0.08 ms + 0.37 ns n^2 + 0.12 ns n r^2 (low rank) or 0.05 ms + 1.3 ns n^2
+ 7.6e-3 ns n^3 (dense Cholesky), 16 steps.

Measured by ``benchmarks/bench_qp.py`` (wdbc, n = 569): every Gaussian cell and
every C-SVM cell but C = 1000 (linear) stays on SMO; the SVM_m and eps-SVM duals
with a linear kernel and C >= 10 (eps = 0) or C >= 100 (eps = 3), which take
SMO 12 ms to 1.5 s, take 10-13 ms.

``tol`` means the same for "smo", "ipm" and "auto": the final maximal KKT violation
``m(z) - M(z) <= tol`` (the IPM is polished by SMO to it). For "cvxopt" it is
cvxopt's ``abstol``/``reltol``/``feastol``.
"""

from __future__ import annotations

import numpy as np

from methods._qp._cvxopt import rho_from_kkt, solve_cvxopt
from methods._qp._ipm import (
    IPM_TOL,
    low_rank_factor,
    polish_smo,
    rank_exceeds,
    solve_ipm,
)
from methods._qp._problems import BoxQP, csvm_dual, svmm_dual
from methods._qp._result import QPResult
from methods._qp._smo import SMO_TOL, default_max_iter, project_feasible, solve_smo

SOLVERS = ("auto", "smo", "ipm", "cvxopt")

#: SMO may spend this fraction of the estimated IPM cost before handing over.
AUTO_BUDGET = 1.0

# SMO work units (visited variables) per nanosecond, and IPM steps assumed.
_NS_PER_WORK = 2.1
_IPM_STEPS = 16


def _ipm_cost(n: int, rank: int | None) -> float:
    """Estimated IPM cost in SMO work units (see the module docstring)."""
    if rank is None:
        per_step_ns = 5e4 + 1.3 * n**2 + 7.6e-3 * n**3
    else:
        per_step_ns = 8e4 + 0.37 * n**2 + 0.12 * n * rank**2
    return _IPM_STEPS * per_step_ns / _NS_PER_WORK


def _solve_auto(
    problem: BoxQP, *, tol: float, max_iter: int | None, z0: np.ndarray | None
) -> QPResult:
    n = problem.K.shape[0]
    if max_iter is None:
        max_iter = default_max_iter(problem.n_vars)
    spent_iter = 0
    spent_work = 0.0
    res = None

    def smo(budget: float) -> QPResult:
        # Resume from the last iterate; iterations and work add up over stages.
        nonlocal spent_iter, spent_work
        out = solve_smo(
            problem,
            tol=tol,
            max_iter=max_iter - spent_iter,
            z0=z0 if res is None else res.z,
            max_work=budget - spent_work,
        )
        spent_iter += out.n_iter
        spent_work += out.info["work"]
        out.n_iter = spent_iter
        out.info["work"] = spent_work
        return out

    def finished(out: QPResult) -> bool:
        # Converged, or stopped by the caller's max_iter (status 1): report as is.
        return out.converged or out.info["status"] == 1

    # Stage 1: half of the cheapest conceivable IPM (rank 0) before looking at K.
    res = smo(AUTO_BUDGET * _ipm_cost(n, 0))
    if finished(res):
        return res
    # Stage 2: the rank of K fixes the IPM's cost, hence SMO's remaining budget.
    V = low_rank_factor(problem.K, max(n // 8, 1))
    rank = None if V is None else V.shape[1]
    budget = AUTO_BUDGET * _ipm_cost(n, rank)
    if spent_work < budget:
        res = smo(budget)
        if finished(res):
            return res
    # Stage 3: the IPM, polished by SMO.
    try:
        out = solve_ipm(problem, polish_tol=tol, factor=V, low_rank=V is not None)
    except np.linalg.LinAlgError:
        out = None
    if out is not None and out.converged:
        out.info.update(smo_iter=spent_iter, smo_work=spent_work)
        return out
    # Stage 4 (rare): the dense cvxopt reference, polished by SMO (capped).
    try:
        ref = solve_cvxopt(problem)
    except (ValueError, ArithmeticError, np.linalg.LinAlgError):
        ref = None
    if ref is not None and np.all(np.isfinite(ref.z)):
        out = polish_smo(problem, ref.z, tol=tol)
        if out.converged:
            out.info.update(smo_iter=spent_iter, smo_work=spent_work, fallback="cvxopt")
            return out
    # Last resort (K far from PSD): SMO to the end from where it stopped.
    return smo(np.inf)


def solve_box_qp(
    problem: BoxQP,
    *,
    solver: str = "auto",
    tol: float | None = None,
    max_iter: int | None = None,
    z0: np.ndarray | None = None,
) -> QPResult:
    """Solve ``problem`` with the named solver (see ``SOLVERS``).

    Parameters
    ----------
    problem : BoxQP
        The QP.
    solver : {"auto", "smo", "ipm", "cvxopt"}, default="auto"
        See the module docstring for the "auto" rule.
    tol : float, default=None
        Stopping tolerance on the maximal KKT violation ``m(z) - M(z)`` for
        "auto", "smo" and "ipm" (default :data:`SMO_TOL` = 1e-4, which keeps the
        objective within 1e-6 relative of the cvxopt reference on the benchmark
        problems); for "cvxopt" its abstol/reltol/feastol (default 1e-10).
    max_iter : int, default=None
        Cap on SMO pair updates ("auto", "smo"; default LIBSVM's
        ``max(10_000_000, 100 m)``), IPM steps ("ipm"; default 100) or cvxopt
        iterations ("cvxopt"; default 200). Hitting it gives ``converged=False``.
    z0 : ndarray of shape (m,), default=None
        Warm start for SMO ("auto", "smo"), made feasible by
        :func:`project_feasible`; ignored by "ipm" and "cvxopt".

    Returns
    -------
    QPResult
    """
    if solver == "auto":
        return _solve_auto(
            problem, tol=SMO_TOL if tol is None else tol, max_iter=max_iter, z0=z0
        )
    if solver == "smo":
        return solve_smo(
            problem, tol=SMO_TOL if tol is None else tol, max_iter=max_iter, z0=z0
        )
    if solver == "ipm":
        return solve_ipm(problem, polish_tol=tol, max_iter=max_iter)
    if solver == "cvxopt":
        options = {} if tol is None else {"tol": tol}
        if max_iter is not None:
            options["max_iter"] = max_iter
        return solve_cvxopt(problem, **options)
    raise ValueError(f"Unknown QP solver {solver!r}; choose one of {SOLVERS}.")


__all__ = [
    "AUTO_BUDGET",
    "IPM_TOL",
    "SMO_TOL",
    "SOLVERS",
    "BoxQP",
    "QPResult",
    "csvm_dual",
    "low_rank_factor",
    "polish_smo",
    "project_feasible",
    "rank_exceeds",
    "rho_from_kkt",
    "solve_box_qp",
    "solve_cvxopt",
    "solve_ipm",
    "solve_smo",
    "svmm_dual",
]
