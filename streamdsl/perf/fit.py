"""Do several designs fit one device together, as a user needs them to?

An xclbin holds every kernel the host calls (an LLM's decode and prefill layers): their kernels share the
SLRs.  :func:`fit_designs` places the kernels and buffers of all the designs on the board's SLRs at once,
each SLR's capacity its data-sheet share less the platform's (``Board.slrs``: UG1393's 10 %), and no resource
of any SLR past UG1393's utilization guideline (:data:`GUIDELINE`): past it "the compilation of the design can
take longer, or performance can be lower than initially estimated".  The placement is a feasible one (first
fit, else the exact MILP of :func:`.model.feasible_assignment`), not the crossing-optimal one; the bytes its
links carry across SLR boundaries are counted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..boards import RESOURCES, Board, board as get_board
from .model import DesignPerf, _crossing, feasible_assignment

# UG1393 (Vitis Application Acceleration Development, 2021.2-2024.1), "Timing Closure Considerations": device or
# SLR usage above LUT 70 %, DSP/RAMB/UltraRAM 80 %, FD (flip-flops) 50 %.
GUIDELINE = {"lut": 0.70, "ff": 0.50, "dsp": 0.80, "bram": 0.80, "uram": 0.80}
GUIDELINE_SOURCE = ("UG1393, Timing Closure Considerations: per SLR at most LUT 70 %, DSP/BRAM/URAM 80 %, "
                    "FF 50 %")


@dataclass
class Fit:
    """The joint placement of ``designs`` on ``board`` (``where``: "design/node" -> SLR, None when none fits)."""

    board: Board
    designs: tuple[str, ...]
    where: dict[str, int] | None
    use: list[dict[str, int]]  # per SLR, of the placement found (or each design's own, summed, when none)
    limit: list[dict[str, int]]  # per SLR: the guideline's share of what a design may use there
    crossing_bytes: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        head = (f"{' + '.join(self.designs)} on {self.board.name}: "
                f"{'fit together' if self.fits else 'DO NOT FIT together'} ({GUIDELINE_SOURCE}; each SLR less the "
                f"platform's share)")
        out = [head]
        for s, (u, lim) in enumerate(zip(self.use, self.limit)):
            out.append(f"  SLR{s}: " + ", ".join(f"{r.upper()} {u[r]:,}/{lim[r]:,}" for r in RESOURCES))
        if self.where is not None:
            out.append(f"  bytes crossing SLRs a run: {self.crossing_bytes:,}")
        out += [f"  problem: {p}" for p in self.problems]
        return "\n".join(out)


def fit_designs(designs: dict[str, DesignPerf], board="u55c") -> Fit:
    """Place every node of ``designs`` (name -> modeled design) on ``board``'s SLRs together (module doc)."""
    b = get_board(board)
    limit = [{r: int(GUIDELINE[r] * s[r]) for r in RESOURCES} for s in b.slrs]
    nodes: dict[str, dict[str, int]] = {}
    links: list[tuple[str, str, int]] = []
    for name, p in designs.items():
        for n, res in p.plan.nodes.items():
            nodes[f"{name}/{n}"] = res
        links += [(u if u == "@memory" else f"{name}/{u}", v if v == "@memory" else f"{name}/{v}", w)
                  for u, v, w in p.plan.links]
    # the guideline per resource as the capacity: a node's use scaled by 1 / guideline, against the whole SLR
    scaled = {n: {r: res[r] / GUIDELINE[r] for r in RESOURCES} for n, res in nodes.items()}
    where = feasible_assignment(scaled, b)
    use = [{r: 0 for r in RESOURCES} for _ in b.slrs]
    problems = []
    if where is not None:
        for n, s in where.items():
            for r in RESOURCES:
                use[s][r] += nodes[n][r]
        crossing = _crossing(where, links, b)
    else:
        crossing = 0
        total = {r: sum(res[r] for res in nodes.values()) for r in RESOURCES}
        over = [f"{r.upper()} {total[r]:,} > {sum(lim[r] for lim in limit):,}" for r in RESOURCES
                if total[r] > sum(lim[r] for lim in limit)]
        problems.append("no placement of the kernels on the SLRs keeps every SLR within the guideline; together "
                        "they use " + ", ".join(f"{r.upper()} {total[r]:,}" for r in RESOURCES)
                        + (f" (over the board's guideline: {', '.join(over)})" if over else
                           " (within the board's total, but the kernels do not pack onto the SLRs)"))
    return Fit(b, tuple(designs), where, use, limit, crossing, problems)


__all__ = ["Fit", "GUIDELINE", "GUIDELINE_SOURCE", "fit_designs"]
