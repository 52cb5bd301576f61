"""Roofline plots: where a design sits under the memory and compute roofs of its board.

Log-log: operational intensity (ops per byte of off-chip traffic) on x,
attainable GOP/s on y.  The memory roof is the board's bandwidth (``GB/s x
ops/B``), the compute roofs are flat: the fabric's fp32 peak
(:meth:`streamdsl.boards.Board.fp32_peak_gflops`) and, where the vendor
quotes one, its INT8 peak.  The design is a point.

What is counted, for a ``DesignPerf`` (one run of the dataflow):

* ops: the arithmetic the kernels' IR executes (:func:`kernel_ops`);
* bytes: every DMA's traffic at its stored width (``DesignPerf.dma_bytes``);
* time: the token simulator's cycles at the design clock (``latency_s``).

For an LLM-level model (``library/llm/perf.py``'s ``LLMPerf``, taken by its
attributes so the core does not import the library): ops per token
(``ops_per_token()``, 2 x MACs), bytes per token (``bytes_per_token()``, every
DMA of the decode layers) and ``tokens_per_s``; its HBM roofline (each weight
read once per token) is a second point on the memory roof.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import caller_loc, user_facing
from ..ir.loops import trip_count
from ..ir.nodes import (
    Assign, BinOp, Call, CallKernel, Cast, Const, Decl, For, If, Kernel, Load, Select, Store, UnaryOp, walk,
)
from .common import VizError, is_design_perf, new_figure, out_path, save_png

ARITH = {"add", "sub", "mul", "div", "floordiv", "mod", "pow", "max", "min"}
OPS_RULE = ("ops = arithmetic the kernels' IR executes (+ - * / min max and math calls; a multiply-add is 2; "
            "index arithmetic, comparisons and casts not counted; loop bounds that vary at their largest)")


# ------------------------------------------------------------------ counting ops
def _expr_ops(e) -> int:
    if isinstance(e, BinOp):
        return (e.op in ARITH) + _expr_ops(e.lhs) + _expr_ops(e.rhs)
    if isinstance(e, Call):
        return 1 + sum(_expr_ops(a) for a in e.args)
    if isinstance(e, (UnaryOp, Cast)):
        return _expr_ops(e.operand)
    if isinstance(e, Select):  # both sides are built in hardware; the condition is control
        return _expr_ops(e.then) + _expr_ops(e.orelse)
    return 0  # Const, Var, Ref; a Load's indices are addressing


_INT_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
            "floordiv": lambda a, b: a // b if b else 0, "max": max, "min": min}


def _largest(e, env: dict[str, int]) -> int | None:
    """``e`` with every outer loop variable at its largest value (None: it depends on something else)."""
    if isinstance(e, Const) and isinstance(e.value, int):
        return e.value
    if getattr(e, "name", None) in env and not isinstance(e, (Load, Call)):
        return env[e.name]
    if isinstance(e, BinOp) and e.op in _INT_OPS and e.op != "sub":  # growing in both operands
        a, b = _largest(e.lhs, env), _largest(e.rhs, env)
        return None if a is None or b is None else _INT_OPS[e.op](a, b)
    if isinstance(e, Call) and e.fn in ("max", "min") and len(e.args) == 2:
        a, b = (_largest(x, env) for x in e.args)
        return None if a is None or b is None else _INT_OPS[e.fn](a, b)
    return None


def _trips(s: For, env: dict[str, int]) -> int:
    """Iterations of a loop, at their largest when the bounds use outer loop variables (a triangular
    ``range(i)`` counts as the outer loop's last ``i``); bounds on anything else (a scalar argument) take
    the largest constant in them, as the cost model :mod:`streamdsl.cost.model` does."""
    n = trip_count(s)
    if n is not None:
        return n
    stop = _largest(s.stop, env)
    start = s.start.value if isinstance(s.start, Const) else None
    if stop is not None and start is not None:
        return max(0, -(-(stop - start) // s.step))
    consts = [n.value for e in (s.start, s.stop) for n in walk(e) if isinstance(n, Const) and isinstance(n.value, int)]
    return max(1, max(consts, default=1))


def _body_ops(body, k: Kernel, env: dict[str, int]) -> int:
    total = 0
    for s in body:
        if isinstance(s, For):
            trips = _trips(s, env)
            last = (s.start.value if isinstance(s.start, Const) else 0) + max(0, trips - 1) * s.step
            total += trips * _body_ops(s.body, k, {**env, s.var: last})
        elif isinstance(s, (Store, Assign)):
            total += _expr_ops(s.value)
        elif isinstance(s, Decl):
            total += _expr_ops(s.init)
        elif isinstance(s, If):
            total += max(_body_ops(s.then, k, env), _body_ops(s.orelse, k, env))
        elif isinstance(s, CallKernel):
            total += kernel_ops(k.callee(s.callee))
    return total


def kernel_ops(k: Kernel) -> int:
    """Arithmetic operations one run of kernel ``k`` executes (the rule is :data:`OPS_RULE`).

    ``acc += A[i, k] * B[k, j]`` inside ``for i, j, k`` of 16 each is 2 x 16**3 = 8192 ops."""
    return _body_ops(k.body, k, {})


# ------------------------------------------------------------------ the plot's numbers
@dataclass
class Roof:
    label: str
    gops: float  # a compute roof in GOP/s, or a bandwidth in GB/s for a memory roof


@dataclass
class RooflinePoint:
    label: str
    intensity: float  # ops / byte
    gops: float
    marker: str = "o"


@dataclass
class Roofline:
    title: str
    caption: str
    memory: list[Roof]
    compute: list[Roof]
    points: list[RooflinePoint]


def _is_llm_perf(x) -> bool:
    """A whole model's performance (``ModelPerf``: the LLM library's ``llm_perf`` result)."""
    from ..perf.modelperf import ModelPerf

    return isinstance(x, ModelPerf)


def _board_roofs(b, clock_mhz: float) -> tuple[list[Roof], list[Roof]]:
    mem = b.memory
    compute = [Roof(f"fp32 fabric peak {b.fp32_peak_gflops(clock_mhz):,.0f} GOP/s", b.fp32_peak_gflops(clock_mhz))]
    if b.peak_int8_tops:
        compute.append(Roof(f"INT8 peak {b.peak_int8_tops * 1e3:,.0f} GOP/s", b.peak_int8_tops * 1e3))
    return [Roof(f"{mem.kind} {mem.total_gbs:g} GB/s", mem.total_gbs)], compute


def design_roofline(perf) -> Roofline:
    g = perf.schedule
    ops = sum(kernel_ops(g.kernel_ir(t)) for t in g.graph.tasks)
    nbytes = perf.dma_bytes
    if perf.cycles <= 0:
        raise VizError(f"roofline: the model of {perf.name} has no run time (the token simulation failed: "
                       f"{'; '.join(perf.problems) or 'no cycles'})", caller_loc(),
                       hint="fix the design until model_design(g, board) reports cycles (see perf.problems)")
    if ops <= 0 or nbytes <= 0:
        raise VizError(f"roofline: {perf.name} has {ops} ops and {nbytes} bytes of DMA traffic; a roofline needs both",
                       caller_loc(), hint="a design with arithmetic kernels and off-chip inputs or outputs")
    memory, compute = _board_roofs(perf.board, perf.clock_mhz)  # the model spreads DMAs over every channel
    gops = ops / perf.latency_s / 1e9
    title = (f"{perf.name} on {perf.board.name} @ {perf.clock_mhz:g} MHz: {gops:.3g} GOP/s "
             f"({ops:,} ops, {nbytes:,} B, {perf.cycles:,} cycles)")
    caption = OPS_RULE + "; bytes = every DMA's traffic; time = token-simulator cycles at the clock"
    return Roofline(title, caption, memory, compute, [RooflinePoint("design", ops / nbytes, gops)])


def llm_roofline(p) -> Roofline:
    ops = float(p.ops_per_token())
    nbytes = float(sum(p.bytes_per_token().values()))
    if ops <= 0 or nbytes <= 0 or p.tokens_per_s <= 0:
        raise VizError("roofline: the LLM model has no ops, bytes or rate to plot", caller_loc())
    b = p.board
    clock = p.clock_mhz
    memory, _ = _board_roofs(b, clock)
    compute = [Roof(f"fp32 fabric peak {p.fp32_roofline_tps * ops / 1e9:,.0f} GOP/s "
                    f"({p.fp32_roofline_tps:,.0f} tokens/s)", p.fp32_roofline_tps * ops / 1e9)]
    if p.int8_roofline_tps:
        compute.append(Roof(f"INT8 peak {p.int8_roofline_tps * ops / 1e9:,.0f} GOP/s "
                            f"({p.int8_roofline_tps:,.0f} tokens/s)", p.int8_roofline_tps * ops / 1e9))
    weights = b.memory.total_gbs * 1e9 / p.hbm_roofline_tps  # the bytes the HBM roofline counts per token
    title = f"{p.name} decode on {b.name}: {p.tokens_per_s:,.1f} tokens/s ({ops / 1e9:.3g} GOP, {nbytes / 2**20:.2f} MiB per token)"
    caption = ("ops per token = 2 x the layers' multiply-adds (LLMPerf.ops_per_token); bytes per token = every DMA "
               "of the decode layers (LLMPerf.bytes_per_token); the hollow point reads each weight once per token")
    points = [RooflinePoint(f"decode: {p.tokens_per_s:,.1f} tokens/s", ops / nbytes, p.tokens_per_s * ops / 1e9),
              RooflinePoint(f"HBM roofline (weights only): {p.hbm_roofline_tps:,.0f} tokens/s", ops / weights,
                            p.hbm_roofline_tps * ops / 1e9, marker="hollow")]
    return Roofline(title, caption, memory, compute, points)


def _roofline(what: str, perf) -> Roofline:
    if is_design_perf(perf):
        return design_roofline(perf)
    if _is_llm_perf(perf):
        return llm_roofline(perf)
    raise VizError(f"{what} takes a performance model, got {type(perf).__name__}", caller_loc(),
                   hint='a DesignPerf (streamdsl.perf.model.model_design(g, "u55c")) or an LLM model\'s llm_perf(...)')


# ------------------------------------------------------------------ drawing
def _figure(what: str, perf):
    r = _roofline(what, perf)
    peak = max(c.gops for c in r.compute)
    bw = max(m.gops for m in r.memory)
    xs = [p.intensity for p in r.points] + [c.gops / m.gops for c in r.compute for m in r.memory]
    lo, hi = 10 ** math.floor(math.log10(min(xs)) - 1), 10 ** math.ceil(math.log10(max(xs)) + 1)
    fig = new_figure(9, 6)
    ax = fig.subplots()
    for k, m in enumerate(r.memory):
        ridge = peak / m.gops
        ax.loglog([lo, ridge], [m.gops * lo, peak], color="black" if k == 0 else "grey",
                  linestyle="-" if k == 0 else "--", linewidth=1.5, label=f"memory roof: {m.label}")
    for k, c in enumerate(sorted(r.compute, key=lambda c: c.gops)):
        ax.loglog([c.gops / bw, hi], [c.gops, c.gops], color=f"C{k + 2}", linewidth=1.5, label=f"compute roof: {c.label}")
    for p in r.points:
        hollow = p.marker == "hollow"
        ax.loglog([p.intensity], [p.gops], "o", markersize=9, markerfacecolor="none" if hollow else "C3",
                  markeredgecolor="C3", linestyle="none", label=p.label)
        ax.annotate(f"{p.gops:.3g} GOP/s at {p.intensity:.3g} ops/B", (p.intensity, p.gops), textcoords="offset points",
                    xytext=(8, -14 if hollow else 6), fontsize=8)
    low = min([p.gops for p in r.points] + [bw * lo])
    ax.set_xlim(lo, hi)
    ax.set_ylim(low / 10, peak * 10)
    ax.set_xlabel("operational intensity (ops / byte of off-chip traffic)")
    ax.set_ylabel("attainable performance (GOP/s)")
    ax.set_title(r.title, fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower right", fontsize=7)
    fig.supxlabel(r.caption, fontsize=6.5, wrap=True)
    return fig


@user_facing
def roofline_figure(perf):
    """A roofline plot of a ``DesignPerf`` (``model_design(g, board)``) or an LLM model (``llm_perf(...)``)."""
    return _figure("roofline_figure", perf)


@user_facing
def roofline_png(perf, path) -> Path:
    """:func:`roofline_figure` written to ``path`` as PNG (the suffix is replaced); returns the file written."""
    p = out_path("roofline_png", path, ".png")
    return save_png("roofline_png", _figure("roofline_png", perf), p)
