"""kml-report says which files of the generated folder it changed."""

from __future__ import annotations

from reports.__main__ import _changes, _digests


def test_changes_name_changed_new_and_removed_files(tmp_path):
    (tmp_path / "table1.md").write_text("same")
    (tmp_path / "fig2_times.csv").write_text("1.0")
    (tmp_path / "old.csv").write_text("x")
    before = _digests(tmp_path)
    (tmp_path / "table1.md").write_text("same")  # rewritten as it was
    (tmp_path / "fig2_times.csv").write_text("1.1")
    (tmp_path / "table1.tex").write_text("new")
    (tmp_path / "old.csv").unlink()
    line = _changes(tmp_path, before, _digests(tmp_path))
    assert "changed: fig2_times.csv" in line
    assert "new: table1.tex" in line
    assert "removed: old.csv" in line
    assert "(1 unchanged)" in line


def test_no_change_says_so(tmp_path):
    (tmp_path / "table1.md").write_text("same")
    before = _digests(tmp_path)
    assert _changes(tmp_path, before, _digests(tmp_path)).endswith("no file changed")
    assert _digests(tmp_path / "missing") == {}
