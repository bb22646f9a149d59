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
def _hinge_loss(Z, D, R_ref, delta, from_d, tn, y, margin, gamma):  # pragma: no cover
    """The loop of :func:`screened_loss` and :func:`distance_loss`.

    An impostor's squared distance comes from ``D`` if ``from_d``, else it is
    computed from ``Z`` once the triangle-inequality screen lets the pair through;
    everything else (target distances, hinge, gradient accumulation) is shared, in
    the same order, so the two differ only in where that distance comes from.
    """
    n, k = tn.shape
    d = Z.shape[1]
    R = np.zeros((n, d))
    Dt = np.empty(k)
    value = 0.0
    n_active = 0
    n_examined = 0
    cnt = np.zeros(k)
    for i in range(n):
        reach = 0.0
        for jj in range(k):
            j = tn[i, jj]
            s = 0.0
            for c in range(d):
                t = Z[i, c] - Z[j, c]
                s += t * t
            Dt[jj] = s
            cnt[jj] = 0.0
            if s > reach:
                reach = s
            value += (1.0 - gamma) * s
        reach += margin
        yi = y[i]
        for l in range(n):
            if y[l] == yi:
                continue
            if from_d:
                s = D[i, l]
                if s >= reach:
                    continue
            else:
                lb = R_ref[i, l] - delta[i] - delta[l]
                if lb > 0.0 and lb * lb >= reach:
                    continue
                s = 0.0
                for c in range(d):
                    t = Z[i, c] - Z[l, c]
                    s += t * t
            n_examined += 1
            w = 0.0
            for jj in range(k):
                h = margin + Dt[jj] - s
                if h > 0.0:
                    value += gamma * h
                    cnt[jj] += 1.0
                    w += gamma
                    n_active += 1
            if w > 0.0:
                for c in range(d):
                    t = w * (Z[i, c] - Z[l, c])
                    R[i, c] -= t
                    R[l, c] += t
        for jj in range(k):
            j = tn[i, jj]
            w = (1.0 - gamma) + gamma * cnt[jj]
            for c in range(d):
                t = w * (Z[i, c] - Z[j, c])
                R[i, c] += t
                R[j, c] -= t
    return value, n_active, R, n_examined


@njit(cache=True)
def screened_loss(Z, R_ref, delta, tn, y, margin, gamma):  # pragma: no cover
    r"""Objective and :math:`R = \mathrm{Lap}(W) Z`, skipping provably inactive pairs.

    ``R_ref[i, l]`` is the (unsquared) distance of ``i`` and ``l`` at a reference
    point and ``delta[p]`` how far point ``p`` moved since, so the current distance
    is at least ``R_ref[i, l] - delta[i] - delta[l]`` (triangle inequality). If that
    bound's square is >= ``margin + max_j D_ij`` (exact current target distances),
    every triplet ``(i, j, l)`` is inactive and ``l`` is skipped without computing
    its distance. Exact: the result equals :func:`dense_weights`'.

    Returns ``(value, n_active, R, n_examined)``.
    """
    unused = np.empty((0, 0))
    return _hinge_loss(Z, unused, R_ref, delta, False, tn, y, margin, gamma)


@njit(cache=True)
def distance_loss(D, Z, tn, y, margin, gamma):  # pragma: no cover - compiled
    r"""Objective and :math:`R = \mathrm{Lap}(W) Z` from precomputed impostor distances.

    ``D`` holds every squared distance (one GEMM, :func:`_sq_dists`); the target
    distances are recomputed exactly from ``Z`` (``n k d``, cheap) and an impostor
    ``l`` costs O(1) unless ``D[i, l] < margin + max_j D_ij`` (the same rule as the
    screen of :func:`screened_loss` with a fresh reference). The gradient is
    accumulated only over active pairs, so the evaluation costs one ``n^2 d`` GEMM
    plus ``O(n^2 k + (n k + n_active) d)`` instead of ``n_examined * d`` scalar work.

    Returns ``(value, n_active, R, n_examined)`` as :func:`screened_loss`.
    """
    return _hinge_loss(Z, D, D, np.empty(0), True, tn, y, margin, gamma)


# L-BFGS vector updates on kernel maps (10^6 entries of L at n = 1000): numpy's
# ``q -= a * y`` makes a temporary and passes over memory five times where one
# loop passes three. Each entry gets numpy's two roundings, the product and then
# the sum (no fastmath: LLVM does not contract them into one FMA), so the
# iterates are bit for bit those of the numpy expressions
# (tests/methods/test_lmnn.py).


@njit(cache=True)
def sub_scaled(q, a, y):
    """``q -= a * y`` in place."""
    if q.shape[0] != y.shape[0]:
        raise ValueError("sub_scaled: q and y differ in length")
    for i in range(q.shape[0]):
        q[i] = q[i] - a * y[i]


@njit(cache=True)
def add_scaled(q, c, s):
    """``q += c * s`` in place."""
    if q.shape[0] != s.shape[0]:
        raise ValueError("add_scaled: q and s differ in length")
    for i in range(q.shape[0]):
        q[i] = q[i] + c * s[i]


@njit(cache=True)
def step_from(x, t, p):
    """``x + t * p``, a new array."""
    if x.shape[0] != p.shape[0]:
        raise ValueError("step_from: x and p differ in length")
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] + t * p[i]
    return out
