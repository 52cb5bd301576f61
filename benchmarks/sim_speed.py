"""How fast the reference simulator runs real kernels, next to plain NumPy.

Runs gemm 256x256x256, a 1024x1024 row softmax and a 16-channel 64x64 3x3
conv2d on the simulator and as NumPy baselines (``A @ B``, NumPy softmax,
``sliding_window_view`` + ``einsum``), checks that the results agree and
prints the median of 3 timings and the sim/NumPy ratio, measured in the same
run.  There are no timing assertions: the numbers depend on the machine.

Run:  python benchmarks/sim_speed.py
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import streamdsl as sd
from streamdsl import f32

GM = GK = GN = 256
SM, SN = 1024, 1024
CI, H, W, CO, R = 16, 64, 64, 16, 3
OH, OW = H - R + 1, W - R + 1
REPEATS = 3


@sd.kernel
def gemm(A: f32[GM, GK], B: f32[GK, GN]) -> f32[GM, GN]:
    C: f32[GM, GN] = 0.0
    for i, j in sd.grid(GM, GN):
        acc: f32 = 0.0
        for k in range(GK):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
    return C


@sd.kernel
def softmax(X: f32[SM, SN]) -> f32[SM, SN]:
    Y: f32[SM, SN] = 0.0
    for i in range(SM):
        mx: f32 = X[i, 0]
        for j in range(1, SN):
            mx = max(mx, X[i, j])
        s: f32 = 0.0
        for j in range(SN):
            e: f32 = sd.exp(X[i, j] - mx)
            Y[i, j] = e
            s += e
        for j in range(SN):
            Y[i, j] = Y[i, j] / s
    return Y


@sd.kernel
def conv2d(X: f32[CI, H, W], Wt: f32[CO, CI, R, R]) -> f32[CO, OH, OW]:
    Y: f32[CO, OH, OW] = 0.0
    for co, y, x in sd.grid(CO, OH, OW):
        acc: f32 = 0.0
        for ci, ky, kx in sd.grid(CI, R, R):
            acc += X[ci, y + ky, x + kx] * Wt[co, ci, ky, kx]
        Y[co, y, x] = acc
    return Y


def np_softmax(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_conv2d(X, Wt):
    win = np.lib.stride_tricks.sliding_window_view(X, (R, R), axis=(1, 2))
    return np.einsum("chwyx,ocyx->ohw", win, Wt, optimize=True)


def median_time(fn, *args):
    fn(*args)  # warm up (BLAS thread pools, caches)
    times, out = [], None
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    rng = np.random.default_rng(0)
    cases = [
        ("gemm 256x256x256", gemm, lambda A, B: A @ B,
         (rng.random((GM, GK), dtype=np.float32), rng.random((GK, GN), dtype=np.float32))),
        ("softmax 1024x1024", softmax, np_softmax,
         (4 * rng.standard_normal((SM, SN), dtype=np.float32),)),
        (f"conv2d {CI}x{H}x{W} -> {CO}, {R}x{R}", conv2d, np_conv2d,
         (rng.standard_normal((CI, H, W), dtype=np.float32), rng.standard_normal((CO, CI, R, R), dtype=np.float32))),
    ]
    print(f"{'kernel':<28} {'sim [s]':>10} {'numpy [s]':>10} {'sim/numpy':>10}")
    for name, kernel, baseline, args in cases:
        kernel.ir  # build the IR once, outside the timings
        t_sim, got = median_time(kernel, *args)
        t_np, want = median_time(baseline, *args)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
        print(f"{name:<28} {t_sim:>10.4f} {t_np:>10.4f} {t_sim / t_np:>9.1f}x")
    print("all results match NumPy")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
