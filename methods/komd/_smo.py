r"""Two-constraint SMO for the KOMD problem (arbf eq. 2), compiled with numba.

The problem, with :math:`a = y \odot \gamma`::

    min_gamma  f(gamma) = (1 - lam) * gamma' Y K Y gamma + lam * gamma' gamma
    s.t.       gamma >= 0,  sum_{i in +} gamma_i = 1,  sum_{i in -} gamma_i = 1.

Each equality constraint involves one class only, so a feasible step moves mass
between two examples of the *same* class: ``gamma_i += t, gamma_j -= t``. Along that
direction (``y_i = y_j``) the curvature of ``f`` is
``2 * ((1 - lam) (K_ii + K_jj - 2 K_ij) + 2 lam)`` and the slope is ``g_i - g_j`` with
``g = 2 (1 - lam) Y K Y gamma + 2 lam gamma`` the gradient. The KKT conditions of
the two simplices are ``max_{j: gamma_j > 0} g_j - min_i g_i <= tol`` within each
class (the same multiplier for every member of a class).

Working-set selection is second-order (as WSS2 of Fan, Chen and Lin 2005): the
donor ``j`` is the positive-mass example of largest gradient in the class with the
larger violation, the receiver ``i`` maximizes ``(g_j - g_i)^2 / curvature`` over the
members of that class with ``g_i < g_j``. The gradient is updated in O(n) per step
from two rows of ``K``; ``Q`` is never formed.

The loops are written for the compiler, not for brevity (each change was timed
against one fused loop and gives the same iterates bit for bit; benchmarks/README.md,
"KOMD solver and ARBF iteration"): the gradient update is its own loop so it
vectorizes, the per-class extremes keep their running values in scalars, the
receiver scan visits only the class's members, and the full gradient sums eight
rows at a time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Default stopping tolerance on the per-class KKT gap ``max g_j - min g_i``.
KOMD_TOL = 1e-8

_CURV_FLOOR = 1e-12


@njit(cache=True)
def _gradient(K, y, lam, gamma):
    # eight rows at a time: eight independent sums, each in the order of a one-row
    # loop (so the same bits), keep the floating-point units busy
    n = K.shape[0]
    g = np.empty(n)
    a = y * gamma
    acc = np.empty(8)
    i0 = 0
    while i0 + 8 <= n:
        for r in range(8):
            acc[r] = 0.0
        for j in range(n):
            aj = a[j]
            for r in range(8):
                acc[r] += K[i0 + r, j] * aj
        for r in range(8):
            i = i0 + r
            g[i] = 2.0 * ((1.0 - lam) * y[i] * acc[r] + lam * gamma[i])
        i0 += 8
    for i in range(i0, n):
        s = 0.0
        for j in range(n):
            s += K[i, j] * a[j]
        g[i] = 2.0 * ((1.0 - lam) * y[i] * s + lam * gamma[i])
    return g


@njit(cache=True)
def _class_extremes(g, y, gamma):
    """Per class (+1, -1): min gradient, max gradient over gamma > 0 and its index."""
    mn0 = np.inf
    mn1 = np.inf
    mx0 = -np.inf
    mx1 = -np.inf
    j0 = -1
    j1 = -1
    for a in range(g.shape[0]):
        ga = g[a]
        if y[a] > 0:
            if ga < mn0:
                mn0 = ga
            if ga > mx0 and gamma[a] > 0.0:
                mx0 = ga
                j0 = a
        else:
            if ga < mn1:
                mn1 = ga
            if ga > mx1 and gamma[a] > 0.0:
                mx1 = ga
                j1 = a
    return mn0, mx0, j0, mn1, mx1, j1


@njit(cache=True)
def komd_smo(K, y, lam, gamma, tol, max_iter):
    """Solve arbf eq. 2 in place from a feasible ``gamma``.

    Parameters
    ----------
    K : (n, n) C-contiguous float64 Gram matrix of the training examples.
    y : (n,) float64 labels in {-1, +1}.
    lam : float in [0, 1].
    gamma : (n,) float64, feasible start (overwritten with the solution).
    tol : KKT gap at which to stop.
    max_iter : cap on the number of pair updates.

    Returns
    -------
    n_iter : int
    gap : float, the final KKT gap (``<= tol`` when converged).
    """
    n = K.shape[0]
    diag = np.empty(n)  # contiguous: the receiver scan reads K[a, a] of each member
    members = np.empty((2, n), dtype=np.int64)  # row 0: the +1 class, row 1: -1
    counts = np.zeros(2, dtype=np.int64)
    for a in range(n):
        diag[a] = K[a, a]
        c = 0 if y[a] > 0 else 1
        members[c, counts[c]] = a
        counts[c] += 1
    g = _gradient(K, y, lam, gamma)
    mn0, mx0, j0, mn1, mx1, j1 = _class_extremes(g, y, gamma)
    it = 0
    gap = np.inf
    while it < max_iter:
        # the class with the larger violation, and its donor j (largest gradient
        # among the examples that still carry mass)
        gap0 = mx0 - mn0 if j0 >= 0 else -np.inf
        gap1 = mx1 - mn1 if j1 >= 0 else -np.inf
        if gap0 >= gap1:
            gap, c, cls, j = gap0, 0, 1.0, j0
        else:
            gap, c, cls, j = gap1, 1, -1.0, j1
        if gap <= tol:
            break
        # receiver: second-order gain within the class
        Kj = K[j]
        Kjj = Kj[j]
        gj = g[j]
        mem = members[c]
        i = -1
        best_gain = -1.0
        for b in range(counts[c]):
            a = mem[b]
            if g[a] < gj:
                curv = (1.0 - lam) * (diag[a] + Kjj - 2.0 * Kj[a]) + 2.0 * lam
                if curv < _CURV_FLOOR:
                    curv = _CURV_FLOOR
                d = gj - g[a]
                gain = d * d / curv
                if gain > best_gain:
                    best_gain = gain
                    i = a
        curv = (1.0 - lam) * (K[i, i] + Kjj - 2.0 * Kj[i]) + 2.0 * lam
        if curv < _CURV_FLOOR:
            curv = _CURV_FLOOR
        # f(t) = f + t (g_i - g_j) + t^2 curv   ->   t* = (g_j - g_i) / (2 curv)
        t = (gj - g[i]) / (2.0 * curv)
        if t >= gamma[j]:
            t = gamma[j]
            gamma[j] = 0.0
        else:
            gamma[j] -= t
        gamma[i] += t
        # K is symmetric, so rows i and j (contiguous) stand for columns
        s = 2.0 * t * (1.0 - lam) * cls
        Ki = K[i]
        for a in range(n):
            g[a] += s * y[a] * (Ki[a] - Kj[a])
        g[i] += 2.0 * t * lam
        g[j] -= 2.0 * t * lam
        mn0, mx0, j0, mn1, mx1, j1 = _class_extremes(g, y, gamma)
        it += 1
    if it == max_iter:
        # stopped by the cap: the gap after the last update, not the one before it
        gap0 = mx0 - mn0 if j0 >= 0 else -np.inf
        gap1 = mx1 - mn1 if j1 >= 0 else -np.inf
        gap = max(gap0, gap1)
    return it, gap
