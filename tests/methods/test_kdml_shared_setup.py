"""kdml Methods 1-2: setups shared across a grid search change no result.

The per-fit factorizations depend on the training part, sigma, gamma and lam (not
rho); :func:`methods.metric_learning._kdml._shared_setup` hands them from one fit to
the next. Each test runs the same work with sharing disabled (the previous path:
every fit builds its own setup) and enabled, and compares the results.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from methods.metric_learning import MetricKNN, _kdml
from methods.metric_learning._kdml import (
    KDMLFixedKernel,
    KDMLParamKernel,
    clear_setup_cache,
    set_setup_cache_size,
)

# every parameter a setup depends on varies, and rho, which it does not
GRID = {
    "metric_learner__sigma": [1.0, 2.0],
    "metric_learner__gamma": [0.5, 1.0],
    "metric_learner__rho": [0.1, 10.0],
}


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    n = 60
    y = np.arange(n) % 3
    X = rng.normal(size=(n, 4))
    X[:, 0] += 1.2 * y
    X[:, 1] += 0.6 * (y == 2)
    return X, y


@pytest.fixture(autouse=True)
def fresh_cache():
    clear_setup_cache()
    old = set_setup_cache_size(3 << 30)
    yield
    set_setup_cache_size(old)
    clear_setup_cache()


def _search(learner, X, y, shared: bool):
    clear_setup_cache()
    set_setup_cache_size((3 << 30) if shared else 0)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        MetricKNN(learner, n_neighbors=3), GRID, cv=cv, error_score="raise"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y)
    return search


def _fit_all(learner, X, y, shared: bool):
    """Every grid point fitted on X in grid order: objective, C and predictions."""
    clear_setup_cache()
    set_setup_cache_size((3 << 30) if shared else 0)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for rho in GRID["metric_learner__rho"]:
            for sigma in GRID["metric_learner__sigma"]:
                for gamma in GRID["metric_learner__gamma"]:
                    est = MetricKNN(
                        learner.set_params(rho=rho, sigma=sigma, gamma=gamma),
                        n_neighbors=3,
                    ).fit(X[:40], y[:40])
                    ml = est.metric_learner_
                    out.append(
                        (ml.objective_, ml.dual_coef_, ml.n_iter_, est.predict(X[40:]))
                    )
    return out


@pytest.mark.parametrize(
    "learner",
    [
        (KDMLFixedKernel(max_iter=20), 10),
        (KDMLParamKernel(max_iter=20, b_max_iter=20), 4),
    ],
    ids=["method1", "method2"],
)
def test_shared_setups_give_the_same_fits(data, learner):
    learner, n_setups = learner
    X, y = data
    ref = _fit_all(learner, X, y, shared=False)
    assert not _kdml._SETUP_CACHE
    new = _fit_all(learner, X, y, shared=True)
    # the rho loop reuses every setup. Method 2: one per (sigma, gamma); Method 1:
    # one R per gamma and one block per (spread, gamma), the spreads of sigma = 1
    # and 2 being {0.5, 1, 2} and {1, 2, 4}: 2 + 2 x 4 = 10 (12 without overlap)
    assert len(_kdml._SETUP_CACHE) == n_setups
    for (f0, c0, it0, p0), (f1, c1, it1, p1) in zip(ref, new, strict=True):
        assert it0 == it1
        assert abs(f0 - f1) <= 1e-10 * max(1.0, abs(f0))
        np.testing.assert_allclose(c1, c0, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(p1, p0)


@pytest.mark.parametrize(
    "learner",
    [
        KDMLFixedKernel(max_iter=20),
        KDMLParamKernel(max_iter=20, b_max_iter=20),
    ],
    ids=["method1", "method2"],
)
def test_grid_search_is_unchanged(data, learner):
    X, y = data
    ref = _search(learner, X, y, shared=False)
    new = _search(learner, X, y, shared=True)
    assert len(_kdml._SETUP_CACHE) > 0
    np.testing.assert_allclose(
        new.cv_results_["mean_test_score"],
        ref.cv_results_["mean_test_score"],
        rtol=0,
        atol=1e-12,
    )
    assert new.best_params_ == ref.best_params_
    np.testing.assert_array_equal(new.predict(X), ref.predict(X))
    f0 = ref.best_estimator_.metric_learner_.objective_
    f1 = new.best_estimator_.metric_learner_.objective_
    assert abs(f0 - f1) <= 1e-10 * max(1.0, abs(f0))


def test_a_changed_input_is_not_reused(data):
    """Same shapes, one value of X, one label or lam changed: a new setup."""
    X, y = data
    X2 = X.copy()
    X2[0, 0] += 1e-9
    y2 = y.copy()
    y2[:2] = y2[1::-1]
    cases = [(X, y, 1.0), (X2, y, 1.0), (X, y2, 1.0), (X, y, 0.7)]
    set_setup_cache_size(0)
    ref = [KDMLParamKernel(max_iter=5, lam=lam).fit(Xi, yi) for Xi, yi, lam in cases]
    set_setup_cache_size(3 << 30)
    for (Xi, yi, lam), r in zip(cases, ref, strict=True):
        got = KDMLParamKernel(max_iter=5, lam=lam).fit(Xi, yi)
        assert got.objective_ == r.objective_
        np.testing.assert_array_equal(got.dual_coef_, r.dual_coef_)
    assert len(_kdml._SETUP_CACHE) == len(cases)


def test_method1_shared_blocks_equal_its_own_setup(data):
    """The system assembled from cached blocks equals the one built in one go."""
    X, y = data
    codes = np.unique(y, return_inverse=True)[1]
    est = KDMLFixedKernel(sigma=2.0, gamma=0.5, lam=0.7, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
    R = _kdml.method1_p_factor(codes, 0.5, 0.7)
    Ks = np.stack([_kdml._gaussian(X, X, s) for s in est.spreads_])
    ref = _kdml._Method1System(Ks, codes, 0.5, 0.7)
    (got_R, _), *blocks = _kdml._SETUP_CACHE.values()
    np.testing.assert_array_equal(got_R, R)
    np.testing.assert_array_equal(got_R, ref.R)
    for t, ((K, W, (w, Q)), _) in enumerate(blocks):
        np.testing.assert_array_equal(K, ref.Ks[t])
        np.testing.assert_array_equal(W, ref.W[t])
        np.testing.assert_array_equal(w, ref.eig[t][0])
        np.testing.assert_array_equal(Q, ref.eig[t][1])


def test_shared_setups_are_read_only_and_bounded(data):
    X, y = data
    KDMLParamKernel(max_iter=3).fit(X, y)
    ((setup, nbytes),) = _kdml._SETUP_CACHE.values()
    K, system = setup
    assert nbytes >= K.nbytes + system.V.nbytes + system.Qn.nbytes
    with pytest.raises(ValueError, match="read-only"):
        K[0, 0] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        system.Qn[0, 0] = 0.0
    set_setup_cache_size(nbytes)  # room for one setup only
    KDMLParamKernel(max_iter=3, sigma=2.0).fit(X, y)
    assert len(_kdml._SETUP_CACHE) == 1
    with pytest.raises(ValueError, match="integer >= 0"):
        set_setup_cache_size(-1)
