"""``kml-report compare``: a method of your own against an experiment's baselines.

The protocol's splits are seeded by (dataset, seed), so a run of a new method in
an experiment's sweep is tested on the same instances as the paper's methods. For
every cell (dataset, kernel, seed) with a record of the new method, this sets its
accuracy beside each baseline's and tests the difference on the paired results:

- each instance tested once (k-fold CV: mlsvm, lmnnmkl Table 1): McNemar's test
  on the predictions paired instance by instance (``reports.stats.mcnemar``, as
  the papers' tables);
- instances tested in several splits (repeated random splits: wrbf, kdml, arbf,
  lmnnmkl Table 2): the pooled predictions are not independent, so the Wilcoxon
  signed-rank test of the per-split accuracies, paired by split, with scipy's
  small-sample p-value up to 50 splits (:func:`_signed_rank_p`).

Baselines are the experiment's own runs (its config, no command-line overrides),
but for other methods of one's own (``_target_`` outside this project's packages),
which --against names when wanted; the new method's runs may carry overrides
(its own config directory, its grid).
For each, the newest record per cell counts, as in the paper's reports, except
that of the new method's records the newest one run with the experiment's
protocol wins over any newer one that overrides it (``protocol=smoke``,
``protocol.*=``): trying the method on the smoke protocol must not hide its
earlier run with the experiment's. A cell whose every run of the new method
overrides the protocol is listed with the override to drop, not compared; so is
a cell whose chosen record failed.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reports.guard import ReportError, close_match
from reports.records import (
    load_records,
    override_key,
    sweep_keys,
    sweep_params,
    variant_of,
)
from reports.stats import LOSS, TIE, WIN, _outcome, mcnemar

COLUMNS = [
    "dataset", "kernel", "seed", "baseline", "n_test", "accuracy_new",
    "accuracy_baseline", "test", "n01", "n10", "pvalue", "outcome", "code_new",
    "code_baseline", "overrides_new",
]  # fmt: skip


def _no_left_out(record: logging.LogRecord) -> bool:
    return "left out" not in str(record.msg)


class _Once(logging.Filter):
    """Each message once: :func:`compare` reads the store twice (every config,
    then the experiment's own runs), and a warning about it (records from several
    code versions, a damaged record) was printed by both reads."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if text in self.seen:
            return False
        self.seen.add(text)
        return True


def _labels(values: Sequence[Any]) -> np.ndarray:
    """Labels as numbers when they all are (1 and 1.0 agree), else as strings."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return np.asarray([str(v) for v in values])


def _tested(rec: dict[str, Any]) -> tuple[np.ndarray, ...]:
    """(split, instance, true, predicted) of a record, ordered by split and instance."""
    p = rec["predictions"]
    split, index = np.asarray(p["fold"]), np.asarray(p["index"])
    order = np.lexsort((index, split))
    return (split[order], index[order], _labels(p["y_true"])[order],
            _labels(p["y_pred"])[order])  # fmt: skip


def protocol_overrides(record: dict[str, Any]) -> list[str]:
    """The overrides of ``record`` that change its experiment's protocol.

    Those :func:`reports.records.variant_of` names whose key is ``protocol`` or
    ``protocol.*`` (``protocol=smoke``, ``protocol.repetitions=3``); a protocol
    the experiment file itself selects or sweeps is its own. ``[]`` for a record
    without stored overrides (written before the runner kept them): what it was
    tested on is still checked instance by instance (:func:`_pair`).

    Parameters
    ----------
    record : dict
        A record as :func:`reports.records.load_records` returns it.

    Returns
    -------
    list of str
    """
    if record.get("overrides") is None:
        return []
    return [
        o for o in variant_of(record) if override_key(o).split(".")[0] == "protocol"
    ]


def newest_per_cell(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (dataset, kernel, seed), the newest record run with the protocol of the
    experiment, or the newest of all when every one overrides it.

    ``records`` are one method's, one per config (``per_config=True``): a newer
    run on the smoke protocol must not displace the run that can be compared.
    """

    def rank(r: dict[str, Any]) -> tuple[bool, str]:
        # the experiment's protocol first, then the newest
        return not protocol_overrides(r), r.get("finished", "")

    chosen: dict[tuple, dict[str, Any]] = {}
    for r in records:
        cell = (r["dataset"], r["kernel"], r["seed"])
        if cell not in chosen or rank(r) > rank(chosen[cell]):
            chosen[cell] = r
    return list(chosen.values())


def _signed_rank_p(diff: np.ndarray) -> float:
    """Two-sided p of Wilcoxon's signed-rank test of the per-split differences.

    :func:`scipy.stats.wilcoxon`'s own choice of method (zero differences
    dropped): its exact null distribution up to 50 splits when no difference is
    zero or tied, else all 2^n sign flips up to 13 splits (arbf's 10), else the
    normal approximation (wrbf's 100, as :func:`reports.stats.
    wilcoxon_signed_rank` for its report). The normal approximation alone is
    anti-conservative on few splits: on arbf heart's 10 (5 won, 1 lost, 4 tied)
    it gives p = 0.056 (0.046, a "+", with the ties broken in the last bit),
    where the test's null distribution gives 0.094.
    """
    from scipy import stats

    return float(stats.wilcoxon(diff, zero_method="wilcox").pvalue)


def _pair(new: dict[str, Any], base: dict[str, Any], alpha: float,
          mcnemar_method: str) -> dict[str, Any]:  # fmt: skip
    s1, i1, t1, p1 = _tested(new)
    s2, i2, t2, p2 = _tested(base)
    if not (np.array_equal(s1, s2) and np.array_equal(i1, i2)):
        raise ReportError(
            f"{new['label']} and {base['label']} of {new['dataset']!r} were tested "
            "on other instances; run the new method with the experiment's protocol "
            "(no protocol.* overrides)"
        )
    if t1.dtype != t2.dtype or not np.array_equal(t1, t2):
        raise ReportError(
            f"{new['label']} and {base['label']} of {new['dataset']!r} disagree on "
            "the true labels of the same instances: not the same data"
        )
    right1, right2 = p1 == t1, p2 == t2
    row: dict[str, Any] = {
        "n_test": len(t1),
        "accuracy_new": 100 * float(right1.mean()),
        "accuracy_baseline": 100 * float(right2.mean()),
    }
    if len(np.unique(i1)) == len(i1):  # each instance once: McNemar
        res = mcnemar(t1, p1, p2, method=mcnemar_method)
        row.update(test=f"McNemar ({mcnemar_method})", n01=res.n01, n10=res.n10,
                   pvalue=res.pvalue, outcome=_outcome(res, alpha))  # fmt: skip
        return row
    splits, at = np.unique(s1, return_inverse=True)
    n = np.bincount(at)
    won1, won2 = np.bincount(at, weights=right1), np.bincount(at, weights=right2)
    a1, a2 = won1 / n, won2 / n
    # the differences from the counts, (won1 - won2) / n: two splits that differ by
    # as many test points of as many tie exactly, as the ranks need; a1 - a2 does
    # not (45/54 - 43/54 and 47/54 - 45/54 differ in the last bit), and those
    # broken ties moved p across alpha (arbf heart: 0.046 against 0.056)
    diff = (won1 - won2) / n
    pvalue = 1.0 if not diff.any() else _signed_rank_p(diff)
    better = a1.mean() > a2.mean()
    outcome = TIE if not (pvalue < alpha and a1.mean() != a2.mean()) else (
        WIN if better else LOSS)  # fmt: skip
    row.update(test=f"Wilcoxon over {len(splits)} splits", n01=np.nan, n10=np.nan,
               pvalue=pvalue, outcome=outcome)  # fmt: skip
    return row


def _is_baseline(
    record: dict[str, Any], method: str, against: Sequence[str] | None
) -> bool:
    """Whether an own run of the experiment is one of the comparison's baselines:
    a method --against names, or by default any but the new method and the
    methods of one's own (a ``_target_`` outside this project's packages, whose
    digest the record keeps in ``method_sources``): run beside the paper's
    methods, ``mine`` is the experiment's own run too, but not a baseline of
    ``mine2`` unless asked for."""
    if record["method"] == method:
        return False
    if against is not None:
        return record["method"] in against
    return not record["config"].get("method_sources")


def _other_data(new: dict[str, Any], base: dict[str, Any], method: str) -> str | None:
    """Why ``new`` and ``base`` did not read the same data, or None.

    Records since data_digest keep a digest of the arrays their splits saw and the
    copy each dataset came from (``data_sources``). Two runs of one cell whose
    digests differ read other features (another copy of the dataset: a mirror
    file replaced, the OpenML fallback), which the check of labels and instances
    in :func:`_pair` may not see; their accuracies are not paired. A record
    without the digest (older) is not judged.
    """
    d1, d2 = new.get("data_digest"), base.get("data_digest")
    if not d1 or not d2 or d1 == d2:
        return None

    def read(r: dict[str, Any]) -> str:
        sources = r.get("data_sources") or {}
        return ", ".join(f"{k} from {v}" for k, v in sorted(sources.items()))

    return (
        f"not compared with {base['method']}: the two runs read other data "
        f"(data_digest {d1} against {d2}; {method} read {read(new) or '?'}, "
        f"{base['method']} read {read(base) or '?'}); rerun one of them on the "
        "other's copy of the data"
    )


def _why_no_baseline(
    new: dict[str, Any], every: Sequence[dict[str, Any]],
    own: Sequence[dict[str, Any]], method: str, against: Sequence[str] | None,
) -> str:
    """What the store holds for a cell of ``new`` with no baseline to pair, and
    the run that makes the baselines.

    The cell's other records are either the experiment's own runs that did not
    finish, or variants (``search.grids.default.C=[1]``, ``protocol=smoke``),
    which are no baselines and which the comparison leaves out without the
    "left out" warning; a cell with neither was not run (a ``seed`` the baselines
    did not run, a dataset of a sub-sweep).
    """
    cell = (new["dataset"], new["kernel"], new["seed"])

    def here(r: dict[str, Any]) -> bool:
        return (r["dataset"], r["kernel"], r["seed"]) == cell and _is_baseline(
            r, method, against
        )

    said = []
    failed = sorted({f"{b['method']} {b['status']}" for b in own if here(b)})
    if failed:
        said.append(f"the experiment's own run of {', '.join(failed)}")
    variants: dict[str, set[str]] = {}
    for r in every:
        if here(r) and variant_of(r):
            variants.setdefault(" ".join(variant_of(r)), set()).add(r["method"])
    for how, methods in sorted(variants.items()):
        said.append(f"{', '.join(sorted(methods))} ran with {how}, a variant")
    keys = sweep_keys(new["experiment"]) or frozenset()
    cell_args = [
        o for o in new.get("overrides") or []
        if override_key(o) != "method" and (override_key(o) in keys
                                           or override_key(o) == "seed")
    ]  # fmt: skip
    if new.get("overrides") is None:
        cell_args = [f"dataset={new['dataset']}"]
    # the experiment's sweep of the cell makes its baselines, except on a kernel
    # its sweep does not name (lmnnmkl's 1-NN, kernel=none): the methods run there
    swept = (sweep_params(new["experiment"]) or {}).get("kernel")
    if against:
        ran = list(against)
    elif swept and new["kernel"] not in swept:
        ran = sorted({
            b["method"] for b in own
            if b["kernel"] == new["kernel"] and _is_baseline(b, method, None)
        })  # fmt: skip
    else:
        ran = []
    if ran:
        cell_args.append(f"method={','.join(ran)}")
    run = " ".join([f"kml-run experiment={new['experiment']}", *cell_args])
    return "; ".join([*said, f"make them: {run}"])


def compare(
    results: str | Path,
    experiment: str,
    method: str,
    against: Sequence[str] | None = None,
    *,
    mcnemar_method: str = "chi2_cc",
    alpha: float = 0.05,
) -> tuple[pd.DataFrame, list[str]]:
    """Rows (one per cell and baseline) and notes (cells not compared, and why).

    ``outcome`` is the new method's: ``+`` significantly more accurate than the
    baseline at ``alpha``, ``-`` significantly less, ``=`` otherwise. ``n01``
    counts the instances the new method got wrong and the baseline right, ``n10``
    the reverse (McNemar rows only).
    """
    # the new method's runs are variants of the experiment: that they are left out
    # of the baselines is the point here, not news
    records_log, once = logging.getLogger("kml.reports"), _Once()
    store_log = logging.getLogger("kml.store")
    records_log.addFilter(_no_left_out)
    records_log.addFilter(once)
    store_log.addFilter(once)
    no_baselines = ""
    try:
        # one record per config: of the new method's, the newest run with the
        # experiment's protocol is chosen below (newest_per_cell)
        every = load_records(results, experiment, variants=True, per_config=True)
        if sweep_params(experiment) is None:  # adhoc: kml-run without experiment=
            raise ReportError(
                f"{experiment} has no experiment file (conf/experiment/"
                f"{experiment}.yaml), so no baselines (an experiment's own runs) to "
                f"compare {method} with: run it in an experiment's sweep, e.g. "
                f"`kml-run experiment=mlsvm_table1 method={method}`, then "
                f"`kml-report compare mlsvm_table1 --method {method}`"
            )
        try:
            own = load_records(results, experiment)
        except ReportError:
            # every record is a variant (load_records has read them all above): its
            # advice, kml-report --variants, builds a table, not a comparison, whose
            # baselines are the experiment's own runs only
            own = []
            no_baselines = (
                f" (no run of {experiment}'s own config under {results}: "
                f"kml-run experiment={experiment})"
            )
    finally:
        records_log.removeFilter(_no_left_out)
        records_log.removeFilter(once)
        store_log.removeFilter(once)
    new = newest_per_cell([r for r in every if r["method"] == method])
    if not new:
        methods = sorted({r["method"] for r in every})
        meant = close_match(method, methods)
        raise ReportError(
            f"no record of method {method!r} in {experiment} under {results} "
            f"(methods there: {', '.join(methods) or 'none'}); "
            + (
                f"did you mean --method {meant}?"
                if meant
                else f"run kml-run experiment={experiment} method={method} first"
            )
        )
    present = sorted({r["method"] for r in own if r["method"] != method})
    if against is not None and not against:  # --against ',': every baseline out
        raise ReportError(
            "--against names no baseline; give their ids, comma-separated "
            f"(present: {', '.join(present) or 'none'}), or leave it out for all"
        )
    if against is not None and method in against:  # not a baseline of itself
        raise ReportError(
            f"--against {method}: that is the method compared (--method {method}); "
            f"its baselines are the experiment's other methods: "
            f"{', '.join(present) or 'none'}"
        )
    if against is not None:
        unknown = sorted(set(against) - set(present))
        if unknown:
            meant = {u: close_match(u, present) for u in unknown}
            guesses = [f"{m} for {u}" for u, m in meant.items() if m]
            raise ReportError(
                f"--against {', '.join(unknown)}: no record of the experiment's own "
                f"runs; baselines present: {', '.join(present) or 'none'}"
                + (f" (did you mean {', '.join(guesses)}?)" if guesses else "")
            )
    baselines = [
        r for r in own if r["status"] == "ok" and _is_baseline(r, method, against)
    ]
    rows, notes = [], []
    if against is None:  # said once: where they are, and how to compare with them
        others = sorted({
            r["method"] for r in own
            if r["method"] != method and not _is_baseline(r, method, None)
        })  # fmt: skip
        if others:
            one = len(others) == 1
            notes.append(
                f"{', '.join(others)}: {'a method' if one else 'methods'} of your "
                f"own, not {'a baseline' if one else 'baselines'}; --against "
                f"{','.join(others)} compares with {'it' if one else 'them'}"
            )
    for r in sorted(new, key=lambda r: (r["dataset"], r["kernel"], r["seed"])):
        cell = (r["dataset"], r["kernel"], r["seed"])
        where = f"{r['dataset']} {r['kernel']} seed {r['seed']}"
        used = protocol_overrides(r)
        matched = [
            b for b in baselines if (b["dataset"], b["kernel"], b["seed"]) == cell
        ]
        if used:  # newest_per_cell found no run with the experiment's protocol
            # listed, not refused: the cells run with the protocol still compare
            drop = " ".join(used)
            rerun = f"rerun {method} as you ran it, without {drop}"
            notes.append(
                f"{where}: every run of {method} overrides the experiment's protocol "
                f"(the newest with {drop}), and "
                + (
                    f"the baselines ran its own; {rerun}"
                    if matched
                    # baselines run with the same override (protocol=smoke for
                    # both, to try things quickly) are no baselines either
                    else "no baseline ran the experiment's own config on this cell "
                    f"either ({_why_no_baseline(r, every, own, method, against)}); "
                    f"then {rerun}"
                )
            )
            continue
        if r["status"] != "ok":
            notes.append(f"{where}: the newest record of {method} is "
                         f"{r['status']} ({r.get('reason', '')})")  # fmt: skip
            continue
        if not matched:
            notes.append(
                f"{where}: no finished baseline record"
                + (no_baselines
                   or f" ({_why_no_baseline(r, every, own, method, against)})")
            )
        else:  # a baseline whose newest run failed left no row: said, not dropped
            notes.extend(
                f"{where}: not compared with {b['method']}, whose newest run of the "
                f"experiment's config is {b['status']} ({b.get('reason', '')})"
                for b in sorted(own, key=lambda b: b["method"])
                if (b["dataset"], b["kernel"], b["seed"]) == cell
                and b["status"] != "ok" and _is_baseline(b, method, against)
            )  # fmt: skip
        for b in sorted(matched, key=lambda b: b["method"]):
            other = _other_data(r, b, method)
            if other:  # same labels on the same instances, but not the same features
                notes.append(f"{where}: {other}")
                continue
            rows.append({
                "dataset": r["dataset"], "kernel": r["kernel"], "seed": r["seed"],
                "baseline": b["method"],
                **_pair(r, b, alpha, mcnemar_method),
                "code_new": r["config"].get("code_version"),
                "code_baseline": b["config"].get("code_version"),
                # what the baselines did not run with (a kernel or dataset option
                # changes the new method's input, not only the method): said
                "overrides_new": " ".join(variant_of(r)),
            })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS), notes


def to_markdown(
    df: pd.DataFrame, notes: Sequence[str], experiment: str, method: str, alpha: float
) -> str:
    """The comparison as Markdown: a one-line tally, the table, then the notes."""
    lines = []
    if df.empty:
        lines.append(
            f"{method} in {experiment}: no cell has a finished record of "
            f"{method} and of a baseline (same dataset, kernel and seed)."
        )
    else:
        n = {k: int((df.outcome == k).sum()) for k in (WIN, TIE, LOSS)}
        lines += [
            f"{method} against the baselines of {experiment} on {len(df)} "
            f"(cell, baseline) pairs: {n[WIN]} significantly more accurate, "
            f"{n[TIE]} no significant difference, {n[LOSS]} significantly less "
            f"accurate (alpha = {alpha}).",
            "",
            # accuracy in every experiment, arbf's too (its tables give AUC)
            f"| dataset | kernel | seed | baseline | n test | {method} accuracy % | "
            "baseline accuracy % | test | n01 | n10 | p | outcome |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in df.itertuples(index=False):
            n01 = "" if pd.isna(row.n01) else int(row.n01)
            n10 = "" if pd.isna(row.n10) else int(row.n10)
            lines.append(
                f"| {row.dataset} | {row.kernel} | {row.seed} | {row.baseline} | "
                f"{row.n_test} | {row.accuracy_new:.2f} | "
                f"{row.accuracy_baseline:.2f} | {row.test} | {n01} | {n10} | "
                f"{row.pvalue:.3g} | {row.outcome} |"
            )
        ran_with = sorted({o for o in df.overrides_new if o})
        if ran_with:
            lines += ["", f"{method} ran with overrides that the baselines did not "
                      "(column overrides_new of --csv): "
                      + "; ".join(f"`{o}`" for o in ran_with) + "."]  # fmt: skip
        if (df.code_new != df.code_baseline).any():
            lines += ["", "Some pairs come from different code versions (columns "
                      "code_new, code_baseline of --csv)."]  # fmt: skip
    if notes:
        lines += ["", "Not compared:", *(f"- {note}" for note in notes)]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    import argparse
    import os

    from reports.__main__ import nonempty

    parser = argparse.ArgumentParser(
        prog="kml-report compare",
        description="A method of your own against an experiment's baselines, on "
        "the same test instances (accuracy, and McNemar's or Wilcoxon's test).",
    )
    parser.add_argument("experiment", help="experiment id, e.g. mlsvm_table1")
    parser.add_argument("--method", required=True, help="the new method's id")
    parser.add_argument(
        "--against", default=None,
        help="comma-separated baseline ids (default: all but methods of your own)",
    )  # fmt: skip
    parser.add_argument(
        "--results",
        type=os.path.expanduser,  # `--results=~/res`: the shell left the ~
        default=os.environ.get("KML_RESULTS", "results"),
        help="result store root (default: $KML_RESULTS or ./results)",
    )
    parser.add_argument(
        "--alpha", type=_alpha, default=0.05,
        help="significance level of the tests, between 0 and 1 (default: 0.05)",
    )  # fmt: skip
    parser.add_argument(
        "--mcnemar", choices=("chi2_cc", "exact"), default="chi2_cc",
        help="McNemar variant, for cells where each instance is tested once "
        "(k-fold CV; repeated splits take Wilcoxon's test) (default: "
        "continuity-corrected chi-square)",
    )  # fmt: skip
    parser.add_argument("--csv", metavar="FILE", type=nonempty,
                        help="also write the rows as CSV")
    args = parser.parse_args(argv)
    if args.csv and os.path.isdir(args.csv):  # else named only after the table,
        # by the temporary file beside it: "(.tmp-...: Is a directory)"
        parser.error(
            f"--csv {args.csv} is a folder; pass a file path, e.g. "
            f"{os.path.join(args.csv, 'compare.csv')}"
        )
    against = (
        [a.strip() for a in args.against.split(",") if a.strip()]
        if args.against else None
    )  # fmt: skip
    try:
        df, notes = compare(
            args.results, args.experiment, args.method, against,
            mcnemar_method=args.mcnemar, alpha=args.alpha,
        )  # fmt: skip
    except ReportError as exc:
        print(f"kml-report compare: error: {exc}", file=sys.stderr)
        return 2
    print(to_markdown(df, notes, args.experiment, args.method, args.alpha), end="")
    if args.csv:
        from pathlib import Path

        from reports.render import write_text

        try:  # whole or not at all, its folder created, as the tables are
            write_text(Path(args.csv), df.to_csv(index=False))
        except OSError as exc:
            print(
                f"kml-report compare: error: cannot write --csv {args.csv} "
                f"({exc.filename}: {exc.strerror or exc}); pass a file path you "
                "can write.",
                file=sys.stderr,
            )
            return 2
        print(f"wrote {args.csv}")
    return 0


def _alpha(text: str) -> float:
    """``--alpha``: a level in (0, 1); 5 or 0 would mark every or no pair."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f"{text} is not a significance level; give one between 0 and 1, "
            "e.g. 0.05"
        )
    return value
