"""The LIBSVM-style min-max scaler of the minmax_pm1 step (its own module: it needs
scikit-learn, which the dataset registry does not)."""

from __future__ import annotations

import numpy as np
from sklearn.preprocessing import MinMaxScaler


class SymmetricMinMaxScaler(MinMaxScaler):
    """Min-max scaling to ``feature_range`` with constant columns at its middle.

    ``MinMaxScaler`` sends a constant column to ``feature_range[0]`` (-1); the
    LIBSVM ``svm-scale`` tool, whose output Paper E used, writes 0 there, and
    0 keeps a constant column from shifting a kernel. So for a constant
    training column ``transform`` gives the middle of ``feature_range`` at the
    constant and ``inverse_transform`` gives back the constant. Another value of
    that column (in a test part, when fitted fold-wise) is scaled as
    ``MinMaxScaler`` scales it, as if the column had a range of 1 (x - c units
    from the constant c give ``(x - c) * (max - min)`` from the middle), where
    ``svm-scale -r`` would write 0 for every value.

    Parameters
    ----------
    feature_range : tuple (min, max), default=(-1, 1)
        Range of the transformed training data.
    copy : bool, default=True
        Work on a copy of the input.
    clip : bool, default=False
        Clip transformed test data to ``feature_range``.

    Examples
    --------
    >>> import numpy as np
    >>> scaler = SymmetricMinMaxScaler().fit(np.array([[0.0, 5.0], [2.0, 5.0]]))
    >>> scaler.transform(np.array([[0.0, 5.0], [2.0, 5.0]]))
    array([[-1.,  0.],
           [ 1.,  0.]])
    >>> scaler.transform(np.array([[1.0, 6.0]]))  # 6 is 1 from the constant 5
    array([[0., 2.]])
    """

    def __init__(self, feature_range=(-1, 1), *, copy=True, clip=False):
        super().__init__(feature_range=feature_range, copy=copy, clip=clip)

    def partial_fit(self, X, y=None):
        """Update the min and max, then centre constant columns."""
        super().partial_fit(X, y)
        constant = self.data_range_ == 0
        if np.any(constant):
            middle = 0.5 * (self.feature_range[0] + self.feature_range[1])
            # transform(x) = x * scale_ + min_ = middle at x = data_min_.
            self.min_[constant] = (
                middle - self.data_min_[constant] * self.scale_[constant]
            )
        return self
