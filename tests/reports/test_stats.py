"""Tests of reports/stats.py against hand-computed values, scipy and statsmodels."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from reports.stats import (
    McNemarResult,
    binomial_se,
    mcnemar,
    mcnemar_outcomes,
    mcnemar_scores,
    pearson,
    published_se_pct,
    wilcoxon_rank_sum,
    wilcoxon_signed_rank,
    within_se,
)


def _preds_with_errors(n: int, wrong: list[int]) -> np.ndarray:
    """Predictions for ``y_true = zeros(n)`` that are wrong exactly at ``wrong``."""
    pred = np.zeros(n, dtype=int)
    pred[wrong] = 1
    return pred


def _pair(n01: int, n10: int, n_both: int = 3, n_none: int = 5):
    """Labels and two prediction vectors with the given discordant counts."""
    n = n01 + n10 + n_both + n_none
    a_wrong = list(range(n01)) + list(range(n01 + n10, n01 + n10 + n_both))
    b_wrong = list(range(n01, n01 + n10 + n_both))
    return (
        np.zeros(n, int),
        _preds_with_errors(n, a_wrong),
        _preds_with_errors(n, b_wrong),
    )


# --------------------------------------------------------------------- McNemar


def test_mcnemar_chi2_cc_hand_computed():
    y, a, b = _pair(10, 2)
    res = mcnemar(y, a, b)
    assert isinstance(res, McNemarResult)
    assert (res.n01, res.n10, res.method) == (10, 2, "chi2_cc")
    # (|10 - 2| - 1)^2 / 12 = 49 / 12
    assert res.statistic == pytest.approx(49 / 12)
    assert res.statistic == pytest.approx(4.0833, abs=1e-4)
    assert res.pvalue == pytest.approx(stats.chi2.sf(49 / 12, df=1))
    assert res.pvalue == pytest.approx(0.04331, abs=1e-5)


def test_mcnemar_is_symmetric_in_the_two_classifiers():
    y, a, b = _pair(7, 1)
    ab, ba = mcnemar(y, a, b), mcnemar(y, b, a)
    assert (ab.n01, ab.n10) == (ba.n10, ba.n01)
    assert ab.statistic == pytest.approx(ba.statistic)
    assert ab.pvalue == pytest.approx(ba.pvalue)


@pytest.mark.parametrize("n01,n10", [(10, 2), (0, 6), (5, 5), (13, 4), (1, 0)])
def test_mcnemar_exact_matches_binomtest(n01, n10):
    y, a, b = _pair(n01, n10)
    res = mcnemar(y, a, b, method="exact")
    assert res.statistic == min(n01, n10)
    expected = stats.binomtest(n01, n01 + n10, 0.5).pvalue
    assert res.pvalue == pytest.approx(expected)


@pytest.mark.parametrize("n01,n10", [(10, 2), (0, 6), (5, 5), (40, 25), (3, 4)])
@pytest.mark.parametrize("method", ["chi2_cc", "exact"])
def test_mcnemar_agrees_with_statsmodels(n01, n10, method):
    y, a, b = _pair(n01, n10, n_both=7, n_none=11)
    res = mcnemar(y, a, b, method=method)
    table = [[11, n10], [n01, 7]]  # statsmodels reads the off-diagonal only
    ref = sm_mcnemar(table, exact=method == "exact", correction=True)
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)


def test_mcnemar_chi2_cc_is_statsmodels_to_the_last_bit():
    # The chi2_cc variant repeats statsmodels' arithmetic without importing it;
    # a report's p-values (and so its written files) must not move by one bit.
    from reports.stats import _mcnemar_from_counts

    for n01 in range(0, 80):
        for n10 in range(0, 80, 3):
            if n01 + n10 == 0:
                continue
            res = _mcnemar_from_counts(n01, n10, "chi2_cc")
            ref = sm_mcnemar([[0, n01], [n10, 0]], exact=False, correction=True)
            assert res.statistic == float(ref.statistic), (n01, n10)
            assert res.pvalue == float(ref.pvalue), (n01, n10)


@pytest.mark.parametrize("method", ["chi2_cc", "exact"])
def test_mcnemar_no_discordant_pairs(method):
    y = np.array([0, 1, 1, 0])
    pred = np.array([0, 1, 0, 0])  # both wrong on the same instance
    res = mcnemar(y, pred, pred.copy(), method=method)
    assert res == McNemarResult(0.0, 1.0, 0, 0, method)


def test_mcnemar_uses_errors_not_labels():
    # Multi-class: A and B are both wrong on instance 0 with different labels; that
    # is a concordant error, not a discordant pair.
    y = np.array(["a", "b", "c", "c"])
    a = np.array(["b", "b", "c", "a"])
    b = np.array(["c", "b", "c", "c"])
    res = mcnemar(y, a, b)
    assert (res.n01, res.n10) == (1, 0)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (
            dict(y_true=[0, 1, 1], pred_a=[0, 1], pred_b=[0, 1, 1]),
            "pred_a has 2 entries but y_true has 3",
        ),
        (
            dict(y_true=[0, 1, 1], pred_a=[0, 1, 0], pred_b=[0, 1, 1, 1]),
            "pred_b has 4 entries but y_true has 3",
        ),
        (dict(y_true=[[0, 1]], pred_a=[0, 1], pred_b=[0, 1]), "y_true must be 1-D"),
        (dict(y_true=[], pred_a=[], pred_b=[]), "at least one test instance"),
        (
            dict(y_true=[0], pred_a=[0], pred_b=[0], method="chi2"),
            "Unknown McNemar method 'chi2'",
        ),
    ],
    ids=["length-a", "length-b", "not-1d", "empty", "unknown-method"],
)
def test_mcnemar_input_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mcnemar(**kwargs)


# ------------------------------------------------------------- McNemar scores

N = 40
THREE = {
    # A errs on {0, 1}, B on {0..11}, C on {0..5}; every error set nests, so
    # A vs B: n01 = 0, n10 = 10 -> chi2_cc = 81/10 = 8.1, p = 0.0044: A wins.
    # A vs C: n01 = 0, n10 = 4  -> chi2_cc = 9/4 = 2.25, p = 0.134: no difference
    #         (A has fewer errors, but not significantly).
    # B vs C: n01 = 6, n10 = 0  -> chi2_cc = 25/6 = 4.17, p = 0.041: C wins.
    "A": _preds_with_errors(N, [0, 1]),
    "B": _preds_with_errors(N, list(range(12))),
    "C": _preds_with_errors(N, list(range(6))),
}
Y0 = np.zeros(N, dtype=int)


@pytest.mark.parametrize("method", ["chi2_cc", "exact"])
def test_mcnemar_scores_hand_example(method):
    # Exact p-values: A-B 2/2^10 = 0.002, A-C 2/2^4 = 0.125, B-C 2/2^6 = 0.031.
    scores = mcnemar_scores(Y0, THREE, method=method)
    assert scores == {"A": 1.5, "B": 0.0, "C": 1.5}
    assert list(scores) == ["A", "B", "C"]


def test_mcnemar_scores_depend_on_alpha():
    # At alpha = 0.2 the A-C difference (p = 0.134) becomes significant.
    assert mcnemar_scores(Y0, THREE, alpha=0.2) == {"A": 2.0, "B": 0.0, "C": 1.0}
    # At alpha = 0.01 only A-B (p = 0.0044) stays significant.
    assert mcnemar_scores(Y0, THREE, alpha=0.01) == {"A": 1.5, "B": 0.5, "C": 1.0}


def test_mcnemar_scores_equal_errors_is_a_tie_at_any_alpha():
    # 5 discordant each way: chi2_cc = (|5 - 5| - 1)^2 / 10 = 0.1, p = 0.75 (the
    # tie guard is exercised by the test below, where p < alpha).
    preds = {
        "A": _preds_with_errors(N, list(range(5))),
        "B": _preds_with_errors(N, list(range(5, 10))),
    }
    assert mcnemar_scores(Y0, preds, alpha=0.5) == {"A": 0.5, "B": 0.5}


def test_equal_discordant_counts_are_a_tie_even_when_p_is_below_alpha():
    """The guard of ``_outcome``: with n01 = n10 = 1, chi2_cc's uncorrected-sign
    statistic (|1 - 1| - 1)^2 / 2 = 0.5 has p = chi2.sf(0.5, 1) = 0.4795, below an
    alpha of 0.5, yet neither classifier makes fewer errors: no winner."""
    y, a, b = _pair(1, 1)
    res = mcnemar(y, a, b)
    assert res.pvalue == pytest.approx(stats.chi2.sf(0.5, df=1))
    assert res.pvalue < 0.5
    preds = {"A": a, "B": b}
    assert mcnemar_scores(y, preds, alpha=0.5) == {"A": 0.5, "B": 0.5}
    assert mcnemar_outcomes(y, preds, alpha=0.5).loc["A", "B"] == "="


def test_significance_is_p_strictly_below_alpha():
    """mlsvm Sec. VII / lmnnmkl Sec. 6.1 count a difference as significant at
    p < 0.05: a p-value equal to alpha is not. The exact test's A-C p-value of
    THREE is 2 / 2^4 = 0.125 exactly (binomtest), so at alpha = 0.125 A and C tie,
    and just above it A wins."""
    p = stats.binomtest(0, 4, 0.5).pvalue
    assert p == 0.125
    at = mcnemar_outcomes(Y0, THREE, alpha=0.125, method="exact")
    assert at.loc["A", "C"] == "=" and at.loc["C", "A"] == "="
    above = mcnemar_outcomes(Y0, THREE, alpha=0.126, method="exact")
    assert above.loc["A", "C"] == "+" and above.loc["C", "A"] == "-"


def test_mcnemar_scores_sum_and_maximum():
    # Per experiment the scores add up to m (m - 1) / 2; each is at most m - 1.
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    preds = {
        f"m{i}": np.where(rng.random(200) < rate, 1 - y, y)
        for i, rate in enumerate([0.02, 0.12, 0.25, 0.38, 0.5])
    }
    scores = mcnemar_scores(y, preds)
    assert sum(scores.values()) == pytest.approx(5 * 4 / 2)
    assert max(scores.values()) <= 4
    assert scores["m0"] == 4.0 and scores["m4"] == 0.0


def test_mcnemar_outcomes_table():
    table = mcnemar_outcomes(Y0, THREE)
    assert list(table.index) == ["A", "B", "C"]
    assert table.loc["A", "B"] == "+" and table.loc["B", "A"] == "-"
    assert table.loc["A", "C"] == "=" and table.loc["C", "A"] == "="
    assert table.loc["C", "B"] == "+" and table.loc["B", "C"] == "-"
    assert all(table.loc[m, m] == "" for m in THREE)


def test_mcnemar_outcomes_against_reference_methods():
    # lmnnmkl Table 1 reports signs only against two reference methods.
    table = mcnemar_outcomes(Y0, THREE, against=["B", "C"])
    assert list(table.columns) == ["B", "C"]
    assert table.loc["A"].tolist() == ["+", "="]
    with pytest.raises(ValueError, match=r"against names methods \['D'\]"):
        mcnemar_outcomes(Y0, THREE, against=["D"])


@pytest.mark.parametrize(
    "preds,kwargs,match",
    [
        ({"A": THREE["A"]}, {}, r"at least 2 methods; got 1 \(\['A'\]\)"),
        (
            {"A": THREE["A"], "B": THREE["B"][:-1]},
            {},
            r"preds\['B'\] has 39 entries but y_true has 40",
        ),
        (THREE, {"alpha": 1.5}, r"alpha must lie in \(0, 1\)"),
        (THREE, {"method": "fisher"}, "Unknown McNemar method"),
    ],
    ids=["one-method", "length", "alpha", "method"],
)
def test_mcnemar_scores_input_errors(preds, kwargs, match):
    with pytest.raises(ValueError, match=match):
        mcnemar_scores(Y0, preds, **kwargs)


# -------------------------------------------------------------------- Wilcoxon

X = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.5, 11.0, 3.0])
Y = np.array([1.5, 1.0, 2.9, 4.0, 7.0, 5.0, 6.0, 8.5, 8.0, 9.0, 10.0, 1.0])


def test_wilcoxon_signed_rank_against_hand_formula():
    d = X - Y
    d = d[d != 0]  # zero_method="wilcox"
    n = d.size
    r = stats.rankdata(np.abs(d))
    r_plus, r_minus = r[d > 0].sum(), r[d < 0].sum()
    _, t = np.unique(np.abs(d), return_counts=True)
    sigma = np.sqrt(n * (n + 1) * (2 * n + 1) / 24 - np.sum(t**3 - t) / 48)
    z = (r_plus - n * (n + 1) / 4) / sigma
    assert np.any(t > 1)  # the data carry a tie, so the correction is exercised
    stat, z_got, p = wilcoxon_signed_rank(X, Y)
    assert stat == pytest.approx(min(r_plus, r_minus))
    assert z_got == pytest.approx(z)
    assert z_got > 0  # X tends to exceed Y
    assert p == pytest.approx(2 * stats.norm.sf(abs(z)))


def test_wilcoxon_signed_rank_matches_scipy_and_is_antisymmetric():
    ref = stats.wilcoxon(X, Y, method="approx", correction=False)
    stat, z, p = wilcoxon_signed_rank(X, Y)
    assert (stat, p) == pytest.approx((ref.statistic, ref.pvalue))
    assert -abs(z) == pytest.approx(ref.zstatistic)
    stat_r, z_r, p_r = wilcoxon_signed_rank(Y, X)
    assert (stat_r, z_r, p_r) == pytest.approx((stat, -z, p))


def test_wilcoxon_rank_sum_hand_example():
    # Pooled ranks of [3, 4, 5] among [1, 2]: 3 + 4 + 5 = 12; mean 3 * 6 / 2 = 9;
    # sd sqrt(3 * 2 * 6 / 12) = sqrt(3).
    w, z, p = wilcoxon_rank_sum([3.0, 4.0, 5.0], [1.0, 2.0])
    assert w == 12.0
    assert z == pytest.approx(np.sqrt(3))
    assert p == pytest.approx(2 * stats.norm.sf(np.sqrt(3)))


def test_wilcoxon_rank_sum_matches_scipy():
    ref = stats.ranksums(X, Y)
    w, z, p = wilcoxon_rank_sum(X, Y)
    assert (z, p) == pytest.approx((ref.statistic, ref.pvalue))
    assert w == pytest.approx(stats.rankdata(np.r_[X, Y])[: X.size].sum())


@pytest.mark.parametrize(
    "func,args,match",
    [
        (wilcoxon_signed_rank, ([1.0, 2.0], [1.0]), "y has 1 entries but x has 2"),
        (wilcoxon_rank_sum, ([], [1.0]), "got 0 and 1 values"),
        (pearson, ([1.0, 2.0, 3.0], [1.0, 2.0]), "y has 2 entries but x has 3"),
    ],
    ids=["signed-rank-length", "rank-sum-empty", "pearson-length"],
)
def test_paired_input_errors(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)


# --------------------------------------------------------- Pearson, binomial SE


def test_pearson():
    r, p = pearson(X, Y)
    ref = stats.pearsonr(X, Y)
    assert (r, p) == pytest.approx((ref.statistic, ref.pvalue))
    assert pearson([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])[0] == pytest.approx(1.0)


def test_binomial_se():
    assert binomial_se(0.25, 100) == pytest.approx(np.sqrt(0.1875 / 100))
    assert binomial_se(0.0, 10) == 0.0
    np.testing.assert_allclose(
        binomial_se(np.array([0.5, 0.1]), 100), [0.05, 0.03], rtol=1e-12
    )
    with pytest.raises(ValueError, match="p must lie in"):
        binomial_se(1.2, 10)
    with pytest.raises(ValueError, match="n must be a positive"):
        binomial_se(0.5, 0)


def test_within_se():
    # mlsvm Table I, sonar, SVMm linear: 21.63% of 208; SE = 2.855 points.
    se = 100 * binomial_se(0.2163, 208)
    assert se == pytest.approx(2.855, abs=1e-3)
    assert within_se(23.0, 21.63, 208)
    assert within_se(21.63 + 2 * se - 1e-9, 21.63, 208)
    assert not within_se(21.63 + 2 * se + 1e-6, 21.63, 208)
    assert not within_se(30.0, 21.63, 208)
    assert within_se(25.0, 21.63, 208, k=1.5) is True
    assert within_se(26.0, 21.63, 208, k=1) is False


def test_within_se_band_includes_its_edge():
    """``|reproduced - published| <= k SE``: at p = 0.5 and n = 100 the SE is exactly
    100 sqrt(0.25 / 100) = 5 points, so 40 and 60 lie on the 2 SE band's edges and
    are within it; 60 is outside the 1 SE band."""
    assert published_se_pct(50.0, 100) == 5.0
    assert within_se(60.0, 50.0, 100) and within_se(40.0, 50.0, 100)
    assert within_se(55.0, 50.0, 100, k=1)
    assert not within_se(60.0, 50.0, 100, k=1)
    np.testing.assert_array_equal(
        within_se([40.0, 60.0, 60.5], [50.0] * 3, 100), [True, True, False]
    )


def test_within_se_guards_zero_and_one():
    # p = 0 is clipped to half an instance, 0.5 / 100: SE = 0.705 points.
    assert within_se(1.0, 0.0, 100)
    assert not within_se(2.0, 0.0, 100)
    assert within_se(99.0, 100.0, 100)
    assert not within_se(98.0, 100.0, 100)


def test_printed_se_is_the_band_unit_of_within_se():
    """A table prints the SE its verdict used, also beside a published 0% or 100%."""
    assert published_se_pct(21.63, 208) == pytest.approx(100 * binomial_se(0.2163, 208))
    for pub in (0.0, 100.0):
        se = published_se_pct(pub, 100)
        assert se == pytest.approx(100 * np.sqrt(0.005 * 0.995 / 100))
        assert within_se(pub + (1 if pub == 0 else -1) * (2 * se - 1e-9), pub, 100)
        assert not within_se(pub + (1 if pub == 0 else -1) * (2 * se + 1e-9), pub, 100)
    assert np.isnan(published_se_pct(np.nan, 100))


def test_within_se_vectorized_and_nan():
    got = within_se([23.0, 30.0, np.nan], [21.63, 21.63, 21.63], 208)
    assert got.tolist() == [True, False, False]
