"""Tests of the noisy datasets of wrbf Sec. 5.1."""

from __future__ import annotations

import numpy as np
import pytest

from datasets._noisy import (
    WRBF_DATASETS,
    make_noisy,
    noise_seed,
    noisy_pairs,
    scale_to_unit_range,
)

SEED = 42


def _sets():
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(50, 4))
    donor = rng.integers(0, 9, size=(12, 3)).astype(float)  # fewer rows and columns
    return X, donor


def test_pairs_are_the_42_noisy_sets():
    pairs = noisy_pairs()
    assert len(WRBF_DATASETS) == 7
    assert len(pairs) == 42 == len(set(pairs))
    assert all(o != d for o, d in pairs)
    assert pairs[:2] == [("breast_w", "ecoli"), ("breast_w", "glass")]
    assert noisy_pairs(["a", "b", "c"]) == [
        ("a", "b"),
        ("a", "c"),
        ("b", "a"),
        ("b", "c"),
        ("c", "a"),
        ("c", "b"),
    ]
    with pytest.raises(ValueError, match="must be distinct"):
        noisy_pairs(["a", "a"])


def test_seeds_are_stable_hashes_of_the_names():
    # fixed value: a change here silently changes every noisy dataset
    assert noise_seed("pima", "iris") == 0x67765E7CD7D88A5E
    seeds = {noise_seed(o, d) for o, d in noisy_pairs()}
    assert len(seeds) == 42
    assert noise_seed("pima", "iris") != noise_seed("iris", "pima")
    assert noise_seed("pima", "iris", 0) != noise_seed("pima", "iris", 1)
    assert all(0 <= s < 2**63 for s in seeds)


def test_shape_range_and_original_columns():
    X, donor = _sets()
    out = make_noisy(X, donor, seed=1)
    assert out.shape == (50, 8)
    assert out.min() >= -1.0 and out.max() <= 1.0
    np.testing.assert_allclose(out.min(axis=0), -1.0)
    np.testing.assert_allclose(out.max(axis=0), 1.0)
    np.testing.assert_allclose(out[:, :4], scale_to_unit_range(X))


def test_noise_values_come_from_cycled_donor_features():
    """Column j draws from donor feature j mod d_donor, with replacement."""
    X, donor = _sets()
    raw = make_noisy(X, donor, seed=3, scale=False)
    np.testing.assert_array_equal(raw[:, :4], X)
    for j in range(4):
        assert set(raw[:, 4 + j]) <= set(donor[:, j % 3])
    # 50 draws from 12 rows: with replacement, values repeat
    assert len(np.unique(raw[:, 4])) < 50


def test_random_donor_columns_draw_from_donor_values():
    X, donor = _sets()
    raw = make_noisy(X, donor, seed=3, scale=False, donor_columns="random")
    allowed = set(donor.ravel())
    assert set(raw[:, 4:].ravel()) <= allowed


def test_deterministic_per_seed_and_donor():
    X, donor = _sets()
    a = make_noisy(X, donor, seed=noise_seed("x", "y"))
    np.testing.assert_array_equal(a, make_noisy(X, donor, seed=noise_seed("x", "y")))
    assert not np.array_equal(a, make_noisy(X, donor, seed=noise_seed("x", "z")))
    other_donor = np.random.default_rng(SEED + 1).normal(size=(30, 2))
    assert not np.array_equal(a, make_noisy(X, other_donor, seed=noise_seed("x", "y")))


def test_constant_columns_scale_to_zero():
    X, _ = _sets()
    X[:, 1] = 3.0
    donor = np.column_stack([np.full(12, 7.0), np.arange(12.0)])
    out = make_noisy(X, donor, seed=0)
    np.testing.assert_array_equal(out[:, 1], 0.0)
    np.testing.assert_array_equal(out[:, 4], 0.0)  # donor feature 0 is constant
    np.testing.assert_array_equal(out[:, 6], 0.0)  # ... reused by column 2


def test_missing_donor_values_are_never_drawn():
    X, donor = _sets()
    donor[::2, 0] = np.nan
    raw = make_noisy(X, donor, seed=5, scale=False)
    assert np.all(np.isfinite(raw))
    assert set(raw[:, 4]) <= set(donor[1::2, 0])


@pytest.mark.parametrize(
    "X, donor, kwargs, match",
    [
        (np.array([[1.0, np.nan], [2.0, 3.0]]), np.ones((3, 1)), {}, "X has missing"),
        (np.ones(3), np.ones((3, 1)), {}, "must be 2-D"),
        (np.ones((3, 1)), np.ones((3, 0)), {}, "X_donor has no features"),
        (np.ones((3, 1)), np.full((3, 1), np.nan), {}, "no finite value"),
        (np.ones((3, 1)), np.ones((3, 1)), {"donor_columns": "all"}, "donor_columns"),
    ],
    ids=["missing-original", "1-D", "empty-donor", "all-missing-donor", "option"],
)
def test_errors(X, donor, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_noisy(X, donor, seed=0, **kwargs)
