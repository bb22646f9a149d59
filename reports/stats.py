r"""Statistical tests and scores the five papers report.

- McNemar's test on the paired per-instance predictions of two classifiers, and the
  pairwise McNemar score of mlsvm Sec. VII and lmnnmkl Sec. 6.1: against every other
  method of the same experiment (dataset x kernel) a method gets 1 point for a
  significant win, 0.5 for no significant difference and 0 for a significant loss.
- Wilcoxon signed-rank and rank-sum tests (wrbf Sec. 5, z = -5.05) and Pearson's r
  (wrbf Fig. 2, r = 0.646).
- Binomial standard errors used by the reports to flag reproduced cells that lie
  within ``k`` standard errors of the published value.

References
----------
.. [1] Q. McNemar. Note on the sampling error of the difference between correlated
   proportions or percentages. Psychometrika 12(2), 1947.
.. [2] T. G. Dietterich. Approximate statistical tests for comparing supervised
   classification learning algorithms. Neural Computation 10(7), 1998.
.. [3] F. Wilcoxon. Individual comparisons by ranking methods. Biometrics Bulletin
   1(6), 1945.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy.special import chdtrc

# scipy.stats and statsmodels are imported where needed: importing scipy.stats
# alone costs ~0.45 s, a fifth of a Table I report, which needs neither for its
# default McNemar variant.

__all__ = [
    "McNemarResult",
    "binomial_se",
    "mcnemar",
    "mcnemar_outcomes",
    "mcnemar_scores",
    "pearson",
    "published_se_pct",
    "wilcoxon_rank_sum",
    "wilcoxon_signed_rank",
    "within_se",
]

MCNEMAR_METHODS = ("chi2_cc", "exact")
WIN, LOSS, TIE = "+", "-", "="
POINTS = {WIN: 1.0, TIE: 0.5, LOSS: 0.0}


class McNemarResult(NamedTuple):
    """Result of :func:`mcnemar`.

    Attributes
    ----------
    statistic : float
        ``(|n01 - n10| - 1)^2 / (n01 + n10)`` for ``"chi2_cc"``; ``min(n01, n10)``
        for ``"exact"``; 0.0 when ``n01 + n10 == 0``.
    pvalue : float
        Two-sided p-value.
    n01 : int
        Instances misclassified by A but not by B.
    n10 : int
        Instances misclassified by B but not by A.
    method : str
        ``"chi2_cc"`` or ``"exact"``.
    """

    statistic: float
    pvalue: float
    n01: int
    n10: int
    method: str


def _as_1d(a: object, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one entry per test instance); got shape {arr.shape}."
        )
    return arr


def _check_same_length(ref: np.ndarray, ref_name: str, arr: np.ndarray, name: str):
    if arr.shape[0] != ref.shape[0]:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but {ref_name} has {ref.shape[0]}; "
            "both must cover the same test instances in the same order."
        )


def _check_method(method: str) -> None:
    if method not in MCNEMAR_METHODS:
        raise ValueError(
            f"Unknown McNemar method {method!r}; choose one of {MCNEMAR_METHODS}."
        )


def _discordant(
    y_true: np.ndarray, pred_a: np.ndarray, pred_b: np.ndarray
) -> tuple[int, int]:
    wrong_a = pred_a != y_true
    wrong_b = pred_b != y_true
    return int(np.sum(wrong_a & ~wrong_b)), int(np.sum(wrong_b & ~wrong_a))


def _mcnemar_from_counts(n01: int, n10: int, method: str) -> McNemarResult:
    if n01 + n10 == 0:
        # Both classifiers err on exactly the same instances: no evidence at all.
        return McNemarResult(0.0, 1.0, n01, n10, method)
    if method == "chi2_cc":
        # statsmodels' mcnemar(exact=False, correction=True) computed as it does it
        # (chi2.sf(x, 1) is chdtrc(1, x)), equal to the last bit (tested).
        statistic = (abs(n01 - n10) - 1) ** 2 / (1.0 * (n01 + n10))
        return McNemarResult(
            float(statistic), float(chdtrc(1, statistic)), n01, n10, method
        )
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    table = np.array([[0, n01], [n10, 0]])
    res = sm_mcnemar(table, exact=True, correction=True)
    return McNemarResult(float(res.statistic), float(res.pvalue), n01, n10, method)


def mcnemar(
    y_true: Sequence | np.ndarray,
    pred_a: Sequence | np.ndarray,
    pred_b: Sequence | np.ndarray,
    *,
    method: str = "chi2_cc",
) -> McNemarResult:
    r"""McNemar's test of two classifiers on the same test instances.

    Only the discordant instances count ([2]_'s notation): ``n01`` instances are
    misclassified by A but not by B, ``n10`` by B but not by A. Under the null
    hypothesis both classifiers have the same error rate, so ``n01 ~ Bin(n01 + n10,
    1/2)``. Equals :func:`statsmodels.stats.contingency_tables.mcnemar` (``"exact"``
    calls it; ``"chi2_cc"`` repeats its arithmetic, bit for bit, without its import).

    Parameters
    ----------
    y_true : array-like of shape (n_instances,)
        True labels. With cross-validation, each instance's label once, predicted by
        the model of the fold that held it out (mlsvm Sec. VII, lmnnmkl Sec. 6.1).
    pred_a, pred_b : array-like of shape (n_instances,)
        Predicted labels of classifiers A and B on the same instances, same order.
    method : {"chi2_cc", "exact"}, default="chi2_cc"
        ``"chi2_cc"``: Edwards' continuity-corrected statistic
        :math:`(|n_{01} - n_{10}| - 1)^2 / (n_{01} + n_{10})` against
        :math:`\chi^2_1` (statsmodels ``exact=False, correction=True``; as there,
        the corrected difference is not clipped at 0, so ``n01 == n10`` gives the
        small positive statistic ``1 / (n01 + n10)``, never significant at 0.05).
        ``"exact"``: two-sided binomial test of ``n01`` against ``Bin(n01 + n10,
        1/2)``, statistic ``min(n01, n10)``.

    Returns
    -------
    McNemarResult
        ``(statistic, pvalue, n01, n10, method)``. If ``n01 + n10 == 0`` the
        classifiers err on the same instances: statistic 0.0 and p-value 1.0.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, no instance is given, or
        ``method`` is unknown.

    Examples
    --------
    >>> y = [0] * 20
    >>> a = [0] * 10 + [1] * 2 + [0] * 8
    >>> b = [1] * 10 + [0] * 2 + [0] * 8
    >>> res = mcnemar(y, a, b)
    >>> res.n01, res.n10, round(res.statistic, 4)
    (2, 10, 4.0833)
    """
    _check_method(method)
    y_true = _as_1d(y_true, "y_true")
    pred_a = _as_1d(pred_a, "pred_a")
    pred_b = _as_1d(pred_b, "pred_b")
    _check_same_length(y_true, "y_true", pred_a, "pred_a")
    _check_same_length(y_true, "y_true", pred_b, "pred_b")
    if y_true.shape[0] == 0:
        raise ValueError("McNemar's test needs at least one test instance; got 0.")
    n01, n10 = _discordant(y_true, pred_a, pred_b)
    return _mcnemar_from_counts(n01, n10, method)


def _outcome(res: McNemarResult, alpha: float) -> str:
    """Sign of A against B: '+' significant win, '-' significant loss, '=' otherwise.

    A wins when it makes fewer errors than B, i.e. ``n01 < n10`` (the concordant
    instances cancel out of ``errors_A - errors_B = n01 - n10``).
    """
    if res.pvalue < alpha and res.n01 != res.n10:
        return WIN if res.n01 < res.n10 else LOSS
    return TIE


def _check_preds(
    y_true: Sequence | np.ndarray, preds: Mapping[str, Sequence | np.ndarray]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    if len(preds) < 2:
        raise ValueError(
            f"McNemar scores compare methods pairwise and need at least 2 methods; "
            f"got {len(preds)} ({list(preds)})."
        )
    y_true = _as_1d(y_true, "y_true")
    if y_true.shape[0] == 0:
        raise ValueError("McNemar's test needs at least one test instance; got 0.")
    out = {}
    for name, pred in preds.items():
        arr = _as_1d(pred, f"preds[{name!r}]")
        _check_same_length(y_true, "y_true", arr, f"preds[{name!r}]")
        out[name] = arr
    return y_true, out


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha}.")


def mcnemar_outcomes(
    y_true: Sequence | np.ndarray,
    preds: Mapping[str, Sequence | np.ndarray],
    *,
    alpha: float = 0.05,
    method: str = "chi2_cc",
    against: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Pairwise McNemar outcomes of several methods on one experiment.

    Cell ``(A, B)`` reads ``'+'`` if A is significantly better than B (``p < alpha``
    and A makes fewer errors), ``'-'`` if significantly worse, ``'='`` if the
    difference is not significant; the diagonal is ``''``. lmnnmkl Table 1 prints
    the row of NR-LMNN-MKL and LMNN-MKL_P against ``against=["lmnn_h",
    "lmnn_mkl_cv"]``.

    Parameters
    ----------
    y_true : array-like of shape (n_instances,)
        True labels.
    preds : mapping of str to array-like of shape (n_instances,)
        Predicted labels per method, in the order of the rows.
    alpha : float, default=0.05
        Significance level (mlsvm Sec. VII and lmnnmkl Sec. 6.1 use 0.05).
    method : {"chi2_cc", "exact"}, default="chi2_cc"
        See :func:`mcnemar`.
    against : sequence of str, default=None
        Columns to keep (reference methods); ``None`` keeps all methods.

    Returns
    -------
    pandas.DataFrame
        Rows are the methods of ``preds``, columns the methods of ``against``.

    Raises
    ------
    ValueError
        With fewer than 2 methods, mismatched lengths, or an unknown name in
        ``against``.
    """
    _check_method(method)
    _check_alpha(alpha)
    y_true, preds = _check_preds(y_true, preds)
    names = list(preds)
    table = pd.DataFrame("", index=names, columns=names, dtype=object)
    for a, b in combinations(names, 2):
        n01, n10 = _discordant(y_true, preds[a], preds[b])
        sign = _outcome(_mcnemar_from_counts(n01, n10, method), alpha)
        table.loc[a, b] = sign
        table.loc[b, a] = {WIN: LOSS, LOSS: WIN, TIE: TIE}[sign]
    if against is not None:
        unknown = [c for c in against if c not in preds]
        if unknown:
            raise ValueError(
                f"against names methods {unknown} that are not in preds ({names})."
            )
        table = table.loc[:, list(against)]
    table.index.name = "method"
    table.columns.name = "versus"
    return table


def mcnemar_scores(
    y_true: Sequence | np.ndarray,
    preds: Mapping[str, Sequence | np.ndarray],
    *,
    alpha: float = 0.05,
    method: str = "chi2_cc",
) -> dict[str, float]:
    """McNemar scores of several methods on one experiment (dataset x kernel).

    mlsvm Sec. VII: "the algorithm was credited with one point if it was
    significantly better than another algorithm for the same experiment, half a
    point if there was no significance difference between the two algorithms, and
    no point if it was significantly worse"; lmnnmkl Sec. 6.1 uses the same schema.
    With ``m`` methods a method scores at most ``m - 1`` per experiment and the
    scores of all methods add up to ``m (m - 1) / 2``. Both hold for the published
    numbers: mlsvm Table I's linear block sums to 70 = 10 pairs x 7 datasets with a
    maximum of 28 = 4 x 7, its kernel blocks to 42 = 6 x 7 (max 21), Table II to
    24 = 3 pairs x 8 datasets (max 16); every lmnnmkl Table 1 row sums to 10 and
    every Table 2 row to 6. Totals over datasets are sums of these per-experiment
    scores.

    Parameters
    ----------
    y_true : array-like of shape (n_instances,)
        True labels.
    preds : mapping of str to array-like of shape (n_instances,)
        Predicted labels per method.
    alpha : float, default=0.05
        Significance level.
    method : {"chi2_cc", "exact"}, default="chi2_cc"
        See :func:`mcnemar`.

    Returns
    -------
    dict of str to float
        Score per method, in the order of ``preds``.
    """
    table = mcnemar_outcomes(y_true, preds, alpha=alpha, method=method)
    return {
        name: float(sum(POINTS[s] for s in row if s)) for name, row in table.iterrows()
    }


def wilcoxon_signed_rank(
    x: Sequence | np.ndarray, y: Sequence | np.ndarray
) -> tuple[float, float, float]:
    r"""Wilcoxon signed-rank test of paired samples (two-sided, normal approximation).

    Paired: ``x[i]`` and ``y[i]`` are the same experiment under two methods, as the
    4200 (RBF, WRBF) pairs of wrbf Fig. 2. Wraps :func:`scipy.stats.wilcoxon` with
    ``zero_method="wilcox"`` (zero differences dropped), ``correction=False`` and
    ``method="approx"``.

    Returns
    -------
    statistic : float
        :math:`\min(R^+, R^-)`, scipy's two-sided statistic, where :math:`R^+` sums
        the ranks of ``|x - y|`` over the pairs with ``x > y``.
    z : float
        :math:`(R^+ - n(n+1)/4) / \sigma` with :math:`n` the non-zero differences and
        the tie-corrected :math:`\sigma^2 = n(n+1)(2n+1)/24 - \sum_t (t^3 - t)/48`;
        signed, positive when ``x`` tends to exceed ``y`` (scipy's own
        ``zstatistic`` for a two-sided test is :math:`-|z|`; this is the
        ``alternative="greater"`` one).
    pvalue : float
        Two-sided normal-approximation p-value, :math:`2\Phi(-|z|)`.

    See Also
    --------
    wilcoxon_rank_sum : the unpaired test wrbf Sec. 5 names.
    """
    x = _as_1d(x, "x").astype(np.float64)
    y = _as_1d(y, "y").astype(np.float64)
    _check_same_length(x, "x", y, "y")
    kw = dict(zero_method="wilcox", correction=False, method="approx")
    from scipy import stats

    two_sided = stats.wilcoxon(x, y, **kw)
    greater = stats.wilcoxon(x, y, alternative="greater", **kw)
    return (
        float(two_sided.statistic),
        float(greater.zstatistic),
        float(two_sided.pvalue),
    )


def wilcoxon_rank_sum(
    x: Sequence | np.ndarray, y: Sequence | np.ndarray
) -> tuple[float, float, float]:
    r"""Wilcoxon rank-sum test of two independent samples (two-sided).

    wrbf Sec. 5 reports "the Wilcoxon Ranked-Sums Test" with z = -5.05 on the
    accuracies of the RBF and WRBF SVMs. Its data are paired (the same split under
    both kernels), for which :func:`wilcoxon_signed_rank` is the paired test; the
    reports compute both. The z is :func:`scipy.stats.ranksums`'s statistic:
    normal approximation without tie correction, positive when ``x`` tends to
    exceed ``y``.

    Returns
    -------
    statistic : float
        :math:`W`, the sum of the ranks of ``x`` in the pooled sample (average ranks
        for ties).
    z : float
        :math:`(W - n_x(n_x + n_y + 1)/2) / \sqrt{n_x n_y (n_x + n_y + 1) / 12}`.
    pvalue : float
        Two-sided p-value :math:`2\Phi(-|z|)`.
    """
    x = _as_1d(x, "x").astype(np.float64)
    y = _as_1d(y, "y").astype(np.float64)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(
            f"The rank-sum test needs both samples non-empty; got {x.shape[0]} and "
            f"{y.shape[0]} values."
        )
    from scipy import stats

    res = stats.ranksums(x, y)
    w = float(np.sum(stats.rankdata(np.concatenate([x, y]))[: x.shape[0]]))
    return w, float(res.statistic), float(res.pvalue)


def pearson(x: Sequence | np.ndarray, y: Sequence | np.ndarray) -> tuple[float, float]:
    """Pearson's correlation ``r`` and its two-sided p-value (wrbf Sec. 5, r = 0.646).

    Wraps :func:`scipy.stats.pearsonr`.
    """
    x = _as_1d(x, "x").astype(np.float64)
    y = _as_1d(y, "y").astype(np.float64)
    _check_same_length(x, "x", y, "y")
    from scipy import stats

    res = stats.pearsonr(x, y)
    return float(res.statistic), float(res.pvalue)


def binomial_se(p: float | np.ndarray, n: int | np.ndarray) -> float | np.ndarray:
    r"""Standard error :math:`\sqrt{p(1-p)/n}` of a proportion ``p`` over ``n`` trials.

    Raises
    ------
    ValueError
        If ``p`` lies outside [0, 1] or ``n`` is not positive.
    """
    p_arr = np.asarray(p, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any((p_arr < 0) | (p_arr > 1)):
        raise ValueError(f"p must lie in [0, 1]; got {p}.")
    if np.any(n_arr <= 0):
        raise ValueError(f"n must be a positive number of instances; got {n}.")
    se = np.sqrt(p_arr * (1.0 - p_arr) / n_arr)
    return float(se) if se.ndim == 0 else se


def published_se_pct(
    published_pct: float | np.ndarray, n: int | np.ndarray
) -> float | np.ndarray:
    r"""The SE band unit of :func:`within_se`, in percentage points.

    :math:`100 \sqrt{p(1-p)/n}` of the published proportion ``published_pct / 100``
    clipped to :math:`[1/(2n), 1 - 1/(2n)]`, so the SE a table prints beside a
    published 0% or 100% is the one its within-SE verdict used. NaN stays NaN.
    """
    pub = np.asarray(published_pct, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any(n_arr <= 0):
        raise ValueError(f"n must be a positive number of instances; got {n}.")
    half = 0.5 / n_arr
    with np.errstate(invalid="ignore"):
        p = np.clip(pub / 100.0, half, 1.0 - half)
        se = 100.0 * np.sqrt(p * (1.0 - p) / n_arr)
    return float(se) if se.ndim == 0 else se


def within_se(
    reproduced_pct: float | np.ndarray,
    published_pct: float | np.ndarray,
    n: int | np.ndarray,
    k: float = 2,
) -> bool | np.ndarray:
    r"""Whether a reproduced percentage lies within ``k`` binomial SEs of the published.

    The SE is that of the *published* proportion :math:`p` = ``published_pct / 100``
    over the ``n`` test instances (an error rate or accuracy pooled over the outer
    folds), in percentage points: :math:`100 \sqrt{p(1-p)/n}`. At :math:`p \in
    \{0, 1\}` that SE is 0, so :math:`p` is clipped to :math:`[1/(2n), 1 - 1/(2n)]`
    (half an instance), which keeps an exact 0% or 100% from demanding an exact
    match. A NaN on either side gives ``False``.

    Parameters
    ----------
    reproduced_pct, published_pct : float or array-like
        Percentages in [0, 100].
    n : int or array-like
        Number of test instances behind the published percentage.
    k : float, default=2
        Width of the band in standard errors.

    Returns
    -------
    bool or ndarray of bool
        ``|reproduced - published| <= k * SE``.

    Examples
    --------
    >>> within_se(23.0, 21.63, 208)  # SE = 2.85 points
    True
    >>> within_se(30.0, 21.63, 208)
    False
    """
    rep = np.asarray(reproduced_pct, dtype=np.float64)
    pub = np.asarray(published_pct, dtype=np.float64)
    band = k * np.asarray(published_se_pct(pub, n))
    with np.errstate(invalid="ignore"):
        out = np.abs(rep - pub) <= band
    return bool(out) if out.ndim == 0 else out
