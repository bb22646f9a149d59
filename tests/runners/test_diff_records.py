"""benchmarks/diff_records.py finds any differing prediction between two stores."""

import copy
import json

from benchmarks.diff_records import main


def _record(dataset, label, decision, finished="2026-11-26T10:00:00"):
    return {
        "status": "ok", "dataset": dataset, "label": label, "finished": finished,
        "method": label.split("[")[0], "kernel": label.split("=")[1].rstrip("]"),
        "predictions": {"index": [0, 1], "fold": [0, 1], "y_true": [0, 1],
                        "y_pred": [0, 1], "decision": decision},
        "folds": [{"repetition": 0, "split": 0, "n_test": 1, "n_errors": 0,
                   "best_params": {"C": 1}, "inner_mean_test_error": {"C=1": 0.1}}],
    }


def _store(root, records):
    for i, rec in enumerate(records):
        d = root / "mlsvm_table1" / rec["dataset"]
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{rec['label']}-{i}.json").write_text(json.dumps(rec))
    return root


def test_identical_stores_pass_and_one_bit_fails(tmp_path, capsys):
    rec = _record("sonar", "svm[kernel=linear]", [-0.5, 0.25])
    a = _store(tmp_path / "a", [rec])
    b = _store(tmp_path / "b", [copy.deepcopy(rec)])
    assert main([str(a), str(b)]) == 0
    changed = copy.deepcopy(rec)
    changed["predictions"]["decision"][1] = 0.25000000000000006  # one ulp
    c = _store(tmp_path / "c", [changed])
    assert main([str(a), str(c)]) == 1
    assert "predictions.decision (1 differ)" in capsys.readouterr().out


def test_latest_record_of_a_cell_is_compared_and_missing_cells_fail(tmp_path):
    old = _record("sonar", "svm[kernel=linear]", [9.0, 9.0], "2026-11-26T09:00:00")
    new = _record("sonar", "svm[kernel=linear]", [-0.5, 0.25])
    a = _store(tmp_path / "a", [old, new])
    b = _store(tmp_path / "b", [copy.deepcopy(new)])
    assert main([str(a), str(b)]) == 0
    changed = copy.deepcopy(new)
    changed["folds"][0]["best_params"] = {"C": 10}
    assert main([str(a), str(_store(tmp_path / "c", [changed]))]) == 1
    extra = _record("wpbc", "svm[kernel=linear]", [0.0, 0.0])
    d = _store(tmp_path / "d", [copy.deepcopy(new), extra])
    assert main([str(a), str(d)]) == 1
    assert main([str(a), str(d), "--only-common"]) == 0
    # a command-line method parameter is in the label, not in the cell
    relabelled = copy.deepcopy(new)
    relabelled["label"] = "svm[kernel=linear,solver=auto_path]"
    assert main([str(a), str(_store(tmp_path / "e", [relabelled]))]) == 0
