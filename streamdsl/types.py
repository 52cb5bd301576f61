"""Scalar and tensor types, and the arithmetic semantics of the IR.

Scalar types
------------
* ``IntType(bits, signed)`` for 1..64 bits: ``i8 i16 i32 i64 u8 u16 u32 u64``
  and any width through ``Int(n)`` / ``UInt(n)`` (``u1`` is the boolean type).
* ``FloatType``: ``f16 bf16 f32 f64`` (IEEE-754; bf16 is the upper half of f32).
* ``FixedType(width, int_bits, signed)``: ``ap_fixed<W, I>`` with truncation
  (AP_TRN) and wrap-around (AP_WRAP), i.e. Vitis HLS defaults.

Semantics (the simulator implements exactly this; the HLS backend matches it)
-----------------------------------------------------------------------------
* Integers wrap around at their declared width after every operation
  (two's complement for signed types).  Division ``//`` and ``%`` follow
  Python's floor semantics; division by zero yields 0.
* Floats round to nearest-even at their declared precision after every
  operation; bf16 and f16 are computed in f32 and rounded back.
* Float -> int casts truncate toward zero and saturate at the target range;
  NaN becomes 0.  Int -> float rounds to nearest.
* Fixed point: values are rounded toward -inf to a multiple of 2**-(W-I) and
  wrap around at W bits.
* Promotion of a binary operation's operands:
    - float op float -> the wider (f16 with bf16 -> f32);
    - int op float, fixed op float -> the float type;
    - int op int with the same signedness -> the wider;
      mixed signedness -> signed with max(ws, wu + 1) bits (at most 64);
    - fixed op int / fixed op fixed -> a fixed type holding both;
    - a Python literal takes the type of the other operand ("weak" literal);
      a lone int literal is i32, a lone float literal is f32.
* ``/`` on two integers produces f32. Comparisons and ``not`` produce u1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _located(cls, message: str, hint: str):
    """A type error at the user's line (``f32[0]`` written in a script, an annotation, a notebook cell)."""
    from .errors import caller_loc

    return cls(message, caller_loc(), hint=hint)


class DType:
    """Base class of scalar types."""

    __slots__ = ()

    @property
    def np(self) -> np.dtype:  # storage dtype used by the simulator
        raise NotImplementedError

    def __getitem__(self, shape) -> "TensorType":
        if not isinstance(shape, tuple):
            shape = (shape,)
        dims = []
        for d in shape:
            if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d <= 0:
                from .errors import ShapeError

                raise _located(ShapeError, f"tensor dimension must be a positive integer, got {d!r}",
                               "dimensions are Python ints known when the kernel is defined") from None
            dims.append(int(d))
        return TensorType(self, tuple(dims))

    @property
    def is_float(self) -> bool:
        return isinstance(self, FloatType)

    @property
    def is_int(self) -> bool:
        return isinstance(self, IntType)

    @property
    def is_fixed(self) -> bool:
        return isinstance(self, FixedType)


@dataclass(frozen=True, slots=True)
class IntType(DType):
    bits: int
    signed: bool = True

    def __post_init__(self):
        if not (1 <= self.bits <= 64):
            from .errors import KernelTypeError

            raise _located(KernelTypeError, f"integer width must be between 1 and 64 bits, got {self.bits}",
                           "use sd.Int(n) / sd.UInt(n) with 1 <= n <= 64")

    @property
    def name(self) -> str:
        return f"{'i' if self.signed else 'u'}{self.bits}"

    @property
    def np(self) -> np.dtype:
        for w in (8, 16, 32, 64):
            if self.bits <= w:
                return np.dtype(f"{'int' if self.signed else 'uint'}{w}")
        raise AssertionError(self.bits)

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


@dataclass(frozen=True, slots=True)
class FloatType(DType):
    name: str  # f16 bf16 f32 f64

    @property
    def bits(self) -> int:
        return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[self.name]

    @property
    def np(self) -> np.dtype:
        return np.dtype({"f16": "float16", "bf16": "float32", "f32": "float32", "f64": "float64"}[self.name])

    @property
    def mantissa(self) -> int:
        return {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}[self.name]

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


@dataclass(frozen=True, slots=True)
class FixedType(DType):
    width: int
    int_bits: int
    signed: bool = True

    def __post_init__(self):
        if not (1 <= self.width <= 64) or self.int_bits > self.width:
            from .errors import KernelTypeError

            raise _located(KernelTypeError, f"fixed-point type needs 1 <= width <= 64 and int_bits <= width, got "
                           f"({self.width}, {self.int_bits})", "e.g. sd.Fixed(16, 8) is ap_fixed<16, 8>")

    @property
    def frac_bits(self) -> int:
        return self.width - self.int_bits

    @property
    def name(self) -> str:
        return f"{'fx' if self.signed else 'ufx'}{self.width}_{self.int_bits}"

    @property
    def np(self) -> np.dtype:
        return np.dtype("float64")

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


@dataclass(frozen=True, slots=True)
class TensorType:
    dtype: DType
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        return f"{self.dtype}[{', '.join(map(str, self.shape))}]"

    __repr__ = __str__


def _int(v, what: str) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        from .errors import KernelTypeError

        raise _located(KernelTypeError, f"{what} must be an integer, got {v!r}", "e.g. sd.Int(4), sd.Fixed(16, 8)")
    return int(v)


def Int(bits: int) -> IntType:
    """A signed integer of ``bits`` bits (``ap_int<bits>``)."""
    return IntType(_int(bits, "an integer type's width"), True)


def UInt(bits: int) -> IntType:
    """An unsigned integer of ``bits`` bits (``ap_uint<bits>``)."""
    return IntType(_int(bits, "an integer type's width"), False)


def Fixed(width: int, int_bits: int) -> FixedType:
    """A signed fixed-point number (``ap_fixed<width, int_bits>``)."""
    return FixedType(_int(width, "a fixed-point width"), _int(int_bits, "a fixed-point type's integer bits"), True)


def UFixed(width: int, int_bits: int) -> FixedType:
    """An unsigned fixed-point number (``ap_ufixed<width, int_bits>``)."""
    return FixedType(_int(width, "a fixed-point width"), _int(int_bits, "a fixed-point type's integer bits"), False)


f16, bf16, f32, f64 = FloatType("f16"), FloatType("bf16"), FloatType("f32"), FloatType("f64")
i8, i16, i32, i64 = Int(8), Int(16), Int(32), Int(64)
u8, u16, u32, u64 = UInt(8), UInt(16), UInt(32), UInt(64)
u1 = boolean = UInt(1)
index = i32  # type of loop variables

FLOATS = {t.name: t for t in (f16, bf16, f32, f64)}


def parse_dtype(name: str) -> DType | None:
    """``"i32"`` -> i32, ``"u7"`` -> UInt(7), ``"fx16_8"`` -> Fixed(16, 8); None if not a type name."""
    if name in FLOATS:
        return FLOATS[name]
    for prefix, signed in (("ufx", False), ("fx", True)):
        if name.startswith(prefix):
            parts = name[len(prefix):].split("_")
            if len(parts) == 2 and all(p.lstrip("-").isdigit() for p in parts):
                return FixedType(int(parts[0]), int(parts[1]), signed)
            return None
    if name[:1] in ("i", "u") and name[1:].isdigit():
        bits = int(name[1:])
        if 1 <= bits <= 64:
            return IntType(bits, name[0] == "i")
    return None


def promote(a: DType, b: DType) -> DType:
    """The common type of a binary operation (see the module docstring)."""
    if a == b:
        return a
    if isinstance(a, FloatType) and isinstance(b, FloatType):
        if a.bits == b.bits:  # f16 with bf16
            return f32
        return a if a.bits > b.bits else b
    if isinstance(a, FloatType):
        return a
    if isinstance(b, FloatType):
        return b
    if isinstance(a, FixedType) or isinstance(b, FixedType):
        fa, fb = (_as_fixed(t) for t in (a, b))
        signed = fa.signed or fb.signed
        ib = max(fa.int_bits + (signed and not fa.signed), fb.int_bits + (signed and not fb.signed))
        frac = max(fa.frac_bits, fb.frac_bits)
        return FixedType(min(64, ib + frac), min(ib, 64), signed)
    assert isinstance(a, IntType) and isinstance(b, IntType)
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.signed else (b, a)
    return IntType(min(64, max(s.bits, u.bits + 1)), True)


def _as_fixed(t: DType) -> FixedType:
    if isinstance(t, FixedType):
        return t
    assert isinstance(t, IntType)
    return FixedType(t.bits, t.bits, t.signed)
