"""Duals of the SVM family written in the generic box-QP form of :mod:`methods._qp`.

Generic form: ``min 1/2 z'Qz + p'z  s.t.  s'z = 0,  0 <= z_a <= U_a`` with
``Q_ab = s_a s_b K_{i(a) j(b)}`` and ``s_a`` in {-1, +1}.

- C-SVM (mlsvm eq. 1, the dual of LIBSVM): ``z = alpha``, ``s = y``, ``p = -1``,
  ``U = C``.
- SVM_m (mlsvm eq. 14, dual eq. 15): ``z = [alpha; beta]`` (2n variables),
  ``s = [y; -y]``, ``p = [-1; 1 + eps]``, ``U = [C1; C2]``. Maximizing (15) is
  minimizing ``1/2 g'Kg - sum(alpha) + (1 + eps) sum(beta)`` with
  ``g_i = y_i (alpha_i - beta_i)``; the constraint ``sum (alpha_i - beta_i) y_i = 0``
  is ``s'z = 0``. eps-SVM (eq. 7) is the case ``eps = 0``.

In both cases the decision function is ``f(x) = sum_i coef_i k(x, x_i) - rho`` with
``coef = y * alpha`` (C-SVM) or ``coef = y * (alpha - beta)`` (SVM_m).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class BoxQP:
    """Box QP with ``Q = S K[idx][:, idx] S``, ``S = diag(s)``.

    ``K`` is the n x n kernel and ``idx`` maps each of the m variables to its sample, so
    the 2n-variable SVM_m dual never materializes a 2n x 2n matrix.
    """

    K: np.ndarray
    idx: np.ndarray
    s: np.ndarray
    p: np.ndarray
    U: np.ndarray

    @property
    def n_vars(self) -> int:
        return self.idx.shape[0]

    def dense_Q(self) -> np.ndarray:
        """The m x m Hessian (reference solvers and tests only)."""
        return self.s[:, None] * self.K[np.ix_(self.idx, self.idx)] * self.s[None, :]

    def objective(self, z: np.ndarray) -> float:
        g = np.zeros(self.K.shape[0])
        np.add.at(g, self.idx, self.s * z)
        return float(0.5 * g @ self.K @ g + self.p @ z)

    def coef(self, z: np.ndarray) -> np.ndarray:
        """Per-sample dual coefficients ``sum_{a: i(a)=i} s_a z_a``."""
        g = np.zeros(self.K.shape[0])
        np.add.at(g, self.idx, self.s * z)
        return g


def _labels_pm1(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("The dual needs labels in {-1, +1}; encode the classes first.")
    return y


def csvm_dual(K: np.ndarray, y: np.ndarray, C: float | np.ndarray) -> BoxQP:
    """The C-SVM dual (``alpha``; ``0 <= alpha_i <= C``)."""
    y = _labels_pm1(y)
    n = y.shape[0]
    U = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
    return BoxQP(
        K=np.asarray(K, dtype=np.float64),
        idx=np.arange(n),
        s=y.copy(),
        p=-np.ones(n),
        U=U,
    )


def svmm_dual(K: np.ndarray, y: np.ndarray, C1: float, C2: float, eps: float) -> BoxQP:
    """The SVM_m dual, mlsvm eq. (15), over ``z = [alpha; beta]``."""
    y = _labels_pm1(y)
    n = y.shape[0]
    return BoxQP(
        K=np.asarray(K, dtype=np.float64),
        idx=np.concatenate([np.arange(n), np.arange(n)]),
        s=np.concatenate([y, -y]),
        p=np.concatenate([-np.ones(n), np.full(n, 1.0 + eps)]),
        U=np.concatenate([np.full(n, float(C1)), np.full(n, float(C2))]),
    )
