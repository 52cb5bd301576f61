"""Evaluation: one candidate design built and modeled end to end (:func:`evaluate`), a chosen one pinned as it
will be built (:func:`commit`), and the row of the table each makes (:class:`Tried`)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..boards import board as get_board
from ..dfg.dfschedule import DataflowSchedule
from ..dfg.fifo import design_depths
from ..errors import StreamDSLError
from ..perf.fit import fit_designs
from ..perf.model import DesignPerf, model_design
from .search import Search
from .space import Config, build_design, dma_caps, size_for_board


@dataclass
class Tried:
    """A design the exploration tried: its label and space (tiling, fusion, resources), its config, its model
    (None when it could not be built) and why it was tried or what became of it."""

    label: str
    space: str
    cfg: Config
    perf: DesignPerf | None
    why: str = ""

    def row(self) -> list[str]:
        p = self.perf
        if p is None:
            return [self.label, self.space, "-", "-", "-", "-", "-", "-", "-", self.why]
        tot, cap = p.total, p.board.total
        pct = lambda r: f"{100 * tot[r] / cap[r]:.0f}%"  # noqa: E731
        units = sum(u for _, u in self.cfg.unroll) or len(p.schedule.graph.tasks) if p.schedule is not None else 0
        return [self.label, self.space, str(units), f"{p.cycles}", f"{p.analytic}", f"{p.latency_s * 1e6:.1f}",
                pct("dsp"), f"{pct('bram')}/{pct('uram')}", "yes" if p.fits else "NO", self.why]


HEADER = ["design", "space", "sum u", "sim cycles", "analytic", "us", "DSP", "BRAM/URAM", "fits", "why"]  # Tried.row


class Seen:
    """The designs one exploration has modeled, by what they lower from (``DataflowSchedule.design_key``) and
    their weight-FIFO depths: a design built again (greedy fusion that keeps one region, a loop order that
    changes no loop) is not modeled twice.  The key names each task's IR by ``id()``, so an entry keeps those
    IRs alive: no id is reused while its key stands (the identity rule, :mod:`.search`)."""

    def __init__(self):
        self._designs: dict[tuple, tuple[Tried, list]] = {}

    def get(self, key: tuple) -> Tried | None:
        hit = self._designs.get(key)
        return None if hit is None else hit[0]

    def add(self, key: tuple, tried: Tried, g: DataflowSchedule) -> None:
        self._designs[key] = (tried, [g.kernel_ir(t) for t in g.graph.tasks])


def _also(why: str, more: str) -> str:
    return (why + "; " if why else "") + more


def evaluate(fn, cfg: Config, board, clock_mhz, bits, base=None, label="", space="", why="",
             seen: Seen | None = None, search: Search | None = None, beside: dict | None = None) -> Tried:
    """Build one candidate and model it at depths sized for the board timing (not yet pinned in the schedule).
    ``seen``: the designs already modeled in this exploration; ``search``: what remembers the kernel recipes
    (:data:`.search.SEARCH`); ``beside``: the designs that share the device with it (:func:`placed_beside`)."""
    b = get_board(board)
    try:
        g = build_design(fn, cfg, base, cap_bytes=int(0.9 * b.onchip_bytes), search=search)
        key = (g.design_key(), cfg.prefetch)
        same = seen.get(key) if seen is not None else None
        if same is not None:
            return Tried(label, space, cfg, same.perf, _also(why, f"the same design as '{same.label}'"))
        timing, low = g.timing(b, clock_mhz, bits), g.lowered()
        depths = design_depths(timing.task_list, timing.edges, low.fifos,
                               pinned=dma_caps(low, cfg.prefetch, timing)).depths
        p = placed_beside(model_design(g, b, clock_mhz, bits, depths=depths, name=label), beside)
    except StreamDSLError as err:
        return Tried(label, space, cfg, None, f"refused: {err.message}")
    if p.sim is None and cfg.bundle and g.bundles():  # a kernel held up by a later kernel's bundled input
        return evaluate(fn, dataclasses.replace(cfg, bundle=False), board, clock_mhz, bits, base, label, space,
                        _also(why, "the bundle deadlocked: each input its own DMA"), seen, search, beside)
    if not p.fits:
        why = _also(why, "; ".join(p.problems))
    r = Tried(label, space, cfg, p, why)
    if seen is not None:
        seen.add(key, r, g)
    return r


def commit(p: DesignPerf, bits=None, prefetch: float = 0, beside: dict | None = None) -> DesignPerf:
    """Pin the board-sized FIFO depths into the design's schedule and model it as it will be built."""
    g = p.schedule
    size_for_board(g, p.board, p.clock_mhz, bits, prefetch)
    return placed_beside(model_design(g, p.board, p.clock_mhz, bits, name=p.name), beside)


def placed_beside(p: DesignPerf, beside: dict | None) -> DesignPerf:
    """``p``, with a problem when it does not fit the device together with ``beside`` (name -> modeled design:
    the other kernels of the same xclbin), as :func:`~streamdsl.perf.fit_designs` places them (every SLR within
    UG1393's guideline)."""
    if beside and p.fits:
        fit = fit_designs({**beside, p.name or "design": p}, p.board)
        if not fit.fits:
            p.problems.append(f"does not fit beside {', '.join(beside)}: " + "; ".join(fit.problems))
    return p


__all__ = ["HEADER", "Seen", "Tried", "commit", "evaluate", "placed_beside"]
