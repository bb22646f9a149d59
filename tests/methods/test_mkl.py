"""SimpleMKL, MKL_m and ε-MKL (methods/mkl/) against independent references.

References: scikit-learn's SVC (one kernel), ``solve_box_qp(svmm_dual(...))`` (one
kernel, SVM_m), and the MKL dual written as a QCQP and solved by ``cvxopt.solvers.cpl``
(several kernels): ``max -p'z - t  s.t.  t >= 1/2 z'Q_k z,  s'z = 0,  0 <= z <= U``,
whose multipliers of the quadratic constraints are the kernel weights.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import check_grad
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from methods._kernels import KernelSpec, kernel_stack
from methods._qp import SOLVERS, csvm_dual, solve_box_qp, svmm_dual
from methods.mkl import (
    EpsMKL,
    MKLm,
    SimpleMKL,
    kernel_quadratic_forms,
    reduced_gradient_mkl,
)
from methods.mkl._descent import _Evaluator

ESTIMATORS = [SimpleMKL, MKLm, EpsMKL]
# Every registered inner solver; the fast ones get a tight tolerance where a test
# compares optima to 1e-4 (their default KKT tolerance is meant for tol=1e-2).
INNER = [s for s in ("cvxopt", "smo", "ipm") if s in SOLVERS]
TIGHT_INNER_TOL = {"cvxopt": None, "smo": 1e-8, "ipm": 1e-10}

SPECS = [
    KernelSpec("linear"),
    KernelSpec("poly", degree=2, normalize="cosine"),
    KernelSpec("gaussian", sigma=0.5),
    KernelSpec("gaussian", sigma=2.0),
]


def _data(seed: int = 0, n: int = 40, n_classes: int = 2):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.randn(n)
    if n_classes == 2:
        return X, np.where(score > 0.3, 1, 0)
    return X, np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))


def _unit_trace(stack: np.ndarray) -> np.ndarray:
    return stack / np.trace(stack, axis1=0, axis2=1)


def _toy_stack(seed: int = 0, n: int = 40, specs=SPECS):
    X, y = _data(seed, n)
    # Unit trace times n: unit mean diagonal, so C keeps its usual scale.
    return n * _unit_trace(kernel_stack(X, None, specs)), y


def _mkl(cls, **params):
    base = {"kernel": "precomputed", "normalize": None, "solver": INNER[0]}
    return cls(**{**base, **params})


def _qcqp_mkl_dual(problems):
    """Independent MKL solve: the dual QCQP over ``x = [z; t]`` with ``cvxopt.cpl``.

    ``problems[k]`` is the inner BoxQP of base kernel ``k`` (same ``p, s, U``).
    Returns ``(J*, mu)``: the optimal value (maximization form) and the
    multipliers of the constraints ``1/2 z'Q_k z - t <= 0``.
    """
    from cvxopt import matrix, solvers

    Q = [pb.dense_Q() for pb in problems]
    pb = problems[0]
    nv, m = pb.n_vars, len(Q)

    def F(x=None, z=None):
        if x is None:
            return m, matrix(np.r_[np.zeros(nv), 1.0])
        v = np.asarray(x).ravel()[:nv]
        f = np.array([0.5 * v @ Qk @ v - x[nv] for Qk in Q])
        Df = np.hstack([np.array([Qk @ v for Qk in Q]), -np.ones((m, 1))])
        if z is None:
            return matrix(f), matrix(Df)
        H = np.zeros((nv + 1, nv + 1))
        H[:nv, :nv] = sum(z[k] * Q[k] for k in range(m))
        return matrix(f), matrix(Df), matrix(H)

    eye = np.eye(nv)
    G = np.vstack([np.c_[-eye, np.zeros(nv)], np.c_[eye, np.zeros(nv)]])
    h = np.r_[np.zeros(nv), pb.U]
    tight = {"abstol": 1e-11, "reltol": 1e-11, "feastol": 1e-11, "maxiters": 200}
    sol = solvers.cpl(
        matrix(np.r_[pb.p, 1.0]),
        F,
        matrix(G),
        matrix(h),
        A=matrix(np.r_[pb.s, 0.0][None, :]),
        b=matrix(0.0),
        options={"show_progress": False, **tight},
    )
    # On the rank-deficient 2n-variable ε-MKL dual cpl may stop at a ~1e-7 relative
    # gap with status "unknown"; that is still 1000x tighter than the test needs.
    assert sol["status"] == "optimal" or sol["relative gap"] < 1e-6, sol["status"]
    return -sol["primal objective"], np.asarray(sol["znl"]).ravel()


def _inner_problems(est, stack, y_pm):
    return [
        est._inner_problem(np.ascontiguousarray(stack[:, :, k]), y_pm)
        for k in range(stack.shape[2])
    ]


# -- the descent itself --------------------------------------------------------


@pytest.mark.parametrize("solver", INNER)
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_weights_stay_on_simplex_and_objective_never_increases(cls, solver):
    stack, y = _toy_stack(seed=1)
    clf = _mkl(
        cls, C=10.0, solver=solver, tol=1e-6, weight_tol=0.0,
        inner_tol=TIGHT_INNER_TOL[solver],
    ).fit(stack, y)  # fmt: skip
    W = clf.kernel_weights_path_[0]
    assert W.shape[0] >= 2, "the descent should move away from the uniform start"
    assert np.all(W >= 0.0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(W[0], 1.0 / stack.shape[2])
    np.testing.assert_array_equal(W[-1], clf.kernel_weights_[0])
    h = clf.objective_path_[0]
    assert h.shape[0] == W.shape[0]
    assert np.all(np.diff(h) <= 0.0)
    assert h[-1] == clf.objective_[0]
    assert clf.converged_ and clf.fit_status_ == 0
    assert clf.n_inner_solves_[0] > clf.n_iter_[0] >= 1


@pytest.mark.parametrize("solver", INNER)
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_defaults_converge_with_every_inner_solver(cls, solver):
    # Default tol (SimpleMKL's 1e-2 gap) and the inner solver's own tolerance.
    stack, y = _toy_stack(seed=1)
    clf = _mkl(cls, C=10.0, solver=solver).fit(stack, y)
    assert clf.converged_ and clf.stop_reasons_[0] in ("duality_gap", "weight_change")
    assert clf.duality_gap_[0] <= 1e-2


@pytest.mark.parametrize("inner", ["csvm", "svmm"])
def test_gradient_matches_finite_differences(inner):
    # mlsvm Sec. VI-B: dJ/dmu_k = -1/2 g'K_k g at the inner optimum (Danskin).
    stack, y = _toy_stack(seed=2)
    y_pm = np.where(y == 1, 1.0, -1.0)
    if inner == "csvm":
        evaluate = _Evaluator(stack, lambda K: csvm_dual(K, y_pm, 5.0), "cvxopt", {})
    else:
        evaluate = _Evaluator(
            stack, lambda K: svmm_dual(K, y_pm, 5.0, 5.0 / 3.0, 3.0), "cvxopt", {}
        )
    mu = np.array([0.4, 0.3, 0.2, 0.1])
    err = check_grad(
        lambda v: evaluate(v, None).J,
        lambda v: -evaluate(v, None).forms,
        mu,
        epsilon=1e-5,
    )
    assert err <= 1e-4 * np.linalg.norm(evaluate(mu, None).forms)


def test_kernel_quadratic_forms_dense_formula():
    stack, _ = _toy_stack(seed=3)
    g = np.random.RandomState(3).randn(stack.shape[0])
    expected = [0.5 * g @ stack[:, :, k] @ g for k in range(stack.shape[2])]
    np.testing.assert_allclose(kernel_quadratic_forms(stack, g), expected)


# -- one kernel: the single-kernel machines ---------------------------------------


@pytest.mark.parametrize("C", [0.5, 10.0])
@pytest.mark.parametrize("as_stack", [False, True], ids=["gram", "stack"])
def test_one_kernel_simplemkl_is_svc(C, as_stack):
    X, y = _data(seed=4, n=50)
    Xtr, Xte, ytr = X[:40], X[40:], y[:40]
    spec = KernelSpec("gaussian", sigma=1.0)
    Ktr, Kte = spec(Xtr), spec(Xte, Xtr)
    svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(Ktr, ytr)
    expected, expected_labels = svc.decision_function(Kte), svc.predict(Kte)
    if as_stack:
        Ktr, Kte = Ktr[:, :, None], Kte[:, :, None]
    clf = _mkl(SimpleMKL, C=C, inner_tol=TIGHT_INNER_TOL[INNER[0]]).fit(Ktr, ytr)
    assert clf.stop_reasons_ == ["single_kernel"] and clf.n_iter_[0] == 1
    np.testing.assert_array_equal(clf.kernel_weights_, [[1.0]])
    np.testing.assert_allclose(
        clf.decision_function(Kte), expected, rtol=1e-5, atol=1e-6
    )
    np.testing.assert_array_equal(clf.predict(Kte), expected_labels)


@pytest.mark.parametrize(
    "cls, eps", [(MKLm, 3.0), (EpsMKL, 0.0)], ids=["MKLm", "EpsMKL"]
)
def test_one_kernel_band_mkl_is_svmm(cls, eps):
    X, y = _data(seed=5, n=40)
    K = KernelSpec("poly", degree=2, normalize="cosine")(X)
    C = 10.0
    y_pm = np.where(y == 1, 1.0, -1.0)
    # mlsvm Sec. VII: C2 = C1 / 3.
    ref = solve_box_qp(svmm_dual(K, y_pm, C, C / 3.0, eps), solver="cvxopt")
    coef = svmm_dual(K, y_pm, C, C / 3.0, eps).coef(ref.z)
    clf = _mkl(cls, C=C, inner_tol=TIGHT_INNER_TOL[INNER[0]]).fit(K, y)
    np.testing.assert_allclose(clf.dual_coef_[0], coef, atol=1e-6 * C)
    np.testing.assert_allclose(clf.intercept_[0], -ref.rho, atol=1e-6)
    np.testing.assert_allclose(clf.objective_[0], -ref.objective, rtol=1e-8)


# -- several kernels: the MKL optimum ---------------------------------------------


@pytest.mark.parametrize("solver", INNER)
@pytest.mark.parametrize(
    "cls, seed, C, n_kernels",
    [
        (SimpleMKL, 0, 1.0, 4),
        (SimpleMKL, 0, 10.0, 4),
        (SimpleMKL, 6, 100.0, 5),
        (MKLm, 0, 10.0, 4),
        (EpsMKL, 7, 10.0, 3),
    ],
    ids=["simplemkl-C1", "simplemkl-C10", "simplemkl-C100-5k", "mklm", "epsmkl-3k"],
)
def test_optimum_matches_qcqp(cls, seed, C, n_kernels, solver):
    specs = [*SPECS, KernelSpec("poly", degree=3, normalize="cosine")][:n_kernels]
    stack, y = _toy_stack(seed=seed, specs=specs)
    clf = _mkl(
        cls, C=C, solver=solver, tol=1e-7, weight_tol=0.0, max_iter=1000,
        inner_tol=TIGHT_INNER_TOL[solver],
    ).fit(stack, y)  # fmt: skip
    J, mu = _qcqp_mkl_dual(_inner_problems(clf, stack, np.where(y == 1, 1.0, -1.0)))
    assert abs(clf.objective_[0] - J) <= 1e-4 * abs(J)
    _assert_unique_optimum(clf, stack, y, mu)
    np.testing.assert_allclose(clf.kernel_weights_[0], mu, atol=1e-3)


def _assert_unique_optimum(clf, stack, y, mu):
    """The weights are comparable only where the optimal combination is unique.

    J is convex on the simplex and, by the KKT conditions, increases to first order
    towards every kernel outside the active set whose ``1/2 g'K_k g`` is strictly
    below the maximum. So the optimum is unique when that holds for the inactive
    kernels and J rises along each direction ``e_a - e_b`` inside the active face.
    """
    y_pm = np.where(y == 1, 1.0, -1.0)
    evaluate = _Evaluator(stack, lambda K: clf._inner_problem(K, y_pm), "cvxopt", {})
    at = evaluate(mu, None)
    active = np.flatnonzero(mu > 1e-6)
    inactive = np.setdiff1d(np.arange(mu.shape[0]), active)
    top = at.forms.max()
    assert np.all(at.forms[inactive] < top * (1 - 1e-6)), "inactive kernel is tied"
    for a, b in zip(active[:-1], active[1:]):
        step = 1e-2 * min(mu[a], mu[b])
        for sign in (1.0, -1.0):
            moved = mu.copy()
            moved[a] += sign * step
            moved[b] -= sign * step
            assert evaluate(moved, None).J > at.J * (1 + 1e-9), "flat active face"


def test_weight_change_stops_the_descent():
    stack, y = _toy_stack(seed=0)
    clf = _mkl(SimpleMKL, C=10.0, tol=1e-9, weight_tol=1.0).fit(stack, y)
    assert clf.stop_reasons_ == ["weight_change"] and clf.converged_
    assert clf.n_iter_[0] == 1 and clf.kernel_weights_path_[0].shape[0] == 2


def test_solver_returns_what_the_estimator_stores():
    stack, y = _toy_stack(seed=0)
    y_pm = np.where(y == 1, 1.0, -1.0)
    out = reduced_gradient_mkl(
        stack, lambda K: csvm_dual(K, y_pm, 10.0), solver="cvxopt", tol=1e-6
    )
    clf = SimpleMKL(
        C=10.0, kernel="precomputed", normalize=None, solver="cvxopt", tol=1e-6
    ).fit(stack, y)
    np.testing.assert_array_equal(out["mu"], clf.kernel_weights_[0])
    assert out["objective"] == clf.objective_[0]
    assert out["gap"] <= 1e-6 and out["stop_reason"] == "duality_gap"


# -- inputs: raw X, kernels, normalization, cross-validation --------------------------


def _scale(block_tr: np.ndarray, how: str | None) -> float:
    if how == "unit_trace":
        return 1.0 / np.trace(block_tr)
    if how == "feature_variance":
        return 1.0 / (np.mean(np.diag(block_tr)) - np.mean(block_tr))
    return 1.0


@pytest.mark.parametrize("normalize", [None, "unit_trace", "feature_variance"])
def test_precomputed_stack_and_raw_X_give_the_same_decisions(normalize):
    X, y = _data(seed=8, n=50)
    Xtr, Xte, ytr = X[:40], X[40:], y[:40]
    Str, Ste = kernel_stack(Xtr, None, SPECS), kernel_stack(Xte, Xtr, SPECS)
    s = np.array([_scale(Str[:, :, k], normalize) for k in range(len(SPECS))])
    common = {"C": 10.0, "solver": INNER[0], "tol": 1e-6}
    raw = SimpleMKL(kernel=SPECS, normalize=normalize, **common).fit(Xtr, ytr)
    by_hand = SimpleMKL(kernel="precomputed", normalize=None, **common)
    by_hand.fit(Str * s, ytr)
    fitted = SimpleMKL(kernel="precomputed", normalize=normalize, **common)
    fitted.fit(Str, ytr)
    np.testing.assert_allclose(raw.kernel_scales_, s, rtol=1e-12)
    d = raw.decision_function(Xte)
    np.testing.assert_allclose(by_hand.decision_function(Ste * s), d, rtol=1e-9)
    np.testing.assert_allclose(fitted.decision_function(Ste), d, rtol=1e-9)
    np.testing.assert_allclose(raw.kernel_weights_, by_hand.kernel_weights_)


def test_cosine_raw_X_matches_cosine_stack():
    X, y = _data(seed=9, n=50)
    Xtr, Xte, ytr = X[:40], X[40:], y[:40]
    raw_specs = [KernelSpec("linear"), KernelSpec("poly", degree=3)]
    cos_specs = [KernelSpec(s.kernel, s.degree, s.sigma, "cosine") for s in raw_specs]
    raw = SimpleMKL(kernel=raw_specs, normalize="cosine", solver=INNER[0])
    raw.fit(Xtr, ytr)
    pre = SimpleMKL(kernel="precomputed", normalize=None, solver=INNER[0])
    pre.fit(kernel_stack(Xtr, None, cos_specs), ytr)
    np.testing.assert_allclose(
        raw.decision_function(Xte),
        pre.decision_function(kernel_stack(Xte, Xtr, cos_specs)),
        rtol=1e-9,
    )


def test_bank20_default_on_raw_X():
    X, y = _data(seed=10, n=30)
    clf = SimpleMKL(C=100.0, solver=INNER[0]).fit(X, y)
    assert clf.kernel_weights_.shape == (1, 20) and len(clf.kernel_specs_) == 20
    S = kernel_stack(X, None, clf.kernel_specs_)
    # Default normalization: unit trace on the training points (SimpleMKL's).
    np.testing.assert_allclose(
        np.trace(S, axis1=0, axis2=1) * clf.kernel_scales_, 1.0, rtol=1e-10
    )
    assert clf.predict(X[:5]).shape == (5,)


def test_cross_validation_slices_the_stack():
    # The pairwise tag makes _safe_split index rows and columns of the stack.
    stack, y = _toy_stack(seed=11)
    clf = _mkl(SimpleMKL, C=10.0)
    assert clf.__sklearn_tags__().input_tags.pairwise
    assert not SimpleMKL().__sklearn_tags__().input_tags.pairwise
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    pred = cross_val_predict(clf, stack, y, cv=cv, method="decision_function")
    for train, test in cv.split(stack, y):
        fold = _mkl(SimpleMKL, C=10.0).fit(stack[np.ix_(train, train)], y[train])
        expected = fold.decision_function(stack[np.ix_(test, train)])
        np.testing.assert_allclose(pred[test], expected, rtol=1e-12)


# -- multi-class -------------------------------------------------------------------


def test_one_vs_one_pairs_are_binary_fits():
    X, y = _data(seed=12, n=45, n_classes=3)
    stack = 45 * _unit_trace(kernel_stack(X, None, SPECS))
    labels = np.array(["a", "b", "c"])[y]
    clf = _mkl(SimpleMKL, C=10.0).fit(stack, labels)
    assert clf.kernel_weights_.shape == (3, len(SPECS))
    assert clf.dual_coef_.shape == (3, 45) and clf.intercept_.shape == (3,)
    union: set[int] = set()
    for p, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        idx = np.flatnonzero((y == i) | (y == j))
        pair = _mkl(SimpleMKL, C=10.0).fit(stack[np.ix_(idx, idx)], labels[idx])
        np.testing.assert_allclose(clf.kernel_weights_[p], pair.kernel_weights_[0])
        np.testing.assert_allclose(clf.intercept_[p], pair.intercept_[0])
        np.testing.assert_allclose(clf.dual_coef_[p, idx], pair.dual_coef_[0])
        others = np.setdiff1d(np.arange(45), idx)
        assert np.all(clf.dual_coef_[p, others] == 0.0)
        union.update(idx[pair.support_].tolist())
    # support_: the training points that are support vectors of some pair
    np.testing.assert_array_equal(clf.support_, sorted(union))
    d = clf.decision_function(stack)
    assert d.shape == (45, 3)
    np.testing.assert_array_equal(clf.predict(stack), clf.classes_[d.argmax(axis=1)])
    assert np.mean(clf.predict(stack) == labels) > 0.8


# -- errors and warnings -------------------------------------------------------------


def test_one_class_raises_naming_the_fix():
    stack, y = _toy_stack(seed=0)
    with pytest.raises(ValueError, match="only one class.*stratified folds"):
        _mkl(SimpleMKL).fit(stack, np.zeros_like(y))


@pytest.mark.parametrize(
    "make_X, match",
    [
        (lambda S: S[:, :30, :], r"X has 30 features, but SimpleMKL is expecting 40"),
        (lambda S: S[:, :, :2], r"shape \(n_test, 40, 4\); got shape \(10, 40, 2\)"),
        (lambda S: S[..., 0], r"shape \(n_test, 40, 4\); got shape \(10, 40\)"),
        (lambda S: S[..., None], r"got shape \(10, 40, 4, 1\)"),
        (lambda S: S[0, :, 0], "Reshape your data"),
    ],
    ids=["n-train", "n-kernels", "2d-for-4-kernels", "4d", "1d"],
)
def test_predict_shape_errors_are_clear(make_X, match):
    stack, y = _toy_stack(seed=0, n=50)
    clf = _mkl(SimpleMKL).fit(stack[:40, :40], y[:40])
    with pytest.raises(ValueError, match=match):
        clf.predict(make_X(stack[40:, :40]))


def test_raw_X_predict_checks_features():
    X, y = _data(seed=0)
    clf = SimpleMKL(kernel=SPECS[:2], solver=INNER[0]).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but SimpleMKL is expect"):
        clf.predict(X[:, :2])


@pytest.mark.parametrize(
    "fit_X, match",
    [
        (lambda S: S[:, :30], r"square.*got shape \(40, 30, 4\)"),
        (lambda S: S[:, :30, 0], r"square.*got shape \(40, 30\)"),
    ],
    ids=["stack", "gram"],
)
def test_fit_rejects_non_square_stack(fit_X, match):
    stack, y = _toy_stack(seed=0)
    with pytest.raises(ValueError, match=match):
        _mkl(SimpleMKL).fit(fit_X(stack), y)


def test_cosine_on_precomputed_stack_raises():
    stack, y = _toy_stack(seed=0)
    with pytest.raises(ValueError, match="cosine.*normalize=None"):
        _mkl(SimpleMKL, normalize="cosine").fit(stack, y)


@pytest.mark.parametrize(
    "cls, params, match",
    [
        (SimpleMKL, {"C": -1}, r"The 'C' parameter of SimpleMKL must be a float in"),
        (MKLm, {"epsilon": -1.0}, r"The 'epsilon' parameter of MKLm must be"),
        (EpsMKL, {"C2": 0.0}, r"The 'C2' parameter of EpsMKL must be"),
        (SimpleMKL, {"normalize": "l2"}, r"The 'normalize' parameter of SimpleMKL"),
        (SimpleMKL, {"solver": "libsvm"}, r"The 'solver' parameter of SimpleMKL"),
        (SimpleMKL, {"max_iter": 0}, r"The 'max_iter' parameter of SimpleMKL"),
    ],
    ids=["C", "epsilon", "C2", "normalize", "solver", "max_iter"],
)
def test_invalid_parameters(cls, params, match):
    X, y = _data(seed=0)
    with pytest.raises(InvalidParameterError, match=match):
        cls(**params).fit(X, y)


def test_kernel_list_must_hold_kernel_specs():
    X, y = _data(seed=0)
    with pytest.raises(TypeError, match="list of methods.kernels.KernelSpec"):
        SimpleMKL(kernel=["rbf"]).fit(X, y)


def test_max_iter_warns_with_the_remedy():
    stack, y = _toy_stack(seed=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 .*Increase max_iter"):
        clf = _mkl(SimpleMKL, C=10.0, tol=1e-9, max_iter=1).fit(stack, y)
    assert clf.fit_status_ == 1 and not clf.converged_
    assert clf.stop_reasons_ == ["max_iter"] and clf.n_iter_[0] == 1


def test_a_multiclass_warning_names_the_classes_plainly():
    # numpy 2 printed the pair as "(np.int64(0), np.int64(2))"
    X, y = _data(seed=0, n_classes=3)
    stack = kernel_stack(X, None, SPECS)
    with pytest.warns(ConvergenceWarning) as record:
        _mkl(SimpleMKL, C=10.0, tol=1e-9, max_iter=1).fit(stack, y)
    pairs = [str(w.message).split(":")[0] for w in record]
    assert "SimpleMKL did not converge for classes (0, 2)" in pairs, pairs
    for dtype in (str, object):  # numpy strings, and Python ones (pandas)
        with pytest.warns(ConvergenceWarning, match=r"classes \('a', 'c'\)"):
            labels = np.array(["a", "b", "c"], dtype=dtype)[y]
            _mkl(SimpleMKL, C=10.0, tol=1e-9, max_iter=1).fit(stack, labels)


def test_paper_names_and_defaults():
    assert [c.paper_name for c in ESTIMATORS] == ["SimpleMKL", "MKL_m", "ε-MKL"]
    assert MKLm().epsilon == 3.0 and MKLm().C2 is None
    assert "epsilon" not in EpsMKL().get_params()
    # C2 = None is C / 3 (mlsvm Sec. VII).
    K, y = np.eye(4), np.array([1.0, -1.0, 1.0, -1.0])
    assert np.all(MKLm(C=6.0)._inner_problem(K, y).U[4:] == 2.0)
    assert np.all(EpsMKL(C=6.0)._inner_problem(K, y).p[4:] == 1.0)


def test_mean_diag_specs_scale_by_the_training_mean_diagonal():
    """A KernelSpec with normalize="mean_diag" divides the training and the test
    block by the mean diagonal of the *training* block (methods/_kernels.py), and
    the stored scale is that factor; decisions equal a precomputed fit on the
    stacks scaled by hand."""
    X, y = _data(seed=13, n=50)
    Xtr, Xte, ytr = X[:40], X[40:], y[:40]
    raw_specs = [KernelSpec("poly", degree=2), KernelSpec("linear")]
    md_specs = [KernelSpec(s.kernel, s.degree, s.sigma, "mean_diag") for s in raw_specs]
    Str, Ste = kernel_stack(Xtr, None, raw_specs), kernel_stack(Xte, Xtr, raw_specs)
    s = 1.0 / np.mean(np.diagonal(Str, axis1=0, axis2=1), axis=1)
    common = {"C": 10.0, "solver": INNER[0], "tol": 1e-6, "normalize": None}
    raw = SimpleMKL(kernel=md_specs, **common).fit(Xtr, ytr)
    pre = SimpleMKL(kernel="precomputed", **common).fit(Str * s, ytr)
    np.testing.assert_allclose(raw.kernel_scales_, s, rtol=1e-12)
    np.testing.assert_allclose(
        raw.decision_function(Xte), pre.decision_function(Ste * s), rtol=1e-9
    )


def test_max_step_reaches_the_simplex_boundary():
    """``_max_step``: the largest t with ``mu + t D >= 0``, from the ratios written
    out, and the weight that is exactly 0 there."""
    from methods.mkl._descent import _max_step

    mu = np.array([0.1, 0.4, 0.3, 0.2])
    D = np.array([-0.2, 0.5, -0.9, 0.6])
    t, k = _max_step(mu, D)
    assert t == pytest.approx(min(0.1 / 0.2, 0.3 / 0.9)) and k == 2
    assert np.all(mu + t * D >= -1e-15) and (mu + t * D)[k] == pytest.approx(0.0)


def test_clean_weights_zeroes_only_below_simplemkls_precision():
    """Weights below 1e-8 (SimpleMKL's ``numericalprecision``) become exactly 0,
    every other weight is kept, and the result is renormalized to the simplex."""
    from methods.mkl._descent import _clean_weights

    mu = np.array([0.5, 0.4989, 1e-3, 1e-4, 5e-9])
    kept = np.array([0.5, 0.4989, 1e-3, 1e-4, 0.0])
    np.testing.assert_allclose(_clean_weights(mu), kept / kept.sum(), rtol=1e-14)


def test_budget_whose_last_step_reaches_tol_counts_as_converged():
    """A fit capped one iteration before the one that would see the gap below
    tol ends on the same weights; its gap is <= tol, so it is "duality_gap" and
    converged, not "max_iter"."""
    stack, y = _toy_stack(seed=1)
    full = _mkl(SimpleMKL, C=10.0, tol=1e-3).fit(stack, y)
    assert full.stop_reasons_ == ["duality_gap"] and full.n_iter_[0] >= 2
    capped = _mkl(SimpleMKL, C=10.0, tol=1e-3, max_iter=int(full.n_iter_[0]) - 1)
    capped.fit(stack, y)
    np.testing.assert_array_equal(capped.kernel_weights_, full.kernel_weights_)
    assert capped.duality_gap_[0] <= 1e-3
    assert capped.stop_reasons_ == ["duality_gap"] and capped.converged_


def test_a_stalled_descent_is_fit_status_2(monkeypatch):
    """The documented codes: a pair whose line search stalled above tol gives
    ``fit_status_ == 2`` (not 1, the max_iter code) and the warning with the
    remedy. A stall needs inexact inner solves, so the descent's stop reason is
    forced here."""
    import methods.mkl._estimators as estimators

    real = estimators.reduced_gradient_mkl

    def stalled(*args, **kwargs):
        return {**real(*args, **kwargs), "stop_reason": "stalled"}

    monkeypatch.setattr(estimators, "reduced_gradient_mkl", stalled)
    stack, y = _toy_stack(seed=0)
    with pytest.warns(ConvergenceWarning, match="line search found no decrease"):
        clf = _mkl(SimpleMKL, C=10.0).fit(stack, y)
    assert clf.fit_status_ == 2 and not clf.converged_


def test_a_constant_kernel_is_left_unscaled_by_feature_variance():
    """A constant kernel has zero variance in feature space; its computed
    ``mean(diag K) - mean(K)`` is round-off (+2.8e-17 for 0.1 on 10 points), and
    the kernel is left as it is (scale 1), not blown up by 1e16."""
    stack, y = _toy_stack(seed=0, n=10)
    const = np.full((10, 10, 1), 0.1)
    assert np.mean(np.diag(const[:, :, 0])) - np.mean(const) != 0.0
    clf = _mkl(SimpleMKL, C=10.0, normalize="feature_variance", check_psd=False)
    clf.fit(np.concatenate([stack[:, :, :1], const], axis=2), y)
    K0 = stack[:, :, 0]
    assert clf.kernel_scales_[0] == pytest.approx(
        1.0 / (np.mean(np.diag(K0)) - np.mean(K0)), rel=1e-12
    )
    assert clf.kernel_scales_[1] == 1.0
