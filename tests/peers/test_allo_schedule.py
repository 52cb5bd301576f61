"""Loop schedules from Allo's tests: split, reorder, fuse, compute_at at any depth, pipeline.

Source: cornell-zhang/allo, tests/test_schedule_compute.py (each test names the Allo test it ports).  Every
schedule runs on the simulator (``s(...)``) and matches NumPy; a few also C-simulate.
"""
from __future__ import annotations

import numpy as np
import pytest
from peers_util import floats, ints, needs_gxx

import streamdsl as sd
from streamdsl import f32, i32
from streamdsl.ir.nodes import For


@sd.kernel
def add4(A: i32[4, 5, 6, 7], B: i32[4, 5, 6, 7]) -> i32[4, 5, 6, 7]:
    C: i32[4, 5, 6, 7] = 0
    for i, j, k, m in sd.grid(4, 5, 6, 7):
        C[i, j, k, m] = A[i, j, k, m] + B[i, j, k, m]
    return C


@sd.kernel
def add2(A: i32[10, 20], B: i32[10, 20]) -> i32[10, 20]:
    C: i32[10, 20] = 0
    for i, j in sd.grid(10, 20):
        C[i, j] = A[i, j] + B[i, j]
    return C


@sd.kernel
def two_stages(A: i32[10, 20, 30]) -> i32[10, 20, 30]:
    B: i32[10, 20, 30] = 0
    for i, j, m in sd.grid(10, 20, 30):
        B[i, j, m] = A[i, j, m] * 2
    C: i32[10, 20, 30] = 0
    for ii, jj, mm in sd.grid(10, 20, 30):
        C[ii, jj, mm] = B[ii, jj, mm] + 1
    return C


A2, B2 = ints((10, 20), seed=1), ints((10, 20), seed=2)
A3 = ints((10, 20, 30), seed=3)


@pytest.mark.parametrize("order", [("k", "j"), ("m", "i")])
def test_reorder_consecutive_and_apart(order):
    """test_schedule_compute.py::test_reorder: axes next to each other, and the outermost with the innermost."""
    s = sd.schedule(add4)
    s.reorder(*(s.loop(v) for v in order))
    A, B = ints((4, 5, 6, 7), seed=4), ints((4, 5, 6, 7), seed=5)
    np.testing.assert_array_equal(s(A, B), A + B)


@pytest.mark.parametrize("factor", [4, 3])
def test_split_dividing_or_not(factor):
    """test_schedule_compute.py::test_split: 20 by 4, and by 3 (a guarded tail)."""
    s = sd.schedule(add2)
    s.split(s.loop("j"), factor)
    np.testing.assert_array_equal(s(A2, B2), A2 + B2)


def test_split_imperfect():
    """test_schedule_compute.py::test_split_imperfect: split a loop holding a scalar reduction."""
    @sd.kernel
    def kernel(A: i32[10, 10]) -> i32[10]:
        B: i32[10] = 0
        for x in range(10):
            v: i32 = 0
            for r in range(10):
                v += A[x, r]
            B[x] = v
        return B

    s = sd.schedule(kernel)
    s.split(s.loop("x"), 5)
    A = ints((10, 10), seed=6)
    np.testing.assert_array_equal(s(A), A.sum(1))


@pytest.mark.parametrize("fi, fj, order", [(2, 5, ("j_o", "i_o", "j_i", "i_i")), (3, 3, ("j_o", "j_i", "i_o", "i_i"))])
def test_split_reorder(fi, fj, order):
    """test_schedule_compute.py::test_split_reorder: split both loops, then interleave the four: the everyday
    tile-and-reorder (an elementwise add carries nothing)."""
    s = sd.schedule(add2)
    s.split(s.loop("i"), fi)
    s.split(s.loop("j"), fj)
    s.reorder(*(s.loop(v) for v in order))
    np.testing.assert_array_equal(s(A2, B2), A2 + B2)


def test_gemm_split_then_move_the_reduction_outside():
    """Issue 24's gemm: after split(j, 4), moving k outside j_o and j_i keeps every sum's order."""
    @sd.kernel
    def gemm(A: f32[16, 8], B: f32[8, 16]) -> f32[16, 16]:
        C: f32[16, 16] = 0.0
        for i, j, k in sd.grid(16, 16, 8):
            C[i, j] += A[i, k] * B[k, j]
        return C

    s = sd.schedule(gemm)
    jo, ji = s.split(s.loop("j"), 4)
    s.reorder(s.loop("k"), jo, ji)
    A, B = floats((16, 8), 1), floats((8, 16), 2)
    np.testing.assert_array_equal(s(A, B), gemm(A, B))  # the same sums in the same order: bit-exact


@pytest.mark.parametrize("p, c", [("i", "ii"), ("j", "jj"), ("m", "mm")])
def test_compute_at_every_axis(p, c):
    """test_schedule_compute.py::test_compute_at, test_case_1: axis 0, 1 and 2 in one call each (the loops
    around both nests fuse too)."""
    s = sd.schedule(two_stages)
    s.compute_at(s.loop(p), s.loop(c))
    np.testing.assert_array_equal(s(A3), A3 * 2 + 1)
    assert sum(isinstance(st, For) for st in s.ir.body) == 1  # one nest: the producer's loops fused too


def test_compute_at_then_fuse_split_reorder():
    """test_schedule_compute.py::test_compute_at, test_cases 2 to 6: compute_at followed by fuse, by split,
    by reorder of an axis it fused, and by split + reorder into tiles."""
    for steps in ("fuse", "split", "reorder", "reorder_j", "tile"):
        s = sd.schedule(two_stages)
        s.compute_at(s.loop("j" if steps == "reorder_j" else "m"), s.loop("jj" if steps == "reorder_j" else "mm"))
        if steps == "fuse":
            s.fuse(s.loop("ii"), s.loop("jj"))
        elif steps == "split":
            s.split(s.loop("ii"), 3)
            s.split(s.loop("jj"), 3)
        elif steps in ("reorder", "reorder_j"):
            s.reorder(s.loop("jj"), s.loop("ii"))
        else:
            s.split(s.loop("ii"), 3)
            s.split(s.loop("jj"), 3)
            s.reorder(s.loop("ii_o"), s.loop("jj_o"), s.loop("ii_i"), s.loop("jj_i"))
        np.testing.assert_array_equal(s(A3), A3 * 2 + 1, err_msg=steps)


def test_compute_at_complex():
    """test_schedule_compute.py::test_compute_at_complex: three stages, fused at two depths."""
    @sd.kernel
    def kernel(A: i32[10, 20, 30]) -> i32[10, 20, 30]:
        B: i32[10, 20, 30] = 0
        for i, j, m in sd.grid(10, 20, 30):
            B[i, j, m] = A[i, j, m] * 2
        C: i32[10, 20, 30] = 0
        for ii, jj, mm in sd.grid(10, 20, 30):
            C[ii, jj, mm] = B[ii, jj, mm] + 1
        D: i32[10, 20, 30] = 0
        for iii, jjj, mmm in sd.grid(10, 20, 30):
            D[iii, jjj, mmm] = C[iii, jjj, mmm] % 3
        return D

    s = sd.schedule(kernel)
    s.compute_at(s.loop("j"), s.loop("jj"))
    s.compute_at(s.loop("mm"), s.loop("mmm"))
    np.testing.assert_array_equal(s(A3), (A3 * 2 + 1) % 3)


def test_multiband_with_duplicate_loop_names():
    """test_schedule_compute.py::test_multiband: two nests both over (i, j); the handles tell them apart."""
    @sd.kernel
    def kernel(A: i32[32, 32]) -> i32[32, 32]:
        B: i32[32, 32] = 0
        for i, j in sd.grid(32, 32):
            B[i, j] = A[i, j] + 1
        C: i32[32, 32] = 0
        for i, j in sd.grid(32, 32):
            C[i, j] = B[i, j] * 2
        return C

    s = sd.schedule(kernel)
    with pytest.raises(sd.ScheduleError, match="has 2 loops named 'j'"):
        s.loop("j")
    s.compute_at(s.loop("j", 0), s.loop("j", 1))
    A = ints((32, 32), seed=7)
    np.testing.assert_array_equal(s(A), (A + 1) * 2)


def test_a_dependence_compute_at_would_reverse_is_refused():
    """A consumer reading the producer's next row cannot run before it is written."""
    @sd.kernel
    def shifted(A: i32[8, 8]) -> i32[7, 8]:
        B: i32[8, 8] = 0
        for i, j in sd.grid(8, 8):
            B[i, j] = A[i, j] * 2
        C: i32[7, 8] = 0
        for ii, jj in sd.grid(7, 8):
            C[ii, jj] = B[ii + 1, jj]
        return C

    s = sd.schedule(shifted)
    with pytest.raises(sd.ScheduleError, match="have different bounds"):
        s.compute_at(s.loop("i"), s.loop("ii"))

    @sd.kernel
    def ahead(A: i32[8, 8]) -> i32[8, 8]:
        B: i32[8, 8] = 0
        for i, j in sd.grid(8, 8):
            B[i, j] = A[i, j] * 2
        C: i32[8, 8] = 0
        for ii, jj in sd.grid(8, 8):
            C[ii, jj] = B[(ii + 1) % 8, jj]
        return C

    s = sd.schedule(ahead)
    with pytest.raises(sd.ScheduleError, match="compute_at would reverse a dependence: 'B' is written"):
        s.compute_at(s.loop("i"), s.loop("ii"))


def test_access_imperfect_loops():
    """test_schedule_compute.py::test_access_imperfect_loops: split i, move j between i_o and i_i over a body
    holding two loops, unroll k, fuse i_o with j, pipeline j0."""
    M = 16

    @sd.kernel
    def gemm(inp: f32[M, M], W: f32[M, M], B: f32[M]) -> f32[M, M]:
        outp: f32[M, M] = 0.0
        for i in range(M):
            for j in range(M):
                for k in range(M):
                    outp[i, j] += inp[i, k] * W[k, j]
                for j0 in range(M):
                    outp[i, j0] = B[j0]
        return outp

    s = sd.schedule(gemm)
    io, ii = s.split(s.loop("i"), 8)
    s.reorder(io, s.loop("j"), ii)
    s.unroll(s.loop("k"))
    s.fuse(io, s.loop("j"))
    s.pipeline(s.loop("j0"))
    inp, W, B = floats((M, M), 1), floats((M, M), 2), floats(M, 3)
    np.testing.assert_array_equal(s(inp, W, B), gemm(inp, W, B))


def test_fuse_three_and_unroll():
    """test_schedule_compute.py::test_schedule: fuse i, j, k into one loop and unroll it."""
    @sd.kernel
    def gemm(A: i32[8, 8], B: i32[8, 8]) -> i32[8, 8]:
        C: i32[8, 8] = 0
        for i, j, k in sd.grid(8, 8, 8):
            C[i, j] += A[i, k] * B[k, j]
        return C

    s = sd.schedule(gemm)
    f = s.fuse(s.loop("i"), s.loop("j"), s.loop("k"))
    s.unroll(f, 4)
    A, B = ints((8, 8), seed=8), ints((8, 8), seed=9)
    np.testing.assert_array_equal(s(A, B), A @ B)


@needs_gxx
def test_pipeline_ii_and_csim():
    """test_schedule_compute.py::test_pipeline: pipeline i at II 4; the pragma is emitted and C-sim agrees."""
    s = sd.schedule(add2)
    s.pipeline(s.loop("i"), ii=4)
    prj = s.build("hls")
    assert "#pragma HLS pipeline II=4" in prj.source
    np.testing.assert_array_equal(prj.csim(A2, B2), A2 + B2)


def test_build_sim_is_the_same_as_calling_the_schedule():
    """Allo's ``mod = s.build(); mod(A, B)``: ``s.build("sim")`` returns a module that runs the schedule."""
    s = sd.schedule(add2)
    s.split(s.loop("j"), 4)
    mod = s.build("sim")
    np.testing.assert_array_equal(mod(A2, B2), s(A2, B2))
    assert "add2" in repr(mod)
