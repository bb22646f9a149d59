"""``python -m datasets`` / ``kml-datasets``: list the registry, check loads.

Prints one row per dataset: name, papers, shape, classes, source and status.
``--check`` loads each available dataset (checksums, shape, class counts) and
exits non-zero if any fails; ``--paper`` keeps one paper's datasets.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from datasets._loader import load
from datasets._names import list_datasets
from datasets._registry import REGISTRY
from datasets._sources import (
    locate,
    mirror_problem,
    resolve_cache_dir,
    resolve_mirror,
)
from datasets._spec import PAPERS, DatasetSpec
from datasets.exceptions import DatasetError

__all__ = ["main"]

_COLUMNS = ("name", "papers", "shape", "classes", "source", "status")


def _shape(spec: DatasetSpec) -> str:
    if spec.n_samples is None:
        return "-"
    shape = f"{spec.n_samples}x{spec.n_features}"
    return f"{shape} ({len(spec.views)} views)" if spec.views else shape


def _classes(spec: DatasetSpec) -> str:
    if spec.class_counts is None:
        return "-"
    return (
        f"{len(spec.class_counts)} [{'/'.join(map(str, spec.class_counts.values()))}]"
    )


def _source(spec: DatasetSpec) -> str:
    if spec.derived_from:
        return f"derived:{spec.derived_from}"
    return "-" if spec.source_kind == "none" else spec.source_kind


def _status(spec: DatasetSpec, mirror: Path, cache_dir: Path) -> str:
    if not spec.available:
        # The reason's first clause keeps the table readable.
        reason = (spec.unavailable_reason or "").split("; ")[0]
        return f"unavailable: {reason}"
    files = REGISTRY[spec.derived_from].files if spec.derived_from else spec.files
    absent = [
        f.relpath
        for f in files
        if locate(f, mirror=mirror, cache_dir=cache_dir).path is None
    ]
    if absent:
        return f"missing: no copy of {', '.join(absent)} (--check says where to get it)"
    if spec.is_standin:
        return f"stand-in for {', '.join(spec.standin_for)}"
    return "available"


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row, widths)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _check(
    specs: list[DatasetSpec], mirror: str | None, cache_dir: str | None
) -> list[str]:
    problems = []
    for spec in specs:
        if not spec.available:
            continue
        try:
            ds = load(spec.name, mirror=mirror, cache_dir=cache_dir)
        except DatasetError as exc:
            problems.append(f"{spec.name}: {type(exc).__name__}: {exc}")
            print(f"FAIL  {spec.name}: {type(exc).__name__}")
        else:
            print(
                f"ok    {spec.name}: {ds.X.shape[0]}x{ds.X.shape[1]} from {ds.source}"
            )
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Print the dataset table; with ``--check`` also load and verify each.

    Parameters
    ----------
    argv : sequence of str or None, default=None
        Arguments (``sys.argv[1:]`` when None).

    Returns
    -------
    int
        0 on success; 1 if ``--check`` found a problem.
    """
    parser = argparse.ArgumentParser(
        prog="kml-datasets",
        description="List the datasets of the five papers; --check loads them.",
    )
    parser.add_argument(
        "--paper", help=f"only this paper's datasets ({', '.join(PAPERS)} or A-E)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="load each available dataset and verify checksums, shape and counts",
    )
    parser.add_argument(
        "--mirror",
        help="mirror directory, the folder with MANIFEST.md (default: $DATA_MIRROR, "
        "else ../shared/datasets beside the repository)",
    )
    parser.add_argument(
        "--cache-dir",
        help="cache directory (default: $KML_CACHE, else ~/.cache/kml-repro)",
    )
    args = parser.parse_args(argv)

    try:
        specs = list_datasets(args.paper)
    except ValueError as exc:
        parser.error(str(exc))
    mirror = resolve_mirror(args.mirror)
    cache_dir = resolve_cache_dir(args.cache_dir)

    rows = [tuple(c.upper() for c in _COLUMNS)]
    for spec in specs:
        papers = ",".join(spec.papers) or "-"
        rows.append(
            (
                spec.name,
                papers,
                _shape(spec),
                _classes(spec),
                _source(spec),
                _status(spec, mirror, cache_dir),
            )
        )
    print(_table(rows))
    statuses = [r[-1] for r in rows[1:]]
    n_available = sum(s == "available" for s in statuses)
    n_unavailable = sum(s.startswith("unavailable") for s in statuses)
    n_standin = sum(s.startswith("stand-in") for s in statuses)
    n_missing = sum(s.startswith("missing") for s in statuses)
    print(
        f"\n{n_available} available, {n_unavailable} unavailable, "
        f"{n_standin} stand-in, {n_missing} missing "
        f"(mirror {mirror}, cache {cache_dir})"
    )
    problem = mirror_problem(mirror)
    if problem is not None and (n_missing or not mirror.is_dir()):
        # Every "missing" row above then has one cause, which the rows do not name.
        if not mirror.is_dir():
            problem = f"{mirror} is not a folder"
        print(
            f"The data mirror {problem}: set DATA_MIRROR (or pass "
            "--mirror) to the folder holding MANIFEST.md and manifest.csv; "
            "README.md, section Data, says where its files come from.",
            file=sys.stderr,
        )

    if not args.check:
        return 0
    print()
    problems = _check(specs, args.mirror, args.cache_dir)
    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
