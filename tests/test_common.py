"""scikit-learn's estimator checks on every estimator of ``methods``.

Each kernel estimator is checked twice, with a named kernel and with
``kernel="precomputed"`` (the checks then hand it a linear-kernel Gram matrix, and
``_safe_split`` slices rows and columns), as scikit-learn's own test_common does.
Expected failures are listed with their reason.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import methods
from methods import (
    FDA,
    SVM,
    SVMFDA,
    WRBFSVM,
    EpsMKL,
    EpsSVM,
    MKLm,
    SimpleMKL,
    SVMm,
)
from methods._multiclass import binary_problems, class_pairs, ovo_scores
from methods.kernels import KernelSpec, kernel_stack, pairwise_kernel
from methods.komd import ARBF, KOMD
from methods.metric_learning import (
    ITML,
    KLMNN,
    LMNN,
    LMNNMKLP,
    NRLMNNMKL,
    KDMLFixedKernel,
    KDMLParamKernel,
    LMNNKernelSum,
    LMNNSingleKernel,
    MetricKNN,
)
from methods.metric_learning._gb_lmnn import GBLMNN
from runners.protocols import solver_diagnostics

# Two small kernels keep the MKL checks fast; the 20-kernel bank is tested elsewhere.
_SMALL_BANK = [KernelSpec("linear"), KernelSpec("gaussian", sigma=2.0)]

ESTIMATORS = [
    SVM(kernel="gaussian"),
    # check_psd=False: several checks hand over Gram matrices rounded to float32 or
    # truncated to integers, which are not PSD at float64 precision, or minus their
    # mean; every estimator taking kernel="precomputed" refuses those by
    # design (tests/methods/test_svm.py, tests/methods/test_psd_checks.py).
    SVM(kernel="precomputed", check_psd=False),
    SVMm(kernel="poly", degree=2, normalize="cosine"),
    SVMm(kernel="precomputed", check_psd=False),
    EpsSVM(kernel="gaussian"),
    EpsSVM(kernel="precomputed", check_psd=False),
    SVMFDA(),
    FDA(),
    FDA(kernel="gaussian"),
    FDA(kernel="poly", degree=3, normalize="cosine"),
    FDA(kernel="precomputed", check_psd=False),
    SimpleMKL(kernel=_SMALL_BANK),
    SimpleMKL(kernel="precomputed", check_psd=False),
    MKLm(kernel=_SMALL_BANK),
    EpsMKL(kernel="precomputed", check_psd=False),
    WRBFSVM(n_iter=3),
    WRBFSVM(n_iter=0),
    LMNN(n_neighbors=2),
    LMNN(n_neighbors=2, kernel="precomputed"),
    MetricKNN(),
    MetricKNN(LMNN(n_neighbors=2), n_neighbors=3, weights="distance"),
    MetricKNN(LMNN(n_neighbors=2, kernel="precomputed"), score_rule="margin"),
    KDMLFixedKernel(output_dim=1, max_iter=3),
    KDMLParamKernel(output_dim=1, max_iter=3),
    ITML(max_iter=5),
    ITML(kernel="gaussian", max_iter=5),
    KLMNN(n_components=2, lmnn=LMNN(n_neighbors=1, max_iter=5)),
    # lmnnmkl: a Gram matrix is a bank of one kernel; k = 1 because the checks' small
    # datasets have classes of 2-3 samples (k = 5 needs 6 per class)
    LMNNKernelSum(n_neighbors=1, check_psd=False, lmnn_params={"max_iter": 30}),
    LMNNSingleKernel(n_neighbors=1, check_psd=False, lmnn_params={"max_iter": 30}),
    NRLMNNMKL(n_neighbors=1, check_psd=False, lmnn_params={"max_iter": 30}),
    LMNNMKLP(n_neighbors=1, check_psd=False, lmnn_params={"max_iter": 30}),
    KOMD(),
    KOMD(kernel="precomputed", check_psd=False),
    ARBF(n_iter=2),
    GBLMNN(n_neighbors=1, n_estimators=3),
]


# LMNN needs n_neighbors + 1 samples per class; on a precomputed kernel these checks
# draw labels from the kernel's first column (a dozen classes of 1-2 samples), and
# check_fit2d_1feature hands a non-square "kernel".
_LMNN_SMALL_CLASSES = {
    name: "labels from the kernel's first column leave classes of < n_neighbors + 1"
    for name in (
        "check_dont_overwrite_parameters",
        "check_f_contiguous_array_estimator",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_dict_unchanged",
        "check_fit2d_predict1d",
        "check_fit2d_1feature",
    )
}


def _expected_failures(estimator) -> dict[str, str]:
    if isinstance(estimator, (LMNNKernelSum, LMNNSingleKernel, NRLMNNMKL, LMNNMKLP)):
        return dict(_LMNN_SMALL_CLASSES)  # precomputed only: the same labels
    learner = getattr(estimator, "metric_learner", estimator)
    if isinstance(learner, LMNN) and learner.kernel == "precomputed":
        failures = dict(_LMNN_SMALL_CLASSES)
        if getattr(estimator, "score_rule", None) == "margin":
            failures["check_decision_proba_consistency"] = (
                "score_rule='margin' ranks by neighbour distances, not by the vote"
            )
        return failures
    if isinstance(estimator, GBLMNN):
        return {
            "check_fit2d_1sample": (
                "target neighbours need n_neighbors + 1 samples per class; the "
                "ValueError says so in its own words"
            )
        }
    if isinstance(estimator, WRBFSVM) and estimator.n_iter == 0:
        return {
            "check_non_transformer_estimators_n_iter": (
                "n_iter=0 is the plain RBF baseline: no weight step, n_iter_ = 0"
            )
        }
    return {}


def test_every_public_estimator_is_checked():
    checked = {type(e).__name__ for e in ESTIMATORS}
    public = {
        name
        for name in methods.__all__
        if isinstance(getattr(methods, name), type)
        and hasattr(getattr(methods, name), "fit")
    }
    assert public <= checked, f"not under the estimator checks: {public - checked}"
    conventions = {type(e).__name__ for e in CONVENTION_ESTIMATORS}
    assert public <= conventions, f"not under the conventions: {public - conventions}"


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# ------------------------------------------------- the conventions of methods/README.md
# One pattern for every estimator (issue 9): the multi-class rule of
# methods._multiclass, the Gaussian width `sigma`, dual_coef_ of shape
# (n_problems, n_train) and one set of fitted attribute names.

# Every public estimator, on a named kernel where it has one and on a precomputed one.
CONVENTION_ESTIMATORS = [
    SVM(C=10.0, kernel="gaussian", sigma=1.5),
    SVM(C=10.0, kernel="precomputed"),
    SVMm(kernel="linear"),
    EpsSVM(kernel="poly", degree=2),
    SVMFDA(),
    FDA(),
    FDA(kernel="gaussian", sigma=2.0),
    FDA(kernel="precomputed"),
    FDA(multiclass="ovr"),
    # normalize=None: the kernel scales are fitted on the whole training set, so
    # only unnormalized MKL splits exactly into its per-pair fits
    SimpleMKL(C=10.0, kernel=_SMALL_BANK, normalize=None, tol=1e-6, inner_tol=1e-10),
    MKLm(C=10.0, kernel="precomputed", normalize=None, tol=1e-6, inner_tol=1e-10),
    EpsMKL(C=10.0, kernel=_SMALL_BANK, normalize=None, tol=1e-6, inner_tol=1e-10),
    WRBFSVM(n_iter=0),
    WRBFSVM(n_iter=3, eta=0.01, multiclass="ovo", shared_weights=False),
]
_PRECOMPUTED_SIGMA = 1.5


def _data(n_classes: int, n_per_class: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0, 0.0], [2.5, 0.0, 0.5], [0.0, 2.5, -0.5]])
    y = np.repeat(np.arange(n_classes), n_per_class)
    X = centers[y] + rng.normal(scale=0.8, size=(y.size, 3))
    y_test = np.repeat(np.arange(n_classes), 4)
    Xt = centers[y_test] + rng.normal(scale=0.8, size=(y_test.size, 3))
    return X, np.array(["ant", "bee", "cat"])[y], Xt


def _inputs(est, X, Xt, rows=None):
    """What fit and decision_function take: raw X, a Gram matrix or a kernel stack."""
    rows = np.arange(X.shape[0]) if rows is None else rows
    if getattr(est, "kernel", None) != "precomputed":
        return X[rows], Xt
    if isinstance(est, (SimpleMKL, MKLm, EpsMKL)):
        return (
            kernel_stack(X[rows], None, _SMALL_BANK),
            kernel_stack(Xt, X[rows], _SMALL_BANK),
        )
    K = pairwise_kernel(X, kernel="gaussian", sigma=_PRECOMPUTED_SIGMA)
    K_test = pairwise_kernel(Xt, X, kernel="gaussian", sigma=_PRECOMPUTED_SIGMA)
    return K[np.ix_(rows, rows)], K_test[:, rows]


def _scheme(est) -> str:
    return getattr(est, "multiclass", "ovo")


@pytest.mark.parametrize("est", CONVENTION_ESTIMATORS, ids=repr)
def test_two_classes_decision_is_positive_for_classes_1(est):
    X, y, Xt = _data(2)
    A, At = _inputs(est, X, Xt)
    model = clone(est).fit(A, y)
    d = model.decision_function(At)
    assert d.shape == (Xt.shape[0],)
    np.testing.assert_array_equal(model.classes_, ["ant", "bee"])
    np.testing.assert_array_equal(
        model.predict(At), model.classes_[(d > 0).astype(int)]
    )
    # the training points of classes_[1] lie on the positive side on average
    on_train = model.decision_function(_inputs(est, X, X)[1])
    assert on_train[y == "bee"].mean() > 0 > on_train[y == "ant"].mean()


@pytest.mark.parametrize("est", CONVENTION_ESTIMATORS, ids=repr)
def test_multiclass_is_the_shared_rule_over_binary_fits(est):
    """decision_function = methods._multiclass applied to independent binary fits.

    One-vs-one: pair (i, j) in scikit-learn's order, fitted alone on the samples of
    classes i and j, must be positive for j; the multi-class decision is the vote
    plus confidence of ``ovo_scores``. One-vs-rest: column c is class c fitted
    alone against the rest.
    """
    X, y, Xt = _data(3)
    A, At = _inputs(est, X, Xt)
    model = clone(est).fit(A, y)
    dec = model.decision_function(At)
    assert dec.shape == (Xt.shape[0], 3)
    np.testing.assert_array_equal(model.predict(At), model.classes_[dec.argmax(axis=1)])
    columns = []
    if _scheme(est) == "ovr":
        for c in model.classes_:
            A_c, At_c = _inputs(est, X, Xt)
            columns.append(clone(est).fit(A_c, y == c).decision_function(At_c))
        np.testing.assert_allclose(dec, np.column_stack(columns), rtol=0, atol=1e-3)
        return
    for i, j in class_pairs(3):
        rows = np.flatnonzero(np.isin(y, model.classes_[[i, j]]))
        A_p, At_p = _inputs(est, X, Xt, rows)
        columns.append(clone(est).fit(A_p, y[rows]).decision_function(At_p))
    expected = ovo_scores(np.column_stack(columns), 3)
    # solver tolerances (1e-4 KKT) bound the gap; a wrong sign or rule is O(1)
    np.testing.assert_allclose(dec, expected, rtol=0, atol=1e-3)


def test_ovo_scores_is_scikit_learns_rule_bit_for_bit():
    from sklearn.utils.multiclass import _ovr_decision_function

    rng = np.random.default_rng(0)
    D = rng.normal(size=(200, 6))
    D[:20] = 0.0  # ties: a zero pair decision votes for i
    np.testing.assert_array_equal(ovo_scores(D, 4), _ovr_decision_function(D > 0, D, 4))


def test_isotropic_gaussian_width_is_sigma_everywhere():
    """Every estimator names the isotropic Gaussian width `sigma`,
    k = exp(-||x - z||^2 / (2 sigma^2)); `gamma` is only WRBF's scale of the
    weighted distance (wrbf Eq. (9)), with sigma = 1 / sqrt(2 gamma) at v = 1."""
    for name in methods.__all__:
        cls = getattr(methods, name)
        if not (isinstance(cls, type) and hasattr(cls, "fit")):
            continue
        params = cls().get_params()
        assert "gamma" not in params or cls is WRBFSVM, name
        assert not {"width", "bandwidth", "length_scale"} & set(params), name
    X, y, Xt = _data(2)
    sigma = 0.8
    K = pairwise_kernel(X, kernel="gaussian", sigma=sigma)
    K_test = pairwise_kernel(Xt, X, kernel="gaussian", sigma=sigma)
    np.testing.assert_allclose(
        np.exp(-((Xt[:, None] - X[None]) ** 2).sum(-1) / (2 * sigma**2)), K_test
    )
    for cls in (SVM, SVMm, EpsSVM, FDA):
        named = cls(kernel="gaussian", sigma=sigma).fit(X, y).decision_function(Xt)
        pre = cls(kernel="precomputed").fit(K, y).decision_function(K_test)
        np.testing.assert_allclose(
            named, pre, rtol=1e-7, atol=1e-8, err_msg=cls.__name__
        )
    rbf = WRBFSVM(n_iter=0, gamma=1.0 / (2 * sigma**2), tol=1e-10).fit(X, y)
    svm = SVM(kernel="gaussian", sigma=sigma, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(
        rbf.decision_function(Xt), svm.decision_function(Xt), atol=1e-6
    )


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("est", CONVENTION_ESTIMATORS, ids=repr)
def test_fitted_attributes_and_dual_coef_shape(est, n_classes):
    X, y, Xt = _data(n_classes)
    A, _ = _inputs(est, X, Xt)
    model = clone(est).fit(A, y)
    n_problems = 1 if n_classes == 2 else 3  # 3 pairs or 3 classes-vs-rest
    assert model.classes_.shape == (n_classes,)
    assert model.n_features_in_ == A.shape[1]
    assert model.intercept_.shape == (n_problems,)
    if hasattr(model, "dual_coef_"):
        assert model.dual_coef_.shape == (n_problems, X.shape[0])
        _, y_idx = np.unique(y, return_inverse=True)
        problems = binary_problems(y_idx, n_classes, _scheme(est))
        for coef, (idx, labels) in zip(model.dual_coef_, problems, strict=True):
            # row p lives on problem p's samples only ...
            assert not np.any(np.delete(coef, idx))
            if isinstance(model, (SVM, SimpleMKL, WRBFSVM)):
                # ... and, for the C-SVM duals (y_i alpha_i, alpha >= 0), carries
                # the sign of the problem's labels: +1 is classes_[j] of pair (i, j)
                assert np.all(coef[idx] * labels >= 0)
    else:  # the primal estimators (linear FDA, SVM-FDA also has both)
        assert model.coef_.shape == (n_problems, X.shape[1])
    if isinstance(model, FDA):
        # closed form: no solver, no solver attributes
        assert not hasattr(model, "n_iter_") and not hasattr(model, "converged_")
        return
    np.testing.assert_array_equal(
        model.support_, np.flatnonzero(np.any(model.dual_coef_ != 0.0, axis=0))
    )
    assert isinstance(model.converged_, bool)
    assert model.fit_status_ in (0, 1, 2)
    assert np.all(np.asarray(model.n_iter_) >= 0)
    assert np.all(np.isfinite(model.objective_))
    if isinstance(model, (SimpleMKL, MKLm, EpsMKL)):
        assert model.kernel_weights_.shape == (n_problems, len(_SMALL_BANK))
    diag = solver_diagnostics(model)
    assert {"objective", "n_iter", "converged"} <= set(diag)
