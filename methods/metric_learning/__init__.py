"""Metric learning: LMNN and the k-nearest-neighbour rule in a learned metric.

One private module per method; the public names are re-exported here. Other
metric-learning methods add their module and an export line below.
"""

from methods.metric_learning._gb_lmnn import GBLMNN
from methods.metric_learning._knn import MetricKNN
from methods.metric_learning._lmnn import LMNN, lmnn_loss, target_neighbors

__all__ = [
    "GBLMNN",
    "LMNN",
    "MetricKNN",
    "lmnn_loss",
    "target_neighbors",
]
