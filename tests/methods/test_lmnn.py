"""LMNN (methods.metric_learning): objective, gradient, solver, kernel map, errors.

The fast objective (numba, dense and active-set paths) is checked against the dense
reference ``lmnn_loss`` and finite differences; the active-set solver against the
dense solver; the kernel-map LMNN with a linear kernel against LMNN on raw features
(lmnnmkl Eq. 2); the optimum against an independent cvxopt SDP solve.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad
from sklearn.datasets import load_iris, make_blobs
from sklearn.exceptions import ConvergenceWarning

from methods.metric_learning import LMNN, lmnn_loss, target_neighbors
from methods.metric_learning._lmnn_solver import _Objective


def _problem(seed=0, n=36, d=4, centers=3):
    X, y = make_blobs(
        n_samples=n, n_features=d, centers=centers, cluster_std=2.5, random_state=seed
    )
    return X, y


def _brute_force_value(M, X, y, tn, gamma, margin):
    """The objective by explicit enumeration of (i, j, l), no shared code."""
    value = 0.0
    for i in range(len(X)):
        for j in tn[i]:
            dij = (X[i] - X[j]) @ M @ (X[i] - X[j])
            value += (1 - gamma) * dij
            for l in range(len(X)):
                if y[l] != y[i]:
                    dil = (X[i] - X[l]) @ M @ (X[i] - X[l])
                    value += gamma * max(0.0, margin + dij - dil)
    return value


@pytest.mark.parametrize("gamma,margin", [(0.5, 1.0), (0.2, 3.0)])
def test_reference_loss_value_and_gradient(gamma, margin):
    X, y = _problem()
    tn = target_neighbors(X, y, 3)
    rng = np.random.default_rng(0)
    B = rng.normal(size=(4, 4))
    M = B.T @ B / 4
    value, grad = lmnn_loss(M, X, y, tn, gamma, margin)
    assert value == pytest.approx(_brute_force_value(M, X, y, tn, gamma, margin))

    # finite differences in the d*d entries of M (piecewise linear: a random M is
    # away from the kinks)
    def f(m):
        return lmnn_loss(m.reshape(4, 4), X, y, tn, gamma, margin)[0]

    def g(m):
        return lmnn_loss(m.reshape(4, 4), X, y, tn, gamma, margin)[1].ravel()

    err = check_grad(f, g, M.ravel(), epsilon=1e-7)
    assert err < 1e-4 * np.linalg.norm(g(M.ravel()))


def _walk_against_reference(fun, X, y, tn, rng, step: float) -> np.ndarray:
    """Four random steps of L; at each, ``fun`` matches ``lmnn_loss`` (value, grad)."""
    L = np.eye(X.shape[1])
    for _ in range(4):
        L = L + step * rng.normal(size=L.shape)
        value, grad = fun(L.ravel())
        ref_value, ref_grad = lmnn_loss(L.T @ L, X, y, tn, 0.5, 1.0)
        assert value == pytest.approx(ref_value, rel=1e-12)
        # d f(L^T L) / dL = 2 L G
        np.testing.assert_allclose(
            grad.reshape(L.shape), 2 * L @ ref_grad, rtol=1e-10, atol=1e-10
        )
    return L


@pytest.mark.parametrize("active_set", [False, True])
def test_fast_objective_matches_reference(active_set):
    X, y = _problem(seed=1)
    tn = target_neighbors(X, y, 3)
    rng = np.random.default_rng(1)
    fun = _Objective(X, tn, y, 0.5, 1.0, active_set)
    # small moves keep the active-set path in use after the first (dense) call
    L = _walk_against_reference(fun, X, y, tn, rng, step=0.02)
    if active_set:
        assert fun.n_dense < fun.n_evals, "the active set was never used"
        err = check_grad(
            lambda v: fun(v)[0], lambda v: fun(v)[1], L.ravel(), epsilon=1e-7
        )
        assert err < 1e-4 * np.linalg.norm(fun(L.ravel())[1])


def test_gemm_objective_matches_reference(monkeypatch):
    """The all-distances-by-GEMM evaluation (kernel maps) against ``lmnn_loss``."""
    from methods.metric_learning import _lmnn_solver

    monkeypatch.setattr(_lmnn_solver, "GEMM_MIN_FEATURES", 1)
    X, y = _problem(seed=3)
    tn = target_neighbors(X, y, 3)
    rng = np.random.default_rng(3)
    fun = _Objective(X, tn, y, 0.5, 1.0, True)
    fun.gemm_left = 10**6  # every evaluation takes the GEMM path
    _walk_against_reference(fun, X, y, tn, rng, step=0.3)
    assert fun.n_gemm == fun.n_evals == 4


def test_wide_problem_takes_gemm_path_and_reaches_dense_objective():
    """d = 130 >= GEMM_MIN_FEATURES (the kernel-map regime) on overlapping classes.

    Same L-BFGS path as the dense solver (up to rounding): equal after 60 iterations.
    """
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=160,
        n_features=130,
        n_informative=5,
        flip_y=0.1,
        class_sep=0.7,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        dense = LMNN(n_neighbors=3, solver="dense", max_iter=60).fit(X, y)
        fast = LMNN(n_neighbors=3, solver="active_set", max_iter=60).fit(X, y)
    assert fast.solver_info_["n_gemm_evals"] > 0
    assert fast.objective_ == pytest.approx(dense.objective_, rel=1e-6)
    ref = lmnn_loss(fast.get_mahalanobis_matrix(), X, y, fast.target_neighbors_)[0]
    assert fast.objective_ == pytest.approx(ref, rel=1e-10)


def test_active_set_is_safe_after_large_moves():
    """A move past the set's radius must fall back to the dense evaluation."""
    X, y = _problem(seed=2)
    tn = target_neighbors(X, y, 2)
    fun = _Objective(X, tn, y, 0.5, 1.0, True)
    fun(np.eye(4).ravel())
    rng = np.random.default_rng(2)
    for scale in [0.01, 0.3, 1.0, 3.0]:
        L = np.eye(4) + scale * rng.normal(size=(4, 4))
        value, _ = fun(L.ravel())
        assert value == pytest.approx(lmnn_loss(L.T @ L, X, y, tn)[0], rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_active_set_solver_reaches_dense_objective(seed):
    X, y = _problem(seed=seed, n=45, d=5)
    dense = LMNN(n_neighbors=3, solver="dense").fit(X, y)
    fast = LMNN(n_neighbors=3, solver="active_set").fit(X, y)
    assert fast.converged_ and dense.converged_
    assert fast.objective_ == pytest.approx(dense.objective_, rel=1e-6)
    assert fast.solver_info_["n_dense_evals"] < dense.solver_info_["n_dense_evals"]
    # the reported objective is the reference objective at the returned metric
    ref = lmnn_loss(fast.get_mahalanobis_matrix(), X, y, fast.target_neighbors_)[0]
    assert fast.objective_ == pytest.approx(ref, rel=1e-10)


def _cvxopt_lmnn(X, y, tn, gamma, margin):
    """LMNN as an SDP in (M, xi), solved by cvxopt: the independent optimum."""
    pytest.importorskip("cvxopt")
    from cvxopt import matrix, solvers

    n, d = X.shape
    C = np.zeros((d, d))
    rows = []
    for i in range(n):
        for j in tn[i]:
            u = X[i] - X[j]
            C += np.outer(u, u)
            for l in np.flatnonzero(y != y[i]):
                v = X[i] - X[l]
                rows.append(np.outer(u, u) - np.outer(v, v))
    T = len(rows)
    nv = d * d + T  # vec(M) (symmetrized through the objective/constraints) + xi
    c = np.concatenate([(1 - gamma) * C.ravel(), gamma * np.ones(T)])
    # xi_t >= margin + <D_t, M>  ->  <D_t, M> - xi_t <= -margin ; -xi_t <= 0
    G1 = np.zeros((2 * T, nv))
    h1 = np.zeros(2 * T)
    for t, Dt in enumerate(rows):
        G1[t, : d * d] = Dt.ravel()
        G1[t, d * d + t] = -1.0
        h1[t] = -margin
        G1[T + t, d * d + t] = -1.0
    # M PSD: -M <= 0 in the SDP cone (column-major vec of a d x d block)
    Gs = np.zeros((d * d, nv))
    for a in range(d):
        for b in range(d):
            Gs[b * d + a, a * d + b] = -1.0
    solvers.options.update(
        {"show_progress": False, "abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10}
    )
    # symmetry: M_ab = M_ba as equalities
    A = []
    for a in range(d):
        for b in range(a + 1, d):
            r = np.zeros(nv)
            r[a * d + b], r[b * d + a] = 1.0, -1.0
            A.append(r)
    sol = solvers.sdp(
        matrix(c),
        Gl=matrix(G1),
        hl=matrix(h1),
        Gs=[matrix(Gs)],
        hs=[matrix(np.zeros((d, d)))],
        A=matrix(np.array(A)),
        b=matrix(np.zeros(len(A))),
    )
    assert sol["status"] == "optimal"
    return float(sol["primal objective"])


def test_optimum_matches_cvxopt_sdp():
    X, y = _problem(seed=3, n=24, d=2, centers=2)
    tn = target_neighbors(X, y, 2)
    ref = _cvxopt_lmnn(X, y, tn, 0.5, 1.0)
    fit = LMNN(n_neighbors=2, tol=1e-12, max_iter=5000).fit(X, y)
    assert fit.objective_ >= ref * (1 - 1e-6)  # no solver beats the optimum
    assert fit.objective_ == pytest.approx(ref, rel=1e-3)


def test_metric_is_psd_and_transform_matches_metric():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    B = rng.normal(size=(4, 2))
    M0 = B @ B.T + 0.1 * np.eye(4)  # warm start, ill-conditioned
    for init in ["identity", M0]:
        lmnn = LMNN(n_neighbors=3, init=init).fit(X, y)
        M = lmnn.get_mahalanobis_matrix()
        np.testing.assert_allclose(M, M.T)
        w = np.linalg.eigvalsh(M)
        assert w.min() >= -1e-12 * w.max()
        Z = lmnn.transform(X[:5])
        d01 = (X[0] - X[1]) @ M @ (X[0] - X[1])
        assert np.sum((Z[0] - Z[1]) ** 2) == pytest.approx(d01)
        start = lmnn_loss(
            np.eye(4) if isinstance(init, str) else M0, X, y, lmnn.target_neighbors_
        )[0]
        assert lmnn.objective_ < start


def test_warm_start_from_optimum_stays():
    X, y = _problem(seed=4)
    first = LMNN(n_neighbors=3).fit(X, y)
    again = LMNN(n_neighbors=3, init=first.get_mahalanobis_matrix()).fit(X, y)
    assert again.objective_ <= first.objective_ * (1 + 1e-9)


def test_kernel_map_with_linear_kernel_equals_raw_features():
    """lmnnmkl Eq. 2: d_A(K^i, K^j) = d_M(x_i, x_j) with M = X^T A X."""
    X, y = _problem(seed=5, n=30, d=3)
    K = X @ X.T
    raw = LMNN(n_neighbors=3).fit(X, y)
    kmap = LMNN(n_neighbors=3, kernel="precomputed").fit(K, y)
    # feature-space target neighbours of a linear kernel are the raw ones
    np.testing.assert_array_equal(kmap.target_neighbors_, raw.target_neighbors_)
    A = kmap.get_mahalanobis_matrix()
    M = X.T @ A @ X
    # the reparametrization: same distances, same objective (exactly)
    Zk = kmap.transform(K)
    Dk = ((Zk[:, None] - Zk[None]) ** 2).sum(-1)
    diff = X[:, None] - X[None]
    np.testing.assert_allclose(
        Dk, np.einsum("ija,ab,ijb->ij", diff, M, diff), rtol=1e-8, atol=1e-8 * Dk.max()
    )
    obj_as_M = lmnn_loss(M, X, y, raw.target_neighbors_)[0]
    assert kmap.objective_ == pytest.approx(obj_as_M, rel=1e-9)
    # both solve the same convex problem in M: same optimal objective
    assert kmap.objective_ == pytest.approx(raw.objective_, rel=1e-3)
    # test points: the kernel block k(x_t, X) maps like x_t does under M
    Xt = X[:4] + 0.3
    Zt = kmap.transform(Xt @ X.T)
    dt = np.sum((Zt[0] - Zk[7]) ** 2)
    assert dt == pytest.approx((Xt[0] - X[7]) @ M @ (Xt[0] - X[7]), rel=1e-8)


def test_target_neighbors_are_same_class_nearest():
    X, y = _problem(seed=6)
    tn = target_neighbors(X, y, 3)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    for i in range(len(X)):
        same = np.flatnonzero((y == y[i]) & (np.arange(len(X)) != i))
        expected = same[np.argsort(D[i, same], kind="stable")[:3]]
        np.testing.assert_array_equal(tn[i], expected)
        assert i not in tn[i]


def test_fixed_target_neighbors_are_used():
    X, y = _problem(seed=7)
    tn = target_neighbors(X, y, 3)[:, ::-1].copy()
    lmnn = LMNN(n_neighbors=3).fit(X, y, target_neighbors=tn)
    np.testing.assert_array_equal(lmnn.target_neighbors_, tn)


@pytest.mark.parametrize(
    "y,match",
    [
        (
            np.array([0] * 10 + [1] * 3),
            r"class 1 has 3.*Lower n_neighbors to at most 2",
        ),
        (np.array([7] * 13), r"at least 2 classes.*only class 7"),
    ],
    ids=["class-too-small", "single-class"],
)
def test_bad_labels_raise_clear_errors(y, match):
    X = np.random.default_rng(0).normal(size=(13, 3))
    with pytest.raises(ValueError, match=match):
        LMNN(n_neighbors=3).fit(X, y)


def test_bad_init_and_kernel_shape_raise():
    X, y = _problem(seed=8)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        LMNN(init=-np.eye(4)).fit(X, y)
    with pytest.raises(ValueError, match=r"\(4, 4\) matrix"):
        LMNN(init=np.eye(3)).fit(X, y)
    with pytest.raises(ValueError, match="square"):
        LMNN(kernel="precomputed").fit(X, y)


def test_row_space_reduction_is_exact():
    """d > n: solving in X's row space gives the full-space solver's metric."""
    from methods.metric_learning._lmnn_solver import solve_lmnn

    rng = np.random.default_rng(9)
    X, y = _problem(seed=9, n=24, d=3, centers=2)
    X = np.hstack([X, X @ rng.normal(size=(3, 37))]) + 0.01 * rng.normal(size=(24, 40))
    lmnn = LMNN(n_neighbors=3, tol=1e-9).fit(X, y)
    assert lmnn.solver_info_["n_solver_features"] == 24
    full = solve_lmnn(X, lmnn.target_neighbors_, y, np.eye(40), tol=1e-9)
    assert lmnn.objective_ == pytest.approx(full["objective"], rel=1e-6)
    Xt = rng.normal(size=(5, 40))
    np.testing.assert_allclose(
        lmnn.get_mahalanobis_matrix(), full["L"].T @ full["L"], atol=1e-6
    )
    Z, Zf = lmnn.transform(Xt), Xt @ full["L"].T
    np.testing.assert_allclose(Z @ Z.T, Zf @ Zf.T, rtol=1e-5, atol=1e-6)


def test_own_lbfgs_minimizes_rosenbrock():
    from scipy.optimize import rosen, rosen_der

    from methods.metric_learning._lmnn_solver import lbfgs

    res = lbfgs(
        lambda x: (rosen(x), rosen_der(x)), np.zeros(6), max_iter=2000, tol=1e-15
    )
    np.testing.assert_allclose(res["x"], np.ones(6), atol=1e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_large_problem_path_active_set_reaches_dense(monkeypatch, seed):
    """The solver's own L-BFGS (used from LARGE_PROBLEM variables on)."""
    from methods.metric_learning import _lmnn_solver

    monkeypatch.setattr(_lmnn_solver, "LARGE_PROBLEM", 0)
    X, y = _problem(seed=seed, n=45, d=5)
    dense = LMNN(n_neighbors=3, solver="dense").fit(X, y)
    fast = LMNN(n_neighbors=3, solver="active_set").fit(X, y)
    assert fast.converged_ and dense.converged_
    assert fast.objective_ == pytest.approx(dense.objective_, rel=1e-6)
    monkeypatch.setattr(_lmnn_solver, "LARGE_PROBLEM", 10**9)
    scipy_path = LMNN(n_neighbors=3).fit(X, y)
    assert fast.objective_ == pytest.approx(scipy_path.objective_, rel=1e-3)


def test_compiled_vector_updates_round_as_numpy():
    from methods.metric_learning._lmnn_kernels import add_scaled, step_from, sub_scaled

    rng = np.random.default_rng(0)
    q, y = rng.normal(size=100_003), rng.normal(size=100_003) * 1e3
    a = float(rng.normal()) / 3.0
    expect = q - a * y
    sub_scaled(q, a, y)
    np.testing.assert_array_equal(q, expect)  # an FMA would differ in ~1/3 of them
    expect = q + a * y
    add_scaled(q, a, y)
    np.testing.assert_array_equal(q, expect)
    np.testing.assert_array_equal(step_from(q, a, y), q + a * y)


def test_own_lbfgs_follows_the_numpy_reference_bit_for_bit():
    from benchmarks._lbfgs_reference import lbfgs_numpy
    from methods.metric_learning._lmnn_solver import lbfgs

    rng = np.random.default_rng(1)
    A = rng.normal(size=(60, 60))
    H = A @ A.T / 60 + np.eye(60)
    c = rng.normal(size=60)

    def fun(x):  # a smooth non-quadratic: quadratic plus a softplus term
        value = 0.5 * x @ H @ x - c @ x + np.logaddexp(0.0, x).sum()
        return float(value), H @ x - c + 1 / (1 + np.exp(-x))

    x0 = rng.normal(size=60)
    res = lbfgs(fun, x0, max_iter=60, tol=0.0)
    ref = lbfgs_numpy(fun, x0, max_iter=60, tol=0.0)
    assert res["nit"] == ref["nit"]
    np.testing.assert_array_equal(res["x"], ref["x"])
    assert res["fun"] == ref["fun"]


def test_own_lbfgs_line_search_follows_the_numpy_reference_on_rosenbrock():
    """Guards the line search and the stopping rule of the solver's own L-BFGS.

    On the smooth quadratic-plus-softplus above every unit step is accepted, so the
    Armijo test, the quadratic-interpolation step and its clamps to [0.1 t, 0.5 t]
    never run; from (-1.2, 1) on Rosenbrock they do. Near the optimum |f| < 1, so
    the relative decrease is taken against max(|f|, 1) (L-BFGS-B's ftol rule).
    The iterates must be those of the independent numpy reference, bit for bit,
    and every accepted step must lower f (Armijo, Nocedal & Wright Alg. 7.4).
    """
    from scipy.optimize import rosen, rosen_der

    from benchmarks._lbfgs_reference import lbfgs_numpy
    from methods.metric_learning._lmnn_solver import lbfgs

    n_evals = [0]

    def fun(x):
        n_evals[0] += 1
        return float(rosen(x)), rosen_der(x)

    x0 = np.array([-1.2, 1.0])
    values = []
    res = lbfgs(fun, x0, max_iter=200, tol=1e-9, callback=values.append)
    assert n_evals[0] > res["nit"] + 1, "no step was ever backtracked"
    ref = lbfgs_numpy(fun, x0, max_iter=200, tol=1e-9)
    assert res["status"] == 0
    assert res["nit"] == ref["nit"]
    np.testing.assert_array_equal(res["x"], ref["x"])
    assert np.all(np.diff([rosen(x0), *values]) < 0)


@pytest.mark.parametrize("x0", [0.5, 0.5 + 1e-5])
def test_own_lbfgs_backtracking_rules_on_a_parabola(x0):
    """Guards the Armijo test and the clamp of the interpolated step.

    f(x) = x^2 from x0: the first trial is the unit step against the gradient,
    to x0 - 1. From 0.5 it leaves f unchanged, which the sufficient decrease
    f_new <= f + 1e-4 t slope rejects; the quadratic interpolation is then exact
    and lands on 0. From 0.5 + 1e-5 it lowers f by less than Armijo asks; the
    interpolated step (just above t / 2) is clamped to t / 2. Both runs must match
    the numpy reference bit for bit.
    """
    from benchmarks._lbfgs_reference import lbfgs_numpy
    from methods.metric_learning._lmnn_solver import lbfgs

    def fun(x):
        return float(x @ x), 2.0 * x

    start = np.array([x0])
    res = lbfgs(fun, start, max_iter=50, tol=0.0)
    ref = lbfgs_numpy(fun, start, max_iter=50, tol=0.0)
    assert res["nit"] == ref["nit"]
    np.testing.assert_array_equal(res["x"], ref["x"])
    first = lbfgs(fun, start, max_iter=1, tol=0.0)
    expected = 0.0 if x0 == 0.5 else x0 - 0.5  # t = 1, rejected; then t = 1/2
    assert first["x"][0] == pytest.approx(expected, abs=1e-15)
    assert first["fun"] < x0**2


def test_verbose_prints_the_objective_and_fits_the_same_metric(capsys):
    # verbose=True failed on its first iteration: scipy hands a callback whose
    # parameter is not named intermediate_result the iterate x, not the result
    X, y = _problem()[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        loud = LMNN(n_neighbors=2, max_iter=5, verbose=True).fit(X, y)
        quiet = LMNN(n_neighbors=2, max_iter=5).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("[LMNN] eval") for line in lines)
    assert f"objective {loud.objective_:.8g}" in lines[-1]
    np.testing.assert_array_equal(loud.components_, quiet.components_)
