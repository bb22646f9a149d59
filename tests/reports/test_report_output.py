"""Where a report writes: every file whole (a temporary file renamed into place),
readable as a plain ``open`` would leave it."""

from __future__ import annotations

import os
import stat

import pytest

from reports.render import save_figure, write_text


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
