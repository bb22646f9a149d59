"""The SVM estimators (methods/svm/)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import sqrtm
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.multiclass import OneVsOneClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from methods import check_psd_kernel
from methods._kernels import pairwise_kernel
from methods.exceptions import NonPSDKernelError
from methods.svm import SVM, SVMFDA, EpsSVM, SVMm, within_class_scatter

ESTIMATORS = [SVM, SVMm, EpsSVM, SVMFDA]


@pytest.fixture(scope="module")
def wdbc() -> tuple[np.ndarray, np.ndarray]:
    """120 standardized wdbc samples (both classes), labels as strings."""
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(0).choice(len(y), 120, replace=False)
    X = StandardScaler().fit_transform(X[rows])
    return X, np.array(["benign", "malignant"])[y[rows]]


@pytest.mark.parametrize("C", [0.1, 1.0])
@pytest.mark.parametrize("kernel", ["linear", "gaussian"])
def test_svm_matches_libsvm(wdbc, kernel, C):
    X, y = wdbc
    K = pairwise_kernel(X, kernel=kernel, sigma=3.0)
    ours = SVM(C=C, kernel="precomputed", tol=1e-6).fit(K, y)
    ref = SVC(C=C, kernel="precomputed", tol=1e-6).fit(K, y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    # LIBSVM caches the kernel in float32: agreement to ~1e-5, not to 1e-9.
    np.testing.assert_allclose(
        ours.decision_function(K), ref.decision_function(K), atol=1e-4
    )
    np.testing.assert_allclose(
        ours.dual_coef_[0, ref.support_], ref.dual_coef_[0], atol=1e-4
    )
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-4)
    # The objective is the dual (maximization) value: sum alpha - 1/2 g'Kg.
    g = ours.dual_coef_[0]
    alpha = np.abs(g)
    assert ours.objective_[0] == pytest.approx(alpha.sum() - 0.5 * g @ K @ g)


def test_svmm_with_huge_epsilon_is_svm(wdbc):
    X, y = wdbc
    svm = SVM(C=1.0, kernel="gaussian", sigma=3.0, tol=1e-7).fit(X, y)
    svmm = SVMm(C=1.0, epsilon=1e6, kernel="gaussian", sigma=3.0, tol=1e-7).fit(X, y)
    np.testing.assert_allclose(
        svmm.decision_function(X), svm.decision_function(X), atol=1e-6
    )
    assert svmm.objective_ == pytest.approx(svm.objective_, rel=1e-9)


def test_eps_svm_is_svmm_with_zero_epsilon(wdbc):
    X, y = wdbc
    eps_svm = EpsSVM(C=10.0, C2=2.0).fit(X, y)
    svmm = SVMm(C=10.0, C2=2.0, epsilon=0.0).fit(X, y)
    np.testing.assert_array_equal(eps_svm.dual_coef_, svmm.dual_coef_)
    np.testing.assert_array_equal(
        eps_svm.decision_function(X), svmm.decision_function(X)
    )
    # C2 defaults to C / 3 (mlsvm Sec. VII).
    np.testing.assert_array_equal(
        EpsSVM(C=3.0).fit(X, y).dual_coef_,
        SVMm(C=3.0, C2=1.0, epsilon=0.0).fit(X, y).dual_coef_,
    )


def test_svm_fda_with_zero_lambda_is_linear_svm(wdbc):
    X, y = wdbc
    fda = SVMFDA(C=1.0, lam=0.0, tol=1e-7).fit(X, y)
    svm = SVM(C=1.0, tol=1e-7).fit(X, y)
    np.testing.assert_allclose(fda.decision_function(X), svm.decision_function(X))


def test_svm_fda_is_svm_on_whitened_features(wdbc):
    """mlsvm Eq. (18) is the SVM on x~ = (lam S_W + I)^{-1/2} x."""
    X, y = wdbc
    lam = 0.01
    fda = SVMFDA(C=1.0, lam=lam, tol=1e-8).fit(X, y)
    labels = np.where(y == fda.classes_[1], 1, -1)
    A = np.real(
        sqrtm(np.linalg.inv(lam * within_class_scatter(X, labels) + np.eye(30)))
    )
    svm = SVM(C=1.0, tol=1e-8).fit(X @ A, y)
    np.testing.assert_allclose(
        fda.decision_function(X), svm.decision_function(X @ A), atol=1e-5
    )
    # The primal weights: w' x = w~' x~ with w = A w~.
    w_tilde = svm.dual_coef_[0] @ (X @ A)
    np.testing.assert_allclose(fda.coef_[0], A @ w_tilde, atol=1e-5)


@pytest.mark.parametrize("kernel", ["gaussian", "poly", "precomputed"])
def test_svm_fda_rejects_kernels(wdbc, kernel):
    X, y = wdbc
    with pytest.raises(ValueError, match="SVM-FDA.*supported: 'linear'"):
        SVMFDA(kernel=kernel).fit(X, y)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda e: e.__name__)
def test_max_iter_warns_and_reports(wdbc, Est):
    X, y = wdbc
    with pytest.warns(ConvergenceWarning, match="max_iter=2.*Increase max_iter"):
        est = Est(C=100.0, max_iter=2).fit(X, y)
    assert not est.converged_
    assert est.fit_status_ == 1
    assert np.all(est.n_iter_ == 2)


def test_converged_attributes(wdbc):
    X, y = wdbc
    est = SVMm(C=10.0, kernel="poly", degree=3, normalize="cosine").fit(X, y)
    assert est.converged_ and est.fit_status_ == 0
    assert est.dual_coef_.shape == (1, len(y))
    assert np.array_equal(est.support_, np.flatnonzero(est.dual_coef_[0]))
    np.testing.assert_array_equal(est.X_fit_, X)
    assert est.n_iter_.shape == (1,)
    assert est.predict(X).dtype == y.dtype


def _not_psd(X, Y):
    return -(X @ Y.T)


def test_non_psd_kernel_raises(wdbc):
    X, y = wdbc
    with pytest.raises(NonPSDKernelError, match="not positive semi-definite"):
        SVMm(kernel=_not_psd).fit(X, y)
    with pytest.raises(NonPSDKernelError, match="not positive semi-definite"):
        SVM(kernel="precomputed").fit(_not_psd(X, X), y)
    # The check is optional; SMO copes with an indefinite matrix.
    SVM(kernel="precomputed", check_psd=False, solver="smo").fit(_not_psd(X, X), y)
    assert issubclass(NonPSDKernelError, np.linalg.LinAlgError)


def test_psd_check_tolerates_round_off():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((40, 3)).astype(np.float32)
    check_psd_kernel(Z @ Z.T)  # rank 3, float32 round-off, float32 tolerance
    Zd = Z.astype(np.float64)
    check_psd_kernel(Zd @ Zd.T)  # float64 round-off, float64 tolerance


def _linear(X, Y):
    return X @ Y.T


@pytest.mark.parametrize("Est", [SVM, SVMm, EpsSVM], ids=lambda e: e.__name__)
def test_precomputed_callable_and_named_kernel_agree(wdbc, Est):
    X, y = wdbc
    X_train, X_test, y_train = X[:80], X[80:], y[:80]
    named = Est(C=10.0, kernel="linear").fit(X_train, y_train)
    func = Est(C=10.0, kernel=_linear).fit(X_train, y_train)
    pre = Est(C=10.0, kernel="precomputed").fit(X_train @ X_train.T, y_train)
    d = named.decision_function(X_test)
    np.testing.assert_array_equal(func.decision_function(X_test), d)
    np.testing.assert_allclose(
        pre.decision_function(X_test @ X_train.T), d, rtol=1e-10, atol=1e-10
    )
    np.testing.assert_array_equal(
        pre.predict(X_test @ X_train.T), named.predict(X_test)
    )


@pytest.mark.parametrize("solver", ["smo", "ipm", "cvxopt"])
def test_solvers_give_the_same_model(wdbc, solver):
    X, y = wdbc
    ref = SVMm(C=10.0, kernel="gaussian", sigma=3.0, solver="auto").fit(X, y)
    est = SVMm(C=10.0, kernel="gaussian", sigma=3.0, solver=solver).fit(X, y)
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-6)
    np.testing.assert_allclose(
        est.decision_function(X), ref.decision_function(X), atol=2e-3
    )


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda e: e.__name__)
def test_one_vs_one_on_iris(Est):
    X, y = load_iris(return_X_y=True)
    est = Est(C=10.0).fit(X, y)
    assert est.dual_coef_.shape == (3, 150)
    assert est.decision_function(X).shape == (150, 3)
    assert est.score(X, y) > 0.9
    # Same votes as scikit-learn's one-vs-one around the two-class estimator.
    ovo = OneVsOneClassifier(Est(C=10.0)).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), ovo.predict(X))


def test_one_vs_one_with_precomputed_kernel():
    X, y = load_iris(return_X_y=True)
    K = pairwise_kernel(X, kernel="gaussian")
    pre = SVMm(kernel="precomputed").fit(K, y)
    named = SVMm(kernel="gaussian").fit(X, y)
    np.testing.assert_allclose(
        pre.decision_function(K), named.decision_function(X), atol=1e-10
    )


@pytest.mark.parametrize(
    "params, match",
    [
        ({"C": -1}, r"The 'C' parameter of SVMm must be a float in the range "),
        ({"epsilon": -1.0}, "The 'epsilon' parameter of SVMm"),
        ({"kernel": "rbf"}, "The 'kernel' parameter of SVMm"),
        ({"normalize": "l2"}, "The 'normalize' parameter of SVMm"),
        ({"solver": "newton"}, "The 'solver' parameter of SVMm"),
    ],
    ids=["C", "epsilon", "kernel", "normalize", "solver"],
)
def test_parameter_validation(wdbc, params, match):
    X, y = wdbc
    with pytest.raises(InvalidParameterError, match=match):
        SVMm(**params).fit(X, y)


@pytest.mark.parametrize(
    "fit_args, match",
    [
        (
            lambda X, y: (X @ X[:5].T, y),
            r"Precomputed matrix must be a square matrix\. Input is a 120x5 matrix\.",
        ),
        (
            lambda X, y: (X, np.full(len(y), "benign")),
            "at least 2 classes; y has only one class .* stratified folds",
        ),
        (  # the label as Python writes it, not numpy's repr (np.float64(0.0))
            lambda X, y: (X, np.zeros(len(y))),
            r"y has only one class \(0\.0\) in",
        ),
    ],
    ids=["non_square", "one_class", "one_class_repr"],
)
def test_fit_input_errors(wdbc, fit_args, match):
    X, y = wdbc
    kernel = "precomputed" if "square" in match else "linear"
    with pytest.raises(ValueError, match=match):
        SVM(kernel=kernel).fit(*fit_args(X, y))


def test_precomputed_predict_shape_error(wdbc):
    X, y = wdbc
    est = SVM(kernel="precomputed").fit(X @ X.T, y)
    with pytest.raises(ValueError, match=r"K\(X_test, X_train\) of shape"):
        est.predict(X[:10] @ X[:50].T)


def test_pairwise_tag_and_paper_names():
    assert SVM(kernel="precomputed").__sklearn_tags__().input_tags.pairwise
    assert not SVM(kernel="linear").__sklearn_tags__().input_tags.pairwise
    assert [E.paper_name for E in ESTIMATORS] == ["SVM", "SVM_m", "ε-SVM", "SVM-FDA"]


# ----------------------------------------------------- check_psd certificate
def _exact_psd_verdict(K):
    """The reference rule: eigenvalues of the symmetrized K (metric-learn's)."""
    from methods._validation import _check_from_eigenvalues

    K = np.asarray(K)
    dtype = K.dtype if K.dtype in (np.float16, np.float32) else np.float64
    K64 = K.astype(np.float64)
    asym = float(np.max(np.abs(K64 - K64.T)))
    try:
        _check_from_eigenvalues((K64 + K64.T) / 2, asym, np.finfo(dtype).eps, "K")
    except NonPSDKernelError as exc:
        return str(exc).split(":")[0]
    return "ok"


def _fast_psd_verdict(K):
    try:
        check_psd_kernel(K, what="K")
    except NonPSDKernelError as exc:
        return str(exc).split(":")[0]
    return "ok"


def _psd_cases(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    cases = {
        "rbf": np.exp(-d2 / 2),
        "rbf_wide": np.exp(-d2 / 200),  # near-singular: eigenvalues at round-off
        "linear_rank5": X @ X.T,
        "linear_rank5_f32": (X @ X.T).astype(np.float32),
        "asymmetric": np.exp(-d2 / 2) + 1e-3 * np.triu(np.ones((n, n)), 1),
    }
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = np.abs(rng.standard_normal(n))
    w[: n // 2] = 0.0
    for mult in (0.3, 0.9, 1.1, 1.5, 10.0):
        # smallest eigenvalue at mult x the tolerance below 0: within / beyond it
        ww = w.copy()
        tol = ww.max() * n * np.finfo(np.float64).eps
        ww[0] = -mult * tol
        A = (Q * ww) @ Q.T
        cases[f"neg_{mult}_tol"] = (A + A.T) / 2
    # The same 1.1 x tolerance below 0 with the top eigenvector along ones, where
    # the power iteration's lower bound on ||S||_2 is exact: the certificate's
    # shift (half the tolerance) must still leave it indefinite.
    Q1, _ = np.linalg.qr(np.column_stack([np.ones(n), rng.standard_normal((n, n - 1))]))
    ww = np.abs(rng.standard_normal(n))
    ww[0] = 2.0 * ww.max()
    ww[1] = -1.1 * ww[0] * n * np.finfo(np.float64).eps
    A = (Q1 * ww) @ Q1.T
    cases["neg_1.1_tol_top_ones"] = (A + A.T) / 2
    # Asymmetries between the bounds on ||S||_2 the fast path uses (the power
    # iteration's lower one, the Frobenius upper one), judged against
    # sqrt(eps) * ||S||_2: within it for a near-rank-one matrix (||S||_2 is
    # almost ||S||_F), beyond it for a multiple of I (||S||_2 = ||S||_F / sqrt(n)).
    root_eps = np.sqrt(np.finfo(np.float64).eps)
    A = np.ones((n, n)) + 0.01 * np.eye(n)  # ||S||_2 = n + 0.01: PSD
    A[0, 1] += 0.97 * root_eps * (n + 0.01)
    cases["asym_within_tol"] = A
    A = 3.0 * np.eye(n)  # ||S||_2 = 3, ||S||_F = 3 sqrt(n)
    A[0, 1] += root_eps * 1.5 * (1.0 + np.sqrt(n))
    cases["asym_beyond_tol"] = A
    return cases


@pytest.mark.parametrize("n", [40, 300])
def test_psd_certificate_matches_the_eigenvalue_rule(n):
    verdicts = {
        k: (_exact_psd_verdict(K), _fast_psd_verdict(K))
        for k, K in _psd_cases(n).items()
    }
    for name, (exact, fast) in verdicts.items():
        assert exact == fast, name
    # The cases span both verdicts (so the comparison can fail).
    assert verdicts["rbf"][0] == "ok" and verdicts["neg_10.0_tol"][0] != "ok"
    assert "not symmetric" in verdicts["asymmetric"][0]
    assert "not symmetric" in verdicts["asym_beyond_tol"][0]
    assert verdicts["asym_within_tol"][0] == "ok" and verdicts["neg_1.1_tol"][0] != "ok"
    assert verdicts["neg_1.1_tol_top_ones"][0] != "ok"


def test_psd_certificate_skips_the_eigendecomposition(monkeypatch):
    cases = _psd_cases(200)

    def no_eig(*args, **kwargs):
        raise AssertionError("eigendecomposition on a certified PSD matrix")

    monkeypatch.setattr(np.linalg, "eigvalsh", no_eig)
    for name in ("rbf", "linear_rank5", "linear_rank5_f32"):
        check_psd_kernel(cases[name])  # certified by the Cholesky factorization


def test_psd_check_leaves_input_untouched():
    K = _psd_cases(50)["neg_10.0_tol"]
    Kf = np.asfortranarray(K)
    before = Kf.copy()
    with pytest.raises(NonPSDKernelError):
        check_psd_kernel(Kf)
    np.testing.assert_array_equal(Kf, before)


@pytest.mark.parametrize("order", ["C", "F"])
def test_psd_symmetrization_compiled_equals_numpy(order, monkeypatch):
    import methods._validation as validation
    from methods._validation import _symmetrize_blocks, _symmetrize_into

    monkeypatch.setattr(validation, "_COMPILED_FROM", 0)  # the compiled pass at n=197
    rng = np.random.default_rng(3)
    n = 197  # not a multiple of the tile or block size
    K = np.asarray(rng.standard_normal((n, n)), order=order)
    K[5, 7] = K[7, 5] + 0.25  # the largest asymmetry, once
    S_nb = np.zeros((n, n), order="F")
    S_np = np.zeros((n, n), order="F")
    asym_nb, fro_nb = _symmetrize_into(S_nb, K)
    asym_np, fro_np = _symmetrize_blocks(S_np, K)
    # Only lower triangles are read (the numpy blocks also fill some upper entries).
    np.testing.assert_array_equal(np.tril(S_nb), np.tril(S_np))
    np.testing.assert_array_equal(np.tril(S_nb), np.tril((K + K.T) / 2))
    assert asym_nb == asym_np == np.max(np.abs(K - K.T))
    assert fro_nb == pytest.approx(np.linalg.norm((K + K.T) / 2), rel=1e-13)


@pytest.mark.parametrize("n", [40, 300])
def test_psd_small_n_path_gives_the_compiled_paths_verdicts(n, monkeypatch):
    """Below ``_COMPILED_FROM`` the numpy symmetrization feeds the Cholesky
    certificate; its verdicts equal the compiled path's and the eigenvalue rule's
    on PSD, barely PSD (within the tolerance), indefinite and asymmetric input."""
    import methods._psd_kernels as psd_kernels
    import methods._validation as validation

    assert n < validation._COMPILED_FROM
    cases = _psd_cases(n)
    compiled_calls = []
    real = psd_kernels.symmetrize_lower

    def counted(*args):
        compiled_calls.append(1)
        return real(*args)

    monkeypatch.setattr(psd_kernels, "symmetrize_lower", counted)
    small = {k: _fast_psd_verdict(K) for k, K in cases.items()}
    assert not compiled_calls  # the small-n path never runs the numba pass
    monkeypatch.setattr(validation, "_COMPILED_FROM", 0)
    compiled = {k: _fast_psd_verdict(K) for k, K in cases.items()}
    assert compiled_calls  # the same matrices through the compiled pass
    exact = {k: _exact_psd_verdict(K) for k, K in cases.items()}
    assert small == compiled == exact
    # PSD, barely PSD, indefinite and asymmetric cases (so the test can fail)
    assert small["rbf"] == small["neg_0.9_tol"] == "ok"
    assert small["neg_1.5_tol"] != "ok" and small["neg_10.0_tol"] != "ok"
    assert "not symmetric" in small["asymmetric"]


# ------------------------------------------------------------ SVM-FDA reuse
def test_svmfda_transform_reuse_is_exact(wdbc, monkeypatch):
    from methods.svm import _estimators

    X, y = wdbc
    fits = {}
    for cached in (False, True):
        _estimators._TRANSFORM_CACHE.clear()
        for C in (0.1, 1.0, 10.0):
            if not cached:
                _estimators._TRANSFORM_CACHE.clear()
            est = SVMFDA(C=C, lam=0.5, normalize="cosine").fit(X, y)
            fits[cached, C] = est
        assert len(_estimators._TRANSFORM_CACHE) == 1
    for C in (0.1, 1.0, 10.0):
        a, b = fits[False, C], fits[True, C]
        for attr in ("dual_coef_", "intercept_", "coef_"):
            np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    # A different lambda is a different transform.
    SVMFDA(C=1.0, lam=2.0, normalize="cosine").fit(X, y)
    assert len(_estimators._TRANSFORM_CACHE) == 2


def test_svmfda_transform_reused_in_grid_search_order(wdbc, monkeypatch):
    """GridSearchCV's order (every split of a (C, lam) before the next) hits."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from methods.svm import _estimators

    X, y = wdbc[0][:150], wdbc[1][:150]
    calls = []
    scatter = _estimators.within_class_scatter

    def counted(Z, yy):
        calls.append(len(yy))
        return scatter(Z, yy)

    monkeypatch.setattr(_estimators, "within_class_scatter", counted)
    grid = {"C": [0.1, 10.0, 1000.0], "lam": [0.1, 1.0, 10.0, 100.0, 1000.0]}
    results = {}
    for size in (0, _estimators._TRANSFORM_CACHE_SIZE):
        monkeypatch.setattr(_estimators, "_TRANSFORM_CACHE_SIZE", size)
        _estimators._TRANSFORM_CACHE.clear()
        calls.clear()
        search = GridSearchCV(
            SVMFDA(normalize="cosine"), grid, cv=StratifiedKFold(10), n_jobs=1
        ).fit(X, y)
        results[size] = (search, len(calls))
    (plain, n_plain), (cached, n_cached) = results.values()
    assert n_plain == 3 * 5 * 10 + 1  # every fit builds its transform
    assert n_cached == 5 * 10 + 1  # once per (lam, split), once for the refit
    np.testing.assert_array_equal(
        plain.cv_results_["mean_test_score"], cached.cv_results_["mean_test_score"]
    )
    np.testing.assert_array_equal(
        plain.best_estimator_.dual_coef_, cached.best_estimator_.dual_coef_
    )


def test_svmfda_fit_builds_no_gram_matrix(wdbc, monkeypatch):
    X, y = wdbc

    def no_gram(self, *args, **kwargs):
        raise AssertionError("SVMFDA built a Gram matrix")

    monkeypatch.setattr(SVMFDA, "_gram", no_gram)
    SVMFDA(C=1.0, lam=0.5).fit(X, y).predict(X)


def test_param_names_memo_is_per_class_and_equals_sklearns():
    """The memo of constructor parameters gives scikit-learn's names per class."""
    from sklearn.base import BaseEstimator, clone

    from methods.svm._base import BaseKernelSVM

    def inspected(cls):
        return BaseEstimator._get_param_names.__func__(cls)

    classes = list(BaseKernelSVM.__subclasses__())
    for cls in classes:
        cls._get_param_names()  # memoize the parents first

    class WithExtra(SVM):
        def __init__(self, C=1.0, *, extra=3, **kwargs):
            self.extra = extra
            super().__init__(C=C, **kwargs)

    for cls in [*classes, WithExtra]:
        assert cls._get_param_names() == inspected(cls)
        names = cls._get_param_names()
        names.append("mutated")  # a caller's list, not the memo
        assert cls._get_param_names() == inspected(cls)
    assert "extra" in WithExtra._get_param_names()
    assert "extra" not in SVM._get_param_names()
    est = clone(WithExtra(C=5.0, extra=7))
    assert est.get_params()["extra"] == 7 and est.C == 5.0


# ------------------------------------------------- the duals against the primals
def _primal_svmm_cvxopt(X, y, C1, C2, eps):
    """mlsvm primal (14), with LIBSVM's 1/2 ||w||^2, solved by cvxopt.

    Variables ``[w, b, xi, eta]``; ``eps=None`` drops the band constraint (the
    C-SVM primal (1)). Returns ``(w, b, objective)``.
    """
    from cvxopt import matrix, solvers

    n, d = X.shape
    m = d + 1 + 2 * n
    P = np.zeros((m, m))
    P[:d, :d] = np.eye(d)
    q = np.concatenate([np.zeros(d + 1), np.full(n, C1), np.full(n, C2)])
    yX = np.hstack([y[:, None] * X, y[:, None]])  # y_i (x_i, 1)
    eye_n, zero_n = np.eye(n), np.zeros((n, n))
    G = [np.hstack([-yX, -eye_n, zero_n]), -np.eye(m)[d + 1 : d + 1 + n]]
    h = [-np.ones(n), np.zeros(n)]
    if eps is None:
        G.append(-np.eye(m)[d + 1 + n :])  # eta unused: pinned at 0 by its cost
        h.append(np.zeros(n))
    else:
        G += [np.hstack([yX, zero_n, -eye_n]), -np.eye(m)[d + 1 + n :]]
        h += [np.full(n, 1.0 + eps), np.zeros(n)]
    opts = {"show_progress": False, "abstol": 1e-11, "reltol": 1e-11, "feastol": 1e-11}
    sol = solvers.qp(
        matrix(P),
        matrix(q),
        matrix(np.vstack(G)),
        matrix(np.concatenate(h)),
        options=opts,
    )
    assert sol["status"] == "optimal"
    x = np.asarray(sol["x"]).ravel()
    return x[:d], x[d], float(sol["primal objective"])


@pytest.mark.parametrize(
    "Est, params, eps, C2",
    [
        (SVM, {"C": 2.0}, None, 0.0),
        (SVMm, {"C": 2.0, "epsilon": 0.5}, 0.5, 2.0 / 3),  # C2 defaults to C / 3
        (SVMm, {"C": 2.0, "C2": 5.0, "epsilon": 0.3}, 0.3, 5.0),
        (EpsSVM, {"C": 2.0, "C2": 1.5}, 0.0, 1.5),
    ],
    ids=["SVM", "SVMm_default_C2", "SVMm", "EpsSVM"],
)
def test_dual_solution_solves_the_papers_primal(Est, params, eps, C2):
    """The dual (mlsvm Eq. 15; Eq. 1's for SVM) against the primal (14) / (7) / (1)
    solved directly by cvxopt: strong duality (``objective_`` equals the primal
    optimum), the same w and the same decision values. Guards the dual's
    construction (the band's ``1 + eps`` cost, the signs of beta, the C2 box) and
    the C2 = C / 3 default, which solver-against-solver tests cannot see."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.standard_normal(40) > 0, 1, -1)
    w, b, primal = _primal_svmm_cvxopt(X, y.astype(float), params["C"], C2, eps)
    est = Est(kernel="linear", tol=1e-8, **params).fit(X, y)
    assert est.objective_[0] == pytest.approx(primal, rel=1e-7)
    np.testing.assert_allclose(est.dual_coef_[0] @ X, w, atol=1e-6)
    np.testing.assert_allclose(est.decision_function(X), X @ w + b, atol=1e-6)


def test_within_class_scatter_is_the_sum_of_class_scatters():
    """mlsvm Eq. (5): ``S_W = sum_c sum_{x in D_c} (x - m_c)(x - m_c)'``, i.e.
    ``sum_c (n_c - 1) cov(D_c)`` with numpy's unbiased covariance: each class
    centred on its OWN mean (not the global one), unnormalized."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4)) + np.repeat([[0.0], [3.0], [-2.0]], 10, axis=0)
    y = np.repeat([2, 0, 1], 10)
    y[[0, 5]] = 1  # unequal class sizes
    ref = sum((np.sum(y == c) - 1) * np.cov(X[y == c].T) for c in (0, 1, 2))
    np.testing.assert_allclose(within_class_scatter(X, y), ref, rtol=1e-12)


def test_svm_fda_cosine_is_svm_fda_on_unit_rows(wdbc):
    """``normalize="cosine"`` scales the rows of X to unit norm, in fit and in
    predict: the linear SVM on the cosine-normalized kernel when lam = 0 (an
    independent path through ``pairwise_kernel``), SVM-FDA on unit rows else."""
    X, y = wdbc
    Xu = X / np.linalg.norm(X, axis=1, keepdims=True)
    fda0 = SVMFDA(C=10.0, lam=0.0, normalize="cosine", tol=1e-8).fit(X, y)
    svm = SVM(C=10.0, kernel="linear", normalize="cosine", tol=1e-8).fit(X, y)
    np.testing.assert_allclose(
        fda0.decision_function(X), svm.decision_function(X), atol=1e-6
    )
    fda = SVMFDA(C=10.0, lam=0.5, normalize="cosine", tol=1e-8).fit(X, y)
    unit = SVMFDA(C=10.0, lam=0.5, tol=1e-8).fit(Xu, y)
    np.testing.assert_allclose(
        fda.decision_function(2.0 * X), unit.decision_function(Xu), atol=1e-6
    )
    np.testing.assert_allclose(fda.coef_, unit.coef_, atol=1e-6)


def test_a_fit_stopped_at_the_default_cap_names_the_cap(monkeypatch):
    # max_iter=None is LIBSVM's cap max(10_000_000, 100 m); the warning said
    # "stopped at max_iter=None", which reads as "no cap at all"
    import methods._qp

    monkeypatch.setattr(methods._qp, "default_max_iter", lambda n_vars: 3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=30) > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match=r"default cap of 3 iterations \(max"):
        SVM(C=100.0, kernel="gaussian").fit(X, y)
