"""Clip every row of X to an L2 norm of at most MAX_NORM (gradient clipping).

Run:  python examples/clip_norm.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

M, N = 32, 64
MAX_NORM = 5.0


def make_clip_norm(m: int, n: int):
    """A per-row L2 norm clipping kernel for an m x n matrix."""

    @sd.kernel
    def clip_norm(X: f32[m, n]) -> f32[m, n]:
        Y: f32[m, n] = 0.0
        for i in range(m):
            ss: f32 = 0.0
            for j in range(n):
                ss += X[i, j] * X[i, j]
            norm: f32 = sd.sqrt(ss)
            scale: f32 = MAX_NORM / norm if norm > MAX_NORM else 1.0
            for j in range(n):
                Y[i, j] = X[i, j] * scale
        return Y

    return clip_norm


clip_norm = make_clip_norm(M, N)


def reference(X: np.ndarray) -> np.ndarray:
    norm = np.sqrt((X.astype(np.float64) ** 2).sum(axis=1, keepdims=True))
    scale = np.where(norm > MAX_NORM, MAX_NORM / norm, 1.0)
    return (X * scale).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((M, N), dtype=np.float32) * rng.random((M, 1), dtype=np.float32)
    Y = clip_norm(X)
    err = float(np.abs(Y - reference(X)).max())
    print(f"clip_norm {M}x{N}: max |error| vs NumPy = {err:.3e}")
    print(clip_norm.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
