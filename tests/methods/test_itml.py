"""ITML (Davis et al. 2007): Bregman projections against a slow reference."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from methods.metric_learning._itml import (
    ITML,
    itml_projection,
    itml_solve,
    itml_solve_python,
)
from methods.metric_learning._itml_kernels import bregman_passes


def _logdet_div(M, M0):
    P = np.linalg.solve(M0, M)
    sign, logdet = np.linalg.slogdet(P)
    return np.trace(P) - logdet - len(M) if sign > 0 else np.inf


def _slow_projection(M0, v, xi0, gamma):
    """min D_ld(M, M0) + gamma D_ld(xi, xi0) s.t. v^T M v = xi, by SLSQP."""
    d = len(M0)
    iu = np.triu_indices(d)

    def unpack(z):
        M = np.zeros((d, d))
        M[iu] = z[:-1]
        return M + np.triu(M, 1).T, z[-1]

    def obj(z):
        M, xi = unpack(z)
        if xi <= 0:
            return 1e10
        r = xi / xi0
        return _logdet_div(M, M0) + gamma * (r - np.log(r) - 1.0)

    cons = {"type": "eq", "fun": lambda z: v @ unpack(z)[0] @ v - unpack(z)[1]}
    z0 = np.append(M0[iu], xi0)
    res = minimize(
        obj,
        z0,
        constraints=[cons],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return unpack(res.x)


@pytest.mark.parametrize("delta", [1, -1])
@pytest.mark.parametrize("gamma", [0.5, 3.0])
def test_projection_satisfies_constraint_and_matches_slow_reference(delta, gamma):
    rng = np.random.default_rng(1)
    A = rng.normal(size=(2, 2))
    M0 = A @ A.T + np.eye(2)
    v = rng.normal(size=2)
    p = v @ M0 @ v
    xi0 = p * (0.5 if delta == 1 else 2.0)  # a violated constraint
    M, xi, lam, alpha = itml_projection(M0, v, xi0, 1e6, delta, gamma)
    assert v @ M @ v == pytest.approx(xi, rel=1e-10)  # on the constraint
    assert lam == pytest.approx(1e6 - alpha)
    M_ref, xi_ref = _slow_projection(M0, v, xi0, gamma)
    np.testing.assert_allclose(M, M_ref, rtol=2e-4, atol=2e-5)
    assert xi == pytest.approx(xi_ref, rel=2e-4)


def test_hard_projection_hits_the_bound():
    rng = np.random.default_rng(2)
    M0 = np.eye(3)
    v = rng.normal(size=3)
    M, xi, _, _ = itml_projection(M0, v, 0.1, np.inf, 1, np.inf)
    assert xi == 0.1
    assert v @ M @ v == pytest.approx(0.1, rel=1e-12)
    assert np.linalg.eigvalsh(M).min() > 0


def test_solver_satisfies_feasible_hard_constraints():
    # M = diag(0.4, 25, 25) satisfies all four constraints, so they are feasible
    V = np.array([[1, 0, 0], [1, 0, 0.05], [0, 1, 0], [0, 0.5, 1.0]])
    Z = np.vstack([np.zeros((4, 3)), V])
    pairs = np.array([[4, 0], [5, 1], [6, 2], [7, 3]])
    delta = np.array([1, 1, -1, -1])
    bounds = np.array([0.5, 0.5, 20.0, 20.0])
    M, it, ok = itml_solve(
        Z, pairs, delta, bounds, gamma=np.inf, max_iter=20000, tol=1e-7
    )
    assert ok
    d = np.einsum(
        "ij,jk,ik->i",
        Z[pairs[:, 0]] - Z[pairs[:, 1]],
        M,
        Z[pairs[:, 0]] - Z[pairs[:, 1]],
    )
    assert np.all(d[delta == 1] <= bounds[delta == 1] * (1 + 1e-3))
    assert np.all(d[delta == -1] >= bounds[delta == -1] * (1 - 1e-3))


def test_kernelized_linear_equals_feature_itml():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 4))
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] += 2.0
    a = ITML(gamma=1.0, random_state=0).fit(X, y)
    b = ITML(gamma=1.0, kernel="precomputed", random_state=0).fit(X @ X.T, y)
    Xt = rng.normal(size=(7, 4))
    Ta, Tb = a.transform(Xt), b.transform(Xt @ X.T)
    Ra, Rb = a.transform(X), b.transform(X @ X.T)
    Da = np.sum((Ta[:, None] - Ra[None]) ** 2, axis=2)
    Db = np.sum((Tb[:, None] - Rb[None]) ** 2, axis=2)
    np.testing.assert_allclose(Da, Db, rtol=1e-6, atol=1e-8)


def test_itml_single_class_error():
    with pytest.raises(ValueError, match="at least 2 classes"):
        ITML().fit(np.zeros((5, 2)) + np.arange(5)[:, None], np.zeros(5))


def _random_constraints(rng, n, d, nc):
    Z = rng.normal(size=(n, d))
    y = rng.integers(0, 3, n)
    i = rng.integers(0, n, nc)
    j = (i + 1 + rng.integers(0, n - 1, nc)) % n
    delta = np.where(y[i] == y[j], 1, -1)
    D = np.sum((Z[i] - Z[j]) ** 2, axis=1)
    bounds = np.where(delta == 1, np.percentile(D, 5), np.percentile(D, 95))
    return Z, np.column_stack([i, j]), delta, bounds


@pytest.mark.parametrize("gamma", [0.5, 1.0, np.inf])
def test_compiled_pass_equals_python_projections(gamma):
    """One compiled pass = the numpy loop of itml_projection, state by state."""
    rng = np.random.default_rng(5)
    Z, pairs, delta, bounds = _random_constraints(rng, 25, 6, 40)
    V = Z[pairs[:, 0]] - Z[pairs[:, 1]]
    A = rng.normal(size=(6, 6))
    M0 = A @ A.T / 6 + np.eye(6)
    lam0 = rng.uniform(0, 0.2, size=len(V)) * (rng.random(len(V)) < 0.5)
    M, xi, lam = M0.copy(), bounds.astype(float), lam0.copy()
    it, _ = bregman_passes(M, V, delta.astype(np.int64), xi, lam, gamma, 1, 0.0)
    assert it == 1
    M_ref, xi_ref, lam_ref = M0.copy(), bounds.astype(float), lam0.copy()
    for c in range(len(V)):
        M_ref, xi_ref[c], lam_ref[c], _ = itml_projection(
            M_ref, V[c], xi_ref[c], lam_ref[c], int(delta[c]), gamma
        )
    np.testing.assert_allclose(M, M_ref, rtol=0, atol=1e-10 * np.abs(M_ref).max())
    np.testing.assert_allclose(xi, xi_ref, rtol=1e-10)
    np.testing.assert_allclose(lam, lam_ref, rtol=1e-10, atol=1e-14)
    # the rank-one updates keep M symmetric (up to rounding)
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-12 * np.abs(M).max())


@pytest.mark.parametrize(
    ("n", "d", "nc", "gamma", "tol"),
    [(30, 5, 40, 1.0, 1e-3), (40, 12, 80, np.inf, 1e-3), (60, 20, 180, 0.5, 1e-6)],
)
def test_compiled_solver_equals_python_loop(n, d, nc, gamma, tol):
    rng = np.random.default_rng(n)
    Z, pairs, delta, bounds = _random_constraints(rng, n, d, nc)
    M, it, ok = itml_solve(Z, pairs, delta, bounds, gamma=gamma, max_iter=200, tol=tol)
    M_ref, it_ref, ok_ref = itml_solve_python(
        Z, pairs, delta, bounds, gamma=gamma, max_iter=200, tol=tol
    )
    assert (it, ok) == (it_ref, ok_ref)
    np.testing.assert_allclose(M, M_ref, rtol=0, atol=1e-10 * np.abs(M_ref).max())


@pytest.mark.parametrize("delta", [1, -1])
@pytest.mark.parametrize("gamma", [0.5, np.inf])
def test_compiled_projection_lands_on_its_constraint(delta, gamma):
    """A violated constraint, uncapped dual: after its projection v^T M v = xi'."""
    rng = np.random.default_rng(6)
    A = rng.normal(size=(4, 4))
    M = A @ A.T + np.eye(4)
    v = rng.normal(size=(1, 4))
    p = float(v[0] @ M @ v[0])
    xi = np.array([p * (0.5 if delta == 1 else 2.0)])
    lam = np.array([1e6])
    bregman_passes(M, v, np.array([delta]), xi, lam, gamma, 1, 0.0)
    assert float(v[0] @ M @ v[0]) == pytest.approx(xi[0], rel=1e-10)
    assert np.linalg.eigvalsh(M).min() > 0
    if np.isinf(gamma):
        assert xi[0] == pytest.approx(p * (0.5 if delta == 1 else 2.0))


def _two_blobs(n=40, seed=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.repeat([0, 1], n // 2)
    X[y == 1, 0] += 1.0
    return X, y


def test_fit_pulls_similar_pairs_and_pushes_dissimilar_ones():
    """Guards the constraint signs and bounds of ``ITML.fit`` (Davis et al. Alg. 1).

    Same-class pairs get the upper bound u (``delta = +1``), different-class pairs
    the lower bound l (``-1``), so the learned metric must separate the classes
    more than the Euclidean one: the ratio of mean different-class to mean
    same-class squared distance (over all pairs, a dense formula) grows. And
    ``components_`` must factor ``metric_`` (``transform`` distances are d_M).
    """
    X, y = _two_blobs()
    est = ITML(gamma=1.0, max_iter=2000).fit(X, y)
    M = est.metric_
    diff = X[:, None] - X[None]
    D = np.einsum("ija,ab,ijb->ij", diff, M, diff)
    E = np.sum(diff**2, axis=2)
    same = (y[:, None] == y[None]) & ~np.eye(len(y), dtype=bool)
    other = y[:, None] != y[None]
    ratio, euclid = D[other].mean() / D[same].mean(), E[other].mean() / E[same].mean()
    assert ratio > 1.2 * euclid
    np.testing.assert_allclose(est.components_.T @ est.components_, M, atol=1e-10)
    Z = est.transform(X)
    np.testing.assert_allclose(np.sum((Z[:, None] - Z[None]) ** 2, axis=2), D,
                               rtol=1e-8, atol=1e-10)


def test_bounds_are_percentiles_of_distinct_pair_distances():
    """Guards u and l: the 5th/95th percentiles of distances of pairs i != j.

    On 10 points about 1 in 10 sampled pairs is (i, i) (11 of the 100 here);
    counted, those zeros would make the 5th percentile u = 0. Both bounds must
    lie within the range of the distinct-pair squared distances (scipy's pdist),
    u below l.
    """
    from scipy.spatial.distance import pdist

    X, y = _two_blobs(n=10, seed=3)
    u, l_ = ITML().fit(X, y).bounds_
    d2 = pdist(X) ** 2
    assert d2.min() <= u < l_ <= d2.max()
    assert u >= np.percentile(d2, 1) and l_ <= np.percentile(d2, 99.5)


def test_default_constraint_count_is_twenty_c_squared():
    """Guards ``n_constraints=None``: 20 c^2 pairs, as Davis et al.'s code."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(45, 3))
    y = np.repeat([0, 1, 2], 15)
    X[y == 1, 0] += 1.0
    a = ITML().fit(X, y)
    b = ITML(n_constraints=180).fit(X, y)
    np.testing.assert_array_equal(a.metric_, b.metric_)


def test_gaussian_kernel_itml_equals_feature_itml_on_explicit_features():
    """Guards the kernelized coordinates (Davis et al. Sec. 4) for a full-rank kernel.

    ITML from M0 = I is rotation invariant, so kernel="gaussian" must give the
    distances of feature ITML on explicit features with that Gram matrix,
    Phi = K^1/2 (training) and k(x, X) K^-1/2 (test points), a dense reference.
    Every eigenvalue of this K (the smallest ~0.005 of the largest) must be kept.
    """
    from methods._kernels import pairwise_kernel

    X, y = _two_blobs(n=30, seed=9)
    Xt = np.random.default_rng(10).normal(size=(5, 3))
    sigma = 0.7
    K = pairwise_kernel(X, kernel="gaussian", sigma=sigma)
    w, V = np.linalg.eigh(K)
    Phi = (V * np.sqrt(w)) @ V.T
    Kt = pairwise_kernel(Xt, X, kernel="gaussian", sigma=sigma)
    Phi_t = Kt @ (V / np.sqrt(w)) @ V.T
    a = ITML(kernel="gaussian", sigma=sigma, max_iter=300).fit(X, y)
    b = ITML(max_iter=300).fit(Phi, y)
    assert a.components_.shape == (30, 30)
    Ra, Rb = a.transform(X), b.transform(Phi)
    for A, B in [(Ra, Rb), (a.transform(Xt), b.transform(Phi_t))]:
        Da = np.sum((A[:, None] - Ra[None]) ** 2, axis=2)
        Db = np.sum((B[:, None] - Rb[None]) ** 2, axis=2)
        np.testing.assert_allclose(Da, Db, rtol=1e-6, atol=1e-8)
