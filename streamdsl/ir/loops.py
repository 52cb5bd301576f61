"""Loop facts every part shares: a loop's trip count and the walk over a body's loops with their parents."""
from __future__ import annotations

from typing import Iterator

from .nodes import Const, For, If, Stmt


def trip_count(loop: For) -> int | None:
    """Iterations of ``for v in range(start, stop, step)`` when both bounds are constants, else None (the
    bounds of expression loops are in :meth:`streamdsl.ir.bounds.Ranges.max_trips`)."""
    if isinstance(loop.start, Const) and isinstance(loop.stop, Const):
        return max(0, -(-(loop.stop.value - loop.start.value) // loop.step))
    return None


def loops_with_parents(stmts: tuple[Stmt, ...], parents: tuple[For, ...] = ()) -> Iterator[tuple[For, tuple[For, ...]]]:
    """Every loop in ``stmts``, outermost first, with the loops around it (outermost first); ``if`` branches
    are walked through."""
    for s in stmts:
        if isinstance(s, For):
            yield s, parents
            yield from loops_with_parents(s.body, parents + (s,))
        elif isinstance(s, If):
            yield from loops_with_parents(s.then, parents)
            yield from loops_with_parents(s.orelse, parents)


__all__ = ["loops_with_parents", "trip_count"]
