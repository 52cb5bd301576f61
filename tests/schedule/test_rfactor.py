"""rfactor: a scalar reduction split over partial accumulators computes the same result (sums to rounding,
max/min exactly), replays from its trace, C-simulates like the simulator, and lifts the float-sum II bound."""
from __future__ import annotations

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i8, i32
from streamdsl.backend.sim import simulate
from streamdsl.schedule.cost import estimate


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
    out = s.rfactor(s.loop(loop), factor)
    return s, out


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
    assert k0.ii == 4 and ko.ii == 4 and ko.trips == 16  # 16 elements per II instead of one
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
