"""The checks behind the reviewed divergences of mlsvm Table I.

``make check-table1`` runs the experiment ``conf/experiment/mlsvm_table1_checks.yaml``
through the runner (one ``kml-run`` sweep per entry of its ``checks`` list, see
:func:`sweep_commands`), then ``kml-report mlsvm_table1_checks`` turns the records
under ``--results`` into ``reports/generated/mlsvm/table1_checks.{md,csv}``; every
number a reason in ``reports/known_divergences.csv`` relies on is one of its rows:

- ``alt``: a Table I cell rerun with one alternative protocol choice (e.g. FDA without
  regularization, SVM-FDA on the unnormalized features): the run's error.
- ``reach``: the outer-CV error of the C-SVM at each fixed C of the grid on Table I's
  folds (runs with a one-point grid), and the nested-CV error over several fold seeds
  (runs with ``seed=0..19``): the range a C-SVM on this kernel reaches under the
  stated protocol.
- ``band``: runs of the check estimator :class:`runners.checks.BandCheck` with
  ``protocol.kind=nested_training_sets``: on every training set that Table I's nested
  CV fits (each outer training part and each inner one) and every C of the grid and
  of the grid halved, whether the C-SVM optimum already lies inside SVM_m's band,
  :math:`y_i f(x_i) \\le 1 + \\varepsilon`. If it does, it is SVM_m's optimum too
  (mlsvm Eq. 14): SVM_m's cost is the SVM's plus :math:`C_2\\sum_i\\eta_i \\ge 0`,
  so no point costs SVM_m less than the SVM optimum, which SVM_m attains with
  :math:`\\eta = 0`. Both methods then predict alike with any exact solver, unless
  the intercept is not unique (no free multiplier), which the check counts. It also
  fits SVM_m and reports its largest decision-value difference from the SVM on the
  training points, against :data:`DIFF_TOL` only: both solvers stop at a KKT
  violation of 1e-4, so the exact difference moves with floating-point rounding
  (BLAS threads, summation order) and is not a reproducible number.

Nothing here is compared with, or tuned to, a published value.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from reports.render import write_csv, write_text

log = logging.getLogger(__name__)

EXPERIMENT = "mlsvm_table1_checks"
#: The band rows state the SVM / SVM_m decision difference against this bound only.
DIFF_TOL = 1e-3
CELL_KEYS = ("dataset", "method", "kernel", "seed")


@dataclass(frozen=True)
class CheckJob:
    """One run of a check sweep: its cell and the overrides Hydra gives the job."""

    check: str
    what: str
    extra: str  # the sweep's overrides after the cell keys, as written (row text)
    overrides: tuple[str, ...]  # as Hydra's basic sweeper formats them per job
    cell: dict[str, str]


def check_specs() -> list[dict[str, str]]:
    """The ``checks`` list of the experiment file (check, what, sweep), in order."""
    from reports.records import CONF_DIR

    path = CONF_DIR / "experiment" / f"{EXPERIMENT}.yaml"
    cfg = OmegaConf.load(path)
    return [dict(c) for c in OmegaConf.to_container(cfg.checks)]


def sweep_commands() -> list[str]:
    """The kml-run arguments of each check sweep (``make check-table1`` runs them)."""
    return [f"experiment={EXPERIMENT} {c['sweep']}" for c in check_specs()]


def check_jobs() -> list[CheckJob]:
    """Every run of every check sweep, expanded as Hydra's basic sweeper does."""
    import itertools

    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    jobs = []
    for spec in check_specs():
        tokens = spec["sweep"].split()
        choices = []
        for o in parser.parse_overrides(tokens):
            key = o.get_key_element()
            if o.is_sweep_override():
                choices.append([f"{key}={v}" for v in o.sweep_string_iterator()])
            else:
                choices.append([f"{key}={o.get_value_element_as_str()}"])
        extra = " ".join(
            t for t in tokens if t.split("=", 1)[0].lstrip("+~") not in CELL_KEYS
        )
        for combo in itertools.product(*choices):
            cell = {"seed": "0"}
            for o in combo:
                k, v = o.split("=", 1)
                if k in CELL_KEYS:
                    cell[k] = v
            jobs.append(CheckJob(spec["check"], spec["what"], extra, combo, cell))
    return jobs


@functools.cache
def _job_config(overrides: tuple[str, ...]) -> str:
    """The key config a job's record must hold (code version aside), as JSON."""
    import json

    from reports.records import _plain
    from runners.run import compose_config, key_config

    kc = key_config(compose_config([f"experiment={EXPERIMENT}", *overrides]))
    kc.pop("code_version", None)
    return json.dumps(_plain(kc), sort_keys=True)


def match_records(
    jobs: Sequence[CheckJob], records: Sequence[dict[str, Any]]
) -> list[dict[str, Any] | None]:
    """The newest finished record of each job (``None`` when it has not run).

    A record with ``overrides`` matches a job whose overrides are the same (neutral
    keys such as ``experiment`` aside); an older record without them is matched by
    recomposing the job's config (slow: one Hydra compose per job).
    """
    import json

    from reports.records import NEUTRAL_KEYS, _plain, override_key

    def meaningful(overrides) -> frozenset[str]:
        return frozenset(o for o in overrides if override_key(o) not in NEUTRAL_KEYS)

    by_cell: dict[tuple, list[dict[str, Any]]] = {}
    for r in records:
        cell = (r["original_dataset"], r["method"], r["kernel"], str(r["seed"]))
        by_cell.setdefault(cell, []).append(r)
    out = []
    for job in jobs:
        c = job.cell
        found = None
        for r in by_cell.get((c["dataset"], c["method"], c["kernel"], c["seed"]), []):
            if "overrides" in r:
                same = meaningful(r["overrides"]) == meaningful(job.overrides)
            else:
                got = dict(r["config"])
                got.pop("code_version", None)
                want = _job_config(job.overrides)
                same = json.dumps(_plain(got), sort_keys=True) == want
            if same and (found is None or r.get("finished", "") > found["finished"]):
                found = r
        out.append(found)
    return out


def _band_row(job: CheckJob, rec: dict[str, Any]) -> dict[str, Any]:
    """The row of a BandCheck run: its measures over every (training set, C) fit."""
    checks = [f["solver"]["check"] for f in rec["folds"]]
    epsilon = float(rec["config"]["method"]["epsilon"])
    method = "svmm" if epsilon > 0 else "eps_svm"
    max_margin = max(c["max_margin"] for c in checks)
    n_zero_alpha = sum(c["n_zero_alpha"] for c in checks)
    n_no_free = sum(not c["free_multiplier"] for c in checks)
    max_diff = max(c["max_decision_diff"] for c in checks)
    holds = n_zero_alpha == 0 if epsilon == 0 else max_margin <= 1.0 + epsilon
    diff = (
        f"< {DIFF_TOL:.0e}"
        if max_diff < DIFF_TOL
        else f"{max_diff:.2e}, NOT below {DIFF_TOL:.0e}"
    )
    return {
        "check": "band",
        "dataset": rec["dataset"],
        "kernel": job.cell["kernel"],
        "method": method,
        "what": (
            f"max_i y_i f_SVM(x_i) over {len(checks)} (training set, C) fits vs 1 + eps"
        ),
        "value": round(max_margin, 6),
        "bound": 1.0 + epsilon,
        "holds": bool(holds),
        "detail": (
            f"points with alpha_i = 0: {n_zero_alpha}; fits without a free "
            f"multiplier: {n_no_free}; max |f_SVM - f_{method}| on training points: "
            f"{diff} (solver tolerance)"
        ),
    }


def _alt_row(job: CheckJob, rec: dict[str, Any]) -> dict[str, Any]:
    return {
        "check": "alt",
        "dataset": rec["dataset"],
        "kernel": job.cell["kernel"],
        "method": job.cell["method"],
        "what": f"nested-CV error (%) with {job.what} ({job.extra})",
        "value": round(rec["error_pct"], 2),
        "bound": np.nan,
        "holds": None,
        "detail": "",
    }


def _reach_row(what: str, jobs, recs) -> dict[str, Any]:
    c = jobs[0].cell
    errors = [r["error_pct"] for r in recs]
    if what == "fixed_c":
        cs = [r["config"]["grid"]["C"][0] for r in recs]
        text = "outer-CV error (%) at a fixed C, Table I's folds, min..max over C"
        detail = ", ".join(f"C={C}: {e:.2f}" for C, e in zip(cs, errors))
    else:
        seeds = [int(r["seed"]) for r in recs]
        text = (
            f"nested-CV error (%) over fold seeds {min(seeds)}..{max(seeds)}, min..max"
        )
        detail = f"mean {np.mean(errors):.2f}, sd {np.std(errors, ddof=1):.2f}"
    return {
        "check": "reach",
        "dataset": recs[0]["dataset"],
        "kernel": c["kernel"],
        "method": c["method"],
        "what": text,
        "value": round(min(errors), 2),
        "bound": round(max(errors), 2),
        "holds": None,
        "detail": detail,
    }


def rows_from_records(
    records: Sequence[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """The band, alt and reach rows, in the experiment file's order, and the missing
    runs."""
    jobs = check_jobs()
    found = match_records(jobs, records)
    missing = [
        f"{j.check} {j.cell['dataset']}/{j.cell['method']}/{j.cell['kernel']} "
        f"{' '.join(j.overrides)}"
        for j, r in zip(jobs, found)
        if r is None or r["status"] != "ok"
    ]
    rows: list[dict[str, Any]] = []
    reach: dict[str, list] = {}
    for job, rec in zip(jobs, found):
        if rec is None or rec["status"] != "ok":
            continue
        if job.check == "band":
            rows.append(_band_row(job, rec))
        elif job.check == "alt":
            rows.append(_alt_row(job, rec))
        else:
            reach.setdefault(job.what, []).append((job, rec))
    for what, pairs in reach.items():
        rows.append(_reach_row(what, [j for j, _ in pairs], [r for _, r in pairs]))
    return rows, missing


def _markdown(df: pd.DataFrame, missing: list[str] = ()) -> str:
    """The checks table; after it, the check runs without a finished record
    (a partial store, written with --out), which the table does not show."""
    lines = [
        "# mlsvm Table I: checks behind the reviewed divergences",
        "",
        "Recomputed by `make check-table1` (reports/mlsvm_checks.py); the reasons in "
        "reports/known_divergences.csv cite these rows.",
        "",
        "| check | dataset | kernel | method | what | value | bound | holds | detail |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in df.itertuples():
        bound = "" if pd.isna(r.bound) else f"{r.bound:g}"
        holds = {True: "yes", False: "NO"}.get(r.holds, "")
        lines.append(
            f"| {r.check} | {r.dataset} | {r.kernel} | {r.method} | {r.what} | "
            f"{r.value:g} | {bound} | {holds} | {r.detail} |"
        )
    if missing:
        lines += [
            "",
            f"## Check runs not made ({len(missing)})",
            "",
            "No finished record of these check runs under the result folder (a "
            "partial store?); `make check-table1` runs them. The rows they give are "
            "missing above.",
            "",
            *(f"- {m}" for m in missing),
        ]
    return "\n".join(lines) + "\n"


def _cell_name(cell: tuple) -> str:
    """A row of the checks table by its key (check, dataset, kernel, method, what),
    short: the override an alt row's ``what`` ends with in parentheses
    (``alt sonar/linear/svm (kernel.normalize=null)``), else the ``what`` up to its
    first parenthesis (``reach sonar/linear/svm: outer-CV error``)."""
    check, dataset, kernel, method, what = cell
    override = re.search(r"\(([^()]*)\)$", what)
    return f"{check} {dataset}/{kernel}/{method}" + (
        f" ({override.group(1)})" if override else f": {what.split(' (')[0]}"
    )


def table1_checks(
    results_root: str | Path, out_dir: str | Path | None = None, **_: Any
) -> Path:
    """Write ``table1_checks.md`` and ``.csv`` from the records of the check runs.

    Missing runs are listed; the committed table is never replaced by one with
    fewer rows (:func:`reports.guard.guard_table`; use ``out_dir`` for a partial one).
    """
    from reports.guard import filled_cells, guard_table, output_dir
    from reports.records import load_records

    out = output_dir("mlsvm", out_dir)
    records = load_records(results_root, EXPERIMENT, variants=True, per_config=True)
    rows, missing = rows_from_records(records)
    if missing:
        log.warning(
            "%d check runs have no finished record under %s: %s; run `make "
            "check-table1`",
            len(missing),
            results_root,
            "; ".join(missing[:5]),
        )
    df = pd.DataFrame(rows)
    guard_table(
        out / "table1_checks.csv",
        df,
        filled=filled_cells(("check", "dataset", "kernel", "method", "what")),
        names=_cell_name,
        detail=f"{len(missing)} check runs have no finished record (`make "
        "check-table1` runs them)."
        if missing
        else "",
    )
    write_csv(out / "table1_checks.csv", df)
    md = out / "table1_checks.md"
    write_text(md, _markdown(df, missing))
    return md


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--sweeps"]:
        sys.exit("usage: python -m reports.mlsvm_checks --sweeps")
    # one line of kml-run arguments per check sweep, for `make check-table1`
    print("\n".join(sweep_commands()))
