"""End to end: config -> data -> protocol -> method -> record; bad-input paths."""

import numpy as np
import pytest
from hydra.errors import ConfigCompositionException, MissingConfigException

from runners.run import compose_config, run_job

SMOKE = ["protocol=smoke", "+search.grids.default.C=[0.1,10]"]


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("KML_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


def _run(*overrides):
    return run_job(compose_config([*SMOKE, *overrides]))


def test_record_has_per_fold_and_per_instance_fields(results):
    rec = _run("dataset=sonar", "method=svm", "kernel=linear")
    assert rec["status"] == "ok", rec.get("reason")
    import datasets
    from runners.checkpoints import data_digest

    ds = datasets.load("sonar")
    assert rec["data_sources"] == {"sonar": ds.source}
    X = datasets.preprocess(ds.X, compose_config(SMOKE).protocol.preprocess)
    assert rec["data_digest"] == data_digest(X, ds.y)
    assert rec["n_samples"] == 208 and rec["n_test_total"] == 208
    assert len(rec["folds"]) == 2
    fold = rec["folds"][0]
    assert set(fold["best_params"]) == {"C"}
    assert set(fold["inner_mean_test_error"]) == {"C=0.1", "C=10"}
    assert fold["fit_seconds"] > 0 and fold["predict_seconds"] > 0
    assert {"objective", "n_iter", "converged"} <= set(fold["solver"])
    preds = rec["predictions"]
    assert sorted(preds["index"]) == list(range(208))
    assert len(preds["decision"]) == 208
    n_err = sum(a != b for a, b in zip(preds["y_true"], preds["y_pred"]))
    assert n_err == rec["n_errors"]
    assert rec["error_pct"] == pytest.approx(100 * n_err / 208)
    assert rec["provenance"]["code_version"] == rec["config"]["code_version"]
    assert "numpy" in rec["provenance"]["packages"]


def test_finished_record_is_reused_and_force_gives_identical_predictions(results):
    first = _run("dataset=sonar", "method=svm", "kernel=poly2")
    again = _run("dataset=sonar", "method=svm", "kernel=poly2")
    assert again["finished"] == first["finished"]  # read back, not recomputed
    forced = _run("dataset=sonar", "method=svm", "kernel=poly2", "force=true")
    assert forced["finished"] >= first["finished"]
    assert forced["predictions"] == first["predictions"]


def test_every_method_sees_the_same_outer_folds(results):
    a = _run("dataset=sonar", "method=svm", "kernel=linear")
    b = _run("dataset=sonar", "method=svmm", "kernel=linear")
    fa = np.asarray(a["predictions"]["fold"])[np.argsort(a["predictions"]["index"])]
    fb = np.asarray(b["predictions"]["fold"])[np.argsort(b["predictions"]["index"])]
    np.testing.assert_array_equal(fa, fb)


def test_every_method_selects_on_the_same_inner_folds(results):
    # SVM_m with a band too wide to bind solves the SVM's problem: with shared inner
    # folds, the inner CV errors and the predictions must coincide.
    a = _run("dataset=sonar", "method=svm", "kernel=poly2")
    b = _run("dataset=sonar", "method=svmm", "kernel=poly2", "method.epsilon=1e6")
    for fa, fb in zip(a["folds"], b["folds"]):
        assert fa["inner_mean_test_error"] == pytest.approx(fb["inner_mean_test_error"])
    assert a["predictions"]["y_pred"] == b["predictions"]["y_pred"]


def test_feature_space_method_is_skipped_for_nonlinear_kernels(results):
    rec = _run("dataset=sonar", "method=svm_fda", "kernel=gauss1")
    assert rec["status"] == "skip"
    assert "original feature space" in rec["reason"]


def test_unavailable_dataset_is_a_skip_with_reason(results):
    rec = _run("dataset=ovarian", "method=svm", "kernel=linear")
    assert rec["status"] == "skip"
    assert "not available" in rec["reason"]


def test_iteration_limit_is_recorded_not_silent(results):
    rec = _run("dataset=sonar", "method=svm", "kernel=linear", "+method.max_iter=2")
    assert rec["status"] == "ok"
    assert rec["converged"] is False
    assert rec["inner_convergence_warnings"] > 0


def test_errors_are_recorded_and_rerun(results):
    # a protocol the data cannot meet fails inside the run (an invalid estimator
    # parameter is refused before it: test_config_checks.py)
    bad = ("dataset=sonar", "method=svm", "kernel=linear", "protocol.inner_folds=200")
    rec = _run(*bad)
    assert rec["status"] == "error"
    assert "protocol.inner_folds" in rec["reason"]
    # mark the stored error record; a rerun must replace it (errors are not cached)
    from pathlib import Path

    path = next(Path(results).rglob("svm*.json"))
    path.write_text(
        path.read_text().replace('"status": "error"', '"status": "error", "seen": 1')
    )
    again = _run(*bad)
    assert again["status"] == "error" and "seen" not in again


@pytest.mark.parametrize(
    "override,valid",
    [("dataset=sonr", "sonar"), ("method=svn", "svmm"), ("kernel=poly9", "poly2")],
)
def test_unknown_names_list_valid_options(override, valid):
    with pytest.raises((MissingConfigException, ConfigCompositionException)) as err:
        compose_config([override])
    assert valid in str(err.value)


def test_protocol_typo_fails_at_compose_time():
    with pytest.raises(ConfigCompositionException):
        compose_config(["protocol.outer_fold=3"])


@pytest.mark.parametrize(
    "method,expect",
    [
        ("svm", "gram"),
        ("svmm", "gram"),
        ("eps_svm", "gram"),
        ("fda", "gram"),
        ("svm_fda", "features"),
    ],
)
def test_kernel_methods_get_the_normalized_gram_matrix(method, expect):
    from hydra.utils import instantiate

    from runners.run import _load_data, build_input, key_config

    cfg = compose_config(
        [
            "experiment=mlsvm_table1",
            "dataset=sonar",
            f"method={method}",
            "kernel=poly2" if expect == "gram" else "kernel=linear",
        ]
    )
    _, X, _ = _load_data(cfg)
    est, Xin = build_input(instantiate(cfg.method), X, key_config(cfg)["kernel"], True)
    if expect == "gram":
        assert est.kernel == "precomputed" and Xin.shape == (208, 208)
        np.testing.assert_allclose(np.diag(Xin), 1.0)  # cosine-normalized
    else:
        assert est.kernel == "linear" and Xin.shape == (208, 60)
        assert est.normalize == "cosine"  # the space of the normalized linear kernel


def test_console_script_finds_its_configs_from_any_directory(tmp_path):
    """``kml-run`` imports runners.run through the editable-install finder."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    exe = shutil.which("kml-run", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("kml-run is not installed in this environment")
    out = subprocess.run(
        [exe, "dataset=sonar", "method=svm", "kernel=linear", "--cfg", "job"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "experiment: adhoc" in out.stdout


def test_fold_scope_standardizes_on_each_outer_training_part(results):
    """preprocess_scope=fold equals a scikit-learn pipeline refitted per outer fold."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    import datasets
    from runners.protocols import outer_splits

    rec = run_job(
        compose_config(
            [
                "protocol=smoke",
                "protocol.preprocess_scope=fold",
                "dataset=sonar",
                "method=svm",
                "kernel=linear",
                "+search.grids.default.C=[1.0]",
            ]
        )
    )
    assert rec["status"] == "ok", rec.get("reason")
    ds = datasets.load("sonar")
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    proto = compose_config(["protocol=smoke"]).protocol
    expected, leaky = np.empty(len(y)), np.empty(len(y))
    Xs = StandardScaler().fit_transform(X)  # whole-dataset statistics
    for _, _, train, test in outer_splits(y, proto, "sonar", 0):
        model = make_pipeline(StandardScaler(), SVC(kernel="linear", C=1.0, tol=1e-6))
        expected[test] = model.fit(X[train], y[train]).decision_function(X[test])
        svc = SVC(kernel="linear", C=1.0, tol=1e-6).fit(Xs[train], y[train])
        leaky[test] = svc.decision_function(Xs[test])
    order = np.argsort(rec["predictions"]["index"])
    got = np.asarray(rec["predictions"]["decision"])[order]
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-2)
    assert np.max(np.abs(leaky - expected)) > 0.1  # the two scopes are distinguishable


def test_unknown_preprocess_scope_fails_at_compose_naming_the_options(results):
    with pytest.raises(ConfigCompositionException) as err:
        _run("dataset=sonar", "method=svm", "protocol.preprocess_scope=folds")
    assert "expected one of [dataset, fold]" in str(err.value.__cause__)
    assert not results.exists()  # no error record


def test_fold_scope_on_a_noisy_dataset_scales_per_fold_or_says_how(results):
    noisy = [
        "experiment=wrbf_table1",
        "dataset=iris",
        "dataset.noise_donor=glass",
        "method=rbf",
        "protocol.repetitions=2",
        "protocol.preprocess_scope=fold",
    ]
    rec = run_job(compose_config(noisy))
    assert rec["status"] == "error"
    assert "protocol.preprocess=minmax_pm1" in rec["reason"]
    rec = run_job(compose_config([*noisy, "protocol.preprocess=minmax_pm1"]))
    assert rec["status"] == "ok", rec.get("reason")
    # which copies were read, the donor's too, and a digest of what the splits saw
    assert set(rec["data_sources"]) == {"iris", "glass"}
    assert all(isinstance(v, str) and v for v in rec["data_sources"].values())
    assert len(rec["data_digest"]) == 16


def test_main_skips_the_final_collection_at_exit(monkeypatch):
    """kml-run freezes the GC at exit (issue 14: ~0.45 s of a one-cell run)."""
    import atexit
    import gc
    import sys

    import runners.rerun
    from runners import run

    registered = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(runners.rerun, "cached_sweep", lambda argv: True)
    monkeypatch.setattr(sys, "argv", ["kml-run", "experiment=mlsvm_table1"])
    run.main()
    assert gc.freeze in registered


class _NoPairwiseTag:
    """A kernel method that forgot scikit-learn's pairwise tag."""

    def __init__(self):
        self.kernel = "linear"

    def get_params(self, deep=True):
        return {"kernel": self.kernel}

    def set_params(self, **params):
        self.kernel = params.get("kernel", self.kernel)
        return self

    def __sklearn_tags__(self):
        from sklearn.utils import Tags

        return Tags(estimator_type="classifier", target_tags=None)


def test_a_gram_matrix_goes_only_to_a_pairwise_estimator():
    from runners.run import build_input

    X = np.random.default_rng(0).normal(size=(12, 3))
    kcfg = {"name": "linear", "kernel": "linear", "degree": 1, "sigma": 1.0,
            "normalize": None}  # fmt: skip
    with pytest.raises(ValueError, match="does not declare it pairwise.*kernel=none"):
        build_input(_NoPairwiseTag(), X, kcfg, False)
    from methods import SVM

    est, K = build_input(SVM(), X, kcfg, False)  # the project's kernel methods do
    assert est.kernel == "precomputed" and K.shape == (12, 12)


def test_a_gram_matrix_needs_a_kernel_parameter_and_says_so():
    from sklearn.base import BaseEstimator, ClassifierMixin

    from runners.run import build_input

    class NoKernel(ClassifierMixin, BaseEstimator):
        def __init__(self, C=1.0):
            self.C = C

    X = np.random.default_rng(0).normal(size=(12, 3))
    kcfg = {"name": "linear", "kernel": "linear", "degree": 1, "sigma": 1.0,
            "normalize": None}  # fmt: skip
    with pytest.raises(ValueError, match="no `kernel` parameter.*kernel=none"):
        build_input(NoKernel(), X, kcfg, False)


def test_a_method_of_ones_own_is_keyed_by_its_file(tmp_path, monkeypatch):
    from runners.run import key_config

    assert "method_sources" not in key_config(compose_config(["method=svm"]))
    mod = tmp_path / "own_method_x.py"
    mod.write_text("from methods import SVM as Own\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = compose_config(["method=svm", "method._target_=own_method_x.Own"])
    first = key_config(cfg)["method_sources"]
    assert set(first) == {"own_method_x.Own"}
    mod.write_text("from methods import SVM as Own  # edited\n")
    assert key_config(cfg)["method_sources"] != first


def test_the_checked_gram_matrix_is_not_rechecked_by_a_nested_estimator():
    """build_input checks the Gram matrix once: a learner nested in the estimator
    (MetricKNN's LMNN) gets check_psd=False too, not a PSD check per fit."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    from methods.metric_learning import LMNN
    from runners.run import build_input

    class Wrapper(ClassifierMixin, BaseEstimator):
        def __init__(self, inner=None, kernel="linear", check_psd=True):
            self.inner = inner
            self.kernel = kernel
            self.check_psd = check_psd

        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.pairwise = True
            return tags

    X = np.random.default_rng(0).normal(size=(12, 3))
    kcfg = {"name": "linear", "kernel": "linear", "degree": 1, "sigma": 1.0,
            "normalize": None}  # fmt: skip
    est, _ = build_input(Wrapper(LMNN(kernel="precomputed")), X, kcfg, True)
    assert est.check_psd is False and est.inner.check_psd is False


def test_progress_and_failed_lines_name_a_chosen_seed(results, caplog):
    """A seed sweep's jobs differ only in their seed: the lines must say which."""
    from runners.callbacks import summarize
    from runners.run import run_job_outcome, shown_label

    assert shown_label(compose_config(["dataset=sonar"]), "svm[x]") == "svm[x]"
    assert shown_label(compose_config(["seed=0"]), "svm[x]") == "svm[x] seed=0"
    assert shown_label(compose_config(["++seed=3"]), "svm[x]") == "svm[x] seed=3"
    # fails once it runs: the inner CV needs more samples than it has
    bad = ["protocol=smoke", "dataset=sonar", "method=svm", "kernel=linear",
           "seed=7", "protocol.inner_folds=200", "search.grids.svm.C=[1,10]"]
    with caplog.at_level("INFO", logger="kml"):
        record, outcome = run_job_outcome(compose_config(bad))
    assert record["status"] == "error" and record["seed"] == 7
    assert "svm[kernel=linear] seed=7" in caplog.text
    text, _ = summarize([outcome])
    assert "FAILED sonar svm[kernel=linear] seed=7: " in text


def test_a_long_reason_is_cut_for_the_summary_and_says_so():
    from runners.run import REASON_CHARS, short_reason

    assert short_reason("x" * REASON_CHARS) == "x" * REASON_CHARS
    cut = short_reason("y" * 2000)
    assert len(cut) <= REASON_CHARS and cut.endswith("(cut: the record has it all)")
