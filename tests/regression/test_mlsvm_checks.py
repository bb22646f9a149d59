"""The check behind the Gaussian-kernel rows of known_divergences.csv.

On sonar with the sigma = 1 Gaussian kernel, the C-SVM solution of every training set
of Table I's nested CV already lies inside the band of SVM_m (eps = 3) and of eps-SVM
(eps = 0), with a unique intercept, so both have the SVM's solution. If this stopped
holding, those rows would need a new reason.
"""

import pandas as pd
import pytest

from reports.mlsvm_checks import band_check
from reports.records import GENERATED_DIR

pytestmark = pytest.mark.regression


@pytest.mark.parametrize("epsilon,method", [(3.0, "svmm"), (0.0, "eps_svm")])
def test_band_is_inactive_on_sonar_gauss1(epsilon, method):
    row = band_check("sonar", epsilon)
    assert row["holds"], row
    assert "fits without a free multiplier: 0;" in row["detail"]
    committed = pd.read_csv(GENERATED_DIR / "mlsvm" / "table1_checks.csv")
    band = committed[(committed.check == "band") & (committed.dataset == "sonar")]
    committed_max = band[band.method == method].value.iloc[0]
    assert row["value"] == pytest.approx(committed_max, abs=1e-4)  # CSV rounds
    diff = float(row["detail"].rsplit(" ", 1)[-1])
    assert diff < 1e-3  # predicts as the SVM
