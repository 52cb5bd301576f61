"""PolyBench 2mm: D = alpha * A @ B @ C + beta * D.

The first product is computed by calling another kernel (``matmul``); its
result ``tmp`` is an intermediate tensor that the second loop nest reads.

Run:  python examples/two_mm.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

NI, NK, NJ, NL = 32, 48, 40, 24


@sd.kernel
def matmul(A: f32[NI, NK], B: f32[NK, NJ]) -> f32[NI, NJ]:
    T: f32[NI, NJ] = 0.0
    for i, j in sd.grid(NI, NJ):
        for k in range(NK):
            T[i, j] += A[i, k] * B[k, j]
    return T


@sd.kernel
def two_mm(alpha: f32, beta: f32, A: f32[NI, NK], B: f32[NK, NJ], C: f32[NJ, NL],
           D: f32[NI, NL]) -> f32[NI, NL]:
    tmp = matmul(A, B)
    out: f32[NI, NL] = 0.0
    for i, l in sd.grid(NI, NL):
        acc: f32 = 0.0
        for j in range(NJ):
            acc += tmp[i, j] * C[j, l]
        out[i, l] = alpha * acc + beta * D[i, l]
    return out


def reference(alpha, beta, A, B, C, D):
    return (alpha * ((A @ B) @ C) + beta * D).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(0)
    alpha, beta = 1.5, 1.2
    A = rng.standard_normal((NI, NK), dtype=np.float32)
    B = rng.standard_normal((NK, NJ), dtype=np.float32)
    C = rng.standard_normal((NJ, NL), dtype=np.float32)
    D = rng.standard_normal((NI, NL), dtype=np.float32)
    out = two_mm(alpha, beta, A, B, C, D)
    err = float(np.abs(out - reference(alpha, beta, A, B, C, D)).max())
    print(f"2mm NI={NI} NK={NK} NJ={NJ} NL={NL}: max |error| vs NumPy = {err:.3e}")
    print(two_mm.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
