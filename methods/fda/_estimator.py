r"""Fisher discriminant analysis, linear and kernel (mlsvm Sec. II-C, Eq. (5)).

The baseline "FDA" of mlsvm Table I. The paper ran stprtool's ``fld`` [3]_ in the
original feature space and reports FDA in the polynomial and Gaussian kernel spaces as
well, i.e. the kernel Fisher discriminant of Mika et al. [2]_.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from methods._kernels import KernelEstimatorMixin
from methods._multiclass import (
    binary_problems,
    combine_decisions,
    encode_classes,
    predict_from_decision,
)
from methods._validation import check_input_kernel, check_psd_kernel

_FITTED = ("coef_", "dual_coef_", "intercept_", "X_fit_")


def _regularized_solve(A: np.ndarray, reg: float, rhs: np.ndarray) -> np.ndarray:
    r"""Solve :math:`(A + \mu I) x = r` for a PSD ``A`` with :math:`\mu` = reg tr(A)/n.

    If ``tr(A) == 0`` then :math:`\mu` = ``reg``. With :math:`\mu = 0`, or if the
    Cholesky factorization fails, the minimum-norm least-squares solution
    (the pseudo-inverse's) is returned.
    """
    n = A.shape[0]
    trace = float(np.trace(A))
    mu = reg * trace / n if trace > 0 else reg
    M = A + mu * np.eye(n)
    if mu > 0:
        try:
            return scipy.linalg.solve(M, rhs, assume_a="pos")
        except np.linalg.LinAlgError:
            pass
    return np.linalg.lstsq(M, rhs, rcond=None)[0]


class FDA(KernelEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""Two-class Fisher discriminant, linear or kernel (mlsvm Sec. II-C, Eq. (5)).

    FDA maximizes the ratio of the between-class to the within-class scatter of the
    projected data (mlsvm Eq. (5); the paper prints the ratio upside down),

    .. math:: \max_w \frac{w^T S_B w}{w^T S_W w}, \quad
        S_W = \sum_{c} \sum_{x \in D_c} (x - m_c)(x - m_c)^T, \quad
        S_B = (m_1 - m_0)(m_1 - m_0)^T,

    whose solution, regularized, is :math:`w = (S_W + \mu I)^{-1} (m_1 - m_0)`.
    Class 1 is ``classes_[1]``, so the decision function is positive for it.

    With ``kernel="linear"`` the problem is solved in the primal on the features as
    written above (the classic linear FDA, stprtool's ``fld`` [3]_ used by mlsvm
    Sec. VII). With any other kernel, a callable or a precomputed Gram matrix it is
    the kernel Fisher discriminant of Mika et al. [2]_: :math:`w = \sum_i \alpha_i
    \phi(x_i)` with

    .. math:: \alpha = (N + \mu I)^{-1} (M_1 - M_0), \quad
        N = \sum_{c} K_c (I - \tfrac{1}{n_c} 1 1^T) K_c^T, \quad
        (M_c)_i = \frac{1}{n_c} \sum_{x_j \in D_c} k(x_i, x_j),

    where :math:`K_c` is the :math:`n \times n_c` block of the Gram matrix with the
    columns of class :math:`c`. The primal and the kernel solution coincide only as
    ``reg`` tends to 0 (for a linear Gram matrix of full column rank).

    **Regularization.** :math:`\mu` = ``reg`` :math:`\cdot \operatorname{tr}(A)/n`
    with :math:`A = S_W` (:math:`n` = number of features) or :math:`A = N`
    (:math:`n` = number of training points), i.e. ``reg`` is relative to the mean
    eigenvalue of the matrix it regularizes, so that it does not depend on the scale
    of the data or kernel; if the trace is 0, :math:`\mu` = ``reg``. stprtool's
    ``fld`` is unregularized (``reg=0``, where the pseudo-inverse is used); the
    kernel version needs :math:`\mu > 0` because :math:`N` is singular.

    **Threshold.** :math:`b = -\tfrac12 (w^T m_1 + w^T m_0)`, the midpoint of the
    projected class means, as stprtool computes it; the decision function is
    :math:`f(x) = w^T x + b` (primal) or :math:`\sum_i \alpha_i k(x_i, x) + b`.

    More than two classes are handled by one-vs-one (default) or one-vs-rest
    binary FDAs, combined as every estimator of :mod:`methods` does
    (:mod:`methods._multiclass`).

    Parameters
    ----------
    kernel : {"linear", "poly", "gaussian", "precomputed"} or callable, \
            default="linear"
        Kernel, see :func:`methods._kernels.pairwise_kernel`: ``x . y``,
        ``(x . y + 1) ** degree``, ``exp(-||x - y||^2 / (2 sigma^2))``. A callable
        takes ``(X, Y)`` and returns the ``(n_X, n_Y)`` block. With
        ``"precomputed"``, ``fit`` takes the ``(n_train, n_train)`` Gram matrix and
        ``predict`` the ``(n_test, n_train)`` kernel between test and training
        points.
    degree : int, default=2
        Degree of the polynomial kernel.
    sigma : float, default=1.0
        Bandwidth of the Gaussian kernel.
    normalize : {"cosine"} or None, default=None
        ``"cosine"`` divides the kernel by :math:`\sqrt{k(x,x) k(y,y)}` (mlsvm
        Sec. VII); for the linear kernel this scales every point to unit norm.
        Not available with ``kernel="precomputed"`` (normalize the Gram matrices
        beforehand).
    reg : float, default=1e-3
        Relative regularization :math:`\mu / (\operatorname{tr}(A)/n)`, see above.
    multiclass : {"ovo", "ovr"}, default="ovo"
        Decomposition for more than two classes.
    check_psd : bool, default=True
        Check that a user-supplied kernel (callable or precomputed) gives a
        positive semi-definite training Gram matrix, and raise
        :class:`~methods.exceptions.NonPSDKernelError` otherwise (an asymmetric
        one too). The check is a Cholesky certificate (O(n^3 / 3); the
        eigendecomposition only when it fails): a runner that fits many models on
        one Gram matrix checks it once with :func:`~methods.check_psd_kernel` and
        passes ``check_psd=False``. Named kernels are PSD by construction and never
        checked.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_problems, n_features)
        :math:`w` of each binary problem; ``kernel="linear"`` only.
    dual_coef_ : ndarray of shape (n_problems, n_train)
        :math:`\alpha` of each binary problem (0 outside it); other kernels only.
    intercept_ : ndarray of shape (n_problems,)
        :math:`b` of each binary problem. ``n_problems`` is 1 for two classes,
        else one per pair ("ovo") or per class ("ovr"), see
        :mod:`methods._multiclass`.
    X_fit_ : ndarray of shape (n_train, n_features)
        Training points (not with ``kernel="precomputed"``).
    n_features_in_ : int
        Number of features, or of training points with ``kernel="precomputed"``.

    See Also
    --------
    sklearn.discriminant_analysis.LinearDiscriminantAnalysis : the same direction
        from the pooled covariance, with a prior-dependent threshold.

    References
    ----------
    .. [1] mlsvm: the metric-learning view of SVM, FDA and MKL
       (papers/A-mlsvm-metric-learning-svm-mkl.txt), Sec. II-C, Eq. (5), Sec. VII.
    .. [2] S. Mika, G. Rätsch, J. Weston, B. Schölkopf, K.-R. Müller. Fisher
       discriminant analysis with kernels. Neural Networks for Signal Processing IX,
       1999.
    .. [3] V. Franc, V. Hlaváč. Statistical Pattern Recognition Toolbox for Matlab
       (stprtool), ``linear/fld.m``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.2], [0.1, 1.0], [3.0, 3.0], [4.0, 3.2],
    ...               [3.1, 4.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> FDA().fit(X, y).predict([[0.5, 0.5], [3.5, 3.5]])
    array([0, 1])
    >>> FDA(kernel="gaussian", sigma=2.0).fit(X, y).predict([[0.5, 0.5], [3.5, 3.5]])
    array([0, 1])
    """

    paper_name = "FDA"

    _parameter_constraints: dict = {
        "kernel": [
            StrOptions({"linear", "poly", "gaussian", "precomputed"}),
            callable,
        ],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "sigma": [Interval(Real, 0.0, None, closed="neither")],
        "normalize": [StrOptions({"cosine"}), None],
        "reg": [Interval(Real, 0.0, None, closed="left")],
        "multiclass": [StrOptions({"ovo", "ovr"})],
        "check_psd": ["boolean"],
    }

    def __init__(
        self,
        kernel: str | Callable = "linear",
        degree: int = 2,
        sigma: float = 1.0,
        normalize: str | None = None,
        reg: float = 1e-3,
        multiclass: str = "ovo",
        check_psd: bool = True,
    ):
        self.kernel = kernel
        self.degree = degree
        self.sigma = sigma
        self.normalize = normalize
        self.reg = reg
        self.multiclass = multiclass
        self.check_psd = check_psd

    @property
    def _primal(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "linear"

    @property
    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _features(self, X: np.ndarray) -> np.ndarray:
        """Features of the primal problem: ``X``, or unit-norm rows for ``cosine``."""
        if self.normalize != "cosine":
            return X
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = X / norms
        out[~np.isfinite(out)] = 0.0
        return out

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y) -> FDA:
        """Fit the discriminant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training points, or their Gram matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels; at least two classes.

        Returns
        -------
        self : FDA
            The fitted estimator.
        """
        in_dtype = getattr(X, "dtype", None)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        if self._precomputed:
            self._check_training_gram(X)
            if self.check_psd:
                check_input_kernel(X, in_dtype)
        for attr in _FITTED:
            self.__dict__.pop(attr, None)
        self.classes_, y_idx = encode_classes(y, "FDA")
        problems = binary_problems(y_idx, self.classes_.shape[0], self.multiclass)
        n = X.shape[0]
        if not self._precomputed:
            self.X_fit_ = X
        if self._primal:
            Xf = self._features(X)
            self.coef_ = np.zeros((len(problems), X.shape[1]))
        else:
            K = X if self._precomputed else self._gram(X)
            if self.check_psd and callable(self.kernel):
                check_psd_kernel(K, what="training Gram matrix of the callable kernel")
            self.dual_coef_ = np.zeros((len(problems), n))
        self.intercept_ = np.zeros(len(problems))
        for p, (idx, y_pm) in enumerate(problems):
            whole = idx.shape[0] == n
            pos = y_pm > 0
            if self._primal:
                Xp = Xf if whole else Xf[idx]
                m1, m0 = Xp[pos].mean(axis=0), Xp[~pos].mean(axis=0)
                C1, C0 = Xp[pos] - m1, Xp[~pos] - m0
                S_W = C1.T @ C1 + C0.T @ C0
                w = _regularized_solve(S_W, self.reg, m1 - m0)
                self.coef_[p] = w
                self.intercept_[p] = -0.5 * (w @ m1 + w @ m0)
            else:
                Kp = K if whole else K[np.ix_(idx, idx)]
                K1, K0 = Kp[:, pos], Kp[:, ~pos]
                M1, M0 = K1.mean(axis=1), K0.mean(axis=1)
                C1, C0 = K1 - M1[:, None], K0 - M0[:, None]
                N = C1 @ C1.T + C0 @ C0.T
                alpha = _regularized_solve(N, self.reg, M1 - M0)
                self.dual_coef_[p, idx] = alpha
                self.intercept_[p] = -0.5 * (alpha @ M1 + alpha @ M0)
        return self

    def _validate_predict_X(self, X) -> np.ndarray:
        if not self._precomputed:
            return validate_data(self, X, dtype=np.float64, reset=False)
        # Checks values first (NaN, 2-D), then the kernel's shape with the fix in
        # the message, then feature names against the training Gram matrix.
        X_arr = check_array(X, dtype=np.float64)
        n = self.n_features_in_
        if X_arr.shape[1] != n:
            raise ValueError(
                f"X has {X_arr.shape[1]} features, but FDA is expecting {n} features "
                "as input. With kernel='precomputed', predict takes the kernel "
                f"between the test and the {n} training points, of shape "
                f"(n_test, {n})."
            )
        validate_data(self, X, reset=False, skip_check_array=True)
        return X_arr

    def decision_function(self, X) -> np.ndarray:
        """Signed projection onto the discriminant minus the threshold.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features) or (n_test, n_train)
            Test points, or their kernel with the training points when
            ``kernel="precomputed"``.

        Returns
        -------
        ndarray of shape (n_test,) or (n_test, n_classes)
            Positive for ``classes_[1]`` with two classes; with more, the
            one-vs-one (or one-vs-rest) class scores.
        """
        check_is_fitted(self)
        X = self._validate_predict_X(X)
        if self._primal:
            F, W = self._features(X), self.coef_
        else:
            F = X if self._precomputed else self._gram(X, self.X_fit_)
            W = self.dual_coef_
        D = np.empty((X.shape[0], W.shape[0]))
        for p in range(W.shape[0]):
            # one matrix-vector product per problem: the two-class path is exactly
            # f(x) = <w, x> + b as fld computes it
            D[:, p] = F @ W[p] + self.intercept_[p]
        return combine_decisions(D, self.classes_.shape[0], self.multiclass)

    def predict(self, X) -> np.ndarray:
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features) or (n_test, n_train)
            Test points, or their kernel with the training points when
            ``kernel="precomputed"``.

        Returns
        -------
        ndarray of shape (n_test,)
            ``classes_[1]`` where the decision function is positive, else
            ``classes_[0]``; with more classes the vote of the binary FDAs.
        """
        return predict_from_decision(self.decision_function(X), self.classes_)
