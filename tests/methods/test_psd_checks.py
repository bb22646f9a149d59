"""One PSD-check convention for every estimator that takes a precomputed kernel.

FDA, the MKL estimators and KOMD check a precomputed (or callable) training kernel
with :func:`methods.check_psd_kernel` unless ``check_psd=False``, as the SVM family
(tests/methods/test_svm.py) and the LMNN-MKL estimators do; the runner turns the
estimator's check off whenever it hands over a Gram matrix (``build_input``).
"""

from __future__ import annotations

import numpy as np
import pytest

from methods import FDA, SVM, EpsMKL, MKLm, SimpleMKL, check_psd_kernel
from methods.exceptions import NonPSDKernelError
from methods.kernels import KernelSpec, kernel_stack, pairwise_kernel
from methods.komd import KOMD

# One factory per estimator, small and fast settings; each takes check_psd.
MAKERS = {
    "FDA": lambda **kw: FDA(kernel="precomputed", **kw),
    "KOMD": lambda **kw: KOMD(kernel="precomputed", **kw),
    "SimpleMKL": lambda **kw: SimpleMKL(kernel="precomputed", **kw),
    "MKLm": lambda **kw: MKLm(kernel="precomputed", **kw),
    "EpsMKL": lambda **kw: EpsMKL(kernel="precomputed", **kw),
}
MKL = ("SimpleMKL", "MKLm", "EpsMKL")
_SPECS = [
    KernelSpec("linear"),
    KernelSpec("gaussian", sigma=1.0),
    KernelSpec("gaussian", sigma=3.0),
]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, "b", "a")
    Xt = rng.normal(size=(15, 3))
    K = pairwise_kernel(X, kernel="gaussian", sigma=1.5)
    K_test = pairwise_kernel(Xt, X, kernel="gaussian", sigma=1.5)
    return X, y, Xt, K, K_test


def _minus_top_direction(K: np.ndarray) -> np.ndarray:
    """``K`` minus twice its largest eigenvalue along the top eigenvector."""
    w, V = np.linalg.eigh(K)
    return K - 2.0 * w[-1] * np.outer(V[:, -1], V[:, -1])


def _asymmetric(K: np.ndarray) -> np.ndarray:
    A = K.copy()
    A[0, 1] += 0.5
    return A


def _non_psd_inputs(K):
    return {"minus_top": _minus_top_direction(K), "minus_100_eye": -100.0 * np.eye(40)}


# --------------------------------------------------------------- non-PSD, asymmetric
@pytest.mark.parametrize("bad", ["minus_top", "minus_100_eye"])
@pytest.mark.parametrize("name", list(MAKERS))
def test_non_psd_precomputed_kernel_raises_naming_the_fix(data, name, bad):
    _, y, _, K, _ = data
    B = _non_psd_inputs(K)[bad]
    assert np.linalg.eigvalsh(B).min() < -1.0  # clearly indefinite
    with pytest.raises(NonPSDKernelError, match="not positive semi-definite") as err:
        MAKERS[name]().fit(B, y)
    assert "check_psd=False" in str(err.value)
    assert "precomputed training kernel matrix" in str(err.value)


@pytest.mark.parametrize("name", list(MAKERS))
def test_asymmetric_precomputed_kernel_raises(data, name):
    _, y, _, K, _ = data
    with pytest.raises(NonPSDKernelError, match="is not symmetric"):
        MAKERS[name]().fit(_asymmetric(K), y)


@pytest.mark.parametrize("bad", ["minus_top", "minus_100_eye", "asymmetric"])
@pytest.mark.parametrize("name", list(MAKERS))
def test_check_psd_false_fits_the_same_input(data, name, bad):
    """Opting out is honoured: every one of these solvers runs to the end on it."""
    _, y, _, K, _ = data
    B = _asymmetric(K) if bad == "asymmetric" else _non_psd_inputs(K)[bad]
    est = MAKERS[name](check_psd=False).fit(B, y)
    d = est.decision_function(B)
    assert d.shape == (40,) and np.all(np.isfinite(d))
    assert set(est.predict(B)) <= {"a", "b"}


@pytest.mark.parametrize("name", ["FDA", "KOMD"])
def test_callable_kernel_is_checked(data, name):
    X, y, _, _, _ = data
    Est = FDA if name == "FDA" else KOMD
    with pytest.raises(NonPSDKernelError, match="callable kernel") as err:
        Est(kernel=lambda A, B: -(A @ B.T)).fit(X, y)
    assert "check_psd=False" in str(err.value)
    Est(kernel=lambda A, B: -(A @ B.T), check_psd=False).fit(X, y)


@pytest.mark.parametrize(
    "bad, where",
    [
        (np.nan, (0, 0)),
        (np.inf, (2, 2)),  # an inf on the diagonal passed silently before
        (-np.inf, (3, 1)),
        (np.nan, (1, 4)),
    ],
)
@pytest.mark.parametrize("n", [6, 1200])  # the numpy and the compiled symmetrization
def test_non_finite_kernel_raises_naming_the_entry(bad, where, n):
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(n, 3))
    K = Z @ Z.T
    K[where] = bad
    i, j = where
    msg = rf"non-finite entry \({bad} at row {i}, column {j}\)"
    with pytest.raises(ValueError, match=msg):
        check_psd_kernel(K, what="K")


@pytest.mark.parametrize("name", ["FDA", "KOMD", "SVM"])
def test_callable_kernel_with_nan_names_it(data, name):
    X, y, _, _, _ = data
    Est = {"FDA": FDA, "KOMD": KOMD, "SVM": SVM}[name]

    def kernel(A, B):
        K = A @ B.T
        K[0, 0] = np.nan
        return K

    with pytest.raises(ValueError, match="callable kernel has a non-finite entry"):
        Est(kernel=kernel).fit(X, y)


# ----------------------------------------------------------------- PSD: unchanged
@pytest.mark.parametrize("name", list(MAKERS))
def test_psd_kernel_fits_and_predicts_exactly_as_without_the_check(data, name):
    _, y, _, K, K_test = data
    K_before = K.copy()
    checked = MAKERS[name]().fit(K, y)
    unchecked = MAKERS[name](check_psd=False).fit(K, y)
    np.testing.assert_array_equal(K, K_before)  # the check does not touch the input
    np.testing.assert_array_equal(
        checked.decision_function(K_test), unchecked.decision_function(K_test)
    )
    np.testing.assert_array_equal(checked.predict(K_test), unchecked.predict(K_test))
    np.testing.assert_array_equal(checked.dual_coef_, unchecked.dual_coef_)
    np.testing.assert_array_equal(checked.intercept_, unchecked.intercept_)


@pytest.mark.parametrize("name", list(MAKERS))
def test_float32_gram_matrix_is_judged_at_float32_precision(name):
    """As the SVMs: float32 round-off of a rank-3 Gram matrix is not refused."""
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((40, 3)).astype(np.float32)
    K32 = Z @ Z.T
    y = np.where(Z[:, 0] > 0, "b", "a")
    with pytest.raises(NonPSDKernelError):  # float64 tolerance: refused
        check_psd_kernel(K32.astype(np.float64))
    MAKERS[name]().fit(K32, y)


@pytest.mark.parametrize(
    "est",
    [
        FDA(kernel="gaussian"),
        KOMD(kernel="gaussian"),
        SimpleMKL(kernel=_SPECS[:2], normalize=None),
    ],
    ids=lambda e: type(e).__name__,
)
def test_named_kernels_are_never_checked(data, est, monkeypatch):
    import methods._validation
    import methods.fda._estimator
    import methods.komd._komd
    import methods.mkl._estimators

    def refuse(*args, **kwargs):
        raise AssertionError("a named kernel was checked")

    modules = (methods._validation, methods.fda._estimator, methods.komd._komd,
               methods.mkl._estimators)  # fmt: skip
    for module in modules:
        for name in ("check_psd_kernel", "check_input_kernel"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, refuse)
    X, y, _, _, _ = data
    est.fit(X, y)


# ---------------------------------------------------------------- MKL: the member
@pytest.mark.parametrize("name", MKL)
def test_mkl_names_the_bad_member_of_the_stack(data, name):
    X, y, _, _, _ = data
    stack = kernel_stack(X, None, _SPECS)
    MAKERS[name]().fit(stack, y)  # every member PSD
    bad = stack.copy()
    bad[:, :, 1] = _minus_top_direction(stack[:, :, 1])
    with pytest.raises(NonPSDKernelError, match="training kernel 1 of the stack") as e:
        MAKERS[name]().fit(bad, y)
    assert "not positive semi-definite" in str(e.value)
    assert "check_psd=False" in str(e.value)
    asym = stack.copy()
    asym[:, :, 2] = _asymmetric(stack[:, :, 2])
    with pytest.raises(NonPSDKernelError, match="training kernel 2 of the stack") as e:
        MAKERS[name]().fit(asym, y)
    assert "not symmetric" in str(e.value)
    assert MAKERS[name](check_psd=False).fit(bad, y).kernel_weights_.shape == (1, 3)


@pytest.mark.parametrize("name", MKL)
def test_mkl_checks_the_stack_as_given_before_normalization(data, name):
    """unit_trace rescales by a positive factor: the verdict is the input's."""
    X, y, Xt, _, _ = data
    stack = kernel_stack(X, None, _SPECS)
    test = kernel_stack(Xt, X, _SPECS)
    a = MAKERS[name](normalize="unit_trace").fit(stack, y)
    b = MAKERS[name](normalize="unit_trace", check_psd=False).fit(stack, y)
    np.testing.assert_array_equal(a.decision_function(test), b.decision_function(test))
    np.testing.assert_array_equal(a.kernel_weights_, b.kernel_weights_)


# ----------------------------------------------------------------- the runner
_GAUSS = {
    "name": "gauss1",
    "kernel": "gaussian",
    "degree": 2,
    "sigma": 1.0,
    "normalize": None,
}
_BANK = {"name": "mkl20", "kernel": "bank", "bank": "bank20", "normalize": None}


@pytest.mark.parametrize("protocol_check", [True, False])
@pytest.mark.parametrize(
    "est,kcfg",
    [
        (FDA(kernel="linear"), _GAUSS),
        (KOMD(), _GAUSS),
        (SVM(), _GAUSS),
        (SimpleMKL(), _BANK),
    ],
    ids=["FDA", "KOMD", "SVM", "SimpleMKL"],
)
def test_build_input_turns_the_estimators_check_off(data, est, kcfg, protocol_check):
    """Checked by the runner, or the protocol opted out: never again in every fit."""
    from sklearn.base import clone

    from runners.run import build_input

    X, y, _, _, _ = data
    assert est.get_params()["check_psd"] is True
    out, Xin = build_input(clone(est), X, kcfg, protocol_check)
    assert out.kernel == "precomputed" and out.check_psd is False
    assert Xin.shape[:2] == (40, 40)
    if not isinstance(est, SimpleMKL):  # results are those of the checked fit
        checked = clone(out).set_params(check_psd=True).fit(Xin, y)
        np.testing.assert_array_equal(
            out.fit(Xin, y).decision_function(Xin), checked.decision_function(Xin)
        )


def test_build_input_leaves_check_psd_alone_without_a_gram_matrix(data):
    from runners.run import build_input

    X, _, _, _, _ = data
    est, Xin = build_input(FDA(), X, {"name": "none", "kernel": "none"}, False)
    assert est.check_psd is True and Xin is X
