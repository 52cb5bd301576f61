"""Design-space exploration over the paper's three spaces: tiling, fusion, resource allocation.

``sd.explore(target, board="u55c", budget=...)`` where ``target`` is a
``DataflowSchedule`` (its stream layouts are kept), an ``@sd.dataflow``
function, or an object with ``.layer(t, kind).function`` and
``.schedule(t, kind)`` (a library LLM: its one-token decode layer is
explored).  It returns an :class:`Exploration`: the best design (a
:class:`~streamdsl.perf.model.DesignPerf` whose ``.schedule`` is the sized
DataflowSchedule), the default design, and the table of every design tried.

1. **Tiling.**  The kernels a task calls are inlined into it, and adjacent
   top-level loops over the same rows are fused (``compute_at``), so a
   kernel finishes a row before it needs the next.  One default tile for every stream: the outermost data dim in
   tiles of 1 (a row, a head), the others whole (``tile=True``), plus a loop
   order that follows it: a top-level loop whose only child is a larger
   constant loop is swapped with it (``reorder=True``; a refused reorder is
   skipped), so weights stream row by row.  Every innermost loop is
   pipelined (II 1), or its parent when it is short and alone in it.  Then
   intensity-driven unrolling (the paper's max-heap): repeatedly take the
   kernel with the most cycles (cost model) and double its unroll factor,
   until the sum of factors reaches ``budget`` or the next step would take
   the kernels past ``util`` of the board's DSPs/LUTs/FFs.  A factor is
   spent inside the pipelines (:func:`unroll_parallel`): the pipelined loop
   is split and its inner part unrolled (integer sums balance into adder
   trees, as Vitis does; a floating-point sum is split over partial
   accumulators by ``rfactor``), then lanes of the loop around it move
   inside.  A loop around a pipeline is never unrolled: Vitis would run the
   copies one after another.  The arrays the lanes read are partitioned
   cyclically to match.  The heap minimises the slowest kernel, which is
   what a layer streaming many rows waits for; a one-token layer's kernels
   mostly run one after another (each needs its producer's whole row), so
   its latency is their sum, and a second allocation (:func:`_unroll_by_gain`)
   takes the steps that save the most cycles per share of the board.  Both
   are evaluated end to end.
2. **Fusion.**  Everything in one region, or the paper's greedy algorithm 2
   (``g.auto_fuse``) under the board's on-chip memory cap.
3. **Resources.**  Kernels' local arrays whose banks exceed 64 KiB bound to URAM; FIFO depths sized for the board timing (LP offsets and
   all-start-at-once peaks; FIFOs from a weight DMA into one kernel capped at
   16 KiB (2 to 16 tokens), since back-pressure there only slows the DMA; or, "prefetch",
   deep enough for the DMA to run ahead: tried on the best design and on the
   fastest tiling candidate, whose unrolling the shallow FIFOs may have held
   back), HBM channels per DMA by when its kernel needs it, buffers bound to LUTRAM/BRAM/URAM by size and tasks placed on SLRs by
   an ILP (:func:`~streamdsl.perf.model.partition_slrs`).

Which model is used where: kernels are ranked by the cost model alone (one
kernel at a time, cheap); every design in the table is evaluated end to end
by the token-level simulator (a full-size LLM layer simulates in well under
a second, so no coarser model is needed; the analytic estimate is printed
beside it).  A design is kept only if the token simulator runs it without a
deadlock and without back-pressure on any kernel and the board holds it.
"""
from __future__ import annotations

import dataclasses
import heapq
import math
from collections import OrderedDict
from dataclasses import dataclass, field

from ..dfg.dfschedule import DataflowSchedule
from ..dfg.graph import DataflowFunction
from ..dfg.order import bundle_in_need_order, stream_in_read_order
from ..errors import ScheduleError, StreamDSLError, caller_loc
from ..progress import bar
from ..ir.bounds import loop_trips
from ..ir.loops import loops_with_parents, trip_count
from ..ir.memo import IdentityMemo
from ..ir.deps import affine, bind_class, carried_accumulations, classify, is_var_mul
from ..dfg.layout import dtype_bits
from ..ir.nodes import Alloc, CallKernel, Const, For, If, Load, Store, walk
from ..types import FloatType
from ..cost.model import alloc_banks, estimate, lane_cost, narrow_bits
from ..sched.schedule import Schedule, apply_cached
from ..boards import RESOURCES, board as get_board
from ..dfg.fifo import design_depths
from .model import BRAM_MAX_BYTES, DesignPerf, capped_fifos, model_design

PREFETCH = (1.0, 0.5, 0.25)  # fractions of the weight FIFOs' run-ahead depth tried, largest first
DMA_FIFO_CAP = 16  # tokens of a FIFO from a load DMA into one kernel, at most DMA_FIFO_BYTES of them
DMA_FIFO_BYTES = 16 * 2**10


class ExploreError(StreamDSLError):
    kind = "exploration error"


# ------------------------------------------------------------------ kernel recipe
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
    nests = [(lp, parents) for lp, parents in loops_with_parents(s.ir.body) if "pipeline" in lp.attrs]
    most_trips = loop_trips(s.ir.body)  # expression bounds at their largest
    work = {id(lp): math.prod([most_trips.get(id(p)) or 1 for p in parents] + [most_trips.get(id(lp)) or 1])
            for lp, parents in nests}
    for lp, _ in nests:  # in lane-iterations: the lanes the pipeline already makes are work too
        work[id(lp)] *= _lanes_inside(lp)
    cost = {id(lp): max(1.0, lane_cost(s.ir, lp.body) / _lanes_inside(lp)) for lp, _ in nests}
    ref = max((lp for lp, _ in nests), key=lambda lp: (work[id(lp)], -cost[id(lp)]), default=None)
    most = work[id(ref)] / cost[id(ref)] if ref is not None else 1
    for lp, _ in nests:
        work[id(lp)] /= cost[id(lp)]
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
                    f = math.lcm(v * abs(coef),
                                 *(p[2] for p in _partitions(s.ir, n.name) if p[0] == d + 1 and p[1] == "cyclic"))
                    f = min(f, _buffer_node(s.ir, n.name).type.shape[d])
                    try:
                        s.partition(s.buffer(n.name), d + 1, "cyclic", f)
                    except ScheduleError:
                        pass


def _allocs_of(k) -> dict:
    out: dict = {}
    for n in (n for st in k.body for n in walk(st)):
        if isinstance(n, Alloc):
            out.setdefault(n.name, n)
    return out


_ALLOCS = IdentityMemo(_allocs_of, 1024)  # kernel IR -> its local arrays by name (the first of each name)


def _buffer_node(k, name: str):
    """Array ``name`` of kernel ``k``: its local ``Alloc``, else its parameter."""
    return _ALLOCS(k).get(name) or next(p for p in k.params if p.name == name)


def _partitions(k, name: str) -> tuple:
    """The partition entries of array ``name`` in kernel ``k`` (a parameter's or a local's)."""
    n = _buffer_node(k, name)
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
    steps or neither (a refused rfactor leaves no consent behind)."""
    ir, steps = s.ir, len(s.trace.steps)
    try:
        s.reassociate(s.loop(lp))
        s.rfactor(s.loop(lp), factor, **({} if lanes is None else {"lanes": lanes}))
        return True
    except ScheduleError:
        s.ir = ir
        del s.trace.steps[steps:]
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


_RECIPES: OrderedDict = OrderedDict()  # (kernel IR, reorder, u) -> (kernel IR, scheduled IR, steps, lanes)
_ESTIMATES: dict = {}  # (kernel IR, reorder, u, moves, board, clock) -> (cycles, resources, lanes) or None
_SCHEDULED: dict = {}  # scheduled IR -> the first equal object (recipes that give equal IRs give one object)
_RECIPES_KEPT = 4096


def apply_recipe(s: Schedule, reorder: bool, u: int, split: bool = False) -> int:
    """The explorer's recipe on ``s`` (see :func:`_recipe`).  A fresh schedule of a kernel IR already given
    this recipe takes the remembered result and trace: the explorer builds every design from the same
    kernels, and each recipe's primitives (each verifying the IR) would otherwise run again per design."""
    key = (s.ir, reorder, u, split)  # by value: the layers of two attention kinds share their other kernels
    hit = _RECIPES.get(key) if not s.trace.steps else None
    if hit is not None:
        _RECIPES.move_to_end(key)
        s.ir = hit[1]
        s.trace.steps.extend(hit[2])
        return hit[3]
    base, fresh = s.ir, not s.trace.steps
    with s.batch():
        got = _recipe(s, reorder, u, split)
    if fresh:
        s.ir = _SCHEDULED.setdefault(s.ir, s.ir)  # one object per scheduled IR: two loop orders that agree share it
        _RECIPES[key] = (base, s.ir, tuple(s.trace.steps), got)
        while len(_RECIPES) > _RECIPES_KEPT:
            _RECIPES.popitem(last=False)
        if len(_SCHEDULED) > _RECIPES_KEPT:
            _SCHEDULED.clear()
    return got


def _pipelines(s: Schedule, reorder: bool) -> None:
    """The recipe up to its pipelines: calls inlined, row loops fused, loops reordered for the streams,
    innermost loops (or their short-loop parents) pipelined."""
    inline_calls(s)
    fuse_row_loops(s)
    if reorder:
        reorder_for_streams(s)
    pipeline_innermost(s)


def _recipe(s: Schedule, reorder: bool, u: int, split: bool = False) -> int:
    _pipelines(s, reorder)
    if split:  # before the lanes: their share of the factor is priced with the partial sums' adders
        split_sums(s)
    got = unroll_parallel(s, u)
    bind_large_locals(s)
    return got


MOVES = ("split", "dsp", "fabric")  # a kernel's unrolled float sums split (split_sums, in its recipe); its narrow
# multiplies to DSPs (bind_narrow_muls); its float adds to LUTs (bind_float_adds)
OPERATOR_MOVES = ("dsp", "fabric")  # the moves that trade one resource for another (_move_operators)


def _unroll_by_gain(tasks, start: dict, est, used, limit: dict, slr_limit: dict, cap_u: int,
                    first: frozenset = frozenset(), split: bool = True):
    """Unroll factors for a layer whose kernels run one after another (a one-token layer: each needs its
    producer's whole row), where the sum of the kernels' cycles is the latency, not the slowest kernel's.

    Repeatedly take the step (a kernel's factor times 2 .. 64, up to the second factor that gains) that saves
    the most cycles per share of the board it adds (the largest of its DSP/LUT/FF fractions), while the board
    holds it: a residual add widened 16 lanes for a few hundred LUTs before a linear's thousandth MAC lane.
    A step may also move a kernel's narrow multiplies to DSPs (``est(task, factor, moves)``, ``moves`` a
    subset of :data:`MOVES`; None when the kernel has nothing to move), which widens the MAC lanes once the
    LUTs run out, or split its unrolled float sums (:func:`split_sums`: a shallower pipeline); when nothing
    widens, the move of :func:`_move_operators` (multiplies to DSPs, or float adds
    to LUTs, which frees DSPs once they run out).  Returns
    ``(sum of factors, factors, why, {move: tasks moved})``, or None when no step fits.  ``first``: moves
    made on every kernel that has them before the first step (``{"split"}``: every unrolled float sum split
    from the start, where one step at a time would not take it); ``split=False``: no step splits a sum."""
    u = {tk: 1 for tk in tasks}
    moved = {tk: frozenset() for tk in tasks}
    cur = dict(start)
    for tk in tasks if first else ():
        new = est(tk, 1, first)
        if new is not None:
            moved[tk], cur[tk] = first, new
    steps = 0
    while True:
        best = None
        now = used(cur)  # a trial changes one kernel: the board's use is this, less its old, plus its new
        for tk in tasks:
            # as bound now, its multiplies moved, its unrolled float sums split (float adds move only when nothing
            # widens: _move_operators)
            for variant in dict.fromkeys((moved[tk], moved[tk] ^ {"dsp"}) + ((moved[tk] | {"split"},) if split else ())):
                gained = 0
                for mult in (2, 4, 8, 16, 32, 64):  # past a plateau (lanes come in whole rows of a vectorised loop)
                    nu = u[tk] * mult
                    if sum(u.values()) + nu - u[tk] > cap_u or gained == 2:
                        break
                    new = est(tk, nu, variant)
                    if new is None:
                        break  # nothing to move: no such variant
                    if new[0] >= cur[tk][0]:  # a plateau: lanes of one nest are saturated, another's not yet due
                        continue
                    gained += 1
                    if any(new[1].get(r, 0) > slr_limit[r] for r in slr_limit):
                        break
                    if _over(now, cur[tk][1], new[1], limit):
                        continue  # a wider step may move more operators off the full resource
                    share = max(max(0, new[1].get(r, 0) - cur[tk][1].get(r, 0)) / max(limit[r], 1.0) for r in limit)
                    score = (cur[tk][0] - new[0]) / max(share, 1e-9)
                    if best is None or score > best[0]:
                        best = (score, tk, nu, variant, new)
        if best is None:  # nothing widens: move a kernel's operators where that frees the most of a full resource
            best = _move_operators(tasks, u, moved, cur, est, now, limit, slr_limit)
            if best is None:
                break
        _, tk, nu, variant, new = best
        u[tk], moved[tk], cur[tk] = nu, variant, new
        steps += 1
    if not steps:
        return None
    total = sum(cur[tk][0] for tk in tasks)
    by_move = {m: tuple(sorted(tk for tk in tasks if m in moved[tk])) for m in MOVES}
    return (sum(u.values()), u, f"by gain: most cycles saved per board share, {steps} steps; kernel cycles sum to "
            f"{total}" + (f"; multiplies of {len(by_move['dsp'])} kernel(s) in DSPs" if by_move["dsp"] else "")
            + (f"; float adds of {len(by_move['fabric'])} kernel(s) in LUTs" if by_move["fabric"] else "")
            + (f"; unrolled float sums of {len(by_move['split'])} kernel(s) split" if by_move["split"] else ""), by_move)


def _over(now: dict, old: dict, new: dict, limit: dict) -> bool:
    """Does the board's use ``now`` with one kernel's resources ``old`` replaced by ``new`` pass ``limit``?"""
    return any(now[r] - old.get(r, 0) + new.get(r, 0) > limit[r] for r in limit)


def _move_operators(tasks, u, moved, cur, est, now, limit, slr_limit):
    """The kernel and move (:data:`OPERATOR_MOVES`) at its factor that frees the most share of one resource per share
    of another it takes (multiplies to DSPs free LUTs/FFs, float adds to LUTs free DSPs; that room then widens
    the others), as a step ``(0, task, factor, moves, estimate)``; None if none fits."""
    best = None
    for tk in tasks:
        for m in OPERATOR_MOVES:
            if m in moved[tk]:
                continue
            new = est(tk, u[tk], moved[tk] | {m})
            if new is None or any(new[1].get(r, 0) > slr_limit[r] for r in slr_limit):
                continue
            if _over(now, cur[tk][1], new[1], limit):
                continue
            delta = {r: (new[1].get(r, 0) - cur[tk][1].get(r, 0)) / max(limit[r], 1.0) for r in limit}
            freed = max(-d for d in delta.values())
            cost = max(0.0, max(delta.values()))
            if freed > 0 and (best is None or freed / max(cost, 1e-9) > best[0]):
                best = (freed / max(cost, 1e-9), tk, u[tk], moved[tk] | {m}, new)
    return None if best is None else (0,) + best[1:]


# ------------------------------------------------------------------ designs
@dataclass(frozen=True)
class Config:
    tile: bool = True
    reorder: bool = True
    unroll: tuple[tuple[str, int], ...] = ()
    fusion: str = "all"  # "all" | "greedy" | "none"
    prefetch: float = 0  # weight FIFOs deep enough for their DMAs to run ahead of the kernels (1), or a fraction
    dsp: tuple[str, ...] = ()  # tasks whose narrow multiplies are bound to DSPs (bind_narrow_muls)
    fabric: tuple[str, ...] = ()  # tasks whose float adds are bound to LUTs (bind_float_adds)
    split: tuple[str, ...] = ()  # tasks whose float sums unrolled in a pipeline are split (split_sums)
    bundle: bool = True  # the layer's inputs read by one DMA process in need order (order.bundle_in_need_order)

    def factor(self, task: str) -> int:
        return dict(self.unroll).get(task, 1)


def _default_tile(shape) -> tuple[int, ...]:
    return (1,) + tuple(shape[1:])


def build_design(fn: DataflowFunction, cfg: Config, base: DataflowSchedule | None = None,
                 cap_bytes: int | None = None) -> DataflowSchedule:
    g = DataflowSchedule(fn)
    for t in g.tasks():
        apply_recipe(g.schedule(t), cfg.reorder, cfg.factor(t.name), t.name in cfg.split)
        if t.name in cfg.dsp:
            apply_cached(g.schedule(t), "bind_narrow_muls", bind_narrow_muls)
        if t.name in cfg.fabric:
            apply_cached(g.schedule(t), "bind_float_adds", bind_float_adds)
    for e in g.edges():
        node = g.graph.edges[e.name]
        if base is not None and not cfg.tile:
            if not node.is_input:
                g.stream(e, itensor=base.layout(e.name), side="producer")
            for c, _ in node.consumers:
                g.stream(e, itensor=base.layout(e.name, c), side=g.task(c))
        elif cfg.tile and node.type.rank >= 2:
            try:
                g.stream(e, tile=_default_tile(node.type.shape))
            except ScheduleError:
                pass
    if base is not None:  # where results are stored is the interface's, not the explorer's to change
        for e, place in base.placements().items():
            g.store_at(g.edge(e), place.offset, place.axis, place.extent)
    stream_in_read_order(g)
    if cfg.fusion == "all":
        g.fuse(*g.tasks())
    elif cfg.fusion == "greedy":
        g.auto_fuse(cap_bytes or 41 * 2**20)
    if cfg.bundle:
        bundle_in_need_order(g)
    return g


def dma_caps(low, prefetch: float, timing=None) -> dict[str, int]:
    """Pinned depths of the FIFOs from a load DMA into one kernel: 16 KiB of tokens, 2 to 16 (``prefetch`` 0), none (1: deep
    enough for the DMA to run ahead without back-pressure), or that fraction of the no-back-pressure depth
    (at least 2) at ``timing`` (the design's timing on the board)."""
    if prefetch >= 1:
        return {}
    caps = capped_fifos(low, DMA_FIFO_CAP, DMA_FIFO_BYTES)
    if prefetch <= 0:
        return caps
    full = design_depths(timing.task_list, timing.edges, low.fifos).depths
    return {n: max(d, math.ceil(prefetch * full[n])) for n, d in caps.items()}


def size_for_board(g: DataflowSchedule, board, clock_mhz=None, bits=None, prefetch: float = 0) -> dict[str, int]:
    """Pin ``g``'s DMA FIFOs (:func:`dma_caps`) and size the others for its timing on ``board``."""
    timing = g.timing(board, clock_mhz, bits)
    low = g.lowered()
    handles = {h.name: h for h in g.fifos()}
    for n, d in dma_caps(low, prefetch, timing).items():
        g.fifo(handles[n], d)
    g.size_fifos(board=board, clock_mhz=clock_mhz, bits=bits)
    return g.depths()


@dataclass
class Tried:
    label: str
    space: str
    cfg: Config
    perf: DesignPerf | None
    why: str = ""

    def row(self) -> list[str]:
        p = self.perf
        if p is None:
            return [self.label, self.space, "-", "-", "-", "-", "-", "-", "-", self.why]
        tot, cap = p.total, p.board.total
        pct = lambda r: f"{100 * tot[r] / cap[r]:.0f}%"  # noqa: E731
        units = sum(u for _, u in self.cfg.unroll) or len(p.schedule.graph.tasks) if p.schedule is not None else 0
        return [self.label, self.space, str(units), f"{p.cycles}", f"{p.analytic}", f"{p.latency_s * 1e6:.1f}",
                pct("dsp"), f"{pct('bram')}/{pct('uram')}", "yes" if p.fits else "NO", self.why]


HEADER = ["design", "space", "sum u", "sim cycles", "analytic", "us", "DSP", "BRAM/URAM", "fits", "why"]


WIDTH = 100  # a terminal's width: a row's last column ("why") is wrapped on the lines under it


def table(rows: list[list[str]], header=HEADER) -> str:
    import textwrap

    last = len(header) - 1
    w = [max(len(str(r[i])) for r in [header] + rows) for i in range(last)]
    line = lambda r: "  ".join(str(c).ljust(w[i]) if i in (0, 1) else str(c).rjust(w[i])  # noqa: E731
                               for i, c in enumerate(r[:last])).rstrip()
    out = [line(header) + f"  ({header[last]} below)", line(["-" * x for x in w])]
    for r in rows:
        out.append(line(r))
        out += textwrap.wrap(str(r[last]), WIDTH, initial_indent="    ", subsequent_indent="    ",
                             break_on_hyphens=False)
    return "\n".join(out)


@dataclass
class Exploration:
    best: DesignPerf
    default: DesignPerf | None
    tried: list[Tried] = field(default_factory=list)
    config: Config | None = None

    def table(self) -> str:
        return table([t.row() for t in self.tried])

    def report(self) -> str:
        from .report import design_report

        head = [f"exploration of {self.best.name} on {self.best.board.name}: {len(self.tried)} design(s) tried",
                self.table(), ""]
        if self.default is not None:
            d = self.default
            gain = d.cycles / self.best.cycles if self.best.cycles and d.cycles else float("nan")
            head.append(f"default design: {d.cycles} cycles ({'fits' if d.fits else 'does not fit: ' + '; '.join(d.problems)}); "
                        f"best: {self.best.cycles} cycles ({gain:.1f}x faster)")
        return "\n".join(head + [design_report(self.best)])

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        from .. import registry

        return registry.lookup("present", "html")(self)


def _target(target, t: int, kind):
    """(dataflow function, default schedule or None, name)."""
    if isinstance(target, DataflowSchedule):
        return target.function, target, target.graph.ir.name
    if isinstance(target, DataflowFunction):
        return target, None, target.graph.ir.name
    if hasattr(target, "layer") and hasattr(target, "schedule") and hasattr(target, "config"):
        kind = kind or target.kinds()[0]
        return target.layer(t, kind).function, target.schedule(t, kind), f"{target.config.name or target.config.family} layer"
    raise ExploreError(f"explore takes a DataflowSchedule, an @sd.dataflow function or a model, got {type(target).__name__}",
                       caller_loc(), hint="sd.explore(sd.schedule(my_dataflow)) or sd.explore(llm_model)")


_BINDERS = {"dsp": bind_narrow_muls, "fabric": bind_float_adds}  # OPERATOR_MOVES -> the schedule step that makes it


def _kernel_est(fn: DataflowFunction, task: str, reorder: bool, u: int, board_name: str, clock: float, cache: dict,
                moves: frozenset = frozenset()):
    key = (task, reorder, u, moves)
    if key not in cache:
        kernel = fn.graph.kernel(task)
        by_value = (kernel, reorder, u, moves, board_name, clock)  # layers of two attention kinds share kernels
        if by_value not in _ESTIMATES:
            s = Schedule(kernel)
            if "split" in moves and not _splittable(kernel, reorder):
                _ESTIMATES[by_value] = None  # no float sum to split: no such variant of this kernel
            else:
                got = apply_recipe(s, reorder, u, "split" in moves)
                if not all(_BINDERS[m](s) for m in OPERATOR_MOVES if m in moves):
                    _ESTIMATES[by_value] = None  # nothing to bind: no such variant of this kernel
                else:
                    rep = estimate(s.ir, board_name, clock)
                    _ESTIMATES[by_value] = (int(rep.cycles), dict(rep.resources), got)
            if len(_ESTIMATES) > _RECIPES_KEPT:
                _ESTIMATES.pop(next(iter(_ESTIMATES)))
        cache[key] = _ESTIMATES[by_value]
    return cache[key]


_SPLITTABLE: dict = {}  # (kernel IR, reorder) -> does the recipe leave a float sum for split_sums to split?


def _splittable(kernel, reorder: bool) -> bool:
    key = (kernel, reorder)
    if key not in _SPLITTABLE:
        s = Schedule(kernel)
        with s.batch():
            _pipelines(s, reorder)
            _SPLITTABLE[key] = split_sums(s) > 0
        if len(_SPLITTABLE) > _RECIPES_KEPT:
            _SPLITTABLE.clear()
    return _SPLITTABLE[key]


def evaluate(fn, cfg: Config, board, clock_mhz, bits, base=None, label="", space="", why="",
             seen: dict | None = None) -> Tried:
    """Build one candidate and model it at depths sized for the board timing (not yet pinned in the schedule).
    ``seen``: designs already modeled in this exploration, by what they lower from; one built again (greedy
    fusion that keeps one region, a loop order that changes no loop) is not modeled twice."""
    b = get_board(board)
    try:
        g = build_design(fn, cfg, base, cap_bytes=int(0.9 * b.onchip_bytes))
        key = (g.design_key(), cfg.prefetch)
        if seen is not None and key in seen:
            same = seen[key][0]
            return Tried(label, space, cfg, same.perf, (why + "; " if why else "") + f"the same design as '{same.label}'")
        timing, low = g.timing(b, clock_mhz, bits), g.lowered()
        depths = design_depths(timing.task_list, timing.edges, low.fifos,
                               pinned=dma_caps(low, cfg.prefetch, timing)).depths
        p = model_design(g, b, clock_mhz, bits, depths=depths, name=label)
    except StreamDSLError as err:
        return Tried(label, space, cfg, None, f"refused: {err.message}")
    if p.sim is None and cfg.bundle and g.bundles():  # a kernel held up by a later kernel's bundled input
        return evaluate(fn, dataclasses.replace(cfg, bundle=False), board, clock_mhz, bits, base, label, space,
                        (why + "; " if why else "") + "the bundle deadlocked: each input its own DMA", seen)
    if not p.fits:
        why = (why + "; " if why else "") + "; ".join(p.problems)
    r = Tried(label, space, cfg, p, why)
    if seen is not None:
        seen[key] = (r, [g.kernel_ir(t) for t in g.graph.tasks])  # the IRs stay alive: their ids stay theirs
    return r


def commit(p: DesignPerf, bits=None, prefetch: float = 0) -> DesignPerf:
    """Pin the board-sized FIFO depths into the design's schedule and model it as it will be built."""
    g = p.schedule
    size_for_board(g, p.board, p.clock_mhz, bits, prefetch)
    q = model_design(g, p.board, p.clock_mhz, bits, name=p.name)
    return q


def explore(target, board="u55c", budget: int | None = None, *, clock_mhz: float | None = None,
            bits: dict | None = None, util: float = 0.85, t: int = 1, kind=None, checkpoints: int = 2,
            fusion: bool = True, base_config: Config | None = None) -> Exploration:
    """Explore tiling, fusion and resource allocation of ``target`` on ``board``; see the module docstring.

    ``budget``: the overall unroll budget (sum of the kernels' unroll
    factors; default: as far as ``util`` of the board's DSP/LUT/FF allows).
    ``bits``: stored widths of tensors for DMA traffic (``{"w_fc": 4}``)."""
    b = get_board(board)
    clock = float(clock_mhz or b.clock_mhz)
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise ExploreError(f"budget must be a positive integer (the sum of unroll factors), got {budget!r}",
                           caller_loc(), hint="budget=256, or leave it out to fill the board")
    fn, default_g, name = _target(target, t, kind)
    pb = bar(total=(1 if base_config else 2) + checkpoints + 1 + (4 if fusion else 0), desc=f"explore {name}",
             unit="design")

    seen: dict = {}

    def ev(*args, **kw) -> Tried:
        r = evaluate(*args, seen=seen, **kw)
        pb.set_postfix_str(f"{r.label}: {r.perf.cycles if r.perf else '-'} cycles")
        pb.update(1)
        return r

    try:
        ex = _explore(fn, default_g, name, ev, b, clock, budget, bits, util, checkpoints, fusion, base_config)
        pb.total = pb.n  # some designs are only tried when they differ from one already tried
        pb.refresh()
        return ex
    finally:
        pb.close()


def _explore(fn, default_g, name, ev, b, clock, budget, bits, util, checkpoints, fusion, base_config) -> Exploration:
    tried: list[Tried] = []
    default = None
    if default_g is not None:
        default = model_design(default_g, b, clock, bits, name="default")
        tried.append(Tried("default", "as given", Config(tile=False, reorder=False), default,
                           "the schedule as given" + ("" if default.fits else ": " + "; ".join(default.problems))))
    # tiling: the default tile with and without the loop order that follows it
    bases = [Config(tile=True, reorder=True), Config(tile=True, reorder=False)]
    base_rows = []
    for cfg in ([base_config] if base_config else bases):
        label = ("tile" if cfg.tile else "layouts as given") + (" + reorder" if cfg.reorder else "")
        r = ev(fn, cfg, b, clock, bits, default_g, label, "tiling", "u=1 everywhere")
        tried.append(r)
        base_rows.append(r)
    ok = [r for r in base_rows if r.perf is not None and r.perf.fits]
    start = min(ok, key=lambda r: r.perf.cycles) if ok else min(
        (r for r in base_rows if r.perf is not None), key=lambda r: r.perf.cycles, default=None)
    if start is None:
        raise ExploreError(f"no base design of {name} could be built", caller_loc(),
                           hint="; ".join(r.why for r in base_rows))
    base_cfg = start.cfg
    # intensity-driven unrolling under the budget (cost model per kernel)
    tasks = list(fn.graph.tasks)
    est: dict = {}
    u = {tk: 1 for tk in tasks}
    cur = {tk: _kernel_est(fn, tk, base_cfg.reorder, 1, b.name, clock, est) for tk in tasks}
    rest = dict(start.perf.total)  # everything but the kernels' own logic
    for tk in tasks:
        for r in RESOURCES:
            rest[r] -= start.perf.nodes[tk].resources.get(r, 0) - 0
    for tk in tasks:  # keep the memory the FIFOs of each kernel hold
        for r in ("bram", "uram"):
            rest[r] += start.perf.nodes[tk].resources.get(r, 0) - cur[tk][1].get(r, 0)
    limit = {r: util * b.total[r] for r in RESOURCES}  # logic and memory: partitioned arrays take BRAM banks
    slr_limit = {r: util * max(sl[r] for sl in b.slrs) for r in RESOURCES}  # a kernel sits on one SLR

    def used(state) -> dict:
        tot = {r: rest[r] for r in RESOURCES}
        for tk in tasks:
            for r in tot:
                tot[r] += state[tk][1].get(r, 0)
        return tot

    cur0 = dict(cur)
    heap = [(-cur[tk][0], tk) for tk in tasks]
    heapq.heapify(heap)
    total_u = sum(u.values())
    cap_u = budget if budget is not None else 1 << 30
    marks = sorted({int(x) for x in (len(tasks) * 2 ** k for k in range(1, 64)) if x <= cap_u} | {cap_u})
    snap_cfgs: list[tuple[int, dict, str]] = []
    next_mark = 0
    full = ""
    while heap:
        neg, tk = heapq.heappop(heap)
        nu = u[tk] * 2
        new = _kernel_est(fn, tk, base_cfg.reorder, nu, b.name, clock, est)
        if new[2] <= cur[tk][2] or new[0] >= cur[tk][0]:
            continue  # no loop left to unroll further, or no gain: this kernel is done
        if any(new[1].get(r, 0) > slr_limit[r] for r in slr_limit):
            continue  # one more doubling would not fit this kernel on one SLR: it is done
        trial = dict(cur)
        trial[tk] = new
        if total_u + (nu - u[tk]) > cap_u:
            snap_cfgs.append((total_u, dict(u), f"budget reached at {tk} (u {u[tk]} -> {nu} would exceed it)"))
            break
        if any(v > limit[r] for r, v in used(trial).items()):
            full = f"board full at {tk} (u {u[tk]} -> {nu} would exceed {util:.0%} of it)"
            continue  # this kernel is done; a cheaper one may still widen
        total_u += nu - u[tk]
        u[tk], cur[tk] = nu, new
        heapq.heappush(heap, (-new[0], tk))
        while next_mark < len(marks) and total_u >= marks[next_mark]:
            slow = max(tasks, key=lambda x: cur[x][0])
            snap_cfgs.append((total_u, dict(u), f"slowest kernel now {slow} ({cur[slow][0]} cycles, u={u[slow]})"))
            next_mark += 1
    if not snap_cfgs or snap_cfgs[-1][1] != u:
        slow = max(tasks, key=lambda x: cur[x][0])
        snap_cfgs.append((total_u, dict(u), (full + "; " if full else "every kernel saturated; ") +
                          f"slowest {slow} ({cur[slow][0]} cycles)"))
    none = {m: () for m in MOVES}
    picks = [p + (none,) for p in (snap_cfgs[-checkpoints:] if len(snap_cfgs) > checkpoints else snap_cfgs)]
    def by_gain(share: float, first: frozenset = frozenset(), split: bool = True):  # under share x the cap
        return _unroll_by_gain(tasks, cur0, lambda tk, f, d: _kernel_est(fn, tk, base_cfg.reorder, f, b.name, clock,
                                                                          est, d),
                               used, {k: v * share for k, v in limit.items()}, slr_limit, cap_u, first, split)

    gain = by_gain(1.0)
    if gain is not None and (gain[1], gain[3]) != (picks[-1][1], none):
        picks = picks + [gain]
    # a split sum (split_sums) is a greedy step's choice that can lead elsewhere: also with every unrolled float
    # sum split from the start (a split pays off with lanes, which the steps give the kernel only later) and
    # with none split; each tried when its kernels' cycles sum to less than the first allocation's (the
    # one-token layer's latency is about that sum)
    def kernel_sum(g) -> int:
        return sum(_kernel_est(fn, tk, base_cfg.reorder, g[1][tk], b.name, clock, est,
                               frozenset(m for m in MOVES if tk in g[3][m]))[0] for tk in tasks)

    splittable = [tk for tk in tasks if _splittable(fn.graph.kernel(tk), base_cfg.reorder)]
    if gain is not None and splittable:
        alts = []
        if set(splittable) - set(gain[3]["split"]):  # it left some unsplit: split from the start
            alts.append((lambda: by_gain(1.0, frozenset({"split"})), "float sums split first"))
        if gain[3]["split"]:  # it split some: the same without (else it is that already)
            alts.append((lambda: by_gain(1.0, split=False), "no float sum split"))
        first_sum = kernel_sum(gain)
        for make, how in alts:
            alt = make()
            if alt is not None and all((alt[1], alt[3]) != (p[1], p[3]) for p in picks) \
                    and kernel_sum(alt) < first_sum:
                picks = picks + [alt[:2] + (alt[2].replace("by gain", f"by gain, {how}", 1),) + alt[3:]]
    best = start

    def try_pick(tot_u, uu, why, moved, label_extra=""):
        nonlocal best
        cfg = Config(base_cfg.tile, base_cfg.reorder, tuple(sorted((k, v) for k, v in uu.items() if v > 1)), "all",
                     dsp=moved["dsp"], fabric=moved["fabric"], split=moved["split"])
        label = f"unroll sum {tot_u}" + (" by gain" if why.startswith("by gain") else "") + label_extra
        r = ev(fn, cfg, b, clock, bits, default_g, label, "tiling", why)
        tried.append(r)
        if r.perf is not None and r.perf.fits and (not best.perf.fits or r.perf.cycles < best.perf.cycles):
            best = r
        return r

    for pick in picks:
        r = try_pick(*pick)
    for share in (0.95, 0.90, 0.85):
        # the board's totals hold it but its kernels do not pack onto the SLRs: the same allocation under a
        # tighter cap, three times at most (each kernel's estimates are remembered)
        if gain is None or r.perf is None or r.perf.fits:
            break
        gain = by_gain(share)
        if gain is not None:
            r = try_pick(*gain, label_extra=f" at {share * util:.0%}")
    if fusion:
        for mode in ("greedy", "none"):
            cfg = dataclasses.replace(best.cfg, fusion=mode)
            label = "greedy fusion" if mode == "greedy" else "unfused"
            r = ev(fn, cfg, b, clock, bits, default_g, label, "fusion",
                         f"algorithm 2 under {0.9 * b.onchip_bytes / 2**20:.1f} MiB" if mode == "greedy"
                         else "one region per kernel: intermediates through DRAM")
            if r.perf is not None:
                r.why += f"; {len(r.perf.schedule.regions())} region(s)"
            tried.append(r)
            if r.perf is not None and r.perf.fits and r.perf.cycles < best.perf.cycles:
                best = r
    committed: dict[int, DesignPerf] = {}  # tried designs already sized for the board, by id
    if fusion:  # resource allocation: FIFO memory for the weight DMAs to run ahead of their kernels
        cands = [best.cfg]
        fastest = min((r for r in tried if r.space == "tiling" and r.perf is not None), key=lambda r: r.perf.analytic)
        if fastest.cfg.unroll != best.cfg.unroll:  # the unrolling the weight FIFOs may have held back
            cands.append(dataclasses.replace(fastest.cfg, fusion=best.cfg.fusion))
        for i, c in enumerate(cands):
            for frac in PREFETCH:  # the whole run-ahead, or part of it when that overfills the board
                r = ev(fn, dataclasses.replace(c, prefetch=frac), b, clock, bits, default_g,
                       "prefetch weights" + (f" x{frac:g}" if frac < 1 else "") + (f" ({fastest.label})" if i else ""),
                       "resources", "weight FIFOs at " + (f"{frac:g} of " if frac < 1 else "") +
                       "the no-back-pressure depth instead of 16 KiB")
                if r.perf is not None:
                    r.why += f"; FIFO/converter memory {r.perf.onchip_bytes / 2**20:.1f} MiB"
                tried.append(r)
                if r.perf is not None and r.perf.fits:  # as it will be built: the board-sized FIFOs pinned
                    q = commit(r.perf, bits, frac)
                    if q.fits:
                        r.perf = committed[id(r)] = q
                        if q.cycles < best.perf.cycles:
                            best = r
                        break
                    r.why += "; its board-sized FIFOs do not fit: " + "; ".join(q.problems)
                    r.perf = q
    if best.perf.fits:  # the board-sized FIFOs may outgrow the board: then the next fastest design that fits
        for r in sorted((r for r in tried if r.perf is not None and r.perf.fits), key=lambda r: r.perf.cycles):
            q = committed.get(id(r)) or commit(r.perf, bits, r.cfg.prefetch)
            if q.fits:
                best, best.perf = r, q
                break
            r.why += "; its board-sized FIFOs do not fit: " + "; ".join(q.problems)
    if not best.perf.fits:
        raise ExploreError(f"no design of {name} fits {b.name}: " + "; ".join(best.perf.problems), caller_loc(),
                           hint="use a larger board, smaller tiles, or a lower budget")
    for r in tried:
        if r is best:
            r.label = "* " + r.label
    return Exploration(best.perf, default, tried, best.cfg)


__all__ = ["Config", "Exploration", "ExploreError", "apply_recipe", "build_design", "explore", "size_for_board"]
