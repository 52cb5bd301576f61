"""Layer normalisation over the rows of X, with learned gamma and beta.

Run:  python examples/layernorm.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

M, N = 64, 128
EPS = 1e-5


def make_layernorm(m: int, n: int):
    """A layernorm kernel for an m x n matrix normalised along its rows."""

    @sd.kernel
    def layernorm(X: f32[m, n], gamma: f32[n], beta: f32[n]) -> f32[m, n]:
        Y: f32[m, n] = 0.0
        for i in range(m):
            mean: f32 = 0.0
            for j in range(n):
                mean += X[i, j]
            mean /= n
            var: f32 = 0.0
            for j in range(n):
                d: f32 = X[i, j] - mean
                var += d * d
            var /= n
            inv: f32 = sd.rsqrt(var + EPS)
            for j in range(n):
                Y[i, j] = (X[i, j] - mean) * inv * gamma[j] + beta[j]
        return Y

    return layernorm


layernorm = make_layernorm(M, N)


def reference(X: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    x = X.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return ((x - mean) / np.sqrt(var + EPS) * gamma + beta).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((M, N), dtype=np.float32)
    gamma = rng.standard_normal(N, dtype=np.float32)
    beta = rng.standard_normal(N, dtype=np.float32)
    Y = layernorm(X, gamma, beta)
    err = float(np.abs(Y - reference(X, gamma, beta)).max())
    print(f"layernorm {M}x{N}: max |error| vs NumPy = {err:.3e}")
    print(layernorm.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
