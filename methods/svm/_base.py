r"""Shared base of the kernel SVM estimators (mlsvm Sec. II-A, III, IV-B).

:class:`BaseKernelSVM` does everything but build the dual: kernel computation
(named kernel, callable or precomputed Gram), input validation, label encoding,
one-vs-one decomposition (:mod:`methods._multiclass`), the call to
:func:`methods._qp.solve_box_qp`, fitted attributes, convergence reporting and
prediction. A subclass supplies the dual.

Hooks a subclass writes (required, then optional):

- ``_binary_problem(K, y, X)`` (required): the :class:`~methods._qp.BoxQP` of one
  two-class problem, given the training Gram ``K`` of its samples, labels ``y`` in
  {-1, +1} and their features ``X`` (None for a precomputed kernel).
- ``supported_kernels`` (optional): the kernel specs the method accepts; the
  default is every named kernel, a callable and "precomputed".
- ``_problem_decisions(X)`` (optional): decision values of every binary problem
  for test inputs, shape (n_test, n_problems); the default is the dual expansion
  :math:`f(x) = \sum_i \text{dual\_coef}_i k(x, x_i) + \text{intercept}`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from methods._kernels import KernelEstimatorMixin
from methods._multiclass import (
    binary_problems,
    combine_decisions,
    encode_classes,
    predict_from_decision,
)
from methods._qp import SOLVERS, BoxQP, solve_box_qp
from methods._validation import (
    check_input_kernel,
    check_psd_kernel,
    is_clean_float_matrix,
    validate_float_input,
)

#: Named kernels of :func:`methods._kernels.pairwise_kernel` plus the Gram-matrix
#: input; "callable" stands for any callable ``kernel(X, Y)``.
ALL_KERNELS = ("linear", "poly", "gaussian", "precomputed", "callable")


class BaseKernelSVM(KernelEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Base of the SVM-family classifiers; see the module docstring for the hooks.

    Parameters
    ----------
    kernel : {"linear", "poly", "gaussian", "precomputed"} or callable, \
            default="linear"
        ``"precomputed"``: ``fit`` takes the (n_train, n_train) Gram matrix and
        ``predict`` the (n_test, n_train) block ``K(X_test, X_train)``. A callable
        ``kernel(X, Y)`` returns the raw block.
    degree : int, default=2
        Degree of the polynomial kernel ``(x . y + 1) ** degree``.
    sigma : float, default=1.0
        Bandwidth of the Gaussian kernel ``exp(-||x - y||^2 / (2 sigma^2))``.
    normalize : {None, "cosine"}, default=None
        ``"cosine"``: ``K_ij / sqrt(K_ii K_jj)`` as in mlsvm Sec. VII. Not with
        ``kernel="precomputed"`` (a ``ValueError``: normalize the Gram matrices
        beforehand), as FDA and MKL.
    solver : {"auto", "auto_path", "smo", "ipm", "cvxopt"}, default="auto"
        QP solver, see :func:`methods._qp.solve_box_qp`; "cvxopt" is the slow
        dense reference; "auto_path" is "auto" that skips SMO on a problem whose
        smaller-C version (same data, earlier in the process, as in a grid
        search) went to the interior point.
    tol : float, default=None
        Stopping tolerance on the maximal KKT violation of the dual; None is the
        solver's default (1e-4 for "auto", "smo" and "ipm", which keeps the dual
        objective within 1e-6 relative of the cvxopt reference).
    max_iter : int, default=None
        Cap on solver iterations (SMO pair updates for "auto" and "smo"); None is
        LIBSVM's ``max(10_000_000, 100 * n_variables)``.
    check_psd : bool, default=True
        Check that a user-supplied kernel (callable or precomputed) gives a
        positive semi-definite training Gram matrix, and raise
        :class:`~methods.exceptions.NonPSDKernelError` otherwise. The check is a
        Cholesky certificate (O(n^3 / 3); the eigendecomposition only when it
        fails), about the time of one fit at n = 4000 with C = 100 and 2-16x a fit
        with C = 1 (``benchmarks/bench_qp.py --psd``): a runner that fits many
        models on one Gram matrix checks it once with :func:`check_psd_kernel`
        and passes ``check_psd=False``.
        Named kernels are PSD by construction and never checked.
    """

    paper_name: ClassVar[str] = ""
    supported_kernels: ClassVar[tuple[str, ...]] = ALL_KERNELS
    #: False when ``_binary_problem`` ignores ``K`` (it then receives None), so
    #: ``fit`` does not build a training Gram matrix.
    _uses_gram: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict] = {
        "kernel": [StrOptions({"linear", "poly", "gaussian", "precomputed"}), callable],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "sigma": [Interval(Real, 0.0, None, closed="neither")],
        "normalize": [StrOptions({"cosine"}), None],
        "solver": [StrOptions(set(SOLVERS))],
        "tol": [Interval(Real, 0.0, None, closed="neither"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "check_psd": ["boolean"],
    }

    def __init__(
        self,
        *,
        kernel: str | Callable = "linear",
        degree: int = 2,
        sigma: float = 1.0,
        normalize: str | None = None,
        solver: str = "auto",
        tol: float | None = None,
        max_iter: int | None = None,
        check_psd: bool = True,
    ) -> None:
        self.kernel = kernel
        self.degree = degree
        self.sigma = sigma
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.check_psd = check_psd

    @classmethod
    def _get_param_names(cls) -> list[str]:
        # A class's constructor parameters never change, but scikit-learn inspects
        # its signature on every get_params, and clone calls that twice per fit:
        # ~0.5 ms of a grid search's small fits. Kept per class (subclasses add
        # parameters), in the class's own __dict__.
        names = cls.__dict__.get("_param_names_memo")
        if names is None:
            names = tuple(super()._get_param_names())
            cls._param_names_memo = names
        return list(names)

    # ----------------------------------------------------------------- hooks
    def _binary_problem(
        self, K: np.ndarray, y: np.ndarray, X: np.ndarray | None
    ) -> BoxQP:
        raise NotImplementedError

    # --------------------------------------------------------------- kernels
    @property
    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _check_kernel_supported(self) -> None:
        name = "callable" if callable(self.kernel) else self.kernel
        if name not in self.supported_kernels:
            allowed = ", ".join(repr(k) for k in self.supported_kernels)
            raise ValueError(
                f"{type(self).__name__} ({self.paper_name}) does not support "
                f"kernel={self.kernel!r}; supported: {allowed}."
            )

    def _validate_fit_input(self, X, y) -> tuple[np.ndarray, np.ndarray]:
        X, y = validate_float_input(self, X, y)
        if self._precomputed:
            self._check_training_gram(X)
        return X, y

    def _validate_test_input(self, X) -> np.ndarray:
        if self._precomputed:
            X = X if is_clean_float_matrix(X, 1) else check_array(X, dtype=np.float64)
            n_train = self.dual_coef_.shape[1]
            if X.shape[1] != n_train:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is "
                    f"expecting {n_train} features as input: with kernel="
                    "'precomputed', predict takes K(X_test, X_train) of shape "
                    f"(n_test, n_train) = (n_test, {n_train}); got a "
                    f"{X.shape[0]}x{X.shape[1]} matrix."
                )
        return validate_float_input(self, X, reset=False)

    # ------------------------------------------------------------------- fit
    def fit(self, X, y) -> BaseKernelSVM:
        """Fit one dual per pair of classes (one-vs-one).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training data, or the training Gram matrix if ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        self._check_kernel_supported()
        in_dtype = getattr(X, "dtype", None)
        X, y = self._validate_fit_input(X, y)
        self.classes_, y_enc = encode_classes(y, type(self).__name__)
        n = X.shape[0]
        if self._precomputed:
            K = X
            if self.check_psd:
                check_input_kernel(K, in_dtype)
            # a refit on a Gram matrix keeps no training points of an earlier fit
            self.__dict__.pop("X_fit_", None)
        else:
            # SVMFDA builds its own Gram matrix (of transformed features).
            K = self._gram(X) if self._uses_gram else None
            if K is not None and self.check_psd and callable(self.kernel):
                check_psd_kernel(K, what="training Gram matrix of the callable kernel")
            self.X_fit_ = X
        # The numba solvers want C-ordered, writable float64 (a read-only memmap
        # from joblib would compile a second specialization).
        if K is not None:
            K = np.require(K, dtype=np.float64, requirements=["C", "W"])

        problems = binary_problems(y_enc, len(self.classes_))
        n_pairs = len(problems)
        self.dual_coef_ = np.zeros((n_pairs, n))
        self.intercept_ = np.zeros(n_pairs)
        self.objective_ = np.zeros(n_pairs)
        self.n_iter_ = np.zeros(n_pairs, dtype=np.int64)
        converged = np.ones(n_pairs, dtype=bool)
        violations = []
        for k, (rows, y_pair) in enumerate(problems):
            whole = len(rows) == n
            if K is None:
                K_pair = None
            else:
                K_pair = K if whole else K[np.ix_(rows, rows)]
            X_pair = None if self._precomputed else X[rows]
            problem = self._binary_problem(K_pair, y_pair, X_pair)
            res = solve_box_qp(
                problem, solver=self.solver, tol=self.tol, max_iter=self.max_iter
            )
            self.dual_coef_[k, rows] = problem.coef(res.z)
            self.intercept_[k] = -res.rho
            # The solvers minimize 1/2 z'Qz + p'z; the paper's duals maximize.
            self.objective_[k] = -res.objective
            self.n_iter_[k] = res.n_iter
            converged[k] = res.converged
            violations.append(res.info.get("violation", np.nan))
        self.support_ = np.flatnonzero(np.any(self.dual_coef_ != 0.0, axis=0))
        self.converged_ = bool(np.all(converged))
        self.fit_status_ = 0 if self.converged_ else 1
        if not self.converged_:
            worst = np.nanmax(violations) if np.any(np.isfinite(violations)) else None
            detail = "" if worst is None else f" (maximal KKT violation {worst:.3g})"
            # max_iter=None is the solver's own cap, which "max_iter=None" hides
            cap = (
                f"max_iter={self.max_iter}"
                if self.max_iter is not None
                else f"its default cap of {int(self.n_iter_[~converged].max())} "
                "iterations (max_iter=None)"
            )
            warnings.warn(
                f"{type(self).__name__} did not converge: the {self.solver!r} solver "
                f"stopped at {cap} on {int((~converged).sum())} "
                f"of {n_pairs} two-class problem(s){detail}. Increase max_iter, "
                "raise tol, or use solver='ipm' for large C.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    # --------------------------------------------------------------- predict
    def _problem_decisions(self, X: np.ndarray) -> np.ndarray:
        sv = self.support_
        if self._precomputed:
            K = X[:, sv]
        elif len(sv):
            K = self._gram(X, self.X_fit_[sv])
        else:
            K = np.zeros((X.shape[0], 0))
        return K @ self.dual_coef_[:, sv].T + self.intercept_

    def decision_function(self, X) -> np.ndarray:
        """Decision values: positive for ``classes_[1]`` with two classes.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features) or (n_test, n_train)
            Test data, or ``K(X_test, X_train)`` if ``kernel="precomputed"``.

        Returns
        -------
        ndarray of shape (n_test,) or (n_test, n_classes)
            Two classes: ``f(x) = sum_i dual_coef_i k(x, x_i) + intercept``. More
            classes: one-vs-one votes plus a confidence term in (-1/3, 1/3) that
            breaks ties, as scikit-learn's ``OneVsOneClassifier``.
        """
        check_is_fitted(self)
        X = self._validate_test_input(X)
        return combine_decisions(self._problem_decisions(X), len(self.classes_))

    def predict(self, X) -> np.ndarray:
        """Predicted class labels (one-vs-one vote for more than two classes).

        Parameters
        ----------
        X : array-like of shape (n_test, n_features) or (n_test, n_train)
            Test data, or ``K(X_test, X_train)`` if ``kernel="precomputed"``.

        Returns
        -------
        ndarray of shape (n_test,)
        """
        return predict_from_decision(self.decision_function(X), self.classes_)
