r"""The weight step of LMNN-MKL_P: eq. 15-17 of lmnnmkl for a fixed metric ``A``.

With the kernel map of eq. 2 and ``P = mu mu^T`` (eq. 7) the squared distance of a
pair is linear in ``P``:

.. math:: d^2_{A,P}(i, j) = \operatorname{tr}(P\, B_{ij} A B_{ij}^T)
    = \langle P, G_{ij} \rangle,
    \qquad B_{ij} = [(K^i_l - K^j_l)^T]_{l=1..m},

so the LMNN objective of eq. 18 at fixed ``A`` (and fixed target neighbours) is

.. math:: f(P) = (1-\gamma) \sum_{j \leadsto i} \langle P, G_{ij} \rangle
    + \gamma \sum_{j \leadsto i} \sum_{l: y_l \ne y_i}
      [1 + \langle P, G_{ij} - G_{il} \rangle]_+ ,

convex and piecewise linear in ``P``. Eq. 15 minimizes ``f(P) + w tr(P^T W)`` over
``{P PSD, P >= 0, sum_ij P_ij = 1}``; eq. 16 sets ``W = U U^T`` from the eigenvectors
of the ``m - 1`` smallest eigenvalues of the solution; the two alternate until the
``m - 1`` smallest eigenvalues vanish (eq. 17, "global convergence"), for the smallest
``w`` of a grid that gets there (lmnnmkl Sec. 6: ``w in {10^0, ..., 10^8}``).

Solver of eq. 15 (``solve_p_step``): Kelley's cutting-plane method with one slack per
group of anchors (disaggregated cuts of the hinge sum), each master problem a small
SDP solved by cvxopt over the ``m (m + 1) / 2`` entries of ``P``. The hinge part does
not depend on ``w`` or ``W``, so its cuts are kept across the whole eq. 15-17 loop. It
stops when the best objective found is within ``tol`` of the master's lower bound:
the returned ``P`` is certified ``tol``-optimal. The reference of the tests is an
independent cvxopt SDP with one slack per triplet (tests/methods/test_lmnn_mkl.py).

With a linear objective and ``W = 0`` the solution of eq. 15 need not be unique; the
penalty ``w tr(P W)`` then steers it to rank one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse


def kernel_map_projections(K: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``Z[l] = K_l L^T``: the kernel-map rows of every kernel, projected by ``L``.

    ``K`` is the training stack (n, n, m) and ``L`` (r, n) a factor of ``A = L^T L``;
    then ``d^2_{A,P}(i, j) = sum_{l,l'} P_{ll'} (Z_l[i] - Z_l[j]) . (Z_l'[i] -
    Z_l'[j])``.
    """
    return np.stack([K[:, :, k] @ L.T for k in range(K.shape[2])])


def pair_gram_sum(
    Z: np.ndarray, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """``sum_t weights_t G_{rows_t, cols_t}`` as an (m, m) matrix.

    ``G_pq[l, l'] = (Z_l[p] - Z_l[q]) . (Z_l'[p] - Z_l'[q])``; the weighted sum is
    ``Z_l^T (D - S) Z_l'`` with ``S = C + C^T`` for the weight matrix ``C`` and ``D``
    the degrees of ``S`` (a graph Laplacian), so no pair Gram is formed.
    """
    m, n, r = Z.shape
    C = sparse.coo_matrix(
        (np.asarray(weights, dtype=np.float64), (rows, cols)), shape=(n, n)
    ).tocsr()
    S = C + C.T
    lap = sparse.diags(np.asarray(S.sum(axis=1)).ravel()) - S
    LZ = np.stack([lap @ Z[k] for k in range(m)])
    G = Z.reshape(m, n * r) @ LZ.reshape(m, n * r).T
    return (G + G.T) / 2.0


def pair_distances(Z: np.ndarray, P: np.ndarray) -> np.ndarray:
    """All squared distances ``d^2_{A,P}(i, j)`` (n, n) via the eigenvectors of P."""
    lam, U = np.linalg.eigh((P + P.T) / 2.0)
    keep = np.flatnonzero(lam > 1e-12 * max(float(lam.max()), 1e-300))
    # Y = [sqrt(lam_s) sum_l U[l, s] Z_l]_s side by side: one Gram matrix
    Y = np.concatenate(
        [np.sqrt(lam[s]) * np.tensordot(U[:, s], Z, axes=1) for s in keep], axis=1
    )
    sq = np.einsum("ij,ij->i", Y, Y)
    D = sq[:, None] + sq[None, :] - 2.0 * (Y @ Y.T)
    np.maximum(D, 0.0, out=D)
    return D


def vech2(M: np.ndarray) -> np.ndarray:
    """Coefficients ``c`` with ``<P, M> = c . vech(P)`` for symmetric P and M."""
    iu = np.triu_indices(M.shape[0])
    c = (M + M.T)[iu]
    diag = iu[0] == iu[1]
    c[diag] /= 2.0
    return c


def unvech(p: np.ndarray, m: int) -> np.ndarray:
    iu = np.triu_indices(m)
    P = np.zeros((m, m))
    P[iu] = p
    return P + np.triu(P, 1).T


@dataclass
class PStepProblem:
    """Eq. 15 at fixed ``A``: the pull Gram, the triplets, the kept cuts.

    Built by :meth:`from_metric`; :func:`solve_p_step` reuses its cuts between the
    calls of one weight step (they bound the hinge sum, which ``w`` and ``W`` leave
    unchanged).
    """

    Z: np.ndarray
    target_neighbors: np.ndarray
    impostor_mask: np.ndarray
    push_weight: float
    margin: float
    n_groups: int
    pull_gram: np.ndarray
    cuts: list[tuple[int, np.ndarray, float]] = field(default_factory=list)
    ages: list[int] = field(default_factory=list)

    @classmethod
    def from_metric(
        cls,
        K: np.ndarray,
        L: np.ndarray,
        y: np.ndarray,
        target_neighbors: np.ndarray,
        *,
        push_weight: float = 0.5,
        margin: float = 1.0,
        n_groups: int = 8,
    ) -> PStepProblem:
        Z = kernel_map_projections(K, L)
        tn = np.asarray(target_neighbors, dtype=np.intp)
        n, k = tn.shape
        rows = np.repeat(np.arange(n), k)
        pull = pair_gram_sum(Z, rows, tn.ravel(), np.ones(n * k))
        y = np.asarray(y)
        return cls(
            Z=Z,
            target_neighbors=tn,
            impostor_mask=y[:, None] != y[None, :],
            push_weight=float(push_weight),
            margin=float(margin),
            n_groups=int(max(1, min(n_groups, n))),
            pull_gram=pull,
        )

    @property
    def m(self) -> int:
        return self.Z.shape[0]

    def _hinges(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Hinge values (n, k, n), zero off the impostor mask, and the distances."""
        D = pair_distances(self.Z, P)
        n = D.shape[0]
        d_tn = D[np.arange(n)[:, None], self.target_neighbors]
        H = self.margin + d_tn[:, :, None] - D[:, None, :]
        H *= self.impostor_mask[:, None, :]
        np.maximum(H, 0.0, out=H)
        return H, d_tn

    def loss_terms(self, P: np.ndarray) -> tuple[float, float]:
        """``(pull, push)`` of eq. 18 at ``(A, P)``: sums of distances and hinges."""
        H, d_tn = self._hinges(P)
        return float(d_tn.sum()), float(H.sum())

    def objective(self, P: np.ndarray, w: float = 0.0, W: np.ndarray | None = None):
        """Eq. 15's objective: ``(1-gamma) pull + gamma push + w tr(P^T W)``."""
        pull, push = self.loss_terms(P)
        out = (1.0 - self.push_weight) * pull + self.push_weight * push
        if W is not None and w:
            out += w * float(np.sum(P * W))
        return out

    def age_cuts(self, active: np.ndarray, max_age: int = 5) -> None:
        """Drop the cuts idle (zero dual) in ``max_age`` master solves in a row.

        Kelley's model grows by ``n_groups`` cuts per iteration; the cuts that stay
        idle only slow the master down (a standard cut-aging rule; the certificate
        stays valid since it is the lower bound of the master actually solved).
        """
        self.ages = [0 if a else age + 1 for a, age in zip(active, self.ages)]
        keep = [i for i, age in enumerate(self.ages) if age < max_age]
        self.cuts = [self.cuts[i] for i in keep]
        self.ages = [self.ages[i] for i in keep]

    def add_cuts(self, P: np.ndarray) -> float:
        """Add one cut per anchor group at ``P``; return the hinge sum at ``P``."""
        H, _ = self._hinges(P)
        n, k, _ = H.shape
        ii, jj, ll = np.nonzero(H > 0)
        tn = self.target_neighbors
        group = ii % self.n_groups
        for g in range(self.n_groups):
            sel = group == g
            a, j, imp = ii[sel], tn[ii[sel], jj[sel]], ll[sel]
            if a.size:
                rows = np.concatenate([a, a])
                cols = np.concatenate([j, imp])
                wts = np.concatenate([np.ones(a.size), -np.ones(a.size)])
                coef = vech2(pair_gram_sum(self.Z, rows, cols, wts))
            else:
                coef = np.zeros(self.m * (self.m + 1) // 2)
            self.cuts.append((g, coef, self.margin * float(a.size)))
            self.ages.append(0)
        return float(H.sum())


@dataclass
class PStepResult:
    P: np.ndarray
    objective: float
    lower_bound: float
    n_iter: int
    converged: bool


def _solve_master(prob: PStepProblem, c_lin: np.ndarray):
    """Min of the cut model over the feasible set of eq. 15 (a cvxopt SDP)."""
    import cvxopt
    from cvxopt import solvers

    m = prob.m
    q = m * (m + 1) // 2
    G = prob.n_groups
    nx = q + G
    iu = np.triu_indices(m)
    # -P <= 0 in the PSD cone: column k is -vec(E_k), E_k the k-th symmetric basis
    Gs = np.zeros((m * m, nx))
    for idx, (a, b) in enumerate(zip(*iu)):
        E = np.zeros((m, m))
        E[a, b] = E[b, a] = 1.0
        Gs[:, idx] = -E.ravel(order="F")
    rows = [np.hstack([-np.eye(q), np.zeros((q, G))])]  # P_ab >= 0
    rows.append(np.hstack([np.zeros((G, q)), -np.eye(G)]))  # xi >= 0
    h = [np.zeros(q), np.zeros(G)]
    for g, coef, b in prob.cuts:  # xi_g >= b + coef . p
        r = np.zeros(nx)
        r[:q] = coef
        r[q + g] = -1.0
        rows.append(r[None, :])
        h.append(np.array([-b]))
    Gl = np.vstack(rows)
    hl = np.concatenate(h)
    A = np.zeros((1, nx))
    A[0, :q] = vech2(np.ones((m, m)))
    c = np.concatenate([c_lin, np.full(G, prob.push_weight)])
    scale = max(1.0, float(np.abs(c).max()))
    sol = None
    # the cut model is degenerate (many parallel cuts): tight tolerances can break
    # cvxopt's scaling, so relax them step by step before giving up
    for t in (1e-8, 1e-7, 1e-6):
        opts = {
            "show_progress": False,
            "abstol": t,
            "reltol": t,
            "feastol": t,
            "maxiters": 200,
        }
        try:
            sol = solvers.sdp(
                cvxopt.matrix(c / scale),
                Gl=cvxopt.matrix(Gl),
                hl=cvxopt.matrix(hl),
                Gs=[cvxopt.matrix(Gs)],
                hs=[cvxopt.matrix(np.zeros((m, m)))],
                A=cvxopt.matrix(A),
                b=cvxopt.matrix(np.ones(1)),
                kktsolver="chol",
                options=opts,
            )
        except (ArithmeticError, ValueError):
            sol = None
            continue
        if sol["status"] == "optimal":
            break
    if sol is None or sol["x"] is None:
        raise RuntimeError("cvxopt failed on the P-step master problem (eq. 15)")
    x = np.asarray(sol["x"]).ravel()
    z = np.asarray(sol["zl"]).ravel()[q + G : q + G + len(prob.cuts)]
    prob.age_cuts(z > 1e-9 * max(float(z.max(initial=0.0)), 1e-300))
    return unvech(x[:q], m), float(c @ x)


def solve_p_step(
    prob: PStepProblem,
    w: float,
    W: np.ndarray,
    *,
    P0: np.ndarray | None = None,
    tol: float = 1e-6,
    max_iter: int = 500,
) -> PStepResult:
    """Solve eq. 15 for fixed ``A`` (in ``prob``), ``w`` and ``W`` to ``tol``.

    ``tol`` bounds ``(f(P) - lower bound) / max(1, |f(P)|)`` of the returned ``P``.
    """
    lin = (1.0 - prob.push_weight) * prob.pull_gram + w * W
    c_lin = vech2(lin)
    best_P, best_f = None, np.inf
    if P0 is not None:
        best_P = P0
        best_f = float(np.sum(P0 * lin)) + prob.push_weight * prob.add_cuts(P0)
    lower = -np.inf
    for it in range(1, max_iter + 1):
        if not prob.cuts:
            P = np.full((prob.m, prob.m), 1.0 / prob.m**2)
        else:
            P, lower = _solve_master(prob, c_lin)
            if best_f - lower <= tol * max(1.0, abs(best_f)):
                return PStepResult(best_P, best_f, lower, it, True)
        f = float(np.sum(P * lin)) + prob.push_weight * prob.add_cuts(P)
        if f < best_f:
            best_P, best_f = P, f
    return PStepResult(best_P, best_f, lower, max_iter, False)


def rank_one_direction(P: np.ndarray) -> np.ndarray:
    """Eq. 16's closed form ``W = U U^T``, ``U`` the m-1 smallest eigenvectors of P."""
    _, U = np.linalg.eigh((P + P.T) / 2.0)
    U = U[:, :-1]
    return U @ U.T


def tail_eigenvalues(P: np.ndarray) -> float:
    """``sum_{i >= 2} lambda_i(P)`` (eq. 17), eigenvalues in decreasing order."""
    lam = np.linalg.eigvalsh((P + P.T) / 2.0)
    return float(np.sum(lam[:-1]))


def weights_from_p(P: np.ndarray) -> np.ndarray:
    """``mu`` on the simplex from (nearly) rank-one ``P = mu mu^T``.

    The leading eigenvector, its sign made positive, clipped at 0 and scaled to sum
    one: exactly ``mu`` when ``P = mu mu^T`` with ``mu`` on the simplex.
    """
    lam, U = np.linalg.eigh((P + P.T) / 2.0)
    u = U[:, -1]
    u = u if u.sum() >= 0 else -u
    u = np.maximum(u, 0.0)
    s = u.sum()
    if s <= 0:
        return np.full(P.shape[0], 1.0 / P.shape[0])
    return u / s


@dataclass
class WeightStepResult:
    mu: np.ndarray
    P: np.ndarray
    W: np.ndarray
    w: float
    rank_one: bool
    objective: float
    n_solves: int
    history: list[dict] = field(default_factory=list)


def weight_step(
    prob: PStepProblem,
    W0: np.ndarray,
    *,
    w_grid: tuple[float, ...] = tuple(10.0**i for i in range(9)),
    P0: np.ndarray | None = None,
    rank_tol: float = 1e-6,
    max_rank_iter: int = 20,
    tol: float = 1e-6,
    max_iter: int = 500,
) -> WeightStepResult:
    """Eq. 15-17: the smallest ``w`` of ``w_grid`` that reaches rank one.

    For each ``w`` in increasing order, eq. 15 and eq. 16 alternate (from ``W0`` for
    the first ``w``, from the last ``W`` for the next ones) until
    ``sum_{i>=2} lambda_i(P) <= rank_tol * tr(P)`` (eq. 17, global convergence;
    accepted) or until ``tr(P W)`` stops decreasing or
    ``max_rank_iter`` rounds (then the next ``w``). When no ``w`` reaches rank one,
    the last solution is kept with ``rank_one=False``.
    """
    if len(w_grid) == 0 or min(w_grid) <= 0:
        raise ValueError(
            f"weight_step: w_grid must hold at least one weight w > 0 (the rank "
            f"penalty of eq. 15); got {tuple(w_grid)!r}."
        )
    m = prob.m
    history = []
    n_solves = 0
    res = None
    W = W0.copy()
    for w in w_grid:  # W is carried on from the previous w (a continuation)
        prev = np.inf
        for _ in range(max_rank_iter):
            res = solve_p_step(prob, w, W, P0=P0, tol=tol, max_iter=max_iter)
            n_solves += 1
            P0 = res.P
            tail = tail_eigenvalues(res.P)
            trace = float(np.trace(res.P))
            history.append(
                {
                    "w": w,
                    "objective": res.objective,
                    "tail": tail,
                    "cutting_plane_iter": res.n_iter,
                    "converged": res.converged,
                }
            )
            W = rank_one_direction(res.P)
            if tail <= rank_tol * max(trace, 1e-300):
                mu = weights_from_p(res.P)
                return WeightStepResult(
                    mu, res.P, W, w, True, res.objective, n_solves, history
                )
            if tail >= prev * (1.0 - 1e-9):
                break
            prev = tail
    mu = weights_from_p(res.P) if res is not None else np.full(m, 1.0 / m)
    return WeightStepResult(
        mu, res.P, W, w_grid[-1], False, res.objective, n_solves, history
    )
