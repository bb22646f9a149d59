"""Fast path of ``kml-run`` for a sweep whose every job already has its record.

A cached rerun of a sweep used to spend ~99% of its time composing configs: Hydra's
basic sweeper composes every job once to validate the batch and the launcher once
more to run it (~0.2 s each, 280 composes for the 140 jobs of mlsvm Table I), only
for each job to find its record and return. The job's record path is a function of
what the composition reads: the job's overrides, the config files, the environment
variables they read (``oc.env``), the code (its content hash) and the Hydra and
OmegaConf versions. So each job that finishes (or finds its record) leaves an index
entry keyed by a digest of all of these, pointing at its record
(``<results>/.index/<experiment>/<digest>``, outside the folders reports read). A
rerun whose jobs all have an entry whose record is finished prints the summary and
stops before Hydra starts; anything else (a missing or unfinished record, an edited
config file, an edited method file of one's own, ``force=true``, a flag, an override
of ``paths`` or ``hydra``) takes the normal path, which composes and checks as
before. A method file outside the project's packages is not in the digest (the code
version covers ``datasets/``, ``methods/`` and ``runners/`` only); a record keyed by
one (``method_sources``) is taken only while that file's digest is unchanged. A bad
``KML_JOBS`` stops a cached sweep as it stops the normal path (one line, status 1),
though no worker would be started.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import sys
from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
INDEX_DIR = ".index"
_ENV_RE = re.compile(r"oc\.env:([A-Za-z_][A-Za-z0-9_]*)(?:,([^}]*))?")
# Variables of the sweep's own bookkeeping (progress file, job count, sweep id) and
# of the launchers (worker count, Ray address): never part of a job's record path.
# The parent looks a job up before the sweep sets them and its workers index the
# job after, so a digest that read them would never match.
_SWEEP_ENV = frozenset(
    {"KML_SWEEP_PROGRESS", "KML_SWEEP_SIZE", "KML_SWEEP_ID", "KML_JOBS", "RAY_ADDRESS"}
)
# Launcher configs decide where and how jobs run, not what a job computes or where
# its record goes: the variables only they read are left out for the same reason.
_LAUNCH_DIR = Path("hydra")


@lru_cache(maxsize=1)
def _setting_digest() -> str:
    """Digest of the config files, the env vars they read, code and versions."""
    from runners.provenance import code_version

    h = hashlib.sha256()
    uses: set[tuple[str, str]] = set()  # (variable, default text) as the files read it
    for path in sorted(CONF_DIR.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            rel = path.relative_to(CONF_DIR)
            h.update(str(rel).encode() + b"\0" + data + b"\0")
            if _LAUNCH_DIR not in rel.parents:
                uses.update(_ENV_RE.findall(data.decode("utf-8", "replace")))
    for name, default in sorted(u for u in uses if u[0] not in _SWEEP_ENV):
        # A variable set to its own default resolves as if unset (`make` exports
        # KML_RESULTS=results), so both must index alike; a null default cannot be
        # spelled by a variable's string value, so there "set" stays distinct.
        value = os.environ.get(name)
        default = default.strip()
        if value is None or (value == default and default not in ("", "null")):
            value = f"<default {default}>"
        h.update(f"{name}={value}\0".encode())
    h.update(f"cwd={os.getcwd()}\0code={code_version()}\0".encode())
    for pkg in ("hydra-core", "omegaconf"):
        try:
            h.update(f"{pkg}={metadata.version(pkg)}\0".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{pkg}=none\0".encode())
    return h.hexdigest()


def job_digest(overrides: Sequence[str]) -> str:
    """Index key of one job: its overrides (in order) and the setting digest."""
    h = hashlib.sha256(_setting_digest().encode())
    for o in overrides:
        h.update(b"\0" + str(o).encode())
    return h.hexdigest()[:32]


def _index_path(results: Path, experiment: str, overrides: Sequence[str]) -> Path:
    return results / INDEX_DIR / experiment / job_digest(overrides)


def remember(
    results: str | os.PathLike, experiment: str, overrides: Sequence[str], record: Path
) -> None:
    """Index ``record`` (a finished record) under its job's overrides; best effort."""
    results = Path(results)
    try:
        target = _index_path(results, experiment, overrides)
        rel = os.path.relpath(Path(record).resolve(), results.resolve())
        if target.exists() and target.read_text(encoding="utf-8") == rel:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".tmp-{os.getpid()}-{secrets.token_hex(4)}"
        tmp.write_text(rel, encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        pass  # a read-only store: the next rerun takes the normal path


def _sweep_jobs(experiment: str, argv: Sequence[str]) -> list[list[str]] | None:
    """Job override lists as Hydra's basic sweeper makes them; None if not a sweep."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    path = CONF_DIR / "experiment" / f"{experiment}.yaml"
    if not path.is_file():
        return None
    conf = OmegaConf.load(path)
    if str(OmegaConf.select(conf, "hydra.mode", default="")) != "MULTIRUN":
        return None
    params = OmegaConf.select(conf, "hydra.sweeper.params")
    # unresolved, as runners.callbacks.sweep_jobs reads them
    params = OmegaConf.to_container(params, resolve=False) if params else {}
    lines = [f"{k}={v}" for k, v in params.items()] + list(argv)
    parser = OverridesParser.create()
    batches = BasicSweeper.split_arguments(parser.parse_overrides(lines), None)
    return [list(job) for batch in batches for job in batch]


def _own_sources_changed(
    record: dict[str, Any], digests: dict[str, str | None]
) -> bool:
    """Whether a method file of one's own that ``record`` was keyed by has changed.

    Such a file (a ``_target_`` outside the versioned packages) is in the record's
    key (``method_sources``, :func:`runners.run.key_config`) but not in
    :func:`_setting_digest`, which sees only this project's code: edited, it makes
    its jobs new ones, which the index would still point at the old records.
    ``digests`` caches each target's current digest (``None``: not importable
    now, which also counts as changed). Records of this project's methods have no
    ``method_sources`` and cost nothing here.
    """
    config = record.get("config")
    sources = config.get("method_sources") if isinstance(config, dict) else None
    if not sources:
        return False
    from runners.provenance import outside_sources

    for target, digest in sources.items():
        if target not in digests:
            # as key_config computes it, for this one target
            digests[target] = outside_sources({"_target_": target}).get(target)
        if digests[target] != digest:
            return True
    return False


def cached_sweep(argv: Sequence[str]) -> bool:
    """Report a fully cached sweep and return True; False: run Hydra as usual.

    Raises
    ------
    SystemExit
        Status 1 after one line on stderr when the sweep is cached but
        ``KML_JOBS`` is not a worker count (:func:`runners.launch_local.jobs_problem`),
        as the normal path stops.
    """
    experiments = [a.split("=", 1)[1] for a in argv if a.startswith("experiment=")]
    if len(experiments) != 1 or any(
        a.startswith("-")
        or "=" not in a
        or a.split("=", 1)[0].lstrip("+~").split(".")[0] in ("hydra", "paths", "force")
        for a in argv
    ):
        return False
    experiment = experiments[0]
    try:
        jobs = _sweep_jobs(experiment, argv)
    except Exception:  # noqa: BLE001  (any parse problem: Hydra reports it)
        return False
    if not jobs:
        return False
    from runners.store import FINISHED, read_record

    results = Path(os.environ.get("KML_RESULTS", "results"))
    statuses: dict[str, int] = {}
    digests: dict[str, str | None] = {}  # per target: a file is hashed once
    for job in jobs:
        try:
            entry = _index_path(results, experiment, job)
            record: Any = read_record(results / entry.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if record is None or record.get("status") not in FINISHED:
            return False
        if _own_sources_changed(record, digests):
            return False
        statuses[record["status"]] = statuses.get(record["status"], 0) + 1
    from runners.launch_local import jobs_problem

    problem = jobs_problem()
    if problem:
        # the normal path stops on it before any job (runners.callbacks.ConfigCheck,
        # status 1); here no worker is started, but a typo in KML_JOBS must not go
        # unnoticed until a sweep has work to do. The launcher is the local one,
        # which reads KML_JOBS: a sweep with hydra/launcher=... misses the index.
        sys.stderr.write(f"kml-run: no job was started: {problem}\n")
        raise SystemExit(1)
    from runners.callbacks import summarize

    text, _ = summarize([{"status": "cached"}] * len(jobs))
    print(f"kml-run: every job of {experiment} has its record (index {INDEX_DIR}/)")
    print(text)
    return True
