"""Regression on kdml Fig. 1: two small datasets at 10% training, two runs.

Reruns every method of Fig. 1 on ionosphere and pima with the committed experiment's
protocol (kdml_fig1: balanced classes, 10% training, 3-fold CV over the small grid)
for its first two runs, and asserts that each run's test accuracy equals the
committed reports/generated/kdml/fig1_runs.csv (outer and inner splits are seeded
by dataset and run, so runs 0-1 do not depend on the number of runs, and are the
same in kdml_fig1_reduced's 5 runs, whichever of the two the committed figure
was drawn from).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from reports.kdml import run_accuracies
from reports.records import GENERATED_DIR, load_records
from runners.run import compose_config, run_job

pytestmark = pytest.mark.regression

DATASETS = ("ionosphere", "pima")
METHODS = ("knn", "itml_knn", "kdml_method1", "kdml_method2")
RUNS = 2


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    results = str(tmp_path_factory.mktemp("results-kdml"))
    os.environ["KML_RESULTS"] = results
    for dataset in DATASETS:
        for method in METHODS:
            rec = run_job(
                compose_config(
                    [
                        "experiment=kdml_fig1",
                        f"dataset={dataset}",
                        f"method={method}",
                        f"protocol.repetitions={RUNS}",
                    ]
                )
            )
            assert rec["status"] == "ok", rec.get("reason")
    return run_accuracies(load_records(results, "kdml_fig1", variants=True))


def test_rerun_equals_committed_runs(rerun):
    committed = pd.read_csv(GENERATED_DIR / "kdml" / "fig1_runs.csv")
    key = ["dataset", "method", "run"]
    merged = rerun.merge(committed, on=key, suffixes=("", "_committed"))
    assert len(merged) == len(rerun) == len(DATASETS) * len(METHODS) * RUNS
    np.testing.assert_allclose(
        merged.accuracy_pct, merged.accuracy_pct_committed, rtol=1e-5
    )
