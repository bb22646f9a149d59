"""reports/wrbf.py writes what it computed: the claims CSV keeps tiny p-values."""

from __future__ import annotations

import json

import pandas as pd

import reports.wrbf as wrbf
from tests.reports.test_guard import _wrbf_record


def test_claims_csv_keeps_a_tiny_p_value(tmp_path, monkeypatch):
    for method, correct in (("rbf", [7, 8, 6]), ("wrbf", [8, 8, 9])):
        rec = _wrbf_record("iris", "glass", method, correct)
        path = tmp_path / "results" / "wrbf_table1" / rec["dataset"] / f"{method}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec))
    computed = wrbf.claims  # the real statistics, with one p as small as the run's

    def tiny_p(exp):
        return {**computed(exp), "rank_sum_p": 2.1213e-10}

    monkeypatch.setattr(wrbf, "claims", tiny_p)
    wrbf.table1(tmp_path / "results", out_dir=tmp_path / "out")
    claims = pd.read_csv(tmp_path / "out" / "claims.csv")
    assert claims.rank_sum_p.iloc[0] == 2.1213e-10  # was written as 0
    assert "p = 2.1e-10" in (tmp_path / "out" / "table1.md").read_text()
