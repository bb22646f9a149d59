r"""The descent of wrbf Sec. 4.3 on the feature weights, and its C-SVM solves.

:func:`wrbf_descent` runs Eq. (10)-(15) on one shared weight vector ``v`` over a
list of binary C-SVM problems; a solve is a callable from :func:`make_solve`
(a :mod:`methods._qp` solver warm-started from the previous alpha, or LIBSVM).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from methods._qp import csvm_dual, solve_box_qp
from methods.feature_weighted._kernel import _objective_and_grad_sum, wrbf_kernel

# Interior-point solvers cannot start from a previous alpha; every other solver of
# methods._qp takes the last iterate's alpha as z0 (the kernel moves little per step).
_COLD_START_SOLVERS = frozenset({"cvxopt"})

# A solve: (K, y in {-1, +1}, alpha of the previous iterate or None) ->
# (alpha, rho, converged, solver iterations).
_Solve = Callable[
    [np.ndarray, np.ndarray, "np.ndarray | None"], tuple[np.ndarray, float, bool, int]
]



# -------------------------------------------------------------------------- solvers
def _solve_libsvm(
    K: np.ndarray,
    y: np.ndarray,
    z0: np.ndarray | None,
    *,
    C: float,
    tol: float | None,
    max_iter: int | None,
) -> tuple[np.ndarray, float, bool, int]:
    """C-SVM dual on a precomputed Gram with LIBSVM (through ``SVC``); no warm start."""
    clf = SVC(
        kernel="precomputed",
        C=C,
        tol=1e-3 if tol is None else tol,
        max_iter=-1 if max_iter is None else max_iter,
    )
    with warnings.catch_warnings():
        # counted and reported once per fit by WRBFSVM instead
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(K, y)
    alpha = np.zeros(y.shape[0])
    # binary SVC: dual_coef_ = y_i alpha_i with classes_[1] = +1 positive
    alpha[clf.support_] = clf.dual_coef_[0] * y[clf.support_]
    np.clip(alpha, 0.0, C, out=alpha)
    return alpha, float(-clf.intercept_[0]), clf.fit_status_ == 0, int(clf.n_iter_[0])


def _solve_qp(
    K: np.ndarray,
    y: np.ndarray,
    z0: np.ndarray | None,
    *,
    C: float,
    solver: str,
    tol: float | None,
    max_iter: int | None,
) -> tuple[np.ndarray, float, bool, int]:
    """C-SVM dual through :func:`methods._qp.solve_box_qp`, warm-started from ``z0``."""
    options: dict = {}
    if tol is not None:
        options["tol"] = tol
    if max_iter is not None:
        options["max_iter"] = max_iter
    if z0 is not None and solver not in _COLD_START_SOLVERS:
        options["z0"] = z0
    res = solve_box_qp(csvm_dual(K, y, C), solver=solver, **options)
    return res.z, float(res.rho), bool(res.converged), int(res.n_iter)


def make_solve(
    solver: str, C: float, tol: float | None, max_iter: int | None
) -> _Solve:
    """The C-SVM solve of :func:`wrbf_descent`: "libsvm" or a ``methods._qp`` solver.

    LIBSVM through ``SVC`` pays ~0.7 ms of input validation per call and cannot
    warm start, which dominates small multi-class sets (ecoli: 8 problems x 101
    solves), so the ``methods._qp`` solvers (numba SMO for "auto") are the default.
    """
    if solver == "libsvm":
        return lambda K, y, z0: _solve_libsvm(K, y, z0, C=C, tol=tol, max_iter=max_iter)
    return lambda K, y, z0: _solve_qp(
        K, y, z0, C=C, solver=solver, tol=tol, max_iter=max_iter
    )


# -------------------------------------------------------------------------- descent
def wrbf_descent(
    X: np.ndarray,
    problems: list[tuple[np.ndarray, np.ndarray]],
    *,
    solve: _Solve,
    gamma: float = 1.0,
    eta: float = 0.001,
    n_iter: int = 100,
    nonneg: bool = True,
    half_factor: bool = False,
) -> dict:
    r"""Gradient descent on one shared ``v`` over binary C-SVM problems, Sec. 4.3.

    Iterate ``t = 0..n_iter``: build ``K_v`` (Eq. (9)), solve every problem (warm
    start from its previous alpha), record :math:`L_t = \sum_p L^{(p)}_\mathrm{dual}`,
    keep the iterate with the lowest ``L_t`` (ties keep the earliest, so ``t = 0``,
    the plain RBF, wins when nothing improves); then, for ``t < n_iter``,
    ``v <- v - eta * sum_p dL^{(p)}/dv`` (Eq. (10), (15)), clip at 0 if ``nonneg``,
    and rescale to ``||v||_1 = d``. ``n_iter + 1`` SVM solves per problem.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    problems : list of (indices, labels)
        Each problem trains on ``X[indices]`` with labels in {-1, +1}.
    solve : callable
        ``(K, y, alpha_prev) -> (alpha, rho, converged, n_iter)``.
    gamma, eta, n_iter, nonneg, half_factor
        As in :class:`WRBFSVM`.

    Returns
    -------
    result : dict
        ``weights`` (kept ``v``), ``alphas`` and ``rhos`` (kept model, per problem),
        ``best_iter``, ``history`` (``L_t`` for every solved iterate), ``n_steps``
        (updates of ``v`` made), ``solver_n_iter`` (shape (n_steps + 1, n_problems)),
        ``converged`` (same shape, per solve), ``stalled`` (True when every weight
        was clipped to 0 and the descent stopped early).
    """
    n, d = X.shape
    v = np.ones(d)
    full = [
        idx.shape[0] == n and np.array_equal(idx, np.arange(n)) for idx, _ in problems
    ]
    sub_X = [X if f else X[idx] for f, (idx, _) in zip(full, problems, strict=True)]
    scale = 0.5 * gamma if half_factor else gamma
    alphas: list[np.ndarray | None] = [None] * len(problems)
    history: list[float] = []
    solver_iters: list[list[int]] = []
    converged: list[list[bool]] = []
    best: dict = {}
    stalled = False
    n_steps = 0
    for t in range(n_iter + 1):
        K = wrbf_kernel(X, weights=v, gamma=gamma)
        need_grad = t < n_iter
        total = 0.0
        s_total = np.zeros(d)
        rhos = []
        its, convs = [], []
        for p, (idx, y) in enumerate(problems):
            Kp = K if full[p] else K[np.ix_(idx, idx)]
            alpha, rho, conv, it = solve(Kp, y, alphas[p])
            alphas[p] = alpha
            rhos.append(rho)
            its.append(it)
            convs.append(conv)
            obj, s = _objective_and_grad_sum(sub_X[p], Kp, y, alpha, need_grad)
            total += obj
            if need_grad:
                s_total += s
        history.append(total)
        solver_iters.append(its)
        converged.append(convs)
        if not best or total < best["objective"]:
            best = {
                "objective": total,
                "weights": v.copy(),
                "alphas": [a.copy() for a in alphas],
                "rhos": list(rhos),
                "best_iter": t,
            }
        if not need_grad:
            break
        v_new = v - eta * scale * s_total
        if nonneg:
            np.maximum(v_new, 0.0, out=v_new)
        norm = np.abs(v_new).sum()
        if not norm > 0.0:
            # every weight clipped: the L1 rescaling is undefined, v stays as it was
            stalled = True
            break
        v = v_new * (d / norm)
        n_steps += 1
    return {
        **best,
        "history": np.asarray(history),
        "n_steps": n_steps,
        "solver_n_iter": np.asarray(solver_iters, dtype=np.int64),
        "converged": np.asarray(converged, dtype=bool),
        "stalled": stalled,
    }
