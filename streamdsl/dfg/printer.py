"""``print(g)`` of a dataflow schedule: the design as it would be built.

Sections, in the order a reader checks a design: tasks (with their timing),
edges (with the itensor of each side), converters (buffer shapes), forks,
regions (with their on-chip bytes), DMAs (packing and bus lanes) and FIFOs
(depth and where it came from).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .layout import describe

if TYPE_CHECKING:
    from .dfschedule import DataflowSchedule


def task_timing(s) -> str:
    """A token-simulator task in words: its cycles, and the steps at which its tokens move.

    The task's modeled cycles are spread evenly over the iterations at which its loop nest moves tokens (one
    token a stream each, :mod:`.timing`): "1,070 cycles in 17 token steps ~64 apart", not an HLS
    initiation interval."""
    if s.iters == 1:
        return f"{s.latency:,} cycles in one token step"
    return f"{s.latency:,} cycles in {s.iters} token steps ~{s.ii:,} apart"


def render(g: "DataflowSchedule") -> str:
    low = g.lowered()
    timing = g.timing()  # on the board the FIFOs were sized for (else the U55C)
    graph = g.graph
    ir = graph.ir
    sig = ", ".join(f"{p.name}: {p.type}" for p in ir.params)
    lines = [f"dataflow {ir.name}({sig}) -> ({', '.join(map(str, ir.results))})", "  tasks:"]
    notes: list[str] = []

    def nest(task: str, edge: str) -> str:
        """How the task's loop nest moves this stream (from :mod:`.access`)."""
        n = low.nodes[task]
        name = n.ports[edge][0]
        if n.tables.tokens[name] == 1:
            return ""
        bursts = n.tables.bursts(name)
        if n.tables.buffered(name):
            verb = "reads" if name in n.tables.need else "writes"
            notes.append(f"{task} {verb} '{edge}' {max(bursts)} of {n.tables.tokens[name]} tokens at once: its loop "
                         "nest does not follow the stream order, so the stream overlaps little (reorder the loops "
                         "or stream the edge in loop order)")
            return "; loop nest: buffered"
        return f"; loop nest: streamed over {len(bursts)} steps"
    w = max((len(n) for n in low.nodes), default=4)
    for t in graph.tasks.values():
        s = timing.tasks[t.name]
        args = ", ".join(e or "<scalar>" for e in t.inputs)
        sched = " (scheduled)" if t.name in g._schedules else ""
        lines.append(f"    {t.name:<{w}} {', '.join(t.outputs)} = {t.kernel}({args}){sched}  region {g.region_of(t.name)}"
                     f"  [{task_timing(s)} by the cost model]")
    lines.append("  edges:")
    for e in graph.edges.values():
        src = "input (DMA)" if e.is_input else e.producer
        place = g.placements().get(e.name)
        dst = [c for c, _ in e.consumers] + ([f"output (DMA{', ' + str(place) if place else ''})"] if e.is_output else [])
        lines.append(f"    {e.name}: {e.type}  {src} -> {', '.join(dict.fromkeys(dst))}")
        if not e.is_input:
            lines.append(f"      producer {describe(g.layout(e.name))}{nest(e.producer, e.name)}")
        for c in dict.fromkeys(c for c, _ in e.consumers):
            lines.append(f"      {c:<8} {describe(g.layout(e.name, c))}{nest(c, e.name)}")
    cvts = low.of_kind("converter")
    if cvts:
        lines.append("  converters:")
        for n in cvts:
            cv = n.converter
            loops = ", ".join(f"d{d}:{cv.src.trips[d]}" for d in cv.shared) or "none"
            shape = "x".join(map(str, cv.buffer_shape))
            lines.append(f"    {n.name} (edge {n.edge}, region {n.region}): {cv.src} -> {cv.dst}")
            lines.append(f"      buffer {shape}x{cv.src.dtype} ({cv.buffer_bytes} B, x2 ping-pong), shared loops: {loops}")
    forks = low.of_kind("fork")
    if forks:
        lines.append("  forks:")
        for n in forks:
            outs = [f.dst for f in low.fifos if f.src == n.name]
            lines.append(f"    {n.name} (region {n.region}): {n.edge} -> {', '.join(outs)}")
    onchip, copies = g.onchip_bytes(low), g.task_buffer_bytes(low)
    lines.append("  regions:")
    for r, tasks in enumerate(g.regions()):
        lines.append(f"    region {r}: {', '.join(tasks)}  ({onchip.get(r, 0)} B on chip, "
                     f"+{copies.get(r, 0)} B of whole-tensor task buffers in the emitted HLS)")
    dmas = [n.dma for n in low.nodes.values() if n.dma is not None]
    if dmas:
        lines.append("  DMAs:")
        for d in dmas:
            lines.append(f"    {d}")
    lines.append("  FIFOs:")
    for f in low.streams:
        d, src = g.depth(f.name)
        lines.append(f"    {f.name}: {f.src} -> {f.dst}  depth {d} ({src}), {f.tokens} token(s) of {f.token_bytes} B")
    for note in notes:
        lines.append(f"  note: {note}")
    if g._stale():
        lines.append("  note: the design changed after g.size_fifos(); call it again for up-to-date depths")
    gone = [n for n in g._pins if not any(f.name == n for f in low.streams)]
    if gone:
        lines.append(f"  note: pinned depths no longer attached to a FIFO: {', '.join(gone)}")
    return "\n".join(lines)
