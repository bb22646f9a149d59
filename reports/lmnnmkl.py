"""lmnnmkl Tables 1 and 2: accuracy, McNemar scores and marks, learned kernel weights.

``kml-report lmnnmkl_table1`` (and ``lmnnmkl_table2``) read the records of the
experiment and write ``reports/generated/lmnnmkl/<artifact>.{md,tex,csv}`` and
``<artifact>_weights.csv``: each cell's accuracy beside the published one with the
binomial SE of the published proportion, McNemar's score per dataset (1 / 0.5 / 0
per pairwise comparison at p = 0.05, Sec. 6.1) and the +/-/= marks of NR-LMNN-MKL
and LMNN-MKL_P against LMNN_H and LMNN-MKL_CV beside the published ones, and the
kernel weights LMNN-MKL_P learned (mean and sample std, ddof = 1, over the outer
folds / splits).
Reports only read records; a table is never overwritten with fewer cells.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reports.error_tables import (
    frame_variant_marks,
    known_divergences,
    published_dataset_names,
    variant_columns,
    variant_list,
)
from reports.guard import guard_table, output_dir
from reports.records import (
    GENERATED_DIR,
    aligned_predictions,
    load_published,
    load_records,
    variant_of,
)
from reports.render import latex_table, markdown_table, write_csv, write_text
from reports.stats import (
    mcnemar_outcomes,
    mcnemar_scores,
    published_se_pct,
    within_se,
)

PAPER = "lmnnmkl"
OUT_DIR = GENERATED_DIR / PAPER
METHOD_NAMES = {
    "nr_lmnn_mkl": "NR-LMNN-MKL",
    "lmnn_mkl_p": "LMNN-MKL_P",
    "lmnn_h": "LMNN_H",
    "lmnn_mkl_cv": "LMNN-MKL_CV",
    "knn1": "1-NN",
}
# A finished cell's score, and a method's total, that needs a method not run:
# "n/a" already means no public copy of the data
NO_SCORE = "no score"
NO_TOTAL = "no dataset with all methods run"
MARKED = ("nr_lmnn_mkl", "lmnn_mkl_p")
AGAINST = ("lmnn_h", "lmnn_mkl_cv")
# Methods whose solver runs another inside it, and the fold solver field
# (runners.protocols.solver_diagnostics) saying whether every inner run stopped on
# its own rule. LMNN-MKL_P's `converged` is its outer alternation's (Algorithm 1);
# its LMNN metric steps are the solver whose cap ° marks in the other columns.
INNER_CONVERGED = {"lmnn_mkl_p": "lmnn_converged"}
KERNEL_LABELS = {
    "lmnn20": [f"poly{d}" for d in range(1, 11)]
    + [f"gauss{s:g}" for s in (0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20)],
    "mfeat_views": ["fourier", "factors", "karhunen", "pixel", "zernike", "morph"],
}

# Readings of passages the paper leaves open, each a config option (stated in the
# generated Markdown next to the tables they affect).
PROTOCOL_NOTES = {
    "table1": [
        "Folds: stratified 10-fold CV (`protocol=lmnnmkl_cv10`, `stratified: true`; "
        "the "
        "paper says only '10-fold CV'), the same outer folds for every method; "
        "standardization fitted on the whole dataset (`preprocess_scope: dataset`).",
        "Kernel normalization: each of the 20 kernels divided by the mean of its "
        "*training* diagonal; the test block by the same training mean "
        "(`method.normalize: mean_diag` with `kernel.normalize: null`).",
        "LMNN-MKL_CV: `kernel_index` over the 20 kernels by 2-fold stratified inner CV "
        "(`protocol.inner_folds: 2`), accuracy of LMNN + 1-NN; ties go to the lowest "
        "index (polynomial degree 1 first).",
        "NR-LMNN-MKL: 'linear' = the degree-1 polynomial of the bank "
        "(`method.kernel_indices: [0, 1, 10]` = poly1, poly2, gauss0.5; x.y instead: "
        "`method=nr_lmnn_mkl kernel=nr_lmnn3 method.kernel_indices=[0,1,2]`; a "
        "constant added to a "
        "kernel cancels in the differences of eq. 13, so the two differ only by the "
        "linear block's mean-diagonal scale); Gaussian exp(-||x-z||^2 / (2 sigma^2)) "
        "as in SimpleMKL's bank; LMNN on the concatenated kernel maps Phi_Z (eq. 13) "
        "from A'' = I, its target neighbours Euclidean on Phi_Z "
        "(`method.kernel_neighbors: kernel_map`; `feature_space` = the distance in "
        "H, LMNN_H's rule); a test point mapped by eq. 2 (its kernel values against "
        "the training points).",
        "LMNN_H: the unweighted *sum* of the 20 normalized kernels (all mu = 1, "
        "Sec. 2).",
        "LMNN-MKL_P: W carried from one w to the next and from one weight step to "
        "the next (W_0 = 0); eq. 17 holds when sum_{i>=2} lambda_i(P) <= `rank_tol` "
        "tr(P) (1e-6); each eq. 15 solved to a relative gap `p_tol` (1e-4); at most "
        "`max_iter` = 10 rounds of Algorithm 1; the target neighbours (S of eq. 18) "
        "are those of K_mu0 and stay fixed through all rounds.",
        "LMNN (every method): k = 5, gamma = 0.5, unit margin (Sec. 6); the project's "
        "LMNN defaults otherwise (L-BFGS, `tol` 1e-7, `max_iter` 1000, target "
        "neighbours in the kernel's own metric K_ii + K_jj - 2 K_ij: "
        "`kernel_neighbors: feature_space`, except NR-LMNN-MKL, above); a cell "
        "marked not converged had an LMNN "
        "stop at `max_iter` in some fold (column `converged` of the CSV). The paper "
        "gives no stopping rule; on a full-rank kernel map the LMNN objective can "
        "reach 0, so `max_iter` and `tol` act as regularizers there. Both are config "
        "options: e.g. `kml-run experiment=lmnnmkl_table1 "
        "'++method.lmnn_params={max_iter: 200, tol: 1e-5}'` (`++`: the sweep's "
        "primary config has no LMNN method).",
        "McNemar: continuity-corrected chi-square on the pooled test predictions "
        "(`kml-report --mcnemar exact` for the exact test), p < 0.05.",
    ],
    "table2": [
        "Splits: 10 random stratified 50/50 splits (`protocol=lmnnmkl_splits`, "
        "`stratified: true`), the same for every method; all mfeat features "
        "standardized on the whole dataset.",
        "Kernels: one Gaussian per view, exp(-d^2 / (2 sigma0^2)) with sigma0 the mean "
        "pairwise Euclidean distance of the view over all 2000 rows "
        "(`kernel=mfeat_views`).",
        "1-NN: Euclidean on the concatenated standardized views (`kernel=none`).",
        "SE: binomial over the distinct test instances, the rows in at least one "
        "split's test half (CSV column `n_test_distinct`; random splits can leave a "
        "row out of every test half), McNemar on the pooled predictions of the 10 "
        "splits.",
        "LMNN-MKL_CV and LMNN-MKL_P: as Table 1, over the 6 view kernels.",
    ],
}


def _unavailable_reason(name: str) -> str | None:
    import datasets

    spec = datasets.REGISTRY[datasets.resolve(name)]
    return getattr(spec, "unavailable_reason", None) or None


def _registry_rows(name: str) -> int | None:
    """The dataset's number of rows as the registry states it (None if it does not).

    The n of the published SE beside a cell not run: the paper tested every row
    (10-fold CV), and a run's own n (its distinct test rows) does not exist yet.
    """
    import datasets

    return datasets.REGISTRY[datasets.resolve(name)].n_samples


def _registry_names(pub_names: dict[str, str]) -> dict[str, str]:
    return {v: k for k, v in pub_names.items()}


def cell_converged(
    record: dict[str, Any], method: str
) -> tuple[bool | None, bool | None]:
    """Whether a cell's solvers converged, as its ° mark reads it.

    Parameters
    ----------
    record : dict
        The cell's record (``converged``, and ``folds`` with their ``solver``).
    method : str
        The record's method; those of :data:`INNER_CONVERGED` also need their
        inner solver's field.

    Returns
    -------
    converged : bool or None
        The record's ``converged`` (every fold's solver stopped on its own rule),
        False also when a fold's inner solver did not converge.
    inner : bool or None
        Every fold's inner field (False if any is False); None for a method
        without an inner solver, or when a fold lacks the field and none is
        False: a record written before the field existed, whose mark then comes
        from ``converged`` alone, as before.
    """
    converged = record.get("converged")
    field = INNER_CONVERGED.get(method)
    if field is None:
        return converged, None
    values = [(f.get("solver") or {}).get(field) for f in record.get("folds") or []]
    if any(v is not None and not v for v in values):
        return False, False
    if not values or any(v is None for v in values):
        return converged, None
    return converged, True


def partial_note(cells: pd.DataFrame) -> str:
    """The legend's words on a partial table's gaps ("" for a table without them).

    A cell not run keeps the published SE, over the dataset's rows
    (:func:`_registry_rows`); a finished cell of a dataset with a method not run
    has no McNemar score or marks; a method with no such dataset, no total. A table
    with every cell of its public datasets run keeps its legend as it was.
    """
    notes = []
    missing = ~cells.status.isin(["ok", "unavailable"])
    if missing.any():
        notes.append(
            " Beside a cell not run, the paper's SE is over the dataset's rows (a "
            "run's: over its distinct test rows)."
        )
    if ((cells.status == "ok") & cells.mcnemar_score.isna()).any():
        notes.append(
            f" ({NO_SCORE}): a finished cell of a dataset with a method not run; "
            "its McNemar marks and score compare it with the other methods on the "
            f"same test points, so they wait for all of them; the total is over "
            f"the datasets with all methods run ({NO_SCORE} when none is)."
        )
    return "".join(notes)


def outer_only_note(cells: pd.DataFrame) -> str:
    """The legend's caveat on cells whose ° misses the inner solver ("" if none).

    Only records written before ``solver.lmnn_converged`` existed give such cells
    (:func:`cell_converged`); a table without them keeps its legend as it was.
    """
    old = cells[
        (cells.status == "ok")
        & cells.method.isin(list(INNER_CONVERGED))
        & cells.inner_converged.isna()
    ]
    notes = []
    for m, block in old.groupby("method", sort=False):
        notes.append(
            f" {METHOD_NAMES[m]} on {', '.join(block.published_dataset)}: ° (or "
            f"its absence) from its outer alternation only (records without "
            f"`solver.{INNER_CONVERGED[m]}`: whether its LMNN steps converged is "
            f"not recorded)."
        )
    return "".join(notes)


def build_cells(
    records: list[dict[str, Any]],
    artifact: str,
    *,
    mcnemar_method: str = "chi2_cc",
    alpha: float = 0.05,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Long-format cells (one per published dataset x method) and LMNN-MKL_P weights."""
    pub = load_published(PAPER)
    pub = pub[pub.artifact == artifact]
    to_pub = published_dataset_names(PAPER)
    to_reg = _registry_names(to_pub)
    known = known_divergences(PAPER, artifact)
    listed = set(zip(known.dataset, known.method))
    recs = {}
    for r in records:
        if int(r.get("seed", 0)) != 0:
            continue
        name = to_pub.get(r["dataset"], r["dataset"])
        recs[(name, r["method"])] = r
    rows = []
    weights = []
    for dname in dict.fromkeys(pub.dataset):
        reg = to_reg.get(dname, dname)
        block = pub[pub.dataset == dname].set_index("method")
        ok = {
            m: recs[(dname, m)]
            for m in block.index
            if (dname, m) in recs and recs[(dname, m)]["status"] == "ok"
        }
        scores: dict[str, float] = {}
        marks = pd.DataFrame()
        if len(ok) == len(block) and len(ok) >= 2:
            y_true, preds = aligned_predictions(list(ok.values()))
            preds = {m: preds[m] for m in block.index}
            scores = mcnemar_scores(y_true, preds, alpha=alpha, method=mcnemar_method)
            marks = mcnemar_outcomes(y_true, preds, alpha=alpha, method=mcnemar_method)
        unavailable = _unavailable_reason(reg)
        for m, p in block.iterrows():
            r = recs.get((dname, m))
            status = r["status"] if r else ("unavailable" if unavailable else "not run")
            reason = (r or {}).get("reason", "") or (unavailable or "")
            if unavailable and status != "ok":
                status, reason = "unavailable", f"no public copy: {unavailable}"
            acc = r["accuracy_pct"] if r and r["status"] == "ok" else np.nan
            n_distinct = (
                len(set(np.asarray(r["predictions"]["index"]).tolist()))
                if r and r["status"] == "ok"
                else np.nan
            )
            # a cell not run (or failed) still prints the published SE, over the
            # registry's rows: a partial table must not drop it where a run is
            # missing (an unavailable dataset's cells keep none, as before)
            n_se = (
                n_distinct
                if np.isfinite(n_distinct) or status == "unavailable"
                else _registry_rows(reg) or np.nan
            )
            se = published_se_pct(p["value"], n_se) if np.isfinite(n_se) else np.nan
            inside = (
                bool(within_se(acc, p["value"], n_distinct))
                if np.isfinite(acc)
                else np.nan
            )
            converged, inner = cell_converged(r, m) if r else (np.nan, None)
            variant = " ".join(variant_of(r)) if r and r["status"] == "ok" else ""
            row = {
                "artifact": artifact,
                "dataset": reg,
                "published_dataset": dname,
                "method": m,
                "status": status,
                "reason": reason,
                "accuracy_pct": acc,
                "published_pct": float(p["value"]),
                "se_pct": se,
                "delta": acc - float(p["value"]) if np.isfinite(acc) else np.nan,
                "within_2se": inside,
                # ‡: a divergence these runs show (a result outside 2 SE) whose
                # listed reason applies. A listed cell not run or within 2 SE here
                # shows none (summary() names the latter); a listed reason was
                # worked out for the paper's protocol, not for a variant's
                # overrides: a variant cell outside 2 SE is one nobody reviewed (†)
                "listed": (dname, m) in listed and inside is False and not variant,
                "n_test_distinct": n_distinct,
                "n_test_total": r.get("n_test_total") if r else np.nan,
                "converged": converged,
                "inner_converged": inner,
                "mcnemar_score": scores.get(m, np.nan),
                "published_score": float(p["mcnemar_score"]),
            }
            for ref in AGAINST:
                row[f"vs_{ref}"] = (
                    marks.loc[m, ref] if m in MARKED and not marks.empty else ""
                )
                pv = p.get(f"sig_vs_{ref}")
                row[f"published_vs_{ref}"] = "" if pd.isna(pv) else str(pv)
            # last, so that the table's CSV drops it when no cell is a variant's
            # (variant_columns) and keeps the columns of a table of own runs
            row["variant"] = variant
            rows.append(row)
        rp = recs.get((dname, "lmnn_mkl_p"))
        if rp and rp["status"] == "ok":
            w = np.array(
                [f["solver"].get("kernel_weights") for f in rp["folds"]], dtype=float
            )
            labels = KERNEL_LABELS.get(
                rp["kernel"], [str(i) for i in range(w.shape[1])]
            )
            for k, lab in enumerate(labels):
                weights.append(
                    {
                        "artifact": artifact,
                        "dataset": reg,
                        "published_dataset": dname,
                        "kernel": lab,
                        "mean_weight": float(w[:, k].mean()),
                        "std_weight": float(w[:, k].std(ddof=1))
                        if len(w) > 1
                        else np.nan,
                        "n_folds_selected": int(np.sum(w[:, k] > 1e-3)),
                        "variant": " ".join(variant_of(rp)),
                    }
                )
    return pd.DataFrame(rows), pd.DataFrame(weights)


def _variant_lines(cells: pd.DataFrame, marks: Mapping[str, str]) -> list[str]:
    """Under the table: each variant filling its cells, and which cells."""
    return variant_list(
        marks,
        (
            (r.variant, r.published_dataset, METHOD_NAMES[r.method])
            for r in cells[cells.status == "ok"].itertuples()
        ),
    )


def _tag(c: pd.Series, marks: Mapping[str, str] | None, latex: bool) -> str:
    """A variant cell's mark (`` [v1]``, LaTeX ``$^{v1}$``), "" for an own run."""
    v = c.get("variant", "")
    if not marks or not v or c.status != "ok":
        return ""
    return f"$^{{{marks[v]}}}$" if latex else f" [{marks[v]}]"


def _mark(c: pd.Series) -> str:
    if c.get("listed"):
        return "‡"
    if c.get("within_2se") is False:
        return "†"
    return ""


def _ours_text(c: pd.Series) -> str:
    if c.status != "ok":
        return "n/a" if c.status == "unavailable" else c.status
    marks = "".join(c[f"vs_{r}"] for r in AGAINST)
    # a finished cell without a score: its dataset has a method not run, and the
    # score (and the marks) compare with every method (partial_note says so)
    score = (
        f" ({NO_SCORE})" if pd.isna(c.mcnemar_score) else f" ({c.mcnemar_score:.1f})"
    )
    nc = "°" if c.get("converged") is False or c.get("converged") == 0 else ""
    return f"{c.accuracy_pct:.2f}{_mark(c)}{nc}{(' ' + marks) if marks else ''}{score}"


def _pub_text(c: pd.Series) -> str:
    marks = "".join(c[f"published_vs_{r}"] for r in AGAINST)
    return (
        (
            f"{c.published_pct:.2f} ±{c.se_pct:.2f}"
            if np.isfinite(c.se_pct)
            else f"{c.published_pct:.2f}"
        )
        + (f" {marks}" if marks else "")
        + f" ({c.published_score:.1f})"
    )


def table_rows(
    cells: pd.DataFrame, marks: Mapping[str, str] | None = None, latex: bool = False
) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows (datasets, then the total scores).

    Parameters
    ----------
    cells : pandas.DataFrame
        :func:`build_cells`' cells.
    marks : mapping of str to str, optional
        :func:`reports.error_tables.frame_variant_marks`: a cell from a variant
        run carries its mark.
    latex : bool, default=False
        The mark as LaTeX writes it (``$^{v1}$``) instead of Markdown's ``[v1]``.

    Returns
    -------
    header : list of str
    rows : list of list of str
    """
    methods = list(dict.fromkeys(cells.method))
    header = ["Dataset"]
    for m in methods:
        header += [f"{METHOD_NAMES[m]} ours", f"{METHOD_NAMES[m]} paper"]
    rows = []
    for d, block in cells.groupby("published_dataset", sort=False):
        b = block.set_index("method")
        row = [d]
        for m in methods:
            row += [
                _ours_text(b.loc[m]) + _tag(b.loc[m], marks, latex),
                _pub_text(b.loc[m]),
            ]
        rows.append(row)
    total = ["Total score"]
    for m in methods:
        sub = cells[cells.method == m]
        have = sub.mcnemar_score.notna()
        if not have.any():
            # a sum over no dataset is not a score of 0 (a partial table)
            total += [f"{NO_SCORE} ({NO_TOTAL})", f"{NO_SCORE} (same datasets)"]
            continue
        ours = sub.mcnemar_score[have].sum()
        pubs = sub.published_score[have].sum()
        n = int(have.sum())
        plural = "" if n == 1 else "s"
        total += [
            f"{ours:.1f} ({n} dataset{plural})",
            f"{pubs:.1f} (same dataset{plural})",
        ]
    rows.append(total)
    return header, rows


def listed_within(cells: pd.DataFrame) -> pd.DataFrame:
    """The own-run cells listed in known_divergences.csv that are within 2 SE here.

    They carry no ‡ (``listed`` is False: the listed divergence does not show in
    these runs); a smoke or partial table names them so that it does not read as
    if the list were wrong. A variant's cell is left out: the reason was never its.
    """
    if cells.empty:
        return cells
    known = known_divergences(PAPER, str(cells.artifact.iloc[0]))
    listed = set(zip(known.dataset, known.method))
    own = cells.variant == "" if "variant" in cells.columns else True
    inside = (cells.status == "ok") & (cells.within_2se == True)  # noqa: E712
    keys = pd.Series(list(zip(cells.published_dataset, cells.method)), cells.index)
    return cells[inside & own & keys.isin(listed)]


def summary(cells: pd.DataFrame) -> list[str]:
    ok = cells[cells.status == "ok"]
    n_pub = int((cells.status != "unavailable").sum())
    inside = int(ok.within_2se.astype(bool).sum())
    out = [
        f"- Cells with public data: {n_pub}; reproduced: {len(ok)}; within 2 SE of the "
        f"published accuracy: {inside}/{len(ok)}"
        + (f" ({100.0 * inside / len(ok):.0f}%)" if len(ok) else "")
        + f"; outside and listed in known_divergences.csv (‡): {int(ok.listed.sum())}.",
    ]
    marked = ok[ok.method.isin(MARKED)]
    agree = total = 0
    for r in marked.itertuples():
        for ref in AGAINST:
            a, b = getattr(r, f"vs_{ref}"), getattr(r, f"published_vs_{ref}")
            if a and b:
                total += 1
                agree += a == b
    if total:
        out.append(f"- McNemar marks equal to the published ones: {agree}/{total}.")
    sc = ok.dropna(subset=["mcnemar_score"])
    if len(sc):
        same = int((sc.mcnemar_score == sc.published_score).sum())
        out.append(
            f"- Per-dataset McNemar scores equal to the published ones: "
            f"{same}/{len(sc)}."
        )
    missing = cells[~cells.status.isin(["ok", "unavailable"])]
    if len(missing):
        out.append(
            "- Not reproduced (no finished run): "
            + ", ".join(
                f"{r.published_dataset}/{r.method} ({r.status})"
                for r in missing.itertuples()
            )
        )
    from_variants = ok[ok.variant != ""] if "variant" in ok.columns else ok[:0]
    if len(from_variants):
        out.append(
            f"- Reproduced cells from variant runs ([vN]): {len(from_variants)} "
            f"of {len(ok)}."
        )
    quiet = listed_within(cells)
    if len(quiet):
        out.append(
            "- Listed in known_divergences.csv but within 2 SE in these runs (not ‡: "
            "the listed divergence does not show here): "
            + ", ".join(
                f"{r.published_dataset}/{r.method} ({r.accuracy_pct:.2f} vs "
                f"{r.published_pct:.2f} ±{r.se_pct:.2f})"
                for r in quiet.itertuples()
            )
            + "."
        )
    return out


def weights_markdown(
    weights: pd.DataFrame, marks: Mapping[str, str] | None = None
) -> str:
    """The weights' table; a dataset whose LMNN-MKL_P run is a variant's carries
    its mark (``marks``: :func:`reports.error_tables.frame_variant_marks`)."""
    if weights.empty:
        return "_No finished LMNN-MKL_P run._"
    labels = list(dict.fromkeys(weights.kernel))
    rows = []
    for d, block in weights.groupby("published_dataset", sort=False):
        b = block.set_index("kernel")
        v = block.variant.iloc[0] if "variant" in block.columns else ""
        rows.append(
            [d + (f" [{marks[v]}]" if marks and v else "")]
            + [
                f"{b.loc[k, 'mean_weight']:.2f}"
                if b.loc[k, "mean_weight"] >= 5e-3
                else "."
                for k in labels
            ]
        )
    return markdown_table(["Dataset", *labels], rows)


def write_report(
    cells: pd.DataFrame,
    weights: pd.DataFrame,
    artifact: str,
    out_dir: str | Path | None = None,
) -> Path:
    title = {"table1": "Table 1", "table2": "Table 2"}[artifact]
    out_dir = output_dir(PAPER, out_dir)
    out = out_dir / f"{artifact}.md"
    old_csv = out_dir / f"{artifact}.csv"
    guard_table(old_csv, cells)  # never fewer filled cells than the committed table
    marks = frame_variant_marks(cells)
    header, rows = table_rows(cells, marks)
    md = [f"# lmnnmkl {title}: reproduced (ours) beside published (paper)", ""]
    if marks:
        # the readings below state the experiment's own protocol: say first that
        # the marked cells were not run with it
        md += [
            "**Built with variant runs** (`kml-report --variants`): the cells marked "
            f"{', '.join(f'[{m}]' for m in marks.values())} come from runs with "
            "command-line overrides of the experiment's config, named under the "
            "table; the protocol readings stated below are the experiment's own and "
            "do not describe them. The †/‡ marks, McNemar marks and scores and the "
            "counts include them; a marked cell outside 2 SE is †, never ‡: the "
            "reasons listed in reports/known_divergences.csv were worked out for "
            "the experiment's own protocol.",
            "",
        ]
    md += [
        "Each cell: accuracy %, the McNemar marks against LMNN_H and LMNN-MKL_CV "
        "(NR-LMNN-MKL and LMNN-MKL_P only; + win, - loss, = no significant "
        "difference), the per-dataset McNemar score in parentheses. Paper cells add "
        "the binomial SE of the published accuracy. † outside 2 SE; ‡ outside and "
        "listed in reports/known_divergences.csv. ° a solver stopped at its iteration "
        "cap in some fold."
        + outer_only_note(cells)
        + " n/a: no public copy of the data."
        + partial_note(cells)
        + (
            " [vN]: a cell from a variant run (its overrides under the table)."
            if marks
            else ""
        ),
        "",
        markdown_table(header, rows),
        "",
        *(_variant_lines(cells, marks) if marks else []),
        "## Summary",
        "",
        *summary(cells),
        "",
        "## Kernel weights learned by LMNN-MKL_P (mean over folds; '.' below 0.005)",
        "",
        weights_markdown(weights, marks),
        "",
        "## Protocol readings (config options)",
        "",
        *[f"- {n}" for n in PROTOCOL_NOTES[artifact]],
        "",
    ]
    unavailable = cells[cells.status == "unavailable"].drop_duplicates(
        "published_dataset"
    )
    if len(unavailable):
        md += ["## Datasets without a public copy", ""]
        md += [f"- {r.published_dataset}: {r.reason}" for r in unavailable.itertuples()]
        md.append("")
    write_text(out, "\n".join(md))
    write_text(
        out_dir / f"{artifact}.tex",
        latex_table(
            header,
            table_rows(cells, marks, latex=True)[1],
            f"lmnnmkl {title}: reproduced vs published accuracy"
            + (
                ". Variant runs: "
                + "; ".join(f"{m}: {v}" for v, m in marks.items())
                + "."
                if marks
                else ""
            ),
            f"tab:lmnnmkl-{artifact}",
        ),
    )
    write_csv(old_csv, variant_columns(cells))
    write_csv(
        out_dir / f"{artifact}_weights.csv",
        variant_columns(weights) if len(weights) else weights,
    )
    return out


def _report(
    artifact: str,
    results: str | Path,
    mcnemar_method: str,
    variants: bool,
    out_dir: str | Path | None = None,
):
    output_dir(PAPER, out_dir, variants=variants)  # refused before any work
    records = load_records(results, f"{PAPER}_{artifact}", variants=variants)
    cells, weights = build_cells(records, artifact, mcnemar_method=mcnemar_method)
    return write_report(cells, weights, artifact, out_dir)


def table1(
    results: str | Path = "results",
    *,
    out_dir: str | Path | None = None,
    mcnemar_method: str = "chi2_cc",
    variants: bool = False,
) -> Path:
    """Rebuild ``reports/generated/lmnnmkl/table1.*`` from the records."""
    return _report("table1", results, mcnemar_method, variants, out_dir)


def table2(
    results: str | Path = "results",
    *,
    out_dir: str | Path | None = None,
    mcnemar_method: str = "chi2_cc",
    variants: bool = False,
) -> Path:
    """Rebuild ``reports/generated/lmnnmkl/table2.*`` from the records."""
    return _report("table2", results, mcnemar_method, variants, out_dir)
