"""The explorer's memory: a :class:`Search` owns every cache the exploration keeps between designs.

The explorer builds each candidate design from the same kernels, so the recipes (:mod:`.recipes`), the
operator moves and the kernels' cost estimates would otherwise run again per design.  A Search remembers
them; :meth:`Search.clear` forgets all of it at once.  :data:`SEARCH` is the one every exploration uses unless
it is given its own (``sd.explore(g, search=Search())``).

**The identity rule.**  ``DataflowSchedule.design_key`` (and the memos below the explorer: lowering tables,
kernel timings) name a task's IR by ``id()``, so two designs count as one only when their tasks hold the
*same* IR objects.  A Search keeps that true for the explorer's designs:

* a recipe given again to an equal kernel IR hands back the remembered result object, not an equal copy;
* equal IRs from different recipes (two loop orders that agree, a move that changes nothing) are made one
  object (:meth:`Search._one`: the first equal IR seen), so they lower once and are modeled once;
* an operator move on an IR object gives the remembered object too.

Every entry keyed by an ``id()`` keeps its object alive, so an id is never reused while its key stands (the
exploration's table of designs, :class:`.evaluation.Seen`, does the same).  Dropping entries (the bounds below,
or :meth:`Search.clear`) only means an equal design may be built and modeled again: never a wrong answer.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from ..cost.model import as_board
from ..dfg.timing import kernel_report
from ..ir.nodes import Kernel
from ..sched.schedule import Schedule, Step
from .recipes import BINDERS, OPERATOR_MOVES, apply_recipe, recipe_from, splittable

KEPT = 4096  # entries each cache holds; the oldest go first (the interning table is dropped whole past it)


@dataclass(frozen=True)
class KernelEstimate:
    """One kernel under a recipe, by the cost model: the strategies rank and pack kernels by these."""

    cycles: int
    resources: dict  # resource -> units (RESOURCES)
    lanes: int  # the largest unroll factor a loop of the recipe took


@dataclass(frozen=True)
class _Recipe:
    ir: Kernel  # the scheduled IR
    steps: tuple[Step, ...]  # the primitives that gave it
    lanes: int


class Search:
    """The caches of design-space exploration (see the module docstring for the identity rule they keep)."""

    def __init__(self, kept: int = KEPT):
        self.kept = kept
        self._recipes: OrderedDict[tuple, _Recipe] = OrderedDict()  # (kernel IR, reorder, u, split), by value
        self._fronts: OrderedDict[tuple, tuple] = OrderedDict()  # (kernel IR, reorder, split), by value -> (IR,
        # trace steps) of its recipe before the factor (recipes.recipe_from)
        self._one_of: dict[Kernel, Kernel] = {}  # scheduled IR -> the first equal object
        self._moved: OrderedDict[tuple, tuple] = OrderedDict()  # (id of an IR, move) -> (IR, IR after, steps, done)
        self._estimates: OrderedDict[tuple, KernelEstimate | None] = OrderedDict()  # (kernel, reorder, u, moves,
        # board, clock), by value -> the estimate, None when the kernel has nothing for a move to act on
        self._splittable: dict[tuple, bool] = {}  # (kernel IR, reorder) -> does the recipe leave a float sum?

    def clear(self) -> None:
        """Forget every recipe, move, estimate and interned IR."""
        for cache in (self._recipes, self._fronts, self._one_of, self._moved, self._estimates, self._splittable):
            cache.clear()

    def entries(self) -> int:
        """How many recipes, moves, estimates and interned IRs it remembers."""
        return sum(len(c) for c in (self._recipes, self._fronts, self._one_of, self._moved, self._estimates,
                                      self._splittable))

    def __repr__(self) -> str:
        return (f"<Search: {len(self._recipes)} recipe(s), {len(self._estimates)} estimate(s), "
                f"{len(self._one_of)} interned IR(s)>")

    # ------------------------------------------------------------ kernels
    def apply_recipe(self, s: Schedule, reorder: bool, u: int, split: bool = False) -> int:
        """:func:`.recipes.apply_recipe` on ``s``; a fresh schedule of a kernel IR equal to one given this recipe
        before takes the remembered IR object and trace steps (:meth:`Schedule.restore`)."""
        fresh = not s.trace.steps
        key = (s.ir, reorder, u, split)  # by value: the layers of two attention kinds share their other kernels
        hit = self._recipes.get(key) if fresh else None
        if hit is not None:
            self._recipes.move_to_end(key)
            s.restore(hit.ir, hit.steps)
            return hit.lanes
        if not fresh:
            return apply_recipe(s, reorder, u, split)
        fkey = (s.ir, reorder, split)  # the recipe up to its factor is the same for every factor
        got, front = recipe_from(s, reorder, u, split, self._fronts.get(fkey))
        self._fronts[fkey] = front
        self._fronts.move_to_end(fkey)
        s.restore(self._one(s.ir), s.trace.steps)
        self._recipes[key] = _Recipe(s.ir, tuple(s.trace.steps), got)
        for cache in (self._recipes, self._fronts):
            while len(cache) > self.kept:
                cache.popitem(last=False)
        return got

    def move(self, s: Schedule, move: str) -> int:
        """The operator move ``move`` (:data:`.recipes.OPERATOR_MOVES`) on ``s``: its binder's result, remembered
        per IR object (the object after it shared like a recipe's); returns what the binder returned."""
        key = (id(s.ir), move)
        hit = self._moved.get(key)
        if hit is not None and hit[0] is s.ir:
            self._moved.move_to_end(key)
            s.restore(hit[1], s.trace.steps + list(hit[2]))
            return hit[3]
        base, n = s.ir, len(s.trace.steps)
        done = BINDERS[move](s)
        self._moved[key] = (base, s.ir, tuple(s.trace.steps[n:]), done)
        while len(self._moved) > self.kept:
            self._moved.popitem(last=False)
        return done

    def schedule_task(self, s: Schedule, cfg, task: str) -> None:
        """Give task ``task``'s schedule ``s`` its recipe and operator moves under ``cfg`` (a :class:`.space.Config`)."""
        self.apply_recipe(s, cfg.reorder, cfg.factor(task), task in cfg.split)
        for m in OPERATOR_MOVES:
            if task in getattr(cfg, m):
                self.move(s, m)

    def splittable(self, kernel: Kernel, reorder: bool) -> bool:
        """:func:`.recipes.splittable`, remembered."""
        key = (kernel, reorder)
        got = self._splittable.get(key)
        if got is None:
            got = self._splittable[key] = splittable(kernel, reorder)
            if len(self._splittable) > self.kept:
                self._splittable.clear()
        return got

    def estimate(self, kernel: Kernel, reorder: bool, u: int, moves: frozenset, board_name: str,
                 clock: float) -> KernelEstimate | None:
        """The cost model's estimate of ``kernel`` under the recipe at factor ``u`` with ``moves`` (a subset of
        :data:`.recipes.MOVES`) on ``board_name`` at ``clock`` MHz; None when a move finds nothing to act on
        (no float sum to split, no multiply or add to rebind): no such variant of the kernel."""
        key = (kernel, reorder, u, moves, board_name, clock)  # by value: layers of two attention kinds share kernels
        if key in self._estimates:
            return self._estimates[key]
        got = None
        if "split" not in moves or self.splittable(kernel, reorder):
            s = Schedule(kernel)
            lanes = self.apply_recipe(s, reorder, u, "split" in moves)
            # the moves and the report as a design built of this kernel has them (one IR object, one cost-model run)
            if all(self.move(s, m) for m in OPERATOR_MOVES if m in moves):
                rep = kernel_report(s.ir, as_board(board_name, clock), clock)
                got = KernelEstimate(int(rep.cycles), dict(rep.resources), lanes)
        self._estimates[key] = got
        if len(self._estimates) > self.kept:
            self._estimates.popitem(last=False)
        return got

    def _one(self, ir: Kernel) -> Kernel:
        """The first IR object equal to ``ir`` this search has seen (``ir`` itself if none): the identity rule."""
        one = self._one_of.setdefault(ir, ir)
        if len(self._one_of) > self.kept:
            self._one_of.clear()
        return one


SEARCH = Search()  # the search every exploration shares unless given its own

__all__ = ["KEPT", "KernelEstimate", "SEARCH", "Search"]
