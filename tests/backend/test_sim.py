"""The reference simulator's semantics, checked against NumPy computed independently.

Covers the value semantics of :mod:`streamdsl.types` (integer wrap-around,
floor division, casts, bf16 rounding, u1 comparisons), control flow inside
vectorised loops (masks, triangular and outer-dependent bounds, negative
steps), reductions, loop-carried loops, error reporting at the caller's line,
and the loop classification that decides what is vectorised.
"""
from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import Int, UInt, bf16, f16, f32, f64, i8, i32, u1, u8
from streamdsl.backend import sim as simmod
from streamdsl.ir.deps import classify
from streamdsl.ir.nodes import For, walk

N = 64
M = 24
G_M, G_K, G_N = 16, 24, 8  # a small gemm
THIS_FILE = os.path.basename(__file__)


def rng(seed=0):
    return np.random.default_rng(seed)


def loops(kernel) -> dict[str, For]:
    """The For nodes of a kernel by loop variable (names are unique in these tests)."""
    out = {}
    for n in walk(kernel.ir):
        if isinstance(n, For):
            assert n.var not in out
            out[n.var] = n
    return out


def kinds(kernel) -> dict[str, str]:
    return {v: classify(f).kind for v, f in loops(kernel).items()}


def wrap(x, bits, signed):
    """Two's-complement wrap of Python ints, element by element."""
    out = []
    for v in np.asarray(x, dtype=object).ravel():
        v = int(v) % (1 << bits)
        if signed and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    return np.array(out, dtype=np.int64).reshape(np.shape(x))


# ====================================================================== integer wrap-around
@sd.kernel
def add_i8(A: i8[N], B: i8[N]) -> i8[N]:
    C: i8[N] = 0
    for i in range(N):
        C[i] = A[i] + B[i]
    return C


@sd.kernel
def sub_u8(A: u8[N], B: u8[N]) -> u8[N]:
    C: u8[N] = 0
    for i in range(N):
        C[i] = A[i] - B[i]
    return C


@sd.kernel
def mul_i32(A: i32[N], B: i32[N]) -> i32[N]:
    C: i32[N] = 0
    for i in range(N):
        C[i] = A[i] * B[i]
    return C


I5 = Int(5)
U3 = UInt(3)


@sd.kernel
def arith_i5(A: I5[N], B: I5[N]) -> (I5[N], I5[N], I5[N]):
    S: I5[N] = 0
    D: I5[N] = 0
    P: I5[N] = 0
    for i in range(N):
        S[i] = A[i] + B[i]
        D[i] = A[i] - B[i]
        P[i] = A[i] * B[i]
    return S, D, P


@sd.kernel
def arith_u3(A: U3[N], B: U3[N]) -> (U3[N], U3[N], U3[N]):
    S: U3[N] = 0
    D: U3[N] = 0
    P: U3[N] = 0
    for i in range(N):
        S[i] = A[i] + B[i]
        D[i] = A[i] - B[i]
        P[i] = A[i] * B[i]
    return S, D, P


@sd.kernel
def acc_i5(A: I5[N]) -> I5:
    s: I5 = 0
    for i in range(N):
        s += A[i]
    return s


def test_i8_add_wraps():
    r = rng(1)
    A = r.integers(-128, 128, N, dtype=np.int8)
    B = r.integers(-128, 128, N, dtype=np.int8)
    A[:3], B[:3] = [127, -128, 100], [1, -1, 100]
    C = add_i8(A, B)
    assert C.dtype == np.int8
    np.testing.assert_array_equal(C, wrap(A.astype(np.int64) + B, 8, True))
    assert list(C[:3]) == [-128, 127, -56]


def test_u8_sub_underflows():
    r = rng(2)
    A = r.integers(0, 256, N, dtype=np.uint8)
    B = r.integers(0, 256, N, dtype=np.uint8)
    A[:2], B[:2] = [0, 3], [1, 250]
    C = sub_u8(A, B)
    assert C.dtype == np.uint8
    np.testing.assert_array_equal(C, wrap(A.astype(np.int64) - B, 8, False))
    assert list(C[:2]) == [255, 9]


def test_i32_mul_overflows():
    r = rng(3)
    A = r.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32)
    B = r.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32)
    A[0], B[0] = 65536, 65536
    C = mul_i32(A, B)
    assert C.dtype == np.int32
    np.testing.assert_array_equal(C, wrap(A.astype(object) * B.astype(object), 32, True))
    assert C[0] == 0


def test_int5_wraps_at_5_bits():
    r = rng(4)
    A = r.integers(-16, 16, N).astype(np.int8)
    B = r.integers(-16, 16, N).astype(np.int8)
    S, D, P = arith_i5(A, B)
    a, b = A.astype(np.int64), B.astype(np.int64)
    np.testing.assert_array_equal(S, wrap(a + b, 5, True))
    np.testing.assert_array_equal(D, wrap(a - b, 5, True))
    np.testing.assert_array_equal(P, wrap(a * b, 5, True))
    for out in (S, D, P):
        assert out.min() >= -16 and out.max() <= 15
    # an i5 accumulation wraps after every step (the wrap commutes with the sum)
    assert int(acc_i5(np.full(N, 15, np.int8))) == wrap(15 * N, 5, True)


def test_uint3_wraps_at_3_bits():
    r = rng(5)
    A = r.integers(0, 8, N).astype(np.uint8)
    B = r.integers(0, 8, N).astype(np.uint8)
    S, D, P = arith_u3(A, B)
    a, b = A.astype(np.int64), B.astype(np.int64)
    np.testing.assert_array_equal(S, (a + b) % 8)
    np.testing.assert_array_equal(D, (a - b) % 8)
    np.testing.assert_array_equal(P, (a * b) % 8)


# ====================================================================== division, modulo
@sd.kernel
def divmod_i32(A: i32[N], B: i32[N]) -> (i32[N], i32[N]):
    Q: i32[N] = 0
    R: i32[N] = 0
    for i in range(N):
        Q[i] = A[i] // B[i]
        R[i] = A[i] % B[i]
    return Q, R


@sd.kernel
def truediv_i32(A: i32[N], B: i32[N]) -> f64[N]:
    C: f64[N] = 0.0
    for i in range(N):
        C[i] = A[i] / B[i]
    return C


def test_floor_division_and_modulo_follow_python():
    r = rng(6)
    A = r.integers(-50, 50, N).astype(np.int32)
    B = r.integers(-7, 8, N).astype(np.int32)
    A[:6] = [7, -7, 7, -7, 5, -5]
    B[:6] = [2, 2, -2, -2, 0, 0]
    Q, R = divmod_i32(A, B)
    want_q = [int(a) // int(b) if b else 0 for a, b in zip(A, B)]
    want_r = [int(a) % int(b) if b else 0 for a, b in zip(A, B)]
    np.testing.assert_array_equal(Q, want_q)
    np.testing.assert_array_equal(R, want_r)
    assert list(Q[:6]) == [3, -4, -4, 3, 0, 0]
    assert list(R[:6]) == [1, 1, -1, -1, 0, 0]
    assert np.any(B == 0)


def test_int_true_division_is_f32():
    A = np.arange(1, N + 1, dtype=np.int32)
    B = np.full(N, 3, np.int32)
    C = truediv_i32(A, B)
    assert C.dtype == np.float64
    want = (A.astype(np.float32) / B.astype(np.float32)).astype(np.float64)
    np.testing.assert_array_equal(C, want)
    assert C[0] != 1 / 3  # computed in f32, not f64
    # the IR says so too: the division is an f32 expression cast to f64
    store = next(n for n in walk(truediv_i32.ir) if type(n).__name__ == "Store")
    assert store.value.operand.dtype == f32


# ====================================================================== casts
@sd.kernel
def f2i(A: f32[16]) -> (i8[16], u8[16], i32[16]):
    X: i8[16] = 0
    Y: u8[16] = 0
    Z: i32[16] = 0
    for i in range(16):
        X[i] = sd.cast(A[i], i8)
        Y[i] = sd.cast(A[i], u8)
        Z[i] = sd.cast(A[i], i32)
    return X, Y, Z


def test_float_to_int_truncates_and_saturates():
    vals = [1.7, -1.7, 0.5, -0.5, 127.9, -128.9, 300.0, -300.0,
            np.nan, np.inf, -np.inf, 255.5, 256.0, 3e9, -3e9, 2.0**31]
    A = np.array(vals, np.float32)
    X, Y, Z = f2i(A)

    def expect(v, lo, hi):
        if np.isnan(v):
            return 0
        if v >= hi:
            return hi
        if v <= lo:
            return lo
        return int(np.trunc(v))

    np.testing.assert_array_equal(X, [expect(v, -128, 127) for v in A])
    np.testing.assert_array_equal(Y, [expect(v, 0, 255) for v in A])
    np.testing.assert_array_equal(Z, [expect(v, -(2**31), 2**31 - 1) for v in A])
    assert list(X[:4]) == [1, -1, 0, 0] and X[8] == 0 and Y[1] == 0 and Y[11] == 255


# ====================================================================== bf16
def bf16_round(x) -> np.ndarray:
    """float32 -> nearest bf16 (ties to even), by inspecting the discarded 16 bits."""
    x = np.asarray(x, np.float32)
    out = []
    for u in x.view(np.uint32).ravel().tolist():
        low, high = u & 0xFFFF, u & 0xFFFF0000
        if (u >> 23) & 0xFF == 0xFF and (u & 0x7FFFFF):  # NaN stays NaN
            out.append(0x7FC00000)
            continue
        if low > 0x8000 or (low == 0x8000 and (high >> 16) & 1):
            high += 0x10000
        out.append(high & 0xFFFFFFFF)
    return np.array(out, np.uint32).view(np.float32).reshape(x.shape)


def random_bf16(n, seed):
    return bf16_round(rng(seed).standard_normal(n).astype(np.float32) * 10)


@sd.kernel
def bf16_fma(A: bf16[N], B: bf16[N], C: bf16[N]) -> (bf16[N], bf16[N]):
    P: bf16[N] = 0.0
    D: bf16[N] = 0.0
    for i in range(N):
        P[i] = A[i] * B[i]
        D[i] = A[i] * B[i] + C[i]
    return P, D


@sd.kernel
def f32_to_bf16(A: f32[N]) -> bf16[N]:
    B: bf16[N] = 0.0
    for i in range(N):
        B[i] = sd.cast(A[i], bf16)
    return B


@sd.kernel
def bf16_sum(A: bf16[N]) -> bf16:
    s: bf16 = 0.0
    for i in range(N):
        s += A[i]
    return s


def test_bf16_reference_rounding_is_right():
    # the test's own rounding: halfway cases go to the even neighbour
    one = np.float32(1.0).view(np.uint32)
    tie_down = np.array([one + 0x8000], np.uint32).view(np.float32)  # 1 + 2**-8: even is 1.0
    tie_up = np.array([one + 0x18000], np.uint32).view(np.float32)  # odd neighbour below -> up
    assert bf16_round(tie_down)[0] == 1.0
    assert bf16_round(tie_up)[0].view(np.uint32) == one + 0x20000
    assert bf16_round(np.float32(1.0 + 2.0**-8 + 2.0**-20)) == np.float32(1.0 + 2.0**-7)


def test_bf16_rounds_every_result():
    A, B, C = random_bf16(N, 1), random_bf16(N, 2), random_bf16(N, 3)
    P, D = bf16_fma(A, B, C)
    assert P.dtype == np.float32 and D.dtype == np.float32
    prod = bf16_round(A * B)  # exact in f32 (8-bit mantissas), rounded once to bf16
    np.testing.assert_array_equal(P, prod)
    np.testing.assert_array_equal(D, bf16_round(prod + C))  # rounded after each op
    assert np.all(P.view(np.uint32) & 0xFFFF == 0)
    assert not np.array_equal(P, A * B)  # rounding really happened
    assert not np.array_equal(D, bf16_round(A * B + C.astype(np.float64)))  # and twice in D


def test_f32_to_bf16_cast_rounds_to_nearest_even():
    X = rng(7).standard_normal(N).astype(np.float32)
    u = X.view(np.uint32)
    u[:4] = [0x3F808000, 0x3F818000, 0xBF808000, 0x3F807FFF]  # ties both ways, negative tie, below tie
    got = f32_to_bf16(X)
    np.testing.assert_array_equal(got, bf16_round(X))
    assert list(got[:4].view(np.uint32)) == [0x3F800000, 0x3F820000, 0xBF800000, 0x3F800000]


def test_bf16_sum_rounds_each_step_in_order():
    A = random_bf16(N, 8)
    A[0] = 256.0  # large first term: later small terms are partly absorbed by rounding
    s = np.float32(0.0)
    for a in A:
        s = bf16_round(np.float32(s + a))
    got = bf16_sum(A)
    assert np.float32(got) == s
    assert kinds(bf16_sum) == {"i": "sequential"}  # bf16 sums are never reassociated


@sd.kernel
def half_fma(A: f16[N], B: f16[N]) -> f16[N]:
    C: f16[N] = 0.0
    for i in range(N):
        C[i] = A[i] * B[i] + A[i]
    return C


def test_f16_rounds_every_result():
    r = rng(47)
    a = (r.standard_normal(N) * 10).astype(np.float16)
    b = (r.standard_normal(N) * 10).astype(np.float16)
    c = half_fma(a, b)
    assert c.dtype == np.float16
    prod = (a.astype(np.float32) * b).astype(np.float16)
    np.testing.assert_array_equal(c, (prod.astype(np.float32) + a).astype(np.float16))
    assert not np.array_equal(c, (a.astype(np.float32) * b + a).astype(np.float16))


# ====================================================================== comparisons, select
@sd.kernel
def compare(A: f32[N], B: f32[N]) -> (u1[N], i32[N]):
    L: u1[N] = 0
    K: i32[N] = 0
    for i in range(N):
        L[i] = A[i] < B[i]
        K[i] = sd.cast(A[i] >= B[i], i32) * 5 + sd.cast(A[i] == B[i], i32)
    return L, K


@sd.kernel
def select(A: f32[N], B: f32[N]) -> f32[N]:
    C: f32[N] = 0.0
    for i in range(N):
        C[i] = A[i] if A[i] > B[i] else B[i] * 2.0
    return C


def test_comparison_produces_u1():
    r = rng(9)
    A = r.integers(-3, 4, N).astype(np.float32)
    B = r.integers(-3, 4, N).astype(np.float32)
    L, K = compare(A, B)
    assert L.dtype == np.uint8
    np.testing.assert_array_equal(L, (A < B).astype(np.uint8))
    np.testing.assert_array_equal(K, 5 * (A >= B) + (A == B))
    store = next(n for n in walk(compare.ir) if type(n).__name__ == "Store" and n.name == "L")
    assert store.value.dtype == u1


def test_select():
    A, B = rng(10).standard_normal((2, N)).astype(np.float32)
    np.testing.assert_array_equal(select(A, B), np.where(A > B, A, B * np.float32(2.0)))


# ====================================================================== triangular / ragged loops
@sd.kernel
def tri(A: f32[M, M]) -> (f32[M, M], f32[M, M], f32[M]):
    L: f32[M, M] = 0.0
    U: f32[M, M] = 0.0
    rs: f32[M] = 0.0
    for i in range(M):
        for j in range(i + 1):
            L[i, j] = A[i, j]
        for j2 in range(i, M):
            U[i, j2] = A[i, j2] * 2.0
        for j3 in range(i):
            rs[i] += A[i, j3]
    return L, U, rs


@sd.kernel
def banded(A: f32[M, M]) -> f32[M, M]:
    T: f32[M, M] = 0.0
    for i in range(M):
        for j in range(max(i - 1, 0), min(i + 2, M)):
            T[i, j] = A[i, j] + 1.0
    return T


@sd.kernel
def strided_from_i(A: f32[M, M]) -> f32[M, M]:
    T: f32[M, M] = 0.0
    for i in range(M):
        for j in range(i, M, 3):
            T[i, j] = A[i, j]
    return T


@sd.kernel
def bound_from_two(A: f32[8, 8, 8]) -> f32[8, 8, 8]:
    T: f32[8, 8, 8] = 0.0
    for i in range(8):
        for j in range(i, 8):
            for k in range(j - i, 2 * i + 1 - j if 2 * i + 1 - j > 0 else 0):
                T[i, j, k] = A[i, j, k]
    return T


def test_triangular_loops():
    A = rng(11).standard_normal((M, M)).astype(np.float32)
    L, U, rs = tri(A)
    np.testing.assert_array_equal(L, np.tril(A))
    np.testing.assert_array_equal(U, np.triu(A) * np.float32(2))
    np.testing.assert_allclose(rs, np.tril(A, -1).sum(axis=1), rtol=1e-5, atol=1e-5)
    assert rs[0] == 0.0


def test_loop_bounds_from_outer_vars():
    A = rng(12).standard_normal((M, M)).astype(np.float32)
    i, j = np.indices((M, M))
    np.testing.assert_array_equal(banded(A), np.where(np.abs(i - j) <= 1, A + np.float32(1), 0))
    np.testing.assert_array_equal(strided_from_i(A), np.where((j >= i) & ((j - i) % 3 == 0), A, 0))
    B = rng(13).standard_normal((8, 8, 8)).astype(np.float32)
    want = np.zeros_like(B)
    for a in range(8):
        for b in range(a, 8):
            for c in range(b - a, max(2 * a + 1 - b, 0)):
                want[a, b, c] = B[a, b, c]
    got = bound_from_two(B)
    np.testing.assert_array_equal(got, want)
    assert np.count_nonzero(want) > 20


R = 12


@sd.kernel
def ragged_more(A: f32[R, R], n: i32) -> (f32[R, R], f32[R, R], f32[R], f32[R, R], f32[R]):
    D: f32[R, R] = 0.0
    P: f32[R, R] = 0.0
    C: f32[R] = 0.0
    Q: f32[R, R] = 0.0
    S: f32[R] = 0.0
    for i in range(R):
        for j in range(i, -1, -2):  # negative step from a start that depends on i
            D[i, j] = A[i, j]
        P[i, 0] = A[i, 0]
        for j2 in range(1, i + 1):  # sequential, with a ragged bound, inside a parallel loop
            P[i, j2] = P[i, j2 - 1] + A[i, j2]
        for j3 in range(n):  # bound from a scalar parameter
            Q[i, j3] = 1.0
    for k in range(R):  # reduction over k into C[j4], with j4's bound depending on k
        for j4 in range(k + 1):
            C[j4] += A[k, j4]
    for t in range(3):
        for i5 in range(R):
            for j5 in range(t, R - t):
                S[i5] += A[i5, j5]
    return D, P, C, Q, S


def test_more_ragged_loops():
    A = rng(46).integers(-5, 5, (R, R)).astype(np.float32)  # small ints: sums are exact in any order
    D, P, C, Q, S = ragged_more(A, 5)
    i, j = np.indices((R, R))
    np.testing.assert_array_equal(D, np.where((j <= i) & ((i - j) % 2 == 0), A, 0))
    np.testing.assert_array_equal(P, np.where(j <= i, np.cumsum(A, axis=1), 0))
    np.testing.assert_array_equal(C, np.tril(A).sum(axis=0))
    np.testing.assert_array_equal(Q, np.where(j < 5, 1.0, 0.0))
    np.testing.assert_array_equal(S, sum(A[:, t:R - t].sum(axis=1) for t in range(3)))
    assert kinds(ragged_more) == {"i": "parallel", "j": "parallel", "j2": "sequential", "j3": "parallel",
                                  "k": "reduction", "j4": "parallel", "t": "reduction", "i5": "parallel",
                                  "j5": "reduction"}


# ====================================================================== negative steps
@sd.kernel
def reverse(A: f32[N]) -> (f32[N], f32[N], f32[N]):
    R: f32[N] = 0.0
    S: f32[N] = 0.0
    E: f32[N] = 0.0
    for i in range(N - 1, -1, -1):
        R[N - 1 - i] = A[i]
    S[N - 1] = A[N - 1]
    for i2 in range(N - 2, -1, -1):  # suffix sums: loop-carried, running downwards
        S[i2] = S[i2 + 1] + A[i2]
    for i3 in range(N - 1, 0, -2):
        E[i3] = 1.0
    return R, S, E


def test_negative_step_loops():
    A = rng(14).integers(-9, 10, N).astype(np.float32)  # small ints: sums are exact
    R, S, E = reverse(A)
    np.testing.assert_array_equal(R, A[::-1])
    np.testing.assert_array_equal(S, np.cumsum(A[::-1])[::-1])
    want_e = np.zeros(N, np.float32)
    want_e[N - 1:0:-2] = 1.0
    np.testing.assert_array_equal(E, want_e)
    assert kinds(reverse)["i"] == "parallel" and kinds(reverse)["i2"] == "sequential"


# ====================================================================== if inside vectorised loops
@sd.kernel
def piecewise(A: f32[M, N]) -> (f32[M, N], f32[M], i32[M]):
    Y: f32[M, N] = 0.0
    pos: f32[M] = 0.0
    cnt: i32[M] = 0
    for i in range(M):
        for j in range(N):
            if A[i, j] > 1.0:
                Y[i, j] = 1.0
            elif A[i, j] < -1.0:
                Y[i, j] = A[i, j] * 3.0
            else:
                Y[i, j] = A[i, j] - 0.5
            if A[i, j] > 0.0:
                pos[i] += A[i, j]
                cnt[i] += 1
    return Y, pos, cnt


@sd.kernel
def shift_guarded(A: f32[N]) -> (f32[N], f32[N]):
    B: f32[N] = 0.0
    C: f32[N] = 0.0
    for i in range(N):
        if i > 0:
            B[i] = A[i - 1]
        if i < N - 1:
            C[i] = A[i + 1]
        else:
            C[i] = -1.0
    return B, C


@sd.kernel
def shift_guarded_2d(A: f32[M, M]) -> f32[M, M]:
    B: f32[M, M] = 0.0
    for i in range(M):
        for j in range(M):
            if i > 0 and j < M - 1:
                B[i, j] = A[i - 1, j + 1]
    return B


def test_if_elif_else_in_vectorised_loop():
    A = (rng(15).standard_normal((M, N)) * 2).astype(np.float32)
    Y, pos, cnt = piecewise(A)
    want = np.where(A > 1, np.float32(1), np.where(A < -1, A * np.float32(3), A - np.float32(0.5)))
    np.testing.assert_array_equal(Y, want)
    np.testing.assert_allclose(pos, np.where(A > 0, A, 0).sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(cnt, (A > 0).sum(axis=1))
    assert kinds(piecewise)["i"] == "parallel"


def test_store_guarded_against_out_of_bounds():
    A = rng(16).standard_normal(N).astype(np.float32)
    B, C = shift_guarded(A)
    np.testing.assert_array_equal(B, np.concatenate([[0], A[:-1]]))
    np.testing.assert_array_equal(C, np.concatenate([A[1:], [-1]]))
    A2 = rng(17).standard_normal((M, M)).astype(np.float32)
    want = np.zeros_like(A2)
    want[1:, :-1] = A2[:-1, 1:]
    np.testing.assert_array_equal(shift_guarded_2d(A2), want)


@sd.kernel
def guarded_exprs(A: f32[N]) -> (f32[N], f32[N], u1[N], u1[N]):
    T: f32[N] = 0.0
    S: f32[N] = 0.0
    And: u1[N] = 0
    Or: u1[N] = 0
    for i in range(N):
        T[i] = A[i - 1] if i > 0 else -5.0
        And[i] = i > 0 and A[i - 1] > 0.0
        Or[i] = i == N - 1 or A[i + 1] > 0.0
    prev: f32 = 0.0
    for i2 in range(N):  # sequential (prev carries a value): scalar conditions
        S[i2] = prev + (A[i2 - 1] if i2 > 0 else 0.0)
        prev = A[i2]
    return T, S, And, Or


def test_untaken_ternary_branch_and_short_circuit_are_not_evaluated():
    # Python (and C++) evaluate only the chosen branch of `a if c else b` and short-circuit
    # `and`/`or`, so guarded out-of-bounds reads must not raise
    A = rng(40).standard_normal(N).astype(np.float32)
    T, S, And, Or = guarded_exprs(A)
    prev = np.concatenate([[0], A[:-1]]).astype(np.float32)
    np.testing.assert_array_equal(T, np.concatenate([[-5], A[:-1]]))
    np.testing.assert_array_equal(S, prev + prev)
    np.testing.assert_array_equal(And, np.concatenate([[False], A[:-1] > 0]))
    np.testing.assert_array_equal(Or, np.concatenate([A[1:] > 0, [True]]))
    assert kinds(guarded_exprs)["i"] == "parallel" and kinds(guarded_exprs)["i2"] == "sequential"


@sd.kernel
def scatter(A: i32[N], V: f32[N]) -> (i32[8], f32[8], f32, f32[N]):
    H: i32[8] = 0
    W: f32[8] = 0.0
    last: f32 = 0.0
    B: f32[N] = 0.0
    for i in range(N):
        H[A[i]] += 1  # data-dependent index: a histogram
        W[A[i]] = V[i]  # last writer wins
        last = V[i]
        B[i // 2] = V[i]
    return H, W, last, B


def test_conflicting_writes_run_in_program_order():
    A = rng(41).integers(0, 8, N).astype(np.int32)
    V = rng(42).standard_normal(N).astype(np.float32)
    H, W, last, B = scatter(A, V)
    np.testing.assert_array_equal(H, np.bincount(A, minlength=8))
    want_w = np.zeros(8, np.float32)
    for a, v in zip(A, V):
        want_w[a] = v
    np.testing.assert_array_equal(W, want_w)
    assert last == V[-1]
    np.testing.assert_array_equal(B[: N // 2], V[1::2])
    assert kinds(scatter) == {"i": "sequential"}


# ====================================================================== reductions
@sd.kernel
def reductions(A: f32[M, N]) -> (f32, f32, f32[N], f32[M], f32[M]):
    total: f32 = 0.0
    big: f32 = -1.0e30
    for i in range(M):
        for j in range(N):
            total += A[i, j]
            big = max(big, A[i, j])
    colsum: f32[N] = 0.0
    for i2 in range(M):
        for j2 in range(N):
            colsum[j2] += A[i2, j2]
    rowmin: f32[M] = 1.0e30
    rowsum: f32[M] = 0.0
    for i3 in range(M):
        for j3 in range(N):
            rowmin[i3] = min(rowmin[i3], A[i3, j3])
            rowsum[i3] = A[i3, j3] + rowsum[i3]
    return total, big, colsum, rowmin, rowsum


@sd.kernel
def int_reductions(A: i32[N]) -> (i32, i32, i32, i32):
    p: i32 = 1
    o: i32 = 0
    mx: i32 = -2147483648
    d: i32 = 0
    for i in range(N):
        p *= A[i]
        o |= A[i]
        mx = max(A[i], mx)
        d -= A[i]  # not associative: runs sequentially, still correct
    return p, o, mx, d


@sd.kernel
def deep_reduction(A: f32[4, 8, 16]) -> f32[4]:
    out: f32[4] = 0.0
    for i in range(4):
        s: f32 = 0.0
        for j in range(8):
            for k in range(16):
                s += A[i, j, k]
        out[i] = s
    return out


def test_reductions_into_scalars_and_tensors():
    A = rng(18).standard_normal((M, N)).astype(np.float32)
    total, big, colsum, rowmin, rowsum = reductions(A)
    np.testing.assert_allclose(total, A.sum(dtype=np.float64), rtol=1e-5, atol=1e-4)
    assert np.ndim(total) == 0 and np.ndim(big) == 0
    assert big == A.max()
    np.testing.assert_allclose(colsum, A.sum(axis=0, dtype=np.float64), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(rowmin, A.min(axis=1))
    np.testing.assert_allclose(rowsum, A.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    k = kinds(reductions)
    assert k["i"] == k["j"] == "reduction"
    assert k["i2"] == "reduction" and k["j2"] == "parallel"
    assert k["i3"] == "parallel" and k["j3"] == "reduction"


def test_integer_reductions():
    A = rng(19).integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32)
    A[A == 0] = 3
    p, o, mx, d = int_reductions(A)
    prod = 1
    for a in A:
        prod *= int(a)
    assert int(p) == wrap(prod, 32, True)
    assert int(o) == int(np.bitwise_or.reduce(A))
    assert int(mx) == int(A.max())
    assert int(d) == wrap(-sum(int(a) for a in A), 32, True)
    assert kinds(int_reductions) == {"i": "reduction"}  # d -= ... is an accumulation too (x - e1 - e2 ...)


def test_reduction_over_two_loops():
    A = rng(20).standard_normal((4, 8, 16)).astype(np.float32)
    np.testing.assert_allclose(deep_reduction(A), A.sum(axis=(1, 2), dtype=np.float64), rtol=1e-5, atol=1e-5)


@sd.kernel
def masked_reductions(A: f32[M, M], P: i32[M, M]) -> (f32[M], f32[M], i32[M], f32[M]):
    hi: f32[M] = 0.0
    lo: f32[M] = 0.0
    prod: i32[M] = 0
    pos_max: f32[M] = 0.0
    for i in range(M):
        h: f32 = -1.0e30
        l: f32 = 1.0e30
        p: i32 = 1
        q: f32 = -1.0e30
        for j in range(i + 1):  # triangular: lanes j > i are masked off
            h = max(h, A[i, j] - 10.0)
            l = min(l, A[i, j] + 10.0)
            p *= P[i, j]
        for j2 in range(M):
            if A[i, j2] < 0.0:
                q = max(q, A[i, j2])
        hi[i] = h
        lo[i] = l
        prod[i] = p
        pos_max[i] = q
    return hi, lo, prod, pos_max


def test_masked_reductions_use_the_right_identity():
    A = rng(43).standard_normal((M, M)).astype(np.float32)
    P = rng(44).integers(1, 4, (M, M)).astype(np.int32)
    hi, lo, prod, neg_max = masked_reductions(A, P)
    tril = np.tril(np.ones((M, M), bool))
    np.testing.assert_array_equal(hi, np.where(tril, A - np.float32(10), -np.inf).max(axis=1))
    np.testing.assert_array_equal(lo, np.where(tril, A + np.float32(10), np.inf).min(axis=1))
    want_p = [wrap(np.prod(P[i, : i + 1].astype(object)), 32, True) for i in range(M)]
    np.testing.assert_array_equal(prod, want_p)
    np.testing.assert_array_equal(neg_max, np.where(A < 0, A, np.float32(-1e30)).max(axis=1))
    assert kinds(masked_reductions)["j"] == "reduction" and kinds(masked_reductions)["j2"] == "reduction"


@sd.kernel
def invariant_summands(A: f32[M], B: f32[M]) -> (f32[M], f32[M], f32[M], f32[M], i32[M]):
    cnt: f32[M] = 0.0
    tri_cnt: f32[M] = 0.0
    scaled: f32[M] = 0.0
    prod: f32[M] = 0.0
    icnt: i32[M] = 0
    for i in range(M):
        s: f32 = 0.0
        t: f32 = 0.0
        u: f32 = 0.0
        w: f32 = 0.0
        for j in range(N):
            s += 1.0
            u += A[i]
            w += A[i] * B[i]
            icnt[i] += 1
        for j2 in range(i + 1):
            t += 1.0
        cnt[i] = s
        tri_cnt[i] = t
        scaled[i] = u
        prod[i] = w
    return cnt, tri_cnt, scaled, prod, icnt


def test_reduction_of_loop_invariant_summand_counts_iterations():
    A = rng(21).integers(-4, 5, M).astype(np.float32)
    B = rng(22).integers(-4, 5, M).astype(np.float32)
    cnt, tri_cnt, scaled, prod, icnt = invariant_summands(A, B)
    np.testing.assert_array_equal(cnt, np.full(M, N))
    np.testing.assert_array_equal(tri_cnt, np.arange(1, M + 1))
    np.testing.assert_array_equal(scaled, A * N)  # small ints: exact
    np.testing.assert_array_equal(prod, A * B * N)
    np.testing.assert_array_equal(icnt, np.full(M, N))
    assert kinds(invariant_summands)["j"] == "reduction"


LONG = 1000


@sd.kernel
def float_sums(A: f32[G_M, G_K], B: f32[G_K, G_N], X: f32[LONG], Y: f32[N]) -> (f32[G_M, G_N], f32, f32):
    C: f32[G_M, G_N] = 0.0
    for i in range(G_M):
        for j in range(G_N):
            acc: f32 = 0.0
            for k in range(G_K):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
    s: f32 = 0.0
    for t in range(LONG):  # long and thin: one pass over 1000 steps
        s += X[t]
    u: f32 = 0.0
    for t2 in range(N):  # short: one step per iteration
        u += Y[t2]
    return C, s, u


def test_float_sums_run_in_program_order():
    # f32 addition is not associative; the simulator adds in loop order, bit for bit
    r = rng(45)
    A = r.standard_normal((G_M, G_K)).astype(np.float32)
    B = r.standard_normal((G_K, G_N)).astype(np.float32)
    X = np.ones(LONG, np.float32)
    X[0], X[-1] = 1e8, -1e8  # in order, every +1 is absorbed by 1e8 (ulp 8): the sum is 0
    Y = np.ones(N, np.float32)
    Y[0], Y[-1] = 1e8, -1e8
    C, s, u = float_sums(A, B, X, Y)
    want = np.zeros((G_M, G_N), np.float32)
    for k in range(G_K):
        want = want + A[:, k, None] * B[None, k, :]
    np.testing.assert_array_equal(C, want)
    assert s == 0.0 and u == 0.0
    assert float(np.sum(X)) != 0.0  # NumPy's pairwise sum differs: the test can tell


# ====================================================================== loop-carried loops
@sd.kernel
def prefix_sum(A: i32[N]) -> (i32[N], f32[N]):
    P: i32[N] = 0
    F: f32[N] = 0.0
    P[0] = A[0]
    for i in range(1, N):
        P[i] = P[i - 1] + A[i]
    run: f32 = 0.0
    for i2 in range(N):
        run += sd.cast(A[i2], f32) * 0.5
        F[i2] = run
    return P, F


def test_prefix_sum_is_sequential_and_correct():
    A = rng(23).integers(-1000, 1000, N).astype(np.int32)
    P, F = prefix_sum(A)
    np.testing.assert_array_equal(P, np.cumsum(A.astype(np.int64)))
    want = np.zeros(N, np.float32)
    acc = np.float32(0)
    for k, a in enumerate(A):
        acc = np.float32(acc + np.float32(a) * np.float32(0.5))
        want[k] = acc
    np.testing.assert_array_equal(F, want)
    k = kinds(prefix_sum)
    assert k["i"] == "sequential" and k["i2"] == "sequential"


# ====================================================================== loop classification
@sd.kernel
def gemm(A: f32[G_M, G_K], B: f32[G_K, G_N]) -> f32[G_M, G_N]:
    C: f32[G_M, G_N] = 0.0
    for i in range(G_M):
        for j in range(G_N):
            for k in range(G_K):
                C[i, j] += A[i, k] * B[k, j]
    return C


@sd.kernel
def jacobi(A_in: f32[M, M]) -> f32[M, M]:
    A: f32[M, M] = 0.0
    B: f32[M, M] = 0.0
    for ci in range(M):
        for cj in range(M):
            A[ci, cj] = A_in[ci, cj]
            B[ci, cj] = A_in[ci, cj]
    for t in range(5):
        for i in range(1, M - 1):
            for j in range(1, M - 1):
                B[i, j] = 0.25 * (A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        for i2 in range(1, M - 1):
            for j2 in range(1, M - 1):
                A[i2, j2] = 0.25 * (B[i2, j2 - 1] + B[i2, j2 + 1] + B[i2 + 1, j2] + B[i2 - 1, j2])
    return A


@sd.kernel
def gauss_seidel(A_in: f32[M, M]) -> f32[M, M]:
    A: f32[M, M] = 0.0
    for ci in range(M):
        for cj in range(M):
            A[ci, cj] = A_in[ci, cj]
    for i in range(1, M - 1):
        for j in range(1, M - 1):
            A[i, j] = 0.25 * (A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
    return A


def test_classify_gemm():
    assert kinds(gemm) == {"i": "parallel", "j": "parallel", "k": "reduction"}
    A, B = rng(24).random((G_M, G_K), dtype=np.float32), rng(25).random((G_K, G_N), dtype=np.float32)
    np.testing.assert_allclose(gemm(A, B), A @ B, rtol=1e-5, atol=1e-5)


def test_classify_prefix_sum():
    assert kinds(prefix_sum)["i"] == "sequential"


def test_classify_jacobi():
    k = kinds(jacobi)
    assert k["t"] == "sequential"
    assert k["i"] == k["j"] == k["i2"] == k["j2"] == "parallel"
    assert k["ci"] == k["cj"] == "parallel"
    A = rng(26).random((M, M), dtype=np.float32)
    a, b = A.copy(), A.copy()
    for _ in range(5):
        b[1:-1, 1:-1] = np.float32(0.25) * (a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = np.float32(0.25) * (b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    np.testing.assert_allclose(jacobi(A), a, rtol=1e-6, atol=1e-6)


def test_in_place_stencil_is_sequential_and_correct():
    # Gauss-Seidel reads values updated earlier in the same sweep: must not be vectorised
    k = kinds(gauss_seidel)
    assert k["i"] == "sequential" and k["j"] == "sequential"
    A = rng(27).random((M, M), dtype=np.float32)
    want = A.copy()
    for i in range(1, M - 1):
        for j in range(1, M - 1):
            want[i, j] = np.float32(0.25) * (want[i, j - 1] + want[i, j + 1] + want[i + 1, j] + want[i - 1, j])
    np.testing.assert_array_equal(gauss_seidel(A), want)


# ====================================================================== chunked vectorisation
def test_results_do_not_depend_on_chunk_size(monkeypatch):
    A = (rng(28).standard_normal((M, N)) * 2).astype(np.float32)
    X = rng(29).integers(-1000, 1000, N).astype(np.int32)
    T = rng(30).standard_normal((M, M)).astype(np.float32)
    big = [piecewise(A), reductions(A), prefix_sum(X), tri(T), invariant_summands(A[:, 0], A[:, 1])]
    monkeypatch.setattr(simmod, "CHUNK", 7)
    small = [piecewise(A), reductions(A), prefix_sum(X), tri(T), invariant_summands(A[:, 0], A[:, 1])]
    for b, s in zip(big, small):
        for x, y in zip(b, s):
            np.testing.assert_array_equal(x, y)  # float sums too: every chunking adds in program order


BR, BC = 2048, 2100  # 4.3M iterations: more than the shipped CHUNK, so the inner loop runs in chunks


@sd.kernel
def big_sums(A: f32[BR, BC]) -> (f32, f32[2]):
    """Sums over two loops that both accumulate: the inner one is chunked at the shipped CHUNK."""
    total: f32 = 0.0
    C: f32[2] = 0.0
    for i in range(BR):
        for j in range(BC):
            total += A[i, j]
            C[1] += A[i, j] * 0.5
    return total, C


def _in_order(values) -> np.float32:
    """A float32 sum in program order (``ufunc.accumulate`` adds left to right)."""
    return np.add.accumulate(np.concatenate([np.zeros(1, np.float32), values.ravel()]))[-1]


@sd.kernel
def sum_through_recurrence(A: f32[8, 5]) -> f32:
    """``x`` sums over i and s, but s is sequential (y carries a recurrence): i may not run as one vector."""
    x: f32 = 0.0
    for i in range(8):
        y: f32 = 0.0
        for s in range(5):
            y = y * 0.5 + A[i, s]
            x += y
    return x


def test_float_sum_across_a_sequential_loop_keeps_program_order():
    A = (rng(32).standard_normal((8, 5)) * 1000).astype(np.float32)
    want, half = np.float32(0.0), np.float32(0.5)
    for i in range(8):
        y = np.float32(0.0)
        for s in range(5):
            y = y * half + A[i, s]
            want = want + y
    assert sum_through_recurrence(A) == want


def test_chunked_float_sums_keep_program_order():
    A = rng(31).standard_normal((BR, BC)).astype(np.float32)
    assert BR * BC > simmod.CHUNK
    total, C = big_sums(A)
    assert total == _in_order(A)
    assert C[1] == _in_order(A * np.float32(0.5)) and C[0] == 0.0


# ====================================================================== errors at the caller's line
@sd.kernel
def oob(A: f32[N]) -> f32[N]:
    B: f32[N] = 0.0
    for i in range(N):
        B[i] = A[i + 1]
    return B


@sd.kernel
def oob_store(A: f32[N]) -> f32[N]:
    B: f32[N] = 0.0
    for i in range(N):
        B[2 * i] = A[i]
    return B


@sd.kernel
def oob_scalar(A: f32[N], k: i32) -> f32:
    return A[k]


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


def test_out_of_bounds_index_raises_shape_error():
    A = np.zeros(N, np.float32)
    with pytest.raises(sd.ShapeError) as e:
        oob(A)
    assert "out of bounds" in str(e.value) and f"size {N}" in str(e.value)
    assert e.value.loc is not None and e.value.loc.file == __file__
    src = open(__file__).read().splitlines()[e.value.loc.line - 1]
    assert "A[i + 1]" in src
    with pytest.raises(sd.ShapeError, match="out of bounds"):
        oob_store(A)
    assert float(oob_scalar(np.arange(N, dtype=np.float32), 5)) == 5.0
    with pytest.raises(sd.ShapeError, match="out of bounds"):
        oob_scalar(A, N)
    with pytest.raises(sd.ShapeError, match="out of bounds"):
        oob_scalar(A, -1)


def test_wrong_shape_reports_the_call_site():
    with pytest.raises(sd.ShapeError) as e:
        line = _line() + 1
        add_i8(np.zeros(N + 1, np.int8), np.zeros(N, np.int8))
    msg = str(e.value)
    assert f"{THIS_FILE}:{line}:" in msg
    assert "'A'" in msg and str((N + 1,)) in msg


def test_wrong_dtype_reports_the_call_site():
    with pytest.raises(sd.KernelTypeError) as e:
        line = _line() + 1
        add_i8(np.zeros(N, np.int8), np.zeros(N, np.float16))
    msg = str(e.value)
    assert f"{THIS_FILE}:{line}:" in msg
    assert "'B'" in msg and "float16" in msg


def test_an_integer_array_whose_values_fit_is_accepted():
    a = np.arange(N, dtype=np.int32) - N // 2  # an int32 array for an i8 parameter: its values fit
    np.testing.assert_array_equal(add_i8(a, a), add_i8(a.astype(np.int8), a.astype(np.int8)))
    with pytest.raises(sd.KernelTypeError) as e:
        line = _line() + 1
        add_i8(a + 200, a)
    msg = str(e.value)
    assert f"{THIS_FILE}:{line}:" in msg
    assert "argument 'A' of 'add_i8' holds" in msg and "which i8 cannot hold (range -128..127)" in msg


def test_wrong_arguments_report_the_call_site():
    cases = [
        (lambda: add_i8(np.zeros(N, np.int8)), "argument"),
        (lambda: add_i8([0] * N, np.zeros(N, np.int8)), "NumPy array"),
        (lambda: oob_scalar(np.zeros(N, np.float32), 1.5), "float"),
        (lambda: add_i8(np.zeros(N, np.float32), np.zeros(N, np.int8)), "float32"),
    ]
    for call, words in cases:
        with pytest.raises(sd.KernelTypeError) as e:
            call()
        assert words in str(e.value)
        assert THIS_FILE in str(e.value)


# ====================================================================== inputs are not modified
@sd.kernel
def passthrough(A: f32[N], B: I5[N]) -> (f32[N], I5[N]):
    return A, B


@sd.kernel
def calls_passthrough(A: f32[N], B: I5[N]) -> f32[N]:
    X, Y = passthrough(A, B)
    Z: f32[N] = 0.0
    for i in range(N):
        Z[i] = X[i] + sd.cast(Y[i], f32)
    return Z


def test_inputs_are_not_modified():
    A = rng(31).standard_normal(N).astype(np.float32)
    B = rng(32).integers(-16, 16, N).astype(np.int8)
    A0, B0 = A.copy(), B.copy()
    X, Y = passthrough(A, B)
    np.testing.assert_array_equal(X, A)
    np.testing.assert_array_equal(Y, B)
    X[:] = 7.0
    Y[:] = 3
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(B, B0)
    Z = calls_passthrough(A, B)
    np.testing.assert_array_equal(Z, A + B.astype(np.float32))
    np.testing.assert_array_equal(A, A0)
    r = rng(33)
    for k, args in [(add_i8, (B, B)), (piecewise, (r.standard_normal((M, N)).astype(np.float32),)),
                    (tri, (r.standard_normal((M, M)).astype(np.float32),)), (prefix_sum, (X := B.astype(np.int32),))]:
        copies = [np.copy(a) for a in args]
        k(*args)
        for a, c in zip(args, copies):
            np.testing.assert_array_equal(a, c)
    assert X.dtype == np.int32


# ====================================================================== sizes that need vectorisation
BIG = 512


@sd.kernel
def softmax_big(X: f32[BIG, BIG]) -> f32[BIG, BIG]:
    Y: f32[BIG, BIG] = 0.0
    for i in range(BIG):
        mx: f32 = X[i, 0]
        for j in range(BIG):
            mx = max(mx, X[i, j])
        s: f32 = 0.0
        for j2 in range(BIG):
            Y[i, j2] = sd.exp(X[i, j2] - mx)
            s += Y[i, j2]
        for j3 in range(BIG):
            Y[i, j3] = Y[i, j3] / s
    return Y


G = 192


@sd.kernel
def gemm_big(A: f32[G, G], B: f32[G, G]) -> f32[G, G]:
    C: f32[G, G] = 0.0
    for i in range(G):
        for j in range(G):
            acc: f32 = 0.0
            for k in range(G):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
    return C


def test_large_softmax_and_gemm_complete():
    X = (rng(33).standard_normal((BIG, BIG)) * 3).astype(np.float32)
    Y = softmax_big(X)
    e = np.exp(X - X.max(axis=1, keepdims=True))
    np.testing.assert_allclose(Y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    A, B = rng(34).random((2, G, G), dtype=np.float32)
    np.testing.assert_allclose(gemm_big(A, B), A @ B, rtol=1e-5, atol=1e-5)
