"""PolyBench syrk: C = alpha * A @ A.T + beta * C on the lower triangle.

The inner ``j`` loops run to ``i`` (inclusive): their bound depends on the
outer loop variable.  The strict upper triangle of C is passed through.

Run:  python examples/syrk.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

N, M = 48, 32  # C is N x N, A is N x M


def make_syrk(n: int, m: int):
    """A syrk kernel for an n x n C and an n x m A."""

    @sd.kernel
    def syrk(alpha: f32, beta: f32, C: f32[n, n], A: f32[n, m]) -> f32[n, n]:
        S: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            S[i, j] = C[i, j]
        for i in range(n):
            for j in range(i + 1):
                S[i, j] *= beta
            for k in range(m):
                for j in range(i + 1):
                    S[i, j] += alpha * A[i, k] * A[j, k]
        return S

    return syrk


syrk = make_syrk(N, M)


def reference(alpha, beta, C: np.ndarray, A: np.ndarray) -> np.ndarray:
    full = alpha * (A @ A.T) + beta * C
    return (np.tril(full) + np.triu(C, 1)).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(0)
    alpha, beta = 1.5, 1.2
    C = rng.random((N, N), dtype=np.float32)
    A = rng.random((N, M), dtype=np.float32)
    out = syrk(alpha, beta, C, A)
    err = float(np.abs(out - reference(alpha, beta, C, A)).max())
    print(f"syrk N={N} M={M}: max |error| vs NumPy = {err:.3e}")
    print(syrk.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
