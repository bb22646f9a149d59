"""``kml-report <experiment>``: rebuild tables and figures from records."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

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

#: the reports that mark cells with McNemar's test (``--mcnemar``); wrbf compares
#: by Wilcoxon's test, arbf by published std, kdml by its claims
MCNEMAR = {"mlsvm_table1", "mlsvm_table2", "lmnnmkl_table1", "lmnnmkl_table2"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["site"]:  # the report site (reports/site.py)
        return site_main(argv[1:])
    if argv[:1] == ["compare"]:  # a new method against the baselines
        from reports.compare import main as compare_main

        return compare_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="kml-report",
        description="Rebuild a generated table or figure under reports/generated/.",
        epilog=f"{SUBCOMMAND_USAGE['site']}: build the report site (site/index.html). "
        f"{SUBCOMMAND_USAGE['compare']}: a method of your own against the "
        "experiment's baselines on the same test instances. Each has its --help.",
    )
    parser.add_argument("experiment", choices=sorted(REPORTS), help="experiment id")
    misplaced = _misplaced_subcommand(argv)
    if misplaced:  # argparse would say "invalid choice: 'site'", which it is not
        parser.error(
            f"{misplaced} is a subcommand and comes first, before its options: "
            + SUBCOMMAND_USAGE[misplaced]
        )
    parser.add_argument(
        "--results",
        type=os.path.expanduser,  # `--results=~/res`: the shell left the ~
        default=os.environ.get("KML_RESULTS", "results"),
        help="result store root (default: $KML_RESULTS or ./results)",
    )
    parser.add_argument(
        "--mcnemar",
        choices=("chi2_cc", "exact"),
        default=None,
        help="McNemar variant of the mlsvm and lmnnmkl tables: continuity-corrected "
        "chi-square (default) or exact",
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
        type=nonempty,
        metavar="DIR",
        help="write the files here instead of reports/generated/<paper>/ (needed for "
        "a partial sweep: a committed table is never replaced by one with fewer "
        "filled cells)",
    )
    args = parser.parse_args(argv)
    if args.mcnemar and args.experiment not in MCNEMAR:
        parser.error(
            f"--mcnemar: {args.experiment} has no McNemar test (only "
            f"{', '.join(sorted(MCNEMAR))} do); drop the option"
        )
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    module, func = REPORTS[args.experiment].split(":")
    import importlib

    from reports.guard import ReportError

    folder = Path(args.out) if args.out else _generated(args.experiment)
    if folder.exists() and not folder.is_dir():
        print(
            f"kml-report {args.experiment}: error: --out {folder} is a file, not a "
            "folder; pass a folder (it is created if missing). Nothing was written.",
            file=sys.stderr,
        )
        return 2
    before = _digests(folder)
    try:
        out = getattr(importlib.import_module(module), func)(
            args.results,
            out_dir=args.out,
            mcnemar_method=args.mcnemar or "chi2_cc",
            variants=args.variants,
        )
    except ReportError as exc:
        print(f"kml-report {args.experiment}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if not _within(exc, folder):
            raise
        print(
            f"kml-report {args.experiment}: error: cannot write {exc.filename}: "
            f"{exc.strerror}; pass --out DIR, a folder you can write.",
            file=sys.stderr,
        )
        return 2
    print(f"wrote {out}")
    written = Path(out) if Path(out).is_dir() else Path(out).parent  # kdml: a folder
    if written.resolve() == folder.resolve():
        print(_changes(folder, before, _digests(folder)))
    return 0


def nonempty(text: str) -> str:
    """``--out`` / ``--csv``: a path, not an empty word, with a leading ``~``
    expanded (``--out=~/rep``: the shell left it). ``--out ""`` (``--out
    "$OUT"`` with OUT unset) wrote the table files into the current folder and
    ``--csv ""`` wrote nothing, both without a word."""
    import argparse

    if not text.strip():
        raise argparse.ArgumentTypeError(
            "empty; give a path (a variable in the command may be unset)"
        )
    return os.path.expanduser(text)


SUBCOMMAND_USAGE = {
    "site": "kml-report site [--out DIR] [--results DIR]",
    "compare": "kml-report compare EXPERIMENT --method ID [--against IDS] "
    "[--results DIR] [--csv FILE]",
}
#: the options of the main parser that take a value (``--out DIR``)
_VALUED = ("--results", "--mcnemar", "--out")


def _misplaced_subcommand(argv: list[str]) -> str | None:
    """``site`` or ``compare`` when it is the first positional word of ``argv``
    but not its first word (``kml-report --out DIR site``), else None; a value
    of an option (``--out site``) is not a positional word."""
    words = iter(argv)
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in SUBCOMMAND_USAGE else None
    return None


def _within(exc: OSError, target: Path) -> bool:
    """Whether ``exc`` is about writing ``target``: its file is ``target``, lies in
    it, or is a folder above it (which ``mkdir(parents=True)`` tried to create)."""
    if not exc.filename:
        return False
    path = Path(os.fsdecode(exc.filename)).resolve()
    target = target.resolve()
    return path == target or target in path.parents or path in target.parents


def _site_write(exc: OSError, out: Path) -> bool:
    """Whether ``exc`` is about writing the site ``out``: ``out`` itself, what it
    holds, a folder above it, or the ``.tmp-site-*`` / ``.old-site-*`` folder
    beside it that :func:`reports.site.build_site` builds in and swaps through."""
    if not exc.filename:
        return False
    if _within(exc, out):
        return True
    path = Path(os.fsdecode(exc.filename)).resolve()
    parent = out.resolve().parent
    return any(
        p.parent == parent and p.name.startswith((".tmp-site-", ".old-site-"))
        for p in (path, *path.parents)
    )


def _generated(experiment: str) -> Path:
    from reports.site import GENERATED

    return GENERATED / experiment.split("_")[0]


def _digests(folder: Path) -> dict[str, str]:
    import hashlib

    if not folder.is_dir():
        return {}
    return {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.iterdir())
        if f.is_file()
    }


def _changes(folder: Path, before: dict[str, str], after: dict[str, str]) -> str:
    """Which files of the folder the report changed (the rest it rewrote as they
    were): a reproduced table equal to the committed one shows no change, and
    machine-dependent outputs (mlsvm Fig. 2's training times) show theirs."""
    new = sorted(n for n in after if n not in before)
    changed = sorted(n for n in after if n in before and before[n] != after[n])
    removed = sorted(n for n in before if n not in after)
    parts = []
    if changed:
        parts.append(f"changed: {', '.join(changed)}")
    if new:
        parts.append(f"new: {', '.join(new)}")
    if removed:
        parts.append(f"removed: {', '.join(removed)}")
    same = len(after) - len(new) - len(changed)
    return f"  in {folder}: " + ("; ".join(parts) or "no file changed") + (
        f" ({same} unchanged)" if parts else ""
    )


def site_main(argv: list[str]) -> int:
    from reports.site import DEFAULT_OUT, SiteError, build_site

    parser = argparse.ArgumentParser(
        prog="kml-report site",
        description="Build the static report site from reports/generated/.",
    )
    parser.add_argument(
        "--out",
        default=str(DEFAULT_OUT),
        type=nonempty,
        metavar="DIR",
        help="output folder (default: site/ of the repository)",
    )
    parser.add_argument(
        "--results",
        type=os.path.expanduser,  # `--results=~/res`: the shell left the ~
        default=os.environ.get("KML_RESULTS", "results"),
        metavar="DIR",
        help="result store root, read for wall times when present (default: "
        "$KML_RESULTS or ./results)",
    )
    args = parser.parse_args(argv)
    try:
        index = build_site(args.out, results=args.results)
    except SiteError as exc:
        print(f"kml-report site: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if not _site_write(exc, Path(args.out)):
            raise
        print(
            f"kml-report site: error: cannot write the site at {args.out} "
            f"({exc.filename}: {exc.strerror}); pass --out DIR, a folder you can "
            "write.",
            file=sys.stderr,
        )
        return 2
    print(f"wrote {index}  (open it in a browser: file://{index})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
