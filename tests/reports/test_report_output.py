"""Where a report writes: every file whole (a temporary file renamed into place),
readable as a plain ``open`` would leave it, and a --out it cannot write named in
one line (exit 2), not a traceback."""

from __future__ import annotations

import os
import stat

import pytest

from reports.__main__ import main
from reports.render import save_figure, write_text
from reports.site import build_site
from tests.reports.test_guard import _store_wrbf, _wrbf_record


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_tables_and_figures_get_the_mode_open_gives(tmp_path, umask_022):
    """0666 minus the umask, as the result store's records: tempfile.mkstemp's 0600
    left every table unreadable to the group (the figures beside them were 0644)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    write_text(tmp_path / "table1.md", "| a |\n")
    fig = plt.figure()
    save_figure(fig, tmp_path / "fig2.png")
    save_figure(fig, tmp_path / "fig2.pdf", metadata={"CreationDate": None})
    plt.close(fig)
    assert {p.name: _mode(p) for p in tmp_path.iterdir()} == {
        "table1.md": 0o644,
        "fig2.png": 0o644,
        "fig2.pdf": 0o644,
    }
    assert (tmp_path / "fig2.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "fig2.pdf").read_bytes()[:4] == b"%PDF"


def test_a_figure_that_fails_midway_leaves_the_old_file(tmp_path):
    """A report killed while matplotlib writes a figure left half a PNG in place."""
    old = tmp_path / "fig2.png"
    old.write_bytes(b"the committed figure")

    class Failing:
        def savefig(self, fh, **kwargs):
            fh.write(b"\x89PNG half")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_figure(Failing(), old)
    assert old.read_bytes() == b"the committed figure"
    assert [p.name for p in tmp_path.iterdir()] == ["fig2.png"]  # no temp file left


@pytest.fixture
def wrbf_store(tmp_path):
    results = tmp_path / "results"
    for method, correct in (("rbf", [7, 8, 6]), ("wrbf", [8, 8, 9])):
        _store_wrbf(results, _wrbf_record("iris", "glass", method, correct))
    return results


def test_out_that_is_a_file_is_named(wrbf_store, tmp_path, capsys):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    assert main(["wrbf_table1", "--results", str(wrbf_store), "--out", str(afile)]) == 2
    err = capsys.readouterr().err
    assert f"--out {afile} is a file, not a folder" in err
    assert afile.read_text() == "mine"


def test_out_that_cannot_be_written_is_named(wrbf_store, tmp_path, capsys):
    """A folder that cannot be created (here under a file; read-only alike) was a
    traceback from Path.mkdir, exit status 1."""
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    out = afile / "tables"
    assert main(["wrbf_table1", "--results", str(wrbf_store), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kml-report wrbf_table1: error: cannot write {out}")
    assert "pass --out DIR, a folder you can write" in err
    assert "Traceback" not in err


def test_site_out_that_is_a_file_or_not_a_site_is_named(tmp_path, capsys):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    assert main(["site", "--out", str(afile)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    other = tmp_path / "tables"
    other.mkdir()
    (other / "table1.md").write_text("mine")
    assert main(["site", "--out", str(other)]) == 2
    assert "is not a site built by kml-report site" in capsys.readouterr().err
    assert main(["site", "--out", str(afile / "site")]) == 2
    err = capsys.readouterr().err
    assert f"cannot write the site at {afile / 'site'}" in err
    assert (other / "table1.md").read_text() == "mine"


def test_site_build_that_fails_keeps_the_site_that_was_there(tmp_path, monkeypatch):
    """The site was removed first and rebuilt in place: a build that failed (or was
    killed) midway left half a site. It is built beside, then swapped in."""
    import reports.site as site

    out = tmp_path / "site"
    build_site(out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(*args, **kwargs):
        raise RuntimeError("a template error")

    monkeypatch.setattr(site, "_write_artifact_page", broken)
    with pytest.raises(RuntimeError):
        build_site(out)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no temp folder


def test_a_leading_tilde_in_results_and_out_means_home(
    wrbf_store, tmp_path, monkeypatch
):
    """``--out=~/x`` reaches the program with its ``~`` (the shell expands only a
    word's start): the user's home, not a folder named ``~``."""
    monkeypatch.setenv("HOME", str(wrbf_store.parent))
    monkeypatch.chdir(tmp_path)
    rel = f"~/{wrbf_store.name}"
    assert main(["wrbf_table1", f"--results={rel}", "--out=~/rep"]) == 0
    assert list((wrbf_store.parent / "rep").iterdir())
    assert not (tmp_path / "~").exists()
