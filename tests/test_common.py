"""scikit-learn's estimator checks and the rules of methods/README.md, on every
public estimator of ``methods``, ``methods.metric_learning`` and ``methods.komd``.

Each kernel estimator is checked twice, with a named kernel and with
``kernel="precomputed"`` (the checks then hand it a linear-kernel Gram matrix, and
``_safe_split`` slices rows and columns), as scikit-learn's own test_common does.
Expected failures are listed with their reason; so is every estimator a rule of
methods/README.md does not apply to (a skip with its reason).
"""

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.decomposition import KernelPCA
from sklearn.utils.estimator_checks import parametrize_with_checks

import methods
import methods.komd
import methods.metric_learning
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
    GBLMNN,
    ITML,
    KLMNN,
    LMNN,
    LMNNMKLP,
    NRLMNNMKL,
    KDMLFixedKernel,
    KDMLParamKernel,
    KPCAMap,
    LMNNKernelSum,
    LMNNSingleKernel,
    MetricKNN,
)
from methods.metric_learning._cached import CachedMetricLearner
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
    LMNN(n_neighbors=2, kernel="precomputed", check_psd=False),
    MetricKNN(),
    MetricKNN(LMNN(n_neighbors=2), n_neighbors=3, weights="distance"),
    MetricKNN(
        LMNN(n_neighbors=2, kernel="precomputed", check_psd=False),
        score_rule="margin",
    ),
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
    KPCAMap(),
]

#: The packages whose ``__all__`` names the public estimators.
PACKAGES = (methods, methods.metric_learning, methods.komd)


def _public_estimators() -> list[type]:
    return [
        getattr(pkg, name)
        for pkg in PACKAGES
        for name in pkg.__all__
        if isinstance(getattr(pkg, name), type) and hasattr(getattr(pkg, name), "fit")
    ]


PUBLIC_ESTIMATORS = _public_estimators()


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


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# ------------------------------------------------- the conventions of methods/README.md
# One pattern per family (issue 9): the multi-class rule of methods._multiclass, the
# Gaussian width `sigma`, dual_coef_ of shape (n_problems, n_train), one set of
# fitted attribute names, the metric learners' maps. Each rule below runs on the
# estimators of CONVENTION_ESTIMATORS in its scope; an estimator in scope that the
# rule does not apply to is skipped with the reason methods/README.md gives.

_LMNN_MKL = (LMNNKernelSum, LMNNSingleKernel, NRLMNNMKL, LMNNMKLP)
_MKL = (SimpleMKL, MKLm, EpsMKL)

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
    KOMD(lam=0.5, kernel="gaussian", sigma=1.5),
    KOMD(lam=0.1, kernel="precomputed"),
    ARBF(lam=0.5, beta0=0.2, n_iter=3),
    MetricKNN(LMNN(n_neighbors=2), n_neighbors=3),
    LMNN(n_neighbors=2),
    LMNN(n_neighbors=2, kernel="precomputed"),
    ITML(max_iter=50),
    ITML(kernel="gaussian", sigma=1.5, max_iter=50),
    KDMLFixedKernel(max_iter=5),
    KDMLParamKernel(max_iter=5),
    KLMNN(n_components=3, lmnn=LMNN(n_neighbors=2)),
    KPCAMap(n_components=2),
    GBLMNN(n_neighbors=2, n_estimators=3, random_state=0),
    # a stack of the two kernels of _SMALL_BANK (_inputs)
    LMNNKernelSum(n_neighbors=2, lmnn_params={"max_iter": 50}),
    LMNNSingleKernel(kernel_index=1, n_neighbors=2, lmnn_params={"max_iter": 50}),
    NRLMNNMKL(n_neighbors=2, lmnn_params={"max_iter": 50}),
    LMNNMKLP(n_neighbors=2, lmnn_params={"max_iter": 50}),
]
_PRECOMPUTED_SIGMA = 1.5

_ONE_NN = (
    "a 1-NN classifier in the learned metric (lmnnmkl Sec. 6 reports error rates): "
    "predict only; no decision_function, intercept_ or dual_coef_"
)
_KNN = "k-NN votes over all classes at once: no binary problems, no coefficients"
_KERNEL_ITML = (
    "kernelized ITML: components_ acts on the kernel coordinates z(x) = "
    "K(x, X_train) kernel_basis_, not on X"
)


def _binary_only(est) -> bool:
    tags = est.__sklearn_tags__().classifier_tags
    return tags is not None and not tags.multi_class


def _is_transformer(est) -> bool:
    return hasattr(est, "transform")


#: rule -> (scope, {class: why the rule does not apply})
RULES = {
    # two classes: decision_function (n,), > 0 means classes_[1]
    "two_classes": (is_classifier, dict.fromkeys(_LMNN_MKL, _ONE_NN)),
    # the one-vs-one / one-vs-rest rule of methods._multiclass over binary fits
    "multiclass": (
        lambda e: is_classifier(e) and not _binary_only(e),
        {MetricKNN: _KNN, **dict.fromkeys(_LMNN_MKL, _ONE_NN)},
    ),
    # a binary method refuses more classes with a ValueError naming it and the fix
    "binary_only": (lambda e: is_classifier(e) and _binary_only(e), {}),
    # intercept_ (n_problems,); dual_coef_ (n_problems, n_train) or coef_; support_
    "fitted": (
        is_classifier,
        {MetricKNN: _KNN, **dict.fromkeys(_LMNN_MKL, _ONE_NN)},
    ),
    # objective_, n_iter_, converged_, fit_status_ (where the family defines it)
    "solver": (
        lambda e: True,
        {
            FDA: "closed form (kernel Fisher discriminant): no solver",
            KPCAMap: "closed form (one eigendecomposition): no solver",
            MetricKNN: "no solver of its own: its metric learner's are in "
            "metric_learner_",
        },
    ),
    # components_ L (n_components, n_features_in_), transform = X L^T, M = L^T L
    "linear_metric": (
        _is_transformer,
        {
            KLMNN: "KPCA then LMNN: the linear map is lmnn_.components_ on the KPCA "
            "coordinates kpca_.transform(X); no components_ of its own",
            KDMLFixedKernel: "transform is L f(x) with f the learned kernel "
            "expansion (kdml eq. 8); M = L_^T L_ on the output space (eq. 10)",
            KDMLParamKernel: "transform is f(x) = B C k(x) (kdml eq. 16); M = B_^2 "
            "on the space of C k(x) (eq. 18)",
            GBLMNN: "non-linear map phi(x) = L0 x + sum_t rho_t h_t(x): components_ "
            "is the start map L0 only; no get_mahalanobis_matrix",
            KPCAMap: "unsupervised kernel PCA map (kdml Fig. 3): learns no metric",
        },
    ),
    # one class in y: a ValueError
    "one_class": (
        lambda e: True,
        {KPCAMap: "unsupervised: fit ignores y"},
    ),
}

#: Families that report fit_status_ (0 ok, 1 a solver stopped at max_iter, 2 MKL's
#: line search stalled): the SVM, MKL, WRBF and KOMD families.
_FIT_STATUS = (SVM, SVMm, EpsSVM, SVMFDA, *_MKL, WRBFSVM, KOMD, ARBF)
#: Iterative estimators without objective_ (methods/README.md).
_NO_OBJECTIVE = {ITML: "Davis et al.'s Bregman projections track the dual change"}


def _why_not(rule: str, est) -> str | None:
    reason = RULES[rule][1].get(type(est))
    kernel_itml = isinstance(est, ITML) and est.kernel not in (None, "linear")
    if rule == "linear_metric" and kernel_itml:
        reason = _KERNEL_ITML
    return reason


def _cases(rule: str) -> list:
    """The estimators in the rule's scope; those it does not apply to, skipped."""
    scope = RULES[rule][0]
    cases = []
    for est in CONVENTION_ESTIMATORS:
        if not scope(est):
            continue
        reason = _why_not(rule, est)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        cases.append(pytest.param(est, marks=marks, id=repr(est)))
    return cases


def _cases_by_classes(rule: str) -> list:
    """``_cases(rule)`` on two and on three classes."""
    binary = pytest.mark.skip(reason="binary method: refuses 3 classes")
    cases = []
    for case in _cases(rule):
        (est,) = case.values
        for n in (2, 3):
            marks = list(case.marks)
            if n == 3 and _binary_only(est):
                marks.append(binary)
            cases.append(pytest.param(est, n, marks=marks, id=f"{case.id}-{n}"))
    return cases


def test_every_public_estimator_is_checked():
    public = {cls.__name__ for cls in PUBLIC_ESTIMATORS}
    assert {"SVM", "LMNN", "KPCAMap", "KOMD", "ARBF"} <= public
    checked = {type(e).__name__ for e in ESTIMATORS}
    assert public <= checked, f"not under the estimator checks: {public - checked}"
    conventions = {type(e).__name__ for e in CONVENTION_ESTIMATORS}
    assert public <= conventions, f"not under the conventions: {public - conventions}"
    # ... and each runs, not only skipped, under at least one rule
    ran = {
        type(case.values[0]).__name__
        for rule in RULES
        for case in _cases(rule)
        if not case.marks
    } | {type(e).__name__ for e in _OTHER_MAPS}
    assert public <= ran, f"skipped by every convention rule: {public - ran}"


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
    if isinstance(est, (*_MKL, *_LMNN_MKL)):
        return (
            kernel_stack(X[rows], None, _SMALL_BANK),
            kernel_stack(Xt, X[rows], _SMALL_BANK),
        )
    K = pairwise_kernel(X, kernel="gaussian", sigma=_PRECOMPUTED_SIGMA)
    K_test = pairwise_kernel(Xt, X, kernel="gaussian", sigma=_PRECOMPUTED_SIGMA)
    return K[np.ix_(rows, rows)], K_test[:, rows]


def _scheme(est) -> str:
    return getattr(est, "multiclass", "ovo")


def _fit(est, n_classes: int):
    X, y, Xt = _data(n_classes)
    A, At = _inputs(est, X, Xt)
    return clone(est).fit(A, y), A, At


@pytest.mark.parametrize("est", _cases("two_classes"))
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


@pytest.mark.parametrize("est", _cases("multiclass"))
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


@pytest.mark.parametrize("est", _cases("binary_only"))
def test_binary_only_method_refuses_more_classes(est):
    X, y, Xt = _data(3)
    A, _ = _inputs(est, X, Xt)
    name = type(est).__name__
    with pytest.raises(ValueError, match=rf"{name} is a binary method.*OneVsRest"):
        clone(est).fit(A, y)


@pytest.mark.parametrize("est", _cases("one_class"))
def test_one_class_is_refused(est):
    X, y, Xt = _data(2)
    rows = np.flatnonzero(y == "ant")
    A, _ = _inputs(est, X, Xt, rows)
    with pytest.raises(ValueError, match="class"):
        clone(est).fit(A, y[rows])


def test_ovo_scores_is_scikit_learns_rule_bit_for_bit():
    from sklearn.utils.multiclass import _ovr_decision_function

    rng = np.random.default_rng(0)
    D = rng.normal(size=(200, 6))
    D[:20] = 0.0  # ties: a zero pair decision votes for i
    np.testing.assert_array_equal(ovo_scores(D, 4), _ovr_decision_function(D > 0, D, 4))


# --------------------------------------------------------------- the kernel width
#: Estimators whose `gamma` parameter is no kernel width (methods/README.md).
GAMMA_NOT_A_WIDTH = {
    ITML: "the slack weight of Davis et al. 2007 (inf: hard constraints)",
    KDMLFixedKernel: "kdml eq. 6's weight of the collocation term",
    KDMLParamKernel: "kdml eq. 17's weight of the collocation term",
}
_WIDTH_SIGMA = 0.8


def _named_vs_precomputed(cls, **named):
    def check(X, y, Xt):
        K = pairwise_kernel(X, kernel="gaussian", sigma=_WIDTH_SIGMA)
        K_test = pairwise_kernel(Xt, X, kernel="gaussian", sigma=_WIDTH_SIGMA)
        if cls in _MKL:  # a bank of one Gaussian
            a = cls(kernel=[KernelSpec("gaussian", sigma=_WIDTH_SIGMA)], **named)
            b = cls(kernel="precomputed", **named)
            K, K_test = K[:, :, None], K_test[:, :, None]
        else:
            a = cls(kernel="gaussian", sigma=_WIDTH_SIGMA, **named)
            b = cls(kernel="precomputed", **named)
        out = "transform" if hasattr(cls, "transform") else "decision_function"
        np.testing.assert_allclose(
            getattr(a.fit(X, y), out)(Xt),
            getattr(b.fit(K, y), out)(K_test),
            rtol=1e-7,
            atol=1e-8,
        )

    return check


def _kpca(X, y, Xt):
    K = pairwise_kernel(X, kernel="gaussian", sigma=_WIDTH_SIGMA)
    K_test = pairwise_kernel(Xt, X, kernel="gaussian", sigma=_WIDTH_SIGMA)
    ref = KernelPCA(2, kernel="precomputed", eigen_solver="dense").fit(K)
    ref = np.abs(ref.transform(K_test))  # components are defined up to sign
    ours = KPCAMap(n_components=2, sigma=_WIDTH_SIGMA).fit(X)
    np.testing.assert_allclose(np.abs(ours.transform(Xt)), ref, atol=1e-10)
    klmnn = KLMNN(2, sigma=_WIDTH_SIGMA, lmnn=LMNN(n_neighbors=1, max_iter=5))
    kpca = klmnn.fit(X, y).kpca_  # KLMNN's kernel is its KPCA's
    np.testing.assert_allclose(np.abs(kpca.transform(Xt)), ref, atol=1e-10)


def _kdml(X, y, Xt):
    K_test = pairwise_kernel(Xt, X, kernel="gaussian", sigma=_WIDTH_SIGMA)
    one = KDMLFixedKernel(output_dim=1, sigma=_WIDTH_SIGMA, max_iter=3).fit(X, y)
    np.testing.assert_array_equal(one.spreads_, [_WIDTH_SIGMA])  # m = 1: sigma
    np.testing.assert_allclose(one.output_map(Xt)[:, 0], K_test @ one.dual_coef_[0])
    two = KDMLParamKernel(sigma=_WIDTH_SIGMA, max_iter=3).fit(X, y)
    np.testing.assert_allclose(two.output_map(Xt), K_test @ (two.B_ @ two.dual_coef_).T)


def _wrbf(X, y, Xt):
    # wrbf Eq. (9) at v = 1 is the Gaussian of sigma = 1 / sqrt(2 gamma)
    gamma = 1.0 / (2 * _WIDTH_SIGMA**2)
    rbf = WRBFSVM(n_iter=0, gamma=gamma, tol=1e-10).fit(X, y)
    svm = SVM(kernel="gaussian", sigma=_WIDTH_SIGMA, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(
        rbf.decision_function(Xt), svm.decision_function(Xt), atol=1e-6
    )


def _arbf(X, y, Xt):
    # arbf's beta0 (exp(-beta0 ||x - z||^2)) is KOMD's sigma = 1 / sqrt(2 beta0)
    beta0 = 1.0 / (2 * _WIDTH_SIGMA**2)
    # Both SMOs to tol 1e-12: at the default 1e-8 the two kernels' last-bit
    # differences move the stopping point by ~4e-9 on some CPUs (AVX-512), more
    # than the comparison allows; at 1e-12 they differ by ~2e-13.
    arbf = ARBF(lam=0.1, beta0=beta0, n_iter=0, tol=1e-12).fit(X, y)
    komd = KOMD(lam=0.1, sigma=_WIDTH_SIGMA, tol=1e-12).fit(X, y)
    np.testing.assert_allclose(
        arbf.decision_function(Xt), komd.decision_function(Xt), rtol=1e-10, atol=1e-12
    )


#: How each estimator with a Gaussian kernel is checked to be exp(-d^2 / (2 s^2)).
_WIDTH_CHECKS = {
    SVM: _named_vs_precomputed(SVM),
    SVMm: _named_vs_precomputed(SVMm),
    EpsSVM: _named_vs_precomputed(EpsSVM),
    FDA: _named_vs_precomputed(FDA),
    SimpleMKL: _named_vs_precomputed(SimpleMKL, normalize=None),
    MKLm: _named_vs_precomputed(MKLm, normalize=None),
    EpsMKL: _named_vs_precomputed(EpsMKL, normalize=None),
    KOMD: _named_vs_precomputed(KOMD),
    ITML: _named_vs_precomputed(ITML, max_iter=20),
    KPCAMap: _kpca,
    KLMNN: _kpca,
    KDMLFixedKernel: _kdml,
    KDMLParamKernel: _kdml,
    WRBFSVM: _wrbf,
    ARBF: _arbf,
}
_NO_GAUSSIAN = {
    SVMFDA: "the linear kernel only (supported_kernels)",
    LMNN: "no kernel of its own: features or a precomputed Gram matrix",
    GBLMNN: "no kernel: regression trees on the features",
    MetricKNN: "no kernel: Euclidean k-NN in its metric learner's space",
    **dict.fromkeys(_LMNN_MKL, "precomputed kernel stacks only"),
}


def _width_cases() -> list:
    return [
        pytest.param(
            cls,
            id=cls.__name__,
            marks=[pytest.mark.skip(reason=_NO_GAUSSIAN[cls])]
            if cls in _NO_GAUSSIAN
            else [],
        )
        for cls in PUBLIC_ESTIMATORS
    ]


@pytest.mark.parametrize("cls", PUBLIC_ESTIMATORS, ids=lambda c: c.__name__)
def test_no_other_name_for_a_kernel_width(cls):
    """`gamma` is a width only in WRBFSVM (the scale of its weighted distance); the
    ITML and KDML `gamma`s are their papers' weights, not widths; no estimator
    calls a width `width`, `bandwidth` or `length_scale`."""
    params = cls().get_params()
    assert not {"width", "bandwidth", "length_scale"} & set(params)
    if "gamma" in params:
        assert cls is WRBFSVM or cls in GAMMA_NOT_A_WIDTH, (
            f"{cls.__name__}.gamma: name the Gaussian width sigma (methods/README.md)"
        )


def test_shared_kernel_parameters_have_one_default():
    """`degree` and `sigma` mean the same kernel everywhere, so they default to
    the same value: KOMD(kernel="poly") was the cubic kernel where SVM, FDA and
    the rest of the SVM family took the quadratic one."""
    for param, value in (("degree", 2), ("sigma", 1.0)):
        defaults = {
            cls.__name__: cls().get_params()[param]
            for cls in PUBLIC_ESTIMATORS
            if param in cls().get_params()
        }
        assert len(defaults) >= 3
        assert set(defaults.values()) == {value}, (param, defaults)


@pytest.mark.parametrize("cls", _width_cases())
def test_isotropic_gaussian_width_is_sigma(cls):
    """k(x, z) = exp(-||x - z||^2 / (2 sigma^2)) wherever an estimator has a
    Gaussian kernel: the named kernel equals the precomputed Gaussian of
    methods.kernels (or, for WRBF's gamma and ARBF's beta0, the estimator with
    sigma = 1 / sqrt(2 gamma), 1 / sqrt(2 beta0))."""
    assert cls in _WIDTH_CHECKS, f"{cls.__name__}: add its width check"
    if not (cls in (WRBFSVM, ARBF) or cls in GAMMA_NOT_A_WIDTH):
        assert "gamma" not in cls().get_params()
    X, y, Xt = _data(2)
    np.testing.assert_allclose(
        np.exp(-((Xt[:, None] - X[None]) ** 2).sum(-1) / (2 * _WIDTH_SIGMA**2)),
        pairwise_kernel(Xt, X, kernel="gaussian", sigma=_WIDTH_SIGMA),
    )
    _WIDTH_CHECKS[cls](X, y, Xt)


# ---------------------------------------------------------- the fitted attributes
@pytest.mark.parametrize("est, n_classes", _cases_by_classes("fitted"))
def test_fitted_attributes_and_dual_coef_shape(est, n_classes):
    X, y, Xt = _data(n_classes)
    A, _ = _inputs(est, X, Xt)
    model = clone(est).fit(A, y)
    n_problems = 1 if n_classes == 2 else 3  # 3 pairs or 3 classes-vs-rest
    assert model.classes_.shape == (n_classes,)
    assert model.n_features_in_ == A.shape[1]
    assert isinstance(model.intercept_, np.ndarray)
    assert model.intercept_.shape == (n_problems,)
    if hasattr(model, "dual_coef_"):
        assert model.dual_coef_.shape == (n_problems, X.shape[0])
        _, y_idx = np.unique(y, return_inverse=True)
        problems = binary_problems(y_idx, n_classes, _scheme(est))
        for coef, (idx, labels) in zip(model.dual_coef_, problems, strict=True):
            # row p lives on problem p's samples only ...
            assert not np.any(np.delete(coef, idx))
            if isinstance(model, (SVM, SimpleMKL, WRBFSVM, KOMD, ARBF)):
                # ... and, for the C-SVM duals (y_i alpha_i, alpha >= 0) and KOMD's
                # (y_i gamma_i, gamma >= 0), carries the sign of the problem's
                # labels: +1 is classes_[j] of pair (i, j)
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


@pytest.mark.parametrize("est, n_classes", _cases_by_classes("solver"))
def test_solver_attributes(est, n_classes):
    model, _, _ = _fit(est, n_classes)
    name = type(model).__name__
    assert np.all(np.asarray(model.n_iter_) >= 0)
    assert isinstance(model.converged_, bool)
    diag = solver_diagnostics(model)
    assert {"n_iter", "converged"} <= set(diag)
    if type(model) in _NO_OBJECTIVE:
        assert not hasattr(model, "objective_"), (
            f"{name} now has objective_: update methods/README.md and _NO_OBJECTIVE"
        )
    else:
        assert np.all(np.isfinite(model.objective_))
        assert "objective" in diag
    if isinstance(model, _FIT_STATUS):
        assert model.fit_status_ in (0, 1, 2)
        assert (model.fit_status_ == 0) == model.converged_
        assert diag["fit_status"] == model.fit_status_
    else:  # metric learners and kNN classifiers: converged_ only
        assert not hasattr(model, "fit_status_"), (
            f"{name} now has fit_status_: update methods/README.md and _FIT_STATUS"
        )
    if hasattr(model, "kernel_weights_"):
        w = np.asarray(model.kernel_weights_)
        if isinstance(model, _MKL):  # one combination per binary problem
            n_problems = 1 if n_classes == 2 else 3
            assert w.shape == (n_problems, len(_SMALL_BANK))
        else:  # LMNN-MKL: one metric, one combination, for all classes
            assert isinstance(model, _LMNN_MKL) and w.shape == (len(_SMALL_BANK),)
        assert np.all(w >= 0) and np.allclose(w.sum(axis=-1), 1.0)
        assert len(diag["kernel_weights"]) == len(_SMALL_BANK)


# ------------------------------------------------------------ the metric learners
@pytest.mark.parametrize("est", _cases("linear_metric"))
def test_linear_metric_learner_is_x_times_components(est):
    model, A, At = _fit(est, 3)
    L = model.components_
    assert L.ndim == 2 and L.shape[1] == model.n_features_in_ == A.shape[1]
    np.testing.assert_array_equal(model.classes_, ["ant", "bee", "cat"])
    np.testing.assert_allclose(model.transform(At), At @ L.T, rtol=1e-12, atol=1e-12)
    M = model.get_mahalanobis_matrix()
    np.testing.assert_allclose(M, L.T @ L, rtol=1e-10, atol=1e-10 * np.abs(M).max())


def _map_of_kernel_itml(model, A, At):
    K_test = pairwise_kernel(At, A, kernel="gaussian", sigma=model.sigma)
    L = model.components_
    np.testing.assert_allclose(
        model.transform(At), K_test @ model.kernel_basis_ @ L.T, atol=1e-12
    )
    M = model.get_mahalanobis_matrix()
    np.testing.assert_allclose(M, L.T @ L, rtol=1e-10, atol=1e-10 * np.abs(M).max())


def _map_of_klmnn(model, A, At):
    expected = model.lmnn_.transform(model.kpca_.transform(At))
    np.testing.assert_array_equal(model.transform(At), expected)


def _map_of_kdml_fixed(model, A, At):
    L = model.L_
    np.testing.assert_allclose(model.transform(At), model.output_map(At) @ L.T)
    np.testing.assert_allclose(model.get_mahalanobis_matrix(), L.T @ L)


def _map_of_kdml_param(model, A, At):
    np.testing.assert_array_equal(model.transform(At), model.output_map(At))
    np.testing.assert_allclose(model.get_mahalanobis_matrix(), model.B_ @ model.B_)


def _map_of_gb_lmnn(model, A, At):
    assert model.components_.shape[1] == A.shape[1]
    trees = sum(
        step * tree.predict(At).reshape(len(At), -1)
        for step, tree in zip(model.steps_, model.estimators_, strict=True)
    )
    np.testing.assert_allclose(
        model.transform(At) - At @ model.components_.T, trees, atol=1e-12
    )
    assert not hasattr(model, "get_mahalanobis_matrix")


def _map_of_kpca(model, A, At):
    np.testing.assert_array_equal(model.transform(At), model.kpca_.transform(At))


_NONLINEAR_MAPS = {
    ITML: _map_of_kernel_itml,
    KLMNN: _map_of_klmnn,
    KDMLFixedKernel: _map_of_kdml_fixed,
    KDMLParamKernel: _map_of_kdml_param,
    GBLMNN: _map_of_gb_lmnn,
    KPCAMap: _map_of_kpca,
}


_OTHER_MAPS = [
    e
    for e in CONVENTION_ESTIMATORS
    if _is_transformer(e) and _why_not("linear_metric", e)
]


@pytest.mark.parametrize("est", _OTHER_MAPS, ids=repr)
def test_other_metric_maps_are_as_documented(est):
    """The exemptions from the linear-map rule hold as methods/README.md states."""
    model, A, At = _fit(est, 3)
    if not isinstance(model, ITML):
        assert not hasattr(model, "components_") or isinstance(model, GBLMNN)
    _NONLINEAR_MAPS[type(model)](model, A, At)


@pytest.mark.parametrize(
    "est", [e for e in CONVENTION_ESTIMATORS if _is_transformer(e)], ids=repr
)
def test_transformer_names_its_output_columns(est):
    """Every metric learner names its output (`<class name><i>`) and honours
    `set_output`, so `Pipeline(...).set_output(transform="pandas")` and
    `get_feature_names_out` work whichever learner is in it (only LMNN did)."""
    import pandas as pd

    X, y, Xt = _data(3)
    A, At = _inputs(est, X, Xt)
    if not isinstance(A, np.ndarray) or A.ndim != 2:
        pytest.skip("a kernel stack has no columns to name")
    prefix = type(est).__name__.lower()
    model = clone(est).set_output(transform="pandas").fit(A, y)
    names = model.get_feature_names_out()
    out = model.transform(At)
    assert isinstance(out, pd.DataFrame)
    expected = [f"{prefix}{i}" for i in range(len(names))]
    assert list(out.columns) == list(names) == expected
    np.testing.assert_allclose(out.to_numpy(), clone(est).fit(A, y).transform(At))


@pytest.mark.parametrize(
    "est",
    [e for e in CONVENTION_ESTIMATORS if getattr(e, "kernel", None) == "precomputed"]
    + [MetricKNN(LMNN(n_neighbors=2, kernel="precomputed", max_iter=50))],
    ids=repr,
)
def test_a_test_kernel_of_the_wrong_width_is_named_as_a_kernel(est):
    """A test block with a column too few (or too many) is named as the kernel
    between test and training points, with the shape expected, not only as
    scikit-learn's "X has 35 features, but ... is expecting 36 features" (KOMD,
    LMNN, ITML, MetricKNN and the LMNN-MKL estimators said only that)."""
    X, y, Xt = _data(3)
    if isinstance(est, MetricKNN):
        A = pairwise_kernel(X, kernel="gaussian", sigma=_PRECOMPUTED_SIGMA)
        At = pairwise_kernel(Xt, X, kernel="gaussian", sigma=_PRECOMPUTED_SIGMA)
    else:
        A, At = _inputs(est, X, Xt)
    if _binary_only(est):
        A, At, y = A[:24, :24], At[:, :24], y[:24]
    model = clone(est).fit(A, y)
    n = A.shape[0]
    out = "transform" if hasattr(model, "transform") else "predict"
    for bad in (At[:, :-1], np.concatenate([At, At[:, :1]], axis=1)):
        with pytest.raises(
            ValueError,
            match=rf"expecting {n} features as input[:.] [Ww]ith kernel='precomputed'"
            rf".*\(n_test, {n}",
        ):
            getattr(model, out)(bad)


@pytest.mark.parametrize(
    "est, n_classes",
    [
        pytest.param(e, n, id=f"{e!r}-{n}")
        for e in CONVENTION_ESTIMATORS
        for n in (2, 3)
        if not (n == 3 and _binary_only(e))
    ],
)
def test_every_fitted_attribute_is_documented(est, n_classes):
    """Each public fitted attribute (a name ending in `_`) is named in the class
    docstring, so its Attributes section matches what fit sets (KDMLFixedKernel,
    KLMNN, KPCAMap and the LMNN-MKL estimators had none or half of one)."""
    import inspect
    import re

    model, _, _ = _fit(est, n_classes)
    doc = inspect.getdoc(type(model)) or ""
    fitted = [a for a in vars(model) if a.endswith("_") and not a.startswith("_")]
    missing = [a for a in fitted if not re.search(rf"\b{a}(?!\w)", doc)]
    assert not missing, f"{type(model).__name__}: undocumented {missing}"


@pytest.mark.parametrize(
    "est", [pytest.param(e, id=repr(e)) for e in CONVENTION_ESTIMATORS]
)
def test_per_iteration_values_have_one_name(est):
    """A sequence of per-iteration values is `<quantity>_path_` in every estimator
    (methods/README.md); the names it had (`objective_history_`, `loss_`, ...) read
    the new attribute with a FutureWarning, and are absent before a fit."""
    import re
    import warnings

    from methods._renamed import RenamedAttribute

    model, _, _ = _fit(est, 2)
    fitted = [a for a in vars(model) if a.endswith("_") and not a.startswith("_")]
    assert not [a for a in fitted if re.search(r"history_$", a) or a == "loss_"]
    for old in dir(type(model)):
        alias = getattr(type(model), old)
        if not isinstance(alias, RenamedAttribute):
            continue
        assert alias.new.endswith("_path_") and alias.new in fitted
        with pytest.warns(FutureWarning, match=rf"{old} is renamed {alias.new}"):
            assert getattr(model, old) is getattr(model, alias.new)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not hasattr(clone(est), old)


def test_every_renamed_attribute_is_listed():
    """The old names that users' code may read: each one still answers."""
    from methods._renamed import RenamedAttribute

    found = {
        (type(e).__name__, name)
        for e in CONVENTION_ESTIMATORS
        for name in dir(type(e))
        if isinstance(getattr(type(e), name), RenamedAttribute)
    }
    assert found >= {
        ("SimpleMKL", "objective_history_"),
        ("SimpleMKL", "kernel_weights_history_"),
        ("WRBFSVM", "dual_objective_history_"),
        ("KDMLFixedKernel", "objective_history_"),
        ("KDMLParamKernel", "objective_history_"),
        ("GBLMNN", "loss_"),
        ("LMNNMKLP", "weight_path_"),
    }


@pytest.mark.parametrize(
    "est, kernel",
    [
        (SVM(C=10.0, kernel="gaussian", sigma=1.5), "precomputed"),
        (SVMm(kernel="gaussian", sigma=1.5), "precomputed"),
        (FDA(kernel="gaussian", sigma=1.5), "precomputed"),
        (KOMD(lam=0.5, kernel="gaussian", sigma=1.5), "precomputed"),
        (SimpleMKL(C=10.0, kernel=_SMALL_BANK, normalize=None), "precomputed"),
        (ITML(kernel="gaussian", sigma=1.5, max_iter=20), "precomputed"),
        (ITML(kernel="gaussian", sigma=1.5, max_iter=20), None),
        (LMNN(n_neighbors=2, kernel="precomputed", max_iter=20), None),
    ],
    ids=repr,
)
def test_a_refit_under_another_kernel_keeps_nothing_of_the_first(est, kernel):
    """A model refitted after `set_params(kernel=...)` has the fitted attributes
    of a fresh fit of that kernel: SVM, KOMD, MKL and ITML kept the first fit's
    training points `X_fit_` (and ITML its `kernel_basis_`) after a refit on a
    Gram matrix or on features, where their docstrings say it is absent."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y, Xt = _data(2)
    first = clone(est)
    refit = clone(est).set_params(kernel=kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first.fit(_inputs(first, X, Xt)[0], y)
        A, At = _inputs(refit, X, Xt)
        first.set_params(kernel=kernel).fit(A, y)
        fresh = refit.fit(A, y)
    names = {a for a in vars(fresh) if a.endswith("_")}
    assert {a for a in vars(first) if a.endswith("_")} == names
    out = "transform" if hasattr(fresh, "transform") else "decision_function"
    np.testing.assert_array_equal(getattr(first, out)(At), getattr(fresh, out)(At))


_PRECOMPUTED = [
    SVM(kernel="precomputed"),
    SVMm(kernel="precomputed"),
    EpsSVM(kernel="precomputed"),
    FDA(kernel="precomputed"),
    SimpleMKL(kernel="precomputed"),
    MKLm(kernel="precomputed"),
    EpsMKL(kernel="precomputed"),
    KOMD(kernel="precomputed"),
    LMNN(kernel="precomputed"),
    ITML(kernel="precomputed", max_iter=20),
    LMNNKernelSum(),
    LMNNSingleKernel(),
    NRLMNNMKL(),
    LMNNMKLP(),
]


@pytest.mark.parametrize(
    "est",
    _PRECOMPUTED
    + [MetricKNN(e) for e in _PRECOMPUTED if _is_transformer(e)]
    # the arbf kNN configs wrap their learner (conf/method/knn_lmnn.yaml)
    + [MetricKNN(CachedMetricLearner(e)) for e in _PRECOMPUTED if _is_transformer(e)],
    ids=repr,
)
def test_precomputed_input_is_tagged_pairwise(est):
    """Every estimator taking kernel="precomputed" (methods/README.md) is tagged
    pairwise, so cross-validation slices its Gram matrix by rows and columns;
    ITML was not, and MetricKNN(ITML(kernel="precomputed")) failed every split
    of cross_val_score with "needs a square training Gram matrix"."""
    assert est.__sklearn_tags__().input_tags.pairwise
    learner = getattr(est, "metric_learner", None)
    if isinstance(learner, CachedMetricLearner):
        learner = learner.estimator
    if isinstance(est, MetricKNN) and isinstance(learner, ITML):
        from sklearn.model_selection import cross_val_score

        X, y, _ = _data(3)
        K = pairwise_kernel(X, kernel="gaussian", sigma=_PRECOMPUTED_SIGMA)
        scores = cross_val_score(est, K, y, cv=3, error_score="raise")
        assert np.all(scores > 0.5)


@pytest.mark.parametrize(
    "cls", [SVM, SVMm, EpsSVM, FDA, KOMD], ids=lambda c: c.__name__
)
def test_normalize_with_a_precomputed_kernel_is_refused(cls):
    """A Gram matrix cannot be cosine-normalized without the test points'
    self-similarities: FDA and MKL refused normalize with kernel="precomputed",
    the SVM family and KOMD ignored it and fitted the matrix as given."""
    X, y, _ = _data(2)
    K = pairwise_kernel(X, kernel="gaussian", sigma=_PRECOMPUTED_SIGMA)
    with pytest.raises(
        ValueError, match="normalize='cosine' needs the kernel function"
    ):
        cls(kernel="precomputed", normalize="cosine").fit(K, y)
    cls(kernel="precomputed").fit(K, y)


#: Estimators on raw input whose declared string options are all tried below.
_OPTION_BASES = [
    SVM(kernel="gaussian"),
    SVMm(kernel="gaussian"),
    EpsSVM(kernel="gaussian"),
    FDA(kernel="gaussian"),
    SimpleMKL(kernel=_SMALL_BANK),
    MKLm(kernel=_SMALL_BANK),
    WRBFSVM(n_iter=2),
    KOMD(),
    ARBF(n_iter=2),
    LMNN(n_neighbors=2, max_iter=20),
    MetricKNN(LMNN(n_neighbors=2, max_iter=20), n_neighbors=3),
    GBLMNN(n_neighbors=2, n_estimators=3, random_state=0),
    LMNNKernelSum(n_neighbors=2, lmnn_params={"max_iter": 20}),
    NRLMNNMKL(n_neighbors=2, lmnn_params={"max_iter": 20}),
    LMNNMKLP(n_neighbors=2, lmnn_params={"max_iter": 20}),
]


def _option_cases() -> list:
    from sklearn.utils._param_validation import StrOptions

    cases = []
    for est in _OPTION_BASES:
        for param, constraints in type(est)._parameter_constraints.items():
            for c in constraints:
                if not isinstance(c, StrOptions):
                    continue
                for value in sorted(c.options):
                    if value == "precomputed" or est.get_params()[param] == value:
                        continue
                    case_id = f"{type(est).__name__}.{param}={value}"
                    cases.append(pytest.param(est, param, value, id=case_id))
    return cases


@pytest.mark.parametrize("est, param, value", _option_cases())
def test_every_declared_option_fits_and_predicts(est, param, value):
    """Each string option an estimator declares in `_parameter_constraints` works
    through fit and predict: KOMD declared normalize="mean_diag", which fitted
    and then failed every prediction ("needs train_diag_mean")."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    n_classes = 2 if _binary_only(est) else 3
    X, y, Xt = _data(n_classes)
    if isinstance(est, _LMNN_MKL):
        A, At = kernel_stack(X, None, _SMALL_BANK), kernel_stack(Xt, X, _SMALL_BANK)
    else:
        A, At = X, Xt
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = clone(est).set_params(**{param: value}).fit(A, y)
    out = model.transform(At) if _is_transformer(model) else model.predict(At)
    assert len(out) == len(Xt)
    if not _is_transformer(model):
        assert set(out) <= set(model.classes_)
    else:
        assert np.all(np.isfinite(out))


#: Estimators without `_parameter_constraints` (methods/README.md): fit raises a
#: ValueError naming the bad parameter.
_CHECKED_IN_FIT = (ITML, KDMLFixedKernel, KDMLParamKernel, KLMNN, KPCAMap)


@pytest.mark.parametrize("cls", PUBLIC_ESTIMATORS, ids=lambda c: c.__name__)
def test_parameters_are_declared(cls):
    """`_parameter_constraints` covers every parameter (runners.config_schema checks
    a config against it), except for the estimators that check theirs in fit."""
    constraints = getattr(cls, "_parameter_constraints", None)
    if cls in _CHECKED_IN_FIT:
        assert constraints is None, f"{cls.__name__}: drop it from _CHECKED_IN_FIT"
        return
    assert set(cls().get_params()) == set(constraints)
