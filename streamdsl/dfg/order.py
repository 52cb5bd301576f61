"""Stream a graph input in the order its consumer's pipeline reads it (a weight of a one-token linear).

A one-token linear ``A[o] += x[k] * W[o, k]`` (outputs innermost, lanes over
``o``) reads one slice of ``W`` per pipeline iteration: ``W[o-block, k]``,
the blocks of one ``k`` one after the other.  Streamed by rows, it needs
every row before its first iteration (the task keeps the whole matrix and
computes only once it has it); streamed in the order it reads, the weights
flow through the pipeline a token an iteration and the task keeps one token.

:func:`stream_in_read_order` finds, for each graph input of rank 2 or more
read by one task, a top-level loop of the task's :func:`~.access.step_body`
that is one pipelined loop reading the input or a perfect nest around it
(the reduction loop around the lanes' pipeline; attention's loops around
its pipeline over a KV cache); it fuses the nest (``s.fuse``: the perfect
nest Vitis flattens anyway, now one step an iteration) and streams the
input in tiles of what one iteration reads, in the order the iterations
read them, when the step tables then move one token an iteration through a
one-token window (:attr:`~.access.StepTables.windows`).  An input read a
step at a time by a pipeline inside a top-level loop that is more than its
pipeline (a head of a q/k/v projection: the accumulators' reset, the
pipeline, the head's results) streams in tiles of what one iteration of the
pipeline reads, when no step then needs more of it ahead
(:func:`_pipeline_tiling`).  Anything else keeps its layout.
"""
from __future__ import annotations

import bisect

import numpy as np

from ..ir.memo import IdentityMemo
from ..ir import build as B
from ..ir.nodes import For, Kernel, Load, walk
from ..sched import primitives as P
from ..sched.rewrite import substitute
from ..sched.schedule import LoopRef, apply_cached
from ..types import index
from .access import _step_boxes, loop_range, pipelined, step_body, step_tables
from .layout import LayoutRefusal, tiled


def _reads(s, name: str) -> bool:
    return any(isinstance(n, Load) and n.name == name for n in walk(s))


def _loads(s, name: str) -> int:
    return sum(1 for n in walk(s) if isinstance(n, Load) and n.name == name)


def _nest(k: Kernel, name: str) -> tuple[str, ...] | None:
    """The loop of ``k``'s step body that alone reads ``name``: ``(pipelined,)`` when it is the pipeline
    itself, ``(outer, ..., pipelined)`` when it is a perfect nest around the pipeline (loops to fuse), else
    None."""
    body = step_body(k)
    readers = [s for s in body if _reads(s, name)]
    if len(readers) != 1 or not isinstance(readers[0], For) or loop_range(readers[0], {}) is None:
        return None
    chain = [readers[0]]
    while "pipeline" not in chain[-1].attrs:
        lp = chain[-1]
        if pipelined(lp) or len(lp.body) != 1 or not isinstance(lp.body[0], For) \
                or loop_range(lp.body[0], {}) is None:
            return None
        chain.append(lp.body[0])
    return tuple(lp.var for lp in chain)


def _tile(k: Kernel, loop: str, name: str, ty):
    """(tile, order, layout): what one iteration of the fused loop reads of ``name``, and the dims outermost
    first (the dim that moves from one iteration to the next innermost)."""
    body = step_body(k)
    n = next(i for i, s in enumerate(body) if isinstance(s, For) and s.var == loop)
    return _iteration_tile(body, n, loop_range(body[n], {})[0], name, ty)


def _iteration_tile(body, n: int, lo: int, name: str, ty):
    """(tile, order, layout) of what iteration ``lo`` of loop ``body[n]`` reads of ``name`` (of type ``ty``),
    the dim that moves at the next iteration innermost; None unless exactly one dim moves and tiles so."""
    shape = ty.shape
    reads, _ = _step_boxes(body, [(n, np.array([lo, lo + 1], dtype=np.int64))], {name: tuple(shape)})
    box, valid = reads[name]
    if not valid.all():
        return None
    tile = tuple(int(b) for b in box[0, :, 1] - box[0, :, 0] + 1)
    moving = [d for d in range(len(shape)) if box[1, d, 0] != box[0, d, 0]]
    if len(moving) != 1:
        return None
    order = tuple(d for d in range(len(shape)) if d != moving[0]) + (moving[0],)
    try:
        return tile, order, tiled(ty, tile, order)
    except LayoutRefusal:
        return None


def _plan(k: Kernel, name: str, ty):
    """(the loops to fuse, or the one loop whose iterations are the steps; tile; order) when streaming ``name``
    that way moves a token an iteration through a one-token window.  The fused nest is tried first (a token a
    pipeline iteration); when it cannot be steps (more than ``MAX_STEPS`` iterations: a big layer at one lane),
    the loop around the pipeline alone (a token, its slice of ``name``, an iteration of it)."""
    nest = _nest(k, name)
    if nest is None:
        return None
    got = _plan_of(k, nest, name, ty)
    if got is None and len(nest) == 2:
        got = _plan_of(k, nest[:1], name, ty)
    return got


def _plan_of(k: Kernel, nest: tuple[str, ...], name: str, ty):
    try:
        fused, var = P.fuse(k, nest) if len(nest) > 1 else (k, nest[0])
    except P.Refusal:  # bounds fuse cannot take: the nest stays as it is
        return None
    got = _tile(fused, var, name, ty)
    if got is None:
        return None
    tile, order, lay = got
    tables = step_tables(fused, {name: lay}, {})
    n = next(i for i, s in enumerate(step_body(fused)) if isinstance(s, For) and s.var == var)
    if n not in tables.split or name not in tables.windows:
        return None
    return nest, tile, order


_PLANS = IdentityMemo(_plan, 256)


def _pipeline_reading(k: Kernel, name: str) -> tuple[For, list[For]] | None:
    """The one pipelined loop of ``k``'s step body that reads ``name`` (all of its reads) and the loops around
    it, when one top-level loop holds it."""
    readers = [s for s in step_body(k) if _reads(s, name)]
    if len(readers) != 1 or not isinstance(readers[0], For):
        return None
    found: list[tuple[For, list[For]]] = []

    def visit(s, outer: list[For]) -> None:
        if not isinstance(s, For):
            return
        if "pipeline" in s.attrs:
            if _reads(s, name):
                found.append((s, outer))
            return
        for b in s.body:
            visit(b, outer + [s])

    visit(readers[0], [])
    if len(found) != 1 or _loads(found[0][0], name) != _loads(readers[0], name):
        return None
    return found[0]


def _pipeline_tiling(k: Kernel, name: str, ty, current):
    """(tile, order) of what one iteration of the pipeline reading ``name`` reads, in the order its iterations
    read them, when no step then needs a larger share of ``name`` before it than under ``current`` (its layout
    now).  A step of a loop around the pipeline (a head of a q/k/v projection) then still reads its tokens
    before it starts, but each token is what the pipeline reads at once, which its buffer's partition (made for
    the pipeline's lanes) takes in a beat: a row of the weight, read where the lanes read a column, went into
    one bank, two values a cycle."""
    got = _pipeline_reading(k, name)
    if got is None:
        return None
    pipe, outer = got
    rng = loop_range(pipe, {})
    fixed = {}
    for lp in outer:  # the loops around the pipeline at their first iteration: the tile does not depend on them
        r = loop_range(lp, {})
        if r is None:
            return None
        fixed[lp.var] = r[0]
    if rng is None or rng[1] <= rng[0]:
        return None
    body = pipe
    for var, lo in fixed.items():
        body = substitute(body, var, B.const(lo, index))
    got = _iteration_tile((body,), 0, rng[0], name, ty)
    if got is None:
        return None
    tile, order, lay = got
    if lay == current:
        return None
    new, now = step_tables(k, {name: lay}, {}), step_tables(k, {name: current}, {})
    if any(a * current.num_tokens > b * lay.num_tokens for a, b in zip(new.need[name], now.need[name])):
        return None
    return tile, order


_PIPELINE_TILINGS = IdentityMemo(_pipeline_tiling, 256)


def stream_in_read_order(g) -> list[str]:
    """Fuse and stream every graph input of rank 2 or more that one task reads a tile an iteration (module
    doc; a KV cache row by row into attention's pipelines); returns the edges streamed so."""
    done = []
    for e in g.edges():
        node = g.graph.edges[e.name]
        if not node.is_input or node.type.rank < 2 or len(node.consumers) != 1:
            continue
        task, arg = node.consumers[0]
        s = g.schedule(g.task(task))
        name = s.ir.params[arg].name
        plan = _PLANS(s.ir, name, node.type)
        if plan is None:
            tiling = _PIPELINE_TILINGS(s.ir, name, node.type, g.layout(e.name, task))
            if tiling is not None:
                g.stream(e, tile=tiling[0], order=tiling[1])
                done.append(e.name)
            continue
        nest, tile, order = plan
        if len(nest) > 1:
            apply_cached(s, ("fuse", nest), lambda s: s.fuse(*(LoopRef(s, v) for v in nest)))  # by var: unique
        g.stream(e, tile=tile, order=order)
        done.append(e.name)
    return done



def _need_span(low, task: str, param: str) -> tuple[int, int]:
    """(first step that needs a token of ``param``, first step by which all of it has been read)."""
    tables = low.nodes[task].tables
    need, tokens = tables.need[param], tables.tokens[param]  # a running count: bisect it
    return bisect.bisect_right(need, 0), bisect.bisect_left(need, tokens)


def _first_write(low, task: str) -> int:
    """The first step after which ``task`` writes a token of any result."""
    done = low.nodes[task].tables.done.values()  # running counts: bisect them
    return min((bisect.bisect_right(d, 0) for d in done), default=1 << 30)


def bundle_in_need_order(g) -> tuple[str, ...]:
    """Bundle the graph inputs the kernels read from memory (all but rank-3 tensors: the KV caches) into one
    DMA process (``g.bundle``), in the order their kernels need them: by the first reader's program order,
    then the step that first needs them.  Kernels that could run side by side (a gated MLP's gate and up
    projections) then get their weights in turn, each at the bundle's full bandwidth: on the modeled Gemma
    layer one bundle was faster than a bundle per parallel branch.  An input a kernel needs at or before the
    step by which it has read an earlier multi-token input of the bundle whole (two weights of one loop)
    stays out, as do a multi-token input with several readers (one slow reader would hold up the rest) and
    one its kernel needs whole at one step (a weight a many-row kernel keeps whole: its own DMA loads it
    while the others run).  Once a kernel writes results before it has read a bundled input whole, only its
    own inputs may follow (a later kernel's input behind it could wait for that kernel, which waits for the
    first one's results to be read: a deadlock the explorer would otherwise meet and undo).  Returns the
    bundled edges (none when fewer than two qualify)."""
    low = g.lowered()
    order = {t: n for n, t in enumerate(g.graph.tasks)}
    keyed = []
    for e in g.graph.edges.values():
        if not e.is_input or e.type.rank == 3 or not e.consumers:
            continue
        if len({c for c, _ in e.consumers}) > 1 and g.layout(e.name, e.consumers[0][0]).num_tokens > 1:
            continue
        task, arg = min(e.consumers, key=lambda c: order[c[0]])
        param = g.kernel_ir(task).params[arg].name
        first, whole = _need_span(low, task, param)
        tokens = low.nodes[task].tables.tokens[param]
        if tokens > 1 and first == whole:
            continue  # needed whole at once (a weight a many-row kernel keeps): its own DMA loads it meanwhile
        keyed.append(((order[task], first), e.name, task, whole, tokens))
    keyed.sort(key=lambda x: x[0])
    chosen: list[str] = []
    last: dict[str, int] = {}  # per reader: the step by which its multi-token inputs bundled so far are read whole
    held = None  # a reader that writes before it has read a bundled input whole: only its own inputs may follow
    for (_, first), name, task, whole, tokens in keyed:
        if task in last and first <= last[task]:
            continue  # the kernel still reads an earlier input of the bundle when (or after) it needs this one
        if held is not None and task != held:
            continue  # its outputs may wait on this input's reader, which would wait behind the bundle
        chosen.append(name)
        if tokens > 1:  # a one-token input sits in its FIFO and never holds the process up
            last[task] = max(last.get(task, -1), whole)
            if _first_write(low, task) <= whole:
                held = task
    if len(chosen) < 2:
        return ()
    return g.bundle(*(g.edge(n) for n in chosen))
