"""Dependences through memory between the iterations of a pipelined loop, as Vitis's scheduler sees them.

A store and a load of one array in a pipeline body conflict across iterations when the load of a later iteration
may read what the store wrote: the next iteration then waits for the store (the II is at least the path from
the load to the store).  :func:`raw_distance` says after how many iterations of the pipelined loop ``var`` the
load reads the stored address: ``None`` when it never does (the same address in one iteration, or addresses
that provably differ), a whole number when the indices differ by a constant along ``var`` (PolyBench
seidel-2d reads ``A[i][j-1]`` one iteration after writing it as ``A[i][j]``), and 1 when the addresses may
meet (an index read from memory, HLStrans histogram's ``hist[in[i]]``; indices whose difference the loop
bounds do not keep from zero, floyd-warshall's ``path[i][k]`` against ``path[i][j]``).  The loop bounds prove
a difference nonzero by substituting each variable by its bound, innermost first (gaussian's ``A[j][k]``
against ``A[i][k]`` for ``i`` from ``j + 1``: ``i - j >= 1``).
"""
from __future__ import annotations

from ..ir.deps import affine, names_in
Bounds = dict  # loop variable -> (start, stop) expressions, outermost first


def raw_distance(store_idx, load_idx, var: str, bounds: Bounds, unknown: set[str]) -> int | None:
    """Iterations of ``var`` after which a load at ``load_idx`` reads what a store at ``store_idx`` wrote, or None
    if it never does; ``unknown``: scalars whose value is read from memory (an address made of one may be any)."""
    if len(store_idx) != len(load_idx):
        return 1
    if repr(store_idx) == repr(load_idx) and not set().union(*map(names_in, store_idx)) & unknown:
        return None  # the same address in one iteration (one that recurs later is an accumulation's business)
    dims = []
    for a, b in zip(store_idx, load_idx):
        fa, fb = affine(a), affine(b)
        if fa is None or fb is None or (set(fa) | set(fb)) & unknown:
            return 1
        diff = {k: fa.get(k, 0) - fb.get(k, 0) for k in set(fa) | set(fb) if fa.get(k, 0) != fb.get(k, 0)}
        dims.append((diff, fa.get(var, 0)))
    if all(not d for d, _ in dims):
        return None  # the same address in one iteration
    steps, may_meet = set(), False
    for d, coeff in dims:
        if set(d) - {None}:
            if _nonzero(d, bounds):
                return None  # the bounds keep the addresses apart
            may_meet = True
        elif coeff:
            step, rest = divmod(d.get(None, 0), coeff)
            if rest:
                return None
            steps.add(step)
        elif d:
            return None  # a constant offset in a dimension the loop does not walk: never the same address
    if may_meet:
        return 1
    if len(steps) != 1 or min(steps) <= 0:
        return None  # the load reads it in the same or an earlier iteration (a write after the read), or never
    return steps.pop()


def _nonzero(diff: dict, bounds: Bounds) -> bool:
    """Do the loop bounds keep the affine ``diff`` ({var: coeff, None: const}) from zero?  Its lower bound is
    found by putting each variable at the bound that lowers it (the start for a positive coefficient, the last
    value for a negative one), innermost variable first, and likewise its upper bound."""
    return _extreme(diff, bounds, 1) or _extreme({k: -c for k, c in diff.items()}, bounds, 1)


def _extreme(diff: dict, bounds: Bounds, floor: int) -> bool:
    """Is the affine ``diff`` at least ``floor`` for every value of its loop variables?"""
    d = dict(diff)
    for _ in range(8):
        names = [k for k in d if k is not None]
        if not names:
            return d.get(None, 0) >= floor
        inner = [v for v in reversed(list(bounds)) if v in names]
        if not inner:
            return False
        v = inner[0]
        c = d.pop(v)
        start, stop = bounds[v]
        edge = affine(start) if c > 0 else _minus_one(affine(stop))
        if edge is None:
            return False
        for k, x in edge.items():
            d[k] = d.get(k, 0) + c * x
        d = {k: x for k, x in d.items() if x != 0 or k is None}
    return False


def _minus_one(f: dict | None) -> dict | None:
    if f is None:
        return None
    out = dict(f)
    out[None] = out.get(None, 0) - 1
    return out

