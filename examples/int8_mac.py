"""Quantised matmul: int8 x int8 products accumulated in int32 (bit exact).

Each operand is widened with ``sd.cast(..., i32)`` before the multiply, so
products and sums are computed in 32 bits as on an int8 MAC array.

Run:  python examples/int8_mac.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import i8, i32

M, K, N = 32, 256, 64


def make_int8_mac(m: int, k: int, n: int):
    """An int8 matmul kernel with int32 accumulation and an int32 bias."""

    @sd.kernel
    def int8_mac(X: i8[m, k], Wt: i8[k, n], bias: i32[n]) -> i32[m, n]:
        Y: i32[m, n] = 0
        for i, j in sd.grid(m, n):
            acc: i32 = bias[j]
            for kk in range(k):
                acc += sd.cast(X[i, kk], i32) * sd.cast(Wt[kk, j], i32)
            Y[i, j] = acc
        return Y

    return int8_mac


int8_mac = make_int8_mac(M, K, N)


def reference(X: np.ndarray, Wt: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return (X.astype(np.int64) @ Wt.astype(np.int64) + bias).astype(np.int32)


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.integers(-128, 128, (M, K), dtype=np.int8)
    Wt = rng.integers(-128, 128, (K, N), dtype=np.int8)
    bias = rng.integers(-(2**20), 2**20, N, dtype=np.int32)
    Y = int8_mac(X, Wt, bias)
    err = int(np.abs(Y.astype(np.int64) - reference(X, Wt, bias)).max())
    print(f"int8 mac {M}x{K} @ {K}x{N}: max |error| vs NumPy = {err}")
    print(int8_mac.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
