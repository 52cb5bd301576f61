"""PolyBench jacobi-2d: a 5-point stencil swept TSTEPS times.

Parameters are read-only, so the kernel first copies both grids into local
tensors, then alternates A -> B and B -> A each time step.  Boundary cells
are never updated.

Run:  python examples/jacobi2d.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

N = 64
TSTEPS = 10


def make_jacobi2d(n: int, tsteps: int):
    """A jacobi-2d kernel on an n x n grid running ``tsteps`` time steps."""

    @sd.kernel
    def jacobi2d(A_in: f32[n, n], B_in: f32[n, n]) -> f32[n, n]:
        A: f32[n, n] = 0.0
        B: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            A[i, j] = A_in[i, j]
            B[i, j] = B_in[i, j]
        for t in range(tsteps):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])
        return A

    return jacobi2d


jacobi2d = make_jacobi2d(N, TSTEPS)


def reference(A_in: np.ndarray, B_in: np.ndarray, tsteps: int = TSTEPS) -> np.ndarray:
    A, B = A_in.copy(), B_in.copy()
    c = np.float32(0.2)
    for _ in range(tsteps):
        B[1:-1, 1:-1] = c * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = c * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return A


def main() -> None:
    rng = np.random.default_rng(0)
    A = rng.random((N, N), dtype=np.float32)
    B = rng.random((N, N), dtype=np.float32)
    out = jacobi2d(A, B)
    err = float(np.abs(out - reference(A, B)).max())
    print(f"jacobi-2d N={N} TSTEPS={TSTEPS}: max |error| vs NumPy = {err:.3e}")
    print(jacobi2d.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
