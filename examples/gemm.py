"""Dense matrix multiply C = A @ B, with an explicit accumulator.

Run:  python examples/gemm.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

M, K, N = 64, 128, 32


def make_gemm(m: int, k: int, n: int):
    """A gemm kernel for (m x k) @ (k x n)."""

    @sd.kernel
    def gemm(A: f32[m, k], B: f32[k, n]) -> f32[m, n]:
        C: f32[m, n] = 0.0
        for i, j in sd.grid(m, n):
            acc: f32 = 0.0
            for kk in range(k):
                acc += A[i, kk] * B[kk, j]
            C[i, j] = acc
        return C

    return gemm


gemm = make_gemm(M, K, N)


def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A @ B


def main() -> None:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    C = gemm(A, B)
    err = float(np.abs(C - reference(A, B)).max())
    print(f"gemm {M}x{K} @ {K}x{N}: max |error| vs NumPy = {err:.3e}")
    print(gemm.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
