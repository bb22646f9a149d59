"""Compiled pass of :func:`methods._validation.check_psd_kernel` (numba, cache=True).

Kept apart from ``_validation`` so that importing ``methods`` does not import numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Square tiles: the transposed reads K[j, i] stay in cache (64 x 64 doubles, 32 kB).
_TILE = 64


@njit(cache=True)
def symmetrize_lower(K: np.ndarray, T: np.ndarray) -> tuple[float, float]:
    """Lower triangle of ``S = (K + K') / 2`` into ``T = S.T``; max |K - K'|, ||S||_F.

    ``K`` is C-ordered float64 (n, n); ``T`` is the C-ordered transpose of the
    F-ordered work array ``S``, so ``T[j, i] = S[i, j]`` fills the lower triangle
    of ``S`` row by row. Each entry is ``(K[i, j] + K[j, i]) / 2``, the operations
    of ``(K + K.T) / 2``, so the triangle is bit-identical to numpy's; one pass
    over ``K`` in tiles instead of several numpy passes and temporaries.
    """
    n = K.shape[0]
    asym = 0.0
    diag2 = 0.0
    off2 = 0.0
    for jb in range(0, n, _TILE):
        je = min(jb + _TILE, n)
        for ib in range(jb, n, _TILE):
            ie = min(ib + _TILE, n)
            for j in range(jb, je):
                for i in range(max(ib, j), ie):
                    a = K[i, j]
                    b = K[j, i]
                    d = abs(a - b)
                    if d > asym:
                        asym = d
                    s = (a + b) / 2.0
                    T[j, i] = s
                    if i == j:
                        diag2 += s * s
                    else:
                        off2 += s * s
    return asym, np.sqrt(diag2 + 2.0 * off2)
