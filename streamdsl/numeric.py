"""NumPy implementation of the value semantics in :mod:`streamdsl.types`.

Values of a dtype live in NumPy arrays of ``dtype.np`` (bf16 in float32 with
the low 16 bits zero, fixed point in float64 holding the exact value).
Operations compute in :func:`compute_np` (int64/uint64 for integers, float32
for f16/bf16/f32, float64 for f64 and fixed point) and :func:`convert` brings
the raw result back to the declared type: wrapping integers, rounding floats
to nearest-even, quantising fixed point.
"""
from __future__ import annotations

import numpy as np

from .types import DType, FixedType, FloatType, IntType


def compute_np(dtype: DType) -> np.dtype:
    if isinstance(dtype, IntType):
        return np.dtype(np.uint64 if (not dtype.signed and dtype.bits == 64) else np.int64)
    if isinstance(dtype, FloatType):
        return np.dtype(np.float64 if dtype.name == "f64" else np.float32)
    return np.dtype(np.float64)


def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 (nearest-even), keeping NaN a NaN."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def wrap_int(x: np.ndarray, dtype: IntType) -> np.ndarray:
    """Two's-complement wrap of integer values to ``dtype`` (x holds int64/uint64)."""
    bits = dtype.bits
    if bits in (8, 16, 32, 64):
        return x.astype(dtype.np)
    u = x.astype(np.uint64) & np.uint64((1 << bits) - 1)
    if dtype.signed:  # sign-extend in uint64 arithmetic (2**bits does not fit an int64 at 63 bits)
        half = np.uint64(1 << (bits - 1))
        with np.errstate(over="ignore"):  # the subtraction wraps by design
            u = ((u ^ half) - half).astype(np.int64)
    return u.astype(dtype.np)


def _float_to_int(x: np.ndarray, dtype: IntType) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    t = np.trunc(np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=-np.inf))
    lo, hi = float(dtype.min), float(dtype.max)
    big = t >= hi
    small = t <= lo
    mid = np.where(big | small, 0.0, t)
    inter = mid.astype(np.uint64 if not dtype.signed and dtype.bits == 64 else np.int64)
    out = np.where(big, np.array(dtype.max).astype(inter.dtype), inter)
    out = np.where(small, np.array(dtype.min).astype(inter.dtype), out)
    return out.astype(dtype.np)


_ROUND = {  # quantisation of v (a value in LSBs) to an integer, by mode (UG1399 "Quantization Modes")
    "trn": np.floor,  # toward -inf
    "trn_zero": np.trunc,  # toward zero
    "rnd": lambda v: np.floor(v + 0.5),  # half toward +inf
    "rnd_zero": lambda v: np.where(v >= 0, np.ceil(v - 0.5), np.floor(v + 0.5)),  # half toward zero
    "rnd_min_inf": lambda v: np.ceil(v - 0.5),  # half toward -inf
    "rnd_inf": lambda v: np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5)),  # half away from zero
    "rnd_conv": np.rint,  # half to even
}


def quantize_fixed(x: np.ndarray, dtype: FixedType) -> np.ndarray:
    """Quantise to the fixed grid by ``dtype.quant``, then wrap or saturate at ``dtype.width`` bits by
    ``dtype.overflow``."""
    scale = float(2.0 ** dtype.frac_bits)
    raw = np.asarray(x, dtype=np.float64)
    v = _ROUND[dtype.quant](np.nan_to_num(raw, nan=0.0, posinf=0.0, neginf=0.0) * scale)
    m = float(2.0 ** dtype.width)
    lo, hi = (-m / 2, m / 2 - 1) if dtype.signed else (0.0, m - 1)
    if dtype.overflow == "wrap":
        v = np.mod(v - lo, m) + lo
    else:
        big, small = v > hi, v < lo
        if dtype.overflow == "sat_zero":
            v = np.where(big | small, 0.0, v)
        else:
            floor = -hi if dtype.overflow == "sat_sym" and dtype.signed else lo
            v = np.clip(v, floor, hi)
        inf = np.isinf(raw)
        if np.any(inf) and dtype.overflow != "sat_zero":  # an infinity saturates too
            v = np.where(inf & (raw > 0), hi, np.where(inf, floor, v))
    return (v / scale).astype(np.float64)


def convert(x, dtype: DType) -> np.ndarray:
    """Bring raw values (any NumPy numeric or bool array) to ``dtype``'s storage."""
    x = np.asarray(x)
    kind = x.dtype.kind
    if isinstance(dtype, IntType):
        if kind == "b":
            return x.astype(dtype.np)
        if kind == "f":
            return _float_to_int(x, dtype)
        if kind == "u" and x.dtype != np.uint64:
            x = x.astype(np.int64)
        elif kind == "i" and x.dtype != np.int64:
            x = x.astype(np.int64)
        return wrap_int(x, dtype)
    if isinstance(dtype, FloatType):
        if dtype.name == "f64":
            return x.astype(np.float64)
        if dtype.name == "f16":
            with np.errstate(over="ignore"):
                return x.astype(np.float16)
        if dtype.name == "bf16":
            return round_bf16(x.astype(np.float64).astype(np.float32) if kind != "f" or x.dtype != np.float32 else x)
        return x.astype(np.float32)
    assert isinstance(dtype, FixedType)
    return quantize_fixed(x, dtype)


def to_compute(x: np.ndarray, dtype: DType) -> np.ndarray:
    """View stored values of ``dtype`` in its compute representation."""
    return np.asarray(x).astype(compute_np(dtype), copy=False)


def accepts(arr: np.ndarray, dtype: DType) -> bool:
    """Whether a user's NumPy array may be passed for a parameter of ``dtype``: the dtype's own storage, or
    for an integer type any integer (or bool) array, its values then checked by :func:`out_of_range`."""
    if isinstance(dtype, FloatType) and dtype.name == "bf16":
        return arr.dtype == np.float32
    if isinstance(dtype, FixedType):
        return arr.dtype.kind in "fiub"
    if isinstance(dtype, IntType):
        return arr.dtype.kind in "iub"
    return arr.dtype == dtype.np


def out_of_range(arr: np.ndarray, dtype: DType):
    """The first value of an integer array that ``dtype`` cannot hold (None when all fit)."""
    if not isinstance(dtype, IntType) or arr.size == 0 or arr.dtype.kind not in "iu":
        return None
    lo, hi = arr.min(), arr.max()
    if int(lo) < dtype.min:
        return int(lo)
    if int(hi) > dtype.max:
        return int(hi)
    return None
