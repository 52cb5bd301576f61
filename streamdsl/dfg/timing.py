"""The one timing model of a lowered dataflow design on a board.

The token simulator (:mod:`.tokensim`) needs, per node, a :class:`Task`
``(iters, ii, lat, fill, drain)``.  The paper gets these numbers by running
the vendor HLS tool; streamdsl derives them from its own per-kernel model
(:func:`streamdsl.cost.model.estimate`) of the *scheduled* IR on the board
at its clock, and from the board's memory channels for the DMAs.
:func:`design_timing` builds them once per (design, board, clock, widths);
``g.simulate()``, ``g.size_fifos()``, the HLS FIFO order and
``model_design(g)`` all read that one :class:`DesignTiming`, so they agree.

The mapping, and why:

* **Kernel task.**  Its loop nest decides when each token moves
  (:mod:`.access`): one step per iteration of a top-level loop, each token
  read before the first step that needs it and written after the last step
  that writes it.  ``iters`` = those iterations, spread evenly over the
  model's total cycles (:func:`spread`).  ``fill = drain = 0`` (the explicit
  per-edge schedules say which iterations move tokens).
* **Layout converter.**  Reads ``T_in`` tokens and writes ``T_out``; its
  buffer holds one block of the loops it shares with both sides (``B`` =
  product of the shared trip counts; ``B = 1`` when the buffer is the whole
  tensor).  With ``N = max(T_in, T_out)`` and ``lag = N / B``: ``iters = N +
  lag``, ``fill = drain = lag``, ``II = 1``, ``lat = 2`` (a buffer read).
  Reads are spread over the first ``N`` iterations and writes over the last
  ``N``, so every output token waits for the whole block it comes from, and
  with ping-pong buffers the next block fills while the previous one drains.
* **Fork.**  One token in, one out to every branch per cycle.
* **DMA.**  Its bytes at the tensor's stored width (``bits``) over the memory
  channels :func:`.channels.allocate_channels` gives it (each channel moves
  ``Memory.channel_gbs``, at most one 512-bit port's worth a cycle), first
  beat after :data:`.channels.DMA_LATENCY` cycles (:func:`.channels.dma_timing`).
  A store writes its "done" token to the loads that read the tensor back
  (``fill = iters - 1``), so a region that reads a tensor through DRAM starts
  only after the region that wrote it has finished.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field

from ..boards import Board, board as get_board
from ..cost.model import KernelReport, estimate
from ..ir.memo import IdentityMemo
from ..ir.nodes import Alloc, Kernel, Ref, Return, walk
from .channels import (DMA_LATENCY, DmaModel, allocate_channels, analytic_cycles, bundle_unit, dma_timing,
                       dma_windows)
from .itensor import Converter
from .layout import dtype_bits
from .packing import BUS_BITS, WORD_BYTES, beats_of
from .streamplan import StreamPlan, stream_plan
from .tasks import task_ir
from .tokensim import Edge, Task

CONVERTER_LATENCY = 2
FORK_LATENCY = 1

_ESTIMATE = IdentityMemo(estimate, 2048)  # kernel IR (+ board, clock) -> its report: explored designs share kernels


def spread(name: str, cycles: int, depth: int, iters: int) -> Task:
    """A kernel of ``cycles`` (its deepest pipeline ``depth``) as ``iters`` evenly spaced iterations: the
    nearest whole II to ``(cycles - depth) / (iters - 1)`` (the one below when the one above would make the
    task outlast ``cycles``) and the latency that makes the task take ``cycles`` (at least a cycle a token:
    one FIFO read or write a cycle)."""
    iters = max(1, iters)
    if iters > 1 and cycles > depth:
        exact = (cycles - depth) / (iters - 1)
        ii = max(1, round(exact))
        if (iters - 1) * ii >= cycles:  # rounded up, the task would outlast its cycles: round down
            ii = max(1, math.floor(exact))
    else:
        ii = max(1, cycles // iters)
    return Task(name, iters, ii, max(1, cycles - (iters - 1) * ii))


def kernel_report(k: Kernel, board, clock_mhz: float) -> KernelReport:
    """The cost model's report of kernel ``k`` (remembered per IR object, board and clock)."""
    return _ESTIMATE(k, board, clock_mhz)


def kernel_task(name: str, rep: KernelReport, iters: int) -> Task:
    """``iters``: the task's token-moving iterations (:attr:`.access.StepTables.iterations`)."""
    depth = max((lp.depth for lp in rep.loops if lp.depth is not None), default=0)
    return spread(name, max(1, int(rep.cycles)), int(depth), iters)


def converter_task(name: str, cv: Converter, token_cycles: int = 1) -> Task:
    """``token_cycles``: cycles a token's beats take on the slower side."""
    tin, tout = cv.src.num_tokens, cv.dst.num_tokens
    n = max(tin, tout)
    blocks = math.prod(cv.src.trips[d] for d in cv.shared) if cv.shared else 1
    lag = max(1, n // blocks)
    return Task(name, n + lag, max(1, token_cycles), CONVERTER_LATENCY, fill=lag, drain=lag)


def fork_task(name: str, tokens: int, token_cycles: int = 1) -> Task:
    """One token in and out to every branch a ``token_cycles`` (its beats)."""
    return Task(name, max(1, tokens), max(1, token_cycles), FORK_LATENCY)


def local_bytes(k: Kernel) -> int:
    """On-chip scratch memory of a kernel: local tensors it does not return (results stream out)."""
    returned = {v.name for s in k.body if isinstance(s, Return) for v in s.values if isinstance(v, Ref)}
    total = 0
    for n in (n for s in k.body for n in walk(s)):
        if isinstance(n, Alloc) and n.name not in returned:
            total += n.type.size * dtype_bits(n.type.dtype) // 8
    return total


@dataclass
class DesignTiming:
    """The token-sim timing of one lowered design on one board: a Task per node (in the lowering's order),
    the edges, every DMA with its channels, and the cost model's report of every kernel task."""

    board: Board
    clock_mhz: float
    bits: tuple[tuple[str, int], ...]  # (tensor, stored bits) overriding a tensor's dtype width for DMA traffic
    tasks: dict[str, Task]
    edges: list[Edge]
    dmas: list[DmaModel] = field(default_factory=list)
    channels_used: int = 0
    kernels: dict[str, KernelReport] = field(default_factory=dict)  # the cost model's report of each process
    plan: StreamPlan | None = None  # packings, FIFOs and beats (:mod:`.streamplan`)
    processes: dict[str, Kernel] = field(default_factory=dict)  # each kernel task's process (:mod:`.tasks`)

    @property
    def task_list(self) -> list[Task]:
        return list(self.tasks.values())

    def __getitem__(self, node: str) -> Task:
        return self.tasks[node]

    @property
    def assumptions(self) -> list[str]:
        mem = self.board.memory
        return [f"{self.board.name} at {self.clock_mhz:g} MHz: kernels from the cost model of their scheduled IR; "
                f"DMAs over {mem.kind} channels of {mem.channel_gbs:g} GB/s ({self.channels_used} of "
                f"{mem.channels} used), first beat after {DMA_LATENCY} cycles"]


def design_timing(low, kernel_ir, board="u55c", clock_mhz: float | None = None, bits: dict | None = None,
                  placements: dict | None = None, ports: dict | None = None) -> DesignTiming:
    """The timing of lowered design ``low`` (``kernel_ir(task)``: a task's scheduled IR) on ``board``
    (``placements``: ``g.placements()``, where results are stored in place; ``ports``: tensor -> (ports,
    location) that ``g.ports`` set)."""
    b = get_board(board)
    clock = float(clock_mhz or b.clock_mhz)
    bits = dict(bits or {})
    placements = dict(placements or {})
    tasks: dict[str, Task] = {}
    dmas: list[DmaModel] = []
    first = stream_plan(low, placements, {}, ports)  # packings and alignment do not depend on the channels
    for n in low.nodes.values():
        if n.kind == "task":  # the kernel alone, to find the DMAs' windows; its process is priced below
            tasks[n.name] = kernel_task(n.name, kernel_report(kernel_ir(n.name), b, clock), n.iters)
        elif n.kind in ("converter", "fork"):
            tasks[n.name] = Task(n.name, n.iters, 1, 1)
        else:  # a DMA: its task is set once its channels are known
            d = n.dma
            w = int(bits.get(d.tensor, dtype_bits(d.layout.dtype)))
            bt = beats_of(d.layout)
            if w != dtype_bits(d.layout.dtype):  # a stored width other than the dtype's (a what-if of bits=)
                words = math.ceil(bt.values * w / BUS_BITS) if first.aligned[n.name] else bt.values
            else:
                words = first.dma_words(n)
            tokens = d.layout.num_tokens
            tb = max(1, math.ceil(words * WORD_BYTES))
            dmas.append(DmaModel(d.name, d.tensor, d.direction, n.region, w, tb * tokens, tokens, tb))
            tasks[n.name] = Task(n.name, tokens, 1, 1, fill=tokens - 1 if d.direction == "store" else 0)
    edges = low.sim_edges()
    used = _allocate(low, b, clock, tasks, edges, dmas)
    plan = stream_plan(low, placements, {d.name: d.channels for d in dmas}, ports)
    used = _dma_tasks(b, clock, tasks, dmas, plan, low)
    kernels: dict[str, KernelReport] = {}
    processes: dict[str, Kernel] = {}
    for n in low.nodes.values():
        if n.kind == "task":
            processes[n.name] = process_ir(low, n, kernel_ir(n.name), plan)
            kernels[n.name] = kernel_report(processes[n.name], b, clock)
            tasks[n.name] = kernel_task(n.name, kernels[n.name], n.iters)
        elif n.kind == "converter":
            (fin,) = [f for f in low.streams if f.dst == n.name]
            fout = next(f for f in low.streams if f.src == n.name)
            tasks[n.name] = converter_task(n.name, n.converter, max(plan.token_cycles(fin.name),
                                                                    plan.token_cycles(fout.name)))
        elif n.kind == "fork":
            (fin,) = [f for f in low.streams if f.dst == n.name]
            tasks[n.name] = fork_task(n.name, n.iters, plan.token_cycles(fin.name))
    return DesignTiming(b, clock, tuple(sorted(bits.items())), tasks, edges, dmas, used, kernels, plan, processes)


_PROCESSES: "OrderedDict[tuple, tuple]" = OrderedDict()  # the processes explored designs share


def process_ir(low, n, k: Kernel, plan) -> Kernel:
    """Task ``n``'s process (:func:`.tasks.task_ir`) with the bus plan's beats and FIFOs (remembered: the
    designs an exploration tries share most of their tasks)."""
    fifos = {f.edge: f for f in low.streams if f.dst == n.name or f.src == n.name}
    t_in = [e for e in dict.fromkeys(n.ports) if e in fifos and fifos[e].dst == n.name]
    t_out = [e for e in dict.fromkeys(n.ports) if e in fifos and fifos[e].src == n.name]
    key = (id(k), n.name, n.tables.windows, tuple((e, f.name, plan.lanes[f.name], plan.beats[f.name])
                                                  for e, f in sorted(fifos.items())))
    hit = _PROCESSES.get(key)
    if hit is not None and hit[0] is k and hit[1] is n.tables:
        _PROCESSES.move_to_end(key)
        return hit[2]
    ir = task_ir(k, n, plan, fifos, t_in, t_out)
    _PROCESSES[key] = (k, n.tables, ir)
    if len(_PROCESSES) > 2048:
        _PROCESSES.popitem(last=False)
    return ir


PAYS = 1.02  # channels beyond the fewest are kept when the design is that much slower without them (2 %)


def _allocate(low, b: Board, clock: float, tasks: dict[str, Task], edges: list[Edge], dmas: list[DmaModel]) -> int:
    """Give the DMAs their channels (a bundle as one DMA) and their timing; returns the channels used.

    Channels go only where they pay: each DMA first takes the fewest that keep it within its window (the
    cycles it may take without delaying the design) or, where none can, the least late; the spare channels
    (:func:`allocate_channels`: the longest DMA time shortest, then the most cycles saved) are kept only when
    the design's analytic latency is more than 2 % longer without them (a small design's 8 KiB load on 12
    channels saved a fraction of a percent of its time)."""
    mem = b.memory
    port_gbs = mem.port_bits / 8 * clock / 1e3
    per_channel = min(port_gbs, mem.channel_gbs) * 1e3 / clock  # bytes per cycle
    windows = dma_windows(list(tasks.values()), edges, dmas)
    by_name = {d.name: d for d in dmas}
    members = {n for bundle in low.bundles for n in bundle}
    units = [d for d in dmas if d.name not in members]
    bundles = [[by_name[n] for n in bundle] for bundle in low.bundles]
    for ds in bundles:
        u = bundle_unit(ds)
        windows[u.name] = max(windows[d.name] for d in ds)
        units.append(u)

    def allocate(spare: bool) -> tuple[int, int]:
        """(channels used, the design's analytic cycles) with every DMA timed at its allocation."""
        # over the whole design, not a region at a time: a DMA's channels are the banks its tensor lives in for
        # the whole run (the build gives a port with channels of its own its own bank range), so DMAs of regions
        # that run one after another cannot reuse each other's
        used = allocate_channels(units, mem.channels, per_channel, windows, spares=spare)
        for ds, u in zip(bundles, units[len(units) - len(bundles):]):
            for d in ds:
                d.channels = u.channels
        for d in dmas:
            ports = max(1, math.ceil(d.channels))
            d.gbs = min(ports * port_gbs, d.channels * mem.channel_gbs)
            old = tasks[d.name]
            d.ii, lat = dma_timing(old.iters, d.token_bytes, d.gbs * 1e9 / (clock * 1e6))
            tasks[d.name] = Task(d.name, old.iters, d.ii, lat, fill=old.fill, drain=old.drain)
            d.cycles = tasks[d.name].latency
        return used, analytic_cycles(list(tasks.values()), edges)

    _, fewest = allocate(spare=False)
    used, full = allocate(spare=True)  # what a design bound by its DMAs keeps: no third allocation for it
    if fewest <= full * PAYS:
        used, _ = allocate(spare=False)
    return used


def _dma_tasks(b: Board, clock: float, tasks: dict[str, Task], dmas: list[DmaModel], plan, low) -> int:
    """Each DMA's token-sim task: its words at the rate of its ports (one a port, one a memory channel, a
    cycle at most each), a shared channel at its share; returns the channels the DMAs hold then."""
    mem = b.memory
    port_gbs = mem.port_bits / 8 * clock / 1e3
    for d in dmas:
        if d.name in plan.pinned and plan.dma_ports[d.name] > 1:  # g.ports: a channel a port, as they ask
            d.channels = float(plan.dma_ports[d.name])
        elif d.name in plan.pinned:  # one port: what the allocation gave it, a channel at most
            d.channels = min(d.channels, 1.0)
        elif d.channels >= 1:  # its own channels: one a port, as many as it has ports
            d.channels = float(min(math.ceil(d.channels - 1e-9), plan.dma_ports[d.name]))
        ports = max(1, math.ceil(d.channels - 1e-9))
        d.gbs = min(ports * port_gbs, d.channels * mem.channel_gbs)
        old = tasks[d.name]
        d.ii, lat = dma_timing(old.iters, d.token_bytes, d.gbs * 1e9 / (clock * 1e6))
        tasks[d.name] = Task(d.name, old.iters, d.ii, lat, fill=old.fill, drain=old.drain)
        d.cycles = tasks[d.name].latency
    members = {n: bundle[0] for bundle in low.bundles for n in bundle}  # a bundle's DMAs hold one set of channels
    mine = [d for d in dmas if members.get(d.name, d.name) == d.name]  # the whole design's: see _allocate
    return sum(math.ceil(d.channels - 1e-9) for d in mine if d.channels >= 1) + (1 if any(d.channels < 1 for d in mine)
                                                                                  else 0)


__all__ = ["CONVERTER_LATENCY", "DMA_LATENCY", "DesignTiming", "FORK_LATENCY", "converter_task", "design_timing",
           "fork_task", "kernel_report", "kernel_task", "local_bytes", "spread"]
