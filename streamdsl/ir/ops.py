"""The op registry: every operator and math builtin defined once.

An :class:`OpInfo` holds, for one op, its type rule (operand dtypes in, the
dtypes the operands are cast to and the result dtype out), its simulator
implementation over NumPy arrays in compute representation
(:func:`streamdsl.numeric.compute_np`) and its C++ emission template.  The
simulator and the HLS backend both read this table, so they cannot drift.

Adding an op is one entry here plus a test.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..types import DType, FixedType, FloatType, IntType, arith, f32, negate, promote, u1

TypeRule = Callable[[tuple[DType, ...]], "tuple[tuple[DType, ...], DType] | str"]


@dataclass(frozen=True)
class OpInfo:
    """One op: ``rule`` returns (operand dtypes, result dtype) or an error message.

    ``np`` computes on values in compute representation; ``fixed`` (when set) instead computes an op whose
    operand or result is fixed point from the types (``fixed(values, operand dtypes, result dtype)``), and
    ``cpp_fixed`` is its C++ then."""

    name: str
    arity: int
    rule: TypeRule
    np: Callable[..., np.ndarray]
    cpp: str  # format string over the operand expressions {0}, {1}, ...
    symbol: str | None = None  # infix/prefix spelling in the IR text, if any
    doc: str = ""
    fixed: Callable | None = None
    cpp_fixed: str | None = None


def _is_intlike(t: DType) -> bool:
    return isinstance(t, IntType)


# ----------------------------------------------------------------- type rules
def _rule(op):
    """The widening rule of ``streamdsl.types`` for binary arithmetic ``op``."""
    return lambda ts: arith(op, *ts)


def _shift(ts):
    if not (_is_intlike(ts[0]) or isinstance(ts[0], FixedType)) or not _is_intlike(ts[1]):
        return f"shifts need an integer or fixed-point value and an integer amount, got {ts[0]} and {ts[1]}"
    return ts, ts[0]


def _neg(ts):
    return ts, negate(ts[0])


def _logic(ts):
    return (u1, u1), u1


def _compare(ts):
    c = promote(*ts)
    return (c, c), u1


def _same(ts):
    return ts, ts[0]


# ---------------------------------------------------- fixed point from its raw bits
def _raw(x: np.ndarray, t) -> np.ndarray:
    """Values of fixed type (or integer type) ``t`` as int64 multiples of its LSB (exact up to 53 bits)."""
    scale = 2.0 ** (t.frac_bits if isinstance(t, FixedType) else 0)
    return np.rint(np.asarray(x, dtype=np.float64) * scale).astype(np.int64)


def _fixed_div(vals, dtypes, result):
    """``a / b`` as ap_fixed divides: ``(Va << max(F2, 0)) / Vb`` truncated toward zero, on the result's grid;
    ``x / 0`` is 0."""
    (a, b), (ta, tb) = vals, dtypes
    shift = max(tb.frac_bits if isinstance(tb, FixedType) else 0, 0)
    va, vb = _raw(a, ta), _raw(b, tb)
    zero = vb == 0
    den = np.where(zero, 1, vb)
    if np.all(np.abs(va) < 2 ** (62 - shift)):  # exact in int64
        num = np.left_shift(va, shift)
        q = np.sign(num) * np.sign(den) * (np.abs(num) // np.abs(den))
    else:
        q = np.trunc(va.astype(np.float64) * 2.0 ** shift / den)
    return np.where(zero, 0.0, q.astype(np.float64)) / 2.0 ** result.frac_bits


def _fixed_shift(left: bool):
    def impl(vals, dtypes, result):
        (a, n), (t, _) = vals, dtypes
        v, n = _raw(a, t), np.asarray(n).astype(np.int64)
        ok = (n >= 0) & (n < 64)
        if left:  # the raw bits move; what leaves the width is lost (the result wraps, AP_WRAP)
            raw = np.where(ok, np.left_shift(v, np.where(ok, n, 0)), 0)
        else:  # arithmetic: an amount out of range leaves the sign
            raw = np.right_shift(v, np.where(ok, n, 63))
        return raw.astype(np.float64) / 2.0 ** t.frac_bits
    return impl


def _not(ts):
    return (u1,), u1


def _invert(ts):
    if not _is_intlike(ts[0]):
        return f"'~' needs an integer operand, got {ts[0]}"
    return ts, ts[0]


def _floatfn(ts):
    c = ts[0] if isinstance(ts[0], FloatType) else f32
    return (c,) * len(ts), c


def _floatfn2(ts):
    c = promote(*ts)
    if not isinstance(c, FloatType):
        c = f32
    return (c, c), c


def _minmax(ts):
    c = promote(*ts)
    return (c, c), c


# ---------------------------------------------------------- NumPy semantics
def _safe_div(fn):
    def impl(a, b):
        if a.dtype.kind in "iu":
            zero = b == 0
            with np.errstate(all="ignore"):
                out = fn(a, np.where(zero, np.ones_like(b), b))
            return np.where(zero, np.zeros_like(out), out)
        with np.errstate(all="ignore"):
            return fn(a, b)

    return impl


def _shl(a, b):
    # Shifting by the width or more gives 0; negative amounts shift nothing.
    b64 = b.astype(np.int64)
    ok = (b64 >= 0) & (b64 < 64)
    out = np.left_shift(a, np.where(ok, b64, 0).astype(a.dtype))
    return np.where(ok, out, np.zeros_like(out))


def _shr(a, b):
    b64 = b.astype(np.int64)
    ok = (b64 >= 0) & (b64 < 64)
    out = np.right_shift(a, np.where(ok, b64, 0).astype(a.dtype))
    fill = np.where(a < 0, -1, 0).astype(a.dtype) if a.dtype.kind == "i" else np.zeros_like(a)
    return np.where(ok, out, fill)


def _errstate(fn):
    def impl(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return impl


def _erf(x):
    from scipy.special import erf

    return erf(x).astype(x.dtype, copy=False)


def _rsqrt(x):
    with np.errstate(all="ignore"):
        return (np.ones_like(x) / np.sqrt(x)).astype(x.dtype, copy=False)


def _sigmoid(x):
    with np.errstate(all="ignore"):
        one = np.ones_like(x)
        return one / (one + np.exp(-x))


def _abs(x):
    return np.abs(x)


def _max(a, b):
    return np.maximum(a, b)


def _min(a, b):
    return np.minimum(a, b)


def _op(name, arity, rule, impl, cpp, symbol=None, doc="", fixed=None, cpp_fixed=None):
    return OpInfo(name, arity, rule, impl, cpp, symbol, doc, fixed, cpp_fixed)


OPS: dict[str, OpInfo] = {
    o.name: o
    for o in [
        # binary arithmetic
        _op("add", 2, _rule("add"), np.add, "({0} + {1})", "+"),
        _op("sub", 2, _rule("sub"), np.subtract, "({0} - {1})", "-"),
        _op("mul", 2, _rule("mul"), np.multiply, "({0} * {1})", "*"),
        _op("div", 2, _rule("div"), _safe_div(np.true_divide), "({0} / {1})", "/", "int / int gives f32",
            fixed=_fixed_div, cpp_fixed="sd::fixdiv({0}, {1})"),
        _op("floordiv", 2, _rule("floordiv"), _safe_div(np.floor_divide), "sd::floordiv({0}, {1})", "//",
            "floor division; x // 0 == 0"),
        _op("mod", 2, _rule("mod"), _safe_div(np.mod), "sd::floormod({0}, {1})", "%", "floor modulo; x % 0 == 0"),
        _op("pow", 2, _floatfn2, _errstate(np.power), "hls::pow({0}, {1})", "**"),
        _op("bitand", 2, _rule("bitand"), np.bitwise_and, "({0} & {1})", "&"),
        _op("bitor", 2, _rule("bitor"), np.bitwise_or, "({0} | {1})", "|"),
        _op("bitxor", 2, _rule("bitxor"), np.bitwise_xor, "({0} ^ {1})", "^"),
        _op("shl", 2, _shift, _shl, "sd::shl({0}, {1})", "<<", fixed=_fixed_shift(True), cpp_fixed="sd::fshl({0}, {1})"),
        _op("shr", 2, _shift, _shr, "sd::shr({0}, {1})", ">>", fixed=_fixed_shift(False), cpp_fixed="sd::fshr({0}, {1})"),
        _op("and", 2, _logic, np.logical_and, "({0} && {1})", "and"),
        _op("or", 2, _logic, np.logical_or, "({0} || {1})", "or"),
        # comparisons
        _op("eq", 2, _compare, np.equal, "({0} == {1})", "=="),
        _op("ne", 2, _compare, np.not_equal, "({0} != {1})", "!="),
        _op("lt", 2, _compare, np.less, "({0} < {1})", "<"),
        _op("le", 2, _compare, np.less_equal, "({0} <= {1})", "<="),
        _op("gt", 2, _compare, np.greater, "({0} > {1})", ">"),
        _op("ge", 2, _compare, np.greater_equal, "({0} >= {1})", ">="),
        # unary
        _op("neg", 1, _neg, np.negative, "(-{0})", "-"),
        _op("not", 1, _not, np.logical_not, "(!{0})", "not"),
        _op("invert", 1, _invert, np.invert, "(~{0})", "~"),
        # math builtins (called as fn(args) in Python and in the IR text)
        _op("exp", 1, _floatfn, _errstate(np.exp), "hls::exp({0})"),
        _op("log", 1, _floatfn, _errstate(np.log), "hls::log({0})"),
        _op("sqrt", 1, _floatfn, _errstate(np.sqrt), "hls::sqrt({0})"),
        _op("rsqrt", 1, _floatfn, _rsqrt, "hls::rsqrt({0})"),
        _op("tanh", 1, _floatfn, np.tanh, "hls::tanh({0})"),
        _op("erf", 1, _floatfn, _erf, "hls::erf({0})"),
        _op("sin", 1, _floatfn, np.sin, "hls::sin({0})"),
        _op("cos", 1, _floatfn, np.cos, "hls::cos({0})"),
        _op("sigmoid", 1, _floatfn, _sigmoid, "sd::sigmoid({0})"),
        _op("abs", 1, _same, _abs, "sd::abs({0})"),
        _op("max", 2, _minmax, _max, "sd::max({0}, {1})"),
        _op("min", 2, _minmax, _min, "sd::min({0}, {1})"),
    ]
}

BINARY = {name for name, o in OPS.items() if o.symbol and o.arity == 2}
UNARY = {name for name, o in OPS.items() if o.symbol and o.arity == 1}
CALLS = {name for name, o in OPS.items() if o.symbol is None}
SYMBOL_TO_BINARY = {OPS[n].symbol: n for n in BINARY}


def type_rule(op: str, dtypes: tuple[DType, ...]):
    """(operand dtypes, result dtype) of ``op`` applied to ``dtypes``, or an error string."""
    info = OPS[op]
    if len(dtypes) != info.arity:
        return f"{op} takes {info.arity} argument{'s' * (info.arity != 1)}, got {len(dtypes)}"
    if any(isinstance(t, FixedType) for t in dtypes) and op in ("pow", "invert"):
        return f"'{info.symbol or op}' is not defined on fixed-point operands"
    return info.rule(tuple(dtypes))


def uses_fixed(op: str, dtypes, result) -> bool:
    """Whether ``op`` on these types computes from fixed-point bits (its ``fixed`` implementation)."""
    return OPS[op].fixed is not None and (isinstance(result, FixedType) or isinstance(dtypes[0], FixedType))
