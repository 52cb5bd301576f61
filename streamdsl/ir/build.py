"""Typed constructors for expressions: the one place type inference happens.

The frontend and the IR parser both build expressions through these
functions, which apply the op registry's type rules and insert explicit
:class:`Cast` nodes, so every expression in an IR is fully typed and the
printed text shows every conversion.
"""
from __future__ import annotations

import numpy as np

from ..errors import KernelTypeError, Loc
from ..numeric import convert
from ..types import DType, IntType, f32, i32, i64, literal_int, promote, u1
from .nodes import BinOp, Call, Cast, Const, Expr, Select, UnaryOp
from .ops import type_rule


def const(value, dtype: DType, loc: Loc | None = None) -> Const:
    """A constant of ``dtype``; the value is stored exactly as ``dtype`` holds it."""
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if isinstance(dtype, IntType):
        if isinstance(value, float):
            raise KernelTypeError(f"float literal {value!r} used as {dtype}", loc, hint="write sd.cast(x, dtype) to convert")
        value = int(value)
        if not (dtype.min <= value <= dtype.max):
            raise KernelTypeError(
                f"literal {value} does not fit in {dtype} (range {dtype.min}..{dtype.max})",
                loc,
                hint="cast the other operand to a wider type, e.g. sd.cast(x, sd.i64)",
            )
        return Const(value, dtype, loc)
    stored = float(convert(np.array(float(value)), dtype))
    return Const(stored, dtype, loc)


def literal_type(value) -> DType:
    """Type of a Python literal standing alone (no other operand to follow)."""
    if isinstance(value, (bool, np.bool_)):
        return u1
    if isinstance(value, float):
        return f32
    return i32 if -(2**31) <= value < 2**31 else i64


def weak_literal(value, other: DType, loc: Loc | None = None) -> Const:
    """A literal next to an operand of type ``other`` (the literal rule of :mod:`streamdsl.types`)."""
    if isinstance(value, (bool, np.bool_)):
        return const(value, u1 if other == u1 else other, loc)
    if isinstance(value, float) and isinstance(other, IntType):
        # 0.5 * i is an f32 expression, as it would be a float in Python
        return const(value, f32, loc)
    if isinstance(value, int):
        return const(value, literal_int(value, other), loc)
    return const(value, other, loc)


def cast(e: Expr, dtype: DType, loc: Loc | None = None) -> Expr:
    if e.dtype == dtype:
        return e
    if isinstance(e, Const):
        return const(_const_convert(e, dtype), dtype, loc or e.loc)
    return Cast(e, dtype, loc or e.loc)


def _const_convert(c: Const, dtype: DType):
    if isinstance(c.value, float):
        raw = np.array(c.value, dtype=np.float64)
    else:  # u64 constants above the int64 range need a uint64 array
        raw = np.array(c.value, dtype=np.uint64 if c.value > np.iinfo(np.int64).max else np.int64)
    out = convert(raw, dtype)
    return int(out) if isinstance(dtype, IntType) else float(out)


def _check(op: str, dtypes, loc):
    res = type_rule(op, tuple(dtypes))
    if isinstance(res, str):
        raise KernelTypeError(res, loc, hint="convert operands with sd.cast(x, dtype)")
    return res


def binop(op: str, lhs: Expr, rhs: Expr, loc: Loc | None = None) -> Expr:
    if op in ("and", "or"):
        lhs, rhs = truth(lhs, loc), truth(rhs, loc)
    (ta, tb), result = _check(op, (lhs.dtype, rhs.dtype), loc)
    return BinOp(op, cast(lhs, ta, loc), cast(rhs, tb, loc), result, loc)


def unary(op: str, operand: Expr, loc: Loc | None = None) -> Expr:
    if op == "not":
        operand = truth(operand, loc)
    (t,), result = _check(op, (operand.dtype,), loc)
    return UnaryOp(op, cast(operand, t, loc), result, loc)


def call(fn: str, args: tuple[Expr, ...], loc: Loc | None = None) -> Expr:
    ts, result = _check(fn, tuple(a.dtype for a in args), loc)
    return Call(fn, tuple(cast(a, t, loc) for a, t in zip(args, ts)), result, loc)


def truth(e: Expr, loc: Loc | None = None) -> Expr:
    """``e`` as a u1 condition (``e != 0`` unless it already is one)."""
    if e.dtype == u1:
        return e
    zero = const(0, e.dtype, loc)
    return BinOp("ne", e, zero, u1, loc)


def select(cond: Expr, then: Expr, orelse: Expr, loc: Loc | None = None) -> Expr:
    t = promote(then.dtype, orelse.dtype)
    return Select(truth(cond, loc), cast(then, t, loc), cast(orelse, t, loc), t, loc)


