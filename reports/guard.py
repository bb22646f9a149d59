"""What keeps a report from destroying committed work.

Every writer (mlsvm, wrbf, and those of the papers still to come) goes through the two
guards here, before it writes its first byte:

- :func:`require_store`: the result folder exists and holds records of the experiment;
  otherwise a :class:`ReportError` names the folder, what was expected there and the
  command that fills it.
- :func:`guard_table`: a table under ``reports/generated`` is replaced only by one with
  at least as many filled cells. A partial sweep (``dataset=sonar,wdbc``) gives a
  :class:`ReportError` that lists the missing cells and points to ``--out DIR``; any
  folder outside ``reports/generated`` is the user's to overwrite.

A writer's pattern::

    out_dir = output_dir("mlsvm", out_dir)       # reports/generated/mlsvm unless --out
    records = load_records(results_root, "mlsvm_table1")  # calls require_store
    ... build every frame, figure and text in memory ...
    guard_table(out_dir / "table1.csv", cells, filled=ok_cells, missing=...)
    ... write ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

GENERATED_DIR = Path(__file__).resolve().parent / "generated"


class ReportError(ValueError):
    """A report cannot be built as asked; the message names the folder and the fix."""


def output_dir(paper: str, out_dir: str | Path | None) -> Path:
    """``out_dir`` if given (``kml-report --out``), else ``reports/generated/<paper>``.

    Read at call time, so tests can point :data:`GENERATED_DIR` at a copy.
    """
    return Path(out_dir) if out_dir is not None else GENERATED_DIR / paper


def _hint_for(root: Path, experiment: str) -> str:
    if root.name == experiment:
        return f" It is the experiment folder itself: pass --results {root.parent}."
    if (root.parent.name == experiment) or (root.parent.parent.name == experiment):
        top = root.parent if root.parent.name == experiment else root.parent.parent
        return f" It lies inside an experiment folder: pass --results {top.parent}."
    return ""


# experiments whose records are not made by one plain `kml-run experiment=<name>`
RUN_COMMANDS = {"mlsvm_table1_checks": "make check-table1"}


def require_store(results_root: str | Path, experiment: str) -> Path:
    """The folder of ``experiment``'s records under ``results_root``, or a ReportError.

    A missing, mistyped, empty or foreign ``results_root`` is an error that names the
    folder and what kml-run writes there; nothing has been written at this point.
    """
    root = Path(results_root)
    expected = (
        f"expected the result store kml-run writes (paths.results: ./results or "
        f"$KML_RESULTS), holding {experiment}/<dataset>/<run>.json"
    )
    command = RUN_COMMANDS.get(experiment, f"kml-run experiment={experiment}")
    fix = f"Run `{command}` first, or pass --results DIR."
    if not root.exists():
        raise ReportError(
            f"result folder {root} does not exist; {expected}. {fix}"
            + _hint_for(root, experiment)
        )
    if not root.is_dir():
        raise ReportError(f"--results {root} is a file, not a folder; {expected}.")
    base = root / experiment
    if not base.is_dir():
        held = sorted(p.name for p in root.iterdir() if not p.name.startswith("."))
        what = (
            f"it holds {', '.join(held[:6])}{' ...' if len(held) > 6 else ''}"
            if held
            else "it is empty"
        )
        raise ReportError(
            f"no records of {experiment} under {root} ({what}); {expected}. {fix}"
            + _hint_for(root, experiment)
        )
    if not any(p for p in base.rglob("*.json") if not p.name.startswith(".tmp-")):
        raise ReportError(
            f"{base} holds no record (<dataset>/<run>.json); {expected}. {fix}"
        )
    return base


def ok_cells(frame: pd.DataFrame) -> int:
    """Filled cells of a long table with a ``status`` column: those with status ok."""
    if frame.empty or "status" not in frame.columns:
        return 0
    return int((frame["status"] == "ok").sum())


def is_guarded(path: Path) -> bool:
    """Whether ``path`` lies under ``reports/generated`` (the committed tables)."""
    try:
        Path(path).resolve().relative_to(GENERATED_DIR.resolve())
    except ValueError:
        return False
    return True


def guard_table(
    path: str | Path,
    new: pd.DataFrame,
    filled: Callable[[pd.DataFrame], int] = ok_cells,
    missing: Sequence[str] = (),
) -> None:
    """Refuse to replace a committed table with one that has fewer filled cells.

    ``path`` is the table's CSV; ``filled`` counts the filled cells of a frame (the
    new one, and the committed CSV read back); ``missing`` names the cells the new
    table lacks, for the message. Outside ``reports/generated`` nothing is refused.
    """
    path = Path(path)
    if not is_guarded(path) or not path.exists():
        return
    before = filled(pd.read_csv(path))
    after = filled(new)
    if after >= before:
        return
    listed = ""
    if missing:
        listed = (
            f" Missing: {', '.join(missing[:8])}"
            f"{f' and {len(missing) - 8} more' if len(missing) > 8 else ''}."
        )
    raise ReportError(
        f"refusing to overwrite {path}: it has {before} filled cells and the records "
        f"give {after} (a partial sweep?).{listed} Write this table elsewhere with "
        "--out DIR, run the missing cells, or delete the committed file first if the "
        "smaller table is intended. Nothing was written."
    )
