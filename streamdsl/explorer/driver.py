"""The driver: :func:`explore` walks the three spaces in order and returns an :class:`Exploration`.

1. tiling at factor 1 (the default tile, with and without the recipe's loop order), then the strategies'
   unroll allocations (:mod:`.strategies`), each built and simulated;
2. fusion of the best: the paper's greedy algorithm 2, and one region a kernel;
3. resources: weight FIFOs deep enough for the DMAs to run ahead, on the best and on the fastest tiling
   candidate; then the fastest design whose board-sized FIFOs still fit is pinned as it will be built.
"""
from __future__ import annotations

import dataclasses
import functools
import textwrap
from dataclasses import dataclass, field
from typing import Callable, Protocol, runtime_checkable

from ..boards import Board, board as get_board
from ..dfg.dfschedule import DataflowSchedule
from ..dfg.graph import DataflowFunction
from ..errors import StreamDSLError, caller_loc
from ..perf.model import DesignPerf, model_design
from ..progress import bar
from .evaluation import HEADER, Seen, Tried, commit, evaluate
from .search import SEARCH, KernelEstimate, Search
from .space import PREFETCH, Config
from .strategies import Allocation, Room, unroll_by_gain, unroll_by_heap


class ExploreError(StreamDSLError):
    kind = "exploration error"


@runtime_checkable
class Explorable(Protocol):
    """What ``sd.explore`` takes besides a ``DataflowSchedule`` or an ``@sd.dataflow`` function: an object that
    gives one of its designs, ``design(t=1, kind=None)``, the ``DataflowSchedule`` of its layer for ``t`` new
    tokens of layer kind ``kind`` (None: its first kind) as it builds it by default (a library LLM).  The
    explorer explores that design's dataflow function and keeps its stream layouts."""

    def design(self, t: int = 1, kind: str | None = None) -> DataflowSchedule: ...


def _design_of(design, t: int, kind) -> tuple[DataflowFunction, DataflowSchedule | None, str]:
    """(dataflow function, the schedule given or None, name) of what :func:`explore` was given."""
    if isinstance(design, DataflowFunction):
        return design, None, design.graph.ir.name
    g = design
    if not isinstance(design, DataflowSchedule) and isinstance(design, Explorable) and callable(design.design):
        g = design.design(t=t, kind=kind)
        if not isinstance(g, DataflowSchedule):
            raise ExploreError(f"{type(design).__name__}.design() gave a {type(g).__name__}, not a DataflowSchedule",
                               caller_loc(), hint="design(t, kind) returns the layer's sd.schedule(...)")
    if isinstance(g, DataflowSchedule):
        return g.function, g, g.graph.ir.name
    raise ExploreError(f"explore takes a DataflowSchedule, an @sd.dataflow function or a model, got {type(design).__name__}",
                       caller_loc(), hint="sd.explore(sd.schedule(my_dataflow)) or sd.explore(llm_model)")


UTIL = 0.85  # explore's default share of each resource of the board (UG1393's guideline caps it lower)
WIDTH = 100  # a terminal's width: a row's last column ("why") is wrapped on the lines under it


def table(rows: list[list[str]], header=HEADER) -> str:
    last = len(header) - 1
    w = [max(len(str(r[i])) for r in [header] + rows) for i in range(last)]
    line = lambda r: "  ".join(str(c).ljust(w[i]) if i in (0, 1) else str(c).rjust(w[i])  # noqa: E731
                               for i, c in enumerate(r[:last])).rstrip()
    out = [line(header) + f"  ({header[last]} below)", line(["-" * x for x in w])]
    for r in rows:
        out.append(line(r))
        out += textwrap.wrap(str(r[last]), WIDTH, initial_indent="    ", subsequent_indent="    ",
                             break_on_hyphens=False)
    return "\n".join(out)


@dataclass
class Exploration:
    """The best design (its ``.schedule`` the sized DataflowSchedule), the design as given, and every design tried."""

    best: DesignPerf
    default: DesignPerf | None
    tried: list[Tried] = field(default_factory=list)
    config: Config | None = None

    def table(self) -> str:
        return table([t.row() for t in self.tried])

    def report(self) -> str:
        from ..perf.report import design_report

        head = [f"exploration of {self.best.name} on {self.best.board.name}: {len(self.tried)} design(s) tried",
                self.table(), ""]
        if self.default is not None:
            d = self.default
            gain = d.cycles / self.best.cycles if self.best.cycles and d.cycles else float("nan")
            head.append(f"default design: {d.cycles} cycles ({'fits' if d.fits else 'does not fit: ' + '; '.join(d.problems)}); "
                        f"best: {self.best.cycles} cycles ({gain:.1f}x faster)")
        return "\n".join(head + [design_report(self.best)])

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        from .. import registry

        return registry.lookup("present", "html")(self)


@dataclass
class _Run:
    """One exploration: what it explores, where, and the designs it has tried."""

    fn: DataflowFunction
    given: DataflowSchedule | None
    name: str
    board: Board
    clock: float
    bits: dict | None
    search: Search
    progress: object  # a progress.bar
    tried: list[Tried] = field(default_factory=list)
    seen: Seen = field(default_factory=Seen)
    estimates: dict = field(default_factory=dict)  # (task, reorder, factor, moves) -> KernelEstimate | None
    beside: dict = field(default_factory=dict)  # name -> DesignPerf: the device's other kernels

    def evaluate(self, cfg: Config, label: str, space: str, why: str) -> Tried:
        r = evaluate(self.fn, cfg, self.board, self.clock, self.bits, self.given, label, space, why, self.seen,
                     self.search, self.beside)
        self.progress.set_postfix_str(f"{r.label}: {r.perf.cycles if r.perf else '-'} cycles")
        self.progress.update(1)
        self.tried.append(r)
        return r

    def kernel(self, task: str, factor: int, moves: frozenset = frozenset(), *, reorder: bool) -> KernelEstimate | None:
        """The cost model's estimate of ``task`` under the recipe (:meth:`.search.Search.estimate`)."""
        key = (task, reorder, factor, moves)
        if key not in self.estimates:
            self.estimates[key] = self.search.estimate(self.fn.graph.kernel(task), reorder, factor, moves,
                                                       self.board.name, self.clock)
        return self.estimates[key]


def explore(design, board="u55c", budget: int | None = None, *, clock_mhz: float | None = None,
            bits: dict | None = None, util: float = UTIL, t: int = 1, kind=None, checkpoints: int = 2,
            fusion: bool = True, base_config: Config | None = None, search: Search | None = None,
            beside: dict[str, DesignPerf] | None = None, reserve: dict[str, float] | None = None) -> Exploration:
    """Explore tiling, fusion and resource allocation of ``design`` (a ``DataflowSchedule``, an ``@sd.dataflow``
    function or an :class:`Explorable`, given ``t`` and ``kind``) on ``board``.

    ``budget``: the overall unroll budget (sum of the kernels' unroll factors; default: as far as ``util`` of
    the board's DSP/LUT/FF allows).  ``bits``: stored widths of tensors for DMA traffic (``{"w_fc": 4}``).
    ``checkpoints``: the heap's last allocations tried; ``fusion=False``: one region, no resource step;
    ``base_config``: the one factor-1 design to start from; ``search``: the caches (:data:`.search.SEARCH`).
    The kernels widen within ``util`` of each resource of the board and at most UG1393's guideline for it (LUT
    70 %, FF 50 %, DSP/BRAM/URAM 80 %: what :func:`~streamdsl.perf.fit_designs` checks), less what the device's
    other kernels take: ``beside`` (name -> their modeled designs: a design fits only when it fits the device
    together with them, :func:`.evaluation.placed_beside`) and ``reserve`` (resource -> amount, for kernels
    not designed yet)."""
    b = get_board(board)
    clock = float(clock_mhz or b.clock_mhz)
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise ExploreError(f"budget must be a positive integer (the sum of unroll factors), got {budget!r}",
                           caller_loc(), hint="budget=256, or leave it out to fill the board")
    fn, given, name = _design_of(design, t, kind)
    pb = bar(total=(1 if base_config else 2) + checkpoints + 1 + (4 if fusion else 0), desc=f"explore {name}",
             unit="design")
    run = _Run(fn, given, name, b, clock, bits, SEARCH if search is None else search, pb, beside=dict(beside or {}))
    reserve = dict(reserve or {})
    for p in run.beside.values():
        for r, v in p.total.items():
            reserve[r] = reserve.get(r, 0) + v
    try:
        default = None
        if given is not None:
            default = model_design(given, b, clock, bits, name="default")
            run.tried.append(Tried("default", "as given", Config(tile=False, reorder=False), default,
                                   "the schedule as given" + ("" if default.fits else ": " + "; ".join(default.problems))))
        best = _unrolled(run, _start(run, base_config), budget, util, checkpoints, reserve)
        committed: dict[int, DesignPerf] = {}  # tried designs already sized for the board, by id
        if fusion:
            best = _fused(run, best)
            best = _prefetched(run, best, committed)
        best = _as_built(run, best, committed)
        pb.total = pb.n  # some designs are only tried when they differ from one already tried
        pb.refresh()
        return Exploration(best.perf, default, run.tried, best.cfg)
    finally:
        pb.close()


def _start(run: _Run, base_config: Config | None) -> Tried:
    """Tiling at factor 1: the default tile with and without the loop order that follows it (or
    ``base_config``); the fastest that fits, else the fastest, starts the unrolling."""
    rows = []
    for cfg in ([base_config] if base_config else [Config(tile=True, reorder=True), Config(tile=True, reorder=False)]):
        label = ("tile" if cfg.tile else "layouts as given") + (" + reorder" if cfg.reorder else "")
        rows.append(run.evaluate(cfg, label, "tiling", "u=1 everywhere"))
    ok = [r for r in rows if r.perf is not None and r.perf.fits]
    start = min(ok, key=lambda r: r.perf.cycles) if ok else min(
        (r for r in rows if r.perf is not None), key=lambda r: r.perf.cycles, default=None)
    if start is None:
        raise ExploreError(f"no base design of {run.name} could be built", caller_loc(),
                           hint="; ".join(r.why for r in rows))
    return start


@dataclass(frozen=True)
class _Kernels:
    """A layer's kernels as the strategies see them: their estimates at factor 1, how to estimate them (under the
    start's loop order), the budget."""

    tasks: list[str]
    at_one: dict[str, KernelEstimate]
    est: Callable[..., KernelEstimate | None]
    cap_u: int

    def by_gain(self, room: Room, first: frozenset = frozenset(), split: bool = True) -> Allocation | None:
        return unroll_by_gain(self.tasks, self.at_one, self.est, room, self.cap_u, first, split)

    def cycle_sum(self, a: Allocation) -> int:
        """The kernels' cycles summed under ``a`` (about a one-token layer's latency)."""
        return sum(self.est(tk, a.factors[tk], a.moves_of(tk)).cycles for tk in self.tasks)


def _unrolled(run: _Run, start: Tried, budget: int | None, util: float, checkpoints: int,
              reserve: dict[str, float]) -> Tried:
    """The strategies' allocations from ``start``, each built and simulated; the fastest that fits (or ``start``)."""
    tasks = list(run.fn.graph.tasks)
    est = functools.partial(run.kernel, reorder=start.cfg.reorder)
    ks = _Kernels(tasks, {tk: est(tk, 1) for tk in tasks}, est, budget if budget is not None else 1 << 30)
    room = Room.beside(start.perf, ks.at_one, run.board, util, reserve)
    heap = unroll_by_heap(tasks, ks.at_one, est, room, ks.cap_u)
    picks = heap[-checkpoints:] if len(heap) > checkpoints else heap
    gain = ks.by_gain(room)
    if gain is not None and not gain.same_as(picks[-1]):
        picks.append(gain)
    if gain is not None:
        picks += _split_alternatives(run, ks, room, gain, picks, start.cfg.reorder)
    best = r = start
    for pick in picks:
        r = _try(run, start.cfg, pick)
        if r.perf is not None and r.perf.fits and (not best.perf.fits or r.perf.cycles < best.perf.cycles):
            best = r
    for share in (0.95, 0.90, 0.85):
        # the board's totals hold it but its kernels do not pack onto the SLRs: the same allocation under a
        # tighter cap, three times at most (each kernel's estimates are remembered)
        if gain is None or r.perf is None or r.perf.fits:
            break
        gain = ks.by_gain(room.scaled(share))
        if gain is not None:
            r = _try(run, start.cfg, gain, f" at {share * util:.0%}")
            if r.perf is not None and r.perf.fits and (not best.perf.fits or r.perf.cycles < best.perf.cycles):
                best = r
    return best


def _split_alternatives(run: _Run, ks: _Kernels, room: Room, gain: Allocation, picks: list[Allocation],
                        reorder: bool) -> list[Allocation]:
    """A split sum (split_sums) is a greedy step's choice that can lead elsewhere: the by-gain allocation also
    with every unrolled float sum split from the start (a split pays off with lanes, which the steps give the
    kernel only later) and with none split; each kept when it is new and its kernels' cycles sum to less than
    the first allocation's (the one-token layer's latency is about that sum)."""
    splittable = [tk for tk in ks.tasks if run.search.splittable(run.fn.graph.kernel(tk), reorder)]
    if not splittable:
        return []
    ways = []
    if set(splittable) - set(gain.moved["split"]):  # it left some unsplit: split from the start
        ways.append((frozenset({"split"}), True, "float sums split first"))
    if gain.moved["split"]:  # it split some: the same without (else it is that already)
        ways.append((frozenset(), False, "no float sum split"))
    first_sum = ks.cycle_sum(gain)
    out = []
    for first, split, how in ways:
        alt = ks.by_gain(room, first, split)
        if alt is not None and not any(alt.same_as(p) for p in picks + out) and ks.cycle_sum(alt) < first_sum:
            out.append(dataclasses.replace(alt, why=alt.why.replace("by gain", f"by gain, {how}", 1)))
    return out


def _try(run: _Run, base: Config, a: Allocation, label_extra: str = "") -> Tried:
    cfg = Config(base.tile, base.reorder, tuple(sorted((k, v) for k, v in a.factors.items() if v > 1)), "all",
                 dsp=a.moved["dsp"], fabric=a.moved["fabric"], split=a.moved["split"])
    label = f"unroll sum {a.total}" + (" by gain" if a.why.startswith("by gain") else "") + label_extra
    return run.evaluate(cfg, label, "tiling", a.why)


def _fused(run: _Run, best: Tried) -> Tried:
    """The fusion space: the paper's greedy algorithm 2 under the board's on-chip memory cap, and no fusion."""
    for mode in ("greedy", "none"):
        r = run.evaluate(dataclasses.replace(best.cfg, fusion=mode), "greedy fusion" if mode == "greedy" else "unfused",
                         "fusion", f"algorithm 2 under {0.9 * run.board.onchip_bytes / 2**20:.1f} MiB" if mode == "greedy"
                         else "one region per kernel: intermediates through DRAM")
        if r.perf is not None:
            r.why += f"; {len(r.perf.schedule.regions())} region(s)"
            if r.perf.fits and r.perf.cycles < best.perf.cycles:
                best = r
    return best


def _prefetched(run: _Run, best: Tried, committed: dict[int, DesignPerf]) -> Tried:
    """Resource allocation: FIFO memory for the weight DMAs to run ahead of their kernels, on the best design and
    on the fastest tiling candidate (whose unrolling the shallow FIFOs may have held back); each that fits is
    committed (``committed``: by the id of its row) and checked at its board-sized depths."""
    cands = [best.cfg]
    fastest = min((r for r in run.tried if r.space == "tiling" and r.perf is not None), key=lambda r: r.perf.analytic)
    if fastest.cfg.unroll != best.cfg.unroll:
        cands.append(dataclasses.replace(fastest.cfg, fusion=best.cfg.fusion))
    for i, c in enumerate(cands):
        for frac in PREFETCH:  # the whole run-ahead, or part of it when that overfills the board
            r = run.evaluate(dataclasses.replace(c, prefetch=frac),
                             "prefetch weights" + (f" x{frac:g}" if frac < 1 else "") + (f" ({fastest.label})" if i else ""),
                             "resources", "weight FIFOs at " + (f"{frac:g} of " if frac < 1 else "") +
                             "the no-back-pressure depth instead of 16 KiB")
            if r.perf is None:
                continue
            r.why += f"; FIFO/converter memory {r.perf.onchip_bytes / 2**20:.1f} MiB"
            if r.perf.fits:  # as it will be built: the board-sized FIFOs pinned
                q = commit(r.perf, run.bits, frac, run.beside)
                r.perf = q
                if q.fits:
                    committed[id(r)] = q
                    if q.cycles < best.perf.cycles:
                        best = r
                    break
                r.why += "; its board-sized FIFOs do not fit: " + "; ".join(q.problems)
    return best


def _as_built(run: _Run, best: Tried, committed: dict[int, DesignPerf]) -> Tried:
    """The fastest design that fits with its board-sized FIFOs pinned (they may outgrow the board), starred."""
    if best.perf.fits:
        for r in sorted((r for r in run.tried if r.perf is not None and r.perf.fits), key=lambda r: r.perf.cycles):
            q = committed.get(id(r)) or commit(r.perf, run.bits, r.cfg.prefetch, run.beside)
            if q.fits:
                r.perf = q
                best = r
                break
            r.why += "; its board-sized FIFOs do not fit: " + "; ".join(q.problems)
    if not best.perf.fits:
        raise ExploreError(f"no design of {run.name} fits {run.board.name}: " + "; ".join(best.perf.problems),
                           caller_loc(), hint="use a larger board, smaller tiles, or a lower budget")
    best.label = "* " + best.label
    return best


__all__ = ["Explorable", "Exploration", "ExploreError", "explore", "table"]
