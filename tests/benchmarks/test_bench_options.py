"""A bad option value of a benchmark script is a usage error, not a traceback.

Each case used to reach the timing code and die there (``median`` of no timings,
``train_test_split`` of 0 rows, an estimator's parameter check, an unbound local)
or, for ``bench_lmnn.py --lbfgs 0``, silently run the default benchmark instead.
Now argparse stops it with status 2 and one line naming the option.
"""

from __future__ import annotations

import importlib
import sys

import pytest

CASES = [
    ("bench_qp", ["--sizes", "0"], "--sizes"),
    ("bench_qp", ["--sizes", "abc"], "--sizes"),
    ("bench_qp", ["--repeats", "0"], "--repeats"),
    ("bench_qp", ["--scaling", "--scaling-sizes", "-5"], "--scaling-sizes"),
    ("bench_qp", ["--cvxopt-repeats", "0"], "--cvxopt-repeats"),
    ("bench_komd", ["--sizes", "200,0"], "--sizes"),
    ("bench_komd", ["--sizes", "200,abc"], "--sizes"),
    ("bench_komd", ["--repeat", "0"], "--repeat"),
    ("bench_mkl", ["--fast", "bogus"], "--fast"),
    ("bench_mkl", ["--repeat", "0"], "--repeat"),
    ("bench_mkl", ["--tol", "-1"], "--tol"),
    ("bench_mkl", ["--tol", "nan"], "--tol"),
    ("bench_itml", ["--dims", "0"], "--dims"),
    ("bench_itml", ["--repeat", "0"], "--repeat"),
    ("bench_itml", ["--passes", "0"], "--passes"),
    ("bench_itml", ["--fit-sizes", "1"], "--fit-sizes"),
    ("bench_kdml", ["--sizes", "0"], "--sizes"),
    ("bench_kdml", ["--repeat", "0"], "--repeat"),
    ("bench_kdml", ["--m", "1"], "--m"),
    ("bench_lmnn", ["--lbfgs", "0"], "--lbfgs"),
    ("bench_lmnn", ["--repeats", "0"], "--repeats"),
    ("bench_wrbf", ["--solver", "bogus"], "--solver"),
    ("bench_wrbf", ["--repeat", "0"], "--repeat"),
    ("bench_wrbf", ["--workers", "0"], "--workers"),
    ("bench_wrbf", ["--parallel-runs", "0"], "--parallel-runs"),
    ("bench_cell", ["--repeats", "0"], "--repeats"),
    ("bench_cell", ["--jobs", "abc"], "--jobs"),
    ("bench_cell", ["--jobs", "0old"], "--jobs"),
    ("bench_cell", ["--cells", "bogus:linear"], "--cells"),
    ("bench_cell", ["--cells", "ovarian:linear"], "--cells"),
    ("bench_cell", ["--cells", "sonar:lmnn20"], "--cells"),
]


@pytest.mark.parametrize(
    "script,argv,option", CASES, ids=[f"{s} {' '.join(a)}" for s, a, _ in CASES]
)
def test_bad_value_is_a_usage_error(monkeypatch, capsys, script, argv, option):
    module = importlib.import_module(f"benchmarks.{script}")
    monkeypatch.setattr(sys, "argv", [f"{script}.py", *argv])
    with pytest.raises(SystemExit) as exc:
        module.main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {option}" in err
    assert "Traceback" not in err


def test_komd_sizes_in_both_forms_still_parse():
    from benchmarks.bench_komd import parse_sizes

    assert parse_sizes(["200,500", "1000"]) == [200, 500, 1000]


def test_solver_choices_are_the_estimators():
    """The scripts' --fast/--solver choices are what the estimators accept."""
    from benchmarks import bench_mkl, bench_wrbf
    from methods import WRBFSVM, SimpleMKL

    def options(estimator):
        return set(estimator._parameter_constraints["solver"][0].options)

    assert set(bench_mkl.FAST_SOLVERS) == options(SimpleMKL)
    assert set(bench_wrbf.SOLVERS) == options(WRBFSVM)


# bench_qp.py ran the first section flag it found and ignored the rest, and the
# options of the other sections: `--full` alone ran the 5-minute main grid
QP_MISMATCHES = [
    (["--scaling", "--psd"], "--scaling and --psd are separate sections"),
    (["--full"], "--full is read by --scaling only, not by the main grid"),
    (["--same-tol", "--rank"], "--same-tol is read by --scaling only, not by --rank"),
    (["--scaling-sizes", "1000"], "--scaling-sizes is read by --scaling and --psd"),
    (["--scaling", "--sizes", "200"], "--sizes is read by the main grid only"),
    (["--svmfda", "--cvxopt-repeats", "2"], "--cvxopt-repeats is read by the main"),
]


class _Timing(Exception):
    """Raised where bench_qp.py would start timing."""


def _first_timing(**kwargs):
    raise _Timing


@pytest.mark.parametrize("argv,message", QP_MISMATCHES)
def test_qp_option_its_section_ignores_is_a_usage_error(
    monkeypatch, capsys, argv, message
):
    from benchmarks import bench_qp

    monkeypatch.setattr(bench_qp, "threadpool_limits", _first_timing)
    with pytest.raises(SystemExit) as exc:
        bench_qp.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_qp_documented_commands_pass_the_section_check(monkeypatch):
    """Every bench_qp.py command the docs quote (test_bench_commands) is accepted."""
    from benchmarks import bench_qp
    from tests.benchmarks.test_bench_commands import COMMANDS

    checked = []
    monkeypatch.setattr(bench_qp, "threadpool_limits", _first_timing)
    for _, script, argv in COMMANDS:
        if script != "bench_qp.py":
            continue
        with pytest.raises(_Timing):  # past the checks, at the first timing
            bench_qp.main(argv)
        checked.append(argv)
    assert len(checked) >= 5


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--floor", "--gemm"], "argument --gemm: not allowed with argument --floor"),
        (["--lbfgs", "40", "--kernel-map"], "not allowed with argument --lbfgs"),
        (["--venv", "/tmp/x", "--gemm"], "--venv is read by the default comparison"),
    ],
)
def test_lmnn_one_part_per_run(monkeypatch, capsys, argv, message):
    """bench_lmnn.py ran the first part it found (--floor before --lbfgs before
    --gemm before --kernel-map) and dropped the others silently."""
    from benchmarks import bench_lmnn

    for part in ("_floor_timings", "_lbfgs_timings", "_gemm_path_timings",
                 "_kernel_map_timings", "_install_reference"):
        monkeypatch.setattr(bench_lmnn, part, _first_timing)
    monkeypatch.setattr(sys, "argv", ["bench_lmnn.py", *argv])
    with pytest.raises(SystemExit) as exc:
        bench_lmnn.main()
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_kdml_grid_does_not_take_m(monkeypatch, capsys):
    """--grid's sets have 3 classes; --m was dropped silently."""
    from benchmarks import bench_kdml

    monkeypatch.setattr(bench_kdml, "main_grid", _first_timing)
    monkeypatch.setattr(sys, "argv", ["bench_kdml.py", "--grid", "--m", "4"])
    with pytest.raises(SystemExit) as exc:
        bench_kdml.main()
    assert exc.value.code == 2
    assert "--m is not read by --grid" in capsys.readouterr().err


def test_kdml_one_size_prints_no_exponent(monkeypatch, capsys):
    """With one size the log-log slope was a line through one point: a
    RankWarning and made-up exponents (-0.9 for the naive solve)."""
    from benchmarks import bench_kdml

    keys = ("m1_naive", "m1_step", "m1_setup", "m2_naive", "m2_step", "m2_setup")
    monkeypatch.setattr(bench_kdml, "threadpool_limits", lambda n: None)
    monkeypatch.setattr(bench_kdml, "time_size", lambda n, m: dict.fromkeys(keys, 0.01))
    monkeypatch.setattr(sys, "argv", ["bench_kdml.py", "--sizes", "50"])
    bench_kdml.main()
    out = capsys.readouterr().out
    assert "fitted exponent of n: needs two sizes or more" in out
    assert "log-log slope" not in out


@pytest.mark.parametrize("extra", [["--jobs", "2"], ["--sklearn-frozen"]])
def test_cell_split_only_refuses_the_ratio_options(monkeypatch, capsys, extra):
    """--split-only times the harness in-process: --jobs and --sklearn-frozen
    were dropped silently."""
    from benchmarks import bench_cell

    monkeypatch.setattr(bench_cell, "time_split", _first_timing)
    monkeypatch.setattr(bench_cell, "bench_cells", _first_timing)
    monkeypatch.setattr(sys, "argv", ["bench_cell.py", "--split-only", *extra])
    with pytest.raises(SystemExit) as exc:
        bench_cell.main()
    assert exc.value.code == 2
    assert "--split-only leaves out" in capsys.readouterr().err


def test_cell_jobs_default_is_one(monkeypatch):
    from benchmarks import bench_cell

    seen = []
    monkeypatch.setattr(bench_cell, "bench_cells", lambda c, r, j, f: seen.append(j))
    monkeypatch.setattr(sys, "argv", ["bench_cell.py", "--no-split"])
    bench_cell.main()
    assert seen == [["1"]]


def test_a_dataset_found_nowhere_ends_with_its_message(monkeypatch, capsys):
    """bench_lmnn.py --lbfgs (mfeat), bench_qp.py --scorer (musk1) and
    bench_cell.py without the data mirror died in a traceback around the
    loader's message; the scripts' entry point now prints the message."""
    from benchmarks import bench_lmnn
    from benchmarks._cli import run
    from datasets.exceptions import DatasetUnavailableError

    def missing(*args):
        raise DatasetUnavailableError("mfeat", "no copy found", ["mirror: /x"])

    monkeypatch.setattr(bench_lmnn, "_lbfgs_timings", missing)
    monkeypatch.setattr(sys, "argv", ["bench_lmnn.py", "--lbfgs", "5"])
    assert run(bench_lmnn.main) == 1
    err = capsys.readouterr().err
    assert err.startswith("bench_lmnn.py: error: Dataset 'mfeat' is unavailable")
    assert "Traceback" not in err


def test_a_failed_child_of_bench_cell_ends_with_its_output(monkeypatch, capsys):
    from benchmarks import bench_cell
    from benchmarks._cli import run

    def failed(*args):
        raise bench_cell.ChildFailed("kml-run ... failed:\nkml-run: no job was started")

    monkeypatch.setattr(bench_cell, "bench_cells", failed)
    monkeypatch.setattr(sys, "argv", ["bench_cell.py", "--no-split"])
    assert run(bench_cell.main, bench_cell.ChildFailed) == 1
    assert "bench_cell.py: error: kml-run ... failed:" in capsys.readouterr().err


def test_the_scripts_exit_through_run():
    """Each script that loads a dataset of the mirror exits through _cli.run."""
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "benchmarks"
    for name in ("bench_lmnn.py", "bench_qp.py", "bench_cell.py"):
        tail = (bench / name).read_text().rsplit('if __name__ == "__main__":', 1)[1]
        assert "sys.exit(run(main" in tail, name


def test_lmnn_venv_that_is_not_a_throwaway_one_is_refused(
    monkeypatch, capsys, tmp_path
):
    """--venv got `python -m venv` and `pip install metric-learn
    scikit-learn<=1.7` whatever it named: the harness's own .venv (its
    scikit-learn downgraded), or a plain folder (--venv "" is the current one)."""
    from pathlib import Path

    from benchmarks import bench_lmnn

    problem = bench_lmnn._venv_problem
    assert "environment running this script" in problem(Path(sys.prefix))
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("x")
    assert "no virtual environment" in problem(tmp_path / "plain")
    (tmp_path / "file").write_text("x")
    assert "is a file" in problem(tmp_path / "file")
    other = tmp_path / "other-venv"
    other.mkdir()
    (other / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert "not made by this script" in problem(other)
    (other / bench_lmnn.VENV_MARKER).touch()
    assert problem(other) is None  # one it made before: it may install there
    assert problem(tmp_path / "new") is None
    (tmp_path / "empty").mkdir()
    assert problem(tmp_path / "empty") is None

    monkeypatch.setattr(bench_lmnn, "_install_reference", _first_timing)
    monkeypatch.setattr(sys, "argv", ["bench_lmnn.py", "--venv", sys.prefix])
    with pytest.raises(SystemExit) as exc:
        bench_lmnn.main()
    assert exc.value.code == 2
    assert "environment running this script" in capsys.readouterr().err


def test_lmnn_default_run_leaves_no_temporary_folder(monkeypatch, tmp_path, capsys):
    """Every default run left /tmp/bench_lmnn_*/ with X.npy, y.npy, L.npy and
    ref.py (~1 MB) behind."""
    import atexit
    import tempfile

    import numpy as np

    from benchmarks import bench_lmnn

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(bench_lmnn, "_install_reference", lambda venv: None)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.array([0, 1] * 20)
    monkeypatch.setattr(bench_lmnn, "_datasets", lambda: iter([("tiny", X, y)]))
    at_exit = []
    monkeypatch.setattr(atexit, "register", lambda f, *a: at_exit.append((f, a)))
    monkeypatch.setattr(
        sys, "argv", ["bench_lmnn.py", "--repeats", "1", "--venv", str(tmp_path / "v")]
    )
    bench_lmnn.main()
    assert "tiny" in capsys.readouterr().out
    for func, args in at_exit:
        func(*args)
    assert list(tmp_path.glob("bench_lmnn_*")) == []
