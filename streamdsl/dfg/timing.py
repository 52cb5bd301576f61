"""Token-level timing of every node of a lowered dataflow graph.

The token simulator (:mod:`.tokensim`) needs, per node, a :class:`Task`
``(iters, ii, lat, fill, drain)``.  The paper gets these numbers by running
the vendor HLS tool; streamdsl derives them from its own per-kernel model
(:func:`streamdsl.cost.model.estimate`) of the *scheduled* IR, so a
``g.schedule(task).pipeline(...)`` shows up in the dataflow timing.

The mapping, and why:

* **Kernel task.**  Its loop nest decides when each token moves
  (:mod:`.access`): one step per iteration of a top-level loop, each token
  read before the first step that needs it and written after the last step
  that writes it; a step that moves several tokens of one stream moves them
  one per iteration.  ``iters`` = those iterations, spread evenly over the
  model's total cycles (:func:`spread`): ``II`` = the nearest whole number
  to ``(cycles - deepest pipeline) / (iters - 1)``, at least 1 (a FIFO moves
  a token a cycle), and ``lat`` what makes the task take ``cycles`` (rounding
  the II up instead made a 3.01-cycle iteration take 4, a kernel a third
  longer than its own model).  ``fill = drain = 0``
  (the explicit per-edge schedules say which iterations move tokens).
* **Layout converter.**  Reads ``T_in`` tokens and writes ``T_out``; its
  buffer holds one block of the loops it shares with both sides (``B`` =
  product of the shared trip counts; ``B = 1`` when the buffer is the whole
  tensor).  With ``N = max(T_in, T_out)`` and ``lag = N / B``: ``iters = N +
  lag``, ``fill = drain = lag``, ``II = 1``, ``lat = 2`` (a buffer read).
  Reads are spread over the first ``N`` iterations and writes over the last
  ``N``, so every output token waits for the whole block it comes from (a
  whole-tensor buffer: ``fill = drain = T``), and with ping-pong buffers the
  next block fills while the previous one drains.
* **Fork.**  One token in, one out to every branch per cycle: ``iters = T``,
  ``II = 1``, ``lat = 1``.
* **DMA.**  One 512-bit bus word per cycle: ``II`` = words per token, ``lat =``
  :data:`DMA_LATENCY` (an assumed DRAM round trip) plus the token's own words
  after the first (a 4 KiB token of a shared channel arrives when its last word does).  A store writes its
  "done" token to the loads that read the tensor back (``fill = iters - 1``),
  so a region that reads a tensor through DRAM starts only after the region
  that wrote it has finished: unfused kernels do not overlap.
"""
from __future__ import annotations

import math

from ..ir.memo import IdentityMemo
from ..ir.nodes import Alloc, Kernel, Ref, Return, walk
from ..cost.model import estimate
from .itensor import Converter
from .layout import DMA, dtype_bits
from .tokensim import Task

DMA_LATENCY = 64  # cycles from a DMA's request to its first beat (assumed HBM latency at 250 MHz)
CONVERTER_LATENCY = 2
FORK_LATENCY = 1


def _kernel_cycles(k: Kernel) -> tuple[int, int]:
    rep = estimate(k)
    depth = max((lp.depth for lp in rep.loops if lp.depth is not None), default=0)
    return max(1, int(rep.cycles)), int(depth)


_CYCLES = IdentityMemo(_kernel_cycles, 1024)


def kernel_cycles(k: Kernel) -> tuple[int, int]:
    """(total cycles, deepest pipelined loop) of the kernel's scheduled IR (remembered per IR object: the
    designs an explorer tries share their kernels)."""
    return _CYCLES(k)


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


def kernel_task(name: str, k: Kernel, iters: int) -> Task:
    """``iters``: the task's token-moving iterations (:attr:`.access.StepTables.iterations`)."""
    cycles, depth = kernel_cycles(k)
    return spread(name, cycles, depth, iters)


def converter_task(name: str, cv: Converter) -> Task:
    tin, tout = cv.src.num_tokens, cv.dst.num_tokens
    n = max(tin, tout)
    blocks = math.prod(cv.src.trips[d] for d in cv.shared) if cv.shared else 1
    lag = max(1, n // blocks)
    return Task(name, n + lag, 1, CONVERTER_LATENCY, fill=lag, drain=lag)


def fork_task(name: str, tokens: int) -> Task:
    return Task(name, max(1, tokens), 1, FORK_LATENCY)


def dma_task(dma: DMA) -> Task:
    iters = max(1, dma.layout.num_tokens)
    fill = iters - 1 if dma.direction == "store" else 0
    words = max(1, dma.words_per_token)
    return Task(dma.name, iters, words, DMA_LATENCY + words - 1, fill=fill)  # a token is whole at its last word


def local_bytes(k: Kernel) -> int:
    """On-chip scratch memory of a kernel: local tensors it does not return (results stream out)."""
    returned = {v.name for s in k.body if isinstance(s, Return) for v in s.values if isinstance(v, Ref)}
    total = 0
    for n in (n for s in k.body for n in walk(s)):
        if isinstance(n, Alloc) and n.name not in returned:
            total += n.type.size * dtype_bits(n.type.dtype) // 8
    return total
