"""kdml Methods 1 and 2: each block step against a dense solve of the same equations."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from methods.metric_learning._kdml import (
    KDMLFixedKernel,
    KDMLParamKernel,
    SingularSystemError,
    _gaussian,
    _Method1System,
    _Method2System,
    laplacian_apply,
    laplacian_matrix,
    method1_c_step_naive,
    method1_l_step,
    method1_objective,
    method2_b_gradient,
    method2_c_step_dense,
    method2_objective,
    project_psd,
    prototype_targets,
    spreads,
)

GAMMA, LAM, RHO = 0.7, 1.3, 0.5


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    n, d, m = 18, 3, 3
    X = rng.normal(size=(n, d))
    codes = np.repeat([0, 1, 2], 6)
    Y = prototype_targets(3, m)[codes].T
    A0 = rng.normal(size=(m, m))
    A = A0 @ A0.T + 0.2 * np.eye(m)
    return rng, X, codes, Y, A


def _ks(X, m, sigma=0.8):
    return np.stack([_gaussian(X, X, s) for s in spreads(sigma, m, 4.0)])


def test_prototypes_distinct_unit_norm():
    for c, m in [(2, 2), (3, 2), (4, 2), (4, 3), (3, 3), (6, 3)]:
        P = prototype_targets(c, m)
        assert P.shape == (c, m)
        np.testing.assert_allclose(np.linalg.norm(P, axis=1), 1.0)
        D = np.linalg.norm(P[:, None] - P[None], axis=2)
        assert np.all(D[~np.eye(c, dtype=bool)] > 0.1)


def test_laplacian_apply_matches_dense(problem):
    rng, X, codes, Y, A = problem
    V = rng.normal(size=(2, len(codes)))
    np.testing.assert_allclose(
        laplacian_apply(V, codes, 3), V @ laplacian_matrix(codes), atol=1e-12
    )


@pytest.mark.parametrize("method", ["cg", "cholesky"])
def test_method1_c_step_equals_dense_pinv_and_decreases(problem, method):
    rng, X, codes, Y, A = problem
    Ks = _ks(X, 3)
    C_ref = method1_c_step_naive(Ks, A, Y, codes, GAMMA, LAM)
    C, info = _Method1System(Ks, codes, GAMMA, LAM).solve(A, Y, method=method)
    assert "fallback" not in info
    np.testing.assert_allclose(C, C_ref, rtol=1e-6, atol=1e-6 * np.abs(C_ref).max())
    L = np.linalg.cholesky(A).T
    f = method1_objective(C, L, Ks, Y, codes, GAMMA, LAM, RHO)
    C0 = rng.normal(size=C.shape)
    assert f <= method1_objective(C0, L, Ks, Y, codes, GAMMA, LAM, RHO)
    for _ in range(5):  # a minimizer: no random perturbation lowers it
        Cp = C + 1e-4 * rng.normal(size=C.shape)
        assert method1_objective(Cp, L, Ks, Y, codes, GAMMA, LAM, RHO) >= f - 1e-10


def test_method1_l_step_is_stationary_and_decreases(problem):
    rng, X, codes, Y, A = problem
    Ks = _ks(X, 3)
    C, _ = _Method1System(Ks, codes, GAMMA, LAM).solve(A, Y)
    F = np.einsum("tij,tj->ti", Ks, C)
    L = method1_l_step(F, Y, codes, GAMMA, LAM, RHO)
    # dense eq. 13: pair sums over all (i, j) and an explicit pseudo-inverse
    n = len(codes)
    S = (codes[:, None] == codes[None, :]).astype(float)
    M = sum(
        S[i, j] * np.outer(F[:, i] - F[:, j], F[:, i] - F[:, j])
        for i in range(n)
        for j in range(n)
    )
    M = GAMMA * M + LAM * sum(
        np.outer(F[:, i] - Y[:, i], F[:, i] - Y[:, i]) for i in range(n)
    )
    np.testing.assert_allclose(L, -RHO * np.linalg.pinv(M), rtol=1e-8, atol=1e-10)
    f = method1_objective(C, L, Ks, Y, codes, GAMMA, LAM, RHO)
    L_old = np.linalg.cholesky(A).T
    assert f <= method1_objective(C, L_old, Ks, Y, codes, GAMMA, LAM, RHO)
    for _ in range(5):
        Lp = L + 1e-4 * rng.normal(size=L.shape)
        assert method1_objective(C, Lp, Ks, Y, codes, GAMMA, LAM, RHO) >= f - 1e-10


def test_method1_fit_monotone(problem):
    rng, X, codes, Y, A = problem
    est = KDMLFixedKernel(
        output_dim=2, sigma=0.8, gamma=GAMMA, lam=LAM, rho=RHO, max_iter=15, tol=0
    ).fit(X, codes)
    h = est.objective_path_
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]).max())
    est_naive = KDMLFixedKernel(
        output_dim=2,
        sigma=0.8,
        gamma=GAMMA,
        lam=LAM,
        rho=RHO,
        max_iter=15,
        tol=0,
        c_solver="naive",
    ).fit(X, codes)
    np.testing.assert_allclose(
        est.transform(X), est_naive.transform(X), rtol=1e-5, atol=1e-7
    )


def test_method2_c_step_equals_eq20_and_decreases(problem):
    rng, X, codes, Y, B = problem
    K = _gaussian(X, X, 0.8)
    C_ref = method2_c_step_dense(K, B, Y, codes, GAMMA, LAM)
    C = _Method2System(K, codes, GAMMA, LAM).solve(B, Y)
    np.testing.assert_allclose(C, C_ref, rtol=1e-7, atol=1e-9 * np.abs(C_ref).max())
    f = method2_objective(C, B, K, Y, codes, GAMMA, LAM, RHO)
    for _ in range(5):
        Cp = C + 1e-4 * rng.normal(size=C.shape)
        assert method2_objective(Cp, B, K, Y, codes, GAMMA, LAM, RHO) >= f - 1e-12


def test_method2_b_gradient_finite_differences(problem):
    rng, X, codes, Y, B = problem
    K = _gaussian(X, X, 0.8)
    C = rng.normal(size=Y.shape)
    G = method2_b_gradient(C, B, K, Y, codes, GAMMA, LAM, RHO)
    eps = 1e-6
    m = B.shape[0]
    for i in range(m):
        for j in range(i, m):
            E = np.zeros((m, m))
            E[i, j] = E[j, i] = 1.0  # eq. 21: derivative in the entry B_ij = B_ji
            fp = method2_objective(C, B + eps * E, K, Y, codes, GAMMA, LAM, RHO)
            fm = method2_objective(C, B - eps * E, K, Y, codes, GAMMA, LAM, RHO)
            assert G[i, j] == pytest.approx((fp - fm) / (2 * eps), rel=1e-6, abs=1e-7)


def test_method2_b_psd_and_monotone(problem):
    rng, X, codes, Y, _ = problem
    with pytest.warns(ConvergenceWarning, match="max_iter=10"):  # tol = 0
        est = KDMLParamKernel(
            output_dim=3, sigma=0.8, gamma=GAMMA, lam=LAM, rho=RHO, max_iter=10, tol=0
        ).fit(X, codes)
    assert np.linalg.eigvalsh(est.B_).min() >= -1e-12
    h = est.objective_path_
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h).max())
    W = rng.normal(size=(3, 3))
    assert np.linalg.eigvalsh(project_psd(W)).min() >= -1e-12


def test_output_dim_larger_than_allowed(problem):
    rng, X, codes, Y, _ = problem
    for cls in (KDMLFixedKernel, KDMLParamKernel):
        with pytest.raises(ValueError, match="larger than allowed"):
            cls(output_dim=4).fit(X, codes)  # 3 classes


def test_single_class_subsample_is_a_clear_error(problem):
    rng, X, codes, Y, _ = problem
    for cls in (KDMLFixedKernel, KDMLParamKernel):
        with pytest.raises(ValueError, match="at least 2 classes"):
            cls().fit(X[codes == 0], codes[codes == 0])


def test_singular_l_step_raises(problem):
    rng, X, codes, Y, _ = problem
    # outputs equal to the targets and constant within a class: M = 0
    F = Y.copy()
    with pytest.raises(SingularSystemError, match="singular"):
        method1_l_step(F, Y, codes, GAMMA, LAM, RHO)


def test_method2_b_statistics_equal_eq17_and_eq22(problem):
    from methods.metric_learning._kdml import _BStats

    rng, X, codes, Y, B = problem
    K = _gaussian(X, X, 0.8)
    C = rng.normal(size=Y.shape)
    st = _BStats(C, K, Y, codes, GAMMA, LAM, RHO)
    assert st.objective(B) == pytest.approx(
        method2_objective(C, B, K, Y, codes, GAMMA, LAM, RHO), rel=1e-12
    )
    np.testing.assert_allclose(
        st.gradient(B),
        method2_b_gradient(C, B, K, Y, codes, GAMMA, LAM, RHO),
        rtol=1e-10,
        atol=1e-12,
    )


def _dense_kbar(Ks):
    m, n, _ = Ks.shape
    return np.einsum("tij,ts->isjt", Ks, np.eye(m)).reshape(n * m, n * m)


def test_method1_objective_is_unbounded_below(problem):
    """Eq. 9 as printed has no minimizer (the finding behind ``max_metric_norm``).

    Dense check: ``c* = Kbar^-1 y`` interpolates the targets, so every residual and
    every same-class difference is 0 (M = 0), and ``Q(c*, -t I)`` falls by
    ``rho m`` per unit of t without bound. A formulation with a bound on ``L`` or
    ``A`` (a constraint, a trace/norm term) would fail this test.
    """
    rng, X, codes, Y, _ = problem
    m = Y.shape[0]
    Ks = _ks(X, m)
    c_star = np.linalg.solve(_dense_kbar(Ks), Y.T.ravel())  # point-major c
    C = c_star.reshape(-1, m).T
    F = np.einsum("tij,tj->ti", Ks, C)
    np.testing.assert_allclose(F, Y, atol=1e-8)
    q0 = 0.5 * float(c_star @ _dense_kbar(Ks) @ c_star)
    ts = np.array([1.0, 1e2, 1e4, 1e6])
    q = [
        method1_objective(C, -t * np.eye(m), Ks, Y, codes, GAMMA, LAM, RHO)
        for t in ts
    ]
    np.testing.assert_allclose(q, q0 - RHO * m * ts, rtol=1e-6, atol=1e-6)
    # and every L step is a descent to -rho^2/2 tr(M^-1): near c*, M -> 0
    for eps in (1e-1, 1e-2, 1e-3):
        Fe = F + eps * rng.normal(size=F.shape)
        L = method1_l_step(Fe, Y, codes, GAMMA, LAM, RHO)
        assert np.linalg.norm(L, 2) > RHO / (eps**2 * 100 * len(codes))


def test_method1_stops_at_max_metric_norm(problem):
    """Runs off (rho = 1, sigma = 2 on the fixture): stopped by the named rule."""
    rng, X, codes, Y, _ = problem
    kw = dict(sigma=2.0, rho=1.0, max_iter=100, tol=1e-8)
    with pytest.warns(ConvergenceWarning, match="unbounded below"):
        low = KDMLFixedKernel(max_metric_norm=1e4, **kw).fit(X, codes)
    assert low.diverged_ and not low.converged_
    assert np.linalg.norm(low.get_mahalanobis_matrix(), 2) > 1e4
    with pytest.warns(ConvergenceWarning, match="unbounded below"):
        high = KDMLFixedKernel(max_metric_norm=1e8, **kw).fit(X, codes)
    assert high.diverged_ and high.n_iter_ > low.n_iter_
    assert high.objective_ < low.objective_  # further down the unbounded descent
    # the bounded regime (small rho): a fixed point with a small metric, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ok = KDMLFixedKernel(sigma=2.0, rho=0.1, max_iter=100, tol=1e-8).fit(X, codes)
    assert ok.converged_ and not ok.diverged_
    assert np.linalg.norm(ok.get_mahalanobis_matrix(), 2) < 1e-2
    with pytest.raises(ValueError, match="max_metric_norm"):
        KDMLFixedKernel(max_metric_norm=0.0).fit(X, codes)


def test_method2_warns_when_max_iter_stops_it(problem):
    """A descent cut off by max_iter is a ConvergenceWarning, as for Method 1.

    The runner counts ConvergenceWarnings into the record's
    ``inner_convergence_warnings``; without one such a stop left no trace there.
    """
    rng, X, codes, Y, _ = problem
    kw = dict(output_dim=3, sigma=0.8, gamma=GAMMA, lam=LAM, rho=RHO)
    # tol = 0: no relative decrease is small enough, so max_iter ends every fit
    with pytest.warns(ConvergenceWarning, match=r"KDMLParamKernel: no convergence "
                      r"in max_iter=2 iterations \(tol=0\).*Increase max_iter"):
        cut = KDMLParamKernel(max_iter=2, tol=0, **kw).fit(X, codes)
    assert not cut.converged_ and cut.n_iter_ == 2
    assert len(cut.objective_path_) == 2
    # one iteration has no decrease to judge: not converged either
    with pytest.warns(ConvergenceWarning, match="max_iter=1 "):
        assert not KDMLParamKernel(max_iter=1, **kw).fit(X, codes).converged_
    # a descent that settles before max_iter stays silent
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ok = KDMLParamKernel(max_iter=200, tol=1e-5, **kw).fit(X, codes)
    assert ok.converged_ and ok.n_iter_ < 200


def test_method2_stops_reach_the_record_count(problem):
    """What the kdml report counts: the runner's ``inner_convergence_warnings`` of
    a split sees every Method 2 fit (CV candidates and refit) that max_iter ended."""
    from methods.metric_learning import MetricKNN
    from runners.protocols import evaluate_split

    rng, X, codes, Y, _ = problem
    est = MetricKNN(KDMLParamKernel(sigma=0.8, max_iter=1), n_neighbors=1)
    train = np.flatnonzero(np.arange(len(codes)) % 3 != 0)
    test = np.flatnonzero(np.arange(len(codes)) % 3 == 0)
    grid = {"metric_learner__rho": [0.1, 1.0]}
    protocol = {"kind": "repeated_splits", "inner_folds": 2}
    out = evaluate_split(est, X, codes, train, test, grid, protocol, ("toy", 0, 0))
    assert out["inner_convergence_warnings"] == 2 * 2 + 1  # candidates x folds + refit


def test_method1_config_states_the_stopping_rule():
    """conf/method/kdml_method1.yaml names the rule, with the estimator's default."""
    import inspect
    from pathlib import Path

    from omegaconf import OmegaConf

    conf = OmegaConf.load(
        Path(__file__).resolve().parents[2] / "conf/method/kdml_method1.yaml"
    )
    default = inspect.signature(KDMLFixedKernel).parameters["max_metric_norm"].default
    assert conf.metric_learner.max_metric_norm == default


def test_method2_convergence_reaches_the_record(problem):
    """MetricKNN hides its learner's converged_: solver_diagnostics records it as
    metric_converged, and a run's converged counts it."""
    from methods.metric_learning import KDMLParamKernel, MetricKNN
    from runners.protocols import FoldResult, solver_diagnostics
    from runners.run import _record_of

    _, X, codes, _, _ = problem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MetricKNN(KDMLParamKernel(max_iter=1, tol=0.0)).fit(X, codes)
    diag = solver_diagnostics(clf)
    assert diag["metric_converged"] is False
    fold = FoldResult(
        repetition=0, split=0, test_idx=np.arange(3), y_pred=codes[:3],
        decision=None, best_params={}, inner_mean_test_error={}, fit_seconds=0.0,
        search_seconds=0.0, predict_seconds=0.0, solver=diag,
        inner_convergence_warnings=1,
    )
    assert _record_of([fold], X, codes)["converged"] is False
    assert "metric_converged" not in solver_diagnostics(MetricKNN().fit(X, codes))


def test_prototypes_below_c_dimensions_are_equally_spaced_on_the_circle():
    """Guards the m = 2 < c prototypes: the c points e^{2 pi i k / c} (unit circle)."""
    for c in (3, 5, 7):
        ang = 2.0 * np.pi * np.arange(c) / c
        np.testing.assert_allclose(
            prototype_targets(c, 2), np.column_stack([np.cos(ang), np.sin(ang)]),
            atol=1e-15,
        )


def test_project_psd_is_the_frobenius_projection():
    """Guards ``project_psd`` by the projection's optimality conditions (Moreau).

    P = proj(B) onto the PSD cone iff P is PSD, B - P is negative semidefinite
    and <P, B - P> = 0; then ||B - P||_F is the norm of B's negative eigenvalues
    (which |B|, also PSD and orthogonal to B - |B|, would double).
    """
    rng = np.random.default_rng(3)
    W = rng.normal(size=(4, 4))
    B = W + W.T
    P = project_psd(B)
    assert np.linalg.eigvalsh(P).min() >= -1e-12
    assert np.linalg.eigvalsh(B - P).max() <= 1e-12
    assert abs(np.sum(P * (B - P))) <= 1e-12 * np.sum(B * B)
    w = np.linalg.eigvalsh(B)
    assert w.min() < 0
    assert np.linalg.norm(B - P) == pytest.approx(np.linalg.norm(w[w < 0]))


def _pair_sq(F):
    return np.sum((F[:, None] - F[None]) ** 2, axis=2)


def _map_of(est, problem):
    """``est`` fitted on the problem (3 outer iterations, warnings off) and the
    training points stacked with 4 new ones, for the map tests."""
    rng, X, codes, _, _ = problem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, codes)
    return X, np.vstack([X, rng.normal(size=(4, X.shape[1]))])


def test_method1_map_is_eq8_and_its_distances_eq10(problem):
    """Guards ``KDMLFixedKernel.transform``: f(x) = sum_i K(x, x_i) c_i (eq. 8), with
    one Gaussian per output (K diagonal), and distances ||f(x) - f(x')||_A with
    A = ``get_mahalanobis_matrix()`` = L^T L (eq. 10), by dense formulas."""
    est = KDMLFixedKernel(sigma=0.8, gamma=GAMMA, lam=LAM, rho=RHO, max_iter=3)
    X, Xa = _map_of(est, problem)
    F = np.column_stack(
        [_gaussian(Xa, X, s) @ est.dual_coef_[t] for t, s in enumerate(est.spreads_)]
    )
    np.testing.assert_allclose(est.output_map(Xa), F, rtol=1e-12, atol=1e-12)
    A = est.get_mahalanobis_matrix()
    diff = F[:, None] - F[None]
    np.testing.assert_allclose(
        _pair_sq(est.transform(Xa)), np.einsum("ija,ab,ijb->ij", diff, A, diff),
        rtol=1e-9, atol=1e-12,
    )


def test_method2_map_is_eq16_and_its_distances_eq18(problem):
    """Guards ``KDMLParamKernel.transform``: f(x) = sum_i k(x, x_i) B c_i (eq. 16),
    and distances ||C (k(x) - k(x'))||_A with A = ``get_mahalanobis_matrix()`` =
    B^2 (eq. 18), by dense formulas."""
    est = KDMLParamKernel(sigma=0.8, gamma=GAMMA, lam=LAM, rho=RHO, max_iter=3)
    X, Xa = _map_of(est, problem)
    k = _gaussian(Xa, X, 0.8)  # row a: k(x_a, x_i) over the training points
    F = np.stack([est.B_ @ (est.dual_coef_ @ k[a]) for a in range(len(Xa))])
    np.testing.assert_allclose(est.transform(Xa), F, rtol=1e-12, atol=1e-12)
    CK = k @ est.dual_coef_.T  # row a: C k(x_a)
    A = est.get_mahalanobis_matrix()
    diff = CK[:, None] - CK[None]
    np.testing.assert_allclose(
        _pair_sq(est.transform(Xa)), np.einsum("ija,ab,ijb->ij", diff, A, diff),
        rtol=1e-9, atol=1e-12,
    )


def test_one_dimensional_prototypes_are_equally_spaced_on_minus_one_to_one():
    """Guards the m = 1 prototypes: c equally spaced points on [-1, 1]."""
    for c in (2, 3, 5):
        np.testing.assert_allclose(
            prototype_targets(c, 1)[:, 0], -1.0 + 2.0 * np.arange(c) / (c - 1)
        )


@pytest.mark.parametrize("cls", [KDMLFixedKernel, KDMLParamKernel])
def test_descent_stops_at_the_first_relative_decrease_below_tol(problem, cls):
    """Guards both methods' stopping rule, recomputed from objective_path_:
    the descent ends at the first iteration whose relative decrease of the
    objective (eq. 9 / eq. 17) is <= tol, and not before."""
    rng, X, codes, Y, _ = problem
    tol = 1e-6
    est = cls(sigma=0.8, gamma=GAMMA, lam=LAM, rho=0.05, max_iter=100, tol=tol)
    est.fit(X, codes)
    h = est.objective_path_
    assert est.converged_ and len(h) == est.n_iter_ >= 3
    rel = np.abs(np.diff(h)) / np.maximum(np.abs(h[:-1]), 1e-12)
    assert rel[-1] <= tol
    assert np.all(rel[:-1] > tol)


def test_method2_b_step_reaches_the_psd_constrained_minimum(problem):
    """Guards the B step (eqs. 21-22, projected gradient): for fixed C it must
    minimize eq. 17 over PSD B, here with the constraint active (the minimizer is
    singular). Reference: scipy's BFGS on the unconstrained B = L L^T.

    Eq. 22's G + G^T - G o I counts each off-diagonal entry twice; a projected
    step along it stalled ~0.6% above the minimum on this problem.
    """
    from scipy.optimize import minimize

    from methods.metric_learning._kdml import _BStats

    rng, X, codes, Y, _ = problem
    K = _gaussian(X, X, 0.8)
    C = 0.3 * rng.normal(size=Y.shape)
    st = _BStats(C, K, Y, codes, GAMMA, LAM, RHO)
    B = KDMLParamKernel()._b_step(C, np.eye(3), K, Y, codes, GAMMA, LAM, RHO)
    ref = minimize(
        lambda v: st.objective(v.reshape(3, 3) @ v.reshape(3, 3).T),
        np.eye(3).ravel(),
        method="BFGS",
        options={"gtol": 1e-10},
    )
    B_ref = ref.x.reshape(3, 3) @ ref.x.reshape(3, 3).T
    assert np.linalg.eigvalsh(B_ref)[0] < 1e-8 * np.linalg.eigvalsh(B_ref)[-1]
    assert st.objective(B) == pytest.approx(ref.fun, rel=1e-8)
    np.testing.assert_allclose(B, B_ref, atol=1e-4)


def test_method2_c_step_keeps_the_small_eigenvalues_of_a_smooth_kernel(problem):
    """Guards the C step's rank cut (``rcond`` = 1e-10): with a wider Gaussian
    (K's eigenvalues spread over ~5 decades) it still equals eq. 20's dense
    Kronecker solve, which a cut at 1e-3 of the largest eigenvalue would not."""
    rng, X, codes, Y, B = problem
    K = _gaussian(X, X, 1.5)
    w = np.linalg.eigvalsh(K)
    assert 1e-6 < w[0] / w[-1] < 1e-4
    C_ref = method2_c_step_dense(K, B, Y, codes, GAMMA, LAM)
    system = _Method2System(K, codes, GAMMA, LAM)
    assert system.rank == len(X)
    C = system.solve(B, Y)
    np.testing.assert_allclose(C, C_ref, rtol=1e-5, atol=1e-7 * np.abs(C_ref).max())


def test_method1_cut_off_by_max_iter_names_the_remedy(problem):
    # Method 1's warning stopped at "(tol=0)." where Method 2's (and every other
    # estimator's) says what is kept and what to change
    from methods.metric_learning import KDMLFixedKernel

    _, X, codes, _, _ = problem
    with pytest.warns(
        ConvergenceWarning,
        match=r"KDMLFixedKernel: no convergence in max_iter=2 .*last iterate is kept"
        r"\. Increase max_iter or tol",
    ):
        KDMLFixedKernel(output_dim=3, max_iter=2, tol=0, rho=1e-3).fit(X, codes)
