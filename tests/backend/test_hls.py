"""The Vitis HLS backend: pragmas where they belong, C-sim equal to the simulator, stable bytes.

CHECK tests: each kernel's source carries FileCheck-style comments next to the
line they are about.  The test schedules the kernel, builds it, and runs the
comments, in source order, against the emitted ``<kernel>.cpp``:

* ``# CHECK: text``       a later line contains ``text``;
* ``# CHECK-NEXT: text``  the line right after the previous match contains ``text``;
* ``# CHECK-NOT: text``   no line between the previous and the next match contains ``text``;
* a pattern ending in ``{{$}}`` must end the line.

So ``# CHECK: L_i_i: for (`` followed by ``# CHECK-NEXT: #pragma HLS pipeline II=1``
says that the pipeline pragma is the first statement inside loop ``L_i_i``.
"""
from __future__ import annotations

import inspect
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i8, i16, i32, u8
from streamdsl.backend.hls import CSimError
from streamdsl.backend.sim import simulate

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

_DIRECTIVE = re.compile(r"#\s*(CHECK(?:-NEXT|-NOT)?):\s?(.*?)\s*$")


# ---------------------------------------------------------- the CHECK matcher
def checks_of(kernel) -> list[tuple[int, str, str]]:
    """The (source line, directive, pattern) CHECK comments in a kernel's source, in order."""
    lines, first = inspect.getsourcelines(kernel.fn)
    out = []
    for n, line in enumerate(lines, first):
        m = _DIRECTIVE.search(line)
        if m:
            out.append((n, m.group(1), m.group(2)))
    assert out, f"{kernel.fn.__name__} has no CHECK comments"
    return out


def _matches(pattern: str, line: str) -> bool:
    if pattern.endswith("{{$}}"):
        return line.rstrip().endswith(pattern[:-5])
    return pattern in line


def filecheck(checks, text: str) -> None:
    """Run CHECK directives over ``text``; raises AssertionError naming the failing check.  The accounting's
    loop counters (``SD_ENTRY(...)``/``SD_TRIP(...)`` lines, nothing in synthesis) are not lines it sees."""
    lines = [x for x in text.splitlines() if not x.strip().startswith(("SD_ENTRY(", "SD_TRIP("))]
    pos = -1  # the line of the previous match
    nots: list[tuple[int, str]] = []

    def fail(src_line, kind, pattern, why):
        lo = max(0, pos - 2)
        context = "\n".join(f"{'>' if n == pos else ' '} {n + 1:4}| {lines[n]}" for n in range(lo, min(len(lines), pos + 6)))
        raise AssertionError(f"line {src_line}: {kind}: {pattern!r} {why}\nafter:\n{context}")

    def check_nots(upto):
        for src_line, pattern in nots:
            for n in range(pos + 1, upto):
                if _matches(pattern, lines[n]):
                    fail(src_line, "CHECK-NOT", pattern, f"found on line {n + 1}: {lines[n]!r}")
        nots.clear()

    for src_line, kind, pattern in checks:
        if kind == "CHECK-NOT":
            nots.append((src_line, pattern))
            continue
        if kind == "CHECK-NEXT":
            found = pos + 1 if pos + 1 < len(lines) and _matches(pattern, lines[pos + 1]) else None
            if found is None:
                fail(src_line, kind, pattern, "is not on the next line")
        else:
            found = next((n for n in range(pos + 1, len(lines)) if _matches(pattern, lines[n])), None)
            if found is None:
                fail(src_line, kind, pattern, "not found")
        check_nots(found)
        pos = found
    check_nots(len(lines))


def run_checks(kernel, schedule) -> str:
    s = sd.schedule(kernel)
    schedule(s)
    cpp = s.build("hls").source
    filecheck(checks_of(kernel), cpp)
    return cpp


# ------------------------------------------------------------ CHECK kernels
@sd.kernel
def gemm(A: f32[16, 16], B: f32[16, 16]) -> f32[16, 16]:
    # a port cannot carry array_partition/bind_storage: the top copies A in and C out through locals
    # CHECK: void gemm(const float A[16][16], const float B[16][16], float C_out[16][16]) {
    # CHECK-NEXT: #pragma HLS interface mode=m_axi port=A offset=slave bundle=gmem0 depth=256
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=A{{$}}
    # CHECK-NEXT: #pragma HLS interface mode=m_axi port=B offset=slave bundle=gmem1 depth=256
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=B{{$}}
    # CHECK-NEXT: #pragma HLS interface mode=m_axi port=C_out offset=slave bundle=gmem2 depth=256
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=C_out{{$}}
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=return
    # CHECK-NEXT: float A_local[16][16];
    # CHECK-NEXT: #pragma HLS array_partition variable=A_local type=cyclic factor=4 dim=2
    # CHECK-NEXT: L_A_local_load0: for
    # CHECK: float C[16][16];
    C: f32[16, 16] = 0.0  # CHECK-NEXT: #pragma HLS bind_storage variable=C type=ram_2p impl=uram
    # CHECK-NEXT: L_C_init0: for (int C_i0 = 0; C_i0 < 16; C_i0++) {
    for i, j in sd.grid(16, 16):  # CHECK: L_i_o: for (int i_o = 0; i_o < 4; i_o++) {
        # CHECK-NEXT: L_j: for (int j = 0; j < 16; j++) {
        # CHECK-NEXT: L_i_i: for (int i_i = 0; i_i < 4; i_i++) {
        # CHECK-NEXT: #pragma HLS pipeline II=1{{$}}
        # CHECK-NEXT: float acc = 0.0f;
        acc: f32 = 0.0
        for k in range(16):  # CHECK-NEXT: L_k: for (int k = 0; k < 16; k++) {
            # CHECK-NEXT: #pragma HLS unroll factor=4{{$}}
            # CHECK-NEXT: acc = acc + (A_local[(i_o * 4) + i_i][k] * B[k][j]);
            acc += A[i, k] * B[k, j]
        C[i, j] = acc  # CHECK: C[(i_o * 4) + i_i][j] = acc;
    # CHECK: L_C_out_copy1: for
    # CHECK-NEXT: #pragma HLS pipeline II=1{{$}}
    return C  # CHECK-NEXT: C_out[C_out_i0][C_out_i1] = C[C_out_i0][C_out_i1];


def gemm_schedule(s):
    i, j, k = s.loops()
    io, ii = s.split(i, 4)
    s.reorder(io, j, ii)
    s.pipeline(ii)
    s.unroll(k, 4)
    s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=4)
    s.bind(s.buffer("C"), "uram")


@sd.kernel
def stencil(X: f32[8, 16]) -> f32[8, 16]:
    # CHECK: #pragma HLS interface mode=s_axilite port=return
    # CHECK-NEXT: float X_local[8][16];
    # CHECK-NEXT: #pragma HLS array_partition variable=X_local type=complete dim=1
    # CHECK-NEXT: #pragma HLS array_partition variable=X_local type=cyclic factor=2 dim=2
    # CHECK-NEXT: L_X_local_load0: for
    T: f32[8, 16] = 0.0  # CHECK: float T[8][16];{{$}}
    # CHECK-NEXT: #pragma HLS array_partition variable=T type=cyclic factor=4 dim=2
    # CHECK-NEXT: #pragma HLS bind_storage variable=T type=ram_2p impl=lutram
    # CHECK-NEXT: L_T_init0: for
    Y: f32[8, 16] = 0.0  # CHECK: #pragma HLS array_partition variable=Y type=block factor=2 dim=1
    # CHECK-NEXT: L_Y_init0: for
    R: f32[16] = 0.0  # CHECK: float R[16];{{$}}
    # CHECK-NEXT: #pragma HLS array_partition variable=R type=complete dim=0
    # CHECK-NEXT: L_R_init0: for
    for i in range(8):  # CHECK: L_i: for (int i = 0; i < 8; i++) {
        for j in range(16):  # CHECK-NEXT: L_j: for (int j = 0; j < 16; j++) {
            # CHECK-NEXT: #pragma HLS pipeline II=2{{$}}
            # CHECK-NEXT: T[i][j] = X_local[i][j] * 0.5f;
            T[i, j] = X[i, j] * 0.5
    for i in range(8):  # CHECK: L_i1: for (int i1 = 0; i1 < 8; i1++) {
        # CHECK-NEXT: L_j1: for (int j1 = 1; j1 < 15; j1++) {
        # CHECK-NEXT: #pragma HLS unroll{{$}}
        for j in range(1, 15):
            R[j] = T[i, j - 1] + T[i, j] + T[i, j + 1]
            Y[i, j] = R[j]
        # CHECK: L_j2: for (int j2 = 0; j2 < 16; j2++) {
        # CHECK-NEXT: #pragma HLS pipeline II=1{{$}}
        # CHECK-NEXT: #pragma HLS unroll factor=2{{$}}
        for j in range(16):
            Y[i, j] += R[j]
    return Y


def stencil_schedule(s):
    s.pipeline(s.loop("j", 0), ii=2)  # the first of three loops named j (the others are handles j1, j2)
    s.unroll(s.loop("j1"))
    s.pipeline(s.loop("j2"))
    s.unroll(s.loop("j2"), 2)
    s.partition(s.buffer("X"), dim=1, kind="complete")
    s.partition(s.buffer("X"), dim=2, kind="cyclic", factor=2)
    s.partition(s.buffer("T"), dim=2, kind="cyclic", factor=4)
    s.bind(s.buffer("T"), "lutram")
    s.partition(s.buffer("Y"), dim=1, kind="block", factor=2)
    s.bind(s.buffer("R"), "reg")  # registers: a complete partition


@sd.kernel
def scale(A: f32[8, 8], c: f32) -> f32[8, 8]:
    B: f32[8, 8] = 0.0
    for i, j in sd.grid(8, 8):
        B[i, j] = c * A[i, j]
    return B


@sd.kernel
def chain(alpha: f32, A: f32[8, 8], n: i32) -> (f32[8, 8], f32):
    # CHECK: void scale(const float A[8][8], float c, float B[8][8]) {
    # CHECK-NOT: #pragma HLS interface
    # CHECK: void chain(float alpha, const float A[8][8], int32_t n, float U[8][8], float &out1) {
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=alpha{{$}}
    # CHECK-NEXT: #pragma HLS interface mode=m_axi port=A offset=slave bundle=gmem0 depth=64
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=A{{$}}
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=n{{$}}
    # CHECK-NEXT: #pragma HLS interface mode=m_axi port=U offset=slave bundle=gmem1 depth=64
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=U{{$}}
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=out1{{$}}
    # CHECK-NEXT: #pragma HLS interface mode=s_axilite port=return{{$}}
    # CHECK-NOT: m_axi
    T = scale(A, alpha)  # CHECK: float T[8][8];
    # CHECK-NEXT: scale(A, alpha, T);
    U: f32[8, 8] = 0.0
    s: f32 = 0.0
    for i, j in sd.grid(8, 8):  # CHECK: L_i_j: for (int i_j = 0; i_j < 64; i_j++) {
        # CHECK-NEXT: #pragma HLS pipeline II=1
        # CHECK-NEXT: U[sd::floordiv(i_j, 8)][sd::floormod(i_j, 8)] = T[sd::floordiv(i_j, 8)]
        U[i, j] = T[i, j] + A[j, i] * sd.cast(n, f32)
    for i in range(8):  # CHECK: L_i1: for
        s += U[i, 0]
    return U, s  # CHECK: out1 = s;


def chain_schedule(s):
    ij = s.fuse(s.loop("i", 0), s.loop("j"))
    s.pipeline(ij)


CHECK_CASES = {"gemm": (gemm, gemm_schedule), "stencil": (stencil, stencil_schedule), "chain": (chain, chain_schedule)}


@pytest.mark.parametrize("name", sorted(CHECK_CASES))
def test_check_pragmas(name):
    kernel, schedule = CHECK_CASES[name]
    run_checks(kernel, schedule)


@pytest.mark.parametrize("name", sorted(CHECK_CASES))
def test_checks_fail_without_the_schedule(name):
    # the CHECK lines are about the schedule: the unscheduled kernel must not pass them
    kernel, _schedule = CHECK_CASES[name]
    with pytest.raises(AssertionError):
        run_checks(kernel, lambda s: None)


def test_checks_fail_when_a_pragma_moves():
    # pipelining the outer loop instead puts the pragma inside L_i_o, not inside L_i_i
    def moved(s):
        i, j, k = s.loops()
        io, ii = s.split(i, 4)
        s.reorder(io, j, ii)
        s.pipeline(io)
        s.unroll(k, 4)
        s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=4)
        s.bind(s.buffer("C"), "uram")

    with pytest.raises(AssertionError, match="L_j: for"):
        run_checks(gemm, moved)


def test_array_partition_of_a_param_is_at_the_top():
    s = sd.schedule(gemm)
    gemm_schedule(s)
    body = s.build("hls").source.split("void gemm(", 1)[1].splitlines()[1:]
    pragmas = [ln.strip() for ln in body[:7]]
    assert all(p.startswith("#pragma HLS interface") for p in pragmas)
    assert body[7].strip() == "float A_local[16][16];"
    assert body[8].strip() == "#pragma HLS array_partition variable=A_local type=cyclic factor=4 dim=2"


# ------------------------------------------------------- matcher self-tests
def test_filecheck_accepts_and_rejects():
    text = "a {\n  b\n  c;\n}\nd\n"
    filecheck([(1, "CHECK", "a {"), (2, "CHECK-NEXT", "b"), (3, "CHECK", "}{{$}}")], text)
    filecheck([(1, "CHECK", "a"), (2, "CHECK-NOT", "x"), (3, "CHECK", "d")], text)
    bad = [
        [(1, "CHECK", "zzz")],  # missing
        [(1, "CHECK", "a"), (2, "CHECK-NEXT", "c")],  # not on the next line
        [(1, "CHECK", "b"), (2, "CHECK-NOT", "c"), (3, "CHECK", "d")],  # forbidden in between
        [(1, "CHECK", "a"), (2, "CHECK-NOT", "d")],  # forbidden after the last match
        [(1, "CHECK", "c{{$}}")],  # "c;" does not end with "c"
        [(1, "CHECK", "c;"), (2, "CHECK", "b")],  # order matters
    ]
    for checks in bad:
        with pytest.raises(AssertionError, match=f"line {checks[-1][0]}: "):
            filecheck(checks, text)


def test_checks_are_read_from_the_kernel_source():
    checks = checks_of(gemm)
    assert checks[0][1:] == ("CHECK", "void gemm(const float A[16][16], const float B[16][16], float C_out[16][16]) {")
    lines, first = inspect.getsourcelines(gemm.fn)
    pipeline = next(c for c in checks if "pipeline" in c[2])
    assert "CHECK-NEXT: #pragma HLS pipeline II=1" in lines[pipeline[0] - first]


# ------------------------------------------------------------------ C-sim
def _rng(seed=0):
    return np.random.default_rng(seed)


@needs_gxx
@pytest.mark.parametrize("name", sorted(CHECK_CASES))
def test_csim_of_check_kernels(name):
    kernel, schedule = CHECK_CASES[name]
    s = sd.schedule(kernel)
    schedule(s)
    r = _rng(1)
    args = {
        "gemm": (r.standard_normal((16, 16), dtype=np.float32), r.standard_normal((16, 16), dtype=np.float32)),
        "stencil": (r.standard_normal((8, 16), dtype=np.float32),),
        "chain": (1.5, r.standard_normal((8, 8), dtype=np.float32), 3),
    }[name]
    got, want = _tuple(s.build("hls").csim(*args)), _tuple(simulate(s.ir, *args))
    assert len(got) == len(want)
    for g, w, before in zip(got, want, _tuple(kernel(*args))):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(w, before)  # the schedule kept the simulator's result


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


@sd.kernel
def narrow(X: i8[64], Y: u8[64], k: i16) -> (i8[64], i32, u8[8, 8]):
    """Wrapping i8 arithmetic, an int scalar result and a 2-D unsigned result."""
    Z: i8[64] = 0
    M: u8[8, 8] = 0
    acc: i32 = 0
    for i in range(64):
        Z[i] = X[i] * sd.cast(k, i8) + X[63 - i]
        acc += sd.cast(X[i], i32) * sd.cast(Y[i], i32)
    for i, j in sd.grid(8, 8):
        M[i, j] = Y[i * 8 + j] + Y[j * 8 + i]
    return Z, acc, M


@needs_gxx
def test_csim_integer_kernel_is_bit_exact():
    s = sd.schedule(narrow)
    o, i = s.split(s.loop("i", 0), 5)  # guarded tail
    s.pipeline(i)
    s.fuse(s.loop("i1"), s.loop("j"))
    r = _rng(2)
    args = (r.integers(-128, 128, 64, dtype=np.int8), r.integers(0, 256, 64, dtype=np.uint8), 77)
    want = narrow(*args)
    got = s.build("hls").csim(*args)
    assert len(got) == 3
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@needs_gxx
def test_csim_checks_its_arguments():
    p = sd.schedule(gemm).build("hls")
    with pytest.raises(CSimError, match="takes 2 argument"):
        p.csim(np.zeros((16, 16), np.float32))
    with pytest.raises(sd.ShapeError):
        p.csim(np.zeros((16, 16), np.float32), np.zeros((16, 8), np.float32))


# ------------------------------------------------------- byte-identical output
def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_same_schedule_builds_identical_bytes(tmp_path):
    s = sd.schedule(gemm)
    gemm_schedule(s)
    p1 = s.build("hls", output=tmp_path / "one")
    t = s.trace.replay(gemm)  # a separately built, equal schedule
    p2 = t.build("hls", output=tmp_path / "two")
    one, two = _tree(tmp_path / "one"), _tree(tmp_path / "two")
    assert one == two
    assert {"gemm.cpp", "gemm.h", "tb_gemm.cpp", "run_hls.tcl", "README.md", ".streamdsl-manifest",
            "include/streamdsl_rt.h"} <= set(one)
    assert p1.files == p2.files
    for name, text in p1.files.items():
        assert one[name] == text.encode()
    # and a different schedule gives different bytes
    t.pipeline(t.loop("j"), ii=2)
    t.build("hls", output=tmp_path / "three")
    assert _tree(tmp_path / "three")["gemm.cpp"] != one["gemm.cpp"]


def test_rebuilding_in_place_is_stable(tmp_path):
    s = sd.schedule(stencil)
    stencil_schedule(s)
    s.build("hls", output=tmp_path / "p")
    first = _tree(tmp_path / "p")
    s.build("hls", output=tmp_path / "p")
    assert _tree(tmp_path / "p") == first


def test_board_sets_part_and_clock(tmp_path):
    s = sd.schedule(gemm)
    p = s.build("hls", board="u280")
    assert p.part == "xcu280-fsvh2892-2L-e" and p.board == "u280"
    assert "set_part xcu280-fsvh2892-2L-e" in p.files["run_hls.tcl"]
    assert "create_clock -period 4 " in p.files["run_hls.tcl"]


@sd.kernel
def qdot(X: i8[4, 32], W: i8[16, 32]) -> i32[4, 16]:
    A: i32[4, 16] = 0
    for r in range(4):
        for k in range(32):
            for o in range(16):  # int8 x int4-range MACs: LUT multipliers unless bound to DSPs
                A[r, o] += sd.cast(X[r, k], i32) * sd.cast(W[o, k], i32)
    return A


def _qdot_schedule(s):
    s.pipeline(s.loop("k"))
    s.partition(s.buffer("W"), 1, "complete")
    s.partition(s.buffer("A"), 2, "complete")
    s.bind_op(s.loop("k"), "mul", "dsp")


def test_bind_op_names_each_multiply_and_binds_it():
    s = sd.schedule(qdot)
    _qdot_schedule(s)
    assert """s.bind_op(s.loop("k"), 'mul', 'dsp')""" in str(s.trace)
    cpp = s.build("hls").source
    filecheck([(0, "CHECK", "#pragma HLS pipeline II=1"),
               (0, "CHECK", "int32_t _bm0 = (int32_t(X[r][k]) * int32_t(W_local[o][k]));"),
               (0, "CHECK-NEXT", "#pragma HLS bind_op variable=_bm0 op=mul impl=dsp"),
               (0, "CHECK-NEXT", "A[r][o] = A[r][o] + _bm0;")], cpp)
    replayed = s.trace.replay(qdot)
    assert replayed.ir == s.ir


@needs_gxx
def test_csim_of_dsp_bound_multiplies_is_bit_exact():
    s = sd.schedule(qdot)
    _qdot_schedule(s)
    r = _rng(4)
    x = r.integers(-127, 128, (4, 32), dtype=np.int8)
    w = r.integers(-7, 8, (16, 32), dtype=np.int8)
    want = x.astype(np.int32) @ w.astype(np.int32).T
    np.testing.assert_array_equal(s.build("hls").csim(x, w), want)
    np.testing.assert_array_equal(simulate(s.ir, x, w), want)


def test_bind_op_refusals_are_located():
    s = sd.schedule(qdot)
    with pytest.raises(sd.ScheduleError, match="impl must be one of dsp, fabric") as e:
        s.bind_op(s.loop("k"), "mul", "uram")
    assert "test_hls.py" in str(e.value)
    with pytest.raises(sd.ScheduleError, match="op='mul'"):
        s.bind_op(s.loop("k"), "add", "dsp")
    s2 = sd.schedule(scale)
    with pytest.raises(sd.ScheduleError, match="no integer multiply of two values"):
        s2.bind_op(s2.loops()[0], "mul", "dsp")
    with pytest.raises(sd.ScheduleError, match="no float add or subtract"):
        s.bind_op(s.loop("k"), "fadd", "fabric")
    s3 = sd.schedule(fdot)
    with pytest.raises(sd.ScheduleError, match="impl must be one of fabric, fulldsp"):
        s3.bind_op(s3.loop("k"), "fadd", "dsp")
    with pytest.raises(sd.ScheduleError, match="no integer multiply of two values"):
        s3.bind_op(s3.loop("k"), "mul", "dsp")
    assert s.ir == sd.schedule(qdot).ir and s3.ir == sd.schedule(fdot).ir  # the refusals changed nothing


@sd.kernel
def fdot(X: f32[4, 32], W: f32[16, 32]) -> f32[4, 16]:
    A: f32[4, 16] = 0.0
    for r in range(4):
        for k in range(32):
            for o in range(16):
                A[r, o] = A[r, o] + X[r, k] * W[o, k] - 0.5 * X[r, k]
    return A


def test_bind_op_puts_float_adds_in_fabric_and_csim_is_bit_exact():
    s = sd.schedule(fdot)
    s.pipeline(s.loop("k"))
    s.partition(s.buffer("W"), 1, "complete")
    s.partition(s.buffer("A"), 2, "complete")
    s.bind_op(s.loop("k"), "fadd", "fabric")
    assert """s.bind_op(s.loop("k"), 'fadd', 'fabric')""" in str(s.trace)
    cpp = s.build("hls").source
    # the add and the subtract are named and bound; the multiplies keep Vitis's default DSPs
    filecheck([(0, "CHECK", "float _bf0 = (A[r][o] + (X[r][k] * W_local[o][k]));"),
               (0, "CHECK-NEXT", "#pragma HLS bind_op variable=_bf0 op=fadd impl=fabric"),
               (0, "CHECK-NEXT", "float _bf1 = (_bf0 - (0.5f * X[r][k]));"),
               (0, "CHECK-NEXT", "#pragma HLS bind_op variable=_bf1 op=fsub impl=fabric"),
               (0, "CHECK-NEXT", "A[r][o] = _bf1;")], cpp)
    assert s.trace.replay(fdot).ir == s.ir
    r = _rng(5)
    x, w = r.standard_normal((4, 32)).astype(np.float32), r.standard_normal((16, 32)).astype(np.float32)
    np.testing.assert_array_equal(simulate(s.ir, x, w), fdot(x, w))
    if shutil.which("g++"):
        np.testing.assert_array_equal(s.build("hls").csim(x, w), fdot(x, w))



@sd.kernel
def half_scale(x: sd.f16[4]) -> sd.f16[4]:
    y: sd.f16[4] = 0.0
    for i in range(4):
        y[i] = x[i] * 2.0
    return y


def test_f16_is_refused_by_the_hls_backend_with_a_located_error():
    """The README says so: f16/bf16 run in the simulator; the HLS backend does not emit them."""
    assert half_scale(np.ones(4, np.float16)).dtype == np.float16
    with pytest.raises(sd.StreamDSLError, match="f16 is not supported by the HLS backend") as err:
        sd.schedule(half_scale).build("hls")  # the located line
    assert err.value.loc.file == __file__ and "# the located line" in open(__file__).read().splitlines()[err.value.loc.line - 1]
    assert "f16` and `bf16` run in the" in (Path(__file__).parents[2] / "README.md").read_text()
