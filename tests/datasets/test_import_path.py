"""``import datasets`` must be this repository's package, not HuggingFace's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import datasets

REPO = Path(__file__).resolve().parents[2]


def test_datasets_is_the_repository_package():
    assert datasets.__file__ is not None, "datasets imported as a namespace package"
    assert Path(datasets.__file__).resolve() == REPO / "datasets" / "__init__.py"
    assert hasattr(datasets, "load")


def test_datasets_resolves_from_outside_the_repository(tmp_path):
    # The console scripts and `kml-run` import `datasets` from any directory.
    # A stale editable install maps it to a namespace package there (then
    # datasets.__file__ is None and `from datasets import load` fails): re-run
    # `pip install -e .` after datasets/__init__.py exists.
    code = "import datasets; print(datasets.__file__); print(hasattr(datasets, 'load'))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    file, has_load = done.stdout.split()
    assert file != "None", (
        "outside the repo, `import datasets` is a namespace package: the editable "
        "install is stale; run `.venv/bin/pip install --no-deps -e .`"
    )
    assert Path(file).resolve() == REPO / "datasets" / "__init__.py"
    assert has_load == "True"
