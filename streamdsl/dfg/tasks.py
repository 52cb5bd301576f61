"""A dataflow task as the process it becomes: the kernel's loop nest with its token moves written in.

A kernel task reads its input streams into local buffers and writes its results from local buffers, token by
token, at the steps :mod:`.access` says (``need`` before a step, ``done`` after it).  :func:`task_ir` writes
that process as IR: the kernel's tensor parameters become local buffers (a one-token window where every step
reads only the token it has just read), every step of the kernel's step body is preceded by the
:class:`~streamdsl.ir.nodes.StreamMove` reads it needs and followed by the writes it allows (inside a loop
split into one step an iteration, in the loop's body, unless it moves tokens at the loop's first iteration alone
(a read) or its last alone (a write): then beside the loop), and the tokens left over move at the end.

The HLS emitter writes this IR as C++ and the timing model prices it with the kernel cost model, so the loops
the model prices are the loops the project runs: moves inside a pipelined loop bound its II by a token's beats,
and a loop that moves tokens is no longer a perfect nest Vitis would flatten.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..ir import build as B
from ..ir.deps import loop_binds
from ..ir.memo import IdentityMemo
from ..ir.nodes import Alloc, Const, For, Kernel, Load, Return, StreamMove
from ..types import index
from ..sched.rewrite import map_stmt_exprs, replace
from ..types import TensorType
from .access import StepSeq, StepTables, step_body
from .streamplan import StreamPlan, buffer_ii


def _in_window(e, windows: dict[str, tuple[int, ...]]):
    """A read of a one-token window: each index taken within the tile (tiles start at multiples of its size)."""
    if not (isinstance(e, Load) and e.name in windows):
        return None
    idx = tuple(B.const(0, i.dtype) if n == 1 else B.binop("mod", i, B.const(n, i.dtype))
                for i, n in zip(e.indices, windows[e.name]))
    return replace(e, indices=idx)


def windows_of(k: Kernel, n, fifos: dict) -> dict[str, tuple[int, ...]]:
    """Kernel parameter -> the tile shape of its one-token window (the inputs a window serves)."""
    tables: StepTables = n.tables
    return {p: fifos[e].layout.element for e in n.ports for p in n.ports[e]
            if p in tables.windows and e in fifos and fifos[e].dst == n.name}


def _step_ranges_of(tables: StepTables) -> dict[int, tuple[int, int]]:
    out: dict[int, list[int]] = {}
    i = 0
    steps = tables.steps
    for stmt, count in (steps.runs() if isinstance(steps, StepSeq) else ((st.stmt, 1) for st in steps)):
        r = out.setdefault(stmt, [i, 0])
        r[1] += count
        i += count
    return {s: (a, c) for s, (a, c) in out.items()}


# a task's step tables are shared by the designs that keep its kernel and layouts: their ranges once per object
_STEP_RANGES = IdentityMemo(_step_ranges_of, 1024)


def _step_ranges(tables: StepTables) -> dict[int, tuple[int, int]]:
    """Statement of the step body -> (its first step, its steps); read it, never change it."""
    return _STEP_RANGES(tables)


def _diff(table: tuple[int, ...], first: int, count: int) -> tuple[int, ...]:
    """The tokens each of steps ``first .. first + count - 1`` moves (``table``: the running count)."""
    if count == 1 and first < len(table):  # one step (most of them): no array for two numbers
        return (int(table[first]) - (int(table[first - 1]) if first > 0 else 0),)
    run = np.asarray(table[max(0, first - 1):first + count], dtype=np.int64)
    return tuple((np.diff(run) if first > 0 else np.diff(run, prepend=0)).tolist())


def _keep_binds(k: Kernel, body: tuple) -> tuple:
    """``step_body`` runs a top-level loop of one trip as its body; the operators that loop binds (``bind_op``)
    stay bound: each loop of its body gets the bindings it does not set itself, and a statement of its body
    that is no loop runs in a loop of one trip that carries them."""
    out: list = []
    i = 0
    for top in k.body:
        if i < len(body) and body[i] is top:
            out.append(top)
            i += 1
            continue
        n = len(top.body)  # a dissolved loop: its statements, in place
        binds = {f"bind_{op}": impl for op, impl in loop_binds(top.attrs).items()}
        for b in body[i:i + n]:
            if not binds or isinstance(b, (Alloc, Return)):
                out.append(b)
            elif isinstance(b, For):
                attrs = b.attrs
                for key, v in binds.items():
                    if key not in attrs:
                        attrs = attrs.set(key, v)
                out.append(dataclasses.replace(b, attrs=attrs))
            else:
                out.append(For(f"{top.var}_b{len(out)}", Const(0, index), Const(1, index), 1, (b,),
                               type(top.attrs)(binds), loc=b.loc))
        i += n
    assert i == len(body), "step_body runs a loop of one trip as its body, statement for statement"
    return tuple(out)


def _once(m: StreamMove) -> StreamMove:
    """A loop's move that moves tokens at one end of the loop only (a read at its first iteration, a write at its
    last), as one move beside the loop: the same tokens at the same point of the process.  Inside a pipeline its
    beats would bound every iteration's II (the beats of a token are one unrolled loop there), though it moves
    them once: the input vector of a one-token linear read before the weights' loop, its result written after."""
    return dataclasses.replace(m, counts=(sum(m.counts),))


def task_ir(k: Kernel, n, plan: StreamPlan, fifos: dict, in_edges: list[str], out_edges: list[str]) -> Kernel:
    """The process of kernel task ``n`` (its scheduled IR ``k``; ``fifos``: edge -> the FIFO it reads or
    writes; the edges in the order each step moves their tokens)."""
    tables: StepTables = n.tables
    windows = windows_of(k, n, fifos)
    params = {p.name: p.type for p in k.params}
    parts = dict(k.attrs.get("partition", ()))
    shapes = {p: (windows.get(p) or params[p].shape) for e in in_edges for p in n.ports[e]}
    allocs = {s.name: s for s in k.body if isinstance(s, Alloc)}

    def buffer(name: str) -> tuple[tuple[int, ...], tuple]:
        """(shape, partitions) of the local buffer a stream fills (a parameter) or empties (a result)."""
        if name in shapes:
            return tuple(shapes[name]), tuple(parts.get(name, ()))
        a = allocs.get(name)
        return (tuple(a.type.shape), tuple(a.attrs.get("partition", ()))) if a is not None else ((1,), ())

    def cycles(e: str) -> int:
        """A token's cycles: its beats over the FIFOs, at the ports of the buffers it fills or empties."""
        f = fifos[e]
        bt, lanes = plan.beats[f.name], plan.lanes[f.name]
        ii = max(buffer_ii(lanes * bt.lanes, *buffer(p), f.layout.element) for p in n.ports[e])
        return bt.cycles(lanes) * ii

    token = {e: cycles(e) for e in in_edges + out_edges if e in fifos}

    def moves(direction: str, edges: list[str], first: int, count: int):
        table = tables.need if direction == "read" else tables.done
        out = [StreamMove(e, direction, n.ports[e][0], _diff(table[n.ports[e][0]], first, count), token[e])
               for e in edges]
        return [m for m in out if any(m.counts)]  # a step that moves none of a stream's tokens has no move

    body = _keep_binds(k, step_body(k))
    if windows:
        body = tuple(map_stmt_exprs(s, lambda x: _in_window(x, windows)) for s in body)
    ranges = _step_ranges(tables)
    out: list = []
    for p in k.params:  # the parameters the streams fill: local buffers (a window: one token)
        if isinstance(p.type, TensorType) and p.name in shapes:
            attrs = {"partition": tuple(parts[p.name])} if p.name in parts else {}
            out.append(Alloc(p.name, TensorType(p.type.dtype, tuple(shapes[p.name])), None,
                             attrs=type(k.attrs)(attrs), loc=p.loc))
    for i, s in enumerate(body):
        if isinstance(s, Return):
            continue
        first, count = ranges.get(i, (None, 0))
        if first is None:
            out.append(s)
            continue
        if i in tables.split:
            reads, writes = moves("read", in_edges, first, count), moves("write", out_edges, first, count)
            before = [_once(m) for m in reads if not any(m.counts[1:])]
            after = [_once(m) for m in writes if not any(m.counts[:-1])]
            inner = (*(m for m in reads if any(m.counts[1:])), *s.body, *(m for m in writes if any(m.counts[:-1])))
            out += [*before, dataclasses.replace(s, body=inner), *after]
        else:
            out += [*moves("read", in_edges, first, 1), s, *moves("write", out_edges, first, 1)]
    last = len(tables.steps)
    for e in in_edges:  # replayed or unused tokens still leave the FIFO
        left = tables.tokens[n.ports[e][0]] - (tables.need[n.ports[e][0]][-1] if last else 0)
        if left:
            out.append(StreamMove(e, "read", n.ports[e][0], (left,), token[e]))
    for e in out_edges:
        left = tables.tokens[n.ports[e][0]] - (tables.done[n.ports[e][0]][-1] if last else 0)
        if left:
            out.append(StreamMove(e, "write", n.ports[e][0], (left,), token[e]))
    attrs = k.attrs.remove("partition") if "partition" in k.attrs else k.attrs
    scalars = tuple(p for p in k.params if not isinstance(p.type, TensorType))
    return Kernel(k.name, scalars, (), tuple(out), attrs, k.callees, k.loc)


__all__ = ["task_ir", "windows_of"]
