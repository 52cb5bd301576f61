"""A token-level simulator of dataflow tasks connected by bounded FIFOs.

Timing model (the paper's, at token granularity):

* A task runs ``iters`` iterations; iteration ``k`` issues at ``s_k >= s_{k-1} +
  II`` (``s_0 >= start``).  It reads its input tokens at ``s_k`` and its output
  tokens land ``lat`` cycles later.  The first ``fill`` iterations write
  nothing and the last ``drain`` read nothing (a layout converter that buffers
  a whole tensor has ``fill = drain = tokens``).
* Token ``j`` of an edge with ``T`` tokens is written by producer iteration
  ``fill_p + ceil((j + 1) * (iters_p - fill_p) / T) - 1`` (the last iteration
  that contributes to it: an edge with fewer tokens than iterations, such as a
  whole tensor sent as one token, is complete only when its share of the
  iterations is done) and read by consumer iteration
  ``floor(j * (iters_c - drain_c) / T)`` (the first iteration that needs it).
* An edge may instead give its schedule explicitly: ``Edge.writes[j]`` is the
  producer iteration that writes token ``j`` and ``Edge.reads[j]`` the
  consumer iteration that reads it (a kernel task's schedule comes from its
  loop nest: :mod:`.access`).
* A write at cycle ``t`` needs a free slot: the token ``depth`` places earlier
  must have been read before ``t``; a read may take a token written in the same
  cycle.  A full FIFO stalls its producer, an empty one its consumer.
  ``SimResult.stall`` counts both; ``SimResult.backpressure`` only the cycles
  an iteration waited for space in a full FIFO (what FIFO sizing must avoid:
  a consumer waiting for a slower producer is not a sizing problem).

The simulation resolves each iteration's issue time once all it depends on is
known; when nothing can make progress while iterations remain, the blocked
tasks wait on each other and :class:`DeadlockError` names them.

``simulate(..., trace=True)`` also keeps a :class:`Trace` (what the timeline
picture of :mod:`streamdsl.viz` draws): each task's busy runs and the waits
between them, split by cause, and each FIFO's occupancy over time.  It is
derived after the run from the issue and token times, so the default run
does no extra work.
"""
from __future__ import annotations

import bisect
import gc
from collections import OrderedDict, deque
from dataclasses import dataclass, field

import numpy as np

from ..errors import StreamDSLError
from ..ir.memo import IdentityMemo


class DeadlockError(StreamDSLError):
    kind = "deadlock"


@dataclass(frozen=True)
class Task:
    name: str
    iters: int
    ii: int = 1
    lat: int = 1
    fill: int = 0  # leading iterations that write nothing
    drain: int = 0  # trailing iterations that read nothing

    @property
    def initial_delay(self) -> int:
        """Cycles from the task's start to its first output token (unstalled)."""
        return self.fill * self.ii + self.lat

    @property
    def latency(self) -> int:
        """Cycles from the task's start to its last output token (unstalled)."""
        return (self.iters - 1) * self.ii + self.lat


@dataclass(frozen=True)
class Edge:
    name: str
    src: str
    dst: str
    tokens: int
    writes: tuple[int, ...] | None = None  # producer iteration of each token (None: proportional)
    reads: tuple[int, ...] | None = None  # consumer iteration of each token (None: proportional)

    def write_iter(self, src: "Task", j: int) -> int:
        return self.writes[j] if self.writes is not None else _writer_iter(src, j, self.tokens)

    def read_iter(self, dst: "Task", j: int) -> int:
        return self.reads[j] if self.reads is not None else _reader_iter(dst, j, self.tokens)

    def delay(self, src: "Task", dst: "Task") -> int:
        """Cycles from the producer's start to the consumer's start that let token 0 arrive in time."""
        return self.write_iter(src, 0) * src.ii + src.lat - self.read_iter(dst, 0) * dst.ii


@dataclass(frozen=True)
class TaskTrace:
    """When one task worked and why it waited: spans are ``(start cycle, length)`` rows, in time order.

    * ``issues``: the issue cycle of every iteration;
    * ``busy``: runs of back-to-back iterations (iteration ``k`` is busy for
      ``[s_k, s_k + II)``, the last one for ``[s_k, s_k + lat)``: the task is done when its last result is
      out); the lengths sum to ``SimResult.busy``, the task's unstalled latency, so a task's start, busy and
      stall add up to when it finishes, within the run;
    * ``starved``: waits between iterations for an input token (an empty FIFO);
    * ``blocked``: waits for a free slot in a full output FIFO.  The waits
      between iterations (``starved`` plus the ``blocked`` spans from the
      first issue on) sum to ``SimResult.stall``; all ``blocked`` spans,
      including one before the first iteration (a task whose inputs are there
      but whose first write finds no slot), sum to ``SimResult.backpressure``.
    """

    issues: np.ndarray
    busy: np.ndarray
    starved: np.ndarray
    blocked: np.ndarray


@dataclass(frozen=True)
class FifoTrace:
    """Occupancy of one FIFO as a step function: ``occupancy[i]`` tokens from ``times[i]`` to ``times[i + 1]``.

    Before ``times[0]`` the FIFO is empty.  A token counts from the cycle it is
    written to the cycle it is read (inclusive: a write lands before a
    same-cycle read leaves), so the largest value is ``SimResult.peak``.
    ``depth`` is the FIFO's bound (None: unbounded)."""

    times: np.ndarray
    occupancy: np.ndarray
    depth: int | None


@dataclass(frozen=True)
class Trace:
    tasks: dict[str, TaskTrace]
    fifos: dict[str, FifoTrace]


@dataclass
class SimResult:
    cycles: int
    busy: dict[str, int]
    stall: dict[str, int]
    peak: dict[str, int]
    starts: dict[str, int] = field(default_factory=dict)
    backpressure: dict[str, int] = field(default_factory=dict)
    trace: Trace | None = None  # with simulate(..., trace=True)

    def __str__(self) -> str:
        lines = [f"token simulation: {self.cycles} cycles"]
        for t in self.busy:
            lines.append(f"  task {t:<14} start {self.starts.get(t, 0):>7}  busy {self.busy[t]:>8}  stall {self.stall[t]:>8}"
                         f"  (full FIFO {self.backpressure.get(t, 0)})")
        for e, p in self.peak.items():
            lines.append(f"  fifo {e:<14} peak {p}")
        return "\n".join(lines)


def _writer_iter(task: Task, j: int, tokens: int) -> int:
    return task.fill + -(-((j + 1) * (task.iters - task.fill)) // tokens) - 1


def _reader_iter(task: Task, j: int, tokens: int) -> int:
    return (j * (task.iters - task.drain)) // tokens


def _peak_by_events(wt: list, rt: list) -> int:
    events = [(w, 0) for w in wt] + [(r, 1) for r in rt]
    events.sort(key=lambda x: (x[0], x[1]))  # a write lands before a same-cycle read leaves
    occ = best = 0
    cur_t = None
    pending_reads = 0
    for time, kind in events:
        if time != cur_t:
            occ -= pending_reads
            pending_reads = 0
            cur_t = time
        if kind == 0:
            occ += 1
            best = max(best, occ)
        else:
            pending_reads += 1
    return best


VECTOR_RUN = 32  # iterations a task can issue in a row before they are computed with NumPy instead of one by one
_NEG = -(1 << 62)  # "no constraint" in the NumPy runs


def _schedules(e: Edge, src: Task, dst: Task) -> tuple[np.ndarray, np.ndarray]:
    """(reader iteration, writer iteration) of every token of ``e`` (read-only arrays)."""
    return _SCHEDULES(e, src.iters, src.fill, dst.iters, dst.drain)


def _schedules_of(e: Edge, src_iters: int, src_fill: int, dst_iters: int, dst_drain: int):
    j = np.arange(e.tokens, dtype=np.int64)
    rd = (np.asarray(e.reads, dtype=np.int64) if e.reads is not None
          else (j * (dst_iters - dst_drain)) // max(1, e.tokens))
    wr = (np.asarray(e.writes, dtype=np.int64) if e.writes is not None
          else src_fill - ((-(j + 1) * (src_iters - src_fill)) // max(1, e.tokens)) - 1)
    rd, wr = rd.reshape(-1), wr.reshape(-1)
    rd.flags.writeable = wr.flags.writeable = False
    return rd, wr


# an edge's explicit schedules are tuples of up to a few 100k ints: their arrays made once per edge object (FIFO
# sizing and the model of a design simulate the same edges several times)
_SCHEDULES = IdentityMemo(_schedules_of, 128)


def _segment_max(acc: np.ndarray, at: np.ndarray, values: np.ndarray) -> None:
    """``acc[at[i]] = max(acc[at[i]], values[i])`` for ``at`` sorted."""
    first = np.flatnonzero(np.concatenate([[True], at[1:] != at[:-1]]))
    pos = at[first]
    acc[pos] = np.maximum(acc[pos], np.maximum.reduceat(values, first))


def simulate(tasks: list[Task], edges: list[Edge], depths: dict[str, int | None],
             starts: dict[str, int] | None = None, trace: bool = False) -> SimResult:
    """Run the model; ``depths[e] = None`` is an unbounded FIFO; ``trace=True`` keeps a :class:`Trace`.

    A run without a trace is remembered by value (tasks, edges, depths and starts are all it reads): FIFO
    sizing and the model of a design run the same timing again (the explorer's evaluation, then the chosen
    design pinned at the same depths).  Each caller gets its own copy of the result's tables."""
    key = None
    if not trace:
        key = (tuple(tasks), tuple(edges), tuple(depths.items()), tuple((starts or {}).items()))
        hit = _RUNS.get(key)
        if hit is not None:
            _RUNS.move_to_end(key)
            return _copy(hit)
    res = None if trace or not SWEEPS else _swept(tasks, edges, depths, starts or {})
    if res is not None:
        if key is not None:
            _RUNS[key] = _copy(res)
            if len(_RUNS) > 64:
                _RUNS.popitem(last=False)
        return res
    collecting = gc.isenabled()
    gc.disable()  # a run makes millions of small tuples, none in a cycle: collector passes were half its time
    try:
        res = _Run(tasks, edges, depths, starts or {}).result(trace)
    finally:
        if collecting:
            gc.enable()
    if key is not None:
        _RUNS[key] = _copy(res)
        if len(_RUNS) > 64:
            _RUNS.popitem(last=False)
    return res


_RUNS: "OrderedDict[tuple, SimResult]" = OrderedDict()  # the runs without a trace, least recently used first


SWEEPS = 64  # whole-array passes the sweep solver makes before it leaves the run to the event simulation (0: no sweeps)


def _swept(tasks: list[Task], edges: list[Edge], depths: dict, starts: dict) -> SimResult | None:
    """The run computed a whole task at a time, or None when the event simulation (:class:`_Run`) must do it.

    The issue times are the least fixpoint of monotone max-plus recurrences (see :class:`_Run`): each task's
    ``s_k = max(s_{k-1} + II, latest input arrival, latest free slot)``, a running maximum over whole arrays once
    the other tasks' times are fixed.  Starting from the run with unbounded FIFOs (a lower bound: fewer
    constraints), passes over the tasks, alternately in and against topological order, only raise times and
    never past the fixpoint; a pass that changes nothing has reached it.  When the event simulation can resolve
    those times in order (:func:`_causal`), they are its integers.  Left to the event simulation (which also
    names a deadlock): a cycle of tasks, a token that is never written or never read, a FIFO of depth < 1, no
    fixpoint within :data:`SWEEPS` passes, or a fixpoint :func:`_causal` does not certify."""
    by = {t.name: t for t in tasks}
    if len(by) != len(tasks) or any(t.iters < 1 or t.ii < 0 for t in tasks):
        return None
    ins: dict[str, list] = {t.name: [] for t in tasks}
    outs: dict[str, list] = {t.name: [] for t in tasks}
    for e in edges:
        src, dst = by.get(e.src), by.get(e.dst)
        if src is None or dst is None or src is dst:
            return None
        d = depths.get(e.name)
        if d is not None and d < 1:
            return None
        rd, wr = _schedules(e, src, dst)
        if len(rd) != e.tokens or len(wr) != e.tokens:
            return None
        if e.tokens and (rd.min() < 0 or rd.max() >= dst.iters or wr.min() < 0 or wr.max() >= src.iters):
            return None
        ins[e.dst].append((e, rd, wr, _sorter(rd)))
        if d is not None and e.tokens > d:
            outs[e.src].append((e, rd[:-d], wr[d:], _sorter(wr[d:])))
    order = _topological(tasks, edges)
    if order is None:
        return None
    s: dict[str, np.ndarray] = {}

    def arrivals(t: Task) -> np.ndarray:
        arrive = np.full(t.iters, _NEG, dtype=np.int64)
        for e, rd, wr, (perm, at) in ins[t.name]:
            if len(rd):
                w = s[e.src][wr] + by[e.src].lat
                _segment_max(arrive, at, w if perm is None else w[perm])
        return arrive

    def issue(t: Task, c: np.ndarray) -> np.ndarray:
        step = np.arange(t.iters, dtype=np.int64) * t.ii
        return np.maximum(starts.get(t.name, 0), np.maximum.accumulate(c - step)) + step

    arrive = {}
    for t in order:  # unbounded: each task once its producers are known
        arrive[t.name] = arrivals(t)
        s[t.name] = issue(t, arrive[t.name])
    # a task's times move only when a task it reads moved: its producers, and its consumers over bounded FIFOs
    readers: dict[str, set] = {t.name: set() for t in tasks}
    for t in tasks:
        for e, *_ in ins[t.name]:
            readers[e.src].add(t.name)
        for e, *_ in outs[t.name]:
            readers[e.dst].add(t.name)
    dirty = {t.name for t in tasks if ins[t.name] or outs[t.name]}
    for sweep in range(SWEEPS if any(outs.values()) else 0):
        changed = False
        for t in (order if sweep % 2 else order[::-1]):  # against the order first: back-pressure flows upstream
            if t.name not in dirty:
                continue
            dirty.discard(t.name)
            arrive[t.name] = c = arrivals(t)
            if outs[t.name]:
                c = c.copy()
                for e, rd, wr, (perm, at) in outs[t.name]:
                    free = s[e.dst][rd] + (1 - t.lat)  # token j - d read: token j may land in its slot
                    _segment_max(c, at, free if perm is None else free[perm])
            new = issue(t, c)
            if not np.array_equal(new, s[t.name]):
                s[t.name] = new
                changed = True
                dirty |= readers[t.name]
        if not changed:
            break
    else:
        if any(outs.values()):
            return None
    if any(outs.values()) and not _causal(order, ins, outs, s):
        return None
    busy = {t.name: t.latency for t in tasks}
    stall, waited = {}, {}
    for t in tasks:
        x = s[t.name]
        stall[t.name] = int(np.maximum(0, np.diff(x) - t.ii).sum()) if len(x) > 1 else 0
        prev = np.concatenate([[starts.get(t.name, 0)], x[:-1] + t.ii])
        waited[t.name] = int((x - np.maximum(prev, arrive[t.name])).sum())
    peak = {}
    for e in edges:
        rd, wr = _schedules(e, by[e.src], by[e.dst])  # remembered from above
        w = np.sort(s[e.src][wr] + by[e.src].lat)
        r = np.sort(s[e.dst][rd])
        peak[e.name] = int((np.arange(1, len(w) + 1) - np.searchsorted(r, w, "left")).max()) if len(w) else 0
    end = max(int(s[t.name][-1]) + t.lat for t in tasks) if tasks else 0
    return SimResult(end, busy, stall, peak, {t.name: int(s[t.name][0]) for t in tasks}, waited)


def _causal(order: list[Task], ins: dict, outs: dict, s: dict) -> bool:
    """Do the times ``s`` (a fixpoint) come in an order the event simulation can resolve them in?

    The event simulation issues an iteration once the times it depends on are known: the write of each token it
    reads, and the read of each token whose FIFO slot one of its writes reuses.  Those dependencies may form a
    cycle that the times alone satisfy (a write landing ``lat`` after its issue may reuse a slot read later than
    the issue): the event simulation then deadlocks where a fixpoint exists.  Here a certificate that they form
    none: offsets ``o`` per task (difference constraints, Bellman-Ford) such that ``(s + o[task], topological
    rank, iteration)`` rises strictly along every dependency: a token's write to its read (``o_p - o_c`` at most
    the least gap from write issue to read), a read to the write that reuses its slot (``o_p - o_c`` above the
    largest gap from that write's issue to the read), an iteration to the next.  Without one: False (the event
    simulation decides)."""
    limits = []  # (u, v, w): o[v] <= o[u] + w
    for t in order:
        for e, rd, wr, _ in ins[t.name]:
            if len(rd):
                limits.append((e.dst, e.src, int((s[e.dst][rd] - s[e.src][wr]).min())))
        for e, rd, wr, _ in outs[t.name]:
            limits.append((e.src, e.dst, -1 - int((s[e.dst][rd] - s[e.src][wr]).max())))
    o = {t.name: 0 for t in order}
    for _ in range(len(order) + 1):
        moved = False
        for u, v, w in limits:
            if o[u] + w < o[v]:
                o[v] = o[u] + w
                moved = True
        if not moved:
            return True
    return False


def _sorter(at: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """(the stable order that sorts ``at``, or None when it is sorted; ``at`` sorted) for :func:`_segment_max`."""
    if len(at) < 2 or not np.any(at[1:] < at[:-1]):
        return None, at
    perm = np.argsort(at, kind="stable")
    return perm, at[perm]


def _topological(tasks: list[Task], edges: list[Edge]) -> list[Task] | None:
    """``tasks`` with every producer before its consumers (Kahn's, in the given order), or None on a cycle."""
    by = {t.name: t for t in tasks}
    need = {t.name: 0 for t in tasks}
    after: dict[str, list[str]] = {t.name: [] for t in tasks}
    for e in edges:
        need[e.dst] += 1
        after[e.src].append(e.dst)
    ready = deque(t.name for t in tasks if not need[t.name])
    out = []
    while ready:
        n = ready.popleft()
        out.append(by[n])
        for m in after[n]:
            need[m] -= 1
            if not need[m]:
                ready.append(m)
    return out if len(out) == len(tasks) else None


def _copy(r: SimResult) -> SimResult:
    return SimResult(r.cycles, dict(r.busy), dict(r.stall), dict(r.peak), dict(r.starts), dict(r.backpressure))


class _Run:
    """One simulation.  Token times live in per-edge lists (``None``: not yet known).

    A task runs as far as it can whenever a neighbour has moved the value it
    was blocked on; its iterations issue one by one (:meth:`_step`) or, where
    every token they move is known in advance and the run is long, all at once
    (:meth:`_vector`): with ``c_k`` the latest of iteration ``k``'s input
    arrivals and free slots, ``s_k = max(s_{k-1} + II, c_k)`` is ``k * II +`` a
    running maximum of ``c_k - k * II``.  Both give the same integers."""

    def __init__(self, tasks, edges, depths, starts):
        self.tasks, self.edges, self.depths, self.starts = tasks, edges, depths, dict(starts)
        self.by = {t.name: t for t in tasks}
        self.ins = {t.name: [] for t in tasks}
        self.outs = {t.name: [] for t in tasks}
        for e in edges:
            self.outs[e.src].append(e)
            self.ins[e.dst].append(e)
        self.wtime = {e.name: [None] * e.tokens for e in edges}
        self.rtime = {e.name: [None] * e.tokens for e in edges}
        self.sched = {e.name: _schedules(e, self.by[e.src], self.by[e.dst]) for e in edges}
        self.known_w = {e.name: 0 for e in edges}  # tokens 0 .. known_w - 1 have a write time
        self.known_r = {e.name: 0 for e in edges}  # and 0 .. known_r - 1 a read time
        self._takes: dict[str, list] = {}
        self._puts: dict[str, list] = {}
        self.fast = {t.name: self._fast(t) for t in tasks}

    # ------------------------------------------------------------- per-iteration token lists
    def takes(self, name: str) -> list:
        """Per iteration of ``name``: the tokens it reads, as (write times, read times, token)."""
        if name not in self._takes:
            tk: list = [()] * self.by[name].iters  # an iteration that moves no token keeps the shared empty tuple
            nr = len(tk)
            for e in self.ins[name]:
                wt, rt = self.wtime[e.name], self.rtime[e.name]
                for j, k in enumerate(self.sched[e.name][0].tolist()):  # a token outside the iterations is never read
                    if 0 <= k < nr:
                        if tk[k]:
                            tk[k].append((wt, rt, j))
                        else:
                            tk[k] = [(wt, rt, j)]
            self._takes[name] = tk
        return self._takes[name]

    def puts(self, name: str) -> list:
        """Per iteration: the tokens it writes, as (write times, read times, token, token whose slot it reuses or -1)."""
        if name not in self._puts:
            pt: list = [()] * self.by[name].iters
            nw = len(pt)
            for e in self.outs[name]:
                wt, rt, d = self.wtime[e.name], self.rtime[e.name], self.depths.get(e.name)
                for j, k in enumerate(self.sched[e.name][1].tolist()):
                    if 0 <= k < nw:
                        item = (wt, rt, j, j - d if d is not None and j >= d else -1)
                        if pt[k]:
                            pt[k].append(item)
                        else:
                            pt[k] = [item]
            self._puts[name] = pt
        return self._puts[name]

    def _fast(self, t: Task):
        """The tables :meth:`_vector` needs, or None when ``t``'s tokens do not move in stream order
        (each edge's tokens must be read / written by non-decreasing iterations from 0 on)."""
        if t.iters < VECTOR_RUN or any(e.src == e.dst for e in self.ins[t.name]):
            return None
        ks = np.arange(t.iters, dtype=np.int64)
        sides = []
        for edges, which in ((self.ins[t.name], 0), (self.outs[t.name], 1)):
            side = []
            for e in edges:
                at = self.sched[e.name][which]
                if len(at) and (at[0] < 0 or np.any(at[1:] < at[:-1])):
                    return None
                upto = np.searchsorted(at, ks, side="right").tolist()  # tokens moved by iterations 0..k
                side.append((e.name, at, upto, None if which == 0 else self.depths.get(e.name)))
            sides.append(side)
        # what limits a run: a token not yet written (inputs), a slot not yet read (bounded outputs)
        bounds = [(upto, self.known_w, name, 0) for name, _, upto, _ in sides[0]]
        bounds += [(upto, self.known_r, name, d) for name, _, upto, d in sides[1] if d is not None]
        return sides[0], sides[1], bounds

    # ------------------------------------------------------------------- running a task
    def _vector(self, t: Task, k0: int, iss: list) -> tuple[int, int]:
        """Issue the iterations from ``k0`` whose tokens and slots are all known, if there are many."""
        ins, outs, bounds = self.fast[t.name]
        k1, enough = t.iters, k0 + VECTOR_RUN
        for n, (upto, known, name, extra) in enumerate(bounds):  # the first iteration moving an unknown value
            k1 = min(k1, bisect.bisect_right(upto, known[name] + extra, k0))
            if k1 < enough:
                if n:  # check the edge that limited this run first next time: runs are tried often and fail fast
                    bounds.insert(0, bounds.pop(n))
                return k0, 0
        n = k1 - k0
        if n < VECTOR_RUN:
            return k0, 0
        arrive, space = np.full(n, _NEG, dtype=np.int64), np.full(n, _NEG, dtype=np.int64)
        moved = []
        for name, at, upto, _ in ins:
            a, b = (upto[k0 - 1] if k0 else 0), upto[k1 - 1]
            if b > a:
                it = at[a:b] - k0
                _segment_max(arrive, it, np.array(self.wtime[name][a:b], dtype=np.int64))
                moved.append((self.rtime[name], a, b, it, 0))
        for name, at, upto, d in outs:
            a, b = (upto[k0 - 1] if k0 else 0), upto[k1 - 1]
            if b > a:
                it = at[a:b] - k0
                if d is not None and b > max(a, d):
                    j0 = max(a, d)
                    free = np.array(self.rtime[name][j0 - d:b - d], dtype=np.int64) + (1 - t.lat)
                    _segment_max(space, it[j0 - a:], free)
                moved.append((self.wtime[name], a, b, it, t.lat))
        earliest = self.starts.get(t.name, 0) if k0 == 0 else iss[-1] + t.ii
        step = np.arange(n, dtype=np.int64) * t.ii
        s = np.maximum(earliest, np.maximum.accumulate(np.maximum(arrive, space) - step)) + step
        prev = np.concatenate([[earliest], s[:-1] + t.ii])
        lost = int((s - np.maximum(prev, arrive)).sum())  # inputs present: anything later is back-pressure
        for times, a, b, it, lat in moved:
            times[a:b] = (s[it] + lat).tolist()
        iss.extend(s.tolist())
        return k1, lost

    def _step(self, t: Task, k: int, iss: list):
        """Issue iterations one by one from ``k``; returns (next iteration, cycles lost, (list, index) blocked on)."""
        tk, pt, ii, lat = self._takes.get(t.name), self._puts.get(t.name), t.ii, t.lat
        if tk is None or pt is None:
            tk, pt = self.takes(t.name), self.puts(t.name)
        lost = 0
        while k < t.iters:
            earliest = self.starts.get(t.name, 0) if k == 0 else iss[-1] + ii
            for wt, _, j in tk[k]:
                w = wt[j]
                if w is None:
                    return k, lost, (wt, j)
                if w > earliest:
                    earliest = w
            ready = earliest  # inputs present; anything later is back-pressure
            for _, rt, _, jd in pt[k]:
                if jd >= 0:
                    r = rt[jd]
                    if r is None:
                        return k, lost, (rt, jd)
                    if r + 1 - lat > earliest:
                        earliest = r + 1 - lat
            iss.append(earliest)
            lost += earliest - ready
            for _, rt, j in tk[k]:
                rt[j] = earliest
            done = earliest + lat
            for wt, _, j, _ in pt[k]:
                wt[j] = done
            k += 1
        return k, lost, None

    def run(self) -> None:
        self.issue: dict[str, list[int]] = {t.name: [] for t in self.tasks}
        self.waited: dict[str, int] = {t.name: 0 for t in self.tasks}  # cycles lost to full FIFOs
        blocked: dict[str, tuple | None] = {t.name: None for t in self.tasks}  # the value a task waits for
        # Issue times are the least fixpoint of their max-plus recurrences, so any order of
        # evaluation gives the same schedule: run each task as far as it can go, and retry a
        # task only once a neighbour has moved the value it waits for.
        wake = {t.name: list(dict.fromkeys([self.by[e.src] for e in self.ins[t.name]] +
                                           [self.by[e.dst] for e in self.outs[t.name]])) for t in self.tasks}
        # only a task that runs vectors reads how much of its edges is known
        track_w = {t.name: [e.name for e in self.outs[t.name] if self.fast[e.dst] is not None] for t in self.tasks}
        track_r = {t.name: [e.name for e in self.ins[t.name] if self.fast[e.src] is not None] for t in self.tasks}
        queue = deque(self.tasks)
        queued = {t.name for t in self.tasks}
        while queue:
            t = queue.popleft()
            name = t.name
            queued.discard(name)
            iss = self.issue[name]
            k0 = k = len(iss)
            lost = 0
            if self.fast[name] is not None and t.iters - k >= VECTOR_RUN:
                k, lost = self._vector(t, k, iss)
            k, more, blocked[name] = self._step(t, k, iss)
            if k == k0:
                continue
            self.waited[name] += lost + more
            for e in track_w[name]:
                self.known_w[e] = _known(self.wtime[e], self.known_w[e])
            for e in track_r[name]:
                self.known_r[e] = _known(self.rtime[e], self.known_r[e])
            for u in wake[name]:
                b = blocked[u.name]
                if u.name not in queued and len(self.issue[u.name]) < u.iters and (b is None or b[0][b[1]] is not None):
                    queued.add(u.name)
                    queue.append(u)

    # ------------------------------------------------------------------------ results
    def result(self, trace: bool) -> SimResult:
        self.run()
        tasks, issue = self.tasks, self.issue
        remaining = sum(t.iters - len(issue[t.name]) for t in tasks)
        if remaining:
            raise self._deadlock()
        busy = {t.name: t.latency for t in tasks}  # its iterations' II each, the last one's latency: within the run
        stall = {}
        for t in tasks:
            s = issue[t.name]
            stall[t.name] = int(np.maximum(0, np.diff(np.array(s, dtype=np.int64)) - t.ii).sum()) if len(s) > 1 else 0
        peak = {}
        for e in self.edges:
            # a write lands before a same-cycle read leaves: the FIFO holds, right after the
            # i-th write (in time order) at cycle w, i + 1 tokens minus those read before w
            wt, rt = self.wtime[e.name], self.rtime[e.name]
            if None in wt or None in rt:  # tokens never moved: count them by events
                peak[e.name] = _peak_by_events(wt, rt)
                continue
            w = np.sort(np.array(wt, dtype=np.int64))
            r = np.sort(np.array(rt, dtype=np.int64))
            peak[e.name] = int((np.arange(1, len(w) + 1) - np.searchsorted(r, w, "left")).max()) if len(w) else 0
        end = max((issue[t.name][-1] + t.lat for t in tasks if issue[t.name]), default=0)
        res = SimResult(end, busy, stall, peak, {t.name: (issue[t.name][0] if issue[t.name] else 0) for t in tasks},
                        self.waited)
        if trace:
            res.trace = Trace({t.name: _task_trace(t, issue[t.name], self.takes(t.name), self.starts.get(t.name, 0))
                               for t in tasks},
                              {e.name: _fifo_trace(self.wtime[e.name], self.rtime[e.name], self.depths.get(e.name))
                               for e in self.edges})
        return res

    def _deadlock(self) -> DeadlockError:
        blocked = []
        for t in self.tasks:
            k = len(self.issue[t.name])
            if k < t.iters:
                why = []
                for e in self.ins[t.name]:
                    wt = self.wtime[e.name]
                    if any(w is wt and w[j] is None for w, _, j in self.takes(t.name)[k]):
                        why.append(f"waits for a token on '{e.name}' (empty)")
                for e in self.outs[t.name]:
                    d = self.depths.get(e.name)
                    rt = self.rtime[e.name]
                    if d is not None and any(r is rt and jd >= 0 and r[jd] is None for _, r, _, jd in self.puts(t.name)[k]):
                        why.append(f"waits for space on '{e.name}' (full at depth {d})")
                blocked.append(f"{t.name} (iteration {k}) {' and '.join(why)}")
        return DeadlockError("the dataflow deadlocks: " + "; ".join(blocked),
                             hint="deepen the FIFOs named 'full', or let g.size_fifos() compute depths")


def _known(times: list, n: int) -> int:
    """Length of the prefix of ``times`` that is known, given that the first ``n`` are."""
    try:
        return times.index(None, n)
    except ValueError:
        return len(times)


def _spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    keep = lengths > 0
    return np.stack([starts[keep], lengths[keep]], axis=1).astype(np.int64).reshape(-1, 2)


def _task_trace(t: Task, issues: list[int], takes: list, start: int) -> TaskTrace:
    """Busy runs and waits of one task, from its issue times and the arrival of its input tokens."""
    s = np.array(issues, dtype=np.int64)
    n = len(s)
    earliest = np.empty(n, dtype=np.int64)  # when the iteration could issue, inputs and space aside
    if n:
        earliest[0] = start
        earliest[1:] = s[:-1] + t.ii
    arrived = np.array([max((wt[j] for wt, _, j in takes[k]), default=0) for k in range(n)], dtype=np.int64)
    ready = np.maximum(earliest, arrived)  # inputs present: any later issue waited for a free slot
    gaps = s[1:] - earliest[1:]
    first = np.flatnonzero(gaps > 0) + 1  # iterations that start a new busy run
    run_start = np.concatenate([[0], first]) if n else np.zeros(0, dtype=np.int64)
    run_end = np.concatenate([first - 1, [n - 1]]) if n else np.zeros(0, dtype=np.int64)
    length = s[run_end] - s[run_start] + t.ii
    if n:
        length[-1] += t.lat - t.ii  # the last iteration is busy until its result is out, not for a whole II
    busy = _spans(s[run_start], length)
    starved = _spans(earliest[1:], ready[1:] - earliest[1:])
    blocked = _spans(ready, s - ready)
    return TaskTrace(s, busy, starved, blocked)


def _fifo_trace(wt: list, rt: list, depth: int | None) -> FifoTrace:
    w = np.sort(np.array([x for x in wt if x is not None], dtype=np.int64))
    r = np.sort(np.array([x for x in rt if x is not None], dtype=np.int64))
    times = np.unique(np.concatenate([w, r + 1]))
    occ = np.searchsorted(w, times, "right") - np.searchsorted(r, times, "left")
    keep = np.concatenate([[True], occ[1:] != occ[:-1]]) if len(occ) else np.zeros(0, dtype=bool)
    return FifoTrace(times[keep], occ[keep].astype(np.int64), depth)


def required_depths(tasks, edges, starts) -> dict[str, int]:
    """Peak occupancy of each FIFO when unbounded and tasks start at ``starts``."""
    res = simulate(tasks, edges, {e.name: None for e in edges}, starts)
    return {e: max(1, p) for e, p in res.peak.items()}
