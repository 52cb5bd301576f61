"""The dataflow schedule's trace: Python that rebuilds the design, JSON that round-trips, replay that gives the
same design (kernel primitives interleaved with the dataflow ones as they were applied)."""
from __future__ import annotations

import json

import pytest

import streamdsl as sd
from streamdsl.dfg.trace import DataflowTrace
from df_kernels import ffn


def scheduled():
    g = sd.schedule(ffn)
    g.stream(g.edge("h"), tile=(1, 8))
    s = g.schedule(g.task("relu"))
    g.fuse(*g.tasks())
    g.size_fifos()  # sized before relu is pipelined: the replay must size at the same point
    s.pipeline(s.loop("j"), 1)
    g.fifo(g.edge("r"), 3)
    o, i = s.split(s.loop("i"), 2)
    g.fifo(g.fifo_handle("y"), 4)
    return g


def test_trace_prints_python_in_the_order_applied():
    text = str(scheduled().trace)
    lines = text.splitlines()
    assert lines[0] == "g = sd.schedule(ffn)"
    assert 'g.stream(g.edge("h"), tile=(1, 8))' in lines
    assert lines.index('s_relu = g.schedule(g.task("relu"))') < lines.index("g.size_fifos(mode='normal')") \
        < lines.index('s_relu.pipeline(s_relu.loop("j"), ii=1)') < lines.index('g.fifo(g.edge("r"), 3)') \
        < lines.index('s_relu.split(s_relu.loop("i"), 2)') < lines.index('g.fifo(g.fifo_handle("y"), 4)')


def _same(a, b):
    assert a.design_key()[:3] == b.design_key()[:3] and a.depths() == b.depths()
    assert all(a.kernel_ir(t) == b.kernel_ir(t) for t in a.graph.tasks)
    assert a.simulate().cycles == b.simulate().cycles


def test_replay_and_json_round_trip_rebuild_the_same_design():
    g = scheduled()
    _same(g, g.trace.replay(ffn))
    text = g.trace.to_json()
    back = DataflowTrace.from_json(text)
    assert back.to_json() == text and str(back) == str(g.trace)
    _same(g, back.replay(ffn))


def test_the_printed_trace_runs_as_python():
    g = scheduled()
    env = {"sd": sd, "ffn": ffn}
    exec(str(g.trace), env)
    _same(g, env["g"])


@pytest.mark.parametrize("text, message", [
    ('{"dataflow": "ffn", "steps": [{"primitive": "build", "args": ["out"], "kwargs": {}}]}',
     "'build' is not a dataflow schedule primitive"),
    ('{"dataflow": "ffn"}', "not a dataflow trace (KeyError"),
    ("[1, 2", "not a dataflow trace (JSONDecodeError"),
])
def test_a_trace_that_is_not_one_is_refused_where_it_is_read(text, message):
    with pytest.raises(sd.ScheduleError) as info:
        DataflowTrace.from_json(text)  # <- here
    assert message in info.value.message and info.value.loc.file == __file__
    json.loads(scheduled().trace.to_json())  # and a real one is JSON
