"""Small kernels and dataflow functions shared by the dataflow graph tests."""
import streamdsl as sd
from streamdsl import f32, i8
from streamdsl.dfg import dataflow


def make_gemm(n: int):
    @sd.kernel
    def gemm(A: f32[n, n], B: f32[n, n]) -> f32[n, n]:
        C: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            acc: f32 = 0.0
            for k in range(n):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
        return C

    return gemm


def make_relu(n: int, dt=f32):
    @sd.kernel
    def relu(X: dt[n, n]) -> dt[n, n]:
        Y: dt[n, n] = 0
        for i, j in sd.grid(n, n):
            Y[i, j] = sd.max(X[i, j], 0)
        return Y

    return relu


def make_add(n: int):
    @sd.kernel
    def add(X: f32[n, n], Z: f32[n, n]) -> f32[n, n]:
        Y: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            Y[i, j] = X[i, j] + Z[i, j]
        return Y

    return add


def make_scratch(n: int):
    """A kernel with a local scratch tensor (on-chip memory of its own)."""

    @sd.kernel
    def scratch(X: f32[n, n]) -> f32[n, n]:
        T: f32[n, n] = 0.0
        Y: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            T[i, j] = X[i, j] * 2.0
        for i, j in sd.grid(n, n):
            Y[i, j] = T[i, j] + 1.0
        return Y

    return scratch


gemm8, relu8, add8 = make_gemm(8), make_relu(8), make_add(8)
gemm16, relu16 = make_gemm(16), make_relu(16)
relu_i8 = make_relu(32, i8)
relu64 = make_relu(64)
scratch16 = make_scratch(16)


@dataflow
def ffn(x: f32[8, 8], w1: f32[8, 8], w2: f32[8, 8]) -> f32[8, 8]:
    h = gemm8(x, w1)
    r = relu8(h)
    y = gemm8(r, w2)
    return y


@dataflow
def ffn16(x: f32[16, 16], w1: f32[16, 16], w2: f32[16, 16]) -> f32[16, 16]:
    h = gemm16(x, w1)
    r = relu16(h)
    y = gemm16(r, w2)
    return y


@dataflow
def bypass(x: f32[8, 8]) -> f32[8, 8]:
    a = relu8(x)
    b = relu8(a)
    c = add8(a, b)
    return c


@dataflow
def chain4(x: f32[16, 16]) -> f32[16, 16]:
    a = relu16(x)
    b = relu16(a)
    c = relu16(b)
    d = relu16(c)
    return d


@dataflow
def relu_then_gemm(x: f32[16, 16], w: f32[16, 16]) -> f32[16, 16]:
    r = relu16(x)
    y = gemm16(r, w)
    return y


@dataflow
def int8_relu(x: i8[32, 32]) -> i8[32, 32]:
    y = relu_i8(x)
    return y


@dataflow
def big_relu(x: f32[64, 64]) -> f32[64, 64]:
    y = relu64(x)
    return y


@dataflow
def with_scratch(x: f32[16, 16]) -> f32[16, 16]:
    a = relu16(x)
    b = scratch16(a)
    c = relu16(b)
    return c


@dataflow
def two_readers(x: f32[8, 8]) -> (f32[8, 8], f32[8, 8]):
    a = relu8(x)
    b = relu8(a)
    c = relu8(a)
    return b, c
