"""Arithmetic types from Allo's tests: results that widen as ap_int/ap_fixed results do, narrow gemms,
fixed-point shifts, casts, NumPy inputs of any integer dtype whose values fit.

Source: cornell-zhang/allo, tests/test_types.py (each test names the Allo test it ports).  Note that Allo's
``Fixed(W, F)`` counts fraction bits where ``sd.Fixed(W, I)`` counts integer bits (``ap_fixed<W, I>``).
"""
from __future__ import annotations

import numpy as np
import pytest
from peers_util import ints, needs_gxx

import streamdsl as sd
from streamdsl import f32, i32


def test_uint17_sum_widens_to_18_bits():
    """test_types.py::test_uint: UInt(17) + UInt(17) is a UInt(18), in the IR and in the HLS C++."""
    @sd.kernel
    def casting(A: sd.UInt(17)[4, 4]) -> f32[4, 4]:
        B: f32[4, 4] = 0.0
        for i, j in sd.grid(4, 4):
            B[i, j] = sd.cast(A[i, j] + A[j, i], f32)
        return B

    A = ints((4, 4), 0, 1 << 17, seed=1)
    np.testing.assert_array_equal(casting(A), (A + A.T).astype(np.float32))  # 2**17 + 2**17 does not wrap
    src = sd.schedule(casting).build("hls").source
    assert "ap_uint<17>" in src and "ap_uint<18>" in src and "ap_int<" not in src


def test_arbitrary_bitwidth_gemm_in_out():
    """test_types.py::test_arbitrary_bitwidth_gemm: Int(5) inputs accumulated into an Int(14) argument written in
    place; int32 NumPy arrays are accepted since their values fit."""
    @sd.kernel
    def gemm(A: sd.Int(5)[4, 4], B: sd.Int(5)[4, 4], C: sd.Int(14)[4, 4]) -> None:
        for i, j, k in sd.grid(4, 4, 4):
            C[i, j] += A[i, k] * B[k, j]

    A, B = ints((4, 4), -10, 10, seed=2), ints((4, 4), -10, 10, seed=3)
    C = np.zeros((4, 4), np.int32)
    gemm(A, B, C)
    np.testing.assert_array_equal(C, A @ B)


@pytest.mark.parametrize("t_in, t_out, lo, hi", [
    (sd.Int(3), sd.Int(7), -4, 4), (sd.Int(4), sd.Int(8), -4, 4), (sd.Int(5), sd.Int(9), -4, 4),
    (sd.Int(7), sd.Int(16), -4, 4), (sd.Int(8), sd.Int(16), -4, 4),
    (sd.UInt(3), sd.UInt(7), 0, 8), (sd.UInt(4), sd.UInt(8), 0, 8), (sd.UInt(8), sd.UInt(16), 0, 8),
])
def test_arbitrary_bitwidth_gemm_alloc_output(t_in, t_out, lo, hi):
    """test_types.py::test_arbitrary_bitwidth_gemm_alloc_output: one generic gemm at several dtypes; the products
    of narrow inputs widen (an Int(3) product of -4 and -4 is 16, not 0)."""
    def make(ti, to):
        @sd.kernel
        def gemm(A: ti[2, 2], B: ti[2, 2]) -> to[2, 2]:
            C: to[2, 2] = 0
            for i, j, k in sd.grid(2, 2, 2):
                C[i, j] += A[i, k] * B[k, j]
            return C

        return gemm

    A, B = ints((2, 2), lo, hi, seed=4), ints((2, 2), lo, hi, seed=5)
    np.testing.assert_array_equal(make(t_in, t_out)(A, B), A @ B)


def test_narrow_products_and_fixed_products_widen():
    """Issue 24's cases: Fixed(8,5) * Fixed(8,5) holds 64, an Int(3) product does not wrap at 3 bits; the old
    wrap-every-operation result is an explicit cast."""
    @sd.kernel
    def k(A: sd.Fixed(8, 5)[2], X: sd.Int(3)[2]) -> (sd.Fixed(16, 10)[2], sd.Int(6)[2], sd.Int(3)[2]):
        P: sd.Fixed(16, 10)[2] = 0.0
        Q: sd.Int(6)[2] = 0
        W: sd.Int(3)[2] = 0
        for i in range(2):
            P[i] = A[i] * A[i]
            Q[i] = X[i] * X[i]
            W[i] = sd.cast(X[i] * X[i], sd.Int(3))
        return P, Q, W

    p, q, w = k(np.array([8.0, -1.5]), np.array([-4, 3], np.int8))
    np.testing.assert_array_equal(p, [64.0, 2.25])
    np.testing.assert_array_equal(q, [16, 9])
    np.testing.assert_array_equal(w, [0, 1])  # 16 and 9 wrapped at 3 bits


def test_fixed_shift_ug1399_example():
    """test_types.py::test_fixed_shift, UG1399's example: ap_fixed<8, 5> 5.375 << 2 is -10.5 (the bits move and
    wrap), >> 2 is 1.25."""
    @sd.kernel
    def kernel(A: sd.Fixed(8, 5)[2]) -> f32[2]:
        shl: sd.Fixed(25, 10) = A[0] << 2
        shr: sd.Fixed(25, 10) = A[1] >> 2
        res: f32[2] = 0.0
        res[0] = sd.cast(shl, f32)
        res[1] = sd.cast(shr, f32)
        return res

    np.testing.assert_array_equal(kernel(np.array([5.375, 5.375])), [-10.5, 1.25])


@needs_gxx
def test_fixed_shift_csim():
    """test_types.py::test_fixed_shift in C-simulation with the bundled ap_fixed.h."""
    @sd.kernel
    def kernel(A: sd.Fixed(8, 5)[2]) -> sd.Fixed(25, 10)[2]:
        res: sd.Fixed(25, 10)[2] = 0.0
        res[0] = A[0] << 2
        res[1] = A[1] >> 2
        return res

    np.testing.assert_array_equal(sd.schedule(kernel).build("hls").csim(np.array([5.375, 5.375])), [-10.5, 1.25])


def test_int32_float32_casts():
    """test_types.py::test_int32_float32 and ::test_int32_float32_casting."""
    @sd.kernel
    def kernel(a: i32) -> f32:
        b: f32 = sd.cast(sd.cast(1.0, i32), f32)
        c: f32 = sd.cast(a, f32)
        return b + c

    assert kernel(1) == 2.0 and kernel(-7) == -6.0


def test_load_type():
    """test_types.py::test_load_type: int(A[i, j]) + v truncates toward zero."""
    @sd.kernel
    def kernel(A: f32[8, 8]) -> i32[8, 8]:
        B: i32[8, 8] = 0
        v: i32 = 1
        for i, j in sd.grid(8, 8):
            B[i, j] = sd.cast(A[i, j], i32) + v
        return B

    A = np.random.default_rng(6).uniform(-5, 5, (8, 8)).astype(np.float32)
    np.testing.assert_array_equal(kernel(A), A.astype(np.int32) + 1)


@pytest.mark.parametrize("ty, values", [(sd.Int(5), [2, -3]), (sd.UInt(4), [2, 0]), (f32, [-1.3, 2.5])])
def test_compare_int_float(ty, values):
    """test_types.py::test_compare_int_float: one kernel at three types; A + 1 < 0.0 compares in f32."""
    def make(T):
        @sd.kernel
        def kernel(A: T) -> T:
            B: T = 0
            if A > B or A + 1 < 0.0:
                B = A
            return B

        return kernel

    k = make(ty)
    for a in values:
        assert k(a) == (a if (a > 0 or a + 1 < 0) else 0)


def test_select_typing():
    """test_types.py::test_select_typing: a select of an f32 and an i32 is an f32."""
    @sd.kernel
    def kernel(flt: f32, itg: i32) -> f32:
        res: f32 = flt if flt > 0.0 else itg
        return res

    assert kernel(1.5, 3) == 1.5 and kernel(-1.0, 3) == 3.0
    assert "select(" in str(kernel.ir) and "cast<f32>(itg)" in str(kernel.ir)


def test_saturating_fixed_point_assignment():
    """Assignment to a declared fixed type rounds and saturates by its modes (ap_fixed<8, 4, AP_RND, AP_SAT>)."""
    @sd.kernel
    def kernel(A: f32[4]) -> sd.Fixed(8, 4, "rnd", "sat")[4]:
        B: sd.Fixed(8, 4, "rnd", "sat")[4] = 0.0
        for i in range(4):
            B[i] = A[i]
        return B

    np.testing.assert_array_equal(kernel(np.array([100.0, -100.0, 0.03125, -0.03125], np.float32)),
                                  [7.9375, -8.0, 0.0625, 0.0])


def test_numpy_input_out_of_range_is_a_located_error():
    """An int32 array for an Int(5) parameter is accepted when its values fit, refused (at the call) otherwise."""
    @sd.kernel
    def kernel(A: sd.Int(5)[3]) -> sd.Int(6)[3]:
        B: sd.Int(6)[3] = 0
        for i in range(3):
            B[i] = A[i] + 1
        return B

    np.testing.assert_array_equal(kernel(np.array([-16, 0, 15], np.int32)), [-15, 1, 16])
    with pytest.raises(sd.KernelTypeError, match="holds 16, which i5 cannot hold") as e:
        kernel(np.array([1, 16, 2], np.int64))
    assert e.value.loc is not None and e.value.loc.file == __file__
