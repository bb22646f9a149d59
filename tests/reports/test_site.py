"""The report site (reports/site.py) on synthetic tables and on a copy of the
committed generated reports: never on the committed files themselves."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reports import site

ARBF_CELLS = 36  # 6 methods x 6 datasets


def _long(**columns) -> pd.DataFrame:
    return pd.DataFrame({"dataset": ["d1"], "method": ["m"], **columns})


def _only_cell(df: pd.DataFrame) -> site.Cell:
    suffix = site.is_long_format(df)
    assert suffix
    blocks = site.long_blocks(df, suffix, None, "", {}, [])
    return blocks[0].rows[0][2][0]


# ------------------------------------------------------------- cells (defects 1-2)


def test_a_reason_keeps_its_text() -> None:
    """Only a NaN reason is empty; the letters "nan" inside a reason stay."""
    reason = "dataset 'x' is not available: financial data, size < 10 & nan-free"
    cell = _only_cell(
        _long(reproduced_pct=[np.nan], published_pct=[10.0], reason=[reason])
    )
    assert cell.reason == reason
    # a NaN reason (an empty CSV field) falls back to the row's status
    cell = _only_cell(
        _long(
            reproduced_pct=[np.nan],
            published_pct=[10.0],
            reason=[np.nan],
            status=["skip"],
        )
    )
    assert cell.reason == "skip"


def test_a_cell_with_an_se_and_no_reproduced_number_has_a_title() -> None:
    cell = site.Cell(None, 20.0, se=2.5, reason="no record")
    assert cell.z is None
    assert cell.title == "not reproduced: no record, published 20.00, SE 2.50"
    # with a reproduced number the distance in SE is shown as before
    cell = site.Cell(25.0, 20.0, se=2.5)
    assert cell.title.endswith("SE 2.50 (2.0 SE)")


# ------------------------------------------------- a copy of the generated reports


def test_site_builds_and_keeps_the_reason(tmp_path) -> None:
    """A Table II cell with an SE but no reproduced number (and a reason with
    "nan" in a word): the page builds and says both."""
    gen = tmp_path / "generated"
    shutil.copytree(site.GENERATED / "mlsvm", gen / "mlsvm")
    m = pd.read_csv(gen / "mlsvm" / "table2.csv")
    i = m.index[m.reproduced_pct.notna()][0]
    m.loc[i, "reproduced_pct"] = np.nan  # se_pct stays: an SE without a distance
    m.loc[i, "status"] = "skip"
    m.loc[i, "reason"] = "dataset 'x' is not available: financial data"
    m.to_csv(gen / "mlsvm" / "table2.csv", index=False)
    index = site.build_site(tmp_path / "site", results=None, generated=gen)
    page = (index.parent / "mlsvm" / "table2.html").read_text()
    assert "dataset &#39;x&#39; is not available: financial data" in page
    assert f"SE {m.loc[i, 'se_pct']:.2f}" in page


@pytest.fixture(scope="module")
def variant(tmp_path_factory) -> dict[str, object]:
    """A copy of reports/generated/arbf with one cell missing and one divergence
    taken off the list; the site built from it."""
    tmp = tmp_path_factory.mktemp("site")
    gen = tmp / "generated"
    shutil.copytree(site.GENERATED / "arbf", gen / "arbf")
    t = pd.read_csv(gen / "arbf" / "table1.csv")
    # a cell inside one std loses its result: it must not count as a miss
    gone = t.index[t.within_1std & (t.status == "ok")][0]
    t.loc[gone, ["auc_mean", "auc_std", "diff"]] = np.nan
    t.loc[gone, ["n_splits", "within_1std", "status"]] = [0, False, "missing"]
    t.to_csv(gen / "arbf" / "table1.csv", index=False)

    known = site.load_known()
    arbf = known[(known.paper == "arbf") & (known.artifact == "table1")]
    dropped = arbf.iloc[0]
    kd = tmp / "known_divergences.csv"
    known.drop(index=dropped.name).to_csv(kd, index=False)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(site, "KNOWN_DIVERGENCES", kd)
        index = site.build_site(tmp / "site", results=None, generated=gen)
        paper = next(p for p in site.papers(gen) if p.key == "arbf")
        known = site.load_known()
        summary = site.summarize(paper, paper.artifacts[0], gen, None, known)
        line = site.summary_line("arbf", "table1", generated=gen)
    ok = t[t.status == "ok"]
    return {
        "gen": gen,
        "index": index,
        "summary": summary,
        "line": line,
        "ok": ok,
        "dropped": dropped,
    }


def test_arbf_within_one_std_counts_only_reproduced_cells(variant) -> None:
    s, ok = variant["summary"], variant["ok"]
    assert len(ok) == ARBF_CELLS - 1
    # table1.md's rule: of the ok cells (arbf.table1: ``ok = t[t.status == "ok"]``)
    assert (s.within_std, s.with_std) == (int(ok.within_1std.sum()), len(ok))
    assert f"{s.within_std} of {len(ok)} (" in variant["line"]
    html = variant["index"].read_text()
    assert s.std_pct() in html


def test_arbf_cell_outside_one_std_and_unlisted_is_flagged(variant) -> None:
    s, d = variant["summary"], variant["dropped"]
    assert s.unlisted == 1
    assert (
        sum(s.divergences.values())
        == len(site.load_known().query("paper == 'arbf' and artifact == 'table1'")) - 1
    )
    page = (variant["index"].parent / "arbf" / "table1.html").read_text()
    assert page.count('class="dagger"') == 1
    assert "1 unlisted †" in page
    # the flagged cell is the one taken off the list, outside one std, with both
    # stds in its text and its title
    t = pd.read_csv(variant["gen"] / "arbf" / "table1.csv").set_index(
        ["dataset", "method"]
    )
    r = t.loc[(d.dataset, d.method)]
    cell = re.search(
        rf'<td class="num ours std_out" title="reproduced {r.auc_mean:.2f} '
        rf"± {r.auc_std:.2f}, published {r.published_mean:.2f} ± "
        rf'{r.published_std:.2f}, [^"]*outside one published std\. Outside one '
        rf'published std and not in the known-divergence list">'
        rf'{r.auc_mean:.2f}<span class="sd"> ± {r.auc_std:.2f}</span>'
        r'<span class="dagger">†</span>',
        page,
    )
    assert cell, "no flagged cell with its stds"
    # the index shows it too
    assert "1 unlisted †" in variant["index"].read_text()


def test_arbf_page_shows_its_criterion_and_side_tables(variant) -> None:
    page = (variant["index"].parent / "arbf" / "table1.html").read_text()
    s = variant["summary"]
    assert f"<li>{s.std_pct()} (of the reproduced cells" in page
    assert "within 1 published std" in page  # the legend of its own bands
    for side in ("claims.csv", "table1_check_variants.csv"):
        assert f'data-source="files/{side}" data-kind="side"' in page
    n_std1 = page.count('class="num ours std1"')
    assert n_std1 == s.within_std


def test_footnote_reference_ids_are_unique(tmp_path) -> None:
    # mlsvm Table I: the same footnote in several rows of one column
    gen = tmp_path / "generated"
    shutil.copytree(site.GENERATED / "mlsvm", gen / "mlsvm")
    index = site.build_site(tmp_path / "site", results=None, generated=gen)
    for page in sorted(index.parent.rglob("*.html")):
        ids = re.findall(r' id="([^"]+)"', page.read_text())
        dup = sorted({i for i in ids if ids.count(i) > 1})
        assert not dup, f"{page.name}: duplicate ids {dup}"


# ----------------------------------------------------- index: divergence statuses


def _paper_with_table(tmp_path: Path) -> tuple[Path, Path]:
    gen = tmp_path / "generated"
    (gen / "newpaper").mkdir(parents=True)
    pd.DataFrame(
        {
            "dataset": ["a", "b"],
            "method": ["m", "m"],
            "reproduced_pct": [10.0, 30.0],
            "published_pct": [11.0, 12.0],
            "se_pct": [0.5, 1.0],
        }
    ).to_csv(gen / "newpaper" / "table3.csv", index=False)
    kd = tmp_path / "known_divergences.csv"
    pd.DataFrame(
        {
            "paper": ["newpaper", "newpaper"],
            "artifact": ["table3", "table9"],
            "dataset": ["b", "b"],
            "kernel": ["", ""],
            "method": ["m", "m"],
            "status": ["disputed", "open"],
            "reason": ["the published number is a typo", "no table yet"],
        }
    ).to_csv(kd, index=False)
    return gen, kd


def test_other_divergence_status_is_shown(tmp_path, monkeypatch) -> None:
    gen, kd = _paper_with_table(tmp_path)
    monkeypatch.setattr(site, "KNOWN_DIVERGENCES", kd)
    index = site.build_site(tmp_path / "site", generated=gen)
    html = index.read_text()
    assert '<span class="st disputed">1 disputed</span>' in html
    page = (index.parent / "newpaper" / "table3.html").read_text()
    assert "1 disputed" in page and 'class="dagger"' not in page


def test_a_listed_reason_goes_only_to_a_cell_outside(tmp_path, monkeypatch) -> None:
    """A table without its own reasons gets them from the list only for cells it
    shows outside the tolerance (arbf's within_1std, lmnnmkl's listed), as their
    ‡ does: not for a listed cell within it, nor for one not run."""
    gen = tmp_path / "generated"
    (gen / "newpaper").mkdir(parents=True)
    table = pd.DataFrame(
        {
            "dataset": ["a", "b", "c"],
            "method": ["m", "m", "m"],
            "reproduced_mean": [70.0, 90.0, np.nan],
            "published_mean": [80.0, 91.0, 85.0],
            "within_1std": [False, True, False],
            "status": ["ok", "ok", "not run"],
        }
    )
    table.to_csv(gen / "newpaper" / "table3.csv", index=False)
    kd = tmp_path / "known_divergences.csv"
    pd.DataFrame(
        {
            "paper": ["newpaper"] * 3,
            "artifact": ["table3"] * 3,
            "dataset": ["a", "b", "c"],
            "kernel": [""] * 3,
            "method": ["m"] * 3,
            "status": ["open"] * 3,
            "reason": ["checked a", "checked b", "checked c"],
        }
    ).to_csv(kd, index=False)
    monkeypatch.setattr(site, "KNOWN_DIVERGENCES", kd)
    df = site.read_table(gen / "newpaper" / "table3.csv")
    assert list(df.known_divergence) == ["[open] checked a", "", ""]
    table.drop(columns="within_1std").assign(listed=[False, True, False]).to_csv(
        gen / "newpaper" / "table3.csv", index=False
    )
    df = site.read_table(gen / "newpaper" / "table3.csv")
    assert list(df.known_divergence) == ["", "[open] checked b", ""]


def test_no_divergences_counted_before_the_table_exists(tmp_path, monkeypatch) -> None:
    gen, kd = _paper_with_table(tmp_path)
    monkeypatch.setattr(site, "KNOWN_DIVERGENCES", kd)
    art = site.Artifact("table9", "Table 9", None)
    s = site.summarize(site.Paper("newpaper", "x"), art, gen, None, site.load_known())
    assert s.status == "not reproduced yet" and s.divergences == {}


# ----------------------------------------------------------- wall time (defect 5)


def test_arbf_wall_time_counts_the_fig2_run(tmp_path) -> None:
    """make reproduce-arbf also runs arbf_t150 (Fig. 2): its records count."""
    folder = tmp_path / "arbf_table1"
    folder.mkdir()
    runs = [
        ("komd", 100.0, "2026-01-01T00:00:00", "2026-01-01T00:01:40", []),
        ("arbf_t150", 3000.0, "2026-01-01T00:02:00", "2026-01-01T00:52:00", []),
        # a variant of the Fig. 2 run and a user's own method still do not count
        (
            "arbf_t150",
            7.0,
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:07",
            ["method.mu_role=weight"],
        ),
        ("mine", 9.0, "2026-01-01T00:00:00", "2026-01-01T00:00:09", []),
    ]
    for i, (method, wall, start, end, extra) in enumerate(runs):
        rec = {
            "status": "ok",
            "method": method,
            "dataset": "heart_libsvm",
            "overrides": [
                "experiment=arbf_table1",
                "dataset=heart_libsvm",
                f"method={method}",
                *extra,
            ],
            "wall_seconds": wall,
            "started": start,
            "finished": end,
            "provenance": {"code_version": "x"},
        }
        (folder / f"r{i}.json").write_text(json.dumps(rec))
    st = site.record_stats(tmp_path, "arbf_table1", "arbf")
    assert (st["records"], st["job_seconds"]) == (2, 3100.0)
    assert st["span_seconds"] == 52 * 60


# ------------------------------------------------------- kdml's wall time (defect 6)


def _kdml_record(
    root: Path, experiment: str, dataset: str, method: str, wall: float, hour: int
) -> None:
    """A finished own run of ``experiment``, ``wall`` seconds from ``hour``:00."""
    folder = root / experiment / dataset
    folder.mkdir(parents=True, exist_ok=True)
    rec = {
        "key": f"{dataset}-{method}",
        "experiment": experiment,
        "dataset": dataset,
        "method": method,
        "kernel": "none",
        "seed": 0,
        "status": "ok",
        "overrides": [
            f"experiment={experiment}",
            f"dataset={dataset}",
            f"method={method}",
        ],
        "wall_seconds": wall,
        "started": f"2026-01-01T{hour:02d}:00:00+00:00",
        "finished": f"2026-01-01T{hour:02d}:00:{wall:02.0f}+00:00",
        "config": {"code_version": "x"},
        "provenance": {"code_version": "x"},
    }
    (folder / f"{method}.json").write_text(json.dumps(rec))


def _kdml_walls(results: Path) -> dict[str, site.ArtifactSummary]:
    paper = next(p for p in site.PAPERS if p.key == "kdml")
    return {
        a.key: site.summarize(paper, a, site.GENERATED, results, site.load_known())
        for a in paper.artifacts
    }


def test_kdml_figures_show_the_wall_time_of_their_experiments(tmp_path) -> None:
    """kdml's figures had no experiment, so the index showed "—" however many kdml
    records there were. Each now sums the experiments its report draws it from:
    Fig. 1 kdml_fig1, Fig. 2 kdml_fig2 and Wave's row from kdml_fig2_wave,
    Figs. 3 and 4 kdml_fig3; the span runs from the first start to the last
    finish over all of them."""
    _kdml_record(tmp_path, "kdml_fig1", "pima", "knn", 10.0, 1)
    _kdml_record(tmp_path, "kdml_fig1", "pima", "lmnn_knn", 20.0, 2)
    _kdml_record(tmp_path, "kdml_fig2", "pima", "knn", 30.0, 3)
    _kdml_record(tmp_path, "kdml_fig2_wave", "waveform_v1", "knn", 40.0, 5)
    _kdml_record(tmp_path, "kdml_fig3", "wall_robot", "kpca_knn", 5.0, 6)
    s = _kdml_walls(tmp_path)
    assert s["fig1"].records == 2
    assert s["fig1"].wall.startswith("60.3 min (30 s of jobs, 2 records")
    assert s["fig2"].records == 2
    assert s["fig2"].wall.startswith("120.7 min (70 s of jobs, 2 records")
    for fig in ("fig3", "fig4"):
        assert s[fig].records == 1
        assert s[fig].wall.startswith("5 s (5 s of jobs, 1 record")


def test_kdml_figures_count_the_experiments_their_report_would_use(tmp_path) -> None:
    """As reports/kdml.py picks them: a figure from its reduced variant when the
    20-run sweep lacks its cells (full_or_reduced), and a supplement only when it
    gives a dataset (supplement's rule: Wave's 20 runs in kdml_fig2 win)."""
    from reports.kdml import figure_experiments

    _kdml_record(tmp_path, "kdml_fig1_reduced", "pima", "knn", 10.0, 1)
    _kdml_record(tmp_path, "kdml_fig2", "waveform_v1", "knn", 30.0, 3)
    _kdml_record(tmp_path, "kdml_fig2_wave", "waveform_v1", "knn", 40.0, 5)
    assert figure_experiments(tmp_path, "fig1") == ("kdml_fig1_reduced",)
    assert figure_experiments(tmp_path, "fig2") == ("kdml_fig2",)
    s = _kdml_walls(tmp_path)
    assert s["fig1"].wall.startswith("10 s (10 s of jobs, 1 record")
    assert s["fig2"].wall.startswith("30 s (30 s of jobs, 1 record")
    assert s["fig3"].wall == ""  # no record of kdml_fig3: no wall time


# ------------------------------------------- a partial store, in the sweep's cells


def _summary(paper_key: str, art_key: str, results: Path) -> site.ArtifactSummary:
    paper = next(p for p in site.PAPERS if p.key == paper_key)
    art = next(a for a in paper.artifacts if a.key == art_key)
    return site.summarize(paper, art, site.GENERATED, results, site.load_known())


def test_a_wrbf_store_missing_runs_is_partial_though_it_has_more_than_49(tmp_path):
    """The store's finished runs were counted against the table's 49 numbers (7
    rows x 7 columns), while the sweep has 98 runs (7 x 7 pairs x 2 methods, the
    7 self-pairs skipped): 60 of them, five datasets' worth, read as complete."""
    names = ["breast_w", "ecoli", "glass", "ionosphere", "iris", "pima", "house_votes"]
    for original in names[:5]:
        for donor in names:
            for method in ("wrbf", "rbf"):
                folder = tmp_path / "wrbf_table1" / f"{original}+{donor}"
                folder.mkdir(parents=True, exist_ok=True)
                rec = {
                    "status": "skip" if donor == original else "ok",
                    "dataset": f"{original}+{donor}",
                    "original_dataset": original,
                    "noise_donor": donor,
                    "method": method,
                    "kernel": "none",
                    "seed": 0,
                    "overrides": [
                        f"dataset={original}",
                        f"dataset.noise_donor={donor}",
                        f"method={method}",
                    ],
                    "wall_seconds": 1.0,
                    "started": "2026-01-01T00:00:00+00:00",
                    "finished": "2026-01-01T00:00:01+00:00",
                    "provenance": {"code_version": "x"},
                }
                (folder / f"{method}.json").write_text(json.dumps(rec))
    s = _summary("wrbf", "table1", tmp_path)
    assert s.wall.endswith(
        "70 records; a partial store: 70 finished of the sweep's 98 cells)"
    )


def test_a_kdml_figure_from_a_sub_sweep_says_partial_and_a_whole_one_does_not(
    tmp_path,
):
    """A figure has no table, so a kdml store of one dataset's runs (6 of Fig. 1's
    48 cells) showed its wall time as the figure's, with no word of it."""
    for method in ("knn", "lmnn_knn", "itml_knn", "klmnn_knn", "kdml_method1"):
        _kdml_record(tmp_path, "kdml_fig1", "pima", method, 10.0, 1)
    for method in ("kpca_knn", "kdml_method1", "kdml_method2"):
        _kdml_record(tmp_path, "kdml_fig3", "wall_robot", method, 5.0, 2)
    s = _kdml_walls(tmp_path)
    assert s["fig1"].wall.endswith(
        "5 records; a partial store: 5 finished of the sweep's 48 cells)"
    )
    assert s["fig3"].wall == "5 s (15 s of jobs, 3 records)"  # every cell run
