"""The public kernel object: ``@sd.kernel`` turns a Python function into one."""
from __future__ import annotations

import functools

from .compat import renamed
from .compat import renamed
from .backend.sim import simulate
from .dfg import DataflowFunction, DataflowSchedule, dataflow
from .dfg import DataflowFunction, DataflowSchedule, dataflow
from .errors import KernelSyntaxError, StreamDSLError, caller_loc, user_facing
from .frontend import definition_scope, parse_function, require_function
from .ir.nodes import Kernel
from .sched.schedule import Schedule
from .sched.schedule import Schedule

class KernelFunction:
    """A kernel: call it with NumPy arrays to simulate, read ``.ir`` to see its IR."""

    def __init__(self, fn, scope: dict | None = None):
        self.fn = fn
        self._scope = scope
        self._ir: Kernel | None = None
        functools.update_wrapper(self, fn)

    @property
    @user_facing
    def ir(self) -> Kernel:
        if self._ir is None:
            from .ir.verify import verify

            self._parsing = True
            try:
                self._ir = verify(parse_function(self.fn, _resolve_kernel, self._scope))
            finally:
                self._parsing = False
        return self._ir

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


def kernel(fn) -> KernelFunction:
    """Decorate a Python function with annotated parameters and return type as a kernel."""
    require_function(fn, "@sd.kernel")
    return KernelFunction(fn, definition_scope())


def schedule(obj):
    """Start scheduling a kernel (a :class:`Schedule`) or a dataflow function (a ``DataflowSchedule``)."""
    if isinstance(obj, DataflowFunction):
        return DataflowSchedule(obj)
    return Schedule(obj)


@renamed(target="design")
def explore(design, board="u55c", budget: int | None = None, **options):
    """Explore tiling, fusion and resource allocation of ``design`` (a ``DataflowSchedule`` or an
    ``@sd.dataflow`` function) on ``board``; returns an ``Exploration`` (see :mod:`streamdsl.explore`).
    The explorer (and SciPy) are imported on the first call."""
    from .perf.explore import explore as run

    return run(design, board, budget, **options)


def parse_ir(text: str, filename: str = "<ir>") -> Kernel:
    """Parse the IR text printed by ``str(kernel.ir)`` back into a Kernel."""
    from .ir.parser import parse_ir as parse

    return user_facing(parse)(text, filename)
