"""The check behind the Gaussian-kernel rows of known_divergences.csv.

On sonar with the sigma = 1 Gaussian kernel, the C-SVM solution of every training set
of Table I's nested CV already lies inside the band of SVM_m (eps = 3) and of eps-SVM
(eps = 0), with a unique intercept, so both have the SVM's solution. If this stopped
holding, those rows would need a new reason. The runs are the check's own runs
(BandCheck, protocol.kind=nested_training_sets), made through the runner.
"""

import pandas as pd
import pytest

import reports.mlsvm_checks as checks
from reports.records import GENERATED_DIR
from runners.run import compose_config, run_job

pytestmark = pytest.mark.regression


@pytest.mark.parametrize("what,method", [("SVM_m (eps = 3)", "svmm"),
                                         ("eps-SVM (eps = 0)", "eps_svm")])
def test_band_is_inactive_on_sonar_gauss1(what, method, tmp_path):
    (job,) = [
        j for j in checks.check_jobs()
        if j.check == "band" and j.what == what and j.cell["dataset"] == "sonar"
    ]
    rec = run_job(
        compose_config(
            ["experiment=mlsvm_table1_checks", *job.overrides,
             f"paths.results={tmp_path}"]
        )
    )
    assert rec["status"] == "ok", rec.get("reason")
    row = checks._band_row(job, rec)
    assert row["method"] == method
    assert row["holds"], row
    assert "fits without a free multiplier: 0;" in row["detail"]
    assert "on training points: < 1e-03" in row["detail"]  # predicts as the SVM
    committed = pd.read_csv(GENERATED_DIR / "mlsvm" / "table1_checks.csv")
    band = committed[(committed.check == "band") & (committed.dataset == "sonar")]
    mine = band[band.method == method].iloc[0]
    assert row["value"] == pytest.approx(mine.value, abs=1e-4)  # CSV rounds
    assert row["what"] == mine.what
