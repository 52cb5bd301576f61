"""Memory schedules from Allo's tests: reuse_at (line and window buffers), buffer_at, partition.

Source: cornell-zhang/allo, tests/test_schedule_memory.py (each test names the Allo test it ports).  Every
schedule runs on the simulator and matches NumPy; the 2-D convolution also C-simulates.
"""
from __future__ import annotations

import numpy as np
import pytest
from peers_util import floats, ints, needs_gxx

import streamdsl as sd
from streamdsl import f32, i32


def stencil(A: np.ndarray, offsets, out_shape) -> np.ndarray:
    """sum over offsets of A shifted: the NumPy form of the blur kernels."""
    out = np.zeros(out_shape, np.int64)
    for off in offsets:
        out += A[tuple(slice(o, o + n) for o, n in zip(off, out_shape))]
    return out


@sd.kernel
def blur_x(A: i32[10, 10]) -> i32[10, 8]:
    B: i32[10, 8] = 0
    for y, x in sd.grid(10, 8):
        B[y, x] = A[y, x] + A[y, x + 1] + A[y, x + 2]
    return B


@sd.kernel
def blur_y(A: i32[10, 10]) -> i32[8, 10]:
    B: i32[8, 10] = 0
    for y, x in sd.grid(8, 10):
        B[y, x] = A[y, x] + A[y + 1, x] + A[y + 2, x]
    return B


@sd.kernel
def blur_xy(A: i32[10, 10]) -> i32[8, 8]:
    B: i32[8, 8] = 0
    for y, x in sd.grid(8, 8):
        B[y, x] = A[y, x] + A[y + 1, x + 1] + A[y + 2, x + 2]
    return B


@sd.kernel
def conv2d(A: i32[10, 10], F: i32[3, 3]) -> i32[8, 8]:
    B: i32[8, 8] = 0
    for y, x in sd.grid(8, 8):
        v: i32 = 0
        for r, c in sd.grid(3, 3):
            v += A[y + r, x + c] * F[r, c]
        B[y, x] = v
    return B


@sd.kernel
def box3(A: i32[10, 10]) -> i32[8, 8]:
    """A 3x3 box sum: the kernel of Allo's line-buffer tests."""
    B: i32[8, 8] = 0
    for y, x in sd.grid(8, 8):
        v: i32 = 0
        for r, c in sd.grid(3, 3):
            v += A[y + r, x + c]
        B[y, x] = v
    return B


A = ints((10, 10), seed=1)
F = ints((3, 3), seed=2)


def conv_ref(A, F, stride=1):
    n = (A.shape[0] - 3) // stride + 1
    out = np.zeros((n, n), np.int64)
    for r in range(3):
        for c in range(3):
            out += A[r:r + stride * n:stride, c:c + stride * n:stride][:n, :n] * F[r, c]
    return out


def test_reuse_blur_x_window():
    """test_schedule_memory.py::test_reuse_blur_x: a 3-element shift register along x."""
    s = sd.schedule(blur_x)
    rb = s.reuse_at(s.buffer("A"), s.loop("x"))
    assert rb.name == "A_window" and "alloc A_window: i32[3]" in str(s)
    np.testing.assert_array_equal(s(A), stencil(A, [(0, 0), (0, 1), (0, 2)], (10, 8)))


def test_reuse_blur_y_line_buffer():
    """test_schedule_memory.py::test_reuse_blur_y: three rows of A kept on chip while y moves."""
    s = sd.schedule(blur_y)
    lb = s.reuse_at(s.buffer("A"), s.loop("y"))
    assert lb.name == "A_line" and "alloc A_line: i32[3, 10]" in str(s)
    np.testing.assert_array_equal(s(A), stencil(A, [(0, 0), (1, 0), (2, 0)], (8, 10)))


def test_reuse_blur_x_y():
    """test_schedule_memory.py::test_reuse_blur_x_y: a line buffer along y, then a window on it along x."""
    s = sd.schedule(blur_xy)
    lb = s.reuse_at(s.buffer("A"), s.loop("y"))
    s.reuse_at(lb, s.loop("x"))
    np.testing.assert_array_equal(s(A), stencil(A, [(0, 0), (1, 1), (2, 2)], (8, 8)))


def test_reuse_blur_x_tensor():
    """test_schedule_memory.py::test_reuse_blur_x_tensor: reuse a local tensor another nest filled."""
    @sd.kernel
    def kernel(A: i32[10, 10]) -> i32[10, 8]:
        X: i32[10, 10] = 0
        for y, x in sd.grid(10, 10):
            X[y, x] = A[y, x]
        B: i32[10, 8] = 0
        for yy, xx in sd.grid(10, 8):
            B[yy, xx] = X[yy, xx] + X[yy, xx + 1] + X[yy, xx + 2]
        return B

    s = sd.schedule(kernel)
    s.reuse_at(s.buffer("X"), s.loop("xx"))
    np.testing.assert_array_equal(s(A), stencil(A, [(0, 0), (0, 1), (0, 2)], (10, 8)))


@pytest.mark.parametrize("axes", [("x",), ("y",), ("y", "x")])
def test_reuse_3d(axes):
    """test_schedule_memory.py::test_reuse_blur_x_3D, ::test_reuse_blur_y_3D, ::test_reuse_blur_x_y_3D: a third,
    untouched channel dimension kept in the buffers."""
    @sd.kernel
    def blur3(A: i32[10, 10, 2]) -> i32[8, 8, 2]:
        B: i32[8, 8, 2] = 0
        for y, x, c in sd.grid(8, 8, 2):
            B[y, x, c] = A[y, x, c] + A[y + 1, x + 1, c] + A[y + 2, x + 2, c]
        return B

    s = sd.schedule(blur3)
    buf = s.buffer("A")
    for ax in axes:
        buf = s.reuse_at(buf, s.loop(ax))
    A3 = ints((10, 10, 2), seed=3)
    np.testing.assert_array_equal(s(A3), stencil(A3, [(0, 0, 0), (1, 1, 0), (2, 2, 0)], (8, 8, 2)))


def test_reuse_blur_x_y_z_3d():
    """test_schedule_memory.py::test_reuse_blur_x_y_z_3D: a window buffer along each of three axes."""
    @sd.kernel
    def blur3(A: i32[10, 8, 6]) -> i32[8, 6, 4]:
        B: i32[8, 6, 4] = 0
        for y, x, z in sd.grid(8, 6, 4):
            B[y, x, z] = A[y, x, z] + A[y + 1, x + 1, z + 1] + A[y + 2, x + 2, z + 2]
        return B

    s = sd.schedule(blur3)
    b = s.reuse_at(s.buffer("A"), s.loop("y"))
    b = s.reuse_at(b, s.loop("x"))
    s.reuse_at(b, s.loop("z"))
    A3 = ints((10, 8, 6), seed=4)
    np.testing.assert_array_equal(s(A3), stencil(A3, [(0, 0, 0), (1, 1, 1), (2, 2, 2)], (8, 6, 4)))


def test_reuse_and_partition_conv2d():
    """test_schedule_memory.py::test_reuse_and_partition: line buffer, window buffer, both partitioned."""
    s = sd.schedule(conv2d)
    lb = s.reuse_at(s.buffer("A"), s.loop("y"))
    wb = s.reuse_at(lb, s.loop("x"))
    s.partition(lb, dim=1)
    s.partition(wb)
    np.testing.assert_array_equal(s(A, F), conv_ref(A, F))
    assert '[partition=((0, "complete", 0),)]' in str(s)  # the window: every element a register


@needs_gxx
def test_conv2d_line_and_window_buffers_csim():
    """test_schedule_memory.py::test_reuse_and_partition, built to HLS: the buffers become a partitioned line
    buffer and a register window, the shifts unrolled, and C-simulation agrees."""
    s = sd.schedule(conv2d)
    lb = s.reuse_at(s.buffer("A"), s.loop("y"))
    wb = s.reuse_at(lb, s.loop("x"))
    s.partition(wb)
    s.pipeline(s.loop("x"))
    prj = s.build("hls")
    assert "#pragma HLS array_partition variable=A_line type=complete dim=1" in prj.source
    assert "#pragma HLS array_partition variable=A_window type=complete dim=0" in prj.source
    np.testing.assert_array_equal(prj.csim(A, F), conv_ref(A, F))


def test_conv2d_line_buffer_only():
    """test_schedule_memory.py::test_conv2D_lb: a line buffer of a 3x3 sum."""
    s = sd.schedule(box3)
    s.reuse_at(s.buffer("A"), s.loop("y"))
    np.testing.assert_array_equal(s(A), conv_ref(A, np.ones((3, 3), np.int64)))


def test_conv2d_split_reorder_line_and_window():
    """test_schedule_memory.py::test_conv2D_lb_wb_schedule: split x, reorder (x_o, y, x_i), a line buffer at y
    and a window at x_i, partitioned, y pipelined."""
    s = sd.schedule(box3)
    xo, xi = s.split(s.loop("x"), 4)
    s.reorder(xo, s.loop("y"), xi)
    lb = s.reuse_at(s.buffer("A"), s.loop("y"))
    wb = s.reuse_at(lb, xi)
    s.partition(lb, dim=2)
    s.partition(wb)
    s.pipeline(s.loop("y"))
    np.testing.assert_array_equal(s(A), conv_ref(A, np.ones((3, 3), np.int64)))


def test_conv2d_stride_2():
    """test_schedule_memory.py::test_conv2D_lb_wb_stride_2: the window moves two elements an iteration."""
    @sd.kernel
    def conv_s2(A: i32[10, 10]) -> i32[4, 4]:
        B: i32[4, 4] = 0
        for y, x in sd.grid(4, 4):
            v: i32 = 0
            for r, c in sd.grid(3, 3):
                v += A[y * 2 + r, x * 2 + c]
            B[y, x] = v
        return B

    s = sd.schedule(conv_s2)
    lb = s.reuse_at(s.buffer("A"), s.loop("y"))
    s.reuse_at(lb, s.loop("x"))
    np.testing.assert_array_equal(s(A), conv_ref(A, np.ones((3, 3), np.int64), stride=2))


def test_avgpool_nchw():
    """test_schedule_memory.py::test_avgpool_nchw: a 2x2 average pool over four batches and channels, with line
    and window buffers."""
    @sd.kernel
    def avgpool(A: f32[2, 4, 8, 8]) -> f32[2, 4, 7, 7]:
        B: f32[2, 4, 7, 7] = 0.0
        for n, c, h, w in sd.grid(2, 4, 7, 7):
            v: f32 = 0.0
            for rh, rw in sd.grid(2, 2):
                v += A[n, c, h + rh, w + rw]
            B[n, c, h, w] = v / 4.0
        return B

    s = sd.schedule(avgpool)
    lb = s.reuse_at(s.buffer("A"), s.loop("h"))
    s.reuse_at(lb, s.loop("w"))
    X = floats((2, 4, 8, 8), 5)
    want = (X[:, :, :7, :7] + X[:, :, :7, 1:] + X[:, :, 1:, :7] + X[:, :, 1:, 1:]) / 4
    np.testing.assert_allclose(s(X), want, rtol=1e-6)
    np.testing.assert_array_equal(s(X), avgpool(X))  # the same sums in the same order


def test_reuse_refusals():
    """reuse_at needs a tensor the loop only reads, moving along one dimension."""
    s = sd.schedule(conv2d)
    with pytest.raises(sd.ScheduleError, match="loop 'y' indexes more than one dimension|nothing to reuse"):
        s.reuse_at(s.buffer("F"), s.loop("r"))

    @sd.kernel
    def inplace(A: i32[10]) -> i32[10]:
        for x in range(8):
            A[x] = A[x] + A[x + 2]
        return A

    s = sd.schedule(inplace)
    with pytest.raises(sd.ScheduleError, match="loop 'x' writes 'A'; reuse_at keeps what it reads"):
        s.reuse_at(s.buffer("A"), s.loop("x"))


def test_interleaving_acc_reorder_buffer_pipeline():
    """test_schedule_memory.py::test_interleaving_acc: a float gemm reordered to (i, k, j), C buffered per row
    at i, j pipelined: the same sums in the same order."""
    @sd.kernel
    def gemm(A: f32[32, 16], B: f32[16, 32]) -> f32[32, 32]:
        C: f32[32, 32] = 0.0
        for i, j in sd.grid(32, 32):
            for k in range(16):
                C[i, j] += A[i, k] * B[k, j]
        return C

    s = sd.schedule(gemm)
    s.reorder(s.loop("k"), s.loop("j"))
    buf = s.buffer_at(s.buffer("C"), s.loop("i"))
    s.pipeline(s.loop("j"))
    assert buf.name == "C_buf" and "alloc C_buf: f32[32]" in str(s)
    X, Y = floats((32, 16), 6), floats((16, 32), 7)
    np.testing.assert_array_equal(s(X, Y), gemm(X, Y))


def test_buffer_at_a_window():
    """test_schedule_memory.py::test_buffer_at, and issue 24's window: one y iteration reads 3 of 10 rows."""
    @sd.kernel
    def rows(A: f32[10, 16]) -> f32[8, 16]:
        B: f32[8, 16] = 0.0
        for y in range(8):
            for r in range(3):
                for x in range(16):
                    B[y, x] += A[y + r, x]
        return B

    s = sd.schedule(rows)
    win = s.buffer_at(s.buffer("A"), s.loop("y"))
    assert "alloc A_buf: f32[3, 16]" in str(s) and win.name == "A_buf"
    X = floats((10, 16), 8)
    np.testing.assert_array_equal(s(X), rows(X))


@pytest.mark.parametrize("args, pragmas", [
    ((), ["type=complete dim=0"]),
    ((("dim", 1),), ["type=complete dim=1"]),
    ((("dim", 1), ("factor", 2)), ["type=cyclic factor=2 dim=1"]),
    ((("dim", 2), ("kind", "block"), ("factor", 5)), ["type=block factor=5 dim=2"]),
])
def test_partition_defaults_to_complete(args, pragmas):
    """test_schedule_memory.py::test_partition_basic, ::test_partition_type, ::test_partition_dim_factor: with
    no options a partition is complete, as in Vitis and Allo."""
    @sd.kernel
    def copy(A: i32[10, 10]) -> i32[10, 10]:
        B: i32[10, 10] = 0
        for x, y in sd.grid(10, 10):
            B[x, y] = A[x, y]
        return B

    s = sd.schedule(copy)
    s.partition(s.buffer("B"), **dict(args))
    src = s.build("hls").source
    for p in pragmas:
        assert f"#pragma HLS array_partition variable=B {p}" in src


def test_the_cost_model_prices_the_reuse_buffers():
    """A pipelined 3x3 convolution reads A nine times an output: II 5 on a two-port memory.  With a line buffer
    (a bank a row) and a register window the pipeline reads A once an iteration and runs at II 1; the buffers
    are priced (the rows, 34 floats a bank, are distributed RAM: a bank of at most 2 Kb is LUTRAM, as in the
    HLStrans reports of benchmarks/calibration; flip-flops for the window)."""
    from streamdsl.cost.model import estimate

    @sd.kernel
    def conv(A: f32[34, 34], F: f32[3, 3]) -> f32[32, 32]:
        B: f32[32, 32] = 0.0
        for y, x in sd.grid(32, 32):
            v: f32 = 0.0
            for r, c in sd.grid(3, 3):
                v += A[y + r, x + c] * F[r, c]
            B[y, x] = v
        return B

    plain = sd.schedule(conv)
    plain.pipeline(plain.loop("x"))
    plain.partition(plain.buffer("F"))
    reuse = sd.schedule(conv)
    lb = reuse.reuse_at(reuse.buffer("A"), reuse.loop("y"))
    wb = reuse.reuse_at(lb, reuse.loop("x"))
    reuse.partition(wb)
    reuse.partition(reuse.buffer("F"))
    reuse.pipeline(reuse.loop("x"))
    reuse.pipeline(reuse.loop("A_line_1"))  # the loop that shifts a column into the line buffer and loads A
    before, after = estimate(plain.ir), estimate(reuse.ir)
    ii = lambda e: {lp.var: lp.ii for lp in e.loops}["x"]  # noqa: E731
    assert ii(before) > 1 and ii(after) == 1
    assert after.cycles < before.cycles
    assert after.resources["bram"] == before.resources["bram"]  # 1,088-bit banks: LUTs, no BRAM
    assert after.resources["lut"] > before.resources["lut"] and after.resources["ff"] > before.resources["ff"]
    X, W = floats((34, 34), 9), floats((3, 3), 10)
    np.testing.assert_array_equal(reuse(X, W), conv(X, W))
