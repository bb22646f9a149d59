"""What keeps a report from destroying committed work.

Every writer (mlsvm, wrbf, and those of the papers still to come) goes through the two
guards here, before it writes its first byte:

- :func:`require_store`: the result folder exists and holds records of the experiment;
  otherwise a :class:`ReportError` names the folder, what was expected there and the
  command that fills it.
- :func:`guard_table`: a table under ``reports/generated`` is replaced only by one in
  which every cell filled before is still filled, with as many runs. A partial sweep
  (``dataset=sonar,wdbc``) gives a :class:`ReportError` that lists the missing cells
  and points to ``--out DIR``; any folder outside ``reports/generated`` is the
  user's to overwrite.
- :func:`output_dir` refuses ``--variants`` into ``reports/generated``: runs with
  overrides (a smoke protocol, another normalization) would replace the numbers of
  the experiment's own config under the same name.

A writer's pattern::

    out_dir = output_dir("mlsvm", out_dir)       # reports/generated/mlsvm unless --out
    records = load_records(results_root, "mlsvm_table1")  # calls require_store
    ... build every frame, figure and text in memory ...
    guard_table(out_dir / "table1.csv", cells, filled=ok_cells, names=...)
    ... write ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

GENERATED_DIR = Path(__file__).resolve().parent / "generated"


class ReportError(ValueError):
    """A report cannot be built as asked; the message names the folder and the fix."""


def output_dir(
    paper: str, out_dir: str | Path | None, *, variants: bool = False
) -> Path:
    """``out_dir`` if given (``kml-report --out``), else ``reports/generated/<paper>``.

    ``variants`` (``kml-report --variants``: runs with command-line overrides fill
    the table, the newest run per cell) is refused into ``reports/generated``: the
    committed tables hold the experiment's own config, and a smoke or other variant
    run would replace their numbers under the same name, with as many cells.
    Read at call time, so tests can point :data:`GENERATED_DIR` at a copy.
    """
    out = Path(out_dir) if out_dir is not None else GENERATED_DIR / paper
    if variants and is_guarded(out):
        raise ReportError(
            f"--variants fills the table from runs with command-line overrides, "
            f"which must not replace the committed tables in {out}; pass --out DIR "
            "to write it elsewhere. Nothing was written."
        )
    return out


def _hint_for(root: Path, experiment: str) -> str:
    if root.name == experiment:
        return f" It is the experiment folder itself: pass --results {root.parent}."
    if (root.parent.name == experiment) or (root.parent.parent.name == experiment):
        top = root.parent if root.parent.name == experiment else root.parent.parent
        return f" It lies inside an experiment folder: pass --results {top.parent}."
    return ""


def close_match(name: str, names: Sequence[str]) -> str | None:
    """The one of ``names`` that ``name`` most likely mistypes, or None.

    :func:`difflib.get_close_matches` at its default cutoff (0.6): ``mlsvm_tabel1``
    gives ``mlsvm_table1`` and ``mien`` gives ``mine``; ``name`` itself is never
    offered back.
    """
    import difflib

    found = difflib.get_close_matches(name, [n for n in names if n != name], n=1)
    return found[0] if found else None


#: The experiment files kml-run knows (``experiment=<stem>``).
EXPERIMENT_DIR = Path(__file__).resolve().parent.parent / "conf" / "experiment"

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
        # a mistyped name (kml-report compare mlsvm_tabel1) gets the name it was
        # meant to be, not a kml-run command that would fail on the same typo; a
        # known experiment not run yet (mlsvm_table2 beside mlsvm_table1) is no typo
        known = {p.stem for p in EXPERIMENT_DIR.glob("*.yaml")} | set(RUN_COMMANDS)
        # a report's name for several experiments (kml-report compare kdml): the
        # ones held here, not the closest name, which was kdml_fig3 (not run)
        # beside a store holding kdml_fig1
        within = [h for h in held if h.startswith(f"{experiment}_")]
        if experiment not in known and within:
            raise ReportError(
                f"no records of {experiment} under {root} ({what}); {experiment} "
                f"is not an experiment: did you mean {' or '.join(within)}?"
            )
        meant = (
            None
            if experiment in known
            else close_match(experiment, sorted(known | set(held)))
        )
        if meant in held:
            raise ReportError(
                f"no records of {experiment} under {root} ({what}); did you mean "
                f"{meant}?"
            )
        if meant:
            command = RUN_COMMANDS.get(meant, f"kml-run experiment={meant}")
            raise ReportError(
                f"no records of {experiment} under {root} ({what}); did you mean "
                f"{meant}? Its records are not there either: run `{command}` first, "
                "or pass --results DIR."
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


#: Columns that name a cell, in the order they are used when a frame has them.
CELL_KEY = ("artifact", "kernel", "dataset", "method")

Filled = Callable[[pd.DataFrame], "dict[tuple, float]"]


def filled_cells(
    key: Sequence[str] | None = None,
    weight: str | None = None,
    status: str | None = "status",
) -> Filled:
    """How a frame's filled cells are counted: ``{cell key: amount}``.

    A row is filled when its ``status`` column says ok (every row when the frame
    has no such column, or ``status=None``: a claim's held / not held is not a run
    status); its cell is named by the ``key`` columns (default: those of
    :data:`CELL_KEY` the frame has) and it is worth its ``weight`` column (runs or
    experiments pooled in it), or 1. The counter's ``unit`` attribute names what a
    weight counts (``"experiments"`` for ``n_experiments``; None without one), so
    :func:`guard_table` can say it apart from the number of cells.
    """

    def count(frame: pd.DataFrame) -> dict[tuple, float]:
        if frame.empty:
            return {}
        if status is not None and status in frame.columns:
            frame = frame[frame[status] == "ok"]
        cols = (
            list(key)
            if key is not None
            else [c for c in CELL_KEY if c in frame.columns]
        )
        amounts = frame[weight] if weight else pd.Series(1.0, index=frame.index)
        if not cols:  # no column names a cell: only their number can be compared
            return {(): float(amounts.sum())} if len(frame) else {}
        out: dict[tuple, float] = {}
        for row, amount in zip(frame[cols].itertuples(index=False, name=None), amounts):
            # names as text, an empty one as "": the committed CSV is read back, and
            # NaN never equals NaN as a dictionary key
            cell = tuple("" if pd.isna(v) else str(v) for v in row)
            out[cell] = out.get(cell, 0.0) + float(amount)
        return out

    count.unit = weight.removeprefix("n_") if weight else None
    return count


ok_cells = filled_cells()


def is_guarded(path: Path) -> bool:
    """Whether ``path`` lies under ``reports/generated`` (the committed tables)."""
    try:
        Path(path).resolve().relative_to(GENERATED_DIR.resolve())
    except ValueError:
        return False
    return True


def listing(names: Sequence[str], n: int = 8) -> str:
    """The first ``n`` of ``names``, then how many more: ``"a, b and 3 more"``."""
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def _cells(n: int) -> str:
    """``"1 cell"``, ``"7 cells"``."""
    return f"{n} cell" + ("" if n == 1 else "s")


def guard_table(
    path: str | Path,
    new: pd.DataFrame,
    filled: Filled = ok_cells,
    names: Mapping[tuple, str] | Callable[[tuple], str] | None = None,
    detail: str = "",
) -> None:
    """Refuse to replace a committed table unless every filled cell stays filled.

    ``path`` is the table's CSV; ``filled`` maps a frame to its filled cells and
    what each holds (:func:`filled_cells`; applied to the new frame and to the
    committed CSV read back). Refused when a cell that is filled in the committed
    table is missing from the new one or holds less (fewer runs): fewer cells, or
    as many with one swapped for another. Outside ``reports/generated`` nothing is
    refused.

    The message counts cells of the table (the new one's: every cell it holds,
    even one weighing nothing), and names those not filled as before: ``names``
    gives the name the report uses for a cell from its key: a mapping, in the
    order to list them, or a function (default: the key's values joined by
    ``/``; listed in the committed table's order); a weighted count
    (``filled.unit``) is given beside, in its unit, for a cell the new table
    holds (``iris (0 of 600 experiments)``).
    ``detail`` is a sentence added after the names (what to run, in the report's
    terms).
    """
    path = Path(path)
    if not is_guarded(path) or not path.exists():
        return
    old_cells = filled(pd.read_csv(path))
    new_cells = filled(new)
    lost = [
        cell for cell, amount in old_cells.items() if new_cells.get(cell, 0.0) < amount
    ]
    if not lost:
        return
    unit = getattr(filled, "unit", None)
    if list(old_cells) == [()]:
        # no column names a cell: filled_cells gave their number as one amount, and
        # there is no cell to name
        n_old, n_new = int(old_cells[()]), int(new_cells.get((), 0.0))
        n_lost, unit, not_filled = n_old - n_new, None, ""
    else:
        if isinstance(names, Mapping):  # in the order the report lists its cells
            order = {cell: i for i, cell in enumerate(names)}
            lost.sort(key=lambda cell: order.get(cell, len(order)))

        def name(cell: tuple) -> str:
            if callable(names):
                text = names(cell)
            else:
                text = (names or {}).get(cell) or "/".join(str(v) for v in cell)
            got = new_cells.get(cell)
            return text + (
                f" ({got:g} of {old_cells[cell]:g}{f' {unit}' if unit else ''})"
                if got is not None
                else ""
            )

        n_old = sum(1 for a in old_cells.values() if a > 0)
        # every cell the new table holds, one weighing nothing too: a wrbf dataset
        # only one method ran is a row of the table, with no paired experiment
        n_new = len(new_cells)
        n_lost = len(lost)
        not_filled = f" Not filled as before: {listing([name(c) for c in lost])}."
    held = f" ({sum(old_cells.values()):g} {unit})" if unit else ""
    holds = f", with {sum(new_cells.values()):g} {unit}" if unit else ""
    raise ReportError(
        f"refusing to overwrite {path}: {n_lost} of the {n_old} filled cells of the "
        f"committed table{held} would not be filled as before (the records fill "
        f"{_cells(n_new)} of the table{holds}; a partial sweep?).{not_filled}"
        f"{f' {detail}' if detail else ''} Write this table elsewhere with --out "
        "DIR, run the missing cells, or delete the committed file first if the "
        "smaller table is intended. Nothing was written."
    )
