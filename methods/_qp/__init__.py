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
- ``"auto_path"``: "auto", except that a problem whose data (K, s, p, idx) was
  solved earlier in this process with a smaller box (``U' <= U``, as a smaller C
  in a grid search) that had to go to the IPM goes to the IPM at once, without
  the SMO stages (see "Along a C grid" below).

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

Along a C grid ("auto_path")
----------------------------
The IPM of stage 3 starts cold, so its result does not depend on the SMO stages
before it: they only decide whether it runs. In a grid search over C on one inner
split, a problem that needed the IPM at one C almost always needs it at the next,
larger C, where SMO is slower still; "auto_path" then skips the SMO stages, which
cost up to the IPM's own estimated cost (``AUTO_BUDGET``). When the guess holds the
result is bit-identical to "auto"'s; when it does not (SMO would have finished
within its budget), the IPM's solution is returned instead of SMO's (both within
``tol``). Measured on mlsvm Table I cells (3 outer folds each, 137 guesses): no
wrong guess; 29% of the wall time of wdbc eps-SVM poly3, 15% of musk1 eps-SVM
linear (``benchmarks/README.md``). The memory is per process (the last
``_PATH_MEMO_SIZE`` problems that went to the IPM, identified by a digest of their
arrays), so a fit's path
depends on which smaller-C fits of the same data ran before it in the process:
the same in every run of a grid search (the runner's search fits every C of one
inner split, in the grid's order, before the next split; GridSearchCV every split
of one C before the next C: both see each smaller C of a problem first), but a
lone fit takes the "auto" path.

``tol`` means the same for "smo", "ipm" and "auto": the final maximal KKT violation
``m(z) - M(z) <= tol`` (the IPM is polished by SMO to it). For "cvxopt" it is
cvxopt's ``abstol``/``reltol``/``feastol``.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from methods._qp._cvxopt import rho_bounds, rho_from_kkt, solve_cvxopt
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

SOLVERS = ("auto", "auto_path", "smo", "ipm", "cvxopt")

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


# "auto_path" remembers only the problems that went to the IPM (the others never make
# a later fit skip SMO): fingerprint -> [(digest, U)], most recent fingerprint last.
# The fingerprint (shapes, the wrap-around sum of K's 64-bit words, the bytes of s, p
# and idx) costs ~1/40 of a sha1 of K and is exact integer arithmetic, so it does
# not depend on memory layout or alignment; the sha1 digest of K, s, p and idx, taken
# only when a fingerprint matches or an IPM result is stored, decides identity as
# before. Hashing K on every solve cost ~13% of mlsvm Table I's wdbc sweep. The
# skip decisions equal those of the earlier memo (every problem, with a flag) while
# fewer than _PATH_MEMO_SIZE problems separate two C values of one problem (a grid
# search over C: inner splits x other parameter values, 50 in mlsvm Table I).
_PATH_MEMO: OrderedDict = OrderedDict()
_PATH_MEMO_SIZE = 256  # problems; a 10-fold inner grid search needs 10


def _path_fingerprint(problem: BoxQP) -> tuple:
    K = np.ascontiguousarray(problem.K, dtype=np.float64)
    small = hashlib.sha1()
    for a in (problem.s, problem.p, problem.idx):
        small.update(np.ascontiguousarray(a).view(np.uint8))
    words = int(K.view(np.uint64).sum(dtype=np.uint64))
    return (K.shape, problem.n_vars, words, small.hexdigest())


def _path_key(problem: BoxQP) -> str:
    digest = hashlib.sha1(repr((problem.K.shape, problem.n_vars)).encode())
    for a in (problem.K, problem.s, problem.p, problem.idx):
        digest.update(np.ascontiguousarray(a).view(np.uint8))
    return digest.hexdigest()


def _ipm_seen_below(fingerprint: tuple, key: str | None, U: np.ndarray) -> bool:
    """A smaller box (``U' <= U``, ``U' != U``) of the same problem went to the IPM."""
    return any(
        k == key and np.all(U_prev <= U) and np.any(U_prev < U)
        for k, U_prev in _PATH_MEMO.get(fingerprint, ())
    )


def _remember_ipm(fingerprint: tuple, key: str, U: np.ndarray) -> None:
    runs = _PATH_MEMO.setdefault(fingerprint, [])
    _PATH_MEMO.move_to_end(fingerprint)
    if not any(k == key and np.array_equal(U_prev, U) for k, U_prev in runs):
        runs.append((key, U.copy()))
    while len(_PATH_MEMO) > _PATH_MEMO_SIZE:
        _PATH_MEMO.popitem(last=False)


def _solve_auto_path(
    problem: BoxQP, *, tol: float, max_iter: int | None, z0: np.ndarray | None
) -> QPResult:
    fingerprint = _path_fingerprint(problem)
    # The digest only when the fingerprint is known or an IPM result is stored,
    # and then once.
    key = _path_key(problem) if fingerprint in _PATH_MEMO else None
    res = _solve_auto(
        problem,
        tol=tol,
        max_iter=max_iter,
        z0=z0,
        skip_smo=_ipm_seen_below(fingerprint, key, problem.U),
    )
    if res.solver != "smo":
        _remember_ipm(fingerprint, key or _path_key(problem), problem.U)
    return res


def _solve_auto(
    problem: BoxQP,
    *,
    tol: float,
    max_iter: int | None,
    z0: np.ndarray | None,
    skip_smo: bool = False,
) -> QPResult:
    n = problem.K.shape[0]
    if max_iter is None:
        max_iter = default_max_iter(problem.n_vars)
    spent_iter = 0
    spent_work = 0.0
    res = None
    workspace: dict = {}  # the SMO stages share one kernel-block buffer

    def smo(budget: float) -> QPResult:
        # Resume from the last iterate; iterations and work add up over stages.
        nonlocal spent_iter, spent_work
        out = solve_smo(
            problem,
            tol=tol,
            max_iter=max_iter - spent_iter,
            z0=z0 if res is None else res.z,
            max_work=budget - spent_work,
            workspace=workspace,
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
    if not skip_smo:
        res = smo(AUTO_BUDGET * _ipm_cost(n, 0))
        if finished(res):
            return res
    # Stage 2: the rank of K fixes the IPM's cost, hence SMO's remaining budget.
    V = low_rank_factor(problem.K, max(n // 8, 1))
    rank = None if V is None else V.shape[1]
    budget = AUTO_BUDGET * _ipm_cost(n, rank)
    if not skip_smo and spent_work < budget:
        res = smo(budget)
        if finished(res):
            return res
    # The SMO stages are over: free their kernel block before the IPM's memory.
    workspace.clear()
    # Stage 3: the IPM, polished by SMO.
    try:
        out = solve_ipm(problem, polish_tol=tol, factor=V, low_rank=V is not None)
    except np.linalg.LinAlgError:
        out = None
    if out is not None and out.converged:
        out.info.update(smo_iter=spent_iter, smo_work=spent_work, smo_skipped=skip_smo)
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
    solver : {"auto", "auto_path", "smo", "ipm", "cvxopt"}, default="auto"
        See the module docstring for the "auto" and "auto_path" rules.
    tol : float, default=None
        Stopping tolerance on the maximal KKT violation ``m(z) - M(z)`` for
        "auto", "auto_path", "smo" and "ipm" (default :data:`SMO_TOL` = 1e-4,
        which keeps the objective within 1e-6 relative of the cvxopt reference on
        the benchmark problems); for "cvxopt" its abstol/reltol/feastol (default
        1e-10).
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
    if solver in ("auto", "auto_path"):
        solve = _solve_auto if solver == "auto" else _solve_auto_path
        return solve(
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
    "rho_bounds",
    "rho_from_kkt",
    "solve_box_qp",
    "solve_cvxopt",
    "solve_ipm",
    "solve_smo",
    "svmm_dual",
]
