"""Python functions -> loop IR (see :mod:`.visitor`)."""
from __future__ import annotations

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
