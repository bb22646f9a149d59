"""Shared pieces of the cluster tests: a smoke sweep and its joblib reference.

The sweep (2 datasets x 2 methods, linear kernel, 2x2-fold smoke protocol) runs
through ``kml-run`` in a subprocess, exactly as a user runs it, with its own result
store and Hydra output folder under the test's tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BIN = Path(sys.executable).parent
IN_CI = bool(os.environ.get("CI"))
SWEEP = ["dataset=sonar,wpbc", "method=svm,fda", "kernel=linear", "protocol=smoke"]
ONE_JOB = ["dataset=sonar", "method=svm", "kernel=linear", "protocol=smoke"]


def require(ok: bool, reason: str) -> None:
    """Skip outside CI; in CI the cluster tests must run (.ci/run installs them)."""
    if ok:
        return
    if IN_CI:
        pytest.fail(f"{reason} (CI must run the cluster tests: make setup-cluster)")
    pytest.skip(reason)


def sweep_env(root: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        KML_RESULTS=str(root / "results"),
        KML_OUTPUTS=str(root / "outputs"),
        KML_JOBS="2",
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


def kml_run(args: list[str], env: dict[str, str], timeout: float = 600, **kw):
    """``kml-run -m ARGS`` in a subprocess (a completed process, output captured)."""
    return subprocess.run(
        [str(BIN / "kml-run"), "-m", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )


def load_records(results: Path) -> dict[str, dict]:
    """Every record under ``results``, keyed by its path relative to the store."""
    out = {}
    for path in sorted(results.rglob("*.json")):
        assert not path.name.startswith(".tmp-"), f"temporary file left: {path}"
        out[str(path.relative_to(results))] = json.loads(path.read_text())
    return out


def assert_same_predictions(got: dict[str, dict], ref: dict[str, dict]) -> None:
    """The records of two sweeps agree cell for cell, prediction for prediction."""
    assert sorted(got) == sorted(ref), "the two sweeps wrote different cells"
    for name, r in ref.items():
        g = got[name]
        assert g["status"] == r["status"] == "ok", (name, g.get("reason"))
        assert g["key"] == r["key"]
        assert g["n_errors"] == r["n_errors"], name
        for field in ("index", "fold", "y_true", "y_pred"):
            assert g["predictions"][field] == r["predictions"][field], (name, field)
        gd, rd = g["predictions"]["decision"], r["predictions"]["decision"]
        assert (gd is None) == (rd is None), name
        if rd is not None:
            np.testing.assert_allclose(gd, rd, rtol=1e-10, atol=1e-12, err_msg=name)
        assert [f["best_params"] for f in g["folds"]] == [
            f["best_params"] for f in r["folds"]
        ], name


@pytest.fixture(scope="session")
def joblib_reference(tmp_path_factory) -> dict[str, dict]:
    """The smoke sweep on the default (joblib) launcher: the reference records."""
    root = tmp_path_factory.mktemp("joblib")
    proc = kml_run([*SWEEP, "hydra/launcher=local"], sweep_env(root))
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = load_records(root / "results")
    assert len(records) == 4, sorted(records)
    return records
