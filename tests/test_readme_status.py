"""The README's status table says what the committed reports say.

Its counts are copied by hand from the generated tables; this test recomputes them
from ``reports/generated`` (through the site's summaries) so that a regenerated
table with other numbers fails here until the README is updated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from reports.site import GENERATED, load_known, papers, summarize

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _status_rows() -> list[tuple[str, str, list[str]]]:
    section = README.split("## What is reproduced", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        link = re.search(r"\(reports/generated/(\w+)/(\w+)\.md\)", cells[2])
        assert link, f"status row without a link to its generated table: {line}"
        rows.append((link.group(1), link.group(2), cells))
    return rows


ROWS = _status_rows()


def _pct(k: int, n: int) -> str:
    return f"{k} ({100 * k / n:.0f}%)"


def test_every_table_artifact_has_a_status_row():
    listed = {(p, a) for p, a, _ in ROWS}
    for paper in papers():
        for art in paper.artifacts:
            if art.key.startswith("table"):
                assert (paper.key, art.key) in listed, (paper.key, art.key)
    assert ("kdml", "claims") in listed


@pytest.mark.parametrize(
    "paper,artifact,cells", ROWS, ids=[f"{p}-{a}" for p, a, _ in ROWS]
)
def test_status_row_matches_the_committed_report(paper, artifact, cells):
    _key, _title, _link, command, n_cells, agreement, _time = cells
    if paper == "kdml":
        claims = pd.read_csv(GENERATED / "kdml" / "claims.csv")
        held = int((claims.status == "held").sum())
        assert agreement == f"{held} of {len(claims)} claims held"
        assert command == "`make reproduce-kdml`"
        return
    desc = next(p for p in papers() if p.key == paper)
    art = next(a for a in desc.artifacts if a.key == artifact)
    s = summarize(desc, art, GENERATED, None, load_known())
    assert command == f"`make {art.make_target}`"
    assert n_cells == f"{s.cells} / {s.cells_total}"
    if s.within2 is not None:
        assert agreement == f"{_pct(s.within2, s.with_se)} within 2 SE"
    elif s.within_std is not None:
        assert agreement == f"{_pct(s.within_std, s.with_std)} within 1 std"
    else:
        assert agreement == "no spread published"
