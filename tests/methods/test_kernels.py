"""Kernels against their direct formulas, one entry at a time."""

import numpy as np
import pytest

from methods.kernels import (
    BANK20_SIGMAS,
    KernelSpec,
    bank20,
    kernel_stack,
    pairwise_kernel,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(7, 3)), rng.normal(size=(4, 3))


def _direct(x, y, kind, degree=2, sigma=1.0):
    if kind == "linear":
        return float(x @ y)
    if kind == "poly":
        return float((x @ y + 1.0) ** degree)
    return float(np.exp(-np.sum((x - y) ** 2) / (2 * sigma**2)))


@pytest.mark.parametrize(
    "kind,degree,sigma",
    [
        ("linear", 1, 1.0),
        ("poly", 2, 1.0),
        ("poly", 3, 1.0),
        ("gaussian", 2, 0.5),
        ("gaussian", 2, 7.0),
    ],
)
def test_raw_kernels_match_formula(data, kind, degree, sigma):
    X, Y = data
    K = pairwise_kernel(X, Y, kernel=kind, degree=degree, sigma=sigma)
    for i in range(len(X)):
        for j in range(len(Y)):
            assert K[i, j] == pytest.approx(_direct(X[i], Y[j], kind, degree, sigma))


@pytest.mark.parametrize("kind", ["linear", "poly", "gaussian"])
def test_cosine_normalization_uses_each_points_self_similarity(data, kind):
    X, Y = data
    K = pairwise_kernel(X, Y, kernel=kind, degree=3, normalize="cosine")
    for i in range(len(X)):
        for j in range(len(Y)):
            kxy = _direct(X[i], Y[j], kind, 3)
            kxx = _direct(X[i], X[i], kind, 3)
            kyy = _direct(Y[j], Y[j], kind, 3)
            assert K[i, j] == pytest.approx(kxy / np.sqrt(kxx * kyy))
    Ktr = pairwise_kernel(X, kernel=kind, degree=3, normalize="cosine")
    np.testing.assert_allclose(np.diag(Ktr), 1.0)


def test_train_block_sliced_equals_test_block(data):
    """Normalizing the full Gram and slicing equals computing the test block."""
    X, _ = data
    full = pairwise_kernel(X, kernel="poly", degree=2, normalize="cosine")
    test_block = pairwise_kernel(
        X[5:], X[:5], kernel="poly", degree=2, normalize="cosine"
    )
    np.testing.assert_allclose(full[5:, :5], test_block)


def test_mean_diag_normalization(data):
    X, Y = data
    K = pairwise_kernel(X, kernel="poly", degree=2, normalize="mean_diag")
    raw = pairwise_kernel(X, kernel="poly", degree=2)
    np.testing.assert_allclose(K, raw / np.mean(np.diag(raw)))
    Kte = pairwise_kernel(
        Y,
        X,
        kernel="poly",
        degree=2,
        normalize="mean_diag",
        train_diag_mean=np.mean(np.diag(raw)),
    )
    np.testing.assert_allclose(
        Kte, pairwise_kernel(Y, X, kernel="poly", degree=2) / np.mean(np.diag(raw))
    )
    with pytest.raises(ValueError, match="train_diag_mean"):
        pairwise_kernel(Y, X, kernel="poly", normalize="mean_diag")


def test_bank20_is_the_paper_bank():
    bank = bank20()
    assert len(bank) == 20
    assert [s.degree for s in bank[:10]] == list(range(1, 11))
    assert tuple(s.sigma for s in bank[10:]) == BANK20_SIGMAS
    assert {s.kernel for s in bank[10:]} == {"gaussian"}


def test_kernel_stack_shape_and_slices(data):
    X, Y = data
    specs = [KernelSpec("linear"), KernelSpec("gaussian", sigma=2.0)]
    S = kernel_stack(Y, X, specs)
    assert S.shape == (4, 7, 2)
    np.testing.assert_allclose(
        S[:, :, 1], pairwise_kernel(Y, X, kernel="gaussian", sigma=2.0)
    )


def test_bad_input_errors(data):
    X, Y = data
    with pytest.raises(ValueError, match="Unknown kernel 'rbff'"):
        pairwise_kernel(X, kernel="rbff")
    with pytest.raises(ValueError, match="2 features but Y has 3"):
        pairwise_kernel(X[:, :2], Y, kernel="linear")
    with pytest.raises(ValueError, match="2-D array"):
        pairwise_kernel(X[0], kernel="linear")


def test_cosine_normalization_of_a_zero_point_is_zero(data):
    """A point with k(x, x) = 0 has no direction: its row (and column) of the
    cosine-normalized kernel is 0, not NaN, in training and test blocks."""
    X, Y = data
    X = X.copy()
    X[2] = 0.0
    K = pairwise_kernel(X, kernel="linear", normalize="cosine")
    assert np.all(K[2] == 0.0) and np.all(K[:, 2] == 0.0)
    raw = X @ X.T
    keep = np.arange(len(X)) != 2
    d = np.sqrt(np.diag(raw)[keep])
    np.testing.assert_allclose(
        K[np.ix_(keep, keep)], raw[np.ix_(keep, keep)] / np.outer(d, d)
    )
    Kte = pairwise_kernel(Y, X, kernel="linear", normalize="cosine")
    assert np.all(Kte[:, 2] == 0.0) and np.all(np.isfinite(Kte))


def test_bank20_widths_and_degrees_are_the_printed_ones():
    """mlsvm Sec. VII, written out (not read back from the module's constants):
    "10 polynomial with degree from one to ten, ten Gaussian with bandwidth
    sigma in {0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20}"."""
    bank = bank20(normalize=None)
    poly = [("poly", d) for d in range(1, 11)]
    assert [(s.kernel, s.degree) for s in bank[:10]] == poly
    assert [s.sigma for s in bank[10:]] == [0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20]
    # the labels name the columns of the mlsvm kernel-weight table
    assert [s.label for s in bank] == [f"poly{d}" for d in range(1, 11)] + [
        f"gauss{w}" for w in ("0.5", "1", "2", "5", "7", "10", "12", "15", "17", "20")
    ]


def test_squared_distances_far_from_the_origin_are_never_negative():
    """``||x||^2 + ||y||^2 - 2 x.y`` cancels far from the origin: the distances are
    clipped at 0 and a training block has an exact 0 diagonal, so the Gaussian
    kernel stays <= 1 with an exact unit diagonal (dense formula elsewhere)."""
    from methods.kernels import squared_distances

    rng = np.random.default_rng(5)
    X = 1e4 + rng.normal(size=(20, 3))
    dense = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    D = squared_distances(X)
    np.testing.assert_array_equal(np.diag(D), 0.0)
    np.testing.assert_allclose(D, dense, atol=1e-6)
    assert np.all(squared_distances(X, X.copy()) >= 0.0)
    K = pairwise_kernel(X, X.copy(), kernel="gaussian", sigma=0.1)
    assert np.all(K <= 1.0)
    np.testing.assert_array_equal(
        np.diag(pairwise_kernel(X, kernel="gaussian", sigma=0.1)), 1.0
    )


def _transposed(X, Y):
    return (X @ Y.T).T


@pytest.mark.parametrize("estimator", ["SVM", "FDA", "KOMD"])
def test_a_callable_kernel_of_the_wrong_shape_is_named(estimator):
    # a callable returning the transposed block used to fail inside the solver
    # with "operands could not be broadcast together" (or an IndexError with
    # check_psd=False), naming neither the kernel nor the expected shape
    import methods
    import methods.komd

    cls = getattr(methods, estimator, None) or getattr(methods.komd, estimator)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    y = np.repeat([0, 1], 6)
    for check_psd in (True, False):
        est = cls(kernel=_transposed, check_psd=check_psd)
        # the training block is square: only the test block shows the mistake
        est.fit(X, y)
        named = r"callable _transposed returned .* \(len\(X\), len\(Y\)\) = \(5, "
        with pytest.raises(ValueError, match=named):
            est.decision_function(X[:5])
    with pytest.raises(ValueError, match=r"shape \(30,\).*\(5, 6\)"):
        pairwise_kernel(X[:5], X[:6], kernel=lambda A, B: np.ones(30))


@pytest.mark.parametrize(
    "spec, match",
    [
        (dict(kernel="gaussian", sigma=0.0), "sigma must be a finite number > 0"),
        (dict(kernel="gaussian", sigma=-2.0), "sigma must be a finite number > 0"),
        (dict(kernel="gaussian", sigma=float("nan")), "sigma must be a finite"),
        (dict(kernel="poly", degree=0), "degree must be an integer >= 1"),
        (dict(kernel="poly", degree=2.5), "degree must be an integer >= 1"),
        (dict(kernel="rbf"), "unknown kernel 'rbf'"),
    ],
)
def test_a_kernel_the_formula_cannot_take_is_refused(data, spec, match):
    # KernelSpec("gaussian", sigma=0) gave a NaN Gram matrix that SimpleMKL
    # fitted (NaN decisions, a warning blaming the inner solver); a negative
    # sigma silently the width |sigma|; degree 2.5 NaN for negative x . y
    X, _ = data
    with pytest.raises(ValueError, match=match):
        KernelSpec(**spec)
    if spec["kernel"] != "rbf":
        with pytest.raises(ValueError, match=f"pairwise_kernel: .*{match}"):
            pairwise_kernel(X, **spec)
    # what stays accepted: integral degrees of any type, any sigma where unused
    KernelSpec("poly", degree=np.int64(3))
    KernelSpec("poly", degree=2.0)
    pairwise_kernel(X, kernel="linear", sigma=0.0)
