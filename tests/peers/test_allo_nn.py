"""Neural-network operators from Allo's tests, written as generic kernels in streamdsl.

Source: cornell-zhang/allo, tests/test_nn.py (each test names the Allo test it ports; Allo takes these from its
``allo.library.nn``, written here as a user would).  Results against NumPy.
"""
from __future__ import annotations

import numpy as np
from peers_util import needs_gxx

import streamdsl as sd
from streamdsl import f32, i8, i32

rng = np.random.default_rng(7)


@sd.template("M", "N", "K")
def linear2d(X: "f32[M, K]", W: "f32[N, K]", b: "f32[N]") -> "f32[M, N]":
    Z: f32[M, N] = 0.0  # noqa: F821
    for i, j in sd.grid(M, N):  # noqa: F821
        acc: f32 = b[j]
        for k in range(K):  # noqa: F821
            acc += X[i, k] * W[j, k]
        Z[i, j] = acc
    return Z


def test_builtin_linear():
    """test_nn.py::test_builtin_linear: Z = X W^T + b."""
    X, W, b = (rng.standard_normal(s).astype(np.float32) for s in ((16, 16), (32, 16), (32,)))
    np.testing.assert_allclose(linear2d[16, 32, 16](X, W, b), X @ W.T + b, rtol=1e-4, atol=1e-5)


def test_cascaded_linear():
    """test_nn.py::test_cascaded_linear: two linears of one template at two shapes, chained in one kernel."""
    @sd.kernel
    def cascaded(X: f32[16, 32], W0: f32[16, 32], b0: f32[16], W1: f32[10, 16], b1: f32[10]) -> f32[16, 10]:
        H = linear2d[16, 16, 32](X, W0, b0)
        return linear2d[16, 10, 16](H, W1, b1)

    X, W0, b0, W1, b1 = (rng.standard_normal(s).astype(np.float32) for s in ((16, 32), (16, 32), (16,), (10, 16),
                                                                             (10,)))
    np.testing.assert_allclose(cascaded(X, W0, b0, W1, b1), (X @ W0.T + b0) @ W1.T + b1, rtol=1e-4, atol=1e-4)


def test_int8_linear_accumulates_in_int32():
    """test_nn.py::test_linear: int8 inputs and weights; the products widen and sum in int32."""
    @sd.kernel
    def qlinear(X: i8[8, 8], W: i8[8, 32]) -> i32[8, 32]:
        C: i32[8, 32] = 0
        for i, j, k in sd.grid(8, 32, 8):
            C[i, j] += X[i, k] * W[k, j]  # i8 * i8 is an i16: no wrap before the sum
        return C

    X = rng.integers(-128, 128, (8, 8)).astype(np.int8)
    W = rng.integers(-128, 128, (8, 32)).astype(np.int8)
    np.testing.assert_array_equal(qlinear(X, W), X.astype(np.int32) @ W.astype(np.int32))


def test_softmax_and_layernorm():
    """test_nn.py::test_softmax and ::test_layernorm."""
    @sd.kernel
    def softmax(X: f32[4, 16]) -> f32[4, 16]:
        Y: f32[4, 16] = 0.0
        for i in range(4):
            m: f32 = -3.0e38
            for j in range(16):
                m = max(m, X[i, j])
            s: f32 = 0.0
            for j in range(16):
                Y[i, j] = sd.exp(X[i, j] - m)
                s += Y[i, j]
            for j in range(16):
                Y[i, j] = Y[i, j] / s
        return Y

    @sd.kernel
    def layernorm(X: f32[4, 16], g: f32[16], b: f32[16]) -> f32[4, 16]:
        Y: f32[4, 16] = 0.0
        for i in range(4):
            mean: f32 = 0.0
            for j in range(16):
                mean += X[i, j]
            mean = mean / 16.0
            var: f32 = 0.0
            for j in range(16):
                var += (X[i, j] - mean) * (X[i, j] - mean)
            var = var / 16.0
            for j in range(16):
                Y[i, j] = (X[i, j] - mean) * sd.rsqrt(var + 1e-5) * g[j] + b[j]
        return Y

    X = rng.standard_normal((4, 16)).astype(np.float32)
    e = np.exp(X - X.max(1, keepdims=True))
    np.testing.assert_allclose(softmax(X), e / e.sum(1, keepdims=True), rtol=1e-5)
    g, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    want = (X - X.mean(1, keepdims=True)) / np.sqrt(X.var(1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(layernorm(X, g, b), want, rtol=1e-4, atol=1e-5)


def test_gelu_and_relu():
    """test_nn.py::test_gelu and ::test_relu2d."""
    @sd.kernel
    def gelu(X: f32[8, 8]) -> (f32[8, 8], f32[8, 8]):
        G: f32[8, 8] = 0.0
        R: f32[8, 8] = 0.0
        for i, j in sd.grid(8, 8):
            x: f32 = X[i, j]
            G[i, j] = 0.5 * x * (1.0 + sd.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
            R[i, j] = max(x, 0.0)
        return G, R

    X = rng.standard_normal((8, 8)).astype(np.float32)
    g, r = gelu(X)
    np.testing.assert_allclose(g, 0.5 * X * (1 + np.tanh(0.7978845608 * (X + 0.044715 * X ** 3))), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(r, np.maximum(X, 0))


def _padded(A, P, value):
    return np.pad(A, ((0, 0), (0, 0), (P, P), (P, P)), constant_values=value)


def test_conv2d_nchw_stride_and_padding():
    """test_nn.py::test_conv2d: N, C, H, W = 1, 3, 16, 16, a 2x2 kernel, stride 2, padding 1 (a padded copy)."""
    N, C, H, W, F, K, S, P = 1, 3, 16, 16, 2, 2, 2, 1
    Oh, Ow = (H + 2 * P - K) // S + 1, (W + 2 * P - K) // S + 1

    @sd.kernel
    def conv2d(X: f32[N, C, H, W], Wt: f32[F, C, K, K], b: f32[F]) -> f32[N, F, Oh, Ow]:
        Xp: f32[N, C, H + 2 * P, W + 2 * P] = 0.0
        for n, c, h, w in sd.grid(N, C, H, W):
            Xp[n, c, h + P, w + P] = X[n, c, h, w]
        Y: f32[N, F, Oh, Ow] = 0.0
        for n, f, oh, ow in sd.grid(N, F, Oh, Ow):
            acc: f32 = b[f]
            for c, kh, kw in sd.grid(C, K, K):
                acc += Xp[n, c, oh * S + kh, ow * S + kw] * Wt[f, c, kh, kw]
            Y[n, f, oh, ow] = acc
        return Y

    X = rng.standard_normal((N, C, H, W)).astype(np.float32)
    Wt = rng.standard_normal((F, C, K, K)).astype(np.float32)
    b = rng.standard_normal(F).astype(np.float32)
    Xp = _padded(X, P, 0.0)
    want = np.zeros((N, F, Oh, Ow), np.float32)
    for oh, ow in np.ndindex(Oh, Ow):
        win = Xp[:, :, oh * S:oh * S + K, ow * S:ow * S + K]
        want[:, :, oh, ow] = np.einsum("nchw,fchw->nf", win, Wt) + b
    np.testing.assert_allclose(conv2d(X, Wt, b), want, rtol=1e-4, atol=1e-4)


@needs_gxx
def test_maxpool2d_csim():
    """test_nn.py::test_maxpool2d: a 2x2 max pool, stride 2, padding 1 (padded with -inf), C-simulated."""
    N, C, H, W, K, S, P = 1, 3, 16, 16, 2, 2, 1
    Oh, Ow = (H + 2 * P - K) // S + 1, (W + 2 * P - K) // S + 1

    @sd.kernel
    def maxpool2d(X: f32[N, C, H, W]) -> f32[N, C, Oh, Ow]:
        Xp: f32[N, C, H + 2 * P, W + 2 * P] = -3.0e38
        for n, c, h, w in sd.grid(N, C, H, W):
            Xp[n, c, h + P, w + P] = X[n, c, h, w]
        Y: f32[N, C, Oh, Ow] = 0.0
        for n, c, oh, ow in sd.grid(N, C, Oh, Ow):
            m: f32 = -3.0e38
            for kh, kw in sd.grid(K, K):
                m = max(m, Xp[n, c, oh * S + kh, ow * S + kw])
            Y[n, c, oh, ow] = m
        return Y

    X = rng.standard_normal((N, C, H, W)).astype(np.float32)
    Xp = _padded(X, P, -3.0e38)
    want = Xp.reshape(N, C, Oh, S, Ow, S).max(axis=(3, 5))
    np.testing.assert_array_equal(maxpool2d(X), want)
    np.testing.assert_array_equal(sd.schedule(maxpool2d).build("hls").csim(X), want)


def test_avgpool2d():
    """test_nn.py::test_avgpool2d: a 2x2 average pool, stride 2, padding 1 (zeros)."""
    N, C, H, W, K, S, P = 1, 3, 16, 16, 2, 2, 1
    Oh, Ow = (H + 2 * P - K) // S + 1, (W + 2 * P - K) // S + 1

    @sd.kernel
    def avgpool2d(X: f32[N, C, H, W]) -> f32[N, C, Oh, Ow]:
        Xp: f32[N, C, H + 2 * P, W + 2 * P] = 0.0
        for n, c, h, w in sd.grid(N, C, H, W):
            Xp[n, c, h + P, w + P] = X[n, c, h, w]
        Y: f32[N, C, Oh, Ow] = 0.0
        for n, c, oh, ow in sd.grid(N, C, Oh, Ow):
            s: f32 = 0.0
            for kh, kw in sd.grid(K, K):
                s += Xp[n, c, oh * S + kh, ow * S + kw]
            Y[n, c, oh, ow] = s / 4.0
        return Y

    X = rng.standard_normal((N, C, H, W)).astype(np.float32)
    want = _padded(X, P, 0.0).reshape(N, C, Oh, S, Ow, S).mean(axis=(3, 5))
    np.testing.assert_allclose(avgpool2d(X), want, rtol=1e-5, atol=1e-6)
