"""Report writers on a smoke sweep: every file is written, with the right cells."""

import pandas as pd
import pytest

from reports.mlsvm import table1
from reports.records import PUBLISHED_DIR
from runners.run import compose_config, run_job


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    import os

    os.environ["KML_RESULTS"] = str(results)
    for method in ("svm", "svmm", "fda"):
        rec = run_job(
            compose_config(
                [
                    "experiment=mlsvm_table1",
                    "protocol=smoke",
                    "dataset=sonar",
                    f"method={method}",
                    "kernel=linear",
                ]
            )
        )
        assert rec["status"] == "ok", rec.get("reason")
    return results


def test_table1_files(smoke_results, tmp_path):
    md = table1(smoke_results, out_dir=tmp_path, variants=True).read_text()
    assert "## Linear kernel" in md
    assert "| sonar | 208 |" in md
    assert "McNemar score (1 dataset)" in md
    assert "not run" not in md.split("## Linear kernel")[0]
    for name in (
        "table1.tex",
        "table1.csv",
        "table1_scores.csv",
        "fig2.png",
        "fig2.pdf",
        "fig2_times.csv",
    ):
        assert (tmp_path / name).stat().st_size > 0, name
    cells = pd.read_csv(tmp_path / "table1.csv")
    sonar = cells[(cells.dataset == "sonar") & (cells.kernel == "linear")]
    assert set(sonar[sonar.status == "ok"].method) == {"svm", "svmm", "fda"}
    # published numbers come from reports/published, never from the records
    pub = pd.read_csv(PUBLISHED_DIR / "mlsvm.csv")
    pub = (
        pub[
            (pub.artifact == "table1")
            & (pub.dataset == "sonar")
            & (pub.kernel == "linear")
        ]
        .set_index("method")
        .value
    )
    got = sonar.set_index("method").published_pct
    assert got.sort_index().equals(pub.loc[got.index].sort_index().rename(got.name))
    scores = pd.read_csv(tmp_path / "table1_scores.csv")
    linear = scores[scores.kernel == "linear"].set_index("method")
    # three methods scored on one dataset: the scores add up to 3 pairs
    assert linear.reproduced_score[["svm", "svmm", "fda"]].sum() == 3.0
    # "published (same cells)": the published winners of the reproduced cells only,
    # not of the 100+ cells of the paper that this sweep did not run
    assert not cells[cells.status != "ok"].published_lowest.any()
    assert not cells[cells.status != "ok"].lowest.any()
    published_best = sonar.published_pct[sonar.status == "ok"].min()
    assert sonar[sonar.published_lowest].published_pct.tolist() == [published_best]


def test_variants_never_write_into_the_committed_tables(smoke_results, tmp_path):
    from reports.guard import GENERATED_DIR, ReportError

    before = {p: p.stat().st_mtime_ns for p in GENERATED_DIR.rglob("*") if p.is_file()}
    for out in (None, GENERATED_DIR / "mlsvm"):
        with pytest.raises(ReportError, match="--variants .* pass --out DIR"):
            table1(smoke_results, out_dir=out, variants=True)
    after = {p: p.stat().st_mtime_ns for p in GENERATED_DIR.rglob("*") if p.is_file()}
    assert after == before


def test_a_store_of_variants_only_is_a_clear_error(smoke_results, tmp_path):
    # the fix named is the command line's (a Python keyword means nothing there)
    with pytest.raises(ValueError, match="pass --variants --out DIR to kml-report"):
        table1(smoke_results, out_dir=tmp_path)


def test_fig2_is_redrawn_only_when_its_numbers_change(smoke_results, tmp_path):
    table1(smoke_results, out_dir=tmp_path, variants=True)
    png = tmp_path / "fig2.png"
    drawn = png.stat().st_mtime_ns
    table1(smoke_results, out_dir=tmp_path, variants=True)
    assert png.stat().st_mtime_ns == drawn  # same numbers: not redrawn
    times = tmp_path / "fig2_times.csv"
    times.write_text(times.read_text().replace("sonar", "sonar ", 1))
    table1(smoke_results, out_dir=tmp_path, variants=True)
    assert png.stat().st_mtime_ns != drawn
    assert "sonar " not in times.read_text()


def test_grid_top_flags_a_selection_pinned_to_the_grid_edge():
    from reports.error_tables import grid_top

    def rec(picks, grid=None):
        grid = grid or {"C": [0.1, 1, 10, 100, 1000], "lam": [0.1, 1]}
        return {"config": {"grid": grid}, "folds": [{"best_params": p} for p in picks]}

    assert grid_top(rec([{"C": 1000, "lam": 1}] * 10)) == "C=1000, lam=1"
    assert grid_top(rec([{"C": 1000, "lam": 0.1}] * 9 + [{"C": 100, "lam": 1}])) == ""
    assert grid_top(rec([{"C": 1000}] * 3, {"C": [1000]})) == ""  # no grid to leave
    assert grid_top(rec([{"k": "a"}] * 3, {"k": ["a", 1]})) == ""  # categorical
    assert grid_top({"config": {}, "folds": []}) == ""
    assert grid_top(rec([{"solver": "b"}] * 3, {"solver": ["a", "b"]})) == ""
    assert grid_top(rec([{"w": [1, 2]}] * 3, {"w": [[0, 1], [1, 2]]})) == ""
    assert grid_top(rec([{"s": True}] * 3, {"s": [False, True]})) == ""
    staged = {"config": {"grid": [{"C": [1, 10]}, {"mu": [1, 10]}]},
              "folds": [{"best_params": {"C": 10}}]}  # fmt: skip
    assert grid_top(staged) == ""


def test_identical_predictions_are_counted_per_method_pair(smoke_results, tmp_path):
    from reports.error_tables import build_error_table
    from reports.records import load_records

    recs = load_records(smoke_results, "mlsvm_table1", variants=True)
    t = build_error_table(recs, "mlsvm", "table1")
    by_method = {r["method"]: r["predictions"]["y_pred"] for r in recs}
    for (a, b), (n_same, n_both) in t.identical.items():
        assert n_both == 1  # one (kernel, dataset) cell: sonar, linear
        assert n_same == int(by_method[a] == by_method[b])
    assert set(t.identical) == {("svmm", "svm"), ("svmm", "fda"), ("svm", "fda")}


def test_a_dataset_without_a_public_copy_reads_as_in_the_complete_table(
    smoke_results, tmp_path
):
    """ovarian with no record (a sub-sweep) is named unavailable, in the words of
    the skip record a run of it writes, not "not run yet" (no run can fill it)."""
    skipped = run_job(
        compose_config(
            [
                "experiment=mlsvm_table1",
                "protocol=smoke",
                "dataset=ovarian",
                "method=svm",
                "kernel=linear",
                f"paths.results={tmp_path / 'elsewhere'}",
            ]
        )
    )
    assert skipped["status"] == "skip"
    md = table1(smoke_results, out_dir=tmp_path / "out", variants=True).read_text()
    ovarian = [line for line in md.splitlines() if line.startswith("| ovarian")]
    assert len(ovarian) == 4  # one row per kernel
    assert all(row.startswith(f"| ovarian ({skipped['reason']}) |") for row in ovarian)
    assert "not run yet" not in "".join(ovarian)
    not_run = md.split("## Cells not run")[1].split("\n## ")[0]
    assert "- wpbc: all cells" in not_run and "ovarian" not in not_run
    cells = pd.read_csv(tmp_path / "out" / "table1.csv")
    assert set(cells[cells.dataset == "ovarian"].status) == {"skip"}


def test_columns_are_named_as_in_the_committed_table(smoke_results, tmp_path):
    """A method with no record (ε-SVM and SVM-FDA here) has its paper name, read
    from the class its config file names, as in the committed table."""
    from reports.guard import GENERATED_DIR

    def headers(md: str) -> list[str]:
        return [line for line in md.splitlines() if line.startswith("| dataset |")]

    md = table1(smoke_results, out_dir=tmp_path, variants=True).read_text()
    committed = (GENERATED_DIR / "mlsvm" / "table1.md").read_text()
    assert headers(md) == headers(committed)
    assert "| dataset | n | SVM_m | ε-SVM | SVM-FDA | SVM | FDA |" in headers(md)


def test_cells_from_variant_runs_are_marked_with_their_overrides(
    smoke_results, tmp_path
):
    """--variants: a cell filled by a run with command-line overrides (here
    protocol=smoke) is marked, its overrides are listed under the table, and the
    notes do not claim the experiment's own protocol (10-fold CV) for it."""
    md = table1(smoke_results, out_dir=tmp_path, variants=True).read_text()
    head, linear = md.split("## Linear kernel")
    assert "**Built with variant runs**" in head.split("Protocol (")[0]
    assert "the protocol stated below is the experiment's own" in head
    sonar = next(line for line in linear.splitlines() if line.startswith("| sonar"))
    assert sonar.count(" [v1] |") == 3  # SVM_m, SVM, FDA; ε-SVM, SVM-FDA not run
    listed = linear.split("## ")[0]
    assert "- [v1] `protocol=smoke`: sonar (SVM_m, SVM, FDA)" in listed
    assert "- reproduced cells from variant runs ([vN]): 3 of 3" in md
    cells = pd.read_csv(tmp_path / "table1.csv", keep_default_na=False)
    assert set(cells[cells.status == "ok"].variant) == {"protocol=smoke"}
    assert set(cells[cells.status != "ok"].variant) == {""}
    assert r"(32.69)$^{v1}$" in (tmp_path / "table1.tex").read_text()


def test_each_set_of_overrides_has_its_mark_and_own_runs_none(smoke_results):
    from reports.error_tables import (
        build_error_table,
        error_table_markdown,
        variant_columns,
    )
    from reports.records import load_records

    recs = load_records(smoke_results, "mlsvm_table1", variants=True)
    by_method = {r["method"]: r for r in recs}
    by_method["fda"]["_variant"] = ["protocol=smoke", "kernel.normalize=null"]
    md = error_table_markdown(build_error_table(recs, "mlsvm", "table1"), "T", [])
    assert "- [v1] `protocol=smoke`: sonar (SVM_m, SVM)" in md
    assert "- [v2] `protocol=smoke kernel.normalize=null`: sonar (FDA)" in md
    # the same records judged own runs (no --variants): no mark, no note, no column
    for r in recs:
        r["_variant"] = []
    t = build_error_table(recs, "mlsvm", "table1")
    md = error_table_markdown(t, "T", [])
    assert "[v" not in md and "variant" not in md
    assert "variant" not in variant_columns(t.cells).columns


def test_a_variant_cell_outside_2se_is_not_given_the_listed_reason(smoke_results):
    """reports/known_divergences.csv lists sonar's linear SVM and FDA with a reason
    worked out for the paper's protocol (10-fold CV): a variant run's cell there
    (protocol=smoke) is outside 2 SE without a reviewed reason, so † and not ‡, and
    the reason is not cited for it; the same records judged own runs keep ‡."""
    from reports.error_tables import (
        build_error_table,
        error_table_markdown,
        known_divergences,
    )
    from reports.records import load_records

    known = known_divergences("mlsvm", "table1")
    listed = {
        m for d, k, m in zip(known.dataset, known.kernel, known.method)
        if (d, k) == ("sonar", "linear")
    }
    assert {"svm", "fda"} <= listed  # the premise of this test

    recs = load_records(smoke_results, "mlsvm_table1", variants=True)
    t = build_error_table(recs, "mlsvm", "table1")
    sonar = t.cells[(t.cells.dataset == "sonar") & (t.cells.kernel == "linear")]
    outside = sonar[(sonar.status == "ok") & ~sonar.within_2se.astype(bool)]
    assert set(outside.method) & listed  # a listed cell the variant leaves outside
    md = error_table_markdown(t, "T", [])
    row = next(ln for ln in md.splitlines() if ln.startswith("| sonar"))
    assert "‡" not in row and row.count("† [v1]") == len(outside)
    assert (sonar[sonar.variant != ""].known_divergence == "").all()  # nor the CSV
    assert "## Reviewed divergences (‡)" not in md  # no cell carries ‡
    unreviewed = md.split("## Cells outside 2 SE without a reviewed reason (†)")[1]
    for m in outside.method:
        assert f"sonar / linear / {t.names[m]}: " in unreviewed
    assert unreviewed.count(" [v1]") == len(outside)

    # the same records as the experiment's own runs: the listed reason applies
    for r in recs:
        r["_variant"] = []
    md = error_table_markdown(build_error_table(recs, "mlsvm", "table1"), "T", [])
    row = next(ln for ln in md.splitlines() if ln.startswith("| sonar"))
    assert row.count("‡") == len(set(outside.method) & listed)
    reviewed = md.split("## Reviewed divergences (‡)")[1].split("\n## ")[0]
    assert reviewed.count("- sonar / Linear kernel / ") == len(
        set(outside.method) & listed
    )


def test_a_listed_cell_is_double_daggered_only_with_a_result_outside_2se(
    smoke_results,
):
    """‡ is a divergence these runs show that known_divergences.csv explains: on the
    smoke sweep (sonar, linear kernel, judged as own runs) the listed SVM cell is
    outside 2 SE and keeps ‡ and its reason; the listed FDA cell is within 2 SE, so it
    has no mark, no reason in the CSV, no citation under the reasons, and a summary
    line says the listed divergence does not show; listed cells not run are not cited.
    """
    from reports.error_tables import (
        build_error_table,
        error_table_markdown,
        known_divergences,
    )
    from reports.records import load_records

    known = known_divergences("mlsvm", "table1")
    listed = set(zip(known.dataset, known.kernel, known.method))
    recs = load_records(smoke_results, "mlsvm_table1", variants=True)
    for r in recs:
        r["_variant"] = []  # judged as the experiment's own runs
    t = build_error_table(recs, "mlsvm", "table1")
    c = t.cells.set_index(["published_dataset", "kernel", "method"])
    svm, fda = c.loc[("sonar", "linear", "svm")], c.loc[("sonar", "linear", "fda")]
    # the premises: both listed, SVM outside 2 SE, FDA (25.48 vs 27.88) within
    assert {("sonar", "linear", "svm"), ("sonar", "linear", "fda")} <= listed
    assert not svm.within_2se and fda.status == "ok" and fda.within_2se
    assert ("ionosphere", "linear", "fda") in listed
    assert c.loc[("ionosphere", "linear", "fda")].status == "not run"

    assert svm.known_divergence.startswith("[unattainable] ")
    assert (c.drop(index=("sonar", "linear", "svm")).known_divergence == "").all()
    assert t.listed_within == [("linear", "sonar", "fda")]

    md = error_table_markdown(t, "T", [])
    row = next(ln for ln in md.splitlines() if ln.startswith("| sonar"))
    assert "| 25.48 / 27.88 / -2.40 |" in row  # FDA: neither ‡ nor †
    assert row.count("‡") == 1 and "-9.61‡ |" in row
    reviewed = md.split("## Reviewed divergences (‡)")[1].split("\n## ")[0]
    cited = [ln for ln in reviewed.splitlines() if ln.startswith("- ")]
    assert len(cited) == 1 and cited[0].startswith("- sonar / Linear kernel / SVM: ")
    summary = md.split("## Summary")[1].split("\n## ")[0]
    assert (
        "- cells listed in reports/known_divergences.csv but within 2 SE in these "
        "runs (not ‡: the listed divergence does not show here): "
        f"sonar / linear / {t.names['fda']}: 25.48 vs 27.88 (SE "
    ) in summary


def _cell_record(dataset, method, wrong, *, n=100, seed=0):
    """A finished mlsvm Table I record (linear kernel) whose ``n`` test instances
    (label 0) are misclassified exactly at the indices ``wrong``."""
    y_pred = [1 if i in set(wrong) else 0 for i in range(n)]
    return {
        "dataset": dataset,
        "method": method,
        "kernel": "linear",
        "seed": seed,
        "status": "ok",
        "error_pct": 100.0 * len(wrong) / n,
        "n_test_total": n,
        "converged": True,
        "config": {"grid": {}},
        "folds": [],
        "predictions": {"index": list(range(n)), "y_true": [0] * n, "y_pred": y_pred},
        "_variant": [],
    }


# Two datasets of mlsvm Table I's linear block: wpbc with three methods, wdbc with
# two (published: wpbc SVM_m 19.70, eps-SVM 21.21, SVM 25.25; wdbc SVM_m 2.11, SVM
# 2.28), and a seed-1 run of one wpbc cell that the table must leave out.
_SYNTHETIC = [
    _cell_record("wpbc", "svmm", range(18)),  # within 1 SE
    _cell_record("wpbc", "eps_svm", range(30)),  # +8.79 > 2 SE = 8.18: dagger
    _cell_record("wpbc", "svm", [*range(29), 40]),  # +4.75: within 2 SE, not 1
    _cell_record("wdbc", "svmm", range(2)),
    _cell_record("wdbc", "svm", range(4)),  # 98% of its predictions as SVM_m's
    _cell_record("wpbc", "svm", range(10), seed=1),
]


def test_error_table_numbers_against_the_statistics_they_are_made_of():
    """Every number and mark of an error table, on hand-made records: the SE bands
    are :func:`reports.stats.within_se` with k = 1 and 2 of the published
    proportion, † marks only a cell outside 2 SE, bold the lowest reproduced error,
    the McNemar totals are the sums over datasets of
    :func:`reports.stats.mcnemar_scores` (also with two methods on a dataset), the
    lowest-error counts are counts, "identical" means every prediction equal, the
    published totals are not compared while a public dataset is incomplete, and a
    record of another seed is left out."""
    from reports.error_tables import (
        build_error_table,
        error_table_markdown,
        has_public_copy,
        published_dataset_names,
    )
    from reports.records import aligned_predictions
    from reports.stats import mcnemar_scores, published_se_pct, within_se

    recs = [dict(r) for r in _SYNTHETIC]
    t = build_error_table(recs, "mlsvm", "table1")
    c = t.cells[t.cells.status == "ok"].set_index(["dataset", "method"])
    assert len(c) == 5
    assert c.loc[("wpbc", "svm"), "reproduced_pct"] == 30.0  # not the seed-1 run
    for (d, m), r in c.iterrows():
        assert r.delta == pytest.approx(r.reproduced_pct - r.published_pct)
        assert r.se_pct == pytest.approx(published_se_pct(r.published_pct, 100))
        for k in (1, 2):
            assert r[f"within_{k}se"] == within_se(
                r.reproduced_pct, r.published_pct, 100, k=k
            ), (d, m, k)
    assert c.within_1se.tolist() == [True, False, False, True, False]
    assert c.within_2se.tolist() == [True, False, True, True, True]
    assert c.lowest[c.lowest].index.tolist() == [("wpbc", "svmm"), ("wdbc", "svmm")]

    # McNemar totals: the per-dataset scores of reports.stats, summed
    expected = dict.fromkeys(["svmm", "eps_svm", "svm"], 0.0)
    for d in ("wpbc", "wdbc"):
        y, preds = aligned_predictions([r for r in recs[:5] if r["dataset"] == d])
        for m, s in mcnemar_scores(y, preds).items():
            expected[m] += s
    # by hand: wpbc SVM_m beats both (n10 = 12, p = 0.0015), eps-SVM = SVM (1 vs 1);
    # wdbc SVM_m = SVM (0 vs 2, p = 0.48)
    assert expected == {"svmm": 2.5, "eps_svm": 0.5, "svm": 1.0}
    sc = t.scores[t.scores.kernel == "linear"].set_index("method")
    assert sc.reproduced_score[["svmm", "eps_svm", "svm"]].to_dict() == expected
    assert (sc.n_datasets_scored == 2).all()
    # no public dataset has all five methods: the published totals are not compared
    public = [d for d in published_dataset_names("mlsvm") if has_public_copy(d)]
    assert t.not_comparable["linear"] == public
    assert sc.published_score.isna().all()

    wins = t.wins.set_index("method")
    assert wins.reproduced_lowest.to_dict()["svmm"] == 2
    assert t.identical[("svmm", "svm")] == (0, 2)  # 98% alike is not identical
    assert t.identical[("svmm", "eps_svm")] == (0, 1)

    md = error_table_markdown(t, "T", [])
    row = next(ln for ln in md.splitlines() if ln.startswith("| wpbc |"))
    assert "| **18.00** / 19.70 / -1.70 |" in row
    assert "| 30.00 / 21.21 / +8.79† |" in row
    assert "| 30.00 / 25.25 / +4.75 |" in row  # within 2 SE: no mark
    assert "within 1 SE: 2 (40%); within 2 SE: 4 (80%)" in md


def test_table2_kernel_weights_are_fold_means_above_one_percent(tmp_path, monkeypatch):
    """mlsvm Table II's weights: each kernel's weight averaged over the outer
    folds (CSV), and the kernels whose mean is at least 0.01, largest first
    (Markdown); 0.005 is dropped, 0.05 kept."""
    import numpy as np

    import reports.mlsvm as mlsvm
    from methods.kernels import bank20

    labels = [s.label for s in bank20()]
    folds = np.zeros((2, 20))
    for lab, w in {"poly1": (0.5, 0.3), "gauss1": (0.4, 0.6), "gauss2": (0.1, 0.0),
                   "gauss5": (0.0, 0.1), "gauss7": (0.01, 0.0)}.items():  # fmt: skip
        folds[:, labels.index(lab)] = w
    rec = _cell_record("sonar", "simplemkl", range(30), n=208)
    rec["kernel"] = "mkl20"
    rec["folds"] = [{"solver": {"kernel_weights": list(w)}} for w in folds]
    monkeypatch.setattr(mlsvm, "load_records", lambda *a, **k: [rec])
    md = mlsvm.table2(tmp_path, out_dir=tmp_path / "out").read_text()
    csv = pd.read_csv(tmp_path / "out" / "table2_weights.csv").iloc[0]
    np.testing.assert_allclose(csv[labels].to_numpy(float), folds.mean(axis=0))
    row = next(ln for ln in md.split("## Learned kernel weights")[1].splitlines()
               if ln.startswith("| sonar"))  # fmt: skip
    assert row.endswith("| gauss1 0.50, poly1 0.40, gauss2 0.05, gauss5 0.05 |")


def test_tied_lowest_errors_are_all_bold_and_all_counted():
    """"Lowest error per method (ties count)": two methods with the row's lowest
    error are both bold and both credited."""
    from reports.error_tables import build_error_table

    recs = [
        _cell_record("wpbc", "svmm", range(20)),
        _cell_record("wpbc", "svm", range(10, 30)),
        _cell_record("wpbc", "eps_svm", range(25)),
    ]
    t = build_error_table(recs, "mlsvm", "table1")
    c = t.cells[t.cells.status == "ok"].set_index("method")
    assert c.lowest.to_dict() == {"svmm": True, "eps_svm": False, "svm": True}
    wins = t.wins.set_index("method").reproduced_lowest
    assert (wins["svmm"], wins["svm"], wins["eps_svm"]) == (1, 1, 0)
