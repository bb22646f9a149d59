"""Fisher discriminant analysis, linear and kernel (mlsvm Sec. II-C): :class:`FDA`."""

from methods.fda._estimator import FDA

__all__ = ["FDA"]
