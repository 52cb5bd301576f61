"""When a kernel's loop nest needs each token of its streams: the task's step tables.

A task in a dataflow region reads its input streams into local buffers and
writes its results from local buffers, token by token, in stream order.  It
computes exactly what the kernel computes; the question is only *when* each
token moves.  This module answers it from the loop nest, statically:

* The kernel body is cut into **steps**: every iteration of a top-level loop
  is one step (``for i in range(8)`` gives 8), every other top-level
  statement (a tensor initialisation, a scalar) is one step.
* For each step, interval arithmetic over the index expressions (loop
  variables range over their bounds; anything non-affine, such as a
  data-dependent index, covers the whole dim) gives the box of elements the
  step reads from each input and writes to each result.
* An input token must have arrived before the first step whose read box
  meets its tile: ``need[s]`` is how many tokens (a prefix of the stream, in
  stream order) the task has read before step ``s``.  A replayed token
  (same data again) is never needed; it is read when the prefix passes it.
* A result token can leave after the last step whose write box meets its
  tile, and only after every token before it in stream order (a FIFO keeps
  order): ``done[s]`` is how many tokens the task has written after step
  ``s``.  Whatever is left is read or written after the last step.

A kernel whose loops walk a tensor in its stream order gets one token per
step; one that needs the whole input first (a global reduction, a transpose
against the stream order) gets ``need[0] == tokens``, and
:meth:`StepTables.summary` says so.  The same tables drive the HLS emitter
(:mod:`streamdsl.backend.hls.dataflow`) and the token simulator's schedule
of the task (:mod:`.lower`), so both agree on when every token moves.

Boxes are over-approximations (the bounding box of a step's accesses; a
branch counts as taken), so a token may be read earlier or written later
than strictly necessary, never the other way round.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..ir.nodes import Alloc, Assign, BinOp, CallKernel, Cast, Const, Decl, For, If, Kernel, Load, Ref, Return, \
    Select, Store, UnaryOp, Var, walk
from .itensor import ITensor

MAX_STEPS = 1 << 16  # a top-level loop with more iterations than this is one step

Interval = tuple[int, int]  # inclusive bounds


def interval(e, env: dict[str, Interval]) -> Interval | None:
    """Bounds of an integer index expression, or None when unknown."""
    if isinstance(e, Const):
        if isinstance(e.value, bool) or not float(e.value).is_integer():
            return None
        v = int(e.value)
        return v, v
    if isinstance(e, Var):
        return env.get(e.name)
    if isinstance(e, Cast):
        return interval(e.operand, env)
    if isinstance(e, UnaryOp) and e.op == "neg":
        x = interval(e.operand, env)
        return None if x is None else (-x[1], -x[0])
    if isinstance(e, BinOp):
        a, b = interval(e.lhs, env), interval(e.rhs, env)
        if a is None or b is None:
            return None
        if e.op == "add":
            return a[0] + b[0], a[1] + b[1]
        if e.op == "sub":
            return a[0] - b[1], a[1] - b[0]
        if e.op == "mul":
            p = [x * y for x in a for y in b]
            return min(p), max(p)
        if e.op == "floordiv" and b[0] == b[1] and b[0] > 0:
            return a[0] // b[0], a[1] // b[0]
        if e.op == "mod" and b[0] == b[1] and b[0] > 0:
            c = b[0]
            return (a[0] % c, a[1] % c) if a[0] // c == a[1] // c else (0, c - 1)
        if e.op in ("min", "max"):
            f = min if e.op == "min" else max
            return f(a[0], b[0]), f(a[1], b[1])
        return None
    if isinstance(e, Select):
        a, b = interval(e.then, env), interval(e.orelse, env)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    return None


def loop_range(s: For, env: dict[str, Interval]) -> Interval | None:
    lo, hi = interval(s.start, env), interval(s.stop, env)
    if lo is None or hi is None:
        return None
    if s.step > 0:
        return (lo[0], hi[1] - 1) if hi[1] - 1 >= lo[0] else None
    return (hi[0] + 1, lo[1]) if lo[1] >= hi[0] + 1 else None


class _Boxes:
    """Bounding boxes of the reads and writes of one step, per tensor of interest."""

    def __init__(self, shapes: dict[str, tuple[int, ...]]):
        self.shapes = shapes
        self.reads: dict[str, list[list[int]]] = {}
        self.writes: dict[str, list[list[int]]] = {}

    def touch(self, table, name: str, idx, env) -> None:
        shape = self.shapes.get(name)
        if shape is None:
            return
        box = [[0, n - 1] for n in shape]
        if idx is not None:
            for d, i in enumerate(idx):
                iv = interval(i, env)
                if iv is not None:
                    box[d] = [max(0, iv[0]), min(shape[d] - 1, iv[1])]
        cur = table.get(name)
        if cur is None:
            table[name] = box
        else:
            for c, b in zip(cur, box):
                c[0], c[1] = min(c[0], b[0]), max(c[1], b[1])

    def expr(self, e, env) -> None:
        for n in walk(e):
            if isinstance(n, Load):
                self.touch(self.reads, n.name, n.indices, env)
            elif isinstance(n, Ref):
                self.touch(self.reads, n.name, None, env)

    def stmts(self, body, env) -> None:
        for s in body:
            self.stmt(s, env)

    def stmt(self, s, env) -> None:
        if isinstance(s, For):
            self.expr(s.start, env)
            self.expr(s.stop, env)
            inner = dict(env)
            r = loop_range(s, env)
            if r is None:
                inner.pop(s.var, None)
            else:
                inner[s.var] = r
            self.stmts(s.body, inner)
        elif isinstance(s, Store):
            for i in s.indices:
                self.expr(i, env)
            self.expr(s.value, env)
            self.touch(self.writes, s.name, s.indices, env)
        elif isinstance(s, (Decl, Assign)):
            self.expr(s.init if isinstance(s, Decl) else s.value, env)
        elif isinstance(s, Alloc):
            if s.init is not None:
                self.expr(s.init, env)
                self.touch(self.writes, s.name, None, env)
        elif isinstance(s, If):
            self.expr(s.cond, env)
            self.stmts(s.then, env)
            self.stmts(s.orelse, env)
        elif isinstance(s, CallKernel):
            for a in s.args:
                self.expr(a, env)
            for o in s.outs:
                self.touch(self.writes, o, None, env)
        elif isinstance(s, Return):
            pass


@dataclass(frozen=True)
class Step:
    """One step: top-level statement ``stmt`` (its ``value``-th iteration when it is a loop)."""

    stmt: int
    value: int | None


def steps(k: Kernel) -> list[Step]:
    out: list[Step] = []
    for n, s in enumerate(k.body):
        if isinstance(s, Return):
            continue
        r = loop_range(s, {}) if isinstance(s, For) else None
        if isinstance(s, For) and r is not None and (r[1] - r[0]) // abs(s.step) + 1 <= MAX_STEPS:
            first = r[0] if s.step > 0 else r[1]
            count = (r[1] - r[0]) // abs(s.step) + 1
            out += [Step(n, first + m * s.step) for m in range(count)]
        else:
            out.append(Step(n, None))
    return out or [Step(0, None)]


def loop_steps(k: Kernel) -> set[int]:
    """Top-level statements that :func:`steps` splits into one step per iteration."""
    return {st.stmt for st in steps(k) if st.value is not None}


@dataclass(frozen=True)
class StepTables:
    """Per stream: ``need`` (inputs) or ``done`` (results) token counts at every step."""

    steps: tuple[Step, ...]
    need: dict[str, tuple[int, ...]]  # input -> tokens read before each step
    done: dict[str, tuple[int, ...]]  # result -> tokens written after each step
    tokens: dict[str, int]

    @property
    def num_steps(self) -> int:
        return len(self.steps)

    def step_reads(self, name: str) -> tuple[int, ...]:
        """The step before which each token of input ``name`` is read (leftovers: the last step)."""
        return self._at(self.need[name], self.tokens[name])

    def step_writes(self, name: str) -> tuple[int, ...]:
        """The step after which each token of result ``name`` is written (leftovers: the last step)."""
        return self._at(self.done[name], self.tokens[name])

    def _at(self, table: tuple[int, ...], tokens: int) -> tuple[int, ...]:
        at = np.minimum(np.searchsorted(np.asarray(table), np.arange(tokens), side="right"), len(self.steps) - 1)
        return tuple(at.tolist())

    @functools.cached_property
    def iterations(self) -> tuple[int, dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]:
        """The task as token-simulator iterations: ``(iters, reads, writes)`` per kernel name.

        A step that moves several tokens of one stream moves them one per
        iteration (the emitted code reads or writes them one after the
        other, each blocking on its FIFO), so step ``s`` spans ``max(1,
        tokens moved)`` iterations: its reads in the first ones, its writes
        in the last ones.
        """
        reads = {n: self.step_reads(n) for n in self.need}
        writes = {n: self.step_writes(n) for n in self.done}
        n = len(self.steps)
        width = [1] * n
        for table in (*reads.values(), *writes.values()):
            for s, c in zip(*np.unique(np.array(table, dtype=np.int64), return_counts=True)):
                width[s] = max(width[s], int(c))
        base = [0] * (n + 1)
        for s in range(n):
            base[s + 1] = base[s] + width[s]

        def spread(table: tuple[int, ...], at_end: bool) -> tuple[int, ...]:
            out, rank = [], {}
            counts = dict(zip(*np.unique(np.array(table, dtype=np.int64), return_counts=True))) if table else {}
            for s in table:
                r = rank.get(s, 0)
                rank[s] = r + 1
                out.append(base[s] + (width[s] - int(counts[s]) + r if at_end else r))
            return tuple(out)

        return (base[n], {k: spread(v, False) for k, v in reads.items()},
                {k: spread(v, True) for k, v in writes.items()})

    def bursts(self, name: str) -> list[int]:
        """Tokens of ``name`` moved at each step that moves any (in step order)."""
        table = self.need.get(name) or self.done[name]
        out, prev = [], 0
        for v in table:
            if v > prev:
                out.append(v - prev)
            prev = v
        if prev < self.tokens[name]:
            out.append(self.tokens[name] - prev)  # the leftovers after the last step
        return out

    def buffered(self, name: str) -> bool:
        """More than half of the stream moves at one step: the loop nest does not follow its order."""
        t = self.tokens[name]
        return t > 1 and max(self.bursts(name)) * 2 > t

    def summary(self, name: str) -> str:
        """How the loop nest moves ``name``, in words."""
        t, b = self.tokens[name], self.bursts(name)
        verb = "reads" if name in self.need else "writes"
        what = "buffered" if self.buffered(name) else "streamed"
        return f"{what}: {verb} {t} token(s) at {len(b)} of {self.num_steps} steps, up to {max(b)} at once"


def _token_boxes(it: ITensor) -> tuple[np.ndarray, np.ndarray]:
    off = np.array(it.offsets(), dtype=np.int64).reshape(it.num_tokens, len(it.element))
    return off, off + np.array(it.element, dtype=np.int64) - 1


def _meets(step_boxes: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(steps, tokens) booleans: does step s's box meet token p's tile? (one dim at a time: no 3-D temporaries)"""
    out = np.ones((step_boxes.shape[0], lo.shape[0]), dtype=bool)
    for d in range(lo.shape[1]):
        out &= step_boxes[:, None, d, 0] <= hi[None, :, d]
        out &= lo[None, :, d] <= step_boxes[:, None, d, 1]
    return out


def step_tables(k: Kernel, inputs: dict[str, ITensor], results: dict[str, ITensor]) -> StepTables:
    """The tables of kernel ``k`` for its streamed ``inputs`` (param name -> layout) and ``results``
    (returned local name -> layout)."""
    st = steps(k)
    shapes = {n: it.tensor_shape for n, it in {**inputs, **results}.items()}
    per_step: list[_Boxes] = []
    for s in st:
        bx = _Boxes(shapes)
        stmt = k.body[s.stmt]
        if s.value is None:
            bx.stmt(stmt, {})
        else:
            env = {stmt.var: (s.value, s.value)}
            bx.expr(stmt.start, {})
            bx.expr(stmt.stop, {})
            bx.stmts(stmt.body, env)
        per_step.append(bx)

    def boxes(name: str, kind: str) -> tuple[np.ndarray, np.ndarray]:
        rank = len(shapes[name])
        arr = np.zeros((len(st), rank, 2), dtype=np.int64)
        valid = np.zeros(len(st), dtype=bool)
        for n, bx in enumerate(per_step):
            b = (bx.reads if kind == "r" else bx.writes).get(name)
            if b is not None:
                arr[n] = b
                valid[n] = True
        return arr, valid

    need: dict[str, tuple[int, ...]] = {}
    done: dict[str, tuple[int, ...]] = {}
    tokens: dict[str, int] = {}
    for name, it in inputs.items():
        lo, hi = _token_boxes(it)
        tokens[name] = it.num_tokens
        _, first = np.unique(lo, axis=0, return_index=True)
        is_first = np.zeros(len(lo), dtype=bool)
        is_first[first] = True
        arr, valid = boxes(name, "r")
        meets = _meets(arr, lo, hi) & valid[:, None] & is_first[None, :]
        last_needed = np.where(meets.any(axis=1), meets.shape[1] - np.argmax(meets[:, ::-1], axis=1), 0)
        need[name] = tuple(int(x) for x in np.maximum.accumulate(last_needed))
    for name, it in results.items():
        lo, hi = _token_boxes(it)
        tokens[name] = it.num_tokens
        arr, valid = boxes(name, "w")
        meets = _meets(arr, lo, hi) & valid[:, None]
        last_write = np.where(meets.any(axis=0), meets.shape[0] - 1 - np.argmax(meets[::-1], axis=0), 0)
        ready = np.maximum.accumulate(last_write)  # token j may leave after step ready[j]
        done[name] = tuple(int(x) for x in np.searchsorted(ready, np.arange(len(st)), side="right"))
    return StepTables(tuple(st), need, done, tokens)
