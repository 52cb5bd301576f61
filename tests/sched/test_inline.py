"""inline: a kernel call replaced by the callee's body computes the same bits, replays from its trace,
C-simulates like the simulator, and exposes the callee's loops to the caller's schedule."""
from __future__ import annotations

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32
from streamdsl.backend.sim import simulate
from streamdsl.library.llm.quant import make_linear_w4a8, quantize_weights


@sd.kernel
def double(X: f32[8]) -> f32[8]:
    return X


@sd.kernel
def twice(X: f32[8]) -> f32[8]:
    Y = double(X)
    return Y


def _linear():
    rng = np.random.default_rng(0)
    k = make_linear_w4a8(2, 64, 32, bias=True)
    X = rng.standard_normal((2, 64)).astype(np.float32)
    Wq, sw = quantize_weights(rng.standard_normal((32, 64)).astype(np.float32), 4)
    return k, (X, Wq, sw, rng.standard_normal(32).astype(np.float32))


def test_inlined_call_computes_the_same_bits_and_replays():
    k, args = _linear()
    s = sd.schedule(k)
    s.inline("quantize_rows_2x64")
    assert not any(c.name == "quantize_rows_2x64" for c in s.ir.callees)
    assert "call " not in str(s.ir)
    assert np.array_equal(simulate(s.ir, *args), simulate(k.ir, *args))
    assert s.trace.replay(k).ir == s.ir and sd.parse_ir(str(s.ir)) == s.ir
    loops = [lp.var for lp in s.loops()]
    assert len(loops) == len(set(loops))  # the callee's loops got names of their own


def test_inlined_loops_schedule_and_csim_like_the_simulator():
    k, args = _linear()
    s = sd.schedule(k)
    s.inline(k.ir.callees[0].name)
    amax = next(lp for lp in s.loops() if lp.var.startswith("k1"))  # the callee's first loop
    s.pipeline(amax)
    assert np.array_equal(s.build("hls").csim(*args), simulate(s.ir, *args))


def test_refusals():
    k, _ = _linear()
    s = sd.schedule(k)
    with pytest.raises(sd.ScheduleError) as ei:
        s.inline("softmax")
    assert "calls no kernel 'softmax'" in str(ei.value) and "test_inline.py" in str(ei.value)
    t = sd.schedule(twice)
    with pytest.raises(sd.ScheduleError) as ei:
        t.inline("double")
    assert "returns X, not an array of its own" in str(ei.value)
    assert len(t.trace.steps) == 0
