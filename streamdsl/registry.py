"""Named implementations that a lower part reaches without importing the part that defines them.

``Schedule.build("hls")`` sits in the schedule layer and the HLS backend above it; the dataflow layer's
``_repr_html_`` needs the HTML presenter above it.  As TVM looks up ``target.build.<kind>`` in a global
registry, a lower part here calls ``lookup(kind, name)``: the face (``streamdsl/__init__``) registers each
implementation as ``"module:attribute"``, imported on first use, so ``import streamdsl`` loads no backend.

Kinds used by the package:

* ``build.kernel``    ``target -> fn(kernel_ir, *, output, board, overwrite)``  (``Schedule.build``)
* ``build.dataflow``  ``target -> fn(dataflow_schedule, *, output, board, overwrite)``  (``DataflowSchedule.build``)
* ``present``         ``"html" -> fn(obj) -> str``  (the ``_repr_html_`` of kernels, schedules, designs, models)
"""
from __future__ import annotations

import importlib
from typing import Callable

from .errors import StreamDSLError

_TABLE: dict[str, dict[str, Callable | str]] = {}


class RegistryError(StreamDSLError):
    kind = "error"


def register(kind: str, name: str, impl: Callable | str) -> None:
    """Make ``impl`` (a callable, or ``"module:attribute"`` imported on first lookup) the ``name`` of ``kind``."""
    _TABLE.setdefault(kind, {})[name] = impl


def names(kind: str) -> list[str]:
    return sorted(_TABLE.get(kind, {}))


def lookup(kind: str, name: str, what: str = "target") -> Callable:
    """The implementation registered as ``name`` of ``kind``; a RegistryError names the known ones."""
    try:
        impl = _TABLE[kind][name]
    except (KeyError, TypeError):
        known = ", ".join(repr(n) for n in names(kind)) or "none"
        raise RegistryError(f"unknown {what} {name!r}", hint=f"known {what}s: {known}") from None
    if isinstance(impl, str):
        module, _, attr = impl.partition(":")
        impl = getattr(importlib.import_module(module), attr)
        _TABLE[kind][name] = impl
    return impl


__all__ = ["RegistryError", "lookup", "names", "register"]
