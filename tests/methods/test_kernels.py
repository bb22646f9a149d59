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
