"""Box-constrained QP solvers for the SVM family.

Every solver takes a :class:`BoxQP` (``min 1/2 z'Qz + p'z  s.t.  s'z = 0,
0 <= z <= U``) and returns a :class:`QPResult`. ``solve_box_qp`` dispatches on
``solver``; "cvxopt" is the dense reference that the fast paths are tested against.
"""

from methods._qp._cvxopt import rho_from_kkt, solve_cvxopt
from methods._qp._problems import BoxQP, csvm_dual, svmm_dual
from methods._qp._result import QPResult

SOLVERS = ("cvxopt",)


def solve_box_qp(problem: BoxQP, *, solver: str = "cvxopt", **options) -> QPResult:
    """Solve ``problem`` with the named solver (see ``SOLVERS``)."""
    if solver == "cvxopt":
        return solve_cvxopt(problem, **options)
    raise ValueError(f"Unknown QP solver {solver!r}; choose one of {SOLVERS}.")


__all__ = [
    "SOLVERS",
    "BoxQP",
    "QPResult",
    "csvm_dual",
    "rho_from_kkt",
    "solve_box_qp",
    "solve_cvxopt",
    "svmm_dual",
]
