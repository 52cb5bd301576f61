"""The design space: a :class:`Config` names one design of a dataflow function, :func:`build_design` builds it.

A design is every task's kernel recipe (:mod:`.recipes`: loop order, unroll factor, float sums split,
operators moved), one default tile for every stream (the outermost data dim in tiles of 1, the others
whole), the fusion (one region, the paper's greedy algorithm 2 under an on-chip memory cap, or one region a
kernel), the inputs bundled in need order, and the depths of the FIFOs from the weight DMAs
(:func:`dma_caps`, pinned by :func:`size_for_board`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..dfg.dfschedule import DataflowSchedule
from ..dfg.fifo import design_depths
from ..dfg.graph import DataflowFunction
from ..dfg.order import bundle_in_need_order, stream_in_read_order
from ..errors import ScheduleError
from ..perf.model import capped_fifos
from .search import SEARCH, Search

PREFETCH = (1.0, 0.5, 0.25)  # fractions of the weight FIFOs' run-ahead depth tried, largest first
DMA_FIFO_CAP = 16  # tokens of a FIFO from a load DMA into one kernel, at most DMA_FIFO_BYTES of them
DMA_FIFO_BYTES = 16 * 2**10


@dataclass(frozen=True)
class Config:
    """One design of a dataflow function (the unset fields: the design as the function gives it)."""

    tile: bool = True  # every stream in the default tile (else the layouts of the schedule given)
    reorder: bool = True  # the recipe's loop order for the streams (recipes.reorder_for_streams)
    unroll: tuple[tuple[str, int], ...] = ()  # (task, unroll factor), 1 where not given
    reorder: bool = True
    unroll: tuple[tuple[str, int], ...] = ()
    fusion: str = "all"  # "all" | "greedy" | "none"
    prefetch: float = 0  # weight FIFOs deep enough for their DMAs to run ahead of the kernels (1), or a fraction
    dsp: tuple[str, ...] = ()  # tasks whose narrow multiplies are bound to DSPs (bind_narrow_muls)
    fabric: tuple[str, ...] = ()  # tasks whose float adds are bound to LUTs (bind_float_adds)
    split: tuple[str, ...] = ()  # tasks whose float sums unrolled in a pipeline are split (split_sums)
    bundle: bool = True  # the layer's inputs read by one DMA process in need order (order.bundle_in_need_order)

    def factor(self, task: str) -> int:
        return dict(self.unroll).get(task, 1)


def _default_tile(shape) -> tuple[int, ...]:
    return (1,) + tuple(shape[1:])


def build_design(fn: DataflowFunction, cfg: Config, base: DataflowSchedule | None = None,
                 cap_bytes: int | None = None, search: Search | None = None) -> DataflowSchedule:
    """The design ``cfg`` of ``fn``; ``base``: the schedule given (its layouts kept when ``cfg.tile`` is off,
    its stores' placements always); ``cap_bytes``: greedy fusion's on-chip memory cap; ``search``: what
    remembers the kernels' recipes (:data:`.search.SEARCH`)."""
    search = SEARCH if search is None else search
    g = DataflowSchedule(fn)
    for t in g.tasks():
        search.schedule_task(g.schedule(t), cfg, t.name)
    for e in g.edges():
        node = g.graph.edges[e.name]
        if base is not None and not cfg.tile:
            if not node.is_input:
                g.stream(e, itensor=base.layout(e.name), side="producer")
            for c, _ in node.consumers:
                g.stream(e, itensor=base.layout(e.name, c), side=g.task(c))
        elif cfg.tile and node.type.rank >= 2:
            try:
                g.stream(e, tile=_default_tile(node.type.shape))
            except ScheduleError:
                pass
    if base is not None:  # where results are stored, and the ports pinned, are the interface's, not the explorer's
        for e, place in base.placements().items():
            g.store_at(g.edge(e), place.offset, place.axis, place.extent,
                       into=g.edge(place.into) if place.into is not None else None)
        for e, n in base.pinned_ports().items():
            g.ports(g.edge(e), n)
    stream_in_read_order(g)
    if cfg.fusion == "all":
        g.fuse(*g.tasks())
    elif cfg.fusion == "greedy":
        g.auto_fuse(cap_bytes or 41 * 2**20)
    if cfg.bundle:
        bundle_in_need_order(g)
    return g


def dma_caps(low, prefetch: float, timing=None) -> dict[str, int]:
    """Pinned depths of the FIFOs from a load DMA into one kernel: 16 KiB of tokens, 2 to 16 (``prefetch`` 0), none (1: deep
    enough for the DMA to run ahead without back-pressure), or that fraction of the no-back-pressure depth
    (at least 2) at ``timing`` (the design's timing on the board)."""
    if prefetch >= 1:
        return {}
    caps = capped_fifos(low, DMA_FIFO_CAP, DMA_FIFO_BYTES)
    if prefetch <= 0:
        return caps
    full = design_depths(timing.task_list, timing.edges, low.fifos).depths
    return {n: max(d, math.ceil(prefetch * full[n])) for n, d in caps.items()}


def size_for_board(g: DataflowSchedule, board, clock_mhz=None, bits=None, prefetch: float = 0) -> dict[str, int]:
    """Pin ``g``'s DMA FIFOs (:func:`dma_caps`) and size the others for its timing on ``board``."""
    timing = g.timing(board, clock_mhz, bits)
    low = g.lowered()
    handles = {h.name: h for h in g.fifos()}
    for n, d in dma_caps(low, prefetch, timing).items():
        g.fifo(handles[n], d)
    g.size_fifos(board=board, clock_mhz=clock_mhz, bits=bits)
    return g.depths()


