"""GB-LMNN (Kedem et al. 2012): loss, gradient and the boosting descent."""

import numpy as np
import pytest

from methods.metric_learning._gb_lmnn import GBLMNN, _target_neighbors, gb_lmnn_loss


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)  # not linearly separable
    return X, y


def _dense_loss(Phi, y, tn, mu, margin):
    value = 0.0
    for i in range(len(y)):
        for j in tn[i]:
            dij = np.sum((Phi[i] - Phi[j]) ** 2)
            value += (1 - mu) * dij
            for l in range(len(y)):
                if y[l] != y[i]:
                    value += mu * max(
                        0.0, margin + dij - np.sum((Phi[i] - Phi[l]) ** 2)
                    )
    return value


def test_loss_equals_the_dense_triplet_sum_and_its_gradient():
    X, y = _data(25, 3)
    tn = _target_neighbors(X, y, 2)
    value, G = gb_lmnn_loss(X, y, tn, 0.3, 1.0)
    assert value == pytest.approx(_dense_loss(X, y, tn, 0.3, 1.0))
    h = 1e-6
    rng = np.random.default_rng(1)
    for _ in range(6):
        i, c = rng.integers(25), rng.integers(3)
        E = np.zeros_like(X)
        E[i, c] = h
        fd = (
            gb_lmnn_loss(X + E, y, tn, 0.3)[0] - gb_lmnn_loss(X - E, y, tn, 0.3)[0]
        ) / (2 * h)
        assert G[i, c] == pytest.approx(fd, rel=1e-5, abs=1e-6)


def test_loss_decreases_over_boosting_rounds():
    X, y = _data()
    m = GBLMNN(
        n_estimators=20, init="identity", step_rule="line_search",
        learning_rate=0.1, random_state=0,
    ).fit(X, y)
    assert len(m.objective_path_) == len(m.estimators_) + 1 >= 10
    assert np.all(np.diff(m.objective_path_) < 0)
    assert m.objective_path_[-1] < 0.5 * m.objective_path_[0]
    # transform reproduces the embedding the loss was evaluated on
    tn = m.target_neighbors_
    loss = gb_lmnn_loss(m.transform(X), y, tn)[0]
    assert loss == pytest.approx(m.objective_path_[-1])


def test_too_few_samples_per_class_is_refused():
    X, _ = _data(10)
    y = np.array([0] * 9 + [1])
    with pytest.raises(ValueError, match="GB-LMNN needs 4 samples per class"):
        GBLMNN(n_neighbors=3).fit(X, y)


def test_cached_refit_equals_a_fresh_fit():
    from methods.metric_learning import _gb_lmnn

    X, y = _data()
    a = GBLMNN(n_estimators=5, random_state=0).fit(X, y)
    _gb_lmnn._FIT_CACHE.clear()
    b = GBLMNN(n_estimators=5, random_state=0).fit(X, y)
    c = GBLMNN(n_estimators=5, random_state=0).fit(X, y)  # from the cache
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    np.testing.assert_array_equal(c.transform(X), b.transform(X))
    d = GBLMNN(n_estimators=5, random_state=0).fit(X + 1e-3, y)
    assert not np.array_equal(d.transform(X), b.transform(X))


def test_cached_refit_keeps_its_own_feature_names():
    # the cache is keyed by the values: a fit on the same values under other
    # column names (or none) used to get the first fit's feature_names_in_ back,
    # so transform on its own frame failed ("feature names should match") and
    # transform on an array warned
    import warnings

    import pandas as pd

    X, y = _data(n=30)
    params = dict(n_neighbors=2, n_estimators=2, random_state=0)
    GBLMNN(**params).fit(pd.DataFrame(X, columns=list("abcd")), y)
    renamed = pd.DataFrame(X, columns=list("wxyz"))
    again = GBLMNN(**params).fit(renamed, y)
    np.testing.assert_array_equal(again.feature_names_in_, list("wxyz"))
    again.transform(renamed)
    plain = GBLMNN(**params).fit(X, y)
    assert not hasattr(plain, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain.transform(X)


def test_cached_metric_learner_fits_once_per_training_set():
    from methods.metric_learning._cached import _CACHE, CachedMetricLearner

    X, y = _data()
    _CACHE.clear()
    a = CachedMetricLearner(GBLMNN(n_estimators=3, random_state=0)).fit(X, y)
    b = CachedMetricLearner(GBLMNN(n_estimators=3, random_state=0)).fit(X, y)
    assert a.estimator_ is b.estimator_ and len(_CACHE) == 1
    c = CachedMetricLearner(GBLMNN(n_estimators=4, random_state=0)).fit(X, y)
    assert c.estimator_ is not a.estimator_
    np.testing.assert_array_equal(
        a.transform(X), GBLMNN(n_estimators=3, random_state=0).fit(X, y).transform(X)
    )


def test_fewer_rounds_from_the_cache_equal_a_fresh_fit():
    from methods.metric_learning import _gb_lmnn

    X, y = _data()
    _gb_lmnn._FIT_CACHE.clear()
    GBLMNN(n_estimators=8, random_state=0).fit(X, y)
    short = GBLMNN(n_estimators=3, random_state=0).fit(X, y)  # prefix of the 8
    _gb_lmnn._FIT_CACHE.clear()
    fresh = GBLMNN(n_estimators=3, random_state=0).fit(X, y)
    assert len(short.estimators_) == len(fresh.estimators_) == 3
    np.testing.assert_array_equal(short.transform(X), fresh.transform(X))
    np.testing.assert_array_equal(short.objective_path_, fresh.objective_path_)


def test_init_lmnn_starts_at_lmnn_loss_and_descends():
    """Kedem et al. start from the linear LMNN map: the boosting's first loss is
    LMNN's objective at its solution, below the Euclidean start, and it falls."""
    from methods.metric_learning import LMNN

    X, y = _data()
    m = GBLMNN(n_estimators=60, random_state=0).fit(X, y)  # default init="lmnn"
    assert m.init == "lmnn" and m.step_rule == "authors"
    lmnn = LMNN(n_neighbors=3).fit(X, y)
    np.testing.assert_array_equal(m.target_neighbors_, lmnn.target_neighbors_)
    np.testing.assert_allclose(m.components_, lmnn.components_)
    assert m.objective_path_[0] == pytest.approx(lmnn.objective_, rel=1e-10)
    assert not np.allclose(m.components_, np.eye(X.shape[1]))
    euclid = GBLMNN(n_estimators=0, init="identity").fit(X, y).objective_path_[0]
    assert m.objective_path_[0] < euclid
    assert len(m.estimators_) == 60
    assert np.all(np.diff(m.objective_path_) < 0)
    assert m.objective_path_[-1] < 0.8 * m.objective_path_[0]
    # the authors' rule: the first step is the learning rate times 1.01, and a
    # step only grows by 1.01 per tree
    assert m.steps_[0] <= 1.01e-3 * (1 + 1e-12)
    assert np.all(m.steps_[1:] <= 1.01 * m.steps_[:-1] * (1 + 1e-12))
    # transform reproduces the embedding the loss was evaluated on
    assert gb_lmnn_loss(m.transform(X), y, m.target_neighbors_)[0] == pytest.approx(
        m.objective_path_[-1]
    )
    # with no trees the map is LMNN's linear map
    m0 = GBLMNN(n_estimators=0).fit(X, y)
    np.testing.assert_allclose(m0.transform(X), lmnn.transform(X))


def test_init_array_of_the_wrong_width_is_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="init has shape"):
        GBLMNN(init=np.eye(3)).fit(X, y)


def _round_embeddings(m, X):
    """The embedding before each round and each tree's fitted values H_t(X)."""
    Phi = X @ m.components_.T
    out = []
    for step, tree in zip(m.steps_, m.estimators_):
        H = tree.predict(X).reshape(Phi.shape)
        out.append((Phi, H, step))
        Phi = Phi + step * H
    return out


@pytest.mark.parametrize("step_rule", ["authors", "line_search"])
def test_each_step_is_the_largest_the_rule_accepts(step_rule):
    """Guards the step rules of the boosting, recomputed from the fitted trees.

    ``"authors"`` (gb_lmnn.m): the trial step is 1.01 times the last, halved while
    the loss would rise; so the accepted step does not raise the loss, and if it
    was halved, twice it would have. ``"line_search"``: Armijo backtracking from
    twice the last step, with slope <G, H>; the accepted step meets the sufficient
    decrease, and if it was halved, twice it does not. Losses from
    ``gb_lmnn_loss`` (checked against the dense triplet sum above).
    """
    X, y = _data(40, 3, seed=2)
    if step_rule == "authors":
        # the rule is scale-free (the tree fits the raw gradient): data scaled by
        # 1/32 and the margin by 1/32^2 take the same steps with a loss below 1,
        # which exposes any absolute slack in "the loss would rise"
        X = X / 32.0
        m = GBLMNN(n_estimators=12, init="identity", learning_rate=0.5,
                   margin=1.0 / 32**2, random_state=0).fit(X, y)
        grow = 1.01
    else:
        m = GBLMNN(n_estimators=12, init="identity", step_rule="line_search",
                   learning_rate=0.5, random_state=0).fit(X, y)
        grow = 2.0
    tn = m.target_neighbors_
    assert len(m.estimators_) == 12
    prev, halved = m.learning_rate, 0
    for Phi, H, step in _round_embeddings(m, X):
        f, G = gb_lmnn_loss(Phi, y, tn, 0.5, m.margin)
        slope = float(np.sum(G * H)) if step_rule == "line_search" else 0.0
        assert slope <= 0.0

        def accepted(s, f=f, Phi=Phi, H=H, slope=slope):
            new = gb_lmnn_loss(Phi + s * H, y, tn, 0.5, m.margin)[0]
            return new <= f + 1e-4 * s * slope

        assert accepted(step)
        assert step <= grow * prev * (1 + 1e-12)
        if step < grow * prev * (1 - 1e-12):
            halved += 1
            assert not accepted(2.0 * step)
        prev = step
    assert halved > 0  # the backtracking was exercised


def test_line_search_steps_are_in_units_of_the_embedding():
    """Guards the gradient scaling of ``step_rule="line_search"``.

    The tree fits the negative gradient scaled to unit mean row norm, so the step
    is in units of the embedding whatever the loss's scale. Scaling X by c = 4
    (and the margin by c^2) scales the loss by c^2 and its gradient by c but
    leaves the scaled targets, hence the trees, unchanged: with the first step
    scaled by c too, every step and the map scale by c (exactly: c is a power
    of 2).
    """
    X, y = _data(40, 3, seed=2)
    c = 4.0
    kw = dict(n_estimators=8, init="identity", step_rule="line_search", random_state=0)
    a = GBLMNN(learning_rate=0.1, **kw).fit(X, y)
    b = GBLMNN(learning_rate=0.1 * c, margin=c**2, **kw).fit(c * X, y)
    assert len(a.steps_) == len(b.steps_) == 8
    np.testing.assert_allclose(b.steps_, c * a.steps_, rtol=1e-12)
    np.testing.assert_allclose(b.objective_path_, c**2 * a.objective_path_, rtol=1e-12)
    np.testing.assert_allclose(b.transform(c * X), c * a.transform(X), rtol=1e-12)


def test_cached_metric_learner_refits_for_other_labels():
    """Guards the cache key of CachedMetricLearner: the labels are part of it.

    The same X with other labels (another target set, another loss) must give
    the fit of those labels, not the cached one of the first.
    """
    from methods.metric_learning._cached import _CACHE, CachedMetricLearner

    X, y = _data()
    y2 = (X[:, 0] > 0).astype(int)
    _CACHE.clear()
    est = GBLMNN(n_estimators=3, init="identity", random_state=0)
    CachedMetricLearner(est).fit(X, y)
    b = CachedMetricLearner(est).fit(X, y2)
    fresh = GBLMNN(n_estimators=3, init="identity", random_state=0).fit(X, y2)
    np.testing.assert_array_equal(b.transform(X), fresh.transform(X))
