"""``kml-report <experiment>``: rebuild tables and figures from records."""

from __future__ import annotations

import argparse
import logging
import os
import sys

REPORTS = {
    "mlsvm_table1": "reports.mlsvm:table1",
    "mlsvm_table1_checks": "reports.mlsvm_checks:table1_checks",
    "mlsvm_table2": "reports.mlsvm:table2",
    "wrbf_table1": "reports.wrbf:table1",
    "arbf_table1": "reports.arbf:table1",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kml-report",
        description="Rebuild a generated table or figure under reports/generated/.",
    )
    parser.add_argument("experiment", choices=sorted(REPORTS), help="experiment id")
    parser.add_argument(
        "--results",
        default=os.environ.get("KML_RESULTS", "results"),
        help="result store root (default: $KML_RESULTS or ./results)",
    )
    parser.add_argument(
        "--mcnemar",
        choices=("chi2_cc", "exact"),
        default="chi2_cc",
        help="McNemar variant: continuity-corrected chi-square (default) or exact",
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="also use runs with command-line overrides of the experiment's config "
        "(e.g. protocol=smoke); by default only its own runs fill the table",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    module, func = REPORTS[args.experiment].split(":")
    import importlib

    out = getattr(importlib.import_module(module), func)(
        args.results, mcnemar_method=args.mcnemar, variants=args.variants
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
