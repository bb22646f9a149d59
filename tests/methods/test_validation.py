"""The fast input check equals scikit-learn's ``validate_data`` on every input."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.validation import validate_data

from methods import SVM
from methods._multiclass import encode_classes
from methods._validation import is_clean_float_matrix, validate_float_input


class _Probe(BaseEstimator):
    pass


def _outcome(fn):
    """What a call returned, raised and warned, comparably."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn()
            error = None
        except Exception as exc:  # noqa: BLE001 - compared, not swallowed
            out, error = None, (type(exc), str(exc))
    return out, error, [(w.category, str(w.message)) for w in caught]


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, z in zip(a, b):
            _same(x, z)
        return
    if a is None:
        assert b is None
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.flags.c_contiguous == b.flags.c_contiguous
    np.testing.assert_array_equal(a, b)


rng = np.random.default_rng(0)
CLEAN = rng.normal(size=(6, 3))
NAN = CLEAN.copy()
NAN[2, 1] = np.nan
INF = CLEAN.copy()
INF[0, 0] = np.inf
HUGE = np.full((3, 2), 1e308)  # finite, but the sum overflows
Y_INT = np.array([0, 1, 0, 1, 1, 0])

FIT_CASES = {
    "clean": (CLEAN, Y_INT),
    "fortran": (np.asfortranarray(CLEAN), Y_INT),
    "strided rows": (CLEAN[::2], Y_INT[::2]),
    "strided y": (CLEAN[:3], Y_INT[::2]),
    "int X": (CLEAN.astype(np.int64), Y_INT),
    "float32 X": (CLEAN.astype(np.float32), Y_INT),
    "list X": (CLEAN.tolist(), Y_INT),
    "nan": (NAN, Y_INT),
    "inf": (INF, Y_INT),
    "overflowing sum": (HUGE, Y_INT[:3]),
    "1-D X": (CLEAN[:, 0], Y_INT),
    "no columns": (np.empty((6, 0)), Y_INT),
    "no rows": (np.empty((0, 3)), Y_INT[:0]),
    "y too short": (CLEAN, Y_INT[:5]),
    "y float": (CLEAN, Y_INT.astype(float)),
    "y strings": (CLEAN, np.array(list("abcabc"))),
    "y list": (CLEAN, Y_INT.tolist()),
    "y column": (CLEAN, Y_INT[:, None]),
    "y None": (CLEAN, None),
    "y nan": (CLEAN, np.array([0, 1, np.nan, 1, 0, 1])),
    "dataframe": (pd.DataFrame(CLEAN, columns=list("abc")), Y_INT),
}


@pytest.mark.parametrize("case", list(FIT_CASES))
@pytest.mark.parametrize("min_samples", [1, 2, 4])
def test_fit_check_equals_validate_data(case, min_samples):
    X, y = FIT_CASES[case]
    ours, theirs = _Probe(), _Probe()
    ours.feature_names_in_ = theirs.feature_names_in_ = np.array(["old"], dtype=object)
    got = _outcome(
        lambda: validate_float_input(ours, X, y, ensure_min_samples=min_samples)
    )
    want = _outcome(
        lambda: validate_data(
            theirs, X, y, dtype=np.float64, ensure_min_samples=min_samples
        )
    )
    assert got[1] == want[1] and got[2] == want[2]
    _same(got[0], want[0])
    assert vars(ours).keys() == vars(theirs).keys()
    for name in vars(theirs):
        _same(getattr(ours, name), getattr(theirs, name))


@pytest.mark.parametrize(
    "fit_on, X",
    [
        (CLEAN, CLEAN[:2]),
        (CLEAN, CLEAN[:, :2]),
        (CLEAN, NAN),
        (CLEAN, CLEAN.astype(np.float32)),
        (CLEAN, pd.DataFrame(CLEAN, columns=list("abc"))),
        (pd.DataFrame(CLEAN, columns=list("abc")), CLEAN),
        (
            pd.DataFrame(CLEAN, columns=list("abc")),
            pd.DataFrame(CLEAN, columns=list("abc")),
        ),
    ],
)
def test_predict_check_equals_validate_data(fit_on, X):
    ours, theirs = _Probe(), _Probe()
    validate_data(ours, fit_on, Y_INT)
    validate_data(theirs, fit_on, Y_INT)
    got = _outcome(lambda: validate_float_input(ours, X, reset=False))
    want = _outcome(lambda: validate_data(theirs, X, dtype=np.float64, reset=False))
    assert got[1] == want[1] and got[2] == want[2]
    _same(got[0], want[0])


def test_fast_path_returns_the_input_itself():
    """No copy for the arrays a grid search passes (the point of the fast path)."""
    est = _Probe()
    X, y = validate_float_input(est, CLEAN, Y_INT)
    assert X is CLEAN and est.n_features_in_ == 3
    assert is_clean_float_matrix(CLEAN, 1) and not is_clean_float_matrix(NAN, 1)
    assert not is_clean_float_matrix(HUGE, 1)


@pytest.mark.parametrize(
    "y", [Y_INT, Y_INT.astype(np.uint8), np.array([3, 3, 3]), np.array(list("abab"))]
)
def test_encode_classes_skips_only_a_check_that_cannot_fail(y):
    if len(np.unique(y)) < 2:
        with pytest.raises(ValueError, match="at least 2 classes"):
            encode_classes(y, "SVM")
        return
    classes, idx = encode_classes(y, "SVM")
    np.testing.assert_array_equal(classes[idx], y)
    with pytest.raises(ValueError, match="Unknown label type"):
        encode_classes(np.array([0.5, 1.5, 0.5]), "SVM")


def test_svm_precomputed_predict_keeps_its_shape_message():
    K = CLEAN @ CLEAN.T
    svm = SVM(kernel="precomputed").fit(K, Y_INT)
    with pytest.raises(ValueError, match=r"predict takes K\(X_test, X_train\)"):
        svm.predict(K[:, :4])
    np.testing.assert_array_equal(
        svm.predict(K),
        SVM(kernel="precomputed").fit(K.tolist(), Y_INT.tolist()).predict(K.tolist()),
    )


@pytest.mark.parametrize("n, n_classes", [(30, 20), (30, 15), (20, 20), (40, 3)])
def test_encode_classes_warns_as_sklearn_on_many_classes(n, n_classes):
    """scikit-learn's warning for more classes than half the samples is kept."""
    from sklearn.utils.multiclass import check_classification_targets

    y = np.arange(n) % n_classes
    got = _outcome(lambda: encode_classes(y, "SVM"))
    want = _outcome(lambda: check_classification_targets(y))
    assert got[2] == want[2]
