"""HBM/DDR channels for a design's DMAs, and the closed-form timing their allocation needs.

A DMA engine is one 512-bit AXI port per memory channel it holds (its data
striped over them); :func:`allocate_channels` decides how many each DMA of a
design gets, :func:`dma_timing` what that makes of its token-sim task.  Part of
the one timing model (:mod:`.timing`), so the token simulator, FIFO sizing,
the HLS FIFO order and the performance model all see the same DMAs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .tokensim import Edge, Task

DMA_LATENCY = 64  # cycles from a DMA's request to its first beat (assumed HBM latency at 250 MHz)


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
    parts: tuple[tuple[int, int], ...] = ()  # a bundle: (tokens, token bytes) of each DMA it runs in turn


def bundle_unit(ds: list[DmaModel]) -> DmaModel:
    """What the channel allocation sees of a bundle: one DMA moving every member's tokens in turn."""
    return DmaModel("+".join(d.name for d in ds), "+".join(d.tensor for d in ds), "load", ds[0].region,
                    max(d.bits for d in ds), sum(d.bytes for d in ds), sum(d.tokens for d in ds),
                    max(d.token_bytes for d in ds), parts=tuple((d.tokens, d.token_bytes) for d in ds))


def _share(d: DmaModel, shared: list[DmaModel]) -> float:
    """The average share of one channel DMA ``d`` gets among ``shared`` served round-robin: all move at the
    same rate until the smaller ones finish, so ``d`` is done after ``sum(min(bytes, d's bytes))`` bytes."""
    return d.bytes / max(1, sum(min(x.bytes, d.bytes) for x in shared))


def dma_timing(tokens: int, token_bytes: int, per_cycle: float) -> tuple[int, int]:
    """(II, latency) of a DMA's token-sim task: ``tokens`` tokens of ``token_bytes`` at ``per_cycle`` bytes a cycle.

    The m_axi burst buffer keeps the memory busy, so the data takes ``ceil(tokens x token_bytes / per_cycle)``
    cycles (at least a cycle a token: the stream moves one a cycle at most), not a whole number of cycles per
    token; the task's II is the nearest whole number to ``token_bytes / per_cycle`` (at least 1) and its
    latency (at least the first beat's :data:`DMA_LATENCY` plus one token) makes the last token land when
    the data is in, as :func:`~streamdsl.dfg.timing.spread` spreads a kernel's cycles."""
    exact = token_bytes / per_cycle
    ii = max(1, round(exact))
    total = max(tokens, math.ceil(tokens * exact - 1e-9))
    return ii, max(DMA_LATENCY + ii - 1, DMA_LATENCY - 1 + total - (tokens - 1) * ii)


def dma_data_cycles(tokens: int, token_bytes: int, per_cycle: float) -> int:
    """Cycles from a DMA's first beat to its last token (:func:`dma_timing`)."""
    ii, lat = dma_timing(tokens, token_bytes, per_cycle)
    return (tokens - 1) * ii + lat - DMA_LATENCY + 1


def allocate_channels(dmas: list[DmaModel], channels: int, channel_bytes: float | None = None,
                      windows: dict[str, int] | None = None, spares: bool = True) -> int:
    """Give each DMA (of the whole design: a DMA's channels are its tensor's banks for the whole run) a share of
    ``channels`` memory channels; returns the channels used.

    The smallest DMAs, as many as together move no more than an average
    channel's share of the DMAs' bytes, share one channel (the last),
    served round-robin as m_axi ports bundled on one HBM channel are: each
    gets the average share :func:`_share`;
    a lone small DMA simply has that channel; with ``windows`` and ``channel_bytes``, a small DMA its share
    would make late (its time past its window: the KV cache attention waits for) gets a channel of its own
    instead.  Every other DMA gets one channel
    of its own, and the spare channels go one at a time to the DMA with the
    most bytes per channel (its data striped over them, one AXI port each).
    When the larger DMAs alone outnumber the channels, all but the largest
    ``channels - 1`` share the last one.

    ``channel_bytes`` (bytes per cycle one channel moves): the channels then
    go by the DMA's time as the token simulator sees it (:func:`dma_data_cycles`:
    its bytes over ``channels x channel_bytes``, at least a cycle a token), to
    make the longest of those times the smallest the channels allow (a DMA
    already at a token a cycle gains nothing from another channel); the
    channels left then go one step at a time where they save the most
    cycles per channel, and channels that shorten no DMA stay unused.

    ``windows`` (DMA name -> the cycles it may take without delaying the design, :func:`dma_windows`): the
    channels first make the largest lateness, time past the window, the smallest (the weights the first
    kernels need get channels first, a DMA with room to spare fewer), then the longest time within that.
    ``spares=False`` stops there: each DMA the fewest channels that keep it within its window and that
    lateness (what :func:`~streamdsl.dfg.timing.design_timing` keeps when the other channels do not pay).
    """
    if not dmas:
        return 0
    order = sorted(dmas, key=lambda d: -d.bytes)
    total = sum(d.bytes for d in order)
    split = len(order)
    tail = 0
    while split > 1 and tail + order[split - 1].bytes <= total / channels:
        split -= 1
        tail += order[split].bytes
    own, shared = order[:split], order[split:]
    while channel_bytes is not None and windows and shared and len(own) + 2 <= channels:
        # a small DMA its round-robin share would make late (past its window) gets a channel of its own
        late = [d for d in shared if d.bytes / (_share(d, shared) * channel_bytes) > windows.get(d.name, math.inf)]
        if not late:
            break
        d = max(late, key=lambda d: d.bytes)
        shared.remove(d)
        own.append(d)
    if len(shared) <= 1:
        own, shared = own + shared, []
    if len(own) + (1 if shared else 0) > channels:
        own, shared = order[:channels - 1], order[channels - 1:]
    for d in own:
        d.channels = 1.0
    for d in shared:
        d.channels = max(1e-3, _share(d, shared))
    spare = channels - len(own) - (1 if shared else 0)
    if channel_bytes is None:
        for _ in range(spare):
            best = max(own, key=lambda d: d.bytes / d.channels)
            best.channels += 1.0
    elif own:
        times: dict[tuple[str, int], int] = {}

        def cyc(d, c: int) -> int:
            if (d.name, c) not in times:
                parts = d.parts or ((d.tokens, d.token_bytes),)
                times[d.name, c] = sum(dma_data_cycles(n, tb, c * channel_bytes) for n, tb in parts)
            return times[d.name, c]

        def need(d, limit: int) -> int | None:  # fewest channels that bring d within limit
            return next((c for c in range(1, avail + 1) if cyc(d, c) <= limit), None)

        avail = spare + len(own)
        win = {d.name: (windows or {}).get(d.name, 0) for d in own}

        def smallest(values, limit):  # the first of the sorted values whose limits the channels can meet
            lo, hi = 0, len(values) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                cs = [need(d, limit(d, values[mid])) for d in own]
                if all(c is not None for c in cs) and sum(cs) <= avail:
                    hi = mid
                else:
                    lo = mid + 1
            return values[lo]

        # the smallest largest lateness (none below 0: a DMA inside its window is on time), then, within
        # it, the smallest longest time (without windows: the longest DMA time alone)
        late = smallest(sorted({max(0, cyc(d, c) - win[d.name]) for d in own for c in range(1, avail + 1)}),
                        lambda d, v: win[d.name] + v)
        longest = smallest(sorted({cyc(d, c) for d in own for c in range(1, avail + 1)}),
                           lambda d, v: min(v, win[d.name] + late))
        for d in own:  # within 2 % of that longest time: a channel that saves a few cycles of it does more elsewhere
            d.channels = float(need(d, min(int(longest * 1.02), win[d.name] + late) if spares else
                                    win[d.name] + late if windows else int(longest * 1.02)))
        left = avail - int(sum(d.channels for d in own)) if spares else 0
        while left > 0:  # what is left goes where a channel saves the most cycles (then to the slowest DMA)
            gains = [((cyc(d, int(d.channels)) - cyc(d, int(d.channels) + k)) / k, cyc(d, int(d.channels)), -k, d)
                     for d in own
                     for k in [next((k for k in range(1, left + 1)
                                     if cyc(d, int(d.channels) + k) < cyc(d, int(d.channels))), None)] if k]
            if not gains:
                break
            _, _, neg, d = max(gains, key=lambda x: x[:3])
            d.channels -= neg
            left += neg
    return int(sum(d.channels for d in own)) + (1 if shared else 0)


# ------------------------------------------------------------------ analytic model
def analytic_times(tasks: list[Task], edges: list[Edge]) -> tuple[dict[str, int], dict[str, int]]:
    """(start, end) cycle of every task in a closed-form timing without FIFO limits.

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
    return start, end


def analytic_cycles(tasks: list[Task], edges: list[Edge]) -> int:
    """A closed-form end-to-end estimate without FIFO limits (coarser than the token simulator): see
    :func:`analytic_times`."""
    return max(analytic_times(tasks, edges)[1].values(), default=0)


def dma_windows(tasks: list[Task], edges: list[Edge], dmas: list[DmaModel]) -> dict[str, int]:
    """Cycles each DMA may take without delaying the design, from the analytic timing with DMAs that cost
    nothing: a load until its last consumer ends (it streams as that kernel reads), a store from its
    producer's start to the end of the design."""
    names = {d.name for d in dmas}
    fast = [Task(t.name, t.iters, 1, 1, fill=t.fill, drain=t.drain) if t.name in names else t for t in tasks]
    start, end = analytic_times(fast, edges)
    total = max(end.values(), default=0)
    out = {}
    for d in dmas:
        if d.direction == "load":
            out[d.name] = max((end[e.dst] for e in edges if e.src == d.name), default=total)
        else:
            out[d.name] = total - min((start[e.src] for e in edges if e.dst == d.name), default=0)
    return out
