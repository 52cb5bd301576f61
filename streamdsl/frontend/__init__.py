"""Python functions -> loop IR (see :mod:`.visitor`)."""
from __future__ import annotations

import inspect

from typing import Any, Callable

from ..ir.nodes import Kernel
from .source import get_source
from .visitor import KernelVisitor


def closure_env(fn, scope: dict[str, Any] | None = None) -> dict[str, Any]:
    """Names visible to ``fn``'s body: builtins, module globals, the enclosing
    function's locals when the kernel was defined (``scope``: Python does not
    capture names used only in annotations), then closure cells."""
    import builtins

    env = dict(vars(builtins))
    env.update(fn.__globals__)
    env.update(scope or {})
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:  # a cell not yet bound
                pass
    return env


def definition_scope(depth: int = 2) -> dict | None:
    """A snapshot of the locals of the function ``depth`` frames above the caller.

    Sizes a factory passes in (``def make(M, N): @sd.kernel ...``) may appear
    only in annotations, which Python does not capture in the closure, so a
    decorator (``@sd.kernel``, ``@sd.dataflow``) snapshots the scope it runs
    in.  At module level the live globals are used instead, so later edits show.
    """
    frame = inspect.currentframe()
    for _ in range(depth):
        frame = frame.f_back if frame is not None else None
    if frame is None or frame.f_locals is frame.f_globals:
        return None
    return dict(frame.f_locals)


def require_function(fn, decorator: str) -> None:
    """``@sd.kernel`` and ``@sd.dataflow`` take a function written with ``def``; anything else (a class, a builtin
    such as ``len``, a lambda) is a located error at the decorator."""
    if inspect.isfunction(fn) and fn.__name__ != "<lambda>":
        return
    from ..errors import KernelSyntaxError, caller_loc

    what = ("a class" if inspect.isclass(fn) else "a lambda" if inspect.isfunction(fn)
            else f"the builtin '{fn.__name__}'" if inspect.isbuiltin(fn) else f"a {type(fn).__name__}")
    raise KernelSyntaxError(f"{decorator} takes a Python function written with def, got {what}", caller_loc(),
                            hint=f"write the computation as `{decorator}` on `def name(A: f32[N], ...) -> f32[N]: ...`")


def parse_function(fn, resolve_kernel: Callable[[Any, Any], Kernel | None],
                   scope: dict[str, Any] | None = None) -> Kernel:
    """Translate ``fn`` into a :class:`Kernel`; ``resolve_kernel`` maps callees to their IR.

    The kernel is named after ``fn.__name__``, so a factory can give each size its own
    name (``fn.__name__ = f"linear_{m}x{n}"``): distinct kernels called from one kernel
    or dataflow, and the C++ functions they become, need distinct names.
    """
    src = get_source(fn)
    name = getattr(fn, "__name__", None)
    name = name if isinstance(name, str) and name.isidentifier() else None
    return KernelVisitor(src, closure_env(fn, scope), resolve_kernel, name).kernel()
