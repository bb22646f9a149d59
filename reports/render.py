"""Writers for generated tables: Markdown, LaTeX and CSV, all written atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
