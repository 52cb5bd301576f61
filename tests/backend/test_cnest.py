"""The compiled simulator's loop nests (backend/cnest.py): checks taken out of nests, loops interchanged and
jammed, transcendentals computed in strips.  Each kernel runs interpreted and compiled (``both``: the same
bits, or the same error at the same line); the printed C++ shows that the fast form was taken."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i32
from streamdsl.backend.cgen import print_program
from streamdsl.backend.sim import simulate
from streamdsl.errors import ShapeError
from streamdsl.library.llm.attention import make_attention_decode, make_softmax
from streamdsl.library.llm.linear import make_lm_head, make_linear, make_qkv, make_qkv_fused
from streamdsl.library.llm.mlp import make_geglu_mlp, make_swiglu_mlp

from .test_native import both, random_args

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the compiled simulator needs g++")


def _source(k) -> str:
    return print_program(k.ir).source


def _normal(k, seed: int = 0):
    """Normal floats for the tensor parameters (the scalars are the caller's)."""
    r = np.random.default_rng(seed)
    return [r.standard_normal(p.type.shape).astype(np.float32) for p in k.ir.params if hasattr(p.type, "shape")]


# ------------------------------------------------------- the library's linears
LINEARS = [make_linear(3, 37, 29), make_linear(2, 16, 10, bias=False), make_lm_head(2, 13, 31),
           make_swiglu_mlp(2, 19, 23), make_geglu_mlp(1, 9, 14), make_qkv(2, 24, 6, 2, 4),
           make_qkv_fused(2, 48, 3)]


@pytest.mark.parametrize("k", LINEARS, ids=lambda k: k.ir.name)
def test_linears_run_unchecked_jammed_and_exact(k):
    src = _source(k)
    assert "sdn::ck(" not in src  # every index is known in bounds before the kernel runs
    assert "jammed" in src  # independent outputs side by side (sizes that leave a remainder)
    for seed in range(2):
        both(k.ir, _normal(k, seed))


def test_float32_linears_run_in_vector_lanes():
    for k in LINEARS:
        assert "vector(s) of 4" in _source(k), k.ir.name
    assert "rows transposed" in _source(make_lm_head(2, 13, 31))  # a weight row apart: transposed in registers


@sd.kernel
def gemm(A: f32[9, 13], B: f32[13, 11]) -> f32[9, 11]:
    """Adjacent columns of B in the lanes (one vector load), A's element the same for every lane."""
    C: f32[9, 11] = 0.0
    for i, j in sd.grid(9, 11):
        acc: f32 = 0.0
        for k in range(13):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
    return C


@sd.kernel
def conv(X: f32[3, 10, 12], W: f32[4, 3, 3, 3], s: f32) -> f32[4, 8, 10]:
    """A three-deep sum per output, a scale read from a parameter, and a temporary per iteration."""
    Y: f32[4, 8, 10] = 0.0
    for co, y, x in sd.grid(4, 8, 10):
        acc: f32 = 0.0
        for ci, ky, kx in sd.grid(3, 3, 3):
            t: f32 = X[ci, y + ky, x + kx] * W[co, ci, ky, kx]
            acc = acc + t * s - t / 4.0
        Y[co, y, x] = -acc
    return Y


@sd.kernel
def strided_columns(A: f32[9, 13], B: f32[13, 24]) -> (f32[9, 24], f32[9, 24]):
    """Jammed loops stepping by 2 and by -1: the copies' columns of B are 2 apart, or adjacent downwards."""
    C: f32[9, 24] = 0.0
    D: f32[9, 24] = 0.0
    for i in range(9):
        for j in range(0, 24, 2):
            acc: f32 = 0.0
            for k in range(13):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
        for j in range(23, -1, -1):
            acc2: f32 = 0.0
            for k in range(13):
                acc2 += A[i, k] * B[k, 23 - j]
            D[i, j] = acc2
    return C, D


@sd.kernel
def gemm64(A: sd.f64[9, 13], B: sd.f64[13, 11]) -> sd.f64[9, 11]:
    """float64: jammed, but not in float32 lanes."""
    C: sd.f64[9, 11] = 0.0
    for i, j in sd.grid(9, 11):
        acc: sd.f64 = 0.0
        for k in range(13):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
    return C


def test_lanes_of_adjacent_and_repeated_operands():
    assert "vector(s) of 4" in _source(gemm) and "vector(s) of 4" in _source(conv)
    assert "jammed" in _source(gemm64) and "vector(s)" not in _source(gemm64)
    for k in (gemm, conv, gemm64, strided_columns):
        for seed in range(3):
            both(k.ir, random_args(k.ir, seed))  # infinities and NaN among the inputs


def test_output_index_innermost_is_interchanged():
    # linear: `for k, o: A[o] += X[i, k] * W[o, k]` walks W a row apart; compiled, k runs innermost
    src = _source(make_linear(1, 40, 24, bias=False))
    assert "jammed" in src.split("for (; ")[1].split("\n")[0]  # the jammed loop is the outputs' loop
    both(make_linear(1, 40, 24, bias=False).ir, _normal(make_linear(1, 40, 24, bias=False)))


# ------------------------------------------------------------- illegal orders
@sd.kernel
def skewed(A0: f32[12, 12], B: f32[12, 12]) -> f32[12, 12]:
    """Walking k innermost would be contiguous, but (k, c) reads what (k-1, c+1) wrote: no interchange."""
    A: f32[12, 12] = 0.0
    for c, k in sd.grid(12, 12):
        A[c, k] = A0[c, k]
    for k in range(1, 12):
        for c in range(11):
            A[c, k] = A[c + 1, k - 1] * 0.5 + B[c, k]
    return A


@sd.kernel
def chained_rows(E: f32[40, 16], x: f32[16]) -> f32[40]:
    """Each row's dot product adds the previous output: the rows are not independent, so not jammed."""
    out: f32[40] = 0.0
    for v in range(1, 40):
        acc: f32 = 0.0
        for k in range(16):
            acc += E[v, k] * x[k]
        out[v] = acc + out[v - 1]
    return out


def test_dependent_loops_keep_their_order():
    assert "jammed" not in _source(chained_rows)
    for k in (skewed, chained_rows):
        for seed in range(2):
            both(k.ir, _normal(k, seed))


# ---------------------------------------------------------- checks and errors
@sd.kernel
def rows(X: f32[8, 16], W: f32[12, 16], n: i32) -> f32[12]:
    Y: f32[12] = 0.0
    for o in range(n):
        acc: f32 = 0.0
        for k in range(16):
            acc += X[o % 8, k] * W[o, k]  # W overruns when n > 12
        Y[o] = acc
    return Y


def test_a_failed_check_runs_the_checked_nest():
    X, W = _normal(rows)[:2]
    assert "jammed" in _source(rows) and "sdn::ck(" in _source(rows)  # a fast nest and its checked fallback
    for n in (0, 5, 12):
        both(rows.ir, [X, W, n])
    line = next(i for i, s in enumerate(Path(__file__).read_text().splitlines(), 1) if "# W overruns" in s)
    for n in (13, 40):
        for mode in ("interp", "compiled"):
            with pytest.raises(ShapeError) as err:
                simulate(rows.ir, X, W, n, mode=mode)
            assert err.value.loc.line == line and "'W' (size 12)" in str(err.value)
        both(rows.ir, [X, W, n])


@sd.kernel
def wrapped(A: f32[64], s: i32) -> (f32[16], f32[16]):
    """``i * 2**32`` is 0 in i32, and ``i * s`` wraps for a large ``s``: the exact indices are far out of
    bounds, the i32 ones are not."""
    Y: f32[16] = 0.0
    Z: f32[16] = 0.0
    for i in range(4):
        for j in range(4):
            Y[i * 4 + j] = A[i * 1073741824 * 4 + j + 8]
            Z[i * 4 + j] = A[i * s + j + 8]
    return Y, Z


def test_an_index_that_wraps_is_checked_as_the_interpreter_computes_it():
    A = _normal(wrapped)[0]
    for s in (3, 2**30, -(2**31)):
        both(wrapped.ir, [A, s])  # s = 2**30: 2s and 3s wrap to in-range values; s = -2**31: i*s is 0 or -2**31
    with pytest.raises(ShapeError):
        simulate(wrapped.ir, A, 2**29, mode="compiled")


@sd.kernel
def shapes(A: f32[20, 20], T: f32[4]) -> (f32[20, 20], f32[4], f32[20]):
    """Triangular and downward loops, a stride of 2, a ``% 4`` index, and a local holding an index."""
    B: f32[20, 20] = 0.0
    P: f32[4] = 0.0
    D: f32[20] = 0.0
    for i in range(19, -1, -2):
        h: i32 = 19 - i
        for j in range(i, 20):
            B[h, j] = A[i, j] * 2.0 + B[h, i]
            P[j % 4] += A[j, h] * T[(i + j) % 4]
        for j in range(0, i, 3):
            D[j] += A[i, j] - A[j, i]
    return B, P, D


@sd.kernel
def siblings(A: f32[40], n: i32) -> f32[40]:
    """Two loops named j: the first one's range is not the second one's."""
    B: f32[40] = 0.0
    for i in range(2):
        for j in range(n):
            B[j] = A[j] + 1.0  # out of bounds for n > 40
        for j in range(10):
            B[j] = B[j] * A[j + 30]
    return B


def test_sibling_loops_of_one_name_are_checked_apart():
    A = _normal(siblings)[0]
    for n in (0, 10, 40, 41, 1000):
        both(siblings.ir, [A, n])


def test_triangular_strided_and_modular_nests():
    assert "sdn::ck(" not in _source(shapes)
    for seed in range(3):
        both(shapes.ir, random_args(shapes.ir, seed))


# ------------------------------------------------------------ transcendentals
@sd.kernel
def strips(X: f32[3, 300], S0: f32[300]) -> (f32[3, 300], f32[300], f32[300], f32[300], f32[300]):
    Y: f32[3, 300] = 0.0
    S: f32[300] = 0.0
    G: f32[300] = 0.0
    R: f32[300] = 0.0
    W: f32[300] = 0.0
    for j in range(300):
        S[j] = S0[j]
        W[j] = S0[j]
    for i in range(3):  # a row softmax: exp of a strip (300 is not a multiple of the strip)
        mx: f32 = X[i, 0]
        for j in range(1, 300):
            mx = max(mx, X[i, j])
        total: f32 = 0.0
        for j in range(300):
            Y[i, j] = sd.exp(X[i, j] - mx)
            total += Y[i, j]
        for j in range(300):
            Y[i, j] = Y[i, j] / total
    for j in range(300):  # in place: each iteration reads and writes its own cell
        S[j] = sd.tanh(S[j] * 0.5)
    for j in range(300):  # through a local: silu
        g: f32 = X[1, j]
        G[j] = g * sd.sigmoid(g)
    x: f32 = 0.0
    for j in range(300):  # the argument reads a value the loop changes: element by element
        x = x * 0.5 + X[2, j]
        R[j] = sd.exp(x * 0.01) + sd.log(S0[j] * S0[j] + 1.0)
    for j in range(1, 300):  # reads what the iteration before wrote: element by element
        W[j] = sd.exp(W[j - 1] * 0.5)
    return Y, S, G, R, W


def test_transcendentals_in_strips_are_numpys():
    src = _source(strips)
    assert src.count("sdn::vcall1") == 4  # exp, tanh, sigmoid's exp and log; not exp(x * 0.01)
    assert src.count("sdn::call1<float>(") == 2
    for seed in range(3):
        both(strips.ir, random_args(strips.ir, seed))  # zeros, infinities and NaN among the inputs


def test_library_softmax_and_attention():
    for k in (make_softmax(3, 300), make_attention_decode(4, 2, 9, 8)):
        assert "sdn::vcall1" in _source(k)
        for seed in range(2):
            both(k.ir, _normal(k, seed) + ([7] if k.ir.params[-1].type == i32 else []))
