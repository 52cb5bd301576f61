"""Kernel recipes: the schedule primitives the explorer applies to one kernel of a design.

A recipe inlines the kernels a task calls, fuses its row loops, orders its loops for the streams, pipelines
every innermost loop (or the parent of a short one) and spends an unroll factor inside the pipelines
(:func:`unroll_parallel`); the moves (:data:`MOVES`) split its float sums or rebind its operators.  Every
function here takes a :class:`~streamdsl.sched.schedule.Schedule` and applies primitives to it; none
remembers a choice (the search memoises whole recipes and their parts before the factor: :mod:`.search`);
what :func:`unroll_parallel` reads of a pipelined IR object is remembered by that object (it is immutable).
"""
from __future__ import annotations

import math

from ..cost.model import alloc_banks, lane_cost, narrow_bits
from ..dfg.layout import dtype_bits
from ..errors import ScheduleError
from ..ir.bounds import loop_trips
from ..ir.deps import affine, bind_class, carried_accumulations, classify, is_var_mul
from ..ir.loops import loops_with_parents, trip_count
from ..ir.memo import IdentityMemo
from ..ir.nodes import Alloc, CallKernel, For, If, Load, Store, walk
from ..perf.model import BRAM_MAX_BYTES
from ..sched.schedule import Schedule
from ..types import FloatType


def _has_loop(stmts) -> bool:
    return any(isinstance(s, For) or (isinstance(s, If) and (_has_loop(s.then) or _has_loop(s.orelse))) for s in stmts)


SHORT_INNER = 64  # an inner loop of at most this many trips is unrolled inside its parent's pipeline
SHORT_REDUCTION = 256  # ... or this many when it is a reduction (a dot product: the pipeline hides its chain)


def pipeline_innermost(s: Schedule, ii: int = 1) -> None:
    """Pipeline every innermost loop; but when it is short (constant trips <= :data:`SHORT_INNER`, or
    :data:`SHORT_REDUCTION` for a reduction such as a dot product) and the only loop of a parent of more
    than one trip (``for j: dot = 0; for e in range(64): dot += ...``), pipeline the parent instead: the
    short loop fully unrolled in it, its arrays partitioned to match, a key a cycle."""
    for lp, parents in list(loops_with_parents(s.ir.body)):
        if not _has_loop(lp.body) and "pipeline" not in lp.attrs and "unroll" not in lp.attrs \
                and not any("pipeline" in p.attrs for p in parents):
            p = _pipeline_parent(lp, parents)
            if p is not None:
                s.pipeline(s.loop(p), ii=ii)
                _partition_for(s, lp, trip_count(lp))
            else:
                s.pipeline(s.loop(lp), ii=ii)


def _pipeline_parent(lp: For, parents) -> For | None:
    """The loop to pipeline instead of the short innermost loop ``lp``: the nearest enclosing loop of more
    than one trip, each loop on the way holding nothing but the next one's chain (trip-1 loops unroll away)."""
    n = trip_count(lp)
    if n is None or n > (SHORT_REDUCTION if any(True for _ in carried_accumulations(lp)) else SHORT_INNER):
        return None
    child = lp
    for p in reversed(parents):
        if "unroll" in p.attrs or sum(1 for x in p.body if isinstance(x, (For, If))) != 1 or \
                not any(x is child for x in p.body):
            return None
        if (trip_count(p) or 2) > 1:
            return p
        child = p
    return None


def reorder_for_streams(s: Schedule) -> int:
    """Swap a top-level loop with its only child loop when the child has more iterations; returns swaps made."""
    done = 0
    for st in list(s.ir.body):
        if not (isinstance(st, For) and len(st.body) == 1 and isinstance(st.body[0], For)):
            continue
        inner = st.body[0]
        to, ti = trip_count(st), trip_count(inner)
        if to is None or ti is None or ti <= to or "pipeline" in inner.attrs:
            continue
        try:
            s.reorder(s.loop(inner), s.loop(st))
            done += 1
        except ScheduleError:
            pass
    return done


def _float_recurrence(lp: For) -> bool:
    """Does ``lp`` accumulate a float into a location that does not move with it?"""
    return any(isinstance(n.value.dtype, FloatType) for n, _ in carried_accumulations(lp))


def _divisor(n: int, u: int) -> int:
    return max(d for d in range(1, min(u, n) + 1) if n % d == 0)


def unroll_parallel(s: Schedule, u: int) -> int:
    """Spend an unroll factor ``u`` on every pipelined loop of ``s``; returns the largest factor used.

    The pipelined loop itself is vectorised by the largest divisor of its
    trips up to the nest's share of ``u``: split, the inner part unrolled, or
    split over partial sums by ``rfactor`` when it carries a float sum (``v`` lanes over ``4v`` partials,
    each partial coming round every 4th iteration, the fadd latency).  A
    loop around the pipeline is never unrolled: that would only copy the
    pipeline, and Vitis runs the copies one after another (UG1399, "Working
    with Nested Loops"); a perfect nest around it is flattened into the
    pipeline instead (the cost model's rule).  The nests of a kernel
    run one after another, so a nest of ``w`` lane-iterations whose lane costs
    ``c`` (LUTs, DSPs at the board's ratio: :func:`lane_cost`) gets
    ``u * sqrt((w / c) / (w0 / c0))`` lanes (at most ``u``; ``w0``, ``c0``:
    the nest of the most iterations): the lanes that minimise the sum
    of the nests' times for the logic spent (a row quantiser's divider lanes
    are not replicated as widely as the int MACs after it, nor left to
    dominate them)."""
    if u <= 1:
        return 1
    best = 1
    nests, work, most = _NESTS(s.ir)
    for lp, parents in nests:
        u_n = max(1, min(u, math.ceil(u * math.sqrt(work[id(lp)] / most))))
        n = trip_count(lp) or 1
        v = _divisor(n, max(1, u_n // _lanes_inside(lp)))
        if v > 1 and all(trip_count(x) is not None for x in _inner_loops(lp)):
            if _float_recurrence(lp):
                # v lanes over 4v partials (or 2v, v where the trips allow): a partial comes round every 4th
                # iteration, the fadd latency, so v adders retire v elements a cycle
                f = next(f for f in (4 * v, 2 * v, v) if n % f == 0)
                if not _rfactor_sum(s, lp, f, lanes=v):
                    continue
            else:
                outer, inner = s.split(s.loop(lp), v)
                s.unroll(inner)
                if v == n:  # every trip is a lane already: lanes of the loop around it move inside the pipeline
                    v *= _lanes_from_parent(s, lp, parents, outer, u_n // (v * _lanes_inside(lp)))
            _partition_for(s, lp, n if v > n else v)
        best = max(best, v)
    return best


def _nests(ir) -> tuple[list, dict[int, float], float]:
    """The pipelined nests of ``ir`` (loop, the loops around it), each one's lane-iterations per unit of a lane's
    logic (by id of its loop), and the largest of those (the reference nest's): what :func:`unroll_parallel`
    shares a factor by, whatever the factor."""
    nests = [(lp, parents) for lp, parents in loops_with_parents(ir.body) if "pipeline" in lp.attrs]
    most_trips = loop_trips(ir.body)  # expression bounds at their largest
    work = {id(lp): math.prod([most_trips.get(id(p)) or 1 for p in parents] + [most_trips.get(id(lp)) or 1])
            for lp, parents in nests}
    for lp, _ in nests:  # in lane-iterations: the lanes the pipeline already makes are work too
        work[id(lp)] *= _lanes_inside(lp)
    cost = {id(lp): max(1.0, lane_cost(ir, lp.body) / _lanes_inside(lp)) for lp, _ in nests}
    ref = max((lp for lp, _ in nests), key=lambda lp: (work[id(lp)], -cost[id(lp)]), default=None)
    most = work[id(ref)] / cost[id(ref)] if ref is not None else 1
    for lp, _ in nests:
        work[id(lp)] /= cost[id(lp)]
    return nests, work, most


# a kernel's pipelined IR is given each factor the search tries (the same object, :mod:`.search`): its nests and
# their lanes' logic (a cost-model run per nest) are the same for every factor.  The entry keeps the IR alive.
_NESTS = IdentityMemo(_nests, 256)


def _lanes_from_parent(s: Schedule, lp: For, parents, piped, want: int) -> int:
    """Split the loop directly around the fully vectorised pipeline ``lp`` (now ``piped`` outside its lanes)
    and move ``f`` of its iterations inside the pipeline (``for k_o: for o pipelined: for k_i, o_i unrolled``);
    returns ``f`` (1 when there is no such loop, or moving it is not legal)."""
    if want < 2 or not parents:
        return 1
    p = parents[-1]
    n = trip_count(p)
    if n is None or n < 2 or "unroll" in p.attrs or len(p.body) != 1:
        return 1
    f = _divisor(n, want)
    if f < 2:
        return 1
    try:
        _, p_in = s.split(s.loop(p), f)
        s.reorder(s.loop(piped), p_in)
    except ScheduleError:
        return 1
    _partition_for(s, p, f)
    return f


def _inner_loops(lp: For) -> list[For]:
    return [n for b in lp.body for n in walk(b) if isinstance(n, For)]


def _lanes_inside(lp: For) -> int:
    """Copies the pipeline of ``lp`` already makes of its body: its inner loops unroll fully inside it."""
    lanes = 1
    for x in _inner_loops(lp):
        lanes = max(lanes, math.prod(trip_count(y) or 1 for y in _inner_loops(lp) if any(m is x for m in walk(y))))
    return lanes


def _partition_for(s: Schedule, lp: For, v: int) -> None:
    """Partition, cyclically by ``v``, every array dimension that loop ``lp`` indexes: its lanes read in parallel.

    A lane index with a stride (``h * 64 + e``: 64 lanes of ``e`` inside each of ``v`` lanes of ``h``) takes
    ``v`` times the stride, so that every lane has a bank.  A dimension another nest already partitioned
    more finely keeps its factor (a cyclic partition by ``f`` serves ``v`` lanes too when ``v`` divides
    ``f``); otherwise it takes the least common multiple (at most the dimension: complete)."""
    done = set()
    for n in (n for b in lp.body for n in walk(b)):
        if isinstance(n, (Load, Store)):
            for d, idx in enumerate(n.indices):
                coef = (affine(idx) or {}).get(lp.var)
                if coef and (n.name, d) not in done:
                    done.add((n.name, d))
                    buf = _buffer_node(s.ir, n.name)
                    f = math.lcm(v * abs(coef),
                                 *(p[2] for p in _partitions(s.ir, n.name, buf) if p[0] == d + 1 and p[1] == "cyclic"))
                    f = min(f, buf.type.shape[d])
                    try:
                        s.partition(s.buffer(n.name), d + 1, "cyclic", f)
                    except ScheduleError:
                        pass


def _buffer_node(k, name: str):
    """Array ``name`` of kernel ``k``: its (first) local ``Alloc`` of that name, else its parameter."""
    local = next((n for st in k.body for n in walk(st) if isinstance(n, Alloc) and n.name == name), None)
    return local or next(p for p in k.params if p.name == name)


def _partitions(k, name: str, node=None) -> tuple:
    """The partition entries of array ``name`` in kernel ``k`` (a parameter's or a local's; ``node``: the array's
    node when the caller has it)."""
    n = node or _buffer_node(k, name)
    return n.attrs.get("partition", ()) if isinstance(n, Alloc) else dict(k.attrs.get("partition", ())).get(name, ())


def inline_calls(s: Schedule) -> None:
    """Inline the kernels a task calls, so that their loops are scheduled with the task's."""
    for c in sorted({n.callee for st in s.ir.body for n in walk(st) if isinstance(n, CallKernel)}):
        try:
            s.inline(c)
        except ScheduleError:
            pass  # a call that cannot be inlined stays a call (its loops as Vitis pipelines them)


def fuse_row_loops(s: Schedule) -> int:
    """Fuse each top-level loop into the next one (``compute_at``) when they walk the same rows, each row read by
    the iteration that wrote it (:func:`_same_rows`): the kernel then finishes row 0 before it needs row 1, so a
    streamed layer overlaps its kernels row by row.  Returns the fusions made."""
    done = 0
    i = 0
    while i + 1 < len(s.ir.body):
        a, b = s.ir.body[i], s.ir.body[i + 1]
        if isinstance(a, For) and isinstance(b, For) and _same_rows(a, b):
            try:
                s.compute_at(s.loop(a), s.loop(b))
                done += 1
                continue  # the fused loop now sits at i - 1 + 1: try it with the next one
            except ScheduleError:
                pass
        i += 1
    return done


def _same_rows(a: For, b: For) -> bool:
    """Whether loop ``b`` runs over the rows loop ``a`` produces, each iteration of ``b`` reading only what the same
    iteration of ``a`` wrote: ``a`` carries nothing (``classify``), ``b`` writes nothing ``a`` reads, and every
    read in ``b`` of what ``a`` writes indexes one dimension by the same affine function of the loop variable.
    The explorer's policy; ``compute_at`` itself allows any legal fusion."""
    if (a.start, a.stop, a.step) != (b.start, b.stop, b.step) or classify(a).kind != "parallel":
        return False
    written = {n.name: n for st in a.body for n in walk(st) if isinstance(n, Store)}
    read = {n.name for st in a.body for n in walk(st) if isinstance(n, Load)}
    for n in (n for st in b.body for n in walk(st)):
        if isinstance(n, Store) and n.name in read:
            return False
        if isinstance(n, Load) and n.name in written and not _row_of(written[n.name].indices, n.indices, a.var, b.var):
            return False
    return True


def _row_of(widx, ridx, av: str, bv: str) -> bool:
    for w, r in zip(widx, ridx):
        fw, fr = affine(w), affine(r)
        if fw is None or fr is None:
            continue
        if fw.get(av, 0) != 0 and fw.get(av) == fr.get(bv) and \
                {k: c for k, c in fw.items() if k != av} == {k: c for k, c in fr.items() if k != bv}:
            return True
    return False


def bind_narrow_muls(s: Schedule) -> int:
    """Bind the narrow integer multiplies (an operand of at most 10 bits, which Vitis builds in LUTs) of every
    pipeline to DSPs (``bind_op``): a DSP48E2 per MAC lane (or per packed pair of MACs, ``quant.packs``)
    instead of ~64 LUTs and their flip-flops, for a board whose LUTs run out first.  Returns the loops bound."""
    return _bind_pipelines(s, "mul", "dsp", lambda n: is_var_mul(n) and min(narrow_bits(n.lhs),
                                                                            narrow_bits(n.rhs)) <= 10)


def bind_float_adds(s: Schedule) -> int:
    """Bind the float adds and subtracts of every pipeline to LUTs (``bind_op(loop, "fadd", "fabric")``): an fp32
    add in ~430 LUTs instead of 2 DSPs and ~220 LUTs, for a board whose DSPs run out first (the norms',
    attention's and dequantisations' sums beside MAC lanes in DSPs).  Returns the loops bound."""
    return _bind_pipelines(s, "fadd", "fabric", lambda n: bind_class(n) == "fadd")


def split_sums(s: Schedule) -> int:
    """Split every float sum unrolled inside a pipeline (a dot product: attention's 64-long score) into 8
    partial sums combined pairwise, 4 when the trips allow no more (``rfactor``): the pipeline is
    ``trips / 8 + 3`` adds deep instead of ``trips``, for 8 more adders a copy.  The sums are reassociated,
    as ``rfactor`` says.  Returns the sums split."""
    done = 0
    for lp, parents in list(loops_with_parents(s.ir.body)):
        n = trip_count(lp)
        f = next((f for f in (8, 4) if n and n % f == 0 and n > f), None)
        if f is None or "pipeline" in lp.attrs or _has_loop(lp.body) or not _float_recurrence(lp) \
                or not any("pipeline" in p.attrs for p in parents):
            continue
        if _rfactor_sum(s, lp, f):  # refused when not a plain sum (its partial result read inside)
            done += 1
    return done


def _rfactor_sum(s: Schedule, lp: For, factor: int, lanes: int | None = None) -> bool:
    """``rfactor`` a loop's float sums, consenting to their reassociation (``s.reassociate``) for it alone: both
    steps or neither (a refused rfactor leaves no consent behind: the schedule restored as it was)."""
    ir, steps = s.ir, len(s.trace.steps)
    try:
        s.reassociate(s.loop(lp))
        s.rfactor(s.loop(lp), factor, **({} if lanes is None else {"lanes": lanes}))
        return True
    except ScheduleError:
        s.restore(ir, s.trace.steps[:steps])
        return False


def _bind_pipelines(s: Schedule, op: str, impl: str, wanted) -> int:
    """``bind_op(loop, op, impl)`` on every pipeline not yet binding ``op`` that holds a node ``wanted``
    accepts; returns the loops bound."""
    done = 0
    for lp, _ in list(loops_with_parents(s.ir.body)):
        if "pipeline" in lp.attrs and "bind_" + op not in lp.attrs and any(
                wanted(n) for b in lp.body for n in walk(b)):
            s.bind_op(s.loop(lp), op, impl)
            done += 1
    return done


def bind_large_locals(s: Schedule) -> None:
    """Bind local arrays whose banks are over 64 KiB each to URAM (288 Kb blocks), as the design model binds
    FIFOs by size (a finely partitioned array's small banks stay BRAM or distributed RAM)."""
    for n in (n for st in s.ir.body for n in walk(st)):
        if isinstance(n, Alloc) and "bind" not in n.attrs:
            bits = n.type.size * dtype_bits(n.type.dtype) / alloc_banks(n)
            if bits > 8 * BRAM_MAX_BYTES:
                s.bind(s.buffer(n.name), "uram")


def _pipelines(s: Schedule, reorder: bool) -> None:
    """The recipe up to its pipelines: calls inlined, row loops fused, loops reordered for the streams,
    innermost loops (or their short-loop parents) pipelined."""
    inline_calls(s)
    fuse_row_loops(s)
    if reorder:
        reorder_for_streams(s)
    pipeline_innermost(s)


def _front(s: Schedule, reorder: bool, split: bool) -> None:
    """The recipe before its factor: its pipelines, and ``split``: its float sums split."""
    _pipelines(s, reorder)
    if split:  # before the lanes: their share of the factor is priced with the partial sums' adders
        split_sums(s)


def _lanes(s: Schedule, u: int) -> int:
    """The recipe from its factor on: ``u`` spent inside the pipelines, large locals in URAM."""
    got = unroll_parallel(s, u)
    bind_large_locals(s)
    return got


MOVES = ("split", "dsp", "fabric")  # a kernel's unrolled float sums split (split_sums, in its recipe); its narrow
# multiplies to DSPs (bind_narrow_muls); its float adds to LUTs (bind_float_adds)
OPERATOR_MOVES = ("dsp", "fabric")  # the moves that trade one resource for another (_move_operators)

BINDERS = {"dsp": bind_narrow_muls, "fabric": bind_float_adds}  # OPERATOR_MOVES -> the schedule step that makes it


def apply_recipe(s: Schedule, reorder: bool, u: int, split: bool = False) -> int:
    """The explorer's recipe on ``s`` (its pipelines, ``split``: its unrolled float sums split first, the factor
    ``u`` spent inside the pipelines, large locals in URAM), the IR verified once at the end; returns the largest
    factor a loop took.  :meth:`.search.Search.apply_recipe` is the same, remembered."""
    return recipe_from(s, reorder, u, split)[0]


def recipe_from(s: Schedule, reorder: bool, u: int, split: bool = False, front: tuple | None = None) -> tuple[int, tuple]:
    """:func:`apply_recipe`, and the state the recipe reached before its factor, ``(IR, trace steps)`` (the same
    for every factor); ``front``: that state, as an earlier call on an equal kernel gave it, restored instead of
    made again (:meth:`~streamdsl.sched.schedule.Schedule.restore`)."""
    with s.batch():
        if front is None:
            _front(s, reorder, split)
            front = (s.ir, tuple(s.trace.steps))
        else:
            s.restore(front[0], list(front[1]))
        return _lanes(s, u), front


def splittable(kernel, reorder: bool) -> bool:
    """Does the recipe on ``kernel`` leave a float sum for :func:`split_sums` to split?"""
    s = Schedule(kernel)
    with s.batch():
        _pipelines(s, reorder)
        return split_sums(s) > 0
