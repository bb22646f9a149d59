"""Tests of methods/_fda.py: dense formulas, kernel equivalences, errors, checks."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
from sklearn.utils._param_validation import InvalidParameterError

from methods._kernels import pairwise_kernel
from methods.fda import FDA


def _two_blobs(seed: int = 0, n: int = 40, d: int = 3):
    rng = np.random.default_rng(seed)
    cov = np.array([[1.0, 0.6, 0.0], [0.6, 1.5, 0.3], [0.0, 0.3, 0.5]])[:d, :d]
    L = np.linalg.cholesky(cov)
    X0 = rng.standard_normal((n // 2, d)) @ L.T
    X1 = rng.standard_normal((n - n // 2, d)) @ L.T + np.r_[1.5, -0.5, 1.0][:d]
    X = np.vstack([X0, X1])
    y = np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)]
    perm = rng.permutation(n)
    X_test = rng.standard_normal((15, d)) * 1.5 + 0.5
    return X[perm], y[perm], X_test


def _cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def _dense_linear_fda(X, y, reg):
    """mlsvm Eq. (5) solved densely: w = (S_W + mu I)^-1 (m1 - m0), midpoint b."""
    m1, m0 = X[y == 1].mean(0), X[y == 0].mean(0)
    S_W = sum(np.outer(x - m1, x - m1) for x in X[y == 1]) + sum(
        np.outer(x - m0, x - m0) for x in X[y == 0]
    )
    mu = reg * np.trace(S_W) / X.shape[1]
    w = np.linalg.inv(S_W + mu * np.eye(X.shape[1])) @ (m1 - m0)
    return w, -0.5 * (w @ m1 + w @ m0)


def _dense_kfd(K, y, reg):
    """Mika et al. 1999 written out: N = sum_j K_j (I - 1/n_j) K_j'."""
    n = K.shape[0]
    N = np.zeros((n, n))
    M = {}
    for c in (0, 1):
        K_c = K[:, y == c]
        n_c = K_c.shape[1]
        N += K_c @ (np.eye(n_c) - np.full((n_c, n_c), 1.0 / n_c)) @ K_c.T
        M[c] = K_c @ np.ones(n_c) / n_c
    mu = reg * np.trace(N) / n
    alpha = np.linalg.inv(N + mu * np.eye(n)) @ (M[1] - M[0])
    return alpha, -0.5 * (alpha @ M[1] + alpha @ M[0])


# ------------------------------------------------------------------ linear FDA


@pytest.mark.parametrize("reg", [1e-3, 0.5])
def test_linear_fda_matches_dense_formula(reg):
    X, y, X_test = _two_blobs()
    fda = FDA(reg=reg).fit(X, y)
    w, b = _dense_linear_fda(X, y, reg)
    np.testing.assert_allclose(fda.coef_[0], w, rtol=1e-10)
    np.testing.assert_allclose(fda.intercept_, [b], rtol=1e-10)
    np.testing.assert_allclose(fda.decision_function(X_test), X_test @ w + b)
    assert not hasattr(fda, "dual_coef_")


def test_linear_fda_direction_equals_lda():
    # Unregularized FDA (stprtool's fld) is LDA's direction: the pooled covariance
    # is S_W / (n - 2).
    X, y, _ = _two_blobs(seed=3)
    fda = FDA(reg=0.0).fit(X, y)
    lda = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    assert _cosine(fda.coef_[0], lda.coef_[0]) == pytest.approx(1.0, abs=1e-12)


def test_threshold_is_midpoint_of_projected_means():
    X, y, _ = _two_blobs(seed=1)
    fda = FDA().fit(X, y)
    proj = fda.decision_function(X)
    assert proj[y == 1].mean() + proj[y == 0].mean() == pytest.approx(0.0, abs=1e-10)
    assert proj[y == 1].mean() > 0


def test_decision_positive_for_second_class_with_string_labels():
    X, y, X_test = _two_blobs(seed=2)
    labels = np.array(["neg", "pos"])[y]
    fda = FDA().fit(X, labels)
    assert fda.classes_.tolist() == ["neg", "pos"]
    ref = FDA().fit(X, y).decision_function(X_test)
    np.testing.assert_allclose(fda.decision_function(X_test), ref)
    np.testing.assert_array_equal(fda.predict(X_test), np.where(ref > 0, "pos", "neg"))
    # Swapping which label sorts second flips the sign.
    flipped = FDA().fit(X, np.array(["b", "a"])[y])
    np.testing.assert_allclose(flipped.decision_function(X_test), -ref)


def test_reg_zero_with_singular_scatter_uses_pseudo_inverse():
    X, y, X_test = _two_blobs()
    X_dup = np.c_[X, X[:, 0]]  # duplicated feature: S_W is singular
    fda = FDA(reg=0.0).fit(X_dup, y)
    assert np.all(np.isfinite(fda.coef_))
    ref = FDA(reg=0.0).fit(X, y)
    np.testing.assert_array_equal(
        fda.predict(np.c_[X_test, X_test[:, 0]]), ref.predict(X_test)
    )


def test_linear_cosine_is_fda_on_unit_rows():
    X, y, X_test = _two_blobs(seed=4)
    unit = lambda A: A / np.linalg.norm(A, axis=1, keepdims=True)  # noqa: E731
    fda = FDA(normalize="cosine").fit(X, y)
    ref = FDA().fit(unit(X), y)
    np.testing.assert_allclose(fda.coef_, ref.coef_)
    np.testing.assert_allclose(
        fda.decision_function(X_test), ref.decision_function(unit(X_test))
    )


# ------------------------------------------------------------- kernel FDA


@pytest.mark.parametrize(
    "params",
    [
        dict(kernel="poly", degree=2),
        dict(kernel="gaussian", sigma=1.5),
        dict(kernel="poly", degree=3, normalize="cosine"),
    ],
    ids=["poly2", "gauss1.5", "poly3-cosine"],
)
def test_kfd_matches_dense_formula(params):
    X, y, X_test = _two_blobs()
    fda = FDA(reg=1e-2, **params).fit(X, y)
    kw = {k: v for k, v in params.items()}
    K = pairwise_kernel(X, **kw)
    alpha, b = _dense_kfd(K, y, 1e-2)
    np.testing.assert_allclose(fda.dual_coef_[0], alpha, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(fda.intercept_[0], b, rtol=1e-7, atol=1e-10)
    K_test = pairwise_kernel(X_test, X, **kw)
    np.testing.assert_allclose(fda.decision_function(X_test), K_test @ alpha + b)
    assert not hasattr(fda, "coef_")
    np.testing.assert_array_equal(fda.X_fit_, X)


def test_kfd_with_linear_gram_tends_to_linear_fda():
    # X'(XSX' + mu I)^-1 X d = (X'X S + mu I)^-1 X'X d -> S^-1 d as mu -> 0, so the
    # kernel solution on a linear Gram matrix converges to the primal one.
    X, y, X_test = _two_blobs(seed=5, n=30)
    primal = FDA(reg=0.0).fit(X, y)
    dual = FDA(kernel="precomputed", reg=1e-10).fit(X @ X.T, y)
    w_dual = X.T @ dual.dual_coef_[0]
    assert _cosine(w_dual, primal.coef_[0]) == pytest.approx(1.0, abs=1e-6)
    d_primal = primal.decision_function(X_test)
    d_dual = dual.decision_function(X_test @ X.T)
    scale = (d_dual @ d_primal) / (d_primal @ d_primal)
    assert scale > 0
    np.testing.assert_allclose(d_dual / scale, d_primal, rtol=1e-5, atol=1e-8)
    np.testing.assert_array_equal(dual.predict(X_test @ X.T), primal.predict(X_test))


def _poly3(A, B):
    return (A @ B.T + 1.0) ** 3


@pytest.mark.parametrize("normalize", [None, "cosine"])
def test_one_model_three_ways(normalize):
    # Named kernel, callable kernel and precomputed Gram give the same model.
    X, y, X_test = _two_blobs(seed=6)
    named = FDA(kernel="poly", degree=3, normalize=normalize).fit(X, y)
    call = FDA(kernel=_poly3, normalize=normalize).fit(X, y)
    kw = dict(kernel="poly", degree=3, normalize=normalize)
    pre = FDA(kernel="precomputed").fit(pairwise_kernel(X, **kw), y)
    K_test = pairwise_kernel(X_test, X, **kw)
    d = named.decision_function(X_test)
    np.testing.assert_allclose(call.decision_function(X_test), d, rtol=1e-9)
    np.testing.assert_allclose(pre.decision_function(K_test), d, rtol=1e-9)
    np.testing.assert_array_equal(pre.predict(K_test), named.predict(X_test))
    assert not hasattr(pre, "X_fit_")
    assert pre.n_features_in_ == X.shape[0]


# -------------------------------------------------------------- multi-class


@pytest.mark.parametrize(
    "multiclass,wrapper,min_acc",
    # One-vs-rest is weaker: versicolor against the rest is not linearly separable.
    [("ovo", OneVsOneClassifier, 0.95), ("ovr", OneVsRestClassifier, 0.85)],
)
@pytest.mark.parametrize("kernel", ["linear", "gaussian"])
def test_multiclass_iris(multiclass, wrapper, min_acc, kernel):
    """The shared one-vs-one / one-vs-rest rule equals scikit-learn's wrappers."""
    X, y = load_iris(return_X_y=True)
    fda = FDA(kernel=kernel, multiclass=multiclass).fit(X, y)
    ref = wrapper(FDA(kernel=kernel)).fit(X, y)
    n_problems = 3
    assert fda.intercept_.shape == (n_problems,)
    if kernel == "linear":
        assert fda.coef_.shape == (n_problems, 4)
    else:
        assert fda.dual_coef_.shape == (n_problems, 150)
    np.testing.assert_allclose(
        fda.decision_function(X), ref.decision_function(X), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_array_equal(fda.predict(X), ref.predict(X))
    assert np.mean(fda.predict(X) == y) > min_acc


def test_multiclass_precomputed_slices_the_gram_matrix():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    test = rng.choice(150, 30, replace=False)
    train = np.setdiff1d(np.arange(150), test)
    named = FDA(kernel="gaussian", sigma=2.0).fit(X[train], y[train])
    K = pairwise_kernel(X, kernel="gaussian", sigma=2.0)
    pre = FDA(kernel="precomputed").fit(K[np.ix_(train, train)], y[train])
    K_test = K[np.ix_(test, train)]
    np.testing.assert_allclose(
        pre.decision_function(K_test), named.decision_function(X[test]), atol=1e-9
    )
    np.testing.assert_array_equal(pre.predict(K_test), named.predict(X[test]))


def test_refit_binary_after_multiclass_drops_stale_attributes():
    X, y = load_iris(return_X_y=True)
    fda = FDA().fit(X, y)
    fda.fit(X[y < 2], y[y < 2])
    assert fda.coef_.shape == (1, 4)
    assert fda.intercept_.shape == (1,)


# ------------------------------------------------------------------ errors


def test_one_class_raises():
    X, y, _ = _two_blobs()
    with pytest.raises(ValueError, match=r"at least 2 classes; y has only one class"):
        FDA().fit(X, np.zeros_like(y))


@pytest.mark.parametrize(
    "est,X,match",
    [
        (
            FDA(kernel="precomputed"),
            np.ones((4, 3)),
            "Precomputed matrix must be a square matrix. Input is a 4x3 matrix.",
        ),
        (
            FDA(kernel="precomputed", normalize="cosine"),
            np.eye(4),
            "normalize='cosine' needs the kernel function",
        ),
    ],
    ids=["precomputed-not-square", "precomputed-normalize"],
)
def test_fit_data_errors(est, X, match):
    with pytest.raises(ValueError, match=match):
        est.fit(X, [0, 0, 1, 1])


def test_precomputed_predict_shape_error():
    K = np.eye(4) + 0.1
    fda = FDA(kernel="precomputed").fit(K, [0, 0, 1, 1])
    msg = r"X has 3 features, but FDA is expecting 4 features as input.*\(n_test, 4\)"
    with pytest.raises(ValueError, match=msg):
        fda.predict(np.ones((2, 3)))


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(reg=-1.0), r"The 'reg' parameter of FDA must be a float in the range"),
        (dict(sigma=0.0), r"The 'sigma' parameter of FDA must be a float in the"),
        (dict(degree=0), r"The 'degree' parameter of FDA must be an int in the"),
        (dict(kernel="rbf"), r"The 'kernel' parameter of FDA must be a str among"),
        (dict(normalize="mean_diag"), r"The 'normalize' parameter of FDA must be"),
        (dict(multiclass="crammer"), r"The 'multiclass' parameter of FDA must be"),
    ],
    ids=["reg", "sigma", "degree", "kernel", "normalize", "multiclass"],
)
def test_parameter_validation(params, match):
    X, y, _ = _two_blobs()
    with pytest.raises(InvalidParameterError, match=match):
        FDA(**params).fit(X, y)


def test_paper_name():
    assert FDA.paper_name == "FDA"


# scikit-learn's estimator checks for FDA run in tests/test_common.py.


def test_linear_cosine_leaves_a_zero_row_at_zero():
    """normalize="cosine" on the features: a zero row has no direction and stays
    the zero vector (as methods.kernels.cosine_normalize leaves it), so the
    model is the dense FDA on the unit rows with that row at 0."""
    X, y, X_test = _two_blobs(seed=7)
    X[0] = 0.0
    unit = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    fda = FDA(normalize="cosine").fit(X, y)
    w, b = _dense_linear_fda(unit, y, 1e-3)
    np.testing.assert_allclose(fda.coef_[0], w, rtol=1e-10)
    np.testing.assert_allclose(fda.intercept_[0], b, rtol=1e-10)
    assert fda.decision_function(np.zeros((1, 3)))[0] == pytest.approx(b)


def test_multiclass_default_is_one_vs_one():
    """The documented default decomposition: FDA() on iris is scikit-learn's
    OneVsOneClassifier of binary FDAs (one-vs-rest differs there)."""
    X, y = load_iris(return_X_y=True)
    fda = FDA().fit(X, y)
    ref = OneVsOneClassifier(FDA()).fit(X, y)
    assert fda.intercept_.shape == (3,)
    np.testing.assert_allclose(
        fda.decision_function(X), ref.decision_function(X), rtol=1e-9, atol=1e-9
    )
