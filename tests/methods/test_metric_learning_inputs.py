"""Invalid inputs of the metric learners fail in fit, naming the parameter.

LMNN (and MetricKNN around it), ITML, KDMLFixedKernel / KDMLParamKernel, KPCAMap /
KLMNN and LMNN-MKL_P refuse out-of-range parameters with a ValueError (LMNN: the
``InvalidParameterError`` of its ``_parameter_constraints``) instead of an
IndexError, a ZeroDivisionError, a numpy message or a silent fit; ITML warns when it
stops at ``max_iter``; LMNN and ITML check a precomputed training kernel as the SVM
family does (``check_psd``); the LMNN-MKL estimators do not make their inner LMNN
check the kernels they checked (or were told not to) themselves.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from methods.exceptions import NonPSDKernelError
from methods.kernels import KernelSpec, kernel_stack, pairwise_kernel
from methods.metric_learning import (
    ITML,
    KLMNN,
    LMNN,
    LMNNMKLP,
    KDMLFixedKernel,
    KDMLParamKernel,
    KPCAMap,
    LMNNKernelSum,
    LMNNSingleKernel,
    MetricKNN,
)
from methods.metric_learning._kernel_weights import PStepProblem, weight_step
from methods.metric_learning._lmnn_mkl import fitted_learner
from tests.methods.test_psd_checks import _asymmetric, _minus_top_direction

_BANK = [KernelSpec("linear"), KernelSpec("gaussian", sigma=2.0)]


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(1)
    X = np.r_[rng.randn(10, 3), rng.randn(10, 3) + 1.5, rng.randn(10, 3) - 1.5]
    y = np.repeat([0, 1, 2], 10)
    K = pairwise_kernel(X, kernel="gaussian", sigma=2.0)
    return X, y, K


_not_psd = _minus_top_direction


def _input(kind: str, X: np.ndarray, K: np.ndarray) -> np.ndarray:
    if kind == "X":
        return X
    if kind == "K":
        return K
    return kernel_stack(X, None, _BANK)  # "S": a bank of two kernels


_LP = {"max_iter": 5}


def _case(case_id: str, estimator, kind: str, match: str):
    """An invalid estimator (or a factory of one), its input kind (X, K or a stack
    S) and the message. A factory builds it in the test: a parameter that is new
    then fails that test alone, not the collection."""
    return pytest.param(estimator, kind, match, id=case_id)


_LMNN_MAX_ITER = r"'max_iter' parameter of LMNN must be an int in the range \[1, inf\)"

BAD_PARAMS = [
    # LMNN: scipy's L-BFGS-B took a step at max_iter=0 (n_iter_ = 1)
    _case("lmnn-max_iter-0", LMNN(n_neighbors=2, max_iter=0), "X", _LMNN_MAX_ITER),
    _case(
        "lmnn-precomputed-max_iter-0",
        LMNN(n_neighbors=2, kernel="precomputed", max_iter=0),
        "K",
        _LMNN_MAX_ITER,
    ),
    _case(
        "metricknn-lmnn-max_iter-0",
        MetricKNN(LMNN(n_neighbors=2, max_iter=0)),
        "X",
        _LMNN_MAX_ITER,
    ),
    _case(
        "lmnn-check_psd-not-bool",
        lambda: LMNN(n_neighbors=2, kernel="precomputed", check_psd="yes"),
        "K",
        r"'check_psd' parameter of LMNN",
    ),
    # ITML: only kernel and gamma were checked
    _case("itml-rcond-negative", ITML(rcond=-1.0), "X", r"rcond must be .* \[0, 1\)"),
    _case("itml-rcond-one", ITML(kernel="gaussian", rcond=1.0), "X", r"ITML: rcond"),
    _case(
        "itml-sigma-zero",
        ITML(kernel="gaussian", sigma=0.0),
        "X",
        r"ITML: sigma must be a real number > 0",
    ),
    _case(
        "itml-sigma-negative", ITML(kernel="gaussian", sigma=-1.0), "X", "ITML: sigma"
    ),
    _case(
        "itml-bounds-reversed",
        ITML(bounds_percentiles=(95.0, 5.0)),
        "X",
        r"ITML: bounds_percentiles must be two numbers .*0 <= lower < upper <= 100",
    ),
    _case(
        "itml-bounds-above-100",
        ITML(bounds_percentiles=(5.0, 150.0)),
        "X",
        r"ITML: bounds_percentiles",
    ),
    _case(
        "itml-bounds-one", ITML(bounds_percentiles=(5.0,)), "X", "bounds_percentiles"
    ),
    _case(
        "itml-n_constraints-zero",
        ITML(n_constraints=0),
        "X",
        r"ITML: n_constraints must be an integer >= 1, or None",
    ),
    _case("itml-n_constraints-neg", ITML(n_constraints=-3), "X", "n_constraints"),
    _case("itml-tol-negative", ITML(tol=-1.0), "X", r"ITML: tol must be .* >= 0"),
    _case("itml-max_iter-zero", ITML(max_iter=0), "X", r"ITML: max_iter must be .*1"),
    _case(
        "itml-check_psd-not-bool",
        lambda: ITML(kernel="precomputed", check_psd="no"),
        "K",
        r"ITML: check_psd must be True or False",
    ),
    # KDML: IndexError / UnboundLocalError / numpy's message / a silent fit before
    _case(
        "kdml1-max_iter-zero",
        KDMLFixedKernel(max_iter=0),
        "X",
        r"KDMLFixedKernel: max_iter must be an integer >= 1",
    ),
    _case(
        "kdml1-tol-negative",
        KDMLFixedKernel(max_iter=2, tol=-1.0),
        "X",
        r"KDMLFixedKernel: tol must be a real number >= 0",
    ),
    _case(
        "kdml1-spread_ratio-negative",
        KDMLFixedKernel(output_dim=2, spread_ratio=-1.0),
        "X",
        r"KDMLFixedKernel: spread_ratio must be a finite real number > 0",
    ),
    _case(
        "kdml1-spread_ratio-negative-one-output",  # was ignored at output_dim=1
        KDMLFixedKernel(output_dim=1, spread_ratio=-1.0, max_iter=2),
        "X",
        r"KDMLFixedKernel: spread_ratio",
    ),
    _case(
        "kdml1-spread_ratio-0", KDMLFixedKernel(spread_ratio=0.0), "X", "spread_ratio"
    ),
    _case(
        "kdml1-spread_ratio-inf",
        KDMLFixedKernel(spread_ratio=np.inf),
        "X",
        "spread_ratio",
    ),
    _case(
        "kdml2-max_iter-zero",
        KDMLParamKernel(max_iter=0),
        "X",
        r"KDMLParamKernel: max_iter must be an integer >= 1",
    ),
    _case(
        "kdml2-tol-negative",
        KDMLParamKernel(max_iter=2, tol=-1.0),
        "X",
        r"KDMLParamKernel: tol must be a real number >= 0",
    ),
    _case(
        "kdml2-b_max_iter-zero",  # left B untouched with converged_ = True
        KDMLParamKernel(max_iter=2, b_max_iter=0),
        "X",
        r"KDMLParamKernel: b_max_iter must be an integer >= 1",
    ),
    # KPCAMap / KLMNN: ZeroDivisionError, sigma=-1 as sigma=1, a reversed message
    _case("kpca-sigma-0", KPCAMap(sigma=0.0), "X", r"KPCAMap: sigma must be .* > 0"),
    _case("kpca-sigma-neg", KPCAMap(sigma=-1.0), "X", r"KPCAMap: sigma must be .* > 0"),
    _case(
        "kpca-linear-sigma-0",
        KPCAMap(kernel="linear", sigma=0.0),
        "X",
        "KPCAMap: sigma",
    ),
    _case(
        "kpca-n_components-0",
        KPCAMap(n_components=0),
        "X",
        r"KPCAMap: n_components must be an integer >= 1, or None",
    ),
    _case("klmnn-sigma-0", KLMNN(sigma=0.0), "X", r"KLMNN: sigma must be .* > 0"),
    _case("klmnn-sigma-neg", KLMNN(sigma=-1.0), "X", r"KLMNN: sigma must be .* > 0"),
    _case(
        "klmnn-n_components-0",
        KLMNN(n_components=0),
        "X",
        r"KLMNN: n_components must be a number >= 1, or None",
    ),
    _case(
        "klmnn-n_components-half", KLMNN(n_components=0.5), "X", "KLMNN: n_components"
    ),
    _case("klmnn-kernel", KLMNN(kernel="poly"), "X", r"KLMNN: kernel='poly'; choose"),
    _case("metricknn-klmnn-sigma-0", MetricKNN(KLMNN(sigma=0.0)), "X", "KLMNN: sigma"),
    # LMNN-MKL_P: AttributeError "'NoneType' object has no attribute 'P'" before
    _case(
        "mklp-w_grid-empty",
        LMNNMKLP(n_neighbors=2, w_grid=[]),
        "S",
        r"LMNN-MKL_P: w_grid must be a non-empty list of finite weights w > 0",
    ),
    _case(
        "mklp-w_grid-neg", LMNNMKLP(n_neighbors=2, w_grid=[1.0, -1.0]), "S", "w_grid"
    ),
    _case("mklp-w_grid-0", LMNNMKLP(n_neighbors=2, w_grid=[0.0]), "S", "w_grid"),
    _case("mklp-w_grid-inf", LMNNMKLP(n_neighbors=2, w_grid=[np.inf]), "S", "w_grid"),
    _case(
        "mklp-w_grid-2d", LMNNMKLP(n_neighbors=2, w_grid=[[1.0, 10.0]]), "S", "w_grid"
    ),
]


@pytest.mark.parametrize(("estimator", "kind", "match"), BAD_PARAMS)
def test_bad_parameter_raises_naming_it(data, estimator, kind, match):
    X, y, K = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(ValueError, match=match):  # InvalidParameterError too
            est = estimator() if callable(estimator) else clone(estimator)
            est.fit(_input(kind, X, K), y)


def test_weight_step_refuses_an_empty_grid(data):
    X, y, _ = data
    S = kernel_stack(X, None, _BANK)
    tn = np.zeros((len(y), 1), dtype=np.int64)
    for c in range(3):
        idx = np.flatnonzero(y == c)
        tn[idx, 0] = np.roll(idx, 1)
    prob = PStepProblem.from_metric(S, np.eye(len(y)), y, tn)
    with pytest.raises(ValueError, match=r"weight_step: w_grid must hold at least"):
        weight_step(prob, np.zeros((2, 2)), w_grid=())


@pytest.mark.parametrize("kernel", [None, "precomputed"])
def test_lmnn_class_of_one_sample_asks_to_drop_or_merge_it(data, kernel):
    X, y, K = data
    y = y.copy()
    y[0] = 5  # class 5: one sample
    with pytest.raises(ValueError) as info:
        LMNN(n_neighbors=2, kernel=kernel).fit(K if kernel else X, y)
    msg = str(info.value)
    assert "class 5 has a single sample" in msg
    assert "at least n_neighbors + 1 = 3 samples: drop it or merge it" in msg
    assert "Lower n_neighbors" not in msg  # no n_neighbors >= 1 would do


def test_itml_warns_at_max_iter_and_not_when_converged(data):
    X, y, _ = data
    with pytest.warns(ConvergenceWarning, match=r"ITML stopped at max_iter=2 passes"):
        est = ITML(max_iter=2).fit(X, y)
    assert not est.converged_ and est.n_iter_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = ITML(max_iter=1000).fit(X, y)
    assert est.converged_


_BAD_KERNELS = {"not_psd": _not_psd, "asymmetric": _asymmetric}


@pytest.mark.parametrize("bad", sorted(_BAD_KERNELS))
@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: LMNN(n_neighbors=2, kernel="precomputed", max_iter=5, **kw),
        lambda **kw: MetricKNN(
            LMNN(n_neighbors=2, kernel="precomputed", max_iter=5, **kw)
        ),
        lambda **kw: ITML(kernel="precomputed", max_iter=5, **kw),
    ],
    ids=["LMNN", "MetricKNN(LMNN)", "ITML"],
)
def test_precomputed_kernel_is_checked_unless_check_psd_false(data, make, bad):
    X, y, K = data
    K_bad = _BAD_KERNELS[bad](K)
    match = "not positive semi-definite" if bad == "not_psd" else "not symmetric"
    with pytest.raises(NonPSDKernelError, match=match):
        make().fit(K_bad, y)
    with pytest.raises(NonPSDKernelError, match=match):
        make(check_psd=True).fit(K_bad, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        make(check_psd=False).fit(K_bad, y)
        make().fit(K, y)  # a PSD kernel passes the check


@pytest.mark.parametrize("kernel_neighbors", ["kernel_map", "feature_space"])
def test_lmnn_check_psd_false_fits_as_before(data, kernel_neighbors):
    """check_psd=False: LMNN on the rows of K, as the feature path (no check)."""
    X, y, K = data
    K_bad = _not_psd(K)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pre = LMNN(
            n_neighbors=2,
            kernel="precomputed",
            kernel_neighbors=kernel_neighbors,
            max_iter=10,
            check_psd=False,
        ).fit(K_bad, y)
        feat = LMNN(n_neighbors=2, max_iter=10).fit(
            K_bad, y, target_neighbors=pre.target_neighbors_
        )
        own = LMNN(n_neighbors=2, max_iter=1).fit(K_bad, y).target_neighbors_
    np.testing.assert_array_equal(pre.components_, feat.components_)
    if kernel_neighbors == "kernel_map":  # the feature path's own targets
        np.testing.assert_array_equal(pre.target_neighbors_, own)


@pytest.mark.parametrize("bad", sorted(_BAD_KERNELS))
def test_itml_check_psd_false_fits_as_before(data, bad):
    """check_psd=False: ITML on the symmetric part, negative directions dropped."""
    X, y, K = data
    K_bad = _BAD_KERNELS[bad](K)
    est = ITML(kernel="precomputed", max_iter=50, check_psd=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(K_bad, y)
        w, V = np.linalg.eigh(0.5 * (K_bad + K_bad.T))
        keep = w > est.rcond * max(w[-1], 1e-300)
        assert not keep.all()  # some direction is dropped (negative, or round-off)
        Z = V[:, keep] * np.sqrt(w[keep])
        ref = ITML(max_iter=50).fit(Z, y)
    np.testing.assert_array_equal(est.metric_, ref.metric_)
    np.testing.assert_array_equal(est.bounds_, ref.bounds_)


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: LMNNKernelSum(n_neighbors=2, lmnn_params=_LP, **kw),
        lambda **kw: LMNNSingleKernel(
            kernel_index=1, n_neighbors=2, lmnn_params=_LP, **kw
        ),
        lambda **kw: LMNNMKLP(n_neighbors=2, max_iter=2, lmnn_params=_LP, **kw),
    ],
    ids=["LMNN_H", "LMNN-MKL_CV", "LMNN-MKL_P"],
)
def test_lmnn_mkl_inner_lmnn_does_not_recheck_the_kernels(data, make):
    """The stack's members were checked once (or the caller opted out): LMNN's
    input, a member or a non-negative combination of them, is not checked again."""
    X, y, _ = data
    S = kernel_stack(X, None, _BANK)
    # a member that is not PSD (mean diagonal still > 0 for normalize="mean_diag")
    S[:, :, 1] -= 0.5 * np.eye(len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(NonPSDKernelError, match="training kernel 1 of the stack"):
            make().fit(S, y)
        est = make(check_psd=False).fit(S, y)
    inner = getattr(est, "metric_learner_", None) or fitted_learner(est.knn_)
    assert inner.kernel == "precomputed"
    assert inner.check_psd is False
