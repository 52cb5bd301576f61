"""rfactor: a scalar reduction split over partial accumulators computes the same result (sums to rounding,
max/min exactly), replays from its trace, C-simulates like the simulator, and lifts the float-sum II bound."""
from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i8, i32
from streamdsl.backend.sim import simulate
from streamdsl.cost.model import estimate, recurrence_latency


@sd.kernel
def sumsq_max(X: f32[4, 256]) -> f32[4, 2]:
    Y: f32[4, 2]
    for i in range(4):
        acc: f32 = 0.0
        mx: f32 = -1000.0
        for k in range(256):
            acc += X[i, k] * X[i, k]
            mx = max(mx, X[i, k])
        Y[i, 0] = acc
        Y[i, 1] = mx
    return Y


@sd.kernel
def dot_i8(A: i8[512], B: i8[512]) -> i32[1]:
    Y: i32[1]
    acc: i32 = 7
    for k in range(512):
        acc += sd.cast(A[k], i32) * sd.cast(B[k], i32)
    Y[0] = acc
    return Y


@sd.kernel
def running(X: f32[64]) -> f32[64]:
    Y: f32[64]
    acc: f32 = 0.0
    for k in range(64):
        acc += X[k]
        Y[k] = acc
    return Y


def _rf(kernel, loop, factor):
    s = sd.schedule(kernel)
    s.pipeline(s.loop(loop))
    s.reassociate(s.loop(loop))  # the float sums may change order (rfactor refuses them otherwise)
    out = s.rfactor(s.loop(loop), factor)
    return s, out


def test_a_float_sum_needs_the_users_consent():
    s = sd.schedule(sumsq_max)
    with pytest.raises(sd.ScheduleError, match="rfactor would reassociate the float sum 'acc'") as e:
        s.rfactor(s.loop("k"), 8)
    assert "s.reassociate(s.loop('k'))" in str(e.value)
    s.reassociate(s.loop("i"))  # a loop around it consents for the sums inside
    s.rfactor(s.loop("k"), 8)
    assert "s.reassociate(s.loop(\"i\"))" in str(s.trace) and s.trace.replay(sumsq_max).ir == s.ir


def test_an_integer_sum_needs_no_consent():
    s = sd.schedule(dot_i8)
    s.rfactor(s.loop("k"), 8)


def test_float_sum_to_rounding_and_max_exactly():
    X = np.random.default_rng(0).standard_normal((4, 256)).astype(np.float32)
    want = simulate(sumsq_max.ir, X)
    s, (outer, lane, buf) = _rf(sumsq_max, "k", 16)
    got = simulate(s.ir, X)
    assert outer.var == "k_o" and lane.var == "k_i" and buf.name == "acc_rf"
    np.testing.assert_allclose(got[:, 0], want[:, 0], rtol=1e-5)
    assert np.array_equal(got[:, 1], want[:, 1])  # max is exact whatever the order
    np.testing.assert_allclose(got[:, 0], (X.astype(np.float64) ** 2).sum(1), rtol=1e-5)


def test_int_sum_is_exact_and_keeps_the_initial_value():
    rng = np.random.default_rng(1)
    A, B = (rng.integers(-127, 128, 512).astype(np.int8) for _ in range(2))
    s, _ = _rf(dot_i8, "k", 8)
    assert simulate(s.ir, A, B)[0] == 7 + int((A.astype(np.int64) * B).sum())


def test_trace_replays_and_ir_round_trips():
    s, _ = _rf(sumsq_max, "k", 8)
    assert "s.rfactor(s.loop(\"k\"), 8)" in str(s.trace).replace("k_o, k_i, acc_rf = ", "")
    assert s.trace.replay(sumsq_max).ir == s.ir
    assert sd.parse_ir(str(s.ir)) == s.ir


def test_csim_equals_the_simulator():
    X = np.random.default_rng(2).standard_normal((4, 256)).astype(np.float32)
    s, _ = _rf(sumsq_max, "k", 16)
    assert np.array_equal(s.build("hls").csim(X), simulate(s.ir, X))


def test_lifts_the_float_recurrence():
    s0 = sd.schedule(sumsq_max)
    s0.pipeline(s0.loop("k"))
    before = estimate(s0.ir)
    s, _ = _rf(sumsq_max, "k", 16)
    s.partition(s.buffer("X"), 2, "cyclic", 16)  # 16 lanes read X at once
    after = estimate(s.ir)
    k0 = next(lp for lp in before.loops if lp.var == "k")
    ko = next(lp for lp in after.loops if lp.var == "k_o")
    r = recurrence_latency("add", f32, 250.0)
    assert k0.ii == r and ko.ii == r and ko.trips == 16  # 16 elements per II instead of one
    assert after.cycles * 3 < before.cycles


@pytest.mark.parametrize("kernel, loop, factor, message", [
    (sumsq_max, "k", 3, "rfactor factor 3 does not divide the 256 iterations of loop 'k'"),
    (sumsq_max, "k", 1, "rfactor factor must be an integer >= 2, got 1"),
    (sumsq_max, "i", 2, "loop 'i' reads accumulator 'acc' outside its accumulation"),
    (running, "k", 4, "loop 'k' reads accumulator 'acc' outside its accumulation"),
])
def test_refusals_are_located_and_change_nothing(kernel, loop, factor, message):
    s = sd.schedule(kernel)
    ir, n = s.ir, len(s.trace.steps)
    with pytest.raises(sd.ScheduleError) as ei:
        s.rfactor(s.loop(loop), factor)
    assert message in str(ei.value) and "test_rfactor.py" in str(ei.value)
    assert s.ir == ir and len(s.trace.steps) == n


def test_fewer_lanes_than_partials_compute_the_same_bits_with_fewer_adders():
    X = np.random.default_rng(3).standard_normal((4, 256)).astype(np.float32)
    full, _ = _rf(sumsq_max, "k", 32)  # 32 partials, 32 adders at II 4 (each partial recurs every iteration)
    full.partition(full.buffer("X"), 2, "cyclic", 32)
    s = sd.schedule(sumsq_max)
    s.pipeline(s.loop("k"))
    s.reassociate(s.loop("k"))
    outer, lane, buf = s.rfactor(s.loop("k"), 32, lanes=8)  # the same 32 partials, 8 updated per iteration
    s.partition(s.buffer("X"), 2, "cyclic", 16)  # 8 lanes read X three times each: 24 reads over 2 ports a bank
    assert "rfactor(s.loop(\"k\"), 32, lanes=8)" in str(s.trace) and s.trace.replay(sumsq_max).ir == s.ir
    np.testing.assert_array_equal(simulate(s.ir, X), simulate(full.ir, X))  # the same sums in the same order
    ii = {lp.var: lp.ii for lp in estimate(s.ir).loops}
    ii_full = {lp.var: lp.ii for lp in estimate(full.ir).loops}
    r = recurrence_latency("add", f32, 250.0)
    assert ii_full["k_o"] == r and ii["k_o"] == math.ceil(r / 4)  # a partial comes round every 4th iteration
    # the 32 lanes' multiplies and adds shared over the II of their recurrence; 8 lanes over theirs, and the
    # adds of the combine levels: the first, a pipeline at II 1, keeps its 8, the next (8, 4, 2, 1, one after
    # another) share 8 more
    assert estimate(full.ir).resources["dsp"] == math.ceil(32 / r) * (3 + 2)
    lanes = math.ceil(8 / ii["k_o"])
    assert estimate(s.ir).resources["dsp"] == lanes * 3 + (8 + max(lanes, 8)) * 2
    levels = [lp for lp in estimate(s.ir).loops if lp.var.startswith("k_r")]
    assert sum(lp.cycles for lp in levels) < sum(lp.cycles for lp in estimate(full.ir).loops if lp.var.startswith("k_r"))
    if shutil.which("g++"):
        np.testing.assert_array_equal(s.build("hls").csim(X), simulate(s.ir, X))


def test_rfactor_lanes_must_divide_the_factor():
    s = sd.schedule(sumsq_max)
    with pytest.raises(sd.ScheduleError, match="lanes must be a positive divisor of the factor 16"):
        s.rfactor(s.loop("k"), 16, lanes=3)
    assert s.ir == sd.schedule(sumsq_max).ir


def test_inside_a_pipeline_the_combine_levels_unroll_too():
    s = sd.schedule(sumsq_max)
    s.pipeline(s.loop("i"))
    s.reassociate(s.loop("i"))
    s.rfactor(s.loop("k"), 8)
    from streamdsl.ir.nodes import For, walk

    levels = [x for x in walk(s.ir.body[1]) if isinstance(x, For) and x.var.startswith("k_r")]
    assert levels and all(x.attrs.get("unroll") == 0 and "pipeline" not in x.attrs for x in levels)
    s2 = sd.schedule(sumsq_max)
    s2.reassociate(s2.loop("k"))
    s2.rfactor(s2.loop("k"), 8)  # on its own: a pipeline a combine level, as before
    assert any("pipeline" in x.attrs for x in walk(s2.ir.body[1]) if isinstance(x, For) and x.var.startswith("k_r"))
