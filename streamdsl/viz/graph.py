"""The dataflow design as a Graphviz picture: what ``g.lowered()`` builds, one shape per kind.

* kernel tasks: boxes with the task name, its kernel and its timing (token-sim
  its cycles and token steps; with ``perf``, the modeled cycles and DSPs);
* layout converters: hexagons with their buffer; forks: diamonds;
* DMAs: cylinders (loads green, stores orange) with the memory bank(s) they use,
  ``HBM[a:b]`` as a Vitis link config writes it, one fact a line (banks, a shared
  channel's share, bytes, rate) so that a rank of DMAs stays narrow;
* FIFOs: edges labelled with their name, tokens and token shape, depth and
  where the depth came from, with the whole itensor (as ``print(g)`` shows it)
  in the edge's tooltip; the DRAM hand-off between regions is a dashed edge;
* regions: clusters, titled with their on-chip bytes.

The graph is ranked top to bottom with short edge labels, so a layer of a dozen kernels and their
DMAs is about as wide as a screen and scrolls down (ranked left to right with the itensors on the
edges, an LLM decode layer was 9,000 px wide).  Its width is that of its widest rank: a kernel's
DMAs sit side by side on the rank above it, beside its other producers and the FIFOs' labels (a
decode attention reading its K/V caches takes five inputs), so labels are kept a few short lines
and a kernel's own loads are stacked :data:`DMAS_A_ROW` a row.

Banks: each region's DMAs take the memory's channels in order, as many as
:func:`streamdsl.perf.model.allocate_channels` gives each (the smallest DMAs
share the last channel; the others' channels follow when each is needed).  Regions run one after another,
so every region counts from bank 0.  Without ``perf`` the allocation is the
U55C's (32 HBM pseudo-channels) with every tensor at its dtype's width.
"""
from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..dfg.layout import describe
from ..dfg.printer import task_timing
from ..errors import caller_loc, user_facing
from .common import VizError, check_perf, out_path, schedule_of

DOT_TIMEOUT_S = 60
DMAS_A_ROW = 3  # a kernel's own loads side by side on one rank; more are stacked in rows above them

STYLE = {  # kind -> node attributes
    "task": dict(shape="box", style="rounded,filled", fillcolor="#dbe9f6"),
    "converter": dict(shape="hexagon", style="filled", fillcolor="#fff2cc"),
    "fork": dict(shape="diamond", style="filled", fillcolor="#eeeeee"),
    "load": dict(shape="cylinder", style="filled", fillcolor="#d9ead3"),
    "store": dict(shape="cylinder", style="filled", fillcolor="#fce5cd"),
}


def quote(text) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, newlines as centred line breaks."""
    s = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
    return '"' + s.replace("\n", "\\n") + '"'


def _attrs(**kw) -> str:
    return "[" + ", ".join(f"{k}={quote(v)}" for k, v in kw.items()) + "]"


def _tokens(it) -> str:
    """A stream in a few words: ``16 tokens of 1x64 f32`` (the edge's tooltip has the itensor)."""
    n = it.num_tokens
    return f"{n} token{'s' if n != 1 else ''} of {'x'.join(map(str, it.element))} {it.dtype}"


def _bank_text(kind: str, lo: int, hi: int) -> str:
    name = re.sub(r"\d+$", "", kind) or kind  # HBM2 -> HBM[..], DDR4 -> DDR[..], as v++ connectivity names them
    return f"{name}[{lo}]" if lo == hi else f"{name}[{lo}:{hi}]"


def dma_banks(dmas, channels: int) -> dict[str, tuple[int, int]]:
    """(first, last) memory channel of every DMA; ``dmas`` in design order, their ``channels`` allocated."""
    out: dict[str, tuple[int, int]] = {}
    for region in sorted({d.region for d in dmas}):
        nxt = 0
        for d in (d for d in dmas if d.region == region):
            if d.channels >= 1:
                n = max(1, math.ceil(d.channels - 1e-9))
                out[d.name] = (nxt, nxt + n - 1)
                nxt += n
            else:  # sharing the last channel with the other small DMAs
                out[d.name] = (channels - 1, channels - 1)
    return out


def _dma_plan(g, low, perf):
    """(memory, {dma: DmaModel}, {dma: banks}) from ``perf`` or from the default board's allocation."""
    if perf is not None:
        mem, dmas = perf.board.memory, list(perf.dmas)
    else:
        timing = g.timing()
        mem, dmas = timing.board.memory, timing.dmas
    return mem, {d.name: d for d in dmas}, dma_banks(dmas, mem.channels)


def _node_label(g, n, perf, mem, dmas, banks) -> str:
    s = perf.nodes[n.name].task if perf is not None else g.timing().tasks[n.name]
    timing = task_timing(s)
    np_ = perf.nodes.get(n.name) if perf is not None else None
    if n.kind == "task":
        lines = [n.name, f"kernel {g.graph.tasks[n.name].kernel}"]
        if np_ is not None:
            lines.append(f"{np_.cycles} cycles, {np_.resources.get('dsp', 0)} DSP")
        else:
            lines.append(timing)
        return "\n".join(lines)
    if n.kind == "converter":
        cv = n.converter
        shape = "x".join(map(str, cv.buffer_shape))
        return f"{n.name}\nconverter, buffer {shape}x{cv.src.dtype}\n({cv.buffer_bytes} B x2 ping-pong)"
    if n.kind == "fork":
        return f"{n.name}\nfork"
    d = n.dma
    arrow = f"DRAM -> {d.tensor}" if d.direction == "load" else f"{d.tensor} -> DRAM"
    lo, hi = banks[n.name]
    dm = dmas[n.name]
    bank = _bank_text(mem.kind, lo, hi)
    # one fact a line: a rank often holds three or four DMAs beside a kernel (a layer's weights, its KV cache),
    # and the widest line sets the cylinder's width (as "HBM[31]  0.59 of a shared channel" did)
    lines = [n.name, arrow]
    if dm.channels >= 1:
        lines.append(f"{bank}  {dm.channels:g} channel{'s' if dm.channels != 1 else ''}")
    else:
        lines += [f"{bank} shared", f"{dm.channels:.2f} of a channel"]
    lines.append(f"{dm.bytes} B, {d.words} bus words")
    if perf is not None:
        lines.append(f"{dm.gbs:g} GB/s, {dm.cycles} cycles")
    return "\n".join(lines)


def stacked_loads(low) -> list[tuple[str, str]]:
    """(upper, lower) load pairs that stack a kernel's own loads :data:`DMAS_A_ROW` a row.

    dot puts a load one rank above its consumer, so a kernel fed by six loads (Qwen2's QKV: three
    weights, three biases) gets a rank six cylinders wide beside its other producers.  A kernel's own
    loads are the ones whose every FIFO goes to it; in design order, the i-th of them is drawn a rank
    above the (i - DMAS_A_ROW)-th by an invisible edge between the two (its FIFO's label still sits
    on its own edge: nothing is dropped)."""
    outs: dict[str, set[str]] = {}
    for f in low.fifos:
        outs.setdefault(f.src, set()).add(f.dst)
    own: dict[str, list[str]] = {}
    for n in low.nodes.values():
        if n.kind == "load" and len(outs.get(n.name, ())) == 1:
            (dst,) = outs[n.name]
            if low.nodes[dst].kind == "task":
                own.setdefault(dst, []).append(n.name)
    return [(loads[i], loads[i - DMAS_A_ROW]) for loads in own.values() for i in range(DMAS_A_ROW, len(loads))]


@user_facing
def graph_dot(g, perf=None) -> str:
    """Graphviz DOT source of a dataflow design (a ``DataflowSchedule``, an ``@sd.dataflow`` function or a DesignPerf).

    ``perf`` (a ``DesignPerf`` of the same design, from ``model_design(g, board)``)
    labels kernels with their modeled cycles and DMAs with its channel allocation."""
    g, own = schedule_of("graph_dot", g)
    perf = check_perf("graph_dot", g, perf if perf is not None else own)
    low = g.lowered()
    mem, dmas, banks = _dma_plan(g, low, perf)
    ir = g.graph.ir
    title = f"dataflow {ir.name}"
    if perf is not None:
        title += (f" on {perf.board.name} @ {perf.clock_mhz:g} MHz: {perf.cycles} cycles, "
                  f"{perf.channels_used} of {mem.channels} {mem.kind} channels")
    else:
        title += f" (DMA banks: the {g.timing().board.name}'s {mem.channels} {mem.kind} channels, by bytes)"
    out = [f"digraph {quote(ir.name)} {{",
           f"  graph {_attrs(rankdir='TB', fontname='Helvetica', fontsize='12', label=title, labelloc='t')};",
           "  node [fontname=\"Helvetica\", fontsize=\"10\"];",
           "  edge [fontname=\"Helvetica\", fontsize=\"8\"];"]
    onchip = g.onchip_bytes(low)
    by_region: dict[int, list] = {}
    for n in low.nodes.values():
        by_region.setdefault(n.region, []).append(n)
    for r in sorted(by_region):
        out.append(f"  subgraph {quote(f'cluster_region_{r}')} {{")
        out.append(f"    graph {_attrs(label=f'region {r} ({onchip.get(r, 0)} B on chip)', style='rounded,dashed')};")
        for n in by_region[r]:
            out.append(f"    {quote(n.name)} {_attrs(label=_node_label(g, n, perf, mem, dmas, banks), **STYLE[n.kind])};")
        out.append("  }")
    for f in low.fifos:
        if f.kind == "dram":
            out.append(f"  {quote(f.src)} -> {quote(f.dst)} {_attrs(label=f'{f.edge} via DRAM', style='dashed')};")
            continue
        d, src = g.depth(f.name)
        label = f"{f.name}\n{_tokens(f.layout)}\ndepth {d} ({src})"
        out.append(f"  {quote(f.src)} -> {quote(f.dst)} {_attrs(label=label, tooltip=describe(f.layout))};")
    for upper, lower in stacked_loads(low):
        out.append(f"  {quote(upper)} -> {quote(lower)} {_attrs(style='invis')};")
    out.append("}")
    return "\n".join(out) + "\n"


def _render_svg(src: str) -> str | None:
    dot = shutil.which("dot")
    if dot is None:
        return None
    try:
        run = subprocess.run([dot, "-Tsvg"], input=src, capture_output=True, text=True, timeout=DOT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise VizError(f"graphviz `dot` took more than {DOT_TIMEOUT_S} s to lay out the design", caller_loc(),
                       hint="write the .dot source with graph_dot(g) and lay it out yourself") from None
    except OSError as err:
        raise VizError(f"graphviz `dot` ({dot}) could not run: {err.strerror}", caller_loc(),
                       hint="reinstall graphviz (scripts/setup.sh installs it)") from None
    if run.returncode != 0:
        why = (run.stderr.strip().splitlines() or ["no message"])[0]
        raise VizError(f"graphviz `dot` failed: {why}", caller_loc(),
                       hint="this is a bug in streamdsl's DOT output: please report it with the design") from None
    return run.stdout


@user_facing
def graph_svg(g, perf=None) -> str | None:
    """The design as SVG text (``dot -Tsvg``), or None when graphviz's ``dot`` is not on PATH."""
    return _render_svg(graph_dot(g, perf))


@user_facing
def write_graph(g, path, perf=None) -> Path:
    """Write the design's picture to ``path`` as ``.svg`` (the suffix is replaced); returns the file written.

    Without graphviz's ``dot`` it writes the ``.dot`` source instead and says so
    in one line on stderr."""
    src = graph_dot(g, perf)
    svg = _render_svg(src)
    p = out_path("write_graph", path, ".svg" if svg is not None else ".dot")
    try:
        p.write_text(svg if svg is not None else src)
    except OSError as err:
        raise VizError(f"write_graph: cannot write {p}: {err.strerror}", caller_loc()) from None
    if svg is None:
        print(f"graphviz `dot` not found: wrote {p}; install graphviz to get {p.with_suffix('.svg')}", file=sys.stderr)
    return p
