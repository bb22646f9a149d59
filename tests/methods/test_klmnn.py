"""KLMNN (kdml ref. [3]): KPCA then the project's LMNN."""

from __future__ import annotations

import numpy as np
import pytest

from methods.metric_learning import KLMNN, LMNN, KPCAMap, MetricKNN


def _pair_dists(T, R):
    return np.sum((T[:, None] - R[None]) ** 2, axis=2)


def test_linear_full_rank_klmnn_equals_lmnn():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(45, 3))
    y = np.repeat([0, 1, 2], 15)
    X[y == 1, 0] += 1.5
    X[y == 2, 1] += 1.5
    Xt = rng.normal(size=(10, 3))
    lmnn = LMNN(n_neighbors=3, max_iter=200)
    a = lmnn.fit(X, y)
    b = KLMNN(kernel="linear", n_components=None, lmnn=lmnn).fit(X, y)
    assert b.kpca_.transform(X).shape[1] == 3  # full rank
    np.testing.assert_allclose(
        _pair_dists(a.transform(Xt), a.transform(X)),
        _pair_dists(b.transform(Xt), b.transform(X)),
        rtol=1e-5,
        atol=1e-7,
    )
    ka = MetricKNN(lmnn, n_neighbors=3).fit(X, y)
    kb = MetricKNN(KLMNN(kernel="linear", lmnn=lmnn), n_neighbors=3).fit(X, y)
    np.testing.assert_array_equal(ka.predict(Xt), kb.predict(Xt))


def test_kpca_output_dimension_larger_than_allowed():
    X = np.random.default_rng(1).normal(size=(6, 2))
    with pytest.raises(ValueError, match="larger than allowed"):
        KPCAMap(n_components=7).fit(X)


def test_kpca_map_reproduces_the_centred_gaussian_gram_matrix():
    """Guards the Gaussian width convention of KPCAMap (and so of KLMNN).

    With every component kept, the KPCA coordinates Z of the training points
    satisfy Z Z^T = H K H, K the Gaussian kernel exp(-||x - z||^2 / (2 sigma^2))
    (dense formula) and H the centring matrix; test points map onto their
    centred kernel values, Z_t Z^T = (K_t - 1 K / n) H.
    """
    from scipy.spatial.distance import cdist

    rng = np.random.default_rng(2)
    X, Xt = rng.normal(size=(20, 3)), rng.normal(size=(4, 3))
    sigma = 1.3
    K = np.exp(-cdist(X, X, "sqeuclidean") / (2 * sigma**2))
    Kt = np.exp(-cdist(Xt, X, "sqeuclidean") / (2 * sigma**2))
    H = np.eye(20) - 1.0 / 20
    kpca = KPCAMap(n_components=None, sigma=sigma).fit(X)
    Z, Zt = kpca.transform(X), kpca.transform(Xt)
    np.testing.assert_allclose(Z @ Z.T, H @ K @ H, atol=1e-10)
    np.testing.assert_allclose(Zt @ Z.T, (Kt - K.mean(0)) @ H, atol=1e-10)


def test_klmnn_caps_n_components_at_the_training_size():
    """Guards the cap of KLMNN's n_components: min(n_components, n_train)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 2))
    y = np.repeat([0, 1], 6)
    est = KLMNN(n_components=40, lmnn=LMNN(n_neighbors=2)).fit(X, y)
    assert est.kpca_.n_components == 12
    assert est.transform(X[:3]).shape == (3, 12)
