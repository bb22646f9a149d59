"""kml-report compare: a method of one's own against an experiment's baselines."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reports.compare import _pair, compare, to_markdown
from reports.guard import ReportError

REPO = Path(__file__).resolve().parents[2]


def _kml(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("kml-run", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("kml-run is not installed in this environment")
    env = {**os.environ, "KML_RESULTS": str(tmp / "results"),
           "KML_OUTPUTS": str(tmp / "outputs"), "KML_JOBS": "1"}  # fmt: skip
    out = subprocess.run([exe, *args], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Table I's FDA on sonar (the baseline) and 'myfda', a config of one's own
    (FDA with another regularization) found through hydra.searchpath."""
    tmp = tmp_path_factory.mktemp("compare")
    conf = tmp / "myconf" / "method"
    conf.mkdir(parents=True)
    (conf / "myfda.yaml").write_text("_target_: methods.FDA\nreg: 0.3\n")
    base = ["experiment=mlsvm_table1", "dataset=sonar", "kernel=linear"]
    _kml(tmp, *base, "method=fda")
    _kml(tmp, *base, "method=myfda", f"hydra.searchpath=[file://{tmp / 'myconf'}]",
         "search.grids.myfda={}")  # fmt: skip
    return tmp / "results"


def _record(store: Path, method: str) -> dict:
    (path,) = store.rglob(f"{method}[[]*.json")
    return json.loads(path.read_text())


def test_rows_pair_the_same_instances(store):
    df, notes = compare(store, "mlsvm_table1", "myfda")
    assert notes == []
    (row,) = df.itertuples(index=False)
    assert (row.dataset, row.kernel, row.baseline, row.n_test) == (
        "sonar",
        "linear",
        "fda",
        208,
    )
    new, base = _record(store, "myfda"), _record(store, "fda")
    assert row.accuracy_new == pytest.approx(new["accuracy_pct"])
    assert row.accuracy_baseline == pytest.approx(base["accuracy_pct"])
    # errors_new - errors_base = n01 - n10 (concordant instances cancel)
    assert new["n_errors"] - base["n_errors"] == row.n01 - row.n10
    assert row.outcome in "+-=" and row.test == "McNemar (chi2_cc)"
    text = to_markdown(df, notes, "mlsvm_table1", "myfda", 0.05)
    assert "myfda against the baselines of mlsvm_table1 on 1 (cell, baseline)" in text
    assert "| sonar | linear | 0 | fda | 208 |" in text
    # the measure named: accuracy, also where a paper's table gives AUC (arbf)
    assert "| myfda accuracy % | baseline accuracy % |" in text


def test_unknown_method_names_the_run_to_do(store):
    with pytest.raises(ReportError, match="experiment=mlsvm_table1 method=nope"):
        compare(store, "mlsvm_table1", "nope")
    with pytest.raises(ReportError, match="--against svmx: .* baselines present: fda"):
        compare(store, "mlsvm_table1", "myfda", ["svmx"])


def test_mistyped_names_get_the_name_meant_not_the_typo_back(store):
    cases = [
        (("mlsvm_tabel1", "myfda"), "did you mean mlsvm_table1?", "=mlsvm_tabel1"),
        (("mlsvm_table1", "myfad"), "did you mean --method myfda?", "=myfad"),
        (("mlsvm_table1", "myfda", ["fad"]), "(did you mean fda for fad?)", None),
    ]
    for args, meant, typo in cases:
        with pytest.raises(ReportError) as exc:
            compare(store, *args)
        assert meant in str(exc.value), str(exc.value)
        assert typo is None or typo not in str(exc.value), str(exc.value)


def test_the_method_itself_as_a_baseline_is_named_as_such(store):
    """--against myfda with --method myfda answered "no record of the
    experiment's own runs; baselines present: fda" (and, for svmm against svmm,
    "did you mean svm for svmm?")."""
    with pytest.raises(ReportError, match=r"--against myfda: that is the method "
                       r"compared \(--method myfda\); its baselines are the "
                       r"experiment's other methods: fda"):
        compare(store, "mlsvm_table1", "myfda", ["fda", "myfda"])


def test_ad_hoc_records_cannot_be_compared_and_say_why_in_one_line(
    tmp_path, capsys, caplog
):
    """`kml-run dataset=wdbc method=svmm ...` (no experiment=) records under adhoc:
    no experiment config, so no baselines; one error line, no Hydra listing."""
    from reports.__main__ import main
    from tests.reports.test_records import _adhoc_record

    _adhoc_record(tmp_path, ["dataset=wdbc", "method=svmm", "kernel=poly2"])
    argv = ["compare", "adhoc", "--method", "svmm", "--results", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "kml-report compare: error: adhoc has no experiment file "
        "(conf/experiment/adhoc.yaml), so no baselines"
    )
    assert "`kml-run experiment=mlsvm_table1 method=svmm`" in err
    assert caplog.records == []  # neither "cannot compose" nor "store no overrides"


def _rec(method, folds, index, y_true, y_pred):
    return {
        "label": method,
        "dataset": "d",
        "predictions": {
            "fold": folds,
            "index": index,
            "y_true": y_true,
            "y_pred": y_pred,
        },
    }


def test_labels_compare_as_numbers_when_they_are():
    a = _rec("a", [0, 0, 1], [0, 1, 2], [0, 1, 1], [0.0, 1.0, 1.0])
    b = _rec("b", [0, 0, 1], [0, 1, 2], [0, 1, 1], [1, 1, 1])
    row = _pair(a, b, 0.05, "chi2_cc")
    assert row["accuracy_new"] == 100.0
    assert (row["n01"], row["n10"]) == (0, 1)


def test_instances_tested_in_several_splits_use_wilcoxon_over_splits():
    rng = np.random.default_rng(0)
    folds = np.repeat(np.arange(12), 20)
    index = np.tile(np.arange(20), 12)  # every instance in every split
    y = rng.integers(0, 2, size=240)
    good = np.where(rng.random(240) < 0.95, y, 1 - y)
    bad = np.where(rng.random(240) < 0.6, y, 1 - y)
    row = _pair(_rec("a", folds, index, y, good), _rec("b", folds, index, y, bad),
                0.05, "chi2_cc")  # fmt: skip
    assert row["test"] == "Wilcoxon over 12 splits" and np.isnan(row["n01"])
    assert row["outcome"] == "+" and row["pvalue"] < 0.05
    same = _pair(_rec("a", folds, index, y, good), _rec("b", folds, index, y, good),
                 0.05, "chi2_cc")  # fmt: skip
    assert same["outcome"] == "=" and same["pvalue"] == 1.0


def test_other_test_instances_are_refused(store, tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (path,) = copy.rglob("myfda[[]*.json")
    rec = json.loads(path.read_text())
    keep = np.arange(len(rec["predictions"]["index"])) > 0  # one instance fewer
    for k in ("index", "fold", "y_true", "y_pred", "decision"):
        rec["predictions"][k] = [v for v, ok in zip(rec["predictions"][k], keep) if ok]
    path.write_text(json.dumps(rec))
    with pytest.raises(ReportError, match="tested on other instances"):
        compare(copy, "mlsvm_table1", "myfda")


def test_a_store_without_baseline_runs_says_which_to_make(store, tmp_path):
    """Only variant records (the new method's): the note names the run to make,
    not kml-report's --variants, which builds a table, not a comparison."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (baseline,) = copy.rglob("fda[[]*.json")
    baseline.unlink()
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    assert notes == [
        "sonar linear seed 0: no finished baseline record (no run of mlsvm_table1's "
        f"own config under {copy}: kml-run experiment=mlsvm_table1)"
    ]


def _failed(path: Path) -> None:
    """The record at ``path`` as one whose run failed."""
    rec = json.loads(path.read_text())
    rec.update(status="error", reason="ValueError: boom")
    path.write_text(json.dumps(rec))


def test_a_failed_newest_record_is_listed_not_compared(store, tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (path,) = copy.rglob("myfda[[]*.json")
    _failed(path)
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    assert notes == ["sonar linear seed 0: the newest record of myfda is error "
                     "(ValueError: boom)"]  # fmt: skip


def _smoke_run(copy: Path) -> Path:
    """A newer record of myfda on the same cell with `protocol=smoke`: 2x2 folds,
    so other test instances than the baseline's (half of them, here)."""
    (own,) = copy.rglob("myfda[[]*.json")
    rec = json.loads(own.read_text())
    rec["overrides"] = [*rec["overrides"], "protocol=smoke"]
    rec["key"] += "smoke"
    rec["finished"] = "9999-01-01T00:00:00"
    keep = np.asarray(rec["predictions"]["index"]) % 2 == 0
    for k in ("index", "fold", "y_true", "y_pred", "decision"):
        rec["predictions"][k] = [v for v, ok in zip(rec["predictions"][k], keep) if ok]
    smoke = own.with_name(own.name.replace(".json", "-smoke.json"))
    smoke.write_text(json.dumps(rec))
    return own


def test_a_newer_protocol_variant_does_not_hide_the_run_to_compare(store, tmp_path):
    """`kml-run ... method=myfda protocol=smoke` after the experiment's own run:
    the own-protocol run is compared; with no such run, the cell is listed with
    the override used, not compared (nor does it stop the other cells)."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    own = _smoke_run(copy)
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert notes == []
    (row,) = df.itertuples(index=False)
    assert row.n_test == 208  # the own-protocol run's 10x10 CV, not the smoke run
    own.unlink()
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    (msg,) = notes
    assert msg.startswith(
        "sonar linear seed 0: every run of myfda overrides the experiment's "
        "protocol (the newest with protocol=smoke)"
    )
    assert "rerun myfda as you ran it, without protocol=smoke" in msg
    assert "protocol.*" not in msg and "kml-run experiment=" not in msg


def test_a_variant_only_cell_without_an_own_baseline_does_not_claim_one(
    store, tmp_path
):
    """Only a smoke run of myfda and no baseline run of the experiment's own
    config on the cell: the note said "and the baselines ran its own" anyway."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    _smoke_run(copy).unlink()
    (baseline,) = copy.rglob("fda[[]*.json")
    baseline.unlink()
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    (msg,) = notes
    assert "the baselines ran its own" not in msg
    assert msg.startswith(
        "sonar linear seed 0: every run of myfda overrides the experiment's "
        "protocol (the newest with protocol=smoke), and no baseline ran the "
        "experiment's own config on this cell either"
    )
    assert "kml-run experiment=mlsvm_table1" in msg


def _as_seed(path: Path, seed: int) -> None:
    """A copy of the record at ``path`` as the run of another seed of its cell."""
    rec = json.loads(path.read_text())
    rec.update(seed=seed, key=f"{rec['key']}-seed{seed}")
    rec["overrides"] = [*rec["overrides"], f"seed={seed}"]
    path.with_name(path.name.replace(".json", f"-seed{seed}.json")).write_text(
        json.dumps(rec)
    )


def test_a_cell_with_only_variant_runs_does_not_stop_the_others(store, tmp_path):
    """Seed 1 has myfda's own-protocol run, seed 0 only a smoke run: seed 1 is
    compared, seed 0 listed with the override to drop."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    own = _smoke_run(copy)
    (baseline,) = copy.rglob("fda[[]*.json")
    _as_seed(baseline, 1)
    _as_seed(own, 1)
    own.unlink()  # seed 0: the smoke run only
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert [(r.seed, r.baseline) for r in df.itertuples(index=False)] == [(1, "fda")]
    (note,) = notes
    assert note.startswith("sonar linear seed 0: every run of myfda overrides")


def test_the_failed_newest_own_protocol_run_is_listed_before_a_variant(store, tmp_path):
    """The chosen record (the own protocol's newest) failed: listed, as before,
    not replaced by the variant nor refused for it."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    _failed(_smoke_run(copy))
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    assert notes == ["sonar linear seed 0: the newest record of myfda is error "
                     "(ValueError: boom)"]  # fmt: skip


def test_cli(store, capsys):
    from reports.__main__ import main

    assert main(["compare", "mlsvm_table1", "--method", "myfda",
                 "--results", str(store), "--against", "fda"]) == 0  # fmt: skip
    assert "| sonar | linear | 0 | fda |" in capsys.readouterr().out
    assert main(["compare", "mlsvm_table1", "--method", "nope",
                 "--results", str(store)]) == 2  # fmt: skip


def test_wilcoxon_over_splits_is_scipys_on_the_split_accuracies_and_p_below_alpha():
    """With instances tested in several splits, the p-value is the paired Wilcoxon
    test (scipy's, its own choice of method) of the per-split accuracies, and a
    difference is significant only for p strictly below alpha, as McNemar's."""
    from scipy import stats

    rng = np.random.default_rng(1)
    folds = np.repeat(np.arange(10), 20)
    index = np.tile(np.arange(20), 10)
    y = rng.integers(0, 2, size=200)
    good = np.where(rng.random(200) < 0.9, y, 1 - y)
    bad = np.where(rng.random(200) < 0.7, y, 1 - y)
    a, b = _rec("a", folds, index, y, good), _rec("b", folds, index, y, bad)
    acc_a = np.array([np.mean(good[folds == s] == y[folds == s]) for s in range(10)])
    acc_b = np.array([np.mean(bad[folds == s] == y[folds == s]) for s in range(10)])
    won = [np.sum(good[folds == s] == y[folds == s])
           - np.sum(bad[folds == s] == y[folds == s]) for s in range(10)]  # fmt: skip
    assert np.allclose(np.array(won) / 20, acc_a - acc_b)
    p = stats.wilcoxon(np.array(won) / 20).pvalue  # ties kept exact (10 splits)
    row = _pair(a, b, 0.05, "chi2_cc")
    assert row["pvalue"] == pytest.approx(p) and p < 0.05
    assert row["accuracy_new"] == pytest.approx(100 * np.mean(good == y))
    assert row["accuracy_baseline"] == pytest.approx(100 * np.mean(bad == y))
    assert _pair(a, b, row["pvalue"], "chi2_cc")["outcome"] == "="
    assert _pair(a, b, np.nextafter(row["pvalue"], 1), "chi2_cc")["outcome"] == "+"
    assert _pair(b, a, np.nextafter(row["pvalue"], 1), "chi2_cc")["outcome"] == "-"


def test_cli_csv_goes_to_a_new_folder_and_a_bad_one_is_named(store, tmp_path, capsys):
    """--csv into a folder not made yet was a pandas traceback after the table."""
    from reports.__main__ import main

    argv = ["compare", "mlsvm_table1", "--method", "myfda", "--results", str(store)]
    csv = tmp_path / "new" / "cmp.csv"
    assert main([*argv, "--csv", str(csv)]) == 0
    assert csv.read_text().startswith("dataset,kernel,seed,baseline,")
    assert [p.name for p in csv.parent.iterdir()] == ["cmp.csv"]  # no temp file
    capsys.readouterr()
    under_a_file = csv / "cmp.csv"
    assert main([*argv, "--csv", str(under_a_file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"kml-report compare: error: cannot write --csv {under_a_file}"
    )
    assert "Traceback" not in err


def test_cli_csv_that_is_a_folder_is_named_before_the_table(tmp_path, capsys):
    """--csv DIR printed the table, then "cannot write --csv DIR
    (<parent>/.tmp-...: Is a directory)", naming a temporary file."""
    from reports.__main__ import main

    with pytest.raises(SystemExit) as exit_:
        main(["compare", "mlsvm_table1", "--method", "m", "--results",
              str(tmp_path / "none"), "--csv", str(tmp_path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"--csv {tmp_path} is a folder; pass a file path, e.g. " in err
    assert ".tmp-" not in err


@pytest.mark.parametrize("alpha", ["5", "0", "-0.1", "1", "x"])
def test_cli_alpha_is_a_significance_level(alpha, capsys):
    """--alpha 5 marked every pair with p < 5 significant."""
    from reports.__main__ import main

    with pytest.raises(SystemExit) as exit_:
        main(["compare", "mlsvm_table1", "--method", "m", "--alpha", alpha])
    assert exit_.value.code == 2
    assert "argument --alpha:" in capsys.readouterr().err


def test_a_store_warning_is_printed_once(store, tmp_path, caplog):
    """compare reads the store twice (every config, then the own runs): a warning
    about it, baseline records of two code versions here, was printed by both."""
    import logging

    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (path,) = copy.rglob("fda[[]*.json")
    _as_seed(path, 1)
    (seed1,) = copy.rglob("fda[[]*-seed1.json")
    rec = json.loads(seed1.read_text())
    rec["config"]["code_version"] = "newer"
    seed1.write_text(json.dumps(rec))
    with caplog.at_level(logging.WARNING):
        compare(copy, "mlsvm_table1", "myfda")
    versions = [r for r in caplog.records if "code versions" in r.getMessage()]
    assert len(versions) == 1, [r.getMessage() for r in versions]


def test_few_splits_get_scipys_small_sample_wilcoxon_on_exactly_tied_differences():
    """arbf's 10 splits: the new method more accurate on 5 splits, less on 1, tied
    on 4 (a real heart_libsvm comparison). compare printed p = 0.046, a '+': the
    normal approximation on accuracy differences whose equal values differed in
    the last bit, which broke the ties of their ranks (0.056 with the ties kept).
    The signed-rank test's own null distribution (all 2^10 sign flips, ties and
    zeros as they are) gives 6/64 = 0.094: no significant difference. Over 50
    splits (wrbf's 100) scipy's normal approximation stands."""
    from scipy import stats

    diffs = [2, 2, 0, -1, 2, 3, 0, 0, 0, 1]  # test points won per split, of 54
    folds = np.repeat(np.arange(10), 54)
    index = np.tile(np.arange(54), 10)
    y = np.zeros(540, dtype=int)
    base = np.ones(540, dtype=int)
    right = [45, 45, 40, 44, 43, 41, 40, 40, 40, 44]  # the baseline's, per split
    new = base.copy()
    for s, (d, r) in enumerate(zip(diffs, right)):
        base[s * 54 : s * 54 + r] = 0
        new[s * 54 : s * 54 + r + d] = 0
    acc_new = np.array([np.mean(new[folds == s] == 0) for s in range(10)])
    acc_base = np.array([np.mean(base[folds == s] == 0) for s in range(10)])
    assert np.allclose((acc_new - acc_base) * 54, diffs)
    # what compare did: the ties of 2/54 broken in the last bit, p below 0.05
    assert len(np.unique(acc_new - acc_base)) > len(np.unique(diffs))
    old = stats.wilcoxon(acc_new, acc_base, correction=False, method="approx")
    assert old.pvalue < 0.05
    row = _pair(_rec("a", folds, index, y, new), _rec("b", folds, index, y, base),
                0.05, "chi2_cc")  # fmt: skip
    assert row["pvalue"] == pytest.approx(6 / 64)  # R- = 1.5: 3 of 2^6 flips, twice
    assert row["outcome"] == "="
    assert row["accuracy_new"] == pytest.approx(100 * acc_new.mean())
    # many splits: the normal approximation of the exact differences
    folds60, index60 = np.repeat(np.arange(60), 54), np.tile(np.arange(54), 60)
    rng = np.random.default_rng(3)
    y60 = rng.integers(0, 2, size=60 * 54)
    a = np.where(rng.random(y60.size) < 0.8, y60, 1 - y60)
    b = np.where(rng.random(y60.size) < 0.75, y60, 1 - y60)
    won = np.array([np.sum(a[folds60 == s] == y60[folds60 == s])
                    - np.sum(b[folds60 == s] == y60[folds60 == s]) for s in range(60)])
    p60 = stats.wilcoxon(won / 54, correction=False, method="approx").pvalue
    row60 = _pair(_rec("a", folds60, index60, y60, a),
                  _rec("b", folds60, index60, y60, b), 0.05, "chi2_cc")  # fmt: skip
    assert row60["pvalue"] == pytest.approx(p60) and row60["outcome"] == "+"


def test_a_cell_without_baselines_says_what_the_store_holds_and_the_run_to_make(
    store, tmp_path
):
    """'no finished baseline record' alone, where the cell's baselines ran with
    another seed or as a variant (a smaller grid, left out without a warning
    here), named neither those records nor the command that makes baselines."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (new,) = copy.rglob("myfda[[]*.json")
    rec = json.loads(new.read_text())
    rec.update(seed=3, overrides=[*rec["overrides"], "seed=3"])
    new.write_text(json.dumps(rec))
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    assert notes == [
        "sonar linear seed 3: no finished baseline record (make them: kml-run "
        "experiment=mlsvm_table1 dataset=sonar kernel=linear seed=3)"
    ]
    rec.update(seed=0, overrides=[o for o in rec["overrides"] if o != "seed=3"])
    new.write_text(json.dumps(rec))
    (base,) = copy.rglob("fda[[]*.json")
    other = json.loads(base.read_text())
    svm = copy / "mlsvm_table1" / "sonar" / "svm[kernel=linear]-0.json"
    svm.write_text(
        json.dumps({**other, "method": "svm", "label": "svm[kernel=linear]"})
    )
    _failed(svm)
    other["overrides"].append("search.grids.default.C=[1]")
    base.write_text(json.dumps(other))
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    assert notes == [
        "sonar linear seed 0: no finished baseline record (the experiment's own run "
        "of svm error; fda ran with search.grids.default.C=[1], a variant; make "
        "them: kml-run experiment=mlsvm_table1 dataset=sonar kernel=linear)"
    ]


def test_the_new_methods_own_overrides_are_named_beside_the_table(store, tmp_path):
    """A new method run with kernel.normalize=null met baselines run on the
    cosine-normalized kernel, and nothing in the output said its input differed."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (new,) = copy.rglob("myfda[[]*.json")
    rec = json.loads(new.read_text())
    rec["overrides"] = [*rec["overrides"], "kernel.normalize=null"]
    new.write_text(json.dumps(rec))
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    (row,) = df.itertuples(index=False)
    assert row.overrides_new == "search.grids.myfda={} kernel.normalize=null"
    text = to_markdown(df, notes, "mlsvm_table1", "myfda", 0.05)
    assert (
        "myfda ran with overrides that the baselines did not (column overrides_new "
        "of --csv): `search.grids.myfda={} kernel.normalize=null`."
    ) in text


def test_a_baseline_whose_newest_run_failed_is_named_not_dropped(store, tmp_path):
    """Of two baselines of a cell, the one whose newest own run failed (a rerun
    under a newer code version) left no row and no note: the comparison looked
    complete with a baseline missing."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (fda,) = copy.rglob("fda[[]*.json")
    rec = json.loads(fda.read_text())
    svm = fda.with_name("svm[kernel=linear]-0.json")
    svm.write_text(json.dumps({**rec, "method": "svm", "label": "svm[kernel=linear]",
                               "key": "0"}))  # fmt: skip
    newer = fda.with_name("fda[kernel=linear]-1.json")
    newer.write_text(json.dumps({**rec, "key": "1", "finished": "2099-01-01"}))
    _failed(newer)
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert list(df.baseline) == ["svm"]
    assert notes == [
        "sonar linear seed 0: not compared with fda, whose newest run of the "
        "experiment's config is error (ValueError: boom)"
    ]
    df, notes = compare(copy, "mlsvm_table1", "myfda", ["svm"])  # not asked for
    assert list(df.baseline) == ["svm"] and notes == []


def test_against_keeps_to_its_baselines_and_cannot_be_empty(store, tmp_path):
    """--against svm: the note about a cell without svm named fda's records and
    asked to make fda; --against ',' (no id) left every baseline out, and each
    cell said 'no finished baseline record' of a store full of them."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (fda,) = copy.rglob("fda[[]*.json")
    rec = json.loads(fda.read_text())
    fda.with_name("svm[kernel=linear]-0.json").write_text(json.dumps(
        {**rec, "method": "svm", "label": "svm[kernel=linear]", "key": "0",
         "seed": 3, "overrides": [*rec["overrides"], "seed=3"]}
    ))  # fmt: skip
    df, notes = compare(copy, "mlsvm_table1", "myfda", ["svm"])
    assert df.empty
    assert notes == [
        "sonar linear seed 0: no finished baseline record (make them: kml-run "
        "experiment=mlsvm_table1 dataset=sonar kernel=linear method=svm)"
    ]
    with pytest.raises(ReportError, match="--against names no baseline; .*fda, svm"):
        compare(copy, "mlsvm_table1", "myfda", [])


def test_new_method_and_baselines_both_on_the_smoke_protocol_are_told_so(
    store, tmp_path
):
    """protocol=smoke for the baselines and the new method alike (to try things
    quickly): the note said 'the baselines ran its own', of a cell without one."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    _smoke_run(copy).unlink()
    (fda,) = copy.rglob("fda[[]*.json")
    rec = json.loads(fda.read_text())
    rec["overrides"] = [*rec["overrides"], "protocol=smoke"]
    fda.write_text(json.dumps(rec))
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    assert notes == [
        "sonar linear seed 0: every run of myfda overrides the experiment's protocol "
        "(the newest with protocol=smoke), and no baseline ran the experiment's "
        "own config on this cell either (fda ran with "
        "protocol=smoke, a variant; make them: kml-run experiment=mlsvm_table1 "
        "dataset=sonar kernel=linear); then rerun myfda as you ran it, without "
        "protocol=smoke"
    ]


def test_the_run_to_make_names_the_baselines_of_a_kernel_the_sweep_does_not(
    store, tmp_path
):
    """lmnnmkl Table 1 sweeps kernel=lmnn20; its 1-NN baseline runs under
    kernel=none, where the experiment's sweep would run the LMNN methods (which
    refuse features): the run to make names the methods run on that kernel."""
    root = tmp_path / "results" / "lmnnmkl_table1"
    for method, dataset in (("knn1", "iris"), ("myfda", "wine")):
        (src,) = store.rglob(f"{'fda' if method == 'knn1' else method}[[]*.json")
        rec = json.loads(src.read_text())
        label = f"{method}[kernel=none]"
        rec.update(experiment="lmnnmkl_table1", paper="lmnnmkl", dataset=dataset,
                   kernel="none", method=method, label=label, overrides=[
                       f"dataset={dataset}", f"method={method}", "kernel=none",
                       "experiment=lmnnmkl_table1"])  # fmt: skip
        (root / dataset).mkdir(parents=True)
        (root / dataset / f"{label}-{method}.json").write_text(json.dumps(rec))
    df, notes = compare(tmp_path / "results", "lmnnmkl_table1", "myfda")
    assert df.empty
    assert notes == [
        "wine none seed 0: no finished baseline record (make them: kml-run "
        "experiment=lmnnmkl_table1 dataset=wine kernel=none method=knn1)"
    ]


def test_another_method_of_ones_own_is_no_baseline_unless_asked_for(store, tmp_path):
    """`mine` run beside the paper's methods is an own run of the experiment too:
    `--method mine2` counted it among 'the baselines of mlsvm_table1', and with
    no paper baseline at hand compared mine2 with mine alone under that title."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (fda,) = copy.rglob("fda[[]*.json")
    rec = json.loads(fda.read_text())
    for method, digest in (("mine", "aaa"), ("mine2", "bbb")):
        rec2 = {**rec, "method": method, "label": f"{method}[kernel=linear]",
                "key": method, "overrides": [
                    o.replace("method=fda", f"method={method}")
                    for o in rec["overrides"]]}  # fmt: skip
        rec2["config"] = {**rec["config"],
                          "method_sources": {f"{method}.Mine": digest}}  # fmt: skip
        fda.with_name(f"{method}[kernel=linear]-{method}.json").write_text(
            json.dumps(rec2)
        )
    df, notes = compare(copy, "mlsvm_table1", "mine2")
    assert list(df.baseline) == ["fda"]
    assert notes == [
        "mine: a method of your own, not a baseline; --against mine compares with it"
    ]
    df, notes = compare(copy, "mlsvm_table1", "mine2", ["mine"])
    assert list(df.baseline) == ["mine"] and notes == []
    fda.unlink()  # no paper baseline: a note, not a comparison with mine
    df, notes = compare(copy, "mlsvm_table1", "mine2")
    assert df.empty and "no finished baseline record" in notes[1]


def test_runs_that_read_other_data_are_not_paired(store, tmp_path):
    """Same labels on the same instances, other features (the new method's run
    read a replaced mirror file): the accuracies were paired as if the data were
    the same. The records' data_digest tells them apart."""
    copy = tmp_path / "results"
    shutil.copytree(store, copy)
    (new,) = copy.rglob("myfda[[]*.json")
    rec = json.loads(new.read_text())
    assert rec["data_digest"] == _record(store, "fda")["data_digest"]
    rec["data_digest"] = "0" * 16
    rec["data_sources"] = {"sonar": "openml:40"}
    new.write_text(json.dumps(rec))
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert df.empty
    (note,) = notes
    assert note.startswith(
        "sonar linear seed 0: not compared with fda: the two runs read other data "
        f"(data_digest {'0' * 16} against "
    )
    assert "myfda read sonar from openml:40, fda read sonar from " in note
    del rec["data_digest"]  # a record written before data_digest: not judged
    new.write_text(json.dumps(rec))
    df, notes = compare(copy, "mlsvm_table1", "myfda")
    assert list(df.baseline) == ["fda"] and notes == []
