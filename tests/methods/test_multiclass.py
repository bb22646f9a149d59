"""methods._multiclass: the one multi-class rule (pairs, signs, votes, ties)."""

from __future__ import annotations

import numpy as np
import pytest

from methods._multiclass import (
    binary_problems,
    class_pairs,
    combine_decisions,
    encode_classes,
    ovo_scores,
    predict_from_decision,
)


def test_pairs_in_scikit_learn_order():
    assert class_pairs(4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def test_binary_problems_put_the_later_class_positive():
    y = np.array([2, 0, 1, 2, 0, 1])
    ((idx2, lab2),) = binary_problems((y > 0).astype(int), 2)
    np.testing.assert_array_equal(idx2, np.arange(6))
    np.testing.assert_array_equal(lab2, [1, -1, 1, 1, -1, 1])
    ovo = binary_problems(y, 3, "ovo")
    for (i, j), (idx, lab) in zip(class_pairs(3), ovo, strict=True):
        np.testing.assert_array_equal(idx, np.flatnonzero((y == i) | (y == j)))
        np.testing.assert_array_equal(lab, np.where(y[idx] == j, 1.0, -1.0))
    ovr = binary_problems(y, 3, "ovr")
    for c, (idx, lab) in enumerate(ovr):
        np.testing.assert_array_equal(idx, np.arange(6))
        np.testing.assert_array_equal(lab, np.where(y == c, 1.0, -1.0))
    with pytest.raises(ValueError, match="Unknown multi-class scheme 'ecoc'"):
        binary_problems(y, 3, "ecoc")


def test_votes_ties_and_zero_decisions():
    # pairs (0,1), (0,2), (1,2): a cycle 1 > 0, 0 > 2, 2 > 1 ties the votes 1-1-1;
    # the summed confidences break the tie
    D = np.array([[1.0, -0.5, 2.0]])
    scores = ovo_scores(D, 3)
    np.testing.assert_array_equal(np.floor(scores + 0.5), [[1, 1, 1]])
    assert predict_from_decision(scores, np.array(["a", "b", "c"]))[0] == "c"
    # a zero pair decision votes for the first class of the pair
    assert ovo_scores(np.zeros((1, 1)), 2)[0].tolist() == [1.0, 0.0]
    # two classes: the sign, 0 goes to classes_[0]
    d = combine_decisions(np.array([[0.0], [1e-300], [-1.0]]), 2)
    np.testing.assert_array_equal(predict_from_decision(d, np.array([5, 7])), [5, 7, 5])
    # confidences never outweigh a vote
    big = ovo_scores(np.array([[1e-9, 1e9, 1e9]]), 3)
    assert np.argmax(big) == 2 and np.all(np.abs(big - np.round(big)) < 1 / 3)


def test_one_class_is_a_clear_error():
    with pytest.raises(ValueError, match="MyEstimator needs samples of at least 2"):
        encode_classes(np.array(["x", "x"]), "MyEstimator")
