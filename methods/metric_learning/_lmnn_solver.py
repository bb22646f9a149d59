r"""The LMNN solver: L-BFGS on :math:`L` (:math:`M = L^T L`) with a safe active set.

Why this parametrization. The LMNN problem (Weinberger & Saul 2009, Eq. 13;
lmnnmkl Eq. 18 without P) is convex in :math:`M \succeq 0`; a projected subgradient
method keeps that convexity but needs an eigendecomposition per step (``eigh`` of
a 512 x 512 matrix costs ~7 matrix products), while :math:`M = L^T L` is PSD by
construction, needs no projection, and lets a quasi-Newton method (L-BFGS, as
pylmnn and scikit-learn's NCA do) take far fewer steps than a subgradient method
with step-size adaptation (W&S 2009 Sec. 5, metric-learn). Every PSD :math:`M` is
some :math:`L^T L`, so the two problems have the same optimal value.

Why the active set is exact. Each evaluation keeps a reference point ``Z_ref`` with
its pairwise distances; a point that moved by ``delta_p`` since changes each of its
distances by at most ``delta_p`` (triangle inequality), so an impostor ``l`` whose
lower-bounded distance to ``i`` exceeds ``margin + max_j D_ij`` cannot be active for
any target ``j`` of ``i`` and is skipped without computing its distance (an O(1)
test instead of O(d)); every other pair is evaluated exactly. So every objective
and gradient value the optimizer sees equals the dense one (up to summation order)
and ``solver="active_set"`` follows the same path as ``solver="dense"``. The
reference is renewed (one O(n^2 d) product) when the bound got loose.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.optimize

from methods.metric_learning._lmnn_kernels import (
    add_scaled,
    dense_weights,
    distance_loss,
    screened_loss,
    step_from,
    sub_scaled,
)

#: From this many entries of L on (d >= 224), the solver's own L-BFGS replaces
#: scipy's L-BFGS-B, whose per-iteration bound machinery then dominates; below it,
#: scipy's compiled loop beats the Python two-loop recursion.
LARGE_PROBLEM = 50_000

#: From this many features on (kernel maps, where d = n), an evaluation whose screen
#: examines more than GEMM_EXAMINED_FRACTION of all pairs is replaced by one GEMM for
#: every distance (:func:`distance_loss`) for the next GEMM_STREAK evaluations (twice
#: as many after each further failed screen): the screen then costs
#: ``n_examined * d`` scalar operations, ~10x the GEMM's per pair (measured at
#: n = d = 1000: 0.37 s against 0.04 s). Below it, the scalar loop is cheap and the
#: screen's exact pairwise sums are kept.
GEMM_MIN_FEATURES = 128
GEMM_EXAMINED_FRACTION = 0.1
GEMM_STREAK = 10


def _sq_dists(Z: np.ndarray) -> np.ndarray:
    zz = np.einsum("ij,ij->i", Z, Z)
    D = zz[:, None] + zz[None, :] - 2.0 * (Z @ Z.T)
    np.maximum(D, 0.0, out=D)
    np.fill_diagonal(D, 0.0)
    return D


class _Objective:
    """Objective and gradient in ``L``; exact screening of inactive impostor pairs.

    With ``use_active_set``, a reference point ``Z_ref`` and its pairwise distances
    are kept; each evaluation skips the pairs that the triangle inequality proves
    inactive (:func:`screened_loss`) and computes the rest exactly. The reference
    is renewed when screening keeps 1.5 times more pairs than just after the last
    renewal (the bound got loose), or every ``refresh_every`` evaluations.
    """

    def __init__(self, X, tn, y, push_weight, margin, use_active_set):
        self.X = X
        self.tn = tn
        self.y = y
        self.gamma = float(push_weight)
        self.margin = float(margin)
        self.use_active_set = use_active_set
        self.Z_ref = None
        self.R_ref = None
        self.examined_at_refresh = 0
        self.since_refresh = 0
        self.refresh_every = 50
        self.n_evals = 0
        self.n_dense = 0
        self.n_active = 0
        self.n_examined = 0
        self.gemm_left = 0
        self.gemm_streak = GEMM_STREAK
        self.n_gemm = 0

    def dense(self, Z):
        D = _sq_dists(Z)
        value, n_active, W = dense_weights(D, self.tn, self.y, self.margin, self.gamma)
        S = W + W.T
        R = S.sum(axis=1)[:, None] * Z - S @ Z
        self.n_dense += 1
        return value, n_active, R

    def from_distances(self, Z):
        D = _sq_dists(Z)
        self.Z_ref = Z.copy()
        self.R_ref = np.sqrt(D)
        self.since_refresh = 0
        self.n_dense += 1
        self.n_gemm += 1
        value, n_active, R, n_examined = distance_loss(
            D, Z, self.tn, self.y, self.margin, self.gamma
        )
        self.n_examined = self.examined_at_refresh = n_examined
        self.gemm_left = max(self.gemm_left - 1, 0)
        return value, n_active, R

    def screened(self, Z):
        n, d = Z.shape
        stale = (
            self.Z_ref is None
            or self.since_refresh >= self.refresh_every
            or self.n_examined > 1.5 * self.examined_at_refresh + len(Z)
        )
        if d >= GEMM_MIN_FEATURES and (stale or self.gemm_left > 0):
            # the refresh computes every distance by GEMM anyway: use them
            return self.from_distances(Z)
        if stale:
            self.Z_ref = Z.copy()
            self.R_ref = np.sqrt(_sq_dists(Z))
            delta = np.zeros(len(Z))
            self.n_dense += 1  # a refresh costs about a dense evaluation
            self.since_refresh = 0
        else:
            step = Z - self.Z_ref
            delta = np.sqrt(np.einsum("ij,ij->i", step, step))
            self.since_refresh += 1
        value, n_active, R, n_examined = screened_loss(
            Z, self.R_ref, delta, self.tn, self.y, self.margin, self.gamma
        )
        self.n_examined = n_examined
        if stale:
            self.examined_at_refresh = n_examined
        if d >= GEMM_MIN_FEATURES:
            if n_examined > GEMM_EXAMINED_FRACTION * n * n:
                self.gemm_left = self.gemm_streak
                self.gemm_streak *= 2
            else:
                self.gemm_streak = GEMM_STREAK
        return value, n_active, R

    def __call__(self, L_flat):
        d = self.X.shape[1]
        L = L_flat.reshape(-1, d)
        Z = self.X @ L.T
        self.n_evals += 1
        if self.use_active_set:
            value, n_active, R = self.screened(Z)
        else:
            value, n_active, R = self.dense(Z)
        self.n_active = n_active
        grad = 2.0 * (R.T @ self.X)
        return float(value), grad.ravel()


def lbfgs(fun, x0, *, max_iter, tol, memory=10, callback=None) -> dict:
    """Minimize ``fun`` (returning value and gradient) by L-BFGS.

    Two-loop recursion (Nocedal & Wright 2006, Alg. 7.4) with a backtracking
    Armijo line search (quadratic interpolation, c1 = 1e-4) from the unit step;
    a pair (s, y) enters the memory only if ``s . y > 0``. scipy's L-BFGS-B costs
    ~100 vector passes per iteration for its bound machinery, which dominates on
    kernel maps (262,144 variables at n = 512); this costs ~4 m.

    Stops (status 0) when an iteration lowers the value by at most ``tol``
    relative, ``(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) <= tol`` (L-BFGS-B's
    ``ftol`` rule); status 1 at ``max_iter``; status 2 if the line search fails.
    """
    x = np.array(x0, dtype=np.float64)
    f, g = fun(x)
    S, Y, rhos = [], [], []
    status, message, n_iter = 1, "max_iter reached", 0
    while n_iter < max_iter:
        n_iter += 1
        q = g.copy()
        alphas = []
        for s_, y_, r_ in zip(reversed(S), reversed(Y), reversed(rhos)):
            a_ = r_ * (s_ @ q)
            sub_scaled(q, a_, y_)  # q -= a_ * y_
            alphas.append(a_)
        if S:
            q *= (S[-1] @ Y[-1]) / (Y[-1] @ Y[-1])
        else:
            q /= max(np.linalg.norm(g), 1e-300)  # first step of unit length
        for s_, y_, r_, a_ in zip(S, Y, rhos, reversed(alphas)):
            add_scaled(q, a_ - r_ * (y_ @ q), s_)  # q += (...) * s_
        p = -q
        slope = g @ p
        if not slope < 0.0:  # not a descent direction: restart on the gradient
            S, Y, rhos = [], [], []
            p = -g / max(np.linalg.norm(g), 1e-300)
            slope = g @ p
        t = 1.0
        for _ in range(40):
            x_new = step_from(x, t, p)  # x + t * p
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * t * slope:
                break
            denom = 2.0 * (f_new - f - t * slope)
            t_q = -slope * t * t / denom if denom > 0 else 0.5 * t
            t = min(max(t_q, 0.1 * t), 0.5 * t)
        else:
            status, message = 2, "line search failed"
            break
        s_vec, y_vec = x_new - x, g_new - g
        sy = s_vec @ y_vec
        if sy > 1e-12 * np.linalg.norm(s_vec) * np.linalg.norm(y_vec):
            S.append(s_vec)
            Y.append(y_vec)
            rhos.append(1.0 / sy)
            if len(S) > memory:
                S.pop(0), Y.pop(0), rhos.pop(0)
        decrease = (f - f_new) / max(abs(f), abs(f_new), 1.0)
        x, f, g = x_new, f_new, g_new
        if callback is not None:
            callback(f)
        if decrease <= tol:
            status, message = 0, "relative decrease <= tol"
            break
    return {"x": x, "fun": f, "nit": n_iter, "status": status, "message": message}


def solve_lmnn(
    X: np.ndarray,
    tn: np.ndarray,
    y: np.ndarray,
    L0: np.ndarray,
    *,
    push_weight: float = 0.5,
    margin: float = 1.0,
    max_iter: int = 1000,
    tol: float = 1e-7,
    active_set: bool = True,
    verbose: bool = False,
) -> dict:
    """Minimize the LMNN objective over ``L`` from ``L0`` with scipy's L-BFGS-B.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    tn : ndarray of shape (n, k), int
        Target neighbours (indices into ``X``).
    y : ndarray of shape (n,), int
        Class codes.
    L0 : ndarray of shape (d, d)
    push_weight, margin : float
        :math:`\\gamma` and the margin of lmnnmkl Eq. 18.
    max_iter : int
        L-BFGS iterations.
    tol : float
        L-BFGS-B ``ftol``: stop when the relative decrease of the objective in an
        iteration is below ``tol``.
    active_set : bool
        Evaluate the hinge over the safe active set (True) or over every triplet.

    Returns
    -------
    dict with ``L``, ``objective``, ``n_iter``, ``converged``, ``status``,
    ``message``, ``n_evals``, ``n_dense_evals`` (of which ``n_gemm_evals`` took
    every distance from one GEMM), ``n_active`` (active triplets at the
    solution) and ``time``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    tn = np.ascontiguousarray(tn, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    fun = _Objective(X, tn, y, push_weight, margin, active_set)
    t0 = time.perf_counter()
    callback = None
    if verbose:

        def callback(value):
            print(
                f"[LMNN] eval {fun.n_evals:4d}  objective {value:.8g}"
                f"  active {fun.n_active}"
            )

    x0 = np.asarray(L0, dtype=np.float64).ravel()
    if x0.size >= LARGE_PROBLEM:
        res = lbfgs(fun, x0, max_iter=max_iter, tol=tol, callback=callback)
    else:
        report = None
        if callback is not None:
            # scipy passes the OptimizeResult (with .fun) only to a callback whose
            # one parameter is named intermediate_result; to any other, the
            # iterate x (an ndarray), on which .fun failed
            def report(intermediate_result):
                callback(intermediate_result.fun)

        out = scipy.optimize.minimize(
            fun,
            x0,
            jac=True,
            method="L-BFGS-B",
            callback=report,
            options={"maxiter": max_iter, "ftol": tol, "gtol": 0.0, "maxcor": 10},
        )
        res = {
            "x": out.x,
            "fun": out.fun,
            "nit": out.nit,
            "status": out.status,
            "message": out.message,
        }
    d = X.shape[1]
    return {
        "L": res["x"].reshape(-1, d),
        "objective": float(res["fun"]),
        "n_iter": int(res["nit"]),
        "converged": res["status"] == 0,
        "status": int(res["status"]),
        "message": str(res["message"]),
        "n_evals": fun.n_evals,
        "n_dense_evals": fun.n_dense,
        "n_gemm_evals": fun.n_gemm,
        "n_active": int(fun.n_active),
        "time": time.perf_counter() - t0,
    }
