"""Kernel distance metric learning in a vector-valued RKHS (paper key ``kdml``).

Two estimators learn a map ``f: X -> R^m`` and a Mahalanobis metric on its output
space; a kNN rule in that space classifies (kdml Sec. 5, through ``MetricKNN``).

- :class:`KDMLFixedKernel` ("Method 1", kdml Sec. 3): the diagonal matrix kernel
  ``K(x, x') = diag(k_1, ..., k_m)`` of Gaussians with different spreads, block
  coordinate descent of eqs. 12 (C step) and 13 (L step).
- :class:`KDMLParamKernel` ("Method 2", kdml Sec. 4): ``K = k B`` with a Gaussian
  ``k`` and ``B`` PSD; C step of eqs. 19-20, B step by projected gradient (eqs. 21-22).

Both use prototype targets ``y_k`` per class and ``s_ij = [y_i = y_j]`` (Sec. 5),
so ``S`` is block-constant and its Laplacian ``diag(S 1) - S`` is applied in O(n).

Structure used instead of the naive O((mn)^3) pseudo-inverse per step
---------------------------------------------------------------------
Method 2: with ``B = U diag(beta) U^T`` the C-step equation separates into ``m``
n x n systems ``(K + beta_t K P K) d_t = lam K y_t`` (``P = gamma Lap + lam I``).
One eigendecomposition of ``K`` and one of ``K^1/2 P K^1/2`` per *fit* diagonalize
all of them for every ``beta``: a C step then costs O(m n^2 + m^3).

Method 1: the kernels differ per output, so the C step does not separate; it is
written as the SPD system ``(I + G^T Kbar G) u = b`` with ``G = A^1/2 (x) R^T``
(``P = R^T R`` Cholesky). Its blocks ``sum_t a_st a_tr W_t`` use ``W_t = R K_t R^T``
computed once per fit; the system is solved by conjugate gradients with a
block-Jacobi preconditioner diagonalized once per fit (O(m^2 n^2) per iteration),
falling back to a Cholesky solve of the assembled system when CG stalls. The L step
(eq. 13) is an m x m Cholesky solve.

Setups shared across a grid search
----------------------------------
Those per-fit setups depend on the training part, ``gamma``, ``lam`` and the kernel
widths only, not on ``rho``: a grid search over ``rho`` refits the same training
fold with the same setup. Method 1's setup is moreover per output kernel (``K_t``,
``W_t`` and its eigendecomposition, plus one ``R``), and its spreads
``sigma * r^[-1/2, 1/2]`` overlap across a grid of ``sigma`` (with r = 4, m = 3 and
sigma in {2, 4, 8}: spreads {1, 2, 4}, {2, 4, 8}, {4, 8, 16}, five distinct kernels
instead of nine). A module-level cache (:func:`set_setup_cache_size`,
:func:`clear_setup_cache`) keyed by a hash of the training data and those
parameters hands the already computed pieces (read-only) to the next fit, so the
results are bitwise those of an uncached fit.

Method 1's problem (eqs. 6/9) is unbounded below, as printed
------------------------------------------------------------
Eq. 6 puts no constraint on ``L`` and no bound on ``A = L^T L``: its only term in
``L`` besides the quadratic ones is ``rho tr(L)``, and eq. 13's stationary point
``L = -rho M^-1`` is negative definite (with ``L >= 0`` the minimizer would be
``L = 0``, every other term being >= 0, so the term only works as a reward for a
large metric). For fixed ``c`` with ``M(c)`` PD the minimum over ``L`` is
``-rho^2/2 tr(M(c)^-1)``; the Gaussian ``Kbar`` is nonsingular for distinct points,
so ``c* = Kbar^-1 y`` gives ``f(x_i) = y_i``, ``M(c*) = 0`` (``s_ij = [y_i = y_j]``
makes every same-class difference 0) and ``Q(c*, -t I) = c*^T Kbar c*/2 - rho t m
-> -inf``. The paper's "rho directly controls the norm of A" holds per L step only.
Its block coordinate descent (eqs. 12-13) either settles at a fixed point with a
small metric (``||A|| ~ (rho / lam_min(M))^2``, f close to a kernel smoother of the
targets) or runs off super-exponentially; ``max_metric_norm`` (a named option of
``conf/method/kdml_method1.yaml``) stops it (:class:`KDMLFixedKernel`).
"""

from __future__ import annotations

import hashlib
import numbers
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.linalg import LinAlgError
from scipy import linalg as sla
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from methods._kernels import pairwise_kernel
from methods._renamed import RenamedAttribute

PROTOTYPES = ("onehot",)
C_SOLVERS = ("cg", "cg_coupled", "cholesky", "naive")


class SingularSystemError(LinAlgError):
    """A step of a KDML solver has a singular system (the objective is unbounded)."""


# --------------------------------------------------------------------- targets --
def prototype_targets(n_classes: int, output_dim: int) -> np.ndarray:
    """Unit-norm prototype target vectors ``y_k`` in ``R^m``, one row per class.

    kdml Sec. 5 leaves the prototypes open ("appropriately chosen"); this reading
    (``prototypes="onehot"``) uses the unit vectors ``e_k`` when ``m = c``; for
    ``2 <= m < c`` equally spaced points on the unit circle (higher harmonics
    ``cos(h a), sin(h a)`` fill further coordinates, rows normalized); for ``m = 1``
    equally spaced points on [-1, 1]. The prototypes span ``R^m``; ``m > c`` is
    refused (:meth:`_KDMLBase._validate`): a target-free output direction makes
    Method 1's L step (eq. 13) singular and its objective unbounded below.
    """
    c, m = int(n_classes), int(output_dim)
    if c < 2:
        raise ValueError(f"prototype targets need at least 2 classes; got {c}.")
    if m > c:
        raise ValueError(f"prototype targets span at most c={c} dimensions; m={m}.")
    if m == c:
        return np.eye(c)
    if m >= 2:
        ang = 2.0 * np.pi * np.arange(c) / c
        cols = []
        for h in range(1, m // 2 + 2):
            cols += [np.cos(h * ang), np.sin(h * ang)]
        out = np.column_stack(cols[:m])
        return out / np.linalg.norm(out, axis=1, keepdims=True)
    return np.linspace(-1.0, 1.0, c)[:, None]


def _class_sums(v: np.ndarray, codes: np.ndarray, n_classes: int) -> np.ndarray:
    """Per-class sums of the columns of ``v`` (rows = outputs)."""
    out = np.zeros((v.shape[0], n_classes))
    for k in range(n_classes):
        out[:, k] = v[:, codes == k].sum(axis=1)
    return out


def laplacian_apply(v: np.ndarray, codes: np.ndarray, n_classes: int) -> np.ndarray:
    """``v @ (diag(S 1) - S)`` for ``s_ij = [y_i = y_j]`` in O(mn) (rows of v)."""
    counts = np.bincount(codes, minlength=n_classes)
    sums = _class_sums(v, codes, n_classes)
    return v * counts[codes] - sums[:, codes]


def laplacian_matrix(codes: np.ndarray) -> np.ndarray:
    """The dense ``diag(S 1) - S`` (references and one-off factorizations)."""
    S = (codes[:, None] == codes[None, :]).astype(float)
    return np.diag(S.sum(axis=1)) - S


def _gaussian(X: np.ndarray, Z: np.ndarray, sigma: float) -> np.ndarray:
    return pairwise_kernel(X, Z, kernel="gaussian", sigma=sigma)


# ------------------------------------------------------------ shared setups --
# Per-fit factorizations (kernel matrices, Cholesky factor, eigendecompositions)
# keyed by the training data and the parameters they depend on; least recently
# used evicted first once the byte budget is exceeded. GridSearchCV visits the
# same (fold, sigma) once per rho value, after every other (fold, sigma) of the
# grid, so the budget must hold all of one grid's setups.
_SETUP_CACHE: OrderedDict[str, Any] = OrderedDict()
_SETUP_CACHE_LIMIT = [3 << 29]  # bytes; mutable through set_setup_cache_size


def set_setup_cache_size(nbytes: int) -> int:
    """Set the byte budget of the shared setups of Methods 1-2; returns the old one.

    ``0`` disables sharing (every fit builds its own setup: the reference path of
    the tests and of ``benchmarks/bench_kdml.py``). The default, 1.5 GiB, holds the
    15 kernel setups (3 folds x 5 spreads, ~66 MB each, ~1 GB) of Method 1's kdml
    grid at ~1,650 inner training points, the largest in the kdml sweeps, and
    bounds what each sweep worker keeps (entries of finished folds linger until
    evicted).
    """
    if not isinstance(nbytes, numbers.Integral) or nbytes < 0:
        raise ValueError(f"setup cache size must be an integer >= 0; got {nbytes!r}.")
    old = _SETUP_CACHE_LIMIT[0]
    _SETUP_CACHE_LIMIT[0] = int(nbytes)
    _evict()
    return old


def clear_setup_cache() -> None:
    """Drop every shared setup of Methods 1-2."""
    _SETUP_CACHE.clear()


def _nbytes(obj: Any) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    if hasattr(obj, "__dict__"):
        return sum(_nbytes(o) for o in vars(obj).values())
    return 0


def _freeze(obj: Any) -> None:
    """Mark a shared setup's arrays read-only: a fit that wrote into one would
    corrupt every later fit that shares it."""
    if isinstance(obj, np.ndarray):
        obj.flags.writeable = False
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _freeze(o)
    elif hasattr(obj, "__dict__"):
        for o in vars(obj).values():
            _freeze(o)


def _evict() -> None:
    total = sum(nb for _, nb in _SETUP_CACHE.values())
    while _SETUP_CACHE and total > _SETUP_CACHE_LIMIT[0]:
        _, (_, nb) = _SETUP_CACHE.popitem(last=False)
        total -= nb


def _shared_setup(
    kind: str,
    X: np.ndarray,
    codes: np.ndarray,
    params: tuple,
    build: Callable[[], Any],
) -> Any:
    """``build()``, or the setup an earlier fit built from the same inputs."""
    if _SETUP_CACHE_LIMIT[0] == 0:
        return build()
    h = hashlib.sha1(kind.encode())
    h.update(repr((X.shape, X.dtype.str, codes.dtype.str, params)).encode())
    h.update(np.ascontiguousarray(X).tobytes())
    h.update(np.ascontiguousarray(codes).tobytes())
    key = h.hexdigest()
    if key in _SETUP_CACHE:
        _SETUP_CACHE.move_to_end(key)
        return _SETUP_CACHE[key][0]
    setup = build()
    _freeze(setup)
    _SETUP_CACHE[key] = (setup, _nbytes(setup))
    _evict()
    return setup


def _check_positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    ok = isinstance(value, numbers.Real) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a real number {bound}; got {value!r}.")
    return float(value)


def _check_iterations(owner: str, name: str, value: Any, what: str) -> int:
    """``value`` as an int >= 1, or a ValueError naming ``owner.name``."""
    if not (isinstance(value, numbers.Integral) and value >= 1):
        raise ValueError(
            f"{owner}: {name} must be an integer >= 1 ({what}); got {value!r}."
        )
    return int(value)


class _KDMLBase(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared validation: targets, output dimension, classes."""

    objective_history_ = RenamedAttribute("objective_path_")

    def _validate(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        c, n = len(self.classes_), X.shape[0]
        name = type(self).__name__
        if c < 2:
            raise ValueError(
                f"{name} needs at least 2 classes in the training data (one class "
                f"is not enough); got {c} ({self.classes_.tolist()}). A training "
                "subsample that misses "
                "classes cannot be fitted: balance or stratify the split."
            )
        m = c if self.output_dim is None else self.output_dim
        if not isinstance(m, numbers.Integral) or m < 1:
            raise ValueError(f"{name}: output_dim must be an integer >= 1; got {m!r}.")
        if m > min(c, n):
            raise ValueError(
                f"{name}: output_dim={m} is larger than allowed: at most the number "
                f"of classes ({c}) and of training samples ({n}). The prototype "
                "targets span at most c dimensions; an output direction without "
                "targets makes the L step (eq. 13) singular. Lower output_dim."
            )
        if self.prototypes not in PROTOTYPES:
            raise ValueError(
                f"{name}: prototypes={self.prototypes!r}; choose one of {PROTOTYPES}."
            )
        for p in ("gamma", "lam"):
            _check_positive(p, getattr(self, p), allow_zero=p == "gamma")
        _check_positive("rho", self.rho)
        _check_positive("sigma", self.sigma)
        _check_iterations(name, "max_iter", self.max_iter, "outer iterations")
        if not (isinstance(self.tol, numbers.Real) and self.tol >= 0):
            raise ValueError(
                f"{name}: tol must be a real number >= 0 (the relative decrease of "
                "the objective that ends the descent; 0 runs all max_iter "
                f"iterations); got {self.tol!r}."
            )
        protos = prototype_targets(c, m)
        Y = protos[codes].T  # (m, n): column i is y_i
        self.output_dim_ = int(m)
        return X, codes, Y

    @property
    def _n_features_out(self) -> int:
        """Width of ``transform``'s output, for ``get_feature_names_out``."""
        return self.n_features_out_

    def _more_tags(self):  # pragma: no cover - old sklearn
        return {"requires_y": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


# ---------------------------------------------------------------- Method 1 ------
def spreads(sigma: float, output_dim: int, spread_ratio: float) -> np.ndarray:
    """The m Gaussian spreads of Method 1: log-spaced over ``sigma * r^[-1/2, 1/2]``.

    ``r = spread_ratio`` is the ratio of the last spread to the first (``r < 1``
    puts those of ``1 / r`` in reverse order over the outputs; ``r = 1``: m equal
    spreads); every spread is positive and finite iff ``r`` is.
    """
    if output_dim == 1:
        return np.array([float(sigma)])
    e = np.linspace(-0.5, 0.5, output_dim)
    return float(sigma) * float(spread_ratio) ** e


def method1_objective(
    C: np.ndarray,
    L: np.ndarray,
    Ks: np.ndarray,
    Y: np.ndarray,
    codes: np.ndarray,
    gamma: float,
    lam: float,
    rho: float,
) -> float:
    """kdml eq. 9: 1/2 c^T Kbar c + gamma/2 sum_ij s_ij ||L G_ij c||^2 + ... ."""
    F = np.einsum("tij,tj->ti", Ks, C)  # f(x_i) = sum_j K(x_i, x_j) c_j
    A = L.T @ L
    c = int(codes.max()) + 1
    reg = 0.5 * float(np.sum(C * F))
    # sum_ij s_ij ||L(f_i - f_j)||^2 = 2 tr(A F Lap F^T)
    coll = gamma * float(np.sum((A @ F) * laplacian_apply(F, codes, c)))
    R = F - Y
    fit = 0.5 * lam * float(np.sum((A @ R) * R))
    return reg + coll + fit + rho * float(np.trace(L))


def method1_l_step(
    F: np.ndarray,
    Y: np.ndarray,
    codes: np.ndarray,
    gamma: float,
    lam: float,
    rho: float,
) -> np.ndarray:
    """kdml eq. 13: ``L = -rho M^-1``.

    ``M = gamma sum_ij s_ij G_ij c c^T G_ij^T + lam sum_i r_i r_i^T``.

    ``M`` is m x m; solved by Cholesky. A singular ``M`` means the objective is
    unbounded below in ``L`` (the linear term ``rho tr(L)``): raised, not hidden
    behind the paper's pseudo-inverse.
    """
    c = int(codes.max()) + 1
    R = F - Y
    M = 2.0 * gamma * (F @ laplacian_apply(F, codes, c).T) + lam * (R @ R.T)
    M = 0.5 * (M + M.T)
    try:
        cf = sla.cho_factor(M, lower=True)
    except LinAlgError as exc:
        raise SingularSystemError(_singular_l_message(M)) from exc
    w = np.linalg.eigvalsh(M)
    if w[0] <= 1e-12 * max(w[-1], 1e-300):
        raise SingularSystemError(_singular_l_message(M))
    L = -rho * sla.cho_solve(cf, np.eye(M.shape[0]))
    return 0.5 * (L + L.T)


def _singular_l_message(M: np.ndarray) -> str:
    w = np.linalg.eigvalsh(M)
    rank = int(np.sum(w > 1e-12 * max(w[-1], 1e-300)))
    return (
        f"KDMLFixedKernel: the L step (kdml eq. 13) has a singular m x m system "
        f"(rank {rank} < output_dim {M.shape[0]}): the objective is unbounded below "
        "in L. Lower output_dim, or raise lam so that outputs differ from targets."
    )


def _sym_sqrt(A: np.ndarray) -> np.ndarray:
    w, U = np.linalg.eigh(0.5 * (A + A.T))
    return (U * np.sqrt(np.clip(w, 0.0, None))) @ U.T


def method1_p_factor(codes: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Upper Cholesky factor ``R`` of ``P = 2 gamma Lap + lam I = R^T R``."""
    n = codes.shape[0]
    P = 2.0 * gamma * laplacian_matrix(codes) + lam * np.eye(n)
    return sla.cholesky(P, lower=False)


def method1_kernel_block(K: np.ndarray, R: np.ndarray) -> tuple:
    """``W = R K R^T`` and the eigendecomposition of its symmetric part: what one
    output's kernel contributes to the C-step system and its preconditioner."""
    W = R @ K @ R.T
    return W, np.linalg.eigh(0.5 * (W + W.T))


def _method1_kernel_setup(X: np.ndarray, spread: float, R: np.ndarray) -> tuple:
    K = _gaussian(X, X, spread)
    return (K, *method1_kernel_block(K, R))


class _Method1System:
    """Per-fit factorizations of the Method 1 C step (kdml eqs. 11-12).

    ``P = 2 gamma Lap + lam I = R^T R``; ``W_t = R K_t R^T``; preconditioner blocks
    use ``W_t = Q_t diag(w_t) Q_t^T``.
    """

    def __init__(self, Ks, codes, gamma, lam, *, R=None, blocks=None, coupled_index=0):
        m, n, _ = Ks.shape
        self.coupled_index = int(coupled_index)  # the smallest spread's kernel
        self.R = method1_p_factor(codes, gamma, lam) if R is None else R
        if blocks is None:
            blocks = [method1_kernel_block(K, self.R) for K in Ks]
        self.Ks = Ks
        self.W = np.stack([W for W, _ in blocks])
        self.eig = [eig for _, eig in blocks]
        self.m, self.n = m, n
        self.lam = lam

    def solve(
        self,
        A: np.ndarray,
        Y: np.ndarray,
        *,
        method: str = "cg",
        tol: float = 1e-11,
        max_iter: int = 500,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """The C minimizing eq. 9 for fixed ``A = L^T L``; returns (C, info)."""
        m, n, lam = self.m, self.n, self.lam
        a = _sym_sqrt(A)
        AY = A @ Y
        Q = np.einsum("tij,tj->ti", self.Ks, AY)  # K_t (AY)_t
        b = lam * (a @ (Q @ self.R.T))  # b_s = lam sum_t a_st R q_t (rows)

        def matvec(U):  # (I + sum_t (a_t a_t^T) (x) W_t) u, U rows u_s
            V = U.copy()
            AU = a @ U  # row t: sum_r a_tr u_r
            WU = np.einsum("tij,tj->ti", self.W, AU)
            V += a.T @ WU  # row s: sum_t a_ts W_t (sum_r a_tr u_r); a symmetric
            return V

        info: dict[str, Any] = {"solver": method, "cg_iter": 0}
        U = None
        if method in ("cg", "cg_coupled"):
            omega = np.sum(a**2, axis=0)  # block s: I + sum_t a_ts^2 W_t ~ I + w_s W_s

            def precond(Rm):
                Z = np.empty_like(Rm)
                for s in range(m):
                    w, Qs = self.eig[s]
                    Z[s] = Qs @ (
                        (Qs.T @ Rm[s]) / (1.0 + omega[s] * np.clip(w, 0, None))
                    )
                return Z

            first = max_iter if method == "cg" else min(JACOBI_ITER, max_iter)
            U, it, ok = _pcg(matvec, precond, b, tol=tol, max_iter=first)
            info["cg_iter"] = it
            if not ok and method == "cg_coupled":
                # Block Jacobi drops the coupling sum_t a_st a_tr W_t (s != r),
                # which dominates once A is far from diagonal: CG then crawls
                # (500 iterations reach a residual of ~1e-5). I + A (x) W_1, with
                # the smallest spread's W_1 for every output, keeps the coupling
                # and is diagonal in eig(A) (x) eig(W_1): two passes over one
                # n x n matrix per application.
                alpha, Va = np.linalg.eigh(A)
                w1, Q1 = self.eig[self.coupled_index]
                D = 1.0 + np.clip(alpha, 0, None)[:, None] * np.clip(w1, 0, None)

                def coupled(Rm):
                    return Va @ (((Va.T @ Rm) @ Q1) / D) @ Q1.T

                U, it, ok = _pcg(matvec, coupled, b, tol=tol, max_iter=max_iter)
                info["cg_iter"] += it
                info["coupled"] = True
            if not ok:
                info["fallback"] = "cholesky"
                U = None
        if U is None:
            H = np.einsum("ts,tr,tij->sirj", a, a, self.W).reshape(m * n, m * n)
            H[np.diag_indices_from(H)] += 1.0
            U = sla.cho_solve(sla.cho_factor(H, lower=True), b.ravel()).reshape(m, n)
        # c = lam (A (x) I) y - G u, G = a (x) R^T
        C = lam * AY - a @ (U @ self.R)
        return C, info


# Block-Jacobi CG iterations before the coupled preconditioner takes over (Method 1)
JACOBI_ITER = 50


def _pcg(matvec, precond, b, *, tol, max_iter):
    x = np.zeros_like(b)
    r = b.copy()
    bnorm = np.linalg.norm(b)
    if bnorm == 0:
        return x, 0, True
    z = precond(r)
    p = z.copy()
    rz = np.sum(r * z)
    for it in range(1, max_iter + 1):
        Ap = matvec(p)
        alpha = rz / np.sum(p * Ap)
        x += alpha * p
        r -= alpha * Ap
        if np.linalg.norm(r) <= tol * bnorm:
            return x, it, True
        z = precond(r)
        rz_new = np.sum(r * z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x, max_iter, False


def method1_c_step_naive(
    Ks: np.ndarray,
    A: np.ndarray,
    Y: np.ndarray,
    codes: np.ndarray,
    gamma: float,
    lam: float,
) -> np.ndarray:
    """kdml eqs. 11-12 literally: the (mn x mn) Hessian and its pseudo-inverse.

    ``c = lam (d2Q/dc dc^T)^+ sum_i Kbar_i^T A y_i`` with ``c = [c_1; ...; c_n]``
    point-major and ``Kbar_ij = diag(K_1[i, j], ..., K_m[i, j])``. The pair sum of
    eq. 11 is formed through the Laplacian (``sum_ij s_ij G_ij^T A G_ij =
    2 Kbar (Lap (x) A) Kbar``). The slow reference of the tests and the benchmark.
    """
    m, n, _ = Ks.shape
    Kbar = np.einsum("tij,ts->isjt", Ks, np.eye(m)).reshape(n * m, n * m)
    Lap = laplacian_matrix(codes)
    P = np.kron(2.0 * gamma * Lap + lam * np.eye(n), A)
    H = Kbar + Kbar @ P @ Kbar
    g = lam * Kbar @ np.kron(np.eye(n), A) @ Y.T.ravel()
    c = np.linalg.pinv(H, hermitian=True) @ g
    return c.reshape(n, m).T


class KDMLFixedKernel(_KDMLBase):
    """Kernel DML with a fixed diagonal matrix kernel ("Method 1", kdml Sec. 3).

    ``K(x, x') = diag(k_1(x, x'), ..., k_m(x, x'))`` with Gaussians ``k_t`` of
    spreads ``sigma_t`` log-spaced over ``sigma * spread_ratio^[-1/2, 1/2]``
    (Sec. 5 says only "different spreads"; this spacing is a named reading).
    Minimizes eq. 9 by block coordinate descent: C step eq. 12 (structured solve,
    see the module docstring), L step eq. 13. ``transform`` returns
    ``L f(x)``: Euclidean distances there are the learned metric of eq. 10.

    Parameters
    ----------
    output_dim : int or None
        m, the output-space dimension (1 <= m <= c); None: m = c.
    sigma, spread_ratio : float
        Centre and ratio of the m Gaussian spreads (:func:`spreads`): ``sigma >
        0``, ``spread_ratio`` finite and > 0 (checked at ``output_dim=1`` too,
        where the one spread is ``sigma``).
    gamma, lam, rho : float
        Weights of the collocation term, the regression term and ``tr(L)`` (eq. 6).
    max_iter, tol : int, float
        Block coordinate descent stops when the relative decrease of eq. 9 is < tol
        (``max_iter >= 1``, ``tol >= 0``).
    c_solver : {"cg", "cg_coupled", "cholesky", "naive"}
        C-step solver: block-Jacobi-preconditioned CG on the structured SPD system
        (default), Cholesky of the same assembled system, or the literal eq. 12
        pseudo-inverse. "cg_coupled" (named option) runs the block-Jacobi CG for
        ``JACOBI_ITER`` (50) iterations, then, if not converged, CG preconditioned
        by ``I + A (x) W_1`` (the smallest spread's block), which keeps the
        coupling between outputs that block Jacobi drops: where block Jacobi
        crawls (A far from diagonal) it converges in tens of iterations instead of
        stalling at 500. It changes no fit that stays bounded; in a fit that runs
        off (``diverged_``) the kept iterate is past ``||A|| = max_metric_norm``
        and depends on the solver at round-off level (the default's own Cholesky
        fallback and "cholesky" disagree there too). "cg" and "cg_coupled" fall
        back to the Cholesky solve when CG does not reach its tolerance
        (relative residual 1e-11) in 500 iterations.
    prototypes : {"onehot"}
        Prototype targets per class (:func:`prototype_targets`).
    max_metric_norm : float
        Stopping rule for the unbounded problem. Eq. 9 has no minimizer: it is
        unbounded below for every training set of distinct points (module
        docstring: ``f`` can interpolate the targets, ``M -> 0`` and
        ``rho tr(L) = -rho^2 tr(M^-1) -> -inf``); the paper states no constraint
        or bound on ``L`` that would prevent it. The descent stops, with
        ``diverged_ = True``, ``converged_ = False`` and a ``ConvergenceWarning``
        (counted in a run record's ``inner_convergence_warnings``), once
        ``||A||_2 = ||L||_2^2`` exceeds this value, or when a C-step or L-step
        system stops being numerically nonsingular (then the previous iterate is
        kept). The kept iterate is the first one past the threshold; kNN in the
        learned metric depends on ``A`` only up to scale.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (m, n_train)
        ``C``, row t the coefficients of output t over the training points, so
        that ``f_t(x) = sum_i k_t(x, x_i) C[t, i]`` (eq. 8).
    L_ : ndarray of shape (m, m)
        The learned ``L``; ``transform`` is ``L f(x)``.
    spreads_ : ndarray of shape (m,)
        The Gaussian spreads ``sigma_t`` of the m kernels (:func:`spreads`).
    objective_, objective_path_ : float, ndarray of shape (n_iter_,)
        Eq. 9 at the kept iterate, and after every iteration
        (``objective_path_`` formerly ``objective_history_``, deprecated).
    n_iter_ : int
        Block coordinate descent iterations run.
    converged_ : bool
        Whether the relative decrease of eq. 9 fell to ``tol`` before
        ``max_iter`` (False when ``diverged_``).
    diverged_ : bool
        Whether the descent ran off (``max_metric_norm``, above).
    cg_iter_, n_fallback_, n_coupled_ : int
        C-step solver counts over the fit: CG iterations, Cholesky fallbacks,
        coupled-preconditioner restarts (``c_solver``).
    classes_ : ndarray of shape (c,)
    X_fit_ : ndarray of shape (n_train, n_features)
        Training points of the kernel expansion.
    n_features_in_ : int
    output_dim_, n_features_out_ : int
        m.
    """

    def __init__(
        self,
        output_dim: int | None = None,
        sigma: float = 1.0,
        spread_ratio: float = 4.0,
        gamma: float = 1.0,
        lam: float = 1.0,
        rho: float = 1.0,
        max_iter: int = 30,
        tol: float = 1e-5,
        c_solver: str = "cg",
        prototypes: str = "onehot",
        max_metric_norm: float = 1e8,
    ):
        self.output_dim = output_dim
        self.sigma = sigma
        self.spread_ratio = spread_ratio
        self.gamma = gamma
        self.lam = lam
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.c_solver = c_solver
        self.prototypes = prototypes
        self.max_metric_norm = max_metric_norm

    def fit(self, X, y) -> KDMLFixedKernel:
        X, codes, Y = self._validate(X, y)
        if self.c_solver not in C_SOLVERS:
            raise ValueError(f"c_solver={self.c_solver!r}; choose one of {C_SOLVERS}.")
        _check_positive("max_metric_norm", self.max_metric_norm)
        r = self.spread_ratio
        if not (isinstance(r, numbers.Real) and 0 < r < np.inf):
            raise ValueError(
                "KDMLFixedKernel: spread_ratio must be a finite real number > 0, the "
                "ratio of the last to the first of the spreads sigma * "
                f"spread_ratio^[-1/2, 1/2] (1: equal spreads); got {r!r}."
            )
        m = self.output_dim_
        gamma, lam, rho = float(self.gamma), float(self.lam), float(self.rho)
        self.spreads_ = spreads(self.sigma, m, self.spread_ratio)
        if self.c_solver == "naive":
            system = None
            Ks = np.stack([_gaussian(X, X, s) for s in self.spreads_])
        else:  # per-kernel setups shared across the grid (module docstring)
            R = _shared_setup(
                "method1-P",
                X,
                codes,
                (gamma, lam),
                lambda: method1_p_factor(codes, gamma, lam),
            )
            parts = [
                _shared_setup(
                    "method1-K",
                    X,
                    codes,
                    (float(s), gamma, lam),
                    lambda s=s: _method1_kernel_setup(X, s, R),
                )
                for s in self.spreads_
            ]
            Ks = np.stack([p[0] for p in parts])
            system = _Method1System(
                Ks,
                codes,
                gamma,
                lam,
                R=R,
                blocks=[p[1:] for p in parts],
                coupled_index=int(np.argmin(self.spreads_)),
            )
        L = np.eye(m)
        history: list[float] = []
        self.cg_iter_ = 0
        self.n_fallback_ = 0
        self.n_coupled_ = 0
        converged = False
        self.diverged_ = False
        C_ok = L_ok = None
        for it in range(1, int(self.max_iter) + 1):
            A = L.T @ L
            try:
                if system is None:
                    C = method1_c_step_naive(Ks, A, Y, codes, gamma, lam)
                else:
                    C, info = system.solve(A, Y, method=self.c_solver)
                    self.cg_iter_ += info["cg_iter"]
                    self.n_fallback_ += "fallback" in info
                    self.n_coupled_ += "coupled" in info
                F = np.einsum("tij,tj->ti", Ks, C)
                L = method1_l_step(F, Y, codes, gamma, lam, rho)
            except LinAlgError:
                if C_ok is None:
                    raise
                self.diverged_ = True
                break
            C_ok, L_ok = C, L
            history.append(method1_objective(C, L, Ks, Y, codes, gamma, lam, rho))
            # eq. 9 is unbounded below once f can interpolate the targets: a
            # growing metric is the block coordinate descent running off to -inf
            if np.linalg.norm(L, 2) ** 2 > self.max_metric_norm:
                self.diverged_ = True
                break
            if it > 1:
                prev = history[-2]
                if abs(prev - history[-1]) <= self.tol * max(abs(prev), 1e-12):
                    converged = True
                    break
        C, L = C_ok, L_ok
        if self.diverged_:
            warnings.warn(
                f"KDMLFixedKernel: eq. 9 is unbounded below and the block coordinate "
                f"descent ran off (||A||_2 = {np.linalg.norm(L, 2) ** 2:.3g}, "
                f"max_metric_norm = {self.max_metric_norm:g}) after {it} iterations; "
                "the last finite iterate is kept. Lower rho or lam to stay in the "
                "bounded regime.",
                ConvergenceWarning,
                stacklevel=2,
            )
        elif not converged:
            warnings.warn(
                f"KDMLFixedKernel: no convergence in max_iter={self.max_iter} "
                f"iterations (tol={self.tol:g}); the last iterate is kept. Increase "
                "max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.X_fit_ = X
        self.dual_coef_ = C
        self.L_ = L
        self.objective_ = history[-1]
        self.objective_path_ = np.array(history)
        self.n_iter_ = it
        self.converged_ = converged
        self.n_features_out_ = m
        return self

    def output_map(self, X) -> np.ndarray:
        """``f(x) = sum_i K(x, x_i) c_i`` (kdml eq. 8), shape (n, m)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.stack(
            [
                _gaussian(X, self.X_fit_, s) @ self.dual_coef_[t]
                for t, s in enumerate(self.spreads_)
            ],
            axis=1,
        )

    def transform(self, X) -> np.ndarray:
        """``L f(x)``: Euclidean distances here are eq. 10's metric."""
        return self.output_map(X) @ self.L_.T

    def get_mahalanobis_matrix(self) -> np.ndarray:
        """``A = L^T L`` on the output space (kdml eq. 10)."""
        check_is_fitted(self)
        return self.L_.T @ self.L_


# ---------------------------------------------------------------- Method 2 ------
def method2_objective(
    C: np.ndarray,
    B: np.ndarray,
    K: np.ndarray,
    Y: np.ndarray,
    codes: np.ndarray,
    gamma: float,
    lam: float,
    rho: float,
) -> float:
    """kdml eq. 17 (with ``K_Delta = K Lap K``)."""
    c = int(codes.max()) + 1
    H = C @ K  # (m, n)
    E = H @ laplacian_apply(H, codes, c).T  # C K_Delta C^T
    B2 = B @ B
    return (
        0.5 * gamma * float(np.sum(E * B2))
        + 0.5 * lam * float(np.sum((B @ H - Y) ** 2))
        + 0.5 * rho * float(np.sum(B * B))
        + 0.5 * float(np.sum((B @ C) * H))
    )


def method2_b_gradient(
    C: np.ndarray,
    B: np.ndarray,
    K: np.ndarray,
    Y: np.ndarray,
    codes: np.ndarray,
    gamma: float,
    lam: float,
    rho: float,
) -> np.ndarray:
    """kdml eqs. 21-22: ``G + G^T - G o I`` with
    ``G = B[C(gamma K_Delta + lam K^2)C^T + rho I] - (lam Y - C/2) K C^T``."""
    c = int(codes.max()) + 1
    H = C @ K
    E = H @ laplacian_apply(H, codes, c).T
    G = (
        B @ (gamma * E + lam * (H @ H.T) + rho * np.eye(B.shape[0]))
        - (lam * Y - 0.5 * C) @ H.T
    )
    return G + G.T - np.diag(np.diag(G))


class _BStats:
    """Eq. 17 and eq. 22 for fixed C through m x m statistics (O(m^3) per call)."""

    def __init__(self, C, K, Y, codes, gamma, lam, rho):
        c = int(codes.max()) + 1
        H = C @ K  # (m, n)
        self.Q = gamma * (H @ laplacian_apply(H, codes, c).T) + lam * (H @ H.T)
        self.YH = Y @ H.T  # Y K C^T
        self.CKC = H @ C.T  # C K C^T
        self.yy = float(np.sum(Y * Y))
        self.lam, self.rho = lam, rho

    def objective(self, B: np.ndarray) -> float:
        B2 = B @ B
        return (
            0.5 * float(np.sum(self.Q * B2))
            - self.lam * float(np.sum(B * self.YH))
            + 0.5 * self.lam * self.yy
            + 0.5 * self.rho * float(np.trace(B2))
            + 0.5 * float(np.sum(B * self.CKC))
        )

    def gradient(self, B: np.ndarray) -> np.ndarray:
        G = (
            B @ (self.Q + self.rho * np.eye(B.shape[0]))
            - self.lam * self.YH
            + (0.5 * self.CKC)
        )
        return G + G.T - np.diag(np.diag(G))


def project_psd(B: np.ndarray) -> np.ndarray:
    """Nearest PSD matrix in Frobenius norm (eigenvalues clipped at 0)."""
    w, U = np.linalg.eigh(0.5 * (B + B.T))
    return (U * np.clip(w, 0.0, None)) @ U.T


class _Method2System:
    """Per-fit factorizations of the Method 2 C step (kdml eqs. 19-20)."""

    def __init__(self, K, codes, gamma, lam, rcond=1e-10):
        n = K.shape[0]
        kappa, V = np.linalg.eigh(0.5 * (K + K.T))
        keep = kappa > rcond * max(kappa[-1], 1e-300)
        self.rank = int(keep.sum())
        V, kappa = V[:, keep], kappa[keep]
        self.V, self.sk = V, np.sqrt(kappa)
        P = gamma * laplacian_matrix(codes) + lam * np.eye(n)
        Kh = V * self.sk  # K^1/2 restricted to range(K): V diag(sqrt kappa)
        N = Kh.T @ P @ Kh  # (r, r) = kappa^1/2 V^T P V kappa^1/2
        self.mu, self.Qn = np.linalg.eigh(0.5 * (N + N.T))
        self.lam = lam

    def solve(self, B: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """C solving eq. 19 (min-norm in range(K)); exact where eq. 20 applies."""
        beta, U = np.linalg.eigh(0.5 * (B + B.T))
        beta = np.clip(beta, 0.0, None)
        Yt = U.T @ Y  # (m, n)
        # d_t = lam V k^-1/2 Qn diag(1/(1+beta_t mu)) Qn^T k^1/2 V^T y_t
        Z = (Yt @ self.V) * self.sk @ self.Qn  # (m, r)
        Z /= 1.0 + beta[:, None] * self.mu[None, :]
        D = self.lam * ((Z @ self.Qn.T) / self.sk) @ self.V.T
        return U @ D


def method2_c_step_dense(
    K: np.ndarray,
    B: np.ndarray,
    Y: np.ndarray,
    codes: np.ndarray,
    gamma: float,
    lam: float,
) -> np.ndarray:
    """kdml eq. 20 literally: an (mn x mn) Kronecker system.

    ``vec(C) = lam (I + gamma (K_Delta K^-1)^T (x) B + lam K (x) B)^-1 vec(Y)``
    (column-major vec; eq. 20 as printed omits the transpose of ``K_Delta K^-1``,
    which matters because ``K_Delta K^-1 = K Lap`` is not symmetric).
    """
    m, n = Y.shape
    KD = K @ laplacian_matrix(codes) @ K
    T = np.linalg.solve(K, KD)  # K^-1 K_Delta = (K_Delta K^-1)^T
    H = np.eye(m * n) + gamma * np.kron(T, B) + lam * np.kron(K, B)
    vec = np.linalg.solve(H, lam * Y.ravel(order="F"))
    return vec.reshape((m, n), order="F")


class KDMLParamKernel(_KDMLBase):
    """Kernel DML with the parameterized matrix kernel ``K = k B`` ("Method 2").

    kdml Sec. 4: ``k`` Gaussian of width ``sigma``, ``B`` PSD learned. Minimizes
    eq. 17 by block coordinate descent: C step eq. 19/20 (structured solve, see the
    module docstring), B step by projected gradient (eqs. 21-22) with Armijo
    backtracking and projection onto the PSD cone. ``transform`` returns
    ``f(x) = B C k(x)`` (eq. 16): Euclidean distances there are eq. 18's metric
    ``||C (k(x) - k(x'))||_A`` with ``A = B^2``.

    Parameters
    ----------
    output_dim : int or None
        m (1 <= m <= c); None: m = c.
    sigma : float
        Width of the Gaussian ``k``.
    gamma, lam, rho : float
        Weights of eq. 17 (note eq. 17's ``gamma/2 tr(C K_Delta C^T B^2)`` equals
        eq. 15's collocation term with ``gamma`` halved).
    max_iter, tol : int, float
        Outer block coordinate descent iterations (>= 1) and relative-decrease
        tolerance (>= 0).
        A descent that reaches ``max_iter`` iterations with the relative decrease of
        eq. 17 still above ``tol`` keeps its last iterate, sets
        ``converged_ = False`` and issues a ``ConvergenceWarning`` (counted in a run
        record's ``inner_convergence_warnings``), as :class:`KDMLFixedKernel` does.
    b_max_iter : int
        Projected-gradient iterations per B step (>= 1).
    prototypes : {"onehot"}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (m, n_train)
        ``C``, column i the coefficient vector ``c_i`` of eq. 16.
    B_ : ndarray of shape (m, m)
        The learned PSD ``B``.
    kernel_rank_ : int
        Numerical rank of the Gaussian Gram matrix used by the C step.
    objective_, objective_path_ : float, ndarray of shape (n_iter_,)
        Eq. 17 after the last and after every outer iteration
        (``objective_path_`` formerly ``objective_history_``, deprecated).
    n_iter_ : int
        Outer block coordinate descent iterations run.
    converged_ : bool
        Whether the relative decrease of eq. 17 fell to ``tol`` before ``max_iter``.
    output_dim_, n_features_out_ : int
        m.
    classes_ : ndarray of shape (c,)
    X_fit_ : ndarray of shape (n_train, n_features)
        Training points of the kernel expansion.
    n_features_in_ : int
    """

    def __init__(
        self,
        output_dim: int | None = None,
        sigma: float = 1.0,
        gamma: float = 1.0,
        lam: float = 1.0,
        rho: float = 1.0,
        max_iter: int = 30,
        tol: float = 1e-5,
        b_max_iter: int = 50,
        prototypes: str = "onehot",
    ):
        self.output_dim = output_dim
        self.sigma = sigma
        self.gamma = gamma
        self.lam = lam
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.b_max_iter = b_max_iter
        self.prototypes = prototypes

    def fit(self, X, y) -> KDMLParamKernel:
        X, codes, Y = self._validate(X, y)
        _check_iterations(
            "KDMLParamKernel",
            "b_max_iter",
            self.b_max_iter,
            "projected-gradient iterations per B step",
        )
        m = self.output_dim_
        gamma, lam, rho = float(self.gamma), float(self.lam), float(self.rho)
        sigma = float(self.sigma)

        def build():  # K and its factorizations, shared across a grid over rho
            K = _gaussian(X, X, sigma)
            return K, _Method2System(K, codes, gamma, lam)

        K, system = _shared_setup("method2", X, codes, (sigma, gamma, lam), build)
        B = np.eye(m)
        history: list[float] = []
        converged = False
        for it in range(1, int(self.max_iter) + 1):
            C = system.solve(B, Y)
            B = self._b_step(C, B, K, Y, codes, gamma, lam, rho)
            history.append(method2_objective(C, B, K, Y, codes, gamma, lam, rho))
            if it > 1:
                prev = history[-2]
                if abs(prev - history[-1]) <= self.tol * max(abs(prev), 1e-12):
                    converged = True
                    break
        if not converged:
            # as Method 1's: the runner counts ConvergenceWarnings into the record,
            # which converged_ never reaches (MetricKNN wraps this estimator)
            warnings.warn(
                f"KDMLParamKernel: no convergence in max_iter={self.max_iter} "
                f"iterations (tol={self.tol:g}); the last iterate is kept. Increase "
                "max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.X_fit_ = X
        self.dual_coef_ = C
        self.B_ = B
        self.kernel_rank_ = system.rank
        self.objective_ = history[-1]
        self.objective_path_ = np.array(history)
        self.n_iter_ = it
        self.converged_ = converged
        self.n_features_out_ = m
        return self

    def _b_step(self, C, B, K, Y, codes, gamma, lam, rho):
        """Projected gradient on eq. 17 in B (eqs. 21-22), Armijo backtracking.

        The step is along the Frobenius gradient ``(G + G^T) / 2`` built from eq.
        22's G, not along eq. 21's ``G + G^T - G o I`` (the derivative in the
        independent entries of a symmetric B): eq. 21's form counts each
        off-diagonal entry twice, and when the PSD constraint binds its projected
        iteration stops above the minimum that Sec. 4 says the procedure finds.

        For fixed C, eq. 17 and eq. 22 depend on B only through m x m statistics
        (``C K_Delta C^T``, ``C K^2 C^T``, ``Y K C^T``, ``C K C^T``), formed once
        per B step: every projected-gradient iteration is then O(m^3).
        """
        st = _BStats(C, K, Y, codes, gamma, lam, rho)
        f = st.objective(B)
        step = 1.0
        for _ in range(int(self.b_max_iter)):
            g = st.gradient(B)
            # st.gradient is eq. 21, which counts each off-diagonal entry twice
            # (the derivative in the independent entries of a symmetric B); the
            # projected-gradient step needs the Frobenius gradient, whose fixed
            # points are the optimum
            g = 0.5 * (g + np.diag(np.diag(g)))
            while True:
                Bn = project_psd(B - step * g)
                fn = st.objective(Bn)
                # sufficient decrease along the projection arc
                if fn <= f - 1e-4 / step * np.sum((Bn - B) ** 2) or step < 1e-12:
                    break
                step *= 0.5
            if fn > f:
                break
            done = f - fn <= 1e-10 * max(abs(f), 1e-12)
            B, f = Bn, fn
            if done:
                break
            step *= 2.0
        return B

    def output_map(self, X) -> np.ndarray:
        """``f(x) = sum_i k(x, x_i) B c_i`` (kdml eq. 16), shape (n, m)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return _gaussian(X, self.X_fit_, self.sigma) @ (self.B_ @ self.dual_coef_).T

    def transform(self, X) -> np.ndarray:
        """``f(x)``: Euclidean distances here are eq. 18's metric."""
        return self.output_map(X)

    def get_mahalanobis_matrix(self) -> np.ndarray:
        """``A = B^2`` on the space of ``C k(x)`` (kdml eq. 18)."""
        check_is_fitted(self)
        return self.B_ @ self.B_
