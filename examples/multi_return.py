"""A kernel with two results: the maximum and the sum of every row.

Run:  python examples/multi_return.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

M, N = 64, 100


def make_row_stats(m: int, n: int):
    """A kernel returning (row max, row sum) of an m x n matrix."""

    @sd.kernel
    def row_stats(X: f32[m, n]) -> (f32[m], f32[m]):
        mx: f32[m] = 0.0
        total: f32[m] = 0.0
        for i in range(m):
            mx[i] = X[i, 0]
            for j in range(n):
                mx[i] = max(mx[i], X[i, j])
                total[i] += X[i, j]
        return mx, total

    return row_stats


row_stats = make_row_stats(M, N)


def reference(X: np.ndarray):
    return X.max(axis=1), X.sum(axis=1, dtype=np.float64).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((M, N), dtype=np.float32)
    mx, total = row_stats(X)
    ref_mx, ref_total = reference(X)
    err = max(float(np.abs(mx - ref_mx).max()), float(np.abs(total - ref_total).max()))
    print(f"row_stats {M}x{N}: max |error| vs NumPy = {err:.3e}")
    print(row_stats.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
