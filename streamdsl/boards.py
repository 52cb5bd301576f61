"""Board models: fabric resources per SLR, off-chip memory channels, clocks.

Facts come from AMD documents, named next to each number:

* **DS978** Alveo U55C Data Center Accelerator Cards Data Sheet.
* **DS963** Alveo U280 Data Center Accelerator Cards Data Sheet.
* **UG1393** Vitis Application Acceleration Development, "HBM Configuration and
  Use": 32 HBM pseudo-channels (PCs), 14.375 GB/s theoretical each, 460 GB/s in
  all; 512 MB PCs on the U55C (16 GB), 256 MB on the U280 (8 GB); one AXI port
  per PC through the HBM switch.
* **UG1120** Alveo Data Center Accelerator Card Platforms User Guide (the static
  region, the platform shell, sits in SLR0 beside the PCIe and HBM controllers).
* **UG1393** (2022.2), "Determining Where to Place the Kernels": "10 % of the
  available resources can be used by system infrastructure" (the platform's
  connections to memory and across SLRs).  Each SLR's capacity here is its share
  of the device less that 10 % (``Board.slrs``; ``Board.device`` keeps the data
  sheet's totals): the per-platform static-region figures of the Vitis release
  notes are not reproduced here, so the documented 10 % stands in for them.
* **DS950** Versal Architecture and Product Data Sheet: Overview (XCVC1902).
* **UG1366** VCK190 Evaluation Board User Guide (DDR4 DIMM, LPDDR4).
* **DS890** UltraScale Architecture and Product Data Sheet: Overview (the
  VU37P-class XCU280/XCU55C devices are three SLRs of one design).

A number marked ``derived`` is our own arithmetic from those facts (an even
split of a device over its SLRs, a bandwidth from a data rate and a width);
``Board.assumptions()`` prints which.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from .errors import StreamDSLError, caller_loc

RESOURCES = ("dsp", "bram", "uram", "lut", "ff")  # bram counts BRAM18K halves (one 36 Kb block = 2)


class BoardError(StreamDSLError):
    kind = "board error"


@dataclass(frozen=True)
class Memory:
    """One kind of off-chip memory: ``channels`` independent channels (AXI ports) of ``channel_gbs`` GB/s."""

    kind: str
    channels: int
    channel_gbs: float
    capacity_gb: float
    port_bits: int = 512  # the AXI data width a kernel port is widened to (max_widen_bitwidth=512)
    source: str = ""

    @property
    def total_gbs(self) -> float:
        return self.channels * self.channel_gbs


INFRASTRUCTURE = 0.10  # share of each SLR the platform's infrastructure may use (UG1393 2022.2, see above)


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: a board is one object, a memo key
class Board:
    """One board: its part and device family, kernel clock, fabric per SLR (the platform's share subtracted),
    off-chip memories (channels, width, bandwidth) and the facts behind them with their sources."""

    name: str
    part: str
    clock_mhz: float  # the kernel clock designs are modeled at unless given
    device: tuple[dict, ...]  # per SLR, the data sheet's: dsp, bram (BRAM18K), uram, lut, ff
    memories: tuple[Memory, ...]
    family: str = "ultrascale+"  # the device family the operator costs are for: "ultrascale+", "versal", "7series"
    peak_int8_tops: float | None = None
    onchip_mb: float | None = None  # the vendor's "total on-chip memory" figure
    memory_slr: int = 0  # the SLR the HBM / memory controllers attach to
    facts: tuple[tuple[str, str], ...] = ()  # (fact, source) for the report
    derived: tuple[str, ...] = ()

    @property
    def slrs(self) -> tuple[dict, ...]:
        """Per SLR, what a design may use: the device's resources less the platform's share (:data:`INFRASTRUCTURE`;
        a bare part, with no memories and so no platform, keeps them all)."""
        return tuple(dict(s) for s in self._slrs)

    @property
    def total(self) -> dict[str, int]:
        """What a design may use on the whole board (the SLRs' sum)."""
        return dict(self._total)

    # computed once (the placement and the cost model read them thousands of times); the properties hand out copies
    @functools.cached_property
    def _slrs(self) -> tuple[dict, ...]:
        share = INFRASTRUCTURE if self.memories else 0.0
        return tuple({r: int(s[r] * (1 - share)) for r in RESOURCES} for s in self.device)

    @functools.cached_property
    def _total(self) -> dict[str, int]:
        return {r: sum(s[r] for s in self._slrs) for r in RESOURCES}

    @property
    def device_total(self) -> dict[str, int]:
        return {r: sum(s[r] for s in self.device) for r in RESOURCES}

    @property
    def memory(self) -> Memory:
        """The memory designs stream weights from (the fastest)."""
        return max(self.memories, key=lambda m: m.total_gbs)

    @property
    def onchip_bytes(self) -> int:
        """BRAM + URAM capacity in bytes (18 Kb per BRAM18K, 288 Kb per URAM)."""
        t = self.device_total
        return (t["bram"] * 18 * 1024 + t["uram"] * 288 * 1024) // 8

    def fp32_peak_gflops(self, clock_mhz: float | None = None, dsp_per_mac: int = 5) -> float:
        """fp32 multiply-add peak of the fabric: DSPs / (DSPs per fp32 MAC) * 2 flop * clock.

        ``dsp_per_mac`` = 5 is streamdsl's cost model (:data:`streamdsl.cost.model.COST`: fmul 3 + fadd 2)."""
        clock = clock_mhz or self.clock_mhz
        return self.device_total["dsp"] / dsp_per_mac * 2 * clock / 1e3

    def assumptions(self) -> list[str]:
        out = [f"{self.name} ({self.part}, {self.family}): {len(self.slrs)} SLR(s), kernel clock {self.clock_mhz:g} MHz",
               f"  a design may use {100 * (1 - INFRASTRUCTURE):g} % of each SLR: {INFRASTRUCTURE:.0%} is the "
               "platform's infrastructure  [UG1393 2022.2, Determining Where to Place the Kernels]"]
        out += [f"  {fact}  [{src}]" for fact, src in self.facts]
        out += [f"  derived estimate: {d}" for d in self.derived]
        return out

    def __str__(self) -> str:
        t = self.device_total
        mem = ", ".join(f"{m.kind} {m.channels} x {m.channel_gbs:g} GB/s ({m.total_gbs:g} GB/s, {m.capacity_gb:g} GB)"
                        for m in self.memories)
        return (f"{self.name}: {self.part}, {len(self.slrs)} SLR, DSP {t['dsp']}, BRAM18K {t['bram']}, URAM {t['uram']}, "
                f"LUT {t['lut']}, FF {t['ff']}; {mem}")


def _split(total: dict[str, int], n: int) -> tuple[dict, ...]:
    return tuple({r: total[r] // n for r in RESOURCES} for _ in range(n))


_VU37P_CLASS = dict(dsp=9024, bram=4032, uram=960, lut=1303680, ff=2607360)
_HBM_FACTS = (("HBM2: 32 pseudo-channels x 14.375 GB/s = 460 GB/s theoretical, one AXI port per PC", "UG1393"),)

U55C = Board(
    "u55c", "xcu55c-fsvh2892-2L-e", 250.0, _split(_VU37P_CLASS, 3),
    (Memory("HBM2", 32, 14.375, 16.0, 512, "DS978, UG1393"),),
    peak_int8_tops=24.5, onchip_mb=41.0, memory_slr=0,
    facts=(("LUT 1,303,680, FF 2,607,360, DSP 9,024, BRAM 2,016 x 36 Kb (4,032 BRAM18K), URAM 960", "DS978"),
           ("16 GB HBM2, 460 GB/s; 32 pseudo-channels of 512 MB", "DS978, UG1393"),
           *_HBM_FACTS,
           ("24.5 INT8 TOPS peak, 41 MB on-chip memory (as quoted by the StreamTensor paper)", "DS978"),
           ("three SLRs; HBM attaches at the bottom of SLR0", "UG1120, UG1393"),
           ("kernel clock 250 MHz: the clock of the paper's U55C designs (the platform default is 300 MHz)",
            "StreamTensor paper; UG1120")),
    derived=("per-SLR resources are the device totals split evenly over 3 SLRs (DS890: the SLRs are copies of "
             "one die), less the platform's 10 % (UG1393)",
             "an AXI port of 512 bits at 250 MHz moves 16 GB/s, above one PC's 14.375 GB/s: a port is PC-bound"))

U280 = Board(
    "u280", "xcu280-fsvh2892-2L-e", 250.0, _split(_VU37P_CLASS, 3),
    (Memory("HBM2", 32, 14.375, 8.0, 512, "DS963, UG1393"), Memory("DDR4", 2, 19.2, 32.0, 512, "DS963")),
    peak_int8_tops=24.5, onchip_mb=41.0, memory_slr=0,
    facts=(("LUT 1,303,680, FF 2,607,360, DSP 9,024, BRAM 2,016 x 36 Kb (4,032 BRAM18K), URAM 960", "DS963"),
           ("8 GB HBM2 at 460 GB/s (32 PCs of 256 MB); 2 x 16 GB DDR4-2400, 38 GB/s in all", "DS963, UG1393"),
           *_HBM_FACTS,
           ("24.5 INT8 TOPS peak", "DS963"),
           ("three SLRs; HBM at SLR0, one DDR4 bank each at SLR0 and SLR1", "UG1120")),
    derived=("per-SLR resources are the device totals split evenly over 3 SLRs, less the platform's 10 % (UG1393)",
             "DDR4 channel bandwidth 19.2 GB/s = 2400 MT/s x 64 bit"))

VCK190 = Board(
    "vck190", "xcvc1902-vsva2197-2MP-e-S", 250.0,
    ({"dsp": 1968, "bram": 1934, "uram": 463, "lut": 899840, "ff": 1799680},),
    (Memory("DDR4", 1, 25.6, 8.0, 512, "UG1366"), Memory("LPDDR4", 2, 17.0, 8.0, 512, "UG1366")),
    family="versal", peak_int8_tops=None, onchip_mb=None, memory_slr=0,
    facts=(("XCVC1902 fabric: DSP58 1,968, LUT 899,840, FF 1,799,680, block RAM 967 x 36 Kb (1,934 BRAM18K), "
            "UltraRAM 463 (the 400 AI Engines are not modeled)", "DS950"),
           ("one SLR (monolithic device)", "DS950"),
           ("8 GB DDR4 DIMM (64-bit) and 8 GB LPDDR4 (two 32-bit channels) on the board", "UG1366")),
    derived=("DDR4 25.6 GB/s = 3200 MT/s x 64 bit; LPDDR4 17.0 GB/s per channel = 4266 MT/s x 32 bit",
             "the fp32 cost model's 5 DSPs per MAC is a DSP48 figure; a DSP58 does an fp32 MAC in one"))

BOARDS: dict[str, Board] = {b.name: b for b in (U55C, U280, VCK190)}

# The device family of an AMD part, by its name's prefix (the first that matches): what the cost model's
# operator costs and latencies are for (DSP48E2, DSP48E1, DSP58).
PART_FAMILY = (("xcvu", "ultrascale+"), ("xcku", "ultrascale+"), ("xcau", "ultrascale+"), ("xcvc", "versal"),
               ("xcvp", "versal"), ("xcve", "versal"), ("xc7", "7series"), ("xcu", "ultrascale+"),
               ("xczu", "ultrascale+"), ("xck", "ultrascale+"))
# Bare parts a kernel may be estimated on outside a board (the calibration corpus's reports), with the
# "Available" row of their reports where one was read; a part without one has unknown resources (zeros).
PART_RESOURCES = {
    "xc7k160t": dict(dsp=600, bram=650, uram=0, lut=101400, ff=202800),  # the LAP reports' Available row
    "xc7z020": dict(dsp=220, bram=280, uram=0, lut=53200, ff=106400),  # the CS-577 matrixmul report's Available row
    "xcu55c": _VU37P_CLASS,  # the U55C's device (DS978)
}


def part_family(part: str) -> str | None:
    p = part.lower()
    return next((fam for prefix, fam in PART_FAMILY if p.startswith(prefix)), None)


def part(name: str, clock_mhz: float = 250.0) -> Board:
    """A bare AMD part (``"xc7k160t-fbg484-1"``) as a one-SLR Board without off-chip memory: to estimate a
    kernel on the device a published report targets.  A name of no known family is a located BoardError."""
    fam = part_family(name) if isinstance(name, str) else None
    if fam is None:
        raise BoardError(f"unknown part {name!r}", caller_loc(),
                         hint=f"an AMD part name starting with one of {', '.join(p for p, _ in PART_FAMILY)}")
    res = next((r for prefix, r in PART_RESOURCES.items() if name.lower().startswith(prefix)),
               {r: 0 for r in RESOURCES})
    return Board(name, name, float(clock_mhz), ({r: res[r] for r in RESOURCES},), (), family=fam,
                 derived=("a bare part: no platform shell, no off-chip memory model"
                          + ("" if any(res.values()) else "; its resources are not known here (shown as 0)"),))


def board(name) -> Board:
    """A board by name ("u55c", "u280", "vck190") or a Board itself; any other name is a located BoardError."""
    if isinstance(name, Board):
        return name
    key = name.lower() if isinstance(name, str) else None
    if key not in BOARDS:
        raise BoardError(f"unknown board {name!r}", caller_loc(), hint=f"known boards: {', '.join(BOARDS)}")
    return BOARDS[key]


__all__ = ["BOARDS", "Board", "BoardError", "INFRASTRUCTURE", "Memory", "PART_FAMILY", "RESOURCES", "U280", "U55C",
           "VCK190", "board", "part", "part_family"]
