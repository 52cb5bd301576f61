"""The bus-level plan of a lowered design: how each tensor lies in DRAM, how many FIFOs each stream is, what
moving a token costs.  The timing model prices it and the HLS emitter writes it, so the two agree.

* Each tensor a DMA touches has one :class:`~.packing.Packing` (see :mod:`.packing` for the rules).
* A DMA whose layout is its tensor's packing reads or writes one word a beat (*aligned*); one whose beats do
  not fall on whole words (a layout the packing does not follow) moves a word a value.
* A DMA that is its tensor's only one, aligned and not placed, gets ``P`` ports and its stream ``P`` FIFOs:
  the largest divisor of its beats per token within the channels the allocation gave it, so beat ``j`` of a
  token travels on FIFO ``j % P`` and its words lie in buffer ``j % P`` (:meth:`.packing.Packing.split`).
* The load of an input a store writes in place (a KV cache the new rows' store writes), which keeps one port,
  but feeds a task whose pipeline takes a token an iteration (:attr:`.access.StepTables.piped`) spreads each
  token over as many FIFOs as it has beats, beat ``j`` on FIFO ``j``: the port still moves a word a cycle,
  and the pipeline takes a token a cycle of what the DMA has read ahead into the FIFOs.
  Every other stream is one FIFO.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ..types import TensorType
from .itensor import ITensor
from ..errors import ScheduleError
from .packing import BUS_BITS, Beats, Packing, beats_of, partitions, rows

MOVE_DEPTH = 2  # pipeline depth of a beat loop: a FIFO read (or write) and a buffer write (or read)


@dataclass
class StreamPlan:
    packings: dict[str, Packing] = field(default_factory=dict)  # tensor -> its DRAM packing
    dma_lanes: dict[str, int] = field(default_factory=dict)  # DMA node -> its stream's FIFOs
    dma_ports: dict[str, int] = field(default_factory=dict)  # DMA node -> its m_axi ports (its FIFOs, or one)
    aligned: dict[str, bool] = field(default_factory=dict)  # DMA node -> a word a beat
    lanes: dict[str, int] = field(default_factory=dict)  # FIFO -> FIFOs side by side
    beats: dict[str, Beats] = field(default_factory=dict)  # FIFO -> the beats of its tokens
    ports: dict[str, int] = field(default_factory=dict)  # tensor -> its m_axi ports (its words split over them)
    pinned: frozenset = frozenset()  # DMA nodes whose ports g.ports set

    def token_cycles(self, fifo: str) -> int:
        """Cycles one token of ``fifo`` takes to move (its beats over its FIFOs, one a FIFO a cycle)."""
        return self.beats[fifo].cycles(self.lanes[fifo])

    def dma_words(self, n) -> float:
        """Words a DMA moves per token: its beats (a share of one when several tokens lie in a word), or a word
        per value when its beats do not lie whole in words."""
        bt = beats_of(n.dma.layout)
        if not self.aligned[n.name]:
            return bt.values
        return bt.beats / self.packings[n.dma.tensor].per_word if n.dma.layout == self.packings[n.dma.tensor].layout \
            else bt.beats


def _extended(layout: ITensor, axis: int, extent: int) -> ITensor:
    """``layout`` over an array ``extent`` long along data dim ``axis`` (more tiles along that dim)."""
    k = layout.map[axis]
    trips = list(layout.trips)
    trips[k] = extent // layout.element[axis] if layout.steps[k] == layout.element[axis] else trips[k]
    return ITensor(layout.dtype, layout.element, tuple(trips), layout.steps, layout.map)


def tensor_packings(low, placements: dict) -> dict[str, Packing]:
    """The DRAM packing of every tensor a DMA of ``low`` reads or writes (``placements``: ``g.placements()``)."""
    dmas: dict[str, list] = {}
    for n in low.nodes.values():
        if n.dma is not None:
            dmas.setdefault(n.dma.tensor, []).append(n.dma)
    out: dict[str, Packing] = {}

    def own(tensor: str) -> Packing:
        ds = dmas[tensor]
        d = next((x for x in ds if x.direction == "load"), ds[0])
        t = d.tensor_type
        return Packing(t, d.layout if partitions(d.layout, t) else rows(t))

    for tensor, ds in dmas.items():
        place = placements.get(tensor)
        if place is None:
            out[tensor] = own(tensor)
            continue
        t = ds[0].tensor_type
        full = TensorType(t.dtype, place.full_shape(t.shape))
        into = getattr(place, "into", None)
        if into is not None and into in dmas:
            src = own(into)
            out[tensor] = Packing(full, src.layout) if tuple(src.tensor_type.shape) == tuple(full.shape) else Packing(full, rows(full))
            continue
        lay = ds[0].layout
        ext = _extended(lay, place.axis, place.extent) if place.extent % lay.element[place.axis] == 0 else None
        out[tensor] = Packing(full, ext if ext is not None and partitions(ext, full) else rows(full))
    return out


def _slots(pos: np.ndarray, layout: ITensor, shift: tuple[int, ...]) -> np.ndarray:
    """Slots (word * values a word + value) of every value ``layout`` moves, in stream order, its tiles moved
    by ``shift`` in the tensor whose slots are ``pos`` (``Packing.positions`` in the tensor's shape):
    ``[tokens, values a token]``."""
    shape = pos.shape
    it = layout
    grids = np.indices(tuple(it.trips)).reshape(len(it.trips), -1)  # iteration indices, stream order
    offs = [grids[it.map[d]] * it.steps[it.map[d]] for d in range(len(shape))]
    inner = np.indices(tuple(it.element)).reshape(len(shape), -1)
    idx = [offs[d][:, None] + inner[d][None, :] + shift[d] for d in range(len(shape))]
    return pos[tuple(idx)]


BURST_WORDS = 4096 * 8 // BUS_BITS
"""Words of the longest AXI burst a port issues (4 KB, the boundary a burst may not cross)."""


@functools.lru_cache(maxsize=1024)
def aligned(p: Packing, layout: ITensor, axis: int | None = None, load: bool = True) -> bool:
    """Does every beat of ``layout``'s tokens lie in one word of ``p``, its values side by side from its first
    slot (for every offset of a placed store along ``axis``)?  A store moves whole words: its beats must each
    fill one from its first slot.  Remembered by value (its arguments are immutable): every design an
    exploration models plans the same DMAs again, and a placed store checks each offset of its rows."""
    if layout == p.layout:
        return load or p.per_word == 1
    per = BUS_BITS // p.bits
    bt = beats_of(layout)
    if math.prod(layout.tensor_shape) > 1 << 22:
        return False  # too large to check value by value: moved a value a word
    shifts = [0] if axis is None else range(p.layout.element[axis])
    flat = p.positions()
    pos = flat.reshape(tuple(p.tensor_type.shape))
    held = None if load else np.bincount(flat // per, minlength=p.words)  # data slots each word holds
    for s in shifts:
        shift = tuple(s if d == axis else 0 for d in range(len(layout.element)))
        if axis is not None and layout.tensor_shape[axis] + s > p.tensor_type.shape[axis]:
            continue
        slots = _slots(pos, layout, shift)
        pad = (-slots.shape[1]) % bt.lanes
        if pad:
            slots = np.concatenate([slots, np.full((slots.shape[0], pad), -1)], axis=1)
        beats = slots.reshape(slots.shape[0], -1, bt.lanes)
        first = beats[:, :, :1]
        want = first + np.arange(bt.lanes)
        ok = (beats == want) | (beats < 0)
        start = first % per
        if load:
            fits = (start % bt.lanes == 0) & (start + bt.lanes <= per)
        else:  # a store writes the whole word: the beat must be all the data the word holds
            valid = (beats >= 0).sum(axis=2, keepdims=True)
            fits = (start == 0) & (held[first // per] == valid)
        if not (ok.all() and fits.all()):
            return False
    return True


def stream_plan(low, placements: dict, channels: dict[str, float], ports: dict | None = None) -> StreamPlan:
    """The plan of ``low`` when its DMAs hold ``channels`` (DMA node -> channels the allocation gave it);
    ``ports``: tensor -> (ports, where ``g.ports`` asked) for the tensors whose ports the schedule sets."""
    ports = ports or {}
    plan = StreamPlan(tensor_packings(low, placements))
    per_tensor: dict[str, int] = {}
    for n in low.nodes.values():
        if n.dma is not None:
            per_tensor[n.dma.tensor] = per_tensor.get(n.dma.tensor, 0) + 1
    written = {getattr(place, "into", None) for place in placements.values()}  # inputs a store writes in place
    for place in placements.values():  # a store into an input's buffer: that input's words are shared
        if getattr(place, "into", None) in per_tensor:
            per_tensor[place.into] += 1
    for n in low.nodes.values():
        if n.dma is None:
            continue
        d, p = n.dma, plan.packings[n.dma.tensor]
        place = placements.get(d.tensor) if n.kind == "store" else None
        plan.aligned[n.name] = aligned(p, d.layout, place.axis if place is not None else None, n.kind == "load")
        bt = beats_of(d.layout)
        lanes = 1
        splits = per_tensor[d.tensor] == 1 and place is None and d.layout == p.layout and p.per_word == 1
        if d.tensor in ports:
            want, loc = ports[d.tensor]
            if want != 1 and not (splits and bt.beats % want == 0):
                why = ("its tokens are " + ("one word" if bt.beats == 1 else f"{bt.beats} words") +
                       f", not a multiple of {want}" if splits else
                       "it is read or written by more than one DMA, placed, or not moved in its own layout's words")
                raise ScheduleError(f"'{d.tensor}' cannot move over {want} ports: {why}", loc,
                                 hint="ports must divide the words of a token of the tensor's one DMA; 1 always works")
            lanes = want
            plan.pinned |= {n.name}
        elif splits:
            cap = max(1, math.ceil(channels.get(n.name, 1.0) - 1e-9))
            # a port moves at least one longest AXI burst (UG1399: bursts stop at 4 KB): fewer words do not pay
            # for another m_axi adapter
            cap = min(cap, max(1, d.layout.num_tokens * bt.beats // BURST_WORDS))
            lanes = max(x for x in range(1, min(cap, bt.beats) + 1) if bt.beats % x == 0)
        plan.dma_ports[n.name] = lanes
        if lanes == 1 and n.kind == "load" and d.tensor in written and d.layout == p.layout and p.per_word == 1 \
                and _piped(low, n):
            lanes = bt.beats  # one port, a token's beats side by side in FIFOs (module doc)
        plan.dma_lanes[n.name] = lanes
    for f in low.streams:
        plan.beats[f.name] = beats_of(f.layout)
    by_dst = {f.dst: f for f in low.streams}

    def lanes_of(f) -> int:
        src = low.nodes[f.src]
        if src.kind == "load":
            return plan.dma_lanes[src.name]
        if src.kind == "fork":
            return lanes_of(by_dst[src.name])
        dst = low.nodes[f.dst]
        return plan.dma_lanes[dst.name] if dst.kind == "store" else 1

    for f in low.streams:
        plan.lanes[f.name] = lanes_of(f)
    for f in low.streams:  # a load's FIFOs that end in a store read with one lane: the load takes one too
        dst = low.nodes[f.dst]
        if dst.kind == "store" and plan.lanes[f.name] != plan.dma_lanes[dst.name]:
            plan.dma_lanes[dst.name] = plan.dma_ports[dst.name] = plan.lanes[f.name] = 1
    for n in low.nodes.values():
        if n.dma is not None:
            plan.ports[n.dma.tensor] = max(plan.ports.get(n.dma.tensor, 1), plan.dma_ports[n.name])
    return plan


def _piped(low, n) -> bool:
    """Does load ``n``'s one stream go straight to a task whose pipeline takes a token of it an iteration?"""
    out = [f for f in low.streams if f.src == n.name]
    if len(out) != 1 or low.nodes[out[0].dst].kind != "task":
        return False
    task = low.nodes[out[0].dst]
    return any(p in task.tables.piped for p in task.ports.get(out[0].edge, ()))


def buffer_ii(values_per_cycle: int, shape: tuple[int, ...], parts, tile: tuple[int, ...] | None = None) -> int:
    """II of a loop that writes (or reads) ``values_per_cycle`` consecutive values of a token a cycle into a buffer
    of ``shape``: the cost model's two ports per bank, over the banks those values fall in (``parts``: the
    buffer's partitions, ``(dim, kind, factor)`` with dim 0 for all dims).  The values run along the token's
    ``tile`` (default: the buffer's shape), innermost dim first: a column tile of a matrix whose rows are
    partitioned falls in as many banks as it has values."""
    tile = tuple(shape) if tile is None else tuple(tile)
    banks, span = 1, values_per_cycle
    for d in range(len(shape), 0, -1):  # innermost first: the values run along it, then into the next dims
        n = min(shape[d - 1], tile[d - 1])
        if span <= 1:
            break
        f = 1
        for dim, kind, factor in parts:
            if dim in (0, d):
                f = shape[d - 1] if kind == "complete" else (factor if kind == "cyclic" else 1)
        banks *= max(1, min(f, span, n))
        span = -(-span // n)
    return max(1, -(-values_per_cycle // (2 * banks)))


__all__ = ["MOVE_DEPTH", "StreamPlan", "aligned", "buffer_ii", "stream_plan", "tensor_packings"]
