"""Writers for generated tables: Markdown, LaTeX and CSV, all written atomically."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd


def _write_via_temp(path: Path, write: Callable[[int, Path], None]) -> None:
    """Write ``path`` through a temporary file beside it and a rename.

    A reader (or a report killed mid-write) sees the old file or the new one, never
    a part. The temporary file is created with mode 0666 minus the umask, as a
    plain ``open`` would create ``path`` (0644 under umask 022; ``tempfile.mkstemp``
    would leave 0600, a table the group could not read), and removed on failure.
    ``write(fd, tmp)`` fills it: the open descriptor, and its path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{os.getpid()}-{secrets.token_hex(6)}{path.suffix}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        write(fd, tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""

    def fill(fd: int, tmp: Path) -> None:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)

    _write_via_temp(path, fill)


def save_figure(fig: Any, path: Path, **kwargs: Any) -> None:
    """``fig.savefig(path, **kwargs)`` through a temporary file and a rename.

    The format is the suffix of ``path`` (``.png``, ``.pdf``), given to matplotlib
    explicitly since the temporary file's name is not ``path``'s.
    """

    def fill(fd: int, tmp: Path) -> None:
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format=Path(path).suffix.lstrip("."), **kwargs)

    _write_via_temp(path, fill)


def csv_text(frame: pd.DataFrame) -> str:
    """The text :func:`write_csv` writes for ``frame``."""
    return frame.to_csv(index=False, float_format="%.6g", lineterminator="\n")


def write_csv(path: Path, frame: pd.DataFrame) -> None:
    write_text(path, csv_text(frame))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    out = [line(header), "|" + "|".join("---" for _ in header) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "ε": r"$\varepsilon$"}


def latex_escape(text: str) -> str:
    for a, b in _LATEX_ESCAPES.items():
        text = text.replace(a, b)
    return text


def latex_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], caption: str, label: str
) -> str:
    """A ``table``/``tabular`` block; cells are escaped unless they start with ``$``
    or contain a LaTeX command already (``\\textbf``)."""

    def cell(c: str) -> str:
        c = str(c)
        return c if c.startswith("\\") else latex_escape(c)

    cols = "l" + "r" * (len(header) - 1)
    body = [" & ".join(cell(c) for c in header) + r" \\", r"\hline"]
    body += [" & ".join(cell(c) for c in r) + r" \\" for r in rows]
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{latex_escape(caption)}}}",
            rf"\label{{{label}}}",
            rf"\begin{{tabular}}{{{cols}}}",
            r"\hline",
            *body,
            r"\hline",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )
