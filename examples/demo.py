"""The streamdsl demo: a kernel written in Python, simulated, and shown as IR.

Run:  python examples/demo.py
"""
import argparse
import time

import numpy as np

import streamdsl as sd
from streamdsl import f32

M, K, N = 128, 256, 64


@sd.kernel
def gemm_relu(A: f32[M, K], B: f32[K, N], bias: f32[N]) -> f32[M, N]:
    C: f32[M, N] = 0.0
    for i, j in sd.grid(M, N):
        acc: f32 = 0.0
        for k in range(K):
            acc += A[i, k] * B[k, j]
        C[i, j] = max(acc + bias[j], 0.0)
    return C


def main() -> None:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    bias = rng.standard_normal(N, dtype=np.float32)

    print("== the kernel's loop IR ==")
    print(gemm_relu.ir)
    assert sd.parse_ir(str(gemm_relu.ir)) == gemm_relu.ir  # the text is the IR

    t0 = time.perf_counter()
    C = gemm_relu(A, B, bias)
    dt = time.perf_counter() - t0
    ref = np.maximum(A @ B + bias, 0.0)
    err = float(np.abs(C - ref).max())
    print(f"== simulated {M}x{K}x{N} gemm+relu in {dt * 1e3:.1f} ms; max |error| vs NumPy = {err:.2e} ==")
    if err > 1e-3:
        raise SystemExit("demo failed: simulator disagrees with NumPy")
    print("OK")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
