r"""Multiple kernel learning on the simplex: SimpleMKL, MKL_m and ε-MKL.

All three learn a convex combination :math:`K(\mu) = \sum_k \mu_k K_k`,
:math:`\mu \in \Delta = \{\mu \ge 0, \sum_k \mu_k = 1\}`, by minimizing

.. math:: J(\mu) = \max_z \; -p^\top z - \tfrac12 g(z)^\top K(\mu)\, g(z)

over the simplex (mlsvm Eq. (23)), where :math:`J(\mu)` is the optimal value of the
inner SVM-like dual at fixed :math:`\mu`:

- SimpleMKL (mlsvm Eq. (2), the MKL of [2]): the C-SVM dual, :math:`z = \alpha`,
  :math:`g = y \circ \alpha`;
- MKL_m (mlsvm Eq. (22)): the SVM_m dual (mlsvm Eq. (15)), :math:`z = [\alpha;\beta]`,
  :math:`g = y \circ (\alpha - \beta)`;
- ε-MKL: MKL_m with :math:`\varepsilon = 0`.

The descent of :math:`J` (gradient, steps, stopping) is
:func:`methods.mkl._descent.reduced_gradient_mkl`; the base kernels and their
normalization are :mod:`methods.mkl._bank`. More than two classes: one-vs-one
(:mod:`methods._multiclass`), each pair with its own weights.

Scale of C. mlsvm Eq. (22) writes ``C1/2 sum xi`` next to ``1/2 sum <w_k, w_k>/mu_k``,
which would put the box at ``C1/2``; mlsvm Eq. (15) (SVM_m) and [2] (SimpleMKL) put it
at ``C``. We use the box ``0 <= alpha <= C``, ``0 <= beta <= C2`` of Eq. (15), so that
with one kernel MKL_m is exactly SVM_m and SimpleMKL is exactly the C-SVM of SVC.
Likewise mlsvm Eq. (2) writes a squared-slack, p-norm MKL_gamma; the SimpleMKL the
paper runs (Sec. VII) is the hinge-loss, 1-norm MKL of [2], implemented here.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from methods._kernels import KernelSpec
from methods._multiclass import (
    binary_problems,
    class_pairs,
    combine_decisions,
    encode_classes,
    predict_from_decision,
)
from methods._qp import BoxQP, csvm_dual, svmm_dual
from methods._renamed import RenamedAttribute
from methods._validation import check_input_kernel
from methods.mkl._bank import KernelBankMixin
from methods.mkl._descent import reduced_gradient_mkl

# fit_status_ codes: 0 converged, 1 max_iter reached, 2 line search stalled.
_STATUS = {
    "single_kernel": 0,
    "duality_gap": 0,
    "weight_change": 0,
    "max_iter": 1,
    "stalled": 2,
}


class _BaseMKL(KernelBankMixin, ClassifierMixin, BaseEstimator):
    """Shared fit/predict of the simplex-constrained MKL classifiers.

    Hooks a subclass writes:

    - ``_inner_problem(K, y)`` (required): the inner :class:`~methods._qp.BoxQP` for
      the combined kernel ``K`` and labels ``y`` in {-1, +1}.
    - ``paper_name`` (required): the display name of the method in the paper.
    """

    paper_name: str = ""
    objective_history_ = RenamedAttribute("objective_path_")
    kernel_weights_history_ = RenamedAttribute("kernel_weights_path_")

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "kernel": [StrOptions({"precomputed", "bank20"}), list, tuple],
        "normalize": [StrOptions({"cosine", "unit_trace", "feature_variance"}), None],
        "solver": [StrOptions({"auto", "smo", "ipm", "cvxopt"})],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "weight_tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "inner_tol": [Interval(Real, 0.0, None, closed="neither"), None],
        "check_psd": ["boolean"],
    }

    def _inner_problem(self, K: np.ndarray, y: np.ndarray) -> BoxQP:
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = (
            isinstance(self.kernel, str) and self.kernel == "precomputed"
        )
        return tags

    # -- fit / predict --------------------------------------------------------

    def fit(self, X, y):
        """Learn the kernel weights and the classifier of every class pair.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples, \
n_kernels)
            Raw data, or with ``kernel="precomputed"`` the stack of base kernels on
            the training points (a 2-D Gram matrix is a stack of one kernel).
        y : array-like of shape (n_samples,)
            Class labels; two or more classes (more than two: one-vs-one).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        name = type(self).__name__
        in_dtype = getattr(X, "dtype", None)
        X, y = validate_data(self, X, y, allow_nd=self._precomputed, dtype=np.float64)
        self.classes_, y_idx = encode_classes(y, name)
        stack = self._train_stack(X)
        if self._precomputed and self.check_psd:
            self._check_psd_stack(X, in_dtype)
        n, m = stack.shape[0], stack.shape[2]
        problems = binary_problems(y_idx, self.classes_.shape[0])
        n_pairs = len(problems)
        solver = self.solver
        inner_options = {} if self.inner_tol is None else {"tol": self.inner_tol}

        self.kernel_weights_ = np.empty((n_pairs, m))
        self.dual_coef_ = np.zeros((n_pairs, n))
        self.intercept_ = np.empty(n_pairs)
        self.objective_ = np.empty(n_pairs)
        self.duality_gap_ = np.empty(n_pairs)
        self.n_iter_ = np.empty(n_pairs, dtype=np.int64)
        self.n_inner_solves_ = np.empty(n_pairs, dtype=np.int64)
        self.stop_reasons_ = []
        self.objective_path_ = []
        self.kernel_weights_path_ = []
        n_unconverged = 0
        for p, (idx, y_pm) in enumerate(problems):
            sub = stack if idx.shape[0] == n else stack[np.ix_(idx, idx)]
            out = reduced_gradient_mkl(
                sub,
                lambda K, y_pm=y_pm: self._inner_problem(K, y_pm),
                solver=solver,
                tol=self.tol,
                weight_tol=self.weight_tol,
                max_iter=self.max_iter,
                inner_options=inner_options,
            )
            self.kernel_weights_[p] = out["mu"]
            self.dual_coef_[p, idx] = out["problem"].coef(out["result"].z)
            self.intercept_[p] = -out["result"].rho
            self.objective_[p] = out["objective"]
            self.duality_gap_[p] = out["gap"]
            self.n_iter_[p] = out["n_iter"]
            self.n_inner_solves_[p] = out["n_inner_solves"]
            self.stop_reasons_.append(out["stop_reason"])
            self.objective_path_.append(out["objective_history"])
            self.kernel_weights_path_.append(out["weights_history"])
            n_unconverged += out["n_inner_unconverged"]
        self.support_ = np.flatnonzero(np.any(self.dual_coef_ != 0.0, axis=0))
        self.fit_status_ = max(_STATUS[r] for r in self.stop_reasons_)
        self.converged_ = self.fit_status_ == 0
        self._warn_from_fit_status(
            class_pairs(self.classes_.shape[0]), n_unconverged, solver
        )
        return self

    @staticmethod
    def _check_psd_stack(X: np.ndarray, in_dtype) -> None:
        """Every member of the precomputed training stack, as given (unscaled)."""
        if X.ndim == 2:
            check_input_kernel(X, in_dtype)
            return
        for k in range(X.shape[2]):
            check_input_kernel(
                X[:, :, k], in_dtype, what=f"training kernel {k} of the stack"
            )

    def _warn_from_fit_status(self, pairs, n_unconverged: int, solver: str) -> None:
        name = type(self).__name__
        for p, reason in enumerate(self.stop_reasons_):
            # .tolist(): "(0, 1)", not numpy 2's "(np.int64(0), np.int64(1))"
            a, b = self.classes_[list(pairs[p])].tolist()
            where = "" if len(pairs) == 1 else f" for classes ({a!r}, {b!r})"
            if reason == "max_iter":
                warnings.warn(
                    f"{name} did not converge{where}: max_iter={self.max_iter} outer "
                    f"iterations left a relative duality gap of "
                    f"{self.duality_gap_[p]:.2e} > tol={self.tol}. Increase max_iter "
                    "or loosen tol.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            elif reason == "stalled":
                warnings.warn(
                    f"{name} stopped{where}: the line search found no decrease of J "
                    f"with a relative duality gap of {self.duality_gap_[p]:.2e} > "
                    f"tol={self.tol}. The inner solutions are likely too inexact: "
                    "lower inner_tol or use solver='cvxopt', or loosen tol.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
        if n_unconverged:
            warnings.warn(
                f"{name}: {n_unconverged} inner QP solve(s) with solver={solver!r} "
                "stopped before converging; J and its gradient are approximate. "
                "Loosen inner_tol or use another solver.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _problem_decisions(self, X) -> np.ndarray:
        check_is_fitted(self)
        stack = self._test_stack(X)
        n_test, n_train, m = stack.shape
        # T[t, p, k] = sum_j K_k(x_t, x_j) coef_pj, then weight by mu_pk.
        T = np.einsum("tjk,pj->tpk", stack, self.dual_coef_, optimize=True)
        return np.einsum("tpk,pk->tp", T, self.kernel_weights_) + self.intercept_

    def decision_function(self, X) -> np.ndarray:
        """Decision values.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features) or (n_test, n_train, n_kernels)
            Raw test points, or with ``kernel="precomputed"`` the stack of base
            kernels between test and training points.

        Returns
        -------
        decision : ndarray of shape (n_test,) or (n_test, n_classes)
            Two classes: ``f(x) = sum_k mu_k sum_i coef_i K_k(x, x_i) + b``, positive
            for ``classes_[1]``. More classes: one-vs-one votes plus a confidence
            term in (-1/3, 1/3) from the summed pair decisions (the "ovr" shape of
            SVC), whose argmax is the prediction.
        """
        return combine_decisions(self._problem_decisions(X), self.classes_.shape[0])

    def predict(self, X) -> np.ndarray:
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features) or (n_test, n_train, n_kernels)
            As in :meth:`decision_function`.

        Returns
        -------
        y_pred : ndarray of shape (n_test,)
        """
        return predict_from_decision(self.decision_function(X), self.classes_)


_SHARED_PARAMS_DOC = """
    kernel : {"bank20", "precomputed"} or list of KernelSpec, default="bank20"
        The base kernels. "bank20" is the 20-kernel bank of mlsvm Sec. VII
        (:func:`methods.kernels.bank20`: polynomial degrees 1..10, Gaussian
        sigma in {0.5, ..., 20}) on raw X. "precomputed": ``fit`` takes a stack of
        shape (n, n, n_kernels) and ``predict`` one of shape (n_test, n_train,
        n_kernels); a 2-D Gram matrix is a stack of one kernel.
    normalize : {"unit_trace", "feature_variance", "cosine"} or None, \
default="unit_trace"
        Normalization of each base kernel, fitted on the training points and applied
        with the same factor to test blocks. "unit_trace": ``K / trace(K_train)``,
        SimpleMKL's own (``UnitTraceNormalization`` of the toolbox of [2]);
        "feature_variance": unit variance in feature space,
        ``K / (mean(diag K_train) - mean(K_train))``; "cosine":
        ``K_ij / sqrt(K_ii K_jj)`` (mlsvm Sec. VII, raw X only). The default is
        "unit_trace" because mlsvm Sec. VII runs SimpleMKL on "the same set of basic
        kernels as the one used in SimpleMKL", and MKL_m / ε-MKL as its variants.
        With kernel="precomputed" a factor is fitted per slice of the stack.
    solver : {"auto", "smo", "ipm", "cvxopt"}, default="auto"
        Inner QP solver (:func:`methods._qp.solve_box_qp`); "cvxopt" is the slow
        reference. Inner solves are warm-started from the previous solution when
        the solver accepts a start.
    tol : float, default=1e-2
        Stop when the relative duality gap is at most ``tol`` ([2], Sec. 4.2;
        0.01 is ``seuildualitygap`` of the SimpleMKL toolbox).
    weight_tol : float, default=1e-6
        Also stop when an iteration changes no weight by more than ``weight_tol``.
    max_iter : int, default=500
        Maximal number of outer iterations per class pair (SimpleMKL's
        ``nbitermax``).
    inner_tol : float, default=None
        Tolerance of the inner solver; None keeps the solver's default.
    check_psd : bool, default=True
        With kernel="precomputed", check that every base kernel of the training
        stack is positive semi-definite, and raise
        :class:`~methods.exceptions.NonPSDKernelError` naming the first one that is
        not (or is asymmetric). The check is a Cholesky certificate per kernel
        (O(n^3 / 3); the eigendecomposition only when it fails): a runner that fits
        many models on one stack checks it once with
        :func:`~methods.check_psd_kernel` and passes ``check_psd=False``. Named
        kernels ("bank20", KernelSpec lists) are PSD by construction and never
        checked."""

_SHARED_ATTRS_DOC = """
    classes_ : ndarray of shape (n_classes,)
    kernel_weights_ : ndarray of shape (n_pairs, n_kernels)
        The weights ``mu`` on the simplex, one row per class pair
        (``n_pairs = n_classes (n_classes - 1) / 2``, pairs in the order of
        ``itertools.combinations``; one row for two classes).
    dual_coef_ : ndarray of shape (n_pairs, n_train)
        Per-sample coefficients ``coef_i`` of the decision function, 0 outside the
        pair and for non-support vectors.
    intercept_ : ndarray of shape (n_pairs,)
        ``b`` in ``f(x) = sum_k mu_k sum_i coef_i K_k(x, x_i) + b``.
    support_ : ndarray of int
        Training indices with a nonzero coefficient in some pair.
    objective_ : ndarray of shape (n_pairs,)
        ``J(mu)`` at the returned weights (maximization form of the inner dual).
    duality_gap_ : ndarray of shape (n_pairs,)
        Relative duality gap at the returned weights.
    objective_path_ : list of ndarray
        Per pair, ``J`` at the uniform start and after every iteration that moved;
        never increasing (formerly ``objective_history_``, deprecated).
    kernel_weights_path_ : list of ndarray of shape (n_accepted, n_kernels)
        Per pair, the weights matching ``objective_path_``
        (formerly ``kernel_weights_history_``, deprecated).
    n_iter_ : ndarray of shape (n_pairs,)
        Outer iterations: each computes the gap at the current weights and, above
        ``tol``, takes one descent step (a start that meets ``tol``, or a single
        kernel, counts as one).
    n_inner_solves_ : ndarray of shape (n_pairs,)
        Inner QP solves (gradient points, boundary points and line-search points).
    stop_reasons_ : list of str
        Per pair: "duality_gap", "weight_change", "single_kernel", "max_iter" or
        "stalled".
    fit_status_ : int
        0 if every pair converged, 1 if one hit ``max_iter``, 2 if a line search
        stalled above ``tol``.
    converged_ : bool
        ``fit_status_ == 0``.
    kernel_scales_ : ndarray of shape (n_kernels,)
        Factors applied to the base kernels (``normalize``).
    kernel_specs_ : list of KernelSpec or None
        The base kernels (None with kernel="precomputed").
    X_fit_ : ndarray of shape (n_train, n_features)
        Training points (raw-X path only).
    n_features_in_ : int"""

_REFERENCES_DOC = """
    .. [1] Paper A (key ``mlsvm``). A metric-learning-based SVM and MKL framework
       (``papers/A-mlsvm-metric-learning-svm-mkl.txt``; our copy carries no author
       or venue), Sec. II-A, VI and VII.
    .. [2] A. Rakotomamonjy, F. R. Bach, S. Canu, Y. Grandvalet. SimpleMKL. Journal
       of Machine Learning Research 9:2491-2521, 2008."""

# The snippets are pasted on their own lines of the class docstrings below.
_SHARED_PARAMS_DOC = _SHARED_PARAMS_DOC.lstrip("\n")
_SHARED_ATTRS_DOC = _SHARED_ATTRS_DOC.lstrip("\n")
_REFERENCES_DOC = _REFERENCES_DOC.lstrip("\n")


class SimpleMKL(_BaseMKL):
    __doc__ = rf"""SimpleMKL: 1-norm MKL with the hinge loss, by reduced gradient.

    Learns :math:`K(\mu) = \sum_k \mu_k K_k` on the simplex and a C-SVM on it,
    solving MKL_gamma (mlsvm Eq. (2), Sec. II-A, with the hinge loss and
    ``||mu||_1 = 1`` of [2]) as :math:`\min_\mu J(\mu)`,
    :math:`J(\mu) = \max_\alpha 1^\top\alpha - \frac12 \alpha^\top Y K(\mu) Y \alpha`,
    :math:`y^\top\alpha = 0`, :math:`0 \le \alpha \le C` ([2], Eq. (3)-(6)).
    More than two classes are handled one-vs-one, each pair with its own weights.

    Parameters
    ----------
    C : float, default=1.0
        Box constraint of the C-SVM dual.
{_SHARED_PARAMS_DOC}

    Attributes
    ----------
{_SHARED_ATTRS_DOC}

    See Also
    --------
    MKLm : MKL with the SVM_m inner problem.
    EpsMKL : MKL with the ε-SVM inner problem.

    References
    ----------
{_REFERENCES_DOC}

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from methods.mkl import SimpleMKL
    >>> X, y = make_classification(n_samples=40, n_features=4, random_state=0)
    >>> clf = SimpleMKL(C=10.0, solver="cvxopt").fit(X, y)
    >>> clf.kernel_weights_.shape
    (1, 20)
    >>> bool(abs(clf.kernel_weights_.sum() - 1.0) < 1e-12)
    True
    """

    paper_name = "SimpleMKL"

    def __init__(
        self,
        C: float = 1.0,
        *,
        kernel: str | Sequence[KernelSpec] = "bank20",
        normalize: str | None = "unit_trace",
        solver: str = "auto",
        tol: float = 1e-2,
        weight_tol: float = 1e-6,
        max_iter: int = 500,
        inner_tol: float | None = None,
        check_psd: bool = True,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.weight_tol = weight_tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.check_psd = check_psd

    def _inner_problem(self, K: np.ndarray, y: np.ndarray) -> BoxQP:
        return csvm_dual(K, y, self.C)


class _BandMKL(_BaseMKL):
    """MKL whose inner problem is the SVM_m dual (mlsvm Eq. (15))."""

    _parameter_constraints: dict = {
        **_BaseMKL._parameter_constraints,
        "C2": [Interval(Real, 0.0, None, closed="neither"), None],
    }

    def _epsilon(self) -> float:
        raise NotImplementedError

    def _inner_problem(self, K: np.ndarray, y: np.ndarray) -> BoxQP:
        # mlsvm Sec. VII: "we set C2 to C1/3".
        C2 = self.C / 3.0 if self.C2 is None else self.C2
        return svmm_dual(K, y, self.C, C2, self._epsilon())


_BAND_PARAMS_DOC = """
    C : float, default=1.0
        ``C1``, the box of ``alpha`` (margin slacks).
    C2 : float, default=None
        The box of ``beta`` (band slacks); None means ``C / 3`` (mlsvm Sec. VII)."""

_BAND_PARAMS_DOC = _BAND_PARAMS_DOC.lstrip("\n")


class MKLm(_BandMKL):
    __doc__ = rf"""MKL_m: multiple kernel learning with the SVM_m inner problem.

    Solves mlsvm Eq. (22)-(23): :math:`\min_{{\mu \in \Delta}} J(\mu)` with
    :math:`J(\mu)` the optimum of the SVM_m dual (mlsvm Eq. (15)) for
    :math:`K(\mu)`,

    .. math:: J(\mu) = \max_{{\alpha, \beta}} \sum_i \alpha_i - (1 + \varepsilon)
        \sum_i \beta_i - \frac12 \sum_{{ij}} (\alpha_i - \beta_i)(\alpha_j - \beta_j)
        y_i y_j K(\mu)_{{ij}},

    :math:`\sum_i (\alpha_i - \beta_i) y_i = 0`, :math:`0 \le \alpha \le C`,
    :math:`0 \le \beta \le C_2`, by SimpleMKL's reduced gradient ([2]) with the
    gradient of mlsvm Sec. VI-B. It maximizes the margin and keeps the points within
    a band of width :math:`\varepsilon` times the margin. More than two classes:
    one-vs-one, each pair with its own weights.

    Parameters
    ----------
{_BAND_PARAMS_DOC}
    epsilon : float, default=3.0
        Band width relative to the margin (mlsvm Sec. VII: "ε is set to three").
{_SHARED_PARAMS_DOC}

    Attributes
    ----------
{_SHARED_ATTRS_DOC}

    See Also
    --------
    SimpleMKL : the C-SVM inner problem (the limit ``epsilon -> inf``).
    EpsMKL : ``epsilon = 0``.

    References
    ----------
{_REFERENCES_DOC}
    """

    paper_name = "MKL_m"

    _parameter_constraints: dict = {
        **_BandMKL._parameter_constraints,
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        C2: float | None = None,
        epsilon: float = 3.0,
        kernel: str | Sequence[KernelSpec] = "bank20",
        normalize: str | None = "unit_trace",
        solver: str = "auto",
        tol: float = 1e-2,
        weight_tol: float = 1e-6,
        max_iter: int = 500,
        inner_tol: float | None = None,
        check_psd: bool = True,
    ) -> None:
        self.C = C
        self.C2 = C2
        self.epsilon = epsilon
        self.kernel = kernel
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.weight_tol = weight_tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.check_psd = check_psd

    def _epsilon(self) -> float:
        return float(self.epsilon)


class EpsMKL(_BandMKL):
    __doc__ = rf"""ε-MKL: multiple kernel learning with the ε-SVM inner problem.

    MKL_m (mlsvm Eq. (22)) with :math:`\varepsilon = 0`: the inner problem is the
    ε-SVM of mlsvm Eq. (7) written as SVM_m with a zero band (mlsvm Sec. VI-B), so
    the learned combination maximizes the margin and minimizes the summed distances
    to the margin hyperplanes. More than two classes: one-vs-one.

    Parameters
    ----------
{_BAND_PARAMS_DOC}
{_SHARED_PARAMS_DOC}

    Attributes
    ----------
{_SHARED_ATTRS_DOC}

    See Also
    --------
    MKLm : the same with a band ``epsilon > 0``.
    SimpleMKL : the C-SVM inner problem.

    References
    ----------
{_REFERENCES_DOC}
    """

    paper_name = "ε-MKL"

    def __init__(
        self,
        C: float = 1.0,
        *,
        C2: float | None = None,
        kernel: str | Sequence[KernelSpec] = "bank20",
        normalize: str | None = "unit_trace",
        solver: str = "auto",
        tol: float = 1e-2,
        weight_tol: float = 1e-6,
        max_iter: int = 500,
        inner_tol: float | None = None,
        check_psd: bool = True,
    ) -> None:
        self.C = C
        self.C2 = C2
        self.kernel = kernel
        self.normalize = normalize
        self.solver = solver
        self.tol = tol
        self.weight_tol = weight_tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.check_psd = check_psd

    def _epsilon(self) -> float:
        return 0.0
