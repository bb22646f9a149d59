r"""LMNN with multiple kernels (lmnnmkl): LMNN_H, LMNN-MKL_CV, NR-LMNN-MKL, LMNN-MKL_P.

Every estimator takes a kernel bank as a precomputed stack (lmnnmkl Sec. 6): fit on
the training block ``K`` of shape ``(n, n, m)``, predict on the test block
``(n_test, n, m)``; a 2-D Gram matrix is a bank of one kernel. Each kernel of the
bank is normalized by the mean of its *training* diagonal (``normalize="mean_diag"``,
Sec. 6: "Each basic kernel K_k was normalized by the average of its diag(K_k)"); the
test block is divided by the same training mean. The learned metric works on the
empirical kernel map of eq. 2 (the rows of the kernel matrix, ``A`` is n x n) and
classifies with 1-NN (Sec. 6: "After learning the metric and the multiple kernel
combination we used 1-NN for classification"), through the project's one LMNN and
:class:`MetricKNN`.

- :class:`LMNNKernelSum` (LMNN_H): LMNN on the unweighted sum of the kernels, the
  feature space H of Sec. 2 (all ``mu_l = 1``).
- :class:`LMNNSingleKernel` (LMNN-MKL_CV): LMNN on one kernel of the bank; the
  harness picks ``kernel_index`` by 2-fold inner CV (Sec. 6).
- :class:`NRLMNNMKL` (NR-LMNN-MKL, eq. 13-14): LMNN on the concatenated kernel-map
  columns ``Phi_Z(x) = (K^x_1, ..., K^x_m)`` of a few kernels, a full ``mn x mn`` A''.
- :class:`LMNNMKLP` (LMNN-MKL_P, eq. 15-18 and Algorithm 1): alternates the weight
  step of eq. 15-17 (:mod:`methods.metric_learning._kernel_weights`) and LMNN on
  ``K_mu`` warm-started from the previous ``A``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from methods._renamed import RenamedAttribute
from methods._validation import validate_test_kernel
from methods.metric_learning._kernel_weights import PStepProblem, weight_step


def _lmnn(**params):
    from methods.metric_learning import LMNN

    return LMNN(**params)


def _metric_knn(learner):
    from methods.metric_learning import MetricKNN

    return MetricKNN(metric_learner=learner, n_neighbors=1)


class _KernelBankLMNN(ClassifierMixin, BaseEstimator):
    """What the estimators share: the stack, its normalization, checks, 1-NN.

    Hooks a subclass writes: ``paper_name``; ``_fit(K, y)`` on the normalized
    training stack, setting ``knn_`` (a fitted :class:`MetricKNN`); and
    ``_features(K)`` mapping a normalized stack (training or test block) to the input
    of ``knn_``.
    """

    paper_name: str = ""

    _parameter_constraints: dict = {
        "kernel": [StrOptions({"precomputed"})],
        "normalize": [StrOptions({"mean_diag"}), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "push_weight": [Interval(Real, 0, 1, closed="both")],
        "margin": [Interval(Real, 0, None, closed="neither")],
        "check_psd": ["boolean"],
        # a Mapping, not dict: the runner's instantiate passes a Hydra DictConfig
        # (`method.lmnn_params='{max_iter: 200}'`)
        "lmnn_params": [Mapping, None],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        return tags

    def _lmnn_params(self, kernel):
        params = dict(
            n_neighbors=self.n_neighbors,
            push_weight=self.push_weight,
            margin=self.margin,
            kernel=kernel,
        )
        if kernel == "precomputed":
            # LMNN's input is one member of the stack, their sum or a combination
            # with weights mu >= 0: PSD when the members are, which fit checked
            # (check_psd=True) or the caller vouched for (check_psd=False)
            params["check_psd"] = False
        params.update(dict(self.lmnn_params or {}))
        return params

    #: LMNN arguments the estimator sets itself: its own parameters of the same
    #: name (which also size the class check and the target neighbours), and the
    #: input LMNN gets (``kernel``). ``lmnn_params`` may not set them: the value
    #: there silently overrode (or, in NR-LMNN-MKL, contradicted) the estimator's.
    _lmnn_params_passed: tuple[str, ...] = ("n_neighbors", "push_weight", "margin")
    _lmnn_params_set: tuple[str, ...] = ("kernel",)

    def _check_lmnn_params(self) -> None:
        given = self.lmnn_params or {}
        name = self.paper_name or type(self).__name__
        cls = type(self).__name__
        for key in self._lmnn_params_passed:
            if key in given:
                raise ValueError(
                    f"{name}: lmnn_params sets {key!r}, which {cls} passes to its "
                    f"LMNN from its own parameter ({key}={getattr(self, key)!r} "
                    f"here); pass {key}={given[key]!r} to {cls} itself (config: "
                    f"method.{key}) and drop it from lmnn_params."
                )
        for key in self._lmnn_params_set:
            if key in given:
                raise ValueError(
                    f"{name}: lmnn_params sets {key!r}, which {cls} sets on its "
                    f"LMNN itself; drop it from lmnn_params."
                )

    def _check_params(self) -> None:
        """Checks ``_parameter_constraints`` cannot express (none here)."""

    def _normalized(self, K: np.ndarray) -> np.ndarray:
        return K if self.kernel_scales_ is None else K / self.kernel_scales_

    def fit(self, X, y):
        """Fit on the training stack ``X`` of shape (n, n, m) (or a Gram (n, n)).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_samples, n_kernels) or (n, n)
            Unnormalized training kernels.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        self._check_lmnn_params()
        self._check_params()
        name = self.paper_name or type(self).__name__
        X, y = validate_data(self, X, y, allow_nd=True, dtype=np.float64)
        K = X[:, :, None] if X.ndim == 2 else X
        if K.ndim != 3 or K.shape[0] != K.shape[1]:
            raise ValueError(
                f"{name} takes a precomputed kernel stack of shape (n, n, n_kernels) "
                f"or a Gram matrix (n, n); got shape {X.shape}. Pass the training "
                "block of every kernel (methods.kernels.kernel_stack)."
            )
        check_classification_targets(y)
        self.classes_, counts = np.unique(y, return_counts=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{name} needs samples of at least 2 classes; y has only one class "
                f"({self.classes_[:1].tolist()[0]!r}). Use a stratified split."
            )
        if counts.min() < self.n_neighbors + 1:
            c = self.classes_[int(np.argmin(counts))].item()
            raise ValueError(
                f"{name} needs {self.n_neighbors + 1} training samples per class "
                f"(n_neighbors={self.n_neighbors} target neighbours plus the point); "
                f"class {c!r} has {counts.min()}. Lower n_neighbors or use fewer "
                "folds."
            )
        self.n_kernels_ = K.shape[2]
        self.kernel_scales_ = None
        if self.normalize == "mean_diag":
            scales = np.mean(np.diagonal(K, axis1=0, axis2=1), axis=1)
            if np.any(scales <= 0):
                bad = int(np.flatnonzero(scales <= 0)[0])
                raise ValueError(
                    f"kernel {bad} of the stack has mean diagonal {scales[bad]:.3g} "
                    "<= 0 on the training block; normalize='mean_diag' needs a "
                    "positive one. Check the kernel or pass normalize=None."
                )
            self.kernel_scales_ = scales
        K = self._normalized(K)
        if self.check_psd:
            from methods._validation import check_psd_kernel

            for k in self._used_kernels():
                check_psd_kernel(
                    K[:, :, k],
                    what=f"training kernel {k} of the stack (after normalize="
                    f"{self.normalize!r})",
                )
        self._fit(K, y)
        return self

    def _used_kernels(self) -> list[int]:
        return list(range(self.n_kernels_))

    def _check_test(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_test_kernel(self, X, n_kernels=self.n_kernels_)
        K = X[:, :, None] if X.ndim == 2 else X
        return self._normalized(K)

    def predict(self, X) -> np.ndarray:
        """1-NN labels of the test block ``X`` (n_test, n_train, n_kernels)."""
        features = self._features(self._check_test(X))
        return self.knn_.predict(features)

    def _record_solver(self, learner) -> None:
        for attr in ("objective_", "n_iter_", "converged_"):
            if hasattr(learner, attr):
                setattr(self, attr, getattr(learner, attr))

    def _fit_knn(self, features: np.ndarray, y: np.ndarray, kernel) -> None:
        self.knn_ = _metric_knn(_lmnn(**self._lmnn_params(kernel))).fit(features, y)
        self._record_solver(fitted_learner(self.knn_))


def fitted_learner(knn):
    """The fitted metric learner inside a :class:`MetricKNN`."""
    return knn.metric_learner_


class LMNNKernelSum(_KernelBankLMNN):
    """LMNN_H (lmnnmkl Sec. 6): LMNN on the unweighted sum of the bank's kernels.

    The sum ``K_H = sum_l K_l`` is the kernel of the feature space H of Sec. 2 (the
    unweighted concatenation, all ``mu_l = 1`` in eq. 4); LMNN learns ``A`` on its
    kernel map (eq. 2) and 1-NN classifies.

    Parameters
    ----------
    kernel : {"precomputed"}
        Input is a kernel stack (n, n, m) or a Gram matrix (n, n).
    normalize : {"mean_diag"} or None, default="mean_diag"
        Divide each kernel by the mean of its training diagonal (Sec. 6).
    n_neighbors : int, default=5
        LMNN's k target neighbours (Sec. 6: 5).
    push_weight : float, default=0.5
        LMNN's gamma of eq. 18 (Sec. 6: 0.5).
    margin : float, default=1.0
    check_psd : bool, default=True
        Refuse a training kernel that is not PSD after normalization.
    lmnn_params : dict (any mapping), default=None
        Further arguments of LMNN (e.g. ``max_iter``). Not ``n_neighbors``,
        ``push_weight`` or ``margin`` (this estimator's own parameters, passed on
        to LMNN) nor ``kernel`` (set here): ``fit`` raises a ``ValueError``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        Training points (the stack's second axis).
    n_kernels_ : int
        Members of the training stack (1 for a Gram matrix).
    kernel_scales_ : ndarray of shape (n_kernels,) or None
        The training mean diagonals each kernel is divided by
        (``normalize="mean_diag"``); None without normalization.
    knn_ : MetricKNN
        The fitted 1-NN that ``predict`` uses: here and in LMNN-MKL_CV with the
        LMNN as its ``metric_learner_``; in NR-LMNN-MKL and LMNN-MKL_P on the
        training points already mapped by ``metric_learner_``.
    objective_, n_iter_, converged_
        The LMNN's (lmnnmkl eq. 18).
    """

    paper_name = "LMNN_H"

    def __init__(
        self,
        *,
        kernel="precomputed",
        normalize="mean_diag",
        n_neighbors=5,
        push_weight=0.5,
        margin=1.0,
        check_psd=True,
        lmnn_params=None,
    ):
        self.kernel = kernel
        self.normalize = normalize
        self.n_neighbors = n_neighbors
        self.push_weight = push_weight
        self.margin = margin
        self.check_psd = check_psd
        self.lmnn_params = lmnn_params

    def _features(self, K):
        return K.sum(axis=2)

    def _fit(self, K, y):
        self._fit_knn(self._features(K), y, "precomputed")


class LMNNSingleKernel(_KernelBankLMNN):
    """LMNN on one kernel of the bank: LMNN-MKL_CV once ``kernel_index`` is chosen.

    lmnnmkl Sec. 6: "a kernel is selected from a set of kernels using 2-fold inner
    cross-validation (CV)". The harness searches ``kernel_index`` over the bank with
    the protocol's inner folds (conf/method/lmnn_mkl_cv.yaml); outside it, wrap this
    estimator in ``GridSearchCV(..., {"kernel_index": range(m)}, cv=2)``.

    The paper gives no equation for LMNN-MKL_CV or its kernel selection; Sec. 6
    describes it in words (and Sec. 1 the single-kernel CV approach). For a chosen
    kernel ``l`` it solves the single-kernel problem of eq. 3 on the kernel map of
    eq. 2, ``d_A^2 = (K^i_l - K^j_l)^T A (K^i_l - K^j_l)``, with h = LMNN, i.e.
    eq. 18 with ``mu`` fixed to the l-th unit vector (``P = e_l e_l^T``, a vertex
    of the simplex of eq. 4; ``kernel_weights_``); then 1-NN (Sec. 6).

    Parameters
    ----------
    kernel_index : int, default=0
        The member of the stack LMNN uses.
    kernel, normalize, n_neighbors, push_weight, margin, check_psd, lmnn_params
        As :class:`LMNNKernelSum`.

    Attributes
    ----------
    kernel_weights_ : ndarray of shape (n_kernels,)
        ``mu``: the unit vector of ``kernel_index``.
    classes_, n_features_in_, n_kernels_, kernel_scales_, knn_, objective_, \
n_iter_, converged_
        As :class:`LMNNKernelSum`.
    """

    paper_name = "LMNN-MKL_CV"

    _parameter_constraints = {
        **_KernelBankLMNN._parameter_constraints,
        "kernel_index": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        kernel_index=0,
        kernel="precomputed",
        normalize="mean_diag",
        n_neighbors=5,
        push_weight=0.5,
        margin=1.0,
        check_psd=True,
        lmnn_params=None,
    ):
        self.kernel_index = kernel_index
        self.kernel = kernel
        self.normalize = normalize
        self.n_neighbors = n_neighbors
        self.push_weight = push_weight
        self.margin = margin
        self.check_psd = check_psd
        self.lmnn_params = lmnn_params

    def _used_kernels(self):
        if self.kernel_index >= self.n_kernels_:
            raise ValueError(
                f"kernel_index={self.kernel_index} but the stack has "
                f"{self.n_kernels_} kernels; use 0..{self.n_kernels_ - 1}."
            )
        return [self.kernel_index]

    def _features(self, K):
        return K[:, :, self.kernel_index]

    def _fit(self, K, y):
        w = np.zeros(self.n_kernels_)
        w[self.kernel_index] = 1.0
        self.kernel_weights_ = w
        self._fit_knn(self._features(K), y, "precomputed")


class NRLMNNMKL(_KernelBankLMNN):
    """NR-LMNN-MKL (lmnnmkl eq. 13-14): LMNN on the concatenated kernel maps.

    Each point is ``Phi_Z(x) = ((K^x_1)^T, ..., (K^x_m)^T)^T`` (eq. 13), an ``mn``
    vector; LMNN learns a full PSD ``A''`` (eq. 12) of size ``mn x mn`` on these
    features, without the block structure of eq. 11. Sec. 6 uses three kernels of the
    bank: the linear (polynomial degree 1), the polynomial of degree 2 and the
    Gaussian of width 0.5.

    Sec. 5 says only that NR-LMNN-MKL "consists simply of the application of LMNN
    on the space HZ"; the metric that picks LMNN's target neighbours (S of eq. 18,
    fixed before learning) is left open, hence ``kernel_neighbors``. The learned
    metric starts from ``A'' = I`` (LMNN's ``init="identity"``) and a test point is
    mapped by eq. 2, its kernel values against the training points (each block
    divided by the training mean diagonal), then classified by 1-NN in the learned
    space.

    Parameters
    ----------
    kernel_indices : list of int or None, default=None
        The members of the stack used (the harness passes [0, 1, 10] of the
        20-kernel bank); None uses all.
    kernel_neighbors : {"kernel_map", "feature_space"}, default="kernel_map"
        The input metric of the target neighbours. ``"kernel_map"``: the Euclidean
        distance between the concatenated kernel maps ``Phi_Z`` (eq. 13 with
        ``A'' = I``), what LMNN run on HZ as on any feature vectors does.
        ``"feature_space"``: the distance in H, the unweighted concatenation of
        the feature spaces (Sec. 2), ``sum_l K_l,ii + K_l,jj - 2 K_l,ij``, the
        rule LMNN_H, LMNN-MKL_CV and LMNN-MKL_P use (``LMNN(kernel_neighbors=
        "feature_space")``); with the same kernels, LMNN_H's targets.
    kernel, normalize, n_neighbors, push_weight, margin, check_psd, lmnn_params
        As :class:`LMNNKernelSum`; ``lmnn_params`` may not hold
        ``kernel_neighbors`` (LMNN ignores it on features: pass it as this
        estimator's own parameter).

    Attributes
    ----------
    metric_learner_ : LMNN
        The fitted LMNN on the concatenated kernel maps (``components_`` is
        ``L``, ``A'' = L^T L``).
    target_neighbors_ : ndarray of shape (n_samples, n_neighbors)
    classes_, n_features_in_, n_kernels_, kernel_scales_, knn_, objective_, \
n_iter_, converged_
        As :class:`LMNNKernelSum`.
    """

    paper_name = "NR-LMNN-MKL"

    _parameter_constraints = {
        **_KernelBankLMNN._parameter_constraints,
        "kernel_indices": ["array-like", None],
        "kernel_neighbors": [StrOptions({"kernel_map", "feature_space"})],
    }

    def __init__(
        self,
        *,
        kernel_indices=None,
        kernel_neighbors="kernel_map",
        kernel="precomputed",
        normalize="mean_diag",
        n_neighbors=5,
        push_weight=0.5,
        margin=1.0,
        check_psd=True,
        lmnn_params=None,
    ):
        self.kernel_indices = kernel_indices
        self.kernel_neighbors = kernel_neighbors
        self.kernel = kernel
        self.normalize = normalize
        self.n_neighbors = n_neighbors
        self.push_weight = push_weight
        self.margin = margin
        self.check_psd = check_psd
        self.lmnn_params = lmnn_params

    def _used_kernels(self):
        if self.kernel_indices is None:
            return list(range(self.n_kernels_))
        idx = [int(i) for i in self.kernel_indices]
        if not idx or min(idx) < 0 or max(idx) >= self.n_kernels_:
            raise ValueError(
                f"kernel_indices={idx} must name members 0..{self.n_kernels_ - 1} of "
                "the stack."
            )
        return idx

    def _features(self, K):
        return np.concatenate([K[:, :, k] for k in self._used_kernels()], axis=1)

    def _targets(self, K: np.ndarray, F: np.ndarray, y: np.ndarray) -> np.ndarray:
        from methods.metric_learning import target_neighbors

        if self.kernel_neighbors == "kernel_map":
            return target_neighbors(F, y, self.n_neighbors)
        D = np.zeros(K.shape[:2])
        for k in self._used_kernels():
            d = np.diag(K[:, :, k])
            D += d[:, None] + d[None, :] - K[:, :, k] - K[:, :, k].T
        np.maximum(D, 0.0, out=D)
        np.fill_diagonal(D, 0.0)
        return target_neighbors(D, y, self.n_neighbors, metric="precomputed")

    def _fit(self, K, y):
        from methods.metric_learning import LMNN, MetricKNN

        if "kernel_neighbors" in (self.lmnn_params or {}):
            raise ValueError(
                "NR-LMNN-MKL runs LMNN on feature vectors, where LMNN ignores "
                "lmnn_params['kernel_neighbors']; pass kernel_neighbors="
                f"{self.lmnn_params['kernel_neighbors']!r} as NRLMNNMKL's own "
                "parameter (config: method.kernel_neighbors)."
            )
        F = self._features(K)
        self.target_neighbors_ = self._targets(K, F, y)
        lmnn = LMNN(**self._lmnn_params(None))
        lmnn.fit(F, y, target_neighbors=self.target_neighbors_)
        self.metric_learner_ = lmnn
        self._record_solver(lmnn)
        self.knn_ = MetricKNN(n_neighbors=1).fit(lmnn.transform(F), y)

    def predict(self, X) -> np.ndarray:
        """1-NN labels of the test block ``X`` (n_test, n_train, n_kernels)."""
        F = self._features(self._check_test(X))
        return self.knn_.predict(self.metric_learner_.transform(F))


class LMNNMKLP(_KernelBankLMNN):
    r"""LMNN-MKL_P (lmnnmkl eq. 15-18, Algorithm 1): LMNN and kernel weights together.

    Alternates (Algorithm 1)

    1. the weight step: eq. 15 for fixed ``A`` with the rank penalty
       ``w tr(P^T W)``, eq. 16's ``W = U U^T`` (eigenvectors of the ``m - 1``
       smallest eigenvalues of ``P``), for the smallest ``w`` of ``w_grid`` that
       reaches global convergence (eq. 17); ``W`` starts at 0 (Sec. 6) and is
       carried to the next weight step; ``mu`` is read off the rank-one ``P``;
    2. the metric step: LMNN on ``K_mu = sum_l mu_l K_l`` warm-started from the
       previous ``A``;

    from ``A_0 = I`` and ``mu_0 = 1/m`` (Sec. 6), until the largest change of ``mu`` is
    below ``weight_tol`` and the relative change of LMNN's objective below ``tol``,
    or ``max_iter`` rounds. The target neighbours (S of eq. 18) are fixed before
    learning: those of ``K_mu0`` in LMNN's input metric, passed to every metric step
    and used by every weight step, so both steps lower the one objective of eq. 18.

    Parameters
    ----------
    w_grid : list of float, default=(1, 10, ..., 1e8)
        Sec. 6: "w ... was selected from {10^i | i = 0, 1, ..., 8} and was the
        smallest value enough to achieve global convergence". Non-empty, every
        ``w`` finite and > 0 (the weight of the rank penalty of eq. 15).
    max_iter : int, default=10
        Rounds of Algorithm 1 (Sec. 4.2: "most often converges in less than ten").
    tol : float, default=1e-3
        Change of LMNN's objective, relative to ``max(|objective|, margin)``, that
        ends the alternation.
    weight_tol : float, default=1e-3
        Largest change of ``mu`` that ends the alternation.
    rank_tol : float, default=1e-6
        Eq. 17 holds when ``sum_{i>=2} lambda_i(P) <= rank_tol * tr(P)``.
    p_tol : float, default=1e-5
        Relative optimality gap of each eq. 15 solve (cutting planes).
    n_groups : int, default=16
        Slacks of the cutting-plane model (anchor groups).
    kernel, normalize, n_neighbors, push_weight, margin, check_psd, lmnn_params
        As :class:`LMNNKernelSum`; ``lmnn_params`` may not hold ``init`` either
        (each round's LMNN starts from the previous round's metric).

    Attributes
    ----------
    kernel_weights_ : ndarray of shape (n_kernels,)
        The learned ``mu`` on the simplex.
    kernel_weights_path_ : list of ndarray
        ``mu`` after each weight step (formerly ``weight_path_``, deprecated).
    w_path_ : list of float
        The ``w`` each weight step used.
    rank_one_ : bool
        True if every weight step reached eq. 17 (``P`` rank one within
        ``rank_tol``) for some ``w`` of ``w_grid``; False if one reached it for
        none and kept its last ``P``, ``mu`` then its leading eigenvector on the
        simplex. True with one kernel (no weight step).
    objective_, n_iter_, converged_
        LMNN's final objective, the rounds of Algorithm 1, whether it stopped on
        ``tol`` and ``weight_tol`` (False at ``max_iter`` rounds).
    lmnn_converged_ : bool
        True if the LMNN of every metric step stopped on its own ``tol`` (LMNN's
        ``converged_`` in every round); False if one stopped at its ``max_iter``
        or on a failed line search. ``converged_`` says nothing about these.
    metric_n_iter_path_ : list of int
        The LMNN iterations of each metric step (eq. 16), one per round; their
        sum is what the metric steps cost (lmnnmkl Table 2's time goes there).
    objective_path_ : list of float
        LMNN's objective after each round.
    metric_learner_ : LMNN
        The last round's LMNN on ``K_mu`` (``components_`` is ``L``).
    target_neighbors_ : ndarray of shape (n_samples, n_neighbors)
        The target neighbours of every round, fixed from ``K_mu`` at the
        uniform start (eq. 18's S).
    classes_, n_features_in_, n_kernels_, kernel_scales_, knn_
        As :class:`LMNNKernelSum`.
    """

    paper_name = "LMNN-MKL_P"
    weight_path_ = RenamedAttribute("kernel_weights_path_")
    # each round's LMNN starts from the previous round's metric (Algorithm 1)
    _lmnn_params_set = (*_KernelBankLMNN._lmnn_params_set, "init")

    _parameter_constraints = {
        **_KernelBankLMNN._parameter_constraints,
        "w_grid": ["array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "weight_tol": [Interval(Real, 0, None, closed="left")],
        "rank_tol": [Interval(Real, 0, None, closed="neither")],
        "p_tol": [Interval(Real, 0, None, closed="neither")],
        "n_groups": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        w_grid=tuple(10.0**i for i in range(9)),
        max_iter=10,
        tol=1e-3,
        weight_tol=1e-3,
        rank_tol=1e-6,
        p_tol=1e-5,
        n_groups=16,
        kernel="precomputed",
        normalize="mean_diag",
        n_neighbors=5,
        push_weight=0.5,
        margin=1.0,
        check_psd=True,
        lmnn_params=None,
    ):
        self.w_grid = w_grid
        self.max_iter = max_iter
        self.tol = tol
        self.weight_tol = weight_tol
        self.rank_tol = rank_tol
        self.p_tol = p_tol
        self.n_groups = n_groups
        self.kernel = kernel
        self.normalize = normalize
        self.n_neighbors = n_neighbors
        self.push_weight = push_weight
        self.margin = margin
        self.check_psd = check_psd
        self.lmnn_params = lmnn_params

    def _check_params(self) -> None:
        """``w_grid``: a non-empty 1-D grid of finite weights > 0."""
        try:
            grid = np.asarray(self.w_grid, dtype=np.float64)
        except (TypeError, ValueError):
            grid = None
        if (
            grid is None
            or grid.ndim != 1
            or grid.size == 0
            or not np.all(np.isfinite(grid))
            or np.any(grid <= 0)
        ):
            raise ValueError(
                f"{self.paper_name}: w_grid must be a non-empty list of finite "
                f"weights w > 0 (the rank penalty of eq. 15, tried in order); got "
                f"{self.w_grid!r}. Pass e.g. the paper's [1, 10, ..., 1e8] "
                "(Sec. 6)."
            )

    def _features(self, K):
        return np.tensordot(K, self.kernel_weights_, axes=([2], [0]))

    def predict(self, X) -> np.ndarray:
        """1-NN labels of the test block ``X`` (n_test, n_train, n_kernels)."""
        K_mu = self._features(self._check_test(X))
        return self.knn_.predict(self.metric_learner_.transform(K_mu))

    def _initial_targets(self, K_mu: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Target neighbours in LMNN's input metric on ``K_mu0`` (fixed, eq. 18's S)."""
        from methods.metric_learning import target_neighbors

        how = (self.lmnn_params or {}).get("kernel_neighbors", "feature_space")
        if how == "feature_space":
            d = np.diag(K_mu)
            D = np.maximum(d[:, None] + d[None, :] - K_mu - K_mu.T, 0.0)
            np.fill_diagonal(D, 0.0)
            return target_neighbors(D, y, self.n_neighbors, metric="precomputed")
        return target_neighbors(K_mu, y, self.n_neighbors)

    def _fit(self, K, y):
        from methods.metric_learning import LMNN, MetricKNN

        n, _, m = K.shape
        mu = np.full(m, 1.0 / m)
        W = np.zeros((m, m))
        L = np.eye(n)  # A_0 = I
        init = "identity"
        # S of eq. 18 is fixed before learning: the targets of K_mu0, kept for every
        # round, so that Algorithm 1 alternates on one objective
        tn = self._initial_targets(np.tensordot(K, mu, axes=([2], [0])), y)
        self.target_neighbors_ = tn
        self.kernel_weights_path_, self.w_path_, self.objective_path_ = [], [], []
        self.metric_n_iter_path_ = []
        self.rank_one_ = True
        # AND over the rounds: a capped metric step in an early round is as much a
        # solver stopped at its iteration cap as one in the last
        self.lmnn_converged_ = True
        prev_obj = None
        self.converged_ = False
        for it in range(1, self.max_iter + 1):  # noqa: B007 (n_iter_ below)
            if m > 1:
                prob = PStepProblem.from_metric(
                    K,
                    L,
                    y,
                    tn,
                    push_weight=self.push_weight,
                    margin=self.margin,
                    n_groups=self.n_groups,
                )
                ws = weight_step(
                    prob,
                    W,
                    w_grid=tuple(float(w) for w in self.w_grid),
                    P0=np.outer(mu, mu),
                    rank_tol=self.rank_tol,
                    tol=self.p_tol,
                )
                new_mu, W = ws.mu, ws.W
                self.rank_one_ &= ws.rank_one
                self.w_path_.append(ws.w)
            else:
                new_mu = mu
            self.kernel_weights_path_.append(new_mu)
            self.kernel_weights_ = new_mu
            K_mu = self._features(K)
            lmnn = LMNN(**{**self._lmnn_params("precomputed"), "init": init})
            lmnn.fit(K_mu, y, target_neighbors=tn)
            self.metric_learner_ = lmnn
            init = lmnn.get_mahalanobis_matrix()
            L = lmnn.components_
            obj = float(lmnn.objective_)
            self.objective_path_.append(obj)
            self.metric_n_iter_path_.append(int(lmnn.n_iter_))
            self.lmnn_converged_ = self.lmnn_converged_ and bool(lmnn.converged_)
            change = float(np.max(np.abs(new_mu - mu)))
            mu = new_mu
            if m == 1 or (
                prev_obj is not None
                and change <= self.weight_tol
                and abs(obj - prev_obj) <= self.tol * max(abs(prev_obj), self.margin)
            ):
                self.converged_ = True
                break
            prev_obj = obj
        self.knn_ = MetricKNN(n_neighbors=1).fit(lmnn.transform(K_mu), y)
        self.objective_ = obj
        self.n_iter_ = it
        if not self.converged_:
            # converged_ said it, silently: a library user fitting once saw no sign
            # (each round's LMNN warns at its own cap, the alternation did not)
            warnings.warn(
                f"{self.paper_name} stopped at max_iter={self.max_iter} rounds "
                f"before mu and LMNN's objective settled (weight_tol="
                f"{self.weight_tol}, tol={self.tol}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
