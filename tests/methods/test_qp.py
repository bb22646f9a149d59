"""The box-QP solvers against the cvxopt reference (methods/_qp)."""

from __future__ import annotations

import numpy as np
import pytest

from methods._kernels import pairwise_kernel
from methods._qp import (
    SMO_TOL,
    BoxQP,
    csvm_dual,
    low_rank_factor,
    project_feasible,
    rank_exceeds,
    solve_box_qp,
    solve_ipm,
    solve_smo,
    svmm_dual,
)

KERNELS = {
    "linear": {"kernel": "linear"},
    "poly2": {"kernel": "poly", "degree": 2},
    "gaussian": {"kernel": "gaussian", "sigma": 1.0},
}
CS = (0.1, 1.0, 10.0, 100.0, 1000.0)
# None is the C-SVM dual; 0 and 3 are SVM_m duals (eps = 0 is eps-SVM).
EPSILONS = (None, 0.0, 3.0)


def _data(seed: int = 0, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    noise = 0.5 * rng.standard_normal(n)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + noise > 0, 1.0, -1.0)
    return X, y


def _problem(K: np.ndarray, y: np.ndarray, C: float, eps: float | None) -> BoxQP:
    return csvm_dual(K, y, C) if eps is None else svmm_dual(K, y, C, C / 3, eps)


def _rho_interval(problem: BoxQP, z: np.ndarray, tol: float) -> tuple[float, float]:
    """Range of valid offsets rho (LIBSVM's lb, ub; a point if a variable is free)."""
    sG = problem.s * (problem.dense_Q() @ z + problem.p)
    scale = max(float(problem.U.max()), 1.0)
    at_low = z <= 1e-9 * scale
    at_up = z >= problem.U - 1e-9 * scale
    free = ~at_low & ~at_up
    if np.any(free):
        return float(sG[free].min()) - tol, float(sG[free].max()) + tol
    pos = problem.s > 0
    # rho <= s G on I_low-only variables, rho >= s G on I_up-only ones.
    upper = sG[(at_low & pos) | (at_up & ~pos)]
    lower = sG[(at_up & pos) | (at_low & ~pos)]
    return (
        float(lower.max(initial=-np.inf)) - tol,
        float(upper.min(initial=np.inf)) + tol,
    )


@pytest.fixture(scope="module")
def references() -> dict:
    """cvxopt solutions of every (kernel, C, eps) problem, computed once."""
    X, y = _data()
    out = {}
    for name, spec in KERNELS.items():
        K = pairwise_kernel(X, **spec)
        for C in CS:
            for eps in EPSILONS:
                problem = _problem(K, y, C, eps)
                out[name, C, eps] = (problem, solve_box_qp(problem, solver="cvxopt"))
    return out


@pytest.mark.parametrize("solver", ["smo", "ipm", "auto"])
@pytest.mark.parametrize("eps", EPSILONS, ids=["csvm", "eps0", "eps3"])
@pytest.mark.parametrize("C", CS)
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_solver_matches_cvxopt(references, kernel, C, eps, solver):
    problem, ref = references[kernel, C, eps]
    assert ref.converged
    res = solve_box_qp(problem, solver=solver)
    assert res.converged
    # Objective within 1e-6 relative.
    assert abs(res.objective - ref.objective) <= 1e-6 * abs(ref.objective)
    assert res.objective == pytest.approx(problem.objective(res.z), rel=1e-9)
    # Constraints: box and s'z = 0.
    assert np.all(res.z >= 0.0) and np.all(res.z <= problem.U)
    assert abs(problem.s @ res.z) <= 1e-10 * max(1.0, problem.U.max())
    # Decision values: the kernel expansion, then the offset, which is unique
    # only when a variable is free (else any rho in LIBSVM's [lb, ub] is optimal).
    K = problem.K
    f_ref = K @ problem.coef(ref.z)
    f_res = K @ problem.coef(res.z)
    scale = max(1.0, np.abs(f_ref).max())
    np.testing.assert_allclose(f_res, f_ref, atol=1e-3 * scale)
    lo, hi = _rho_interval(problem, ref.z, tol=10 * SMO_TOL * scale)
    assert lo <= res.rho <= hi


def test_smo_honours_tolerance():
    X, y = _data(1)
    problem = svmm_dual(pairwise_kernel(X, kernel="gaussian"), y, 10.0, 10 / 3, 3.0)
    res = solve_smo(problem, tol=1e-8)
    assert res.converged and res.info["violation"] <= 1e-8
    ref = solve_box_qp(problem, solver="cvxopt")
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)


def test_warm_start_same_solution_fewer_iterations():
    X, y = _data(2, n=60)
    K = pairwise_kernel(X, kernel="poly", degree=2)
    near = solve_smo(svmm_dual(K, y, 12.0, 4.0, 3.0), tol=1e-8)
    problem = svmm_dual(K, y, 10.0, 10 / 3, 3.0)
    cold = solve_smo(problem, tol=1e-8)
    warm = solve_smo(problem, tol=1e-8, z0=near.z)
    assert warm.converged and cold.converged
    assert warm.n_iter < cold.n_iter
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)
    np.testing.assert_allclose(
        K @ problem.coef(warm.z), K @ problem.coef(cold.z), atol=1e-5
    )
    auto = solve_box_qp(problem, tol=1e-8, z0=near.z)
    assert auto.n_iter == warm.n_iter


def test_max_iter_reported_as_not_converged():
    X, y = _data(3)
    problem = csvm_dual(pairwise_kernel(X, kernel="linear"), y, 100.0)
    for solver in ("smo", "auto"):
        res = solve_box_qp(problem, solver=solver, max_iter=3)
        assert not res.converged
        assert res.n_iter == 3
        assert res.info["violation"] > SMO_TOL


def test_project_feasible():
    X, y = _data(4)
    problem = svmm_dual(pairwise_kernel(X), y, 1.0, 0.5, 3.0)
    rng = np.random.default_rng(0)
    z = project_feasible(problem, rng.uniform(-1.0, 2.0, problem.n_vars))
    assert np.all(z >= 0.0) and np.all(z <= problem.U)
    assert abs(problem.s @ z) <= 1e-12


@pytest.mark.parametrize(
    "z0, match",
    [
        (np.zeros(3), r"z0 must have shape \(80,\)"),
        (np.full(80, np.nan), "NaN or infinity"),
    ],
    ids=["shape", "nan"],
)
def test_warm_start_errors(z0, match):
    X, y = _data()
    problem = svmm_dual(pairwise_kernel(X), y, 1.0, 0.5, 3.0)
    with pytest.raises(ValueError, match=match):
        solve_smo(problem, z0=z0)


def test_unknown_solver():
    X, y = _data()
    with pytest.raises(ValueError, match="Unknown QP solver 'newton'"):
        solve_box_qp(csvm_dual(pairwise_kernel(X), y, 1.0), solver="newton")


def test_low_rank_factor():
    X, _ = _data(n=50)
    K = pairwise_kernel(X, kernel="poly", degree=2)  # rank 10 in 3 dimensions
    V = low_rank_factor(K, 25)
    assert V.shape == (50, 10)
    np.testing.assert_allclose(V @ V.T, K, atol=1e-9 * np.abs(K).max())
    assert low_rank_factor(pairwise_kernel(X, kernel="gaussian"), 5) is None


@pytest.mark.parametrize("lapack_from", [512, 2], ids=["loop", "lapack"])
def test_rank_certificate_is_sound_and_decides_full_rank(monkeypatch, lapack_from):
    # The certificate may only say "rank > r_max" when the pivoted Cholesky it
    # replaces would run past r_max pivots; on full-rank kernels it must say so.
    # Both factorizations of the certificate (row-wise loop, LAPACK) are checked.
    import methods._qp._ipm as ipm
    from methods._qp._ipm import RANK_RTOL, _pivoted_cholesky

    monkeypatch.setattr(ipm, "_LAPACK_FROM", lapack_from)
    X, _ = _data(3, n=160)
    decided = 0
    for sigma in (0.3, 1.0, 2.0, 4.0, 8.0, 16.0):
        K = pairwise_kernel(X, kernel="gaussian", sigma=sigma)
        for r_max in (5, 10, 20, 40, 80):
            _, r = _pivoted_cholesky(K, RANK_RTOL, r_max)
            if rank_exceeds(K, r_max):
                decided += 1
                assert r == -1, (sigma, r_max, r)
    assert decided >= 10
    K = pairwise_kernel(X, kernel="gaussian", sigma=0.5)
    assert rank_exceeds(K, 20)
    # Rank exactly r_max (large eigenvalues): never certified; rank r_max + 1: yes.
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((160, 21)))
    for r, expected in ((20, False), (21, True)):
        Kr = (Q[:, :r] * np.linspace(1.0, 2.0, r)) @ Q[:, :r].T
        Kr = (Kr + Kr.T) / 2
        assert rank_exceeds(Kr, 20) is expected
    # Low rank (poly2 in 3 dimensions: 10) and a K that is not exactly symmetric.
    assert not rank_exceeds(pairwise_kernel(X, kernel="poly", degree=2), 20)
    K_asym = K.copy()
    K_asym[3, 150] += 1e-12
    assert not rank_exceeds(K_asym, 20)
    # A NaN off the diagonal, in a sampled row and column: no certificate.
    S = np.floor(np.linspace(0.0, 159.0, 21)).astype(int)
    K_nan = K.copy()
    K_nan[S[5], S[9]] = K_nan[S[9], S[5]] = np.nan
    assert not rank_exceeds(K_nan, 20)


@pytest.mark.parametrize("eps", [None, 0.0])
def test_auto_unchanged_by_rank_certificate(monkeypatch, eps):
    # A full-rank kernel on a slow dual reaches the rank stage of "auto"; the
    # certificate must give the same path and the same bits as the factorization.
    import methods._qp._ipm as ipm

    X, y = _data(7, n=240)
    K = pairwise_kernel(X, kernel="gaussian", sigma=0.7)
    assert rank_exceeds(K, 240 // 8)
    problem = _problem(K, y, 1000.0, eps)
    new = solve_box_qp(problem)
    monkeypatch.setattr(ipm, "rank_exceeds", lambda K, r_max: False)
    old = solve_box_qp(problem)
    assert new.solver == old.solver
    np.testing.assert_array_equal(new.z, old.z)
    assert new.rho == old.rho


@pytest.mark.parametrize("low_rank", [True, False], ids=["low_rank", "dense"])
def test_ipm_paths_agree(low_rank):
    X, y = _data(5, n=80)
    problem = svmm_dual(pairwise_kernel(X, kernel="linear"), y, 1000.0, 1000 / 3, 0.0)
    ref = solve_box_qp(problem, solver="cvxopt")
    res = solve_ipm(problem, low_rank=low_rank)
    assert res.info["rank"] == (3 if low_rank else None)
    assert res.converged
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)


def test_auto_hands_slow_problems_to_ipm():
    # eps-SVM with a rank-3 kernel and C = 1000: ~10^5 SMO iterations.
    X, y = _data(6, n=200)
    problem = svmm_dual(pairwise_kernel(X, kernel="linear"), y, 1000.0, 1000 / 3, 0.0)
    res = solve_box_qp(problem)
    assert res.solver == "ipm" and res.converged
    ref = solve_box_qp(problem, solver="cvxopt")
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)


def test_variables_fixed_at_zero():
    X, y = _data()
    K = pairwise_kernel(X, kernel="gaussian")
    problem = svmm_dual(K, y, 1.0, 1.0, 0.0)
    problem.U[::7] = 0.0
    ref = solve_box_qp(problem, solver="cvxopt")
    for solver in ("smo", "ipm"):
        res = solve_box_qp(problem, solver=solver)
        assert np.all(res.z[::7] == 0.0)
        assert res.objective == pytest.approx(ref.objective, rel=1e-6)


def test_svmm_never_forms_the_2n_hessian(monkeypatch):
    X, y = _data()
    problem = svmm_dual(pairwise_kernel(X), y, 10.0, 10 / 3, 0.0)

    def forbidden(self):
        raise AssertionError("dense_Q called by a fast solver")

    monkeypatch.setattr(BoxQP, "dense_Q", forbidden)
    for solver in ("smo", "ipm", "auto"):
        assert solve_box_qp(problem, solver=solver).converged


@pytest.fixture(scope="module")
def wdbc_poly2():
    """Standardized wdbc, degree-2 polynomial kernels, a fixed 460-row subset."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rows = np.sort(np.random.default_rng(0).permutation(X.shape[0])[:460])
    X, y = X[rows], np.where(y[rows] == 1, 1.0, -1.0)
    return {
        norm: pairwise_kernel(X, X, kernel="poly", degree=2, normalize=norm)
        for norm in (None, "cosine")
    }, y


@pytest.mark.parametrize("normalize", [None, "cosine"])
@pytest.mark.parametrize("threads", [1, None])
def test_auto_ill_conditioned_svmm(wdbc_poly2, normalize, threads):
    # Regression: on this SVM_m dual (eps = 0, C = 10, K with condition number
    # ~1e10) the IPM ran past its attainable accuracy, its dual residual grew to
    # O(1) at a rate set by rounding (so by the BLAS thread count), the polish
    # failed and "auto" fell back to 10^7 SMO iterations (~20 s, not converged).

    from threadpoolctl import threadpool_limits

    from methods._qp import solve_cvxopt

    kernels, y = wdbc_poly2
    problem = svmm_dual(kernels[normalize], y, 10.0, 10.0 / 3, 0.0)
    ref = solve_cvxopt(problem)
    with threadpool_limits(threads):
        res = solve_box_qp(problem, solver="auto")
    assert res.converged
    assert res.info["violation"] <= SMO_TOL
    rel = abs(res.objective - ref.objective) / abs(ref.objective)
    assert rel <= 1e-6
    # Cosine-normalized: SMO within its budget (~2e4 iterations). Raw kernel
    # (condition number ~1e10): SMO's budget runs out (~9e3 iterations), the IPM
    # stops in ~15 iterations and its SMO polish takes ~7e4; the cvxopt fallback
    # does not run (res.solver == "ipm").
    # The regression is judged by the work done, not by wall time (a shared
    # machine's load made a wall-time bound fail): the last-resort SMO ran
    # 10^7 iterations; IPM or cvxopt plus the polish stay far below 10^6.
    assert res.n_iter < 1_000_000, (res.solver, res.n_iter)


# ------------------------------------------------------------------ auto_path
@pytest.fixture
def path_memo(monkeypatch):
    import methods._qp as qp

    monkeypatch.setattr(qp, "_PATH_MEMO", type(qp._PATH_MEMO)())
    return qp._PATH_MEMO


def _slow_eps_svm(C: float, seed: int = 6) -> BoxQP:
    # eps-SVM with a rank-3 kernel: "auto" hands it to the IPM for C >= 100.
    X, y = _data(seed, n=200)
    K = pairwise_kernel(X, kernel="linear")
    return svmm_dual(K, y, C, C / 3, 0.0)


def test_auto_path_skips_smo_above_an_ipm_c_with_auto_bits(path_memo):
    first = solve_box_qp(_slow_eps_svm(100.0), solver="auto_path")
    assert first.solver == "ipm" and first.info["smo_iter"] > 0  # found by "auto"
    path = solve_box_qp(_slow_eps_svm(1000.0), solver="auto_path")
    auto = solve_box_qp(_slow_eps_svm(1000.0), solver="auto")
    assert auto.solver == "ipm" and auto.info["smo_iter"] > 0
    assert path.solver == "ipm" and path.info["smo_skipped"]
    assert path.info["smo_iter"] == 0
    np.testing.assert_array_equal(path.z, auto.z)
    assert path.rho == auto.rho and path.objective == auto.objective


def test_auto_path_is_auto_without_a_smaller_ipm_c(path_memo):
    # Alone, after a larger C, or after a smaller C of other data: as "auto".
    cases = [
        [(1000.0, 6)],
        [(1000.0, 6), (100.0, 6)],
        [(100.0, 7), (1000.0, 6)],
    ]
    for fits in cases:
        path_memo.clear()
        for C, seed in fits:
            path = solve_box_qp(_slow_eps_svm(C, seed), solver="auto_path")
        auto = solve_box_qp(_slow_eps_svm(C, seed), solver="auto")
        assert not path.info.get("smo_skipped", False)
        assert path.info["smo_iter"] == auto.info["smo_iter"] > 0
        np.testing.assert_array_equal(path.z, auto.z)


def test_auto_path_fingerprint_match_is_confirmed_by_the_digest(path_memo):
    # Swapping two entries of K keeps the fingerprint (a sum of K's words) but not
    # the problem: the digest must tell them apart, so SMO is not skipped.
    import methods._qp as qp

    solve_box_qp(_slow_eps_svm(100.0), solver="auto_path")
    other = _slow_eps_svm(1000.0)
    K = other.K.copy()
    K[0, 1], K[2, 3] = K[2, 3], K[0, 1]
    other.K = K
    assert qp._path_fingerprint(other) == qp._path_fingerprint(_slow_eps_svm(1000.0))
    res = solve_box_qp(other, solver="auto_path")
    assert not res.info.get("smo_skipped", False) and res.info["smo_iter"] > 0


def test_auto_path_fingerprint_ignores_memory_layout(path_memo):
    import methods._qp as qp

    problem = _slow_eps_svm(100.0)
    fortran = _slow_eps_svm(100.0)
    fortran.K = np.asfortranarray(fortran.K)
    assert qp._path_fingerprint(problem) == qp._path_fingerprint(fortran)
    assert qp._path_key(problem) == qp._path_key(fortran)


def test_auto_path_remembers_only_ipm_problems(path_memo):
    X, y = _data(1, n=60)
    K = pairwise_kernel(X, kernel="gaussian")
    solve_box_qp(csvm_dual(K, y, 1.0), solver="auto_path")  # SMO
    assert len(path_memo) == 0
    solve_box_qp(_slow_eps_svm(100.0), solver="auto_path")  # IPM
    assert len(path_memo) == 1


def test_auto_path_decisions_equal_the_all_problems_memo(path_memo, monkeypatch):
    """The memo keeps only IPM problems now; before, it kept every problem (most
    recent last, the same 256 slots) with a flag. While fewer than 256 problems
    separate two C values of one problem (a grid search over C on 10 inner splits
    with up to 25 other parameter values: Table I's SVM-FDA has 5 lams), the two
    make the same skip decisions. Checked on grid-search orders against the old
    rule, with a fake solver whose SMO/IPM outcome depends on the problem and C."""
    from collections import OrderedDict

    import methods._qp as qp

    rng = np.random.default_rng(0)
    problems = {}
    for split in range(10):
        for lam in range(5):
            K = rng.standard_normal((6, 6))
            problems[split, lam] = (K @ K.T, rng.integers(1, 5))  # IPM from C index
    Cs = [0.1, 1.0, 10.0, 100.0, 1000.0]
    decisions = []

    def fake_auto(problem, *, tol, max_iter, z0, skip_smo=False):
        decisions.append(skip_smo)
        c_index = Cs.index(float(problem.U[0]))
        ipm = c_index >= problem.ipm_from
        return qp.QPResult(
            z=np.zeros(problem.n_vars),
            rho=0.0,
            objective=0.0,
            n_iter=0,
            converged=True,
            solver="ipm" if ipm else "smo",
            info={},
        )

    monkeypatch.setattr(qp, "_solve_auto", fake_auto)
    old_memo: OrderedDict = OrderedDict()
    old_decisions = []
    for _repeat in range(2):  # a second grid search in the same process
        for C in Cs:
            for lam in range(5):
                for split in range(10):
                    K, ipm_from = problems[split, lam]
                    y = np.array([1.0, -1.0] * 3)
                    problem = csvm_dual(K, y, C)
                    problem.ipm_from = ipm_from
                    # the old rule
                    key = qp._path_key(problem)
                    skip = any(
                        ipm and np.all(U <= problem.U) and np.any(U < problem.U)
                        for U, ipm in old_memo.get(key, ())
                    )
                    old_decisions.append(skip)
                    went_ipm = Cs.index(C) >= ipm_from
                    runs = old_memo.setdefault(key, [])
                    old_memo.move_to_end(key)
                    if not any(np.array_equal(U, problem.U) for U, _ in runs):
                        runs.append((problem.U.copy(), went_ipm))
                    while len(old_memo) > qp._PATH_MEMO_SIZE:
                        old_memo.popitem(last=False)
                    solve_box_qp(problem, solver="auto_path")
    assert decisions == old_decisions
    assert 0 < sum(decisions) < len(decisions)  # some skips, some not


def test_auto_path_after_smo_c_runs_smo(path_memo):
    # A smaller C that SMO solved is no reason to skip SMO.
    X, y = _data(1, n=60)
    K = pairwise_kernel(X, kernel="gaussian")
    for C in (0.1, 1.0, 10.0):
        res = solve_box_qp(csvm_dual(K, y, C), solver="auto_path")
        ref = solve_box_qp(csvm_dual(K, y, C), solver="auto")
        assert res.solver == ref.solver == "smo"
        np.testing.assert_array_equal(res.z, ref.z)


def test_auto_path_grid_search_same_as_auto(path_memo, monkeypatch):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    import methods._qp as qp
    from methods import SVMm

    skipped = []
    solve_auto = qp._solve_auto

    def counted(problem, **kwargs):
        skipped.append(kwargs.get("skip_smo", False))
        return solve_auto(problem, **kwargs)

    monkeypatch.setattr(qp, "_solve_auto", counted)
    X, y = _data(6, n=200)
    K = pairwise_kernel(X, kernel="linear")
    searches = {}
    for solver in ("auto", "auto_path"):
        path_memo.clear()
        searches[solver] = GridSearchCV(
            SVMm(kernel="precomputed", epsilon=0.0, solver=solver, check_psd=False),
            {"C": [1.0, 10.0, 100.0, 1000.0]},
            cv=StratifiedKFold(3),
            scoring="accuracy",
        ).fit(K, y)
    assert sum(skipped) >= 3  # some inner fits skipped SMO (so the test can fail)
    for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_array_equal(
            searches["auto"].cv_results_[key], searches["auto_path"].cv_results_[key]
        )
    np.testing.assert_array_equal(
        searches["auto"].best_estimator_.dual_coef_,
        searches["auto_path"].best_estimator_.dual_coef_,
    )


def _shrink_like_smo(ix: np.ndarray, drop: np.ndarray) -> tuple[np.ndarray, int]:
    """The SMO kernel's shrinking swaps on ``ix``: (old_pos, new active size)."""
    ix = ix.copy()
    act = ix.shape[0]
    old_pos = np.arange(act)
    gone = drop.copy()
    t = 0
    while t < act:
        if gone[t]:
            act -= 1
            while act > t:
                u = act
                if not gone[u]:
                    for a in (ix, old_pos, gone):
                        a[t], a[u] = a[u], a[t]
                    break
                act -= 1
        t += 1
    return old_pos, act


@pytest.mark.parametrize("seed", range(5))
def test_compact_block_in_place_equals_a_fresh_gather(seed):
    # After a shrink the block of the new active set is rewritten inside the old
    # block's buffer; it must equal K gathered afresh (SVM_m repeats samples in ix).
    from methods._qp._smo import _compact_block

    rng = np.random.default_rng(seed)
    n, m = 30, 50
    K = rng.standard_normal((n, n))
    K = K + K.T
    ix = rng.integers(0, n, size=m)
    old_act = 41
    buf = np.full(old_act * old_act + 7, np.nan)
    identity = np.arange(m)
    block = _compact_block(K, buf, 0, identity, False, ix, old_act)
    np.testing.assert_array_equal(block, K[np.ix_(ix[:old_act], ix[:old_act])])
    old_pos, act = _shrink_like_smo(ix[:old_act], rng.random(old_act) < 0.4)
    assert 0 < act < old_act
    assert np.all(old_pos[:act] >= np.arange(act))
    new_ix = ix[:old_act][old_pos]
    block = _compact_block(K, buf, old_act, old_pos, True, ix, act)
    np.testing.assert_array_equal(block, K[np.ix_(new_ix[:act], new_ix[:act])])


@pytest.mark.parametrize("eps", [None, 3.0], ids=["csvm", "svmm"])
def test_smo_compact_block_leaves_iterates_unchanged(monkeypatch, eps):
    # The dense block of the active variables is a copy of entries of K, so SMO
    # must take the same steps without it, with it at any cap (the default floor,
    # the n/2 rule alone), and with a buffer too small for any block (gathered).
    import methods._qp as qp
    import methods._qp._smo as smo

    X, y = _data(11, n=700)
    K = pairwise_kernel(X, kernel="gaussian", sigma=0.5)
    problem = _problem(K, y, 100.0, eps)
    caps = {"never": 0, "always": 10**9, "half": 700 // 2, "default": None}
    runs, stages = {}, {}
    for name, cap in caps.items():
        with monkeypatch.context() as mp:
            if cap is not None:
                mp.setattr(smo, "_compact_max", lambda n, cap=cap: cap)
            runs[name] = solve_smo(problem)
            # "auto" stops SMO at a budget and resumes it (stage 2) in the same
            # buffer, which the spy sees arrive non-empty.
            calls = []

            def spy(*args, workspace=None, _calls=calls, **kwargs):
                _calls.append(np.size(workspace.get("block", ())))
                return smo.solve_smo(*args, workspace=workspace, **kwargs)

            mp.setattr(qp, "solve_smo", spy)
            runs[name, "auto"] = solve_box_qp(problem, solver="auto")
            stages[name] = calls
    runs["tiny"] = solve_smo(problem, workspace={"block": np.empty(4)})
    assert runs["never"].n_iter > 3000  # several shrinks, hence in-place copies
    assert runs["never", "auto"].info["status"] == 0
    assert len(stages["default"]) == 2 and stages["default"][1] > 0
    for name in ("always", "half", "default", "tiny"):
        np.testing.assert_array_equal(runs[name].z, runs["never"].z)
        assert runs[name].n_iter == runs["never"].n_iter
        assert runs[name].rho == runs["never"].rho
        assert runs[name].objective == runs["never"].objective
    for name in ("always", "half", "default"):
        auto, ref = runs[name, "auto"], runs["never", "auto"]
        np.testing.assert_array_equal(auto.z, ref.z)
        assert (auto.n_iter, auto.rho, auto.solver) == (ref.n_iter, ref.rho, ref.solver)


def _all_at_bound_problem(seed: int) -> BoxQP:
    """A C-SVM dual with C so small that every multiplier ends at C (n+ = n-)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    y = np.repeat([1.0, -1.0], 20)
    return csvm_dual(X @ X.T, y, 1e-3)


@pytest.mark.parametrize("seed", range(4))
def test_rho_from_kkt_is_libsvms_midpoint(seed):
    from sklearn.svm import SVC

    from methods._qp import rho_from_kkt

    problem = _all_at_bound_problem(seed)
    svc = SVC(kernel="precomputed", C=1e-3, tol=1e-8).fit(problem.K, problem.s)
    z = np.zeros(problem.n_vars)
    z[svc.support_] = np.abs(svc.dual_coef_[0])
    assert np.all(z == problem.U)  # no free multiplier: rho is LIBSVM's midpoint
    # sklearn's binary decision function is sum dual_coef k + intercept, = -rho;
    # LIBSVM caches kernel rows in float32 (1e-10 here), the interval is ~2 wide
    assert rho_from_kkt(problem, z) == pytest.approx(-svc.intercept_[0], abs=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_polished_ipm_without_free_multiplier_takes_the_midpoint(seed):
    problem = _all_at_bound_problem(seed)
    smo = solve_smo(problem, tol=1e-8)
    assert smo.info["n_free"] == 0
    for res in (
        solve_ipm(problem, polish_tol=1e-8),
        solve_box_qp(problem, solver="ipm"),
    ):
        assert res.converged
        # not an end of [lb, ub] pinned by a variable 1e-16 U below its bound
        assert res.rho == pytest.approx(smo.rho, abs=1e-9)
        np.testing.assert_array_equal(res.z, problem.U)
        assert res.objective == pytest.approx(smo.objective, rel=1e-12)


def _no_free_problems() -> list[BoxQP]:
    """Duals whose SMO solution has no free variable, with variables at 0 and at U."""
    out = []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((60, 4))
        y = np.where(X[:, 0] + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
        K = pairwise_kernel(X, kernel="gaussian", sigma=1.0, normalize="cosine")
        out += [csvm_dual(K, y, 0.1), svmm_dual(K, y, 0.1, 0.05, 3.0)]
    # per-sample C with zeros: U = 0 counts as the upper bound (LIBSVM)
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((20, 3))
        C = np.full(20, 0.1)
        C[[0, 10]] = 0.0
        out.append(csvm_dual(X @ X.T, np.repeat([1.0, -1.0], 10), C))
    return out


def test_rho_from_kkt_equals_smo_rule_at_zero_and_at_the_top():
    from methods._qp import rho_from_kkt

    seen_zero = seen_svmm = 0
    for problem in _no_free_problems():
        smo = solve_smo(problem, tol=1e-8)
        if smo.info["n_free"]:
            continue
        seen_zero += int(np.any((smo.z == 0) & (problem.U > 0)))
        seen_svmm += int(problem.n_vars > problem.K.shape[0])
        assert rho_from_kkt(problem, smo.z, tol=0.0) == pytest.approx(
            smo.rho, abs=1e-12
        )
        res = solve_ipm(problem, polish_tol=1e-8)
        assert res.rho == pytest.approx(smo.rho, abs=1e-9)
    assert seen_zero >= 3 and seen_svmm >= 1  # both halves of the rule exercised


def test_polish_keeps_genuinely_tiny_free_multipliers():
    # large-scale separable data: every multiplier is ~3e-9, far below 1e-12 C
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 2))
    y = np.repeat([1.0, -1.0], 20)
    X[:, 0] += 3 * y
    X *= 1e4
    problem = csvm_dual(X @ X.T, y, 1e4)
    smo = solve_smo(problem, tol=1e-8)
    assert 0 < smo.z.max() < 1e-12 * 1e4 and smo.info["n_free"] > 0
    res = solve_ipm(problem, polish_tol=1e-8)
    assert res.converged
    np.testing.assert_allclose(res.z, smo.z, rtol=1e-6, atol=0)
    assert res.rho == pytest.approx(smo.rho, rel=1e-6)


def test_rho_from_kkt_with_free_variables_is_the_mean_of_s_g():
    """With free variables LIBSVM's rho is the MEAN of ``s_a G_a`` over them (the
    KKT conditions make them all equal only at the exact optimum): at a loose SMO
    stop they spread, and ``rho_from_kkt`` must give SMO's own rho, computed
    here again from the dense Hessian."""
    from methods._qp import rho_from_kkt

    X, y = _data(2)
    problem = svmm_dual(pairwise_kernel(X, kernel="gaussian"), y, 10.0, 10 / 3, 0.5)
    smo = solve_smo(problem, tol=0.3)
    z, U = smo.z, problem.U
    free = (z > 0.0) & (z < U)
    sG = problem.s * (problem.dense_Q() @ z + problem.p)
    assert free.sum() >= 3 and np.ptp(sG[free]) > 1e-2  # a spread to average
    assert np.mean(sG[free]) == pytest.approx(smo.rho, abs=1e-10)
    assert abs(np.median(sG[free]) - np.mean(sG[free])) > 1e-4
    assert rho_from_kkt(problem, z, tol=0.0) == pytest.approx(smo.rho, abs=1e-10)


def test_smo_iterations_match_libsvm():
    """SMO is LIBSVM's algorithm (WSS2 second-order working-set selection): on
    Gaussian C-SVM duals it takes about as many pair updates as LIBSVM itself
    (scikit-learn's SVC, ``n_iter_``), not the 2-4x of a worse selection rule,
    which would still converge to the same solution and so pass every
    solution test. (LIBSVM's float32 kernel cache makes single counts differ by
    up to ~25%; the total over nine problems agrees to 1%.)"""
    from sklearn.svm import SVC

    ours = libsvm = 0
    for seed in range(3):
        X, y = _data(seed, n=150)
        K = pairwise_kernel(X, kernel="gaussian", sigma=1.0)
        for C in (1.0, 10.0, 100.0):
            ours += solve_smo(csvm_dual(K, y, C), tol=1e-3).n_iter
            libsvm += int(SVC(kernel="precomputed", C=C, tol=1e-3).fit(K, y).n_iter_[0])
    assert 0.8 <= ours / libsvm <= 1.25, (ours, libsvm)


@pytest.mark.parametrize("eps", [0.0, 3.0])
def test_canonical_pairs_zero_one_of_each_pair(eps):
    """Before the SMO polish, ``alpha_i`` and ``beta_i`` of one sample are shifted
    down together (their sum direction leaves ``Qz`` and ``s'z`` unchanged and
    costs ``p_a + p_b = eps >= 0``), so one of the two is 0. eps = 0, the
    eps-SVM dual where the IPM ends with both free, is the case it exists for
    (a cost of exactly 0). Checked against the dense objective."""
    from methods._qp._ipm import _canonical_pairs

    X, y = _data(1)
    problem = svmm_dual(pairwise_kernel(X, kernel="gaussian"), y, 1.0, 0.5, eps)
    n = len(y)
    rng = np.random.default_rng(0)
    z = rng.uniform(0.0, 0.5, 2 * n)
    out = _canonical_pairs(problem, z)
    assert np.all(np.minimum(out[:n], out[n:]) == 0.0)
    np.testing.assert_allclose(out[:n] - out[n:], z[:n] - z[n:], atol=1e-15)
    Q = problem.dense_Q()
    shift = np.minimum(z[:n], z[n:]).sum()
    assert 0.5 * out @ Q @ out + problem.p @ out == pytest.approx(
        0.5 * z @ Q @ z + problem.p @ z - eps * shift, rel=1e-12
    )
    # The C-SVM dual has no pairs: unchanged.
    csvm = csvm_dual(problem.K, y, 1.0)
    np.testing.assert_array_equal(_canonical_pairs(csvm, z[:n]), z[:n])


@pytest.mark.parametrize("d", [25, 26])
def test_auto_low_rank_ipm_up_to_rank_n_over_8(d):
    """The "auto" rule's stage 2: the pivoted Cholesky stops at rank n / 8, and
    the IPM is low-rank for a kernel of rank r <= n / 8, dense above (the costs
    of ``_ipm_cost``). A linear kernel of d features has rank d; n = 200."""
    n = 200
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    res = solve_box_qp(svmm_dual(X @ X.T, y, 1000.0, 1000 / 3, 0.0), solver="auto")
    assert res.solver == "ipm" and res.converged and res.info["smo_iter"] > 0
    assert res.info["rank"] == (d if d <= n // 8 else None)


def test_rank_certificate_ignores_eigenvalues_below_the_pivot_threshold():
    """``rank_exceeds`` must not certify rank > r_max when the pivoted Cholesky
    stops at r_max: here K has rank 20 plus a ridge of 2e-12, 18x below that
    factorization's threshold (RANK_RTOL max diag K), so K is positive definite
    but its numerical rank is 20. Only the shift ``t`` of the certificate keeps
    it from factoring the positive definite sample."""
    from methods._qp._ipm import RANK_RTOL, _pivoted_cholesky

    rng = np.random.default_rng(0)
    n, r = 160, 20
    Q, _ = np.linalg.qr(rng.standard_normal((n, r)))
    K = (Q * np.linspace(1.0, 2.0, r)) @ Q.T + 2e-12 * np.eye(n)
    K = (K + K.T) / 2
    assert np.linalg.eigvalsh(K).min() > 0.0
    assert _pivoted_cholesky(K, RANK_RTOL, r)[1] == r
    assert not rank_exceeds(K, r)
    assert low_rank_factor(K, r).shape == (n, r)


@pytest.mark.parametrize("eps", [None, 0.0, 3.0], ids=["csvm", "eps0", "eps3"])
def test_unpolished_ipm_matches_cvxopt(references, eps):
    """The interior point itself (``polish=False``: what "auto" returns when the
    polish fails) against cvxopt: objective, feasibility and the offset
    ``rho = -b`` of the equality multiplier, which the polish otherwise
    replaces."""
    problem, ref = references["gaussian", 10.0, eps]
    res = solve_ipm(problem, polish=False)
    assert res.converged
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)
    assert np.all(res.z >= 0.0) and np.all(res.z <= problem.U)
    assert abs(problem.s @ res.z) <= 1e-6 * problem.U.max()
    assert res.rho == pytest.approx(ref.rho, abs=1e-5)


def test_is_symmetric_sees_every_entry():
    """The tiled exact symmetry check of ``rank_exceeds`` against
    ``np.array_equal(K, K.T)``: one asymmetric entry anywhere (first and last
    row and column, tile edges at multiples of 64, next to the diagonal) is
    found; an exactly symmetric K passes."""
    from methods._qp._ipm import _is_symmetric

    n = 150
    A = np.random.default_rng(0).standard_normal((n, n))
    K = A + A.T
    assert _is_symmetric(K)
    edges = [(1, 0), (n - 1, 0), (n - 1, n - 2), (64, 0), (65, 64), (130, 64)]
    for i, j in [*edges, (128, 127), (149, 128), (100, 63), (70, 5)]:
        for a, b in ((i, j), (j, i)):
            K2 = K.copy()
            K2[a, b] += 1e-13
            assert not np.array_equal(K2, K2.T)
            assert not _is_symmetric(K2), (a, b)


def test_project_feasible_shift_stays_in_the_box():
    """The cheap branch of ``project_feasible`` (an equal shift of the free
    variables) is taken only if it stays in the box; here it would push a free
    variable above U, so the bisection projection must give a feasible point."""
    K = np.eye(4)
    problem = csvm_dual(K, np.array([1.0, 1.0, -1.0, -1.0]), 1.0)
    z0 = np.array([0.9, 0.95, 1.0, 1.0])  # s'z0 = -0.15; shift +0.075 -> 1.025
    z = project_feasible(problem, z0)
    assert np.all(z >= 0.0) and np.all(z <= problem.U)
    assert abs(problem.s @ z) <= 1e-12
    res = solve_smo(problem, z0=z0, tol=1e-8)
    ref = solve_box_qp(problem, solver="cvxopt")
    assert np.all(res.z <= problem.U)
    assert res.objective == pytest.approx(ref.objective, rel=1e-8)


def test_unpolished_ipm_with_variables_fixed_at_zero():
    """Variables with U = 0 are left out of the interior point (no interior);
    the unpolished IPM solution still matches cvxopt."""
    X, y = _data()
    problem = svmm_dual(pairwise_kernel(X, kernel="gaussian"), y, 1.0, 1.0, 0.0)
    problem.U[::7] = 0.0
    ref = solve_box_qp(problem, solver="cvxopt")
    res = solve_ipm(problem, polish=False)
    assert res.converged and np.all(res.z[::7] == 0.0)
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)


def test_auto_falls_back_to_cvxopt_when_the_ipm_fails(monkeypatch):
    """Stage 4 of "auto": if the IPM does not converge, cvxopt's dense solution
    polished by SMO is returned (not 10^7 SMO iterations)."""
    import methods._qp as qp

    def failing_ipm(problem, **kwargs):
        z = np.zeros(problem.n_vars)
        return qp.QPResult(z, 0.0, 0.0, 1, False, "ipm", {})

    monkeypatch.setattr(qp, "solve_ipm", failing_ipm)
    problem = _slow_eps_svm(1000.0)
    res = solve_box_qp(problem, solver="auto")
    assert res.converged and res.info["fallback"] == "cvxopt"
    assert res.info["violation"] <= SMO_TOL
    ref = solve_box_qp(problem, solver="cvxopt")
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)
