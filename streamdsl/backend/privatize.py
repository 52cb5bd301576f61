"""Array privatisation for the reference simulator: per-row accumulators made per-iteration.

The library's linears work a row at a time with one row of accumulators::

    A: f32[n]
    for i in range(t):
        for o in range(n): A[o] = 0.0            # every element written first
        for k, o in grid(K, n): A[o] += X[i, k] * W[o, k]
        for o in range(n): Y[i, o] = A[o]

``A`` carries nothing from one ``i`` to the next, but the loop reuses it, so
``classify`` calls ``i`` sequential and the simulator runs it row by row.
:func:`privatize` gives each iteration its own copy (``A: f32[t, n]``,
``A[o]`` -> ``A[i, o]``) when that is provably the same program: ``A`` is a
local used nowhere but inside the loop, and the loop body's first statement
that touches it is a loop nest writing every element of it (at exactly the
nest's variables, over its whole shape; scalar locals may be computed on the
way) before anything reads it.  Only the
simulator sees the rewritten kernel; hardware keeps the one row.
"""
from __future__ import annotations

import dataclasses
import math

from ..ir.loops import trip_count
from ..ir.nodes import NO_ATTRS, Alloc, Assign, Const, Decl, For, If, Kernel, Load, Store, Var, walk
from ..types import TensorType, index


def privatize(k: Kernel) -> Kernel:
    body = list(k.body)
    for pos, st in enumerate(body):
        if not isinstance(st, Alloc):
            continue
        users = [j for j, other in enumerate(body) if j != pos and _mentions(other, st.name)]
        if len(users) != 1 or not isinstance(body[users[0]], For):
            continue
        chain = [body[users[0]]]  # a perfect nest (for hh: for i: ...) privatises along all of its loops
        while len(chain[-1].body) == 1 and isinstance(chain[-1].body[0], For) \
                and not _overwritten_first(chain[-1], st):
            chain.append(chain[-1].body[0])
        trips = [_const_trips(lp) for lp in chain]
        if None in trips or math.prod(trips) < 2 or not _overwritten_first(chain[-1], st):
            continue
        body[pos] = dataclasses.replace(st, type=TensorType(st.type.dtype, tuple(trips) + tuple(st.type.shape)),
                                        attrs=NO_ATTRS)
        body[users[0]] = _prefix(body[users[0]], st.name, tuple(Var(lp.var, index) for lp in chain))
    return dataclasses.replace(k, body=tuple(body)) if body != list(k.body) else k


def _mentions(s, name: str) -> bool:
    return any(isinstance(n, (Load, Store)) and n.name == name for n in walk(s))


def _const_trips(lp: For) -> int | None:
    """Trips of a loop whose variable counts 0, 1, ... (it can index a per-iteration copy), else None."""
    from_zero = isinstance(lp.start, Const) and lp.start.value == 0 and lp.step == 1
    return trip_count(lp) if from_zero else None


def _overwritten_first(lp: For, a: Alloc) -> bool:
    """Is the first statement of ``lp`` touching ``a`` a nest that stores every element of ``a`` unread?"""
    s = next((s for s in lp.body if _mentions(s, a.name)), None)
    nest: list[For] = []
    while isinstance(s, For):
        nest.append(s)
        if len(s.body) == 1 and isinstance(s.body[0], For):
            s = s.body[0]
            continue
        leaf = s.body
        break
    else:
        return False
    if not all(isinstance(x, (Store, Decl, Assign)) for x in leaf):
        return False
    extent = {n.var: _const_trips(n) for n in nest}
    mine = [x for x in leaf if isinstance(x, Store) and x.name == a.name]
    if not mine or any(_mentions_load(x, a.name) for x in leaf):
        return False
    for x in mine:
        names = [i.name if isinstance(i, Var) else None for i in x.indices]
        if None in names or len(set(names)) != len(names) or len(names) != len(a.type.shape):
            return False
        if [extent.get(v) for v in names] != list(a.type.shape):
            return False
    return True


def _mentions_load(e, name: str) -> bool:
    return any(isinstance(n, Load) and n.name == name for n in walk(e))


def _prefix(s, name: str, ivs: tuple):
    """``s`` with every access to ``name`` indexed first by the loop variables ``ivs``."""
    from ..sched.rewrite import map_expr, map_stmt_exprs

    def expr(e):
        return dataclasses.replace(e, indices=ivs + tuple(e.indices)) \
            if isinstance(e, Load) and e.name == name else None

    def stmt(st):
        if isinstance(st, For):
            return dataclasses.replace(st, body=tuple(stmt(x) for x in st.body))
        if isinstance(st, If):
            return dataclasses.replace(st, cond=map_expr(st.cond, expr), then=tuple(stmt(x) for x in st.then),
                                       orelse=tuple(stmt(x) for x in st.orelse))
        st = map_stmt_exprs(st, expr)
        if isinstance(st, Store) and st.name == name:
            st = dataclasses.replace(st, indices=ivs + tuple(st.indices))
        return st

    return stmt(s)


__all__ = ["privatize"]
