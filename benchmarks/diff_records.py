"""Compare two result stores of one experiment, prediction for prediction.

For every cell (dataset, noise donor, method, kernel, seed: one run of a table,
each of kdml's 20 runs and wrbf's splits and donors its own cell) with a finished
record in both stores (the latest ``status: ok`` record of each; a method
parameter overridden on the command line, e.g. ``method.solver=auto_path``, is not
part of the cell): test indices,
folds, labels, predictions and decision values (exact, float for float), and per
outer split the selected parameters and the inner CV errors of every candidate.
Used to check that a change meant to leave a table's numbers alone (issue 14:
``solver: auto_path`` for mlsvm Table I) does so on every cell, not only on the
rounded table.

Usage::

    python benchmarks/diff_records.py STORE_A STORE_B [--experiment mlsvm_table1]

where a store is a results root (``results/``, ``paths.results``). The full Table I
check of ``solver="auto_path"`` (FDA has no solver; its cells are only in store A)::

    kml-run experiment=mlsvm_table1 paths.results=/tmp/t1_auto
    kml-run experiment=mlsvm_table1 method=svmm,eps_svm,svm_fda,svm \
        method.solver=auto_path paths.results=/tmp/t1_path
    python benchmarks/diff_records.py /tmp/t1_auto /tmp/t1_path --only-common

Prints one line per differing cell and a summary; exit status 1 when a cell differs
or (without ``--only-common``) is missing from one store, 2 when a store holds no
finished record of the experiment (a wrong path or experiment name).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from runners.store import ResultStore

PREDICTION_KEYS = ("index", "fold", "y_true", "y_pred", "decision")
FOLD_KEYS = ("repetition", "split", "n_test", "n_errors", "best_params",
             "inner_mean_test_error")


Cell = tuple[str, str, str, str, int]


def latest_records(store: Path, experiment: str) -> dict[Cell, dict]:
    """(dataset, noise donor, method, kernel, seed) -> the latest finished record.

    The seed and the donor are part of the cell: keyed by (dataset, method,
    kernel) alone, an experiment of several runs per cell (kdml's 20 seeds,
    wrbf's 100 splits x 6 donors) compared only the newest of them and
    reported the others' differences as "0 differ".
    """
    out: dict[Cell, dict] = {}
    for rec in ResultStore(store).records(experiment):  # damaged ones: warned, skipped
        if rec.get("status") != "ok":
            continue
        key = (rec["dataset"], rec.get("noise_donor") or "", rec["method"],
               rec["kernel"], int(rec.get("seed") or 0))
        if key not in out or rec.get("finished", "") > out[key].get("finished", ""):
            out[key] = rec
    return out


def cell_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What differs between two records of one cell (empty: identical)."""
    diffs = []
    pa, pb = a.get("predictions") or {}, b.get("predictions") or {}
    for k in PREDICTION_KEYS:
        va, vb = pa.get(k), pb.get(k)
        if va != vb:
            n = (
                sum(x != y for x, y in zip(va, vb))
                if isinstance(va, list) and isinstance(vb, list) and len(va) == len(vb)
                else "all"
            )
            diffs.append(f"predictions.{k} ({n} differ)")
    fa, fb = a.get("folds") or [], b.get("folds") or []
    if len(fa) != len(fb):
        diffs.append(f"{len(fa)} vs {len(fb)} folds")
    for i, (x, y) in enumerate(zip(fa, fb)):
        for k in FOLD_KEYS:
            if x.get(k) != y.get(k):
                diffs.append(f"fold {i} {k}")
    return diffs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "store_a", type=Path, help="a results root (results/, paths.results)"
    )
    parser.add_argument("store_b", type=Path, help="the other results root")
    parser.add_argument(
        "--experiment", default="mlsvm_table1", help="default: mlsvm_table1"
    )
    parser.add_argument(
        "--only-common", action="store_true",
        help="cells in one store only are listed but do not fail the check",
    )
    args = parser.parse_args(argv)
    ra = latest_records(args.store_a, args.experiment)
    rb = latest_records(args.store_b, args.experiment)
    # Two empty stores have no cell that differs: without this check a mistyped
    # path or experiment name (or a store given as results/<experiment>) would
    # report "0 differ" and exit 0, as if the stores had been compared.
    for store, records in ((args.store_a, ra), (args.store_b, rb)):
        if not records:
            print(
                f"diff_records: no finished record of {args.experiment!r} under "
                f"{store} (expected {store / args.experiment}/...; a store is a "
                "results root such as results/)",
                file=sys.stderr,
            )
            return 2
    def name(key: Cell, rec: dict) -> str:
        dataset, donor, _, _, seed = key
        return (f"{dataset}{f' + {donor} noise' if donor else ''} {rec['label']}"
                f"{f' seed={seed}' if seed else ''}")

    missing = sorted(set(ra) ^ set(rb))
    differing = 0
    for key in sorted(set(ra) & set(rb)):
        diffs = cell_differences(ra[key], rb[key])
        if diffs:
            differing += 1
            print(f"DIFFERS {name(key, rb[key])}: {', '.join(diffs)}")
    for key in missing:
        where, rec = ("A", ra[key]) if key in ra else ("B", rb[key])
        print(f"MISSING {name(key, rec)}: only in store {where}")
    n_pred = sum(len((ra[k].get("predictions") or {}).get("y_pred") or [])
                 for k in set(ra) & set(rb))
    print(
        f"{len(set(ra) & set(rb))} cells in both stores ({n_pred} test predictions), "
        f"{differing} differ, {len(missing)} in one store only"
    )
    return 1 if differing or (missing and not args.only_common) else 0


if __name__ == "__main__":
    sys.exit(main())
