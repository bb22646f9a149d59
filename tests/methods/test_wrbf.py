"""Tests of the WRBF-SVM (wrbf Sec. 4.3): kernel, gradient, descent, RBF baseline."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from scipy.optimize import check_grad
from sklearn.base import clone
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC

import methods.feature_weighted._descent as wrbf
from methods._qp import SOLVERS
from methods.feature_weighted import (
    WRBFSVM,
    wrbf_dual_objective,
    wrbf_gradient,
    wrbf_kernel,
)


# ------------------------------------------------------- dense references (Eq. 9, 15)
# The estimator never builds the n x n x d stack of squared differences; these dense
# formulas are the reference its fast kernel and gradient are tested against.
def squared_difference_stack(X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """Per-feature squared differences ``D[n, i, j] = (x_{i,n} - y_{j,n})^2``.

    Shape (n_features, n_rows, n_cols), feature-major so that
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



SEED = 42
# every solver the QP package has today, plus the LIBSVM path of WRBFSVM
ALL_SOLVERS = ("libsvm", *SOLVERS)


def _noisy_problem(n: int = 60, d_info: int = 2, d_noise: int = 2, n_classes: int = 2):
    """Labels from the first ``d_info`` features; the rest is uniform noise."""
    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1.0, 1.0, size=(n, d_info + d_noise))
    score = X[:, :d_info].sum(axis=1)
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.searchsorted(edges, score)
    return X, y


def _cvxopt_alpha(K: np.ndarray, y: np.ndarray, C: float = 1.0) -> np.ndarray:
    from methods._qp import csvm_dual, solve_box_qp

    return solve_box_qp(csvm_dual(K, y, C), solver="cvxopt", tol=1e-12).z


# ---------------------------------------------------------------------------- kernel
def test_kernel_matches_definition_and_stack():
    """Eq. (9) three ways: double loop, stacked D_n with tensordot, fast GEMM."""
    rng = np.random.default_rng(SEED)
    X, Y = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    v, gamma = np.array([0.2, 1.5, 1.3]), 0.7
    loop = np.array([[np.exp(-gamma * np.sum(v * (x - z) ** 2)) for z in Y] for x in X])
    np.testing.assert_allclose(wrbf_kernel(X, Y, weights=v, gamma=gamma), loop)
    np.testing.assert_allclose(
        wrbf_kernel_from_stack(squared_difference_stack(X, Y), v, gamma), loop
    )
    K = wrbf_kernel(X, weights=v, gamma=gamma)
    np.testing.assert_allclose(K, K.T, rtol=1e-14)
    np.testing.assert_array_equal(np.diag(K), 1.0)


def test_kernel_with_negative_weight_matches_definition():
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(6, 3))
    v = np.array([2.0, -0.5, 1.5])
    loop = np.array([[np.exp(-np.sum(v * (a - b) ** 2)) for b in X] for a in X])
    np.testing.assert_allclose(wrbf_kernel(X, weights=v), loop, rtol=1e-12)


def test_kernel_updates_equal_recomputation_from_scratch(monkeypatch):
    """Every kernel the descent builds equals Eq. (9) from the stacked D_n."""
    X, y = _noisy_problem(n=40)
    D = squared_difference_stack(X)
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    real = wrbf.wrbf_kernel

    def recording(X_, Y=None, *, weights, gamma=1.0):
        K = real(X_, Y, weights=weights, gamma=gamma)
        seen.append((np.array(weights), K))
        return K

    monkeypatch.setattr(wrbf, "wrbf_kernel", recording)
    WRBFSVM(eta=0.05, n_iter=8, solver="libsvm").fit(X, y)
    assert len(seen) == 9
    assert not np.allclose(seen[0][0], seen[-1][0])  # v did move
    for v, K in seen:
        np.testing.assert_allclose(K, wrbf_kernel_from_stack(D, v, 1.0), atol=1e-14)


def test_kernel_rejects_wrong_number_of_weights():
    with pytest.raises(ValueError, match="weights has shape"):
        wrbf_kernel(np.zeros((3, 2)), weights=np.ones(3))


# -------------------------------------------------------------------------- gradient
def _dual_at_fixed_alpha(v, X, y, alpha, gamma):
    return wrbf_dual_objective(wrbf_kernel(X, weights=v, gamma=gamma), y, alpha)


@pytest.mark.parametrize("gamma", [1.0, 0.3])
def test_gradient_matches_finite_differences_at_fixed_alpha(gamma):
    """Eq. (11)-(14) with the 1/2 kept: check_grad on L(alpha, v) of Eq. (5)."""
    X, y01 = _noisy_problem(n=30)
    y = np.where(y01 == 1, 1.0, -1.0)
    rng = np.random.default_rng(SEED)
    alpha = rng.uniform(0.0, 1.0, size=30)
    alpha[:5] = 0.0  # non-support vectors must not matter
    v0 = rng.uniform(0.5, 1.5, size=X.shape[1])

    def grad(v, *args):
        K = wrbf_kernel(X, weights=v, gamma=gamma)
        return wrbf_gradient(X, K, y, alpha, gamma, half_factor=True)

    err = check_grad(_dual_at_fixed_alpha, grad, v0, X, y, alpha, gamma, epsilon=1e-7)
    assert err < 1e-5 * np.linalg.norm(grad(v0))


def test_fast_gradient_equals_dense_reference_and_paper_doubles_it():
    X, y01 = _noisy_problem(n=35, d_noise=3)
    y = np.where(y01 == 1, 1.0, -1.0)
    v = np.array([1.2, 0.8, 0.5, 1.0, 1.5])
    K = wrbf_kernel(X, weights=v, gamma=1.0)
    alpha = _cvxopt_alpha(K, y)
    D = squared_difference_stack(X)
    exact = wrbf_gradient(X, K, y, alpha, half_factor=True)
    np.testing.assert_allclose(
        exact, wrbf_gradient_from_stack(D, K, y * alpha, half_factor=True), rtol=1e-10
    )
    # the paper's Eq. (15) drops the 1/2 of Eq. (12): twice the true gradient
    np.testing.assert_allclose(
        wrbf_gradient(X, K, y, alpha, half_factor=False), 2.0 * exact, rtol=1e-12
    )


def test_gradient_is_danskin_derivative_of_optimal_dual():
    """Re-solving the SVM at v +- h e_n: central differences of max_alpha L."""
    X, y01 = _noisy_problem(n=40)
    y = np.where(y01 == 1, 1.0, -1.0)
    v = np.array([1.1, 0.9, 1.3, 0.7])

    def optimal_dual(w):
        K = wrbf_kernel(X, weights=w)
        return wrbf_dual_objective(K, y, _cvxopt_alpha(K, y))

    K = wrbf_kernel(X, weights=v)
    grad = wrbf_gradient(X, K, y, _cvxopt_alpha(K, y), half_factor=True)
    h = 1e-4
    fd = np.array(
        [
            (optimal_dual(v + h * e) - optimal_dual(v - h * e)) / (2 * h)
            for e in np.eye(v.size)
        ]
    )
    np.testing.assert_allclose(fd, grad, rtol=1e-4, atol=1e-6 * np.abs(grad).max())


# --------------------------------------------------------------------------- descent
@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_kept_model_never_worse_than_rbf_start(solver):
    """The paper minimizes L_dual over v: kept value <= the v = 1 value."""
    X, y = _noisy_problem(n=50)
    clf = WRBFSVM(eta=0.01, n_iter=15, solver=solver).fit(X, y)
    history = clf.dual_objective_path_
    assert history.shape == (16,)
    assert clf.dual_objective_rbf_ == history[0]
    assert clf.dual_objective_ == history.min() == history[clf.best_iter_]
    assert clf.dual_objective_ <= clf.dual_objective_rbf_
    # noise features: the descent does lower the dual objective (Table 1)
    assert clf.dual_objective_ < clf.dual_objective_rbf_ - 1e-3
    assert clf.objective_ == -clf.dual_objective_
    assert clf.converged_ and clf.fit_status_ == 0


def test_kept_model_is_the_best_iterate():
    """Refitting the kept v with n_iter=0 reproduces the kept SVM and objective."""
    X, y = _noisy_problem(n=50)
    clf = WRBFSVM(eta=0.01, n_iter=10, solver="cvxopt", tol=1e-12).fit(X, y)
    assert clf.best_iter_ > 0
    K = wrbf_kernel(X, weights=clf.weights_)
    y_pm = np.where(y == 1, 1.0, -1.0)
    alpha = _cvxopt_alpha(K, y_pm)
    assert wrbf_dual_objective(K, y_pm, alpha) == pytest.approx(
        clf.dual_objective_, rel=1e-6
    )
    coef = np.zeros(50)
    coef[clf.support_] = clf.dual_coef_[0]
    np.testing.assert_allclose(coef, y_pm * alpha, atol=1e-5)


def test_informative_feature_gains_weight():
    """wrbf Sec. 4.2 toy: only the second axis separates the classes."""
    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1.0, 1.0, size=(60, 2))
    y = (X[:, 1] > 0).astype(int)
    clf = WRBFSVM(eta=0.01, n_iter=30, solver="libsvm").fit(X, y)
    assert clf.weights_[1] > 1.0 > clf.weights_[0]


@contextlib.contextmanager
def _kernel_weights_seen():
    """Every weight vector the fit builds a WRBF kernel with, in order."""
    seen = []
    real = wrbf.wrbf_kernel

    def recording(X_, Y=None, *, weights, gamma=1.0):
        seen.append(np.array(weights))
        return real(X_, Y, weights=weights, gamma=gamma)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wrbf, "wrbf_kernel", recording)
        yield seen


@pytest.mark.parametrize("eta", [0.01, 1.0], ids=["small-step", "clipping-step"])
def test_weights_nonnegative_with_constant_l1_norm(eta):
    X, y = _noisy_problem(n=50, d_noise=4)
    d = X.shape[1]
    with _kernel_weights_seen() as seen:
        clf = WRBFSVM(eta=eta, n_iter=10, solver="libsvm").fit(X, y)
    for v in [*seen, clf.weights_]:
        assert np.all(v >= 0.0)
        assert np.abs(v).sum() == pytest.approx(d, rel=1e-12)
    if eta == 1.0:
        assert any(np.any(v == 0.0) for v in seen)  # the clip was exercised


def test_nonneg_false_allows_negative_weights_and_keeps_l1_norm():
    X, y = _noisy_problem(n=50, d_noise=4)
    with _kernel_weights_seen() as seen:
        WRBFSVM(eta=1.0, n_iter=3, solver="libsvm", nonneg=False).fit(X, y)
    assert any(np.any(v < 0.0) for v in seen)
    for v in seen:
        assert np.abs(v).sum() == pytest.approx(X.shape[1], rel=1e-12)


def test_half_factor_halves_the_step():
    """Eq. (15) without the 1/2 at eta equals the exact gradient at 2 eta."""
    X, y = _noisy_problem(n=50)
    paper = WRBFSVM(eta=0.01, n_iter=10, solver="libsvm", half_factor=False).fit(X, y)
    exact = WRBFSVM(eta=0.02, n_iter=10, solver="libsvm", half_factor=True).fit(X, y)
    np.testing.assert_allclose(
        paper.dual_objective_path_, exact.dual_objective_path_, rtol=1e-9
    )
    np.testing.assert_allclose(paper.weights_, exact.weights_, rtol=1e-9)


def test_each_step_follows_eq_10_with_l1_rescaling():
    """One step by hand: v1 = d * u / ||u||_1, u = max(1 - eta * grad, 0)."""
    X, y = _noisy_problem(n=40)
    y_pm = np.where(y == 1, 1.0, -1.0)
    with _kernel_weights_seen() as seen:
        WRBFSVM(eta=0.05, n_iter=1, solver="cvxopt", tol=1e-12).fit(X, y)
    d = X.shape[1]
    K0 = wrbf.wrbf_kernel(X, weights=np.ones(d))
    grad = wrbf_gradient(X, K0, y_pm, _cvxopt_alpha(K0, y_pm), half_factor=False)
    u = np.maximum(1.0 - 0.05 * grad, 0.0)
    np.testing.assert_allclose(seen[1], d * u / u.sum(), rtol=1e-6)


def test_warm_start_passes_previous_alpha(monkeypatch):
    """Every solve after the first starts from the previous iterate's alpha."""
    calls = []
    real = wrbf.solve_box_qp

    def recording(problem, *, solver, z0=None, **options):
        calls.append(None if z0 is None else z0.copy())
        res = real(problem, solver="cvxopt", **options)
        calls[-1] = (calls[-1], res.z.copy())
        return res

    # pretend cvxopt can warm start, to see what the descent hands a warm solver
    monkeypatch.setattr(wrbf, "_COLD_START_SOLVERS", frozenset())
    monkeypatch.setattr(wrbf, "solve_box_qp", recording)
    X, y = _noisy_problem(n=30)
    WRBFSVM(eta=0.01, n_iter=3, solver="cvxopt").fit(X, y)
    assert len(calls) == 4
    assert calls[0][0] is None
    for (_, previous), (z0, _) in zip(calls[:-1], calls[1:], strict=True):
        np.testing.assert_array_equal(z0, previous)


# ------------------------------------------------------------------- RBF baseline
@pytest.mark.parametrize("solver", ALL_SOLVERS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_n_iter_zero_is_the_rbf_svm(solver, n_classes):
    """WRBFSVM(n_iter=0, multiclass="ovo") = SVC(kernel="rbf"), same C and gamma."""
    X, y = _noisy_problem(n=60, n_classes=n_classes)
    Xt = np.random.default_rng(SEED + 1).uniform(-1.0, 1.0, size=(25, X.shape[1]))
    C, gamma = 2.0, 0.5
    ours = WRBFSVM(
        C=C, gamma=gamma, n_iter=0, solver=solver, tol=1e-10, multiclass="ovo"
    ).fit(X, y)
    ref = SVC(
        kernel="rbf", C=C, gamma=gamma, tol=1e-10, decision_function_shape="ovo"
    ).fit(X, y)
    # LIBSVM's pair (i, j) is positive for i; methods._multiclass's for j
    pair_sign = 1.0 if n_classes == 2 else -1.0
    np.testing.assert_allclose(
        ours._problem_decisions(Xt),
        pair_sign * ref.decision_function(Xt).reshape(len(Xt), -1),
        atol=1e-6,
    )
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(ours.weights_, np.ones(X.shape[1]))
    assert ours.n_iter_ == 0
    assert ours.dual_objective_ == ours.dual_objective_rbf_
    if n_classes == 2:
        # the RBF dual objective (5) from LIBSVM's coefficients
        coef = ref.dual_coef_[0]
        K = wrbf_kernel(
            ref.support_vectors_, weights=np.ones(X.shape[1]), gamma=gamma
        )
        expected = np.abs(coef).sum() - 0.5 * coef @ K @ coef
        assert ours.dual_objective_ == pytest.approx(expected, rel=1e-7)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_n_iter_zero_ovr_is_one_vs_rest_rbf_svm(solver):
    """The default multi-class rule: OneVsRestClassifier(SVC(kernel="rbf"))."""
    X, y = _noisy_problem(n=60, n_classes=3)
    Xt = np.random.default_rng(SEED + 1).uniform(-1.0, 1.0, size=(25, X.shape[1]))
    ours = WRBFSVM(n_iter=0, solver=solver, tol=1e-10).fit(X, y)
    ref = OneVsRestClassifier(SVC(kernel="rbf", gamma=1.0, tol=1e-10)).fit(X, y)
    np.testing.assert_allclose(
        ours.decision_function(Xt), ref.decision_function(Xt), atol=1e-6
    )
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    # its dual objective is the sum of the three class-vs-rest duals
    total = sum(
        WRBFSVM(n_iter=0, solver=solver, tol=1e-10)
        .fit(X, (y == c).astype(int))
        .dual_objective_
        for c in range(3)
    )
    assert ours.dual_objective_ == pytest.approx(total, rel=1e-9)


def test_ovo_ovr_shaped_decision_function_matches_svc():
    X, y = _noisy_problem(n=60, n_classes=3)
    ours = WRBFSVM(n_iter=0, solver="libsvm", tol=1e-10, multiclass="ovo").fit(X, y)
    ref = SVC(kernel="rbf", gamma=1.0, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(
        ours.decision_function(X), ref.decision_function(X), atol=1e-6
    )


# ------------------------------------------------------------------- multi-class
def _binary_problems(y: np.ndarray, multiclass: str) -> list:
    if multiclass == "ovr":
        return [(np.arange(y.size), np.where(y == c, 1.0, -1.0)) for c in range(3)]
    out = []
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        idx = np.flatnonzero((y == i) | (y == j))
        out.append((idx, np.where(y[idx] == j, 1.0, -1.0)))
    return out


@pytest.mark.parametrize("multiclass", ["ovr", "ovo"])
def test_shared_weights_sum_problem_objectives_and_gradients(multiclass):
    """One step by hand from independent solves of the binary problems."""
    X, y = _noisy_problem(n=60, n_classes=3)
    with _kernel_weights_seen() as seen:
        clf = WRBFSVM(
            eta=0.02, n_iter=1, solver="cvxopt", tol=1e-12, multiclass=multiclass
        ).fit(X, y)
    d = X.shape[1]
    K = wrbf.wrbf_kernel(X, weights=np.ones(d))
    total, grad = 0.0, np.zeros(d)
    for idx, y_pm in _binary_problems(y, multiclass):
        Kp = K[np.ix_(idx, idx)]
        alpha = _cvxopt_alpha(Kp, y_pm)
        total += wrbf_dual_objective(Kp, y_pm, alpha)
        grad += wrbf_gradient(X[idx], Kp, y_pm, alpha, half_factor=False)
    assert clf.dual_objective_path_[0] == pytest.approx(total, rel=1e-7)
    u = np.maximum(1.0 - 0.02 * grad, 0.0)
    np.testing.assert_allclose(seen[1], d * u / u.sum(), rtol=1e-6)
    assert clf.weights_.shape == (d,)


@pytest.mark.parametrize("multiclass", ["ovr", "ovo"])
def test_separate_weights_one_vector_per_problem(multiclass):
    X, y = _noisy_problem(n=60, n_classes=3)
    params = {"eta": 0.02, "n_iter": 5, "solver": "libsvm", "tol": 1e-10}
    clf = WRBFSVM(**params, multiclass=multiclass, shared_weights=False).fit(X, y)
    assert clf.weights_.shape == (3, X.shape[1])
    assert clf.best_iter_.shape == (3,)
    np.testing.assert_allclose(clf.weights_.sum(axis=1), X.shape[1])
    # problem 0 alone is a binary WRBF: class 0 against the rest, or classes 0, 1
    idx = np.arange(60) if multiclass == "ovr" else np.flatnonzero(y != 2)
    alone = WRBFSVM(**params).fit(X[idx], y[idx] == 0)
    np.testing.assert_allclose(clf.weights_[0], alone.weights_, rtol=1e-7)
    assert clf.dual_objective_ <= clf.dual_objective_rbf_
    assert clf.dual_objective_path_.shape == (6,)
    assert clf.predict(X).shape == (60,)


def test_multiclass_rules_agree_on_binary_problems():
    X, y = _noisy_problem(n=50)
    weights = [
        WRBFSVM(eta=0.02, n_iter=5, solver="libsvm", multiclass=m, shared_weights=s)
        .fit(X, y)
        .weights_
        for m in ("ovr", "ovo")
        for s in (True, False)
    ]
    for w in weights[1:]:
        np.testing.assert_array_equal(w, weights[0])


# ---------------------------------------------------------------------- estimator
def test_string_labels_and_clone():
    X, y = _noisy_problem(n=40)
    labels = np.array(["neg", "pos"])[y]
    clf = clone(WRBFSVM(n_iter=3, solver="libsvm")).fit(X, labels)
    assert set(clf.predict(X)) <= {"neg", "pos"}
    assert clf.score(X, labels) > 0.8
    assert WRBFSVM.paper_name == "WRBF"


@pytest.mark.parametrize(
    "params, match",
    [
        ({"C": -1.0}, "The 'C' parameter of WRBFSVM must be"),
        ({"gamma": 0.0}, "The 'gamma' parameter of WRBFSVM must be"),
        ({"eta": -0.1}, "The 'eta' parameter of WRBFSVM must be"),
        ({"n_iter": -1}, "The 'n_iter' parameter of WRBFSVM must be"),
        ({"solver": "nope"}, "The 'solver' parameter of WRBFSVM must be"),
        ({"multiclass": "ovo_shared"}, "The 'multiclass' parameter of WRBFSVM must"),
    ],
    ids=[
        "negative-C",
        "zero-gamma",
        "negative-eta",
        "negative-n_iter",
        "solver",
        "multiclass",
    ],
)
def test_invalid_parameters(params, match):
    X, y = _noisy_problem(n=20)
    with pytest.raises(ValueError, match=match):
        WRBFSVM(**params).fit(X, y)


def test_single_class_is_an_error():
    X, _ = _noisy_problem(n=10)
    with pytest.raises(ValueError, match="at least 2 classes; y has only one class"):
        WRBFSVM(solver="libsvm").fit(X, np.zeros(10, dtype=int))


def test_unconverged_solves_warn():
    X, y = _noisy_problem(n=60)
    with pytest.warns(UserWarning, match="SVM solves stopped before convergence"):
        clf = WRBFSVM(n_iter=2, solver="libsvm", max_iter=2).fit(X, y)
    assert clf.fit_status_ == 1 and not clf.converged_


@pytest.mark.parametrize("half_factor", [False, True])
def test_step_carries_gamma_of_eq_15(half_factor):
    """Eq. (15) has gamma in front (gamma/2 with the exact 1/2): one step by hand at
    gamma = 0.5 from the dense stacked gradient, ``v1 = d u / ||u||_1``."""
    X, y = _noisy_problem(n=40)
    y_pm = np.where(y == 1, 1.0, -1.0)
    gamma, eta = 0.5, 0.05
    with _kernel_weights_seen() as seen:
        WRBFSVM(
            gamma=gamma, eta=eta, n_iter=1, solver="cvxopt", tol=1e-12,
            half_factor=half_factor,
        ).fit(X, y)  # fmt: skip
    d = X.shape[1]
    D = squared_difference_stack(X)
    K0 = wrbf_kernel_from_stack(D, np.ones(d), gamma)
    alpha = _cvxopt_alpha(K0, y_pm)
    grad = wrbf_gradient_from_stack(D, K0, y_pm * alpha, gamma, half_factor=half_factor)
    u = np.maximum(1.0 - eta * grad, 0.0)
    np.testing.assert_allclose(seen[1], d * u / u.sum(), rtol=1e-6)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_ties_keep_the_earliest_iterate(n_classes):
    """Sec. 5: "if no improvement was achieved the WRBF would be identical to the
    RBF". With eta = 0 every iterate is the RBF, the objectives tie, and the kept
    iterate is t = 0 (for every problem with shared_weights=False), not the last
    of the n_iter steps. The last iterate's objective must be computed as the
    others' are: it came from another product and won the tie by one ulp."""
    X, y = _noisy_problem(n=45, n_classes=n_classes)
    clf = WRBFSVM(eta=0.0, n_iter=3, solver="libsvm", shared_weights=False).fit(X, y)
    assert np.all(clf.dual_objective_path_ == clf.dual_objective_path_[0])
    assert clf.n_iter_ == 3
    np.testing.assert_array_equal(clf.best_iter_, 0)


@pytest.mark.parametrize("multiclass", ["ovr", "ovo"])
def test_separate_weights_objective_is_the_sum_over_problems(multiclass):
    """shared_weights=False: the dual objective, its history and the kept
    iterates are those of the binary WRBF problems fitted alone, summed."""
    X, y = _noisy_problem(n=60, n_classes=3)
    params = {"eta": 0.02, "n_iter": 4, "solver": "libsvm", "tol": 1e-10}
    clf = WRBFSVM(**params, multiclass=multiclass, shared_weights=False).fit(X, y)
    alone = []
    for idx, y_pm in _binary_problems(y, multiclass):
        alone.append(WRBFSVM(**params).fit(X[idx], y_pm > 0))
    assert clf.dual_objective_ == pytest.approx(
        sum(a.dual_objective_ for a in alone), rel=1e-9
    )
    np.testing.assert_allclose(
        clf.dual_objective_path_,
        np.sum([a.dual_objective_path_ for a in alone], axis=0),
        rtol=1e-9,
    )
    np.testing.assert_array_equal(clf.best_iter_, [a.best_iter_ for a in alone])


def test_kernel_far_from_the_origin_stays_at_most_one():
    """Eq. (9) is exp(-gamma * a nonnegative distance) for v >= 0: the one-product
    form cancels far from the origin, so the exponent is clipped at 0 and the
    block between the training points and a copy of them is <= 1 (close to the
    double loop of the definition)."""
    rng = np.random.default_rng(SEED)
    X = 1e4 + rng.normal(size=(15, 3))
    v = np.array([0.5, 1.0, 1.5])
    K = wrbf_kernel(X, X.copy(), weights=v, gamma=2.0)
    assert np.all(K <= 1.0)
    loop = np.array([[np.exp(-2.0 * np.sum(v * (a - b) ** 2)) for b in X] for a in X])
    np.testing.assert_allclose(K, loop, atol=1e-6)


def test_unconverged_solves_at_the_default_cap_say_so(monkeypatch):
    # the warning printed "max_iter=None", which reads as "no cap at all"
    import methods._qp

    monkeypatch.setattr(methods._qp, "default_max_iter", lambda n_vars: 2)
    X, y = _noisy_problem(n=60)
    match = r"max_iter=None: the solver's default iteration cap\); raise max_iter"
    with pytest.warns(UserWarning, match=match):
        WRBFSVM(n_iter=2, solver="auto").fit(X, y)
