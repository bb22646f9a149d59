"""The report site: one static HTML site from the committed generated reports.

``kml-report site`` (``make site``) reads ``reports/generated/<paper>/`` (tables as
CSV, their Markdown for the protocol notes, figures), ``reports/known_divergences.csv``
and, when there are any, the result records (wall times and code versions), and
writes ``site/``: an index with one row per paper and artifact, one page per table
with the reproduced and published numbers side by side, and the other Markdown
documents of a paper as pages. It never runs an experiment and needs no network.

A paper is described by a :class:`Paper` in :data:`PAPERS` (its artifacts, their
figures and side tables). A folder under ``reports/generated/`` with no descriptor,
or a ``tableN.csv``/``figN.png`` the descriptor does not list, still gets its pages.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from runners import run_ledger

REPORTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = REPORTS_DIR.parent
GENERATED = REPORTS_DIR / "generated"
KNOWN_DIVERGENCES = REPORTS_DIR / "known_divergences.csv"
PUBLISHED = REPORTS_DIR / "published"
TEMPLATES = REPORTS_DIR / "templates"
DEFAULT_OUT = REPO_ROOT / "site"

# Side tables longer than this are linked as CSV instead of shown in full.
MAX_SIDE_ROWS = 60
# Distance bands, in standard errors of the published proportion (cell colours).
SE_BANDS = ((1.0, "se1"), (2.0, "se2"), (3.0, "se3"))
# Bands of a table whose paper publishes a std over splits instead (arbf): the
# paper's own criterion, within one published std or not.
STD_BANDS = ("std1", "std_out")
# The known-divergence statuses the README defines, in the order the pages show
# them; any other status in the list is shown after them, not dropped.
DIVERGENCE_STATUSES = ("explained", "unattainable", "open")
SITE_PACKAGES = (
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "hydra-core",
    "statsmodels",
    "matplotlib",
    "jinja2",
    "markdown-it-py",
)


@dataclass(frozen=True)
class Artifact:
    """One table or figure of a paper, as files under ``reports/generated/<paper>/``.

    ``key`` names ``<key>.csv`` (the table) and ``<key>.md`` (its notes);
    ``experiment`` the result folder and ``conf/experiment/<experiment>.yaml``;
    ``figures`` the images shown on its page; ``side`` the other CSVs shown under the
    table (McNemar scores, claims, ...). ``sources``, for an artifact drawn from
    several experiments or from one its report picks from the store (kdml's
    figures: the 20-run sweep or its reduced variant, and a supplement), gives
    their names from the result store root instead of ``experiment``.
    """

    key: str
    title: str
    experiment: str | None = None
    make_target: str | None = None
    figures: tuple[str, ...] = ()
    side: tuple[str, ...] = ()
    sources: Callable[[Path], tuple[str, ...]] | None = None

    def experiments(self, results: Path) -> tuple[str, ...]:
        """The experiments whose records make the artifact (for its wall time)."""
        if self.sources is not None:
            return self.sources(results)
        return (self.experiment,) if self.experiment else ()


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    artifacts: tuple[Artifact, ...] = ()
    note: str = ""


def _art(paper: str, key: str, title: str, target: str | None = None, **kw) -> Artifact:
    return Artifact(key, title, f"{paper}_{key}", target, **kw)


def _kdml_sources(figure: str) -> Callable[[Path], tuple[str, ...]]:
    """A kdml figure's experiments, as its report picks them from the store.

    Imported when called: reports.kdml draws figures (matplotlib), which the
    site needs only where it reads records.
    """

    def sources(results: Path) -> tuple[str, ...]:
        from reports.kdml import figure_experiments

        return figure_experiments(results, figure)

    return sources


# The per-paper descriptors. A new paper needs a line here only for nicer titles
# and its make target; its generated folder shows up without one.
PAPERS: tuple[Paper, ...] = (
    Paper(
        "mlsvm",
        "Paper A: metric-learning-based SVM and MKL (SVM_m, ε-SVM, SVM-FDA, MKL_m)",
        (
            _art(
                "mlsvm",
                "table1",
                "Table I and Fig. 2",
                "reproduce-table1",
                figures=("fig2.png",),
                side=("table1_scores.csv", "table1_lowest.csv", "fig2_times.csv"),
            ),
            _art(
                "mlsvm",
                "table2",
                "Table II (MKL, 20 kernels)",
                "reproduce-mlsvm-table2",
                side=("table2_scores.csv", "table2_weights.csv"),
            ),
        ),
    ),
    Paper(
        "lmnnmkl",
        "Paper B: LMNN with multiple kernels",
        (
            _art("lmnnmkl", "table1", "Table 1", "reproduce-lmnnmkl-table1"),
            _art(
                "lmnnmkl",
                "table2",
                "Table 2 (multiple sources)",
                "reproduce-lmnnmkl-table2",
            ),
        ),
    ),
    Paper(
        "kdml",
        "Paper C: kernel distance metric learning in vector-valued RKHS",
        tuple(
            Artifact(
                f"fig{i}",
                f"Fig. {i}",
                None,
                "reproduce-kdml",
                figures=(f"fig{i}.png",),
                # the Sec. 5 claims, checked against the numbers of Figs. 1-4
                side=("claims.csv",) if i == 1 else (),
                # no one experiment: a figure's wall time is its experiments' sum
                sources=_kdml_sources(f"fig{i}"),
            )
            for i in (1, 2, 3, 4)
        ),
        note="The paper publishes figures only; its claims are qualitative.",
    ),
    Paper(
        "wrbf",
        "Paper D: SVM feature weights learned on the dual objective (WRBF)",
        (
            _art(
                "wrbf",
                "table1",
                "Table 1, Fig. 2, Wilcoxon z and r",
                "reproduce-wrbf",
                figures=("fig2.png",),
                side=("claims.csv", "experiments.csv"),
            ),
        ),
    ),
    Paper(
        "arbf",
        "Paper E: anisotropic RBF with KOMD",
        (
            _art(
                "arbf",
                "table1",
                "Table 1 and Fig. 2",
                "reproduce-arbf",
                figures=("fig2.png",),
                # the Sec. 5 claim and the check runs; the label-AUC check exists
                # only when its records do
                side=(
                    "claims.csv",
                    "table1_check_variants.csv",
                    "table1_check_label_auc.csv",
                ),
            ),
        ),
    ),
)

_ARTIFACT_FILE = re.compile(r"^(table|fig)(\d+)\.(csv|png)$")


def papers(generated: Path = GENERATED) -> list[Paper]:
    """The descriptors, plus what a generated folder holds that they do not list."""
    out = []
    known = {p.key: p for p in PAPERS}
    folders = (
        sorted(p.name for p in generated.iterdir() if p.is_dir())
        if (generated.exists())
        else []
    )
    for key in [*known, *[f for f in folders if f not in known]]:
        paper = known.get(key, Paper(key, f"Paper {key}"))
        folder = generated / key
        listed = {a.key for a in paper.artifacts}
        claimed = {f for a in paper.artifacts for f in (*a.figures, *a.side)}
        extra = []
        if folder.exists():
            for f in sorted(folder.iterdir()):
                m = _ARTIFACT_FILE.match(f.name)
                if not m or f.name in claimed:
                    continue
                akey = f"{m[1]}{m[2]}"
                if akey in listed:
                    continue
                listed.add(akey)
                title = f"{'Table' if m[1] == 'table' else 'Fig.'} {m[2]}"
                figs = (f"{akey}.png",) if (folder / f"{akey}.png").exists() else ()
                side = tuple(s.name for s in sorted(folder.glob(f"{akey}_*.csv")))
                extra.append(Artifact(akey, title, f"{key}_{akey}", None, figs, side))
        out.append(
            Paper(paper.key, paper.title, (*paper.artifacts, *extra), paper.note)
        )
    return out


# --------------------------------------------------------------------------- tables


@dataclass
class Cell:
    """One reproduced-vs-published cell as shown on a table page."""

    reproduced: float | None
    published: float | None
    se: float | None = None
    n: float | None = None
    reason: str = ""  # why there is no reproduced number
    divergence: str = ""  # "[status] reason" from known_divergences.csv
    footnote: int | None = None
    lowest: bool = False
    digits: int = 2
    # tables with a std over splits (arbf): both stds, and the table's own flag of
    # the reproduced mean lying within one published std (None: no such flag)
    std: float | None = None
    published_std: float | None = None
    within_std: bool | None = None

    @property
    def z(self) -> float | None:
        if self.reproduced is None or self.published is None or not self.se:
            return None
        return abs(self.reproduced - self.published) / self.se

    @property
    def band(self) -> str:
        z = self.z
        if self.reproduced is None:
            return "missing"
        if z is None:
            if self.within_std is not None:
                return STD_BANDS[0] if self.within_std else STD_BANDS[1]
            return "nose"
        for limit, name in SE_BANDS:
            if z <= limit + 1e-9:
                return name
        return "se4"

    @property
    def divergence_status(self) -> str:
        m = re.match(r"\[(\w+)\]", self.divergence)
        return m[1] if m else ("open" if self.divergence else "")

    @property
    def unlisted(self) -> bool:
        """Outside the table's criterion and not in the known-divergence list (†).

        The criterion is 2 SE when the cell has an SE, else one published std when
        the table flags that (arbf has no SE, and its cells outside one std must be
        listed like any other).
        """
        if self.divergence:
            return False
        z = self.z
        if z is not None:
            return z > 2 + 1e-9
        return self.reproduced is not None and self.within_std is False

    def fmt(self, v: float | None) -> str:
        return "—" if v is None else f"{v:.{self.digits}f}"

    def fmt_std(self, v: float | None) -> str:
        """`` ± std`` after a mean, or nothing when the table gives no std."""
        return "" if v is None else f" ± {v:.{self.digits}f}"

    @property
    def title(self) -> str:
        parts = []
        if self.reproduced is None:
            parts.append(f"not reproduced: {self.reason or 'no record'}")
        else:
            parts.append(
                f"reproduced {self.fmt(self.reproduced)}{self.fmt_std(self.std)}"
            )
        if self.published is not None:
            parts.append(
                f"published {self.fmt(self.published)}"
                f"{self.fmt_std(self.published_std)}"
            )
        if self.reproduced is not None and self.published is not None:
            parts.append(f"delta {self.reproduced - self.published:+.{self.digits}f}")
        z = self.z
        if z is not None:
            parts.append(f"SE {self.se:.{self.digits}f} ({z:.1f} SE)")
        elif self.se:
            # an SE but no distance (no reproduced number): the SE alone
            parts.append(f"SE {self.se:.{self.digits}f}")
        if self.reproduced is not None and self.within_std is not None:
            parts.append(
                "within one published std"
                if self.within_std
                else "outside one published std"
            )
        text = ", ".join(parts)
        if self.divergence:
            text += f". Known divergence {self.divergence}"
        elif self.unlisted:
            what = "2 SE" if z is not None else "one published std"
            text += f". Outside {what} and not in the known-divergence list"
        return text


@dataclass
class Block:
    """One table on a page: rows x column groups, each group reproduced | published."""

    title: str
    row_header: str
    columns: list[str]
    rows: list[tuple[str, str, list[Cell | None], str]]  # label, n, cells, note
    score_rows: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    source: str = ""
    block_filter: str = ""


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in ("true", "1", "yes")


def _missing(v: Any) -> bool:
    """None or NaN (a CSV's empty field), as :func:`pandas.isna` of a scalar."""
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):  # a list-like value is not missing
        return False


def _has_result(row: dict[str, Any], cell: Cell) -> bool:
    """Whether a long table's row counts as reproduced: ``status == "ok"`` when the
    table has a status column (what its own summary counts), else a number."""
    if "status" in row and not _missing(row["status"]):
        return str(row["status"]) == "ok"
    return cell.reproduced is not None


# Value columns of the papers' long tables under other names: lmnnmkl writes
# accuracy_pct beside published_pct and se_pct, arbf auc_mean and auc_std beside
# published_mean and published_std (its published spread is a std over splits, not a
# binomial SE: no SE band, its own within_1std flag instead).
_VALUE_ALIASES = {
    "accuracy_pct": "reproduced_pct",
    "auc_mean": "reproduced_mean",
    "auc_std": "reproduced_std",
}
# The flag of a cell within one published std (arbf's criterion).
WITHIN_STD_COLUMN = "within_1std"


def read_table(path: Path) -> pd.DataFrame:
    """A generated table's CSV, its reproduced-value column named ``reproduced_*``."""
    df = pd.read_csv(path)
    df = df.rename(
        columns={
            a: b
            for a, b in _VALUE_ALIASES.items()
            if a in df.columns
            and b not in df.columns
            and f"published_{b.split('_', 1)[1]}" in df.columns
        }
    )
    if "known_divergence" not in df.columns and {"dataset", "method"} <= set(df):
        # tables that do not carry the reason themselves: from the list, by cell
        kd = load_known()
        kd = kd[(kd.paper == path.parent.name) & (kd.artifact == path.stem)]
        reasons = {
            (r.dataset, r.method): f"[{r.status}] {r.reason}" for r in kd.itertuples()
        }
        names = [df.dataset, df.get("published_dataset", df.dataset)]
        df["known_divergence"] = [
            reasons.get((d, m)) or reasons.get((pd_, m)) or ""
            for d, pd_, m in zip(*names, df.method)
        ]
        # a reason only where the table shows the divergence, as its own ‡ does
        # (a cell with a result outside the tolerance): never on a cell within it
        # or not run, whatever table the site is built from
        df.loc[~_shows_divergence(df), "known_divergence"] = ""
    return df


def _shows_divergence(df: pd.DataFrame) -> pd.Series:
    """Rows a listed reason may be attached to, by what the table says of them.

    ``listed`` (lmnnmkl: set only outside 2 SE) when the table has it, else a
    ``within_*`` column false (arbf: ``within_1std``); ``status`` ok when given.
    A table with neither column keeps every row.
    """
    keep = pd.Series(True, index=df.index)
    if "status" in df.columns:
        keep &= df.status.eq("ok")
    if "listed" in df.columns:
        return keep & df.listed.astype(str).eq("True")
    within = [c for c in df.columns if c.startswith("within_")]
    for c in within:
        keep &= df[c].astype(str).eq("False")
    return keep


def is_long_format(df: pd.DataFrame) -> str | None:
    """The value suffix of a long table (``reproduced_pct``/``published_pct``).

    A long table has one row per (block, dataset, method); any other layout is shown
    as a wide table or as it is.
    """
    if not {"dataset", "method"} <= set(df.columns):
        return None
    for c in df.columns:
        # a std is the spread beside a table's value, never the value itself
        if (
            c.startswith("reproduced_")
            and c != "reproduced_std"
            and f"published_{c[11:]}" in df.columns
        ):
            return c[11:]
    return None


def method_names() -> dict[str, str]:
    """Method id -> the paper's name (``paper_name`` of the estimator class)."""
    names = {}
    for path in sorted((REPO_ROOT / "conf" / "method").glob("*.yaml")):
        m = re.search(r"^_target_:\s*(\S+)", path.read_text(), re.M)
        if not m:
            continue
        try:
            from reports.error_tables import display_name

            names[path.stem] = display_name(m[1], path.stem)
        except Exception:  # a class that does not import: keep the id
            names[path.stem] = path.stem
    # one class, several configs (ARBF with T = 20 and 50): tell them apart by id
    shared = Counter(names.values())
    return {k: f"{v} ({k})" if shared[v] > 1 else v for k, v in names.items()}


def kernel_titles() -> dict[str, str]:
    try:
        from reports.error_tables import KERNEL_TITLES

        return dict(KERNEL_TITLES)
    except Exception:
        return {}


def long_blocks(
    df: pd.DataFrame,
    suffix: str,
    scores: pd.DataFrame | None,
    source: str,
    names: dict[str, str],
    footnotes: list[tuple[int, str, str]],
) -> list[Block]:
    """Blocks of a long table (mlsvm-style: one row per kernel, dataset, method)."""
    rep, pub = f"reproduced_{suffix}", f"published_{suffix}"
    se_col = next((c for c in (f"se_{suffix}", "se") if c in df.columns), None)
    rep_std, pub_std = (
        c if c in df.columns else None for c in ("reproduced_std", "published_std")
    )
    within_col = WITHIN_STD_COLUMN if WITHIN_STD_COLUMN in df.columns else None
    block_col = "kernel" if "kernel" in df.columns else None
    ktitles = kernel_titles()
    blocks = []
    groups = df.groupby(block_col, sort=False) if block_col else [(None, df)]
    for bkey, part in groups:
        methods = list(dict.fromkeys(part.method))
        rows = []
        for dataset, drows in part.groupby("dataset", sort=False):
            by_method = {r.method: r for r in drows.itertuples()}
            cells: list[Cell | None] = []
            reasons = []
            n = ""
            for m in methods:
                r = by_method.get(m)
                if r is None:
                    cells.append(None)
                    continue
                d = r._asdict()
                n = n or ("" if _num(d.get("n")) is None else f"{_num(d['n']):.0f}")
                div = str(d.get("known_divergence") or "")
                if div == "nan":
                    div = ""
                reason = d.get("reason")
                cell = Cell(
                    _num(d[rep]),
                    _num(d[pub]),
                    _num(d.get(se_col)) if se_col else None,
                    # only a NaN/None reason is empty: its text is kept as written
                    reason=("" if _missing(reason) else str(reason))
                    or str(d.get("status", "")),
                    divergence=div,
                    lowest=_truthy(d.get("lowest")),
                    std=_num(d.get(rep_std)) if rep_std else None,
                    published_std=_num(d.get(pub_std)) if pub_std else None,
                )
                if within_col and _has_result(d, cell):
                    # a cell without a result has no distance to flag (its
                    # within_1std is False by default, not a measured miss)
                    cell.within_std = _truthy(d.get(within_col))
                if div:
                    cell.footnote = _footnote(
                        footnotes,
                        div,
                        f"{dataset}, {m}" + (f", {bkey}" if bkey else ""),
                    )
                if cell.reproduced is None:
                    reasons.append(cell.reason)
                cells.append(cell)
            note = ""
            if reasons and len(reasons) == len([c for c in cells if c]):
                note = (
                    reasons[0]
                    if len(set(reasons)) == 1
                    else "; ".join(dict.fromkeys(reasons))
                )
            rows.append((str(dataset), n, cells, note))
        score_rows = []
        if scores is not None and not scores.empty:
            sc = scores[scores.kernel == bkey] if block_col in scores else scores
            if not sc.empty:
                by = {r.method: r for r in sc.itertuples()}
                pairs = []
                for m in methods:
                    r = by.get(m)
                    pairs.append(
                        ("—", "—")
                        if r is None
                        else (
                            _fmt_score(getattr(r, "reproduced_score", None)),
                            _fmt_score(getattr(r, "published_score", None)),
                        )
                    )
                nsets = (
                    sc.n_datasets_scored.iloc[0] if ("n_datasets_scored" in sc) else ""
                )
                label = "McNemar score" + (
                    f" ({nsets} datasets)" if nsets != "" else ""
                )
                score_rows.append((label, pairs))
        blocks.append(
            Block(
                ktitles.get(str(bkey), str(bkey)) if bkey is not None else "",
                "dataset",
                [names.get(m, m) for m in methods],
                rows,
                score_rows,
                source,
                f"{block_col}={bkey}" if block_col else "",
            )
        )
    return blocks


def _fmt_score(v: Any) -> str:
    f = _num(v)
    return "—" if f is None else f"{f:g}"


def _footnote(footnotes: list[tuple[int, str, str]], text: str, where: str) -> int:
    for num, t, _ in footnotes:
        if t == text:
            return num
    num = len(footnotes) + 1
    footnotes.append((num, text, where))
    return num


def wide_block(df: pd.DataFrame, source: str) -> Block | None:
    """A wide table (wrbf-style: ``X`` beside ``published_X``), one row per dataset."""
    values = [c for c in df.columns if f"published_{c}" in df.columns]
    if not values:
        return None
    label_col = df.columns[0]
    rows = []
    for r in df.itertuples(index=False):
        d = r._asdict()
        cells = []
        for v in values:
            digits = 0 if "total" in v or v.startswith("n_") else 2
            cells.append(Cell(_num(d[v]), _num(d[f"published_{v}"]), digits=digits))
        rows.append((str(d[label_col]), "", cells, ""))
    return Block(
        "", label_col, [v.replace("_", " ") for v in values], rows, source=source
    )


@dataclass
class SideTable:
    title: str
    header: list[str]
    rows: list[list[str]]
    href: str
    n_rows: int
    shown: bool


def side_table(path: Path, href: str) -> SideTable:
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    shown = len(df) <= MAX_SIDE_ROWS
    rows = df.astype(str).values.tolist() if shown else []
    title = path.stem.replace("_", " ")
    return SideTable(title, list(df.columns), rows, href, len(df), shown)


# ----------------------------------------------------------------------- statistics


@dataclass
class ArtifactSummary:
    paper: str
    artifact: Artifact
    status: str  # reproduced | partial | not reproduced yet
    missing: list[str]
    cells: int = 0
    cells_total: int = 0
    within1: int | None = None
    within2: int | None = None
    with_se: int = 0
    divergences: dict[str, int] = field(default_factory=dict)
    unlisted: int = 0
    regenerated: str = ""
    wall: str = ""
    wall_seconds: float | None = None
    records: int = 0
    code_versions: list[str] = field(default_factory=list)
    page: str | None = None
    # why cells have no reproduced number: short reason -> number of cells
    gaps: dict[str, int] = field(default_factory=dict)
    # tables whose published spread is a std over splits, not a binomial SE (arbf):
    # the paper's own criterion, cells within one published std, and of how many
    within_std: int | None = None
    with_std: int = 0

    def std_pct(self) -> str:
        if self.within_std is None or not self.with_std:
            return "—"
        return (
            f"{self.within_std} of {self.with_std} "
            f"({100 * self.within_std / self.with_std:.0f}%) within 1 std"
        )

    def pct(self, k: int | None) -> str:
        if k is None or not self.with_se:
            return "—"
        return f"{k} ({100 * k / self.with_se:.0f}%)"

    def divergence_items(self) -> list[tuple[str, int]]:
        """(status, count) of the listed divergences: the README's statuses first,
        then any other status the list uses (shown, not silently dropped)."""
        known = [st for st in DIVERGENCE_STATUSES if self.divergences.get(st)]
        other = sorted(
            st
            for st, k in self.divergences.items()
            if k and st not in DIVERGENCE_STATUSES
        )
        # a row with an empty status is still a listed divergence
        return [(st or "no status", self.divergences[st]) for st in (*known, *other)]


def table_cells(df: pd.DataFrame) -> list[Cell]:
    suffix = is_long_format(df)
    if suffix:
        fn: list[tuple[int, str, str]] = []
        blocks = long_blocks(df, suffix, None, "", {}, fn)
    else:
        b = wide_block(df, "")
        blocks = [b] if b else []
    return [c for b in blocks for _, _, cells, _ in b.rows for c in cells if c]


def last_commit_date(path: Path) -> str:
    """The date of the last commit that touched ``path`` (else its mtime)."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%cs", "--", str(path)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    if out:
        return out
    return (
        datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d")
        + " (file)"
    )


def _paper_methods(paper: str) -> frozenset[str] | None:
    """The methods a paper publishes numbers for; None if its CSV names none."""
    from reports.records import load_published

    try:
        df = load_published(paper)
    except FileNotFoundError:
        return None
    return frozenset(df["method"].astype(str)) if "method" in df.columns else None


def _experiment_methods(experiment: str) -> frozenset[str]:
    """The methods the experiment's own config gives a search grid.

    A run of the artifact that publishes no number of its own still belongs to
    reproducing it: arbf's Fig. 2 curves come from ``arbf_t150``, which
    ``conf/experiment/arbf_table1.yaml`` gives a grid and ``make reproduce-arbf``
    runs as a second sweep of the same experiment. (Keys such as ``default`` name
    no method and match no record.)
    """
    from omegaconf import OmegaConf

    from reports.records import CONF_DIR

    path = CONF_DIR / "experiment" / f"{experiment}.yaml"
    if not path.exists():
        return frozenset()
    grids = OmegaConf.select(OmegaConf.load(path), "search.grids") or {}
    return frozenset(str(k) for k in grids.keys())


def record_stats(
    results: Path,
    experiment: str | Sequence[str] | None,
    paper: str | None = None,
) -> dict[str, Any]:
    """Wall time and code versions of the finished records of ``experiment``.

    Several experiments (an artifact drawn from more than one, kdml's figures):
    their records together, the job time summed and the span from the first
    start to the last finish over all of them.

    Only what reproducing the artifact runs counts: the experiment's own config
    (:func:`reports.records.is_own_run`; a check or variant run with other overrides
    does not), and, when the paper's published CSV names methods, only those and
    the methods the experiment's config gives a grid (:func:`_experiment_methods`:
    arbf's Fig. 2 run of ``arbf_t150``); a method of a user's own, run in the same
    sweep, does not count.
    """
    experiments = [experiment] if isinstance(experiment, str) else experiment or []
    # the newest record per cell, as the reports take it: a cell rerun under a
    # newer code version would otherwise count twice, and stretch the span from
    # the first run's start to the rerun's end. A cell of each experiment: two
    # experiments' runs of one dataset and method are two jobs
    newest: dict[tuple, dict[str, Any]] = {}
    for exp in experiments:
        for rec in _own_records(results, exp, paper):
            cell = (
                exp,
                *(str(rec.get(k)) for k in ("dataset", "method", "kernel", "seed")),
            )
            if cell not in newest or str(rec.get("finished", "")) > str(
                newest[cell].get("finished", "")
            ):
                newest[cell] = rec
    # the cells the experiments' sweeps run, and those of them finished (ok or
    # skip): a store is partial when one is missing, whatever the unit of the
    # table (a wrbf row pools 12 runs; arbf's Fig. 2 runs are not Table 1's cells)
    grid: set[tuple] | None = set()
    for exp in experiments:
        cells = sweep_cells(exp)
        grid = None if cells is None or grid is None else grid | cells
    done = {
        _sweep_cell(rec, keys)
        for (exp, *_), rec in newest.items()
        if rec["status"] in ("ok", "skip") and (keys := _grid_keys(exp)) is not None
    }
    total, n, versions, started, finished = 0.0, 0, Counter(), [], []
    for rec in newest.values():
        n += 1
        # a resumed run's wall time is its last process's; its resumed splits' own
        # compute time is resumed_seconds
        total += float(rec.get("wall_seconds") or 0.0)
        total += float(rec.get("resumed_seconds") or 0.0)
        versions[(rec.get("provenance") or {}).get("code_version", "?")] += 1
        for key, out in (("started", started), ("finished", finished)):
            if rec.get(key):
                out.append(rec[key])
    if not n:
        return {}
    span = None
    if started and finished:
        span = (
            datetime.fromisoformat(max(finished)) - datetime.fromisoformat(min(started))
        ).total_seconds()
    return {
        "records": n,
        # cells, not records: kdml's 20 seeded runs fill one cell of a figure
        "finished_cells": len(
            {
                tuple(str(r.get(k)) for k in ("dataset", "method", "kernel"))
                for r in newest.values()
                if r["status"] == "ok"
            }
        ),
        # None when an experiment has no sweep in its file to count against
        "sweep_cells": None if grid is None else len(grid),
        "sweep_finished": None if grid is None else len(done & grid),
        "job_seconds": total,
        "span_seconds": span,
        "code_versions": [v for v, _ in versions.most_common()],
    }


def _grid_keys(experiment: str) -> tuple[str, ...] | None:
    """The keys that name a cell of ``experiment``'s sweep (its file's
    ``hydra.sweeper.params`` but the neutral ones: ``split_start``, ``seed``)."""
    from reports.records import NEUTRAL_KEYS, sweep_params

    params = sweep_params(experiment)
    if not params:
        return None
    return tuple(k for k in params if k not in NEUTRAL_KEYS)


def sweep_cells(experiment: str) -> set[tuple] | None:
    """Every cell ``kml-run experiment=<experiment>`` runs: the product of the
    values its file sweeps, each cell as ``((key, value), ...)``; None without a
    sweep in its file."""
    from itertools import product

    from reports.records import sweep_params

    keys = _grid_keys(experiment)
    if keys is None:
        return None
    params = sweep_params(experiment)
    return {
        tuple(zip(keys, values)) for values in product(*(params[k] for k in keys))
    }


def _sweep_cell(record: dict[str, Any], keys: Sequence[str]) -> tuple:
    """The cell of :func:`sweep_cells` that ``record`` ran: each key's value from
    the overrides it stores (a sweep gives every job each swept key), else from
    the record's own fields (a value the experiment file sets, not swept)."""
    from reports.records import override_key

    given = {
        override_key(o): o.split("=", 1)[1]
        for o in record.get("overrides") or []
        if "=" in o
    }
    fields = {
        "dataset": record.get("original_dataset") or record.get("dataset"),
        "dataset.noise_donor": record.get("noise_donor"),
        "method": record.get("method"),
        "kernel": record.get("kernel"),
    }
    return tuple((k, str(given.get(k, fields.get(k)))) for k in keys)


def _own_records(
    results: Path, experiment: str, paper: str | None
) -> Iterable[dict[str, Any]]:
    """The finished records of ``experiment`` that :func:`record_stats` counts."""
    from reports.records import experiment_choices, is_own_run, sweep_keys

    if not (results / experiment).exists():
        return
    keys = sweep_keys(experiment)
    choices = experiment_choices(experiment)
    methods = _paper_methods(paper) if paper else None
    if methods is not None:
        methods |= _experiment_methods(experiment)
    for path in (results / experiment).rglob("*.json"):
        if path.name.startswith(".tmp-"):
            continue
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if rec.get("status") not in ("ok", "skip"):
            continue
        if keys is not None and is_own_run(rec, keys, choices) is False:
            continue
        if methods is not None and str(rec.get("method")) not in methods:
            continue
        yield rec


def _fmt_seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def summarize(
    paper: Paper,
    art: Artifact,
    generated: Path,
    results: Path | None,
    known: pd.DataFrame,
) -> ArtifactSummary:
    folder = generated / paper.key
    csv = folder / f"{art.key}.csv"
    figs = [folder / f for f in art.figures]
    missing = []
    if art.make_target and art.make_target not in make_targets():
        missing.append(f"make {art.make_target}")
    if (
        art.experiment
        and not (REPO_ROOT / "conf" / "experiment" / f"{art.experiment}.yaml").exists()
    ):
        missing.append(f"conf/experiment/{art.experiment}.yaml")
    has_table = csv.exists()
    is_table = art.key.startswith("table")
    if is_table and not has_table:
        missing.append(f"reports/generated/{paper.key}/{csv.name}")
    missing += [
        f"reports/generated/{paper.key}/{f.name}" for f in figs if not f.exists()
    ]
    s = ArtifactSummary(paper.key, art, "not reproduced yet", missing)
    if has_table:
        df = read_table(csv)
        cells = table_cells(df)
        if WITHIN_STD_COLUMN in df.columns:
            # of the reproduced cells only, as the table's own summary counts them
            # (a missing cell's flag is False by default, not a miss)
            flagged = [c.within_std for c in cells if c.within_std is not None]
            s.with_std, s.within_std = len(flagged), sum(flagged)
        s.cells_total = sum(c.published is not None for c in cells) or len(cells)
        s.cells = sum(c.reproduced is not None for c in cells)
        s.gaps = dict(
            Counter(
                (c.reason or "no record").split(":")[0]
                for c in cells
                if c.reproduced is None and c.published is not None
            )
        )
        se_cells = [c for c in cells if c.z is not None]
        s.with_se = len(se_cells)
        if se_cells:
            s.within1 = sum(c.band == "se1" for c in se_cells)
            s.within2 = sum(c.band in ("se1", "se2") for c in se_cells)
        # outside 2 SE, or outside one published std where there is no SE
        s.unlisted = sum(c.unlisted for c in cells)
        s.regenerated = last_commit_date(csv)
    elif any(f.exists() for f in figs):
        s.regenerated = last_commit_date(next(f for f in figs if f.exists()))
    present = has_table if is_table else any(f.exists() for f in figs)
    if present:
        # the listed divergences are of the artifact's cells: none to count
        # before its table (or figure) exists
        kd = known[(known.paper == paper.key) & (known.artifact == art.key)]
        s.divergences = dict(Counter(kd.status))
        s.status = (
            "reproduced"
            if (not s.cells_total or s.cells == s.cells_total)
            else "partial"
        )
        s.page = f"{paper.key}/{art.key}.html"
    if results is not None:
        st = record_stats(results, art.experiments(results), paper.key)
        if st:
            s.records = st["records"]
            s.code_versions = st["code_versions"]
            s.wall_seconds = st["span_seconds"]
            n = st["records"]
            # fewer finished cells than the committed table has: the times are a
            # sub-sweep's, not the table's
            partial = (
                f"; a partial store: {st['sweep_finished']} finished of the "
                f"sweep's {st['sweep_cells']} cells"
                if st["sweep_cells"] is not None
                and st["sweep_finished"] < st["sweep_cells"]
                else ""
            )
            s.wall = (
                _fmt_seconds(st["span_seconds"])
                if st["span_seconds"] is not None
                else ""
            ) + (
                f" ({_fmt_seconds(st['job_seconds'])} of jobs, {n} "
                f"record{'' if n == 1 else 's'}{partial})"
            )
    return s


def make_targets() -> set[str]:
    """Targets defined in the Makefile (``name:`` or ``a b:`` at a line start)."""
    path = REPO_ROOT / "Makefile"
    if not path.exists():
        return set()
    out = set()
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_. -]+):(?!=)", line)
        if m:
            out.update(m[1].split())
    return out


def load_known() -> pd.DataFrame:
    if not KNOWN_DIVERGENCES.exists():
        return pd.DataFrame(columns=["paper", "artifact", "status"])
    return pd.read_csv(KNOWN_DIVERGENCES, dtype=str).fillna("")


def published_cells(paper: str) -> dict[str, int]:
    path = PUBLISHED / f"{paper}.csv"
    if not path.exists():
        return {}
    df = pd.read_csv(path)
    return dict(Counter(df.artifact)) if "artifact" in df else {}


# ------------------------------------------------------------------------ rendering


def markdown_renderer():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def render_notes(md_text: str, link_map: dict[str, str]) -> str:
    """The prose of a generated Markdown file: no H1, no tables, no images."""
    md = markdown_renderer()
    tokens = md.parse(md_text)
    keep = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.type in ("table_open", "heading_open") and (
            t.type == "table_open" or t.tag == "h1"
        ):
            close = "table_close" if t.type == "table_open" else "heading_close"
            while tokens[i].type != close:
                i += 1
            i += 1
            continue
        if (
            t.type == "paragraph_open"
            and tokens[i + 1].children
            and all(c.type in ("image", "softbreak") for c in tokens[i + 1].children)
        ):
            i += 3
            continue
        keep.append(t)
        i += 1
    _rewrite_links(keep, link_map)
    html = md.renderer.render(keep, md.options, {})
    # headings of the notes sit under the page's own h2 sections
    return re.sub(r"<(/?)h2>", r"<\1h3>", html)


def render_document(md_text: str, link_map: dict[str, str]) -> str:
    md = markdown_renderer()
    tokens = md.parse(md_text)
    _rewrite_links(tokens, link_map)
    return md.renderer.render(tokens, md.options, {})


def _rewrite_links(tokens: Iterable[Any], link_map: dict[str, str]) -> None:
    for t in tokens:
        for c in t.children or []:
            if c.type in ("link_open", "image"):
                attr = "href" if c.type == "link_open" else "src"
                href = c.attrGet(attr)
                if href and not re.match(r"^[a-z]+:|^#|^/", href):
                    c.attrSet(attr, link_map.get(href, f"files/{href}"))


def provenance_info() -> dict[str, Any]:
    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args],
                cwd=REPO_ROOT,
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    try:
        from runners.provenance import code_version

        cv = code_version()
    except Exception:  # the site builds without the runner's dependencies
        cv = "unknown"
    versions = {}
    for name in SITE_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return {
        "commit": git("rev-parse", "--short=12", "HEAD") or "unknown",
        "commit_date": git("log", "-1", "--format=%cs") or "",
        "dirty": bool(git("status", "--porcelain", "--", "reports", "conf")),
        "code_version": cv,
        "python": sys.version.split()[0],
        "packages": versions,
        "built": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def build_site(
    out: str | os.PathLike = DEFAULT_OUT,
    results: str | os.PathLike | None = None,
    generated: str | os.PathLike = GENERATED,
) -> Path:
    """Write the site to ``out`` (replacing it) and return the index path.

    ``results``: the result store root, read for wall times and code versions when it
    exists; the site builds from the committed files alone without it. The site
    is built in a folder beside ``out`` and renamed into place; a ``--out`` that
    is a file, or a folder holding something other than a site, raises
    :class:`SiteError`.
    """
    out = Path(out).resolve()
    generated = Path(generated)
    results_path = Path(results) if results else None
    if results_path is not None and not results_path.exists():
        results_path = None
    if out.exists() and not out.is_dir():
        raise SiteError(f"--out {out} is a file, not a folder; choose another --out")
    if out.exists() and not (out / "index.html").exists() and any(out.iterdir()):
        raise SiteError(
            f"{out} exists and is not a site built by kml-report site; remove it "
            "or choose another --out"
        )
    # built beside it, then swapped in: a build that fails or is killed leaves the
    # site that was there (and at most a .tmp-site-* folder), never half of one
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".tmp-site-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        tmp.mkdir()
        _build_into(tmp, generated, results_path)
        if out.exists():
            old = out.parent / f".old-site-{os.getpid()}-{secrets.token_hex(4)}"
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out / "index.html"


class SiteError(ValueError):
    """The site cannot be written where asked; the message names the folder."""


def _build_into(out: Path, generated: Path, results_path: Path | None) -> None:
    """Write every page of the site into the empty folder ``out``."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    prov = provenance_info()
    known = load_known()
    names = method_names()
    shutil.copy(TEMPLATES / "style.css", out / "style.css")

    all_papers = papers(generated)
    index_rows = []
    for paper in all_papers:
        folder = generated / paper.key
        pub_counts = published_cells(paper.key)
        summaries = [
            summarize(paper, a, generated, results_path, known) for a in paper.artifacts
        ]
        pdir = out / paper.key
        if folder.exists():
            shutil.copytree(folder, pdir / "files")
        docs = _document_pages(paper, folder, summaries)
        for s in summaries:
            if s.page:
                _write_artifact_page(
                    env, out, paper, s, folder, names, docs, prov, all_papers
                )
        for name, (src, title) in docs.items():
            link_map = _link_map(paper, folder, summaries, docs)
            html = render_document(src.read_text(), link_map)
            page = env.get_template("document.html").render(
                title=title,
                paper=paper,
                body=html,
                prov=prov,
                root="../",
                source=f"files/{src.name}",
                papers=all_papers,
            )
            (pdir / name).write_text(page)
        index_rows.append((paper, summaries, pub_counts))
    html = env.get_template("index.html").render(
        rows=index_rows,
        prov=prov,
        root="",
        papers=all_papers,
        results=str(results_path) if results_path else None,
        bands=SE_BANDS,
    )
    (out / "index.html").write_text(html)


def _document_pages(
    paper: Paper, folder: Path, summaries: Sequence[ArtifactSummary]
) -> dict[str, tuple[Path, str]]:
    """Markdown files of a paper that are not an artifact's own notes: full pages."""
    if not folder.exists():
        return {}
    own = {f"{s.artifact.key}.md" for s in summaries if s.page}
    docs = {}
    for md in sorted(folder.glob("*.md")):
        if md.name in own:
            continue
        first = md.read_text().splitlines()[:1]
        title = (
            first[0].lstrip("# ").strip()
            if first and first[0].startswith("#")
            else md.stem
        )
        docs[f"{md.stem}.html"] = (md, title)
    return docs


def _link_map(
    paper: Paper,
    folder: Path,
    summaries: Sequence[ArtifactSummary],
    docs: dict[str, tuple[Path, str]],
) -> dict[str, str]:
    link_map = {
        f"{s.artifact.key}.md": f"{s.artifact.key}.html" for s in summaries if s.page
    }
    link_map.update({src.name: name for name, (src, _) in docs.items()})
    return link_map


def _write_artifact_page(
    env,
    out: Path,
    paper: Paper,
    s: ArtifactSummary,
    folder: Path,
    names: dict[str, str],
    docs: dict[str, tuple[Path, str]],
    prov: dict[str, Any],
    all_papers: Sequence[Paper],
) -> None:
    art = s.artifact
    csv = folder / f"{art.key}.csv"
    footnotes: list[tuple[int, str, str]] = []
    blocks: list[Block] = []
    raw = None
    if csv.exists():
        df = read_table(csv)
        suffix = is_long_format(df)
        scores_path = folder / f"{art.key}_scores.csv"
        scores = pd.read_csv(scores_path) if scores_path.exists() else None
        if suffix:
            blocks = long_blocks(
                df, suffix, scores, f"files/{csv.name}", names, footnotes
            )
        else:
            b = wide_block(df, f"files/{csv.name}")
            if b:
                blocks = [b]
            else:
                raw = side_table(csv, f"files/{csv.name}")
    used = {f"{art.key}_scores.csv"} if any(b.score_rows for b in blocks) else set()
    sides = [
        side_table(folder / f, f"files/{f}")
        for f in art.side
        if (folder / f).exists() and f not in used
    ]
    figures = [f"files/{f}" for f in art.figures if (folder / f).exists()]
    pdfs = {
        f"files/{f}": f"files/{Path(f).with_suffix('.pdf').name}"
        for f in art.figures
        if (folder / f).with_suffix(".pdf").exists()
    }
    md = folder / f"{art.key}.md"
    link_map = _link_map(paper, folder, [s], docs)
    notes = render_notes(md.read_text(), link_map) if md.exists() else ""
    known = load_known()
    kd = known[(known.paper == paper.key) & (known.artifact == art.key)]
    other = (
        [
            f.name
            for f in sorted(folder.iterdir())
            if f.suffix in (".csv", ".tex", ".pdf", ".md")
        ]
        if folder.exists()
        else []
    )
    page = env.get_template("table.html").render(
        paper=paper,
        s=s,
        blocks=blocks,
        raw=raw,
        sides=sides,
        figures=figures,
        pdfs=pdfs,
        notes=notes,
        footnotes=footnotes,
        prov=prov,
        root="../",
        n_listed=len(kd),
        files=other,
        papers=all_papers,
        bands=SE_BANDS,
        docs=docs,
    )
    (out / paper.key / f"{art.key}.html").write_text(page)


# ------------------------------------------------------------------ summary lines


def summary_line(
    paper: str,
    artifact: str,
    seconds: float | None = None,
    generated: Path = GENERATED,
    results: Path | None = None,
) -> str:
    """``mlsvm table1: 102/119 cells, within 2 SE 79 (77%), wall 144 s``.

    With ``results``, an artifact that ``reproduce-all`` ran more than once into
    that store (resumed) adds its seconds over all runs from the run ledger
    (:mod:`runners.run_ledger`): ``wall 3 s this run, 42.0 min over 2 runs``, and
    says how many of them wrote no end line (killed, or still running).
    """
    desc = next((p for p in papers(generated) if p.key == paper), Paper(paper, paper))
    art = next(
        (a for a in desc.artifacts if a.key == artifact), Artifact(artifact, artifact)
    )
    s = summarize(desc, art, generated, None, load_known())
    wall = "" if seconds is None else f", wall {_fmt_seconds(seconds)}"
    ledger = {} if results is None else run_ledger.totals(results)
    past = ledger.get((paper, artifact))
    if wall and past is not None and past.runs > 1:
        # a resumed artifact: this run's seconds are only its last part
        wall += f" this run, {_fmt_seconds(past.seconds)} over {past.runs} runs"
        wall += _killed_note(past.killed)
    if s.status == "not reproduced yet":
        return f"{paper} {artifact}: not reproduced yet{wall}"
    if not s.cells_total:  # kdml's figures: no published number to stand beside
        return f"{paper} {artifact}: {s.status}, no published cell values{wall}"
    cells = f"{s.cells}/{s.cells_total} cells"
    if s.within2 is None and s.with_std:
        return f"{paper} {artifact}: {cells}, {s.std_pct()}{wall}"
    w2 = "no SE in table" if s.within2 is None else s.pct(s.within2)
    return f"{paper} {artifact}: {cells}, within 2 SE {w2}{wall}"


def _killed_note(killed: int) -> str:
    if not killed:
        return ""
    runs = "run" if killed == 1 else "runs"
    return (
        f" ({killed} {runs} killed or still running: counted to the last sign of "
        "life)"
    )


def total_line(seconds: float, results: Path | None = None) -> str:
    """reproduce-all's last line: this run's wall time and, for a resumed store,
    the artifacts' seconds over all runs from the run ledger."""
    line = f"total wall time (site included): {_fmt_seconds(seconds)}"
    ledger = {} if results is None else run_ledger.totals(results)
    if any(t.runs > 1 for t in ledger.values()):
        spent = sum(t.seconds for t in ledger.values())
        runs = max(t.runs for t in ledger.values())
        line += (
            f" this run; the artifacts took {_fmt_seconds(spent)} over the "
            f"{runs} runs into {results}"
        )
        line += _killed_note(sum(t.killed for t in ledger.values()))
    return line


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.site summary PAPER ARTIFACT [SECONDS]`` and
    ``python -m reports.site total SECONDS`` (reproduce-all)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) in (3, 4) and args[0] == "summary":
        seconds = float(args[3]) if len(args) == 4 else None
        results = run_ledger.results_root()
        print(summary_line(args[1], args[2], seconds, results=results))
        return 0
    if len(args) == 2 and args[0] == "total":
        print(total_line(float(args[1]), run_ledger.results_root()))
        return 0
    print(
        "usage: python -m reports.site summary PAPER ARTIFACT [SECONDS] | "
        "total SECONDS; "
        "build the site with `kml-report site`",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
