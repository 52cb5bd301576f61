"""What every picture shares: its error, how a design argument is read, and matplotlib set-up.

A picture takes what a user has at hand: a ``DataflowSchedule`` (``sd.schedule(fn)``),
the ``@sd.dataflow`` function itself (scheduled here, as it stands), or a
``DesignPerf`` from :func:`streamdsl.perf.model.model_design` (its schedule plus
its numbers).  Anything else is a :class:`VizError` at the user's call.

Plots are built on a bare :class:`matplotlib.figure.Figure` with an Agg canvas:
pyplot's global state (the current figure, the interactive backend a notebook
chose) is never touched.
"""
from __future__ import annotations

from pathlib import Path

from ..dfg.dfschedule import DataflowSchedule
from ..dfg.graph import DataflowFunction
from ..errors import StreamDSLError, caller_loc


class VizError(StreamDSLError):
    """A picture cannot be drawn from what it was given."""

    kind = "viz error"


def is_design_perf(x) -> bool:
    """A :class:`~streamdsl.perf.model.DesignPerf` (duck-typed: its schedule, nodes, DMAs and cycles)."""
    return all(hasattr(x, a) for a in ("schedule", "nodes", "dmas", "cycles", "clock_mhz", "board"))


def schedule_of(what: str, g) -> tuple[DataflowSchedule, object]:
    """(schedule, perf or None) of a design argument; ``what`` names the caller for the message."""
    if isinstance(g, DataflowSchedule):
        return g, None
    if isinstance(g, DataflowFunction):
        return DataflowSchedule(g), None
    if is_design_perf(g) and isinstance(g.schedule, DataflowSchedule):
        return g.schedule, g
    kind = "a kernel" if hasattr(g, "ir") else type(g).__name__
    raise VizError(f"{what} takes a dataflow design, got {kind}", caller_loc(),
                   hint="pass g = sd.schedule(fn) of an @sd.dataflow function (or the function itself)")


def check_perf(what: str, g: DataflowSchedule, perf):
    """``perf`` must model ``g`` (a DesignPerf of another design would name other nodes)."""
    if perf is None:
        return None
    if not is_design_perf(perf):
        raise VizError(f"{what}: perf must be a DesignPerf, got {type(perf).__name__}", caller_loc(),
                       hint='perf = streamdsl.perf.model.model_design(g, "u55c")')
    if set(perf.nodes) != set(g.lowered().nodes):
        if perf.schedule is g:
            raise VizError(f"{what}: the design changed after it was modeled (its nodes are not the model's)",
                           caller_loc(), hint="model it again: perf = model_design(g, board)")
        raise VizError(f"{what}: perf models another design ({perf.name}) than the one drawn "
                       f"({g.graph.ir.name})", caller_loc(), hint="model this design: model_design(g, board)")
    return perf


def new_figure(width: float, height: float):
    """A Figure on its own Agg canvas (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def out_path(what: str, path, suffix: str) -> Path:
    """``path`` with ``suffix`` (replacing any other), its folder created."""
    if not isinstance(path, (str, Path)):
        raise VizError(f"{what}: path must be a file name (str or pathlib.Path), got {type(path).__name__}",
                       caller_loc(), hint=f'e.g. "out/design{suffix}"')
    p = Path(path)
    if not p.name:
        raise VizError(f"{what}: {str(path)!r} is not a file name", caller_loc(), hint=f'e.g. "out/design{suffix}"')
    p = p.with_suffix(suffix)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise VizError(f"{what}: cannot create the folder {p.parent}: {err.strerror}", caller_loc()) from None
    return p


def save_png(what: str, fig, p: Path) -> Path:
    """Write ``fig`` to ``p`` (from :func:`out_path`, checked before the figure was drawn)."""
    try:
        fig.savefig(p, format="png")
    except OSError as err:
        raise VizError(f"{what}: cannot write {p}: {err.strerror}", caller_loc()) from None
    return p
