"""Read result records and published numbers into pandas frames.

Tables and figures are rebuilt from these two sources alone: the records written by
``runners`` and the CSVs in ``reports/published`` (copied from the papers, never typed).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reports.guard import (
    GENERATED_DIR,  # noqa: F401 (writers and tests import it from here)
    ReportError,
    require_store,
)
from runners.store import ResultStore

log = logging.getLogger("kml.reports")

PUBLISHED_DIR = Path(__file__).resolve().parent / "published"


def load_published(name: str) -> pd.DataFrame:
    """One published CSV by file stem (``mlsvm``, ``mlsvm_scores``, ``wrbf``, ...)."""
    path = PUBLISHED_DIR / f"{name}.csv"
    if not path.exists():
        raise FileNotFoundError(
            f"No published numbers at {path}; copy {name}.csv from ../shared/published."
        )
    return pd.read_csv(path)


def _plain(obj: Any) -> Any:
    """JSON round trip: the form a config takes once stored in a record."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


@functools.cache
def _experiment_config(
    experiment: str,
    dataset: str,
    donor: str | None,
    method: str,
    kernel: str,
    seed: int,
) -> str | None:
    """The experiment's own key config for one cell (code version aside), as JSON."""
    from runners.run import compose_config, key_config

    overrides = [
        f"experiment={experiment}",
        f"dataset={dataset}",
        f"method={method}",
        f"kernel={kernel}",
        f"seed={seed}",
    ]
    if donor:
        overrides.append(f"dataset.noise_donor={donor}")
    try:
        kc = key_config(compose_config(overrides))
    except Exception as exc:  # a config renamed since the record was written
        log.warning("cannot compose %s (%s); its records are kept", overrides, exc)
        return None
    kc.pop("code_version", None)
    return json.dumps(_plain(kc), sort_keys=True)


def is_experiment_config(record: dict[str, Any]) -> bool:
    """Whether a record ran the experiment's own config, by recomposing that config.

    The fallback of :func:`is_own_run` for records written before the runner stored
    ``overrides``: slow (a Hydra compose per cell) and tied to today's config files,
    so editing a config reclassifies such records. Records whose cell cannot be
    composed any more are kept.
    """
    expected = _experiment_config(
        record["experiment"],
        record.get("original_dataset") or record["dataset"],
        record.get("noise_donor"),
        record["method"],
        record["kernel"],
        int(record["seed"]),
    )
    if expected is None:
        return True
    got = dict(record["config"])
    got.pop("code_version", None)
    return json.dumps(_plain(got), sort_keys=True) == expected


CONF_DIR = Path(__file__).resolve().parent.parent / "conf"

# Override keys that never change a run's numbers: which experiment folder, the
# repetition id (its own column of the table), rerun and error policy, where records
# and logs go, BLAS threads.
NEUTRAL_KEYS = frozenset(
    {
        "experiment",
        "seed",
        "force",
        "raise_errors",
        "blas_threads",
        "split_start",
        "paths.results",
        "paths.outputs",
    }
)


@functools.cache
def sweep_params(experiment: str) -> dict[str, list[str]] | None:
    """What the experiment file sweeps (``hydra.sweeper.params``), key -> values.

    Read once per process with OmegaConf (no Hydra compose); ``None`` when
    ``conf/experiment/<experiment>.yaml`` does not exist.
    """
    from omegaconf import OmegaConf

    path = CONF_DIR / "experiment" / f"{experiment}.yaml"
    if not path.exists():
        return None
    params = OmegaConf.select(OmegaConf.load(path), "hydra.sweeper.params") or {}
    return {
        str(k): [v.strip() for v in str(params[k]).split(",")] for k in params.keys()
    }


def sweep_keys(experiment: str) -> frozenset[str] | None:
    """The keys the experiment file sweeps; ``None`` without an experiment file."""
    params = sweep_params(experiment)
    return None if params is None else frozenset(params)


@functools.cache
def experiment_choices(experiment: str) -> frozenset[str]:
    """``group=choice`` for each config group the experiment file itself selects.

    From its defaults list (``- override /kernel: mkl20`` gives ``kernel=mkl20``):
    an override that repeats the experiment's own choice changes nothing.
    """
    from omegaconf import OmegaConf

    path = CONF_DIR / "experiment" / f"{experiment}.yaml"
    if not path.exists():
        return frozenset()
    out = set()
    for entry in OmegaConf.load(path).get("defaults") or []:
        if OmegaConf.is_dict(entry) or isinstance(entry, dict):
            for k, v in dict(entry).items():
                group = str(k).removeprefix("override").strip().lstrip("/")
                out.add(f"{group}={v}")
    return frozenset(out)


def override_key(override: str) -> str:
    """``kernel.normalize`` of ``kernel.normalize=null``; ``+``/``++``/``~`` dropped."""
    return override.split("=", 1)[0].lstrip("~+")


def is_own_run(
    record: dict[str, Any],
    keys: frozenset[str],
    choices: frozenset[str] = frozenset(),
) -> bool | None:
    """Whether ``record`` ran its experiment's own config, from its stored overrides.

    Own iff every override key is a key the experiment sweeps (``keys``) or one of
    :data:`NEUTRAL_KEYS`, or the override repeats a group choice the experiment file
    makes itself (``choices``, see :func:`experiment_choices`); anything else
    (``kernel.normalize=null``, ``protocol=smoke``) makes a variant. ``None`` for a
    record without ``overrides`` (written before the runner stored them).
    """
    overrides = record.get("overrides")
    if overrides is None:
        return None
    return all(_is_own_override(o, keys, choices) for o in overrides)


def _is_own_override(
    override: str, keys: frozenset[str], choices: frozenset[str]
) -> bool:
    """Whether one override keeps a run the experiment's own (:func:`is_own_run`)."""
    k = override_key(override)
    return (
        k in keys or k in NEUTRAL_KEYS or k.startswith("hydra.") or override in choices
    )


def variant_of(record: dict[str, Any]) -> list[str]:
    """The overrides that make ``record`` a variant run, ``[]`` for an own run.

    What a table built with ``kml-report --variants`` names beside a cell filled
    by a variant (``["protocol=smoke"]``), in the order the run was given them;
    the sweep's own keys and :data:`NEUTRAL_KEYS` are left out, as
    :func:`is_own_run` leaves them. A record without stored overrides that
    :func:`is_experiment_config` finds to differ from the experiment's config is
    named by that (one string), since what differs is not stored. An experiment
    without a file has no config of its own: ``[]``. Cached in the record
    (``_variant``; :func:`load_records` sets it for the own runs it has judged).

    Parameters
    ----------
    record : dict
        A record as :func:`load_records` returns it.

    Returns
    -------
    list of str
    """
    if "_variant" not in record:
        experiment = record["experiment"]
        keys = sweep_keys(experiment)
        overrides = record.get("overrides")
        if keys is None:
            found: list[str] = []
        elif overrides is None:
            found = (
                []
                if is_experiment_config(record)
                else ["a config other than the experiment's (no overrides stored)"]
            )
        else:
            choices = experiment_choices(experiment)
            found = [o for o in overrides if not _is_own_override(o, keys, choices)]
        record["_variant"] = found
    return list(record["_variant"])


# What a user does to build a table from variant runs: the command line's flags
# (kml-report is how reports are built; --out because output_dir refuses variants
# into reports/generated).
USE_VARIANTS = "pass --variants --out DIR to kml-report to use them"

RECORD_FIELDS = ("key", "experiment", "dataset", "method", "kernel", "seed", "status")


def _records(n: int, noun: str = "record") -> str:
    """``"1 record"``, ``"3 records"``: a count with its noun, for messages."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def load_records(
    results_root: str | Path,
    experiment: str,
    *,
    code_version: str | None = None,
    variants: bool = False,
    per_config: bool = False,
) -> list[dict[str, Any]]:
    """The newest record per (dataset, method, kernel, seed) of ``experiment``.

    ``per_config=True``: the newest per config key instead, so runs of one cell
    with different overrides are all kept (the checks of Table I).

    Only records of the experiment's own config count (:func:`is_own_run`, from the
    ``overrides`` each record stores; records without them fall back to
    :func:`is_experiment_config`, which recomposes the config). ``variants=True``
    also admits runs with command-line overrides; a failed run then does not take
    a cell from a run that finished (:func:`_rank`; a warning names the cell). An
    experiment without a file in
    ``conf/experiment`` (``adhoc``, the runs of ``kml-run`` without
    ``experiment=``) has no config of its own: every record is used, with a
    warning. Records of another code version
    are used when nothing newer exists, with a warning, so a report can always be
    rebuilt; ``code_version`` set keeps only matching ones.

    A missing, empty or foreign ``results_root`` raises
    :class:`reports.guard.ReportError` naming the folder (see
    :func:`reports.guard.require_store`); so does a JSON file that is not a record.
    """
    base = require_store(results_root, experiment)
    keys = sweep_keys(experiment)
    store = ResultStore(results_root)
    newest: dict[tuple, dict[str, Any]] = {}
    failed: dict[tuple, dict[str, Any]] = {}  # --variants: each cell's newest error
    skipped: list[str] = []
    recomposed = n_read = unjudged = 0
    for rec in store.records(experiment):
        n_read += 1
        lacking = [f for f in RECORD_FIELDS if f not in rec]
        if lacking or rec["experiment"] != experiment:
            raise ReportError(
                f"{rec.get('_path')} is not a kml-run record of {experiment} "
                + (
                    f"(no {', '.join(lacking)})"
                    if lacking
                    else f"(its experiment is {rec['experiment']!r})"
                )
                + f"; {base} should hold only what kml-run writes. Move it away."
            )
        if (
            code_version is not None
            and rec["config"].get("code_version") != code_version
        ):
            continue
        if not variants and keys is None:
            # nothing to tell variants from: recomposing would fail the same way
            # (Hydra cannot compose experiment=<name> without its file) for records
            # with overrides as for those without
            unjudged += 1
        elif not variants:
            own = is_own_run(rec, keys, experiment_choices(experiment))
            if own is None:
                recomposed += 1
                own = is_experiment_config(rec)
            if not own:
                skipped.append(f"{rec['dataset']}/{rec['label']}")
                continue
            rec["_variant"] = []  # judged own: variant_of need not judge it again
        k = (
            (rec["key"],)
            if per_config
            else (rec["dataset"], rec["method"], rec["kernel"], rec["seed"])
        )
        if k not in newest or _rank(rec, variants) > _rank(newest[k], variants):
            newest[k] = rec
        if variants and rec["status"] == "error":
            if k not in failed or _rank(rec, False) > _rank(failed[k], False):
                failed[k] = rec
    if not n_read:
        n_json = sum(1 for p in base.rglob("*.json") if not p.name.startswith("."))
        raise ReportError(
            f"{base} holds no readable kml-run record: its {n_json} JSON files are "
            "damaged or not records (named in the warnings above). Rerun the sweep, "
            "or pass the --results folder kml-run wrote."
        )
    if unjudged:
        log.warning(
            "%s has no experiment file (conf/experiment/%s.yaml), so no config of "
            "its own: its %d records are all used, none told apart as a variant",
            experiment,
            experiment,
            unjudged,
        )
    if recomposed:
        log.warning(
            "%s: %d records store no overrides (written before the runner kept "
            "them); told apart from variants by recomposing their config, which is "
            "slow and follows today's config files. Rerun them to store overrides.",
            experiment,
            recomposed,
        )
    if skipped and not newest:
        raise ReportError(
            f"no record of {experiment} under {results_root} ran the experiment's own "
            f"config; {_records(len(skipped), 'variant record')} left out (e.g. "
            f"{skipped[0]}). Run the experiment's own config (kml-run "
            f"experiment={experiment}), or {USE_VARIANTS}."
        )
    if skipped:
        log.warning(
            "%s: left out %s whose config is not the experiment's current one "
            "(command-line overrides, or a config changed since; e.g. %s); run "
            "variants under another experiment name, or %s",
            experiment,
            _records(len(skipped)),
            ", ".join(sorted(set(skipped))[:3]),
            USE_VARIANTS,
        )
    hidden = sorted(
        f"{rec['dataset']}/{rec['label']}"
        + (f" ({', '.join(variant_of(rec))})" if variant_of(rec) else "")
        for k, rec in failed.items()
        if newest[k] is not rec and _rank(rec, False) > _rank(newest[k], False)
    )
    if hidden:
        log.warning(
            "%s: the newest run of %s failed; %s the newest finished run instead: "
            "%s",
            experiment,
            _records(len(hidden), "cell"),
            "each shows" if len(hidden) > 1 else "it shows",
            "; ".join(hidden),
        )
    versions = {r["config"].get("code_version") for r in newest.values()}
    if len(versions) > 1:
        log.warning(
            "records of %s come from %d code versions: %s",
            experiment,
            len(versions),
            sorted(v for v in versions if v),
        )
    return list(newest.values())


def _rank(record: dict[str, Any], variants: bool) -> tuple:
    """Which record of a cell :func:`load_records` keeps: the newest (``finished``).

    With ``variants`` (``kml-report --variants``: runs of several configs compete
    for a cell) a run that finished (ok or skip) comes before one that failed,
    whatever their times: a variant tried after the experiment's own run and
    failing (``protocol.outer_folds=150`` on sonar) has no number to show, and
    must not take the own run's number out of the table. The experiment's own
    runs alone are one config, whose newest failure (a newer code version's) is
    what the table shows.
    """
    finished = str(record.get("finished", ""))
    if variants:
        return (record.get("status") != "error", finished)
    return (finished,)


def records_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per record with the summary columns (no per-instance arrays)."""
    rows = []
    for r in records:
        folds = r.get("folds") or []
        rows.append(
            {
                "dataset": r["dataset"],
                "method": r["method"],
                "method_class": r.get("method_class"),
                "kernel": r["kernel"],
                "seed": r["seed"],
                "status": r["status"],
                "reason": r.get("reason", ""),
                "n_samples": r.get("n_samples"),
                "n_test_total": r.get("n_test_total"),
                "n_errors": r.get("n_errors"),
                "error_pct": r.get("error_pct"),
                "converged": r.get("converged"),
                "inner_convergence_warnings": r.get("inner_convergence_warnings", 0),
                "mean_fit_seconds": float(np.mean([f["fit_seconds"] for f in folds]))
                if folds
                else np.nan,
                "mean_search_seconds": float(
                    np.mean([f["search_seconds"] for f in folds])
                )
                if folds
                else np.nan,
                "code_version": r["config"].get("code_version"),
            }
        )
    return pd.DataFrame(rows)


def aligned_predictions(
    records: Iterable[dict[str, Any]],
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """True labels and each method's predictions, ordered by instance index.

    All records must cover the same instances (the same outer folds); McNemar's test
    pairs the predictions instance by instance.
    """
    y_true = None
    index = None
    preds: dict[str, np.ndarray] = {}
    for r in records:
        p = r["predictions"]
        order = np.argsort(p["index"], kind="stable")
        idx = np.asarray(p["index"])[order]
        yt = np.asarray([str(v) for v in p["y_true"]])[order]
        yp = np.asarray([str(v) for v in p["y_pred"]])[order]
        if index is None:
            index, y_true = idx, yt
        elif not np.array_equal(index, idx):
            raise ValueError(
                f"{r['label']} of {r['dataset']!r} was tested on other instances than "
                "the first record; McNemar needs the same outer folds for every method."
            )
        preds[r["method"]] = yp
    if y_true is None:
        raise ValueError("No records to align.")
    return y_true, preds
