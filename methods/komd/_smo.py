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
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Default stopping tolerance on the per-class KKT gap ``max g_j - min g_i``.
KOMD_TOL = 1e-8

_CURV_FLOOR = 1e-12


@njit(cache=True)
def _gradient(K, y, lam, gamma):
    n = K.shape[0]
    g = np.empty(n)
    a = y * gamma
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += K[i, j] * a[j]
        g[i] = 2.0 * ((1.0 - lam) * y[i] * s + lam * gamma[i])
    return g


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
    g = _gradient(K, y, lam, gamma)
    it = 0
    gap = np.inf
    while it < max_iter:
        # the class with the larger violation, and its donor j (largest gradient
        # among the examples that still carry mass)
        best_gap = -np.inf
        cls = 0.0
        jd = -1
        for c in (1.0, -1.0):
            gmin = np.inf
            gmax = -np.inf
            jmax = -1
            for a in range(n):
                if y[a] == c:
                    if g[a] < gmin:
                        gmin = g[a]
                    if gamma[a] > 0.0 and g[a] > gmax:
                        gmax = g[a]
                        jmax = a
            if jmax >= 0 and gmax - gmin > best_gap:
                best_gap = gmax - gmin
                cls = c
                jd = jmax
        gap = best_gap
        if gap <= tol:
            break
        j = jd
        # receiver: second-order gain within the class
        ir = -1
        best_gain = -1.0
        Kjj = K[j, j]
        for a in range(n):
            if y[a] == cls and g[a] < g[j]:
                curv = (1.0 - lam) * (K[a, a] + Kjj - 2.0 * K[a, j]) + 2.0 * lam
                if curv < _CURV_FLOOR:
                    curv = _CURV_FLOOR
                d = g[j] - g[a]
                gain = d * d / curv
                if gain > best_gain:
                    best_gain = gain
                    ir = a
        i = ir
        curv = (1.0 - lam) * (K[i, i] + Kjj - 2.0 * K[i, j]) + 2.0 * lam
        if curv < _CURV_FLOOR:
            curv = _CURV_FLOOR
        # f(t) = f + t (g_i - g_j) + t^2 curv   ->   t* = (g_j - g_i) / (2 curv)
        t = (g[j] - g[i]) / (2.0 * curv)
        if t >= gamma[j]:
            t = gamma[j]
            gamma[j] = 0.0
        else:
            gamma[j] -= t
        gamma[i] += t
        s = 2.0 * t * (1.0 - lam) * cls
        for a in range(n):
            g[a] += s * y[a] * (K[a, i] - K[a, j])
        g[i] += 2.0 * t * lam
        g[j] -= 2.0 * t * lam
        it += 1
    return it, gap
