"""Kernels from Allo's front-end tests, written in streamdsl as an Allo user would write them.

Source: cornell-zhang/allo, tests/test_builder.py (each test names the Allo test it ports).  Results are
checked against NumPy; nothing here copies Allo's code.
"""
from __future__ import annotations

import numpy as np
from peers_util import floats, ints, needs_gxx

import streamdsl as sd
from streamdsl import f32, i32


def test_grid_for_gemm_split_reorder_and_csim():
    """test_builder.py::test_grid_for_gemm: split i and j by 8, reorder to (i_o, j_o, i_i, j_i, k), run, and
    C-simulate the HLS."""
    @sd.kernel
    def gemm(A: i32[32, 32], B: i32[32, 32]) -> i32[32, 32]:
        C: i32[32, 32] = 0
        for i, j, k in sd.grid(32, 32, 32):
            C[i, j] += A[i, k] * B[k, j]
        return C

    s = sd.schedule(gemm)
    io, ii = s.split(s.loop("i"), 8)
    jo, ji = s.split(s.loop("j"), 8)
    s.reorder(io, jo, ii, ji)
    assert [lp.var for lp in s.loops()] == ["i_o", "j_o", "i_i", "j_i", "k"]
    A, B = ints((32, 32), seed=1), ints((32, 32), seed=2)
    np.testing.assert_array_equal(s(A, B), A @ B)
    src = s.build("hls").source
    assert all(f"L_{v}:" in src for v in ("i_o", "j_o", "i_i", "j_i", "k"))


@needs_gxx
def test_grid_for_gemm_csim():
    """test_builder.py::test_grid_for_gemm, its HLS C-simulation step."""
    @sd.kernel
    def gemm(A: i32[16, 16], B: i32[16, 16]) -> i32[16, 16]:
        C: i32[16, 16] = 0
        for i, j, k in sd.grid(16, 16, 16):
            C[i, j] += A[i, k] * B[k, j]
        return C

    s = sd.schedule(gemm)
    io, ii = s.split(s.loop("i"), 8)
    jo, ji = s.split(s.loop("j"), 8)
    s.reorder(io, jo, ii, ji)
    A, B = ints((16, 16), seed=3), ints((16, 16), seed=4)
    np.testing.assert_array_equal(s.build("hls").csim(A, B), A @ B)


def test_all_gemm_variants():
    """test_builder.py::test_all_gemm: range loops, a float gemm, a scalar accumulator."""
    @sd.kernel
    def range_for_gemm(A: i32[16, 16], B: i32[16, 16]) -> i32[16, 16]:
        C: i32[16, 16] = 0
        for i in range(16):
            for j in range(16):
                for k in range(16):
                    C[i, j] += A[i, k] * B[k, j]
        return C

    @sd.kernel
    def float_gemm(A: f32[16, 16], B: f32[16, 16]) -> f32[16, 16]:
        C: f32[16, 16] = 0.0
        for i in range(16):
            for j in range(16):
                for k in range(16):
                    C[i, j] += A[i, k] * B[k, j]
        return C

    @sd.kernel
    def reduction_gemm(A: i32[16, 16], B: i32[16, 16]) -> i32[16, 16]:
        C: i32[16, 16] = 0
        for i, j in sd.grid(16, 16):
            v: i32 = 0
            for k in range(16):
                v += A[i, k] * B[k, j]
            C[i, j] = v
        return C

    A, B = ints((16, 16), seed=5), ints((16, 16), seed=6)
    np.testing.assert_array_equal(range_for_gemm(A, B), A @ B)
    np.testing.assert_array_equal(reduction_gemm(A, B), A @ B)
    X, Y = floats((16, 16), 7), floats((16, 16), 8)
    np.testing.assert_allclose(float_gemm(X, Y), X @ Y, rtol=1e-5)


def test_range_for_writes_its_argument():
    """test_builder.py::test_range_for: a kernel with no result writing its argument in place."""
    @sd.kernel
    def kernel(A: i32[20]) -> None:
        for i in range(10):
            A[i] = i
        for i in range(10, 20):
            A[i] = i
        for i in range(0, 20, 2):
            A[i] = i * 2

    want = np.arange(20, dtype=np.int32)
    want[::2] *= 2
    A = np.zeros(20, np.int32)
    assert kernel(A) is None
    np.testing.assert_array_equal(A, want)


def test_variable_bound_for():
    """test_builder.py::test_variable_bound_for: bounds from outer loop variables, an in/out accumulation."""
    @sd.kernel
    def kernel(A: i32[10]) -> None:
        for i in range(10):
            for j in range(i + 1, 10):
                for k in range(j * 2, 10):
                    A[k] += i - j

    want = np.zeros(10, np.int64)
    for i in range(10):
        for j in range(i + 1, 10):
            for k in range(j * 2, 10):
                want[k] += i - j
    A = np.zeros(10, np.int32)
    kernel(A)
    np.testing.assert_array_equal(A, want)


def test_nested_if():
    """test_builder.py::test_nested_if: elif chains with a nested if, a scalar result."""
    @sd.kernel
    def kernel(a: i32, b: i32) -> i32:
        r: i32 = 0
        if a == 0:
            r = 1
        elif a == 1:
            r = 2
            if b == 2:
                r = 3
        else:
            r = 4
        return r

    assert [kernel(a, b) for a, b in ((0, 0), (1, 1), (1, 2), (7, 0))] == [1, 2, 3, 4]


def test_logic_and_or():
    """test_builder.py::test_logic_and_or."""
    @sd.kernel
    def kernel(A: i32[3], b: i32) -> i32:
        r: i32 = 0
        if A[0] > 0 and b < 0:
            r = 1
        elif A[1] * 2 <= 1 or b + 1 >= 1:
            r = 2
        elif A[2] != 3:
            r = 3
        return r

    A = np.array([0, 1, 2], np.int32)
    assert [kernel(A, b) for b in (0, 1, -5)] == [2, 2, 3]


def test_multiple_conditions():
    """test_builder.py::test_multiple_conditions: a five-way conjunction."""
    @sd.kernel
    def kernel(A: i32[3], b: i32, c: i32) -> i32:
        r: i32 = 0
        if A[0] > 0 and A[1] > 0 and A[2] > 0 and b > 0 and c > 0:
            r = 1
        return r

    assert kernel(np.array([1, 1, -1], np.int32), 1, 1) == 0
    assert kernel(np.array([1, 1, 1], np.int32), 1, 1) == 1
    assert kernel(np.array([1, 1, 1], np.int32), 1, -1) == 0


def test_select_and_select_cast():
    """test_builder.py::test_select and ::test_select_cast (the second writes its argument)."""
    @sd.kernel
    def select(A: i32[32]) -> i32[32]:
        B: i32[32] = 0
        for i in range(32):
            B[i] = 1 if A[i] % 2 == 0 else 0
        return B

    @sd.kernel
    def select_cast(A: i32[32], B: i32[32]) -> None:
        for i in range(32):
            B[i] = (i * 2) if A[i] % 2 == 0 else 0

    A = ints(32, seed=9)
    np.testing.assert_array_equal(select(A), (A % 2 == 0).astype(np.int32))
    B = np.zeros(32, np.int32)
    select_cast(A, B)
    np.testing.assert_array_equal(B, np.where(A % 2 == 0, np.arange(32) * 2, 0))


def test_unary_and_not():
    """test_builder.py::test_unary and ::test_not."""
    @sd.kernel
    def unary() -> f32:
        v: i32 = 5
        vi: i32 = -(v + 1)
        vf: f32 = -(v + 1.0)
        return +(vi + vf)

    @sd.kernel
    def negate(flag: sd.u1) -> sd.i8:
        X: sd.i8 = 0
        if not flag:
            X = 1
        else:
            X = 0
        return X

    assert unary() == -12.0
    assert negate(True) == 0 and negate(False) == 1


def test_rhs_binaryop():
    """test_builder.py::test_rhs_binaryop: a literal on the left of every operator."""
    @sd.kernel
    def kernel() -> i32[11]:
        v: i32 = 5
        res: i32[11] = 0
        res[0] = 1 + v
        res[1] = 1 - v
        res[2] = v * 3
        res[4] = 6 // v
        res[5] = 6 % v
        res[6] = 1 << v
        res[7] = 64 >> v
        res[8] = 1 & v
        res[9] = 1 | v
        res[10] = res[9]
        return res

    np.testing.assert_array_equal(kernel(), [6, -4, 15, 0, 1, 1, 32, 2, 1, 5, 5])


def test_multiple_returns():
    """test_builder.py::test_multiple_returns_1D and ::test_multiple_returns_4D."""
    M = 6

    @sd.kernel
    def two(A: i32[M], B: i32[M]) -> (i32[M], i32[M]):
        r0: i32[M] = 0
        r1: i32[M] = 0
        for i in range(M):
            r0[i] = A[i] + 1
            r1[i] = B[i] + 1
        return r0, r1

    @sd.kernel
    def three(A: f32[M, M, M, M], C: f32[M, M]) -> (f32[M, M, M, M], f32[M, M, M, M], f32[M, M]):
        r0: f32[M, M, M, M] = 0.0
        r1: f32[M, M, M, M] = 0.0
        for i, j, k, m in sd.grid(M, M, M, M):
            r0[i, j, k, m] = A[i, j, k, m] + 1.0
            r1[i, j, k, m] = A[i, j, k, m] * 2.0
        r2: f32[M, M] = 0.0
        for i, j in sd.grid(M, M):
            r2[i, j] = C[i, j] + 1.0
        return r0, r1, r2

    A, B = ints(M, seed=1), ints(M, seed=2)
    a, b = two(A, B)
    np.testing.assert_array_equal(a, A + 1)
    np.testing.assert_array_equal(b, B + 1)
    X, C = floats((M, M, M, M), 3), floats((M, M), 4)
    x, y, z = three(X, C)
    np.testing.assert_array_equal(x, X + np.float32(1))
    np.testing.assert_array_equal(y, X * np.float32(2))
    np.testing.assert_array_equal(z, C + np.float32(1))


def test_size1_array_and_constexpr_shapes():
    """test_builder.py::test_size1_array and ::test_constexpr: shapes computed from closure constants."""
    M = 10

    @sd.kernel
    def kernel(A: i32[((M + 1) * 2) // 2], X: i32[1]) -> f32[M + 1]:
        res: f32[M + 1] = 0.0
        for i in range(M + 1):
            res[i] = sd.cast(A[i] + 1 + X[0], f32)
        return res

    A = ints(M + 1, seed=4)
    np.testing.assert_array_equal(kernel(A, np.array([3], np.int32)), (A + 4).astype(np.float32))


def test_np_array_from_the_enclosing_scope():
    """test_builder.py::test_np_array: a NumPy array of the enclosing scope is a constant tensor (a ROM)."""
    table = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)

    @sd.kernel
    def kernel(A: i32[2, 3]) -> i32[2, 3]:
        B: i32[2, 3] = 0
        for i, j in sd.grid(2, 3):
            B[i, j] = A[i, j] + table[i, j]
        return B

    A = ints((2, 3), seed=5)
    np.testing.assert_array_equal(kernel(A), A + table)
    assert "static const int32_t table[2][3] = {" in sd.schedule(kernel).build("hls").source


def test_minmax():
    """test_builder.py::test_minmax: Python's min/max and sd.min/sd.max over ints and floats."""
    @sd.kernel
    def kernel(A: f32[8], B: i32[8]) -> (f32[8], i32[8]):
        X: f32[8] = 0.0
        Y: i32[8] = 0
        for i in range(8):
            X[i] = max(A[i], 0.5) + sd.min(A[i], 0.25)
            Y[i] = min(B[i], 4) + sd.max(B[i], 2)
        return X, Y

    A, B = floats(8, 6), ints(8, seed=6)
    x, y = kernel(A, B)
    np.testing.assert_allclose(x, np.maximum(A, 0.5) + np.minimum(A, 0.25), rtol=1e-6)
    np.testing.assert_array_equal(y, np.minimum(B, 4) + np.maximum(B, 2))
