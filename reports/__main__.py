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
    "kdml": "reports.kdml:kdml",
    "kdml_reduced": "reports.kdml:kdml_reduced",
    "lmnnmkl_table1": "reports.lmnnmkl:table1",
    "lmnnmkl_table2": "reports.lmnnmkl:table2",
    "arbf_table1": "reports.arbf:table1",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["site"]:  # the report site (reports/site.py)
        return site_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="kml-report",
        description="Rebuild a generated table or figure under reports/generated/.",
        epilog="kml-report site [--out DIR]: build the report site (site/index.html).",
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
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="write the files here instead of reports/generated/<paper>/ (needed for "
        "a partial sweep: a committed table is never replaced by one with fewer "
        "filled cells)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    module, func = REPORTS[args.experiment].split(":")
    import importlib

    from reports.guard import ReportError

    try:
        out = getattr(importlib.import_module(module), func)(
            args.results,
            out_dir=args.out,
            mcnemar_method=args.mcnemar,
            variants=args.variants,
        )
    except ReportError as exc:
        print(f"kml-report {args.experiment}: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


def site_main(argv: list[str]) -> int:
    from reports.site import DEFAULT_OUT, build_site

    parser = argparse.ArgumentParser(
        prog="kml-report site",
        description="Build the static report site from reports/generated/.",
    )
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output folder")
    parser.add_argument(
        "--results",
        default=os.environ.get("KML_RESULTS", "results"),
        help="result store root, read for wall times when present",
    )
    args = parser.parse_args(argv)
    index = build_site(args.out, results=args.results)
    print(f"wrote {index}  (open it in a browser: file://{index})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
