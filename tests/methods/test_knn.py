"""MetricKNN: the kNN rule in a learned metric, against scikit-learn's kNN."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_blobs
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict
from sklearn.neighbors import KNeighborsClassifier

from methods.metric_learning import LMNN, MetricKNN


@pytest.mark.parametrize("k", [1, 3, 6])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_euclidean_knn_matches_sklearn(k, weights):
    X, y = make_blobs(n_samples=80, centers=3, cluster_std=3.0, random_state=k)
    Xt = X[:20] + 0.37
    ours = MetricKNN(n_neighbors=k, weights=weights).fit(X, y)
    ref = KNeighborsClassifier(n_neighbors=k, weights=weights).fit(X, y)
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    np.testing.assert_allclose(ours.predict_proba(Xt), ref.predict_proba(Xt))


def test_knn_in_lmnn_space_matches_sklearn_on_transformed_data():
    X, y = load_iris(return_X_y=True)
    clf = MetricKNN(LMNN(n_neighbors=3), n_neighbors=3).fit(X, y)
    lmnn = LMNN(n_neighbors=3).fit(X, y)
    ref = KNeighborsClassifier(3).fit(lmnn.transform(X), y)
    Xt = X[::7] + 0.05
    np.testing.assert_array_equal(clf.predict(Xt), ref.predict(lmnn.transform(Xt)))
    assert clf.metric_learner_ is not clf.metric_learner  # a fitted clone


def test_precomputed_kernel_through_the_learner_slices_in_cv():
    X, y = make_blobs(n_samples=60, centers=2, cluster_std=2.0, random_state=0)
    K = X @ X.T
    clf = MetricKNN(LMNN(n_neighbors=3, kernel="precomputed"))
    assert clf.__sklearn_tags__().input_tags.pairwise
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    pred_k = cross_val_predict(clf, K, y, cv=cv)
    pred_x = cross_val_predict(MetricKNN(LMNN(n_neighbors=3)), X, y, cv=cv)
    # linear kernel map = raw features up to lmnnmkl Eq. 2; 1-NN agrees on most
    assert np.mean(pred_k == pred_x) >= 0.9
    grid = GridSearchCV(clf, {"n_neighbors": [1, 3]}, cv=cv).fit(K, y)
    assert np.isfinite(grid.best_score_)
    assert grid.predict(K[:5]).shape == (5,)


def test_decision_function_rules():
    X, y = make_blobs(n_samples=50, centers=2, cluster_std=4.0, random_state=1)
    Xt = X[:15] + 0.5
    vote = MetricKNN(n_neighbors=5, score_rule="vote").fit(X, y)
    P = vote.predict_proba(Xt)
    np.testing.assert_allclose(vote.decision_function(Xt), P[:, 1] - P[:, 0])
    np.testing.assert_array_equal(
        vote.predict(Xt), np.where(vote.decision_function(Xt) > 0, 1, 0)
    )
    margin = MetricKNN(n_neighbors=1, score_rule="margin").fit(X, y)
    s = margin.decision_function(Xt)
    D = np.sqrt(((Xt[:, None] - X[None]) ** 2).sum(-1))
    expected = D[:, y == 0].min(1) - D[:, y == 1].min(1)
    np.testing.assert_allclose(s, expected)
    np.testing.assert_array_equal(margin.predict(Xt), (s > 0).astype(int))


def test_label_rule_scores_the_predicted_label_and_its_auc_is_balanced_accuracy():
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    X, y = make_blobs(n_samples=80, centers=2, cluster_std=5.0, random_state=3)
    Xt, yt = X[::3] + 0.4, y[::3]
    label = MetricKNN(n_neighbors=5, score_rule="label").fit(X, y)
    s = label.decision_function(Xt)
    pred = label.predict(Xt)
    np.testing.assert_array_equal(s, np.where(pred == label.classes_[1], 1.0, -1.0))
    assert roc_auc_score(yt, s) == pytest.approx(balanced_accuracy_score(yt, pred))
    vote = MetricKNN(n_neighbors=5, score_rule="vote").fit(X, y)
    np.testing.assert_array_equal(vote.predict(Xt), pred)
    assert len(np.unique(vote.decision_function(Xt))) > 2  # vote is graded
    # multiclass: one-hot of the predicted class
    X3, y3 = make_blobs(n_samples=60, centers=3, cluster_std=4.0, random_state=0)
    S = MetricKNN(n_neighbors=3, score_rule="label").fit(X3, y3).decision_function(X3)
    assert S.shape == (60, 3) and np.all(S.sum(1) == 1.0)


def test_too_many_neighbors_raises():
    with pytest.raises(ValueError, match="n_neighbors=5 needs at least"):
        MetricKNN(n_neighbors=5).fit(np.zeros((3, 2)), [0, 1, 0])


def test_distance_ties_go_to_the_lower_training_index():
    """Guards the documented tie rule of ``kneighbors`` (a stable sort).

    Integer points on a line give many exactly equal distances (the squared
    distances are exact in floating point); the neighbours must be the first k
    of the (distance, index) order, computed by ``np.lexsort``.
    """
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(200, 1)).astype(float)
    y = rng.integers(0, 2, size=200)
    Xt = np.array([[0.0], [1.0], [2.0], [0.5]])
    knn = MetricKNN(n_neighbors=7).fit(X, y)
    dist, idx = knn.kneighbors(Xt)
    for q in range(len(Xt)):
        d = np.abs(X[:, 0] - Xt[q, 0])
        expected = np.lexsort((np.arange(len(X)), d))[:7]
        np.testing.assert_array_equal(idx[q], expected)
        np.testing.assert_array_equal(dist[q], d[expected])


def test_distance_weights_give_a_point_at_distance_zero_all_the_weight():
    """Guards ``weights="distance"`` when a test point coincides with training ones.

    As scikit-learn: the training points at distance 0 share all the weight (the
    inverse distance is infinite). Integer coordinates make those distances
    exactly 0 in both.
    """
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(40, 2)).astype(float)
    y = rng.integers(0, 3, size=40)
    Xt = np.vstack([X[:6], [[0.5, 0.5], [1.5, 2.5]]])
    ours = MetricKNN(n_neighbors=5, weights="distance").fit(X, y)
    ref = KNeighborsClassifier(n_neighbors=5, weights="distance").fit(X, y)
    P = ours.predict_proba(Xt)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P, ref.predict_proba(Xt))
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))


def test_as_many_neighbors_as_training_samples_is_allowed():
    """Guards the bound of ``n_neighbors``: k = n votes with every training point."""
    X, y = make_blobs(n_samples=7, centers=2, random_state=0)
    Xt = X[:3] + 0.1
    ours = MetricKNN(n_neighbors=7).fit(X, y)
    ref = KNeighborsClassifier(n_neighbors=7).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(Xt), ref.predict_proba(Xt))
