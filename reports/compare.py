"""``kml-report compare``: a method of your own against an experiment's baselines.

The protocol's splits are seeded by (dataset, seed), so a run of a new method in
an experiment's sweep is tested on the same instances as the paper's methods. For
every cell (dataset, kernel, seed) with a finished record of the new method, this
sets its accuracy beside each baseline's and pairs their predictions instance by
instance with McNemar's test (``reports.stats``, as the papers' tables do).

Baselines are the experiment's own runs (its config, no command-line overrides);
the new method's runs may carry overrides (its own config directory, its grid),
and its newest finished record per cell is used.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from reports.guard import ReportError
from reports.records import aligned_predictions, load_records
from reports.stats import LOSS, TIE, WIN, _outcome, mcnemar

COLUMNS = [
    "dataset", "kernel", "seed", "baseline", "n_test", "accuracy_new",
    "accuracy_baseline", "n01", "n10", "pvalue", "outcome",
]  # fmt: skip


def _no_left_out(record: logging.LogRecord) -> bool:
    return "left out" not in str(record.msg)


def compare(
    results: str | Path,
    experiment: str,
    method: str,
    against: Sequence[str] | None = None,
    *,
    mcnemar_method: str = "chi2_cc",
    alpha: float = 0.05,
) -> pd.DataFrame:
    """One row per (cell, baseline): accuracies, McNemar counts, p-value, outcome.

    ``outcome`` is the new method's: ``+`` significantly fewer errors than the
    baseline at ``alpha``, ``-`` significantly more, ``=`` otherwise. ``n01``
    counts the instances the new method got wrong and the baseline right, ``n10``
    the reverse.
    """
    # the new method's runs are variants of the experiment: that they are left out
    # of the baselines is the point here, not news
    records_log = logging.getLogger("kml.reports")
    records_log.addFilter(_no_left_out)
    try:
        every = load_records(results, experiment, variants=True)
        try:
            own = load_records(results, experiment)
        except ReportError:
            own = []
    finally:
        records_log.removeFilter(_no_left_out)
    new = [r for r in every if r["method"] == method and r["status"] == "ok"]
    if not new:
        methods = sorted({r["method"] for r in every})
        raise ReportError(
            f"no finished record of method {method!r} in {experiment} under "
            f"{results} (methods there: {', '.join(methods) or 'none'}); run "
            f"kml-run experiment={experiment} method={method} first"
        )
    baselines = [
        r for r in own
        if r["method"] != method and r["status"] == "ok"
        and (against is None or r["method"] in against)
    ]  # fmt: skip
    rows = []
    for r in sorted(new, key=lambda r: (r["dataset"], r["kernel"], r["seed"])):
        cell = (r["dataset"], r["kernel"], r["seed"])
        for b in sorted(baselines, key=lambda b: b["method"]):
            if (b["dataset"], b["kernel"], b["seed"]) != cell:
                continue
            try:
                y_true, preds = aligned_predictions([r, b])
            except ValueError as exc:  # other test instances: not comparable
                raise ReportError(
                    f"{r['label']} and {b['label']} of {r['dataset']!r} were tested "
                    f"on other instances ({exc}); run the new method with the "
                    "experiment's protocol (no protocol.* overrides)"
                ) from exc
            res = mcnemar(y_true, preds[method], preds[b["method"]],
                          method=mcnemar_method)  # fmt: skip
            rows.append(
                {
                    "dataset": r["dataset"],
                    "kernel": r["kernel"],
                    "seed": r["seed"],
                    "baseline": b["method"],
                    "n_test": len(y_true),
                    "accuracy_new": 100 * float(np.mean(preds[method] == y_true)),
                    "accuracy_baseline": 100
                    * float(np.mean(preds[b["method"]] == y_true)),
                    "n01": res.n01,
                    "n10": res.n10,
                    "pvalue": res.pvalue,
                    "outcome": _outcome(res, alpha),
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def to_markdown(df: pd.DataFrame, experiment: str, method: str, alpha: float) -> str:
    """The comparison as a Markdown table with a one-line tally first."""
    if df.empty:
        return (
            f"{method} in {experiment}: no cell has both a record of {method} and "
            "of a baseline (same dataset, kernel and seed)."
        )
    n = {k: int((df.outcome == k).sum()) for k in (WIN, TIE, LOSS)}
    lines = [
        f"{method} against the baselines of {experiment} on {len(df)} "
        f"(cell, baseline) pairs: {n[WIN]} significantly better, {n[TIE]} no "
        f"significant difference, {n[LOSS]} significantly worse (McNemar, "
        f"alpha = {alpha}).",
        "",
        f"| dataset | kernel | seed | baseline | n test | {method} % | baseline % "
        "| n01 | n10 | p | outcome |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in df.itertuples(index=False):
        lines.append(
            f"| {row.dataset} | {row.kernel} | {row.seed} | {row.baseline} | "
            f"{row.n_test} | {row.accuracy_new:.2f} | {row.accuracy_baseline:.2f} | "
            f"{row.n01} | {row.n10} | {row.pvalue:.3g} | {row.outcome} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    import argparse
    import os

    parser = argparse.ArgumentParser(
        prog="kml-report compare",
        description="A method of your own against an experiment's baselines, on "
        "the same test instances (accuracy and McNemar's test per cell).",
    )
    parser.add_argument("experiment", help="experiment id, e.g. mlsvm_table1")
    parser.add_argument("--method", required=True, help="the new method's id")
    parser.add_argument(
        "--against", default=None, help="comma-separated baseline ids (default: all)"
    )
    parser.add_argument(
        "--results",
        default=os.environ.get("KML_RESULTS", "results"),
        help="result store root (default: $KML_RESULTS or ./results)",
    )
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument(
        "--mcnemar", choices=("chi2_cc", "exact"), default="chi2_cc",
        help="McNemar variant (default: continuity-corrected chi-square)",
    )  # fmt: skip
    parser.add_argument("--csv", metavar="FILE", help="also write the rows as CSV")
    args = parser.parse_args(argv)
    against = args.against.split(",") if args.against else None
    try:
        df = compare(
            args.results, args.experiment, args.method, against,
            mcnemar_method=args.mcnemar, alpha=args.alpha,
        )  # fmt: skip
    except ReportError as exc:
        print(f"kml-report compare: error: {exc}", file=sys.stderr)
        return 2
    print(to_markdown(df, args.experiment, args.method, args.alpha), end="")
    if args.csv:
        df.to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")
    return 0
