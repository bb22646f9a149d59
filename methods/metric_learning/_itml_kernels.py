"""Compiled Bregman-projection passes of ITML (numba, ``cache=True``).

The same cyclic projections as :func:`methods.metric_learning._itml.itml_projection`
looped in :func:`methods.metric_learning._itml.itml_solve_python` (Davis et al.
2007, Algorithm 1), with one sweep over ``M`` per constraint instead of five (and
two temporary d x d arrays) in numpy: the rank-one update ``M += beta (M v)(M v)^T``
of constraint ``c`` is fused with the product ``M v`` of constraint ``c + 1``.
``M`` is symmetric, so that product is accumulated row by row (``sum_i M[i, :]
v_i``), a loop the compiler vectorizes; for large ``d`` the projections are
memory-bound and one sweep is the floor.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _row_matvec(M, v, out):  # pragma: no cover - compiled
    """``out = M^T v`` (= ``M v`` for symmetric ``M``) by rows of ``M``."""
    d = v.shape[0]
    out[:] = 0.0
    for i in range(d):
        vi = v[i]
        for j in range(d):
            out[j] += M[i, j] * vi


@njit(cache=True)
def bregman_passes(M, V, delta, xi, lam, gamma, max_iter, tol):  # pragma: no cover
    """Cyclic projections onto ``v_c^T M v_c = xi_c`` until the duals settle.

    Updates ``M`` (d x d, symmetric), ``xi`` and ``lam`` in place; ``gamma`` is
    the slack weight (``inf``: hard constraints). Stops after a pass when
    ``||lam - lam_old||_1 / (||lam|| + ||lam_old||) < tol``. Returns
    ``(n_passes, converged)``.
    """
    n_con, d = V.shape
    hard = np.isinf(gamma)
    frac = 1.0 if hard else gamma / (gamma + 1.0)
    lam_old = np.empty(n_con)
    Mv = np.empty(d)
    nxt = np.empty(d)
    if n_con > 0:
        _row_matvec(M, V[0], Mv)
    it = 0
    while it < max_iter:
        it += 1
        lam_old[:] = lam
        for c in range(n_con):
            v = V[c]
            vn = V[c + 1] if c + 1 < n_con else V[0]
            p = 0.0
            for i in range(d):
                p += v[i] * Mv[i]
            beta = 0.0
            if p > 0.0:
                dc = delta[c]
                alpha = min(lam[c], dc * frac * (1.0 / p - 1.0 / xi[c]))
                beta = dc * alpha / (1.0 - dc * alpha * p)
                if not hard:
                    xi[c] = 1.0 / (1.0 / xi[c] + dc * alpha / gamma)
                lam[c] -= alpha
            if beta != 0.0:
                # one sweep: M += beta Mv Mv^T, and nxt = M_new^T vn on the way
                nxt[:] = 0.0
                for i in range(d):
                    bi = beta * Mv[i]
                    vni = vn[i]
                    for j in range(d):
                        mij = M[i, j] + bi * Mv[j]
                        M[i, j] = mij
                        nxt[j] += mij * vni
            else:
                _row_matvec(M, vn, nxt)
            Mv, nxt = nxt, Mv
        num = 0.0
        n_new = 0.0
        n_old = 0.0
        for c in range(n_con):
            num += abs(lam[c] - lam_old[c])
            n_new += lam[c] * lam[c]
            n_old += lam_old[c] * lam_old[c]
        denom = np.sqrt(n_new) + np.sqrt(n_old)
        if denom == 0.0 or num / denom < tol:
            return it, True
    return it, False
