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
"""
from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass
class SimResult:
    cycles: int
    busy: dict[str, int]
    stall: dict[str, int]
    peak: dict[str, int]
    starts: dict[str, int] = field(default_factory=dict)
    backpressure: dict[str, int] = field(default_factory=dict)

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


def simulate(tasks: list[Task], edges: list[Edge], depths: dict[str, int | None],
             starts: dict[str, int] | None = None) -> SimResult:
    """Run the model; ``depths[e] = None`` is an unbounded FIFO."""
    by = {t.name: t for t in tasks}
    starts = dict(starts or {})
    ins = {t.name: [] for t in tasks}
    outs = {t.name: [] for t in tasks}
    for e in edges:
        outs[e.src].append(e)
        ins[e.dst].append(e)
    # per edge: which tokens each iteration reads / writes
    reads_at: dict[str, dict[int, list[int]]] = {}
    writes_at: dict[str, dict[int, list[int]]] = {}
    for e in edges:
        r, w = {}, {}
        for j in range(e.tokens):
            r.setdefault(e.read_iter(by[e.dst], j), []).append(j)
            w.setdefault(e.write_iter(by[e.src], j), []).append(j)
        reads_at[e.name], writes_at[e.name] = r, w
    wtime: dict[str, list[int | None]] = {e.name: [None] * e.tokens for e in edges}
    rtime: dict[str, list[int | None]] = {e.name: [None] * e.tokens for e in edges}
    issue: dict[str, list[int]] = {t.name: [] for t in tasks}
    waited: dict[str, int] = {t.name: 0 for t in tasks}  # cycles lost to full FIFOs
    progress = True
    remaining = sum(t.iters for t in tasks)
    while remaining and progress:
        progress = False
        for t in tasks:
            while len(issue[t.name]) < t.iters:
                k = len(issue[t.name])
                earliest = starts.get(t.name, 0) if k == 0 else issue[t.name][-1] + t.ii
                ok = True
                for e in ins[t.name]:
                    for j in reads_at[e.name].get(k, ()):
                        w = wtime[e.name][j]
                        if w is None:
                            ok = False
                            break
                        earliest = max(earliest, w)
                    if not ok:
                        break
                if not ok:
                    break
                ready = earliest  # inputs present; anything later is back-pressure
                for e in outs[t.name]:
                    d = depths.get(e.name)
                    for j in writes_at[e.name].get(k, ()):
                        if d is not None and j - d >= 0:
                            r = rtime[e.name][j - d]
                            if r is None:
                                ok = False
                                break
                            earliest = max(earliest, r + 1 - t.lat)
                    if not ok:
                        break
                if not ok:
                    break
                issue[t.name].append(earliest)
                waited[t.name] += earliest - ready
                for e in ins[t.name]:
                    for j in reads_at[e.name].get(k, ()):
                        rtime[e.name][j] = earliest
                for e in outs[t.name]:
                    for j in writes_at[e.name].get(k, ()):
                        wtime[e.name][j] = earliest + t.lat
                remaining -= 1
                progress = True
    if remaining:
        blocked = []
        for t in tasks:
            k = len(issue[t.name])
            if k < t.iters:
                why = []
                for e in ins[t.name]:
                    if any(wtime[e.name][j] is None for j in reads_at[e.name].get(k, ())):
                        why.append(f"waits for a token on '{e.name}' (empty)")
                for e in outs[t.name]:
                    d = depths.get(e.name)
                    if d is not None and any(j - d >= 0 and rtime[e.name][j - d] is None
                                             for j in writes_at[e.name].get(k, ())):
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
        events = [(w, 0) for w in wtime[e.name]] + [(r, 1) for r in rtime[e.name]]
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
        peak[e.name] = best
    end = max((issue[t.name][-1] + t.lat for t in tasks if issue[t.name]), default=0)
    return SimResult(end, busy, stall, peak, {t.name: (issue[t.name][0] if issue[t.name] else 0) for t in tasks},
                     waited)


def required_depths(tasks, edges, starts) -> dict[str, int]:
    """Peak occupancy of each FIFO when unbounded and tasks start at ``starts``."""
    res = simulate(tasks, edges, {e.name: None for e in edges}, starts)
    return {e: max(1, p) for e, p in res.peak.items()}
