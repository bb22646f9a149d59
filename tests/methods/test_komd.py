"""KOMD (arbf Sec. 3, eq. 2): the compiled SMO against the dense cvxopt QP."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

from methods.kernels import pairwise_kernel
from methods.komd import KOMD, komd_objective, solve_komd
from methods.komd._komd import uniform_gamma
from methods.komd._smo import _gradient


def _problem(n, seed, sigma=2.0, shift=0.7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + shift * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, pairwise_kernel(X, kernel="gaussian", sigma=sigma)


@pytest.mark.parametrize("lam", [0.0, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("seed", [0, 1])
def test_smo_reaches_the_cvxopt_optimum(lam, seed):
    X, y, K = _problem(80, seed)
    g, _, converged = solve_komd(K, y, lam, tol=1e-12)
    ref = solve_komd(K, y, lam, solver="cvxopt")[0]
    f, f_ref = komd_objective(K, y, lam, g), komd_objective(K, y, lam, ref)
    assert converged
    assert abs(f - f_ref) <= 1e-8 * abs(f_ref)
    assert g.min() >= 0.0
    assert g[y > 0].sum() == pytest.approx(1.0, abs=1e-12)
    assert g[y < 0].sum() == pytest.approx(1.0, abs=1e-12)


def _dense_gradient(K, y, lam, gamma):
    """The gradient of eq. 2, ``2 ((1 - lam) Y K Y gamma + lam gamma)``, densely."""
    return 2.0 * ((1.0 - lam) * y * (K @ (y * gamma)) + lam * gamma)


@pytest.mark.parametrize("n", [5, 8, 13, 64])
def test_full_gradient_equals_the_dense_formula(n):
    # the compiled gradient sums eight rows at a time with a one-row tail: n below,
    # at and between multiples of 8 reach both paths
    rng = np.random.default_rng(n)
    _, y, K = _problem(n, n)
    gamma = rng.random(n)
    lam = 0.3
    dense = _dense_gradient(K, y, lam, gamma)
    np.testing.assert_allclose(
        _gradient(K, y, lam, gamma), dense, rtol=1e-13, atol=1e-15
    )


def test_smo_on_a_linear_kernel_with_overlapping_classes():
    # lam = 0 with overlapping hulls: optimum 0, the slowest case of the SMO
    X, y, _ = _problem(60, 3, shift=3.0)
    K = X @ X.T
    g, _, _ = solve_komd(K, y, 0.0, tol=1e-12)
    ref = solve_komd(K, y, 0.0, solver="cvxopt")[0]
    assert komd_objective(K, y, 0.0, g) <= komd_objective(K, y, 0.0, ref) + 1e-9


def test_lambda_one_gives_the_uniform_solution():
    # arbf Sec. 3: at lam = 1 the optimum is uniform over each class, and its value
    # is ||gamma_unif||^2 = 1/|X+| + 1/|X-|
    X, y, K = _problem(50, 2)
    g, _, _ = solve_komd(K, y, 1.0)
    n_pos, n_neg = int((y > 0).sum()), int((y < 0).sum())
    np.testing.assert_allclose(g, np.where(y > 0, 1 / n_pos, 1 / n_neg), atol=1e-12)
    assert komd_objective(K, y, 1.0, g) == pytest.approx(1 / n_pos + 1 / n_neg)
    np.testing.assert_allclose(uniform_gamma(y), g, atol=1e-12)


def test_estimator_precomputed_equals_gaussian():
    X, y, K = _problem(60, 4, sigma=1.5)
    a = KOMD(lam=0.1, sigma=1.5).fit(X, y)
    b = KOMD(lam=0.1, kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(K))
    assert a.converged_ and a.objective_ == pytest.approx(b.objective_)
    assert roc_auc_score(y, a.decision_function(X)) > 0.8


def test_decision_is_the_dual_expansion_with_midpoint_bias():
    X, y, K = _problem(40, 5)
    m = KOMD(lam=0.5, kernel="precomputed").fit(K, y)
    f = K @ (y * m.gamma_)
    mid = 0.5 * (m.gamma_[y > 0] @ f[y > 0] + m.gamma_[y < 0] @ f[y < 0])
    np.testing.assert_allclose(m.decision_function(K), f - mid)


def test_fitted_attributes_have_the_svm_family_shapes():
    # methods/README.md: one problem, dual_coef_ (1, n_train), intercept_ (1,)
    _, y, K = _problem(40, 6)
    m = KOMD(lam=0.1, kernel="precomputed").fit(K, y)
    assert m.dual_coef_.shape == (1, 40) and m.intercept_.shape == (1,)
    np.testing.assert_array_equal(m.dual_coef_[0], y * m.gamma_)
    np.testing.assert_array_equal(m.support_, np.flatnonzero(m.gamma_ > 0))
    assert m.converged_ and m.fit_status_ == 0
    np.testing.assert_array_equal(
        m.decision_function(K), K @ m.dual_coef_[0] + m.intercept_[0]
    )


def test_smo_stopped_at_max_iter_sets_fit_status():
    _, y, K = _problem(60, 7)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        m = KOMD(lam=0.0, kernel="precomputed", max_iter=1).fit(K, y)
    assert not m.converged_ and m.fit_status_ == 1


@pytest.mark.parametrize("lam", [-0.1, 1.5])
def test_lambda_outside_unit_interval_is_refused(lam):
    X, y, _ = _problem(20, 0)
    with pytest.raises(ValueError, match="'lam' parameter of KOMD"):
        KOMD(lam=lam).fit(X, y)


def test_more_than_two_classes_is_refused():
    X, _, _ = _problem(30, 0)
    with pytest.raises(ValueError, match="KOMD is a binary method"):
        KOMD().fit(X, np.arange(30) % 3)


def _kkt_gap(K, y, lam, gamma):
    """Per-class KKT gap of eq. 2 from the dense gradient: max over the examples
    with mass minus min over the class, the larger of the two classes."""
    g = _dense_gradient(K, y, lam, gamma)
    return max(g[(y == c) & (gamma > 0)].max() - g[y == c].min() for c in (1.0, -1.0))


def test_converged_flag_is_the_dense_kkt_gap():
    """``converged`` is exactly "the KKT gap of eq. 2 at gamma is <= tol".

    Stopping the SMO after 1, 2, ... pair updates gives gaps on both sides of
    tol, some within a factor 10 of it: a looser acceptance would report some of
    those unfinished solutions as converged. A run whose last allowed update
    reaches tol is converged: the gap is judged after that update, not before.
    """
    _, y, K = _problem(30, 8)
    lam, tol = 0.2, 1e-4
    gaps = []
    for max_iter in range(1, 120):
        g, _, converged = solve_komd(K, y, lam, tol=tol, max_iter=max_iter)
        gap = _kkt_gap(K, y, lam, g)
        gaps.append(gap)
        if abs(gap - tol) > 1e-3 * tol:  # no verdict on a gap that ties tol
            assert converged == (gap <= tol), (max_iter, gap)
    assert any(tol < gap <= 10 * tol for gap in gaps) and min(gaps) <= tol


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.8])
def test_each_smo_step_minimizes_eq_2_along_its_pair(lam):
    """One SMO update moves mass t from j to i of one class; unless it empties j
    it is the exact minimizer of eq. 2 along ``e_i - e_j`` (zero directional
    derivative from the dense gradient). The curvature of the step must hold
    both the kernel term and the ``2 lam`` of the identity."""
    from methods.komd._smo import komd_smo

    rng = np.random.default_rng(9)
    _, y, K = _problem(24, 9)
    for _ in range(5):
        gamma = rng.random(24)
        for mask in (y > 0, y < 0):
            gamma[mask] /= gamma[mask].sum()
        before = gamma.copy()
        komd_smo(K, y, lam, gamma, 1e-12, 1)
        moved = np.flatnonzero(gamma != before)
        assert moved.size == 2 and y[moved[0]] == y[moved[1]]
        i, j = moved if gamma[moved[0]] > before[moved[0]] else moved[::-1]
        if gamma[j] == 0.0:
            continue
        grad = _dense_gradient(K, y, lam, gamma)
        scale = abs(grad[i]) + abs(grad[j])
        assert grad[i] - grad[j] == pytest.approx(0.0, abs=1e-10 * scale)
        assert komd_objective(K, y, lam, gamma) < komd_objective(K, y, lam, before)


def test_objective_attribute_is_eq_2_at_the_optimum():
    """``objective_`` is eq. 2 itself, ``(1 - lam) a'Ka + lam ||gamma||^2``,
    written out densely, and equals the cvxopt optimum."""
    _, y, K = _problem(40, 10)
    lam = 0.3
    m = KOMD(lam=lam, kernel="precomputed", tol=1e-12).fit(K, y)
    a = y * m.gamma_
    dense = (1.0 - lam) * a @ K @ a + lam * m.gamma_ @ m.gamma_
    assert m.objective_ == pytest.approx(dense, rel=1e-12)
    ref = solve_komd(K, y, lam, solver="cvxopt")[0]
    assert m.objective_ == pytest.approx(komd_objective(K, y, lam, ref), rel=1e-8)


def test_predict_is_the_sign_of_the_decision_with_the_second_class_positive():
    """``predict`` gives ``classes_[1]`` where the decision is > 0 (string labels),
    and the positive side is the class labelled +1 in eq. 2."""
    X, y, _ = _problem(60, 11, shift=0.3)
    labels = np.where(y > 0, "yes", "no")  # classes_ = ["no", "yes"]
    m = KOMD(lam=0.1, sigma=2.0).fit(X, labels)
    d = m.decision_function(X)
    np.testing.assert_array_equal(m.predict(X), np.where(d > 0, "yes", "no"))
    assert np.mean(m.predict(X) == labels) > 0.8


def test_default_tolerance_reaches_a_kkt_gap_of_1e_8():
    """The documented default ``tol=1e-8``: a default fit's gamma has a dense KKT
    gap of eq. 2 at most 1e-8."""
    _, y, K = _problem(50, 12)
    m = KOMD(lam=0.3, kernel="precomputed").fit(K, y)
    assert _kkt_gap(K, y, 0.3, m.gamma_) <= 1e-8


def test_a_fit_stopped_at_the_default_cap_names_the_cap(monkeypatch):
    # the warning said "stopped at max_iter=None" for the SMO's own cap
    from methods.komd import _komd

    real = _komd.solve_komd

    def capped(K, y, lam, *, solver, tol, max_iter):
        assert max_iter is None
        gamma, _, _ = real(K, y, lam, solver=solver, tol=tol, max_iter=2)
        return gamma, 1_000_000, False  # as the default cap would leave it

    monkeypatch.setattr(_komd, "solve_komd", capped)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = np.repeat([0, 1], 10)
    with pytest.warns(ConvergenceWarning, match=r"default cap of 1000000 pair upd"):
        KOMD().fit(X, y)
