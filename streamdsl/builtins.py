"""Builtins a kernel may call: ``sd.exp``, ``sd.max``, ``sd.cast``, ``sd.grid``, ...

Inside a kernel the frontend maps each of these to its op in
:data:`streamdsl.ir.ops.OPS`; outside a kernel they work on NumPy values with
the same semantics, so a kernel body can also run as plain Python.
"""
from __future__ import annotations

import itertools

import numpy as np

from .numeric import convert
from .ir.ops import OPS
from .types import DType


def _builtin(op: str):
    info = OPS[op]

    def fn(*args):
        arrays = [np.asarray(a) for a in args]
        return info.np(*arrays)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``{op}`` as a kernel builtin (see streamdsl.ir.ops); works on NumPy arrays outside kernels."
    fn.__sd_op__ = op  # the frontend recognises builtins by this attribute
    return fn


exp, log, sqrt, rsqrt, tanh, erf = (_builtin(n) for n in ("exp", "log", "sqrt", "rsqrt", "tanh", "erf"))
sin, cos, sigmoid, abs, max, min = (_builtin(n) for n in ("sin", "cos", "sigmoid", "abs", "max", "min"))


def cast(x, dtype: DType):
    """Convert ``x`` to ``dtype`` (wrap, round or saturate as the types docstring says)."""
    return convert(np.asarray(x), dtype)


cast.__sd_op__ = "cast"


def grid(*extents: int):
    """``for i, j in sd.grid(M, N)``: a perfect loop nest, outermost first."""
    return itertools.product(*(range(e) for e in extents))


grid.__sd_op__ = "grid"
