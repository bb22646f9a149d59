"""Error tables of the form "dataset x method, one block per kernel" (mlsvm I and II).

Each cell sets the reproduced error beside the published one: ``reproduced | published
| delta``. The lowest reproduced error of a row is bold; a dagger marks ``|delta|``
above 2 binomial standard errors of the published proportion; a double dagger marks
instead a cell outside 2 SE that ``reports/known_divergences.csv`` lists with its
investigated reason (a listed cell within 2 SE, or without a result, has no mark).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import itertools
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reports.records import aligned_predictions, load_published, variant_of
from reports.stats import mcnemar_scores, published_se_pct, within_se

log = logging.getLogger("kml.reports")

KNOWN_DIVERGENCES = Path(__file__).resolve().parent / "known_divergences.csv"

KERNEL_TITLES = {
    "linear": "Linear kernel",
    "poly2": "Polynomial kernel, degree 2",
    "poly3": "Polynomial kernel, degree 3",
    "gauss1": "Gaussian kernel, sigma = 1",
    "mkl20": "20-kernel bank (MKL)",
}


DIVERGENCE_STATUSES = ("explained", "unattainable", "open")


def known_divergences(paper: str, artifact: str) -> pd.DataFrame:
    """Reviewed cells whose gap to the paper has an investigated reason."""
    if not KNOWN_DIVERGENCES.exists():
        return pd.DataFrame(
            columns=[
                "paper",
                "artifact",
                "dataset",
                "kernel",
                "method",
                "status",
                "reason",
            ]
        )
    df = pd.read_csv(KNOWN_DIVERGENCES, dtype=str).fillna("")
    bad = sorted(set(df.status) - set(DIVERGENCE_STATUSES))
    if bad:
        raise ValueError(
            f"{KNOWN_DIVERGENCES.name}: unknown status {bad}; use one of "
            f"{list(DIVERGENCE_STATUSES)}"
        )
    return df[(df.paper == paper) & (df.artifact == artifact)]


@functools.cache
def _module_ast(module: str) -> ast.Module | None:
    """The parsed source of ``module``, found without importing it or its parents."""
    top, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(next(iter(spec.submodule_search_locations))).joinpath(*rest)
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            try:
                return ast.parse(path.read_text(encoding="utf-8"))
            except (OSError, SyntaxError, ValueError):
                return None
    return None


def _static_class_attr(module: str, name: str, attr: str, depth: int = 0) -> Any:
    """A string constant assigned to ``attr`` in the body of class ``module.name``.

    Read from the source, following absolute re-exports (``from a.b import C``);
    None when it is inherited, computed, or not found (the caller imports then).
    """
    tree = _module_ast(module) if depth < 8 else None
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for st in node.body:
                targets = (
                    [st.target]
                    if isinstance(st, ast.AnnAssign)
                    else st.targets
                    if isinstance(st, ast.Assign)
                    else []
                )
                if (
                    any(isinstance(t, ast.Name) and t.id == attr for t in targets)
                    and isinstance(st.value, ast.Constant)
                    and isinstance(st.value.value, str)
                ):
                    return st.value.value
            return None
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _static_class_attr(node.module, alias.name, attr, depth + 1)
    return None


def display_name(method_class: str | None, method: str) -> str:
    """The paper's name of a method (``paper_name`` on its estimator class).

    Read from the class's source when it is a literal there, so a report does not
    import the estimators (numba, scikit-learn: ~0.3 s) to print their names.
    A class that cannot be imported (a method of one's own whose module is not on
    ``PYTHONPATH`` when the report runs, a class renamed since the record was
    written) is named by the method's id, quietly (a debug line): the report
    reads everything else from the records.
    """
    module, _, name = (method_class or "").rpartition(".")
    if not module:
        return method
    found = _static_class_attr(module, name, "paper_name")
    if found is not None:
        return found
    try:
        # importlib, not hydra.utils.get_class: that one logs "Error getting class
        # at ... Are you sure that module ... is installed?" before it raises, and
        # a report printed it above a table it then wrote correctly
        cls = getattr(importlib.import_module(module), name)
    except Exception as exc:  # whatever importing a user's module raises
        log.debug("%s: display name of %s not read (%r)", method, method_class, exc)
        return method
    return getattr(cls, "paper_name", method)


def config_class(method: str) -> str | None:
    """The estimator class ``conf/method/<method>.yaml`` names (its ``_target_``).

    Parameters
    ----------
    method : str
        A method id, the stem of its config file.

    Returns
    -------
    str or None
        ``"methods.EpsSVM"`` for ``eps_svm``; None without such a file or key (a
        method of one's own configured elsewhere: ``hydra.searchpath``).
    """
    from omegaconf import OmegaConf

    from reports.records import CONF_DIR

    path = CONF_DIR / "method" / f"{method}.yaml"
    if not path.is_file():
        return None
    target = OmegaConf.load(path).get("_target_")
    return str(target) if target else None


def published_dataset_names(paper: str) -> dict[str, str]:
    """Registry name -> the name the published CSV uses for ``paper``."""
    import datasets

    out = {}
    for spec in datasets.list_datasets():
        pub = spec.published_names.get(paper) if spec.published_names else None
        if pub:
            out[spec.name] = pub
    return out


@dataclass
class ErrorTable:
    """The long-format cells and the McNemar scores of one error table."""

    cells: pd.DataFrame
    scores: pd.DataFrame
    wins: pd.DataFrame
    methods: list[str]
    kernels: list[str]
    datasets: list[str]
    names: dict[str, str]
    mcnemar_method: str
    alpha: float
    # kernel -> datasets with a public copy that the McNemar score lacks; the
    # published total of that kernel is then not compared (published_score NaN)
    not_comparable: dict[str, list[str]] = field(default_factory=dict)
    # (a, b) -> (cells where a and b predict every test instance alike, cells
    # where both ran), over the cells scored by McNemar
    identical: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    # (kernel, dataset, method) of the cells listed in known_divergences.csv that
    # these runs put within 2 SE: not ‡ (their known_divergence is empty), but
    # named, so that a partial or smoke table does not read as if the list lied
    listed_within: list[tuple[str, str, str]] = field(default_factory=list)


def grid_top(rec: dict[str, Any]) -> str:
    """``"C=1000"`` when every outer fold selected the largest value of a grid.

    A selection pinned to the grid's edge in all folds says the inner CV error
    was lowest at the last value tried: the best setting may lie beyond the grid
    the paper gives. Several parameters are joined with ``", "``; "" otherwise.
    """
    grid = (rec.get("config") or {}).get("grid") or {}
    folds = rec.get("folds") or []
    if not isinstance(grid, Mapping) or not folds:  # a staged grid: a list of stages
        return ""
    edges = []
    for param, values in grid.items():
        # only a numeric axis has an edge (not strings, booleans or lists)
        if (
            not isinstance(values, (list, tuple))
            or len(values) < 2
            or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
            )
        ):
            continue
        top = max(values)
        if all((f.get("best_params") or {}).get(param) == top for f in folds):
            edges.append(f"{param}={top:g}")
    return ", ".join(edges)


def build_error_table(
    records: Sequence[dict[str, Any]],
    paper: str,
    artifact: str,
    *,
    mcnemar_method: str = "chi2_cc",
    alpha: float = 0.05,
    seed: int = 0,
) -> ErrorTable:
    """Join records with the published CSV; compute flags, McNemar scores, wins.

    Only the records of ``seed`` (the paper's single run) fill the table; records of
    other seeds (fold-variance studies) are left out.
    """
    records = [r for r in records if int(r.get("seed", 0)) == seed]
    pub = load_published(paper)
    pub = pub[pub.artifact == artifact]
    kernels = list(dict.fromkeys(pub.kernel))
    methods = list(dict.fromkeys(pub.method))
    pub_datasets = list(dict.fromkeys(pub.dataset))
    to_pub = published_dataset_names(paper)
    from_pub = {v: k for k, v in to_pub.items()}
    by_cell = {(r["dataset"], r["method"], r["kernel"]): r for r in records}
    known = known_divergences(paper, artifact)
    known_reason = {
        (r.dataset, r.kernel, r.method): f"[{getattr(r, 'status', 'open')}] {r.reason}"
        for r in known.itertuples()
    }
    names = {}
    for r in records:
        names.setdefault(r["method"], display_name(r.get("method_class"), r["method"]))
    for m in methods:
        if names.get(m, m) == m:
            # a method without a record (a sub-sweep) is named from the class its
            # config file names, so a column's name does not depend on which
            # methods have run
            names[m] = display_name(config_class(m), m)

    rows = []
    variant_col = []  # the overrides of a cell's variant run, "" for an own run
    for kernel in kernels:
        block = pub[pub.kernel == kernel]
        for dpub in pub_datasets:
            dname = from_pub.get(dpub, dpub)
            for method in methods:
                prow = block[(block.dataset == dpub) & (block.method == method)]
                if prow.empty:
                    continue
                published = float(prow.value.iloc[0])
                rec = by_cell.get((dname, method, kernel))
                variant = "" if rec is None else " ".join(variant_of(rec))
                status = "not run" if rec is None else rec["status"]
                reason = "" if rec is None else rec.get("reason", "")
                if rec is None and (why := unavailable_reason(dname)):
                    # the runner skips such a cell without computing anything: a
                    # partial table says so as the complete one does, not "not
                    # run yet", which asks for a run that cannot be made
                    status, reason = "skip", why
                row = {
                    "kernel": kernel,
                    "dataset": dname,
                    "published_dataset": dpub,
                    "method": method,
                    "published_pct": published,
                    "reproduced_pct": np.nan,
                    "n": np.nan,
                    "status": status,
                    "reason": reason,
                    "converged": None,
                    "at_grid_top": "",
                    # a listed reason was worked out for the paper's protocol, not
                    # for a variant's overrides: a variant cell outside 2 SE is one
                    # nobody reviewed (†), never ‡, and is not cited under the reason
                    "known_divergence": ""
                    if variant
                    else known_reason.get((dpub, kernel, method), ""),
                }
                if rec is not None and rec["status"] == "ok":
                    n = rec["n_test_total"]
                    row.update(
                        reproduced_pct=rec["error_pct"],
                        n=n,
                        converged=bool(rec["converged"]),
                        at_grid_top=grid_top(rec),
                    )
                rows.append(row)
                variant_col.append(variant)
    cells = pd.DataFrame(rows)
    ok = cells.status == "ok"
    cells["delta"] = cells.reproduced_pct - cells.published_pct
    cells["se_pct"] = np.nan
    cells.loc[ok, "se_pct"] = published_se_pct(
        cells.loc[ok, "published_pct"].to_numpy(), cells.loc[ok, "n"].to_numpy()
    )
    for k in (1, 2):
        col = f"within_{k}se"
        cells[col] = False
        cells.loc[ok, col] = within_se(
            cells.loc[ok, "reproduced_pct"].to_numpy(),
            cells.loc[ok, "published_pct"].to_numpy(),
            cells.loc[ok, "n"].to_numpy(),
            k=k,
        )
    # ‡ says "outside 2 SE, and that divergence was investigated": a listed cell
    # without a result (not run, failed) or within 2 SE here shows no divergence,
    # so it keeps no reason, is not marked and is not cited under the reasons
    listed = cells.known_divergence != ""
    inside = ok & cells.within_2se.astype(bool)
    listed_within = list(
        zip(
            cells.kernel[listed & inside],
            cells.dataset[listed & inside],
            cells.method[listed & inside],
        )
    )
    cells.loc[~ok | inside, "known_divergence"] = ""
    cells["lowest"] = False
    cells["published_lowest"] = False
    # Both counts over the same cells: the reproduced ones (a row with no reproduced
    # cell, or a method not run in it, would credit only the published side).
    for (_, _), grp in cells[ok].groupby(["kernel", "dataset"], sort=False):
        best = grp.reproduced_pct.min()
        cells.loc[grp.index[grp.reproduced_pct == best], "lowest"] = True
        best_pub = grp.published_pct.min()
        cells.loc[grp.index[grp.published_pct == best_pub], "published_lowest"] = True
    # last, so that the table's CSV drops it when no cell is a variant's
    # (variant_columns) and keeps the columns of a table of own runs
    cells["variant"] = variant_col

    score_rows = []
    # (method a, method b) -> [cells with the same prediction on every test
    # instance, cells where both ran]: a constraint that never binds shows here
    identical: dict[tuple[str, str], list[int]] = {}
    all_sets = [from_pub.get(d, d) for d in pub_datasets]
    public = [d for d in all_sets if has_public_copy(d)]
    not_comparable: dict[str, list[str]] = {}
    for kernel in kernels:
        totals = dict.fromkeys(methods, 0.0)
        n_sets = 0
        block_methods = set(cells[cells.kernel == kernel].method)
        complete = []
        for dname in [from_pub.get(d, d) for d in pub_datasets]:
            recs = [
                by_cell[(dname, m, kernel)]
                for m in methods
                if (dname, m, kernel) in by_cell
                and by_cell[(dname, m, kernel)]["status"] == "ok"
            ]
            if {r["method"] for r in recs} >= block_methods:
                complete.append(dname)
            if len(recs) < 2:
                continue
            y_true, preds = aligned_predictions(recs)
            for a, b in itertools.combinations([m for m in methods if m in preds], 2):
                same = identical.setdefault((a, b), [0, 0])
                same[0] += bool(np.array_equal(preds[a], preds[b]))
                same[1] += 1
            for m, s in mcnemar_scores(
                y_true, preds, alpha=alpha, method=mcnemar_method
            ).items():
                totals[m] += s
            n_sets += 1
        # The published totals are over every dataset of the paper: compare only when
        # every dataset with a public copy was scored with all the block's methods.
        lacking = [d for d in public if d not in complete]
        if lacking:
            not_comparable[kernel] = lacking
        for m in methods:
            if cells[(cells.kernel == kernel) & (cells.method == m)].empty:
                continue
            score_rows.append(
                {
                    "kernel": kernel,
                    "method": m,
                    "reproduced_score": totals[m],
                    "n_datasets_scored": n_sets,
                }
            )
    scores = pd.DataFrame(score_rows)
    try:
        pub_scores = load_published(f"{paper}_scores")
        pub_scores = pub_scores[pub_scores.artifact == artifact]
        scores = scores.merge(
            pub_scores[["kernel", "method", "mcnemar_score"]].rename(
                columns={"mcnemar_score": "published_score"}
            ),
            on=["kernel", "method"],
            how="left",
        )
    except FileNotFoundError:
        scores["published_score"] = np.nan
    if not_comparable and len(scores):
        scores.loc[scores.kernel.isin(list(not_comparable)), "published_score"] = np.nan

    wins = (
        cells.groupby("method", sort=False)
        .agg(
            reproduced_lowest=("lowest", "sum"),
            published_lowest=("published_lowest", "sum"),
        )
        .reindex(methods)
        .reset_index()
    )
    return ErrorTable(
        cells=cells,
        scores=scores,
        wins=wins,
        methods=methods,
        kernels=kernels,
        datasets=[from_pub.get(d, d) for d in pub_datasets],
        names=names,
        mcnemar_method=mcnemar_method,
        alpha=alpha,
        not_comparable=not_comparable,
        identical={k: (v[0], v[1]) for k, v in identical.items()},
        listed_within=listed_within,
    )


def unavailable_reason(name: str) -> str:
    """Why a run on ``name`` is skipped, in the words of its skip record.

    Parameters
    ----------
    name : str
        A dataset name of the registry (or an alias it resolves).

    Returns
    -------
    str
        ``"dataset 'ovarian' is not available: <the registry's reason>"``, the
        reason ``runners.run`` stores in the record of a skipped run, so that a
        table without that record reads as one with it; ``""`` for a dataset
        with a public copy, or one unknown to the registry (counted as missing,
        never excused).
    """
    import datasets

    try:
        spec = datasets.REGISTRY[datasets.resolve(name)]
    except (KeyError, ValueError):
        return ""
    reason = getattr(spec, "unavailable_reason", None)
    return f"dataset {spec.name!r} is not available: {reason}" if reason else ""


def has_public_copy(name: str) -> bool:
    """Whether the registry can load ``name`` (False for ovarian, stroke, ...)."""
    return not unavailable_reason(name)


def missing_cells(t: ErrorTable) -> list[str]:
    """``dataset/kernel/method`` of every cell without a record (not run yet)."""
    miss = t.cells[t.cells.status == "not run"]
    return [f"{r.dataset}/{r.kernel}/{r.method}" for r in miss.itertuples()]


def cell_names(t: ErrorTable) -> dict[tuple, str]:
    """``(kernel, dataset, method)`` -> ``dataset/kernel/method``, as
    :func:`missing_cells` names a cell, `` (error)`` added where its run failed.

    Keyed as :data:`reports.guard.ok_cells` keys the cells of ``t.cells``, for the
    cells :func:`reports.guard.guard_table` finds not filled as before; the failed
    cells come first, as the guard lists them (a failure needs a look, a cell not
    run only a run).
    """
    failed = t.cells.status == "error"
    return {
        (r.kernel, r.dataset, r.method): f"{r.dataset}/{r.kernel}/{r.method}"
        + (" (error)" if r.status == "error" else "")
        for r in pd.concat([t.cells[failed], t.cells[~failed]]).itertuples()
    }


def number_variants(variants: Iterable[str]) -> dict[str, str]:
    """Each distinct set of overrides -> its mark, ``v1``, ``v2``, ..., numbered in
    the order given (a table's order); ``""`` (an own run) gets none.

    The one numbering of every report's variant marks (mlsvm, arbf, wrbf,
    lmnnmkl, kdml).
    """
    used = dict.fromkeys(v for v in variants if v)
    return {v: f"v{i}" for i, v in enumerate(used, start=1)}


def variant_list(
    marks: Mapping[str, str], cells: Iterable[tuple[str, str, str]]
) -> list[str]:
    """Lines under a table: each variant, its overrides and the cells it fills.

    ``cells`` are ``(variant, dataset, method name)`` in the table's order; a
    mark with no cell among them is left out, and nothing is listed without one.
    """
    by_variant: dict[str, dict[str, list[str]]] = {}
    for v, dataset, method in cells:
        if v in marks:
            by_variant.setdefault(v, {}).setdefault(dataset, []).append(method)
    lines = []
    for v, mark in marks.items():
        if v in by_variant:
            where = "; ".join(
                f"{d} ({', '.join(ms)})" for d, ms in by_variant[v].items()
            )
            lines.append(f"- [{mark}] `{v}`: {where}")
    if not lines:
        return []
    head = "Cells from variant runs, with the overrides they ran with:"
    return [head, "", *lines, ""]


def frame_variant_marks(cells: pd.DataFrame) -> dict[str, str]:
    """:func:`number_variants` of a report's long frame (arbf, lmnnmkl): the
    finished cells' ``variant`` in the frame's order; empty for a frame without
    that column (a committed CSV read back, a table of own runs)."""
    if "variant" not in cells.columns:
        return {}
    return number_variants(cells.variant[cells.status == "ok"])


def variant_marks(t: ErrorTable) -> dict[str, str]:
    """Overrides of each variant run in the table -> its mark, ``v1``, ``v2``, ...

    Numbered in the table's order (kernel, dataset, method); empty for a table of
    the experiment's own runs (``kml-report`` without ``--variants``).
    """
    return number_variants(t.cells.variant)


def variant_columns(cells: pd.DataFrame) -> pd.DataFrame:
    """``cells`` as the table's CSV holds them: ``variant`` only where a cell is
    a variant run's, so a table of own runs keeps its committed columns."""
    return cells if cells.variant.ne("").any() else cells.drop(columns="variant")


def _variant_lines(
    t: ErrorTable, kc: pd.DataFrame, marks: Mapping[str, str]
) -> list[str]:
    """Under a kernel's table: each variant filling its cells, and which cells."""
    return variant_list(
        marks,
        (
            (r.variant, r.published_dataset, t.names.get(r.method, r.method))
            for r in kc.itertuples()
        ),
    )


def _score(v: float) -> str:
    return "—" if pd.isna(v) else f"{v:g}"


def _cell_text(
    c: pd.Series, bold: str = "**", marks: Mapping[str, str] | None = None
) -> str:
    tag = f" [{marks[c.variant]}]" if c.variant and marks else ""
    if c.status != "ok":
        return f"— / {c.published_pct:.2f}{tag}"
    mark = ""
    if c.known_divergence:
        mark = "‡"
    elif not c.within_2se:
        mark = "†"
    if c.converged is False:
        mark += "⚠"
    rep = f"{c.reproduced_pct:.2f}"
    if c.lowest:
        rep = f"{bold}{rep}{bold}"
    return f"{rep} / {c.published_pct:.2f} / {c.delta:+.2f}{mark}{tag}"


def summary_lines(t: ErrorTable, exclude_methods: Sequence[str] = ()) -> list[str]:
    """The scorecard: cells within 1 and 2 SE, McNemar totals, lowest-error counts."""
    ok = t.cells[t.cells.status == "ok"]
    lines = []
    for label, sub in (
        ("all cells", ok),
        (
            f"cells without {', '.join(t.names.get(m, m) for m in exclude_methods)}",
            ok[~ok.method.isin(exclude_methods)],
        ),
    ):
        if not len(sub) or (label != "all cells" and not exclude_methods):
            continue
        lines.append(
            f"- {label}: {len(sub)} reproduced; within 1 SE: "
            f"{int(sub.within_1se.sum())} ({100 * sub.within_1se.mean():.0f}%); "
            f"within 2 SE: {int(sub.within_2se.sum())} "
            f"({100 * sub.within_2se.mean():.0f}%)"
        )
    missing = t.cells[t.cells.status != "ok"]
    if len(missing):
        lines.append(f"- cells without a reproduced number: {len(missing)}")
    from_variants = ok[ok.variant != ""]
    if len(from_variants):
        lines.append(
            f"- reproduced cells from variant runs ([vN]): {len(from_variants)} "
            f"of {len(ok)}"
        )
    not_conv = ok[ok.converged == False]  # noqa: E712 (pandas element-wise)
    lines.append(f"- cells with a solver that did not converge (⚠): {len(not_conv)}")
    same = [
        f"{t.names.get(a, a)} = {t.names.get(b, b)} in {n} of {m}"
        for (a, b), (n, m) in t.identical.items()
        if n
    ]
    if same:
        lines.append(
            "- cells where two methods give the same prediction on every test "
            "instance: " + "; ".join(same)
        )
    edge = ok[ok.at_grid_top.fillna("").astype(str) != ""]
    if len(edge):
        listed = "; ".join(
            f"{r.dataset} {t.names.get(r.method, r.method)} ({r.at_grid_top})"
            for r in edge.itertuples()
        )
        lines.append(
            f"- cells whose every outer fold selected the largest value of its grid "
            f"(the inner CV error was lowest at the grid's edge; the best setting may "
            f"lie beyond it): {len(edge)} of {len(ok)}: {listed}"
        )
    else:
        lines.append(
            "- cells whose every outer fold selected the largest value of its grid: 0"
        )
    if t.listed_within:
        # a reader who knows the list (a smoke or partial table) would look for ‡
        # there: say why there is none
        c = t.cells.set_index(["kernel", "dataset", "method"]).loc[t.listed_within]
        lines.append(
            "- cells listed in reports/known_divergences.csv but within 2 SE in "
            "these runs (not ‡: the listed divergence does not show here): "
            + "; ".join(
                f"{r.published_dataset} / {k} / {t.names.get(m, m)}: "
                f"{r.reproduced_pct:.2f} vs {r.published_pct:.2f} (SE {r.se_pct:.2f})"
                for (k, _, m), r in zip(t.listed_within, c.itertuples())
            )
        )
    return lines


def error_table_markdown(
    t: ErrorTable, title: str, notes: Sequence[str], exclude_from_summary=()
) -> str:
    marks = variant_marks(t)
    parts = [f"# {title}", ""]
    if marks:
        # the notes below state the experiment's own protocol: say first that the
        # marked cells were not run with it
        parts += [
            "**Built with variant runs** (`kml-report --variants`): the cells marked "
            f"{', '.join(f'[{m}]' for m in marks.values())} come from runs with "
            "command-line overrides of the experiment's config, named under each "
            "table; the protocol stated below is the experiment's own and does not "
            "describe them. The SE marks, McNemar scores and counts include them; "
            "a marked cell outside 2 SE is †, never ‡: the reasons listed below "
            "were worked out for the experiment's own protocol.",
            "",
        ]
    parts += list(notes) + [""]
    parts += [
        "Each cell: **reproduced** / published / delta (error %, pooled over the outer "
        "folds). Bold: lowest reproduced error of the row. † |delta| > 2 binomial SE "
        "of the published proportion; ‡ a listed divergence (reasons below: "
        "[explained] cause found and checked; [unattainable] checked that the stated "
        "method and protocol do not reach the published value; [open] cause not found "
        "yet); "
        "⚠ a solver hit its iteration limit."
        + (
            " [vN]: a cell from a variant run (its overrides under the table)."
            if marks
            else ""
        ),
        "",
    ]
    from reports.render import markdown_table

    for kernel in t.kernels:
        kc = t.cells[t.cells.kernel == kernel]
        methods = [m for m in t.methods if m in set(kc.method)]
        header = ["dataset", "n"] + [t.names.get(m, m) for m in methods]
        rows = []
        for d in t.datasets:
            dc = kc[kc.dataset == d]
            if dc.empty:
                continue
            if not dc.status.eq("ok").any():
                reason = dc.reason.iloc[0] or "not run yet"
                rows.append(
                    [dc.published_dataset.iloc[0], "—"]
                    + [
                        f"— / {v:.2f}"
                        for v in dc.set_index("method").reindex(methods).published_pct
                    ]
                )
                rows[-1][1] = "—"
                rows[-1][0] += f" ({reason})"
                continue
            n = int(dc.n.dropna().iloc[0])
            cells = dc.set_index("method")
            rows.append(
                [dc.published_dataset.iloc[0], str(n)]
                + [
                    _cell_text(cells.loc[m], marks=marks) if m in cells.index else ""
                    for m in methods
                ]
            )
        sc = t.scores[t.scores.kernel == kernel].set_index("method")
        if len(sc):
            n_sets = int(sc.n_datasets_scored.max())
            rows.append(
                [f"McNemar score ({n_sets} dataset{'' if n_sets == 1 else 's'})", ""]
                + [
                    f"{sc.loc[m, 'reproduced_score']:g} / "
                    f"{_score(sc.loc[m, 'published_score'])}"
                    if m in sc.index
                    else ""
                    for m in methods
                ]
            )
        if kernel in t.not_comparable:
            rows.append(
                [
                    "(published totals, over all the paper's datasets, not "
                    "compared: no complete row for "
                    + ", ".join(t.not_comparable[kernel])
                    + ")",
                    "",
                ]
                + ["" for _ in methods]
            )
        parts += [
            f"## {KERNEL_TITLES.get(kernel, kernel)}",
            "",
            markdown_table(header, rows),
            "",
            *_variant_lines(t, kc, marks),
        ]

    parts += [
        "## Lowest error per method (cells where the method is lowest, ties count)",
        "",
    ]
    parts.append(
        markdown_table(
            ["method", "reproduced", "published (same cells)"],
            [
                [
                    t.names.get(r.method, r.method),
                    int(r.reproduced_lowest),
                    int(r.published_lowest),
                ]
                for r in t.wins.itertuples()
            ],
        )
    )
    parts += ["", "## Summary", ""]
    parts += summary_lines(t, exclude_from_summary)
    sc = t.scores
    if len(sc):
        parts.append(
            "- McNemar totals (reproduced / published): "
            + "; ".join(
                f"{KERNEL_TITLES.get(k, k).split(',')[0]} {t.names.get(m, m)} "
                f"{r:g}/{_score(p)}"
                for k, m, r, p in zip(
                    sc.kernel, sc.method, sc.reproduced_score, sc.published_score
                )
            )
        )
    missing = missing_cells(t)
    if missing:
        parts += [
            "",
            f"## Cells not run ({len(missing)})",
            "",
            "No record of these cells under the result folder (a partial sweep?); "
            "their McNemar scores are not compared with the paper's totals.",
            "",
        ]
        by_set: dict[str, list[str]] = {}
        for cell in missing:
            d, k, m = cell.split("/")
            by_set.setdefault(d, []).append(f"{k}/{m}")
        for d, cs in by_set.items():
            n_all = int((t.cells.dataset == d).sum())
            parts.append(
                f"- {d}: " + ("all cells" if len(cs) == n_all else ", ".join(cs))
            )
    failed = t.cells[t.cells.status == "error"]
    if len(failed):
        parts += ["", f"## Cells whose run failed ({len(failed)})", ""]
        parts += [
            f"- {r.dataset}/{r.kernel}/{r.method}: {r.reason}"
            for r in failed.itertuples()
        ]
    kd = t.cells[t.cells.known_divergence != ""]
    if len(kd):
        parts += ["", "## Reviewed divergences (‡)", ""]
        for r in kd.itertuples():
            parts.append(
                f"- {r.published_dataset} / {KERNEL_TITLES.get(r.kernel, r.kernel)} / "
                f"{t.names.get(r.method, r.method)}: {r.known_divergence}"
            )
    flagged = t.cells[
        (t.cells.status == "ok")
        & ~t.cells.within_2se
        & (t.cells.known_divergence == "")
    ]
    if len(flagged):
        parts += ["", "## Cells outside 2 SE without a reviewed reason (†)", ""]
        for r in flagged.itertuples():
            parts.append(
                f"- {r.published_dataset} / {r.kernel} / "
                f"{t.names.get(r.method, r.method)}:"
                f" {r.reproduced_pct:.2f} vs {r.published_pct:.2f} (SE {r.se_pct:.2f})"
                + (f" [{marks[r.variant]}]" if r.variant else "")
            )
    return "\n".join(parts) + "\n"


def error_table_latex(t: ErrorTable, caption: str, label: str) -> str:
    from reports.render import latex_table

    marks = variant_marks(t)
    out = []
    for kernel in t.kernels:
        kc = t.cells[t.cells.kernel == kernel]
        methods = [m for m in t.methods if m in set(kc.method)]
        header = ["Dataset"] + [t.names.get(m, m) for m in methods]
        rows = []
        for d in t.datasets:
            dc = kc[kc.dataset == d].set_index("method")
            if dc.empty:
                continue
            row = [str(dc.published_dataset.iloc[0])]
            for m in methods:
                c = dc.loc[m]
                tag = f"$^{{{marks[c.variant]}}}$" if c.variant else ""
                if c.status != "ok":
                    row.append(f"-- ({c.published_pct:.2f}){tag}")
                    continue
                rep = f"{c.reproduced_pct:.2f}"
                if c.lowest:
                    rep = rf"\textbf{{{rep}}}"
                row.append(rf"{rep} ({c.published_pct:.2f}){tag}")
            rows.append(row)
        used = [v for v in marks if (kc.variant == v).any()]
        out.append(
            latex_table(
                header,
                rows,
                f"{caption} {KERNEL_TITLES.get(kernel, kernel)}: "
                "reproduced (published)."
                + (
                    " Variant runs: "
                    + "; ".join(f"{marks[v]}: {v}" for v in used)
                    + "."
                    if used
                    else ""
                ),
                f"{label}-{kernel}",
            )
        )
    return "\n".join(out)
