"""runners.provenance.code_version: every source file that can change a number."""

from __future__ import annotations

import shutil

import runners.provenance as provenance


def test_code_version_follows_the_dataset_registry(tmp_path, monkeypatch):
    """datasets/registry.yaml holds loading steps (missing values, dropped columns,
    label maps): an edit changes the data, so it must change the record keys (and
    with them the split checkpoints) as an edit of a .py file does."""
    for pkg in ("datasets", "methods", "runners"):
        (tmp_path / pkg).mkdir()
    registry = provenance.REPO_ROOT / "datasets" / "registry.yaml"
    shutil.copy(registry, tmp_path / "datasets")
    (tmp_path / "methods" / "m.py").write_text("x = 1\n")
    monkeypatch.setattr(provenance, "REPO_ROOT", tmp_path)

    def version() -> str:
        provenance.code_version.cache_clear()
        return provenance.code_version()

    try:
        before = version()
        registry = tmp_path / "datasets" / "registry.yaml"
        registry.write_text(registry.read_text() + "\n# missing: drop_rows\n")
        assert version() != before
        (tmp_path / "methods" / "README.md").write_text("prose\n")
        after = version()
        (tmp_path / "methods" / "README.md").write_text("other prose\n")
        assert version() == after  # documentation does not change a number
    finally:
        provenance.code_version.cache_clear()
