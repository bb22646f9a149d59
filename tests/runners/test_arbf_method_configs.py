"""Every arbf method config composes and instantiates its estimator, with the
grid's parameters valid for it (a misnamed key, such as ``score`` for MetricKNN's
``score_rule``, raised only when the sweep ran)."""

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from runners.run import compose_config

METHODS = ("komd", "knn_raw", "knn_lmnn", "knn_gb_lmnn", "arbf_t20", "arbf_t50",
           "arbf_t150")


@pytest.mark.parametrize("method", METHODS)
def test_arbf_method_config_instantiates_with_its_grid(method):
    cfg = compose_config(
        ["experiment=arbf_table1", "dataset=heart_libsvm", f"method={method}"]
    )
    est = instantiate(cfg.method)
    grid = cfg.search.grids[method]
    stages = list(grid) if OmegaConf.is_list(grid) else [grid]  # staged grids
    params = est.get_params()
    for stage in stages:
        for name, values in stage.items():
            assert name in params, f"{method}: grid key {name!r} is no parameter"
            est.set_params(**{name: list(values)[0]})


def test_knn_gb_lmnn_follows_the_authors_code():
    est = instantiate(
        compose_config(
            ["experiment=arbf_table1", "dataset=heart_libsvm", "method=knn_gb_lmnn"]
        ).method
    )
    gb = est.metric_learner.estimator
    assert (gb.init, gb.step_rule, gb.learning_rate) == ("lmnn", "authors", 1e-3)
    assert (est.score_rule, est.weights) == ("label", "uniform")  # knncl: labels
