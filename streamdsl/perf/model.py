"""A timing and resource model of a whole dataflow design on a board.

``model_design(g, board)`` takes a :class:`~streamdsl.DataflowSchedule` as it
stands and gives a :class:`DesignPerf`: end-to-end cycles from the token-level
simulator, per-kernel cycles and resources, DMA traffic and HBM channels,
FIFO/converter memory bound to LUTRAM/BRAM/URAM, resources per SLR (an ILP
partition) against the board, and every assumption with its number.

How each part is modeled:

* **Kernels**: :func:`streamdsl.cost.model.estimate` of the task's scheduled
  IR at the design clock; the token-sim task spreads those cycles over the
  task's token-moving iterations exactly as :mod:`streamdsl.dfg.timing`
  does (``II = ceil(cycles / iters)``, ``lat = max(II, deepest pipeline)``).
* **DMAs**: bytes from the tensor's element count at its *stored* width
  (``bits=``: e.g. 4-bit weights; default the dtype's width) over the DMA's
  bandwidth.  Each DMA engine is one 512-bit AXI port per memory channel it
  uses; a channel moves ``Memory.channel_gbs`` (HBM: 14.375 GB/s per
  pseudo-channel, below the 16 GB/s of a 512-bit port at 250 MHz).  The
  channels of a region's DMAs are allocated by :func:`allocate_channels`; a
  bundle (``g.bundle``: one DMA process reading its inputs in turn) gets
  channels as one DMA and each member moves at that rate while it runs.
  First-beat latency :data:`streamdsl.dfg.timing.DMA_LATENCY` cycles; the
  data moves at the channels' rate, not a whole number of cycles per token
  (:func:`dma_timing`: the burst buffer keeps the memory busy), and the last
  token is whole when its last word arrives.
* **Converters, forks**: as :mod:`streamdsl.dfg.timing` (they do not
  depend on the board).
* **End to end**: :func:`streamdsl.dfg.tokensim.simulate` over those
  tasks at the design's FIFO depths (:func:`analytic_cycles` is a coarser
  closed form, used where the explorer ranks many candidates).
* **Memory**: FIFOs (depth x token bytes), ping-pong converters (2 x buffer),
  kernels' local arrays (from the cost model), bound by size
  (:func:`bind_memory`).  The whole-tensor task copies of the emitted HLS
  (``g.task_buffer_bytes()``) are printed apart and *not* counted (as in the
  paper's model; see docs/architecture.md "Not built yet").
* **SLRs**: :func:`partition_slrs` (``scipy.optimize.milp``), optimal to HiGHS's
  relative gap of 1e-4 (``DesignPerf.slr_optimal`` is False if its time limit
  stopped it first).  Whether any assignment fits is decided when the design is
  modeled (:func:`feasible_assignment`, exact); the optimal one is solved when
  first read (``slr_use``, ``crossing_bytes``, ``NodePerf.slr``), since an
  exploration models many designs and reports the placement of one.
"""
from __future__ import annotations

import functools
import math
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from ..boards import RESOURCES, Board
from ..cost.model import BRAM_BITS, URAM_BITS
from ..dfg.channels import DMA_LATENCY, DmaModel, analytic_cycles
from ..dfg.tokensim import DeadlockError, SimResult, Task, simulate
from ..errors import StreamDSLError

LUTRAM_MAX_BYTES = 1024  # a buffer up to 1 KiB is LUTRAM (SRL/distributed RAM), as Vitis does for shallow FIFOs
BRAM_MAX_BYTES = 64 * 1024  # up to 64 KiB BRAM18K blocks, larger URAM (288 Kb blocks)
DMA_COST = dict(dsp=0, bram=2, uram=0, lut=1500, ff=2000)  # per AXI port: adapter + 512 b x 64 burst buffer (assumed)
CONVERTER_LOGIC = dict(lut=300, ff=400)  # address generation of a converter (assumed)
FORK_LOGIC = dict(lut=100, ff=100)  # assumed
SLR_CROSSING_WEIGHT = 1.0  # objective weight of the bytes crossing SLRs (normalised) vs the DSP imbalance


class PerfError(StreamDSLError):
    kind = "performance model error"


def _zero() -> dict[str, int]:
    return {r: 0 for r in RESOURCES}


def _add(a: dict, b: dict, times: int = 1) -> None:
    for r in RESOURCES:
        a[r] += int(b.get(r, 0)) * times


# ------------------------------------------------------------------ memory binding
def bind_memory(nbytes: int) -> tuple[str, dict[str, int]]:
    """(storage, resources) of one buffer of ``nbytes``: LUTRAM up to 1 KiB, BRAM18K up to 64 KiB, else URAM."""
    bits = 8 * max(0, int(nbytes))
    if bits == 0:
        return "none", _zero()
    r = _zero()
    if nbytes <= LUTRAM_MAX_BYTES:
        r["lut"] = math.ceil(bits / 64)  # a LUT6 is a 64x1 RAM
        return "lutram", r
    if nbytes <= BRAM_MAX_BYTES:
        r["bram"] = math.ceil(bits / BRAM_BITS)
        return "bram", r
    r["uram"] = math.ceil(bits / URAM_BITS)
    return "uram", r


# ------------------------------------------------------------------ SLR partition
def _interchangeable(b: Board, pinned: dict[str, int]) -> list[list[int]]:
    """Groups of SLRs that any assignment may relabel among themselves without changing anything:
    equal capacities, not the memory's SLR, no node pinned there."""
    groups: dict[tuple, list[int]] = {}
    for s, cap in enumerate(b.slrs):
        if s != b.memory_slr and s not in set(pinned.values()):
            groups.setdefault(tuple(cap[r] for r in RESOURCES), []).append(s)
    return [g for g in groups.values() if len(g) > 1]


_PARTITIONS: "OrderedDict[tuple, tuple]" = OrderedDict()


def partition_slrs(nodes: dict[str, dict[str, int]], links: list[tuple[str, str, int]], b: Board,
                   pinned: dict[str, int] | None = None, util: float = 1.0, time_limit: float | None = 10.0,
                   status: dict | None = None):
    """Assign nodes to SLRs by an ILP (``scipy.optimize.milp``, HiGHS).

    ``nodes``: resources per node; ``links``: (src, dst, bytes) between nodes;
    a link to the name ``"@memory"`` ties a DMA to the SLR its memory
    attaches to.  Constraints: each node on one SLR; per SLR and resource,
    the sum is at most ``util`` x the SLR's capacity.  Objective: bytes
    crossing SLR boundaries (over all bytes) + the largest per-SLR DSP
    fraction (balance).  Returns ({node: slr}, crossing bytes) or None when
    no assignment fits.

    The assignment is optimal to HiGHS's relative MIP gap (1e-4 of the
    objective) unless HiGHS stops at ``time_limit`` seconds first (then it is
    the best assignment found, still within capacity); ``status``, if given,
    receives ``optimal`` (bool) and ``gap``.  SLRs that are copies of each
    other (the U55C's SLR1 and SLR2: same capacities, no memory) are ordered
    by the first node each holds, which removes the relabelled copies of
    every assignment from the search and leaves its optimum unchanged.
    Results are remembered per input.
    """
    pinned = dict(pinned or {})
    key = (tuple((n, tuple(sorted(r.items()))) for n, r in nodes.items()), tuple(links), b.name,
           tuple(sorted(pinned.items())), util, time_limit)
    hit = _PARTITIONS.get(key)
    if hit is None:
        hit = _solve_partition(nodes, links, b, pinned, util, time_limit)
        _PARTITIONS[key] = hit
        if len(_PARTITIONS) > 64:
            _PARTITIONS.popitem(last=False)
    else:
        _PARTITIONS.move_to_end(key)
    result, st = hit
    if status is not None:
        status.update(st)
    return None if result is None else (dict(result[0]), result[1])


def _solve_partition(nodes, links, b: Board, pinned: dict[str, int], util: float, time_limit: float | None):
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    S = len(b.slrs)
    names = list(nodes)
    if S == 1:
        fits = all(sum(nodes[n][r] for n in names) <= util * b.slrs[0][r] for r in RESOURCES)
        return (({n: 0 for n in names}, 0) if fits else None), {"optimal": True, "gap": 0.0}
    idx = {n: i for i, n in enumerate(names)}
    links = [(u, v, w) for u, v, w in links if (u in idx or u == "@memory") and (v in idx or v == "@memory") and u != v]
    nx, ny = len(names) * S, len(links) * S
    nv = nx + ny + 1  # x[n,s], y[e,s], z (max DSP fraction)
    X = lambda n, s: idx[n] * S + s  # noqa: E731
    Y = lambda e, s: nx + e * S + s  # noqa: E731
    Z = nv - 1
    total_bytes = sum(w for *_, w in links) or 1
    c = np.zeros(nv)
    for e, (_, _, w) in enumerate(links):
        for s in range(S):
            c[Y(e, s)] = SLR_CROSSING_WEIGHT * 0.5 * w / total_bytes
    c[Z] = 1.0
    rows, cols, vals, lo, hi = [], [], [], [], []

    def row(entries, low, high) -> None:
        r = len(lo)
        for col, v in entries:
            rows.append(r)
            cols.append(col)
            vals.append(v)
        lo.append(low)
        hi.append(high)

    for n in names:  # one SLR each
        row([(X(n, s), 1.0) for s in range(S)], 1.0, 1.0)
    for s in range(S):  # capacity
        for res in RESOURCES:
            row([(X(n, s), nodes[n][res]) for n in names if nodes[n][res]], -np.inf, util * b.slrs[s][res])
    mem = b.memory_slr
    for e, (u, v, _) in enumerate(links):  # y >= |x_u - x_v|
        for s in range(S):
            for sign in (1, -1):
                entries, const = [(Y(e, s), -1.0)], 0.0
                for node, k in ((u, sign), (v, -sign)):
                    if node == "@memory":
                        const += k * (1.0 if s == mem else 0.0)
                    else:
                        entries.append((X(node, s), float(k)))
                row(entries, -np.inf, -const)
    for s in range(S):  # z >= DSP fraction of SLR s
        cap = max(1, b.slrs[s]["dsp"])
        row([(X(n, s), nodes[n]["dsp"] / cap) for n in names if nodes[n]["dsp"]] + [(Z, -1.0)], -np.inf, 0.0)
    for group in _interchangeable(b, pinned):  # node i on the later SLR only if an earlier node is on the former
        for a, later in zip(group, group[1:]):
            for i, n in enumerate(names):
                row([(X(n, later), 1.0)] + [(X(m, a), -1.0) for m in names[:i]], -np.inf, 0.0)
    A = coo_matrix((vals, (rows, cols)), shape=(len(lo), nv)).tocsr()
    integrality = np.zeros(nv)
    integrality[:nx] = 1
    lb, ub = np.zeros(nv), np.ones(nv)
    ub[Z] = np.inf
    for n, s in pinned.items():
        if n in idx:
            for k in range(S):
                ub[X(n, k)] = lb[X(n, k)] = 1.0 if k == s else 0.0
    options = {} if time_limit is None else {"time_limit": time_limit}
    res = milp(c, constraints=LinearConstraint(A, np.array(lo), np.array(hi)), integrality=integrality,
               bounds=Bounds(lb, ub), options=options)
    status = {"optimal": res.status == 0, "gap": float(getattr(res, "mip_gap", 0.0) or 0.0)}
    if res.x is None:
        return None, status
    x = res.x
    where = {n: int(np.argmax([x[X(n, s)] for s in range(S)])) for n in names}
    return (where, _crossing(where, links, b)), status


def _crossing(where: dict[str, int], links, b: Board) -> int:
    at = lambda n: b.memory_slr if n == "@memory" else where.get(n)  # noqa: E731
    return sum(w for u, v, w in links if u != v and at(u) is not None and at(v) is not None and at(u) != at(v))


def feasible_assignment(nodes: dict[str, dict[str, int]], b: Board, pinned: dict[str, int] | None = None,
                        util: float = 1.0) -> dict[str, int] | None:
    """An assignment of ``nodes`` to SLRs within capacity, or None when none exists (exactly when
    :func:`partition_slrs` returns None).

    Usually instant: a total over the board's capacity cannot fit; what
    first-fit decreasing finds fits; only when both fail does the question go
    to the MILP without an objective (HiGHS stops at its first assignment or
    proves there is none)."""
    pinned = {n: s for n, s in (pinned or {}).items() if n in nodes}
    S = len(b.slrs)
    cap = [{r: util * sl[r] for r in RESOURCES} for sl in b.slrs]
    if any(sum(nodes[n][r] for n in nodes) > sum(c[r] for c in cap) for r in RESOURCES):
        return None
    left = [dict(c) for c in cap]
    where: dict[str, int] = {}

    def place(n: str, s: int) -> bool:
        if all(nodes[n][r] <= left[s][r] for r in RESOURCES):
            for r in RESOURCES:
                left[s][r] -= nodes[n][r]
            where[n] = s
            return True
        return False

    ok = all(place(n, s) for n, s in pinned.items())
    size = lambda n: max(nodes[n][r] / max(1, b.total[r]) for r in RESOURCES)  # noqa: E731
    for n in sorted((n for n in nodes if n not in pinned), key=size, reverse=True):
        if not ok:
            break
        room = sorted(range(S), key=lambda s: -min(left[s][r] / max(1.0, cap[s][r]) for r in RESOURCES))
        ok = any(place(n, s) for s in room)
    if ok:
        return {n: where[n] for n in nodes}
    return _feasible_milp(nodes, b, pinned, util)


def _feasible_milp(nodes, b: Board, pinned: dict[str, int], util: float) -> dict[str, int] | None:
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    S, names = len(b.slrs), list(nodes)
    rows, cols, vals, lo, hi = [], [], [], [], []
    for i in range(len(names)):
        rows += [len(lo)] * S
        cols += [i * S + s for s in range(S)]
        vals += [1.0] * S
        lo.append(1.0)
        hi.append(1.0)
    for s in range(S):
        for res in RESOURCES:
            for i, n in enumerate(names):
                if nodes[n][res]:
                    rows.append(len(lo))
                    cols.append(i * S + s)
                    vals.append(nodes[n][res])
            lo.append(-np.inf)
            hi.append(util * b.slrs[s][res])
    nv = len(names) * S
    lb, ub = np.zeros(nv), np.ones(nv)
    for n, s in pinned.items():
        i = names.index(n)
        for k in range(S):
            lb[i * S + k] = ub[i * S + k] = 1.0 if k == s else 0.0
    A = coo_matrix((vals, (rows, cols)), shape=(len(lo), nv)).tocsr()
    res = milp(np.zeros(nv), constraints=LinearConstraint(A, np.array(lo), np.array(hi)),
               integrality=np.ones(nv), bounds=Bounds(lb, ub))
    if res.x is None:
        return None
    return {n: int(np.argmax(res.x[i * S:(i + 1) * S])) for i, n in enumerate(names)}


class SlrPlan:
    """The SLR partition of one modeled design, solved by :func:`partition_slrs` when first read.

    Whether an assignment fits at all is decided when the design is modeled
    (:func:`feasible_assignment`, exact); which one is best only when something
    reads it (``DesignPerf.slr_use``, ``crossing_bytes``, ``NodePerf.slr``): an
    exploration models every candidate but reports the placement of one.
    Without a partition (``solve=False``), or when nothing fits, every node is
    on SLR0."""

    def __init__(self, nodes: dict[str, dict[str, int]], links: list, b: Board, solve: bool):
        self.nodes, self.links, self.board = nodes, links, b
        self.fallback = feasible_assignment(nodes, b) if solve else None
        self.fits = self.fallback is not None or not solve
        self.status: dict = {"optimal": True, "gap": 0.0}

    @functools.cached_property
    def _solved(self) -> tuple[dict[str, int], int]:
        if self.fallback is None:
            return {n: 0 for n in self.nodes}, 0
        got = partition_slrs(self.nodes, self.links, self.board, status=self.status)
        if got is None:  # HiGHS stopped at its time limit before any assignment: the one that proved it fits
            got = self.fallback, _crossing(self.fallback, self.links, self.board)
        return got

    @property
    def where(self) -> dict[str, int]:
        return self._solved[0]

    @property
    def crossing(self) -> int:
        return self._solved[1]

    @property
    def optimal(self) -> bool:
        self._solved
        return bool(self.status["optimal"])

    @functools.cached_property
    def use(self) -> list[dict[str, int]]:
        out = [_zero() for _ in self.board.slrs]
        for n, res in self.nodes.items():
            _add(out[self.where[n]], res)
        return out


# ------------------------------------------------------------------ the design model
@dataclass
class NodePerf:
    name: str
    kind: str
    region: int
    task: Task
    cycles: int  # unstalled cycles of this node (kernel: the cost model's total)
    resources: dict[str, int]
    note: str = ""
    plan: SlrPlan | None = field(default=None, repr=False, compare=False)

    @property
    def slr(self) -> int:
        """The SLR this node is placed on (solved on first read: :class:`SlrPlan`)."""
        return self.plan.where.get(self.name, 0) if self.plan is not None else 0


@dataclass
class BufferPerf:
    name: str
    what: str  # "fifo" | "converter" | "kernel"
    bytes: int
    storage: str
    resources: dict[str, int]
    owner: str


@dataclass
class DesignPerf:
    """The modeled performance and resources of one dataflow design on one board."""

    name: str
    board: Board
    clock_mhz: float
    cycles: int
    sim: SimResult | None
    analytic: int
    nodes: dict[str, NodePerf]
    dmas: list[DmaModel]
    buffers: list[BufferPerf]
    plan: SlrPlan
    channels_used: int
    depths: dict[str, int]
    task_buffer_bytes: int
    assumptions: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    schedule: object = None  # the DataflowSchedule

    @property
    def latency_s(self) -> float:
        return self.cycles / (self.clock_mhz * 1e6)

    @property
    def fits(self) -> bool:
        return not self.problems

    @property
    def total(self) -> dict[str, int]:
        """Resources of the whole design (what ``slr_use`` sums to, without placing anything)."""
        t = _zero()
        for n in self.nodes.values():
            _add(t, n.resources)
        return t

    @property
    def slr_use(self) -> list[dict[str, int]]:
        """Resources per SLR of the optimal partition (:func:`partition_slrs`, solved on first read)."""
        return self.plan.use

    @property
    def crossing_bytes(self) -> int:
        return self.plan.crossing

    @property
    def slr_optimal(self) -> bool:
        """Is the SLR partition proven optimal (False: HiGHS stopped at its time limit)?"""
        return self.plan.optimal

    @property
    def dma_bytes(self) -> int:
        return sum(d.bytes for d in self.dmas)

    @property
    def onchip_bytes(self) -> int:
        return sum(b.bytes for b in self.buffers)

    def slowest(self, k: int = 3) -> list[NodePerf]:
        return sorted((n for n in self.nodes.values() if n.kind == "task"), key=lambda n: -n.cycles)[:k]

    def report(self) -> str:
        from .report import design_report

        return design_report(self)

    def _repr_html_(self) -> str:
        from .. import registry

        return registry.lookup("present", "html")(self)

    def __str__(self) -> str:
        fit = "fits" if self.fits else "does NOT fit: " + "; ".join(self.problems)
        return (f"<DesignPerf {self.name} on {self.board.name} @ {self.clock_mhz:g} MHz: {self.cycles} cycles = "
                f"{self.latency_s * 1e6:.1f} us, {self.channels_used} channel(s), {fit}>")

    __repr__ = __str__


def model_nodes(g, board="u55c", clock_mhz: float | None = None, bits: dict | None = None) -> tuple:
    """(timing, nodes): ``g``'s one timing on ``board`` (``g.timing``) and a NodePerf per node with its
    resources (kernels from the cost model, DMA ports, converter and fork logic)."""
    timing = g.timing(board, clock_mhz, bits)
    low = g.lowered()
    members = {n: b for b in low.bundles for n in b}
    dmas = {d.name: d for d in timing.dmas}
    nodes: dict[str, NodePerf] = {}
    for n in low.nodes.values():
        task, res = timing.tasks[n.name], _zero()
        if n.kind == "task":
            rep = timing.kernels[n.name]
            nodes[n.name] = NodePerf(n.name, "task", n.region, task, max(1, int(rep.cycles)), dict(rep.resources))
            continue
        if n.kind in ("load", "store"):
            ports = max(1, math.ceil(dmas[n.name].channels))
            _add(res, DMA_COST, ports if members.get(n.name, (n.name,))[0] == n.name else 0)  # a bundle's ports once
        else:
            _add(res, CONVERTER_LOGIC if n.kind == "converter" else FORK_LOGIC)
        nodes[n.name] = NodePerf(n.name, n.kind, n.region, task, task.latency, res)
    return timing, nodes


def capped_fifos(low, cap: int, cap_bytes: int | None = None) -> dict[str, int]:
    """FIFOs from a load DMA straight into one kernel task: depth ``cap`` is enough (back-pressure only slows the
    DMA); with ``cap_bytes``, as many tokens as fit in that many bytes, at least 2 and at most ``cap``."""
    outs: dict[str, int] = {}
    for f in low.streams:
        outs[f.src] = outs.get(f.src, 0) + 1
    return {f.name: cap if cap_bytes is None else max(2, min(cap, cap_bytes // max(1, f.token_bytes)))
            for f in low.streams
            if low.nodes[f.src].kind == "load" and low.nodes[f.dst].kind == "task" and outs[f.src] == 1}


def model_design(g, board="u55c", clock_mhz: float | None = None, bits: dict | None = None,
                 depths: dict | None = None, partition: bool = True, name: str | None = None) -> DesignPerf:
    """Model ``g`` (a DataflowSchedule) on ``board`` at its current FIFO depths (or ``depths``).

    ``bits``: stored bits per element of some tensors (edge name -> bits) for
    DMA traffic, e.g. ``{"w_fc": 4}`` for 4-bit weights; others move at their
    dtype's width."""
    timing, nodes = model_nodes(g, board, clock_mhz, bits)
    b, clock, low, dmas, used = timing.board, timing.clock_mhz, g.lowered(), timing.dmas, timing.channels_used
    tasks, edges = timing.task_list, timing.edges
    depths = dict(depths) if depths is not None else g.depths(low)
    problems: list[str] = []
    try:
        sim = simulate(tasks, edges, depths)
        cycles = sim.cycles
        bp = {t: c for t, c in sim.backpressure.items() if c and nodes[t].kind not in ("load",)}
        if bp:
            worst = max(bp, key=bp.get)
            problems.append(f"back-pressure on {len(bp)} node(s), worst {worst} ({bp[worst]} cycles): FIFOs too shallow "
                            "for this timing")
    except DeadlockError as err:
        sim, cycles = None, 0
        problems.append(f"deadlock in the token simulator: {err.message}")
    analytic = analytic_cycles(tasks, edges)
    # memory: FIFOs, converters, kernels' local arrays (already in the cost model's resources)
    buffers: list[BufferPerf] = []
    for f in low.streams:
        nb = depths.get(f.name, 2) * f.token_bytes
        st, res = bind_memory(nb)
        buffers.append(BufferPerf(f.name, "fifo", nb, st, res, f.dst))
    for n in low.of_kind("converter"):
        nb = 2 * n.converter.buffer_bytes
        st, res = bind_memory(nb)
        buffers.append(BufferPerf(n.name, "converter", nb, st, res, n.name))
    for n in low.of_kind("task"):
        if n.local_bytes:
            buffers.append(BufferPerf(f"{n.name} (locals)", "kernel", n.local_bytes, "cost model",
                                      {r: 0 for r in RESOURCES}, n.name))
    per_node = {k: dict(v.resources) for k, v in nodes.items()}
    for buf in buffers:
        _add(per_node[buf.owner], buf.resources)
    links = [(f.src, f.dst, f.tokens * f.token_bytes) for f in low.streams]
    links += [("@memory", d.name, d.bytes) if d.direction == "load" else (d.name, "@memory", d.bytes) for d in dmas]
    plan = SlrPlan(per_node, links, b, solve=partition)
    if not plan.fits:
        problems.append("no SLR assignment fits (the MILP is infeasible): the design exceeds the board")
    total = _zero()
    for n, res in per_node.items():
        nodes[n].resources = res
        nodes[n].plan = plan
        _add(total, res)
    for r in RESOURCES:
        if total[r] > b.total[r]:
            problems.append(f"{r.upper()} {total[r]} > {b.total[r]} on the board")
    tb = sum(g.task_buffer_bytes(low).values())
    perf = DesignPerf(name or g.graph.ir.name, b, clock, cycles, sim, analytic, nodes, dmas, buffers, plan, used,
                      depths, tb, problems=problems, schedule=g)
    perf.assumptions = design_assumptions(perf, bits)
    return perf


def design_assumptions(p: DesignPerf, bits: dict | None) -> list[str]:
    mem = p.board.memory
    port_gbs = mem.port_bits / 8 * p.clock_mhz / 1e3
    out = [
        f"clock {p.clock_mhz:g} MHz; kernel cycles from streamdsl.cost.model.estimate (op latencies at 250 MHz "
        "scaled by clock/250, loop control 1 cycle/iteration, 2 ports per memory bank; an fp32 MAC is 5 DSPs)",
        f"memory {mem.kind}: {mem.channels} channels x {mem.channel_gbs:g} GB/s = {mem.total_gbs:g} GB/s; a DMA "
        f"port is {mem.port_bits} bits = {port_gbs:g} GB/s at the clock; a DMA uses one port per channel it holds "
        f"and its data is striped over them; first beat after {DMA_LATENCY} cycles; the data moves at the "
        "channels' rate (the m_axi burst buffer keeps them busy), at most a token a cycle",
        "channels over the whole design (a DMA's channels are its tensor's banks for the whole run): the smallest DMAs (together at most an average channel's bytes) share one unless "
        "their share would make one late for its kernel, the others take channels to make the latest DMA the "
        "least late, then the longest the shortest, these last kept only where they pay: the design's analytic "
        f"latency over 2 % longer without them (allocate_channels; this design: {p.channels_used} of "
        f"{mem.channels})",
        f"buffers: <= {LUTRAM_MAX_BYTES} B LUTRAM (64 bits/LUT), <= {BRAM_MAX_BYTES // 1024} KiB BRAM18K, larger "
        "URAM; kernels' local arrays as the cost model binds them",
        f"DMA engine per port {DMA_COST['lut']} LUT, {DMA_COST['ff']} FF, {DMA_COST['bram']} BRAM18K; converter "
        f"{CONVERTER_LOGIC['lut']} LUT; fork {FORK_LOGIC['lut']} LUT (assumed)",
        "SLRs: scipy.optimize.milp assignment, capacity = the per-SLR split of the board, objective = bytes "
        "crossing SLRs / all bytes + max per-SLR DSP fraction, optimal to HiGHS's 1e-4 relative gap unless "
        "DesignPerf.slr_optimal says its time limit stopped it; DMAs are tied to the memory's SLR by their bytes",
        f"not counted: the emitted HLS's whole-tensor task copies of streams ({p.task_buffer_bytes / 2**20:.2f} MiB; "
        "the streaming design's memory is what the paper's model counts), the platform shell, routing",
        "end-to-end latency: the token-level simulator at the design's FIFO depths; the analytic estimate "
        f"({p.analytic} cycles) ignores FIFO limits and rate mismatch",
    ]
    if bits:
        shown = sorted({v for v in bits.values()})
        out.insert(2, "stored widths for DMA traffic: " + ", ".join(
            f"{v}-bit: {', '.join(sorted(k for k, w in bits.items() if w == v))}" for v in shown))
    return out


__all__ = ["DesignPerf", "PerfError", "SlrPlan", "bind_memory", "capped_fifos", "feasible_assignment", "model_design",
           "model_nodes", "partition_slrs"]
