"""Exact feasibility of small systems of linear integer constraints (the dependence tests' solver).

A system is integer variables with bounds and rows ``sum(a_i * x_i) <= b`` or ``== b``.  Dependence tests
ask thousands of tiny systems (a handful of loop variables, one row per subscript and bound), so the
solver first decides what it can cheaply and exactly:

* the GCD test on each equality (``2x - 2y = 1`` has no integer solution);
* bounds propagation to a fixed point (a row forces each variable into the range the others leave it);
  an empty range proves the system infeasible, and a point where every variable is fixed is a solution;
* branching on the smallest range, depth first.

Anything that takes more than a few thousand steps (huge symbolic ranges that shrink one unit a round)
goes to HiGHS through ``scipy.optimize.milp``, which is exact for these integer programs too.
"""
from __future__ import annotations

import math

INF = 1 << 62  # an unbounded variable's range (far beyond any index)
_ROUNDS = 64  # propagation rounds before a stuck system is handed to the MILP solver
_NODES = 4000  # branch-and-bound nodes before the same


class System:
    """Integer variables with inclusive bounds and linear rows over them."""

    def __init__(self) -> None:
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.rows: list[tuple[tuple[tuple[int, int], ...], int, bool]] = []  # (((var, coef), ...), rhs, is_eq)

    def var(self, lo: int = -INF, hi: int = INF) -> int:
        self.lo.append(lo)
        self.hi.append(hi)
        return len(self.lo) - 1

    def copy(self) -> "System":
        s = System()
        s.lo, s.hi, s.rows = list(self.lo), list(self.hi), list(self.rows)
        return s

    def add(self, coefs: dict, rhs: int, eq: bool) -> None:
        """``sum(coefs[v] * v) <= rhs`` (``== rhs`` when ``eq``); ``coefs`` maps variables to ints."""
        terms = tuple(sorted((v, int(c)) for v, c in coefs.items() if c))
        if not terms:
            if (rhs != 0) if eq else (rhs < 0):
                self.rows.append(((), 1, True))  # 0 == 1: infeasible
            return
        self.rows.append((terms, int(rhs), eq))

    def le(self, coefs: dict, rhs: int) -> None:
        self.add(coefs, rhs, False)

    def eq(self, coefs: dict, rhs: int) -> None:
        self.add(coefs, rhs, True)

    def feasible(self) -> bool:
        """Whether some integer point satisfies every row (exact)."""
        for terms, rhs, eq in self.rows:
            if not terms:
                return False
            if eq:
                g = 0
                for _v, c in terms:
                    g = math.gcd(g, c)
                if rhs % g:
                    return False
        budget = [_NODES]
        got = _search(list(self.lo), list(self.hi), self.rows, budget)
        if got is None:
            return _milp(self)
        return got


def _propagate(lo: list[int], hi: list[int], rows) -> bool | None:
    """Tighten the bounds in place; False when a range empties, None when still changing after the rounds."""
    for _ in range(_ROUNDS):
        changed = False
        for terms, rhs, eq in rows:
            for sign in ((1, -1) if eq else (1,)):
                # sign * sum(a x) <= sign * rhs
                smin = 0
                for v, c in terms:
                    a = sign * c
                    smin += a * lo[v] if a > 0 else a * hi[v]
                b = sign * rhs
                if smin > b:
                    return False
                slack = b - smin
                for v, c in terms:
                    a = sign * c
                    if a > 0:
                        new = lo[v] + slack // a
                        if new < hi[v]:
                            hi[v] = new
                            changed = True
                    else:
                        new = hi[v] - slack // (-a)
                        if new > lo[v]:
                            lo[v] = new
                            changed = True
                    if lo[v] > hi[v]:
                        return False
        if not changed:
            return True
    return None


def _search(lo, hi, rows, budget) -> bool | None:
    budget[0] -= 1
    if budget[0] < 0:
        return None
    state = _propagate(lo, hi, rows)
    if state is False:
        return False
    if state is None:
        return None
    # pick the smallest range that is not a point
    best, size = -1, None
    for v in range(len(lo)):
        n = hi[v] - lo[v]
        if n > 0 and (size is None or n < size):
            best, size = v, n
    if best < 0:
        return True  # every variable fixed and every row holds (propagation checked them)
    if size >= INF:  # an unbounded variable left free: let the MILP decide
        return None
    if size < 8:
        splits = [(x, x) for x in range(lo[best], hi[best] + 1)]
    else:
        mid = lo[best] + size // 2
        splits = [(lo[best], mid), (mid + 1, hi[best])]
    for a, b in splits:
        l2, h2 = list(lo), list(hi)
        l2[best], h2[best] = a, b
        got = _search(l2, h2, rows, budget)
        if got is None or got:
            return got
    return False


def _milp(s: System) -> bool:
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = len(s.lo)
    if not s.rows:
        return all(lo <= hi for lo, hi in zip(s.lo, s.hi))
    A = np.zeros((len(s.rows), n))
    lb = np.empty(len(s.rows))
    ub = np.empty(len(s.rows))
    for r, (terms, rhs, eq) in enumerate(s.rows):
        for v, c in terms:
            A[r, v] = c
        lb[r] = rhs if eq else -np.inf
        ub[r] = rhs
    bounds = Bounds([-np.inf if x <= -INF else x for x in s.lo], [np.inf if x >= INF else x for x in s.hi])
    res = milp(np.zeros(n), constraints=[LinearConstraint(A, lb, ub)], integrality=np.ones(n), bounds=bounds)
    return res.status == 0
