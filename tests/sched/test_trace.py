"""A schedule's trace rebuilds it: as printed Python, by replay, and through JSON.

Also: the scheduled IR prints and parses back to itself
(``sd.parse_ir(str(s.ir)) == s.ir``), attrs included.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i8, i32
from streamdsl.backend.sim import simulate
from streamdsl.sched.schedule import Trace


# ------------------------------------------------------------------ kernels
def make_gemm(m, k, n):
    @sd.kernel
    def gemm(A: f32[m, k], B: f32[k, n]) -> f32[m, n]:
        C: f32[m, n] = 0.0
        for i, j in sd.grid(m, n):
            acc: f32 = 0.0
            for kk in range(k):
                acc += A[i, kk] * B[kk, j]
            C[i, j] = acc
        return C

    return gemm


gemm = make_gemm(16, 8, 32)


@sd.kernel
def mac(X: i8[8, 16], Wt: i8[16, 8]) -> i32[8, 8]:
    Y: i32[8, 8] = 0
    T: i32[8, 8] = 0
    for i, j, k in sd.grid(8, 8, 16):
        Y[i, j] += sd.cast(X[i, k], i32) * sd.cast(Wt[k, j], i32)
    for i in range(8):
        for j in range(8):
            T[j, i] = Y[i, j]
    return T


@sd.kernel
def syrk(alpha: f32, C: f32[8, 8], A: f32[8, 4]) -> f32[8, 8]:
    S: f32[8, 8] = 0.0
    for i, j in sd.grid(8, 8):
        S[i, j] = C[i, j]
    for i in range(8):
        for k in range(4):
            for j in range(i + 1):
                S[i, j] += alpha * A[i, k] * A[j, k]
    return S


@sd.kernel
def scale(A: f32[8, 8]) -> f32[8, 8]:
    B: f32[8, 8] = 0.0
    for i, j in sd.grid(8, 8):
        B[i, j] = 2.0 * A[i, j]
    return B


@sd.kernel
def chain(A: f32[8, 8]) -> f32[8, 8]:
    T = scale(A)
    U: f32[8, 8] = 0.0
    for i, j in sd.grid(8, 8):
        U[i, j] = T[i, j] + A[j, i]
    return U


def s_gemm_full(s):
    i, j, k = s.loops()
    io, ii = s.split(i, 4)
    s.reorder(io, j, ii)
    s.pipeline(ii)
    s.unroll(k, 4)
    s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=4)
    s.partition("B", dim=1, kind="block", factor=2)  # a buffer by name
    s.bind(s.buffer("C"), "uram")


def s_gemm_tile_fuse(s):
    i, j, k = s.loops()
    io, jo, ii, ji = s.tile(i, j, 4, 8)
    f = s.fuse(ii, ji)
    s.pipeline(f, ii=2)
    s.split(k, 3)  # guarded tail
    s.partition(s.buffer("C"), dim=0, kind="complete")


def s_gemm_refuse_tail(s):
    s.split(s.loop("kk"), 4, tail="refuse")
    s.unroll(s.loop("kk_i"))


def s_mac(s):
    i, j, k, i1, j1 = s.loops()
    s.reorder(i, k, j)
    s.pipeline(j)
    s.fuse(i1, j1)
    s.bind(s.buffer("T"), "lutram")
    s.bind(s.buffer("Y"), "reg")


def s_syrk(s):
    i, j, i1, k, j1 = s.loops()
    s.fuse(i, j)
    s.split(i1, 3)
    s.pipeline(j1)
    s.unroll(k, 2)


def s_chain(s):
    i, j = s.loops()
    jo, ji = s.split(j, 4)
    s.reorder(jo, i, ji)
    s.unroll(ji)
    s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=2)


CASES = {
    "gemm_full": (gemm, s_gemm_full),
    "gemm_tile_fuse": (gemm, s_gemm_tile_fuse),
    "gemm_refuse_tail": (gemm, s_gemm_refuse_tail),
    "mac": (mac, s_mac),
    "syrk": (syrk, s_syrk),
    "chain": (chain, s_chain),
}


def scheduled(name):
    kernel, apply = CASES[name]
    s = sd.schedule(kernel)
    apply(s)
    assert s.ir != kernel.ir  # the schedule changed something, so equalities below can fail
    return kernel, s


# -------------------------------------------------------------------- tests
def test_trace_prints_python():
    _k, s = scheduled("gemm_full")
    assert str(s.trace) == "\n".join([
        "s = sd.schedule(gemm)",
        'i_o, i_i = s.split(s.loop("i"), 4)',
        's.reorder(i_o, s.loop("j"), i_i)',
        "s.pipeline(i_i, ii=1)",
        's.unroll(s.loop("kk"), factor=4)',
        "s.partition(s.buffer(\"A\"), dim=2, kind='cyclic', factor=4)",
        "s.partition('B', dim=1, kind='block', factor=2)",
        "s.bind(s.buffer(\"C\"), 'uram')",
    ])
    assert repr(s.trace) == str(s.trace)


def test_trace_records_split_tail_option():
    _k, s = scheduled("gemm_refuse_tail")
    assert str(s.trace).splitlines()[1] == 'kk_o, kk_i = s.split(s.loop("kk"), 4, tail=\'refuse\')'


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_trace_is_runnable_python(name, capsys):
    kernel, s = scheduled(name)
    print(s.trace)
    printed = capsys.readouterr().out
    ns = {"sd": sd, kernel.ir.name: kernel}
    exec(compile(printed, f"<trace of {name}>", "exec"), ns)
    assert isinstance(ns["s"], sd.Schedule)
    assert ns["s"].ir == s.ir
    assert str(ns["s"].trace) == str(s.trace)


@pytest.mark.parametrize("name", sorted(CASES))
def test_replay(name):
    kernel, s = scheduled(name)
    again = s.trace.replay(kernel)
    assert again.ir == s.ir
    assert again is not s and len(again.trace.steps) == len(s.trace.steps)
    assert str(again.trace) == str(s.trace)


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_round_trip_replays_equal(name):
    kernel, s = scheduled(name)
    text = s.trace.to_json()
    data = json.loads(text)  # plain JSON
    assert data["kernel"] == kernel.ir.name
    assert [st["primitive"] for st in data["steps"]] == [st.primitive for st in s.trace.steps]
    back = Trace.from_json(text)
    assert back.steps == s.trace.steps
    assert back.to_json() == text
    assert back.replay(kernel).ir == s.ir


@pytest.mark.parametrize("name", sorted(CASES))
def test_scheduled_ir_prints_and_parses_back(name):
    _k, s = scheduled(name)
    text = str(s.ir)
    back = sd.parse_ir(text)
    assert back == s.ir
    assert str(back) == text


def test_parsed_ir_keeps_schedule_attrs():
    _k, s = scheduled("gemm_full")
    text = str(s.ir)
    assert "[pipeline=1]" in text and "[unroll=4]" in text and "partition=" in text
    back = sd.parse_ir(text)
    # dropping one attr makes it unequal: the comparison above sees attrs
    assert sd.parse_ir(text.replace(" [pipeline=1]", "")) != back


def test_replay_on_another_kernel_with_the_same_loops():
    # a trace names loops, so it replays onto a kernel of another size with the same loop names
    _k, s = scheduled("gemm_full")
    other = make_gemm(32, 8, 16)
    t = s.trace.replay(other)
    assert [lp.var for lp in t.loops()] == ["i_o", "j", "i_i", "kk"]
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((32, 8), dtype=np.float32), rng.standard_normal((8, 16), dtype=np.float32)
    np.testing.assert_array_equal(simulate(t.ir, A, B), other(A, B))


def test_replay_refuses_like_the_original():
    # a trace whose step does not apply to the kernel fails with a ScheduleError, not silently
    _k, s = scheduled("gemm_full")
    small = make_gemm(2, 8, 4)  # split(i, 4) exceeds 2 iterations
    with pytest.raises(sd.ScheduleError, match="split factor 4 exceeds the 2 iterations of loop 'i'"):
        s.trace.replay(small)


def test_refused_steps_are_not_recorded():
    kernel, s = scheduled("gemm_full")
    before = str(s.trace)
    with pytest.raises(sd.ScheduleError):
        s.unroll(s.loop("kk"), 100)
    with pytest.raises(sd.ScheduleError):
        s.tile(s.loop("j"), s.loop("kk"), 4, 4)  # not a perfect nest: rolled back
    assert str(s.trace) == before
    assert s.trace.replay(kernel).ir == s.ir


def test_trace_of_an_unscheduled_kernel():
    s = sd.schedule(gemm)
    assert str(s.trace) == "s = sd.schedule(gemm)"
    assert s.trace.replay(gemm).ir == s.ir == gemm.ir
    assert Trace.from_json(s.trace.to_json()).steps == []


def test_schedule_str_is_its_ir():
    _k, s = scheduled("syrk")
    assert str(s) == str(s.ir)
    assert repr(s) == f"<Schedule of syrk: {len(s.trace.steps)} step(s)>"


def test_a_batch_verifies_once_and_a_refusal_inside_it_changes_nothing():
    from streamdsl.errors import ScheduleError
    from tests.sched.test_cost_model import rowsums

    s = sd.schedule(rowsums)
    with s.batch():
        o, i = s.split(s.loop("k"), 4)
        s.pipeline(o)
        before = s.ir
        with pytest.raises(ScheduleError):
            s.partition(s.buffer("X"), 1, "cyclic", 100)  # X has 8 rows: refused
        assert s.ir is before
    assert len(s.trace.steps) == 2


def test_restore_sets_a_state_the_schedule_had_or_the_same_steps_give():
    a = sd.schedule(gemm)
    start, n = a.ir, len(a.trace.steps)
    o, i = a.split(a.loop("kk"), 4)
    a.pipeline(o)
    after, steps = a.ir, list(a.trace.steps)
    a.restore(start, a.trace.steps[:n])  # undo
    assert a.ir is start and a.trace.steps == [] and str(a.trace) == str(sd.schedule(gemm).trace)
    b = sd.schedule(gemm)
    b.restore(after, steps)  # what those steps give from an equal IR
    assert b.ir is after and str(b.trace) == str(Trace.from_json(b.trace.to_json()))
    assert b.trace.replay(gemm).ir == after
    with pytest.raises(sd.ScheduleError, match="restore takes a kernel IR, got str") as err:
        b.restore(str(after), steps)
    assert err.value.loc.file == __file__


# ---------------------------------------------------------------------- hostile JSON
def _step(primitive, args=(), kwargs=None, outs=()):
    return {"primitive": primitive, "args": list(args), "kwargs": kwargs or {}, "outs": list(outs)}


HOSTILE = {
    "not JSON": ("{", "not valid JSON"),
    "a list": ("[]", 'expected an object with "kernel"'),
    "no steps": (json.dumps({"kernel": "gemm"}), 'expected an object with "kernel"'),
    "build": (json.dumps({"kernel": "gemm", "steps": [_step("build", ["hls", "/tmp/anywhere"])]}),
              "step 0 names 'build', which is not a schedule primitive"),
    "a private method": (json.dumps({"kernel": "gemm", "steps": [_step("_apply")]}), "not a schedule primitive"),
    "restore": (json.dumps({"kernel": "gemm", "steps": [_step("restore", ["kernel gemm", []])]}),
                "step 0 names 'restore', which is not a schedule primitive"),  # sets a state; not @primitive
    "missing key": (json.dumps({"kernel": "gemm", "steps": [{"primitive": "split", "args": []}]}),
                    "step 0 is not an object with the keys"),
    "bad handle": (json.dumps({"kernel": "gemm", "steps": [_step("pipeline", [{"loop": "i", "x": 1}])]}),
                   'must be {"loop": name}'),
    "args not a list": (json.dumps({"kernel": "gemm", "steps": [{**_step("split"), "args": "i"}]}),
                        "args must be a list"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_from_json_accepts_only_schedule_primitives(case, tmp_path):
    text, message = HOSTILE[case]
    with pytest.raises(sd.ScheduleError, match=re.escape(message)) as err:
        Trace.from_json(text)  # @from_json
    assert err.value.kind == "trace error" and err.value.loc.file == __file__
    assert "@from_json" in open(__file__).read().splitlines()[err.value.loc.line - 1]
    assert not any(tmp_path.iterdir())


def test_replay_checks_a_steps_arguments_against_its_primitive():
    t = Trace.from_json(json.dumps({"kernel": "gemm", "steps": [_step("pipeline", [{"loop": "i"}], {"depth": 3})]}))
    with pytest.raises(sd.ScheduleError, match=re.escape("step 0 (pipeline): got an unexpected keyword argument 'depth'")):
        t.replay(gemm)
    t = Trace.from_json(json.dumps({"kernel": "gemm", "steps": [_step("split", [{"loop": "nope"}, 4])]}))
    with pytest.raises(sd.ScheduleError, match="no longer exists|has no loop 'nope'") as err:
        t.replay(gemm)  # @replay
    assert "@replay" in open(__file__).read().splitlines()[err.value.loc.line - 1]


def test_primitives_are_what_schedules_record():
    """PRIMITIVES holds what Schedule records (the traces of these tests), each a method of Schedule."""
    from streamdsl.sched.schedule import PRIMITIVES

    recorded = {st.primitive for name in CASES for st in scheduled(name)[1].trace.steps}
    assert recorded <= PRIMITIVES and all(callable(getattr(sd.Schedule, p, None)) for p in PRIMITIVES)
