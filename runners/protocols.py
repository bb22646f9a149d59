"""Evaluation protocols: outer splits, inner model selection, refit, predict.

The outer splits depend on the dataset, the protocol and the seed only (never on the
method), so every method of a table is evaluated on the same folds; the runner seeds
the inner splits the same way, so every method also selects its parameters on the
same inner folds. Inner selection is a grid search on the outer training part
(:class:`runners.grid_search.SplitOnceGridSearch`: scikit-learn's ``GridSearchCV``
with each inner split sliced once); with a precomputed kernel ``_safe_split``
slices rows and columns of the Gram matrix.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import (
    KFold,
    ShuffleSplit,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import _safe_split

from runners.checkpoints import SplitCheckpoints
from runners.grid_search import SplitOnceGridSearch
from runners.scoring import search_scoring
from runners.seeds import seed_from

PROTOCOL_KINDS = (
    "nested_cv",
    "repeated_splits",
    "train_val_test",
    "nested_training_sets",  # checks: every training set a nested_cv run fits
)

Split = tuple[np.ndarray, np.ndarray]


class ProtocolError(ValueError):
    """The data cannot be split as the protocol asks; the message says how to fix it."""


def train_size_problem(value: Any) -> str | None:
    """Why ``protocol.train_size`` cannot be a training part's size, else None.

    It is a count of training points (kdml Figs. 3-4: 100), an integer >= 1, or null
    (``protocol.train_fraction`` decides); a fraction of the data is
    ``train_fraction``'s, so a fractional value is refused with that advice rather
    than truncated to 0. An integral float (``100.0``) is the count.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer)):
        return (
            f"protocol.train_size={value!r}: must be a number of training points, "
            "an integer >= 1 (or null: protocol.train_fraction decides)"
        )
    if isinstance(value, float) and not value.is_integer():
        return (
            f"protocol.train_size={value!r}: a number of training points, not a "
            "fraction; to train on a fraction of the data, set "
            "protocol.train_fraction (and protocol.train_size=null)"
        )
    if value < 1:
        return (
            f"protocol.train_size={value!r}: must be a number of training points >= 1 "
            "(or null: protocol.train_fraction decides)"
        )
    return None


def _n_test_of_train_size(
    value: Any, y_pool: np.ndarray, stratified: bool, dataset: str, balanced: bool
) -> int:
    """The test part's size when ``protocol.train_size`` fixes the training part's.

    Checked against the pool being split, which scikit-learn would otherwise refuse
    in terms of the ``test_size`` the runner derives (``test_size=-292 should
    be...``), naming neither the key nor the data.
    """
    problem = train_size_problem(value)
    if problem:
        raise ProtocolError(problem + ".")
    n, pool = int(value), len(y_pool)
    # a stratified split puts at least one point of every class on each side
    low = len(np.unique(y_pool)) if stratified else 1
    if not low <= n <= pool - low:
        what = f"{pool} points" + (
            " (after protocol.balance_classes)" if balanced else ""
        )
        raise ProtocolError(
            f"protocol.train_size={n}: {dataset!r} has {what} to split, so the "
            f"training part can have {low} to {pool - low} of them"
            + (" (one of each class on each side)" if stratified else "")
            + ". Set protocol.train_size in that range, or to null to split by "
            "protocol.train_fraction."
        )
    return pool - n


def _min_class_count(y: np.ndarray) -> tuple[Any, int]:
    classes, counts = np.unique(y, return_counts=True)
    i = int(np.argmin(counts))
    cls = classes[i]
    return (cls.item() if isinstance(cls, np.generic) else cls), int(counts[i])


def outer_splits(
    y: np.ndarray, protocol: Mapping[str, Any], dataset: str, seed: int
) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
    """``(repetition, split, train_idx, test_idx)`` for every outer split.

    Seeds come from ``("outer", dataset, seed, repetition)``: the method is left out.
    """
    kind = protocol["kind"]
    if kind not in PROTOCOL_KINDS:
        raise ProtocolError(
            f"Unknown protocol kind {kind!r}; choose one of {PROTOCOL_KINDS}."
        )
    y = np.asarray(y)
    out = []
    for rep in range(int(protocol["repetitions"])):
        rs = seed_from("outer", dataset, seed, rep)
        if kind in ("nested_cv", "nested_training_sets"):
            k = int(protocol["outer_folds"])
            if protocol["stratified"]:
                cls, cnt = _min_class_count(y)
                if cnt < k:
                    raise ProtocolError(
                        f"{k}-fold stratified CV needs {k} samples per class; class "
                        f"{cls!r} of {dataset!r} has {cnt}. Lower protocol.outer_folds "
                        "or set protocol.stratified=false."
                    )
                cv = StratifiedKFold(k, shuffle=protocol["shuffle"], random_state=rs)
            else:
                cv = KFold(k, shuffle=protocol["shuffle"], random_state=rs)
        else:
            pool = np.arange(len(y))
            if protocol.get("balance_classes"):
                pool = balanced_subsample(y, seed_from("balance", dataset, seed, rep))
            # test size floor((1 - f) n): wrbf Table 1's totals (600 x 139 test
            # instances for breast_w's 699 rows, 600 x 67 for ecoli's 336) fix it.
            f_test = 1.0 - float(protocol["train_fraction"])
            n_test = int(np.floor(round(f_test * len(pool), 9)))
            if protocol.get("train_size") is not None:
                n_test = _n_test_of_train_size(
                    protocol["train_size"], y[pool], bool(protocol["stratified"]),
                    dataset, bool(protocol.get("balance_classes")),
                )
            split_cls = (
                StratifiedShuffleSplit if protocol["stratified"] else ShuffleSplit
            )
            cv = split_cls(n_splits=1, test_size=n_test, random_state=rs)
            for j, (tr, te) in enumerate(cv.split(np.zeros(len(pool)), y[pool])):
                out.append((rep, j, pool[tr], pool[te]))
            continue
        for j, (tr, te) in enumerate(cv.split(np.zeros(len(y)), y)):
            out.append((rep, j, tr, te))
    return out


def balanced_subsample(y: np.ndarray, random_state: int) -> np.ndarray:
    """Sorted indices with every class subsampled to the smallest class count.

    kdml Sec. 5: "For all datasets, each class was equally represented in number
    of samples" (``protocol.balance_classes=true``).
    """
    rng = np.random.default_rng(random_state)
    classes, counts = np.unique(y, return_counts=True)
    k = int(counts.min())
    keep = [rng.choice(np.flatnonzero(y == c), size=k, replace=False) for c in classes]
    return np.sort(np.concatenate(keep))


def _inner_cv(
    y_train: np.ndarray, protocol: Mapping[str, Any], seed_parts: Sequence[object]
):
    rs = seed_from("inner", *seed_parts)
    if protocol["kind"] == "train_val_test":
        return StratifiedShuffleSplit(
            n_splits=1, test_size=float(protocol["val_fraction"]), random_state=rs
        )
    k = int(protocol["inner_folds"])
    cls, cnt = _min_class_count(y_train)
    if cnt < k:
        raise ProtocolError(
            f"Inner {k}-fold CV needs {k} samples per class; class {cls!r} has {cnt} "
            f"in outer training split {seed_parts[-1]}. Lower protocol.inner_folds."
        )
    return StratifiedKFold(k, shuffle=True, random_state=rs)


def fold_seed_parts(dataset: str, seed: int) -> tuple[str, int]:
    """What seeds a run's inner folds, before the outer split's ``(rep, j)``.

    The data and the seed only, like the outer folds: every method and kernel
    selects its parameters on the same inner splits (mlsvm Sec. VII: "Folds are the
    same for all algorithms"), so paired comparisons differ by the method alone.
    """
    return (dataset, int(seed))


def nested_training_sets(
    y: np.ndarray, protocol: Mapping[str, Any], dataset: str, seed: int
):
    """Every ``(train, held_out)`` index pair a nested-CV run fits on, in order.

    Each outer split's training part (the refit) followed by the inner splits of its
    grid search, exactly as :func:`evaluate` with
    ``seed_parts=fold_seed_parts(dataset, seed)`` draws them; for checks that must
    see the same training sets as a run (``protocol.kind=nested_training_sets``).
    """
    parts = fold_seed_parts(dataset, seed)
    for rep, j, train, test in outer_splits(y, protocol, dataset, seed):
        yield train, test
        cv = _inner_cv(y[train], protocol, (*parts, rep, j))
        for itr, ite in cv.split(np.zeros(len(train)), y[train]):
            yield train[itr], train[ite]


def training_set_splits(
    y: np.ndarray, protocol: Mapping[str, Any], dataset: str, seed: int
) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
    """``(0, i, train, held_out)`` for the i-th pair of :func:`nested_training_sets`.

    The splits of ``protocol.kind=nested_training_sets``: every training set the
    nested CV of the same protocol fits, for checks run through the runner.
    """
    pairs = nested_training_sets(y, protocol, dataset, seed)
    return [(0, i, tr, te) for i, (tr, te) in enumerate(pairs)]


def grid_size(grid: Mapping[str, Sequence[Any]] | None) -> int:
    if not grid:
        return 1
    return int(np.prod([len(v) for v in grid.values()]))


def _param_label(params: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={params[k]!r}" for k in sorted(params))


@dataclass
class FoldResult:
    """One outer split: what was chosen, how long it took, what the solver said."""

    repetition: int
    split: int
    test_idx: np.ndarray
    y_pred: np.ndarray
    decision: np.ndarray | None
    best_params: dict[str, Any]
    inner_mean_test_error: dict[str, float]
    fit_seconds: float
    search_seconds: float
    predict_seconds: float
    solver: dict[str, Any]
    inner_convergence_warnings: int
    embedding: list[list[float]] | None = None
    staged_test_auc: list[float] | None = None


def solver_diagnostics(estimator: Any) -> dict[str, Any]:
    """Objective, iterations and convergence of a fitted estimator (if it has them).

    ``converged`` is the estimator's own stopping rule. An estimator that runs
    another solver inside it adds that one's: LMNN-MKL_P's ``converged`` is its
    outer alternation's (lmnnmkl Algorithm 1), ``lmnn_converged`` whether the LMNN
    of every metric step stopped on its ``tol``, ``rank_one`` whether every weight
    step reached eq. 17; a kNN classifier on a learned metric (MetricKNN) adds
    ``metric_converged``, its metric learner's.
    """
    out: dict[str, Any] = {}
    for attr, key in (
        ("objective_", "objective"),
        ("dual_objective_", "dual_objective"),
        ("dual_objective_rbf_", "dual_objective_initial"),
        ("n_iter_", "n_iter"),
        ("converged_", "converged"),
        ("lmnn_converged_", "lmnn_converged"),
        ("rank_one_", "rank_one"),
        ("fit_status_", "fit_status"),
    ):
        value = getattr(estimator, attr, None)
        if value is None:
            continue
        value = np.asarray(value)
        if key in ("converged", "lmnn_converged", "rank_one"):
            out[key] = bool(np.all(value))
        elif key in ("n_iter", "fit_status"):
            out[key] = int(np.max(value)) if key == "fit_status" else int(np.sum(value))
        else:
            out[key] = float(np.sum(value))
    if "converged" not in out and "fit_status" in out:
        out["converged"] = out["fit_status"] == 0
    check = getattr(estimator, "check_", None)
    if check is not None:
        out["check"] = dict(check)  # a check estimator's measures (runners.checks)
    metric_iters = getattr(estimator, "metric_n_iter_path_", None)
    if metric_iters is not None:
        # LMNN-MKL_P: n_iter counts its rounds; the LMNN iterations inside them
        # are where its time goes
        out["metric_n_iter"] = int(np.sum(metric_iters))
    weights = getattr(estimator, "kernel_weights_", None)
    if weights is not None:
        # MKL: the learned convex combination, averaged over one-vs-one pairs
        out["kernel_weights"] = np.atleast_2d(weights).mean(axis=0).tolist()
    # a learned metric inside a kNN classifier (MetricKNN): whether its solver
    # converged; kdml's report also takes the key as the sign of code that warns
    # when Method 2 stops at max_iter
    learner = getattr(estimator, "metric_learner_", None)
    if learner is not None and getattr(learner, "converged_", None) is not None:
        out["metric_converged"] = bool(np.all(learner.converged_))
    return out


def sequential_search(
    estimator: Any,
    X: np.ndarray,
    y: np.ndarray,
    stages: Sequence[Mapping[str, Sequence[Any]]],
    cv: Any,
    scoring: str,
) -> tuple[Any, dict[str, Any], float, dict[str, float]]:
    """Grid search stage by stage on the same inner splits, then refit the best.

    Stage k searches its own grid with the best values of the stages before it
    fixed (a later stage may re-set a parameter, e.g. ARBF's ``n_iter``). For
    methods whose paper selects in steps, as arbf Alg. 1 step 0 takes beta0 and
    lambda from KOMD validation before mu and tau are chosen.
    Returns ``(model, best_params, refit_seconds, {"stage<k>:<params>": 1 - score})``.
    """
    best: dict[str, Any] = {}
    inner_err: dict[str, float] = {}
    search = None
    for k, stage in enumerate(stages):
        search = SplitOnceGridSearch(
            clone(estimator).set_params(**best),
            param_grid={p: list(v) for p, v in stage.items()},
            cv=cv,
            scoring=scoring,
            refit=k == len(stages) - 1,
        )
        search.fit(X, y)
        best.update(search.best_params_)
        for params, score in zip(
            search.cv_results_["params"], search.cv_results_["mean_test_score"]
        ):
            inner_err[f"stage{k}:{_param_label(params)}"] = float(1.0 - score)
    return search.best_estimator_, best, float(search.refit_time_), inner_err


def _refit_on_train_part(
    estimator: Any,
    best: Mapping[str, Any],
    X_tr: np.ndarray,
    y_tr: np.ndarray,
    X_te: np.ndarray,
    protocol: Mapping[str, Any],
    seed_parts: Sequence[object],
) -> tuple[Any, np.ndarray, float]:
    """The best model fitted on the inner training part (the search's own split).

    Returns the model, ``X_te`` (for a precomputed kernel: its columns of that part)
    and the fit time.
    """
    if protocol["kind"] != "train_val_test":
        raise ProtocolError(
            f"protocol.refit_on=train needs protocol.kind=train_val_test (one "
            f"validation split); got {protocol['kind']!r}. Use refit_on=train_val."
        )
    inner_tr, _ = next(
        _inner_cv(y_tr, protocol, seed_parts).split(np.zeros(len(y_tr)), y_tr)
    )
    model = clone(estimator).set_params(**best)
    X_fit, y_fit = _safe_split(model, X_tr, y_tr, inner_tr)
    if get_tags(model).input_tags.pairwise:
        X_te = X_te[:, inner_tr]
    t0 = time.perf_counter()
    model.fit(X_fit, y_fit)
    return model, X_te, time.perf_counter() - t0


def evaluate_split(
    estimator: Any,
    X: np.ndarray,
    y: np.ndarray,
    train: np.ndarray,
    test: np.ndarray,
    grid: Mapping[str, Sequence[Any]] | None,
    protocol: Mapping[str, Any],
    seed_parts: Sequence[object],
    scoring: str = "accuracy",
) -> dict[str, Any]:
    """Select hyper-parameters on ``train``, refit, and predict ``test``.

    ``scoring`` is the configured ``search.scoring`` (a scikit-learn scorer name);
    ``inner_mean_test_error`` records ``1 - score`` for every candidate.
    """
    X_tr, y_tr = _safe_split(estimator, X, y, train)
    X_te, y_te = _safe_split(estimator, X, y, test, train)
    inner_err: dict[str, float] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        if isinstance(grid, Sequence):  # selection in stages (sequential_search)
            model, best, fit_seconds, inner_err = sequential_search(
                estimator, X_tr, y_tr, grid,
                _inner_cv(y_tr, protocol, seed_parts), scoring,
            )
        elif grid_size(grid) > 1:
            search = SplitOnceGridSearch(
                clone(estimator),
                param_grid={k: list(v) for k, v in grid.items()},
                cv=_inner_cv(y_tr, protocol, seed_parts),
                scoring=search_scoring(scoring),
                refit=True,
            )
            search.fit(X_tr, y_tr)
            model = search.best_estimator_
            best = dict(search.best_params_)
            fit_seconds = float(search.refit_time_)
            for params, score in zip(
                search.cv_results_["params"], search.cv_results_["mean_test_score"]
            ):
                inner_err[_param_label(params)] = float(1.0 - score)
        else:
            params = {k: v[0] for k, v in (grid or {}).items()}
            model = clone(estimator).set_params(**params)
            t1 = time.perf_counter()
            model.fit(X_tr, y_tr)
            fit_seconds = time.perf_counter() - t1
            best = params
        search_seconds = time.perf_counter() - t0
    if str(protocol.get("refit_on", "train_val")) == "train":
        # protocol.refit_on=train: the selected model is refitted on the training
        # part only (the validation part only selects), a reading of arbf Sec. 5,
        # which does not say; the search's own refit (train + validation) is dropped
        model, X_te, fit_seconds = _refit_on_train_part(
            estimator, best, X_tr, y_tr, X_te, protocol, seed_parts
        )
    n_warn = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    t0 = time.perf_counter()
    y_pred = model.predict(X_te)
    decision = None
    if hasattr(model, "decision_function"):
        d = np.asarray(model.decision_function(X_te))
        decision = d if d.ndim == 1 else None
    predict_seconds = time.perf_counter() - t0
    embedding = None
    if protocol.get("record_embedding"):
        # a kNN classifier embeds through its fitted metric learner (MetricKNN)
        mapper = model if hasattr(model, "transform") else model.metric_learner_
        embedding = np.asarray(mapper.transform(X_te), dtype=float).tolist()
    staged_auc = None
    if decision is not None and hasattr(model, "staged_decision_function"):
        # test AUC after every iteration (ARBF, arbf Fig. 2), as GradientBoosting's
        from sklearn.metrics import roc_auc_score

        positive = np.asarray(y_te) == model.classes_[1]
        staged_auc = [
            float(roc_auc_score(positive, s))
            for s in model.staged_decision_function(X_te)
        ]
    return {
        "embedding": embedding,
        "model": model,
        "y_pred": y_pred,
        "decision": decision,
        "best_params": best,
        "inner_mean_test_error": inner_err,
        "fit_seconds": fit_seconds,
        "search_seconds": search_seconds,
        "predict_seconds": predict_seconds,
        "solver": solver_diagnostics(model),
        "inner_convergence_warnings": n_warn,
        "staged_test_auc": staged_auc,
    }


def evaluate(
    estimator: Any,
    X: np.ndarray,
    y: np.ndarray,
    splits: Sequence[tuple[int, int, np.ndarray, np.ndarray]],
    grid: Mapping[str, Sequence[Any]] | None,
    protocol: Mapping[str, Any],
    seed_parts: Sequence[object],
    on_split: Callable[[int], None] | None = None,
    scoring: str = "accuracy",
    checkpoints: SplitCheckpoints | None = None,
) -> list[FoldResult]:
    """Run :func:`evaluate_split` on every outer split.

    With ``checkpoints``, a split finished by an earlier, killed run of the same
    config is loaded instead of recomputed, and each new split is saved when done.
    """
    results = []
    for i, (rep, j, train, test) in enumerate(splits):
        saved = None if checkpoints is None else checkpoints.load(rep, j, test)
        if saved is not None:
            results.append(saved)
            if on_split is not None:
                on_split(i)
            continue
        r = evaluate_split(
            estimator, X, y, train, test, grid, protocol, (*seed_parts, rep, j),
            scoring=scoring,
        )
        results.append(
            FoldResult(
                repetition=rep,
                split=j,
                test_idx=test,
                y_pred=r["y_pred"],
                decision=r["decision"],
                best_params=r["best_params"],
                inner_mean_test_error=r["inner_mean_test_error"],
                fit_seconds=r["fit_seconds"],
                search_seconds=r["search_seconds"],
                predict_seconds=r["predict_seconds"],
                solver=r["solver"],
                inner_convergence_warnings=r["inner_convergence_warnings"],
                embedding=r["embedding"],
                staged_test_auc=r["staged_test_auc"],
            )
        )
        if checkpoints is not None:
            checkpoints.save(results[-1])
        if on_split is not None:
            on_split(i)
    return results


def evaluate_every_fit(
    estimator: Any,
    X: np.ndarray,
    y: np.ndarray,
    splits: Sequence[tuple[int, int, np.ndarray, np.ndarray]],
    grid: Mapping[str, Sequence[Any]] | None,
) -> list[FoldResult]:
    """Fit every point of ``grid`` on every split, without selection.

    ``protocol.kind=nested_training_sets``: one :class:`FoldResult` per (split,
    parameters), ``best_params`` being the parameters fitted; a check estimator's
    ``check_`` lands in its ``solver`` diagnostics.
    """
    from sklearn.model_selection import ParameterGrid

    results = []
    for rep, j, train, test in splits:
        X_tr, y_tr = _safe_split(estimator, X, y, train)
        X_te, _ = _safe_split(estimator, X, y, test, train)
        for params in ParameterGrid({k: list(v) for k, v in (grid or {}).items()}):
            model = clone(estimator).set_params(**params)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                t0 = time.perf_counter()
                model.fit(X_tr, y_tr)
                fit_seconds = time.perf_counter() - t0
            t0 = time.perf_counter()
            y_pred = model.predict(X_te)
            d = np.asarray(model.decision_function(X_te))
            results.append(
                FoldResult(
                    repetition=rep,
                    split=j,
                    test_idx=test,
                    y_pred=y_pred,
                    decision=d if d.ndim == 1 else None,
                    best_params=dict(params),
                    inner_mean_test_error={},
                    fit_seconds=fit_seconds,
                    search_seconds=fit_seconds,
                    predict_seconds=time.perf_counter() - t0,
                    solver=solver_diagnostics(model),
                    inner_convergence_warnings=sum(
                        issubclass(w.category, ConvergenceWarning) for w in caught
                    ),
                )
            )
    return results
