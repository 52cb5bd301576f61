"""A timing and resource model of a whole dataflow design on a board.

``model_design(g, board)`` takes a :class:`~streamdsl.DataflowSchedule` as it
stands and gives a :class:`DesignPerf`: end-to-end cycles from the token-level
simulator, per-kernel cycles and resources, DMA traffic and HBM channels,
FIFO/converter memory bound to LUTRAM/BRAM/URAM, resources per SLR (an ILP
partition) against the board, and every assumption with its number.

How each part is modeled:

* **Kernels**: :func:`streamdsl.schedule.cost.estimate` of the task's scheduled
  IR at the design clock; the token-sim task spreads those cycles over the
  task's token-moving iterations exactly as :mod:`streamdsl.dataflow.timing`
  does (``II = ceil(cycles / iters)``, ``lat = max(II, deepest pipeline)``).
* **DMAs**: bytes from the tensor's element count at its *stored* width
  (``bits=``: e.g. 4-bit weights; default the dtype's width) over the DMA's
  bandwidth.  Each DMA engine is one 512-bit AXI port per memory channel it
  uses; a channel moves ``Memory.channel_gbs`` (HBM: 14.375 GB/s per
  pseudo-channel, below the 16 GB/s of a 512-bit port at 250 MHz).  The
  channels of a region's DMAs are allocated by :func:`allocate_channels`.
  First-beat latency :data:`streamdsl.dataflow.timing.DMA_LATENCY` cycles.
* **Converters, forks**: as :mod:`streamdsl.dataflow.timing` (they do not
  depend on the board).
* **End to end**: :func:`streamdsl.dataflow.tokensim.simulate` over those
  tasks at the design's FIFO depths (:func:`analytic_cycles` is a coarser
  closed form, used where the explorer ranks many candidates).
* **Memory**: FIFOs (depth x token bytes), ping-pong converters (2 x buffer),
  kernels' local arrays (from the cost model), bound by size
  (:func:`bind_memory`).  The whole-tensor task copies of the emitted HLS
  (``g.task_buffer_bytes()``) are printed apart and *not* counted (as in the
  paper's model; see docs/architecture.md "Not built yet").
* **SLRs**: :func:`partition_slrs` (``scipy.optimize.milp``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..dataflow import fifo as F
from ..dataflow.layout import dtype_bits
from ..dataflow.timing import DMA_LATENCY
from ..dataflow.tokensim import DeadlockError, Edge, SimResult, Task, required_depths, simulate
from ..errors import StreamDSLError
from ..schedule.cost import BOARD_BUDGET, BRAM_BITS, URAM_BITS, estimate
from .boards import RESOURCES, Board, board as get_board

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


# ------------------------------------------------------------------ channels
@dataclass
class DmaModel:
    name: str
    tensor: str
    direction: str
    region: int
    bits: int
    bytes: int  # per run
    tokens: int
    token_bytes: int
    channels: float = 1.0  # memory channels (AXI ports) this DMA uses; < 1: a shared channel
    gbs: float = 0.0
    ii: int = 1
    cycles: int = 0


def allocate_channels(dmas: list[DmaModel], channels: int) -> int:
    """Give each DMA of one region a share of ``channels`` memory channels; returns the channels used.

    Every DMA gets one channel of its own while there are channels; the
    spare channels go one at a time to the DMA with the most bytes per
    channel (its data striped over them, one AXI port each).  With more DMAs
    than channels the smallest share the last channel in proportion to
    their bytes.
    """
    if not dmas:
        return 0
    order = sorted(dmas, key=lambda d: -d.bytes)
    if len(order) > channels:
        own, shared = order[:channels - 1], order[channels - 1:]
        for d in own:
            d.channels = 1.0
        tot = sum(d.bytes for d in shared) or 1
        for d in shared:
            d.channels = max(1e-3, d.bytes / tot)
        return channels
    for d in order:
        d.channels = 1.0
    for _ in range(channels - len(order)):
        best = max(order, key=lambda d: d.bytes / d.channels)
        best.channels += 1.0
    return int(sum(d.channels for d in order))


# ------------------------------------------------------------------ analytic model
def analytic_cycles(tasks: list[Task], edges: list[Edge]) -> int:
    """A closed-form end-to-end estimate without FIFO limits (coarser than the token simulator).

    A task starts when the first token of every input can arrive
    (``start(v) = max start(u) + delay(u, v)``, the delay the LP uses) and ends
    at the later of its own unstalled latency and one token interval after its
    last producer ends.  Rate mismatches inside a path and back-pressure are
    ignored."""
    by = {t.name: t for t in tasks}
    preds: dict[str, list[Edge]] = {t.name: [] for t in tasks}
    succ: dict[str, list[str]] = {t.name: [] for t in tasks}
    indeg = {t.name: 0 for t in tasks}
    for e in edges:
        preds[e.dst].append(e)
        succ[e.src].append(e.dst)
        indeg[e.dst] += 1
    order, todo = [], [n for n, d in indeg.items() if d == 0]
    while todo:
        n = todo.pop()
        order.append(n)
        for m in succ[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                todo.append(m)
    start, end = {}, {}
    for n in order:
        t = by[n]
        s = max((start[e.src] + max(0, e.delay(by[e.src], t)) for e in preds[n]), default=0)
        start[n] = s
        end[n] = max(s + t.latency, max((end[e.src] + t.lat for e in preds[n]), default=0))
    return max(end.values(), default=0)


# ------------------------------------------------------------------ SLR partition
def partition_slrs(nodes: dict[str, dict[str, int]], links: list[tuple[str, str, int]], b: Board,
                   pinned: dict[str, int] | None = None, util: float = 1.0, time_limit: float = 10.0):
    """Assign nodes to SLRs by an ILP (``scipy.optimize.milp``, HiGHS).

    ``nodes``: resources per node; ``links``: (src, dst, bytes) between nodes;
    a link to the name ``"@memory"`` ties a DMA to the SLR its memory
    attaches to.  Constraints: each node on one SLR; per SLR and resource,
    the sum is at most ``util`` x the SLR's capacity.  Objective: bytes
    crossing SLR boundaries (over all bytes) + the largest per-SLR DSP
    fraction (balance).  Returns ({node: slr}, crossing bytes) or None when
    no assignment fits.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import lil_matrix

    S = len(b.slrs)
    names = list(nodes)
    if S == 1:
        fits = all(sum(nodes[n][r] for n in names) <= util * b.slrs[0][r] for r in RESOURCES)
        return ({n: 0 for n in names}, 0) if fits else None
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
    rows = len(names) + S * len(RESOURCES) + 2 * ny + S
    A = lil_matrix((rows, nv))
    lo, hi = np.full(rows, -np.inf), np.zeros(rows)
    r = 0
    for n in names:  # one SLR each
        for s in range(S):
            A[r, X(n, s)] = 1
        lo[r] = hi[r] = 1
        r += 1
    for s in range(S):  # capacity
        for res in RESOURCES:
            for n in names:
                if nodes[n][res]:
                    A[r, X(n, s)] = nodes[n][res]
            hi[r] = util * b.slrs[s][res]
            r += 1
    mem = b.memory_slr
    for e, (u, v, _) in enumerate(links):  # y >= |x_u - x_v|
        for s in range(S):
            for sign in (1, -1):
                A[r, Y(e, s)] = -1
                const = 0.0
                for node, k in ((u, sign), (v, -sign)):
                    if node == "@memory":
                        const += k * (1.0 if s == mem else 0.0)
                    else:
                        A[r, X(node, s)] += k
                hi[r] = -const
                r += 1
    for s in range(S):  # z >= DSP fraction of SLR s
        cap = max(1, b.slrs[s]["dsp"])
        for n in names:
            if nodes[n]["dsp"]:
                A[r, X(n, s)] = nodes[n]["dsp"] / cap
        A[r, Z] = -1
        r += 1
    integrality = np.zeros(nv)
    integrality[:nx] = 1
    lb, ub = np.zeros(nv), np.ones(nv)
    ub[Z] = np.inf
    for n, s in (pinned or {}).items():
        if n in idx:
            for k in range(S):
                ub[X(n, k)] = lb[X(n, k)] = 1.0 if k == s else 0.0
    res = milp(c, constraints=LinearConstraint(A.tocsr(), lo, hi), integrality=integrality, bounds=Bounds(lb, ub),
               options={"time_limit": time_limit})
    if res.x is None:
        return None
    x = res.x
    where = {n: int(np.argmax([x[X(n, s)] for s in range(S)])) for n in names}
    crossing = 0
    for u, v, w in links:
        su = mem if u == "@memory" else where[u]
        sv = mem if v == "@memory" else where[v]
        crossing += w if su != sv else 0
    return where, crossing


# ------------------------------------------------------------------ the design model
@dataclass
class NodePerf:
    name: str
    kind: str
    region: int
    task: Task
    cycles: int  # unstalled cycles of this node (kernel: the cost model's total)
    resources: dict[str, int]
    slr: int = 0
    note: str = ""


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
    slr_use: list[dict[str, int]]
    crossing_bytes: int
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
        t = _zero()
        for s in self.slr_use:
            _add(t, s)
        return t

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
        from ..htmlreport import perf_html

        return perf_html(self)

    def __str__(self) -> str:
        fit = "fits" if self.fits else "does NOT fit: " + "; ".join(self.problems)
        return (f"<DesignPerf {self.name} on {self.board.name} @ {self.clock_mhz:g} MHz: {self.cycles} cycles = "
                f"{self.latency_s * 1e6:.1f} us, {self.channels_used} channel(s), {fit}>")

    __repr__ = __str__


def _kernel_task(name: str, k, iters: int, board_name: str, clock: float) -> tuple[Task, int, dict]:
    rep = estimate(k, board_name if board_name in BOARD_BUDGET else "u55c", clock)
    depth = max((lp.depth for lp in rep.loops if lp.depth is not None), default=0)
    cycles = max(1, int(rep.cycles))
    iters = max(1, iters)
    ii = max(1, math.ceil(cycles / iters))
    return Task(name, iters, ii, max(ii, int(depth))), cycles, dict(rep.resources)


def model_tasks(g, board="u55c", clock_mhz: float | None = None, bits: dict | None = None, low=None):
    """The token-sim tasks and edges of ``g`` on ``board`` (kernels at the clock, DMAs from bytes and channels)."""
    b = get_board(board)
    clock = float(clock_mhz or b.clock_mhz)
    low = low or g.lowered()
    mem = b.memory
    bits = dict(bits or {})
    nodes: dict[str, NodePerf] = {}
    dmas: list[DmaModel] = []
    for n in low.nodes.values():
        if n.kind == "task":
            task, cycles, res = _kernel_task(n.name, g.kernel_ir(n.name), n.sim.iters, b.name, clock)
            nodes[n.name] = NodePerf(n.name, "task", n.region, task, cycles, res)
        elif n.kind in ("load", "store"):
            d = n.dma
            w = int(bits.get(d.tensor, dtype_bits(d.layout.dtype)))
            tb = math.ceil(math.prod(d.layout.element) * w / 8)
            dmas.append(DmaModel(d.name, d.tensor, d.direction, n.region, w, tb * d.layout.num_tokens,
                                 d.layout.num_tokens, tb))
            nodes[n.name] = NodePerf(n.name, n.kind, n.region, n.sim, 0, _zero())
        elif n.kind == "converter":
            res = _zero()
            _add(res, CONVERTER_LOGIC)
            nodes[n.name] = NodePerf(n.name, n.kind, n.region, n.sim, n.sim.latency, res)
        else:
            res = _zero()
            _add(res, FORK_LOGIC)
            nodes[n.name] = NodePerf(n.name, n.kind, n.region, n.sim, n.sim.latency, res)
    used = 0
    for region in sorted({d.region for d in dmas}):
        used = max(used, allocate_channels([d for d in dmas if d.region == region], mem.channels))
    port_gbs = mem.port_bits / 8 * clock / 1e3
    for d in dmas:
        ports = max(1, math.ceil(d.channels))
        gbs = min(ports * port_gbs, d.channels * mem.channel_gbs)
        d.gbs = gbs
        per_cycle = gbs * 1e9 / (clock * 1e6)  # bytes per cycle
        d.ii = max(1, math.ceil(d.token_bytes / per_cycle))
        old = nodes[d.name].task
        nodes[d.name].task = Task(d.name, old.iters, d.ii, DMA_LATENCY, fill=old.fill, drain=old.drain)
        d.cycles = nodes[d.name].task.latency
        nodes[d.name].cycles = d.cycles
        r = _zero()
        _add(r, DMA_COST, ports)
        nodes[d.name].resources = r
    return b, clock, low, nodes, dmas, used


def capped_fifos(low, cap: int) -> dict[str, int]:
    """FIFOs from a load DMA straight into one kernel task: depth ``cap`` is enough (back-pressure only slows the DMA)."""
    outs: dict[str, int] = {}
    for f in low.streams:
        outs[f.src] = outs.get(f.src, 0) + 1
    return {f.name: cap for f in low.streams
            if low.nodes[f.src].kind == "load" and low.nodes[f.dst].kind == "task" and outs[f.src] == 1}


def size_depths(tasks, edges, low, pins: dict[str, int]) -> dict[str, int]:
    """Depths with no back-pressure on any kernel: LP offsets and all-start-at-once peaks; ``pins`` kept."""
    sz = F.size_fifos(tasks, edges, "normal", pinned=pins)
    asap = required_depths(tasks, edges, {})
    out = {}
    for f in low.fifos:
        if f.kind == "dram":
            out[f.name] = 1
        elif f.name in pins:
            out[f.name] = pins[f.name]
        else:
            out[f.name] = max(sz.depths[f.name], asap[f.name])
    return out


def model_design(g, board="u55c", clock_mhz: float | None = None, bits: dict | None = None,
                 depths: dict | None = None, partition: bool = True, name: str | None = None) -> DesignPerf:
    """Model ``g`` (a DataflowSchedule) on ``board`` at its current FIFO depths (or ``depths``).

    ``bits``: stored bits per element of some tensors (edge name -> bits) for
    DMA traffic, e.g. ``{"w_fc": 4}`` for 4-bit weights; others move at their
    dtype's width."""
    b, clock, low, nodes, dmas, used = model_tasks(g, board, clock_mhz, bits)
    tasks = [nodes[n].task for n in low.nodes]
    edges = low.sim_edges()
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
    where, crossing = None, 0
    if partition:
        got = partition_slrs(per_node, links, b)
        if got is None:
            problems.append("no SLR assignment fits (the MILP is infeasible): the design exceeds the board")
        else:
            where, crossing = got
    if where is None:
        where = {n: 0 for n in per_node}
    slr_use = [_zero() for _ in b.slrs]
    for n, res in per_node.items():
        nodes[n].resources = res
        nodes[n].slr = where[n]
        _add(slr_use[where[n]], res)
    total = _zero()
    for s in slr_use:
        _add(total, s)
    for r in RESOURCES:
        if total[r] > b.total[r]:
            problems.append(f"{r.upper()} {total[r]} > {b.total[r]} on the board")
    tb = sum(g.task_buffer_bytes(low).values())
    perf = DesignPerf(name or g.graph.ir.name, b, clock, cycles, sim, analytic, nodes, dmas, buffers, slr_use,
                      crossing, used, depths, tb, problems=problems, schedule=g)
    perf.assumptions = design_assumptions(perf, bits)
    return perf


def design_assumptions(p: DesignPerf, bits: dict | None) -> list[str]:
    mem = p.board.memory
    port_gbs = mem.port_bits / 8 * p.clock_mhz / 1e3
    out = [
        f"clock {p.clock_mhz:g} MHz; kernel cycles from streamdsl.schedule.cost.estimate (op latencies at 250 MHz "
        "scaled by clock/250, loop control 1 cycle/iteration, 2 ports per memory bank; an fp32 MAC is 5 DSPs)",
        f"memory {mem.kind}: {mem.channels} channels x {mem.channel_gbs:g} GB/s = {mem.total_gbs:g} GB/s; a DMA "
        f"port is {mem.port_bits} bits = {port_gbs:g} GB/s at the clock; a DMA uses one port per channel it holds "
        f"and its data is striped over them; first beat after {DMA_LATENCY} cycles",
        "channels per region: one per DMA, spare channels to the DMA with the most bytes per channel "
        f"(this design: {p.channels_used} of {mem.channels})",
        f"buffers: <= {LUTRAM_MAX_BYTES} B LUTRAM (64 bits/LUT), <= {BRAM_MAX_BYTES // 1024} KiB BRAM18K, larger "
        "URAM; kernels' local arrays as the cost model binds them",
        f"DMA engine per port {DMA_COST['lut']} LUT, {DMA_COST['ff']} FF, {DMA_COST['bram']} BRAM18K; converter "
        f"{CONVERTER_LOGIC['lut']} LUT; fork {FORK_LOGIC['lut']} LUT (assumed)",
        "SLRs: scipy.optimize.milp assignment, capacity = the per-SLR split of the board, objective = bytes "
        "crossing SLRs / all bytes + max per-SLR DSP fraction; DMAs are tied to the memory's SLR by their bytes",
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


__all__ = ["DesignPerf", "PerfError", "allocate_channels", "analytic_cycles", "bind_memory", "capped_fifos",
           "model_design", "model_tasks", "partition_slrs", "size_depths"]
