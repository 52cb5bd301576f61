"""PolyBench kernels whose loops carry dependences (the simulator cannot vectorise them), with NumPy forms.

Floyd-Warshall (a carried minimum), seidel-2d (a stencil updated in place), nussinov (dynamic programming
over a triangle), trisolv (forward substitution) and durbin (Levinson-Durbin recursion), written as
PolyBench/C writes them.  Each factory takes the sizes and returns the kernel; ``numpy_*`` is the same
computation in NumPy (vectorised where the dependences allow), the baseline of ``benchmarks/sim_speed.py``.

Run:  python benchmarks/polybench.py
"""
from __future__ import annotations

import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32, i32


def make_floyd_warshall(n: int):
    @sd.kernel
    def floyd_warshall(D: f32[n, n]) -> f32[n, n]:
        P: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            P[i, j] = D[i, j]
        for k in range(n):
            for i in range(n):
                for j in range(n):
                    P[i, j] = min(P[i, j], P[i, k] + P[k, j])
        return P

    return floyd_warshall


def numpy_floyd_warshall(D: np.ndarray) -> np.ndarray:
    P = D.copy()
    for k in range(P.shape[0]):  # row k and column k do not change in step k (a zero diagonal)
        np.minimum(P, P[:, k:k + 1] + P[k:k + 1, :], out=P)
    return P


def make_seidel_2d(n: int, steps: int):
    @sd.kernel
    def seidel_2d(A0: f32[n, n]) -> f32[n, n]:
        A: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            A[i, j] = A0[i, j]
        for t in range(steps):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1] + A[i, j - 1] + A[i, j]
                               + A[i, j + 1] + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) / 9.0
        return A

    return seidel_2d


def numpy_seidel_2d(A0: np.ndarray, steps: int) -> np.ndarray:
    A = A0.copy()
    n = A.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            # everything but the left neighbour is known before the row starts; that one is the recurrence
            up, mid, down = A[i - 1], A[i], A[i + 1]
            head = up[:-2] + up[1:-1] + up[2:]
            tail = mid[2:] + down[:-2] + down[1:-1] + down[2:]
            for j in range(1, n - 1):
                A[i, j] = (head[j - 1] + A[i, j - 1] + A[i, j] + tail[j - 1]) / np.float32(9.0)
    return A


def make_nussinov(n: int):
    @sd.kernel
    def nussinov(seq: i32[n]) -> i32[n, n]:
        T: i32[n, n] = 0
        for i in range(n - 1, -1, -1):
            for j in range(i + 1, n):
                if j - 1 >= 0:
                    T[i, j] = max(T[i, j], T[i, j - 1])
                if i + 1 < n:
                    T[i, j] = max(T[i, j], T[i + 1, j])
                if j - 1 >= 0 and i + 1 < n:
                    if i < j - 1:
                        T[i, j] = max(T[i, j], T[i + 1, j - 1] + (1 if seq[i] + seq[j] == 3 else 0))
                    else:
                        T[i, j] = max(T[i, j], T[i + 1, j - 1])
                for k in range(i + 1, j):
                    T[i, j] = max(T[i, j], T[i, k] + T[k + 1, j])
        return T

    return nussinov


def numpy_nussinov(seq: np.ndarray) -> np.ndarray:
    n = seq.size
    T = np.zeros((n, n), np.int32)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = max(T[i, j - 1], T[i + 1, j] if i + 1 < n else 0)
            pair = T[i + 1, j - 1] + (int(seq[i] + seq[j] == 3) if i < j - 1 else 0)
            best = max(best, pair)
            if j > i + 1:
                best = max(best, int((T[i, i + 1:j] + T[i + 2:j + 1, j]).max()))
            T[i, j] = best
    return T


def make_trisolv(n: int):
    @sd.kernel
    def trisolv(L: f32[n, n], b: f32[n]) -> f32[n]:
        x: f32[n] = 0.0
        for i in range(n):
            x[i] = b[i]
            for j in range(i):
                x[i] = x[i] - L[i, j] * x[j]
            x[i] = x[i] / L[i, i]
        return x

    return trisolv


def numpy_trisolv(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = np.zeros_like(b)
    for i in range(b.size):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def make_durbin(n: int):
    @sd.kernel
    def durbin(r: f32[n]) -> f32[n]:
        y: f32[n] = 0.0
        z: f32[n] = 0.0
        y[0] = -r[0]
        beta: f32 = 1.0
        alpha: f32 = -r[0]
        for k in range(1, n):
            beta = (1.0 - alpha * alpha) * beta
            s: f32 = 0.0
            for i in range(k):
                s += r[k - i - 1] * y[i]
            alpha = -(r[k] + s) / beta
            for i in range(k):
                z[i] = y[i] + alpha * y[k - i - 1]
            for i in range(k):
                y[i] = z[i]
            y[k] = alpha
        return y

    return durbin


def numpy_durbin(r: np.ndarray) -> np.ndarray:
    n = r.size
    y = np.zeros_like(r)
    y[0] = -r[0]
    beta, alpha = np.float32(1.0), -r[0]
    for k in range(1, n):
        beta = (np.float32(1.0) - alpha * alpha) * beta
        s = r[k - 1::-1][:k] @ y[:k]
        alpha = -(r[k] + s) / beta
        y[:k] = y[:k] + alpha * y[k - 1::-1][:k]
        y[k] = alpha
    return y


def inputs(name: str, n: int, seed: int = 0):
    """Well-conditioned inputs of the kernel ``name`` at size ``n``."""
    r = np.random.default_rng(seed)
    if name == "floyd_warshall":
        D = (r.random((n, n)) * 100).astype(np.float32)
        np.fill_diagonal(D, 0.0)
        return (D,)
    if name == "seidel_2d":
        return (r.random((n, n)).astype(np.float32),)
    if name == "nussinov":
        return (r.integers(0, 4, n).astype(np.int32),)
    if name == "trisolv":
        L = (np.tril(r.random((n, n))) * 0.1).astype(np.float32)
        np.fill_diagonal(L, 1.0 + r.random(n).astype(np.float32))
        return (L, r.random(n).astype(np.float32))
    if name == "durbin":
        return ((r.random(n) * 0.1).astype(np.float32) / np.arange(1, n + 1, dtype=np.float32),)
    raise KeyError(name)


def main() -> None:
    import time

    for name, make, ref, n, extra in [("floyd_warshall", make_floyd_warshall, numpy_floyd_warshall, 64, ()),
                                      ("seidel_2d", make_seidel_2d, numpy_seidel_2d, 32, (4,)),
                                      ("nussinov", make_nussinov, numpy_nussinov, 48, ()),
                                      ("trisolv", make_trisolv, numpy_trisolv, 200, ()),
                                      ("durbin", make_durbin, numpy_durbin, 64, ())]:
        args = inputs(name, n)
        t0 = time.perf_counter()
        got = make(n, *extra)(*args)
        t = time.perf_counter() - t0
        want = ref(*args, *extra)
        ok = np.array_equal(got, want) if got.dtype.kind == "i" else np.allclose(got, want, rtol=1e-4, atol=1e-5)
        print(f"{name:15s} n={n:4d}: {t * 1e3:8.1f} ms on the simulator, {'matches' if ok else 'DIFFERS FROM'} NumPy")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
