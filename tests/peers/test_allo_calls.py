"""Kernel calls and generic kernels from Allo's tests: calls with scalar and array results, calls used as
values, nested calls, ``return kernel(...)``, one generic kernel at several shapes and dtypes in one design.

Sources: cornell-zhang/allo, tests/test_function_calls.py and tests/test_template.py (each test names the
Allo test it ports).
"""
from __future__ import annotations

import numpy as np
import pytest
from peers_util import floats, ints, needs_gxx

import streamdsl as sd
from streamdsl import f32, i32

L = 16


@sd.kernel
def softmax_p1(QK_in: f32[L, L], i_pos: i32) -> f32:
    local_max: f32 = -3.402823466e38
    for j1 in range(L):
        if QK_in[i_pos, j1] > local_max:
            local_max = QK_in[i_pos, j1]
    return local_max


@sd.kernel
def softmax_p2(QK_in: f32[L, L], max_val: f32, i_pos: i32) -> f32[L]:
    exp_buf: f32[L]
    for j2 in range(L):
        exp_buf[j2] = sd.exp(QK_in[i_pos, j2] - max_val)
    return exp_buf


def test_function_calls_with_return_values():
    """test_function_calls.py::test_function_calls_with_return_values: a scalar and an array returned by calls
    inside a loop, the scalar passed on to the second call; in the C++ the results are declared before the
    calls and passed by reference."""
    @sd.kernel
    def top(QK_in: f32[L, L]) -> f32[L, L]:
        QK_out: f32[L, L] = 0.0
        for i_soft in range(L):
            max_val = softmax_p1(QK_in, i_soft)
            exp_buf = softmax_p2(QK_in, max_val, i_soft)
            for j in range(L):
                QK_out[i_soft, j] = exp_buf[j]
        return QK_out

    X = floats((L, L), 1)
    np.testing.assert_allclose(top(X), np.exp(X - X.max(1, keepdims=True)), rtol=1e-6)
    src = sd.schedule(top).build("hls").source
    assert "float max_val;" in src and "softmax_p1(QK_in, i_soft, max_val);" in src
    assert "float exp_buf[16];" in src and "softmax_p2(QK_in, max_val, i_soft, exp_buf);" in src


def test_function_calls_scalar_return_used_as_a_value():
    """test_function_calls.py::test_function_calls_scalar_return: ``result[i] = helper_func(arr[i])``, the call
    inside an expression."""
    @sd.kernel
    def helper_func(x: i32) -> i32:
        return x * 2

    @sd.kernel
    def main_func(arr: i32[10]) -> i32[10]:
        result: i32[10] = 0
        for i in range(10):
            result[i] = helper_func(arr[i]) + 1
        return result

    A = ints(10, seed=2)
    np.testing.assert_array_equal(main_func(A), A * 2 + 1)
    assert "helper_func(" in sd.schedule(main_func).build("hls").source


def test_function_calls_array_return_and_return_of_a_call():
    """test_function_calls.py::test_function_calls_array_return: a kernel whose result is another kernel's,
    written ``return create_array(v)``."""
    @sd.kernel
    def create_array(x: i32) -> i32[5]:
        arr: i32[5] = 0
        for i in range(5):
            arr[i] = x + i
        return arr

    @sd.kernel
    def main_func(input_val: i32) -> i32[5]:
        return create_array(input_val)

    np.testing.assert_array_equal(main_func(7), np.arange(5) + 7)


def test_multiple_and_nested_function_calls():
    """test_function_calls.py::test_multiple_function_calls and ::test_nested_function_calls."""
    @sd.kernel
    def add_one(A: i32[8]) -> i32[8]:
        B: i32[8] = 0
        for i in range(8):
            B[i] = A[i] + 1
        return B

    @sd.kernel
    def twice(A: i32[8]) -> i32[8]:
        return add_one(add_one(A))

    @sd.kernel
    def outer(A: i32[8]) -> (i32[8], i32[8]):
        X = twice(A)
        Y = add_one(X)
        return X, Y

    A = ints(8, seed=3)
    x, y = outer(A)
    np.testing.assert_array_equal(x, A + 2)
    np.testing.assert_array_equal(y, A + 3)


@sd.template("Ty", "M", "K", "N")
def mm(A: "Ty[M, K]", B: "Ty[K, N]") -> "Ty[M, N]":
    C: Ty[M, N] = 0  # noqa: F821 (the template's names)
    for i, j in sd.grid(M, N):  # noqa: F821
        acc: Ty = 0  # noqa: F821
        for k in range(K):  # noqa: F821
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
    return C


def test_template_different_dtypes():
    """test_template.py::test_different_functions: one generic gemm instantiated for f32 and for i32."""
    @sd.kernel
    def top_float(A: f32[8, 8], B: f32[8, 8]) -> f32[8, 8]:
        return mm[f32, 8, 8, 8](A, B)

    @sd.kernel
    def top_int(A: i32[8, 8], B: i32[8, 8]) -> i32[8, 8]:
        return mm[i32, 8, 8, 8](A, B)

    X, Y = floats((8, 8), 4), floats((8, 8), 5)
    np.testing.assert_allclose(top_float(X, Y), X @ Y, rtol=1e-5)
    P, Q = ints((8, 8), -5, 5, seed=6), ints((8, 8), -5, 5, seed=7)
    np.testing.assert_array_equal(top_int(P, Q), P @ Q)
    assert mm[i32, 8, 8, 8] is mm[i32, 8, 8, 8]  # one kernel a binding


def test_template_same_function_at_two_shapes_in_one_design():
    """test_template.py::test_same_function: (M x K)(K x N) then (M x N)(N x P) in one kernel; the two
    instances are named apart for the IR and the C++ (mm_8x16_16x16, mm_8x16_16x4), with the user's name kept."""
    M, K, N, P = 8, 16, 16, 4

    @sd.kernel
    def top(A: f32[M, K], B: f32[K, N], W: f32[N, P]) -> f32[M, P]:
        C = mm[f32, M, K, N](A, B)
        D = mm[f32, M, N, P](C, W)
        return D

    A, B, W = floats((M, K), 8), floats((K, N), 9), floats((N, P), 10)
    np.testing.assert_allclose(top(A, B, W), (A @ B) @ W, rtol=1e-5)
    names = sorted(c.name for c in top.ir.callees)
    assert len(names) == 2 and all(n.startswith("mm_") for n in names)
    assert {c.attrs.get("user_name") for c in top.ir.callees} == {"mm"}
    src = sd.schedule(top).build("hls").source
    assert all(f"void {n}(" in src for n in names)


@needs_gxx
def test_template_two_shapes_csim():
    """test_template.py::test_same_function, C-simulated: both instances are distinct C++ functions."""
    @sd.kernel
    def top(A: i32[4, 8], B: i32[8, 8], W: i32[8, 2]) -> i32[4, 2]:
        C = mm[i32, 4, 8, 8](A, B)
        return mm[i32, 4, 8, 2](C, W)

    A, B, W = ints((4, 8), seed=11), ints((8, 8), seed=12), ints((8, 2), seed=13)
    np.testing.assert_array_equal(sd.schedule(top).build("hls").csim(A, B, W), (A @ B) @ W)


def test_template_arity_is_checked():
    with pytest.raises(sd.KernelTypeError, match="kernel template 'mm' takes 4 value"):
        mm[f32, 8]


def test_in_out_call_from_a_kernel():
    """A callee writing its argument in place (an HLS array argument): the caller sees the update."""
    @sd.kernel
    def bump(A: i32[6], by: i32) -> None:
        for i in range(6):
            A[i] += by

    @sd.kernel
    def caller(A: i32[6]) -> i32[6]:
        B: i32[6] = 0
        for i in range(6):
            B[i] = A[i]
        bump(B, 3)
        bump(B, 4)
        return B

    A = ints(6, seed=14)
    np.testing.assert_array_equal(caller(A), A + 7)
    with pytest.raises(sd.KernelSyntaxError, match="writes its parameter 'A'; call it as a statement"):
        @sd.kernel
        def misuse(A: i32[6]) -> i32:
            x: i32 = bump(A, 1)
            return x
