"""Worst-case trip counts of loops whose bounds are expressions: interval bounds of integer scalars.

The cost model needs the largest number of iterations a loop such as
``for j in range(lo, pos + 1)`` can make, where ``pos`` and ``lo`` are locals
computed from loop variables and a runtime scalar (``n_valid``).  :class:`Ranges`
keeps an interval per integer scalar (loop variables from their bounds, locals
from their initial value, parameters unknown) and :meth:`Ranges.max_trips`
bounds ``stop - start``.  The difference is taken before the intervals, so a
common term cancels (``(pos + 1) - (pos - w + 1)`` is ``w`` whatever ``pos``
is), and ``max``/``min`` in a bound split the difference
(``a - max(b, c) = min(a - b, a - c)``).  ``None`` means unbounded.

    n = max(min(n_valid, 64), 1); pos = n - 1; lo = max(0, pos - 8 + 1)
    for j in range(lo, pos + 1)   ->  at most 8 trips
"""
from __future__ import annotations

from .nodes import BinOp, Call, Cast, Const, Expr, UnaryOp, Var

Interval = tuple[int | None, int | None]
UNKNOWN: Interval = (None, None)


def _add(a: Interval, b: Interval) -> Interval:
    return (None if a[0] is None or b[0] is None else a[0] + b[0], None if a[1] is None or b[1] is None else a[1] + b[1])


def _neg(a: Interval) -> Interval:
    return (None if a[1] is None else -a[1], None if a[0] is None else -a[0])


def _scale(a: Interval, c: int) -> Interval:
    lo, hi = (None if a[0] is None else a[0] * c), (None if a[1] is None else a[1] * c)
    return (lo, hi) if c >= 0 else (hi, lo)


def _max(a: Interval, b: Interval) -> Interval:
    lo = a[0] if b[0] is None else b[0] if a[0] is None else max(a[0], b[0])
    hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
    return lo, hi


def _min(a: Interval, b: Interval) -> Interval:
    hi = a[1] if b[1] is None else b[1] if a[1] is None else min(a[1], b[1])
    lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
    return lo, hi


class Ranges:
    """Intervals of the integer scalars in scope while walking a kernel in program order."""

    def __init__(self):
        self.env: dict[str, Interval] = {}
        self.defs: dict[str, Expr] = {}  # integer locals and their defining expressions

    def set(self, name: str, e: Expr | None) -> None:
        """``name`` takes the value of ``e`` (None: unknown, e.g. reassigned)."""
        self.env[name] = UNKNOWN if e is None else self.interval(e)
        if e is None:
            self.defs.pop(name, None)
        else:
            self.defs[name] = e

    def loop(self, var: str, start: Expr, stop: Expr) -> None:
        lo, hi = self.interval(start)[0], self.interval(stop)[1]
        self.env[var] = (lo, None if hi is None else hi - 1)
        self.defs.pop(var, None)

    def _expand(self, e: Expr, depth: int = 8) -> Expr:
        """``e`` with its locals replaced by their definitions, so common terms of two bounds can cancel."""
        while depth and isinstance(e, Var) and e.name in self.defs:
            e, depth = self.defs[e.name], depth - 1
        if not depth:
            return e
        if isinstance(e, BinOp):
            return BinOp(e.op, self._expand(e.lhs, depth - 1), self._expand(e.rhs, depth - 1), e.dtype, e.loc)
        if isinstance(e, Call) and e.fn in ("max", "min"):
            return Call(e.fn, tuple(self._expand(a, depth - 1) for a in e.args), e.dtype, e.loc)
        if isinstance(e, Cast):
            return Cast(self._expand(e.operand, depth - 1), e.dtype, e.loc)
        return e

    def interval(self, e: Expr) -> Interval:
        if isinstance(e, Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
            return e.value, e.value
        if isinstance(e, Var):
            return self.env.get(e.name, UNKNOWN)
        if isinstance(e, Cast):
            return self.interval(e.operand)
        if isinstance(e, UnaryOp) and e.op == "neg":
            return _neg(self.interval(e.operand))
        if isinstance(e, BinOp) and e.op in ("add", "sub"):
            b = self.interval(e.rhs)
            return _add(self.interval(e.lhs), b if e.op == "add" else _neg(b))
        if isinstance(e, BinOp) and e.op == "mul":
            for x, y in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
                if isinstance(y, Const) and isinstance(y.value, int):
                    return _scale(self.interval(x), y.value)
            return UNKNOWN
        if isinstance(e, Call) and e.fn in ("max", "min") and e.args:
            out = self.interval(e.args[0])
            for a in e.args[1:]:
                out = (_max if e.fn == "max" else _min)(out, self.interval(a))
            return out
        return UNKNOWN

    def max_diff(self, a: Expr, b: Expr) -> int | None:
        """An upper bound of ``a - b``, or None."""
        if isinstance(b, Call) and b.fn in ("max", "min") and b.args:
            parts = [self.max_diff(a, x) for x in b.args]
            return _combine(parts, b.fn == "max")
        if isinstance(a, Call) and a.fn in ("max", "min") and a.args:
            parts = [self.max_diff(x, b) for x in a.args]
            return _combine(parts, a.fn == "min")
        terms = _linear(a)
        for k, c in _linear(b).items():
            terms[k] = terms.get(k, 0) - c
        hi: int | None = terms.pop(None, 0)
        for k, c in terms.items():
            if c:
                h = _scale(self.env.get(k, UNKNOWN) if isinstance(k, str) else self.interval(k), c)[1]
                hi = None if hi is None or h is None else hi + h
        return hi

    def max_trips(self, start: Expr, stop: Expr, step: int = 1) -> int | None:
        d = self.max_diff(self._expand(stop), self._expand(start))
        return None if d is None else max(0, -(-d // step))


def _linear(e: Expr) -> dict:
    """``e`` as {term: coeff, None: const}: terms are variable names and, for anything not linear (a ``max``, a
    product of variables), the subexpression itself, so the same subexpression on both sides cancels."""
    if isinstance(e, Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return {None: e.value}
    if isinstance(e, Var):
        return {e.name: 1}
    if isinstance(e, Cast):
        return _linear(e.operand)
    if isinstance(e, UnaryOp) and e.op == "neg":
        return {k: -c for k, c in _linear(e.operand).items()}
    if isinstance(e, BinOp) and e.op in ("add", "sub"):
        out = _linear(e.lhs)
        for k, c in _linear(e.rhs).items():
            out[k] = out.get(k, 0) + (c if e.op == "add" else -c)
        return out
    if isinstance(e, BinOp) and e.op == "mul":
        for x, y in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if isinstance(y, Const) and isinstance(y.value, int):
                return {k: c * y.value for k, c in _linear(x).items()}
    return {e: 1}


def _combine(parts: list[int | None], smallest: bool) -> int | None:
    """``min`` of upper bounds (any known one bounds it) or ``max`` of them (all must be known)."""
    known = [p for p in parts if p is not None]
    if smallest:
        return min(known) if known else None
    return max(known) if len(known) == len(parts) else None



def loop_trips(stmts) -> dict[int, int | None]:
    """The most trips of every loop in ``stmts`` (a kernel body), keyed by ``id`` of the For node, walking in
    program order so expression bounds see the intervals of the loop variables and integer locals around them."""
    from .nodes import Assign, Decl, For, If
    from ..types import IntType

    r = Ranges()
    out: dict[int, int | None] = {}

    def go(body) -> None:
        for s in body:
            if isinstance(s, Decl):
                r.set(s.name, s.init if isinstance(s.dtype, IntType) else None)
            elif isinstance(s, Assign):
                r.set(s.name, None)
            elif isinstance(s, For):
                out[id(s)] = r.max_trips(s.start, s.stop, s.step)
                r.loop(s.var, s.start, s.stop)
                go(s.body)
            elif isinstance(s, If):
                go(s.then)
                go(s.orelse)

    go(stmts)
    return out


__all__ = ["Ranges", "loop_trips"]
