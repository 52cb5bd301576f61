"""``DataflowSchedule``: the dataflow-level primitives of one ``@sd.dataflow`` function.

``g = sd.schedule(dataflow_fn)`` holds the graph plus every decision made on
it: each edge's stream layout on its producer and consumer sides
(``g.stream``), the fused regions (``g.fuse`` / ``g.auto_fuse``), each task's
kernel schedule (``g.schedule(task)``) and FIFO depths (``g.fifo``,
``g.size_fifos``).  Nothing is lowered eagerly: converters, forks, DMAs and
FIFOs are derived from these decisions whenever they are needed
(:mod:`.lower`), so primitives can be applied in any order and
``print(g)`` always shows the design as it stands.

Every misuse raises a :class:`~streamdsl.ScheduleError` at the user's call.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .. import registry
from ..boards import board as get_board
from ..errors import ScheduleError, StreamDSLError, caller_loc, user_facing, user_facing_methods
from ..ir.nodes import Kernel
from ..sched.schedule import Schedule
from ..types import IntType
from . import fifo as F
from .fusion import FusionPlan, greedy_fuse, non_convex
from .graph import DataflowFunction, DataflowGraph
from .itensor import ITensor, converter
from .layout import LayoutRefusal, check_layout, dtype_bits, tiled, whole
from .lower import Fifo, Lowered, lower, result_locals
from .timing import DesignTiming, design_timing
from .trace import DataflowStep, DataflowTrace
from .tokensim import DeadlockError, SimResult, simulate

DEFAULT_DEPTH = 2  # what Vitis HLS gives an hls::stream without a depth pragma


@dataclass(frozen=True)
class _Handle:
    """A named piece of a dataflow schedule; the subclass says which kind."""

    graph: "DataflowSchedule" = field(repr=False, compare=False)
    name: str
    kind: ClassVar[str] = ""

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"


class TaskHandle(_Handle):
    kind = "task"


class EdgeHandle(_Handle):
    kind = "edge"


class FifoHandle(_Handle):
    kind = "fifo"


@dataclass(frozen=True)
class Placement:
    """Where a graph result is stored (``g.store_at``): rows ``offset .. offset + n`` along ``axis`` of a
    top-level array ``extent`` long there, ``offset`` a scalar parameter clamped to ``0 .. extent - n``."""

    axis: int
    extent: int
    offset: str
    into: str | None = None  # the graph input whose buffer the host passes as this port (it lies as that input)

    def full_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return shape[:self.axis] + (self.extent,) + shape[self.axis + 1:]

    def start(self, offset: int, rows: int) -> int:
        """Where ``rows`` rows land for the offset's value ``offset``: clamped to ``0 .. extent - rows``."""
        return min(max(int(offset), 0), self.extent - rows)

    def __str__(self) -> str:
        into = f" of {self.into}'s buffer" if self.into else ""
        return f"at {self.offset} of {self.extent} along axis {self.axis}{into}"


def _err(prim: str, message: str, hint: str | None = None) -> ScheduleError:
    return ScheduleError(f"{prim}: {message}", caller_loc(), hint=hint)


@user_facing_methods
class DataflowSchedule:
    """Layouts, regions, kernel schedules and FIFO depths of one dataflow function."""

    @user_facing
    def __init__(self, fn):
        if not isinstance(fn, DataflowFunction):
            what = "a kernel" if hasattr(fn, "ir") else type(fn).__name__
            raise ScheduleError(f"a dataflow schedule takes an @sd.dataflow function, got {what}", caller_loc(),
                                hint="decorate the function that calls the kernels with @sd.dataflow")
        self.function = fn
        self.graph: DataflowGraph = fn.graph
        self._schedules: dict[str, Schedule] = {}
        self._prod: dict[str, ITensor] = {}
        self._cons: dict[tuple[str, str], ITensor] = {}
        self._region: dict[str, int] = {t: n for n, t in enumerate(self.graph.tasks)}
        self._pins: dict[str, int] = {}
        self._bundles: list[tuple[str, ...]] = []
        self._placed: dict[str, Placement] = {}
        self._ports: dict[str, tuple] = {}  # tensor -> (ports, where g.ports asked)
        self._sized: dict[str, int] = {}
        self._sizing: F.Sizing | None = None
        self._sized_for: tuple | None = None  # the timing key the sizing was computed for
        self._board = get_board("u55c")  # the board the FIFOs were last sized for: simulate()'s default
        self._timing: tuple | None = None
        self.plan: FusionPlan | None = None
        self._lowered: tuple | None = None
        self.trace = DataflowTrace(self.graph.ir.name, live=self._schedules)

    # ------------------------------------------------------------- handles
    def tasks(self) -> list[TaskHandle]:
        """Every task, in program (topological) order."""
        return [TaskHandle(self, t) for t in self.graph.tasks]

    def task(self, name: str) -> TaskHandle:
        if name not in self.graph.tasks:
            raise _err("task", f"dataflow '{self.graph.ir.name}' has no task '{name}'",
                       hint=f"its tasks are: {', '.join(self.graph.tasks)}")
        return TaskHandle(self, name)

    def edges(self) -> list[EdgeHandle]:
        return [EdgeHandle(self, e) for e in self.graph.edges]

    def edge(self, name: str) -> EdgeHandle:
        if name not in self.graph.edges:
            raise _err("edge", f"dataflow '{self.graph.ir.name}' has no edge '{name}'",
                       hint=f"its edges (tensors) are: {', '.join(self.graph.edges)}")
        return EdgeHandle(self, name)

    def fifos(self) -> list[FifoHandle]:
        return [FifoHandle(self, f.name) for f in self.lowered().streams]

    def _task(self, prim: str, t) -> str:
        if isinstance(t, TaskHandle):
            if t.graph is not self:
                raise _err(prim, f"{t!r} belongs to another dataflow schedule", hint="use g.task(name) of this one")
            return t.name
        if isinstance(t, str):
            raise _err(prim, f"pass task handles, not the string {t!r}", hint=f'g.task("{t}")')
        raise _err(prim, f"expected a task handle, got {type(t).__name__}", hint="use g.tasks() or g.task(name)")

    def _edge(self, prim: str, e) -> str:
        if isinstance(e, EdgeHandle):
            if e.graph is not self:
                raise _err(prim, f"{e!r} belongs to another dataflow schedule", hint="use g.edge(name) of this one")
            return e.name
        if isinstance(e, str):
            raise _err(prim, f"pass edge handles, not the string {e!r}", hint=f'g.edge("{e}")')
        raise _err(prim, f"expected an edge handle, got {type(e).__name__}", hint="use g.edge(name)")

    def _record(self, primitive: str, *args, **kwargs) -> None:
        """Append a step to the trace: handles as (kind, name), and each kernel schedule's length now."""
        def enc(a):
            if isinstance(a, _Handle):
                return (a.kind, a.name)
            return tuple(enc(x) for x in a) if isinstance(a, (list, tuple)) else a

        self.trace.steps.append(DataflowStep(primitive, tuple(enc(a) for a in args),
                                             tuple((k, enc(v)) for k, v in kwargs.items()),
                                             tuple((t, len(s.trace.steps)) for t, s in self._schedules.items())))

    def _handle(self, a):
        """A recorded argument back as a handle of this schedule (trace replay)."""
        if isinstance(a, tuple) and len(a) == 2 and a[0] in ("task", "edge", "fifo") and isinstance(a[1], str):
            return {"task": TaskHandle, "edge": EdgeHandle, "fifo": FifoHandle}[a[0]](self, a[1])
        if isinstance(a, (list, tuple)):
            return type(a)(self._handle(x) for x in a)
        return a

    def fifo_handle(self, name: str) -> FifoHandle:
        """The FIFO named ``name`` (as ``g.fifos()`` and ``print(g)`` name them)."""
        names = [f.name for f in self.lowered().streams]
        if name not in names:
            raise _err("fifo_handle", f"no FIFO named {name!r}", hint=f"FIFOs now: {', '.join(names)}")
        return FifoHandle(self, name)

    # --------------------------------------------------------- kernel level
    def schedule(self, task) -> Schedule:
        """The task's kernel schedule; later timing and builds use its IR as scheduled."""
        name = self._task("schedule", task)
        if name not in self._schedules:
            self._record("schedule", TaskHandle(self, name))
            self._schedules[name] = Schedule(self.graph.kernel(name))
        return self._schedules[name]

    def kernel_ir(self, task: str) -> Kernel:
        s = self._schedules.get(task)
        return s.ir if s is not None else self.graph.kernel(task)

    # ------------------------------------------------------------- layouts
    def stream(self, edge, tile=None, order=None, *, itensor=None, side=None) -> ITensor:
        """Give ``edge`` a stream layout: ``tile`` (element shape) and ``order`` (data dims, outermost first).

        ``itensor=`` gives an :class:`ITensor` (or its text) instead, e.g. one that
        replays.  ``side="producer"`` / ``"consumer"`` / a consumer task sets one
        side only; different sides get a layout converter when fused.
        """
        e = self._edge("stream", edge)
        node = self.graph.edges[e]
        if (tile is None) == (itensor is None):
            raise _err("stream", "give either tile=(...) (with an optional order=) or itensor=...",
                       hint=f"g.stream(g.edge(\"{e}\"), tile={tuple(node.type.shape)})")
        if itensor is not None and order is not None:
            raise _err("stream", "order= goes with tile=; an itensor already fixes its order")
        try:
            lay = tiled(node.type, tile, order) if tile is not None else check_layout(node.type, itensor)
        except LayoutRefusal as r:
            raise _err("stream", f"edge '{e}': {r.message}", hint=r.hint) from None
        consumers = [c for c, _ in node.consumers]
        if side is None:
            sides = ["producer", *consumers] if not node.is_input else consumers
        elif side == "producer":
            if node.is_input:
                raise _err("stream", f"edge '{e}' is a graph input: its producer is a DMA that follows the "
                           "consumers' layout", hint='stream the consumer side: side="consumer"')
            sides = ["producer"]
        elif side == "consumer":
            if not consumers:
                raise _err("stream", f"edge '{e}' has no consumer task (it is only returned)",
                           hint='stream its producer side: side="producer"')
            sides = consumers
        elif isinstance(side, TaskHandle):
            c = self._task("stream", side)
            if c not in consumers:
                raise _err("stream", f"task '{c}' does not read edge '{e}'",
                           hint=f"its consumers are: {', '.join(consumers) or 'none'}")
            sides = [c]
        else:
            raise _err("stream", f"side must be \"producer\", \"consumer\" or a consumer task, got {side!r}",
                       hint='g.stream(edge, tile=..., side="consumer")')
        for s in sides:
            if s == "producer":
                self._prod[e] = lay
            else:
                self._cons[(e, s)] = lay
        kw = dict(tile=tuple(tile)) if tile is not None else dict(itensor=str(lay))
        if tile is not None and order is not None:
            kw["order"] = tuple(order)
        if side is not None:
            kw["side"] = side
        self._record("stream", EdgeHandle(self, e), **kw)
        return lay

    def layout(self, edge, side="producer") -> ITensor:
        """The layout of one side of an edge (``side``: "producer" or a consumer task)."""
        e = edge.name if isinstance(edge, EdgeHandle) else edge
        t = self.graph.edges[e].type
        if side == "producer":
            return self._prod.get(e) or whole(t)
        return self._cons.get((e, side.name if isinstance(side, TaskHandle) else side)) or whole(t)

    def bundle(self, *edges) -> tuple[str, ...]:
        """Read graph inputs ``edges`` with one DMA process, one after the other in the order given, over one
        set of memory channels (a weight streamer): each waits for the one before it to be read whole, and
        together they get the channels one DMA would.  Order them as the kernels need them; a kernel that
        needs two of them at once would wait on the second forever (the token simulator says so)."""
        if len(edges) == 1 and isinstance(edges[0], (list, tuple)):
            edges = tuple(edges[0])
        names = [self._edge("bundle", e) for e in edges]
        if len(names) < 2:
            raise _err("bundle", "a bundle takes two or more graph inputs", hint='g.bundle(g.edge("w1"), g.edge("w2"))')
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise _err("bundle", f"edge '{dup}' is listed twice")
        for n in names:
            if not self.graph.edges[n].is_input:
                raise _err("bundle", f"edge '{n}' is not a graph input: only the DMAs that read inputs are bundled",
                           hint="bundle the weights and vectors the layer reads from memory")
            taken = next((b for b in self._bundles if n in b), None)
            if taken is not None:
                raise _err("bundle", f"edge '{n}' is already in the bundle {', '.join(taken)}",
                           hint="each input is read by one DMA process")
        self._bundles.append(tuple(names))
        self._record("bundle", *(EdgeHandle(self, n) for n in names))
        return tuple(names)

    def bundles(self) -> list[tuple[str, ...]]:
        return list(self._bundles)

    def store_at(self, edge, offset: str, axis: int, extent: int, into=None) -> Placement:
        """Store graph result ``edge`` in place, into a larger array: the top function's port is ``extent``
        long along ``axis`` and the result's ``n`` rows land at ``offset .. offset + n - 1`` there (``offset``
        a scalar parameter, clamped to ``0 .. extent - n``); the rest of the array is left as it was.  A KV
        cache updated in place: the layer returns only its new rows, its store DMA writes just those, and
        the host passes the cache buffer itself as the port (the function's value is still the rows).
        ``into``: the graph input (an edge handle) whose buffer the host passes as this port, the cache the
        layer also reads: the port then lies in DRAM as that input does, so what the store writes is what the
        next call's load reads."""
        name = self._edge("store_at", edge)
        e = self.graph.edges[name]
        if not e.is_output:
            raise _err("store_at", f"edge '{name}' is not a result of '{self.graph.ir.name}'",
                       hint="only what the function returns is stored to memory")
        if e.is_input:
            raise _err("store_at", f"edge '{name}' is a parameter returned unchanged: it has no store DMA of its own",
                       hint="place a result a kernel writes")
        shape = e.type.shape
        if isinstance(axis, bool) or not isinstance(axis, int) or not 0 <= axis < len(shape):
            raise _err("store_at", f"axis must be a dimension of '{name}' ({e.type}): 0 to {len(shape) - 1}, "
                       f"got {axis!r}", hint="the axis the rows are placed along, e.g. axis=1 of [heads, t, dim]")
        if isinstance(extent, bool) or not isinstance(extent, int) or extent < shape[axis]:
            raise _err("store_at", f"extent must be an integer of at least {shape[axis]} (the result's length "
                       f"along axis {axis}), got {extent!r}", hint="the whole array's length along the axis")
        ints = [q.name for q in self.graph.ir.params if isinstance(q.type, IntType)]
        if offset not in ints:
            raise _err("store_at", f"offset must name an integer scalar parameter of '{self.graph.ir.name}', "
                       f"got {offset!r}", hint=f"its integer scalars: {', '.join(ints) or 'none'}")
        if name in self._placed:
            raise _err("store_at", f"edge '{name}' is already stored {self._placed[name]}",
                       hint="each result is stored in one place")
        src = None
        if into is not None:
            src = self._edge("store_at", into)
            full = shape[:axis] + (extent,) + shape[axis + 1:]
            if not self.graph.edges[src].is_input or tuple(self.graph.edges[src].type.shape) != tuple(full) \
                    or self.graph.edges[src].type.dtype != e.type.dtype:
                raise _err("store_at", f"into must be a graph input of the whole array's type "
                           f"({e.type.dtype}{list(full)}), got edge '{src}' ({self.graph.edges[src].type})",
                           hint="the cache the layer reads: into=g.edge(\"kc\")")
        self._placed[name] = Placement(axis, extent, offset, src)
        kw = {"into": EdgeHandle(self, src)} if src is not None else {}
        self._record("store_at", EdgeHandle(self, name), offset, axis=axis, extent=extent, **kw)
        return self._placed[name]

    def ports(self, edge, n: int) -> int:
        """Move graph input or result ``edge`` over ``n`` m_axi ports of 512-bit words (word ``w`` of its
        DRAM image on port ``w % n``, a memory channel a port), whatever the channel allocation would give
        it: the DRAM layout of a buffer two designs share (a prefill and a decode layer reading one copy
        of the weights).  ``n`` must divide the words of a token of the tensor's one DMA (checked when the
        design is timed); 1 always works."""
        name = self._edge("ports", edge)
        e = self.graph.edges[name]
        if not (e.is_input or e.is_output):
            raise _err("ports", f"edge '{name}' is on chip: only graph inputs and results have m_axi ports",
                       hint="set the ports of what the function takes or returns")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 64:
            raise _err("ports", f"ports must be an integer from 1 to 64, got {n!r}", hint="e.g. g.ports(w, 4)")
        self._ports[name] = (n, caller_loc())
        self._record("ports", EdgeHandle(self, name), n)
        return n

    def pinned_ports(self) -> dict[str, int]:
        """The m_axi ports ``g.ports`` pinned, by edge."""
        return {e: n for e, (n, _loc) in self._ports.items()}

    def placements(self) -> dict[str, Placement]:
        """The results ``store_at`` places in larger arrays, by edge."""
        return dict(self._placed)

    # -------------------------------------------------------------- regions
    def fuse(self, *tasks) -> int:
        """Put ``tasks`` in one on-chip region; returns its number."""
        if len(tasks) == 1 and isinstance(tasks[0], (list, tuple)):
            tasks = tuple(tasks[0])
        if not tasks:
            raise _err("fuse", "no tasks given", hint="g.fuse(g.task(\"a\"), g.task(\"b\"))")
        names = [self._task("fuse", t) for t in tasks]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise _err("fuse", f"task '{dup}' is listed twice")
        between = non_convex(self.graph, set(names))
        if between:
            raise _err("fuse", f"tasks {', '.join(names)} cannot share a region without {', '.join(between)}: "
                       "data would leave the region and come back through DRAM",
                       hint=f"fuse {', '.join(between)} as well, or fuse fewer tasks")
        new = max(self._region.values()) + 1
        for n in names:
            self._region[n] = new
        self._renumber()
        self._record("fuse", *(TaskHandle(self, n) for n in names))
        return self._region[names[0]]

    def _renumber(self) -> None:
        order: dict[int, int] = {}
        for t in self.graph.tasks:
            order.setdefault(self._region[t], len(order))
        self._region = {t: order[r] for t, r in self._region.items()}

    def regions(self) -> list[list[str]]:
        out: dict[int, list[str]] = {}
        for t in self.graph.tasks:
            out.setdefault(self._region[t], []).append(t)
        return [out[r] for r in sorted(out)]

    def region_of(self, task) -> int:
        return self._region[task.name if isinstance(task, TaskHandle) else task]

    def edge_cost(self, e: str, consumer: str) -> int:
        """On-chip bytes of edge ``e`` into ``consumer`` once fused: a ping-pong converter, else a 2-token FIFO."""
        src, dst = self.layout(e), self.layout(e, consumer)
        if src != dst:
            return 2 * converter(src, dst).buffer_bytes
        return DEFAULT_DEPTH * src.token_bytes

    def auto_fuse(self, max_bytes: int) -> FusionPlan:
        """The paper's greedy fusion (algorithm 2) under an on-chip memory cap of ``max_bytes``."""
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, float)) or max_bytes <= 0:
            raise _err("auto_fuse", f"max_bytes must be a positive number of bytes, got {max_bytes!r}",
                       hint="the U55C has about 41 MB on chip: max_bytes=41 * 2**20")
        from .timing import local_bytes

        plan = greedy_fuse(self.graph, int(max_bytes), lambda t: local_bytes(self.kernel_ir(t)), self.edge_cost)
        self._region = {t: n for n, grp in enumerate(plan.groups) for t in grp}
        self.plan = plan
        self._record("auto_fuse", max_bytes=int(max_bytes))
        return plan

    # --------------------------------------------------------------- lowering
    def design_key(self) -> tuple:
        """Every decision the lowered design follows from: layouts, regions, bundles and the identity of each
        task's current IR (two schedules with equal keys lower to the same hardware)."""
        return (tuple(self._prod.items()), tuple(self._cons.items()), tuple(self._region.items()),
                tuple(id(self.kernel_ir(t)) for t in self.graph.tasks), tuple(self._bundles))

    def lowered(self) -> Lowered:
        """Converters, forks, DMAs and FIFOs of the design as it stands.

        Remembered until a decision changes: the key holds every layout, every
        region and the identity of every task's current IR (a kernel schedule
        gives a new IR object on each primitive), so a design is lowered once
        per change however often it is printed, sized or simulated."""
        key = self.design_key()
        if self._lowered is None or self._lowered[0] != key:
            irs = [self.kernel_ir(t) for t in self.graph.tasks]  # kept alive with the key, so ids stay unique
            self._lowered = (key, lower(self.graph, self.kernel_ir, self._region, self._prod, self._cons,
                                        self._bundles), irs)
        return self._lowered[1]

    def converters(self):
        return self.lowered().of_kind("converter")

    def dmas(self):
        return [n.dma for n in self.lowered().nodes.values() if n.dma is not None]

    def forks(self):
        return self.lowered().of_kind("fork")

    def timing(self, board=None, clock_mhz: float | None = None, bits: dict | None = None) -> DesignTiming:
        """The one timing model of the design as it stands on ``board`` (default: the board the FIFOs were
        last sized for, else the U55C): a token-simulator Task per node (``g.timing()["relu"]``), the DMAs'
        memory channels and the kernels' cost-model reports (see :mod:`.timing`).  ``simulate``,
        ``size_fifos``, the HLS FIFO order and ``model_design`` all read it."""
        low = self.lowered()
        b = self._board if board is None else get_board(board)
        key = (self.design_key(), b, clock_mhz, tuple(sorted((bits or {}).items())), tuple(self._placed.items()),
               tuple((e, n) for e, (n, _) in self._ports.items()))
        if self._timing is None or self._timing[0] != key:
            self._timing = (key, design_timing(low, self.kernel_ir, b, clock_mhz, bits, self._placed, self._ports))
        return self._timing[1]

    # ------------------------------------------------------------------ FIFOs
    def _fifo_names(self, prim: str, x, consumer=None, low: Lowered | None = None) -> list[str]:
        low = low or self.lowered()
        if isinstance(x, FifoHandle):
            if x.graph is not self:
                raise _err(prim, f"{x!r} belongs to another dataflow schedule")
            if not any(f.name == x.name for f in low.streams):
                raise _err(prim, f"FIFO '{x.name}' no longer exists (a later stream/fuse re-lowered its edge)",
                           hint=f"FIFOs now: {', '.join(f.name for f in low.streams)}")
            return [x.name]
        e = self._edge(prim, x)
        mine = [f for f in low.streams if f.edge == e]
        into_tasks = [f for f in mine if low.nodes[f.dst].kind == "task"]
        if consumer is not None:
            c = self._task(prim, consumer)
            sel = [f for f in into_tasks if f.dst == c]
            if not sel:
                raise _err(prim, f"task '{c}' does not read edge '{e}'",
                           hint=f"FIFOs of '{e}': {', '.join(f.name for f in mine)}")
            return [f.name for f in sel]
        return [f.name for f in (into_tasks or mine)]

    def fifo(self, x, depth, consumer=None) -> dict[str, int]:
        """Pin the depth of the FIFO(s) feeding ``x``'s consumers (or one ``g.fifos()`` handle); ``"auto"`` sizes them."""
        if depth != "auto" and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
            raise _err("fifo", f"depth must be a positive integer or \"auto\", got {depth!r}",
                       hint="g.fifo(edge, depth=4) or g.fifo(edge, depth=\"auto\")")
        names = self._fifo_names("fifo", x, consumer)
        self._record("fifo", x, depth, **({} if consumer is None else {"consumer": consumer}))
        if depth == "auto":
            for n in names:
                self._pins.pop(n, None)
            sz = self._size("fifo", "normal", self.timing())
            for n in names:
                self._sized[n] = sz.depths[n]
            return {n: self._sized[n] for n in names}
        for n in names:
            self._pins[n] = depth
        return {n: depth for n in names}

    def _size(self, prim: str, mode: str, timing: DesignTiming) -> F.Sizing:
        if mode not in ("normal", "conservative"):
            raise _err(prim, f"unknown FIFO sizing mode {mode!r}", hint='use mode="normal" or mode="conservative"')
        low = self.lowered()
        pins = {f.name: self._pins[f.name] for f in low.streams if f.name in self._pins}
        return F.design_depths(timing.task_list, timing.edges, low.fifos, mode, pins)

    def size_fifos(self, mode: str = "normal", board=None, clock_mhz: float | None = None,
                   bits: dict | None = None) -> F.Sizing:
        """Size every FIFO not pinned for the timing on ``board`` (default: the board last sized for, else the
        U55C): LP start offsets (HiGHS), depth = tokens in flight."""
        timing = self.timing(board, clock_mhz, bits)
        sz = self._size("size_fifos", mode, timing)
        low = self.lowered()
        self._sized = {f.name: sz.depths[f.name] for f in low.streams if f.name not in self._pins}
        self._sizing = sz
        self._board = timing.board
        self._sized_for = self._timing[0]
        kw = dict(mode=mode) | ({"board": timing.board.name} if board is not None else {}) \
            | ({"clock_mhz": clock_mhz} if clock_mhz is not None else {}) | ({"bits": dict(bits)} if bits else {})
        self._record("size_fifos", **kw)
        return sz

    def depth(self, name: str) -> tuple[int, str]:
        """(depth, where it comes from) of one FIFO."""
        if name in self._pins:
            return self._pins[name], "pinned"
        if name in self._sized:
            return self._sized[name], "sized"
        return DEFAULT_DEPTH, "default"

    def depths(self, low: Lowered | None = None) -> dict[str, int]:
        low = low or self.lowered()
        return {f.name: (1 if f.kind == "dram" else self.depth(f.name)[0]) for f in low.fifos}

    def _stale(self) -> bool:
        return self._sized_for is not None and self._sized_for != self._timing[0]

    # ------------------------------------------------------------- analysis
    def simulate(self, trace: bool = False, board=None, clock_mhz: float | None = None,
                 bits: dict | None = None) -> SimResult:
        """Token-level simulation at the current depths (unsized FIFOs: depth 2) of the timing on ``board``
        (default: the board the FIFOs were sized for, else the U55C): the cycles ``model_design`` reports.

        ``trace=True``: the result's ``trace`` holds every task's busy and stalled
        spans and every FIFO's occupancy over time (what ``streamdsl.viz`` draws)."""
        low = self.lowered()
        timing = self.timing(board, clock_mhz, bits)
        try:
            return simulate(timing.task_list, timing.edges, self.depths(low), trace=bool(trace))
        except DeadlockError as err:
            raise DeadlockError(err.message, caller_loc(), hint=err.hint) from None

    def explain_fifo(self, x, consumer=None) -> str:
        """Which path forced a FIFO's depth (the LP's critical path and the paper's closed form)."""
        low = self.lowered()
        names = self._fifo_names("explain_fifo", x, consumer, low)
        timing = self.timing()
        sz = self._sizing if self._sizing is not None and not self._stale() else self._size("explain_fifo", "normal",
                                                                                            timing)
        tasks, edges = timing.task_list, timing.edges
        out = []
        for n in names:
            text = F.explain(tasks, edges, sz, n)
            d, src = self.depth(n)
            if src != "sized" or d != sz.depths[n]:
                text += f"\n  current depth: {d} ({src})"
            out.append(text)
        return "\n".join(out)

    def onchip_bytes(self, low: Lowered | None = None) -> dict[int, int]:
        """On-chip bytes per region: kernels' scratch buffers, ping-pong converters, FIFOs at their depths."""
        low = low or self.lowered()
        total = {r: 0 for r in set(self._region.values())}
        for n in low.nodes.values():
            total[n.region] += n.local_bytes + (2 * n.converter.buffer_bytes if n.converter else 0)
        for f in low.streams:
            total[low.nodes[f.dst].region] += self.depth(f.name)[0] * f.token_bytes
        return total

    def task_buffer_bytes(self, low: Lowered | None = None) -> dict[int, int]:
        """Bytes per region of the whole-tensor copies the emitted tasks keep of their streams.

        The HLS task code (:mod:`streamdsl.backend.hls.dataflow`) reads each input
        stream into a local array of the whole tensor and writes results from
        one; shrinking those to the window of tokens alive at once is not done
        yet, so they are reported apart from :meth:`onchip_bytes` (the streaming
        design's own memory, which the paper's model counts)."""
        low = low or self.lowered()
        total = {r: 0 for r in set(self._region.values())}
        for n in low.of_kind("task"):
            k = self.kernel_ir(n.name)
            types = {p.name: p.type for p in k.params}
            types.update(zip(result_locals(k), k.results))
            for names in n.ports.values():
                for name in dict.fromkeys(names):
                    t = types[name]
                    total[n.region] += t.size * dtype_bits(t.dtype) // 8
        return total

    def intermediate_bytes(self, low: Lowered | None = None) -> tuple[int, int]:
        """(as streamed now, as whole ping-pong buffers) on-chip bytes of the tensors passed between kernels.

        Streamed: the FIFOs at their depths and the ping-pong converters of every
        edge from one kernel task to another in the same region.  Whole
        buffers: what the same edges cost when each is a ping-pong array
        between dataflow processes (Vitis' default for arrays, the unfused
        baseline of the paper's fusion ablation)."""
        low = low or self.lowered()
        inner = {e.name for e in self.graph.edges.values()
                 if not e.is_input and any(self._region[c] == self._region[e.producer] for c, _ in e.consumers)}
        streamed = sum(self.depth(f.name)[0] * f.token_bytes for f in low.streams if f.edge in inner)
        streamed += sum(2 * n.converter.buffer_bytes for n in low.of_kind("converter") if n.edge in inner)
        whole_bufs = sum(2 * self.graph.edges[e].type.size * dtype_bits(self.graph.edges[e].type.dtype) // 8
                         for e in inner)
        return streamed, whole_bufs

    # ------------------------------------------------------------------ build
    def build(self, target: str = "hls", output=None, board="u55c", overwrite: bool = False):
        """The project of the design as it stands, by the backend registered as ``target`` (``"hls"``: a Vitis
        HLS project whose ``.csim(*arrays)`` runs it with g++)."""
        loc = caller_loc()
        try:
            impl = registry.lookup("build.dataflow", target)
        except StreamDSLError as err:
            raise _err("build", err.message, hint=err.hint) from None
        try:
            return impl(self, output=output, board=board, overwrite=overwrite)
        except StreamDSLError as err:
            if err.loc is None:
                err.loc = loc
            raise

    # ------------------------------------------------------------------ print
    def __str__(self) -> str:
        from .printer import render

        return render(self)

    def __repr__(self) -> str:
        return f"<DataflowSchedule of {self.graph.ir.name}: {len(self.graph.tasks)} task(s), {len(self.regions())} region(s)>"

    def _repr_html_(self) -> str:
        """Jupyter: the design as a picture (Graphviz) above ``print(g)``; the text alone without Graphviz."""
        return registry.lookup("present", "html")(self)


def dataflow_schedule(fn) -> DataflowSchedule:
    return DataflowSchedule(fn)


__all__ = ["DataflowSchedule", "EdgeHandle", "FifoHandle", "Placement", "TaskHandle", "Fifo", "dataflow_schedule"]
