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

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ..errors import StreamDSLError


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
      ``[s_k, s_k + II)``); the lengths sum to ``SimResult.busy``;
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


def simulate(tasks: list[Task], edges: list[Edge], depths: dict[str, int | None],
             starts: dict[str, int] | None = None, trace: bool = False) -> SimResult:
    """Run the model; ``depths[e] = None`` is an unbounded FIFO; ``trace=True`` keeps a :class:`Trace`."""
    by = {t.name: t for t in tasks}
    starts = dict(starts or {})
    ins = {t.name: [] for t in tasks}
    outs = {t.name: [] for t in tasks}
    for e in edges:
        outs[e.src].append(e)
        ins[e.dst].append(e)
    wtime: dict[str, list[int | None]] = {e.name: [None] * e.tokens for e in edges}
    rtime: dict[str, list[int | None]] = {e.name: [None] * e.tokens for e in edges}
    # per task and iteration: the tokens it reads, as (write times, read times, token), and
    # writes, as (write times, read times, token, token whose slot it reuses or -1)
    # (an iteration that moves no token keeps the shared empty tuple)
    takes: dict[str, list] = {t.name: [()] * t.iters for t in tasks}
    puts: dict[str, list] = {t.name: [()] * t.iters for t in tasks}
    for e in edges:
        wt, rt, d = wtime[e.name], rtime[e.name], depths.get(e.name)
        src, dst, n = by[e.src], by[e.dst], e.tokens
        tk, pt = takes[e.dst], puts[e.src]
        rd = e.reads if e.reads is not None else [_reader_iter(dst, j, n) for j in range(n)]
        wr = e.writes if e.writes is not None else [_writer_iter(src, j, n) for j in range(n)]
        nr, nw = len(tk), len(pt)
        for j in range(n):  # a token outside the iterations is never read / written
            k = rd[j]
            if 0 <= k < nr:
                if tk[k]:
                    tk[k].append((wt, rt, j))
                else:
                    tk[k] = [(wt, rt, j)]
            k = wr[j]
            if 0 <= k < nw:
                item = (wt, rt, j, j - d if d is not None and j >= d else -1)
                if pt[k]:
                    pt[k].append(item)
                else:
                    pt[k] = [item]
    issue: dict[str, list[int]] = {t.name: [] for t in tasks}
    waited: dict[str, int] = {t.name: 0 for t in tasks}  # cycles lost to full FIFOs
    # Issue times are the least fixpoint of their max-plus recurrences, so any order of
    # evaluation gives the same schedule: run each task as far as it can go, and retry a
    # task only after a neighbour has issued (its tokens or free slots may now be there).
    wake = {t.name: list(dict.fromkeys([by[e.src] for e in ins[t.name]] + [by[e.dst] for e in outs[t.name]]))
            for t in tasks}
    queue = deque(tasks)
    queued = {t.name for t in tasks}
    while queue:
        t = queue.popleft()
        name = t.name
        queued.discard(name)
        iss, tk, pt, ii, lat = issue[name], takes[name], puts[name], t.ii, t.lat
        k0 = k = len(iss)
        lost = 0
        while k < t.iters:
            earliest = starts.get(name, 0) if k == 0 else iss[-1] + ii
            ok = True
            for wt, _, j in tk[k]:
                w = wt[j]
                if w is None:
                    ok = False
                    break
                if w > earliest:
                    earliest = w
            if not ok:
                break
            ready = earliest  # inputs present; anything later is back-pressure
            for _, rt, _, jd in pt[k]:
                if jd >= 0:
                    r = rt[jd]
                    if r is None:
                        ok = False
                        break
                    if r + 1 - lat > earliest:
                        earliest = r + 1 - lat
            if not ok:
                break
            iss.append(earliest)
            lost += earliest - ready
            for _, rt, j in tk[k]:
                rt[j] = earliest
            done = earliest + lat
            for wt, _, j, _ in pt[k]:
                wt[j] = done
            k += 1
        if k > k0:
            waited[name] += lost
            for u in wake[name]:
                if u.name not in queued:
                    queued.add(u.name)
                    queue.append(u)
    remaining = sum(t.iters - len(issue[t.name]) for t in tasks)
    if remaining:
        blocked = []
        for t in tasks:
            k = len(issue[t.name])
            if k < t.iters:
                why = []
                for e in ins[t.name]:
                    wt = wtime[e.name]
                    if any(w is wt and w[j] is None for w, _, j in takes[t.name][k]):
                        why.append(f"waits for a token on '{e.name}' (empty)")
                for e in outs[t.name]:
                    d = depths.get(e.name)
                    rt = rtime[e.name]
                    if d is not None and any(r is rt and jd >= 0 and r[jd] is None for _, r, _, jd in puts[t.name][k]):
                        why.append(f"waits for space on '{e.name}' (full at depth {d})")
                blocked.append(f"{t.name} (iteration {k}) {' and '.join(why)}")
        raise DeadlockError("the dataflow deadlocks: " + "; ".join(blocked),
                            hint="deepen the FIFOs named 'full', or let g.size_fifos() compute depths")
    busy = {t.name: t.iters * t.ii for t in tasks}
    stall = {}
    for t in tasks:
        s = issue[t.name]
        stall[t.name] = sum(max(0, s[k] - (s[k - 1] + t.ii)) for k in range(1, len(s)))
    peak = {}
    for e in edges:
        # a write lands before a same-cycle read leaves: the FIFO holds, right after the
        # i-th write (in time order) at cycle w, i + 1 tokens minus those read before w
        wt, rt = wtime[e.name], rtime[e.name]
        if None in wt or None in rt:  # tokens never moved: count them by events
            peak[e.name] = _peak_by_events(wt, rt)
            continue
        w = np.sort(np.array(wt, dtype=np.int64))
        r = np.sort(np.array(rt, dtype=np.int64))
        peak[e.name] = int((np.arange(1, len(w) + 1) - np.searchsorted(r, w, "left")).max()) if len(w) else 0
    end = max((issue[t.name][-1] + t.lat for t in tasks if issue[t.name]), default=0)
    res = SimResult(end, busy, stall, peak, {t.name: (issue[t.name][0] if issue[t.name] else 0) for t in tasks},
                    waited)
    if trace:
        res.trace = Trace({t.name: _task_trace(t, issue[t.name], takes[t.name], starts.get(t.name, 0)) for t in tasks},
                          {e.name: _fifo_trace(wtime[e.name], rtime[e.name], depths.get(e.name)) for e in edges})
    return res


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
    busy = _spans(s[run_start], s[run_end] - s[run_start] + t.ii)
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
