"""SMO for the generic box QP, compiled with numba.

A port of LIBSVM's ``Solver`` (Chang and Lin, ``svm.cpp``) to the problem form of
:class:`~methods._qp._problems.BoxQP`::

    min 1/2 z'Qz + p'z   s.t.  s'z = 0,  0 <= z <= U,   Q_ab = s_a s_b K[i(a), i(b)]

- Working-set selection is WSS2 of Fan, Chen and Lin (2005): the maximal violator
  ``i`` in ``I_up`` and the ``j`` in ``I_low`` that maximizes the second-order gain
  ``(grad_diff)^2 / quad_coef``.
- Shrinking as in LIBSVM: every ``min(m, 1000)`` iterations bound variables that
  cannot re-enter the working set are dropped from the active set; once the
  violation falls under ``10 * tol`` the full gradient is rebuilt (from ``G_bar``,
  the contribution of the variables at their upper bound) and shrinking restarts,
  and the final stopping test is repeated on the whole problem.
- Stopping rule: the maximal KKT violation ``m(z) - M(z) <= tol`` with
  ``m(z) = max_{a in I_up} -s_a G_a`` and ``M(z) = min_{a in I_low} -s_a G_a``.
- ``Q`` is never formed: rows of the dense ``K`` are read directly (K is symmetric,
  so a row is a column, and rows are contiguous in C order). The 2n-variable SVM_m
  dual thus costs the memory of the n x n kernel only, and no kernel cache is needed;
  after shrinking, the block of K of the active variables is copied into one dense
  buffer (at most max(1000, n/2) variables, see ``_COMPACT_MIN``).

References
----------
.. [1] R.-E. Fan, P.-H. Chen, C.-J. Lin. Working set selection using second order
   information for training support vector machines. JMLR 6, 2005.
.. [2] C.-C. Chang, C.-J. Lin. LIBSVM: a library for support vector machines.
   ACM TIST 2(3), 2011.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from methods._qp._problems import BoxQP
from methods._qp._result import QPResult

#: Default stopping tolerance on ``m(z) - M(z)``. LIBSVM's 1e-3 leaves relative
#: objective errors up to 1.4e-5 on the SVM_m duals of wdbc with C = 1000; 1e-4
#: keeps every cell of ``benchmarks/bench_qp.py`` within 1e-6 relative of the
#: cvxopt reference (largest gap 2e-8), for 1.3-1.6x the iterations of 1e-3.
SMO_TOL = 1e-4

# LIBSVM's floor for a non-positive curvature along the working pair.
_TAU = 1e-12
# After shrinking, the kernel block of the active variables is copied into one
# dense buffer when the active set has at most max(_COMPACT_MIN, n / 2) variables
# (n = rows of K): rows of the block are contiguous, so the passes of an iteration
# stream instead of gathering two rows of K through ``ix``. The copy (act^2 reads,
# from the previous block when there is one) pays for itself within a few hundred
# iterations. For n >= 2000 the n / 2 cap keeps the block within a quarter of K's
# memory, about what LIBSVM's kernel cache adds; below, the 8 MB floor can exceed
# that share (a 2n-variable SVM_m dual of n < 1000 can even exceed K). Peak memory
# a fit adds, Gaussian C = 100 (benchmarks/README.md, session 17): 33 MB against
# SVC's 34 MB at n = 4000, 128 MB against 126 MB at n = 8000. At n = 4000-8000 the
# block cuts a Gaussian C-SVM solve by about a third to a half, iterates unchanged.
_COMPACT_MIN = 1000
# Fixed cost of an iteration (selection bookkeeping, pair update) in units of one
# visited active variable: a least-squares fit of 90 timed runs on the wdbc duals
# of benchmarks/bench_qp.py gives ~34 ns per iteration plus ~2.1 ns per visited
# variable.
_ITER_OVERHEAD = 16.0


def _compact_max(n: int) -> int:
    """Largest active set whose kernel block is copied (see ``_COMPACT_MIN``)."""
    return max(_COMPACT_MIN, n // 2)


def default_max_iter(n_vars: int) -> int:
    """LIBSVM's iteration cap: ``max(10_000_000, 100 * m)``."""
    return max(10_000_000, 100 * n_vars)


# The solver state is kept in LIBSVM's permuted order (active variables first) and
# in terms of F_t = -s_t G_t (G = Qz + p), so that
#   m(z) = max_{I_up} F,  M(z) = min_{I_low} F,  and a pair update is the axpy
#   F -= d_i K[i, :] + d_j K[j, :]  with  d = s * (change of z),
# with no sign flips inside the loops. hbar = K @ (sum over the variables u at
# their upper bound of U_u s_u e_{i(u)}) is LIBSVM's G_bar kept per sample (the
# two halves of SVM_m share it).


@njit(cache=True)
def _set_flags(t, y, a, C, inup, inlow):
    upper = a[t] >= C[t]
    lower = a[t] <= 0.0
    if y[t] > 0:
        inup[t] = not upper
        inlow[t] = not lower
    else:
        inup[t] = not lower
        inlow[t] = not upper


@njit(cache=True)
def _swap(t, u, ix, y, q, C, a, F, QD, inup, inlow, perm):
    ix[t], ix[u] = ix[u], ix[t]
    y[t], y[u] = y[u], y[t]
    q[t], q[u] = q[u], q[t]
    C[t], C[u] = C[u], C[t]
    a[t], a[u] = a[u], a[t]
    F[t], F[u] = F[u], F[t]
    QD[t], QD[u] = QD[u], QD[t]
    inup[t], inup[u] = inup[u], inup[t]
    inlow[t], inlow[u] = inlow[u], inlow[t]
    perm[t], perm[u] = perm[u], perm[t]


@njit(cache=True)
def _reconstruct(K, ix, y, q, C, a, F, hbar, act):
    """Rebuild ``F`` of the inactive variables from ``hbar`` and the free ones."""
    m = a.shape[0]
    n = K.shape[0]
    if act == m:
        return
    # Free variables are never shrunk, so they all sit in [0, act).
    gfree = np.zeros(n)
    for t in range(act):
        if 0.0 < a[t] < C[t]:
            gfree[ix[t]] += y[t] * a[t]
    fs = np.flatnonzero(gfree)
    if 3 * (m - act) < n:
        # Few inactive variables: one gathered dot product each.
        for t in range(act, m):
            row = K[ix[t]]
            acc = 0.0
            for k in fs:
                acc += row[k] * gfree[k]
            F[t] = q[t] - hbar[ix[t]] - acc
    else:
        # Many: stream the rows of the free samples once.
        f = np.zeros(n)
        for k in fs:
            row = K[k]
            c = gfree[k]
            for u in range(n):
                f[u] += c * row[u]
        for t in range(act, m):
            F[t] = q[t] - hbar[ix[t]] - f[ix[t]]


@njit(cache=True)
def _is_identity(ix, act):
    for t in range(act):
        if ix[t] != t:
            return False
    return True


@njit(cache=True)
def _violations(F, inup, inlow, act):
    """``(m(z), -M(z))`` over the first ``act`` variables (LIBSVM's Gmax1, Gmax2)."""
    Gmax1 = -np.inf
    Gmax2 = -np.inf
    for t in range(act):
        if inup[t] and F[t] >= Gmax1:
            Gmax1 = F[t]
        if inlow[t] and -F[t] >= Gmax2:
            Gmax2 = -F[t]
    return Gmax1, Gmax2


@njit(cache=True)
def _compact_block(K, buf, old_act, old_pos, old_valid, ix, act):
    """Dense ``K[ix[:act]][:, ix[:act]]`` in the flat buffer ``buf`` (row-major).

    When ``old_valid``, ``buf`` holds the block of the previous active set (size
    ``old_act``) and ``old_pos[t]`` is the old position of the variable now at
    ``t``. Shrinking only moves variables to lower positions (``old_pos[t] >= t``),
    so every entry is read at or after the place it is written to, and a forward
    copy within ``buf`` never reads an overwritten entry: one block in memory. Also
    needs ``act <= old_act`` (shrinking only removes) and ``buf.size >= act**2``.
    Returns the ``(act, act)`` view of ``buf``.
    """
    if old_valid:
        for t in range(act):
            src = old_pos[t] * old_act
            dst = t * act
            for u in range(act):
                buf[dst + u] = buf[src + old_pos[u]]
    else:
        for t in range(act):
            row = K[ix[t]]
            dst = t * act
            for u in range(act):
                buf[dst + u] = row[ix[u]]
    return buf[: act * act].reshape((act, act))


@njit(cache=True)
def _smo_kernel(
    K, idx, s, p, U, z, tol, max_iter, max_work, shrinking, compact_max, Kbuf
):
    """Run SMO in place on ``z`` (feasible on entry).

    ``max_work`` caps the work, counted as the active-set size of every iteration
    plus :data:`_ITER_OVERHEAD`, a deterministic proxy of the running time.

    ``compact_max`` is the largest active set whose kernel block is copied into a
    dense buffer; ``Kbuf`` (float64, 1-D, possibly empty) is that buffer: used when
    non-empty (blocks that do not fit are gathered instead), else allocated at the
    first compaction.

    Returns ``(n_iter, status, rho, objective, violation, n_free, work, Kbuf)`` with
    status 0 (converged), 1 (``max_iter`` reached) or 2 (``max_work`` reached).
    """
    m = z.shape[0]
    n = K.shape[0]
    perm = np.arange(m)
    ix = idx.copy()
    y = s.copy()
    q = -s * p
    C = U.copy()
    a = z.copy()
    QD = np.empty(m)
    inup = np.empty(m, dtype=np.bool_)
    inlow = np.empty(m, dtype=np.bool_)
    for t in range(m):
        QD[t] = K[ix[t], ix[t]]
        _set_flags(t, y, a, C, inup, inlow)

    # F = q - (K g)[ix] with g the per-sample coefficients; hbar likewise for the
    # variables at their upper bound. One pass over the rows that carry weight.
    g = np.zeros(n)
    gu = np.zeros(n)
    for t in range(m):
        if a[t] > 0.0:
            g[ix[t]] += y[t] * a[t]
        if a[t] >= C[t]:
            gu[ix[t]] += y[t] * C[t]
    f = np.zeros(n)
    hbar = np.zeros(n)
    for k in range(n):
        if g[k] != 0.0 or gu[k] != 0.0:
            row = K[k]
            gk = g[k]
            guk = gu[k]
            for u in range(n):
                f[u] += gk * row[u]
                hbar[u] += guk * row[u]
    F = np.empty(m)
    for t in range(m):
        F[t] = q[t] - f[ix[t]]

    act = m
    # Row access: "ident" when ix[:act] is 0..act-1 (a C-SVM before any swap, rows
    # of K used as they are), else the compact block, else gathered into buffers.
    ident = _is_identity(ix, m)
    compact = False
    Kc = Kbuf[:0].reshape((0, 0))
    old_pos = np.arange(m)
    bufi = np.empty(m)
    bufj = np.empty(m)

    unshrink = False
    n_iter = 0
    work = 0.0
    optimal = False
    counter = min(m, 1000) + 1
    violation = np.inf
    while n_iter < max_iter and work < max_work:
        counter -= 1
        if counter == 0:
            counter = min(m, 1000)
            if shrinking:
                Gmax1, Gmax2 = _violations(F, inup, inlow, act)
                prev_act = act
                if not unshrink and Gmax1 + Gmax2 <= tol * 10.0:
                    unshrink = True
                    _reconstruct(K, ix, y, q, C, a, F, hbar, act)
                    act = m
                    compact = False
                for t in range(act):
                    old_pos[t] = t
                t = 0
                while t < act:
                    if (not inup[t] and F[t] > Gmax1) or (
                        not inlow[t] and -F[t] > Gmax2
                    ):
                        act -= 1
                        while act > t:
                            u = act
                            if not (
                                (not inup[u] and F[u] > Gmax1)
                                or (not inlow[u] and -F[u] > Gmax2)
                            ):
                                _swap(t, u, ix, y, q, C, a, F, QD, inup, inlow, perm)
                                old_pos[t], old_pos[u] = old_pos[u], old_pos[t]
                                break
                            act -= 1
                    t += 1
                if act != prev_act or not compact:
                    # One buffer, sized by the first block (or passed in by the
                    # previous stage of an "auto" solve): a larger active set
                    # later is gathered instead, since a second buffer would add
                    # to the first (freed heap chunks stay resident).
                    if (
                        act <= compact_max
                        and act < m
                        and (Kbuf.shape[0] == 0 or Kbuf.shape[0] >= act * act)
                    ):
                        if Kbuf.shape[0] == 0:
                            Kbuf = np.empty(act * act)
                        Kc = _compact_block(
                            K, Kbuf, prev_act, old_pos, compact, ix, act
                        )
                        compact = True
                    else:
                        compact = False
                    ident = _is_identity(ix, act)

        # --- WSS2: i maximal violator in I_up, j best second-order partner in
        # I_low; if the active set is optimal, unshrink and look again.
        i = -1
        j = -1
        for _ in range(2):
            Gmax = -np.inf
            i = -1
            for t in range(act):
                if inup[t] and F[t] >= Gmax:
                    Gmax = F[t]
                    i = t
            Gmax2 = -np.inf
            j = -1
            if i != -1:
                if compact:
                    Ri = Kc[i]
                elif ident:
                    Ri = K[i]
                else:
                    row = K[ix[i]]
                    for t in range(act):
                        bufi[t] = row[ix[t]]
                    Ri = bufi
                QDi = QD[i]
                best = np.inf
                for t in range(act):
                    if inlow[t]:
                        mF = -F[t]
                        if mF >= Gmax2:
                            Gmax2 = mF
                        gd = Gmax + mF
                        if gd > 0.0:
                            quad = QDi + QD[t] - 2.0 * Ri[t]
                            if quad <= 0.0:
                                quad = _TAU
                            od = -(gd * gd) / quad
                            if od <= best:
                                best = od
                                j = t
            violation = Gmax + Gmax2
            if violation > tol and j != -1:
                break
            i = -1
            if act == m:
                break
            _reconstruct(K, ix, y, q, C, a, F, hbar, act)
            act = m
            compact = False
            ident = _is_identity(ix, act)
            counter = 1
        if i == -1:
            optimal = True
            break

        n_iter += 1
        work += act + _ITER_OVERHEAD
        if compact:
            Ri = Kc[i]
            Rj = Kc[j]
        elif ident:
            Ri = K[i]
            Rj = K[j]
        else:
            # bufi already holds row i (gathered during the selection).
            Ri = bufi
            row = K[ix[j]]
            for t in range(act):
                bufj[t] = row[ix[t]]
            Rj = bufj
        # --- Analytic update of the pair, clipped to the box (LIBSVM), written
        # with LIBSVM's G = -s F.
        Ci = C[i]
        Cj = C[j]
        old_ai = a[i]
        old_aj = a[j]
        Gi = -y[i] * F[i]
        Gj = -y[j] * F[j]
        if y[i] != y[j]:
            quad = QD[i] + QD[j] - 2.0 * Ri[j]
            if quad <= 0.0:
                quad = _TAU
            delta = (-Gi - Gj) / quad
            diff = a[i] - a[j]
            a[i] += delta
            a[j] += delta
            if diff > 0.0:
                if a[j] < 0.0:
                    a[j] = 0.0
                    a[i] = diff
            elif a[i] < 0.0:
                a[i] = 0.0
                a[j] = -diff
            if diff > Ci - Cj:
                if a[i] > Ci:
                    a[i] = Ci
                    a[j] = Ci - diff
            elif a[j] > Cj:
                a[j] = Cj
                a[i] = Cj + diff
        else:
            quad = QD[i] + QD[j] - 2.0 * Ri[j]
            if quad <= 0.0:
                quad = _TAU
            delta = (Gi - Gj) / quad
            tot = a[i] + a[j]
            a[i] -= delta
            a[j] += delta
            if tot > Ci:
                if a[i] > Ci:
                    a[i] = Ci
                    a[j] = tot - Ci
            elif a[j] < 0.0:
                a[j] = 0.0
                a[i] = tot
            if tot > Cj:
                if a[j] > Cj:
                    a[j] = Cj
                    a[i] = tot - Cj
            elif a[i] < 0.0:
                a[i] = 0.0
                a[j] = tot

        di = (a[i] - old_ai) * y[i]
        dj = (a[j] - old_aj) * y[j]
        for t in range(act):
            F[t] -= di * Ri[t] + dj * Rj[t]
        _set_flags(i, y, a, C, inup, inlow)
        _set_flags(j, y, a, C, inup, inlow)

        if (old_ai >= Ci) != (a[i] >= Ci):
            c = Ci * y[i] if a[i] >= Ci else -Ci * y[i]
            row = K[ix[i]]
            for k in range(n):
                hbar[k] += c * row[k]
        if (old_aj >= Cj) != (a[j] >= Cj):
            c = Cj * y[j] if a[j] >= Cj else -Cj * y[j]
            row = K[ix[j]]
            for k in range(n):
                hbar[k] += c * row[k]

    status = 0
    if not optimal:
        status = 1 if n_iter >= max_iter else 2
    if act < m:
        _reconstruct(K, ix, y, q, C, a, F, hbar, act)
        act = m
    if status != 0:
        Gmax1, Gmax2 = _violations(F, inup, inlow, m)
        violation = Gmax1 + Gmax2

    # rho as LIBSVM's calculate_rho (there yG = s G = -F): mean over the free
    # variables, else the midpoint of the interval the bound variables leave.
    ub = np.inf
    lb = -np.inf
    sum_free = 0.0
    nr_free = 0
    for t in range(m):
        yG = -F[t]
        if a[t] >= C[t]:
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif a[t] <= 0.0:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            nr_free += 1
            sum_free += yG
    if nr_free > 0:
        rho = sum_free / nr_free
    else:
        rho = (ub + lb) / 2.0

    # 1/2 z'Qz + p'z = 1/2 sum z_t (G_t + p_t) with G + p = -s (F + q).
    obj = 0.0
    for t in range(m):
        obj -= a[t] * y[t] * (F[t] + q[t])
        z[perm[t]] = a[t]
    return n_iter, status, rho, obj / 2.0, violation, nr_free, work, Kbuf


def _numba_array(a: np.ndarray, dtype: type) -> np.ndarray:
    """C-ordered, writable ``dtype`` array (copied only if needed).

    numba compiles one specialization per layout and writability: pinning both
    keeps a single cached compilation (a read-only memmap from joblib would
    otherwise trigger a second one, ~20 s).
    """
    return np.require(a, dtype=dtype, requirements=["C", "W"])


def project_feasible(problem: BoxQP, z0: np.ndarray) -> np.ndarray:
    """A point of ``{s'z = 0, 0 <= z <= U}`` near ``z0``, for warm starts.

    ``z0`` is clipped to the box. If the residual ``s'z`` can be absorbed by an equal
    shift of the free variables without leaving the box, that is done: it keeps the
    warm start's bound variables, hence its active set, untouched (an IPM point
    snapped to its bounds, a solution of a nearby problem). Otherwise the result is
    the Euclidean projection ``clip(z0 - mu s, 0, U)``, with the scalar ``mu`` that
    zeroes ``s'z`` found by bisection (``s'clip(z0 - mu s)`` is non-increasing in
    ``mu``). A warm start from another ``C`` or ``epsilon`` is thus usable as is.

    Raises
    ------
    ValueError
        If ``z0`` has the wrong shape or non-finite entries.
    """
    z0 = np.asarray(z0, dtype=np.float64)
    if z0.shape != (problem.n_vars,):
        raise ValueError(
            f"Warm start z0 must have shape ({problem.n_vars},) like the problem's "
            f"variables; got {z0.shape}."
        )
    if not np.all(np.isfinite(z0)):
        raise ValueError("Warm start z0 contains NaN or infinity.")
    s, U = problem.s, problem.U
    z = np.clip(z0, 0.0, U)
    r = float(s @ z)
    # A rounding-level residue stays: moving a bound variable to absorb it would
    # make it spuriously free (and LIBSVM's rho would average over it).
    if abs(r) <= 1e-13 * max(1.0, float(np.sum(z))):
        return z
    free = (z > 0.0) & (z < U)
    if np.any(free):
        z_free = z[free] - s[free] * (r / np.count_nonzero(free))
        if np.all(z_free >= 0.0) and np.all(z_free <= U[free]):
            z[free] = z_free
            return z

    def h(mu: float) -> float:
        return float(s @ np.clip(z0 - mu * s, 0.0, U))

    # Bracket: for |mu| beyond every |z0| + U the clip saturates on one side.
    span = float(np.max(np.abs(z0)) + np.max(U)) + 1.0
    lo, hi = -span, span
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if h(mid) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * span:
            break
    z = np.clip(z0 - 0.5 * (lo + hi) * s, 0.0, U)
    # Move the last rounding residue onto the free variable with the most room.
    r = float(s @ z)
    a = int(np.argmax(np.minimum(z, U - z)))
    if 0.0 < z[a] < U[a] and 0.0 <= z[a] - s[a] * r <= U[a]:
        z[a] -= s[a] * r
    return z


def solve_smo(
    problem: BoxQP,
    *,
    tol: float = SMO_TOL,
    max_iter: int | None = None,
    z0: np.ndarray | None = None,
    shrinking: bool = True,
    max_work: float = np.inf,
    workspace: dict | None = None,
) -> QPResult:
    """Solve a :class:`BoxQP` with SMO (WSS2, shrinking, optional warm start).

    Parameters
    ----------
    problem : BoxQP
        The problem; ``problem.K`` must be symmetric.
    tol : float, default=SMO_TOL
        Stop when the maximal KKT violation ``m(z) - M(z)`` is at most ``tol``.
    max_iter : int, default=None
        Cap on pair updates; ``None`` is LIBSVM's ``max(10_000_000, 100 * m)``.
    z0 : ndarray of shape (m,), default=None
        Warm start, projected onto the feasible set (:func:`project_feasible`).
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic.
    max_work : float, default=inf
        Budget in visited active variables (plus a fixed cost per iteration); the
        "auto" dispatch uses it to hand slow problems to the interior-point path.
    workspace : dict, default=None
        Opaque scratch memory shared by successive calls on one problem (the
        stages of "auto"): pass the same, initially empty, dict to each call, so
        that a resumed solve reuses the buffer of the active kernel block instead
        of allocating a second one. Clear it to free that buffer.

    Returns
    -------
    QPResult
        ``converged`` is False when ``max_iter`` or ``max_work`` was hit;
        ``info`` holds the final ``violation`` (``m(z) - M(z)``), ``n_free``,
        ``work`` and ``status`` (0 converged, 1 max_iter, 2 max_work).
    """
    m = problem.n_vars
    if max_iter is None:
        max_iter = default_max_iter(m)
    z = np.zeros(m) if z0 is None else project_feasible(problem, z0)
    block = np.empty(0)
    if workspace is not None and "block" in workspace:
        block = _numba_array(np.ravel(workspace["block"]), np.float64)
    n_iter, status, rho, obj, violation, n_free, work, block = _smo_kernel(
        _numba_array(problem.K, np.float64),
        _numba_array(problem.idx, np.int64),
        _numba_array(problem.s, np.float64),
        _numba_array(problem.p, np.float64),
        _numba_array(problem.U, np.float64),
        z,
        float(tol),
        int(max_iter),
        float(max_work),
        bool(shrinking),
        _compact_max(problem.K.shape[0]),
        block,
    )
    if workspace is not None:
        workspace["block"] = block
    return QPResult(
        z=z,
        rho=float(rho),
        objective=float(obj),
        n_iter=int(n_iter),
        converged=status == 0,
        solver="smo",
        info={
            "violation": float(violation),
            "n_free": int(n_free),
            "work": float(work),
            "status": int(status),
            "tol": float(tol),
        },
    )
