"""Size and option checks shared by the block factories.

A factory is called from the user's model code, so a bad size is reported at
that call (file, line, caret under the call), not inside the library.
"""
from __future__ import annotations

from streamdsl import StreamDSLError

from .config import user_loc  # the user's call site: the first frame outside library/ and streamdsl/


class BlockError(StreamDSLError):
    """A transformer block was asked for with sizes or options it cannot have."""

    kind = "block error"


def fail(message: str, hint: str) -> None:
    raise BlockError(message, user_loc(), hint=hint) from None


def sizes(block: str, **named: int) -> None:
    """Every size is a positive Python int."""
    for name, value in named.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            fail(f"{block}: {name} must be a positive integer, got {value!r}",
                 hint=f"pass the {name} of the model as an int, e.g. {name}=64")


def divides(block: str, small: str, a: int, big: str, b: int) -> None:
    if b % a:
        fail(f"{block}: {big}={b} is not a multiple of {small}={a}",
             hint=f"choose {big} and {small} so that {big} % {small} == 0")


def even(block: str, name: str, value: int) -> None:
    if value % 2:
        fail(f"{block}: {name}={value} must be even", hint="rotate_half pairs dimension i with i + D/2")


def positive_float(block: str, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        fail(f"{block}: {name} must be a positive number, got {value!r}", hint=f"e.g. {name}=1e-5")
    return float(value)


def named(kernel, base: str, *dims: int):
    """Name ``kernel`` after its block and sizes (``linear_4x64x128``), before its IR is built.

    Kernels called together (from one kernel or dataflow, or in one HLS project) need
    distinct names, and one block at two sizes is two kernels.
    """
    name = "_".join([base, "x".join(str(d) for d in dims)]) if dims else base
    kernel.fn.__name__ = kernel.__name__ = kernel.__qualname__ = name
    return kernel
