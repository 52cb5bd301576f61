"""The 30 PolyBench/C 4.2 kernels in streamdsl, each with a NumPy reference and inputs.

Each kernel is written as PolyBench writes it (and as Allo's port, cornell-zhang/allo examples/polybench/, lays
it out): loops updating their arguments in place (in/out parameters), in f32.  ``KERNELS[name]`` is a
``Bench``: the dataset sizes (PolyBench's SMALL), a factory making the kernel at those sizes, the inputs, and a
NumPy reference that updates copies of the inputs the same way.  Nothing here copies Allo's or PolyBench's code.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

import streamdsl as sd
from streamdsl import f32, i32

ALPHA, BETA = 1.5, 1.2


@dataclass(frozen=True)
class Bench:
    sizes: dict
    make: Callable  # sizes -> kernel
    inputs: Callable  # (sizes, rng) -> tuple of arrays (and scalars)
    ref: Callable  # updates copies of the inputs in place, as the kernel does
    rtol: float = 1e-4
    atol: float = 1e-5
    check: Callable | None = None  # the parts of the final arrays that the inputs determine (default: all)


def f(rng, *shape):
    return rng.random(shape).astype(np.float32)


def spd(rng, n):
    """A symmetric positive definite matrix (cholesky, lu, ludcmp): well conditioned in f32."""
    a = rng.random((n, n)).astype(np.float64)
    return ((a @ a.T) / n + np.eye(n) * 2).astype(np.float32)


# ------------------------------------------------------------------------------------------ linear algebra
def make_gemm(NI, NJ, NK):
    @sd.kernel
    def gemm(C: f32[NI, NJ], A: f32[NI, NK], B: f32[NK, NJ]) -> None:
        for i in range(NI):
            for j in range(NJ):
                C[i, j] *= BETA
            for k in range(NK):
                for j in range(NJ):
                    C[i, j] += ALPHA * A[i, k] * B[k, j]
    return gemm


def ref_gemm(C, A, B):
    C[:] = BETA * C + ALPHA * (A @ B)


def make_2mm(NI, NJ, NK, NL):
    @sd.kernel
    def two_mm(tmp: f32[NI, NJ], A: f32[NI, NK], B: f32[NK, NJ], C: f32[NJ, NL], D: f32[NI, NL]) -> None:
        for i, j in sd.grid(NI, NJ):
            tmp[i, j] = 0.0
            for k in range(NK):
                tmp[i, j] += ALPHA * A[i, k] * B[k, j]
        for i, j in sd.grid(NI, NL):
            D[i, j] *= BETA
            for k in range(NJ):
                D[i, j] += tmp[i, k] * C[k, j]
    return two_mm


def ref_2mm(tmp, A, B, C, D):
    tmp[:] = ALPHA * (A @ B)
    D[:] = BETA * D + tmp @ C


def make_3mm(NI, NJ, NK, NL, NM):
    @sd.kernel
    def three_mm(E: f32[NI, NJ], A: f32[NI, NK], B: f32[NK, NJ], F: f32[NJ, NL], C: f32[NJ, NM], D: f32[NM, NL],
                 G: f32[NI, NL]) -> None:
        for i, j in sd.grid(NI, NJ):
            E[i, j] = 0.0
            for k in range(NK):
                E[i, j] += A[i, k] * B[k, j]
        for i, j in sd.grid(NJ, NL):
            F[i, j] = 0.0
            for k in range(NM):
                F[i, j] += C[i, k] * D[k, j]
        for i, j in sd.grid(NI, NL):
            G[i, j] = 0.0
            for k in range(NJ):
                G[i, j] += E[i, k] * F[k, j]
    return three_mm


def ref_3mm(E, A, B, F, C, D, G):
    E[:] = A @ B
    F[:] = C @ D
    G[:] = E @ F


def make_atax(M, N):
    @sd.kernel
    def atax(A: f32[M, N], x: f32[N], y: f32[N], tmp: f32[M]) -> None:
        for i in range(N):
            y[i] = 0.0
        for i in range(M):
            tmp[i] = 0.0
            for j in range(N):
                tmp[i] += A[i, j] * x[j]
            for j in range(N):
                y[j] += A[i, j] * tmp[i]
    return atax


def ref_atax(A, x, y, tmp):
    tmp[:] = A @ x
    y[:] = A.T @ tmp


def make_bicg(M, N):
    @sd.kernel
    def bicg(A: f32[N, M], s: f32[M], q: f32[N], p: f32[M], r: f32[N]) -> None:
        for i in range(M):
            s[i] = 0.0
        for i in range(N):
            q[i] = 0.0
            for j in range(M):
                s[j] += r[i] * A[i, j]
                q[i] += A[i, j] * p[j]
    return bicg


def ref_bicg(A, s, q, p, r):
    s[:] = r @ A
    q[:] = A @ p


def make_mvt(N):
    @sd.kernel
    def mvt(x1: f32[N], x2: f32[N], y_1: f32[N], y_2: f32[N], A: f32[N, N]) -> None:
        for i, j in sd.grid(N, N):
            x1[i] += A[i, j] * y_1[j]
        for i, j in sd.grid(N, N):
            x2[i] += A[j, i] * y_2[j]
    return mvt


def ref_mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += A.T @ y_2


def make_gesummv(N):
    @sd.kernel
    def gesummv(A: f32[N, N], B: f32[N, N], tmp: f32[N], x: f32[N], y: f32[N]) -> None:
        for i in range(N):
            tmp[i] = 0.0
            y[i] = 0.0
            for j in range(N):
                tmp[i] = A[i, j] * x[j] + tmp[i]
                y[i] = B[i, j] * x[j] + y[i]
            y[i] = ALPHA * tmp[i] + BETA * y[i]
    return gesummv


def ref_gesummv(A, B, tmp, x, y):
    tmp[:] = A @ x
    y[:] = ALPHA * tmp + BETA * (B @ x)


def make_gemver(N):
    @sd.kernel
    def gemver(A: f32[N, N], u1: f32[N], v1: f32[N], u2: f32[N], v2: f32[N], w: f32[N], x: f32[N], y: f32[N],
               z: f32[N]) -> None:
        for i, j in sd.grid(N, N):
            A[i, j] = A[i, j] + u1[i] * v1[j] + u2[i] * v2[j]
        for i, j in sd.grid(N, N):
            x[i] = x[i] + BETA * A[j, i] * y[j]
        for i in range(N):
            x[i] = x[i] + z[i]
        for i, j in sd.grid(N, N):
            w[i] = w[i] + ALPHA * A[i, j] * x[j]
    return gemver


def ref_gemver(A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += BETA * (A.T @ y) + z
    w += ALPHA * (A @ x)


def make_symm(M, N):
    @sd.kernel
    def symm(C: f32[M, N], A: f32[M, M], B: f32[M, N]) -> None:
        for i, j in sd.grid(M, N):
            temp2: f32 = 0.0
            for k in range(i):
                C[k, j] += ALPHA * B[i, j] * A[i, k]
                temp2 += B[k, j] * A[i, k]
            C[i, j] = BETA * C[i, j] + ALPHA * B[i, j] * A[i, i] + ALPHA * temp2
    return symm


def ref_symm(C, A, B):
    low = np.tril(A)
    full = low + np.tril(A, -1).T  # A is symmetric, stored in its lower triangle
    C[:] = BETA * C + ALPHA * (full @ B)


def make_syrk(M, N):
    @sd.kernel
    def syrk(C: f32[N, N], A: f32[N, M]) -> None:
        for i in range(N):
            for j in range(i + 1):
                C[i, j] *= BETA
            for k in range(M):
                for j in range(i + 1):
                    C[i, j] += ALPHA * A[i, k] * A[j, k]
    return syrk


def ref_syrk(C, A):
    low = np.tril(np.ones_like(C, dtype=bool))
    C[low] = (BETA * C + ALPHA * (A @ A.T))[low]


def make_syr2k(M, N):
    @sd.kernel
    def syr2k(C: f32[N, N], A: f32[N, M], B: f32[N, M]) -> None:
        for i in range(N):
            for j in range(i + 1):
                C[i, j] *= BETA
            for k in range(M):
                for j in range(i + 1):
                    C[i, j] += A[j, k] * ALPHA * B[i, k] + B[j, k] * ALPHA * A[i, k]
    return syr2k


def ref_syr2k(C, A, B):
    low = np.tril(np.ones_like(C, dtype=bool))
    C[low] = (BETA * C + ALPHA * (B @ A.T + A @ B.T))[low]


def make_trmm(M, N):
    @sd.kernel
    def trmm(A: f32[M, M], B: f32[M, N]) -> None:
        for i, j in sd.grid(M, N):
            for k in range(i + 1, M):
                B[i, j] += A[k, i] * B[k, j]
            B[i, j] = ALPHA * B[i, j]
    return trmm


def ref_trmm(A, B):
    unit = np.tril(A, -1) + np.eye(A.shape[0], dtype=A.dtype)  # unit lower triangular
    B[:] = ALPHA * (unit.T @ B)


def make_doitgen(NQ, NR, NP):
    @sd.kernel
    def doitgen(A: f32[NR, NQ, NP], C4: f32[NP, NP], sm: f32[NP]) -> None:
        for r, q in sd.grid(NR, NQ):
            for p in range(NP):
                sm[p] = 0.0
                for s in range(NP):
                    sm[p] += A[r, q, s] * C4[s, p]
            for p in range(NP):
                A[r, q, p] = sm[p]
    return doitgen


def ref_doitgen(A, C4, sm):
    A[:] = A @ C4
    sm[:] = A[-1, -1]


# ------------------------------------------------------------------------------------------ solvers
def make_cholesky(N):
    @sd.kernel
    def cholesky(A: f32[N, N]) -> None:
        for i in range(N):
            for j in range(i):
                for k in range(j):
                    A[i, j] -= A[i, k] * A[j, k]
                A[i, j] /= A[j, j]
            for k in range(i):
                A[i, i] -= A[i, k] * A[i, k]
            A[i, i] = sd.sqrt(A[i, i])
    return cholesky


def ref_cholesky(A):
    L = np.linalg.cholesky(A.astype(np.float64))
    A[np.tril_indices(A.shape[0])] = L[np.tril_indices(A.shape[0])]


def make_lu(N):
    @sd.kernel
    def lu(A: f32[N, N]) -> None:
        for i in range(N):
            for j in range(i):
                for k in range(j):
                    A[i, j] -= A[i, k] * A[k, j]
                A[i, j] /= A[j, j]
            for j in range(i, N):
                for k in range(i):
                    A[i, j] -= A[i, k] * A[k, j]
    return lu


def _doolittle(A):
    A = A.astype(np.float64)
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] = (A[i, j] - A[i, :j] @ A[:j, j]) / A[j, j]
        A[i, i:] -= A[i, :i] @ A[:i, i:]
    return A


def ref_lu(A):
    A[:] = _doolittle(A)


def make_ludcmp(N):
    @sd.kernel
    def ludcmp(A: f32[N, N], b: f32[N], x: f32[N], y: f32[N]) -> None:
        for i in range(N):
            for j in range(i):
                w: f32 = A[i, j]
                for k in range(j):
                    w -= A[i, k] * A[k, j]
                A[i, j] = w / A[j, j]
            for j in range(i, N):
                w2: f32 = A[i, j]
                for k in range(i):
                    w2 -= A[i, k] * A[k, j]
                A[i, j] = w2
        for i in range(N):
            w3: f32 = b[i]
            for j in range(i):
                w3 -= A[i, j] * y[j]
            y[i] = w3
        for i in range(N - 1, -1, -1):
            w4: f32 = y[i]
            for j in range(i + 1, N):
                w4 -= A[i, j] * x[j]
            x[i] = w4 / A[i, i]
    return ludcmp


def ref_ludcmp(A, b, x, y):
    LU = _doolittle(A)
    A[:] = LU
    n = A.shape[0]
    yy = np.zeros(n)
    for i in range(n):
        yy[i] = b[i] - LU[i, :i] @ yy[:i]
    xx = np.zeros(n)
    for i in range(n - 1, -1, -1):
        xx[i] = (yy[i] - LU[i, i + 1:] @ xx[i + 1:]) / LU[i, i]
    y[:], x[:] = yy, xx


def make_trisolv(N):
    @sd.kernel
    def trisolv(L: f32[N, N], x: f32[N], b: f32[N]) -> None:
        for i in range(N):
            x[i] = b[i]
            for j in range(i):
                x[i] -= L[i, j] * x[j]
            x[i] = x[i] / L[i, i]
    return trisolv


def ref_trisolv(L, x, b):
    n = b.size
    xx = np.zeros(n)
    for i in range(n):
        xx[i] = (b[i] - L[i, :i] @ xx[:i]) / L[i, i]
    x[:] = xx


def make_durbin(N):
    @sd.kernel
    def durbin(r: f32[N], y: f32[N], z: f32[N]) -> None:
        y[0] = -r[0]
        beta: f32 = 1.0
        alpha: f32 = -r[0]
        for k in range(1, N):
            beta = (1.0 - alpha * alpha) * beta
            acc: f32 = 0.0
            for i in range(k):
                acc += r[k - i - 1] * y[i]
            alpha = -(r[k] + acc) / beta
            for i in range(k):
                z[i] = y[i] + alpha * y[k - i - 1]
            for i in range(k):
                y[i] = z[i]
            y[k] = alpha
    return durbin


def ref_durbin(r, y, z):
    n = r.size
    r64 = r.astype(np.float64)
    yy = np.zeros(n)
    yy[0] = -r64[0]
    beta, alpha = 1.0, -r64[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        alpha = -(r64[k] + r64[k - 1::-1][:k] @ yy[:k]) / beta
        zz = yy[:k] + alpha * yy[k - 1::-1][:k]
        yy[:k] = zz
        yy[k] = alpha
        z[:k] = zz
    y[:] = yy


def make_gramschmidt(M, N):
    @sd.kernel
    def gramschmidt(A: f32[M, N], R: f32[N, N], Q: f32[M, N]) -> None:
        for k in range(N):
            nrm: f32 = 0.0
            for i in range(M):
                nrm += A[i, k] * A[i, k]
            R[k, k] = sd.sqrt(nrm)
            for i in range(M):
                Q[i, k] = A[i, k] / R[k, k]
            for j in range(k + 1, N):
                R[k, j] = 0.0
                for i in range(M):
                    R[k, j] += Q[i, k] * A[i, j]
                for i in range(M):
                    A[i, j] = A[i, j] - Q[i, k] * R[k, j]
    return gramschmidt


def ref_gramschmidt(A, R, Q):
    a = A.astype(np.float64)
    m, n = a.shape
    for k in range(n):
        R[k, k] = np.sqrt(a[:, k] @ a[:, k])
        Q[:, k] = a[:, k] / R[k, k]
        R[k, k + 1:] = Q[:, k].astype(np.float64) @ a[:, k + 1:]
        a[:, k + 1:] -= np.outer(Q[:, k], R[k, k + 1:])
    A[:] = a


# ------------------------------------------------------------------------------------------ data mining
def make_covariance(M, N):
    fn = float(N)

    @sd.kernel
    def covariance(data: f32[N, M], cov: f32[M, M], mean: f32[M]) -> None:
        for j in range(M):
            mean[j] = 0.0
            for i in range(N):
                mean[j] += data[i, j]
            mean[j] /= fn
        for i, j in sd.grid(N, M):
            data[i, j] -= mean[j]
        for i in range(M):
            for j in range(i, M):
                cov[i, j] = 0.0
                for k in range(N):
                    cov[i, j] += data[k, i] * data[k, j]
                cov[i, j] /= fn - 1.0
                cov[j, i] = cov[i, j]
    return covariance


def ref_covariance(data, cov, mean):
    mean[:] = data.mean(0)
    data -= mean
    cov[:] = (data.T.astype(np.float64) @ data) / (data.shape[0] - 1)


def make_correlation(M, N):
    fn = float(N)
    sqrt_n = math.sqrt(fn)

    @sd.kernel
    def correlation(data: f32[N, M], corr: f32[M, M], mean: f32[M], stddev: f32[M]) -> None:
        for j in range(M):
            mean[j] = 0.0
            for i in range(N):
                mean[j] += data[i, j]
            mean[j] /= fn
        for j in range(M):
            stddev[j] = 0.0
            for i in range(N):
                stddev[j] += (data[i, j] - mean[j]) * (data[i, j] - mean[j])
            stddev[j] /= fn
            stddev[j] = sd.sqrt(stddev[j])
            stddev[j] = 1.0 if stddev[j] <= 0.1 else stddev[j]
        for i, j in sd.grid(N, M):
            data[i, j] -= mean[j]
            data[i, j] /= sqrt_n * stddev[j]
        for i in range(M - 1):
            corr[i, i] = 1.0
            for j in range(i + 1, M):
                corr[i, j] = 0.0
                for k in range(N):
                    corr[i, j] += data[k, i] * data[k, j]
                corr[j, i] = corr[i, j]
        corr[M - 1, M - 1] = 1.0
    return correlation


def ref_correlation(data, corr, mean, stddev):
    mean[:] = data.mean(0)
    sd_ = np.sqrt(((data.astype(np.float64) - mean) ** 2).mean(0))
    stddev[:] = np.where(sd_ <= 0.1, 1.0, sd_)
    data[:] = (data - mean) / (np.sqrt(data.shape[0]) * stddev)
    corr[:] = data.T.astype(np.float64) @ data
    np.fill_diagonal(corr, 1.0)


# ------------------------------------------------------------------------------------------ stencils
def make_jacobi_1d(TSTEPS, N):
    @sd.kernel
    def jacobi_1d(A: f32[N], B: f32[N]) -> None:
        for t in range(TSTEPS):
            for i in range(1, N - 1):
                B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])
            for i in range(1, N - 1):
                A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1])
    return jacobi_1d


def ref_jacobi_1d(A, B, TSTEPS):
    c = np.float32(0.33333)
    for _ in range(TSTEPS):
        B[1:-1] = c * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = c * (B[:-2] + B[1:-1] + B[2:])


def make_jacobi_2d(TSTEPS, N):
    @sd.kernel
    def jacobi_2d(A: f32[N, N], B: f32[N, N]) -> None:
        for t in range(TSTEPS):
            for i, j in sd.grid(N - 2, N - 2):
                B[i + 1, j + 1] = 0.2 * (A[i + 1, j + 1] + A[i + 1, j] + A[i + 1, j + 2] + A[i + 2, j + 1]
                                         + A[i, j + 1])
            for i, j in sd.grid(N - 2, N - 2):
                A[i + 1, j + 1] = 0.2 * (B[i + 1, j + 1] + B[i + 1, j] + B[i + 1, j + 2] + B[i + 2, j + 1]
                                         + B[i, j + 1])
    return jacobi_2d


def ref_jacobi_2d(A, B, TSTEPS):
    c = np.float32(0.2)
    for _ in range(TSTEPS):
        B[1:-1, 1:-1] = c * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = c * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def make_heat_3d(TSTEPS, N):
    @sd.kernel
    def heat_3d(A: f32[N, N, N], B: f32[N, N, N]) -> None:
        for t in range(1, TSTEPS + 1):
            for i, j, k in sd.grid(N - 2, N - 2, N - 2):
                B[i + 1, j + 1, k + 1] = (0.125 * (A[i + 2, j + 1, k + 1] - 2.0 * A[i + 1, j + 1, k + 1] + A[i, j + 1, k + 1])
                                          + 0.125 * (A[i + 1, j + 2, k + 1] - 2.0 * A[i + 1, j + 1, k + 1] + A[i + 1, j, k + 1])
                                          + 0.125 * (A[i + 1, j + 1, k + 2] - 2.0 * A[i + 1, j + 1, k + 1] + A[i + 1, j + 1, k])
                                          + A[i + 1, j + 1, k + 1])
            for i, j, k in sd.grid(N - 2, N - 2, N - 2):
                A[i + 1, j + 1, k + 1] = (0.125 * (B[i + 2, j + 1, k + 1] - 2.0 * B[i + 1, j + 1, k + 1] + B[i, j + 1, k + 1])
                                          + 0.125 * (B[i + 1, j + 2, k + 1] - 2.0 * B[i + 1, j + 1, k + 1] + B[i + 1, j, k + 1])
                                          + 0.125 * (B[i + 1, j + 1, k + 2] - 2.0 * B[i + 1, j + 1, k + 1] + B[i + 1, j + 1, k])
                                          + B[i + 1, j + 1, k + 1])
    return heat_3d


def _heat_step(X):
    c, m = np.float32(0.125), X[1:-1, 1:-1, 1:-1]
    return (c * (X[2:, 1:-1, 1:-1] - 2 * m + X[:-2, 1:-1, 1:-1]) + c * (X[1:-1, 2:, 1:-1] - 2 * m + X[1:-1, :-2, 1:-1])
            + c * (X[1:-1, 1:-1, 2:] - 2 * m + X[1:-1, 1:-1, :-2]) + m)


def ref_heat_3d(A, B, TSTEPS):
    for _ in range(TSTEPS):
        B[1:-1, 1:-1, 1:-1] = _heat_step(A)
        A[1:-1, 1:-1, 1:-1] = _heat_step(B)


def make_seidel_2d(TSTEPS, N):
    @sd.kernel
    def seidel_2d(A: f32[N, N]) -> None:
        for t in range(TSTEPS):
            for i in range(1, N - 1):
                for j in range(1, N - 1):
                    A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1] + A[i, j - 1] + A[i, j]
                               + A[i, j + 1] + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) / 9.0
    return seidel_2d


def ref_seidel_2d(A, TSTEPS):
    n = A.shape[0]
    for _ in range(TSTEPS):
        for i in range(1, n - 1):
            up, mid, down = A[i - 1], A[i], A[i + 1]
            head = up[:-2] + up[1:-1] + up[2:]  # the row above is final already; only the left neighbour recurs
            tail = mid[2:] + down[:-2] + down[1:-1] + down[2:]
            for j in range(1, n - 1):
                A[i, j] = (head[j - 1] + A[i, j - 1] + A[i, j] + tail[j - 1]) / np.float32(9.0)


def make_fdtd_2d(TMAX, NX, NY):
    @sd.kernel
    def fdtd_2d(ex: f32[NX, NY], ey: f32[NX, NY], hz: f32[NX, NY], fict: f32[TMAX]) -> None:
        for t in range(TMAX):
            for j in range(NY):
                ey[0, j] = fict[t]
            for i, j in sd.grid(NX - 1, NY):
                ey[i + 1, j] = ey[i + 1, j] - 0.5 * (hz[i + 1, j] - hz[i, j])
            for i, j in sd.grid(NX, NY - 1):
                ex[i, j + 1] = ex[i, j + 1] - 0.5 * (hz[i, j + 1] - hz[i, j])
            for i, j in sd.grid(NX - 1, NY - 1):
                hz[i, j] = hz[i, j] - 0.7 * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])
    return fdtd_2d


def ref_fdtd_2d(ex, ey, hz, fict):
    for t in range(fict.size):
        ey[0, :] = fict[t]
        ey[1:, :] -= np.float32(0.5) * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= np.float32(0.5) * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= np.float32(0.7) * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def make_adi(TSTEPS, N):
    DX, DY, DT = 1.0 / N, 1.0 / N, 1.0 / TSTEPS
    mul1, mul2 = 2.0 * DT / (DX * DX), 1.0 * DT / (DY * DY)
    a, b, c = -mul1 / 2.0, 1.0 + mul1, -mul1 / 2.0
    d, e, ff = -mul2 / 2.0, 1.0 + mul2, -mul2 / 2.0

    @sd.kernel
    def adi(u: f32[N, N], v: f32[N, N], p: f32[N, N], q: f32[N, N]) -> None:
        for t in range(TSTEPS):
            for i in range(1, N - 1):  # column sweep
                v[0, i] = 1.0
                p[i, 0] = 0.0
                q[i, 0] = v[0, i]
                for j in range(1, N - 1):
                    p[i, j] = -c / (a * p[i, j - 1] + b)
                    q[i, j] = (-d * u[j, i - 1] + (1.0 + 2.0 * d) * u[j, i] - ff * u[j, i + 1]
                               - a * q[i, j - 1]) / (a * p[i, j - 1] + b)
                v[N - 1, i] = 1.0
                for j in range(N - 2, 0, -1):
                    v[j, i] = p[i, j] * v[j + 1, i] + q[i, j]
            for i in range(1, N - 1):  # row sweep
                u[i, 0] = 1.0
                p[i, 0] = 0.0
                q[i, 0] = u[i, 0]
                for j in range(1, N - 1):
                    p[i, j] = -ff / (d * p[i, j - 1] + e)
                    q[i, j] = (-a * v[i - 1, j] + (1.0 + 2.0 * a) * v[i, j] - c * v[i + 1, j]
                               - d * q[i, j - 1]) / (d * p[i, j - 1] + e)
                u[i, N - 1] = 1.0
                for j in range(N - 2, 0, -1):
                    u[i, j] = p[i, j] * u[i, j + 1] + q[i, j]
    return adi, (a, b, c, d, e, ff)


def ref_adi(u, v, p, q, TSTEPS, coefs):
    a, b, c, d, e, ff = (np.float32(x) for x in coefs)
    n = u.shape[0]
    one = np.float32(1.0)
    for _ in range(TSTEPS):
        v[0, 1:-1] = 1
        p[1:-1, 0] = 0
        q[1:-1, 0] = v[0, 1:-1]
        for j in range(1, n - 1):
            den = a * p[1:-1, j - 1] + b
            p[1:-1, j] = -c / den
            q[1:-1, j] = (-d * u[j, :-2] + (one + np.float32(2) * d) * u[j, 1:-1] - ff * u[j, 2:]
                          - a * q[1:-1, j - 1]) / den
        v[n - 1, 1:-1] = 1
        for j in range(n - 2, 0, -1):
            v[j, 1:-1] = p[1:-1, j] * v[j + 1, 1:-1] + q[1:-1, j]
        u[1:-1, 0] = 1
        p[1:-1, 0] = 0
        q[1:-1, 0] = u[1:-1, 0]
        for j in range(1, n - 1):
            den = d * p[1:-1, j - 1] + e
            p[1:-1, j] = -ff / den
            q[1:-1, j] = (-a * v[:-2, j] + (one + np.float32(2) * a) * v[1:-1, j] - c * v[2:, j]
                          - d * q[1:-1, j - 1]) / den
        u[1:-1, n - 1] = 1
        for j in range(n - 2, 0, -1):
            u[1:-1, j] = p[1:-1, j] * u[1:-1, j + 1] + q[1:-1, j]


# ------------------------------------------------------------------------------------------ medley
def make_floyd_warshall(N):
    @sd.kernel
    def floyd_warshall(path: f32[N, N]) -> None:
        for k, i, j in sd.grid(N, N, N):
            path[i, j] = min(path[i, j], path[i, k] + path[k, j])
    return floyd_warshall


def ref_floyd_warshall(path):
    for k in range(path.shape[0]):  # row and column k do not change in step k (the diagonal is zero)
        np.minimum(path, path[:, k:k + 1] + path[k:k + 1, :], out=path)


def make_nussinov(N):
    @sd.kernel
    def nussinov(seq: i32[N], table: i32[N, N]) -> None:
        for i in range(N - 1, -1, -1):
            for j in range(i + 1, N):
                if j - 1 >= 0:
                    table[i, j] = max(table[i, j], table[i, j - 1])
                if i + 1 < N:
                    table[i, j] = max(table[i, j], table[i + 1, j])
                if j - 1 >= 0 and i + 1 < N:
                    if i < j - 1:
                        table[i, j] = max(table[i, j], table[i + 1, j - 1] + (1 if seq[i] + seq[j] == 3 else 0))
                    else:
                        table[i, j] = max(table[i, j], table[i + 1, j - 1])
                for k in range(i + 1, j):
                    table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return nussinov


def ref_nussinov(seq, table):
    n = seq.size
    T = table.astype(np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = max(T[i, j], T[i, j - 1])
            if i + 1 < n:
                best = max(best, T[i + 1, j])
                best = max(best, T[i + 1, j - 1] + (int(seq[i] + seq[j] == 3) if i < j - 1 else 0))
            if j > i + 1:
                best = max(best, int((T[i, i + 1:j] + T[i + 2:j + 1, j]).max()))
            T[i, j] = best
    table[:] = T


def make_deriche(W, H, alpha=0.25):
    k = (1 - math.exp(-alpha)) ** 2 / (1 + 2 * alpha * math.exp(-alpha) - math.exp(2 * alpha))
    a1 = a5 = k
    a2 = a6 = k * math.exp(-alpha) * (alpha - 1)
    a3 = a7 = k * math.exp(-alpha) * (alpha + 1)
    a4 = a8 = -k * math.exp(-2 * alpha)
    b1, b2 = 2.0 ** -alpha, -math.exp(-2 * alpha)

    @sd.kernel
    def deriche(imgIn: f32[W, H], imgOut: f32[W, H], y1: f32[W, H], y2: f32[W, H]) -> None:
        for i in range(W):
            ym1: f32 = 0.0
            ym2: f32 = 0.0
            xm1: f32 = 0.0
            for j in range(H):
                y1[i, j] = a1 * imgIn[i, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
                xm1 = imgIn[i, j]
                ym2 = ym1
                ym1 = y1[i, j]
        for i in range(W):
            yp1: f32 = 0.0
            yp2: f32 = 0.0
            xp1: f32 = 0.0
            xp2: f32 = 0.0
            for j in range(H - 1, -1, -1):
                y2[i, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
                xp2 = xp1
                xp1 = imgIn[i, j]
                yp2 = yp1
                yp1 = y2[i, j]
        for i, j in sd.grid(W, H):
            imgOut[i, j] = y1[i, j] + y2[i, j]
        for j in range(H):
            tm1: f32 = 0.0
            ym3: f32 = 0.0
            ym4: f32 = 0.0
            for i in range(W):
                y1[i, j] = a5 * imgOut[i, j] + a6 * tm1 + b1 * ym3 + b2 * ym4
                tm1 = imgOut[i, j]
                ym4 = ym3
                ym3 = y1[i, j]
        for j in range(H):
            tp1: f32 = 0.0
            tp2: f32 = 0.0
            yp3: f32 = 0.0
            yp4: f32 = 0.0
            for i in range(W - 1, -1, -1):
                y2[i, j] = a7 * tp1 + a8 * tp2 + b1 * yp3 + b2 * yp4
                tp2 = tp1
                tp1 = imgOut[i, j]
                yp4 = yp3
                yp3 = y2[i, j]
        for i, j in sd.grid(W, H):
            imgOut[i, j] = y1[i, j] + y2[i, j]
    return deriche, (a1, a2, a3, a4, b1, b2)


def _causal(X, a_cur, a_prev, b1, b2):
    """y[j] = a_cur * x[j] + a_prev * x[j - 1] + b1 * y[j - 1] + b2 * y[j - 2] along axis 1 (rows in parallel)."""
    y = np.zeros_like(X)
    xm1 = np.zeros(X.shape[0], X.dtype)
    ym1 = np.zeros(X.shape[0], X.dtype)
    ym2 = np.zeros(X.shape[0], X.dtype)
    for j in range(X.shape[1]):
        y[:, j] = a_cur * X[:, j] + a_prev * xm1 + b1 * ym1 + b2 * ym2
        xm1, ym2, ym1 = X[:, j], ym1, y[:, j]
    return y


def _anticausal(X, a1, a2, b1, b2):
    y = np.zeros_like(X)
    xp1 = np.zeros(X.shape[0], X.dtype)
    xp2 = np.zeros(X.shape[0], X.dtype)
    yp1 = np.zeros(X.shape[0], X.dtype)
    yp2 = np.zeros(X.shape[0], X.dtype)
    for j in range(X.shape[1] - 1, -1, -1):
        y[:, j] = a1 * xp1 + a2 * xp2 + b1 * yp1 + b2 * yp2
        xp2, xp1, yp2, yp1 = xp1, X[:, j], yp1, y[:, j]
    return y


def ref_deriche(imgIn, imgOut, y1, y2, coefs):
    a1, a2, a3, a4, b1, b2 = (np.float32(x) for x in coefs)
    Y1 = _causal(imgIn, a1, a2, b1, b2)
    Y2 = _anticausal(imgIn, a3, a4, b1, b2)
    mid = Y1 + Y2
    Z1 = _causal(mid.T, a1, a2, b1, b2).T
    Z2 = _anticausal(mid.T, a3, a4, b1, b2).T
    imgOut[:] = Z1 + Z2
    y1[:], y2[:] = Z1, Z2


# ------------------------------------------------------------------------------------------ the table
def _bench(sizes, make, inputs, ref, **options):
    return Bench(sizes, make, inputs, ref, **options)


def _gramschmidt_determined(arrs):
    """With M = 60 rows, only the first 60 of the 80 columns are independent: the rest orthogonalise rounding
    noise (in any implementation), so the check is on the determined part."""
    A, R, Q = arrs
    m = A.shape[0]
    return A[:, :m], R[:m, :], Q[:, :m]


KERNELS: dict[str, Bench] = {
    "2mm": _bench(dict(NI=40, NJ=50, NK=70, NL=80), lambda s: make_2mm(**s),
                  lambda s, r: (f(r, s["NI"], s["NJ"]), f(r, s["NI"], s["NK"]), f(r, s["NK"], s["NJ"]),
                                f(r, s["NJ"], s["NL"]), f(r, s["NI"], s["NL"])), ref_2mm),
    "3mm": _bench(dict(NI=40, NJ=50, NK=60, NL=70, NM=80), lambda s: make_3mm(**s),
                  lambda s, r: (f(r, s["NI"], s["NJ"]), f(r, s["NI"], s["NK"]), f(r, s["NK"], s["NJ"]),
                                f(r, s["NJ"], s["NL"]), f(r, s["NJ"], s["NM"]), f(r, s["NM"], s["NL"]),
                                f(r, s["NI"], s["NL"])), ref_3mm),
    "adi": _bench(dict(TSTEPS=40, N=60), lambda s: make_adi(**s),
                  lambda s, r: tuple(f(r, s["N"], s["N"]) for _ in range(4)), None, rtol=1e-3, atol=1e-4),
    "atax": _bench(dict(M=116, N=124), lambda s: make_atax(**s),
                   lambda s, r: (f(r, s["M"], s["N"]), f(r, s["N"]), f(r, s["N"]), f(r, s["M"])), ref_atax),
    "bicg": _bench(dict(M=116, N=124), lambda s: make_bicg(**s),
                   lambda s, r: (f(r, s["N"], s["M"]), f(r, s["M"]), f(r, s["N"]), f(r, s["M"]), f(r, s["N"])),
                   ref_bicg),
    "cholesky": _bench(dict(N=120), lambda s: make_cholesky(**s), lambda s, r: (spd(r, s["N"]),), ref_cholesky,
                       rtol=1e-3, atol=1e-4),
    "correlation": _bench(dict(M=80, N=100), lambda s: make_correlation(**s),
                          lambda s, r: (f(r, s["N"], s["M"]), f(r, s["M"], s["M"]), f(r, s["M"]), f(r, s["M"])),
                          ref_correlation, rtol=1e-3, atol=1e-4),
    "covariance": _bench(dict(M=80, N=100), lambda s: make_covariance(**s),
                         lambda s, r: (f(r, s["N"], s["M"]), f(r, s["M"], s["M"]), f(r, s["M"])), ref_covariance,
                         rtol=1e-3, atol=1e-4),
    "deriche": _bench(dict(W=192, H=128), lambda s: make_deriche(**s),
                      lambda s, r: tuple(f(r, s["W"], s["H"]) for _ in range(4)), None, rtol=1e-3, atol=1e-4),
    "doitgen": _bench(dict(NQ=20, NR=25, NP=30), lambda s: make_doitgen(**s),
                      lambda s, r: (f(r, s["NR"], s["NQ"], s["NP"]), f(r, s["NP"], s["NP"]), f(r, s["NP"])),
                      ref_doitgen),
    "durbin": _bench(dict(N=120), lambda s: make_durbin(**s),
                     lambda s, r: ((f(r, s["N"]) * np.float32(0.1)) / np.arange(1, s["N"] + 1, dtype=np.float32),
                                   np.zeros(s["N"], np.float32), np.zeros(s["N"], np.float32)), ref_durbin,
                     rtol=1e-3, atol=1e-5),
    "fdtd-2d": _bench(dict(TMAX=40, NX=60, NY=80), lambda s: make_fdtd_2d(**s),
                      lambda s, r: (f(r, s["NX"], s["NY"]), f(r, s["NX"], s["NY"]), f(r, s["NX"], s["NY"]),
                                    f(r, s["TMAX"])), ref_fdtd_2d, rtol=1e-3, atol=1e-3),
    "floyd-warshall": _bench(dict(N=180), lambda s: make_floyd_warshall(**s),
                             lambda s, r: (_distances(r, s["N"]),), ref_floyd_warshall, rtol=0, atol=0),
    "gemm": _bench(dict(NI=60, NJ=70, NK=80), lambda s: make_gemm(**s),
                   lambda s, r: (f(r, s["NI"], s["NJ"]), f(r, s["NI"], s["NK"]), f(r, s["NK"], s["NJ"])), ref_gemm),
    "gemver": _bench(dict(N=120), lambda s: make_gemver(**s),
                     lambda s, r: (f(r, s["N"], s["N"]),) + tuple(f(r, s["N"]) for _ in range(8)), ref_gemver,
                     rtol=1e-3, atol=1e-3),
    "gesummv": _bench(dict(N=90), lambda s: make_gesummv(**s),
                      lambda s, r: (f(r, s["N"], s["N"]), f(r, s["N"], s["N"]), f(r, s["N"]), f(r, s["N"]),
                                    f(r, s["N"])), ref_gesummv),
    "gramschmidt": _bench(dict(M=60, N=80), lambda s: make_gramschmidt(**s),
                          lambda s, r: (f(r, s["M"], s["N"]), np.zeros((s["N"], s["N"]), np.float32),
                                        np.zeros((s["M"], s["N"]), np.float32)), ref_gramschmidt,
                          rtol=1e-3, atol=1e-4, check=_gramschmidt_determined),
    "heat-3d": _bench(dict(TSTEPS=40, N=20), lambda s: make_heat_3d(**s),
                      lambda s, r: (f(r, s["N"], s["N"], s["N"]), f(r, s["N"], s["N"], s["N"])), None),
    "jacobi-1d": _bench(dict(TSTEPS=40, N=120), lambda s: make_jacobi_1d(**s),
                        lambda s, r: (f(r, s["N"]), f(r, s["N"])), None),
    "jacobi-2d": _bench(dict(TSTEPS=40, N=90), lambda s: make_jacobi_2d(**s),
                        lambda s, r: (f(r, s["N"], s["N"]), f(r, s["N"], s["N"])), None),
    "lu": _bench(dict(N=120), lambda s: make_lu(**s), lambda s, r: (spd(r, s["N"]),), ref_lu, rtol=1e-3, atol=1e-4),
    "ludcmp": _bench(dict(N=120), lambda s: make_ludcmp(**s),
                     lambda s, r: (spd(r, s["N"]), f(r, s["N"]), np.zeros(s["N"], np.float32),
                                   np.zeros(s["N"], np.float32)), ref_ludcmp, rtol=1e-3, atol=1e-4),
    "mvt": _bench(dict(N=120), lambda s: make_mvt(**s),
                  lambda s, r: tuple(f(r, s["N"]) for _ in range(4)) + (f(r, s["N"], s["N"]),), ref_mvt),
    "nussinov": _bench(dict(N=180), lambda s: make_nussinov(**s),
                       lambda s, r: (r.integers(0, 4, s["N"]).astype(np.int32), np.zeros((s["N"], s["N"]), np.int32)),
                       ref_nussinov, rtol=0, atol=0),
    "seidel-2d": _bench(dict(TSTEPS=40, N=120), lambda s: make_seidel_2d(**s), lambda s, r: (f(r, s["N"], s["N"]),),
                        None),
    "symm": _bench(dict(M=60, N=80), lambda s: make_symm(**s),
                   lambda s, r: (f(r, s["M"], s["N"]), f(r, s["M"], s["M"]), f(r, s["M"], s["N"])), ref_symm),
    "syr2k": _bench(dict(M=60, N=80), lambda s: make_syr2k(**s),
                    lambda s, r: (f(r, s["N"], s["N"]), f(r, s["N"], s["M"]), f(r, s["N"], s["M"])), ref_syr2k),
    "syrk": _bench(dict(M=60, N=80), lambda s: make_syrk(**s),
                   lambda s, r: (f(r, s["N"], s["N"]), f(r, s["N"], s["M"])), ref_syrk),
    "trisolv": _bench(dict(N=120), lambda s: make_trisolv(**s),
                      lambda s, r: (_lower(r, s["N"]), np.zeros(s["N"], np.float32), f(r, s["N"])), ref_trisolv,
                      rtol=1e-3, atol=1e-5),
    "trmm": _bench(dict(M=60, N=80), lambda s: make_trmm(**s),
                   lambda s, r: (f(r, s["M"], s["M"]), f(r, s["M"], s["N"])), ref_trmm),
}


def _distances(r, n):
    D = (r.random((n, n)) * 100).astype(np.float32).round()
    np.fill_diagonal(D, 0.0)
    return D


def _lower(r, n):
    L = (np.tril(r.random((n, n))) * 0.1).astype(np.float32)
    np.fill_diagonal(L, 1.0 + r.random(n).astype(np.float32))
    return L


def reference(name: str, args, sizes: dict | None = None) -> tuple:
    """The arrays after the NumPy reference ran on copies of ``args`` (made at ``sizes``, default SMALL)."""
    b = KERNELS[name]
    sizes = sizes or b.sizes
    arrs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if name == "adi":
        _, coefs = make_adi(**sizes)
        ref_adi(*arrs, sizes["TSTEPS"], coefs)
    elif name == "deriche":
        _, coefs = make_deriche(**sizes)
        ref_deriche(*arrs, coefs)
    elif name in ("heat-3d", "jacobi-1d", "jacobi-2d", "seidel-2d"):
        {"heat-3d": ref_heat_3d, "jacobi-1d": ref_jacobi_1d, "jacobi-2d": ref_jacobi_2d,
         "seidel-2d": ref_seidel_2d}[name](*arrs, sizes["TSTEPS"])
    else:
        b.ref(*arrs)
    return tuple(arrs)


def compared(name: str, arrays) -> tuple:
    """The arrays (or their determined parts) a test compares."""
    check = KERNELS[name].check
    return tuple(check(arrays)) if check is not None else tuple(arrays)


def kernel(name: str, sizes: dict | None = None):
    """The kernel of ``name`` at ``sizes`` (default: PolyBench's SMALL)."""
    b = KERNELS[name]
    k = b.make(sizes or b.sizes)
    return k[0] if isinstance(k, tuple) else k


def inputs(name: str, seed: int = 0, sizes: dict | None = None) -> tuple:
    b = KERNELS[name]
    return b.inputs(sizes or b.sizes, np.random.default_rng(seed))
