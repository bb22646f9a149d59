"""The test folders never shadow the packages of the same name (plain ``pytest``)."""

from __future__ import annotations

import sys
from pathlib import Path

from joblib import Parallel, delayed

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"


def _origin(name: str) -> str:
    import importlib

    return str(importlib.import_module(name).__file__)


def test_no_test_folder_is_on_sys_path():
    # pytest's default "prepend" mode put tests/ on sys.path, where the namespace
    # package tests/methods won over the editable install's finder
    on_path = [p for p in sys.path if p and Path(p).resolve().is_relative_to(TESTS)]
    assert not on_path


def test_worker_processes_import_the_real_packages():
    names = ["methods", "datasets", "runners", "reports"]
    origins = Parallel(n_jobs=2)(delayed(_origin)(n) for n in names)
    for name, origin in zip(names, origins):
        assert origin == str(REPO / name / "__init__.py"), (name, origin)


def test_a_test_may_set_an_environment_variable():
    import os

    os.environ["KML_LEAK_PROBE"] = "set by the test above"  # the guard undoes it


def test_the_next_test_does_not_see_it():
    import os

    assert "KML_LEAK_PROBE" not in os.environ
    # and no test writes into the checkout's results/ by default
    assert Path(os.environ["KML_RESULTS"]).resolve() != (REPO / "results").resolve()
