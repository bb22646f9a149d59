"""The LMNN solver's L-BFGS with numpy's vector expressions (before session 14).

The reference that ``methods.metric_learning._lmnn_solver.lbfgs``, whose vector
updates are compiled loops, must follow bit for bit
(``tests/methods/test_lmnn.py``) and is timed against (``bench_lmnn.py --lbfgs``).
"""

from __future__ import annotations

import numpy as np


def lbfgs_numpy(fun, x0, *, max_iter, tol, memory=10, callback=None) -> dict:
    """``methods.metric_learning._lmnn_solver.lbfgs`` as first written, with
    numpy's vector expressions; same arguments and result dict (status omitted)."""
    x = np.array(x0, dtype=np.float64)
    f, g = fun(x)
    S, Y, rhos = [], [], []
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        q = g.copy()
        alphas = []
        for s_, y_, r_ in zip(reversed(S), reversed(Y), reversed(rhos)):
            a_ = r_ * (s_ @ q)
            q -= a_ * y_
            alphas.append(a_)
        if S:
            q *= (S[-1] @ Y[-1]) / (Y[-1] @ Y[-1])
        else:
            q /= max(np.linalg.norm(g), 1e-300)
        for s_, y_, r_, a_ in zip(S, Y, rhos, reversed(alphas)):
            q += (a_ - r_ * (y_ @ q)) * s_
        p = -q
        slope = g @ p
        if not slope < 0.0:
            S, Y, rhos = [], [], []
            p = -g / max(np.linalg.norm(g), 1e-300)
            slope = g @ p
        t = 1.0
        for _ in range(40):
            x_new = x + t * p
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * t * slope:
                break
            denom = 2.0 * (f_new - f - t * slope)
            t_q = -slope * t * t / denom if denom > 0 else 0.5 * t
            t = min(max(t_q, 0.1 * t), 0.5 * t)
        else:
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
        if decrease <= tol:
            break
    return {"x": x, "fun": f, "nit": n_iter, "status": 1, "message": "reference"}

