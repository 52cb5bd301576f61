"""Fused regions: which sets of tasks may share a chip, and the paper's greedy fusion.

A fused region runs as one accelerator invocation; everything entering or
leaving it goes through DRAM.  So a region must be *convex*: no path may leave
it and come back (a task outside between two members would need the region's
output before the region could finish, a deadlock through DRAM).

Greedy fusion is the paper's algorithm 2: visit tasks in topological order;
for each, find the most recently created group holding one of its
predecessors and the on-chip memory the edges from that group into the task
would cost once streamed on chip; join that group if its accumulated cost
plus this (plus the task's own scratch memory) stays within the cap, else
start a new group.  A task whose own memory already exceeds the cap is
reported (the paper sends such a design back to smaller tiles).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .graph import DataflowGraph


def non_convex(g: DataflowGraph, members: set[str]) -> list[str]:
    """Tasks outside ``members`` on a path from a member to a member (empty: convex)."""

    def reach(step: Callable[[str], list[str]]) -> set[str]:
        seen: set[str] = set()
        todo = [n for m in members for n in step(m) if n not in members]
        while todo:
            t = todo.pop()
            if t in seen:
                continue
            seen.add(t)
            todo += [n for n in step(t) if n not in seen]
        return seen

    between = reach(g.successors) & reach(g.predecessors)
    return [t for t in g.tasks if t in between and t not in members]


@dataclass
class FusionPlan:
    """The groups greedy fusion chose, their on-chip bytes, and tasks too big on their own."""

    cap: int
    groups: list[list[str]]
    costs: list[int]
    oversized: list[tuple[str, int]] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"greedy fusion under {self.cap} B: {len(self.groups)} region(s)"]
        for n, (grp, c) in enumerate(zip(self.groups, self.costs)):
            lines.append(f"  region {n}: {', '.join(grp)}  ({c} B on chip)")
        for t, c in self.oversized:
            lines.append(f"  task {t} alone needs {c} B > {self.cap} B: use smaller tiles for it")
        return "\n".join(lines)

    __repr__ = __str__


def greedy_fuse(g: DataflowGraph, cap: int, own: Callable[[str], int],
                edge_cost: Callable[[str, str], int]) -> FusionPlan:
    """Algorithm 2; ``own(t)`` is a task's scratch bytes, ``edge_cost(e, t)`` the on-chip bytes of edge ``e`` into ``t``."""
    group_of: dict[str, int] = {}
    groups: list[list[str]] = []
    costs: list[int] = []
    oversized: list[tuple[str, int]] = []
    for t in g.tasks:  # program order is topological
        preds = [group_of[p] for p in g.predecessors(t)]
        if preds:
            nearest = max(preds)
            add = own(t) + sum(edge_cost(e, t) for e in dict.fromkeys(g.tasks[t].inputs)
                               if e is not None and g.edges[e].producer is not None
                               and group_of[g.edges[e].producer] == nearest)
            if costs[nearest] + add <= cap:
                groups[nearest].append(t)
                costs[nearest] += add
                group_of[t] = nearest
                continue
        group_of[t] = len(groups)
        groups.append([t])
        costs.append(own(t))
        if own(t) > cap:
            oversized.append((t, own(t)))
    return FusionPlan(cap, groups, costs, oversized)
