"""Vector add: the smallest streamdsl kernel.

Run:  python examples/vadd.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

N = 1024


def make_vadd(n: int):
    """A vadd kernel for vectors of length ``n``."""

    @sd.kernel
    def vadd(A: f32[n], B: f32[n]) -> f32[n]:
        C: f32[n] = 0.0
        for i in range(n):
            C[i] = A[i] + B[i]
        return C

    return vadd


vadd = make_vadd(N)


def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A + B


def main() -> None:
    rng = np.random.default_rng(0)
    A = rng.standard_normal(N, dtype=np.float32)
    B = rng.standard_normal(N, dtype=np.float32)
    C = vadd(A, B)
    err = float(np.abs(C - reference(A, B)).max())
    print(f"vadd N={N}: max |error| vs NumPy = {err:.3e}")
    print(vadd.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
