"""The token simulation as a picture: when each task works or waits, and how full the FIFOs get.

Top axes: one row per task (kernel tasks, converters, forks, DMAs, in design
order); its upper lane is busy (iterations back to back), its lower lane the
waits between iterations, coloured by cause: an empty input FIFO (starved) or
a full output FIFO (blocked, what FIFO sizing must avoid).  Bottom axes: the
occupancy of the FIFOs with the highest peaks, as step curves, each with its
depth dotted.

Big simulations stay drawable: spans closer than ``cycles / MAX_SPANS`` are
merged into one (a row never gets more than about ``MAX_SPANS`` rectangles
per lane), and a curve of more than ``MAX_POINTS`` change points is drawn as
its maximum per bin of ``cycles / MAX_POINTS`` cycles, so peaks survive.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..dfg.tokensim import DeadlockError, SimResult, simulate
from ..errors import caller_loc, user_facing
from .common import VizError, check_perf, new_figure, out_path, save_png, schedule_of

MAX_SPANS = 1000  # rectangles per lane per task row (about a pixel each at the default size)
MAX_POINTS = 2000  # points per FIFO curve
MAX_FIFOS = 8  # curves on the occupancy axes
COLORS = {"busy": "#3c78d8", "starved": "#f6b26b", "blocked": "#cc0000"}


def merge_spans(spans: np.ndarray, gap: float) -> np.ndarray:
    """``(start, length)`` rows in time order, with spans separated by at most ``gap`` cycles joined."""
    if len(spans) == 0 or gap <= 0:
        return spans
    ends = spans[:, 0] + spans[:, 1]
    new = np.concatenate([[True], spans[1:, 0] - ends[:-1] > gap])
    first = np.flatnonzero(new)
    last = np.concatenate([first[1:] - 1, [len(spans) - 1]])
    return np.stack([spans[first, 0], ends[last] - spans[first, 0]], axis=1)


def step_points(times: np.ndarray, values: np.ndarray, end: int, cap: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(x, y, decimated) of a step curve (value ``values[i]`` from ``times[i]``, 0 before) up to cycle ``end``.

    Above ``cap`` points: the curve's maximum in each of ``cap`` equal bins."""
    if len(times) <= cap:
        x = np.concatenate([[0], times, [max(end, times[-1] if len(times) else 0)]])
        y = np.concatenate([[0], values, [values[-1] if len(values) else 0]])
        return x, y, False
    width = max(1.0, (max(end, int(times[-1])) + 1) / cap)
    nb = int(np.ceil((max(end, int(times[-1])) + 1) / width))
    lo = np.arange(nb) * width
    at = np.searchsorted(times, lo, "right") - 1  # the value carried into each bin
    top = np.where(at >= 0, values[np.maximum(at, 0)], 0)
    inside = np.full(nb, -1, dtype=np.int64)
    np.maximum.at(inside, np.minimum((times / width).astype(np.int64), nb - 1), values)
    y = np.maximum(top, inside)
    return np.concatenate([lo, [lo[-1] + width]]), np.concatenate([y, [y[-1]]]), True


def _traced(what: str, x) -> tuple[SimResult, str, dict[str, str], set[str]]:
    """(traced result, title, node kinds, DRAM links) of a design, a DesignPerf or a traced SimResult."""
    if isinstance(x, SimResult):
        if x.trace is None:
            raise VizError(f"{what}: this simulation result has no trace", caller_loc(),
                           hint="simulate with a trace: g.simulate(trace=True), or pass the design g itself")
        return x, "token simulation", {}, set()
    g, perf = schedule_of(what, x)
    check_perf(what, g, perf)
    low = g.lowered()
    kinds = {n.name: n.kind for n in low.nodes.values()}
    dram = {f.name for f in low.fifos if f.kind == "dram"}
    name = g.graph.ir.name
    if perf is None:
        return g.simulate(trace=True), f"{name}: token simulation", kinds, dram
    tasks = [perf.nodes[n].task for n in low.nodes]  # the board's timing, as model_design simulated it
    try:
        res = simulate(tasks, low.sim_edges(), perf.depths, trace=True)
    except DeadlockError as err:
        raise DeadlockError(err.message, caller_loc(), hint=err.hint) from None
    return res, f"{name} on {perf.board.name} @ {perf.clock_mhz:g} MHz: token simulation", kinds, dram


@user_facing
def timeline_figure(g_or_result):
    """Per-task busy/stall bars and FIFO occupancy of a token simulation, as a matplotlib Figure.

    Takes a design (``DataflowSchedule`` or ``@sd.dataflow`` function: simulated
    here at its current depths), a ``DesignPerf`` (simulated with the board's
    timing) or a ``SimResult`` of ``g.simulate(trace=True)``."""
    return _figure("timeline_figure", g_or_result)


@user_facing
def timeline_png(g_or_result, path) -> Path:
    """:func:`timeline_figure` written to ``path`` as PNG (the suffix is replaced); returns the file written."""
    p = out_path("timeline_png", path, ".png")
    return save_png("timeline_png", _figure("timeline_png", g_or_result), p)


def _figure(what: str, g_or_result):
    from matplotlib.patches import Patch

    res, title, kinds, dram = _traced(what, g_or_result)
    tr = res.trace
    names = list(tr.tasks)
    end = max(1, res.cycles)
    gap = end / MAX_SPANS
    rows = len(names)
    fig = new_figure(12, 2.8 + 0.26 * rows + 2.6)
    ax, occ_ax = fig.subplots(2, 1, sharex=True, height_ratios=[max(1.0, 0.26 * rows), 2.6])
    merged = False
    for i, n in enumerate(names):
        t = tr.tasks[n]
        for key, spans, lane in (("busy", t.busy, (i - 0.42, 0.5)), ("starved", t.starved, (i + 0.1, 0.32)),
                                 ("blocked", t.blocked, (i + 0.1, 0.32))):
            drawn = merge_spans(spans, gap)
            merged |= len(drawn) < len(spans)
            if len(drawn):
                ax.broken_barh(drawn, lane, facecolors=COLORS[key], edgecolor="none", gid=f"{key}:{n}")
    ax.set_yticks(range(rows), [f"{n} ({kinds[n]})" if n in kinds and kinds[n] != "task" else n for n in names],
                  fontsize=7)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_ylabel("task (busy above, waits below)")
    ax.set_xlabel("cycle")
    ax.tick_params(labelbottom=True)  # sharex hides the upper axes' numbers; each plot keeps its own
    ax.set_xlim(0, end)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(handles=[Patch(color=COLORS["busy"], label="busy"),
                      Patch(color=COLORS["starved"], label="waits: input FIFO empty"),
                      Patch(color=COLORS["blocked"], label="waits: output FIFO full")],
              loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7)
    note = f"; spans closer than {gap:.0f} cycles merged" if merged else ""
    ax.set_title(f"{title}, {res.cycles} cycles{note}", fontsize=10)

    fifos = [f for f in tr.fifos if f not in dram and len(tr.fifos[f].times)]
    shown = sorted(fifos, key=lambda f: -res.peak[f])[:MAX_FIFOS]
    decimated = False
    colors = [f"C{k}" for k in range(10)]
    for k, f in enumerate(shown):
        ft = tr.fifos[f]
        x, y, dec = step_points(ft.times, ft.occupancy, end, MAX_POINTS)
        decimated |= dec
        c = colors[k % len(colors)]
        depth = f", depth {ft.depth}" if ft.depth is not None else ", unbounded"
        occ_ax.step(x, y, where="post", color=c, linewidth=1.2, label=f"{f} (peak {res.peak[f]}{depth})")
        if ft.depth is not None:
            occ_ax.axhline(ft.depth, color=c, linestyle=":", linewidth=0.9)
    occ_ax.set_xlabel("cycle")
    occ_ax.set_ylabel("FIFO occupancy (tokens)")
    occ_ax.set_ylim(bottom=0)
    occ_ax.grid(alpha=0.3)
    if shown:
        occ_ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7)
    which = f"{len(shown)} of {len(fifos)} FIFOs (highest peaks); depths dotted"
    occ_ax.set_title(which + ("; curves: max per bin" if decimated else ""), fontsize=9)
    return fig
