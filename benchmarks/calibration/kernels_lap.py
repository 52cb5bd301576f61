"""PolyBench and Dynamatic kernels of the LAP HLS benchmarks (EPFL), written in the DSL with the loops, sizes,
int types and ap_memory ports of their C sources (``published.json`` cites each source file and report).

The C sources update some arrays in place (``inout`` ports); the DSL has no inout parameters, so such an
array is a result that the kernel reads and updates in place (one memory, the same accesses; its initial
contents are not the caller's). A scalar ``return`` is a scalar result. No pragma is added: the reports say
"No pragmas found", so every pipeline and unroll in them is Vitis's own.
"""
from __future__ import annotations

import streamdsl as sd
from streamdsl import i32


@sd.kernel
def fir(d_i: i32[1000], idx: i32[1000]) -> i32:
    tmp: i32 = 0
    for i in range(1000):
        tmp += idx[i] * d_i[999 - i]
    return tmp


@sd.kernel
def matvec(M: i32[30, 30], V: i32[30]) -> (i32[30], i32):
    Out: i32[30]
    tmp: i32 = 0
    for i in range(30):
        tmp = 0
        for j in range(30):
            tmp += V[j] * M[i, j]
        Out[i] = tmp
    return Out, tmp


@sd.kernel
def atax(A: i32[20, 20], x: i32[20]) -> (i32[20], i32[20], i32):
    y: i32[20]  # inout in the C source
    tmp: i32[20]  # inout
    for i in range(20):
        t: i32 = tmp[i]
        for j in range(20):
            t = t + A[i, j] * x[j]
        for j in range(20):
            y[j] = y[j] + A[i, j] * t
        tmp[i] = t
    return y, tmp, 20


@sd.kernel
def bicg(A: i32[30, 30], p: i32[30], r: i32[30]) -> (i32[30], i32[30], i32):
    s: i32[30]  # inout
    q: i32[30]  # inout
    tmp_q: i32 = 0
    for i in range(30):
        tmp_q = q[i]
        for j in range(30):
            tmp: i32 = A[i, j]
            s[j] = s[j] + r[i] * tmp
            tmp_q = tmp_q + tmp * p[j]
        q[i] = tmp_q
    return s, q, tmp_q


@sd.kernel
def covariance() -> (i32[32, 32], i32[32, 32], i32):
    data: i32[32, 32]  # inout
    cov: i32[32, 32]
    for j in range(32):
        m: i32 = 0
        for i in range(32):
            m += data[i, j]
        m *= 2
        for i in range(32):
            data[i, j] = data[i, j] - m
    for i in range(32):
        for j in range(i, 32):
            c: i32 = 0
            for k in range(32):
                c += data[k, i] * data[k, j]
            c *= 2
            cov[i, j] = c
    return data, cov, 32


@sd.kernel
def jacobi_1d(A_1: i32[100]) -> (i32[100], i32[100], i32):
    A_2: i32[100]
    B: i32[100]  # inout
    for t in range(3):
        for i in range(1, 99):
            B[i] = 3 * (A_1[i - 1] + A_1[i] + A_1[i + 1])
        for j in range(1, 99):
            A_2[j] = B[j]
    return A_2, B, 3


@sd.kernel
def kernel_2mm(alpha: i32, beta: i32, A: i32[10, 10], B: i32[10, 10], C: i32[10, 10]) -> (i32[10, 10], i32[10, 10]):
    tmp: i32[10, 10]  # inout
    D: i32[10, 10]  # inout
    for i in range(10):
        for j in range(10):
            tmp[i, j] = 0
            for k in range(10):
                tmp[i, j] += alpha * A[i, k] * B[k, j]
    for i in range(10):
        for j in range(10):
            D[i, j] *= beta
            for k in range(10):
                D[i, j] += tmp[i, k] * C[k, j]
    return tmp, D


@sd.kernel
def get_tanh(addr: i32[1000]) -> (i32[1000], i32):
    A: i32[1000]  # inout
    result: i32 = 0
    for i in range(1000):
        address: i32 = addr[i]
        beta: i32 = A[address]
        if beta >= 1:
            result = 1
        else:
            result = (beta * beta + 19) * beta * beta + 3 * beta
        A[address] = result
    return A, result


@sd.kernel
def stencil_2d(orig: i32[900], filt: i32[10]) -> (i32[900], i32):
    sol: i32[900]
    temp: i32 = 0
    for r in range(28):
        for c in range(28):
            temp = 0
            for k1 in range(3):
                for k2 in range(3):
                    temp += filt[k1 * 3 + k2] * orig[(r + k1) * 30 + c + k2]
            sol[r * 30 + c] = temp
    return sol, temp


# the xck24 (Zynq UltraScale+) builds of the same suite: their atax and bicg differ from the ones above only by a
# void top (no ap_return port, which the model does not price), so they are the same kernels; their 2mm keeps its
# sum in a scalar


@sd.kernel
def kernel_2mm_zu(alpha: i32, beta: i32, A: i32[10, 10], B: i32[10, 10], C: i32[10, 10]) -> (
        i32[10, 10], i32[10, 10], i32):
    tmp: i32[10, 10]  # inout
    D: i32[10, 10]  # inout
    for i in range(10):
        for j in range(10):
            x: i32 = tmp[i, j]
            for k in range(10):
                x += alpha * A[i, k] * B[k, j]
            tmp[i, j] = x
    for i in range(10):
        for j in range(10):
            y: i32 = D[i, j] * beta
            for k in range(10):
                y += tmp[i, k] * C[k, j]
            D[i, j] = y
    return tmp, D, 10


KERNELS = {"fir": fir, "matvec": matvec, "atax": atax, "bicg": bicg, "covariance": covariance,
           "jacobi_1d": jacobi_1d, "2mm": kernel_2mm, "getTanh": get_tanh, "stencil_2d": stencil_2d,
           "atax_zu": atax, "bicg_zu": bicg, "2mm_zu": kernel_2mm_zu}


def scheduled(name: str):
    """The kernel's IR as the report's project built it: ap_memory ports, no directive."""
    s = sd.schedule(KERNELS[name])
    s.interface("ap_memory")
    return s.ir
