"""Which loops Vitis HLS pipelines on its own, and which it unrolls into them.

UG1399 (2020.2, ``config_compile -pipeline_loops``, default 64; "Automatic Loop Pipelining"): the tool starts at
each innermost loop and moves up the nest.  An innermost loop is pipelined; if its parent can take it, the
loop is unrolled into the parent and the parent pipelined instead, and so on up.  What a parent can take,
as the published reports show it (``benchmarks/calibration/published.json`` cites each):

* loops without a directive and of constant trips, together at most :data:`AUTO_PIPELINE_TRIPS` iterations
  once unrolled (the sum over its inner nests of their trip products): LAP matvec's 30, atax's two 20s,
  HLStrans gemm's 64 (its ``lp2`` is pipelined with ``lp3`` unrolled); LAP stencil_2d's columns, 28 x 9
  iterations of their window, are not unrolled into the rows, whose nest is flattened instead;
* and only when the parent holds something beside the loop, or the loop carries something through the
  parent: a statement of its own, an accumulation into a location the loop does not index (kept in a
  register around the unrolled copies: gemm's ``tmp1[i][j]``), a scalar it updates, or a load that does not
  move with the loop but does with the parent (hoisted into the parent's body: atax's ``tmp1[i]``).  A
  parent that is only the loop, with nothing carried (a perfect level), is flattened with it instead: the
  inner loop stays pipelined (HLStrans heat-3d's 18-trip ``k`` and gemm's 64-trip copy loop ``lprd_2``,
  LAP gaussian's 19-trip ``k``).

An innermost loop of variable trips cannot be unrolled, so it is pipelined (HLStrans trisolv, durbin, lu), and
so is a loop with no loop around it, whatever its trips (WES237C fir11, HLStrans fir: 11 to 20 trips).
A loop with an ``unroll`` directive is left as the user wrote it (UG1399: user directives apply first): fully
unrolled, it is gone; partially, Vitis pipelines the loop that is left (WES237C fir128's MAC loop, unrolled by
32, is a 4-iteration pipeline in its report), which the model does not do.
"""
from __future__ import annotations

from ..ir.deps import carried_accumulations, names_in
from ..ir.loops import trip_count
from ..ir.nodes import Alloc, Assign, Decl, For, If, Load, Store, walk

AUTO_PIPELINE_TRIPS = 64  # config_compile -pipeline_loops (UG1399): loops of at most this many trips go to their parent


def pipelined_loops(stmts) -> frozenset[int]:
    """Ids of the loops of ``stmts`` that Vitis pipelines on its own (loops with a ``pipeline`` directive are
    not included: they are pipelined by the user)."""
    out: set[int] = set()
    for lp in _loops_in(stmts):
        _decide(lp, out)
    return frozenset(out)


def _decide(lp: For, out: set[int]) -> None:
    for inner in _loops_in(lp.body):
        _decide(inner, out)
    if "pipeline" in lp.attrs or "unroll" in lp.attrs:
        return
    inner = [n for b in lp.body for n in walk(b) if isinstance(n, For)]
    if not inner:
        out.add(id(lp))
    elif absorbs(lp):
        out.difference_update(id(n) for n in inner)
        out.add(id(lp))


def absorbs(lp: For) -> bool:
    """Does Vitis unroll every loop inside ``lp`` into a pipeline of ``lp``?"""
    inner = [n for b in lp.body for n in walk(b) if isinstance(n, For)]
    if not inner or any("pipeline" in n.attrs or "unroll" in n.attrs or trip_count(n) is None for n in inner):
        return False
    if unrolled_iterations(lp.body) > AUTO_PIPELINE_TRIPS:
        return False
    only = lp.body[0] if len(lp.body) == 1 and isinstance(lp.body[0], For) else None
    return only is None or carries(lp, only)


def unrolled_iterations(stmts) -> int:
    """Iterations of the loops of ``stmts`` once fully unrolled: the sum over nests of their trip products."""
    return sum((trip_count(lp) or 1) * max(1, unrolled_iterations(lp.body)) for lp in _loops_in(stmts))


def carries(parent: For, child: For) -> bool:
    """Does ``child`` carry something through ``parent`` (so that ``parent`` is not a perfect level)?  An
    accumulation into a location ``child`` does not index, a scalar from outside it that it updates, or a
    load of an array it does not write whose address moves with ``parent`` but not with ``child``."""
    nodes = [n for b in child.body for n in walk(b)]
    if carried_accumulations(child):
        return True
    local = {n.name for n in nodes if isinstance(n, (Decl, Alloc))}
    if any(isinstance(n, Assign) and n.name not in local for n in nodes):
        return True
    nest = {child.var} | {n.var for n in nodes if isinstance(n, For)}
    written = {n.name for n in nodes if isinstance(n, Store)}
    for n in nodes:
        if isinstance(n, Load) and n.name not in written and n.name not in local:
            used = set().union(*map(names_in, n.indices)) if n.indices else set()
            if parent.var in used and not used & nest:
                return True
    return False


def _loops_in(stmts):
    """The loops directly in ``stmts`` (inside ``if`` branches too), not those nested in them."""
    for s in stmts:
        if isinstance(s, For):
            yield s
        elif isinstance(s, If):
            yield from _loops_in(s.then)
            yield from _loops_in(s.orelse)


def partitioned_dims(stmts, pipelined: frozenset[int], arrays) -> dict[str, int]:
    """The dimension (1-based) Vitis partitions completely, by array, among the local ``arrays`` (names) with no
    partition of their own (UG1399 ``config_array_partition -throughput_driven auto``, the default since 2021.1):
    an array every access of which has copies along one dimension, its index there moving with a loop unrolled
    into a pipeline (HLStrans atax's and gesummv's ``buff_A[i][j]``, written and read only in rows whose ``j`` is
    unrolled: dimension 2 in 64 banks, II 1).  An array read along another dimension somewhere (mvt's
    ``buff_A[j][i]``), or anywhere one element at a time (gemm's copy loop), is left whole."""
    dims: dict[str, set | None] = {}

    def visit(body, unrolled: frozenset):
        for st in body:
            if isinstance(st, For):
                inside = unrolled | {st.var} if unrolled or st.attrs.get("unroll") == 0 else unrolled
                if "pipeline" in st.attrs or id(st) in pipelined:
                    inside = frozenset({""})  # in a pipeline every loop is unrolled ("" marks the pipeline)
                visit(st.body, inside)
            elif isinstance(st, If):
                note(st.cond, unrolled)
                visit(st.then, unrolled)
                visit(st.orelse, unrolled)
            else:
                note(st, unrolled)

    def note(node, unrolled):
        for n in walk(node):
            if isinstance(n, (Load, Store)) and n.name in arrays:
                moving = {d + 1 for d, i in enumerate(n.indices) if names_in(i) & unrolled}
                dims[n.name] = moving if n.name not in dims else (dims[n.name] or set()) & moving

    visit(stmts, frozenset())
    return {name: min(d) for name, d in dims.items() if d}
