"""Every command the README shows, run as written (or as close as a test can).

- ``bash`` blocks: each line is a case below; a README command with no case fails
  :func:`test_every_readme_command_has_a_case`.
- ``make`` targets named anywhere in the README: ``make -n`` (a dry run) must work;
  ``make help`` runs for real.
- ``kml-run`` forms run through the console script with private result folders;
  the full sweeps add ``protocol=smoke`` and a one-method subset (their every job's
  config is still composed and checked in-process).
- ``kml-report`` forms run with ``--results``/``--out`` in temporary folders, never
  over the committed tables.
- the ``python`` block of "Methods" runs on sonar.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
BIN = Path(sys.executable).parent


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _bash_commands() -> list[str]:
    lines = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def _run(cmd: list[str], tmp: Path, **env: str) -> subprocess.CompletedProcess:
    full_env = {
        **os.environ,
        "KML_RESULTS": str(tmp / "results"),
        "KML_OUTPUTS": str(tmp / "outputs"),
        "KML_JOBS": "1",
        **env,
    }
    out = subprocess.run(
        cmd, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=900
    )
    out.text = out.stdout + out.stderr
    return out


def _exe(name: str) -> str:
    exe = shutil.which(name, path=str(BIN))
    if exe is None:
        pytest.skip(f"{name} is not installed in this environment")
    return exe


# ----------------------------------------------------------------- bash blocks --
SMOKE_SUBSET = ["protocol=smoke", "method=fda", "kernel=linear"]


def _kml_run_sweep(tmp: Path, args: list[str]) -> None:
    out = _run([_exe("kml-run"), *args, *SMOKE_SUBSET], tmp)
    assert out.returncode == 0, out.text
    assert "0 failed" in out.text


def _case_full_sweep(tmp: Path) -> None:
    from hydra import compose, initialize_config_dir

    from runners.callbacks import check_sweep, sweep_jobs
    from runners.run import CONF_DIR

    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose(
            "config", overrides=["experiment=mlsvm_table1"], return_hydra_config=True
        )
        assert len(sweep_jobs(cfg)) == 7 * 5 * 4  # datasets x methods x kernels
        check_sweep(cfg)  # every job's config composes and passes the checks
    _kml_run_sweep(tmp, ["experiment=mlsvm_table1", "dataset=sonar"])


def _case_sub_sweep(tmp: Path) -> None:
    _kml_run_sweep(tmp, ["experiment=mlsvm_table1", "dataset=sonar,wdbc"])


def _case_single_run(tmp: Path, line: str) -> None:
    args = shlex.split(line)[1:]
    out = _run([_exe("kml-run"), *args, "protocol=smoke"], tmp)
    assert out.returncode == 0, out.text
    assert "1 ok, 0 cached, 0 skipped, 0 failed (1 run)" in out.text
    import json

    (record,) = [json.loads(p.read_text()) for p in tmp.rglob("results/**/*.json")]
    assert record["config"]["grid"] == {"C": [1, 10]}
    assert record["config"]["kernel"]["normalize"] == "cosine"


def _case_report(tmp: Path, line: str) -> None:
    args = shlex.split(line)[1:]
    if "--variants" in args:  # a smoke run is a variant of the experiment
        _kml_run_sweep(tmp, ["experiment=mlsvm_table1", "dataset=sonar"])
    else:  # one cell of the experiment's own config (FDA: no grid, fast)
        out = _run(
            [_exe("kml-run"), "experiment=mlsvm_table1", "dataset=sonar",
             "method=fda", "kernel=linear"],
            tmp,
        )
        assert out.returncode == 0, out.text
    out_dir = tmp / "report"
    out = _run(
        [_exe("kml-report"), *args, "--results", str(tmp / "results"),
         "--out", str(out_dir)],
        tmp,
    )
    assert out.returncode == 0, out.text
    assert any(out_dir.rglob("*.md"))


def _case_make(tmp: Path, line: str) -> None:
    target = line.split()[1]
    out = _run(["make", "-n", target], tmp)
    assert out.returncode == 0, out.text


def _case_datasets(tmp: Path, line: str) -> None:
    out = _run([sys.executable, *shlex.split(line)[1:]], tmp)
    assert out.returncode == 0, out.text
    assert "sonar" in out.text



def _case_cluster(tmp: Path, line: str) -> None:
    """"Running on a cluster": what a test can do without a cluster.

    The real sweeps on a Ray head and submitit's local executor are in tests/cluster;
    here each line is checked as written: the variables it exports are the ones the
    code reads, ``ray`` takes the arguments, and each launcher override composes.
    """
    import importlib.util

    if line.startswith("export "):
        name = line.split()[1].split("=")[0]
        code = "".join(
            f.read_text()
            for d in ("runners", "datasets", "conf")
            for f in (REPO / d).rglob("*")
            if f.suffix in (".py", ".yaml")
        )
        assert name in code, f"{name} is exported in the README but never read"
        return
    args = shlex.split(line)
    if "ray" in Path(args[0]).name:
        out = _run([_exe("ray"), args[1], "--help"], tmp)
        assert out.returncode == 0, out.text
        return
    overrides = [a for a in args if "=" in a and not a.startswith("RAY_ADDRESS")]
    launcher = next(
        a.split("=")[1] for a in overrides if a.startswith("hydra/launcher")
    )
    plugin = {"ray": "hydra_ray_launcher"}.get(launcher, "hydra_submitit_launcher")
    if importlib.util.find_spec(f"hydra_plugins.{plugin}") is None:
        pytest.skip(f"{plugin} is not installed (make setup-cluster)")
    from hydra import compose, initialize_config_dir

    from runners.run import CONF_DIR

    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    assert plugin in cfg.hydra.launcher._target_
    if launcher == "slurm":
        assert cfg.hydra.launcher.partition == "cpu"


def _readme_block(lang: str, marker: str) -> str:
    """The README's ``lang`` block holding ``marker``, dedented (list items indent)."""
    import textwrap

    (block,) = [b for b in _blocks(lang) if marker in b]
    return textwrap.dedent(block)


def _case_compare(tmp: Path, line: str) -> None:
    """"Comparing a method of your own", as written: the README's estimator and
    config files, its kml-run line on one cell, the baseline, then the compare."""
    (tmp / "mine.py").write_text(_readme_block("python", "class Mine"))
    (tmp / "myconf" / "method").mkdir(parents=True)
    (tmp / "myconf" / "method" / "mine.yaml").write_text(
        _readme_block("yaml", "_target_: mine.Mine")
    )
    # the line as a shell would run it from the folder holding mine.py ($PWD)
    run_line = next(c for c in _bash_commands() if "method=mine" in c)
    words = shlex.split(run_line.replace("$PWD", str(tmp)))
    env = dict(w.split("=", 1) for w in words[: words.index(".venv/bin/kml-run")])
    args = words[words.index(".venv/bin/kml-run") + 1 :]
    cell = ["dataset=sonar", "kernel=linear"]
    out = _run([_exe("kml-run"), *args, *cell], tmp, **env)
    assert out.returncode == 0 and "1 ok" in out.text, out.text
    if "compare" in line:
        base = ["experiment=mlsvm_table1", "method=fda", *cell]
        assert _run([_exe("kml-run"), *base], tmp).returncode == 0
        args = shlex.split(line.split("#")[0])[1:]
        out = _run([_exe("kml-report"), *args, "--results", str(tmp / "results")],
                   tmp)  # fmt: skip
        assert out.returncode == 0, out.text
        assert "| sonar | linear | 0 | fda | 208 |" in out.text


CASES = {
    "PYTHONPATH=$PWD .venv/bin/kml-run experiment=mlsvm_table1 method=mine "
    '"hydra.searchpath=[file://$PWD/myconf]"': (_case_compare, ()),
    ".venv/bin/kml-report compare mlsvm_table1 --method mine": (_case_compare, ()),
    "make reproduce-table1": (_case_make, ()),
    "make test": (_case_make, ()),
    "make setup": (_case_make, ()),
    ".venv/bin/python -m datasets": (_case_datasets, ()),
    ".venv/bin/python -m datasets --check": (_case_datasets, (pytest.mark.slow,)),
    ".venv/bin/kml-run experiment=mlsvm_table1": (_case_full_sweep, ()),
    ".venv/bin/kml-run experiment=mlsvm_table1 dataset=sonar,wdbc": (
        _case_sub_sweep,
        (),
    ),
    ".venv/bin/kml-run dataset=wdbc method=svmm kernel=poly2 kernel.normalize=cosine "
    "search.grids.default.C=[1,10]": (_case_single_run, ()),
    ".venv/bin/kml-report mlsvm_table1": (_case_report, ()),
    **{
        line: (_case_cluster, ())
        for line in (
            "export KML_RESULTS=/shared/kml/results",
            "export KML_OUTPUTS=/shared/kml/outputs",
            "export DATA_MIRROR=/shared/datasets",
            ".venv/bin/ray start --head --port=6379 --num-cpus=8",
            ".venv/bin/ray start --address=HEAD_HOST:6379 --num-cpus=8",
            "RAY_ADDRESS=HEAD_HOST:6379 .venv/bin/kml-run experiment=mlsvm_table1 "
            "hydra/launcher=ray",
            ".venv/bin/ray stop",
            ".venv/bin/kml-run experiment=mlsvm_table1 hydra/launcher=slurm "
            "hydra.launcher.partition=cpu",
            ".venv/bin/kml-run experiment=mlsvm_table1 hydra/launcher=submitit_local",
        )
    },
}


def test_every_readme_command_has_a_case():
    commands = _bash_commands()
    assert commands, "no bash block found in README.md"
    missing = [c for c in commands if c not in CASES]
    assert not missing, f"README commands without a test case: {missing}"


@pytest.mark.parametrize(
    "line",
    [pytest.param(c, marks=marks, id=c[:60]) for c, (_, marks) in CASES.items()],
)
def test_readme_bash_command(line, tmp_path):
    if line not in _bash_commands():
        pytest.skip("no longer in the README")
    func = CASES[line][0]
    if func in (_case_full_sweep, _case_sub_sweep):
        func(tmp_path)
    else:
        func(tmp_path, line)


# ------------------------------------------------------------ inline commands --
MAKE_TARGETS = sorted(set(re.findall(r"`make ([a-z0-9][a-z0-9-]*)", README)))


def test_readme_names_make_targets():
    assert {"reproduce-table1", "test", "help"} <= set(MAKE_TARGETS)


@pytest.mark.parametrize("target", MAKE_TARGETS)
def test_readme_make_target_dry_run(target, tmp_path):
    out = _run(["make", "-n", target], tmp_path)
    assert out.returncode == 0, out.text


def test_make_help_runs(tmp_path):
    out = _run(["make", "help"], tmp_path)
    assert out.returncode == 0, out.text
    assert "make reproduce-table1" in out.text


def test_make_help_lists_every_reproduce_target(tmp_path):
    # a rule may have aliases ("reproduce-wrbf reproduce-wrbf-table1: setup"):
    # help must name one of them
    makefile = (REPO / "Makefile").read_text()
    rules = re.findall(r"^((?:reproduce-[a-z0-9-]+ ?)+):", makefile, flags=re.M)
    assert len(rules) >= 7
    help_text = _run(["make", "help"], tmp_path).stdout
    for names in rules:
        assert any(f"make {n} " in help_text for n in names.split()), names


def test_make_help_lists_every_target(tmp_path):
    """`make help` names every target a user can type (one name of a rule with
    aliases), not only the reproduce ones: `make lock` and `make
    report-mlsvm-table1` were missing."""
    makefile = (REPO / "Makefile").read_text()
    rules = re.findall(r"^([a-z][a-z0-9 -]*):", makefile, flags=re.M)
    assert len(rules) >= 15
    help_text = _run(["make", "help"], tmp_path).stdout
    missing = [
        names
        for names in rules
        if names != "help"
        and not any(f"make {n} " in help_text for n in names.split())
    ]
    assert missing == []


def test_kml_run_help_is_kml_runs(tmp_path):
    """`kml-run --help` called itself "run" (the module's name) and listed the
    schemas base_dataset, base_kernel and base_protocol among the choices of
    their groups, which kml-run rejects ("no such dataset"); it now names
    kml-run, shows the README's usage forms and says what the base_* are."""
    out = _run([_exe("kml-run"), "--help"], tmp_path)
    assert out.returncode == 0, out.text
    assert "run is powered by Hydra" not in out.stdout
    assert out.stdout.startswith("kml-run: one run")
    # a comma list sweeps in an experiment's multirun or with -m, not alone
    assert "-m with comma lists" in out.stdout
    for form in ("kml-run experiment=mlsvm_table1 dataset=sonar,wdbc",
                 "kml-run dataset=wdbc method=svmm kernel=poly2"):
        assert form in out.stdout and form in README
    listed = set(re.findall(r"\bbase_[a-z]+", out.stdout.split("== Config ==")[0]))
    assert listed == {"base_dataset", "base_kernel", "base_protocol"}
    assert "base_dataset, base_kernel and base_protocol above are the schemas" in (
        out.stdout
    )


def test_readme_names_the_make_targets_that_skip_setup():
    """"Every make target but `help` and `clean-results` runs setup first": the
    README said every target, and those two do not (nor need to)."""
    makefile = (REPO / "Makefile").read_text()
    m = re.search(r"Every `make` target but ((?:`[a-z-]+`(?:,| and)? ?)+)runs `setup`",
                  " ".join(README.split()))
    assert m, "the README's sentence on setup changed"
    named = set(re.findall(r"`([a-z-]+)`", m.group(1)))
    no_setup = {
        name
        for names, prereqs in re.findall(r"^([a-z][a-z0-9 -]*):(.*)$", makefile, re.M)
        if not re.search(r"\b(setup|\$\(STAMP\)|\$\(CLUSTER_STAMP\))", prereqs)
        and names.strip() not in ("setup", "setup-cluster")
        for name in names.split()
    }
    assert named == no_setup


def test_clean_results_deletes_a_folder_with_a_space_as_one(tmp_path):
    """`rm -rf $(RESULTS)` split "my results" into my and results: make
    clean-results RESULTS="/x/my results" deleted /x/my and ./results, the
    default result store. Checked with make -n: the real run would delete."""
    results, outputs = tmp_path / "my results", tmp_path / "my outputs"
    # --no-print-directory: under `make test` (CI) this make is nested and would
    # print its "Entering directory" lines among the commands
    out = _run(["make", "--no-print-directory", "-n", "clean-results",
                f"RESULTS={results}"], tmp_path, KML_OUTPUTS=str(outputs))
    assert out.returncode == 0, out.text
    assert shlex.split(out.stdout.strip()) == ["rm", "-rf", str(results), str(outputs)]


def test_make_help_says_which_targets_reproduce_all_runs(tmp_path):
    """Help said "every artifact above", and check-table1, listed above, is not
    among the targets reproduce-all runs (REPRODUCE_ALL in the Makefile)."""
    makefile = (REPO / "Makefile").read_text()
    block = re.search(r"^REPRODUCE_ALL :=(.*?)\n\n", makefile, re.S | re.M).group(1)
    run = set(re.findall(r"[a-z]+:[a-z0-9]+:([a-z0-9-]+)", block))
    help_text = _run(["make", "help"], tmp_path).stdout
    line = next(li for li in help_text.splitlines() if "make reproduce-all " in li)
    listed = re.findall(r"make (reproduce-[a-z0-9-]+|check-table1) ", help_text)
    # a target listed above that reproduce-all does not run is named as such
    not_run = [t for t in listed if t != "reproduce-all" and t not in run]
    assert not_run == ["check-table1"]
    assert all(t in line for t in not_run), line


def test_check_table1_fails_when_its_sweeps_cannot_be_listed(tmp_path):
    """`reports.mlsvm_checks --sweeps | while read ...` took the loop's status:
    a listing that failed gave the loop no line, the report ran over whatever
    was there and make ended with status 0 ("check-table1 wall time: 0 s").
    Run with a stand-in python (BIN=...) whose listing fails."""
    fake = tmp_path / "bin"
    fake.mkdir()
    python = fake / "python"
    python.write_text(
        "#!/bin/bash\n"
        'case "$*" in\n'
        '  *"reports.mlsvm_checks --sweeps"*) echo "listing failed" >&2; exit 3;;\n'
        '  *"-m reports mlsvm_table1_checks"*) echo REPORT-RAN;;\n'
        "esac\n"
    )
    python.chmod(0o755)
    stamp = tmp_path / "installed"  # newer than pyproject.toml: setup does nothing
    stamp.touch()
    out = _run(["make", "--no-print-directory", "check-table1", f"BIN={fake}",
                f"STAMP={stamp}"], tmp_path)
    assert out.returncode != 0, out.text
    assert "REPORT-RAN" not in out.text and "wall time" not in out.text


def test_readme_report_variants_form(tmp_path):
    # "kml-report <experiment> --variants"
    assert "kml-report <experiment> --variants" in README
    _case_report(tmp_path, "kml-report mlsvm_table1 --variants")


# ---------------------------------------------------------------- python block --
def test_readme_python_block_runs():
    import numpy as np

    import datasets

    block = _readme_block("python", "SVMm")
    ds = datasets.load("sonar")
    X = datasets.preprocess(np.asarray(ds.X, dtype=float), "standardize")
    y = np.asarray(ds.y)
    namespace = {"X": X, "y": y, "K_train": X @ X.T}
    exec(compile(block, "README.md", "exec"), namespace)
    clf = namespace["clf"]  # the last one: precomputed, K_test is (n_test, n_train)
    assert clf.predict(X[:5] @ X.T).shape == (5,)


def test_readme_own_estimator_declares_the_pairwise_tag():
    from sklearn.utils import get_tags

    namespace: dict = {}
    exec(compile(_readme_block("python", "class Mine"), "README.md", "exec"), namespace)
    mine = namespace["Mine"]
    assert get_tags(mine()).input_tags.pairwise
    assert not get_tags(mine(kernel="linear")).input_tags.pairwise
