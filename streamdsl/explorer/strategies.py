"""Search strategies: how a layer's unroll budget and the board are shared among its kernels.

Both rank kernels by the cost model alone (one kernel at a time: ``est(task, factor, moves)``, a
:class:`~.search.KernelEstimate`, or None when ``moves`` find nothing to act on), inside the :class:`Room`
the rest of the design leaves them, and return :class:`Allocation` s for the driver to build and simulate.

* :func:`unroll_by_heap`, the paper's max-heap: double the factor of the kernel with the most cycles until
  the budget or the board runs out.  It minimises the slowest kernel, which a layer streaming many rows waits for.
* :func:`unroll_by_gain`: the step that saves the most cycles per share of the board, operator moves among
  the steps.  A one-token layer's kernels mostly run one after another (each needs its producer's whole
  row), so its latency is about the sum of the kernels' cycles, which this minimises.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..boards import RESOURCES, Board
from ..perf.fit import GUIDELINE
from .recipes import MOVES, OPERATOR_MOVES
from .search import KernelEstimate

Estimator = Callable[..., Optional[KernelEstimate]]  # est(task, factor, moves=frozenset())


def _no_moves() -> dict[str, tuple[str, ...]]:
    return {m: () for m in MOVES}


@dataclass(frozen=True)
class Allocation:
    """Unroll factors and operator moves for a layer's kernels, as a strategy chose them."""

    total: int  # the sum of the factors
    factors: dict[str, int]  # task -> unroll factor
    why: str
    moved: dict[str, tuple[str, ...]] = field(default_factory=_no_moves)  # move (MOVES) -> the tasks it moved

    def same_as(self, other: "Allocation") -> bool:
        """The same design: the same factors and moves (whatever the strategy said of them)."""
        return (self.factors, self.moved) == (other.factors, other.moved)

    def moves_of(self, task: str) -> frozenset:
        return frozenset(m for m in MOVES if task in self.moved[m])


@dataclass(frozen=True)
class Room:
    """What a layer's kernels may take of the board: ``limit`` of each resource in all, ``slr_limit`` for one
    kernel (it sits on one SLR), beside ``rest``, what the design holds besides the kernels' own logic
    (DMAs, FIFOs, converters, the FIFO memory of each kernel) and what other kernels of the same device hold
    (the ``reserve`` of :meth:`beside`)."""

    rest: dict[str, float]
    limit: dict[str, float]
    slr_limit: dict[str, float]
    util: float = 0.85  # the fraction of the board the limits stand for (for the messages)

    @classmethod
    def beside(cls, perf, start: dict[str, KernelEstimate], board: Board, util: float,
               reserve: dict[str, float] | None = None) -> "Room":
        """The room ``perf`` (a design at factors 1) leaves its kernels (``start``: their estimates there):
        each resource at ``util`` of the board and at most UG1393's guideline for it (:data:`GUIDELINE`: past
        it a design does not close timing, so :func:`~streamdsl.perf.fit_designs` says it does not fit), less
        ``reserve``, what the device's other kernels hold beside this design."""
        rest = dict(perf.total)
        for r, v in (reserve or {}).items():
            rest[r] = rest.get(r, 0) + v
        for tk in start:
            for r in RESOURCES:
                rest[r] -= perf.nodes[tk].resources.get(r, 0)
        for tk in start:  # keep the memory the FIFOs of each kernel hold
            for r in ("bram", "uram"):
                rest[r] += perf.nodes[tk].resources.get(r, 0) - start[tk].resources.get(r, 0)
        share = {r: min(util, GUIDELINE[r]) for r in RESOURCES}
        return cls(rest, {r: share[r] * board.total[r] for r in RESOURCES},  # partitioned arrays take BRAM banks
                   {r: share[r] * max(sl[r] for sl in board.slrs) for r in RESOURCES}, util)

    def scaled(self, share: float) -> "Room":
        """The same room with the board's totals at ``share`` of the limit (the SLR limit kept)."""
        return Room(self.rest, {r: v * share for r, v in self.limit.items()}, self.slr_limit, self.util)

    def used(self, state: dict[str, KernelEstimate]) -> dict[str, float]:
        tot = {r: self.rest.get(r, 0) for r in self.limit}
        for e in state.values():
            for r in tot:
                tot[r] += e.resources.get(r, 0)
        return tot

    def on_one_slr(self, e: KernelEstimate) -> bool:
        return not any(e.resources.get(r, 0) > self.slr_limit[r] for r in self.slr_limit)

    def over(self, now: dict, old: KernelEstimate, new: KernelEstimate) -> bool:
        """Does the use ``now`` with one kernel's estimate ``old`` replaced by ``new`` pass the limit?"""
        return any(now[r] - old.resources.get(r, 0) + new.resources.get(r, 0) > self.limit[r] for r in self.limit)


def unroll_by_heap(tasks: list[str], start: dict[str, KernelEstimate], est: Estimator, room: Room,
                   cap_u: int) -> list[Allocation]:
    """The paper's intensity-driven unrolling: repeatedly take the kernel with the most cycles and double its
    factor, until the sum of factors would pass ``cap_u`` or every kernel is done (no gain, no SLR holds it,
    or the board would pass its limit).  Returns the allocation each time the sum of factors passes a mark
    (the kernels' count times 2, 4, 8, ...), and the last."""
    u = {tk: 1 for tk in tasks}
    cur = dict(start)
    heap = [(-cur[tk].cycles, tk) for tk in tasks]
    heapq.heapify(heap)
    total_u = sum(u.values())
    marks = sorted({int(x) for x in (len(tasks) * 2 ** k for k in range(1, 64)) if x <= cap_u} | {cap_u})
    out: list[Allocation] = []
    next_mark = 0
    full = ""
    while heap:
        _, tk = heapq.heappop(heap)
        nu = u[tk] * 2
        new = est(tk, nu)
        if new.lanes <= cur[tk].lanes or new.cycles >= cur[tk].cycles:
            continue  # no loop left to unroll further, or no gain: this kernel is done
        if not room.on_one_slr(new):
            continue  # one more doubling would not fit this kernel on one SLR: it is done
        if total_u + (nu - u[tk]) > cap_u:
            out.append(Allocation(total_u, dict(u), f"budget reached at {tk} (u {u[tk]} -> {nu} would exceed it)"))
            break
        if any(v > room.limit[r] for r, v in room.used({**cur, tk: new}).items()):
            full = (f"board full at {tk} (u {u[tk]} -> {nu} would exceed its room: {room.util:.0%} of the board, "
                    "UG1393's guideline at most)")
            continue  # this kernel is done; a cheaper one may still widen
        total_u += nu - u[tk]
        u[tk], cur[tk] = nu, new
        heapq.heappush(heap, (-new.cycles, tk))
        while next_mark < len(marks) and total_u >= marks[next_mark]:
            slow = max(tasks, key=lambda x: cur[x].cycles)
            out.append(Allocation(total_u, dict(u), f"slowest kernel now {slow} ({cur[slow].cycles} cycles, u={u[slow]})"))
            next_mark += 1
    if not out or out[-1].factors != u:
        slow = max(tasks, key=lambda x: cur[x].cycles)
        out.append(Allocation(total_u, dict(u), (full + "; " if full else "every kernel saturated; ") +
                              f"slowest {slow} ({cur[slow].cycles} cycles)"))
    return out


@dataclass(frozen=True)
class _Step:
    score: float
    task: str
    factor: int
    moves: frozenset
    estimate: KernelEstimate


def unroll_by_gain(tasks: list[str], start: dict[str, KernelEstimate], est: Estimator, room: Room, cap_u: int,
                   first: frozenset = frozenset(), split: bool = True) -> Allocation | None:
    """Unroll factors for a layer whose kernels run one after another (a one-token layer: each needs its
    producer's whole row), where the sum of the kernels' cycles is the latency, not the slowest kernel's.

    Repeatedly take the step (a kernel's factor times 2 .. 64, up to the second factor that gains) that saves
    the most cycles per share of the board it adds (the largest of its DSP/LUT/FF fractions), while the board
    holds it: a residual add widened 16 lanes for a few hundred LUTs before a linear's thousandth MAC lane.
    A step may also move a kernel's narrow multiplies to DSPs, which widens the MAC lanes once the LUTs run
    out, or split its unrolled float sums (``split_sums``: a shallower pipeline); when nothing widens, the
    move of :func:`_move_operators` (multiplies to DSPs, or float adds to LUTs, which frees DSPs once they run
    out).  None when no step fits.  ``first``: moves made on every kernel that has them before the first
    step (``{"split"}``: every unrolled float sum split from the start, where one step at a time would not
    take it); ``split=False``: no step splits a sum."""
    u = {tk: 1 for tk in tasks}
    moved = {tk: frozenset() for tk in tasks}
    cur = dict(start)
    for tk in tasks if first else ():
        new = est(tk, 1, first)
        if new is not None:
            moved[tk], cur[tk] = first, new
    steps = 0
    while True:
        best = None
        now = room.used(cur)  # a trial changes one kernel: the board's use is this, less its old, plus its new
        for tk in tasks:
            # as bound now, its multiplies moved, its unrolled float sums split (float adds move only when nothing
            # widens: _move_operators)
            for variant in dict.fromkeys((moved[tk], moved[tk] ^ {"dsp"}) + ((moved[tk] | {"split"},) if split else ())):
                gained = 0
                for mult in (2, 4, 8, 16, 32, 64):  # past a plateau (lanes come in whole rows of a vectorised loop)
                    nu = u[tk] * mult
                    if sum(u.values()) + nu - u[tk] > cap_u or gained == 2:
                        break
                    new = est(tk, nu, variant)
                    if new is None:
                        break  # nothing to move: no such variant
                    if new.cycles >= cur[tk].cycles:  # a plateau: lanes of one nest are saturated, another's not yet due
                        continue
                    gained += 1
                    if not room.on_one_slr(new):
                        break
                    if room.over(now, cur[tk], new):
                        continue  # a wider step may move more operators off the full resource
                    share = max(max(0, new.resources.get(r, 0) - cur[tk].resources.get(r, 0)) / max(lim, 1.0)
                                for r, lim in room.limit.items())
                    score = (cur[tk].cycles - new.cycles) / max(share, 1e-9)
                    if best is None or score > best.score:
                        best = _Step(score, tk, nu, variant, new)
        if best is None:  # nothing widens: move a kernel's operators where that frees the most of a full resource
            best = _move_operators(tasks, u, moved, cur, est, now, room)
            if best is None:
                break
        u[best.task], moved[best.task], cur[best.task] = best.factor, best.moves, best.estimate
        steps += 1
    if not steps:
        return None
    total = sum(cur[tk].cycles for tk in tasks)
    by_move = {m: tuple(sorted(tk for tk in tasks if m in moved[tk])) for m in MOVES}
    return Allocation(sum(u.values()), u, f"by gain: most cycles saved per board share, {steps} steps; kernel cycles "
                      f"sum to {total}" + (f"; multiplies of {len(by_move['dsp'])} kernel(s) in DSPs" if by_move["dsp"] else "")
                      + (f"; float adds of {len(by_move['fabric'])} kernel(s) in LUTs" if by_move["fabric"] else "")
                      + (f"; unrolled float sums of {len(by_move['split'])} kernel(s) split" if by_move["split"] else ""),
                      by_move)


def _move_operators(tasks, u, moved, cur, est: Estimator, now: dict, room: Room) -> _Step | None:
    """The kernel and move (:data:`OPERATOR_MOVES`) at its factor that frees the most share of one resource per
    share of another it takes (multiplies to DSPs free LUTs/FFs, float adds to LUTs free DSPs; that room then
    widens the others); None if none fits."""
    best = None
    for tk in tasks:
        for m in OPERATOR_MOVES:
            if m in moved[tk]:
                continue
            new = est(tk, u[tk], moved[tk] | {m})
            if new is None or not room.on_one_slr(new) or room.over(now, cur[tk], new):
                continue
            delta = {r: (new.resources.get(r, 0) - cur[tk].resources.get(r, 0)) / max(lim, 1.0)
                     for r, lim in room.limit.items()}
            freed = max(-d for d in delta.values())
            cost = max(0.0, max(delta.values()))
            if freed > 0 and (best is None or freed / max(cost, 1e-9) > best.score):
                best = _Step(freed / max(cost, 1e-9), tk, u[tk], moved[tk] | {m}, new)
    return best


__all__ = ["Allocation", "Room", "unroll_by_gain", "unroll_by_heap"]
