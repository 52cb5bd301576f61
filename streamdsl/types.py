"""Scalar and tensor types, and the arithmetic semantics of the IR.

Scalar types
------------
* ``IntType(bits, signed)`` for 1..64 bits: ``i8 i16 i32 i64 u8 u16 u32 u64``
  and any width through ``Int(n)`` / ``UInt(n)`` (``u1`` is the boolean type).
* ``FloatType``: ``f16 bf16 f32 f64`` (IEEE-754; bf16 is the upper half of f32).
* ``FixedType(width, int_bits, signed, quant, overflow)``: ``ap_fixed<W, I, Q, O>``;
  by default truncation (AP_TRN) and wrap-around (AP_WRAP), the Vitis HLS defaults.

Arithmetic (the simulator implements exactly this; the HLS backend matches it)
------------------------------------------------------------------------------
The results of integer and fixed-point arithmetic widen as ap_int/ap_fixed
results do in the vendor's headers (UG1399, "Arbitrary Precision Data Types"),
so a product or a sum never wraps; assigning it to a declared type converts
it (wrap, or round and saturate by a fixed type's modes).  ``i32``, ``u32``,
``i64`` and ``u64`` are C's ``int``/``long long``: arithmetic between two of
them keeps C's rule (the wider of the two, wrapping), which keeps index
arithmetic in ``i32``.  The old wrap-at-every-operation behaviour is an
explicit cast: ``sd.cast(a * b, sd.Int(3))``.

* Integer results (``W1, S1`` and ``W2, S2`` the operands' widths and
  signedness; a C word meeting an ap type counts as ap_int<32>/<64>, as the
  vendor's headers treat a C ``int``):
    - ``+``: ``max(W1 + (S2 and not S1), W2 + (S1 and not S2)) + 1`` bits,
      signed if either is; ``-``: the same width, always signed;
    - ``*``: ``W1 + W2`` bits, signed if either is;
    - ``//`` (floor): ``W1 + S2`` bits; ``%`` (floor, the divisor's sign):
      ``W2 + (S1 and not S2)`` bits, signed if either is;
    - ``& | ^``: ``max(W1 + (S2 and not S1), W2 + (S1 and not S2))`` bits;
    - unary ``-``: one bit more, signed; ``~``, ``<<``, ``>>``: the operand's
      (left operand's) type, bits shifted out are lost.
* Fixed-point results (``I`` integer bits, ``F = W - I`` fraction bits; an
  integer operand is ``ap_fixed<W, W>``): ``+``/``-``: ``I = max(I1 + (S2 and
  not S1), I2 + (S1 and not S2)) + 1``, ``F = max(F1, F2)``; ``*``: ``W1 + W2``
  bits, ``I1 + I2`` integer bits; ``/``: ``W = S2 + W1 + max(F2, 0)``,
  ``I = S2 + I1 + F2``, the quotient truncated toward zero at that grid;
  ``<<``/``>>`` by an integer keep the type (the raw bits move).  Results are
  exact (they use the default modes, AP_TRN and AP_WRAP).
* Results wider than 64 bits are kept at 64 (an integer wraps at 64 bits, a
  fixed-point result keeps its integer bits and drops fraction bits), the
  widest type the simulator holds; fixed-point values are simulated in
  float64, exact up to 53 significant bits.
* Assignment and casts: integers wrap at the declared width (two's
  complement); fixed point quantises by its mode (AP_TRN floors, AP_RND
  rounds half up, ...) and then wraps or saturates by its overflow mode.
  Floats round to nearest-even at their precision after every operation
  (bf16 and f16 are computed in f32 and rounded back).  Float -> int casts
  truncate toward zero and saturate at the target range; NaN becomes 0.
  Int -> float rounds to nearest.
* Division ``//`` and ``%`` follow Python's floor semantics; division by zero
  yields 0.  ``/`` on two integers produces f32.  Comparisons and ``not``
  produce u1; comparisons, ``min``/``max`` and the branches of a select use
  the common type that holds both operands (:func:`promote`).
* Floats: float op float -> the wider (f16 with bf16 -> f32); int or fixed op
  float -> the float type.
* Literals: a Python number next to an operand is "weak": next to a C word or
  a float it takes that type; an integer literal next to another integer or
  a fixed-point operand takes the narrowest integer type that holds it
  (``x + 1`` on a ``UInt(8)`` is ``UInt(9)``); a float literal next to a
  fixed-point operand takes that type.  A lone int literal is i32, a lone
  float literal is f32.
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


QUANT_MODES = ("trn", "trn_zero", "rnd", "rnd_zero", "rnd_min_inf", "rnd_inf", "rnd_conv")
OVERFLOW_MODES = ("wrap", "sat", "sat_zero", "sat_sym")


@dataclass(frozen=True, slots=True)
class FixedType(DType):
    width: int
    int_bits: int
    signed: bool = True
    quant: str = "trn"  # AP_TRN, AP_RND, ... (lower case, without AP_)
    overflow: str = "wrap"  # AP_WRAP, AP_SAT, AP_SAT_ZERO, AP_SAT_SYM

    def __post_init__(self):
        if not (1 <= self.width <= 64) or self.int_bits > self.width:
            from .errors import KernelTypeError

            raise _located(KernelTypeError, f"fixed-point type needs 1 <= width <= 64 and int_bits <= width, got "
                           f"({self.width}, {self.int_bits})", "e.g. sd.Fixed(16, 8) is ap_fixed<16, 8>")
        if self.quant not in QUANT_MODES or self.overflow not in OVERFLOW_MODES:
            from .errors import KernelTypeError

            raise _located(KernelTypeError, "unknown fixed-point mode "
                           f"{self.quant if self.quant not in QUANT_MODES else self.overflow!r}",
                           f"quantisation: {', '.join(QUANT_MODES)}; overflow: {', '.join(OVERFLOW_MODES)} "
                           "(or the vendor's names, AP_RND, AP_SAT, ...)")

    @property
    def frac_bits(self) -> int:
        return self.width - self.int_bits

    @property
    def name(self) -> str:
        modes = "".join(f"_{m}" for m, d in ((self.quant, "trn"), (self.overflow, "wrap")) if m != d)
        return f"{'fx' if self.signed else 'ufx'}{self.width}_{self.int_bits}{modes}"

    @property
    def np(self) -> np.dtype:
        return np.dtype("float64")

    @property
    def min(self) -> float:
        return -(2.0 ** (self.int_bits - 1)) if self.signed else 0.0

    @property
    def max(self) -> float:
        top = self.int_bits - 1 if self.signed else self.int_bits
        return 2.0 ** top - 2.0 ** -self.frac_bits

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


def _mode(m: str) -> str:
    return str(m).lower().removeprefix("ap_")


def Fixed(width: int, int_bits: int, quant: str = "trn", overflow: str = "wrap") -> FixedType:
    """A signed fixed-point number, ``ap_fixed<width, int_bits, Q, O>``: ``quant`` (``"rnd"`` or ``"AP_RND"``,
    ...) rounds a value assigned to it, ``overflow`` (``"sat"``, ...) saturates one out of range."""
    return FixedType(_int(width, "a fixed-point width"), _int(int_bits, "a fixed-point type's integer bits"), True,
                     _mode(quant), _mode(overflow))


def UFixed(width: int, int_bits: int, quant: str = "trn", overflow: str = "wrap") -> FixedType:
    """An unsigned fixed-point number (``ap_ufixed<width, int_bits, Q, O>``)."""
    return FixedType(_int(width, "a fixed-point width"), _int(int_bits, "a fixed-point type's integer bits"), False,
                     _mode(quant), _mode(overflow))


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
            parts = name[len(prefix):].split("_", 2)
            if len(parts) < 2 or not all(p.lstrip("-").isdigit() for p in parts[:2]):
                return None
            rest = parts[2] if len(parts) == 3 else ""
            over = next((o for o in OVERFLOW_MODES if rest == o or rest.endswith("_" + o)), "wrap")
            quant = rest[:-len(over)].rstrip("_") if rest.endswith(over) and over != "wrap" or rest == over else rest
            quant = quant or "trn"
            if quant not in QUANT_MODES:
                return None
            return FixedType(int(parts[0]), int(parts[1]), signed, quant, over)
    if name[:1] in ("i", "u") and name[1:].isdigit():
        bits = int(name[1:])
        if 1 <= bits <= 64:
            return IntType(bits, name[0] == "i")
    return None


def from_numpy(dt) -> DType | None:
    """The dtype holding a NumPy array of ``dt`` exactly (``float32`` -> f32, ``int8`` -> i8, ``bool`` -> u1)."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return u1
    if dt.kind in "iu" and dt.itemsize <= 8:
        return IntType(dt.itemsize * 8, dt.kind == "i")
    return {np.dtype(np.float16): f16, np.dtype(np.float32): f32, np.dtype(np.float64): f64}.get(dt)


def promote(a: DType, b: DType) -> DType:
    """The common type that holds every value of both (comparisons, min/max, select branches)."""
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
        return _fixed(ib + frac, ib, signed)
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


MAX_BITS = 64  # the widest integer or fixed-point type (the simulator's word)


def is_word(t: DType) -> bool:
    """``i32``, ``u32``, ``i64``, ``u64``: C's int and long long, whose arithmetic keeps C's rule."""
    return isinstance(t, IntType) and t.bits in (32, 64)


def _int_type(bits: int, signed: bool) -> IntType:
    return IntType(min(max(bits, 1), MAX_BITS), signed)


def _fixed(width: int, int_bits: int, signed: bool) -> FixedType:
    """A fixed type of this shape, kept within 64 bits by dropping fraction bits (then integer bits)."""
    if width > MAX_BITS:
        int_bits = min(int_bits, MAX_BITS)
        width = MAX_BITS
    return FixedType(max(width, 1), min(int_bits, max(width, 1)), signed)


def _grow(w1: int, s1: bool, w2: int, s2: bool) -> int:
    """Bits to hold either operand in the signedness of both: ``max(W1 + (S2 and not S1), W2 + (S1 and not S2))``."""
    return max(w1 + (s2 and not s1), w2 + (s1 and not s2))


ARITH = ("add", "sub", "mul", "floordiv", "mod", "div", "bitand", "bitor", "bitxor")


def arith(op: str, a: DType, b: DType) -> tuple[tuple[DType, DType], DType] | str:
    """The operand types and the result type of binary ``op`` (see the module docstring), or an error."""
    if isinstance(a, FloatType) or isinstance(b, FloatType):
        c = promote(a, b)
        if op in ("floordiv", "mod"):
            return "floor division and modulo of floats are not supported in hardware kernels"
        if op in ("bitand", "bitor", "bitxor"):
            return f"bitwise operators need integer operands, got {a} and {b}"
        return (c, c), c
    if isinstance(a, FixedType) or isinstance(b, FixedType):
        return _fixed_arith(op, a, b)
    if op == "div":  # Python's true division: a float
        return (f32, f32), f32
    if is_word(a) and is_word(b):  # C's int / long long: the wider, wrapping
        c = promote(a, b)
        return (c, c), c
    w1, s1, w2, s2 = a.bits, a.signed, b.bits, b.signed
    signed = s1 or s2
    if op in ("add", "sub", "bitand", "bitor", "bitxor"):
        c = promote(a, b)  # holds both: the rule gives the same on two of it, unless it is a C word
        r = c if op.startswith("bit") else _int_type(c.bits + 1, signed or op == "sub")
        return ((a, b) if is_word(c) else (c, c)), r
    if op == "mul":
        return (a, b), _int_type(w1 + w2, signed)
    if op == "floordiv":  # |a // b| <= |a| except min // -1
        return (a, b), _int_type(w1 + s2, signed)
    return (a, b), _int_type(w2 + (s1 and not s2), signed)  # mod: the divisor's sign, |r| < |b|


def _fixed_arith(op: str, a: DType, b: DType):
    if op in ("floordiv", "mod", "bitand", "bitor", "bitxor"):
        sym = {"floordiv": "//", "mod": "%", "bitand": "&", "bitor": "|", "bitxor": "^"}[op]
        return f"'{sym}' is not defined on fixed-point operands"
    fa, fb = _as_fixed(a), _as_fixed(b)
    s1, s2 = fa.signed, fb.signed
    signed = s1 or s2
    if op in ("add", "sub"):
        ib = _grow(fa.int_bits, s1, fb.int_bits, s2) + 1
        r = _fixed(ib + max(fa.frac_bits, fb.frac_bits), ib, signed or op == "sub")
    elif op == "mul":
        r = _fixed(fa.width + fb.width, fa.int_bits + fb.int_bits, signed)
    else:  # div: the dividend's grid (ap_fixed's RType::div); the quotient truncated toward zero
        r = _fixed(s2 + fa.width + max(fb.frac_bits, 0), s2 + fa.int_bits + fb.frac_bits, signed)
    return (a, b), r  # exact on the operands as they are: the result type holds it


def negate(t: DType) -> DType:
    """The type of ``-x``: one bit wider and signed for ap types (C words and floats keep theirs)."""
    if isinstance(t, IntType) and not is_word(t):
        return _int_type(t.bits + 1, True)
    if isinstance(t, FixedType):
        return _fixed(t.width + 1, t.int_bits + 1, True)
    return t


def literal_int(value: int, other: DType) -> DType:
    """The type of an integer literal next to an operand of type ``other`` (the module docstring's rule)."""
    if is_word(other) or isinstance(other, FloatType) or (isinstance(other, IntType) and other.bits == 1
                                                          and value in (0, 1)):
        return other
    if value >= 0 and isinstance(other, (IntType, FixedType)) and not other.signed:
        return _int_type(max(1, value.bit_length()), False)
    return _int_type((value if value >= 0 else -value - 1).bit_length() + 1, True)
