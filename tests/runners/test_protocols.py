"""Outer splits are method-independent; inner selection by GridSearchCV."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from runners.protocols import ProtocolError, outer_splits

PROTO = {
    "kind": "nested_cv",
    "outer_folds": 5,
    "inner_folds": 3,
    "repetitions": 2,
    "stratified": True,
    "shuffle": True,
    "train_fraction": 0.8,
    "val_fraction": 0.2,
}


def test_outer_splits_partition_and_repeat_deterministically():
    y = np.array([0] * 30 + [1] * 20)
    a = outer_splits(y, PROTO, "toy", 0)
    b = outer_splits(y, PROTO, "toy", 0)
    assert len(a) == 10
    for (r1, j1, _, te1), (r2, j2, _, te2) in zip(a, b):
        assert (r1, j1) == (r2, j2)
        np.testing.assert_array_equal(te1, te2)
    for rep in (0, 1):
        tests = np.concatenate([te for r, _, _, te in a if r == rep])
        np.testing.assert_array_equal(np.sort(tests), np.arange(50))
    # repetitions differ, datasets differ
    assert not np.array_equal(a[0][3], a[5][3])
    c = outer_splits(y, PROTO, "other", 0)
    assert not all(np.array_equal(x[3], z[3]) for x, z in zip(a, c))


def test_stratified_folds_need_enough_samples_per_class():
    y = np.array([0] * 20 + [1] * 3)
    with pytest.raises(ProtocolError, match="class 1 of 'toy' has 3"):
        outer_splits(y, PROTO, "toy", 0)


def test_repeated_splits_fraction():
    y = np.array([0] * 60 + [1] * 40)
    proto = {**PROTO, "kind": "repeated_splits", "repetitions": 3}
    splits = outer_splits(y, proto, "toy", 0)
    assert len(splits) == 3
    for _, _, tr, te in splits:
        assert len(tr) == 80 and len(te) == 20
        assert len(np.intersect1d(tr, te)) == 0


def test_unknown_kind():
    with pytest.raises(ProtocolError, match="Unknown protocol kind"):
        outer_splits(np.zeros(10), {**PROTO, "kind": "loo"}, "toy", 0)


class _SpyClassifier(ClassifierMixin, BaseEstimator):
    """Records the training rows of every fit (X holds the row index)."""

    fits: list = []

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        if self.C == 1.0:  # one grid point is enough to see the splits
            _SpyClassifier.fits.append(np.sort(X[:, 0].astype(int)))
        self.classes_ = np.unique(y)
        self.majority_ = self.classes_[0]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_nested_training_sets_are_the_ones_evaluate_fits_on():
    from runners.protocols import evaluate, fold_seed_parts, nested_training_sets

    y = np.array([0] * 30 + [1] * 20)
    X = np.arange(50, dtype=float)[:, None]
    proto = {**PROTO, "repetitions": 1}
    _SpyClassifier.fits = []
    evaluate(
        _SpyClassifier(), X, y, outer_splits(y, proto, "toy", 3),
        {"C": [1.0, 2.0]}, proto, fold_seed_parts("toy", 3),
    )
    seen = sorted(map(tuple, _SpyClassifier.fits))
    sets = nested_training_sets(y, proto, "toy", 3)
    expected = sorted(tuple(np.sort(tr)) for tr, _ in sets)
    assert seen == expected


TVT = {
    "kind": "train_val_test",
    "repetitions": 1,
    "stratified": True,
    "train_fraction": 0.8,
    "val_fraction": 0.125,
}


def _binary_data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_scoring_staged_auc_and_selection_in_stages():
    from sklearn.metrics import roc_auc_score

    from methods.komd import ARBF
    from runners.protocols import _inner_cv, evaluate_split

    X, y = _binary_data()
    ((_, _, train, test),) = outer_splits(y, TVT, "toy", 0)
    stages = [
        {"beta0": [0.1, 1.0], "lam": [0.1, 0.5], "n_iter": [0]},
        {"mu": [1.0, 100.0], "n_iter": [4]},
    ]
    r = evaluate_split(
        ARBF(), X, y, train, test, stages, TVT, ("toy", 0, 0, 0), scoring="roc_auc"
    )
    assert set(r["best_params"]) == {"beta0", "lam", "mu", "n_iter"}
    assert r["best_params"]["n_iter"] == 4 and r["model"].n_iter == 4
    # stage 0 chose beta0, lam by validation AUC of the n_iter = 0 model (KOMD)
    itr, ite = next(
        _inner_cv(y[train], TVT, ("toy", 0, 0, 0)).split(X[train], y[train])
    )
    Xa, ya, Xv, yv = X[train][itr], y[train][itr], X[train][ite], y[train][ite]
    aucs = {
        (b, lam): roc_auc_score(
            yv, ARBF(beta0=b, lam=lam, n_iter=0).fit(Xa, ya).decision_function(Xv)
        )
        for b in (0.1, 1.0)
        for lam in (0.1, 0.5)
    }
    for (b, lam), auc in aucs.items():
        key = f"stage0:beta0={b!r},lam={lam!r},n_iter=0"
        assert r["inner_mean_test_error"][key] == pytest.approx(1 - auc)
    assert len(r["staged_test_auc"]) == 4
    assert r["staged_test_auc"][-1] == pytest.approx(
        roc_auc_score(y[test], r["decision"])
    )


class _FitSize(ClassifierMixin, BaseEstimator):
    """Records the size of its training set; scores by the first feature."""

    def __init__(self, c=1.0):
        self.c = c

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.n_fit_ = len(y)
        self.X_fit_ = np.asarray(X)
        return self

    def predict(self, X):
        return self.classes_[(np.asarray(X)[:, 0] > 0).astype(int)]

    def decision_function(self, X):
        return self.c * np.asarray(X)[:, 0]


@pytest.mark.parametrize("grid", [{"c": [1.0, 2.0]}, None, [{"c": [1.0, 2.0]}]])
def test_refit_on_train_fits_the_selected_model_on_the_training_part_only(grid):
    from runners.protocols import _inner_cv, evaluate_split

    X, y = _binary_data()
    ((_, _, train, test),) = outer_splits(y, TVT, "toy", 0)
    parts = ("toy", 0, 0, 0)
    default = evaluate_split(_FitSize(), X, y, train, test, grid, TVT, parts)
    assert default["model"].n_fit_ == len(train)  # train + validation
    r = evaluate_split(
        _FitSize(), X, y, train, test, grid, {**TVT, "refit_on": "train"}, parts
    )
    itr, _ = next(_inner_cv(y[train], TVT, parts).split(X[train], y[train]))
    assert r["model"].n_fit_ == len(itr) < len(train)
    np.testing.assert_array_equal(r["model"].X_fit_, X[train][itr])
    assert r["best_params"] == default["best_params"]


def test_refit_on_train_needs_a_single_validation_split():
    from runners.protocols import evaluate_split

    X, y = _binary_data()
    proto = {**PROTO, "repetitions": 1, "refit_on": "train"}
    ((_, _, train, test), *_) = outer_splits(y, proto, "toy", 0)
    with pytest.raises(ProtocolError, match="refit_on=train needs"):
        evaluate_split(
            _FitSize(), X, y, train, test, {"c": [1.0, 2.0]}, proto, ("toy", 0, 0, 0)
        )


@pytest.mark.parametrize(
    "n_rows, total, n_experiments", [(699, 83400, 600), (336, 40200, 600)]
)
def test_repeated_split_tests_on_the_floor_of_the_test_fraction(
    n_rows, total, n_experiments
):
    """wrbf Table 1's totals fix the test size of an 80/20 split at floor(0.2 n):
    83400 test instances over 600 splits of breast_w's 699 rows is 139 (not 140),
    40200 over 600 of ecoli's 336 rows is 67 (not 68)."""
    y = np.arange(n_rows) % 3
    proto = {**PROTO, "kind": "repeated_splits", "repetitions": 2,
             "stratified": False}  # fmt: skip
    for _, _, tr, te in outer_splits(y, proto, "toy", 0):
        assert len(te) == total // n_experiments == int(np.floor(0.2 * n_rows))
        assert len(tr) == n_rows - len(te)


def test_stratified_outer_folds_keep_the_class_proportions():
    """``protocol.stratified=true`` (mlsvm, lmnnmkl: 10-fold CV, a reading): every
    outer test fold of 30 + 20 points in 5 folds holds exactly 6 + 4; a class
    with exactly ``outer_folds`` points is enough (one per fold)."""
    y = np.array([0] * 30 + [1] * 20)
    for *_, te in outer_splits(y, PROTO, "toy", 0):
        np.testing.assert_array_equal(np.bincount(y[te]), [6, 4])
    y = np.array([0] * 20 + [1] * 5)
    splits = outer_splits(y, {**PROTO, "repetitions": 1}, "toy", 0)
    assert [int(np.sum(y[te] == 1)) for _, _, _, te in splits] == [1] * 5


def test_inner_splits_are_stratified_and_seeded_by_their_outer_split():
    """Inner selection: stratified k-fold CV (nested_cv) or one stratified
    validation split (train_val_test, arbf's 70/10/20: 10 of 80 points), seeded
    by ``("inner", dataset, seed, rep, split)`` so each outer split has its own."""
    from runners.protocols import _inner_cv
    from runners.seeds import seed_from

    y_tr = np.array([0] * 48 + [1] * 32)
    seeds = set()
    for j in range(5):
        parts = ("toy", 0, 0, j)
        cv = _inner_cv(y_tr, PROTO, parts)
        assert cv.random_state == seed_from("inner", *parts)
        seeds.add(cv.random_state)
        folds = list(cv.split(np.zeros(len(y_tr)), y_tr))
        assert len(folds) == 3
        for _, val in folds:
            assert abs(np.sum(y_tr[val] == 1) - len(val) * 0.4) < 1
        ((itr, ite),) = _inner_cv(y_tr, TVT, parts).split(np.zeros(80), y_tr)
        assert len(ite) == 10 and len(itr) == 70
        np.testing.assert_array_equal(np.bincount(y_tr[ite]), [6, 4])
    assert len(seeds) == 5


class _Fitted:
    """A fitted one-vs-one estimator's solver attributes, one entry per problem."""

    objective_ = np.array([1.5, 2.5])
    n_iter_ = np.array([3, 5])
    converged_ = np.array([True, False])
    fit_status_ = np.array([0, 1])
    kernel_weights_ = np.array([[0.2, 0.8], [0.6, 0.4]])


def test_solver_diagnostics_aggregate_the_one_vs_one_problems():
    """What a record (and the tables' ⚠ / ° marks) reads of a fitted model: the
    objectives and iterations summed over the problems, converged only if every
    problem did, the worst fit status, the kernel weights averaged over pairs."""
    from runners.protocols import solver_diagnostics

    d = solver_diagnostics(_Fitted())
    assert d["objective"] == 4.0 and d["n_iter"] == 8
    assert d["converged"] is False and d["fit_status"] == 1
    assert d["kernel_weights"] == pytest.approx([0.4, 0.6])
    one = _Fitted()
    one.converged_, one.kernel_weights_ = np.array([True, True]), np.array([0.3, 0.7])
    d = solver_diagnostics(one)
    assert d["converged"] is True and d["kernel_weights"] == pytest.approx([0.3, 0.7])
