"""Schedule primitives keep results unchanged, and the scheduled C++ C-simulates to them.

Every kernel below is scheduled in at least three ways.  For each schedule:

* ``test_schedule_shape``: the schedule did what it says (loop names, attrs,
  guarded tails), so a primitive that silently does nothing fails;
* ``test_simulator_unchanged``: the reference simulator gives the same result
  on the scheduled IR as on the unscheduled kernel, bit for bit, floats
  included: every primitive here keeps the order in which each output element
  is accumulated (split and tile strip-mine in order, fuse enumerates in
  order, reorder only moves loops that carry no dependence, the rest are
  attrs), and the simulator runs float accumulations in program order;
* ``test_csim_matches``: the emitted C++ compiles (g++ -Wall -Werror) and its
  C-simulation equals the simulator (bit-exact for integers, rtol 1e-5 for
  floats, whose math functions come from different libraries) and, bit-exactly,
  the C-simulation of the unscheduled kernel, for the same reason as above
  (g++ without -ffast-math keeps the order too).

Sizes are small (8..64); C-sim binaries are cached by content hash.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i8, i32
from streamdsl.backend.sim import simulate
from streamdsl.ir.nodes import For, If, walk

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


# ------------------------------------------------------------------ kernels
@sd.kernel
def gemm(A: f32[16, 24], B: f32[24, 32]) -> f32[16, 32]:
    C: f32[16, 32] = 0.0
    for i, j in sd.grid(16, 32):
        acc: f32 = 0.0
        for k in range(24):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
    return C


@sd.kernel
def conv2d(X: f32[4, 10, 10], Wt: f32[8, 4, 3, 3], bias: f32[8]) -> f32[8, 8, 8]:
    Y: f32[8, 8, 8] = 0.0
    for co, y, x in sd.grid(8, 8, 8):
        acc: f32 = bias[co]
        for ci, ky, kx in sd.grid(4, 3, 3):
            acc += X[ci, y + ky, x + kx] * Wt[co, ci, ky, kx]
        if acc < 0.0:
            Y[co, y, x] = 0.0
        else:
            Y[co, y, x] = acc
    return Y


@sd.kernel
def jacobi2d(A_in: f32[12, 12], B_in: f32[12, 12]) -> f32[12, 12]:
    A: f32[12, 12] = 0.0
    B: f32[12, 12] = 0.0
    for i, j in sd.grid(12, 12):
        A[i, j] = A_in[i, j]
        B[i, j] = B_in[i, j]
    for t in range(3):
        for i in range(1, 11):
            for j in range(1, 11):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        for i in range(1, 11):
            for j in range(1, 11):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])
    return A


@sd.kernel
def softmax(X: f32[8, 32]) -> f32[8, 32]:
    Y: f32[8, 32] = 0.0
    for i in range(8):
        mx: f32 = X[i, 0]
        for j in range(1, 32):
            mx = max(mx, X[i, j])
        s: f32 = 0.0
        for j in range(32):
            e: f32 = sd.exp(X[i, j] - mx)
            Y[i, j] = e
            s += e
        for j in range(32):
            Y[i, j] = Y[i, j] / s
    return Y


@sd.kernel
def layernorm(X: f32[8, 32], gamma: f32[32], beta: f32[32]) -> f32[8, 32]:
    Y: f32[8, 32] = 0.0
    for i in range(8):
        mean: f32 = 0.0
        for j in range(32):
            mean += X[i, j]
        mean /= 32
        var: f32 = 0.0
        for j in range(32):
            d: f32 = X[i, j] - mean
            var += d * d
        var /= 32
        inv: f32 = sd.rsqrt(var + 1e-5)
        for j in range(32):
            Y[i, j] = (X[i, j] - mean) * inv * gamma[j] + beta[j]
    return Y


@sd.kernel
def int8_mac(X: i8[8, 32], Wt: i8[32, 16], bias: i32[16]) -> i32[8, 16]:
    Y: i32[8, 16] = 0
    for i, j in sd.grid(8, 16):
        acc: i32 = bias[j]
        for k in range(32):
            acc += sd.cast(X[i, k], i32) * sd.cast(Wt[k, j], i32)
        Y[i, j] = acc
    return Y


@sd.kernel
def syrk(alpha: f32, beta: f32, C: f32[12, 12], A: f32[12, 8]) -> f32[12, 12]:
    S: f32[12, 12] = 0.0
    for i, j in sd.grid(12, 12):
        S[i, j] = C[i, j]
    for i in range(12):
        for j in range(i + 1):
            S[i, j] *= beta
        for k in range(8):
            for j in range(i + 1):
                S[i, j] += alpha * A[i, k] * A[j, k]
    return S


@sd.kernel
def vadd(A: f32[64], B: f32[64]) -> f32[64]:
    C: f32[64] = 0.0
    for i in range(64):
        C[i] = A[i] + B[i]
    return C


@sd.kernel
def matmul(A: f32[16, 20], B: f32[20, 24]) -> f32[16, 24]:
    T: f32[16, 24] = 0.0
    for i, j in sd.grid(16, 24):
        for k in range(20):
            T[i, j] += A[i, k] * B[k, j]
    return T


@sd.kernel
def two_mm(alpha: f32, beta: f32, A: f32[16, 20], B: f32[20, 24], C: f32[24, 16],
           D: f32[16, 16]) -> f32[16, 16]:
    tmp = matmul(A, B)
    out: f32[16, 16] = 0.0
    for i, l in sd.grid(16, 16):
        acc: f32 = 0.0
        for j in range(24):
            acc += tmp[i, j] * C[j, l]
        out[i, l] = alpha * acc + beta * D[i, l]
    return out


# ------------------------------------------------------------------ inputs
def _rng(seed):
    return np.random.default_rng(seed)


def _f(r, *shape):
    return r.standard_normal(shape, dtype=np.float32)


ARGS: dict[str, Callable[[], tuple]] = {
    "gemm": lambda: (_f(_rng(1), 16, 24), _f(_rng(2), 24, 32)),
    "conv2d": lambda: (_f(_rng(3), 4, 10, 10), _f(_rng(4), 8, 4, 3, 3), _f(_rng(5), 8)),
    "jacobi2d": lambda: (_rng(6).random((12, 12), dtype=np.float32), _rng(7).random((12, 12), dtype=np.float32)),
    "softmax": lambda: (4 * _f(_rng(8), 8, 32),),
    "layernorm": lambda: (_f(_rng(9), 8, 32), _f(_rng(10), 32), _f(_rng(11), 32)),
    "int8_mac": lambda: (_rng(12).integers(-128, 128, (8, 32), dtype=np.int8),
                         _rng(13).integers(-128, 128, (32, 16), dtype=np.int8),
                         _rng(14).integers(-(2 ** 20), 2 ** 20, 16, dtype=np.int32)),
    "syrk": lambda: (1.5, 1.2, _rng(15).random((12, 12), dtype=np.float32), _rng(16).random((12, 8), dtype=np.float32)),
    "vadd": lambda: (_f(_rng(17), 64), _f(_rng(18), 64)),
    "two_mm": lambda: (1.5, 1.2, _f(_rng(19), 16, 20), _f(_rng(20), 20, 24), _f(_rng(21), 24, 16),
                       _f(_rng(22), 16, 16)),
}
KERNELS = {k.ir.name: k for k in (gemm, conv2d, jacobi2d, softmax, layernorm, int8_mac, syrk, vadd, two_mm)}


# ---------------------------------------------------------------- schedules
@dataclass(frozen=True)
class Case:
    kernel: str
    name: str
    apply: Callable  # schedule -> None
    expect: Callable  # schedule -> None: asserts on the scheduled IR


def loop_of(s, var) -> For:
    (lp,) = [n for n in walk(s.ir) if isinstance(n, For) and n.var == var]
    return lp


def guards(s) -> list[If]:
    return [n for n in walk(s.ir) if isinstance(n, If)]


def attrs_of(s, var) -> dict:
    return dict(loop_of(s, var).attrs)


# gemm -------------------------------------------------------------------
def gemm_full(s):
    i, j, k = s.loops()
    io, ii = s.split(i, 4)
    s.reorder(io, j, ii)
    s.pipeline(ii)
    s.unroll(k, 4)
    s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=4)
    s.partition(s.buffer("B"), dim=1, kind="block", factor=4)


def gemm_full_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_o", "j", "i_i", "k"]
    assert attrs_of(s, "i_i") == {"pipeline": 1} and attrs_of(s, "k") == {"unroll": 4}
    assert dict(s.ir.attrs)["partition"] == (("A", ((2, "cyclic", 4),)), ("B", ((1, "block", 4),)))


def gemm_tile(s):
    i, j, k = s.loops()
    io, jo, ii, ji = s.tile(i, j, 4, 8)
    s.pipeline(ji, ii=2)
    s.unroll(k)
    s.bind(s.buffer("C"), "uram")


def gemm_tile_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_o", "j_o", "i_i", "j_i", "k"]
    assert attrs_of(s, "j_i") == {"pipeline": 2} and attrs_of(s, "k") == {"unroll": 0}


def gemm_fuse_tail(s):
    i, j, k = s.loops()
    ij = s.fuse(i, j)
    ko, ki = s.split(k, 5)  # 24 = 4 * 5 + 4: a guarded tail
    s.pipeline(ko)
    s.unroll(ki)
    s.partition(s.buffer("C"), dim=0, kind="complete")


def gemm_fuse_tail_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_j", "k_o", "k_i"]
    assert (loop_of(s, "i_j").stop.value, loop_of(s, "k_o").stop.value) == (512, 5)
    assert len(guards(s)) == 1


# conv2d -----------------------------------------------------------------
def conv_full(s):
    co, y, x, ci, ky, kx = s.loops()
    coo, coi = s.split(co, 4)
    s.reorder(coo, y, x, coi)
    s.pipeline(coi)
    s.unroll(ky)
    s.unroll(kx)
    s.partition(s.buffer("Wt"), dim=4, kind="complete")
    s.partition(s.buffer("X"), dim=1, kind="cyclic", factor=2)


def conv_full_expect(s):
    assert [lp.var for lp in s.loops()] == ["co_o", "y", "x", "co_i", "ci", "ky", "kx"]
    assert attrs_of(s, "co_i") == {"pipeline": 1} and attrs_of(s, "kx") == {"unroll": 0}


def conv_fuse(s):
    co, y, x, ci, ky, kx = s.loops()
    yx = s.fuse(y, x)
    r = s.fuse(ci, ky, kx)
    s.pipeline(r)
    s.unroll(yx, 4)
    s.bind(s.buffer("Y"), "bram")


def conv_fuse_expect(s):
    assert [lp.var for lp in s.loops()] == ["co", "y_x", "ci_ky_kx"]
    assert loop_of(s, "ci_ky_kx").stop.value == 36


def conv_tile_tail(s):
    co, y, x, ci, ky, kx = s.loops()
    yo, xo, yi, xi = s.tile(y, x, 4, 3)  # 8 = 2 * 3 + 2: x gets a guarded tail
    s.pipeline(xi)
    s.unroll(kx, 3)


def conv_tile_tail_expect(s):
    assert [lp.var for lp in s.loops()][:5] == ["co", "y_o", "x_o", "y_i", "x_i"]
    assert len(guards(s)) == 2  # the ReLU if + the tail guard


# jacobi2d ---------------------------------------------------------------
def jac_split_tail(s):
    loops = s.loops()  # i, j (copy), t, i1, j1, i2, j2
    io, ii = s.split(loops[3], 3)  # 10 = 3 * 3 + 1, starting at 1
    s.pipeline(loops[4])
    s.pipeline(loops[6])


def jac_split_tail_expect(s):
    assert [lp.var for lp in s.loops()] == ["i", "j", "t", "i1_o", "i1_i", "j1", "i2", "j2"]
    assert len(guards(s)) == 1


def jac_tile(s):
    loops = s.loops()
    s.tile(loops[5], loops[6], 5, 2)
    s.unroll(loops[4], 2)
    s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=2)
    s.bind(s.buffer("B"), "lutram")


def jac_tile_expect(s):
    assert [lp.var for lp in s.loops()][5:] == ["i2_o", "j2_o", "i2_i", "j2_i"]
    assert not guards(s)


def jac_fuse(s):
    i, j = s.loops()[:2]
    ij = s.fuse(i, j)
    s.pipeline(ij)
    s.pipeline(s.loop("j1"))


def jac_fuse_expect(s):
    assert s.loops()[0].var == "i_j" and loop_of(s, "i_j").stop.value == 144


# softmax ----------------------------------------------------------------
def sm_pipeline(s):
    i, j, j1, j2 = s.loops()
    for lp in (j, j1, j2):
        s.pipeline(lp)
    s.unroll(j, 4)


def sm_pipeline_expect(s):
    assert attrs_of(s, "j") == {"pipeline": 1, "unroll": 4}


def sm_split(s):
    i, j, j1, j2 = s.loops()
    o, inner = s.split(j1, 8)
    s.pipeline(inner)
    s.partition(s.buffer("Y"), dim=2, kind="cyclic", factor=4)
    s.partition(s.buffer("X"), dim=2, kind="block", factor=2)


def sm_split_expect(s):
    assert [lp.var for lp in s.loops()] == ["i", "j", "j1_o", "j1_i", "j2"]


def sm_row_tail(s):
    i = s.loops()[0]
    s.split(i, 3)  # 8 = 2 * 3 + 2: the whole row body runs under a guard
    s.unroll(s.loop("j2"), 8)


def sm_row_tail_expect(s):
    assert s.loops()[:2] == [s.loop("i_o"), s.loop("i_i")] and len(guards(s)) == 1


# layernorm --------------------------------------------------------------
def ln_pipeline(s):
    for lp in s.loops()[1:]:
        s.pipeline(lp)
    s.bind(s.buffer("Y"), "uram")


def ln_pipeline_expect(s):
    assert all(attrs_of(s, v) == {"pipeline": 1} for v in ("j", "j1", "j2"))


def ln_row_tail(s):
    o, inner = s.split(s.loop("i"), 3)
    s.unroll(s.loop("j2"))


def ln_row_tail_expect(s):
    assert [lp.var for lp in s.loops()][:2] == ["i_o", "i_i"] and len(guards(s)) == 1


def ln_split_inner(s):
    o, inner = s.split(s.loop("j2"), 8)
    s.pipeline(o)
    s.unroll(inner)
    s.partition(s.buffer("X"), dim=2, kind="cyclic", factor=8)
    s.partition(s.buffer("gamma"), dim=1, kind="cyclic", factor=8)


def ln_split_inner_expect(s):
    assert [lp.var for lp in s.loops()][-2:] == ["j2_o", "j2_i"]


# int8 mac ---------------------------------------------------------------
def mac_full(s):
    i, j, k = s.loops()
    jo, ji = s.split(j, 4)
    s.reorder(jo, i, ji)
    s.pipeline(ji)
    s.unroll(k, 8)
    s.partition(s.buffer("X"), dim=2, kind="cyclic", factor=8)
    s.partition(s.buffer("Wt"), dim=1, kind="cyclic", factor=8)


def mac_full_expect(s):
    assert [lp.var for lp in s.loops()] == ["j_o", "i", "j_i", "k"]


def mac_tile(s):
    i, j, k = s.loops()
    s.tile(i, j, 4, 4)
    s.pipeline(s.loop("j_i"))
    s.bind(s.buffer("Y"), "lutram")


def mac_tile_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_o", "j_o", "i_i", "j_i", "k"]


def mac_fuse_tail(s):
    i, j, k = s.loops()
    s.fuse(i, j)
    ko, ki = s.split(k, 5)  # 32 = 6 * 5 + 2
    s.unroll(ki)
    s.pipeline(ko)


def mac_fuse_tail_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_j", "k_o", "k_i"] and len(guards(s)) == 1


# syrk (triangular) ------------------------------------------------------
def syrk_pipeline_tail(s):
    i, j, i1, j1, k, j2 = s.loops()
    s.pipeline(j1)
    s.pipeline(j2)
    s.split(k, 3)  # 8 = 2 * 3 + 2


def syrk_pipeline_tail_expect(s):
    assert [lp.var for lp in s.loops()] == ["i", "j", "i1", "j1", "k_o", "k_i", "j2"] and len(guards(s)) == 1


def syrk_split_outer(s):
    i1 = s.loops()[2]
    s.split(i1, 5)  # the inner loops' bounds are rewritten in terms of i1_o, i1_i; 12 = 2 * 5 + 2
    s.unroll(s.loop("k"), 2)


def syrk_split_outer_expect(s):
    j1 = loop_of(s, "j1")
    assert "i1_o" in str(j1.stop) and len(guards(s)) == 1


def syrk_fuse(s):
    i, j = s.loops()[:2]
    s.fuse(i, j)
    s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=2)
    s.partition(s.buffer("S"), dim=1, kind="complete")
    s.unroll(s.loop("k"), 2)


def syrk_fuse_expect(s):
    assert s.loops()[0].var == "i_j"


# vadd -------------------------------------------------------------------
def vadd_full(s):
    o, i = s.split(s.loop("i"), 8)
    s.pipeline(o)
    s.unroll(i)
    for name in "ABC":
        s.partition(s.buffer(name), dim=1, kind="cyclic", factor=8)


def vadd_full_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_o", "i_i"] and not guards(s)


def vadd_tail(s):
    o, i = s.split(s.loop("i"), 5)  # 64 = 12 * 5 + 4
    s.pipeline(i, ii=2)


def vadd_tail_expect(s):
    assert loop_of(s, "i_o").stop.value == 13 and len(guards(s)) == 1


def vadd_split_fuse(s):
    o, i = s.split(s.loop("i"), 16)
    oo, oi = s.split(o, 2)
    s.fuse(oo, oi)
    s.bind(s.buffer("C"), "lutram")


def vadd_split_fuse_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_o_o_i_o_i", "i_i"]


# 2mm with a kernel call -------------------------------------------------
def mm2_full(s):
    i, l, j = s.loops()
    io, ii = s.split(i, 4)
    s.reorder(io, l, ii)
    s.pipeline(ii)
    s.unroll(j, 4)
    s.partition(s.buffer("C"), dim=1, kind="cyclic", factor=4)


def mm2_full_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_o", "l", "i_i", "j"]


def mm2_tile(s):
    i, l, j = s.loops()
    s.tile(i, l, 4, 8)
    s.pipeline(s.loop("l_i"))
    s.bind(s.buffer("out"), "bram")


def mm2_tile_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_o", "l_o", "i_i", "l_i", "j"]


def mm2_fuse_tail(s):
    i, l, j = s.loops()
    s.fuse(i, l)
    s.split(j, 5)  # 24 = 4 * 5 + 4
    s.pipeline(s.loop("j_o"))


def mm2_fuse_tail_expect(s):
    assert [lp.var for lp in s.loops()] == ["i_l", "j_o", "j_i"] and len(guards(s)) == 1


CASES = [
    Case("gemm", "split_reorder_pipeline_unroll_partition", gemm_full, gemm_full_expect),
    Case("gemm", "tile_bind", gemm_tile, gemm_tile_expect),
    Case("gemm", "fuse_tail", gemm_fuse_tail, gemm_fuse_tail_expect),
    Case("conv2d", "split_reorder_pipeline_unroll_partition", conv_full, conv_full_expect),
    Case("conv2d", "fuse_bind", conv_fuse, conv_fuse_expect),
    Case("conv2d", "tile_tail", conv_tile_tail, conv_tile_tail_expect),
    Case("jacobi2d", "split_tail", jac_split_tail, jac_split_tail_expect),
    Case("jacobi2d", "tile_partition_bind", jac_tile, jac_tile_expect),
    Case("jacobi2d", "fuse", jac_fuse, jac_fuse_expect),
    Case("softmax", "pipeline_unroll", sm_pipeline, sm_pipeline_expect),
    Case("softmax", "split_partition", sm_split, sm_split_expect),
    Case("softmax", "row_tail", sm_row_tail, sm_row_tail_expect),
    Case("layernorm", "pipeline_bind", ln_pipeline, ln_pipeline_expect),
    Case("layernorm", "row_tail", ln_row_tail, ln_row_tail_expect),
    Case("layernorm", "split_inner_partition", ln_split_inner, ln_split_inner_expect),
    Case("int8_mac", "split_reorder_pipeline_unroll_partition", mac_full, mac_full_expect),
    Case("int8_mac", "tile_bind", mac_tile, mac_tile_expect),
    Case("int8_mac", "fuse_tail", mac_fuse_tail, mac_fuse_tail_expect),
    Case("syrk", "pipeline_tail", syrk_pipeline_tail, syrk_pipeline_tail_expect),
    Case("syrk", "split_triangular_outer", syrk_split_outer, syrk_split_outer_expect),
    Case("syrk", "fuse_partition", syrk_fuse, syrk_fuse_expect),
    Case("vadd", "split_pipeline_unroll_partition", vadd_full, vadd_full_expect),
    Case("vadd", "tail", vadd_tail, vadd_tail_expect),
    Case("vadd", "split_split_fuse_bind", vadd_split_fuse, vadd_split_fuse_expect),
    Case("two_mm", "split_reorder_pipeline_unroll_partition", mm2_full, mm2_full_expect),
    Case("two_mm", "tile_bind", mm2_tile, mm2_tile_expect),
    Case("two_mm", "fuse_tail", mm2_fuse_tail, mm2_fuse_tail_expect),
]
IDS = [f"{c.kernel}-{c.name}" for c in CASES]
INT_KERNELS = {"int8_mac"}


def scheduled(case: Case):
    s = sd.schedule(KERNELS[case.kernel])
    case.apply(s)
    return s


_baseline: dict[str, object] = {}


def baseline_sim(name):
    if name not in _baseline:
        _baseline[name] = simulate(KERNELS[name].ir, *ARGS[name]())
    return _baseline[name]


_baseline_csim: dict[str, object] = {}


def baseline_csim(name):
    if name not in _baseline_csim:
        _baseline_csim[name] = sd.schedule(KERNELS[name]).build("hls").csim(*ARGS[name]())
    return _baseline_csim[name]


def test_every_kernel_has_three_schedules():
    for name in KERNELS:
        assert sum(c.kernel == name for c in CASES) >= 3, name


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_schedule_shape(case):
    s = scheduled(case)
    assert s.ir != KERNELS[case.kernel].ir
    assert len(s.trace.steps) >= 2
    case.expect(s)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_simulator_unchanged(case):
    s = scheduled(case)
    want = baseline_sim(case.kernel)
    got = simulate(s.ir, *ARGS[case.kernel]())
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # exact, floats too: see the module docstring


@needs_gxx
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_csim_matches(case):
    s = scheduled(case)
    args = ARGS[case.kernel]()
    project = s.build("hls")
    got = project.csim(*args)
    sim = simulate(s.ir, *args)
    assert got.dtype == sim.dtype and got.shape == sim.shape
    if case.kernel in INT_KERNELS:
        np.testing.assert_array_equal(got, sim)
    else:  # exp/rsqrt come from libm in C++ and from NumPy in the simulator
        np.testing.assert_allclose(got, sim, rtol=1e-5, atol=1e-5)
    # per-element accumulation order is unchanged by every schedule here
    np.testing.assert_array_equal(got, baseline_csim(case.kernel))
