"""benchmarks/bench_lmnn.py: a failing metric-learn reference says why."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import bench_lmnn


def _python(path: Path, body: str) -> Path:
    """A stand-in venv interpreter: ``body`` runs with the reference's arguments
    after ``sys.argv[1]`` (the script it would have run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return path


def test_reference_fit_returns_its_times(tmp_path):
    python = _python(
        tmp_path / "venv" / "bin" / "python",
        "import sys, numpy as np\n"
        "np.save(sys.argv[4], np.eye(2))\nprint(1.5, 0.25, 7)\n",
    )
    assert bench_lmnn.reference_fit(
        python, tmp_path / "ref.py", tmp_path, tmp_path / "venv"
    ) == (1.5, 0.25)
    np.testing.assert_array_equal(np.load(tmp_path / "L.npy"), np.eye(2))


def test_failing_reference_shows_its_error_and_the_venv(tmp_path):
    venv = tmp_path / "venv"
    python = _python(
        venv / "bin" / "python",
        "import sys\nsys.exit(\"AttributeError: module 'numpy' has no attribute "
        "'float'\")\n",
    )
    with pytest.raises(SystemExit) as exc:
        bench_lmnn.reference_fit(python, tmp_path / "ref.py", tmp_path, venv)
    message = str(exc.value)
    assert "metric-learn reference fit failed" in message
    assert "has no attribute 'float'" in message
    assert f"Delete {venv}" in message
