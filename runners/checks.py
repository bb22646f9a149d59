r"""Check estimators: experiments behind a report's reasons, not paper methods.

A check is run by the runner like any method (``conf/method/<check>.yaml``), so its
numbers are records under ``--results``; the estimator exposes what it measured as
the fitted attribute ``check_`` (a JSON-serializable dict), which
:func:`runners.protocols.solver_diagnostics` stores in each fold's record.

:class:`BandCheck` backs the check ``band`` of mlsvm Table I
(``conf/experiment/mlsvm_table1_checks.yaml``, ``reports/mlsvm_checks.py``): run
with ``protocol.kind=nested_training_sets``, it is fitted at every C of its grid on
every training set that Table I's nested CV fits.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from methods._kernels import KernelEstimatorMixin
from methods.svm import SVM, SVMm
from methods.svm._base import BaseKernelSVM

_POSITIVE = Interval(Real, 0.0, None, closed="neither")


class BandCheck(KernelEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""Is the C-SVM optimum inside SVM_m's band (mlsvm Eq. 14)? A check, not a method.

    Fits the C-SVM (mlsvm Eq. 1) and SVM_m (Eq. 14-15; ``epsilon=0`` is eps-SVM,
    Eq. 7) at the same ``C`` on the same data. If the SVM solution satisfies
    :math:`y_i f(x_i) \le 1 + \epsilon` for every training point, it is SVM_m's
    optimum too: SVM_m's cost is the SVM's plus :math:`C_2\sum_i\eta_i \ge 0`, and
    SVM_m attains the SVM optimum with :math:`\eta = 0`. With :math:`\epsilon = 0` a
    tolerance on the margin cannot decide, so the check counts training points with a
    zero multiplier: when every :math:`\alpha_i > 0`, the KKT conditions give
    :math:`y_i f(x_i) \le 1` at the exact optimum. The intercept is unique when some
    multiplier is free (:math:`0 < \alpha_i < C`).

    Predictions are the SVM's. Two classes only.

    Parameters
    ----------
    C : float, default=1.0
        ``C`` of the SVM and ``C_1`` of SVM_m.
    C2 : float, default=None
        SVM_m's band penalty; None is ``C / 3`` (mlsvm Sec. VII), as :class:`SVMm`.
    epsilon : float, default=3.0
        SVM_m's band width (0: eps-SVM).
    kernel, degree, sigma, normalize, solver, tol, max_iter, check_psd
        Passed to both models; see :class:`~methods.svm._base.BaseKernelSVM`.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    svm_ : SVM
        The fitted C-SVM.
    band_ : SVMm
        The fitted SVM_m (eps-SVM when ``epsilon=0``).
    check_ : dict
        ``max_margin``: :math:`\max_i y_i f_{SVM}(x_i)`; ``n_zero_alpha``: training
        points with :math:`\alpha_i \le 10^{-6} C`; ``free_multiplier``: whether some
        :math:`10^{-6} C < \alpha_i < C - 10^{-6} C`; ``max_decision_diff``:
        :math:`\max_i |f_{SVM}(x_i) - f_{SVM_m}(x_i)|` over the training points.
    converged_ : bool
        Both solvers converged.
    n_iter_ : int
        Solver iterations of both fits.
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseKernelSVM._parameter_constraints,
        "C": [_POSITIVE],
        "C2": [_POSITIVE, None],
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        C2: float | None = None,
        epsilon: float = 3.0,
        kernel: str | Callable = "linear",
        degree: int = 2,
        sigma: float = 1.0,
        normalize: str | None = None,
        solver: str = "auto",
        tol: float | None = None,
        max_iter: int | None = None,
        check_psd: bool = True,
    ) -> None:
        self.C = C
        self.C2 = C2
        self.epsilon = epsilon
        self.kernel = kernel
        self.degree = degree
        self.sigma = sigma
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.check_psd = check_psd

    def _shared(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in ("kernel", "degree", "sigma", "normalize", "solver", "tol",
                      "max_iter", "check_psd")
        }

    def fit(self, X, y) -> BandCheck:
        """Fit the SVM and SVM_m at ``C`` and measure the band (see ``check_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training data, or the training Gram matrix if ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Two class labels.

        Returns
        -------
        self : object
        """
        self._validate_params()
        svm = SVM(C=self.C, **self._shared()).fit(X, y)
        if len(svm.classes_) != 2:
            raise ValueError(
                f"BandCheck is a two-class check; y has {len(svm.classes_)} classes. "
                "Run it on a binary dataset."
            )
        band = SVMm(C=self.C, C2=self.C2, epsilon=self.epsilon, **self._shared())
        band.fit(X, y)
        # the training decision values: K(X_train, X_train) for a precomputed kernel
        f_svm = svm.decision_function(X)
        f_band = band.decision_function(X)
        s = np.where(np.asarray(y) == svm.classes_[1], 1.0, -1.0)
        alpha = np.abs(svm.dual_coef_[0])
        tol = 1e-6 * self.C
        self.svm_, self.band_ = svm, band
        self.classes_ = svm.classes_
        self.n_features_in_ = svm.n_features_in_
        self.converged_ = bool(svm.converged_ and band.converged_)
        self.n_iter_ = int(np.sum(svm.n_iter_) + np.sum(band.n_iter_))
        self.check_ = {
            "max_margin": float(np.max(s * f_svm)),
            "n_zero_alpha": int(np.sum(alpha <= tol)),
            "free_multiplier": bool(np.any((alpha > tol) & (alpha < self.C - tol))),
            "max_decision_diff": float(np.max(np.abs(f_svm - f_band))),
        }
        return self

    def decision_function(self, X) -> np.ndarray:
        """The SVM's decision values (see :meth:`SVM.decision_function`)."""
        check_is_fitted(self)
        return self.svm_.decision_function(X)

    def predict(self, X) -> np.ndarray:
        """The SVM's predictions."""
        check_is_fitted(self)
        return self.svm_.predict(X)
