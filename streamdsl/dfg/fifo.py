"""FIFO sizing: task start offsets by linear programming, depth = tokens in flight.

The paper constrains, for every pair of tasks and every path between them, the
sum of edge delays along the path to be at least the sum of initial delays
along it, and minimises the total delay.  Enumerating paths is exponential;
with one start time ``s_t`` per task and ``delay(u, v) = s_v - s_u`` the same
constraints are just ``s_v - s_u >= D_u`` per edge (every path sum telescopes),
a polynomial LP that scipy's HiGHS solves exactly.  ``D`` is taken per edge
(:meth:`Edge.delay`: when the producer writes that edge's first token and when
the consumer first reads it), which is the paper's initial delay for the
proportional schedule.

Depths are then the peak number of tokens in flight when tasks start at those
offsets (the token simulator with unbounded FIFOs); the paper's closed forms
are reported beside them by :func:`explain`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import StreamDSLError
from .tokensim import Edge, Task, required_depths


class FifoSizingError(StreamDSLError):
    kind = "FIFO sizing error"


@dataclass(frozen=True)
class Sizing:
    """Depths, and ``starts``: the LP's start offsets they were sized for (each task as late as its consumers
    allow, so a load's offset may come after its consumer's start).  Printed, it shows when each process
    starts in the sized design as hardware runs it: every process at once, a task's first work when its
    inputs arrive (the token simulator at these depths)."""

    starts: dict[str, int]
    depths: dict[str, int]
    mode: str
    design: tuple | None = field(default=None, compare=False, repr=False)  # (tasks, edges) it was sized for

    def run_starts(self) -> dict[str, int] | None:
        """When each task first works in the sized design run as hardware does (None: not known here)."""
        if self.design is None:
            return None
        from .tokensim import DeadlockError, simulate

        try:
            return simulate(*self.design, self.depths).starts
        except DeadlockError:
            return None

    def __str__(self) -> str:
        import textwrap

        def at(starts: dict[str, int]) -> str:
            return ", ".join(f"{t}@{s}" for t, s in starts.items())

        run = self.run_starts()
        head = (f"FIFO sizing ({self.mode}): LP start offsets {at(self.starts)}" if run is None else
                f"FIFO sizing ({self.mode}): starts as run, every process launched at once: {at(run)}")
        lines = textwrap.wrap(head, 100, subsequent_indent="    ")
        lines += [f"  {e}: depth {d}" for e, d in self.depths.items()]
        if run is not None:
            lines += textwrap.wrap(f"(the depths also hold for the LP's offsets, each task as late as its consumers "
                                   f"allow: {at(self.starts)})", 100, initial_indent="  ", subsequent_indent="    ")
        return "\n".join(lines)


def start_offsets(tasks: list[Task], edges: list[Edge]) -> dict[str, int]:
    """Minimise the total edge delay subject to ``s_v - s_u >= D_u`` (HiGHS)."""
    names = [t.name for t in tasks]
    pos = {n: i for i, n in enumerate(names)}
    by = {t.name: t for t in tasks}
    n = len(names)
    if not edges:
        return {t: 0 for t in names}
    m = len(edges)
    src = np.fromiter((pos[e.src] for e in edges), dtype=np.int64, count=m)
    dst = np.fromiter((pos[e.dst] for e in edges), dtype=np.int64, count=m)
    rhs = np.fromiter((-e.delay(by[e.src], by[e.dst]) for e in edges), dtype=float, count=m)
    # the objective, the sum of s_v - s_u over edges, counts in-edges minus out-edges per task
    c = np.bincount(dst, minlength=n) - np.bincount(src, minlength=n).astype(float)
    # row i: s_u - s_v <= -D_u (sparse: two entries per row, one per edge)
    data = np.tile([1.0, -1.0], m)
    data[0::2][src == dst] = 0.0  # a self-loop keeps only its -1, as a dense row would
    from scipy.optimize import linprog  # SciPy loads when a design is first sized, not with the package
    from scipy.sparse import csr_matrix

    A = csr_matrix((data, np.column_stack([src, dst]).ravel(), np.arange(0, 2 * m + 1, 2)), shape=(m, n))
    A.eliminate_zeros()
    # a tiny weight on every start keeps the optimum at the earliest schedule
    c = c + 1e-6
    res = linprog(c, A_ub=A, b_ub=rhs, bounds=(0, None), method="highs")
    if res.status != 0:
        raise FifoSizingError(f"the start-time LP has no solution ({res.message})",
                              hint="the task graph must be acyclic")
    return {name: int(round(res.x[pos[name]])) for name in names}


def size_fifos(tasks: list[Task], edges: list[Edge], mode: str = "normal",
               pinned: dict[str, int] | None = None) -> Sizing:
    """Depths that neither deadlock nor stall; ``conservative`` equalises every II to the slowest."""
    if mode not in ("normal", "conservative"):
        raise FifoSizingError(f"unknown FIFO sizing mode {mode!r}", hint='use "normal" or "conservative"')
    if mode == "conservative":
        slow = max(t.ii for t in tasks)
        tasks = [Task(t.name, t.iters, slow, t.lat, t.fill, t.drain) for t in tasks]
    starts = start_offsets(tasks, edges)
    depths = required_depths(tasks, edges, starts)
    depths.update(pinned or {})
    return Sizing(starts, depths, mode)


def design_depths(tasks: list[Task], edges: list[Edge], fifos, mode: str = "normal",
                  pinned: dict[str, int] | None = None) -> Sizing:
    """The depths of a lowered design's FIFOs (``fifos``: its :class:`~.lower.Fifo` list) for one timing:
    LP start offsets, and in ``normal`` mode also the peaks when every process starts at once (hardware starts
    them all together, so that schedule must not back-pressure either); ``pinned`` depths are kept and a DRAM
    hand-off between regions is depth 1.  ``conservative`` equalises every II to the slowest and falls back
    to ``normal`` when that would deadlock a reconvergent path.  The one FIFO sizing of the package:
    ``g.size_fifos()``, the explorer and the performance model all call it."""
    from .tokensim import DeadlockError, simulate

    pins = dict(pinned or {})
    sz = size_fifos(tasks, edges, mode, pinned=pins)
    depths = dict(sz.depths)
    if mode == "normal":
        asap = required_depths(tasks, edges, {})
        depths = {n: d if n in pins else max(d, asap[n]) for n, d in depths.items()}
    else:
        try:
            simulate(tasks, edges, depths)
        except DeadlockError:  # equalised IIs under-sized a reconvergent path: keep the normal depths
            return design_depths(tasks, edges, fifos, "normal", pins)
    for f in fifos:
        if f.kind == "dram":
            depths[f.name] = 1
    return Sizing(sz.starts, depths, mode, design=(tasks, edges))


def paper_depth(src: Task, dst: Task, tokens: int, delay: int) -> int:
    """The paper's closed form for one edge (producer faster / slower than consumer)."""
    if src.ii <= dst.ii:
        return max(1, min(tokens, tokens - (src.latency - delay) // dst.ii))
    return max(1, min(tokens, -(-(delay - src.initial_delay) // src.ii)))


def critical_path(tasks: list[Task], edges: list[Edge], starts: dict[str, int], target: str) -> list[str]:
    """The chain of tasks whose initial delays fix ``target``'s start."""
    by = {t.name: t for t in tasks}
    path = [target]
    cur = target
    while True:
        preds = [e for e in edges if e.dst == cur and starts[e.src] + e.delay(by[e.src], by[cur]) == starts[cur]]
        if not preds:
            return list(reversed(path))
        cur = preds[0].src
        path.append(cur)


def explain(tasks: list[Task], edges: list[Edge], sizing: Sizing, edge: str) -> str:
    by = {t.name: t for t in tasks}
    e = next((x for x in edges if x.name == edge), None)
    if e is None:
        raise FifoSizingError(f"no FIFO named '{edge}'", hint=f"FIFOs: {', '.join(x.name for x in edges)}")
    s = sizing.starts
    delay = s[e.dst] - s[e.src]
    path = critical_path(tasks, edges, s, e.dst)
    def hop(a: str, b: str) -> int:
        return max(x.delay(by[a], by[b]) for x in edges if x.src == a and x.dst == b)

    steps = " + ".join(f"D({a})={hop(a, b)}" for a, b in zip(path, path[1:])) or "0"
    return (f"FIFO '{edge}' ({e.src} -> {e.dst}, {e.tokens} tokens): depth {sizing.depths[edge]}.\n"
            f"  {e.dst} starts at {s[e.dst]}, {delay} cycles after {e.src}, forced by the path "
            f"{' -> '.join(path)} ({steps}).\n"
            f"  {e.src} writes one token every {by[e.src].ii} cycle(s) and {e.dst} reads one every "
            f"{by[e.dst].ii}; tokens in flight peak at {sizing.depths[edge]} "
            f"(the paper's closed form gives {paper_depth(by[e.src], by[e.dst], e.tokens, delay)}).")
