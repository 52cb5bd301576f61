"""Design-space exploration over the paper's three spaces: tiling, fusion, resource allocation.

``sd.explore(design, board="u55c", budget=...)`` where ``design`` is a ``DataflowSchedule`` (its stream
layouts are kept), an ``@sd.dataflow`` function, or an :class:`Explorable` (an object with
``design(t=1, kind=None)``, such as a library LLM: its one-token decode layer is explored).  It returns an
:class:`Exploration`: the best design (a :class:`~streamdsl.perf.model.DesignPerf` whose ``.schedule`` is
the sized DataflowSchedule), the default design, and the table of every design tried.

1. **Tiling.**  The kernels a task calls are inlined into it, and adjacent top-level loops over the same rows
   are fused (``compute_at``), so a kernel finishes a row before it needs the next.  One default tile for
   every stream: the outermost data dim in tiles of 1 (a row, a head), the others whole (``tile=True``), plus
   a loop order that follows it: a top-level loop whose only child is a larger constant loop is swapped with
   it (``reorder=True``; a refused reorder is skipped), so weights stream row by row.  Every innermost loop
   is pipelined (II 1), or its parent when it is short and alone in it.  Then the unroll factors: the
   paper's max-heap (the kernel with the most cycles doubles its factor until the budget or ``util`` of the
   board's DSPs/LUTs/FFs is reached), and the steps that save the most cycles per share of the board (a
   one-token layer's latency is the sum of its kernels').  A factor is spent inside the pipelines
   (:func:`~.recipes.unroll_parallel`): the pipelined loop is split and its inner part unrolled (integer
   sums balance into adder trees, as Vitis does; a floating-point sum is split over partial accumulators by
   ``rfactor``, its reassociation consented to for that loop alone by ``reassociate``), then lanes of the
   loop around it move inside; a loop around a pipeline is never unrolled (Vitis would run the copies one
   after another).  The arrays the lanes read are partitioned cyclically.
2. **Fusion.**  Everything in one region, or the paper's greedy algorithm 2 (``g.auto_fuse``) under the
   board's on-chip memory cap.
3. **Resources.**  Kernels' local arrays whose banks exceed 64 KiB bound to URAM; FIFO depths sized for the
   board timing; FIFOs from a weight DMA into one kernel capped at 16 KiB (2 to 16 tokens), since
   back-pressure there only slows the DMA, or ("prefetch") deep enough for the DMA to run ahead; HBM
   channels, memory binding and SLR placement by the design model.

Kernels are ranked by the cost model alone (one kernel at a time, cheap); every design in the table is
evaluated end to end by the token-level simulator (the analytic estimate printed beside it).  A design is
kept only if the token simulator runs it without a deadlock or back-pressure and the board holds it.

The package, by job: :mod:`.recipes` (the primitives a kernel is given), :mod:`.space` (a design as a
:class:`Config`, and how it is built), :mod:`.search` (the :class:`Search` that owns the caches, and the
identity rule they keep), :mod:`.evaluation` (one design built and modeled), :mod:`.strategies` (how the
unroll budget is shared), :mod:`.driver` (:func:`explore` and its :class:`Exploration`).
"""
from .driver import UTIL, Explorable, Exploration, ExploreError, explore
from .evaluation import HEADER, Tried, commit, evaluate
from .recipes import apply_recipe
from .search import SEARCH, KernelEstimate, Search
from .space import Config, build_design, size_for_board
from .strategies import Allocation, Room

__all__ = ["Allocation", "Config", "Explorable", "Exploration", "ExploreError", "HEADER", "KernelEstimate", "Room",
           "SEARCH", "Search", "Tried", "UTIL", "apply_recipe", "build_design", "commit", "evaluate", "explore",
           "size_for_board"]
