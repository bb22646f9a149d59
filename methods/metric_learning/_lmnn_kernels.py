r"""Compiled inner loops of the LMNN solver (numba, ``cache=True``).

All loops work in the transformed space :math:`z_i = L x_i` and return the pieces of
the LMNN objective (Weinberger & Saul 2009, Eq. 13; lmnnmkl Eq. 18 without P)

.. math:: f = (1-\gamma) \sum_{i, j \in N(i)} D_{ij}
    + \gamma \sum_{i, j \in N(i)} \sum_{l: y_l \ne y_i} [m + D_{ij} - D_{il}]_+

and of its gradient. A triplet is active when its hinge argument is > 0 (the
subgradient at exactly 0 is taken as 0, as in :func:`lmnn_loss`).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def dense_weights(D, tn, y, margin, gamma):  # pragma: no cover - compiled
    """Objective and pair weights from the full squared-distance matrix ``D``.

    Returns ``(value, n_active, W)`` where ``W[a, b]`` is the weight of the outer
    product of ``x_a - x_b`` in the gradient (pull and push terms together).
    """
    n, k = tn.shape
    W = np.zeros((n, n))
    value = 0.0
    n_active = 0
    for i in range(n):
        yi = y[i]
        for jj in range(k):
            j = tn[i, jj]
            dij = D[i, j]
            value += (1.0 - gamma) * dij
            cnt = 0
            base = margin + dij
            for l in range(n):
                if y[l] == yi:
                    continue
                h = base - D[i, l]
                if h > 0.0:
                    value += gamma * h
                    cnt += 1
                    W[i, l] -= gamma
            n_active += cnt
            W[i, j] += (1.0 - gamma) + gamma * cnt
    return value, n_active, W


@njit(cache=True)
def candidate_pairs(D, tn, y, margin, rho):  # pragma: no cover - compiled
    """Impostor pairs ``(i, l)`` that can be active while no point moves > ``rho``.

    A point moving by at most ``rho`` changes every distance by at most ``2 rho``
    (triangle inequality), so a pair with ``(r_ij + 2 rho)^2 + m <= (r_il - 2 rho)^2``
    for the furthest target neighbour ``j`` of ``i`` (``r`` = unsquared distances at
    the reference point) stays inactive for all of ``i``'s targets.
    """
    n, k = tn.shape
    out_i = np.empty(n * 16, dtype=np.int64)
    out_l = np.empty(n * 16, dtype=np.int64)
    m = 0
    for i in range(n):
        rmax = 0.0
        for jj in range(k):
            r = np.sqrt(max(D[i, tn[i, jj]], 0.0))
            if r > rmax:
                rmax = r
        reach = (rmax + 2.0 * rho) ** 2 + margin
        yi = y[i]
        for l in range(n):
            if y[l] == yi:
                continue
            r_il = np.sqrt(max(D[i, l], 0.0)) - 2.0 * rho
            if r_il <= 0.0 or r_il * r_il < reach:
                if m == out_i.shape[0]:
                    grow_i = np.empty(2 * m, dtype=np.int64)
                    grow_l = np.empty(2 * m, dtype=np.int64)
                    grow_i[:m] = out_i
                    grow_l[:m] = out_l
                    out_i = grow_i
                    out_l = grow_l
                out_i[m] = i
                out_l[m] = l
                m += 1
    return out_i[:m], out_l[:m]


@njit(cache=True)
def active_set_loss(Z, tn, pair_i, pair_l, margin, gamma):  # pragma: no cover
    r"""Objective and :math:`R = \mathrm{Lap}(W) Z` over a set of impostor pairs.

    Only the pairs listed in ``(pair_i, pair_l)`` (sorted by ``i``) are examined;
    the caller guarantees that every other triplet is inactive. The gradient in
    :math:`L` is then :math:`2 R^T X`.
    """
    n, k = tn.shape
    d = Z.shape[1]
    R = np.zeros((n, d))
    Dt = np.empty((n, k))
    for i in range(n):
        for jj in range(k):
            j = tn[i, jj]
            s = 0.0
            for c in range(d):
                t = Z[i, c] - Z[j, c]
                s += t * t
            Dt[i, jj] = s
    value = (1.0 - gamma) * Dt.sum()
    cnt = np.zeros((n, k))
    n_active = 0
    for p in range(pair_i.shape[0]):
        i = pair_i[p]
        l = pair_l[p]
        s = 0.0
        for c in range(d):
            t = Z[i, c] - Z[l, c]
            s += t * t
        w = 0.0
        for jj in range(k):
            h = margin + Dt[i, jj] - s
            if h > 0.0:
                value += gamma * h
                cnt[i, jj] += 1.0
                w += gamma
                n_active += 1
        if w > 0.0:
            # pair (i, l) enters the gradient with weight -w
            for c in range(d):
                t = w * (Z[i, c] - Z[l, c])
                R[i, c] -= t
                R[l, c] += t
    for i in range(n):
        for jj in range(k):
            j = tn[i, jj]
            w = (1.0 - gamma) + gamma * cnt[i, jj]
            for c in range(d):
                t = w * (Z[i, c] - Z[j, c])
                R[i, c] += t
                R[j, c] -= t
    return value, n_active, R
