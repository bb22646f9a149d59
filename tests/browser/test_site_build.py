"""The report site's numbers against the committed reports (no browser needed)."""

from __future__ import annotations

import re

import pandas as pd

from reports import site


def test_index_counts_match_the_generated_summary(tmp_path) -> None:
    """Cells within 1 and 2 SE on the index equal the counts table1.md states."""
    md = (site.GENERATED / "mlsvm" / "table1.md").read_text()
    m = re.search(
        r"all cells: (\d+) reproduced; within 1 SE: (\d+) .*; within 2 SE: (\d+)", md
    )
    assert m, "table1.md no longer states its summary line"
    paper = next(p for p in site.papers() if p.key == "mlsvm")
    art = next(a for a in paper.artifacts if a.key == "table1")
    s = site.summarize(paper, art, site.GENERATED, None, site.load_known())
    assert (s.cells, s.within1, s.within2) == tuple(int(g) for g in m.groups())
    listed = site.load_known()
    listed = listed[(listed.paper == "mlsvm") & (listed.artifact == "table1")]
    assert sum(s.divergences.values()) == len(listed)
    # every cell outside 2 SE is listed (the known-divergence test's rule)
    assert s.unlisted == 0 and s.cells - s.within2 == len(listed)


def test_arbf_is_counted_by_its_own_criterion(tmp_path) -> None:
    """arbf publishes a std over splits: the index counts cells within one std,
    as table1.md states them, not binomial SEs it cannot have."""
    md = (site.GENERATED / "arbf" / "table1.md").read_text()
    m = re.search(r"Within one published std: (\d+) of (\d+) cells", md)
    assert m, "arbf's table1.md no longer states its summary line"
    paper = next(p for p in site.papers() if p.key == "arbf")
    art = next(a for a in paper.artifacts if a.key == "table1")
    s = site.summarize(paper, art, site.GENERATED, None, site.load_known())
    assert (s.within_std, s.with_std) == tuple(int(g) for g in m.groups())
    assert s.with_se == 0 and s.within2 is None
    line = site.summary_line("arbf", "table1", 60.0)
    assert f"{m.group(1)} of {m.group(2)} (" in line and "within 1 std" in line
    html = site.build_site(tmp_path / "site").read_text()
    assert f"{m.group(1)} of {m.group(2)} (" in html


def test_new_paper_folder_shows_up_without_a_descriptor(tmp_path) -> None:
    gen = tmp_path / "generated"
    (gen / "newpaper").mkdir(parents=True)
    pd.DataFrame(
        {
            "dataset": ["a", "b"],
            "method": ["m", "m"],
            "reproduced_pct": [10.0, None],
            "published_pct": [11.0, 12.0],
            "se_pct": [0.5, None],
        }
    ).to_csv(gen / "newpaper" / "table3.csv", index=False)
    (gen / "newpaper" / "table3.md").write_text("# t\n\nProtocol: *x*.\n")
    paper = next(p for p in site.papers(gen) if p.key == "newpaper")
    assert [a.key for a in paper.artifacts] == ["table3"]
    s = site.summarize(paper, paper.artifacts[0], gen, None, site.load_known())
    assert (s.status, s.cells, s.cells_total, s.within2, s.unlisted) == (
        "partial",
        1,
        2,
        1,
        0,
    )
    index = site.build_site(tmp_path / "site", generated=gen)
    page = (index.parent / "newpaper" / "table3.html").read_text()
    assert "10.00" in page and "Protocol: <em>x</em>." in page
    # papers with no generated folder are listed as such, with what is missing
    html = index.read_text()
    assert "not reproduced yet" in html and "reports/generated/arbf/table1.csv" in html


def test_summary_lines_of_reproduce_all() -> None:
    assert site.summary_line("mlsvm", "table1", 144) == (
        "mlsvm table1: 102/119 cells, within 2 SE 79 (77%), wall 2.4 min"
    )
    line = site.summary_line("arbf", "table1")
    if (site.GENERATED / "arbf" / "table1.csv").exists():
        assert line.startswith("arbf table1: ") and " cells" in line
    else:
        assert line == "arbf table1: not reproduced yet"
    # kdml publishes figures only: no "0/0 cells"
    if (site.GENERATED / "kdml" / "fig1.png").exists():
        assert site.summary_line("kdml", "fig1", 60) == (
            "kdml fig1: reproduced, no published cell values, wall 60 s"
        )


def test_reproduce_all_lists_real_targets_and_artifacts() -> None:
    """Every paper:artifact:target of the Makefile's REPRODUCE_ALL exists."""
    text = (site.REPO_ROOT / "Makefile").read_text().replace("\\\n", " ")
    m = re.search(r"^REPRODUCE_ALL\s*:?=(.*)$", text, re.M)
    assert m, "Makefile: no REPRODUCE_ALL"
    items = [i.split(":") for i in m[1].split()]
    assert items and all(len(i) == 3 for i in items), items
    targets = site.make_targets()
    known = {(p.key, a.key) for p in site.papers() for a in p.artifacts}
    for paper, artifact, target in items:
        assert target in targets, f"REPRODUCE_ALL: no make target {target}"
        assert (paper, artifact) in known, f"REPRODUCE_ALL: no {paper} {artifact}"


def test_unknown_table_layout_is_shown_as_it_is(tmp_path) -> None:
    gen = tmp_path / "generated"
    (gen / "other").mkdir(parents=True)
    pd.DataFrame(
        {"x": [1, 2], "reproduced_auc": [0.9, 0.8], "published_auc": [1, 1]}
    ).to_csv(gen / "other" / "table1.csv", index=False)
    index = site.build_site(tmp_path / "site", generated=gen)
    page = (index.parent / "other" / "table1.html").read_text()
    assert page.count('class="cell-row"') == 2


def test_wall_time_counts_only_the_artifacts_own_runs(tmp_path) -> None:
    # A user's own method run in the sweep, and a variant (a check run with other
    # overrides), share the experiment's folder but are not part of reproducing it.
    import json

    folder = tmp_path / "mlsvm_table1" / "wdbc"
    folder.mkdir(parents=True)
    runs = {
        "own": (["dataset=wdbc", "method=svm", "kernel=linear"], "svm", 10.0),
        "variant": (["method=svm", "kernel.normalize=null"], "svm", 20.0),
        "mine": (["dataset=wdbc", "method=mine", "kernel=linear"], "mine", 40.0),
    }
    for name, (overrides, method, wall) in runs.items():
        (folder / f"{name}.json").write_text(
            json.dumps(
                {
                    "status": "ok",
                    "method": method,
                    "overrides": overrides,
                    "wall_seconds": wall,
                    "started": "2026-01-01T00:00:00+00:00",
                    "finished": "2026-01-01T00:00:10+00:00",
                    "provenance": {"code_version": "abc"},
                }
            )
        )
    st = site.record_stats(tmp_path, "mlsvm_table1", "mlsvm")
    assert (st["records"], st["job_seconds"]) == (1, 10.0)
    # without a paper, a user's method counts (no published method list to test)
    assert site.record_stats(tmp_path, "mlsvm_table1")["job_seconds"] == 50.0


def test_wall_time_takes_the_newest_run_per_cell_and_names_a_partial_store(
    tmp_path,
) -> None:
    """A one-cell sub-sweep used to show as the committed 40-cell table's wall time
    ("19 s (19 s of jobs, 1 records)"), and a cell rerun under a newer code version
    counted twice, its span reaching from the first run to the rerun."""
    import json

    folder = tmp_path / "lmnnmkl_table1" / "iris"
    folder.mkdir(parents=True)
    for name, wall, start, end in (
        ("old", 500.0, "2026-01-01T00:00:00+00:00", "2026-01-01T00:08:20+00:00"),
        ("new", 19.0, "2026-01-05T00:00:00+00:00", "2026-01-05T00:00:19+00:00"),
    ):
        (folder / f"{name}.json").write_text(
            json.dumps(
                {
                    "status": "ok",
                    "dataset": "iris",
                    "method": "lmnn_h",
                    "kernel": "lmnn20",
                    "seed": 0,
                    "overrides": ["dataset=iris", "method=lmnn_h"],
                    "wall_seconds": wall,
                    "started": start,
                    "finished": end,
                    "provenance": {"code_version": name},
                }
            )
        )
    st = site.record_stats(tmp_path, "lmnnmkl_table1", "lmnnmkl")
    assert (st["records"], st["job_seconds"], st["span_seconds"]) == (1, 19.0, 19.0)
    assert st["code_versions"] == ["new"]
    paper = next(p for p in site.PAPERS if p.key == "lmnnmkl")
    art = next(a for a in paper.artifacts if a.key == "table1")
    s = site.summarize(paper, art, site.GENERATED, tmp_path, site.load_known())
    assert s.wall == (
        "19 s (19 s of jobs, 1 record; a partial store: 1 finished of the sweep's "
        "48 cells)"
    )


def test_a_partial_store_counts_cells_not_seeded_runs(tmp_path) -> None:
    """kdml's Fig. 1 cell is 20 seeded runs: three seeds of one cell are one cell
    of the figure's 48, a partial store, not three of them."""
    import json

    folder = tmp_path / "kdml_fig1" / "pima"
    folder.mkdir(parents=True)
    for seed in range(3):
        (folder / f"{seed}.json").write_text(
            json.dumps(
                {
                    "status": "ok",
                    "dataset": "pima",
                    "method": "knn",
                    "kernel": "none",
                    "seed": seed,
                    "overrides": ["dataset=pima", "method=knn", f"seed={seed}"],
                    "wall_seconds": 1.0,
                    "started": "2026-01-05T00:00:00+00:00",
                    "finished": "2026-01-05T00:00:01+00:00",
                    "provenance": {"code_version": "x"},
                }
            )
        )
    st = site.record_stats(tmp_path, "kdml_fig1", "kdml")
    assert (st["records"], st["finished_cells"]) == (3, 1)
