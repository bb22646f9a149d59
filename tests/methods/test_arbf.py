"""ARBF (arbf Alg. 1, Secs. 4.1-4.2): gradient, kernel update, positivity, staging."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

from methods.komd import ARBF, KOMD, anisotropic_rbf, feature_correlation, solve_komd
from methods.komd._arbf import (
    beta_gradient,
    beta_objective,
    game_gradient_terms,
    update_exponent,
    weighted_sqdist,
)


def _data(n=60, m=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, m))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_beta_gradient_matches_finite_differences():
    X, y = _data()
    rng = np.random.default_rng(1)
    beta = rng.uniform(0.05, 1.0, X.shape[1])
    gamma = solve_komd(anisotropic_rbf(X, X, beta), y, 0.3)[0]
    C = feature_correlation(X, 10.0)
    K = anisotropic_rbf(X, X, beta)
    g = beta_gradient(X, K, y, gamma, beta, C, weight=2.0)
    h = 1e-6
    for r in range(X.shape[1]):
        e = np.zeros_like(beta)
        e[r] = h
        fd = (
            beta_objective(X, y, gamma, beta + e, C, 2.0)
            - beta_objective(X, y, gamma, beta - e, C, 2.0)
        ) / (2 * h)
        assert g[r] == pytest.approx(fd, rel=1e-6, abs=1e-10)


def test_gradient_terms_equal_the_dense_formula_of_sec_4_1():
    X, y = _data(30, 4)
    a = y * np.random.default_rng(2).uniform(0, 1, len(y))
    K = anisotropic_rbf(X, X, np.full(4, 0.3))
    dense = [a @ ((X[:, r, None] - X[None, :, r]) ** 2 * K) @ a for r in range(4)]
    np.testing.assert_allclose(game_gradient_terms(X, K, a), dense, rtol=1e-10)


def test_correlation_matrix_is_eq_1():
    X, _ = _data(20, 3)
    C = feature_correlation(X, 7.0)
    i, j = 0, 2
    assert C[i, j] == pytest.approx(np.exp(-7.0 / 3 * np.sum((X[:, i] - X[:, j]) ** 2)))


def test_pearson_correlation_matrix_is_a_function_of_the_feature_correlation():
    X, _ = _data(30, 4)
    X = np.column_stack([X, 2.0 * X[:, 0] + 0.1, np.full(len(X), 0.5)])
    m, tau = X.shape[1], 7.0
    C = feature_correlation(X, tau, "pearson")
    rho = np.corrcoef(X[:, :5].T)
    np.testing.assert_allclose(
        C[:5, :5], np.exp(-2.0 * tau / m * (1.0 - rho)), rtol=1e-10, atol=1e-12
    )
    assert C[0, 4] == pytest.approx(1.0)  # a rescaled copy is fully redundant
    # a constant column is the zero vector: at unit distance from every other
    np.testing.assert_allclose(C[5, :5], np.exp(-tau / m))
    assert np.all(np.isfinite(C)) and not np.allclose(C, feature_correlation(X, tau))


def test_incremental_kernel_update_equals_recomputed_kernel():
    X, _ = _data(40, 6)
    rng = np.random.default_rng(3)
    beta = np.full(6, 0.5)
    E = weighted_sqdist(X, X, beta)
    np.fill_diagonal(E, 0.0)
    for _ in range(10):
        new_beta = beta * np.exp(rng.normal(scale=0.5, size=6))
        # the paper's multiplicative form, feature by feature, with beta_r
        delta = new_beta / beta
        K_mult = np.exp(-E)
        for r in range(6):
            D_r = (X[:, r, None] - X[None, :, r]) ** 2
            K_mult = K_mult * np.exp(beta[r] * (1 - delta[r]) * D_r)
        E = update_exponent(E, X, beta, new_beta)
        beta = new_beta
        K_new = anisotropic_rbf(X, X, beta)
        np.testing.assert_allclose(np.exp(-E), K_new, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(K_mult, K_new, rtol=1e-9, atol=1e-12)


def test_fit_gamma_steps_are_komd_on_the_recomputed_kernel():
    X, y = _data(50, 4)
    m = ARBF(lam=0.2, beta0=0.5, mu=100.0, tau=10.0, n_iter=5).fit(X, y)
    for t in range(6):
        K = anisotropic_rbf(X, X, m.beta_path_[t])
        g = solve_komd(K, y, 0.2, tol=1e-12)[0]
        np.testing.assert_allclose(m.gamma_path_[t], g, atol=1e-6)
    assert not np.allclose(m.beta_path_[0], m.beta_path_[-1])


@pytest.mark.parametrize("mu_role", ["step", "weight"])
def test_beta_stays_positive(mu_role):
    X, y = _data(50, 4)
    m = ARBF(beta0=1.0, mu=100.0, tau=1.0, n_iter=30, mu_role=mu_role, eta=50.0)
    m.fit(X, y)
    assert np.all(m.beta_path_ > 0) and np.all(np.isfinite(m.beta_path_))
    assert np.all(np.isfinite(m.decision_function(X)))


def test_zero_iterations_is_komd_with_the_isotropic_width():
    X, y = _data()
    a = ARBF(lam=0.1, beta0=0.25, n_iter=0).fit(X, y)
    b = KOMD(lam=0.1, sigma=1 / np.sqrt(2 * 0.25)).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))


def test_staged_decisions_and_recorded_paths():
    X, y = _data(80)
    Xv, yv = _data(40, seed=9)
    m = ARBF(lam=0.1, beta0=0.5, mu=10, tau=100, n_iter=7).fit(X, y, eval_set=(Xv, yv))
    staged = list(m.staged_decision_function(Xv))
    assert len(staged) == 7
    np.testing.assert_allclose(staged[-1], m.decision_function(Xv))
    assert m.beta_path_.shape == (8, 5) and m.validation_auc_.shape == (8,)
    assert m.validation_auc_[3] == pytest.approx(roc_auc_score(yv, staged[2]))


def test_fitted_attributes_are_the_final_komds():
    # methods/README.md: the SVM family's shapes, one problem: KOMD on K_{beta_T}
    X, y = _data(50, 4)
    m = ARBF(lam=0.2, beta0=0.5, mu=10.0, tau=10.0, n_iter=3).fit(X, y)
    assert m.dual_coef_.shape == (1, 50) and m.intercept_.shape == (1,)
    np.testing.assert_array_equal(m.dual_coef_[0], y * m.gamma_path_[-1])
    np.testing.assert_array_equal(m.intercept_, m.intercept_path_[-1:])
    np.testing.assert_array_equal(m.support_, np.flatnonzero(m.gamma_ > 0))
    assert m.converged_ and m.fit_status_ == 0
    K = anisotropic_rbf(X, X, m.beta_)
    np.testing.assert_allclose(
        m.decision_function(X), K @ m.dual_coef_[0] + m.intercept_[0], rtol=1e-13
    )


def test_gamma_step_stopped_at_max_iter_sets_fit_status():
    X, y = _data(50, 4)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        m = ARBF(lam=0.0, n_iter=1, max_iter=1).fit(X, y)
    assert not m.converged_ and m.fit_status_ == 1


def test_validation_part_with_one_class_is_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="validation AUC is undefined"):
        ARBF(n_iter=1).fit(X, y, eval_set=(X[:5], np.ones(5)))


def test_validation_part_with_other_labels_or_length_is_refused():
    # labels outside classes_ gave validation_auc_ all NaN (and a RuntimeWarning);
    # a y_val of another length an IndexError
    X, y = _data()
    other = np.where(y == y[0], "yes", "no")
    with pytest.raises(ValueError, match=r"labels \['no', 'yes'\] that are not"):
        ARBF(n_iter=1).fit(X, y, eval_set=(X, other))
    with pytest.raises(ValueError, match="X_val has 10 samples but y_val has 9"):
        ARBF(n_iter=1).fit(X, y, eval_set=(X[:10], y[:9]))


def test_constant_features_are_recorded_and_leave_the_kernel_alone():
    X, y = _data(40, 3)
    Xc = np.column_stack([X, np.zeros(40)])
    m = ARBF(n_iter=3, tau=1000.0).fit(Xc, y)
    np.testing.assert_array_equal(m.constant_features_, [3])
    beta = m.beta_.copy()
    beta[3] *= 100.0
    np.testing.assert_allclose(
        anisotropic_rbf(Xc, Xc, beta), anisotropic_rbf(Xc, Xc, m.beta_)
    )


def test_bad_parameters_and_multiclass_are_refused():
    X, y = _data(30)
    with pytest.raises(ValueError, match="'lam' parameter of ARBF"):
        ARBF(lam=2.0).fit(X, y)
    with pytest.raises(ValueError, match="ARBF is a binary method"):
        ARBF().fit(X, np.arange(30) % 3)


def test_auc_equals_sklearn_with_ties():
    from methods.komd._arbf import auc

    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 200).astype(bool)
    s = np.round(rng.normal(size=200) + y, 1)  # many ties
    assert auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-14)


def _dense_correlation(X, tau, columns):
    """Eq. 1 by hand: raw columns, or (pearson) ``exp(-2 tau/m (1 - rho))``."""
    m = X.shape[1]
    if columns == "pearson":
        return np.exp(-2.0 * tau / m * (1.0 - np.corrcoef(X.T)))
    F = X.T
    d = ((F[:, None, :] - F[None, :, :]) ** 2).sum(-1)
    return np.exp(-tau / m * d)


@pytest.mark.parametrize(
    "mu_role, correlation", [("step", "raw"), ("weight", "raw"), ("step", "pearson")]
)
def test_beta_step_is_one_exponentiated_gradient_step_of_sec_4_2(mu_role, correlation):
    """Every recorded beta follows Sec. 4.2 from the previous (beta, gamma), all
    written densely: ``beta <- beta exp(-s beta (A + w C beta))`` with
    ``A_r = a'(D_r * K_beta)a`` and C of eq. 1; ``(s, w) = (mu, 1)`` for
    ``mu_role="step"``, ``(eta, mu)`` for ``"weight"`` (the chain-rule sign)."""
    X, y = _data(40, 4)
    mu, eta, tau = 0.7, 2.5, 1.0
    m = ARBF(
        lam=0.2, beta0=0.5, mu=mu, tau=tau, n_iter=3, mu_role=mu_role, eta=eta,
        correlation=correlation,
    ).fit(X, y)  # fmt: skip
    s, w = (mu, 1.0) if mu_role == "step" else (eta, mu)
    C = _dense_correlation(X, tau, correlation)
    for t in range(3):
        beta, a = m.beta_path_[t], y * m.gamma_path_[t]
        D = [(X[:, r, None] - X[None, :, r]) ** 2 for r in range(4)]
        K = np.exp(-sum(beta[r] * D[r] for r in range(4)))
        A = np.array([a @ (D[r] * K) @ a for r in range(4)])
        expected = beta * np.exp(-s * beta * (A + w * C @ beta))
        np.testing.assert_allclose(m.beta_path_[t + 1], expected, rtol=1e-9)
    assert m.n_clipped_ == 0


def test_a_huge_beta_step_is_clipped_at_e_to_the_minus_30():
    """``|log Delta_r| <= 30`` (MAX_LOG_STEP): a step of mu * grad ~ 1e3 shrinks
    every beta by exactly e^-30 and is counted once per feature."""
    X, y = _data(40, 4)
    m = ARBF(lam=0.2, beta0=1.0, mu=1000.0, tau=10.0, n_iter=1).fit(X, y)
    np.testing.assert_allclose(m.beta_path_[1], np.exp(-30.0), rtol=1e-12)
    assert m.n_clipped_ == 4


def test_recorded_paths_are_the_game_value_auc_and_eq_2():
    """Per iteration t: ``objective_path_`` is Q = a'K_beta a, ``train_auc_`` the
    training AUC of the scores K_beta a (sklearn), and ``objective_`` eq. 2 at the
    final (beta, gamma), all from the dense kernel of the recorded beta."""
    X, y = _data(50, 4)
    lam = 0.2
    m = ARBF(lam=lam, beta0=0.5, mu=10.0, tau=10.0, n_iter=3).fit(X, y)
    for t in range(4):
        K = anisotropic_rbf(X, X, m.beta_path_[t])
        a = y * m.gamma_path_[t]
        assert m.objective_path_[t] == pytest.approx(a @ K @ a, rel=1e-10)
        assert m.train_auc_[t] == pytest.approx(roc_auc_score(y, K @ a), abs=1e-14)
    g = m.gamma_
    eq2 = (1 - lam) * (y * g) @ K @ (y * g) + lam * g @ g
    assert m.objective_ == pytest.approx(eq2, rel=1e-10)
