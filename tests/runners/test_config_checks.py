"""Config checks at compose time: a bad value names its key and the allowed values."""

from __future__ import annotations

import re

import pytest
from hydra.errors import ConfigCompositionException
from sklearn.base import BaseEstimator, ClassifierMixin

from runners.config_schema import ConfigError, validate_config
from runners.run import compose_config, key_config


@pytest.mark.parametrize(
    "override,message",
    [
        ("kernel.degree=0", "kernel.degree=0: the polynomial degree must be an int"),
        ("kernel.degree=-2", "kernel.degree=-2"),
        ("kernel.sigma=-1", "kernel.sigma=-1.0: the Gaussian width must be a num"),
        ("kernel.sigma=0", "kernel.sigma=0.0: the Gaussian width must be a number > 0"),
        ("kernel.sigma=inf", "kernel.sigma=inf"),
        ("kernel.normalize=cosin", "kernel.normalize='cosin': use one of null, cosine"),
        ("search.grids.default.C=[]", "search.grids.default.C=[]: must be a non-empty"),
        ("search.grids.default.C=10", "search.grids.default.C=10: must be a non-empty"),
        ("search.grids.svm=3", "search.grids.svm=3: must map a parameter"),
        ("protocol.train_fraction=1", "protocol.train_fraction=1.0: must be a frac"),
        ("protocol.val_fraction=0", "protocol.val_fraction=0.0: must be a fraction"),
        ("protocol.outer_folds=1", "protocol.outer_folds=1: must be an integer >= 2"),
        ("protocol.repetitions=0", "protocol.repetitions=0: must be an integer >= 1"),
        ("protocol.train_size=0", "protocol.train_size=0: must be a number of train"),
        ("protocol.train_size=-5", "protocol.train_size=-5: must be a number of tra"),
        ("protocol.refit_on=train", "protocol.refit_on='train' needs protocol.kind"),
        # the estimator's own parameter constraints, for its config and its grid
        ("search.grids.default.C=[1,-1]",
         "search.grids.default.C=-1: The 'C' parameter of SVM must be a float"),
        ("search.grids.svm.C=[0]", "search.grids.svm.C=0: The 'C' parameter of SVM"),
        ("search.grids.default.CC=[1]",
         "search.grids.default.CC: not a parameter of SVM (its parameters: C,"),
        ("method.C=abc", "method.C: The 'C' parameter of SVM must be a float"),
        ("method.solver=fast", "method.solver: The 'solver' parameter of SVM must"),
        ("++method.gamma=1", "method.gamma: not a parameter of SVM"),
        # the run splits and records by int(seed): 1.5 would be a second seed-1
        # record under another key, 'abc' a traceback in every job
        ("seed=abc", "seed='abc': must be an integer >= 0"),
        ("seed=1.5", "seed=1.5: must be an integer >= 0"),
        ("seed=-1", "seed=-1: must be an integer >= 0"),
    ],
)
def test_bad_values_are_refused_when_composed(override, message):
    with pytest.raises(ConfigError) as err:
        compose_config(["dataset=sonar", "method=svm", override])
    assert message in str(err.value)


def test_a_fractional_train_size_from_a_plain_config_points_to_train_fraction():
    """The schema types train_size as a count (Hydra refuses 0.5 when composing); a
    plain mapping handed to validate_config is checked the same way."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(
        compose_config(["dataset=sonar", "method=svm"]), resolve=True
    )
    cfg["protocol"]["train_size"] = 0.5
    with pytest.raises(ConfigError, match=r"train_size=0\.5: .*protocol\.train_fr"):
        validate_config(cfg)
    cfg["protocol"]["train_size"] = 100
    validate_config(cfg)


def test_a_bad_method_value_is_reported_once_not_blamed_on_the_grid():
    # each grid value is judged on its own parameter: the bad epsilon used to be
    # repeated as "search.grids.default.C=0.1: The 'epsilon' parameter ..."
    with pytest.raises(ConfigError) as err:
        compose_config(["experiment=mlsvm_table1", "method=svmm", "method.epsilon=-3"])
    lines = str(err.value).splitlines()[1:]
    assert len(lines) == 1, lines
    assert lines[0].strip().startswith("method.epsilon: The 'epsilon' parameter")
    # a bad grid value beside it is still named, with its own parameter
    with pytest.raises(ConfigError) as err:
        compose_config(
            [
                "experiment=mlsvm_table1",
                "method=svmm",
                "method.epsilon=-3",
                "search.grids.default.C=[1,-1]",
            ]
        )
    lines = [line.strip() for line in str(err.value).splitlines()[1:]]
    assert len(lines) == 2, lines
    assert lines[1].startswith("search.grids.default.C=-1: The 'C' parameter")


@pytest.mark.parametrize(
    "override,allowed",
    [
        ("protocol.kind=nestd_cv",
         "[nested_cv, repeated_splits, train_val_test, nested_training_sets]"),
        ("protocol.preprocess=standardise", "[none, standardize, minmax_pm1]"),
        ("protocol.preprocess_scope=folds", "[dataset, fold]"),
        ("protocol.refit_on=test", "[train_val, train]"),
        ("kernel.degree=1.5", "could not be converted to Integer"),
    ],
)
def test_enum_and_type_errors_name_key_and_allowed_values(override, allowed):
    with pytest.raises(ConfigCompositionException) as err:
        compose_config([override])
    text = f"{err.value}\n{err.value.__cause__}"
    assert override.split("=")[0] in text and allowed in text


@pytest.mark.parametrize("override", ["+C=10", "++C=10", "++gamma=[1,2]"])
def test_a_new_top_level_key_is_refused(override):
    # Hydra's hint for `C=10` is `+C=10`, which nothing reads: the run would
    # silently be the default's
    name, value = override.lstrip("+").split("=")
    with pytest.raises(ConfigError) as err:
        compose_config(["dataset=sonar", "method=svm", override])
    assert f"{override}: adds a top-level key '{name}'" in str(err.value)
    assert f"method.{name}={value}" in str(err.value)


def test_a_list_of_split_starts_is_told_to_be_a_sweep():
    # README shares a cell with `split_start=0,5` (a sweep); written as a list,
    # the way grids are, it was refused with no word of the sweep
    with pytest.raises(ConfigError) as err:
        compose_config(["dataset=sonar", "method=svm", "split_start=[0,5]"])
    assert "split_start=[0, 5]: must be an integer >= 0" in str(err.value)
    assert "; for one job per worker, sweep it: split_start=0,5" in str(err.value)


def test_a_misspelt_group_added_as_a_key_is_named():
    # Hydra answers `datset=wpbc` with "To append to your config use
    # +datset=wpbc", which then ran the default dataset (an experiment's whole list)
    with pytest.raises(ConfigError) as err:
        compose_config(["dataset=sonar", "method=svm", "+datset=wpbc"])
    assert "+datset=wpbc: adds a top-level key 'datset' that no run reads (did you " \
        "mean dataset=wpbc?)" in str(err.value)


@pytest.mark.parametrize(
    "override,message",
    [
        ("+protocol.outer_fold=2", "(did you mean protocol.outer_folds=2?)"),
        ("++protocol.outer_fold=2", "(did you mean protocol.outer_folds=2?)"),
        ("+kernel.gamma=2", "the kernel section's keys are name, kernel, degree,"),
        ("+dataset.noise=1", "the dataset section's keys are name, noise_donor"),
        # ran with the experiment's own grid, silently
        ("+search.grid.default.C=[1]", "(did you mean search.grids.default.C=[1]?)"),
    ],
)
def test_a_key_added_to_a_schema_section_is_refused(override, message):
    # Hydra's hint for `protocol.outer_fold=2` is `+protocol.outer_fold=2`, which
    # composed: the run silently kept the protocol's own outer_folds
    key = override.lstrip("+").split("=")[0].split(".", 1)[1]
    with pytest.raises(ConfigError) as err:
        compose_config(["dataset=sonar", "method=svm", override])
    assert f"{override}: adds a key '{key}' that no run reads" in str(err.value)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "override",
    ["++split_start=1", "++method.C=10", "+search.grids.svm.C=[1]", "++seed=3",
     "++protocol.outer_folds=2"],
)
def test_keys_the_config_files_define_or_nested_keys_may_be_added(override):
    compose_config(["dataset=sonar", "method=svm", override])


class PlainEstimator(ClassifierMixin, BaseEstimator):
    """A method written the plain scikit-learn way: no _parameter_constraints."""

    def __init__(self, C=1.0, kernel="linear"):
        self.C = C
        self.kernel = kernel


class GramOnly(PlainEstimator):
    """The README's own method: a Gram matrix by default (``kernel="precomputed"``)."""

    def __init__(self, C=1.0, kernel="precomputed"):
        super().__init__(C=C, kernel=kernel)


def test_a_gram_matrix_method_on_features_is_refused_with_the_fix():
    # kernel=none hands it the features: every job used to fail after launch with
    # scikit-learn's "X should be a square kernel matrix"
    gram_only = [
        "dataset=sonar", "method=svm", f"method._target_={__name__}.GramOnly",
        "~method.solver", "~method.kernel", "kernel=none",  # its config: no kernel
    ]
    with pytest.raises(ConfigError) as err:
        compose_config(gram_only)
    assert "method.kernel='precomputed' with kernel=none" in str(err.value)
    assert "++method.kernel=rbf" in str(err.value)
    # the README's fix, and a Gram matrix from the runner, both pass
    compose_config([*gram_only, "++method.kernel=rbf"])
    compose_config([*gram_only[:-1], "kernel=linear"])


@pytest.mark.parametrize(
    "target", [f"{__name__}.PlainEstimator", "builtins.dict"]
)
def test_estimators_that_declare_no_constraints_are_left_to_the_run(target):
    # checked only against what a class declares; anything else is the run's
    compose_config([
        "dataset=sonar", "method=svm", f"method._target_={target}",
        "~method.solver", "search.grids.default.C=[-1,10]",
    ])


@pytest.mark.parametrize(
    "override,message",
    [
        (
            "method._target_=no_such_module_xyz.Mine",
            "method._target_=no_such_module_xyz.Mine: no module named "
            "'no_such_module_xyz'. A module of your own is imported from the Python "
            "path: put the folder that holds no_such_module_xyz.py",
        ),
        ("method._target_=methods.svm.Nope", "methods.svm has no 'Nope'"),
        ("method._target_=methods.nosub.X", "methods has no 'nosub'"),
    ],
)
def test_a_target_that_cannot_be_imported_is_named_with_the_fix(override, message):
    # it used to pass the check and fail in every job as an ImportError record
    with pytest.raises(ConfigError) as err:
        compose_config(["dataset=sonar", "method=svm", "~method.solver", override])
    assert message in str(err.value)
    if "no module named" in message:
        assert "PYTHONPATH=$PWD" in str(err.value)


def test_a_nested_target_and_a_failing_import_are_named(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match=r"method\.metric_learner\._target_=nope\.X"):
        compose_config(
            ["method=knn_lmnn", "kernel=none", "method.metric_learner._target_=nope.X"]
        )
    # a module that is found but raises on import: its own error, not PYTHONPATH
    (tmp_path / "broken_mine.py").write_text("import not_installed_dep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as err:
        compose_config(["method=svm", "method._target_=broken_mine.Mine"])
    assert "importing broken_mine failed: No module named 'not_installed_dep'" in str(
        err.value
    )
    assert "PYTHONPATH" not in str(err.value)


@pytest.mark.parametrize(
    "overrides,expected",
    [
        (
            ["experiment=mlsvm_table1", "method=svm", "method.C=100"],
            [("method.C=100", "search.grids.default.C")],
        ),
        (
            ["experiment=mlsvm_table1", "method=svm_fda", "++method.lam=5"],
            [("++method.lam=5", "search.grids.svm_fda.lam")],
        ),
        # a parameter the grid does not set, a method without a grid: used
        (["experiment=mlsvm_table1", "method=svm", "++method.tol=0.01"], []),
        (["dataset=sonar", "method=svm", "method.C=100"], []),
        (["experiment=mlsvm_table1", "method=fda", "method.reg=0.01"], []),
        # nested parameters by their grid name; staged grids stage by stage
        (
            [
                "experiment=arbf_table1",
                "method=knn_gb_lmnn",
                "method.metric_learner.estimator.n_estimators=5",
            ],
            [
                (
                    "method.metric_learner.estimator.n_estimators=5",
                    "search.grids.knn_gb_lmnn.metric_learner__estimator__n_estimators",
                )
            ],
        ),
        (
            ["experiment=arbf_table1", "method=arbf_t20", "method.n_iter=3"],
            [
                ("method.n_iter=3", "search.grids.arbf_t20[0].n_iter"),
                ("method.n_iter=3", "search.grids.arbf_t20[1].n_iter"),
            ],
        ),
    ],
)
def test_method_overrides_that_the_grid_replaces_are_found(overrides, expected):
    from runners.config_schema import grid_set_overrides

    cfg = compose_config(overrides)
    assert grid_set_overrides(cfg, overrides) == expected


def test_one_warning_per_override_names_every_grid_key():
    from runners.config_schema import grid_set_warnings

    pairs = [
        ("method.C=100", "search.grids.default.C"),
        ("method.C=100", "search.grids.svm_fda.C"),
        ("method.C=100", "search.grids.default.C"),  # a second job of the sweep
    ]
    assert grid_set_warnings(pairs) == [
        "method.C=100 is not used: the search grid sets C in every fit "
        "(search.grids.default.C, search.grids.svm_fda.C); override the grid "
        "instead, e.g. search.grids.default.C=[100]"
    ]


def test_good_configs_pass_and_keep_plain_strings():
    cfg = compose_config(["experiment=mlsvm_table1", "protocol=train_val_test"])
    validate_config(cfg)
    proto = key_config(cfg)["protocol"]
    assert proto["kind"] == "train_val_test" and type(proto["kind"]) is str
    assert f"{cfg.protocol.preprocess}" == "minmax_pm1"  # enums print as their name


def test_readme_grid_override_works_as_written():
    cfg = compose_config(
        ["dataset=wdbc", "method=svmm", "kernel=poly2", "kernel.normalize=cosine",
         "search.grids.default.C=[1,10]"]
    )
    assert key_config(cfg)["grid"] == {"C": [1, 10]}
    # an experiment's grid is replaced the same way; other names stay refused
    cfg = compose_config(["experiment=mlsvm_table1", "search.grids.default.C=[1,10]"])
    assert key_config(cfg)["grid"] == {"C": [1, 10]}
    with pytest.raises(ConfigCompositionException, match="search.gridz"):
        compose_config(["search.gridz.default.C=[1]"])


def test_compose_config_keeps_its_overrides_for_the_record(tmp_path, monkeypatch):
    from runners.run import run_job

    monkeypatch.setenv("KML_RESULTS", str(tmp_path))
    overrides = ["dataset=ovarian", "method=svm", "protocol=smoke"]
    rec = run_job(compose_config(overrides))
    assert rec["status"] == "skip"
    assert rec["overrides"] == overrides


def test_staged_grids_are_checked_stage_by_stage():
    # arbf_table1 selects ARBF in stages (a list of grids): valid as composed ...
    cfg = compose_config(["experiment=arbf_table1", "method=arbf_t20"])
    assert len(cfg.search.grids.arbf_t20) == 2  # two stages
    validate_config(cfg)
    # ... and an empty list inside one stage is named with its stage index
    with pytest.raises(ConfigError, match=r"search\.grids\.x\[0\]\.C"):
        validate_config(
            compose_config(
                ["experiment=arbf_table1", "method=arbf_t20", "search.grids.x=[{C:[]}]"]
            )
        )


def test_refit_on_train_is_accepted_with_a_validation_split():
    cfg = compose_config(
        ["experiment=arbf_table1", "method=komd", "protocol.refit_on=train"]
    )
    validate_config(cfg)
    assert key_config(cfg)["protocol"]["refit_on"] == "train"


def test_dataset_and_method_files_write_only_into_their_own_package():
    """The sweep check composes one job per override line, not every (dataset,
    method) pair, and Hydra's batch check then skips the sweep's jobs
    (runners.launch_compose): sound only while a dataset or method file cannot
    change another group's config, i.e. has no ``@package`` header and no
    defaults list reaching outside its group. Pair-specific settings belong in
    conf/dataset_method/ (then every pair is checked)."""
    from pathlib import Path

    import yaml

    from runners.run import CONF_DIR

    offenders = []
    for group in ("dataset", "method"):
        for path in sorted((Path(CONF_DIR) / group).rglob("*.yaml")):
            text = path.read_text()
            defaults = (yaml.safe_load(text) or {}).get("defaults", [])
            # a plain name is a file of the same group (base_dataset); a mapping
            # or an absolute path (/kernel: ...) reaches another group
            outside = [
                d for d in defaults if not isinstance(d, str) or d.startswith("/")
            ]
            if re.search(r"^#\s*@package", text, re.M) or outside:
                offenders.append(str(path.relative_to(CONF_DIR)))
    assert offenders == []


@pytest.mark.parametrize("method", ["lmnn_h", "nr_lmnn_mkl", "lmnn_mkl_p"])
def test_lmnn_params_that_the_method_sets_stop_the_sweep_before_any_job(method):
    # lmnn_params={n_neighbors: 3} overrode (or contradicted) method.n_neighbors;
    # the estimator refuses it in fit, and the config check reports it at compose
    # time, so a sweep stops before its first job instead of failing every one
    base = ["experiment=lmnnmkl_table1", "dataset=iris", f"method={method}"]
    with pytest.raises(ConfigError) as err:
        compose_config([*base, "method.lmnn_params={n_neighbors: 3, max_iter: 5}"])
    assert "method.lmnn_params: " in str(err.value)
    assert "pass n_neighbors=3 to" in str(err.value)
    compose_config([*base, "method.lmnn_params={max_iter: 5}"])


@pytest.mark.parametrize(
    "overrides, message",
    [
        # a misspelt donor used to pass the check, write a failed record under
        # results/<experiment>/iris+glas/ and, in a sweep, crash the data check
        (["dataset=iris", "dataset.noise_donor=glas"],
         "dataset.noise_donor='glas': no such dataset; did you mean glass?"),
        (["dataset=iris", "dataset.noise_donor=Glass"],
         "dataset.noise_donor='Glass': use the registry name 'glass'"),
        (["dataset=sonar", "dataset.name=sonr"],
         "dataset.name='sonr': no such dataset; did you mean sonar?"),
        # a published alias ran under its own label, beside house_votes' records
        (["dataset=sonar", "dataset.name=voting"],
         "dataset.name='voting': use the registry name 'house_votes'"),
        (["dataset=iris", "dataset.noise_donor="],
         "dataset.noise_donor='': for no noise donor leave it out or set it to null"),
    ],
)
def test_a_dataset_name_given_as_a_value_must_be_a_registry_name(overrides, message):
    with pytest.raises(ConfigError) as err:
        compose_config([*overrides, "method=svm"])
    assert message in str(err.value)
    compose_config(["dataset=iris", "dataset.noise_donor=glass", "method=svm"])



class NoScores(PlainEstimator):
    """The README's own method on features: predict only, no decision values."""

    def predict(self, X):
        return X[:, 0] > 0


class WithScores(NoScores):
    def decision_function(self, X):
        return X[:, 0]


def test_a_grid_scored_by_auc_needs_decision_values_before_any_job():
    # arbf Table 1 selects by AUC: a grid over a method with neither
    # decision_function nor predict_proba failed every job after launch with
    # scikit-learn's "NoScores has none of the following attributes"
    own = [
        "experiment=arbf_table1", "dataset=heart_libsvm", "method=svm",
        f"method._target_={__name__}.NoScores", "~method.solver",
        "++method.kernel=rbf", "search.grids.default.C=[1,10]",
    ]  # fmt: skip
    with pytest.raises(ConfigError) as err:
        compose_config(own)
    assert (
        "search.scoring=roc_auc: the search over search.grids.default scores each "
        "candidate by decision_function or predict_proba, and NoScores has neither"
    ) in str(err.value)
    assert "search.scoring=accuracy" in str(err.value)
    # the fixes pass: decision values, accuracy, no search, one candidate
    with_scores = f"method._target_={__name__}.WithScores"
    compose_config([*own, with_scores])
    compose_config([*own, "search.scoring=accuracy"])
    compose_config([*own[:-1]])
    compose_config([*own[:-1], "search.grids.default.C=[10]"])


def test_a_map_experiment_needs_a_method_that_maps_before_any_job():
    # kdml_fig3 records each test point's 2-D image: a plain classifier fitted and
    # predicted every split, then failed on "'NoScores' object has no attribute
    # 'metric_learner_'"
    plain = [
        "experiment=kdml_fig3", "method=svm", f"method._target_={__name__}.NoScores",
        "~method.solver", "++method.kernel=rbf",
    ]  # fmt: skip
    with pytest.raises(ConfigError) as err:
        compose_config(plain)
    assert "protocol.record_embedding=true" in str(err.value)
    assert "NoScores has neither" in str(err.value)
    assert "experiment=kdml_fig1 or kdml_fig2" in str(err.value)
    compose_config(["experiment=kdml_fig3", "method=kpca_knn"])  # the paper's


def test_a_scorer_name_scikit_learn_does_not_know_is_named_before_any_job():
    # every job failed on check_scoring's InvalidParameterError, a list of ~50 names
    with pytest.raises(ConfigError) as err:
        compose_config(["experiment=arbf_table1", "dataset=heart_libsvm",
                        "method=knn_raw", "search.scoring=auc"])  # fmt: skip
    assert "search.scoring=auc: not a scikit-learn scorer (did you mean roc_auc" in (
        str(err.value)
    )
    compose_config(["dataset=sonar", "method=svm", "search.scoring=balanced_accuracy"])
