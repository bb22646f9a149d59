"""Compiled Bregman-projection passes of ITML (numba, ``cache=True``).

The same cyclic projections as :func:`methods.metric_learning._itml.itml_projection`
looped in :func:`methods.metric_learning._itml.itml_solve_python` (Davis et al.
2007, Algorithm 1), fused per constraint: one matrix-vector product ``M v`` (``M``
is symmetric, so ``v^T M v = v . (M v)``) and one in-place rank-one update, instead
of five passes over ``M`` and two temporary d x d arrays per projection in numpy.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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
    Mv = np.empty(d)
    lam_old = np.empty(n_con)
    it = 0
    while it < max_iter:
        it += 1
        lam_old[:] = lam
        for c in range(n_con):
            v = V[c]
            p = 0.0
            for i in range(d):
                s = 0.0
                for j in range(d):
                    s += M[i, j] * v[j]
                Mv[i] = s
                p += v[i] * s
            if p <= 0.0:
                continue
            dc = delta[c]
            alpha = min(lam[c], dc * frac * (1.0 / p - 1.0 / xi[c]))
            beta = dc * alpha / (1.0 - dc * alpha * p)
            if not hard:
                xi[c] = 1.0 / (1.0 / xi[c] + dc * alpha / gamma)
            lam[c] -= alpha
            for i in range(d):
                bi = beta * Mv[i]
                for j in range(d):
                    M[i, j] += bi * Mv[j]
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
