"""Unknown config-group values are named, with the closest choices, before Hydra."""

from __future__ import annotations

import pytest

from runners.choices import CONF_DIR as REPO_CONF
from runners.choices import options, unknown_choices


@pytest.mark.parametrize(
    "argv,names",
    [
        (["dataset=sonr", "method=svm"],
         ["dataset=sonr: no such dataset (did you mean sonar?"]),
        (["-m", "dataset=sonar,wdbcc", "method=svmx"],
         ["dataset=wdbcc: no such dataset (did you mean wdbc",
          "method=svmx: no such method"]),
        (["experiment=mlsvm_tabel1"], ["did you mean mlsvm_table1"]),
        (["kernel=gaussx"], ["kernel=gaussx: no such kernel (did you mean gauss1?"]),
        (["+protocol=smok"], ["protocol=smok: no such protocol"]),
    ],
)
def test_unknown_choices_are_named(argv, names):
    message = unknown_choices(argv)
    assert message is not None and message.startswith("kml-run: no run was started")
    for name in names:
        assert name in message
    assert "base_" not in message  # schema names are not choices


def test_an_unknown_choice_says_how_to_use_a_config_outside_conf():
    message = unknown_choices(["experiment=mlsvm_table1", "method=mine"])
    assert message is not None and "method=mine: no such method" in message
    hint = '"hydra.searchpath=[file://$PWD/myconf]" for myconf/method/mine.yaml'
    assert hint in message


@pytest.mark.parametrize(
    "argv",
    [
        ["experiment=mlsvm_table1", "dataset=sonar,wdbc", "method=svm", "kernel=poly2"],
        ["experiment=null", "protocol=smoke"],
        ["dataset=glob(*)", "method=${oc.env:X}"],  # left to Hydra
        ["dataset='sonar'", 'method="svm"', "dataset='sonar','wdbc'"],  # quoted
        ["--config-path=/elsewhere", "method=mine"],  # another config dir
        ["-cp", "/elsewhere", "method=mine"],
        ["+method@foo=svmx", "~method", "~dataset=sonar"],  # package, deletes
        ["dataset=sonar,", "dataset=[bad"],  # syntax errors: Hydra's to explain
        ["hydra.searchpath=[file:///elsewhere]", "method=mine"],  # another config dir
        ["method.C=10", "search.grids.default.C=[1,10]"],  # not a group choice
    ],
)
def test_known_or_unjudgeable_choices_pass(argv):
    assert unknown_choices(argv) is None


def test_options_are_the_files_of_the_group():
    assert "sonar" in options("dataset") and "mlsvm_table1" in options("experiment")


@pytest.mark.parametrize(
    "choice,meant",
    [
        # the reports' row labels, typed as dataset names
        ("dataset=heart", "did you mean heart_libsvm"),  # was: "mfeat"
        ("dataset=robot", "did you mean wall_robot?"),
        ("dataset=cardio", "did you mean cardiotocography?"),
        ("dataset=diabetes", "did you mean diabetes_libsvm?"),
        # a paper's name for a dataset, unlike the registry's (kdml's Molecular)
        ("dataset=molecular", "did you mean splice_uci?"),
        ("dataset=Molecular", "did you mean splice_uci?"),
        # typos keep difflib's answer
        ("dataset=sonr", "did you mean sonar?"),
        ("method=lmnn_hh", "did you mean lmnn_h or "),
    ],
)
def test_a_name_contained_in_a_choice_is_offered_first(choice, meant):
    message = unknown_choices(["experiment=arbf_table1", choice])
    assert message is not None and meant in message


@pytest.mark.parametrize("launcher", ["ray", "slurm", "submitit_local"])
def test_a_launcher_without_its_plugin_names_make_setup_cluster(monkeypatch, launcher):
    """Without `make setup-cluster`, hydra/launcher=ray died in a traceback
    ("Unknown plugin class") and slurm in Hydra's config search path dump."""
    import importlib.util

    from runners import choices

    real = importlib.util.find_spec
    absent = set(choices.LAUNCHER_PLUGINS[launcher])

    def find_spec(name, *args):
        return None if name in absent else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    message = unknown_choices(["experiment=mlsvm_table1", f"hydra/launcher={launcher}"])
    assert message is not None
    assert message.startswith(f"kml-run: no run was started: hydra/launcher={launcher}")
    assert choices.LAUNCHER_PLUGINS[launcher][0] in message
    assert "make setup-cluster" in message
    # a printout launches nothing: --help works without the plugin
    assert unknown_choices([f"hydra/launcher={launcher}", "--help"]) is None
    assert unknown_choices([f"hydra/launcher={launcher}", "--cfg", "job"]) is None
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    assert unknown_choices([f"hydra/launcher={launcher}"]) is None


def test_every_cluster_launcher_has_its_plugins_listed():
    from runners.choices import CONF_DIR, LAUNCHER_PLUGINS

    launchers = {p.stem for p in (CONF_DIR / "hydra" / "launcher").glob("*.yaml")}
    assert set(LAUNCHER_PLUGINS) == launchers - {"local"}
    for name, (plugin, _) in LAUNCHER_PLUGINS.items():
        text = (CONF_DIR / "hydra" / "launcher" / f"{name}.yaml").read_text()
        target = "submitit_slurm" if name == "slurm" else f"_target_: {plugin}."
        assert target in text, name


def test_a_file_of_ones_own_hidden_by_conf_is_named(tmp_path):
    """myconf/method/fda.yaml chosen by method=fda was never read: Hydra reads
    conf/ first, so the run was the paper's FDA (or its cached record) under the
    name of the user's own method, and `kml-report compare --method fda`
    compared the paper's FDA with the baselines."""
    (tmp_path / "method").mkdir()
    (tmp_path / "method" / "fda.yaml").write_text("_target_: mine.Mine\n")
    (tmp_path / "method" / "mine.yaml").write_text("_target_: mine.Mine\n")
    # a copy of conf/'s own file (a template) changes nothing: no complaint
    (tmp_path / "method" / "svm.yaml").write_bytes(
        (REPO_CONF / "method" / "svm.yaml").read_bytes()
    )
    path = f"hydra.searchpath=[file://{tmp_path}]"
    message = unknown_choices(["experiment=mlsvm_table1", "method=fda,mine", path])
    assert message is not None and message.startswith("kml-run: no run was started")
    assert f"method=fda: {tmp_path / 'method' / 'fda.yaml'} is hidden by" in message
    assert "conf/method/fda.yaml" in message and "method=fda_mine" in message
    assert "method=mine" not in message.replace("method=fda_mine", "")
    for ok in (["method=mine", path], ["method=svm,mine", path],
               ["method=fda", "hydra.searchpath=[pkg://elsewhere]"]):  # fmt: skip
        assert unknown_choices(ok) is None, ok
