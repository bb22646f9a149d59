"""Result store: atomic writes, keys, resume semantics."""

import json
import os

import numpy as np
import pytest

from runners.seeds import seed_from
from runners.store import ResultStore, config_key


def test_config_key_is_order_independent_and_sensitive():
    a = {"x": 1, "y": {"b": 2, "a": [1, 2]}}
    b = {"y": {"a": [1, 2], "b": 2}, "x": 1}
    assert config_key(a) == config_key(b)
    assert config_key(a) != config_key({**a, "x": 2})


def test_write_is_atomic_and_leaves_no_temp_file(tmp_path):
    store = ResultStore(tmp_path)
    path = store.path("exp", "sonar", "svm[kernel=linear]", "abc")
    store.write(path, {"status": "ok", "v": np.float64(1.5), "i": np.arange(3)})
    assert json.loads(path.read_text()) == {"status": "ok", "v": 1.5, "i": [0, 1, 2]}
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_failed_write_keeps_previous_record(tmp_path):
    store = ResultStore(tmp_path)
    path = store.path("exp", "sonar", "svm", "abc")
    store.write(path, {"status": "ok"})
    with pytest.raises(TypeError, match="Cannot store"):
        store.write(path, {"status": "ok", "bad": object()})
    assert json.loads(path.read_text()) == {"status": "ok"}
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]


def test_nan_is_refused(tmp_path):
    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    with pytest.raises(ValueError, match="error_pct"):
        store.write(path, {"status": "ok", "error_pct": float("nan")})


def test_only_ok_and_skip_count_as_finished(tmp_path):
    store = ResultStore(tmp_path)
    for status in ("ok", "skip", "error"):
        path = store.path("exp", "d", status, "k")
        store.write(path, {"status": status})
        assert (store.finished(path) is not None) == (status != "error")
    # a stray temp file of a killed writer is ignored by the reader
    (tmp_path / "exp" / "d" / ".tmp-zzz.json").write_text("{")
    assert sorted(r["status"] for r in store.records("exp")) == ["error", "ok", "skip"]


def test_seed_from_is_stable_across_processes():
    # fixed value: sha256 based, independent of PYTHONHASHSEED
    assert seed_from("outer", "sonar", 0, 0) == seed_from("outer", "sonar", 0, 0)
    assert seed_from("outer", "sonar", 0, 0) != seed_from("outer", "wdbc", 0, 0)
    assert 0 <= seed_from("x") < 2**31
    code = "from runners.seeds import seed_from; print(seed_from('outer','sonar',0,0))"
    import subprocess
    import sys

    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert int(out.stdout) == seed_from("outer", "sonar", 0, 0)


# ------------------------------------------------------------ damaged records --
def test_damaged_record_is_named_set_aside_and_rerun(tmp_path, caplog):
    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    store.write(path, {"status": "ok", "error_pct": 1.0})
    path.write_text(path.read_text()[:10])  # truncated, as by a full disk
    with caplog.at_level("WARNING", logger="kml.store"):
        assert store.finished(path) is None  # so the sweep recomputes it
    assert str(path) in caplog.text and "set aside" in caplog.text
    assert not path.exists()
    assert (path.parent / (path.name + ".corrupt")).exists()
    # a second damaged copy gets its own name; nothing is overwritten
    path.write_text("{not json")
    assert store.load(path) is None
    assert (path.parent / (path.name + ".corrupt.1")).exists()


@pytest.mark.parametrize("text", ['{"status": "ok"', "[1, 2]", "null", "\xff\xfe"])
def test_readers_skip_a_damaged_record_with_a_named_warning(tmp_path, caplog, text):
    from runners.store import DamagedRecordError, read_record

    store = ResultStore(tmp_path)
    good = store.path("exp", "d", "good", "k")
    store.write(good, {"status": "ok"})
    bad = store.path("exp", "d", "bad", "k")
    bad.write_bytes(text.encode("latin-1"))
    with pytest.raises(DamagedRecordError, match=str(bad).replace("[", r"\[")):
        read_record(bad)
    with caplog.at_level("WARNING", logger="kml.store"):
        got = list(store.records("exp"))
    assert [r["_path"] for r in got] == [str(good)]
    assert str(bad) in caplog.text
    assert bad.exists()  # a reader (a report) only reads


def test_report_loader_survives_a_damaged_record(tmp_path, caplog):
    from reports.records import load_records

    store = ResultStore(tmp_path)
    bad = store.path("exp", "d", "bad", "k")
    bad.parent.mkdir(parents=True)
    bad.write_text('{"status": "o')
    from reports.guard import ReportError

    # named in a warning, then a clear error: nothing readable is left to report
    with caplog.at_level("WARNING"), pytest.raises(ReportError, match="no readable"):
        load_records(tmp_path, "exp", variants=True)
    assert str(bad) in caplog.text


def test_sweep_recomputes_a_damaged_record(tmp_path, monkeypatch):
    from runners.run import compose_config, run_job

    monkeypatch.setenv("KML_RESULTS", str(tmp_path))
    overrides = ["dataset=sonar", "method=fda", "protocol=smoke"]
    first = run_job(compose_config(overrides))
    path = next(tmp_path.rglob("fda*.json"))
    path.write_text(path.read_text()[: len(path.read_text()) // 2])
    again = run_job(compose_config(overrides))
    assert again["status"] == "ok" and again["finished"] >= first["finished"]
    assert again["predictions"] == first["predictions"]
    assert json.loads(path.read_text())["status"] == "ok"
    assert len(list(tmp_path.rglob("*.corrupt"))) == 1


# ------------------------------------------------- temp files and permissions --
def test_orphan_temp_files_of_a_killed_run_are_removed(tmp_path):
    from runners.store import ORPHAN_SECONDS

    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    path.parent.mkdir(parents=True)
    orphan = path.parent / ".tmp-4242-dead.json"
    orphan.write_text('{"status": "o')
    old = os.stat(orphan).st_mtime - ORPHAN_SECONDS - 60
    os.utime(orphan, (old, old))
    live = path.parent / ".tmp-4343-live.json"  # another writer, mid-write
    live.write_text("{")
    store.write(path, {"status": "ok"})
    assert not orphan.exists()
    assert live.exists()
    assert json.loads(path.read_text()) == {"status": "ok"}


def test_records_are_readable_by_group_and_others(tmp_path):
    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    old = os.umask(0o022)
    try:
        store.write(path, {"status": "ok"})
    finally:
        os.umask(old)
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)


def _write_many(root: str, worker: int) -> None:
    store = ResultStore(root)
    path = store.path("exp", "d", "m", "k")
    for i in range(30):
        store.write(path, {"status": "ok", "worker": worker, "i": i, "pad": "x" * 5000})


def test_racing_writers_of_one_cell_all_succeed_leaving_one_record(tmp_path):
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=3) as pool:
        list(pool.map(_write_many, [str(tmp_path)] * 3, range(3)))
    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    record = json.loads(path.read_text())
    assert record["status"] == "ok" and record["i"] == 29
    assert [p.name for p in path.parent.iterdir()] == [path.name]


# ------------------------------------------------------- non-finite values --
def test_non_finite_diagnostics_are_stored_as_null(tmp_path):
    """json.dump never asks ``default`` about a float: NaN in np.float64, in an
    array, or a plain float used to abort the write with no field named."""
    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    store.write(
        path,
        {
            "status": "ok",
            "error_pct": 1.5,
            "folds": [
                {
                    "solver": {"objective": np.float64("nan"), "n_iter": np.int64(3)},
                    "inner_mean_test_error": {"C=1": float("inf"), "C=10": 0.25},
                    "kernel_weights": np.array([0.5, np.nan, -np.inf]),
                    "scale": np.float32("nan"),
                }
            ],
        },
    )
    fold = json.loads(path.read_text())["folds"][0]
    assert fold["solver"] == {"objective": None, "n_iter": 3}
    assert fold["inner_mean_test_error"] == {"C=1": None, "C=10": 0.25}
    assert fold["kernel_weights"] == [0.5, None, None]
    assert fold["scale"] is None


@pytest.mark.parametrize(
    "field,record",
    [
        ("error_pct", {"error_pct": np.float64("nan")}),
        ("predictions.decision", {"predictions": {"decision": np.array([np.nan])}}),
        ("predictions.y_pred", {"predictions": {"y_pred": [0.0, float("inf")]}}),
        ("folds[1].staged_test_auc", {"folds": [{}, {"staged_test_auc": [np.nan]}]}),
        ("folds[0].solver.check", {"folds": [{"solver": {"check": {"d": np.inf}}}]}),
    ],
)
def test_a_non_finite_result_is_not_an_ok_record_with_null(tmp_path, field, record):
    """A null error rate or decision value would read as a missing number where the
    run produced a wrong one: an ok record with one is refused, naming the file and
    the field; as an error record it is stored (null)."""
    from runners.store import UnstorableRecordError, nonfinite_results

    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    assert [f.split(" ")[0] for f in nonfinite_results(record)] == [field]
    with pytest.raises(UnstorableRecordError) as err:
        store.write(path, {"status": "ok", **record})
    assert str(path) in str(err.value) and field in str(err.value)
    assert not path.exists()
    assert store.write(path, {"status": "error", **record})
    assert json.loads(path.read_text())["status"] == "error"


def test_an_unstorable_value_names_the_file_and_the_field(tmp_path):
    from runners.store import UnstorableRecordError

    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    bad = {"status": "ok", "folds": [{}, {"solver": {"check": {"x": object()}}}]}
    with pytest.raises(UnstorableRecordError, match="Cannot store object") as err:
        store.write(path, bad)
    assert str(path) in str(err.value)
    assert "field folds[1].solver.check.x" in str(err.value)
    assert not path.parent.exists() or not list(path.parent.iterdir())


# ----------------------------------------- an error never replaces a finished --
def test_an_error_record_never_replaces_a_finished_one(tmp_path):
    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    assert store.write(path, {"status": "error", "n": 1})
    assert store.write(path, {"status": "error", "n": 2})  # errors replace errors
    assert store.write(path, {"status": "ok", "n": 3})  # ok replaces an error
    assert not store.write(path, {"status": "error", "n": 4})
    assert json.loads(path.read_text()) == {"status": "ok", "n": 3}
    assert store.write(path, {"status": "ok", "n": 5})  # ok replaces ok
    # force=true keeps only its own sweep's records: a failed recomputation
    # replaces the record it was asked to redo
    assert store.write(path, {"status": "error", "n": 6}, keep=lambda r: False)
    assert json.loads(path.read_text()) == {"status": "error", "n": 6}
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_an_ok_record_renamed_in_while_an_error_is_placed_stays(tmp_path, monkeypatch):
    """The race of two workers sharing a cell: B's split failed and B found no
    finished record; A's ok record lands before B's error record is renamed."""
    import runners.store as store_mod

    store = ResultStore(tmp_path)
    path = store.path("exp", "d", "m", "k")
    store.write(path, {"status": "error", "n": 0})  # an earlier run's
    real = store_mod.read_record
    calls = []

    def read_then_a_finishes(p):
        record = real(p)  # B judges the error record in place ...
        if not calls:
            calls.append(1)
            store.write(path, {"status": "ok", "by": "A"})  # ... A renames in
        return record

    monkeypatch.setattr(store_mod, "read_record", read_then_a_finishes)
    assert not store.write(path, {"status": "error", "by": "B"})
    assert json.loads(path.read_text()) == {"status": "ok", "by": "A"}
    # where no record was when B looked: the hard link refuses to replace A's
    other = store.path("exp", "d", "m2", "k")
    real_version = store_mod._version

    def absent_then_a_finishes(p):
        if p == other and not other.exists():
            store.write(other, {"status": "ok", "by": "A"})
            raise FileNotFoundError(p)
        return real_version(p)

    monkeypatch.setattr(store_mod, "_version", absent_then_a_finishes)
    assert not store.write(other, {"status": "error", "by": "B"})
    assert json.loads(other.read_text()) == {"status": "ok", "by": "A"}
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, other.name]


def test_seed_from_is_pinned_to_its_sha256_formula():
    """Every committed result's folds hang on these numbers: the first 4 bytes of
    sha256("/".join(parts)), little-endian, halved to 31 bits. A change of the
    formula (byte order, separator, width) would move every split silently."""
    import hashlib

    for parts in (("outer", "sonar", 0, 0), ("inner", "sonar", 0, 0, 3), ("x",)):
        digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
        assert seed_from(*parts) == int.from_bytes(digest[:4], "little") >> 1
    assert seed_from("outer", "sonar", 0, 0) == 228176708
