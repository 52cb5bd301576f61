"""Mean Huber loss per row, written branch-free with abs and min.

    huber(d) = 0.5 * d**2              if |d| <= DELTA
               DELTA * (|d| - DELTA/2) otherwise
             = 0.5 * q**2 + DELTA * (|d| - q)   with q = min(|d|, DELTA)

Run:  python examples/huber.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

M, N = 32, 128
DELTA = 1.0


def make_huber(m: int, n: int):
    """A kernel computing the mean Huber loss of each row of P - T."""

    @sd.kernel
    def huber(P: f32[m, n], T: f32[m, n]) -> f32[m]:
        L: f32[m] = 0.0
        for i in range(m):
            acc: f32 = 0.0
            for j in range(n):
                a: f32 = abs(P[i, j] - T[i, j])
                q: f32 = min(a, DELTA)
                acc += 0.5 * q * q + DELTA * (a - q)
            L[i] = acc / n
        return L

    return huber


huber = make_huber(M, N)


def reference(P: np.ndarray, T: np.ndarray) -> np.ndarray:
    a = np.abs(P.astype(np.float64) - T)
    loss = np.where(a <= DELTA, 0.5 * a * a, DELTA * (a - 0.5 * DELTA))
    return loss.mean(axis=1).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(0)
    P = rng.standard_normal((M, N), dtype=np.float32)
    T = rng.standard_normal((M, N), dtype=np.float32)
    L = huber(P, T)
    err = float(np.abs(L - reference(P, T)).max())
    print(f"huber {M}x{N}: max |error| vs NumPy = {err:.3e}")
    print(huber.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
