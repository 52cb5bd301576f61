"""The public kernel object: ``@sd.kernel`` turns a Python function into one."""
from __future__ import annotations

import functools
import inspect
import os

from .backend.sim import simulate
from .errors import Loc, StreamDSLError, user_facing
from .frontend import parse_function
from .ir.nodes import Kernel

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller_loc() -> Loc | None:
    """The first frame outside streamdsl: where the user called us."""
    frame = inspect.currentframe()
    while frame is not None:
        file = frame.f_code.co_filename
        if not os.path.abspath(file).startswith(_PKG_DIR) and not file.startswith("<frozen"):
            return _frame_loc(frame)
        frame = frame.f_back
    return None


def _frame_loc(frame) -> Loc:
    """The span of the expression ``frame`` is executing (the call), where Python knows it."""
    line, col, end_col = frame.f_lineno, None, None
    positions = getattr(inspect.getframeinfo(frame, context=0), "positions", None)  # Python >= 3.11
    if positions is not None and positions.lineno == line and positions.col_offset is not None:
        col = positions.col_offset
        end_col = positions.end_col_offset if positions.end_lineno == line else None
    if col is None:  # older Pythons: start at the statement's indentation
        import linecache

        text = linecache.getline(frame.f_code.co_filename, line)
        col = len(text) - len(text.lstrip())
    return Loc(frame.f_code.co_filename, line, col, end_col)


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

            self._ir = verify(parse_function(self.fn, _resolve_kernel, self._scope))
        return self._ir

    @user_facing
    def __call__(self, *args):
        return simulate(self.ir, *args, call_loc=_caller_loc())

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


def _resolve_kernel(obj, loc) -> Kernel | None:
    if isinstance(obj, KernelFunction):
        return obj.ir
    return None


def kernel(fn) -> KernelFunction:
    """Decorate a Python function with annotated parameters and return type as a kernel."""
    return KernelFunction(fn, _definition_scope())


def _definition_scope() -> dict | None:
    """A snapshot of the enclosing function's locals where ``@sd.kernel`` runs.

    Sizes a factory passes in (``def make(M, N): @sd.kernel ...``) may appear
    only in annotations, which Python does not capture in the closure.  At
    module level the live globals are used instead, so later edits show.
    """
    frame = inspect.currentframe()
    frame = frame.f_back.f_back if frame and frame.f_back else None
    if frame is None or frame.f_locals is frame.f_globals:
        return None
    return dict(frame.f_locals)
