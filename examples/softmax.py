"""Row softmax with max subtraction for numerical stability.

Run:  python examples/softmax.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

M, N = 64, 256


def make_softmax(m: int, n: int):
    """A row softmax kernel for an m x n matrix."""

    @sd.kernel
    def softmax(X: f32[m, n]) -> f32[m, n]:
        Y: f32[m, n] = 0.0
        for i in range(m):
            mx: f32 = X[i, 0]
            for j in range(1, n):
                mx = max(mx, X[i, j])
            s: f32 = 0.0
            for j in range(n):
                e: f32 = sd.exp(X[i, j] - mx)
                Y[i, j] = e
                s += e
            for j in range(n):
                Y[i, j] = Y[i, j] / s
        return Y

    return softmax


softmax = make_softmax(M, N)


def reference(X: np.ndarray) -> np.ndarray:
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main() -> None:
    rng = np.random.default_rng(0)
    X = 4 * rng.standard_normal((M, N), dtype=np.float32)
    Y = softmax(X)
    err = float(np.abs(Y - reference(X)).max())
    print(f"softmax {M}x{N}: max |error| vs NumPy = {err:.3e}")
    print(softmax.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
