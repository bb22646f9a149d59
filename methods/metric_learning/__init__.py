"""Metric learning: LMNN and the k-nearest-neighbour rule in a learned metric.

One private module per method; the public names are re-exported here. Other
metric-learning methods add their module and an export line below.
"""

from methods.metric_learning._gb_lmnn import GBLMNN
from methods.metric_learning._itml import ITML
from methods.metric_learning._kdml import KDMLFixedKernel, KDMLParamKernel
from methods.metric_learning._klmnn import KLMNN, KPCAMap
from methods.metric_learning._knn import MetricKNN
from methods.metric_learning._lmnn import LMNN, lmnn_loss, target_neighbors
from methods.metric_learning._lmnn_mkl import (
    LMNNMKLP,
    NRLMNNMKL,
    LMNNKernelSum,
    LMNNSingleKernel,
)

__all__ = [
    "GBLMNN",
    "LMNN",
    "MetricKNN",
    "lmnn_loss",
    "target_neighbors",
    "ITML",
    "KDMLFixedKernel",
    "KDMLParamKernel",
    "KLMNN",
    "KPCAMap",
    "LMNNKernelSum",
    "LMNNSingleKernel",
    "NRLMNNMKL",
    "LMNNMKLP",
]
