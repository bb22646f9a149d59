"""Preprocessing steps: whole-data ``preprocess`` and fold-wise transformers."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.svm import SVC

from datasets import (
    PAPER_PREPROCESSING,
    PAPER_PREPROCESSING_SOURCE,
    PAPERS,
    PREPROCESSING_STEPS,
    SymmetricMinMaxScaler,
    load,
    make_preprocessor,
    preprocess,
)


@pytest.fixture
def X():
    rng = np.random.default_rng(42)
    X = rng.normal(loc=3.0, scale=[1.0, 10.0, 0.1, 5.0], size=(50, 4))
    X[:, 2] = 0.1  # a constant column, with a value that is not exact in binary
    return X


def test_standardize_mean_zero_std_one(X):
    out = preprocess(X, "standardize")
    varying = [0, 1, 3]
    np.testing.assert_allclose(out[:, varying].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(out[:, varying].std(axis=0), 1.0)
    assert np.all(out[:, 2] == 0.0)
    assert np.isfinite(out).all()


def test_minmax_pm1_range(X):
    out = preprocess(X, "minmax_pm1")
    varying = [0, 1, 3]
    np.testing.assert_allclose(out[:, varying].min(axis=0), -1.0)
    np.testing.assert_allclose(out[:, varying].max(axis=0), 1.0)
    assert np.all(out[:, 2] == 0.0)
    assert np.isfinite(out).all()


def test_none_is_identity_copy(X):
    out = preprocess(X, "none")
    np.testing.assert_array_equal(out, X)
    assert out is not X


@pytest.mark.parametrize("step", PREPROCESSING_STEPS)
def test_preprocess_leaves_input_alone(X, step):
    before = X.copy()
    preprocess(X, step)
    np.testing.assert_array_equal(X, before)


def test_make_preprocessor_types():
    assert isinstance(make_preprocessor("standardize"), StandardScaler)
    scaler = make_preprocessor("minmax_pm1")
    assert isinstance(scaler, MinMaxScaler)
    assert tuple(scaler.feature_range) == (-1, 1)
    assert clone(scaler).get_params() == scaler.get_params()


@pytest.mark.parametrize("step", PREPROCESSING_STEPS)
def test_foldwise_fit_on_train_only(X, step):
    train, test = X[:40], X[40:]
    transformer = make_preprocessor(step).fit(train)
    np.testing.assert_allclose(
        transformer.transform(test), make_preprocessor(step).fit(train).transform(test)
    )
    np.testing.assert_allclose(
        transformer.transform(train), preprocess(train, step), atol=1e-12
    )


def test_symmetric_minmax_constant_column_round_trip(X):
    scaler = SymmetricMinMaxScaler().fit(X)
    out = scaler.transform(X)
    assert np.all(out[:, 2] == 0.0)
    np.testing.assert_allclose(scaler.inverse_transform(out), X)


def test_symmetric_minmax_partial_fit_matches_fit(X):
    batch = SymmetricMinMaxScaler().partial_fit(X[:25]).partial_fit(X[25:])
    np.testing.assert_allclose(
        batch.transform(X), SymmetricMinMaxScaler().fit(X).transform(X)
    )


def test_unknown_step():
    with pytest.raises(ValueError, match="Unknown preprocessing step 'zscore'"):
        preprocess(np.zeros((2, 2)), "zscore")


def test_pipeline_on_a_dataset():
    ds = load("iris")
    model = make_pipeline(make_preprocessor(ds.spec.preprocessing["wrbf"]), SVC())
    assert model.fit(ds.X, ds.y).score(ds.X, ds.y) > 0.9


def test_every_paper_has_a_default_step():
    assert set(PAPER_PREPROCESSING) == set(PAPERS)
    assert set(PAPER_PREPROCESSING.values()) <= set(PREPROCESSING_STEPS)


def test_the_registry_does_not_import_scikit_learn():
    """kml-report reads dataset names: importing the package must not pull in
    scikit-learn (and scipy.stats with it, ~1 s); a transformer still can be made."""
    import subprocess
    import sys

    code = (
        "import sys, datasets; datasets.list_datasets(); "
        "assert 'sklearn' not in sys.modules, 'sklearn imported'; "
        "from datasets import SymmetricMinMaxScaler, make_preprocessor; "
        "assert type(make_preprocessor('minmax_pm1')) is SymmetricMinMaxScaler; "
        "import pickle; pickle.loads(pickle.dumps(SymmetricMinMaxScaler()))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_each_paper_default_step_is_the_one_its_text_states():
    """Papers A and B standardize (Sec. V, Sec. 5), D and E scale to [-1, 1]
    (Sec. 5.1, Sec. 4); C is silent and standardized (a stated deviation)."""
    assert dict(PAPER_PREPROCESSING) == {
        "mlsvm": "standardize",
        "lmnnmkl": "standardize",
        "kdml": "standardize",
        "wrbf": "minmax_pm1",
        "arbf": "minmax_pm1",
    }
    for paper, step in PAPER_PREPROCESSING.items():
        quoted = PAPER_PREPROCESSING_SOURCE[paper]
        assert ("[-1, 1]" in quoted or "-1 and 1" in quoted) == (step == "minmax_pm1")


@pytest.mark.parametrize("step", ["none", "standardize", "minmax_pm1"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_input_is_refused_not_passed_through(step, value):
    """The scalers pass NaN through (the docstring promises no NaN out); inf gave
    scikit-learn's message, which does not say which column."""
    X = np.array([[1.0, 2.0, 3.0], [4.0, value, 6.0], [7.0, 8.0, 9.0]])
    with pytest.raises(ValueError, match=r"needs finite features; X has 1 NaN/inf "
                       r"values in columns \[1\]"):
        preprocess(X, step)


def test_symmetric_minmax_constant_column_elsewhere_is_documented():
    """The docstring said transform gives the middle for a constant training
    column, as svm-scale does; that holds at the constant only: another value is
    scaled as by MinMaxScaler, with a unit range (what the docstring now says)."""
    scaler = SymmetricMinMaxScaler().fit(np.array([[0.0, 5.0], [2.0, 5.0]]))
    np.testing.assert_array_equal(scaler.transform([[1.0, 5.0]]), [[0.0, 0.0]])
    np.testing.assert_array_equal(scaler.transform([[1.0, 6.0]]), [[0.0, 2.0]])
    assert "as if the column had a range of 1" in " ".join(
        SymmetricMinMaxScaler.__doc__.split()
    )
