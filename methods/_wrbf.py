r"""SVM with a weighted RBF kernel whose feature weights minimize the dual objective.

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
1.8 ms. The dense formulas
(:func:`squared_difference_stack`, :func:`wrbf_kernel_from_stack`,
:func:`wrbf_gradient_from_stack`) are kept as the reference the tests compare against.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from itertools import combinations
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import (
    _ovr_decision_function,
    check_classification_targets,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from methods._qp import SOLVERS, csvm_dual, solve_box_qp

# Interior-point solvers cannot start from a previous alpha; every other solver of
# methods._qp takes the last iterate's alpha as z0 (the kernel moves little per step).
_COLD_START_SOLVERS = frozenset({"cvxopt"})

# A solve: (K, y in {-1, +1}, alpha of the previous iterate or None) ->
# (alpha, rho, converged, solver iterations).
_Solve = Callable[
    [np.ndarray, np.ndarray, "np.ndarray | None"], tuple[np.ndarray, float, bool, int]
]


# --------------------------------------------------------------------------- kernel
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


def squared_difference_stack(X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """Per-feature squared differences ``D[n, i, j] = (x_{i,n} - y_{j,n})^2``.

    Reference only: shape (n_features, n_rows, n_cols), feature-major so that
    :func:`wrbf_kernel_from_stack` is one ``tensordot`` over the first axis.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = X if Y is None else np.asarray(Y, dtype=np.float64)
    return (X.T[:, :, None] - Y.T[:, None, :]) ** 2


def wrbf_kernel_from_stack(
    D: np.ndarray, weights: np.ndarray, gamma: float = 1.0
) -> np.ndarray:
    """Eq. (9) written densely: ``exp(-gamma * sum_n v_n D_n)`` (reference)."""
    return np.exp(-gamma * np.tensordot(weights, D, axes=1))


def wrbf_gradient_from_stack(
    D: np.ndarray,
    K: np.ndarray,
    coef: np.ndarray,
    gamma: float = 1.0,
    *,
    half_factor: bool = True,
) -> np.ndarray:
    """Eq. (15) written densely at fixed alpha (reference).

    ``coef = y * alpha``. With ``half_factor=True`` this is the exact
    ``dL/dv_n = gamma/2 sum_ij g_i g_j K_ij D_n,ij``; with ``False`` the paper's
    Eq. (15), twice that.
    """
    G = np.outer(coef, coef) * K
    scale = 0.5 * gamma if half_factor else gamma
    return scale * np.tensordot(D, G, axes=([1, 2], [0, 1]))


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
    """
    sv = np.flatnonzero(alpha)
    if 2 * sv.size <= alpha.size:
        g, Xs, Ks = y[sv] * alpha[sv], X[sv], K[np.ix_(sv, sv)]
    else:
        g, Xs, Ks = y * alpha, X, K
    if not need_grad:
        return float(alpha.sum() - 0.5 * g @ (Ks @ g)), None
    M = np.empty((g.size, X.shape[1] + 1))
    M[:, 0] = g
    np.multiply(g[:, None], Xs, out=M[:, 1:])
    W = Ks @ M
    w = W[:, 0]
    objective = float(alpha.sum() - 0.5 * g @ w)
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


# -------------------------------------------------------------------------- solvers
def _solve_libsvm(
    K: np.ndarray,
    y: np.ndarray,
    z0: np.ndarray | None,
    *,
    C: float,
    tol: float | None,
    max_iter: int | None,
) -> tuple[np.ndarray, float, bool, int]:
    """C-SVM dual on a precomputed Gram with LIBSVM (through ``SVC``); no warm start."""
    clf = SVC(
        kernel="precomputed",
        C=C,
        tol=1e-3 if tol is None else tol,
        max_iter=-1 if max_iter is None else max_iter,
    )
    with warnings.catch_warnings():
        # counted and reported once per fit by WRBFSVM instead
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(K, y)
    alpha = np.zeros(y.shape[0])
    # binary SVC: dual_coef_ = y_i alpha_i with classes_[1] = +1 positive
    alpha[clf.support_] = clf.dual_coef_[0] * y[clf.support_]
    np.clip(alpha, 0.0, C, out=alpha)
    return alpha, float(-clf.intercept_[0]), clf.fit_status_ == 0, int(clf.n_iter_[0])


def _solve_qp(
    K: np.ndarray,
    y: np.ndarray,
    z0: np.ndarray | None,
    *,
    C: float,
    solver: str,
    tol: float | None,
    max_iter: int | None,
) -> tuple[np.ndarray, float, bool, int]:
    """C-SVM dual through :func:`methods._qp.solve_box_qp`, warm-started from ``z0``."""
    options: dict = {}
    if tol is not None:
        options["tol"] = tol
    if max_iter is not None:
        options["max_iter"] = max_iter
    if z0 is not None and solver not in _COLD_START_SOLVERS:
        options["z0"] = z0
    res = solve_box_qp(csvm_dual(K, y, C), solver=solver, **options)
    return res.z, float(res.rho), bool(res.converged), int(res.n_iter)


def _resolve_solver(solver: str) -> str:
    """``"auto"``: the QP package's "auto", else its warm-started "smo", else LIBSVM.

    LIBSVM through ``SVC`` pays ~0.7 ms of input validation per call and cannot
    warm start, which dominates small multi-class sets (ecoli: 8 problems x 101
    solves), so the numba SMO of :mod:`methods._qp` is preferred whenever it is
    there.
    """
    if solver != "auto":
        return solver
    for name in ("auto", "smo"):
        if name in SOLVERS:
            return name
    return "libsvm"


def _make_solve(
    solver: str, C: float, tol: float | None, max_iter: int | None
) -> _Solve:
    solver = _resolve_solver(solver)
    if solver == "libsvm":
        return lambda K, y, z0: _solve_libsvm(K, y, z0, C=C, tol=tol, max_iter=max_iter)
    return lambda K, y, z0: _solve_qp(
        K, y, z0, C=C, solver=solver, tol=tol, max_iter=max_iter
    )


# -------------------------------------------------------------------------- descent
def wrbf_descent(
    X: np.ndarray,
    problems: list[tuple[np.ndarray, np.ndarray]],
    *,
    solve: _Solve,
    gamma: float = 1.0,
    eta: float = 0.001,
    n_iter: int = 100,
    nonneg: bool = True,
    half_factor: bool = False,
) -> dict:
    r"""Gradient descent on one shared ``v`` over binary C-SVM problems, Sec. 4.3.

    Iterate ``t = 0..n_iter``: build ``K_v`` (Eq. (9)), solve every problem (warm
    start from its previous alpha), record :math:`L_t = \sum_p L^{(p)}_\mathrm{dual}`,
    keep the iterate with the lowest ``L_t`` (ties keep the earliest, so ``t = 0``,
    the plain RBF, wins when nothing improves); then, for ``t < n_iter``,
    ``v <- v - eta * sum_p dL^{(p)}/dv`` (Eq. (10), (15)), clip at 0 if ``nonneg``,
    and rescale to ``||v||_1 = d``. ``n_iter + 1`` SVM solves per problem.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    problems : list of (indices, labels)
        Each problem trains on ``X[indices]`` with labels in {-1, +1}.
    solve : callable
        ``(K, y, alpha_prev) -> (alpha, rho, converged, n_iter)``.
    gamma, eta, n_iter, nonneg, half_factor
        As in :class:`WRBFSVM`.

    Returns
    -------
    result : dict
        ``weights`` (kept ``v``), ``alphas`` and ``rhos`` (kept model, per problem),
        ``best_iter``, ``history`` (``L_t`` for every solved iterate), ``n_steps``
        (updates of ``v`` made), ``solver_n_iter`` (shape (n_steps + 1, n_problems)),
        ``converged`` (same shape, per solve), ``stalled`` (True when every weight
        was clipped to 0 and the descent stopped early).
    """
    n, d = X.shape
    v = np.ones(d)
    full = [
        idx.shape[0] == n and np.array_equal(idx, np.arange(n)) for idx, _ in problems
    ]
    sub_X = [X if f else X[idx] for f, (idx, _) in zip(full, problems, strict=True)]
    scale = 0.5 * gamma if half_factor else gamma
    alphas: list[np.ndarray | None] = [None] * len(problems)
    history: list[float] = []
    solver_iters: list[list[int]] = []
    converged: list[list[bool]] = []
    best: dict = {}
    stalled = False
    n_steps = 0
    for t in range(n_iter + 1):
        K = wrbf_kernel(X, weights=v, gamma=gamma)
        need_grad = t < n_iter
        total = 0.0
        s_total = np.zeros(d)
        rhos = []
        its, convs = [], []
        for p, (idx, y) in enumerate(problems):
            Kp = K if full[p] else K[np.ix_(idx, idx)]
            alpha, rho, conv, it = solve(Kp, y, alphas[p])
            alphas[p] = alpha
            rhos.append(rho)
            its.append(it)
            convs.append(conv)
            obj, s = _objective_and_grad_sum(sub_X[p], Kp, y, alpha, need_grad)
            total += obj
            if need_grad:
                s_total += s
        history.append(total)
        solver_iters.append(its)
        converged.append(convs)
        if not best or total < best["objective"]:
            best = {
                "objective": total,
                "weights": v.copy(),
                "alphas": [a.copy() for a in alphas],
                "rhos": list(rhos),
                "best_iter": t,
            }
        if not need_grad:
            break
        v_new = v - eta * scale * s_total
        if nonneg:
            np.maximum(v_new, 0.0, out=v_new)
        norm = np.abs(v_new).sum()
        if not norm > 0.0:
            # every weight clipped: the L1 rescaling is undefined, v stays as it was
            stalled = True
            break
        v = v_new * (d / norm)
        n_steps += 1
    return {
        **best,
        "history": np.asarray(history),
        "n_steps": n_steps,
        "solver_n_iter": np.asarray(solver_iters, dtype=np.int64),
        "converged": np.asarray(converged, dtype=bool),
        "stalled": stalled,
    }


# ------------------------------------------------------------------------ estimator
class WRBFSVM(ClassifierMixin, BaseEstimator):
    r"""C-SVM with a weighted RBF kernel trained on the dual objective (WRBF).

    Solves wrbf Sec. 4.3: the kernel is Eq. (9),
    :math:`K_v(x, y) = \exp(-\gamma \sum_n v_n (x_n - y_n)^2)`; starting from
    ``v = 1`` the SVM is trained, ``v`` takes a gradient step (Eq. (10)) against the
    gradient (11)-(15) of the dual objective (5) at the SVM's alpha (exact by
    Danskin's theorem), is rescaled to constant L1 norm ``d`` and the SVM is
    retrained, ``n_iter`` times; the ``v`` (and SVM) with the lowest dual objective
    is kept (Sec. 4.3, Sec. 5: "if no improvement was achieved the WRBF would be
    identical to the RBF").

    ``WRBFSVM(n_iter=0)`` is exactly the RBF C-SVM with the same ``C``, ``gamma``
    and multi-class rule (one solve per binary problem with ``v = 1``,
    ``K = exp(-gamma ||x - y||^2)``), so both columns of wrbf Table 1 come from this
    class. A fitted WRBF model also carries its RBF start in
    ``dual_objective_rbf_`` (``dual_objective_history_[0]``), but not the RBF
    model's predictions: fit ``n_iter=0`` for those.

    Parameters
    ----------
    C : float, default=1.0
        Box constraint of the C-SVM (wrbf Sec. 5: 1).
    gamma : float, default=1.0
        Kernel width of Eq. (9) (wrbf Sec. 5: 1). Because ``||v||_1`` is held at
        ``d``, the descent cannot rescale gamma (Sec. 5).
    eta : float, default=0.001
        Learning rate of Eq. (10) (Sec. 4.3: 0.001).
    n_iter : int, default=100
        Gradient steps on ``v``; the SVM is solved ``n_iter + 1`` times (Sec. 4.3:
        "repeated 100 times"). ``0`` gives the plain RBF SVM.
    solver : {"auto", "libsvm"} or a name in ``methods._qp.SOLVERS``, default="auto"
        Solver of each C-SVM dual. A ``methods._qp`` solver other than "cvxopt" is
        warm-started from the previous iterate's alpha. "libsvm" runs scikit-learn's
        ``SVC(kernel="precomputed")`` on the WRBF Gram (no warm start, ~0.7 ms of
        validation per call). "auto" is ``methods._qp``'s "auto" when that package
        offers it, else its "smo", else "libsvm".
    tol : float, default=None
        Stopping tolerance passed to the solver; ``None`` keeps the solver's default
        (LIBSVM: 1e-3).
    max_iter : int, default=None
        Iteration cap passed to the solver; ``None`` keeps the solver's default
        (LIBSVM: no cap).
    nonneg : bool, default=True
        Clip ``v`` at 0 after each step, before rescaling (not in the paper). A
        negative weight turns Eq. (9) into a kernel that is not positive
        semi-definite, so the SVM dual is no longer concave; with ``False`` the
        rescaling keeps ``sum |v_n| = d``.
    half_factor : bool, default=False
        The paper's Eq. (12) drops the 1/2 of the dual objective "for simplicity",
        so Eq. (15) is twice the true gradient
        :math:`\partial L/\partial v_n = \frac{\gamma}{2} \sum_{ij} \alpha_i
        \alpha_j y_i y_j K_{ij} (x_{i,n} - x_{j,n})^2`: the published update with
        eta = 0.001 is an exact-gradient step of 0.002. ``False`` (default) follows
        Eq. (15) as printed; ``True`` uses the exact gradient, which halves the
        effective step (``True`` with ``2 * eta`` gives the default's iterates).
    multiclass : {"ovr", "ovo"}, default="ovr"
        Binary decomposition for more than two classes; the paper does not say
        which (ecoli, glass and iris are multi-class). "ovr": one problem per class
        against the rest, prediction by the largest decision value. "ovo": one
        problem per pair of classes (LIBSVM's scheme), prediction by votes with
        ties to the lower class index. The dual objective of a multi-class model is
        the sum over its binary problems. We chose "ovr" because that sum
        reproduces the RBF dual objectives of Table 1 (mean over 6 donors x 3
        splits: ecoli 245.3, glass 222.0, iris 69.2 against the published 242.79,
        225.93, 68.98) where the one-vs-one sum does not (286.6, 252.7, 44.9).
        Binary problems are the same under both.
    shared_weights : bool, default=True
        Multi-class only (the paper is silent). True: one ``v`` per dataset; its
        objective is the sum of the binary problems' dual objectives, its gradient
        the sum of their gradients, and the kept iterate minimizes that sum. False:
        every binary problem descends and keeps its own ``v`` (``weights_`` then
        has one row per problem).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        For ``multiclass="ovo"`` only, as in ``SVC``: "ovo" returns the pairwise
        decision values, "ovr" scikit-learn's vote-based transform.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    weights_ : ndarray of shape (n_features,) or (n_problems, n_features)
        The kept scaling weight vector ``v`` (one row per binary problem when
        ``shared_weights=False`` with more than two classes).
    dual_objective_ : float
        Dual objective (5) of the kept model, the paper's sign (Table 1, "WRBF");
        summed over the binary problems.
    dual_objective_rbf_ : float
        Dual objective at ``v = 1``, the plain RBF SVM (Table 1, "RBF").
    dual_objective_history_ : ndarray of shape (n_iter_ + 1,)
        Dual objective of every solved iterate; entry 0 is the RBF.
    best_iter_ : int or ndarray of shape (n_problems,)
        Index of the kept iterate (per problem when ``shared_weights=False``).
    objective_ : float
        QP objective of the kept model, ``-dual_objective_`` (the
        :mod:`methods._qp` convention).
    support_ : ndarray of shape (n_SV,)
        Indices of the training points with a non-zero alpha in any problem.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        ``y_i alpha_i`` per binary problem (0 where a point is not in it). The
        positive side is ``classes_[1]`` for two classes, class ``c`` for
        problem ``c`` of "ovr" and class ``i`` for pair ``(i, j)`` of "ovo".
    intercept_ : ndarray of shape (n_problems,)
        ``-rho``: problem ``p``'s decision value is
        ``K_v(x, SV) @ dual_coef_[p] + intercept_[p]``.
    n_iter_ : int
        Gradient steps made on ``v`` (``n_iter`` unless the descent stalled).
    solver_n_iter_ : ndarray of shape (n_iter_ + 1, n_problems)
        Solver iterations of every SVM solve.
    fit_status_ : int
        0 when every SVM solve converged, 1 otherwise.
    converged_ : bool
        Every SVM solve converged (the descent itself has no stopping rule).

    See Also
    --------
    sklearn.svm.SVC : The RBF C-SVM that ``n_iter=0`` reproduces (with
        ``multiclass="ovo"``; ``OneVsRestClassifier(SVC())`` for "ovr").

    References
    ----------
    .. [1] A.-D. Pietersma, L. Schomaker, M. Wiering. Kernel Learning in Support
       Vector Machines using Dual-Objective Optimization. BNAIC, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from methods._wrbf import WRBFSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(60, 2))
    >>> y = (X[:, 1] > 0).astype(int)  # feature 0 is noise
    >>> clf = WRBFSVM(eta=0.01, n_iter=20).fit(X, y)
    >>> bool(clf.weights_[1] > clf.weights_[0])
    True
    >>> bool(clf.dual_objective_ <= clf.dual_objective_rbf_)
    True
    """

    paper_name = "WRBF"

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "gamma": [Interval(Real, 0.0, None, closed="neither")],
        "eta": [Interval(Real, 0.0, None, closed="left")],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "solver": [StrOptions({"auto", "libsvm", *SOLVERS})],
        "tol": [Interval(Real, 0.0, None, closed="neither"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "nonneg": ["boolean"],
        "half_factor": ["boolean"],
        "multiclass": [StrOptions({"ovr", "ovo"})],
        "shared_weights": ["boolean"],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
    }

    def __init__(
        self,
        C: float = 1.0,
        gamma: float = 1.0,
        eta: float = 0.001,
        n_iter: int = 100,
        solver: str = "auto",
        tol: float | None = None,
        max_iter: int | None = None,
        nonneg: bool = True,
        half_factor: bool = False,
        multiclass: str = "ovr",
        shared_weights: bool = True,
        decision_function_shape: str = "ovr",
    ) -> None:
        self.C = C
        self.gamma = gamma
        self.eta = eta
        self.n_iter = n_iter
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.nonneg = nonneg
        self.half_factor = half_factor
        self.multiclass = multiclass
        self.shared_weights = shared_weights
        self.decision_function_shape = decision_function_shape

    def fit(self, X: np.ndarray, y: np.ndarray) -> WRBFSVM:
        """Train ``v`` and the SVM on ``(X, y)``, wrbf Sec. 4.3.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, already scaled (wrbf Sec. 5.1 scales them to [-1, 1]).
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : WRBFSVM
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        n_classes = self.classes_.shape[0]
        if n_classes < 2:
            raise ValueError(
                f"WRBF-SVM needs samples of at least 2 classes; got only class "
                f"{self.classes_[0]} in {X.shape[0]} samples."
            )
        problems = self._binary_problems(y_idx, n_classes)
        solve = _make_solve(self.solver, float(self.C), self.tol, self.max_iter)
        options = {
            "solve": solve,
            "gamma": float(self.gamma),
            "eta": float(self.eta),
            "n_iter": int(self.n_iter),
            "nonneg": bool(self.nonneg),
            "half_factor": bool(self.half_factor),
        }
        if not self.shared_weights and len(problems) > 1:
            self._fit_separate(X, problems, options)
        else:
            self._fit_shared(X, problems, options)
        self.objective_ = -self.dual_objective_
        self.dual_objective_rbf_ = float(self.dual_objective_history_[0])
        self.converged_ = bool(self._converged.all())
        self.fit_status_ = 0 if self.converged_ else 1
        if not self.converged_:
            bad = int((~self._converged).sum())
            warnings.warn(
                f"WRBF-SVM: {bad} of {self._converged.size} SVM solves stopped before "
                f"convergence (solver={self.solver!r}, max_iter={self.max_iter}); "
                "raise max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        del self._converged
        return self

    def _binary_problems(
        self, y_idx: np.ndarray, n_classes: int
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """(indices, labels in {-1, +1}) of each binary problem; see ``dual_coef_``."""
        n = y_idx.shape[0]
        if n_classes == 2:
            return [(np.arange(n), np.where(y_idx == 1, 1.0, -1.0))]
        if self.multiclass == "ovr":
            return [
                (np.arange(n), np.where(y_idx == c, 1.0, -1.0))
                for c in range(n_classes)
            ]
        problems = []
        for i, j in combinations(range(n_classes), 2):
            idx = np.flatnonzero((y_idx == i) | (y_idx == j))
            problems.append((idx, np.where(y_idx[idx] == i, 1.0, -1.0)))
        return problems

    def _fit_shared(self, X: np.ndarray, problems: list, options: dict) -> None:
        res = wrbf_descent(X, problems, **options)
        self._warn_stalled([res])
        self.weights_ = res["weights"]
        self._problem_weights = np.tile(res["weights"], (len(problems), 1))
        self.dual_objective_ = float(res["objective"])
        self.dual_objective_history_ = res["history"]
        self.best_iter_ = int(res["best_iter"])
        self.n_iter_ = int(res["n_steps"])
        self.solver_n_iter_ = res["solver_n_iter"]
        self._converged = res["converged"]
        self._set_model(X, problems, res["alphas"], res["rhos"])

    def _fit_separate(self, X: np.ndarray, problems: list, options: dict) -> None:
        results = []
        for idx, y in problems:
            sub = wrbf_descent(X[idx], [(np.arange(idx.shape[0]), y)], **options)
            results.append(sub)
        self._warn_stalled(results)
        length = max(r["history"].shape[0] for r in results)

        def padded(a: np.ndarray) -> np.ndarray:
            # a stalled problem keeps its last iterate: repeat its last row
            return np.concatenate([a, np.repeat(a[-1:], length - a.shape[0], axis=0)])

        self.weights_ = np.array([r["weights"] for r in results])
        self._problem_weights = self.weights_
        self.dual_objective_ = float(sum(r["objective"] for r in results))
        self.dual_objective_history_ = np.sum(
            [padded(r["history"]) for r in results], axis=0
        )
        self.best_iter_ = np.array([r["best_iter"] for r in results])
        self.n_iter_ = max(int(r["n_steps"]) for r in results)
        self.solver_n_iter_ = np.hstack([padded(r["solver_n_iter"]) for r in results])
        self._converged = np.hstack([r["converged"].ravel() for r in results])
        self._set_model(
            X,
            problems,
            [r["alphas"][0] for r in results],
            [r["rhos"][0] for r in results],
        )

    @staticmethod
    def _warn_stalled(results: list[dict]) -> None:
        if any(r["stalled"] for r in results):
            warnings.warn(
                "WRBF-SVM: a gradient step clipped every weight to 0, so ||v||_1 "
                "could not be restored; the descent stopped early. Lower eta.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _set_model(
        self, X: np.ndarray, problems: list, alphas: list, rhos: list
    ) -> None:
        coef = np.zeros((len(problems), X.shape[0]))
        for p, ((idx, y), alpha) in enumerate(zip(problems, alphas, strict=True)):
            coef[p, idx] = y * alpha
        self.support_ = np.flatnonzero(np.any(coef != 0.0, axis=0))
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = coef[:, self.support_]
        self.intercept_ = -np.asarray(rhos, dtype=np.float64)

    def _problem_decisions(self, X: np.ndarray) -> np.ndarray:
        """Decision values of every binary problem, shape (n_samples, n_problems)."""
        out = np.empty((X.shape[0], self.dual_coef_.shape[0]))
        weights, inverse = np.unique(self._problem_weights, axis=0, return_inverse=True)
        for k, v in enumerate(weights):
            rows = np.flatnonzero(inverse.ravel() == k)
            cols = np.flatnonzero(np.any(self.dual_coef_[rows] != 0.0, axis=0))
            K = wrbf_kernel(X, self.support_vectors_[cols], weights=v, gamma=self.gamma)
            out[:, rows] = K @ self.dual_coef_[np.ix_(rows, cols)].T
        return out + self.intercept_

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Decision values, wrbf Eq. (6) with the WRBF kernel and intercept.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        dec : ndarray of shape (n_samples,), (n_samples, n_classes) or \
(n_samples, n_pairs)
            Two classes: positive means ``classes_[1]``. "ovr": one column per
            class. "ovo": see ``decision_function_shape``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        dec = self._problem_decisions(X)
        n_classes = self.classes_.shape[0]
        if n_classes == 2:
            return dec[:, 0]
        if self.multiclass == "ovr" or self.decision_function_shape == "ovo":
            return dec
        return _ovr_decision_function(dec < 0, -dec, n_classes)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class labels: sign for two classes, else the largest one-vs-rest value
        ("ovr") or one-vs-one votes with ties to the lower class index ("ovo").
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        dec = self._problem_decisions(X)
        n_classes = self.classes_.shape[0]
        if n_classes == 2:
            return self.classes_[(dec[:, 0] > 0).astype(int)]
        if self.multiclass == "ovr":
            return self.classes_[np.argmax(dec, axis=1)]
        votes = np.zeros((X.shape[0], n_classes), dtype=np.int64)
        for p, (i, j) in enumerate(combinations(range(n_classes), 2)):
            positive = dec[:, p] > 0
            votes[positive, i] += 1
            votes[~positive, j] += 1
        return self.classes_[np.argmax(votes, axis=1)]
