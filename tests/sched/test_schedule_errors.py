"""Every misuse of a schedule primitive is a located ``sd.ScheduleError`` (or a project error).

Each test makes one schedule call on a line tagged ``# @name`` and checks,
through :func:`check`: the error class, the message, that ``err.loc`` is this
file at the tagged line, and for errors about one loop that ``str(err)`` shows
the IR with ``<-- here`` on that loop's line.  A refused call leaves the
schedule (IR and trace) unchanged.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i32
from streamdsl.backend.folder import OutputFolderError
from streamdsl.backend.hls import HLSProjectError
from streamdsl.backend.sim import simulate

HERE = Path(__file__).resolve()
_TAGS: dict[str, int] = {}
for _n, _line in enumerate(HERE.read_text().splitlines(), 1):
    for _tag in re.findall(r"# (@[\w-]+)\s*$", _line):
        assert _tag not in _TAGS, f"tag {_tag} used twice"
        _TAGS[_tag] = _n


# ------------------------------------------------------------------ kernels
@sd.kernel
def gemm(A: f32[16, 8], B: f32[8, 16]) -> f32[16, 16]:
    C: f32[16, 16] = 0.0
    for i, j in sd.grid(16, 16):
        acc: f32 = 0.0
        for k in range(8):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
    return C


@sd.kernel
def mm(alpha: f32, A: f32[16, 8], B: f32[8, 16]) -> f32[16, 16]:
    C: f32[16, 16] = 0.0
    T: f32[16, 16] = 0.0
    for i, j, k in sd.grid(16, 16, 8):
        C[i, j] += alpha * A[i, k] * B[k, j]
    for i in range(16):
        for j in range(16):
            T[i, j] = C[j, i]
    return T


@sd.kernel
def tri(A: f32[8, 8]) -> f32[8, 8]:
    L: f32[8, 8] = 0.0
    for i in range(8):
        for j in range(i + 1):
            L[i, j] = A[i, j]
    return L


@sd.kernel
def prefix(X: i32[16]) -> i32[16]:
    """A running sum repeated over time steps: both ``t`` and ``i`` carry a dependence."""
    Y: i32[16] = 0
    for i in range(16):
        Y[i] = X[i]
    for t in range(3):
        for i in range(1, 16):
            Y[i] = Y[i - 1] + Y[i]
    return Y


@sd.kernel
def skew(X: i32[16]) -> i32[16]:
    """``Y[a + b]`` is updated in an order-sensitive way by every (a, b) with the same sum."""
    Y: i32[16] = 0
    for i in range(16):
        Y[i] = X[i]
    for a in range(4):
        for b in range(8):
            Y[a + b] = Y[a + b] * 2 + a
    return Y


@sd.kernel
def wave(X: i32[2, 6, 7]) -> i32[2, 6, 7]:
    """Dependence (0, 1, -1): ``a`` is parallel, ``b`` and ``c`` carry it."""
    Y: i32[2, 6, 7] = 0
    for a, b, c in sd.grid(2, 6, 7):
        Y[a, b, c] = X[a, b, c]
    for a in range(2):
        for b in range(1, 6):
            for c in range(6):
                Y[a, b, c] = Y[a, b - 1, c + 1] * 3 + Y[a, b, c]
    return Y


# ------------------------------------------------------------------ helpers
def check(err: sd.StreamDSLError, tag: str, message: str, loop: str | None = None,
          cls: type = sd.ScheduleError) -> None:
    """``err`` is a ``cls`` saying ``message`` at the line tagged ``tag``; marks ``loop`` in the IR."""
    assert type(err) is cls, type(err)
    assert message in err.message, err.message
    assert err.loc is not None, "the error has no location"
    assert Path(err.loc.file).resolve() == HERE
    assert err.loc.line == _TAGS[tag], (err.loc.line, _TAGS[tag])
    text = str(err)
    assert f"--> {err.loc.file}:{err.loc.line}:" in text
    marked = [ln for ln in text.splitlines() if ln.endswith("<-- here")]
    if loop is None:
        return
    assert len(marked) == 1, text
    assert re.match(rf"\s*for {re.escape(loop)} in range\(", marked[0]), marked[0]


def interchange(k, var):
    """``k`` with loop ``var`` and the single loop it holds swapped, legality unchecked."""
    from streamdsl.sched.rewrite import find_loop, put, replace

    path, outer = find_loop(k, var)
    (inner,) = outer.body
    swapped = replace(inner, body=(replace(outer, body=inner.body),))
    return replace(k, body=put(k.body, path, swapped))


def unchanged(s, ir, steps):
    assert s.ir == ir
    assert len(s.trace.steps) == steps


def fresh(kernel=gemm):
    s = sd.schedule(kernel)
    return s, s.ir, len(s.trace.steps)


# -------------------------------------------------------------------- split
def test_split_factor_zero():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.split(s.loop("i"), 0)  # @split-zero
    check(ei.value, "@split-zero", "split factor must be a positive integer, got 0", loop="i")
    unchanged(s, ir, n)


def test_split_factor_negative():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.split(s.loop("j"), -4)  # @split-negative
    check(ei.value, "@split-negative", "split factor must be a positive integer, got -4", loop="j")
    unchanged(s, ir, n)


@pytest.mark.parametrize("factor", [2.0, "4", True, None])
def test_split_factor_not_an_int(factor):
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.split(s.loop("k"), factor)  # @split-nonint
    check(ei.value, "@split-nonint", f"split factor must be a positive integer, got {factor!r}", loop="k")
    unchanged(s, ir, n)


def test_split_factor_larger_than_trip_count():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.split(s.loop("k"), 9)  # @split-large
    check(ei.value, "@split-large", "split factor 9 exceeds the 8 iterations of loop 'k'", loop="k")
    assert "use a factor between 1 and 8" in str(ei.value)
    unchanged(s, ir, n)


def test_split_triangular_loop():
    s, ir, n = fresh(tri)
    with pytest.raises(sd.ScheduleError) as ei:
        s.split(s.loop("j"), 2)  # @split-tri
    check(ei.value, "@split-tri", "split needs constant bounds, but loop 'j' runs over range(0:i32, (i + 1:i32))",
          loop="j")
    unchanged(s, ir, n)


def test_split_refuse_tail_on_non_divisor():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.split(s.loop("i"), 5, tail="refuse")  # @split-refuse
    check(ei.value, "@split-refuse", "split factor 5 does not divide the 16 iterations of loop 'i'", loop="i")
    unchanged(s, ir, n)
    o, i = s.split(s.loop("i"), 4, tail="refuse")  # a divisor is fine
    assert (o.var, i.var) == ("i_o", "i_i")


def test_split_unknown_tail_mode():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.split(s.loop("i"), 5, tail="pad")  # @split-tail-mode
    check(ei.value, "@split-tail-mode", "split tail must be 'guard' or 'refuse', got 'pad'", loop="i")
    unchanged(s, ir, n)


# ------------------------------------------------------------------ reorder
def test_reorder_not_a_perfect_nest():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.reorder(s.loop("k"), s.loop("i"))  # @reorder-imperfect
    check(ei.value, "@reorder-imperfect", "loops 'k', 'i' are not a perfect nest: loop 'j' holds other statements "
          "besides loop 'k'", loop="j")
    unchanged(s, ir, n)


def test_reorder_loops_of_different_nests():
    s, ir, n = fresh(mm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.reorder(s.loop("j1"), s.loop("i", 0))  # @reorder-apart
    check(ei.value, "@reorder-apart", "loops 'j1', 'i' are not nested in one another", loop="j1")
    unchanged(s, ir, n)


def test_reorder_lists_a_loop_twice():
    s, ir, n = fresh(mm)
    j = s.loop("j", 0)
    with pytest.raises(sd.ScheduleError) as ei:
        s.reorder(j, s.loop("i", 0), j)  # @reorder-twice
    check(ei.value, "@reorder-twice", "reorder lists loop 'j' twice", loop="j")
    unchanged(s, ir, n)


def test_reorder_two_carrying_loops():
    s, ir, n = fresh(prefix)
    t, i = s.loops()[1:]
    with pytest.raises(sd.ScheduleError) as ei:
        s.reorder(i, t)  # @reorder-carry
    check(ei.value, "@reorder-carry", "reorder would reverse a dependence: 'Y' is read by `Y[i1] = (Y[(i1 - 1:i32)] "
          "+ Y[i1])` and then written by `Y[i1] = (Y[(i1 - 1:i32)] + Y[i1])` at a later iteration of loop 't' "
          "(direction t <, i1 >)", loop="t")
    unchanged(s, ir, n)


def test_reorder_skewed_dependence():
    # b alone looks parallel (Y[a + b] with a fixed), but a dependence runs between
    # (a, b) and (a + 1, b - 1): interchanging a and b would change the result.
    s, ir, n = fresh(skew)
    a, b = s.loops()[1:]
    with pytest.raises(sd.ScheduleError) as ei:
        s.reorder(b, a)  # @reorder-skew
    check(ei.value, "@reorder-skew", "at a later iteration of loop 'a' (direction a <, b >)", loop="a")
    unchanged(s, ir, n)
    # the refused order really is wrong: interchanging by hand changes the output
    X = np.arange(16, dtype=np.int32)
    np.testing.assert_array_equal(simulate(ir, X), skew(X))
    assert not np.array_equal(simulate(interchange(ir, "a"), X), skew(X))


def test_reorder_across_a_carrying_middle_loop():
    # moving c outside a also moves it outside b; b and c both carry (0, 1, -1)
    s, ir, n = fresh(wave)
    a, b, c = s.loops()[3:]
    with pytest.raises(sd.ScheduleError) as ei:
        s.reorder(c, a)  # @reorder-middle
    check(ei.value, "@reorder-middle", "at a later iteration of loop 'b1' (direction a1 =, b1 <, c1 >)", loop="b1")
    unchanged(s, ir, n)
    X = np.arange(84, dtype=np.int32).reshape(2, 6, 7)
    forced = interchange(interchange(interchange(ir, "b1"), "a1"), "a1")  # c1 > b1 > a1
    assert [lp.var for lp in sd.schedule(forced).loops()][3:] == ["c1", "b1", "a1"]
    assert not np.array_equal(simulate(forced, X), wave(X))
    s.reorder(b, a)  # a is parallel and b the only carrying loop: legal
    np.testing.assert_array_equal(simulate(s.ir, X), wave(X))


def test_reorder_triangular_loops():
    s, ir, n = fresh(tri)
    with pytest.raises(sd.ScheduleError) as ei:
        s.reorder(s.loop("j"), s.loop("i"))  # @reorder-tri
    check(ei.value, "@reorder-tri", "loop 'j' has bounds that depend on loop 'i'", loop="j")
    assert "triangular loops cannot be interchanged" in str(ei.value)
    unchanged(s, ir, n)


# --------------------------------------------------------------------- fuse
def test_fuse_non_adjacent_loops():
    s, ir, n = fresh(mm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.fuse(s.loop("i", 0), s.loop("k"))  # @fuse-gap
    check(ei.value, "@fuse-gap", "fuse needs adjacent loops, listed outermost first", loop="i")
    assert "the nest is i > j > k" in str(ei.value)
    unchanged(s, ir, n)


def test_fuse_one_loop():
    s, ir, n = fresh(mm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.fuse(s.loop("i", 0))  # @fuse-one
    check(ei.value, "@fuse-one", "fuse needs at least two loops", loop="i")
    unchanged(s, ir, n)


def test_fuse_triangular_loops():
    s, ir, n = fresh(tri)
    with pytest.raises(sd.ScheduleError) as ei:
        s.fuse(s.loop("i"), s.loop("j"))  # @fuse-tri
    check(ei.value, "@fuse-tri", "fuse needs constant bounds, but loop 'j' runs over", loop="j")
    unchanged(s, ir, n)


# ------------------------------------------------------------ pipeline/unroll
@pytest.mark.parametrize("ii", [0, -1, 1.5])
def test_pipeline_bad_ii(ii):
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.pipeline(s.loop("k"), ii=ii)  # @pipeline-ii
    check(ei.value, "@pipeline-ii", f"pipeline II must be a positive integer, got {ii!r}", loop="k")
    unchanged(s, ir, n)


def test_pipeline_fully_unrolled_loop():
    s = sd.schedule(gemm)
    s.unroll(s.loop("k"))
    ir, n = s.ir, len(s.trace.steps)
    with pytest.raises(sd.ScheduleError) as ei:
        s.pipeline(s.loop("k"))  # @pipeline-unrolled
    check(ei.value, "@pipeline-unrolled", "loop 'k' is fully unrolled; it has no iterations left to pipeline",
          loop="k")
    unchanged(s, ir, n)


@pytest.mark.parametrize("factor", [0, -2, 2.5])
def test_unroll_bad_factor(factor):
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.unroll(s.loop("k"), factor)  # @unroll-factor
    check(ei.value, "@unroll-factor", f"unroll factor must be a positive integer or None, got {factor!r}", loop="k")
    unchanged(s, ir, n)


def test_unroll_factor_larger_than_trip_count():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.unroll(s.loop("k"), 16)  # @unroll-large
    check(ei.value, "@unroll-large", "unroll factor 16 exceeds the 8 iterations of loop 'k'", loop="k")
    unchanged(s, ir, n)


def test_full_unroll_of_variable_trip_loop():
    s, ir, n = fresh(tri)
    with pytest.raises(sd.ScheduleError) as ei:
        s.unroll(s.loop("j"))  # @unroll-variable
    check(ei.value, "@unroll-variable", "loop 'j' has a variable trip count and cannot be fully unrolled", loop="j")
    unchanged(s, ir, n)
    s.unroll(s.loop("j"), 2)  # a factor is fine


def test_full_unroll_of_pipelined_loop():
    s = sd.schedule(gemm)
    s.pipeline(s.loop("j"))
    ir, n = s.ir, len(s.trace.steps)
    with pytest.raises(sd.ScheduleError) as ei:
        s.unroll(s.loop("j"))  # @unroll-pipelined
    check(ei.value, "@unroll-pipelined", "loop 'j' is pipelined; a fully unrolled loop cannot be", loop="j")
    unchanged(s, ir, n)


# ---------------------------------------------------------------- partition
def test_partition_unknown_buffer():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.partition("Z", dim=1, kind="cyclic", factor=2)  # @partition-unknown
    check(ei.value, "@partition-unknown", "kernel 'gemm' has no buffer 'Z'")
    unchanged(s, ir, n)


def test_partition_bad_kind():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.partition(s.buffer("A"), dim=1, kind="diagonal", factor=2)  # @partition-kind
    check(ei.value, "@partition-kind", "partition kind must be one of cyclic, block, complete, got 'diagonal'")
    unchanged(s, ir, n)


@pytest.mark.parametrize("dim", [3, -1])
def test_partition_dim_out_of_range(dim):
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.partition(s.buffer("C"), dim=dim, kind="cyclic", factor=2)  # @partition-dim
    check(ei.value, "@partition-dim", f"'C' has 2 dimension(s); dim must be 0 (all) or 1..2, got {dim}")
    unchanged(s, ir, n)


@pytest.mark.parametrize("factor", [1, None, 2.0])
def test_partition_bad_factor(factor):
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.partition(s.buffer("A"), dim=2, kind="block", factor=factor)  # @partition-factor
    check(ei.value, "@partition-factor", f"block partition needs an integer factor >= 2, got {factor!r}")
    unchanged(s, ir, n)


def test_partition_factor_exceeds_dimension():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=16)  # @partition-big
    check(ei.value, "@partition-big", "partition factor 16 exceeds dimension size 8 of 'A'")
    unchanged(s, ir, n)


def test_complete_partition_with_factor():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.partition(s.buffer("A"), dim=1, kind="complete", factor=4)  # @partition-complete
    check(ei.value, "@partition-complete", "a complete partition takes no factor")
    unchanged(s, ir, n)


def test_partition_of_a_scalar():
    s, ir, n = fresh(mm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.partition(s.buffer("alpha"), dim=0, kind="complete")  # @partition-scalar
    check(ei.value, "@partition-scalar", "'alpha' is a scalar, not a buffer")
    unchanged(s, ir, n)


# --------------------------------------------------------------------- bind
def test_bind_unknown_storage():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.bind(s.buffer("C"), "hbm")  # @bind-storage
    check(ei.value, "@bind-storage", "storage must be one of bram, uram, lutram, reg, got 'hbm'")
    unchanged(s, ir, n)


def test_bind_a_parameter():
    s, ir, n = fresh()
    with pytest.raises(sd.ScheduleError) as ei:
        s.bind(s.buffer("A"), "uram")  # @bind-param
    check(ei.value, "@bind-param", "'A' is a kernel parameter; its storage is the caller's")
    unchanged(s, ir, n)


# ------------------------------------------------------------------ handles
def test_two_loops_of_one_name_need_telling_apart():
    s, ir, n = fresh(mm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.loop("i")  # @loop-twice
    check(ei.value, "@loop-twice", "loop: kernel 'mm' has 2 loops named 'i'")
    grid_line = mm.fn.__code__.co_firstlineno + 4  # the sd.grid loop, then the range(16) loop two lines down
    assert f"s.loop('i', 0) (line {grid_line}, handle i), s.loop('i', 1) (line {grid_line + 2}, handle i1)" \
        in str(ei.value)
    first, second = s.loop("i", 0), s.loop("i", 1)
    assert (first.var, second.var) == ("i", "i1")
    assert repr(second) == f"<loop i1: the 2nd loop 'i' (line {grid_line + 2})>" and repr(first) == "<loop i>"
    assert s.loop("i1") == second  # the handle's own name works too
    with pytest.raises(sd.ScheduleError) as ei:
        s.loop("i", 2)  # @loop-which
    check(ei.value, "@loop-which", "kernel 'mm' has no loop 'i' number 2")
    unchanged(s, ir, n)


def test_stale_handle_after_split():
    s = sd.schedule(gemm)
    i = s.loop("i")
    s.split(i, 4)
    ir, n = s.ir, len(s.trace.steps)
    with pytest.raises(sd.ScheduleError) as ei:
        s.pipeline(i)  # @stale
    check(ei.value, "@stale", "loop 'i' no longer exists (an earlier primitive replaced it)")
    assert "use the handles the earlier primitive returned" in str(ei.value)
    unchanged(s, ir, n)


def test_stale_handle_after_fuse():
    s = sd.schedule(mm)
    i, j = s.loop("i", 0), s.loop("j", 0)
    s.fuse(i, j)
    with pytest.raises(sd.ScheduleError) as ei:
        s.split(j, 2)  # @stale-fuse
    check(ei.value, "@stale-fuse", "loop 'j' no longer exists")


def test_loop_handle_from_another_schedule():
    s1, s2 = sd.schedule(gemm), sd.schedule(gemm)
    ir, n = s2.ir, len(s2.trace.steps)
    with pytest.raises(sd.ScheduleError) as ei:
        s2.split(s1.loop("i"), 4)  # @other-loop
    check(ei.value, "@other-loop", "<loop i> belongs to another schedule")
    unchanged(s2, ir, n)
    assert s1.trace.steps == []


def test_buffer_handle_from_another_schedule():
    s1, s2 = sd.schedule(gemm), sd.schedule(gemm)
    ir, n = s2.ir, len(s2.trace.steps)
    with pytest.raises(sd.ScheduleError) as ei:
        s2.partition(s1.buffer("A"), dim=1, kind="cyclic", factor=2)  # @other-buffer
    check(ei.value, "@other-buffer", "<buffer A> belongs to another schedule")
    unchanged(s2, ir, n)


@pytest.mark.parametrize("call", ["split", "pipeline", "unroll", "reorder", "fuse"])
def test_string_instead_of_handle(call):
    s, ir, n = fresh(mm)
    args = {"split": ("i", 4), "pipeline": ("i",), "unroll": ("i",), "reorder": ("j", "i"), "fuse": ("i", "j")}[call]
    with pytest.raises(sd.ScheduleError) as ei:
        getattr(s, call)(*args)  # @string-handle
    check(ei.value, "@string-handle", f"{call}: pass loop handles, not the string 'i'"
          if call != "reorder" else "reorder: pass loop handles, not the string 'j'")
    assert 's.loop("' in str(ei.value)
    unchanged(s, ir, n)


def test_loop_of_a_missing_name():
    s = sd.schedule(gemm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.loop("q")  # @missing-loop
    check(ei.value, "@missing-loop", "loop: kernel 'gemm' has no loop 'q'")
    assert "its loops are: i, j, k" in str(ei.value)


def test_buffer_of_a_missing_name():
    s = sd.schedule(gemm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.buffer("acc2")  # @missing-buffer
    check(ei.value, "@missing-buffer", "buffer: kernel 'gemm' has no buffer 'acc2'")


def test_schedule_of_a_non_kernel():
    with pytest.raises(sd.ScheduleError) as ei:
        sd.schedule(lambda A: A)  # @not-kernel
    check(ei.value, "@not-kernel", "sd.schedule takes a kernel, got function")


def test_tile_is_all_or_nothing():
    s, ir, n = fresh(mm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.tile(s.loop("i", 0), s.loop("j", 0), 4, 32)  # @tile-second
    check(ei.value, "@tile-second", "split factor 32 exceeds the 16 iterations of loop 'j'", loop="j")
    unchanged(s, ir, n)  # the first split was rolled back
    assert [lp.var for lp in s.loops()] == ["i", "j", "k", "i1", "j1"]


# -------------------------------------------------------------------- build
def test_build_unknown_board():
    s = sd.schedule(gemm)
    with pytest.raises(sd.BoardError) as ei:
        s.build("hls", board="zcu104")  # @board
    check(ei.value, "@board", "unknown board 'zcu104'", cls=sd.BoardError)
    assert "known boards: u55c, u280, vck190" in str(ei.value)


def test_build_unknown_target():
    s = sd.schedule(gemm)
    with pytest.raises(sd.ScheduleError) as ei:
        s.build("opencl")  # @target
    check(ei.value, "@target", "build: unknown target 'opencl'")


def test_build_into_a_folder_with_foreign_files(tmp_path):
    out = tmp_path / "prj"
    out.mkdir()
    notes = out / "notes.txt"
    notes.write_bytes(b"my own notes\n")
    s = sd.schedule(gemm)
    with pytest.raises(OutputFolderError) as ei:
        s.build("hls", output=out)  # @foreign
    check(ei.value, "@foreign", f"output '{out}' holds files streamdsl did not write: notes.txt", cls=OutputFolderError)
    assert "overwrite=True" in str(ei.value)
    assert notes.read_bytes() == b"my own notes\n"
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]  # nothing was written


def test_rebuild_into_own_folder_is_fine(tmp_path):
    # the guard is about foreign files only: a folder streamdsl wrote can be rebuilt
    s = sd.schedule(gemm)
    s.build("hls", output=tmp_path / "prj")
    s.pipeline(s.loop("k"))
    p = s.build("hls", output=tmp_path / "prj")
    assert "#pragma HLS pipeline II=1" in (tmp_path / "prj" / "gemm.cpp").read_text()
    assert p.output == tmp_path / "prj"


def test_every_tag_is_used():
    # each tag marks exactly one schedule call that a test checks
    src = HERE.read_text()
    for tag in _TAGS:
        assert src.count(f'"{tag}"') >= 1, tag


def _refusals(s, g):
    """Refused calls on a kernel schedule ``s`` and a dataflow schedule ``g`` (one gemm task, result ``h``)."""
    return [lambda: s.split(s.loop("i"), 5, tail="refuse"), lambda: s.loop("zz"), lambda: s.buffer("zz"),
            lambda: s.pipeline("i"), lambda: s.unroll(s.loop("k"), 100), lambda: s.partition(s.buffer("A"), dim=9),
            lambda: s.reorder(s.loop("k"), s.loop("i")), lambda: s.build("opencl"), lambda: s.bind(s.buffer("C"), "ssd"),
            lambda: s.tile(s.loop("j"), s.loop("k"), 4, 4), lambda: s.rfactor(s.loop("i"), 3),
            lambda: g.task("nope"), lambda: g.edge("nope"), lambda: g.stream(g.edge("h"), tile=(3, 3)),
            lambda: g.fifo(g.edge("h"), depth=0), lambda: g.size_fifos(mode="fast"), lambda: g.fuse(),
            lambda: g.build("opencl"), lambda: g.store_at(g.edge("h"), "nope", axis=0, extent=4)]


def test_caught_schedule_and_dataflow_errors_carry_no_streamdsl_frames():
    """What a user who catches the error sees: their own frames, then the one line of the call into streamdsl."""
    import traceback

    @sd.dataflow
    def ffn(A: f32[16, 8], B: f32[8, 16]) -> f32[16, 16]:
        h = gemm(A, B)
        return h

    pkg = str(Path(sd.__file__).resolve().parent)
    cases = _refusals(sd.schedule(gemm), sd.schedule(ffn))
    for n, refused in enumerate(cases):
        with pytest.raises(sd.StreamDSLError) as err:
            refused()
        files = [f.filename for f in traceback.extract_tb(err.value.__traceback__)]
        assert not [f for f in files if f.startswith(pkg)], (n, err.value, files)
        assert err.value.loc is not None and err.value.loc.file == __file__, (n, err.value)
