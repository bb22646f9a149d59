"""One Hydra composition per distinct config in a ``kml-run`` process (issue 14)."""

from __future__ import annotations

import pytest
from hydra import initialize_config_dir
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import ConfigCompositionException
from hydra.types import RunMode
from omegaconf import OmegaConf, read_write

import runners.launch_compose as lc
from runners.run import CONF_DIR

JOB = ["experiment=mlsvm_table1", "dataset=sonar", "method=svm", "kernel=linear"]


@pytest.fixture
def loader(monkeypatch):
    """A fresh loader with the memo and a count of real compositions."""
    calls = []
    impl = ConfigLoaderImpl._load_configuration_impl

    def counting(self, *args, **kwargs):
        calls.append(kwargs.get("overrides"))
        return impl(self, *args, **kwargs)

    monkeypatch.setattr(ConfigLoaderImpl, "_load_configuration_impl", counting)
    lc.install()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        yield GlobalHydra.instance().config_loader(), calls


def _plain(cfg):
    return OmegaConf.to_container(cfg, resolve=False)


def test_same_config_composed_once_and_equal_to_a_fresh_one(loader):
    load, calls = loader
    a = load.load_configuration("config", JOB, RunMode.RUN)
    b = load.load_configuration("config", JOB, RunMode.RUN)
    assert len(calls) == 1
    assert a is not b
    assert _plain(a) == _plain(b)
    # a fresh composition, without the memo, gives the same config
    fresh = lc._original(load, "config", JOB, RunMode.RUN)
    assert _plain(fresh) == _plain(b)
    # copies: changing one leaves the memo's and the others alone
    with read_write(a):
        a.seed = 99
    c = load.load_configuration("config", JOB, RunMode.RUN)
    assert c.seed == b.seed == 0


def test_other_overrides_or_mode_compose_again(loader):
    load, calls = loader
    load.load_configuration("config", JOB, RunMode.RUN)
    load.load_configuration("config", [*JOB, "seed=1"], RunMode.RUN)
    load.load_configuration("config", JOB, RunMode.MULTIRUN)
    assert len(calls) == 3


def test_validation_skipped_first_is_run_when_asked(loader):
    """``get_mode`` composes without the sweep-override check; a later request
    with the check raises as a fresh composition would."""
    load, calls = loader
    sweep = [*JOB[:1], "dataset=sonar,wpbc"]
    load.load_configuration(
        "config", sweep, RunMode.RUN, validate_sweep_overrides=False
    )
    with pytest.raises(ConfigCompositionException, match="[Ss]weep"):
        lc._original(load, "config", sweep, RunMode.RUN)
    with pytest.raises(ConfigCompositionException, match="[Ss]weep"):
        load.load_configuration("config", sweep, RunMode.RUN)
    assert len(calls) == 2  # the memo ran the check, not a composition


def test_memo_is_bounded(loader, monkeypatch):
    load, calls = loader
    monkeypatch.setattr(lc, "MAX_ENTRIES", 2)
    for seed in range(3):
        load.load_configuration("config", [*JOB, f"seed={seed}"], RunMode.RUN)
    load.load_configuration("config", [*JOB, "seed=0"], RunMode.RUN)  # evicted
    load.load_configuration("config", [*JOB, "seed=2"], RunMode.RUN)  # kept
    assert len(calls) == 4


def test_config_check_composes_the_launched_job(loader):
    """The sweep's config check composes each checked job with that job's own
    overrides, so the launcher's composition of a one-job sweep is a memo hit
    (it used to compose the job without its dataset and method: one more)."""
    from runners.callbacks import check_sweep, sweep_jobs

    load, calls = loader
    cfg = load.load_configuration("config", JOB, RunMode.MULTIRUN)
    (job,) = sweep_jobs(cfg)
    assert check_sweep(cfg) == 1
    n = len(calls)
    launched = load.load_sweep_config(cfg, list(job))
    assert len(calls) == n
    assert launched.dataset.name == "sonar"


def test_memo_is_not_pickled_with_the_loader(loader):
    """The joblib launcher pickles the loader into every job (HydraContext and
    Hydra's singleton state): the memo must not travel with it."""
    import pickle

    load, calls = loader
    empty = len(pickle.dumps(load))
    for seed in range(5):
        load.load_configuration("config", [*JOB, f"seed={seed}"], RunMode.RUN)
    assert len(lc._MEMOS[load]) == 5
    assert len(pickle.dumps(load)) == empty
    copied = pickle.loads(pickle.dumps(load))
    copied.load_configuration("config", [*JOB, "seed=0"], RunMode.RUN)
    assert len(calls) == 6  # the copy composes for itself


def test_batch_check_skips_only_the_jobs_the_sweep_check_covered(loader):
    """Hydra composes every job of a batch before launching any; after the sweep
    check (one job per signature and per override line) it composes none of a
    Table I sweep, and still composes a job the check did not see."""
    from types import SimpleNamespace

    from hydra.plugins.sweeper import Sweeper

    from runners.callbacks import check_sweep, sweep_jobs

    load, calls = loader
    cfg = load.load_configuration(
        "config", ["experiment=mlsvm_table1"], RunMode.MULTIRUN
    )
    jobs = sweep_jobs(cfg)
    assert len(jobs) == 140
    n_checked = check_sweep(cfg)
    assert n_checked < 20
    composed = [tuple(c) for c in calls]
    for line in {line for job in jobs for line in job}:  # every dataset, method...
        assert any(line in c for c in composed), line
    context = SimpleNamespace(config_loader=load)
    sweeper = SimpleNamespace(hydra_context=context, config=cfg)
    n = len(calls)
    Sweeper.validate_batch_is_legal(sweeper, jobs)
    assert len(calls) == n
    other = [*jobs[0][:-1], "seed=7"]
    Sweeper.validate_batch_is_legal(sweeper, [other])
    assert len(calls) == n + 1


def test_pair_file_on_a_searchpath_is_composed_by_the_sweep_check(loader, tmp_path):
    """A dataset_method pair file makes one (dataset, method) pair differ from the
    others; found through the loader (here on a searchpath, not in conf/), every
    pair is checked, so a broken pair file stops the sweep before any job."""
    from runners.callbacks import check_sweep, sweep_jobs

    pair_dir = tmp_path / "extra" / "dataset_method"
    pair_dir.mkdir(parents=True)
    (pair_dir / "wpbc_svmm.yaml").write_text("defaults:\n  - /kernel: no_such_kernel\n")
    load, calls = loader
    overrides = [
        "dataset=sonar,wpbc",
        "method=svm,svmm",
        f"hydra.searchpath=[file://{tmp_path / 'extra'}]",
    ]
    cfg = load.load_configuration("config", overrides, RunMode.MULTIRUN)
    assert len(sweep_jobs(cfg)) == 4
    with pytest.raises(ConfigCompositionException, match="no_such_kernel"):
        check_sweep(cfg)
    assert load not in lc._CHECKED  # nothing marked: Hydra's own check stays


def test_checked_jobs_belong_to_one_loader(loader):
    """Jobs checked by one sweep's loader are not skipped for another loader."""
    from types import SimpleNamespace

    from hydra.plugins.sweeper import Sweeper

    load, calls = loader
    cfg = load.load_configuration("config", JOB, RunMode.MULTIRUN)
    lc.mark_checked(load, [JOB])
    other = ConfigLoaderImpl(config_search_path=load.config_search_path)
    sweeper = SimpleNamespace(
        hydra_context=SimpleNamespace(config_loader=other), config=cfg
    )
    n = len(calls)
    Sweeper.validate_batch_is_legal(sweeper, [JOB])
    assert len(calls) == n + 1


def test_a_misspelt_noise_donor_stops_the_sweep_with_the_check(loader):
    """A donor name that is no dataset is named by the sweep's config check, like
    every bad value; it used to raise UnknownDatasetError out of the data check,
    which Hydra turns into a warning, and the sweep ran on with a failed record."""
    from runners.callbacks import check_sweep

    load, _ = loader
    overrides = ["dataset=iris", "dataset.noise_donor=glas,ecoli", "method=rbf"]
    cfg = load.load_configuration("config", overrides, RunMode.MULTIRUN)
    with pytest.raises(ConfigCompositionException) as err:
        check_sweep(cfg, data=True)
    assert "dataset.noise_donor='glas': no such dataset; did you mean glass?" in str(
        err.value
    )


def test_a_copy_that_fails_its_checksum_stops_the_sweep_once(
    loader, tmp_path, monkeypatch
):
    """A damaged mirror file used to be found by each job: one failed record per
    job, each with the same checksum error. The sweep's data check now hashes each
    dataset it needs once and stops before any job, naming the file."""
    import shutil

    import datasets

    good = datasets.default_mirror() / "heart_libsvm" / "heart_scale"
    if not good.is_file():
        pytest.skip(f"dataset mirror not found at {good.parent.parent}")
    mirror = tmp_path / "mirror"
    (mirror / "heart_libsvm").mkdir(parents=True)
    (mirror / "MANIFEST.md").write_text("# Dataset manifest\n")
    shutil.copyfile(good, mirror / "heart_libsvm" / "heart_scale")
    with open(mirror / "heart_libsvm" / "heart_scale", "ab") as fh:
        fh.write(b"\n")
    monkeypatch.setenv("DATA_MIRROR", str(mirror))
    monkeypatch.setenv("KML_OFFLINE", "1")
    calls = []
    real = datasets.bad_copy
    monkeypatch.setattr(
        datasets, "bad_copy", lambda *a, **k: calls.append(a) or real(*a, **k)
    )
    from runners.callbacks import check_sweep

    load, _ = loader
    overrides = ["dataset=heart_libsvm,iris", "method=svm,fda", "kernel=linear,poly2"]
    cfg = load.load_configuration("config", overrides, RunMode.MULTIRUN)
    with pytest.raises(ConfigCompositionException) as err:
        check_sweep(cfg, data=True)
    message = str(err.value)
    assert message.startswith(
        "kml-run: no job was started; a dataset the sweep needs has a copy that "
        "cannot be used.\nChecksum mismatch for dataset 'heart_libsvm', file "
        f"{mirror / 'heart_libsvm' / 'heart_scale'}: "
    )
    assert message.count("Checksum mismatch") == 1
    assert sorted(calls) == [("heart_libsvm",), ("iris",)]  # once per dataset
    assert check_sweep(cfg) > 0  # without the data check (a cluster's sweep)
