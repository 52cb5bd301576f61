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

What is defined step by step is computed for all steps of a top-level loop
at once: its body is walked once with the loop variable as the array of
every step's value (:func:`_vinterval`), and the tokens a box meets are a
box of the layout's iteration indices (:func:`_digit_ranges`), so no token
is tested against every step.  A weight streamed row by row gives thousands
of steps; walking the body once per step was most of a design's lowering.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..ir.nodes import Alloc, Assign, BinOp, CallKernel, Cast, Const, Decl, For, If, Kernel, Load, Ref, Return, \
    Select, Store, UnaryOp, Var, walk
from ..ir.memo import IdentityMemo
from ..sched.rewrite import substitute
from ..types import index
from .itensor import ITensor
from .packing import beats_of

MAX_STEPS = 1 << 18  # a top-level loop with more iterations than this is one step (a device head walks
# up to 256,512: Llama 3.2's at 32 codes a lane; 2^20 made exploring a decode layer 3x slower for the same design)

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


# ------------------------------------------------------------------ all steps of a statement at once
# The steps of one top-level loop walk the same statements with only the loop variable changing, so
# they are evaluated together: an interval is ``(lo, hi, known)`` of NumPy arrays with one entry per
# step (or scalars, broadcast), ``known`` False where :func:`interval` would give None (None itself:
# unknown at every step).  Entry ``s`` of every result is what the scalar functions give at step
# ``s`` (tests/dataflow/test_access_tables.py checks it against the step-by-step walk).
VInterval = tuple  # (lo, hi, known)


def _vinterval(e, env: dict[str, VInterval]) -> VInterval | None:
    """:func:`interval` at every step at once."""
    if isinstance(e, Const):
        if isinstance(e.value, bool) or not float(e.value).is_integer():
            return None
        v = int(e.value)
        return v, v, True
    if isinstance(e, Var):
        return env.get(e.name)
    if isinstance(e, Cast):
        return _vinterval(e.operand, env)
    if isinstance(e, UnaryOp) and e.op == "neg":
        x = _vinterval(e.operand, env)
        return None if x is None else (-x[1], -x[0], x[2])
    if isinstance(e, BinOp):
        a, b = _vinterval(e.lhs, env), _vinterval(e.rhs, env)
        if a is None or b is None:
            return None
        known = a[2] & b[2]
        if e.op == "add":
            return a[0] + b[0], a[1] + b[1], known
        if e.op == "sub":
            return a[0] - b[1], a[1] - b[0], known
        if e.op == "mul":
            p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
            return (np.minimum(np.minimum(p[0], p[1]), np.minimum(p[2], p[3])),
                    np.maximum(np.maximum(p[0], p[1]), np.maximum(p[2], p[3])), known)
        if e.op in ("floordiv", "mod"):
            const = (b[0] == b[1]) & (b[0] > 0)  # a known positive divisor; elsewhere unknown
            if not np.any(const):
                return None
            c = np.where(const, b[0], 1)
            known = known & const
            if e.op == "floordiv":
                return a[0] // c, a[1] // c, known
            same = a[0] // c == a[1] // c
            return np.where(same, a[0] % c, 0), np.where(same, a[1] % c, c - 1), known
        if e.op in ("min", "max"):
            f = np.minimum if e.op == "min" else np.maximum
            return f(a[0], b[0]), f(a[1], b[1]), known
        return None
    if isinstance(e, Select):
        a, b = _vinterval(e.then, env), _vinterval(e.orelse, env)
        if a is None or b is None:
            return None
        return np.minimum(a[0], b[0]), np.maximum(a[1], b[1]), a[2] & b[2]
    return None


def _vloop_range(s: For, env: dict[str, VInterval]) -> VInterval | None:
    """:func:`loop_range` at every step at once (unknown where the range is unknown or empty)."""
    lo, hi = _vinterval(s.start, env), _vinterval(s.stop, env)
    if lo is None or hi is None:
        return None
    first, last = (lo[0], hi[1] - 1) if s.step > 0 else (hi[0] + 1, lo[1])
    known = lo[2] & hi[2] & (last >= first)
    return (first, last, known) if np.any(known) else None


class _Boxes:
    """Bounding boxes of the reads and writes of ``n`` steps, per tensor of interest.

    A box is a list of ``[lo, hi]`` per dim, each an array of ``n`` (or a scalar, broadcast).
    Which tensors a statement touches does not depend on the step (both branches of an
    ``if`` count, a loop's body counts even when its range is empty), so a tensor is
    touched at all ``n`` steps or at none."""

    def __init__(self, shapes: dict[str, tuple[int, ...]]):
        self.shapes = shapes
        self.reads: dict[str, list[list]] = {}
        self.writes: dict[str, list[list]] = {}

    def touch(self, table, name: str, idx, env) -> None:
        shape = self.shapes.get(name)
        if shape is None:
            return
        box = [[0, n - 1] for n in shape]
        if idx is not None:
            for d, i in enumerate(idx):
                iv = _vinterval(i, env)
                if iv is not None:
                    top = shape[d] - 1
                    box[d] = [np.where(iv[2], np.maximum(0, iv[0]), 0), np.where(iv[2], np.minimum(top, iv[1]), top)]
        cur = table.get(name)
        if cur is None:
            table[name] = box
        else:
            for c, b in zip(cur, box):
                c[0], c[1] = np.minimum(c[0], b[0]), np.maximum(c[1], b[1])

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
            r = _vloop_range(s, env)
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
    """One step: statement ``stmt`` of :func:`step_body` (its iteration at ``value`` when it is a loop)."""

    stmt: int
    value: int | None


def _declared(body) -> set[str]:
    return {s.name for s in body if isinstance(s, (Decl, Alloc))}


def _step_body(k: Kernel) -> tuple:
    out: list = []
    for s in k.body:
        r = loop_range(s, {}) if isinstance(s, For) else None
        if r is not None and r[0] == r[1] and not (_declared(s.body) & _declared(k.body)):
            out += [substitute(b, s.var, Const(r[0], index)) for b in s.body]
        else:
            out.append(s)
    return tuple(out)


_STEP_BODY = IdentityMemo(_step_body, 512)


def step_body(k: Kernel) -> tuple:
    """The kernel's top-level statements as the steps see them: a top-level loop of one trip (a one-token
    kernel's row loop) is its body with the variable fixed, so the loops inside it are steps of their own
    (a one-token linear streams its weights over its reduction loop).  The HLS task runs this body."""
    return _STEP_BODY(k)


def _varies(loop: For, streams) -> bool:
    """Whether an access of a stream inside ``loop`` may move with its variable (an index naming it or a
    scalar computed inside the loop): if not, every iteration touches the same tokens."""
    local = {x.name for x in walk(loop) if isinstance(x, (Decl, Assign))} | {loop.var}
    for x in walk(loop):
        if isinstance(x, (Load, Store)) and x.name in streams:
            if any(isinstance(v, Var) and v.name in local for i in x.indices for v in walk(i)):
                return True
        elif isinstance(x, Ref) and x.name in streams:
            return True
    return False


def _runs(k: Kernel, streams=None) -> list[tuple[int, np.ndarray | None]]:
    """Per statement of :func:`step_body`: its index and its loop variable's value at each iteration (every
    top-level loop split into its iterations), or None for a statement that is one step.  With ``streams``
    (the streamed tensors' names) a loop whose iterations all touch the same tokens of them is one step."""
    out: list[tuple[int, np.ndarray | None]] = []
    for n, s in enumerate(step_body(k)):
        if isinstance(s, Return):
            continue
        r = loop_range(s, {}) if isinstance(s, For) else None
        if streams is not None and r is not None and not _varies(s, streams):
            r = None
        if isinstance(s, For) and r is not None and (r[1] - r[0]) // abs(s.step) + 1 <= MAX_STEPS:
            first = r[0] if s.step > 0 else r[1]
            count = (r[1] - r[0]) // abs(s.step) + 1
            out.append((n, first + np.arange(count, dtype=np.int64) * s.step))
        else:
            out.append((n, None))
    return out or [(0, None)]


def steps(k: Kernel) -> list[Step]:
    """Every step of ``k`` with every top-level loop of :func:`step_body` split into its iterations
    (:func:`step_tables` merges back the loops whose iterations move no token apart)."""
    return [st for n, vals in _runs(k) for st in ([Step(n, None)] if vals is None else [Step(n, int(v)) for v in vals])]


def pipelined(s) -> bool:
    """A loop Vitis runs as one pipeline (or unrolls): a step inside it may move at most one token a stream."""
    return isinstance(s, For) and ("pipeline" in s.attrs or "unroll" in s.attrs)


class StepSeq(tuple):
    """The steps of a task as segments ``(stmt, values or None)``: a split loop's iterations, or one step; a
    sequence of :class:`Step` made on demand (a streamed weight gives thousands of steps)."""

    def __new__(cls, segments):
        return super().__new__(cls, ((n, None if v is None else tuple(v.tolist())) for n, v in segments))

    def __len__(self) -> int:
        return sum(1 if v is None else len(v) for _, v in super().__iter__())

    def __iter__(self):
        for n, v in super().__iter__():
            if v is None:
                yield Step(n, None)
            else:
                yield from (Step(n, x) for x in v)

    def __getitem__(self, i):
        return tuple(self)[i]

    def __eq__(self, other) -> bool:
        return tuple(iter(self)) == tuple(other)

    def __hash__(self) -> int:
        return super().__hash__()

    @property
    def split(self) -> set[int]:
        return {n for n, v in super().__iter__() if v is not None}

    def runs(self):
        """``(stmt, steps)`` per segment, in step order, without making the steps."""
        return ((n, 1 if v is None else len(v)) for n, v in super().__iter__())


@dataclass(frozen=True)
class StepTables:
    """Per stream: ``need`` (inputs) or ``done`` (results) token counts at every step."""

    steps: tuple[Step, ...]
    need: dict[str, tuple[int, ...]]  # input -> tokens read before each step
    done: dict[str, tuple[int, ...]]  # result -> tokens written after each step
    tokens: dict[str, int]
    windows: frozenset = frozenset()  # inputs a one-token buffer serves (:func:`_one_token_window`)
    piped: frozenset = frozenset()  # windows whose every token a pipelined loop reads in one of its iterations

    @property
    def split(self) -> set[int]:
        """Statements of :func:`step_body` split into one step per iteration."""
        if isinstance(self.steps, StepSeq):
            return self.steps.split
        return {st.stmt for st in self.steps if st.value is not None}

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
        width = np.ones(n, dtype=np.int64)
        for table in (*reads.values(), *writes.values()):
            if table:
                np.maximum.at(width, *np.unique(np.array(table, dtype=np.int64), return_counts=True))
        base = np.concatenate([[0], np.cumsum(width)])

        def spread(table: tuple[int, ...], at_end: bool) -> tuple[int, ...]:
            """Each token's iteration: the ``r``-th token its step moves is the step's ``r``-th iteration (its
            last ones for results)."""
            if not table:
                return ()
            t = np.array(table, dtype=np.int64)
            order = np.argsort(t, kind="stable")  # tokens of one step in table order
            st = t[order]
            first = np.searchsorted(st, st, side="left")
            rank = np.empty_like(t)
            rank[order] = np.arange(len(t)) - first
            at = base[t] + rank
            if at_end:
                count = np.empty_like(t)
                count[order] = np.searchsorted(st, st, side="right") - first
                at += width[t] - count
            return tuple(at.tolist())

        return (int(base[n]), {k: spread(v, False) for k, v in reads.items()},
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


def _step_boxes(body, runs, shapes: dict[str, tuple[int, ...]]):
    """Per tensor of ``shapes``: its read and written boxes at every step of ``runs`` (:func:`_runs`), as
    ``(steps, rank, 2)`` arrays and ``(steps,)`` flags (does the step read / write it at all)."""
    n = sum(1 if vals is None else len(vals) for _, vals in runs)
    reads = {t: (np.zeros((n, len(s), 2), dtype=np.int64), np.zeros(n, dtype=bool)) for t, s in shapes.items()}
    writes = {t: (np.zeros((n, len(s), 2), dtype=np.int64), np.zeros(n, dtype=bool)) for t, s in shapes.items()}
    first = 0
    for idx, values in runs:
        last = first + (0 if values is None else len(values) - 1)
        stmt = body[idx]
        bx = _Boxes(shapes)
        if values is None:  # one step: the whole statement
            bx.stmt(stmt, {})
        else:  # the steps of one top-level loop, one iteration each
            bx.expr(stmt.start, {})
            bx.expr(stmt.stop, {})
            bx.stmts(stmt.body, {stmt.var: (values, values, True)})
        for table, out in ((bx.reads, reads), (bx.writes, writes)):
            for name, box in table.items():
                arr, valid = out[name]
                for d, (lo, hi) in enumerate(box):
                    arr[first:last + 1, d, 0] = lo
                    arr[first:last + 1, d, 1] = hi
                valid[first:last + 1] = True
        first = last + 1
    return reads, writes


def _digit_ranges(it: ITensor, box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per step and iteration dim of ``it``: the range ``[lo, hi]`` of that dim's index over the tokens whose
    tile meets the step's box (``box``: ``(steps, rank, 2)``); iteration dims no data dim uses are free.

    Tile ``j`` of data dim ``k`` covers ``[j * step, j * step + element - 1]``, so it meets ``[b0, b1]``
    exactly when ``ceil((b0 - element + 1) / step) <= j <= floor(b1 / step)``: the tokens meeting a box are
    a box of iteration indices."""
    n = box.shape[0]
    lo = np.zeros((n, len(it.trips)), dtype=np.int64)
    hi = np.tile(np.array(it.trips, dtype=np.int64) - 1, (n, 1))
    for k, d in enumerate(it.map):
        st, e = it.steps[d], it.element[k]
        lo[:, d] = np.maximum(lo[:, d], -((e - 1 - box[:, k, 0]) // st))
        hi[:, d] = np.minimum(hi[:, d], box[:, k, 1] // st)
    return lo, hi


def _strides(it: ITensor) -> np.ndarray:
    """Stream position of one step of each iteration dim (token order is lexicographic, outermost first)."""
    out = np.ones(len(it.trips), dtype=np.int64)
    for d in range(len(it.trips) - 2, -1, -1):
        out[d] = out[d + 1] * it.trips[d + 1]
    return out


def _groups(body, runs, need: dict, done: dict, beats: list[int]) -> list[tuple[int, int, int, np.ndarray | None]]:
    """The final steps as segments ``(first, last, stmt, values)`` of the fine steps: a loop stays split into
    its iterations (``values``) only where tokens move between them, and a pipelined loop only where each
    iteration moves at most one token of each stream (its reads and writes then sit inside the pipeline)
    and that costs no more than moving them outside it (``beats``: of a token of each stream, inputs then
    results): every iteration of a pipeline takes as long as its widest move, so a wide token moved in a few of
    its iterations would hold up every other; reads at its first iteration alone and writes at its last alone
    (a head split's whole row, a linear's input vector) move beside the loop (:func:`.tasks._once`) and count
    in neither test;
    any other loop is one step (``values`` None: its tokens read before it and written after it, earlier and
    later than needed, never the reverse)."""
    ins = [np.asarray(v, dtype=np.int64) for v in need.values()]
    outs = [np.asarray(v, dtype=np.int64) for v in done.values()]
    out, a = [], 0
    for idx, values in runs:
        b = a if values is None else a + len(values) - 1
        if values is not None:
            moves = [np.diff(np.concatenate(([t[a - 1] if a else 0], t[a:b + 1]))) for t in ins + outs]
            inside = any(m[1:].any() for m in moves[:len(ins)]) or any(m[:-1].any() for m in moves[len(ins):])
            # a split loop's reads at its first iteration alone and writes at its last alone move beside it
            # (tasks._once): they bound none of its iterations
            inner = [(w, m) for j, (w, m) in enumerate(zip(beats, moves))
                     if b == a or (m[1:] if j < len(ins) else m[:-1]).any()]
            narrow = all(m.max() <= 1 for _, m in inner)
            if narrow and pipelined(body[idx]):
                trips = b - a + 1
                widest = max((w for w, m in inner if m.any()), default=1)
                narrow = trips * widest <= sum(w * int(m.sum()) for w, m in inner) + trips
            if b > a and inside and (narrow or not pipelined(body[idx])):
                out.append((a, b, idx, values))
                a = b + 1
                continue
            if b == a and not (narrow or not pipelined(body[idx])):
                values = None  # one pipeline iteration moving several tokens of a stream: they move around it
        out.append((a, b, idx, values if values is not None and a == b else None))
        a = b + 1
    return out


def step_tables(k: Kernel, inputs: dict[str, ITensor], results: dict[str, ITensor], merge: bool = True) -> StepTables:
    """The tables of kernel ``k`` for its streamed ``inputs`` (param name -> layout) and ``results``
    (returned local name -> layout); ``merge=False`` keeps every loop split (:func:`steps`)."""
    body = step_body(k)
    runs = _runs(k, None if not merge else set(inputs) | set(results))
    n_steps = sum(1 if vals is None else len(vals) for _, vals in runs)
    shapes = {n: it.tensor_shape for n, it in {**inputs, **results}.items()}
    reads, writes = _step_boxes(body, runs, shapes)
    need: dict[str, tuple[int, ...]] = {}
    done: dict[str, tuple[int, ...]] = {}
    tokens: dict[str, int] = {}
    single: dict[str, np.ndarray] = {}  # per input and fine step: the one token the step reads (-1: none or more)
    for name, it in inputs.items():
        tokens[name] = it.num_tokens
        arr, valid = reads[name]
        lo, hi = _digit_ranges(it, arr)
        replay = [d for d in range(len(it.trips)) if d not in it.map]
        hi[:, replay] = 0  # a replayed token is never needed: only the first of each tile (index 0 there) counts
        meets = valid & (lo <= hi).all(axis=1)
        # the last token needed is the one with every index at the top of its range (positions grow with each)
        last_needed = np.where(meets, hi @ _strides(it) + 1, 0)
        need[name] = tuple(np.maximum.accumulate(last_needed).tolist())
        single[name] = np.where(meets & (lo == hi).all(axis=1), last_needed - 1, np.where(meets, -2, -1))
    for name, it in results.items():
        tokens[name] = it.num_tokens
        arr, valid = writes[name]
        lo, hi = _digit_ranges(it, arr)
        last_write = np.full(it.trips, -1, dtype=np.int64)
        hits = np.flatnonzero(valid & (lo <= hi).all(axis=1))
        if len(hits):  # of a run of steps writing the same tokens only the last counts
            box = np.concatenate([lo[hits], hi[hits]], axis=1)
            hits = hits[np.append((box[1:] != box[:-1]).any(axis=1), True)]
        for s in hits:  # in step order: the last step to write a token wins
            last_write[tuple(slice(a, b + 1) for a, b in zip(lo[s], hi[s]))] = s
        ready = np.maximum.accumulate(np.maximum(last_write.reshape(-1), 0))  # token j may leave after step ready[j]
        done[name] = tuple(np.searchsorted(ready, np.arange(n_steps), side="right").tolist())
    beats = [beats_of(it).beats for it in (*inputs.values(), *results.values())]
    segs = _groups(body, runs, need, done, beats) if merge else [
        (a, a + (0 if v is None else len(v) - 1), n, v) for (n, v), a in zip(runs, np.cumsum(
            [0] + [1 if v is None else len(v) for _, v in runs])[:-1].tolist())]
    group = np.empty(n_steps, dtype=np.int64)  # per fine step: the final step it belongs to
    lasts, f = [], 0  # per final step: its last fine step
    for a, b, _, v in segs:
        if v is None:
            group[a:b + 1] = f
            lasts.append(np.array([b], dtype=np.int64))
            f += 1
        else:
            group[a:b + 1] = np.arange(f, f + b - a + 1)
            lasts.append(np.arange(a, b + 1, dtype=np.int64))
            f += b - a + 1
    last = np.concatenate(lasts)
    final = StepSeq((n, v) for _, _, n, v in segs)
    windows = frozenset(name for name, it in inputs.items() if _one_token_window(it, single[name], need[name], last, group))
    need = {n: tuple(np.asarray(v)[last].tolist()) for n, v in need.items()}
    inpipe = np.repeat([v is not None and pipelined(body[n]) for _, _, n, v in segs],  # per final step
                       [1 if v is None else len(v) for _, _, _, v in segs]).astype(bool)
    piped = frozenset(n for n in windows if inpipe[np.flatnonzero(np.diff(need[n], prepend=0))].all())
    return StepTables(final, need, {n: tuple(np.asarray(v)[last].tolist()) for n, v in done.items()}, tokens,
                      windows, piped)


def _one_token_window(it: ITensor, single: np.ndarray, need: tuple[int, ...], last: np.ndarray,
                      group: np.ndarray) -> bool:
    """Every step reads from one token of ``it`` only, the latest it has read: a one-tile buffer serves it."""
    if it.replays() or any(it.steps[d] != e for d, e in zip(it.map, it.element)):
        return False  # replays or overlapping tiles: a token's data is not at a fixed place of one tile
    if (single == -2).any():
        return False
    latest = np.asarray(need, dtype=np.int64)[last][group] - 1  # per fine step: the last token its final step reads
    reading = single >= 0
    return bool((single[reading] == latest[reading]).all())
