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
