"""The value every QP solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class QPResult:
    """Solution of ``min 1/2 z'Qz + p'z  s.t.  s'z = delta, 0 <= z <= U``.

    Attributes
    ----------
    z : ndarray of shape (m,)
        The minimizer.
    rho : float
        Multiplier of the equality constraint in LIBSVM's convention: for every free
        variable ``s_a * (Qz + p)_a = rho``. A decision function built from the dual is
        ``f(x) = sum_a s_a z_a k(x, x_a) - rho`` (so the intercept is ``-rho``).
    objective : float
        ``1/2 z'Qz + p'z`` at ``z``.
    n_iter : int
        Iterations of the solver (SMO pair updates or interior-point steps).
    converged : bool
        True when the solver's stopping rule was met before ``max_iter``.
    solver : str
        Which path produced the result ("smo", "ipm", "cvxopt").
    info : dict
        Solver-specific diagnostics (final KKT violation, duality gap, ...).
    """

    z: np.ndarray
    rho: float
    objective: float
    n_iter: int
    converged: bool
    solver: str
    info: dict = field(default_factory=dict)
