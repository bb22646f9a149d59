"""lmnnmkl report: the ° mark of a cell, LMNN-MKL_P's inner LMNN steps included.

LMNN-MKL_P's ``converged`` is its outer alternation's stopping rule (lmnnmkl
Algorithm 1); ``solver.lmnn_converged`` of each fold says whether the LMNN of every
metric step converged. Records written before that field keep their old mark.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from reports import lmnnmkl

MISSING = object()  # a fold solver without the field: a record from before it


def _record(
    method: str,
    converged: bool,
    inner: Any = MISSING,
    *,
    dataset: str = "sonar",
    n: int = 208,
    n_folds: int = 2,
) -> dict[str, Any]:
    """A finished record as kml-run writes it, with only the fields the report reads.

    ``inner`` is one value for every fold or a list, one per fold; ``MISSING``
    leaves the field out.
    """
    inners = inner if isinstance(inner, list) else [inner] * n_folds
    folds = []
    for value in inners:
        solver: dict[str, Any] = {"converged": converged, "kernel_weights": [0.05] * 20}
        if value is not MISSING:
            solver["lmnn_converged"] = value
        folds.append({"solver": solver})
    idx = list(range(n))
    return {
        "experiment": "lmnnmkl_table1",
        # the sweep's own keys only: an own run (what records.variant_of reads)
        "overrides": [
            "experiment=lmnnmkl_table1",
            f"dataset={dataset}",
            f"method={method}",
            "kernel=lmnn20",
        ],
        "dataset": dataset,
        "method": method,
        "kernel": "lmnn20",
        "seed": 0,
        "status": "ok",
        "accuracy_pct": 90.0,
        "n_test_total": n,
        "converged": converged,
        "predictions": {"index": idx, "y_true": [0] * n, "y_pred": [0] * n},
        "folds": folds,
    }


@pytest.mark.parametrize(
    "converged, inner, expected",
    [
        (True, True, (True, True)),
        # the defect: the alternation stopped on its rule, an LMNN metric step
        # at its cap; the cell is not converged
        (True, False, (False, False)),
        (True, [True, False], (False, False)),
        (False, True, (False, True)),  # the alternation's own cap still counts
        # records from before the field: the mark from `converged`, as before
        (True, MISSING, (True, None)),
        (False, MISSING, (False, None)),
        # a resumed run, folds from before and after: unknown unless one is False
        (True, [True, MISSING], (True, None)),
        (True, [False, MISSING], (False, False)),
    ],
)
def test_cell_converged_of_lmnn_mkl_p(converged, inner, expected):
    rec = _record("lmnn_mkl_p", converged, inner)
    assert lmnnmkl.cell_converged(rec, "lmnn_mkl_p") == expected


def test_cell_converged_of_a_one_solver_method_is_its_record():
    for conv in (True, False):
        assert lmnnmkl.cell_converged(_record("lmnn_h", conv), "lmnn_h") == (
            conv,
            None,
        )


def test_cell_converged_without_folds_keeps_the_record():
    rec = _record("lmnn_mkl_p", False)
    del rec["folds"]
    assert lmnnmkl.cell_converged(rec, "lmnn_mkl_p") == (False, None)


def _sonar(records: list[dict[str, Any]]) -> pd.DataFrame:
    cells, _ = lmnnmkl.build_cells(records, "table1")
    return cells[cells.published_dataset == "sonar"].set_index("method")


def _marked(cell: pd.Series) -> bool:
    return "°" in lmnnmkl._ours_text(cell)


def test_inner_lmnn_at_its_cap_marks_the_lmnn_mkl_p_cell():
    cells = _sonar([_record("lmnn_mkl_p", True, [True, False])])
    assert _marked(cells.loc["lmnn_mkl_p"])
    assert cells.loc["lmnn_mkl_p", "inner_converged"] is False
    cells = _sonar([_record("lmnn_mkl_p", True, True)])
    assert not _marked(cells.loc["lmnn_mkl_p"])
    cells = _sonar([_record("lmnn_mkl_p", False, True)])
    assert _marked(cells.loc["lmnn_mkl_p"])


@pytest.mark.parametrize("converged", [True, False])
def test_old_records_keep_todays_mark(converged):
    cells = _sonar([_record("lmnn_mkl_p", converged), _record("lmnn_h", converged)])
    for m in ("lmnn_mkl_p", "lmnn_h"):
        assert _marked(cells.loc[m]) is (not converged)
    assert pd.isna(cells.loc["lmnn_mkl_p", "inner_converged"])


def test_table_note_names_old_records_only_when_used(tmp_path):
    old = [_record("lmnn_mkl_p", True), _record("lmnn_h", True)]
    new = [_record("lmnn_mkl_p", True, True), _record("lmnn_h", True)]
    notes = {}
    for name, records in (("old", old), ("new", new)):
        cells, weights = lmnnmkl.build_cells(records, "table1")
        out = lmnnmkl.write_report(cells, weights, "table1", tmp_path / name)
        notes[name] = out.read_text()
    assert (
        "LMNN-MKL_P on sonar: ° (or its absence) from its outer alternation only"
        in notes["old"]
    )
    assert "lmnn_converged" not in notes["new"]
    assert "outer alternation only" not in notes["new"]


def test_note_is_empty_for_one_solver_methods_and_unfinished_cells():
    cells = pd.DataFrame(
        {
            "method": ["lmnn_h", "lmnn_mkl_p", "lmnn_mkl_p"],
            "status": ["ok", "not run", "ok"],
            "published_dataset": ["sonar", "wine", "iris"],
            "inner_converged": [None, None, np.bool_(True)],
        }
    )
    assert lmnnmkl.outer_only_note(cells) == ""


def test_weight_std_is_the_sample_std_over_folds():
    rec = _record("lmnn_mkl_p", True, True, n_folds=3)
    rows = np.array([[0.7, 0.3], [0.5, 0.5], [0.9, 0.1]])
    for fold, w in zip(rec["folds"], rows):
        fold["solver"]["kernel_weights"] = list(w) + [0.0] * 18
    _, weights = lmnnmkl.build_cells([rec], "table1")
    first = weights[weights.published_dataset == "sonar"].iloc[0]
    assert first.mean_weight == pytest.approx(0.7)
    assert first.std_weight == pytest.approx(np.std(rows[:, 0], ddof=1))
    assert first.std_weight != pytest.approx(np.std(rows[:, 0]))


def test_weight_std_of_one_fold_is_undefined():
    _, weights = lmnnmkl.build_cells(
        [_record("lmnn_mkl_p", True, True, n_folds=1)], "table1"
    )
    assert weights.std_weight.isna().all()


def test_cells_from_variant_runs_are_marked_with_their_overrides(tmp_path):
    """--variants: a cell filled by a run with command-line overrides is marked as
    in the mlsvm tables ([v1], $^{v1}$, listed under the table, a `variant` CSV
    column), and the notes do not claim the experiment's protocol for it."""
    smoke = _record("lmnn_mkl_p", True, True)
    smoke["overrides"].append("protocol=smoke")
    own = _record("lmnn_h", True)
    cells, weights = lmnnmkl.build_cells([smoke, own], "table1")
    md = lmnnmkl.write_report(cells, weights, "table1", tmp_path / "v").read_text()
    head, table = md.split("| Dataset |", 1)
    assert "**Built with variant runs**" in head.split("Each cell")[0]
    assert "the protocol readings stated below are the experiment's own" in head
    sonar = next(ln for ln in table.splitlines() if ln.startswith("| sonar |"))
    assert sonar.count(" [v1] |") == 1  # LMNN-MKL_P; LMNN_H is an own run
    assert "- [v1] `protocol=smoke`: sonar (LMNN-MKL_P)" in md
    assert "- Reproduced cells from variant runs ([vN]): 1 of 2." in md
    assert "| sonar [v1] | " in md.split("## Kernel weights")[1]
    csv = pd.read_csv(tmp_path / "v" / "table1.csv", keep_default_na=False)
    assert csv.set_index(["published_dataset", "method"]).variant.loc[
        [("sonar", "lmnn_mkl_p"), ("sonar", "lmnn_h")]
    ].tolist() == ["protocol=smoke", ""]
    w = pd.read_csv(tmp_path / "v" / "table1_weights.csv")
    assert set(w.variant) == {"protocol=smoke"}
    tex = (tmp_path / "v" / "table1.tex").read_text()
    assert tex.count("$^{v1}$") == 1 and "Variant runs: v1: protocol=smoke." in tex

    # the experiment's own runs only: no mark, no note, no column
    cells, weights = lmnnmkl.build_cells([_record("lmnn_mkl_p", True, True), own],
                                         "table1")
    md = lmnnmkl.write_report(cells, weights, "table1", tmp_path / "o").read_text()
    assert "[v" not in md and "variant" not in md
    for name in ("table1.csv", "table1_weights.csv"):
        assert "variant" not in pd.read_csv(tmp_path / "o" / name).columns


def test_a_variant_cell_outside_2se_is_not_given_the_listed_reason(tmp_path):
    """reports/known_divergences.csv lists sonar's NR-LMNN-MKL with a reason worked
    out for the paper's protocol: a variant run's cell there outside 2 SE is one
    nobody reviewed, so †, not ‡, and not counted as listed; an own run keeps ‡."""
    known = lmnnmkl.known_divergences("lmnnmkl", "table1")
    assert ("sonar", "nr_lmnn_mkl") in set(zip(known.dataset, known.method))

    def sonar(rec: dict[str, Any], out: str) -> tuple[str, pd.Series, str]:
        rec["accuracy_pct"] = 80.0  # published 88.46, SE about 2.2
        cells, weights = lmnnmkl.build_cells([rec], "table1")
        md = lmnnmkl.write_report(cells, weights, "table1", tmp_path / out)
        md = md.read_text()
        row = next(ln for ln in md.split("| Dataset |", 1)[1].splitlines()
                   if ln.startswith("| sonar |"))
        c = cells.set_index(["published_dataset", "method"]).loc[
            ("sonar", "nr_lmnn_mkl")
        ]
        assert not c.within_2se  # outside, as the listed own cell is
        return row, c, md

    variant = _record("nr_lmnn_mkl", True)
    variant["overrides"].append("protocol=smoke")
    row, c, md = sonar(variant, "v")
    assert "| 80.00† (no score) [v1] |" in row and "‡" not in row
    assert not c.listed
    assert "outside and listed in known_divergences.csv (‡): 0." in md

    row, c, md = sonar(_record("nr_lmnn_mkl", True), "own")
    assert "| 80.00‡ (no score) |" in row
    assert c.listed
    assert "outside and listed in known_divergences.csv (‡): 1." in md


def test_a_listed_cell_within_2se_is_not_double_daggered(tmp_path):
    """‡ is a divergence these runs show: sonar's NR-LMNN-MKL, listed in
    known_divergences.csv, within 2 SE of the published 88.46% in a run has no
    mark, is not counted 'outside and listed', and a summary line says the listed
    divergence does not show; the listed cells not run are neither."""
    known = lmnnmkl.known_divergences("lmnnmkl", "table1")
    assert ("sonar", "nr_lmnn_mkl") in set(zip(known.dataset, known.method))
    assert len(known) > 1  # listed cells of other datasets, not run here

    rec = _record("nr_lmnn_mkl", True)
    rec["accuracy_pct"] = 87.0  # published 88.46, SE about 2.2: within 2 SE
    cells, weights = lmnnmkl.build_cells([rec], "table1")
    md = lmnnmkl.write_report(cells, weights, "table1", tmp_path).read_text()
    row = next(ln for ln in md.split("| Dataset |", 1)[1].splitlines()
               if ln.startswith("| sonar |"))
    assert "| sonar | 87.00 (no score) | 88.46 " in row
    assert "‡" not in row and "†" not in row
    assert "outside and listed in known_divergences.csv (‡): 0." in md
    c = cells.set_index(["published_dataset", "method"]).loc[
        ("sonar", "nr_lmnn_mkl")
    ]
    assert c.within_2se and not c.listed  # the CSV's column as the mark
    assert not cells.listed.any()  # nor any listed cell without a result
    assert (
        "- Listed in known_divergences.csv but within 2 SE in these runs (not ‡: "
        "the listed divergence does not show here): sonar/nr_lmnn_mkl (87.00 vs "
        "88.46 ±2.22)." in md
    )

    # outside 2 SE, the same cell keeps ‡ and no such line
    rec["accuracy_pct"] = 80.0
    cells, weights = lmnnmkl.build_cells([rec], "table1")
    md = lmnnmkl.write_report(cells, weights, "table1", tmp_path / "o").read_text()
    assert "| 80.00‡ (no score) |" in md and "within 2 SE in these runs" not in md


def _table(md: str) -> dict[str, str]:
    """The Markdown table's rows by their first cell."""
    lines = md.split("| Dataset |", 1)[1].split("\n\n", 1)[0].splitlines()
    return {ln.split(" | ", 1)[0].lstrip("| "): ln for ln in lines}


def test_a_partial_table_keeps_the_published_se_beside_cells_not_run(tmp_path):
    """The paper cells carry their SE whether or not ours was run: a cell not run
    takes the n of the registry's rows (sonar: 208, the n of the committed table's
    ±2.22), an unavailable dataset's cells none, as in the committed table."""
    rec = _record("lmnn_h", True, dataset="iris", n=150)
    cells, weights = lmnnmkl.build_cells([rec], "table1")
    c = cells.set_index(["published_dataset", "method"])
    assert c.loc[("sonar", "nr_lmnn_mkl"), "status"] == "not run"
    assert c.loc[("sonar", "nr_lmnn_mkl"), "se_pct"] == pytest.approx(
        lmnnmkl.published_se_pct(88.46, 208)
    )
    assert c.loc[("malefemale", "nr_lmnn_mkl"), "status"] == "unavailable"
    assert np.isnan(c.loc[("malefemale", "nr_lmnn_mkl"), "se_pct"])
    md = lmnnmkl.write_report(cells, weights, "table1", tmp_path).read_text()
    rows = _table(md)
    assert "| not run | 88.46 ±2.22 += (3.0) |" in rows["sonar"]
    assert "| n/a | 86.57 == (2.5) |" in rows["malefemale"]
    assert "the paper's SE is over the dataset's rows" in md


def test_a_finished_cell_without_its_baselines_says_it_has_no_score(tmp_path):
    """A McNemar score compares a method with every other of its dataset: iris's
    LMNN_H alone has none, and the cell and the legend say so instead of leaving
    the parentheses out; a method without any complete dataset has no total (not
    a score of 0 over 0 datasets)."""
    rec = _record("lmnn_h", True, dataset="iris", n=150)
    rec["accuracy_pct"] = 94.67
    cells, weights = lmnnmkl.build_cells([rec], "table1")
    md = lmnnmkl.write_report(cells, weights, "table1", tmp_path).read_text()
    rows = _table(md)
    assert "| 94.67 (no score) | 94.67 ±1.83 (2.0) |" in rows["iris"]
    assert "(no score): a finished cell of a dataset with a method not run" in md
    total = rows["Total score"]
    assert "0.0" not in total and "0 datasets" not in total
    assert total.count("| no score (no dataset with all methods run) |") == 5


def test_a_dataset_with_every_method_run_is_scored_and_totalled(tmp_path):
    """The full-table case: sonar with all five methods finished has its scores
    and totals as numbers, no 'no score'; the other datasets stay not run."""
    records = [_record(m, True, True if m == "lmnn_mkl_p" else MISSING)
               for m in lmnnmkl.METHOD_NAMES]
    cells, weights = lmnnmkl.build_cells(records, "table1")
    md = lmnnmkl.write_report(cells, weights, "table1", tmp_path).read_text()
    rows = _table(md)
    assert "no score" not in rows["sonar"]
    assert rows["sonar"].count(" (2.0) |") >= 5  # equal predictions: all ties
    assert rows["Total score"].count("| 2.0 (1 dataset) |") == 5
    assert rows["Total score"].count(" (same dataset) |") == 5
    assert "(no score):" not in md


@pytest.mark.parametrize("artifact", ["table1", "table2"])
def test_the_committed_full_tables_render_as_committed(artifact):
    """The committed tables, rendered again from their own CSV: every cell run or
    unavailable, so neither the partial table's words nor its SEs appear, and the
    Markdown and LaTeX tables and the legend are the committed bytes."""
    from reports.records import GENERATED_DIR
    from reports.render import latex_table, markdown_table

    folder = GENERATED_DIR / "lmnnmkl"
    cells = pd.read_csv(folder / f"{artifact}.csv")
    marks = [c for c in cells.columns if c.startswith(("vs_", "published_vs_"))]
    cells[marks] = cells[marks].fillna("")
    assert set(cells.status) <= {"ok", "unavailable"}
    assert lmnnmkl.partial_note(cells) == ""
    header, rows = lmnnmkl.table_rows(cells)
    assert markdown_table(header, rows) in (folder / f"{artifact}.md").read_text()
    tex = (folder / f"{artifact}.tex").read_text()
    body = latex_table(header, lmnnmkl.table_rows(cells, latex=True)[1], "", "")
    assert body.split(r"\hline", 1)[1].split(r"\end{tabular}")[0] in tex


def test_weight_summary_is_the_mean_and_the_folds_that_keep_a_kernel():
    """The weights table: a kernel's mean weight over the folds (not the median:
    0.0, 0.002, 0.1 average to 0.034), and the folds that keep it, those where its
    weight is above 1e-3 (0.002 and 0.1: 2 of 3)."""
    rec = _record("lmnn_mkl_p", True, True, n_folds=3)
    rows = np.array([[0.0, 1.0], [0.002, 0.998], [0.1, 0.9]])
    for fold, w in zip(rec["folds"], rows):
        fold["solver"]["kernel_weights"] = list(w) + [0.0] * 18
    _, weights = lmnnmkl.build_cells([rec], "table1")
    sonar = weights[weights.published_dataset == "sonar"]
    first, second = sonar.iloc[0], sonar.iloc[1]
    assert first.mean_weight == pytest.approx(rows[:, 0].mean())
    assert second.mean_weight == pytest.approx(rows[:, 1].mean())
    assert (first.n_folds_selected, second.n_folds_selected) == (2, 3)
    assert (sonar.iloc[2:].n_folds_selected == 0).all()


def test_cell_delta_and_se_band_are_reports_stats():
    """A cell's delta is ours minus the paper's, its SE the published proportion's
    over the distinct test instances, and † marks only a cell outside 2 SE
    (sonar, paper 82.21% of 208, SE 2.65: LMNN_H at 86.00 is within 2 SE but not
    1, kNN at 76.00 is outside)."""
    h, knn = _record("lmnn_h", True), _record("knn1", True)
    h["accuracy_pct"], knn["accuracy_pct"] = 86.0, 76.0
    cells, _ = lmnnmkl.build_cells([h, knn], "table1")
    c = cells.set_index(["published_dataset", "method"])
    for m, acc, inside in (("lmnn_h", 86.0, True), ("knn1", 76.0, False)):
        r = c.loc[("sonar", m)]
        assert r.delta == pytest.approx(acc - 82.21)
        assert r.se_pct == pytest.approx(lmnnmkl.published_se_pct(82.21, 208))
        assert r.within_2se == lmnnmkl.within_se(acc, 82.21, 208) == inside
        assert lmnnmkl._mark(r) == ("" if inside else "†")
    assert not lmnnmkl.within_se(86.0, 82.21, 208, k=1)


def test_the_se_counts_each_test_instance_once():
    """With instances tested in several splits (Table 2's repeated halves), the
    published proportion's SE is over the distinct instances, not over every
    prediction: 208 here, each predicted twice."""
    rec = _record("lmnn_h", True, n=208)
    idx = rec["predictions"]["index"] * 2
    rec["predictions"] = {"index": idx, "y_true": [0] * 416, "y_pred": [0] * 416}
    cells, _ = lmnnmkl.build_cells([rec], "table1")
    r = cells.set_index(["published_dataset", "method"]).loc[("sonar", "lmnn_h")]
    assert r.n_test_distinct == 208
    assert r.se_pct == pytest.approx(lmnnmkl.published_se_pct(82.21, 208))
