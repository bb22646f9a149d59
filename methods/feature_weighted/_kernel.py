r"""The weighted RBF kernel of wrbf Eq. (9), its dual objective and gradient.

Implements wrbf Sec. 3.1 and 4.3: the weighted RBF kernel, Eq. (9),

.. math:: K_v(x, y) = \exp\bigl(-\gamma \textstyle\sum_n v_n (x_n - y_n)^2\bigr),

and the descent of Eq. (10)-(15) on the scaling weight vector ``v``: start from
``v = 1`` (the plain RBF kernel), train the SVM, step ``v`` against the gradient of
the dual objective :math:`L_\mathrm{dual}` (Eq. (5), maximized over alpha, then
minimized over ``v``), keep ``||v||_1`` constant, retrain, 100 times; keep the ``v``
with the lowest dual objective (Sec. 4.3, last paragraph; Sec. 5).

By Danskin's theorem the derivative of the optimal dual value
:math:`L^*(v) = \max_\alpha L(\alpha, v)` is the partial derivative at the optimal
alpha (the constraints do not depend on ``v``):

.. math::

    \frac{\partial L^*}{\partial v_n}
    = -\frac{1}{2} \sum_{ij} \alpha_i \alpha_j y_i y_j
      \frac{\partial K_{ij}}{\partial v_n}
    = \frac{\gamma}{2} \sum_{ij} \alpha_i \alpha_j y_i y_j K_{ij} D^{(n)}_{ij},
    \qquad D^{(n)}_{ij} = (x_{i,n} - x_{j,n})^2.

The paper's Eq. (12) drops the 1/2 ("for simplicity"), so its Eq. (15) is twice this
gradient; see ``half_factor`` of :class:`WRBFSVM`.

Fast path. Neither the kernel nor the gradient needs the ``d`` stacked ``n x n``
matrices ``D^{(n)}``: with :math:`\tilde X = X \operatorname{diag}(\sqrt v)` the
weighted distance is
:math:`\|\tilde x_i\|^2 + \|\tilde x_j\|^2 - 2 \tilde x_i \cdot \tilde x_j`
(one ``syrk``), and with ``g = y * alpha``, ``w = K g``, ``W = K (g X)``,

.. math::

    \sum_{ij} g_i g_j K_{ij} D^{(n)}_{ij}
    = 2 \sum_i g_i x_{i,n}^2 w_i - 2 \sum_i g_i x_{i,n} W_{i,n},

one ``n x n x (d + 1)`` GEMM that also yields ``g'Kg`` for the objective. Both read
``O(n^2)`` memory per iteration where the stacked ``D`` (``n x n x d`` doubles, 48 MB
for pima with noise) is streamed twice; at ``n = 615, d = 16`` (one BLAS thread) the
kernel takes 0.8 ms instead of 4.0 ms and objective plus gradient 0.4 ms instead of
1.8 ms. tests/methods/test_wrbf.py holds the dense formulas (the stacked ``D``) as
the reference these are tested against.
"""

from __future__ import annotations

import numpy as np


def wrbf_kernel(
    X: np.ndarray,
    Y: np.ndarray | None = None,
    *,
    weights: np.ndarray,
    gamma: float = 1.0,
) -> np.ndarray:
    r"""Weighted RBF kernel block, wrbf Eq. (9).

    :math:`K_{ij} = \exp(-\gamma \sum_n v_n (x_{i,n} - y_{j,n})^2)`, computed from
    one matrix product of the weighted rows (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
    Y : ndarray of shape (n_cols, n_features), default=None
        Column points (the training points for a test block); ``None`` means ``X``.
    weights : ndarray of shape (n_features,)
        The scaling weight vector ``v``. Negative entries are allowed (then the
        block is no longer a positive semi-definite kernel).
    gamma : float, default=1.0

    Returns
    -------
    K : ndarray of shape (n_rows, n_cols)
    """
    X = np.asarray(X, dtype=np.float64)
    v = np.asarray(weights, dtype=np.float64)
    if v.shape != (X.shape[1],):
        raise ValueError(
            f"weights has shape {v.shape} but X has {X.shape[1]} features; pass one "
            "weight per feature."
        )
    nonneg = bool(np.all(v >= 0))
    gv = gamma * v
    # E = 2 gamma x'Vy - gamma x'Vx - gamma y'Vy: gamma and the 2 ride in the GEMM
    # operands, so the n x n block sees three passes and the exp
    if Y is None and nonneg:
        # numpy hands A @ A.T to syrk: half the flops of a GEMM
        Xs = X * np.sqrt(2.0 * gv)
        E = Xs @ Xs.T
        h = 0.5 * np.einsum("ij,ij->i", Xs, Xs)
        h_y = h
    else:
        Y_ = X if Y is None else np.asarray(Y, dtype=np.float64)
        E = (X * (2.0 * gv)) @ Y_.T
        h = np.einsum("ij,ij,j->i", X, X, gv)
        h_y = h if Y is None else np.einsum("ij,ij,j->i", Y_, Y_, gv)
    # in place, no n x n temporary: a second fresh 3 MB block per call costs more in
    # page faults than the arithmetic. K_ij and K_ji may differ in the last bit.
    E -= h[:, None]
    E -= h_y[None, :]
    if nonneg:
        # cancellation can leave +1e-16 where the weighted distance is 0
        np.minimum(E, 0.0, out=E)
    if Y is None:
        np.fill_diagonal(E, 0.0)
    return np.exp(E, out=E)



def wrbf_dual_objective(K: np.ndarray, y: np.ndarray, alpha: np.ndarray) -> float:
    """Dual objective of wrbf Eq. (5), ``sum alpha - 1/2 g'Kg`` with ``g = y alpha``.

    This is the paper's sign (the value maximized by the SVM and minimized over
    ``v``); the QP objective of :mod:`methods._qp` is its negative.
    """
    g = y * alpha
    return float(alpha.sum() - 0.5 * g @ K @ g)


def _objective_and_grad_sum(
    X: np.ndarray, K: np.ndarray, y: np.ndarray, alpha: np.ndarray, need_grad: bool
) -> tuple[float, np.ndarray | None]:
    """Dual objective (5) and ``s_n = sum_ij g_i g_j K_ij D_n,ij`` at fixed alpha.

    Only support vectors enter the sums. Copying their block out of ``K`` costs
    more than the GEMM it saves unless they are few (at most half the points).

    The objective comes from the same GEMM whether or not the gradient is needed:
    the descent keeps the iterate of lowest objective with ties to the earliest,
    and a separate matrix-vector product for the last iterate (the one without a
    gradient) rounds differently, so an iterate equal to an earlier one could win
    the tie by one ulp.
    """
    sv = np.flatnonzero(alpha)
    if 2 * sv.size <= alpha.size:
        g, Xs, Ks = y[sv] * alpha[sv], X[sv], K[np.ix_(sv, sv)]
    else:
        g, Xs, Ks = y * alpha, X, K
    M = np.empty((g.size, X.shape[1] + 1))
    M[:, 0] = g
    np.multiply(g[:, None], Xs, out=M[:, 1:])
    W = Ks @ M
    w = W[:, 0]
    objective = float(alpha.sum() - 0.5 * g @ w)
    if not need_grad:
        return objective, None
    # sum_ij g_i g_j K_ij (x_in - x_jn)^2
    #   = 2 sum_i g_i x_in^2 (Kg)_i - 2 sum_i g_i x_in (K (g x_n))_i   (K symmetric)
    s = 2.0 * ((g * w) @ (Xs * Xs)) - 2.0 * np.einsum("in,in->n", M[:, 1:], W[:, 1:])
    return objective, s


def wrbf_gradient(
    X: np.ndarray,
    K: np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    gamma: float = 1.0,
    *,
    half_factor: bool = True,
) -> np.ndarray:
    r"""Gradient of the dual objective (5) w.r.t. ``v`` at fixed alpha, Eq. (11)-(15).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training points (the rows of ``K``).
    K : ndarray of shape (n_samples, n_samples)
        ``K_v(X, X)`` at the current ``v``.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    alpha : ndarray of shape (n_samples,)
        Dual variables; at the SVM optimum this is the gradient of the optimal dual
        value (Danskin).
    gamma : float, default=1.0
    half_factor : bool, default=True
        True: the exact :math:`\frac{\gamma}{2}\sum_{ij}\alpha_i\alpha_j y_i y_j
        K_{ij}(x_{i,n}-x_{j,n})^2`. False: Eq. (15) as printed (no 1/2), twice that.

    Returns
    -------
    grad : ndarray of shape (n_features,)
    """
    X = np.asarray(X, dtype=np.float64)
    _, s = _objective_and_grad_sum(
        X, np.asarray(K, dtype=np.float64), np.asarray(y, float), alpha, True
    )
    return (0.5 * gamma if half_factor else gamma) * s
