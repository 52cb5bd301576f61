"""The public kernel object: ``@sd.kernel`` turns a Python function into one."""
from __future__ import annotations

import dataclasses
import functools

from .compat import renamed
from .compat import renamed
from .backend.sim import simulate
from .dfg import DataflowFunction, DataflowSchedule, dataflow
from .dfg import DataflowFunction, DataflowSchedule, dataflow
from .errors import KernelSyntaxError, KernelTypeError, StreamDSLError, caller_loc, user_facing
from .frontend import definition_scope, parse_function, require_function
from .ir.nodes import Kernel
from .sched.schedule import Schedule
from .sched.schedule import Schedule

class KernelFunction:
    """A kernel: call it with NumPy arrays to simulate, read ``.ir`` to see its IR.

    The kernel is parsed when it is decorated, so a kernel that cannot compile fails at its definition;
    only a name its scope does not hold yet (a constant or kernel defined further down the module) waits
    for the first use."""

    def __init__(self, fn, scope: dict | None = None):
        self.fn = fn
        self._scope = scope
        self._ir: Kernel | None = None
        functools.update_wrapper(self, fn)
        try:
            self._parse()
        except StreamDSLError as err:
            if not getattr(err, "undefined_name", False):
                raise

    def _parse(self) -> Kernel:
        if self._ir is None:
            from .ir.verify import verify

            self._parsing = True
            try:
                self._ir = verify(parse_function(self.fn, _resolve_kernel, self._scope))
            finally:
                self._parsing = False
        name = getattr(self.fn, "__name__", None)  # a factory may name the kernel after decoration
        if isinstance(name, str) and name.isidentifier() and name != self._ir.name:
            self._ir = dataclasses.replace(self._ir, name=name)
        return self._ir

    @property
    @user_facing
    def ir(self) -> Kernel:
        return self._parse()

    @user_facing
    def __call__(self, *args):
        try:
            return simulate(self.ir, *args)
        except StreamDSLError as err:  # the caller's line is looked up only when needed (it costs a stack walk)
            if err.loc is None:
                err.loc = caller_loc()
            raise

    def __repr__(self) -> str:
        try:
            k = self.ir
        except StreamDSLError:
            return f"<kernel {self.fn.__name__} (does not compile)>"
        sig = ", ".join(f"{p.name}: {p.type}" for p in k.params)
        res = ", ".join(map(str, k.results))
        return f"<kernel {k.name}({sig}) -> ({res})>"

    def __str__(self) -> str:
        return str(self.ir)

    def _repr_html_(self) -> str:
        """Jupyter: the signature and the kernel's IR (or its error), escaped."""
        import html

        try:
            text = str(self.ir)
        except StreamDSLError as err:
            text = err.render()
        return f"<div><b>{html.escape(repr(self))}</b></div><pre>{html.escape(text)}</pre>"


def _resolve_kernel(obj, loc) -> Kernel | None:
    if isinstance(obj, KernelFunction):
        if getattr(obj, "_parsing", False):
            raise KernelSyntaxError(f"kernel '{obj.fn.__name__}' calls itself (directly or through other kernels)",
                                    loc, hint="hardware has no recursion; write the repetition as a loop")
        return obj.ir
    return None


@user_facing
def kernel(fn) -> KernelFunction:
    """Decorate a Python function with annotated parameters and return type as a kernel."""
    require_function(fn, "@sd.kernel")
    return KernelFunction(fn, definition_scope(3))


class KernelTemplate:
    """A generic kernel: ``mm[f32, 32, 64, 64]`` is the kernel with the template's names bound to those values
    (Allo's ``kernel[T, M, N]``; Python 3.11 has no ``def mm[T]``).  Each binding is made once; kernels of one
    template used at several bindings in one design are named apart (``mm_32x64``, ...)."""

    def __init__(self, fn, names: tuple[str, ...], scope: dict | None):
        self.fn, self.names, self._scope = fn, names, scope
        self._made: dict = {}
        functools.update_wrapper(self, fn)

    @user_facing
    def __getitem__(self, values) -> KernelFunction:
        values = values if isinstance(values, tuple) else (values,)
        if len(values) != len(self.names):
            raise KernelTypeError(f"kernel template '{self.fn.__name__}' takes {len(self.names)} value(s) "
                                  f"({', '.join(self.names)}), got {len(values)}", caller_loc(),
                                  hint=f"{self.fn.__name__}[{', '.join(self.names)}]")
        made = self._made.get(values)
        if made is None:
            made = self._made[values] = KernelFunction(self.fn, {**(self._scope or {}), **dict(zip(self.names,
                                                                                                  values))})
        return made

    def __repr__(self) -> str:
        return f"<kernel template {self.fn.__name__}[{', '.join(self.names)}]>"


def template(*names: str):
    """``@sd.template("T", "M", "N")`` over a kernel whose annotations use those names (as strings, or under
    ``from __future__ import annotations``): a :class:`KernelTemplate`, instantiated by subscription."""
    if not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise KernelTypeError(f"sd.template takes the names of the kernel's parameters, got {names!r}",
                              caller_loc(), hint='@sd.template("T", "M", "N")')
    scope = definition_scope(2)

    def wrap(fn) -> KernelTemplate:
        return KernelTemplate(fn, names, scope)

    return wrap


def schedule(obj):
    """Start scheduling a kernel (a :class:`Schedule`) or a dataflow function (a ``DataflowSchedule``)."""
    if isinstance(obj, DataflowFunction):
        return DataflowSchedule(obj)
    return Schedule(obj)


@renamed(target="design")
def explore(design, board="u55c", budget: int | None = None, **options):
    """Explore tiling, fusion and resource allocation of ``design`` (a ``DataflowSchedule`` or an
    ``@sd.dataflow`` function, or a model with ``design(t, kind)``: ``streamdsl.explorer.Explorable``) on
    ``board``; returns an ``Exploration`` (see :mod:`streamdsl.explorer`).  The explorer (and SciPy) are
    imported on the first call."""
    from .explorer import explore as run

    return run(design, board, budget, **options)


def parse_ir(text: str, filename: str = "<ir>") -> Kernel:
    """Parse the IR text printed by ``str(kernel.ir)`` back into a Kernel."""
    from .ir.parser import parse_ir as parse

    return user_facing(parse)(text, filename)
