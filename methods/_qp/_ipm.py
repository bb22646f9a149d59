"""Primal-dual interior-point method for the box QP, one n x n solve per step.

Solves ``min 1/2 z'Qz + p'z  s.t.  s'z = 0,  0 <= z <= U`` with
``Q = S P' K P S`` (``S = diag(s)``, ``P`` the m x n selection ``P[a, idx_a] = 1``),
by Mehrotra's predictor-corrector (plus one Gondzio centrality corrector) on the
KKT conditions

    Qz + p + s b - lam + nu = 0,   s'z = 0,   lam * z = mu,   nu * (U - z) = mu.

The Newton step needs ``(Q + D) x = r`` with the positive diagonal
``D = lam / z + nu / (U - z)`` (m entries). With ``u = P S x`` (one entry per
sample) this reduces to the n x n system

    (K + diag(d)) u = diag(d) P S D^{-1} r,   1 / d_k = sum_{a: idx_a = k} 1 / D_a,

and ``x = D^{-1} (r - s * (K u)[idx])`` where ``K u = q - d u`` costs nothing. For
the SVM_m dual (``z = [alpha; beta]``, ``Q = [M -M; -M M]``) this is the
``M + D1 D2 / (D1 + D2)`` reduction: the 2n-variable step costs one n x n solve,
never one with the 2n x 2n Hessian. The equality constraint is a second
right-hand side ``s`` (Schur complement of the scalar ``b``).

The n x n system is solved either by a dense Cholesky (n^3 / 3 flops) or, when a
pivoted Cholesky finds ``K = V V'`` with rank ``r <= n / 4`` (linear kernels of
d < n / 4 features, low-degree polynomials of few features), in O(n r^2): see
:func:`_lr_factor`.

SMO needs very many iterations on SVM_m and eps-SVM with large C and a low-rank or
smooth kernel (the eps = 0 dual is an L2-regularized check-loss fit: almost every
variable sits at a bound and the few free ones are tied together); the IPM's
iteration count (10-25) barely depends on C. The IPM point is polished by SMO
(variables within ``1e-9 U`` of a bound snapped to it), so both paths return
solutions that meet the same ``m(z) - M(z) <= tol`` test, with exact zeros outside
the support.

References
----------
.. [1] S. Mehrotra. On the implementation of a primal-dual interior point method.
   SIAM J. Optim. 2(4), 1992.
.. [2] J. Gondzio. Multiple centrality corrections in a primal-dual method for
   linear programming. Comput. Optim. Appl. 6, 1996.
.. [3] S. Fine, K. Scheinberg. Efficient SVM training using low-rank kernel
   representations. JMLR 2, 2001 (the structured Newton systems of SVM duals).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from threadpoolctl import ThreadpoolController

from methods._qp._cvxopt import _rho_of_bounds, rho_bounds
from methods._qp._problems import BoxQP
from methods._qp._result import QPResult
from methods._qp._smo import SMO_TOL, _numba_array, project_feasible, solve_smo

#: Relative tolerance of the interior-point stopping test (residuals and gap).
#: The SMO polish that follows takes the point to SMO's own tolerance.
IPM_TOL = 1e-8

#: Pivoted Cholesky stops when the largest residual diagonal falls below this
#: fraction of the largest diagonal of K; entries of ``K - V V'`` are then at most
#: as large (the residual is PSD). The Newton systems use ``V V'``, the residuals
#: the exact K, so the IPM still converges to the solution for K.
RANK_RTOL = 1e-10

# Variables within this fraction of U from a bound are snapped to it before the
# SMO polish.
_SNAP = 1e-9

# After the polish, a "free" variable this close to a bound (relative to U) is a
# rounding residue of the pair updates that started from an inexact point, not a
# free multiplier: SMO from zero would have clipped it onto the bound.
_RESIDUE = 1e-12

# rank_exceeds factors principal submatrices of at least this many rows with
# LAPACK (one BLAS thread): 0.03 s against 0.17 s for the row-wise loop at
# n = 8000. Below, the loop: OpenBLAS's first BLAS-3 call touches ~3 MB of work
# buffers, more than a whole SVC fit adds at n = 1000.
_LAPACK_FROM = 512

# The IPM stops without converging when its merit (the largest of the scaled gap
# and residuals), once below _STALL_MERIT, has not improved for _STALL_STEPS steps
# or has grown 100-fold; it then returns its best iterate.
_STALL_MERIT = 1e-3
_STALL_STEPS = 3

# Cap on the SMO polish, in iterations per variable. An ill-conditioned K with
# many free variables (SVM_m, eps = 0, raw polynomial kernels) needs ~60 m.
_POLISH_ITER = 100


@njit(cache=True)
def _pivoted_cholesky(K, rtol, r_max):
    """``V`` (n x r, r <= r_max) with ``K ~= V V'``; r = -1 if r_max is reached."""
    n = K.shape[0]
    d = np.empty(n)
    for i in range(n):
        d[i] = K[i, i]
    stop = rtol * max(d.max(), 0.0)
    Vt = np.zeros((r_max, n))
    for k in range(r_max + 1):
        j = np.argmax(d)
        if d[j] <= stop:
            return Vt[:k].T.copy(), k
        if k == r_max:
            break
        piv = np.sqrt(d[j])
        row = Vt[k]
        Kj = K[j]
        for i in range(n):
            row[i] = Kj[i]
        for l in range(k):
            c = Vt[l, j]
            if c != 0.0:
                Vl = Vt[l]
                for i in range(n):
                    row[i] -= c * Vl[i]
        for i in range(n):
            row[i] /= piv
            d[i] = max(d[i] - row[i] * row[i], 0.0)
        d[j] = 0.0
    return np.zeros((n, 0)), -1


@njit(cache=True)
def _is_symmetric(K):
    """``K == K'`` exactly (64 x 64 tiles, stops after the first tile with a
    mismatch; NaN is not). Branch-free within a tile: ~20% faster at n = 8000."""
    n = K.shape[0]
    b = 64
    for i0 in range(0, n, b):
        for j0 in range(0, i0 + 1, b):
            ok = True
            for i in range(i0, min(i0 + b, n)):
                for j in range(j0, min(j0 + b, i)):
                    ok &= K[i, j] == K[j, i]
            if not ok:
                return False
    return True


@njit(cache=True)
def _cholesky_succeeds(K, S, t):
    """Whether ``K[S][:, S] - t I`` has a Cholesky factor (row-wise, in place of
    LAPACK: a first BLAS-3 call makes OpenBLAS touch ~3 MB of work buffers, more
    than SVC's whole fit adds at n = 1000; stops at the first failing pivot)."""
    m = S.shape[0]
    L = np.zeros((m, m))
    for i in range(m):
        Ki = K[S[i]]
        Li = L[i]
        for j in range(i + 1):
            Lj = L[j]
            acc = Ki[S[j]]
            for k in range(j):
                acc -= Li[k] * Lj[k]
            if j < i:
                Li[j] = acc / Lj[j]
            else:
                acc -= t
                if not acc > 0.0:
                    return False
                Li[i] = np.sqrt(acc)
    return True


def rank_exceeds(K: np.ndarray, r_max: int) -> bool:
    """Cheap proof that the pivoted Cholesky of :func:`low_rank_factor` needs
    more than ``r_max`` pivots; False means "not shown", never "rank <= r_max".

    If the factorization stopped at rank ``r <= r_max``, then ``K = V V' + E``
    with ``E`` the PSD Schur complement whose diagonal is at most
    ``stop = RANK_RTOL max(diag K)``, so ``lambda_{r+1}(K) <= trace(E) <= n stop``.
    By Cauchy interlacing, any principal submatrix ``K_SS`` with
    ``|S| = r_max + 1`` has ``lambda_min(K_SS) <= lambda_{r_max+1}(K)``. A
    Cholesky of ``K_SS - t I`` that succeeds, with ``t = 2 n stop`` plus a
    rounding allowance for both factorizations, therefore proves
    ``rank > r_max``. ``S`` is ``r_max + 1`` evenly spaced rows; the Cholesky
    costs ``r_max^3 / 3`` flops (n^3 / 1536 at r_max = n / 8) against the
    ``n r_max^2 / 2`` of the pivoted one, and an exact symmetry check of K,
    O(n^2) reads, makes the eigenvalue argument apply. On full-rank kernels the
    verdict comes without the pivoted factorization; on low-rank ones the
    certificate fails at once and the factorization decides, as before, so the
    solvers' paths and results are unchanged. (The bound on ``E`` assumes K
    PSD up to rounding; on a clearly indefinite K the verdict may differ from
    the factorization's, and the solvers fall back as they do on such K.)
    """
    n = K.shape[0]
    m = int(r_max) + 1
    if m > n or m < 2:
        return False
    d_max = float(np.max(np.diagonal(K)))
    if not np.isfinite(d_max) or d_max <= 0.0:
        return False
    eps = np.finfo(np.float64).eps
    t = 2.0 * n * RANK_RTOL * d_max + (4.0 * m * m + 4.0 * n * m) * eps * d_max
    # floor(linspace) with step >= 1: distinct rows.
    S = np.floor(np.linspace(0.0, n - 1.0, m)).astype(np.int64)
    K = _numba_array(K, np.float64)
    # The symmetry check (O(n^2) reads) only once the Cholesky succeeded.
    return bool(_shifted_cholesky_succeeds(K, S, t) and _is_symmetric(K))


def _shifted_cholesky_succeeds(K: np.ndarray, S: np.ndarray, t: float) -> bool:
    """Whether ``K[S][:, S] - t I`` has a Cholesky factor; LAPACK from
    :data:`_LAPACK_FROM` rows (any backward-stable Cholesky fits the rounding
    allowance of :func:`rank_exceeds`)."""
    m = S.shape[0]
    if m < _LAPACK_FROM:
        return bool(_cholesky_succeeds(K, S, t))
    from scipy.linalg.lapack import dpotrf

    A = np.asfortranarray(K[np.ix_(S, S)])
    A.flat[:: m + 1] -= t
    with _blas_one_thread():
        L, info = dpotrf(A, lower=1, clean=0, overwrite_a=1)
    # A NaN in K need not stop OpenBLAS's factorization; it reaches the diagonal.
    return info == 0 and bool(np.all(np.isfinite(np.diagonal(L))))


def low_rank_factor(K: np.ndarray, r_max: int) -> np.ndarray | None:
    """``V`` with ``K = V V'`` up to :data:`RANK_RTOL`, or None if rank > r_max.

    Costs at most ``n r_max^2`` flops (pivoted Cholesky stopped at ``r_max``);
    :func:`rank_exceeds` first tries to prove rank > r_max for ~``r_max^3 / 3``.
    """
    K = _numba_array(K, np.float64)
    if rank_exceeds(K, r_max):
        return None
    V, r = _pivoted_cholesky(K, RANK_RTOL, int(r_max))
    return None if r < 0 else V


@njit(cache=True)
def _chol_solve(L, B):
    """Solve ``L L' X = B`` for lower-triangular ``L`` (row-oriented, contiguous)."""
    k, c = B.shape
    X = B.copy()
    for col in range(c):
        x = X[:, col].copy()
        for i in range(k):
            acc = x[i]
            Li = L[i]
            for j in range(i):
                acc -= Li[j] * x[j]
            x[i] = acc / Li[i]
        for i in range(k - 1, -1, -1):
            x[i] /= L[i, i]
            xi = x[i]
            Li = L[i]
            for j in range(i):
                x[j] -= xi * Li[j]
        X[:, col] = x
    return X


@njit(cache=True)
def _lr_factor(V, d, f_max):
    """Factor ``V V' + diag(d)`` in O(n r^2 + f_max^3).

    Samples with a small ``d`` (free variables: ``d -> 0`` as the IPM converges)
    form the set F, the others B. Eliminating B by Sherman-Morrison-Woodbury,
    whose capacitance ``I + V_B' D_B^{-1} V_B`` stays well conditioned because
    ``d_B`` is not small, leaves the |F| x |F| Schur complement
    ``S = D_F + V_F (I + V_B' D_B^{-1} V_B)^{-1} V_F'``: a positive diagonal plus
    a PSD matrix, with no cancellation. (Woodbury on the whole matrix divides by
    the vanishing ``d_F`` and loses all accuracy.)
    """
    n, r = V.shape
    order = np.argsort(d)
    thr = 1e-2 * np.median(d)
    n_f = 0
    while n_f < f_max and d[order[n_f]] < thr:
        n_f += 1
    F = order[:n_f].copy()
    B = order[n_f:].copy()
    VB = np.empty((B.shape[0], r))
    W = np.empty((B.shape[0], r))
    for t in range(B.shape[0]):
        for c in range(r):
            VB[t, c] = V[B[t], c]
            W[t, c] = V[B[t], c] / d[B[t]]
    cap = np.eye(r) + W.T @ VB
    Lc = np.linalg.cholesky(cap)
    VF = np.empty((n_f, r))
    for t in range(n_f):
        for c in range(r):
            VF[t, c] = V[F[t], c]
    S = VF @ _chol_solve(Lc, np.ascontiguousarray(VF.T))
    for t in range(n_f):
        S[t, t] += d[F[t]]
    Ls = np.linalg.cholesky(S) if n_f > 0 else np.zeros((0, 0))
    return F, B, VB, W, VF, Lc, Ls


@njit(cache=True)
def _lr_solve(F, B, VB, W, VF, Lc, Ls, d, q):
    """Solve ``(V V' + diag(d)) u = q`` with the factors of :func:`_lr_factor`."""
    u = np.empty_like(q)
    qB = np.empty((B.shape[0], q.shape[1]))
    for t in range(B.shape[0]):
        qB[t] = q[B[t]]
    if F.shape[0] > 0:
        qF = np.empty((F.shape[0], q.shape[1]))
        for t in range(F.shape[0]):
            qF[t] = q[F[t]]
        t1 = _chol_solve(Lc, W.T @ qB)
        uF = _chol_solve(Ls, qF - VF @ t1)
        e = qB - VB @ (VF.T @ uF)
        for t in range(F.shape[0]):
            u[F[t]] = uF[t]
    else:
        e = qB
    uB = e - VB @ _chol_solve(Lc, W.T @ e)
    for t in range(B.shape[0]):
        u[B[t]] = uB[t] / d[B[t]]
    return u


@njit(cache=True)
def _max_step(z, w, lam, nu, dz, dlam, dnu):
    """Largest ``t <= 1`` keeping ``z, U - z, lam, nu`` non-negative."""
    t = 1.0
    for a in range(z.shape[0]):
        if dz[a] < 0.0:
            t = min(t, -z[a] / dz[a])
        elif dz[a] > 0.0:
            t = min(t, w[a] / dz[a])
        if dlam[a] < 0.0:
            t = min(t, -lam[a] / dlam[a])
        if dnu[a] < 0.0:
            t = min(t, -nu[a] / dnu[a])
    return t


@njit(cache=True)
def _newton(sys_, idx, s, R):
    """Solve ``(Q + D) X = R`` (columns of R) through the reduced n x n system."""
    low_rank, L, F, B, VB, W, VF, Lc, Ls, d, Dinv = sys_
    m, k_rhs = R.shape
    n = d.shape[0]
    q = np.zeros((n, k_rhs))
    for a in range(m):
        for c in range(k_rhs):
            q[idx[a], c] += s[a] * Dinv[a] * R[a, c]
    for k in range(n):
        for c in range(k_rhs):
            q[k, c] *= d[k]
    if low_rank:
        u = _lr_solve(F, B, VB, W, VF, Lc, Ls, d, q)
    else:
        u = _chol_solve(L, q)
    X = np.empty_like(R)
    for a in range(m):
        k = idx[a]
        for c in range(k_rhs):
            # K u = q - d u: the reduced system itself gives the product. (This
            # is also the accurate choice: forming K u explicitly makes the steps
            # inconsistent with the rounding of the solve, and on ill-conditioned
            # K the dual residual then grows from step to step.)
            X[a, c] = Dinv[a] * (R[a, c] - s[a] * (q[k, c] - d[k] * u[k, c]))
    return X


@njit(cache=True)
def _corrected_step(sys_, idx, s, x_s, ss, r_d, r_e, z, w, lam, nu, c_l, c_u):
    """Direction and step for complementarity targets ``c_l, c_u`` (one solve).

    The factorization of the predictor is reused; ``x_s = M^-1 s`` eliminates the
    equality constraint's multiplier ``db``.
    """
    R1 = np.empty((s.size, 1))
    R1[:, 0] = -r_d + c_l / z - c_u / w
    x_r = _newton(sys_, idx, s, R1)[:, 0].copy()
    db = (s @ x_r + r_e) / ss
    dz = x_r - db * x_s
    dlam = (c_l - lam * dz) / z
    dnu = (c_u + nu * dz) / w
    t = _max_step(z, w, lam, nu, dz, dlam, dnu)
    return dz, db, dlam, dnu, t


@njit(cache=True)
def _ipm_kernel(K, V, low_rank, idx, s, p, U, tol, max_iter, n_correctors):
    """Mehrotra predictor-corrector; returns ``(z, b, n_iter, converged, diag)``."""
    m = idx.shape[0]
    n = K.shape[0]
    f_max = min(n, 2 * V.shape[1] + 20)
    p_max = np.max(np.abs(p))
    Umax = 1.0 + np.max(U)

    z = 0.5 * U
    w = U - z
    g = np.zeros(n)
    for a in range(m):
        g[idx[a]] += s[a] * z[a]
    f = K @ g
    G = np.empty(m)
    for a in range(m):
        G[a] = p[a] + s[a] * f[idx[a]]
    # Multipliers that cancel the dual residual for b = 0, kept away from 0.
    b = 0.0
    shift = 1.0 + np.mean(np.abs(G))
    lam = np.maximum(G, 0.0) + shift
    nu = np.maximum(-G, 0.0) + shift

    diag = np.empty(3)
    best_merit = np.inf
    best_it = 0
    z_best = z.copy()
    b_best = b
    diag_best = np.empty(3)
    converged = False
    n_iter = 0
    L = np.zeros((0, 0))
    F = np.zeros(0, dtype=np.int64)
    B = F
    VB = np.zeros((0, 0))
    W = VB
    VF = VB
    Lc = VB
    Ls = VB
    for it in range(max_iter + 1):
        g[:] = 0.0
        for a in range(m):
            g[idx[a]] += s[a] * z[a]
        f = K @ g
        r_e = 0.0
        obj = 0.0
        r_max = 0.0
        mu = 0.0
        for a in range(m):
            G[a] = p[a] + s[a] * f[idx[a]]
            r_e += s[a] * z[a]
            obj += 0.5 * z[a] * (G[a] + p[a])
            r_max = max(r_max, abs(G[a] + s[a] * b - lam[a] + nu[a]))
            mu += lam[a] * z[a] + nu[a] * w[a]
        mu /= 2 * m
        diag[0] = 2 * m * mu / (1.0 + abs(obj))
        # Relative to the size of the terms of Qz + p (Qz reaches ~C |K| n).
        diag[1] = r_max / (1.0 + p_max + np.max(np.abs(f)))
        diag[2] = abs(r_e) / Umax
        if diag[0] <= tol and diag[1] <= tol and diag[2] <= tol:
            converged = True
            break
        # Past the attainable accuracy (ill-conditioned K: the gap reaches
        # rounding level before the dual residual meets ``tol``) the iterates
        # degrade, at a rate that depends on rounding (e.g. the BLAS thread
        # count). Keep the best iterate and stop once the merit has clearly
        # turned: the SMO polish takes the best point the rest of the way.
        merit = max(diag[0], diag[1], diag[2])
        if merit < best_merit:
            best_merit = merit
            best_it = it
            z_best[:] = z
            b_best = b
            diag_best[:] = diag
        elif best_merit < _STALL_MERIT and (
            merit > 100.0 * best_merit or it - best_it >= _STALL_STEPS
        ):
            z = z_best
            b = b_best
            diag[:] = diag_best
            break
        if it == max_iter:
            break
        n_iter = it + 1
        r_d = G + s * b - lam + nu

        Dinv = 1.0 / (lam / z + nu / w)
        h = np.zeros(n)
        for a in range(m):
            h[idx[a]] += Dinv[a]
        d = 1.0 / h
        # A failed factorization (K not PSD, or too ill-conditioned) ends the run
        # with converged = False; the caller falls back to SMO.
        try:
            if low_rank:
                F, B, VB, W, VF, Lc, Ls = _lr_factor(V, d, f_max)
            else:
                A = K.copy()
                for k in range(n):
                    A[k, k] += d[k]
                L = np.linalg.cholesky(A)
        except Exception:  # nopython mode catches only Exception as a whole
            break

        sys_ = (low_rank, L, F, B, VB, W, VF, Lc, Ls, d, Dinv)
        # Predictor (affine scaling), solved together with the s column.
        c_l = -lam * z
        c_u = -nu * w
        R = np.empty((m, 2))
        R[:, 0] = s
        R[:, 1] = -r_d + c_l / z - c_u / w
        X = _newton(sys_, idx, s, R)
        x_s = X[:, 0].copy()
        x_r = X[:, 1].copy()
        ss = s @ x_s
        db = (s @ x_r + r_e) / ss
        dz = x_r - db * x_s
        dlam = (c_l - lam * dz) / z
        dnu = (c_u + nu * dz) / w
        t = _max_step(z, w, lam, nu, dz, dlam, dnu)
        mu_aff = ((z + t * dz) @ (lam + t * dlam) + (w - t * dz) @ (nu + t * dnu)) / (
            2 * m
        )
        sigma = (mu_aff / mu) ** 3
        # Corrector: centring plus the second-order term of the affine step.
        c_l = sigma * mu - lam * z - dz * dlam
        c_u = sigma * mu - nu * w + dz * dnu
        dz, db, dlam, dnu, t = _corrected_step(
            sys_, idx, s, x_s, ss, r_d, r_e, z, w, lam, nu, c_l, c_u
        )
        # Gondzio: push the complementarity products of a longer trial step back
        # into [0.1, 10] x target, reusing the factorization.
        target = sigma * mu
        for _ in range(n_correctors):
            t_try = min(1.0, 1.5 * t + 0.3)
            vl = (z + t_try * dz) * (lam + t_try * dlam)
            vu = (w - t_try * dz) * (nu + t_try * dnu)
            el = np.maximum(0.1 * target - vl, 0.0) + np.minimum(
                10.0 * target - vl, 0.0
            )
            eu = np.maximum(0.1 * target - vu, 0.0) + np.minimum(
                10.0 * target - vu, 0.0
            )
            c_l2 = c_l + np.maximum(el, -10.0 * target)
            c_u2 = c_u + np.maximum(eu, -10.0 * target)
            dz2, db2, dlam2, dnu2, t2 = _corrected_step(
                sys_, idx, s, x_s, ss, r_d, r_e, z, w, lam, nu, c_l2, c_u2
            )
            if t2 < 1.01 * t:
                break
            dz, db, dlam, dnu, t = dz2, db2, dlam2, dnu2, t2
            c_l, c_u = c_l2, c_u2
        t = min(1.0, 0.995 * t)
        # Past the attainable accuracy the directions degrade to inf/NaN or to
        # no progress: stop at the current (finite) iterate.
        step_ok = np.isfinite(db) and t > 1e-12
        for a in range(m):
            if not (
                np.isfinite(dz[a]) and np.isfinite(dlam[a]) and np.isfinite(dnu[a])
            ):
                step_ok = False
                break
        if not step_ok:
            break
        z = z + t * dz
        # Keep the iterate interior despite rounding in U - z.
        w = np.maximum(U - z, 1e-300)
        z = np.maximum(z, 1e-300)
        lam = lam + t * dlam
        nu = nu + t * dnu
        b += t * db
    if not converged and best_merit < max(diag[0], diag[1], diag[2]):
        z = z_best
        b = b_best
        diag[:] = diag_best
    return z, b, n_iter, converged, diag


_BLAS = None


def _blas_one_thread():
    """Context limiting BLAS/LAPACK (used by the numba kernel) to one thread.

    The kernel makes many small BLAS calls (n in the hundreds); multi-threaded
    OpenBLAS gains nothing there, and on a loaded machine its spin-waiting
    threads made a 17-step solve take ~5 s instead of 20 ms. The controller is
    built once (``threadpool_limits`` rescans the loaded libraries, ~1 ms).
    """
    global _BLAS
    if _BLAS is None:
        import scipy.linalg.cython_lapack  # noqa: F401  (numba's LAPACK)

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


def _canonical_pairs(problem: BoxQP, z: np.ndarray) -> np.ndarray:
    """Shift pairs of variables on one sample with opposite signs down together.

    For ``idx_a = idx_b`` and ``s_a = -s_b``, moving along ``e_a + e_b`` leaves
    ``Qz`` and ``s'z`` unchanged and changes the objective by ``p_a + p_b`` per
    unit; when that is >= 0, subtracting ``min(z_a, z_b)`` from both is feasible
    and no worse. (The SVM_m dual with eps = 0 and the eps-SVM dual: an
    interior-point method converges to the analytic centre of the optimal face,
    with both variables of a pair free, a start on which SMO is slow.)
    """
    idx = np.asarray(problem.idx)
    order = np.argsort(idx, kind="stable")
    a, b = order[:-1], order[1:]
    pair = (
        (idx[a] == idx[b])
        & (problem.s[a] == -problem.s[b])
        & (problem.p[a] + problem.p[b] >= 0.0)
    )
    a, b = a[pair], b[pair]
    # Each variable in at most one pair (samples with more than two variables).
    keep = np.ones(a.shape[0], dtype=bool)
    keep[1:] = a[1:] != b[:-1]
    a, b = a[keep], b[keep]
    z = z.copy()
    shift = np.minimum(z[a], z[b])
    z[a] -= shift
    z[b] -= shift
    return z


def polish_smo(problem: BoxQP, z: np.ndarray, *, tol: float | None = None) -> QPResult:
    """SMO from an approximate solution ``z`` (IPM or cvxopt), capped at 100 m.

    ``z`` is moved to the canonical point of its pair directions (see
    :func:`_canonical_pairs`), variables within ``1e-9 U`` of a bound are snapped
    to it, and the point is made feasible before SMO runs to ``tol``.
    """
    U = np.asarray(problem.U, dtype=np.float64)
    z_snap = _canonical_pairs(problem, np.clip(z, 0.0, U))
    z_snap[z_snap <= _SNAP * U] = 0.0
    top = z_snap >= (1.0 - _SNAP) * U
    z_snap[top] = U[top]
    z_snap = project_feasible(problem, z_snap)
    result = solve_smo(
        problem,
        tol=SMO_TOL if tol is None else tol,
        z0=z_snap,
        max_iter=_POLISH_ITER * problem.n_vars,
    )
    _drop_rounding_residues(problem, result, SMO_TOL if tol is None else tol)
    return result


def _drop_rounding_residues(problem: BoxQP, result: QPResult, tol: float) -> None:
    """Snap rounding residues of the polish onto their bounds; LIBSVM's rho.

    With no free multiplier the KKT conditions leave ``rho`` an interval and
    LIBSVM (and :func:`solve_smo` from zero) takes its midpoint. A variable left
    ``1e-16 U`` below its bound by the polish would instead pin ``rho`` to its own
    ``s_a G_a``, an end of that interval, which moves every decision value. The
    snap is kept only if the snapped point still meets the KKT conditions to
    ``tol``: a genuinely free multiplier below ``1e-12 U`` (a large C) stays.
    """
    z, U = result.z, np.asarray(problem.U, dtype=np.float64)
    free = (z > 0.0) & (z < U)
    if not free.any():
        return
    near_zero = z <= _RESIDUE * U
    near_top = z >= (1.0 - _RESIDUE) * U
    if not np.all((near_zero | near_top)[free]):
        return
    snapped = z.copy()
    snapped[free & near_zero] = 0.0
    snapped[free & near_top] = U[free & near_top]
    _, lb, ub = rho_bounds(problem, snapped, tol=0.0)
    if not lb - ub <= tol:
        return
    result.z = snapped
    result.rho = _rho_of_bounds(None, lb, ub)  # nothing is free after the snap
    result.objective = problem.objective(snapped)
    if "n_free" in result.info:
        result.info["n_free"] = 0


def solve_ipm(
    problem: BoxQP,
    *,
    tol: float = IPM_TOL,
    max_iter: int | None = None,
    z0: np.ndarray | None = None,
    polish: bool = True,
    polish_tol: float | None = None,
    n_correctors: int = 1,
    low_rank: bool = True,
    factor: np.ndarray | None = None,
) -> QPResult:
    """Solve a :class:`BoxQP` with a Mehrotra predictor-corrector IPM.

    Parameters
    ----------
    problem : BoxQP
        The problem; its ``K`` must be symmetric positive semi-definite.
    tol : float, default=IPM_TOL
        Stop when the scaled dual residual, equality residual and duality gap
        (``2 m mu / (1 + |objective|)``) are all below ``tol``.
    max_iter : int, default=None
        Cap on interior-point steps; ``None`` means 100.
    z0 : ndarray, default=None
        Ignored: interior-point methods gain little from a warm start.
    polish : bool, default=True
        Snap near-bound variables and finish with SMO from the IPM point.
    polish_tol : float, default=None
        SMO tolerance of the polish; ``None`` is :data:`methods._qp._smo.SMO_TOL`.
    n_correctors : int, default=1
        Gondzio centrality correctors per step (each one more solve with the same
        factorization; one saves ~15% of the steps on the mlsvm problems).
    low_rank : bool, default=True
        Try a pivoted Cholesky ``K = V V'`` (stopped at rank n / 4) and, when it
        succeeds, solve the Newton systems in O(n r^2) instead of O(n^3).
    factor : ndarray of shape (n, r), default=None
        A known ``V`` with ``K = V V'`` (skips the pivoted Cholesky); only used
        when every sample carries a variable with ``U > 0``.

    Returns
    -------
    QPResult
        ``n_iter`` counts interior-point steps; ``info`` holds ``gap``,
        ``dual_residual``, ``eq_residual``, ``rank`` (None for the dense path)
        and, after a polish, ``polish_iter`` and the final ``violation``.
    """
    del z0
    if max_iter is None:
        max_iter = 100
    K = _numba_array(problem.K, np.float64)
    idx = np.asarray(problem.idx, dtype=np.int64)
    s = _numba_array(problem.s, np.float64)
    p = _numba_array(problem.p, np.float64)
    U = _numba_array(problem.U, np.float64)
    m = idx.shape[0]
    n = K.shape[0]

    # Variables with U = 0 are fixed at 0 (no interior) and samples without a
    # variable drop out of the reduced system.
    live = U > 0
    used = np.zeros(n, dtype=bool)
    used[idx[live]] = True
    remap = np.cumsum(used) - 1
    K_sub = K if np.all(used) else np.ascontiguousarray(K[np.ix_(used, used)])
    if factor is not None and K_sub is K:
        V = _numba_array(factor, np.float64)
    elif low_rank:
        V = low_rank_factor(K_sub, K_sub.shape[0] // 4)
    else:
        V = None
    with _blas_one_thread():
        z_live, b, n_iter, converged, diag = _ipm_kernel(
            K_sub,
            np.zeros((K_sub.shape[0], 0)) if V is None else V,
            V is not None,
            remap[idx[live]],
            s[live],
            p[live],
            U[live],
            float(tol),
            int(max_iter),
            int(n_correctors),
        )
    z = np.zeros(m)
    z[live] = np.clip(z_live, 0.0, U[live])
    result = QPResult(
        z=z,
        rho=-float(b),
        objective=problem.objective(z),
        n_iter=int(n_iter),
        converged=bool(converged),
        solver="ipm",
        info={
            "gap": float(diag[0]),
            "dual_residual": float(diag[1]),
            "eq_residual": float(diag[2]),
            "rank": None if V is None else int(V.shape[1]),
        },
    )
    if not polish:
        return result
    polished = polish_smo(problem, z, tol=polish_tol)
    # A polish that does not finish quickly (IPM stopped early) is dropped: the
    # IPM point is returned with the IPM's own convergence flag.
    if polished.converged:
        result.info.update(
            polish_iter=polished.n_iter, violation=polished.info["violation"]
        )
        result.z = polished.z
        result.rho = polished.rho
        result.objective = polished.objective
        result.converged = True
    return result
