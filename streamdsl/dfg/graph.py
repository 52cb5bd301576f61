"""``@sd.dataflow`` functions and the task graph they describe.

A dataflow function is a Python function whose body only calls kernels and
returns some of their results::

    @sd.dataflow
    def ffn(x: f32[8, 8], w1: f32[8, 8], w2: f32[8, 8]) -> f32[8, 8]:
        h = gemm(x, w1)
        r = relu(h)
        y = gemm(r, w2)
        return y

It goes through the same frontend as a kernel (so names, types and calls are
checked the same way and errors point at the user's line); what comes back is
a :class:`Kernel` whose body is ``CallKernel`` statements and a ``Return``.
:class:`DataflowGraph` reads that body as a graph: one *task* per call
(named after the callee, ``_1``, ``_2`` when a kernel is called again) and
one *edge* per tensor, produced by a task or by the graph's caller (an
input), consumed by tasks and/or returned (an output).

Calling the function on NumPy arrays runs its kernels in program order
through their own ``KernelFunction`` objects: the dataflow layer may not
import the simulator (it sits below the backends), and the kernels' order of
calls is a valid sequential execution of the graph.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from .. import registry
from ..errors import KernelSyntaxError, KernelTypeError, Loc, StreamDSLError, caller_loc, user_facing
from ..frontend import definition_scope, parse_function, require_function
from ..ir.naming import user_name
from ..ir.nodes import CallKernel, Const, Kernel, Ref, Return, Var, written_params
from ..types import TensorType


@dataclass(frozen=True)
class TaskNode:
    """One kernel call: ``outputs = kernel(inputs)``; ``inputs[i]`` is an edge name or None (a scalar)."""

    name: str
    kernel: str
    inputs: tuple[str | None, ...]
    outputs: tuple[str, ...]
    loc: Loc | None = field(default=None, compare=False)


@dataclass
class EdgeNode:
    """One tensor: its producer task (None for a graph input) and its consumers ``(task, arg index)``."""

    name: str
    type: TensorType
    producer: str | None
    consumers: list[tuple[str, int]] = field(default_factory=list)
    is_output: bool = False
    loc: Loc | None = None

    @property
    def is_input(self) -> bool:
        return self.producer is None


def _kernel_like(obj) -> bool:
    """A ``KernelFunction`` without importing ``streamdsl.api`` (which imports the simulator)."""
    return callable(obj) and isinstance(getattr(type(obj), "ir", None), property) and hasattr(obj, "fn")


class DataflowFunction:
    """A dataflow of kernel calls: ``.ir`` is its Kernel IR, calling it runs the kernels in order."""

    def __init__(self, fn, scope: dict | None = None):
        self.fn = fn
        self._scope = scope
        self._ir: Kernel | None = None
        self._graph: DataflowGraph | None = None
        self._kernels: dict[str, Any] = {}
        functools.update_wrapper(self, fn)

    def _resolve(self, obj, loc):
        if isinstance(obj, DataflowFunction):
            raise KernelSyntaxError(f"dataflow function '{obj.fn.__name__}' cannot be called inside another dataflow",
                                    loc, hint="call its kernels directly in this dataflow function")
        if _kernel_like(obj):
            ir = obj.ir
            if isinstance(ir, Kernel):
                self._seen.append((ir, obj))
                return ir
        return None

    @property
    @user_facing
    def ir(self) -> Kernel:
        if self._ir is None:
            from ..ir.verify import verify

            self._seen: list = []
            k = verify(parse_function(self.fn, self._resolve, self._scope))
            _check_body(k)
            self._kernels = {c.name: _function_of(c, self._seen) for c in k.callees}
            self._ir = k
        return self._ir

    @property
    @user_facing
    def graph(self) -> "DataflowGraph":
        if self._graph is None:
            self._graph = DataflowGraph(self.ir)
        return self._graph

    def kernel_function(self, kernel_name: str):
        """The user's ``KernelFunction`` behind a callee name."""
        self.ir  # noqa: B018 - parses and records the callees
        return self._kernels[kernel_name]

    @user_facing
    def __call__(self, *args):
        k = self.ir
        if len(args) != len(k.params):
            raise KernelTypeError(f"dataflow '{k.name}' takes {len(k.params)} argument(s), got {len(args)}",
                                  caller_loc(), hint=f"signature: {_signature(k)}")
        env: dict[str, Any] = {p.name: a for p, a in zip(k.params, args)}
        for s in k.body:
            if isinstance(s, CallKernel):
                vals = [env[a.name] if isinstance(a, (Ref, Var)) else a.value for a in s.args]
                out = self._kernels[s.callee](*vals)
                outs = out if len(s.outs) != 1 else (out,)
                env.update(zip(s.outs, outs))
            elif isinstance(s, Return):
                vals = tuple(env[v.name] if isinstance(v, (Ref, Var)) else v.value for v in s.values)
                return vals[0] if len(vals) == 1 else (vals or None)
        return None

    def __repr__(self) -> str:
        try:
            return f"<dataflow {_signature(self.ir)}>"
        except StreamDSLError:
            return f"<dataflow {self.fn.__name__} (does not compile)>"

    def __str__(self) -> str:
        return str(self.ir)

    def _repr_html_(self) -> str:
        """Jupyter: the task graph as a picture (Graphviz; the printed IR without it)."""
        return registry.lookup("present", "html")(self)


def dataflow(fn) -> DataflowFunction:
    """Decorate a function whose body calls ``@sd.kernel`` functions and returns their results."""
    require_function(fn, "@sd.dataflow")
    return DataflowFunction(fn, definition_scope())


def _signature(k: Kernel) -> str:
    sig = ", ".join(f"{p.name}: {p.type}" for p in k.params)
    return f"{k.name}({sig}) -> ({', '.join(map(str, k.results))})"


def _function_of(callee: Kernel, seen: list):
    """The user's ``KernelFunction`` behind a callee (renamed ``mm_64x64`` when another ``mm`` is called too)."""
    for ir, obj in seen:
        if ir is callee or (ir.name == user_name(callee) and ir.params == callee.params and ir.body == callee.body):
            return obj
    raise AssertionError(f"no kernel function for {callee.name}")


def _check_body(k: Kernel) -> None:
    """Only kernel calls and a return; every tensor argument is an input or an earlier result."""
    hint = "a dataflow body only calls kernels (T = kernel(A, B)) and returns results; move other code into a kernel"
    used: set[str] = set()
    produced: dict[str, CallKernel] = {}
    params = {p.name: p for p in k.params}
    for s in k.body:
        if isinstance(s, CallKernel):
            callee = k.callee(s.callee)
            if written_params(callee):
                raise KernelSyntaxError(f"kernel '{s.callee}' writes its parameter '{written_params(callee)[0]}'; a "
                                        "dataflow task streams its inputs and cannot write them", s.loc,
                                        hint="return the updated tensor as a result of the kernel instead")
            for a in s.args:
                if isinstance(a, Ref):
                    used.add(a.name)
                elif not isinstance(a, (Var, Const)):
                    raise KernelSyntaxError(f"argument of '{s.callee}' is an expression; a dataflow passes "
                                            "tensors and scalar parameters unchanged", a.loc or s.loc, hint=hint)
            for name, rt in zip(s.outs, callee.results):
                if not isinstance(rt, TensorType):
                    raise KernelSyntaxError(f"kernel '{s.callee}' returns a scalar ({name}: {rt}); dataflow edges "
                                            "are tensors", s.loc, hint="return a one-element tensor instead")
                produced[name] = s
        elif isinstance(s, Return):
            for v in s.values:
                if not isinstance(v, Ref):
                    raise KernelSyntaxError("a dataflow returns tensors produced by its kernels", v.loc or s.loc,
                                            hint=hint)
                if v.name in params:
                    raise KernelSyntaxError(f"'{v.name}' is an input returned unchanged; no task produces it",
                                            v.loc or s.loc, hint="return kernel results only")
                used.add(v.name)
        else:
            what = type(s).__name__.lower()
            raise KernelSyntaxError(f"a dataflow function cannot contain a '{what}' statement",
                                    getattr(s, "loc", None) or k.loc, hint=hint)
    for name, s in produced.items():
        if name not in used:
            raise KernelSyntaxError(f"result '{name}' of '{s.callee}' is never used", s.loc,
                                    hint=f"return '{name}' or remove the call: every stream needs a consumer")


class DataflowGraph:
    """Tasks and tensor edges of a dataflow function's IR, in program (topological) order."""

    def __init__(self, ir: Kernel):
        self.ir = ir
        self.tasks: dict[str, TaskNode] = {}
        self.edges: dict[str, EdgeNode] = {}
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        for p in ir.params:
            if isinstance(p.type, TensorType):
                self.edges[p.name] = EdgeNode(p.name, p.type, None, loc=p.loc)
                self.inputs.append(p.name)
        calls = [s for s in ir.body if isinstance(s, CallKernel)]
        count: dict[str, int] = {}
        for s in calls:
            count[s.callee] = count.get(s.callee, 0) + 1
        seen: dict[str, int] = {}
        for s in calls:
            seen[s.callee] = seen.get(s.callee, 0) + 1
            name = s.callee if count[s.callee] == 1 else f"{s.callee}_{seen[s.callee]}"
            inputs = tuple(a.name if isinstance(a, Ref) else None for a in s.args)
            self.tasks[name] = TaskNode(name, s.callee, inputs, tuple(s.outs), s.loc)
            for i, e in enumerate(inputs):
                if e is not None:
                    self.edges[e].consumers.append((name, i))
            callee = ir.callee(s.callee)
            for out, t in zip(s.outs, callee.results):
                self.edges[out] = EdgeNode(out, t, name, loc=s.loc)
        for s in ir.body:
            if isinstance(s, Return):
                for v in s.values:
                    self.edges[v.name].is_output = True
                    if v.name not in self.outputs:
                        self.outputs.append(v.name)
        for e in [e for e in self.inputs if not self.edges[e].consumers]:  # an unused parameter is no edge
            del self.edges[e]
            self.inputs.remove(e)

    def kernel(self, task: str) -> Kernel:
        return self.ir.callee(self.tasks[task].kernel)

    def predecessors(self, task: str) -> list[str]:
        out: list[str] = []
        for e in self.tasks[task].inputs:
            p = self.edges[e].producer if e is not None else None
            if p is not None and p not in out:
                out.append(p)
        return out

    def successors(self, task: str) -> list[str]:
        out: list[str] = []
        for e in self.tasks[task].outputs:
            for c, _ in self.edges[e].consumers:
                if c not in out:
                    out.append(c)
        return out

    def __str__(self) -> str:
        lines = [f"dataflow {_signature(self.ir)}", "  tasks:"]
        for t in self.tasks.values():
            args = ", ".join(e or "<scalar>" for e in t.inputs)
            lines.append(f"    {t.name}: {', '.join(t.outputs)} = {t.kernel}({args})")
        lines.append("  edges:")
        for e in self.edges.values():
            src = "input" if e.is_input else e.producer
            dst = [c for c, _ in e.consumers] + (["output"] if e.is_output else [])
            lines.append(f"    {e.name}: {e.type}  {src} -> {', '.join(dst)}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Jupyter: the printed graph, escaped (``sd.schedule(fn)`` or the function itself draws it)."""
        import html

        return f"<pre>{html.escape(str(self))}</pre>"
