"""Quantised linears W8A8 and W4A8, and the offline weight quantiser.

The scheme (symmetric, no zero points):

* Weights, offline (:func:`quantize_weights`, NumPy): per output channel o,
  ``sw[o] = max|W[o, :]| / qmax`` (1.0 for an all-zero row) and
  ``Wq[o, k] = clip(rint(W[o, k] / sw[o]), -qmax, qmax)``, all in fp32, with
  ``qmax = 127`` for int8 and ``7`` for int4 (``sd.Int(4)``, stored in int8 arrays).
* Activations, in the kernel, per token (row) r: ``sx[r] = max|x[r, :]| / 127``
  (1.0 for an all-zero row) and ``xq[r, k] = clip(rint(x[r, k] / sx[r]), -127, 127)``
  as int8.  ``rint`` rounds half to even.  The kernel has no rounding op, so it
  rounds with the fp32 identity ``rint(v) == (v + 1.5*2**23) - 1.5*2**23``,
  exact for ``|v| < 2**22`` (here ``|v| <= 127``).
* ``acc[r, o] = sum_k int32(xq[r, k]) * int32(Wq[o, k])`` in int32 (the factory
  refuses sizes that could overflow it).
* ``y[r, o] = (f32(acc[r, o]) * sx[r]) * sw[o]  (+ b[o])``, evaluated left to right in fp32.

**Two MACs a DSP48E2** (W4A8, an even ``n_out`` and ``n_in <= PACK_MAX_IN``): the
accumulation packs outputs ``2h`` and ``2h + 1`` into one 48-bit sum, as AMD's
WP486 packs two int8 multiplies sharing an operand into one DSP48E2:
``P[h] += (Wq[2h+1, k] * 2**S + Wq[2h, k]) * xq[k]``, the packed weight formed in
the DSP's 27-bit pre-adder (``|operand| < 2**26`` for S <= 22), the product in its
27 x 18 multiplier and the sum in its 48-bit post-adder.  ``P[h] = L + H * 2**S``
exactly, with ``L`` and ``H`` the two outputs' int32 sums; since
``|L| <= n_in * 127 * 8 < 2**(S - 1)``, ``L`` is ``P[h]`` wrapped to S bits
(``sd.Int(S)``, sign extension of the low field) and ``H = (P[h] - L) / 2**S``.
The unpacking is exact integer arithmetic, so the outputs are bit-identical to the
one-MAC-a-lane kernel's.

What is exact: every step above is an IEEE fp32 operation (division, max, add,
multiply, int32 -> f32 rounding) or integer arithmetic, so the kernel's
``xq``, ``sx``, ``acc`` and ``y`` are bit-identical to a NumPy implementation
of the same formulas in the same order (``ref.quantize_rows``,
``ref.linear_quant``); the tests check them with ``np.array_equal``.  The
C-simulation computes the same bits (g++ with ``-ffp-contract=off``).
"""
from __future__ import annotations

import numpy as np

import streamdsl as sd
from streamdsl import f32, i8, i32

from . import ref
from ._checks import fail, named, sizes
from .ref import qmax

ROUND = 12582912.0  # 1.5 * 2**23: adding and subtracting it rounds an fp32 |v| < 2**22 to an integer, ties to even
I4 = sd.Int(4)
I48 = sd.Int(48)  # a DSP48E2's accumulator (its P register)
PACK_MAX_IN = 2064  # the most inputs whose int4 x int8 sum (|.| <= n_in * 127 * 8) fits the packed low field (S <= 22)


def quantize_weights(W: np.ndarray, bits: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Offline per-output-channel symmetric quantisation of W f32[out, in] -> (Wq int8[out, in], sw f32[out]).

    ``bits`` is 8 or 4; int4 values (-7..7) are stored in an int8 array, as ``sd.Int(4)`` parameters expect.
    """
    if bits not in (4, 8):
        fail(f"quantize_weights: bits must be 4 or 8, got {bits!r}", hint="W8A8 uses bits=8, W4A8 bits=4")
    W = np.asarray(W, dtype=np.float32)
    if W.ndim != 2:
        fail(f"quantize_weights: W must be 2-D [out, in], got shape {W.shape}", hint="pass an nn.Linear weight")
    return ref.quantize_rows(W, bits)  # a row of W is an output channel


def make_quantize_rows(t: int, n: int):
    """Dynamic per-row int8 quantisation: X f32[t, n] -> (Xq i8[t, n], sx f32[t]) (scheme in the module docstring)."""
    sizes("quantize_rows", t=t, n=n)

    @sd.kernel
    def quantize_rows(X: f32[t, n]) -> (i8[t, n], f32[t]):
        Xq: i8[t, n]
        sx: f32[t]
        for i in range(t):
            amax: f32 = 0.0
            for k in range(n):
                amax = max(amax, abs(X[i, k]))
            s: f32 = amax / 127.0 if amax > 0.0 else 1.0
            sx[i] = s
            for k in range(n):
                v: f32 = X[i, k] / s
                v = (v + ROUND) - ROUND  # round half to even
                Xq[i, k] = sd.cast(min(max(v, -127.0), 127.0), i8)
        return Xq, sx

    return named(quantize_rows, "quantize_rows", t, n)


def pack_shift(n_in: int) -> int:
    """Bits S of the low field of a packed pair: the smallest that holds ``n_in`` int8 x int4 products signed."""
    return (n_in * 127 * 8).bit_length() + 1


def packs(wbits: int, n_in: int, n_out: int) -> bool:
    """Does a W{wbits}A8 linear of these sizes accumulate two outputs a DSP48E2 (module docstring)?"""
    return wbits == 4 and n_out % 2 == 0 and n_in <= PACK_MAX_IN


def check_accumulator(name: str, n_in: int, wbits: int) -> None:
    """Refuse a reduction of ``n_in`` int8 x int{wbits} products that could overflow an int32 accumulator."""
    if n_in * 127 * qmax(wbits) > 2**31 - 1:
        fail(f"{name}: n_in={n_in} can overflow the int32 accumulator ({n_in} * 127 * {qmax(wbits)} > 2**31 - 1)",
             hint="split the reduction into chunks of at most "
                  f"{(2**31 - 1) // (127 * qmax(wbits))} inputs and add the dequantised partial sums")


def _quant_linear(name: str, t: int, n_in: int, n_out: int, wbits: int, bias: bool, pack: bool = False):
    sizes(name, t=t, n_in=n_in, n_out=n_out)
    check_accumulator(name, n_in, wbits)
    if pack and packs(wbits, n_in, n_out):
        return _packed_linear(name, t, n_in, n_out, bias)
    quantize_rows = make_quantize_rows(t, n_in)
    wt = i8 if wbits == 8 else I4
    if bias:

        @sd.kernel
        def linear_q(X: f32[t, n_in], Wq: wt[n_out, n_in], sw: f32[n_out], b: f32[n_out]) -> f32[t, n_out]:
            Y: f32[t, n_out]
            A: i32[n_out]  # one row's accumulators, reused row by row
            Xq, sx = quantize_rows(X)  # its row loop and the one below fuse: a row quantised, then multiplied
            for i in range(t):  # a row at a time: row i of Y leaves before row i + 1 starts
                for o in range(n_out):
                    A[o] = 0
                for k, o in sd.grid(n_in, n_out):  # outputs innermost: lanes over o inside one pipeline
                    A[o] += sd.cast(Xq[i, k], i32) * sd.cast(Wq[o, k], i32)
                for o in range(n_out):  # dequantise apart: the MAC lanes do not each carry fp32 multipliers
                    Y[i, o] = sd.cast(A[o], f32) * sx[i] * sw[o] + b[o]
            return Y

        return named(linear_q, f"linear_w{wbits}a8", t, n_in, n_out)

    @sd.kernel
    def linear_q_nobias(X: f32[t, n_in], Wq: wt[n_out, n_in], sw: f32[n_out]) -> f32[t, n_out]:
        Y: f32[t, n_out]
        A: i32[n_out]  # one row's accumulators, reused row by row
        Xq, sx = quantize_rows(X)  # its row loop and the one below fuse: a row quantised, then multiplied
        for i in range(t):  # a row at a time: row i of Y leaves before row i + 1 starts
            for o in range(n_out):
                A[o] = 0
            for k, o in sd.grid(n_in, n_out):  # outputs innermost: lanes over o inside one pipeline
                A[o] += sd.cast(Xq[i, k], i32) * sd.cast(Wq[o, k], i32)
            for o in range(n_out):  # dequantise apart: the MAC lanes do not each carry fp32 multipliers
                Y[i, o] = sd.cast(A[o], f32) * sx[i] * sw[o]
        return Y

    return named(linear_q_nobias, f"linear_w{wbits}a8_nobias", t, n_in, n_out)


def _packed_linear(name: str, t: int, n_in: int, n_out: int, bias: bool):
    """The W4A8 linear with two outputs a DSP48E2 accumulator (module docstring): bit-identical to the unpacked one."""
    quantize_rows = make_quantize_rows(t, n_in)
    half = n_out // 2
    S = pack_shift(n_in)
    LOW = sd.Int(S)
    SHIFT = 1 << S
    if bias:

        @sd.kernel
        def linear_q(X: f32[t, n_in], Wq: I4[n_out, n_in], sw: f32[n_out], b: f32[n_out]) -> f32[t, n_out]:
            Y: f32[t, n_out]
            P: I48[half]  # outputs 2h (low S bits) and 2h + 1 (above) of one row, a DSP48E2 accumulator each
            Xq, sx = quantize_rows(X)  # its row loop and the one below fuse: a row quantised, then multiplied
            for i in range(t):  # a row at a time: row i of Y leaves before row i + 1 starts
                for h in range(half):
                    P[h] = 0
                for k, h in sd.grid(n_in, half):  # outputs innermost: lanes over pairs inside one pipeline
                    P[h] += (sd.cast(Wq[2 * h + 1, k], I48) * SHIFT + sd.cast(Wq[2 * h, k], I48)) * \
                        sd.cast(Xq[i, k], I48)
                for h in range(half):  # unpack and dequantise apart: few lanes carry the fp32 multipliers
                    lo: I48 = sd.cast(sd.cast(P[h], LOW), I48)  # the low field, sign-extended
                    Y[i, 2 * h] = sd.cast(lo, f32) * sx[i] * sw[2 * h] + b[2 * h]
                    Y[i, 2 * h + 1] = sd.cast((P[h] - lo) // SHIFT, f32) * sx[i] * sw[2 * h + 1] + b[2 * h + 1]
            return Y

        return named(linear_q, name, t, n_in, n_out)

    @sd.kernel
    def linear_q_nobias(X: f32[t, n_in], Wq: I4[n_out, n_in], sw: f32[n_out]) -> f32[t, n_out]:
        Y: f32[t, n_out]
        P: I48[half]  # outputs 2h (low S bits) and 2h + 1 (above) of one row, a DSP48E2 accumulator each
        Xq, sx = quantize_rows(X)  # its row loop and the one below fuse: a row quantised, then multiplied
        for i in range(t):  # a row at a time: row i of Y leaves before row i + 1 starts
            for h in range(half):
                P[h] = 0
            for k, h in sd.grid(n_in, half):  # outputs innermost: lanes over pairs inside one pipeline
                P[h] += (sd.cast(Wq[2 * h + 1, k], I48) * SHIFT + sd.cast(Wq[2 * h, k], I48)) * sd.cast(Xq[i, k], I48)
            for h in range(half):  # unpack and dequantise apart: few lanes carry the fp32 multipliers
                lo: I48 = sd.cast(sd.cast(P[h], LOW), I48)  # the low field, sign-extended
                Y[i, 2 * h] = sd.cast(lo, f32) * sx[i] * sw[2 * h]
                Y[i, 2 * h + 1] = sd.cast((P[h] - lo) // SHIFT, f32) * sx[i] * sw[2 * h + 1]
        return Y

    return named(linear_q_nobias, name + "_nobias", t, n_in, n_out)


def make_linear_w8a8(t: int, n_in: int, n_out: int, bias: bool = False):
    """W8A8 linear: X f32[t, n_in], Wq i8[n_out, n_in], sw f32[n_out] (+ b f32[n_out]) -> f32[t, n_out].

    Wq and sw come from ``quantize_weights(W, bits=8)``; X is quantised per row inside the kernel.
    """
    return _quant_linear("linear_w8a8", t, n_in, n_out, 8, bias)


def make_linear_w4a8(t: int, n_in: int, n_out: int, bias: bool = False, pack: bool = True):
    """W4A8 linear: like :func:`make_linear_w8a8` with Wq ``sd.Int(4)[n_out, n_in]`` (int8 arrays holding -7..7).

    ``pack``: accumulate two outputs a DSP48E2 where the sizes allow it (:func:`packs`); the same bits either
    way.  Packed, its multiplies belong in DSPs (in LUTs a packed pair costs more than two plain int8 x int4
    lanes), so a design short of DSPs but not of LUTs may be faster unpacked."""
    if not isinstance(pack, bool):
        fail(f"linear_w4a8: pack must be True or False, got {pack!r}", hint="pack=False keeps one MAC a lane")
    return _quant_linear("linear_w4a8", t, n_in, n_out, 4, bias, pack)
