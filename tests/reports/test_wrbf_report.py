"""reports/wrbf.py writes what it computed: tiny p-values, and partial tables
of sub-sweeps that say what is missing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

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


def _store(root, runs):
    """Records of ``(original, donor, method, correct counts per split)`` runs."""
    for original, donor, method, correct in runs:
        rec = _wrbf_record(original, donor, method, correct)
        path = root / "wrbf_table1" / rec["dataset"] / f"{method}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec))
    return root


def test_a_one_method_sub_sweep_gives_a_partial_table(tmp_path):
    """`kml-run experiment=wrbf_table1 dataset=iris dataset.noise_donor=glass
    method=rbf`: RBF's side is filled, the rest says what is missing."""
    from reports.__main__ import main

    results = _store(tmp_path / "results", [("iris", "glass", "rbf", [7, 8, 6])])
    out = tmp_path / "out"
    (out / "fig2.png").parent.mkdir()
    (out / "fig2.png").write_bytes(b"an earlier run's figure")
    assert main(["wrbf_table1", "--results", str(results), "--out", str(out)]) == 0
    (row,) = pd.read_csv(out / "table1.csv").itertuples()
    assert (row.dataset, row.n_experiments, row.total_test_instances) == (
        "iris",
        0,
        30,
    )
    assert row.acc_rbf_pct == pytest.approx(70.0)
    assert np.isnan(row.acc_wrbf_pct) and np.isnan(row.acc_gain_pct)
    md = (out / "table1.md").read_text()
    assert "| iris | — / 92.1 | 70.0 / 89.2 | 30 / 18000 | — / 2.9 |" in md
    assert md.count("not computed (no experiment has both RBF and WRBF)") == 3
    assert "Fig. 2 is not drawn: no experiment has both RBF and WRBF." in md
    assert "![Fig. 2]" not in md and not (out / "fig2.png").exists()
    assert "## Runs not made (83)" in md
    assert "- iris: breast_w/rbf, breast_w/wrbf, ecoli/rbf" in md
    assert ", glass/wrbf, " in md and "- pima: all runs" in md
    claims = pd.read_csv(out / "claims.csv")
    assert claims.n_experiments.iloc[0] == 0 and claims.pearson_r.isna().all()


def test_a_partly_paired_dataset_has_no_gain(tmp_path):
    """WRBF on one of iris's two noisy sets: each side pools its own runs, the gain
    and reduction (not over the same experiments) are left out."""
    results = _store(
        tmp_path,
        [
            ("iris", "glass", "rbf", [7, 8, 6]),
            ("iris", "glass", "wrbf", [8, 8, 9]),
            ("iris", "pima", "rbf", [5, 5, 5]),
        ],
    )
    wrbf.table1(results, out_dir=tmp_path / "out")
    (row,) = pd.read_csv(tmp_path / "out" / "table1.csv").itertuples()
    assert row.n_experiments == 3 and row.total_test_instances == 60
    assert row.acc_rbf_pct == pytest.approx(100 * 36 / 60)
    assert row.acc_wrbf_pct == pytest.approx(100 * 25 / 30)
    assert np.isnan(row.acc_gain_pct) and np.isnan(row.dual_reduction)
    md = (tmp_path / "out" / "table1.md").read_text()
    assert "(WRBF < RBF)" not in md
    assert "- iris: breast_w/rbf" in md and "pima/wrbf" in md
    assert "![Fig. 2](fig2.png)" in md  # the 3 paired experiments


@pytest.mark.parametrize(
    ("rbf", "wrbf_", "missing"),
    [
        ([7], [8], ["pearson"]),  # one paired experiment: no correlation
        ([7, 8], [7, 8], ["signed_rank", "pearson"]),  # no difference to rank
    ],
    ids=["one-experiment", "no-difference"],
)
def test_claims_say_which_statistic_is_missing(tmp_path, rbf, wrbf_, missing):
    results = _store(
        tmp_path, [("iris", "glass", "rbf", rbf), ("iris", "glass", "wrbf", wrbf_)]
    )
    wrbf.table1(results, out_dir=tmp_path / "out")
    claims = pd.read_csv(tmp_path / "out" / "claims.csv").iloc[0]
    md = (tmp_path / "out" / "table1.md").read_text()
    for test, column in (
        ("signed_rank", "signed_rank_z"),
        ("rank_sum", "rank_sum_z"),
        ("pearson", "pearson_r"),
    ):
        assert np.isnan(claims[column]) == (test in missing), test
    assert md.count("not computed (") == len(missing)
    assert (tmp_path / "out" / "fig2.png").exists()


def test_datasets_pooling_variant_runs_are_marked_with_their_overrides(tmp_path):
    """--variants: a dataset whose row pools a run with command-line overrides is
    marked as the mlsvm tables mark a cell ([v1], its runs and overrides listed
    under the table, a `variant` CSV column), and the claims and Fig. 2 say how
    many of their experiments come from variant runs."""
    runs = [(o, d, m, [7, 8, 6]) for o, d in (("iris", "glass"), ("pima", "iris"))
            for m in ("rbf", "wrbf")]
    results = _store(tmp_path / "results", runs)
    smoke = _wrbf_record("iris", "glass", "wrbf", [9, 9, 9])
    smoke["overrides"].append("protocol.repetitions=3")
    smoke["key"] += "smoke"
    smoke["finished"] = "2026-02-01T00:00:00"
    (results / "wrbf_table1" / "iris+glass" / "wrbf_smoke.json").write_text(
        json.dumps(smoke)
    )
    out = tmp_path / "v"
    md = wrbf.table1(results, out_dir=out, variants=True).read_text()
    assert "**Built with variant runs**" in md.split("Paper D")[0]
    assert "the protocol stated below is the experiment's own" in md
    assert "| iris [v1] | 90.0 / 92.1 |" in md  # WRBF's side is the variant's
    assert "| pima | " in md  # own runs only: no mark
    assert "- [v1] `protocol.repetitions=3`: iris (glass/wrbf)" in md
    claim = "- Experiments: 6 (published 4200); 3 of them from variant runs ([v1])."
    assert claim in md
    assert "Fig. 2 includes 3 experiments from variant runs ([v1];" in md
    t = pd.read_csv(out / "table1.csv", keep_default_na=False).set_index("dataset")
    assert t.variant.to_dict() == {"iris": "protocol.repetitions=3", "pima": ""}
    exp = pd.read_csv(out / "experiments.csv", keep_default_na=False)
    assert set(exp[exp.original == "iris"].variant) == {"protocol.repetitions=3"}
    assert set(exp[exp.original == "pima"].variant) == {""}
    claims = pd.read_csv(out / "claims.csv")
    assert claims.variant.tolist() == ["protocol.repetitions=3"]

    # the experiment's own runs only: no mark, no note, no column
    md = wrbf.table1(results, out_dir=tmp_path / "own").read_text()
    assert "[v" not in md and "variant run" not in md
    for name in ("table1.csv", "experiments.csv", "claims.csv"):
        assert "variant" not in pd.read_csv(tmp_path / "own" / name).columns


def test_claims_and_table_numbers_against_scipy_and_hand_sums():
    """wrbf Sec. 5's statistics on hand-made paired runs, against scipy on the
    arrays they must be computed from: the Wilcoxon z's of the correct counts with
    RBF first (negative when WRBF classifies more correctly, the sign the report
    prints beside the published z = -5.05), Pearson's r of the accuracy gain
    (WRBF - RBF) against the dual-objective reduction (RBF - WRBF), and Table 1's
    pooled accuracies and mean duals."""
    from scipy import stats

    rbf = np.array([6, 7, 5, 8, 6, 7])
    wrbf_ = np.array([8, 7, 7, 9, 6, 9])
    dual_rbf = np.full(6, 10.0)
    dual_wrbf = np.array([7.0, 9.5, 8.0, 9.0, 9.0, 6.0])  # mean 8.08, median 8.5
    records = []
    for method, correct, dual in (("rbf", rbf, dual_rbf), ("wrbf", wrbf_, dual_wrbf)):
        rec = _wrbf_record("iris", "glass", method, correct.tolist())
        for f, v in zip(rec["folds"], dual):
            f["solver"]["dual_objective"] = float(v)
        records.append(rec)

    exp = wrbf.paired_experiments(wrbf.experiments_frame(records))
    gain = 100.0 * (wrbf_ - rbf) / 10
    reduction = dual_rbf - dual_wrbf
    np.testing.assert_allclose(exp.acc_gain_pct, gain)
    np.testing.assert_allclose(exp.dual_reduction, reduction)

    c = wrbf.claims(exp)
    kw = dict(zero_method="wilcox", correction=False, method="approx")
    z = stats.wilcoxon(rbf, wrbf_, alternative="greater", **kw).zstatistic
    assert c["signed_rank_z"] == pytest.approx(z) and z < 0
    assert c["signed_rank_p"] == pytest.approx(stats.wilcoxon(rbf, wrbf_, **kw).pvalue)
    ref = stats.ranksums(rbf, wrbf_)
    assert c["rank_sum_z"] == pytest.approx(ref.statistic) and ref.statistic < 0
    assert c["rank_sum_p"] == pytest.approx(ref.pvalue)
    r, p = stats.pearsonr(gain, reduction)
    assert (c["pearson_r"], c["pearson_p"]) == pytest.approx((r, p))
    assert r > 0

    (row,) = wrbf.table1_frame(exp).itertuples()
    assert row.acc_rbf_pct == pytest.approx(100 * rbf.sum() / 60)
    assert row.acc_wrbf_pct == pytest.approx(100 * wrbf_.sum() / 60)
    assert row.acc_gain_pct == pytest.approx(100 * (wrbf_.sum() - rbf.sum()) / 60)
    assert (row.dual_rbf, row.dual_wrbf) == pytest.approx((10.0, dual_wrbf.mean()))
    assert row.dual_reduction == pytest.approx(10.0 - dual_wrbf.mean())
    assert (row.n_experiments, row.total_test_instances) == (6, 60)
