"""A sweep killed with SIGKILL resumes: finished records are reused, none is lost.

Runs a small Hydra multirun (smoke protocol) in a subprocess, kills its whole process
group once a few records exist, starts it again, and checks that (1) every record
written before the kill is untouched, (2) the sweep completes, and (3) the result
equals an uninterrupted sweep, prediction for prediction.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SWEEP = [
    "experiment=mlsvm_table1",
    "protocol=smoke",
    "dataset=sonar,wpbc,ionosphere",  # a command-line sweep replaces the file's
    "method=svm,fda",
    "kernel=linear,poly2",
]
N_RUNS = 12


def _sweep(results: Path, outputs: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "KML_RESULTS": str(results),
        "KML_OUTPUTS": str(outputs),
        "KML_JOBS": "1",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "runners.run", *SWEEP],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(outputs.parent / f"{outputs.name}.err", "w"),  # noqa: SIM115
        start_new_session=True,
    )


def _records(results: Path) -> dict[str, dict]:
    return {
        p.name: json.loads(p.read_text())
        for p in sorted(results.rglob("*.json"))
        if not p.name.startswith(".tmp-")
    }


def test_killed_sweep_resumes_and_matches_uninterrupted(tmp_path):
    results = tmp_path / "results"
    proc = _sweep(results, tmp_path / "out1")
    deadline = time.time() + 240
    while time.time() < deadline and len(_records(results)) < 3:
        assert proc.poll() is None, (tmp_path / "out1.err").read_text()[-2000:]
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _records(results)
    assert 3 <= len(before) < N_RUNS, "the kill should land mid-sweep"

    proc = _sweep(results, tmp_path / "out2")
    assert proc.wait(timeout=600) == 0
    after = _records(results)
    assert len(after) == N_RUNS
    for name, rec in before.items():
        assert after[name] == rec, f"{name} was recomputed after the restart"

    fresh = tmp_path / "fresh"
    proc = _sweep(fresh, tmp_path / "out3")
    assert proc.wait(timeout=600) == 0
    clean = _records(fresh)
    assert set(clean) == set(after)
    for name, rec in clean.items():
        assert rec["status"] == after[name]["status"]
        assert rec.get("predictions") == after[name].get("predictions"), name
