"""The HTML report of a design: its numbers, pictures and generated code on one page.

``write_report(target, out_dir)`` writes ``out_dir/report.html``, a single
self-contained file (inline CSS, the dataflow graph as inline SVG, plots as
``data:`` PNGs, no JavaScript) that can be mailed or opened from disk::

    g = sd.schedule(ffn); ...; g.size_fifos()
    write_report(g, "out")                # -> out/report.html

What goes in, by target:

* a ``DataflowSchedule`` (or an ``@sd.dataflow`` function, reported as the
  command line builds it: one fused region, FIFOs sized): the modeled
  latency (:func:`streamdsl.perf.model.model_design` on ``board``), each
  kernel's cycles and II (:func:`streamdsl.cost.model.estimate`),
  resources per SLR against the board, DMAs and FIFOs; the graph, the
  token-simulation timeline and the roofline (:mod:`streamdsl.viz`); the HLS
  C++, every task's scheduled IR, the schedule traces and ``print(g)``;
* a ``DesignPerf`` or an exploration (``sd.explore``): the same for the
  modeled design (at its own board), plus the table of designs tried;
* an LLM performance object (``llm_perf``; duck-typed, the core never imports
  the library): TTFT, tokens/s, rooflines, gaps and assumptions, then its
  decode layer design as above;
* an end-to-end model of a generate call (the LLM library's ``end_to_end``,
  duck-typed): its tokens/s, TTFT and latency, a decode step, TTFT and the call
  by part, every kernel of the generate kernel and whether they fit together,
  its assumptions, then its first decode layer design as above;
* an ``@sd.kernel`` function or a kernel ``Schedule``: the cost model's
  cycles, loops and resources, the HLS C++, the IR and the trace.

Everything from code goes through Jinja2's autoescape.  ``notebook_html`` and
``perf_html`` give the short HTML of the ``_repr_html_`` methods.
"""
from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from .compat import renamed
from .errors import StreamDSLError, caller_loc

TEMPLATES = Path(__file__).parent / "templates"
REPORT = "report.html"
FRAGMENT_KERNELS = 8  # kernel rows a notebook view shows
II_AMBER = ("II in amber: above 1, the pipelined loop starts an iteration only every II cycles (its note says "
            "why: a recurrence, memory ports, or the II asked for)")
GRAPH_MIN_SCALE = 0.75  # a wide graph is drawn at least this large (10 pt labels stay readable) and scrolls


class ReportError(StreamDSLError):
    kind = "report error"


# ------------------------------------------------------------------ page model
@dataclass
class Cell:
    """One table cell; ``pct`` draws a bar behind it (``warn``/``bad`` past 80 %/100 %)."""

    text: str
    pct: float | None = None
    cls: str = ""
    title: str = ""


@dataclass
class Table:
    header: list[str]
    rows: list[list[Cell]]
    align: str = ""  # one letter per column: l (left) or r (right); default: first left, rest right
    caption: str = ""

    def col(self, n: int) -> str:
        a = self.align[n] if n < len(self.align) else ("l" if n == 0 else "r")
        return "num" if a == "r" else ""


@dataclass
class Code:
    id: str
    title: str
    text: str
    lang: str = "text"
    open: bool = False
    note: str = ""

    @property
    def lines(self) -> int:
        return self.text.count("\n") + 1

    @property
    def html(self):
        return highlight(self.text, self.lang)


@dataclass
class Picture:
    id: str
    title: str
    svg: str | None = None  # inline SVG markup
    png: str | None = None  # a data: URI
    alt: str = ""
    note: str = ""
    fallback: str = ""  # text shown when there is no picture


@dataclass
class Page:
    title: str
    subtitle: str = ""
    badges: list[tuple[str, str]] = field(default_factory=list)  # (text, ok|bad|info)
    cards: list[tuple[str, str, str]] = field(default_factory=list)  # (label, value, note)
    llm_cards: list[tuple[str, str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    graph: Picture | None = None
    kernels: Table | None = None
    loops: Table | None = None
    timeline: Picture | None = None
    roofline: Picture | None = None
    resources: Table | None = None
    dmas: Table | None = None
    fifos: Table | None = None
    llm_layers: Table | None = None
    gaps: list[str] = field(default_factory=list)
    explored: Table | None = None
    explored_note: str = ""
    llm_note: str = ""
    e2e_cards: list[tuple[str, str, str]] = field(default_factory=list)
    e2e_parts: Table | None = None
    e2e_kernels: Table | None = None
    e2e_note: str = ""
    code: list[Code] = field(default_factory=list)
    ir: list[Code] = field(default_factory=list)
    traces: list[Code] = field(default_factory=list)
    printed: list[Code] = field(default_factory=list)
    assumptions: list[tuple[str, list[str]]] = field(default_factory=list)  # (heading, items)
    version: str = ""

    def toc(self) -> list[tuple[str, str]]:
        out = [("summary", "Summary")]
        if self.graph or self.kernels or self.loops:
            out.append(("design", "Design"))
        if self.llm_layers is not None:
            out.append(("llm", "LLM layers"))
        if self.e2e_parts is not None:
            out.append(("e2e", "End to end"))
        if self.timeline or self.roofline:
            out.append(("plots", "Timeline & roofline"))
        if self.resources:
            out.append(("resources", "Resources"))
        if self.dmas or self.fifos:
            out.append(("memory", "DMAs & FIFOs"))
        if self.explored:
            out.append(("explored", "Exploration"))
        if self.code:
            out.append(("code", "HLS C++"))
        if self.ir:
            out.append(("ir", "Kernel IR"))
        if self.traces or self.printed:
            out.append(("trace", "Schedule"))
        if self.assumptions:
            out.append(("assumptions", "Assumptions"))
        return out


# ------------------------------------------------------------------ highlighting
_KEYWORDS = {
    "cpp": "void for if else return const static int float double bool char unsigned long short struct "
           "template typename auto while break continue inline namespace using true false sizeof",
    "ir": "kernel for in range alloc decl if else return call",
    "py": "for in if else return def import from as None True False",
}
_TOKEN = re.compile(
    r"(?P<comment>//[^\n]*|/\*.*?\*/)"
    r"|(?P<pragma>^[ \t]*#[^\n]*)"
    r"|(?P<string>\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')"
    r"|(?P<number>\b\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[a-zA-Z0-9]*)"
    r"|(?P<word>\b[A-Za-z_]\w*\b)", re.S | re.M)


def highlight(text: str, lang: str = "text"):
    """Escaped HTML of ``text`` with comments, pragmas, strings, numbers and keywords in spans."""
    from markupsafe import Markup

    if lang not in _KEYWORDS:
        return Markup(html.escape(text))
    words = set(_KEYWORDS[lang].split())
    out, pos = [], 0
    for m in _TOKEN.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind == "word" and tok not in words:
            continue
        if kind == "pragma" and lang != "cpp":
            continue
        if kind == "comment" and lang != "cpp":
            continue
        out.append(html.escape(text[pos:m.start()]))
        cls = {"word": "kw", "pragma": "pp", "comment": "cm", "string": "st", "number": "nu"}[kind]
        out.append(f'<span class="{cls}">{html.escape(tok)}</span>')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return Markup("".join(out))


# ------------------------------------------------------------------ helpers
def _env():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["svg"] = _svg_markup
    return env


def _svg_markup(svg: str | None):
    """Graphviz's SVG without its XML prolog, to inline in HTML (dot escapes the labels itself)."""
    from markupsafe import Markup

    if not svg:
        return Markup("")
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    m = re.match(r'<svg width="([\d.]+)pt"', svg)
    if m:  # fit the width, but never below GRAPH_MIN_SCALE of the natural size (then it scrolls)
        px = float(m.group(1)) * 4 / 3
        style = f"width: min({px:.0f}px, max(100%, {GRAPH_MIN_SCALE * px:.0f}px)); max-width: none; height: auto"
        svg = f'<svg style="{style}"' + svg[4:]
    return Markup(svg)


def _png_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _num(x) -> str:
    return f"{int(x):,}".replace(",", "\u2009")  # thin spaces group digits


def _pct(a, b) -> float | None:
    return 100.0 * a / b if b else None


def _us(cycles: float, clock_mhz: float) -> str:
    us = cycles / clock_mhz
    return f"{us / 1e3:.2f} ms" if us >= 1e3 else f"{us:.2f} \u00b5s"


def _rate(x: float) -> str:
    return _num(round(x)) if x >= 100 else f"{x:.1f}"


def _bytes(n: float) -> str:
    for unit, size in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.{1 if unit == 'KiB' else 2}f} {unit}"
    return f"{int(n)} B"


def _res_cell(used: int, cap: int) -> Cell:
    p = _pct(used, cap)
    cls = "" if p is None else "bad" if p > 100 else "warn" if p > 80 else ""
    text = f"{_num(used)} / {_num(cap)}" + (f"  ({p:.1f} %)" if p is not None else "")
    return Cell(text, min(p, 100.0) if p is not None else None, cls)


def _is_llm_perf(obj) -> bool:
    """A whole model's performance (``ModelPerf``: the LLM library's ``llm_perf`` result)."""
    from .perf.modelperf import ModelPerf

    return isinstance(obj, ModelPerf)


def _is_end_to_end(obj) -> bool:
    """The LLM library's end-to-end model of a generate call (``end_to_end``)."""
    return all(hasattr(obj, a) for a in ("decode_step", "prompt_steps", "call", "designs", "assumptions"))


def _is_exploration(obj) -> bool:
    return hasattr(obj, "best") and hasattr(obj, "tried") and hasattr(obj, "table")


def _is_design_perf(obj) -> bool:
    from .perf.model import DesignPerf

    return isinstance(obj, DesignPerf)


# ------------------------------------------------------------------ sections
def _pictures(page: Page, g, perf, roof) -> None:
    """The graph and timeline of ``g`` as modeled by ``perf``; the roofline of ``roof`` (a design or an LLM)."""
    from . import viz

    svg = viz.graph_svg(g, perf=perf)
    page.graph = Picture("graph", "Dataflow graph", svg=svg, alt="dataflow graph",
                         note="" if svg else "Graphviz (dot) is not installed: the graph is shown as text "
                         "(sh scripts/setup.sh installs it)", fallback="" if svg else str(g))
    if perf.sim is None:  # model_design found a deadlock: say so where the timeline would be
        page.timeline = Picture("timeline", "Token-simulation timeline", alt="token-simulation timeline",
                                fallback="\n".join(p for p in perf.problems if "deadlock" in p) or "no simulation",
                                note="the token simulator deadlocks at these FIFO depths: g.size_fifos() sizes them")
    else:
        page.timeline = Picture("timeline", "Token-simulation timeline", png=_png_uri(viz.timeline_figure(perf)),
                                alt="token-simulation timeline",
                                note="simulated with the board's timing, as the latency above")
    if roof is not perf or perf.sim is not None:  # a deadlocked design has no run time to place
        page.roofline = Picture("roofline", "Roofline", png=_png_uri(viz.roofline_figure(roof)), alt="roofline")


def _design(page: Page, g, perf) -> None:
    """Numbers and code of a dataflow design modeled as ``perf``."""
    from .boards import RESOURCES
    from .cost.model import estimate

    b, clock = perf.board, perf.clock_mhz
    page.cards += [
        ("latency", f"{_num(perf.cycles)} cycles" if perf.sim else "deadlock",
         f"{_us(perf.cycles, clock)} at {clock:g} MHz (token simulator)" if perf.sim else "in the token simulator"),
        ("analytic estimate", f"{_num(perf.analytic)} cycles", "closed form, no FIFO limits"),
        ("DMA traffic", _bytes(perf.dma_bytes), f"per run, over {perf.channels_used} of {b.memory.channels} "
         f"{b.memory.kind} channels"),
        ("on-chip buffers", _bytes(perf.onchip_bytes), "FIFOs, converters, kernel locals"),
        ("tasks / regions", f"{len(g.graph.tasks)} / {len(g.regions())}", f"{len(perf.nodes)} hardware nodes"),
    ]
    page.badges.append(("fits the board", "ok") if perf.fits else ("does NOT fit the board", "bad"))
    page.problems += perf.problems
    sim = perf.sim
    total = max(1, perf.cycles)
    rows = []
    loops = []
    for n in sorted((n for n in perf.nodes.values() if n.kind == "task"), key=lambda n: -n.cycles):
        rep = estimate(g.kernel_ir(n.name), b, clock)
        iis = [lp for lp in rep.loops if lp.ii is not None]
        ii = ", ".join(f"{lp.var}: {lp.ii}" for lp in iis) or "-"
        worst = max((lp.ii for lp in iis), default=1)
        r = n.resources
        rows.append([Cell(n.name), Cell(str(n.region)), Cell(f"SLR{n.slr}"),
                     Cell(_num(n.cycles), _pct(n.cycles, total)), Cell(_us(n.cycles, clock)),
                     Cell(ii, cls="warn" if worst > 1 else "", title="; ".join(lp.note for lp in iis if lp.note)),
                     Cell(_num(sim.stall.get(n.name, 0)) if sim else "-"),
                     *(Cell(_num(r[k])) for k in ("dsp", "lut", "bram", "uram"))])
        for lp in rep.loops:
            loops.append([Cell(n.name), Cell(lp.var), Cell(_num(lp.trips)), Cell(_num(lp.cycles)),
                          Cell("-" if lp.ii is None else str(lp.ii), cls="warn" if (lp.ii or 1) > 1 else ""),
                          Cell("-" if lp.depth is None else str(lp.depth)), Cell(lp.note)])
    page.kernels = Table(["kernel task", "region", "SLR", "cycles", "time", "II (pipelined loops)", "stall",
                          "DSP", "LUT", "BRAM18K", "URAM"], rows, "lrrrrlrrrrr",
                         caption="cycles: streamdsl.cost.model.estimate of the scheduled IR (bar: share of the "
                         "end-to-end latency); stall: cycles the task waited in the token simulator; " + II_AMBER)
    page.loops = Table(["task", "loop", "trips", "cycles", "II", "depth", "note"], loops, "llrrrrl", caption=II_AMBER)
    cap = b.slrs
    res_rows = [[Cell(f"SLR{s}"), *(_res_cell(use[r], cap[s][r]) for r in RESOURCES)]
                for s, use in enumerate(perf.slr_use)]
    res_rows.append([Cell("total", cls="strong"), *(_res_cell(perf.total[r], b.total[r]) for r in RESOURCES)])
    page.resources = Table(["", *("BRAM18K" if r == "bram" else r.upper() for r in RESOURCES)], res_rows,
                           caption=f"{b.name} ({b.part}), SLR assignment by an ILP; bytes crossing SLRs per run: "
                           f"{_num(perf.crossing_bytes)}")
    page.dmas = Table(["DMA", "tensor", "dir", "bytes", "bits", "channels", "GB/s", "cycles"],
                      [[Cell(d.name), Cell(d.tensor), Cell(d.direction), Cell(_num(d.bytes), _pct(d.bytes, perf.dma_bytes)),
                        Cell(str(d.bits)), Cell(f"{d.channels:.2f}"), Cell(f"{d.gbs:.2f}"), Cell(_num(d.cycles))]
                       for d in sorted(perf.dmas, key=lambda d: -d.bytes)], "lllrrrrr")
    low = g.lowered()
    fifo_rows = []
    for f in low.streams:
        depth = perf.depths.get(f.name, 2)
        d, src = g.depth(f.name)
        peak = sim.peak.get(f.name) if sim else None
        fifo_rows.append([Cell(f.name), Cell(f"{f.src} \u2192 {f.dst}"), Cell(str(f.layout), cls="mono"),
                          Cell(_num(f.tokens)), Cell(_num(f.token_bytes)), Cell(_num(depth)),
                          Cell(src if d == depth else "model"), Cell("-" if peak is None else _num(peak))])
    page.fifos = Table(["FIFO", "from \u2192 to", "itensor", "tokens", "token B", "depth", "depth from", "peak"],
                       fifo_rows, "lllrrrlr")
    page.assumptions.append(("design model", list(perf.assumptions)))
    page.assumptions.append(("board", [a.strip() for a in b.assumptions()]))


def _dataflow_code(page: Page, g) -> None:
    name = g.graph.ir.name
    _project_code(page, g.build("hls"))  # text only: nothing is written
    page.ir.append(Code("ir-dataflow", f"dataflow {name}", str(g.graph.ir), "ir"))
    for t in g.graph.tasks:
        page.ir.append(Code(f"ir-{_slug(t)}", f"task {t}", str(g.kernel_ir(t)), "ir"))
    page.traces.append(Code("trace-dataflow", "dataflow schedule trace", str(g.trace), "py", open=True))
    for t, s in getattr(g, "_schedules", {}).items():
        if s.trace.steps:
            page.traces.append(Code(f"trace-{_slug(t)}", f"kernel schedule of {t}", str(s.trace), "py"))
    page.printed.append(Code("printed", "print(g): the design as it would be built", str(g), "text"))


def _project_code(page: Page, prj) -> None:
    """The project's C++ (its files are named after the top function's C++ name) and tcl script."""
    top = prj.top
    for fname in (f"{top}.cpp", f"{top}.h", f"tb_{top}.cpp", "run_hls.tcl"):
        if fname in prj.files:
            page.code.append(Code(f"code-{_slug(fname)}", fname, prj.files[fname],
                                  "cpp" if fname.endswith((".cpp", ".h")) else "text", open=fname == f"{top}.cpp"))


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", s)


def _kernel(page: Page, s, board) -> None:
    """A single kernel (``s``: its Schedule, or None for an unscheduled kernel IR ``k``)."""
    from .backend.hls import build
    from .boards import RESOURCES
    from .cost.model import estimate

    k = s.ir
    rep = estimate(k, board)
    page.cards += [("latency", f"{_num(rep.cycles)} cycles", f"{_us(rep.cycles, rep.clock_mhz)} at {rep.clock_mhz:g} MHz "
                    "(cost model)"),
                   ("loops", str(len(rep.loops)), "pipelined: " + (", ".join(lp.var for lp in rep.loops
                                                                              if lp.ii is not None) or "none"))]
    page.loops = Table(["loop", "trips", "cycles", "II", "depth", "note"],
                       [[Cell(lp.var), Cell(_num(lp.trips)), Cell(_num(lp.cycles), _pct(lp.cycles, rep.cycles)),
                         Cell("-" if lp.ii is None else str(lp.ii), cls="warn" if (lp.ii or 1) > 1 else ""),
                         Cell("-" if lp.depth is None else str(lp.depth)), Cell(lp.note)] for lp in rep.loops], "lrrrrl",
                       caption="streamdsl.cost.model.estimate of the scheduled IR; " + II_AMBER)
    page.resources = Table(["", *("BRAM18K" if r == "bram" else r.upper() for r in RESOURCES)],
                           [[Cell(rep.board), *(_res_cell(rep.resources.get(r, 0), rep.budget[r]) for r in RESOURCES)]],
                           caption="the kernel alone against the whole board (cost model)")
    _project_code(page, build(k, board=board))
    page.ir.append(Code("ir-kernel", f"kernel {k.name}", str(k), "ir", open=True))
    page.traces.append(Code("trace-kernel", "schedule trace", str(s.trace), "py", open=True))
    page.assumptions.append(("cost model", ["op latencies at 250 MHz scaled by the clock, loop control 1 "
                                            "cycle/iteration, 2 ports per memory bank (streamdsl.cost.model)",
                                            "model estimates from the scheduled IR, not a Vitis report"]))


def _llm(page: Page, lp) -> None:
    """LLM-level numbers of an ``llm_perf`` result."""
    b = lp.board
    i8 = lp.int8_roofline_tps
    bpt = lp.bytes_per_token()
    page.llm_cards += [
        ("TTFT", f"{lp.ttft_s * 1e3:.2f} ms", f"prefill of {lp.prompt} tokens"),
        ("decode", f"{_rate(lp.tokens_per_s)} tokens/s", f"{lp.decode_s * 1e3:.3f} ms per token"),
        ("latency", f"{lp.latency_s * 1e3:.1f} ms", f"[in:out] = [{lp.prompt}:{lp.gen}]"),
        ("bytes per token", f"{sum(bpt.values()) / 2**20:.2f} MiB",
         f"weights {bpt['weights'] / 2**20:.2f}, KV {bpt['kv'] / 2**20:.2f}, act {bpt['act'] / 2**20:.3f}"),
        ("HBM roofline", f"{_rate(lp.hbm_roofline_tps)} tokens/s",
         f"design at {lp.tokens_per_s / lp.hbm_roofline_tps * 100:.2f} %"),
        ("fp32 compute roofline", f"{_rate(lp.fp32_roofline_tps)} tokens/s",
         f"design at {lp.tokens_per_s / lp.fp32_roofline_tps * 100:.2f} %"
         + (f"; INT8 roofline {_rate(i8)} tokens/s" if i8 else "")),
    ]
    page.llm_layers = Table(
        ["layer kind", "count", "decode cycles", "decode time", "prefill cycles", "prefill time", "fits"],
        [[Cell(x.kind), Cell(str(x.count)), Cell(_num(x.decode.cycles)), Cell(_us(x.decode.cycles, x.decode.clock_mhz)),
          Cell(_num(x.prefill.cycles)), Cell(_us(x.prefill.cycles, x.prefill.clock_mhz)),
          Cell("yes" if x.decode.fits and x.prefill.fits else "NO", cls="" if x.decode.fits and x.prefill.fits else "bad")]
         for x in lp.layers], "lrrrrrl",
        caption=f"{lp.name} on {b.name} at {lp.clock_mhz:g} MHz: one fused layer accelerator "
        "re-invoked per layer (model estimates; explored with sd.explore)")
    page.gaps = list(lp.gaps())
    page.assumptions.insert(0, ("LLM model", list(lp.assumptions())))


def _e2e(page: Page, e) -> None:
    """The figures of an end-to-end model, by part, and the kernels of its generate kernel (its own numbers)."""
    step, first, call = e.decode_step(), e.ttft(), e.call()
    fit = e.fit()
    together = ("no prefill kernel: both phases are needed" if fit is None else
                "every kernel fits the board together" if fit.fits else "; ".join(fit.problems))
    page.e2e_cards += [
        ("decode, end to end", f"{_rate(e.tokens_per_s)} tokens/s",
         f"{step.total_s * 1e3:.3f} ms a step; the layer kernels alone {_rate(e.layer_tokens_per_s)} tokens/s"),
        ("TTFT", f"{e.ttft_s * 1e3:.3f} ms", f"prompt of {e.prompt} tokens, one launch"),
        ("latency", f"{e.latency_s * 1e3:.2f} ms", f"the generate call for [in:out] = [{e.prompt}:{e.gen}]"),
        ("HBM roofline", f"{_rate(e.hbm_roofline_tps)} tokens/s",
         f"end to end at {100 * e.tokens_per_s / e.hbm_roofline_tps:.2f} %"),
        ("fits", "yes" if e.fits else "NO", together),
    ]

    def row(what, c):
        return [Cell(what), Cell(f"{c.total_s * 1e3:.3f}"), Cell(f"{c.gather_s * 1e3:.3f}"),
                Cell(f"{c.layers_s * 1e3:.3f}"), Cell(f"{c.heads} x, {c.head_s * 1e3:.3f}"),
                Cell(f"{c.launches} x, {c.launch_s * 1e3:.3f}"), Cell(f"{c.syncs} x, {_bytes(c.pcie_bytes)}, "
                                                                     f"{c.pcie_s * 1e3:.3f}")]

    page.e2e_parts = Table(["", "total ms", "gather ms", "layers ms", "head ms", "launch ms", "PCIe ms"],
                           [row("a decode step", step), row("TTFT", first), row("the generate call", call)], "lrrrrrr",
                           caption=f"{e.name} on {e.board.name}, {e.quant.upper()}: one generate kernel, one launch "
                           f"a call ({e.design} layer design; "
                           f"{'emitted by ' + e.build_command if e.emitted else 'not emitted'})")
    page.e2e_kernels = Table(
        ["kernel", "latency", "cycles", "fits alone"],
        [[Cell(name), Cell(f"{d.latency_s * 1e6:.1f} us"), Cell(_num(d.cycles)),
          Cell("yes" if d.fits else "NO", cls="" if d.fits else "bad")]
         for name, d in e.designs().items() if d is not None], "lrrl",
        caption="the kernels the generate kernel calls; together: " + together)
    page.assumptions.insert(0, ("end to end", list(e.assumptions())))


def _exploration_table(page: Page, ex) -> None:
    from .explorer import HEADER

    rows = [[Cell(str(x)) for x in t.row()] for t in ex.tried]
    best = getattr(ex.best, "name", "")
    for r in rows:
        if r[0].text.lstrip("* ") == best:  # the table stars the best design
            for c in r:
                c.cls = (c.cls + " strong").strip()
    page.explored = Table(list(HEADER), rows, "llrrrrrrll", caption=f"{len(ex.tried)} design(s) tried by sd.explore")
    if ex.default is not None and ex.best.cycles and ex.default.cycles:
        page.explored_note = (f"default design: {_num(ex.default.cycles)} cycles; best: {_num(ex.best.cycles)} cycles "
                              f"({ex.default.cycles / ex.best.cycles:.1f}x faster)")


# ------------------------------------------------------------------ targets
def _resolve(target, board: str, loc):
    """(kind, dataflow schedule or None, perf or None, exploration or None, llm perf or None, kernel schedule or None)."""
    from .dfg.dfschedule import DataflowSchedule
    from .dfg.graph import DataflowFunction
    from .ir.nodes import Kernel
    from .sched.schedule import Schedule

    if isinstance(target, DataflowSchedule):
        return "dataflow", target, None, None, None, None
    if isinstance(target, DataflowFunction):
        g = DataflowSchedule(target)
        g.fuse(*g.tasks())  # as `streamdsl build` and `streamdsl report` build a bare dataflow
        g.size_fifos()
        return "dataflow", g, None, None, None, None
    if _is_design_perf(target):
        if target.schedule is None:
            raise ReportError("this DesignPerf has no schedule to report", loc,
                              hint="model a DataflowSchedule: model_design(g, board)")
        return "design", target.schedule, target, None, None, None
    if _is_llm_perf(target):
        if not target.layers:
            raise ReportError("this LLM performance result has no layers", loc, hint="llm_perf(model) explores them")
        d = target.layers[0].decode
        return "llm", d.schedule, d, None, target, None
    if _is_exploration(target):
        return "exploration", target.best.schedule, target.best, target, None, None
    if isinstance(target, Schedule):
        return "kernel", None, None, None, None, target
    if isinstance(target, Kernel):  # a Kernel IR (sd.parse_ir)
        return "kernel", None, None, None, None, Schedule(target)
    if hasattr(target, "ir") and hasattr(target, "fn") and callable(target):  # a KernelFunction
        return "kernel", None, None, None, None, Schedule(target)
    what = type(target).__name__
    raise ReportError(f"write_report cannot report a {what}", loc,
                      hint="pass a DataflowSchedule (g = sd.schedule(dataflow_fn)), an @sd.dataflow or @sd.kernel "
                      "function, a kernel Schedule, a DesignPerf (model_design), an sd.explore result or llm_perf(...)")


def build_page(target, *, board="u55c", title: str | None = None, llm=None, loc=None) -> Page:
    """The report's content (see the module docstring); ``llm``: an ``llm_perf`` result to show beside a layer."""
    from ._version import __version__
    from .boards import BoardError, board as get_board
    from .perf.model import model_design

    loc = loc or caller_loc()
    try:
        board = get_board(board)
    except BoardError as err:
        raise ReportError(err.message, loc, hint=err.hint) from None
    if title is not None and not isinstance(title, str):
        raise ReportError(f"title must be a string, got {type(title).__name__}", loc, hint='title="my design"')
    if llm is not None and not _is_llm_perf(llm):
        raise ReportError(f"llm= takes an llm_perf(...) result, got {type(llm).__name__}", loc,
                          hint="from streamdsl.library.llm.perf import llm_perf; write_report(g, out, llm=llm_perf(model))")
    e2e = target if _is_end_to_end(target) else None
    if e2e is not None:  # reported as its first decode layer design, its end-to-end figures above it
        target = e2e.layers[0].decode
    kind, g, perf, ex, lp, ks = _resolve(target, board, loc)
    page = Page(title="", version=__version__)
    if kind == "kernel":
        page.title = title or f"kernel {ks.ir.name}"
        page.subtitle = f"one kernel on {board.name} (cost model estimates from the scheduled IR, not a Vitis report)"
        _kernel(page, ks, board)
        return page
    if perf is None:
        perf = model_design(g, board)
    lp = lp or llm
    name = g.graph.ir.name
    if kind == "exploration":
        page.title = title or f"dataflow {name} on {perf.board.name}: the best of {len(ex.tried)} designs"
        page.subtitle = (f"sd.explore over tiling, fusion and resources; below: the best design at "
                         f"{perf.clock_mhz:g} MHz (model estimates, not a Vitis report)")
    elif kind == "llm":
        page.title = title or f"{lp.name} on {perf.board.name}"
        page.subtitle = (f"LLM performance model at [{lp.prompt}:{lp.gen}]; below: the explored decode layer design "
                         f"{name}")
    elif e2e is not None:
        page.title = title or f"{e2e.name} end to end on {e2e.board.name}"
        page.subtitle = (f"one generate kernel at [{e2e.prompt}:{e2e.gen}], {e2e.quant.upper()}; below: its "
                         f"{e2e.layers[0].kind} decode layer design {name}")
        _e2e(page, e2e)
    else:
        page.title = title or f"dataflow {name} on {perf.board.name}"
        page.subtitle = (f"{perf.board.name} ({perf.board.part}) at {perf.clock_mhz:g} MHz: model estimates from the "
                         "scheduled IR and the token simulator, not a Vitis report")
    if lp is not None:
        _llm(page, lp)
        if lp.layers[0].decode.schedule is not g:
            page.llm_note = (f"The LLM numbers come from llm_perf's explored decode layer ({_num(lp.layers[0].decode.cycles)} "
                             f"cycles per layer); the design reported below is {name} as given "
                             f"({_num(perf.cycles)} cycles).")
    if ex is not None:
        _exploration_table(page, ex)
    _design(page, g, perf)
    _dataflow_code(page, g)
    _pictures(page, g, perf, lp if lp is not None else perf)
    return page


def render(page: Page) -> str:
    return _env().get_template("report.html.j2").render(page=page)


def report_html(target, *, board="u55c", title: str | None = None, llm=None) -> str:
    """The report page of ``target`` as HTML text (see :func:`write_report`)."""
    return render(build_page(target, board=board, title=title, llm=llm, loc=caller_loc()))


@renamed(target="design")
def write_report(design, out_dir, *, board="u55c", title: str | None = None, quiet: bool = True,
                 llm=None) -> Path:
    """Write ``out_dir/report.html`` for ``design`` and return its path (nothing is printed).

    ``board`` is the board a design is modeled on (a DesignPerf, an exploration
    or an LLM result carries its own).  ``llm``: an ``llm_perf`` result whose
    LLM-level numbers go beside a layer design.  Only ``report.html`` is
    written: the rest of ``out_dir`` is left as it is.  ``quiet`` is accepted for
    old callers and has no effect.
    """
    target = design
    loc = caller_loc()
    if not isinstance(out_dir, (str, Path)) or str(out_dir) == "":
        raise ReportError(f"out_dir must be a folder path, got {out_dir!r}", loc, hint='write_report(g, "report")')
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ReportError(f"'{out}' is a file, not a folder", loc,
                          hint=f"name a folder; the report is written as {out}/{REPORT}")
    if (out / REPORT).is_dir():
        raise ReportError(f"'{out / REPORT}' is a folder", loc, hint="choose another out_dir")
    text = render(build_page(target, board=board, title=title, llm=llm, loc=loc))
    out.mkdir(parents=True, exist_ok=True)
    path = out / REPORT
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ notebooks
def present(obj) -> str:
    """The ``_repr_html_`` of anything the lower parts hand up (registered as ``present``/``html``)."""
    if _is_llm_perf(obj) or _is_exploration(obj) or _is_design_perf(obj) or _is_end_to_end(obj):
        return perf_html(obj)
    return notebook_html(obj)


def notebook_html(obj) -> str:
    """The ``_repr_html_`` of a dataflow object: its printed form and, when Graphviz is there, its graph."""
    from .dfg.dfschedule import DataflowSchedule
    from .dfg.graph import DataflowFunction

    try:
        text = str(obj)
    except StreamDSLError as err:
        return f"<pre>{html.escape(repr(obj))}\n{html.escape(err.render())}</pre>"
    svg = None
    if isinstance(obj, (DataflowSchedule, DataflowFunction)):
        from .viz import graph_svg

        svg = graph_svg(obj)
    pic = f'<div style="max-width:100%;overflow:auto">{_svg_markup(svg)}</div>' if svg else ""
    return (f'<div class="streamdsl"><div><b>{html.escape(repr(obj))}</b></div>{pic}'
            f"<details{'' if svg else ' open'}><summary>printed form</summary><pre>{html.escape(text)}</pre></details></div>")


def perf_html(obj) -> str:
    """Short HTML of a DesignPerf, an exploration or an LLM performance result (for ``_repr_html_``)."""
    page = Page(title="")
    if _is_llm_perf(obj):
        _llm(page, obj)
        page.title = f"{obj.name} on {obj.board.name}"
        perf = obj.layers[0].decode if obj.layers else None
    elif _is_end_to_end(obj):
        _e2e(page, obj)
        page.title = f"{obj.name} end to end on {obj.board.name}"
        perf = obj.layers[0].decode if obj.layers else None
    elif _is_exploration(obj):
        _exploration_table(page, obj)
        name = obj.best.schedule.graph.ir.name if obj.best.schedule is not None else obj.best.name
        page.title = f"exploration of {name} on {obj.best.board.name}: best design {obj.best.name!r}"
        perf = obj.best
    elif _is_design_perf(obj):
        page.title = f"design {obj.name} on {obj.board.name}"
        perf = obj
    else:
        return f"<pre>{html.escape(repr(obj))}</pre>"
    if perf is not None and perf.schedule is not None:
        _design(page, perf.schedule, perf)
        if len(page.kernels.rows) > FRAGMENT_KERNELS:
            more = len(page.kernels.rows) - FRAGMENT_KERNELS
            page.kernels.rows = page.kernels.rows[:FRAGMENT_KERNELS]
            page.kernels.caption = f"the {FRAGMENT_KERNELS} slowest kernels ({more} more in the full report)"
    return _env().get_template("fragment.html.j2").render(page=page, text=obj.report())


__all__ = ["ReportError", "build_page", "highlight", "notebook_html", "perf_html", "report_html", "write_report"]
