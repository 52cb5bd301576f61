"""Kernels of the HLStrans dataset (zanehpn/HLStrans: PolyBench and small kernels with the Vitis HLS reports of
their "slow" variants), written in the DSL with the loops, sizes and types of the C source the report was built
from (``published.json`` cites each). No pragma is added: the sources have none, so every pipeline, unroll and
flattening in the reports is Vitis's own.

As in ``kernels_lap.py``: an array the C source takes and writes (an ``inout`` or output port) is a result the
kernel writes (and reads) in place; with ap_memory ports it is the caller's RAM, so the model gives it no
storage. Scalar arguments the C source never reads (``int tsteps, int n``) are left out. A loop that counts
down is written counting up with the index reversed (the same accesses in the same order). The small
functions a source calls are inlined, as Vitis inlined them (the reports list only the top's loops).
"""
from __future__ import annotations

import streamdsl as sd
from streamdsl import f32, f64, i32


@sd.kernel
def atax16(A: i32[16, 16], x: i32[16]) -> i32[16]:
    y: i32[16]  # a local of the top, kept in LUTRAM (the report's y_U, ram_s2p)
    y_out: i32[16]
    for i in range(16):
        y[i] = 0
        for j in range(16):
            y[i] += A[i, j] * x[j]
    for j in range(16):
        y_out[j] = 0
        for i in range(16):
            y_out[j] += A[i, j] * y[i]
    return y_out


# program_source/polybench: N = 64 float kernels that copy their ports into local buffers (lprd), compute (lp)
# and write the result back (lpwr)

@sd.kernel
def atax(A: f32[64, 64], x: f32[64]) -> f32[64]:
    y_out: f32[64]
    buff_A: f32[64, 64]
    buff_x: f32[64]
    buff_y_out: f32[64]
    tmp1: f32[64]
    for i in range(64):  # lprd_1
        buff_x[i] = x[i]
        buff_y_out[i] = 0.0
        tmp1[i] = 0.0
        for j in range(64):
            buff_A[i, j] = A[i, j]
    for i in range(64):  # lp1
        for j in range(64):
            tmp1[i] = tmp1[i] + buff_A[i, j] * buff_x[j]
    for i in range(64):  # lp3
        for j in range(64):
            buff_y_out[j] = buff_y_out[j] + buff_A[i, j] * tmp1[i]
    for i in range(64):  # lpwr_1
        y_out[i] = buff_y_out[i]
    return y_out


@sd.kernel
def mvt(A: f32[64, 64], x1: f32[64], x2: f32[64], y1: f32[64], y2: f32[64]) -> (f32[64], f32[64]):
    x1_out: f32[64]
    x2_out: f32[64]
    buff_A: f32[64, 64]
    buff_x1: f32[64]
    buff_x2: f32[64]
    buff_y1: f32[64]
    buff_y2: f32[64]
    for i in range(64):  # lprd_1
        buff_x1[i] = x1[i]
        buff_x2[i] = x2[i]
        buff_y1[i] = y1[i]
        buff_y2[i] = y2[i]
        for j in range(64):
            buff_A[i, j] = A[i, j]
    for i in range(64):  # lp1
        for j in range(64):
            buff_x1[i] = buff_x1[i] + buff_A[i, j] * buff_y1[j]
    for i in range(64):  # lp3
        for j in range(64):
            buff_x2[i] = buff_x2[i] + buff_A[j, i] * buff_y2[j]
    for i in range(64):  # lpwr
        x1_out[i] = buff_x1[i]
        x2_out[i] = buff_x2[i]
    return x1_out, x2_out


@sd.kernel
def gesummv(alpha: f32, beta: f32, A: f32[64, 64], B: f32[64, 64], x: f32[64]) -> f32[64]:
    y_out: f32[64]
    buff_A: f32[64, 64]
    buff_B: f32[64, 64]
    buff_x: f32[64]
    buff_y_out: f32[64]
    tmp1: f32[64]
    tmp2: f32[64]
    for i in range(64):  # lprd_1
        buff_x[i] = x[i]
        tmp1[i] = 0.0
        tmp2[i] = 0.0
        buff_y_out[i] = 0.0
        for j in range(64):
            buff_A[i, j] = A[i, j]
            buff_B[i, j] = B[i, j]
    for i in range(64):  # lp1
        for j in range(64):
            tmp1[i] += alpha * buff_A[i, j] * buff_x[j]
    for i in range(64):  # lp3
        for j in range(64):
            tmp2[i] += beta * buff_B[i, j] * buff_x[j]
    for i in range(64):  # lp5
        buff_y_out[i] = tmp1[i] + tmp2[i]
    for i in range(64):  # lpwr
        y_out[i] = buff_y_out[i]
    return y_out


@sd.kernel
def gemm(alpha: f32, beta: f32, A: f32[64, 64], B: f32[64, 64], C: f32[64, 64]) -> f32[64, 64]:
    D_out: f32[64, 64]
    buff_A: f32[64, 64]
    buff_B: f32[64, 64]
    buff_C: f32[64, 64]
    tmp1: f32[64, 64]
    for i in range(64):  # lprd_1
        for j in range(64):
            buff_A[i, j] = A[i, j]
            buff_B[i, j] = B[i, j]
            buff_C[i, j] = C[i, j]
            tmp1[i, j] = 0.0
    for i in range(64):  # lp1
        for j in range(64):
            for k in range(64):
                tmp1[i, j] = alpha * buff_A[i, k] * buff_B[k, j] + tmp1[i, j]
    for i in range(64):  # lp4
        for j in range(64):
            buff_C[i, j] = beta * buff_C[i, j] + tmp1[i, j]
    for i in range(64):  # lpwr_1
        for j in range(64):
            D_out[i, j] = buff_C[i, j]
    return D_out


@sd.kernel
def k2mm(alpha: f32, beta: f32, A: f32[64, 64], B: f32[64, 64], C: f32[64, 64], D: f32[64, 64]) -> f32[64, 64]:
    E_out: f32[64, 64]
    buff_A: f32[64, 64]
    buff_B: f32[64, 64]
    buff_C: f32[64, 64]
    buff_D: f32[64, 64]
    buff_E_out: f32[64, 64]
    tmp1: f32[64, 64]
    tmp2: f32[64, 64]
    for i in range(64):  # lprd_1
        for j in range(64):
            buff_A[i, j] = A[i, j]
            buff_B[i, j] = B[i, j]
            buff_C[i, j] = C[i, j]
            buff_D[i, j] = D[i, j]
            buff_E_out[i, j] = 0.0
            tmp1[i, j] = 0.0
            tmp2[i, j] = 0.0
    for i in range(64):  # lp1
        for j in range(64):
            for k in range(64):
                tmp1[i, j] += alpha * buff_A[i, k] * buff_B[k, j]
    for i in range(64):  # lp4
        for j in range(64):
            for k in range(64):
                tmp2[i, j] += tmp1[i, k] * buff_C[k, j]
    for i in range(64):  # lp7
        for j in range(64):
            buff_E_out[i, j] = tmp2[i, j] + beta * buff_D[i, j]
    for i in range(64):  # lpwr_1
        for j in range(64):
            E_out[i, j] = buff_E_out[i, j]
    return E_out


@sd.kernel
def syrk(alpha: f32, beta: f32, A: f32[64, 64], B: f32[64, 64]) -> f32[64, 64]:
    C_out: f32[64, 64]
    buff_A0: f32[64, 64]
    buff_A1: f32[64, 64]
    buff_B: f32[64, 64]
    buff_C_out: f32[64, 64]
    for i in range(64):  # lprd_1
        for j in range(64):
            buff_A0[i, j] = A[i, j]
            buff_A1[i, j] = A[i, j]
            buff_B[i, j] = B[i, j]
            buff_C_out[i, j] = 0.0
    for i in range(64):  # lp1
        for j in range(64):
            for k in range(64):
                buff_C_out[i, j] += alpha * buff_A0[i, k] * buff_A1[j, k]
    for i in range(64):  # lp4
        for j in range(64):
            buff_C_out[i, j] += beta * buff_B[i, j]
    for i in range(64):  # lpwr_1
        for j in range(64):
            if j > i:
                C_out[i, j] = 0.0
            else:
                C_out[i, j] = buff_C_out[i, j]
    return C_out


# program_source/polybench: PolyBench/C kernels on the arrays of their ports, double precision

@sd.kernel
def jacobi_1d() -> (f64[120], f64[120]):
    A: f64[120]  # inout
    B: f64[120]  # inout
    for t in range(40):
        for i in range(1, 119):
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])
        for i in range(1, 119):
            A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1])
    return A, B


@sd.kernel
def heat_3d() -> (f64[20, 20, 20], f64[20, 20, 20]):
    A: f64[20, 20, 20]  # inout
    B: f64[20, 20, 20]  # inout
    for t in range(40):
        for i in range(1, 19):
            for j in range(1, 19):
                for k in range(1, 19):
                    B[i, j, k] = 0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k]) \
                        + 0.125 * (A[i, j + 1, k] - 2.0 * A[i, j, k] + A[i, j - 1, k]) \
                        + 0.125 * (A[i, j, k + 1] - 2.0 * A[i, j, k] + A[i, j, k - 1]) + A[i, j, k]
        for i in range(1, 19):
            for j in range(1, 19):
                for k in range(1, 19):
                    A[i, j, k] = 0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k]) \
                        + 0.125 * (B[i, j + 1, k] - 2.0 * B[i, j, k] + B[i, j - 1, k]) \
                        + 0.125 * (B[i, j, k + 1] - 2.0 * B[i, j, k] + B[i, j, k - 1]) + B[i, j, k]
    return A, B


@sd.kernel
def fdtd_2d(fict: f64[40]) -> (f64[60, 80], f64[60, 80], f64[60, 80]):
    ex: f64[60, 80]  # inout
    ey: f64[60, 80]  # inout
    hz: f64[60, 80]  # inout
    for t in range(40):
        for j in range(80):
            ey[0, j] = fict[t]
        for i in range(1, 60):
            for j in range(80):
                ey[i, j] = ey[i, j] - 0.5 * (hz[i, j] - hz[i - 1, j])
        for i in range(60):
            for j in range(1, 80):
                ex[i, j] = ex[i, j] - 0.5 * (hz[i, j] - hz[i, j - 1])
        for i in range(59):
            for j in range(79):
                hz[i, j] = hz[i, j] - 0.7 * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])
    return ex, ey, hz


@sd.kernel
def doitgen(C4: f64[30, 30]) -> (f64[25, 20, 30], f64[30]):
    A: f64[25, 20, 30]  # inout
    sm: f64[30]  # inout (the C source's sum)
    for r in range(25):
        for q in range(20):
            for p in range(30):
                sm[p] = 0.0
                for s in range(30):
                    sm[p] += A[r, q, s] * C4[s, p]
            for p in range(30):
                A[r, q, p] = sm[p]
    return A, sm


@sd.kernel
def covariance(float_n: f64) -> (f64[100, 80], f64[80, 80], f64[80]):
    data: f64[100, 80]  # inout
    cov: f64[80, 80]  # inout
    mean: f64[80]  # inout
    for j in range(80):
        mean[j] = 0.0
        for i in range(100):
            mean[j] += data[i, j]
        mean[j] /= float_n
    for i in range(100):
        for j in range(80):
            data[i, j] -= mean[j]
    for i in range(80):
        for j in range(i, 80):
            cov[i, j] = 0.0
            for k in range(100):
                cov[i, j] += data[k, i] * data[k, j]
            cov[i, j] /= float_n - 1.0
            cov[j, i] = cov[i, j]
    return data, cov, mean


@sd.kernel
def seidel_2d() -> f64[120, 120]:
    A: f64[120, 120]  # inout
    for t in range(40):
        for i in range(1, 119):
            for j in range(1, 119):
                A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1] + A[i, j - 1] + A[i, j] + A[i, j + 1]
                           + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) / 9.0
    return A


@sd.kernel
def trisolv(L: f64[40, 40], b: f64[40]) -> f64[40]:
    x: f64[40]  # output
    for i in range(40):
        x[i] = b[i]
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] = x[i] / L[i, i]
    return x


@sd.kernel
def durbin(r: f64[40]) -> f64[40]:
    y: f64[40]  # output
    z: f64[40]
    y[0] = -r[0]
    beta: f64 = 1.0
    alpha: f64 = -r[0]
    for k in range(1, 40):
        beta = (1.0 - alpha * alpha) * beta
        sm: f64 = 0.0
        for i in range(k):
            sm += r[k - i - 1] * y[i]
        alpha = -(r[k] + sm) / beta
        for i in range(k):
            z[i] = y[i] + alpha * y[k - i - 1]
        for i in range(k):
            y[i] = z[i]
        y[k] = alpha
    return y


@sd.kernel
def lu() -> f64[40, 40]:
    A: f64[40, 40]  # inout
    for i in range(40):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] /= A[j, j]
        for j in range(i, 40):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]
    return A


@sd.kernel
def fir(inp: i32, taps: i32[20]) -> i32:
    delay_lane: i32[20]  # a static array of the C source: a local RAM kept across calls
    result: i32 = 0
    for n in range(19):  # i = 19 .. 1
        delay_lane[19 - n] = delay_lane[18 - n]
    delay_lane[0] = inp
    for i in range(20):
        result += delay_lane[i] * taps[i]
    return result


@sd.kernel
def histogram(inp: i32[10240]) -> i32[256]:
    hist: i32[256]  # inout
    for i in range(10240):
        val: i32 = inp[i]
        hist[val] = hist[val] + 1
    return hist


KERNELS = {"atax16": atax16, "atax": atax, "mvt": mvt, "gesummv": gesummv, "gemm": gemm, "k2mm": k2mm,
           "syrk": syrk, "jacobi_1d": jacobi_1d, "heat_3d": heat_3d, "fdtd_2d": fdtd_2d, "doitgen": doitgen,
           "covariance": covariance, "seidel_2d": seidel_2d, "trisolv": trisolv, "durbin": durbin, "lu": lu,
           "fir": fir, "histogram": histogram}


def scheduled(name: str):
    """The kernel's IR as the report's project built it: ap_memory ports (the Vivado IP flow), no directive."""
    s = sd.schedule(KERNELS[name])
    s.interface("ap_memory")
    return s.ir
