"""Printable reports of modeled designs (every number comes from :mod:`.model`)."""
from __future__ import annotations

import textwrap

from ..boards import RESOURCES

WIDTH = 100  # a terminal's width: long notes wrap


def _pct(a: float, b: float) -> str:
    return f"{100.0 * a / b:5.1f} %" if b else "  n/a"


def resource_lines(p) -> list[str]:
    out = ["resources per SLR (used / available):"]
    hdr = "  " + "SLR".ljust(6) + "".join(r.upper().rjust(22) for r in RESOURCES)
    out.append(hdr)
    for s, (use, cap) in enumerate(zip(p.slr_use, p.board.slrs)):
        out.append("  " + f"SLR{s}".ljust(6) + "".join(f"{use[r]:>9}/{cap[r]:<7}{_pct(use[r], cap[r])}"[:22].rjust(22)
                                                       for r in RESOURCES))
    tot, cap = p.total, p.board.total
    out.append("  " + "total".ljust(6) + "".join(f"{tot[r]:>9}/{cap[r]:<7}{_pct(tot[r], cap[r])}"[:22].rjust(22)
                                               for r in RESOURCES))
    out.append(f"  bytes crossing SLRs per run: {p.crossing_bytes}")
    return out


def design_report(p) -> str:
    out = [f"design {p.name} on {p.board.name} at {p.clock_mhz:g} MHz",
           "  (model estimates from the scheduled IR and the token simulator, not a Vitis report)",
           f"  latency: {p.cycles} cycles = {p.latency_s * 1e6:.2f} us (token simulator); analytic estimate "
           f"{p.analytic} cycles",
           f"  fits the board: {'yes' if p.fits else 'NO: ' + '; '.join(p.problems)}",
           "kernels (slowest first):"]
    tasks = sorted((n for n in p.nodes.values() if n.kind == "task"), key=lambda n: -n.cycles)
    width = max((len(n.name) for n in tasks), default=0)
    for n in tasks:
        r = n.resources
        out.append(f"  {n.name:<{width}} {n.cycles:>11} cycles  SLR{n.slr}  DSP {r['dsp']:>6}  LUT {r['lut']:>8}  "
                   f"BRAM {r['bram']:>5}  URAM {r['uram']:>4}")
    out.append(f"DMAs: {p.dma_bytes} bytes per run over {p.channels_used} of {p.board.memory.channels} "
               f"{p.board.memory.kind} channels")
    for d in sorted(p.dmas, key=lambda d: -d.bytes)[:12]:
        out.append(f"  {d.name:<20} {d.direction:<5} {d.bytes:>10} B at {d.bits:>2} bit  {d.channels:5.2f} ch  "
                   f"{d.gbs:6.2f} GB/s  {d.cycles:>9} cycles")
    if len(p.dmas) > 12:
        out.append(f"  ... {len(p.dmas) - 12} smaller DMA(s)")
    by = {}
    for b in p.buffers:
        k = by.setdefault(b.storage, [0, 0])
        k[0] += 1
        k[1] += b.bytes
    out.append(f"on-chip buffers: {p.onchip_bytes / 2**20:.2f} MiB (" + ", ".join(
        f"{s}: {n} buffer(s), {nb / 2**20:.3f} MiB" for s, (n, nb) in sorted(by.items())) + ")")
    out += resource_lines(p)
    out.append("assumptions:")
    notes = list(p.assumptions) + ["board: " + line.strip() for line in p.board.assumptions()]
    out += [line for a in notes for line in textwrap.wrap(a, WIDTH, initial_indent="  - ", subsequent_indent="    ",
                                                          break_on_hyphens=False)]
    return "\n".join(out)


__all__ = ["design_report", "resource_lines"]
