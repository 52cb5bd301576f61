"""The moves a task's process makes, where they sit and what they cost (streamdsl.dfg.tasks, streamdsl.dfg.order).

* A stream that moves tokens at a loop's first iteration alone (a read) or its last alone (a write) moves
  beside the loop: inside a pipeline its beats would bound every iteration's II.
* A weight read a head at a time around the head's pipeline streams in tiles of what the pipeline reads an
  iteration (a column of the head's rows), so a token falls into as many banks of the pipeline's partitioned
  buffer as it has values instead of one bank a row.
* Such a move beside the loop does not count against splitting the loop into one step an iteration
  (access._groups): a one-token linear's input row, read once, leaves its weights a token an iteration.

C-simulation of the emitted design equals the simulator bit for bit.
"""
import numpy as np

import streamdsl as sd
from streamdsl import f32
from streamdsl.dfg.dfschedule import DataflowSchedule
from streamdsl.dfg.order import stream_in_read_order
from streamdsl.dfg.streamplan import buffer_ii
from streamdsl.explorer import apply_recipe
from streamdsl.ir.nodes import Alloc, For, StreamMove, walk
from streamdsl.library.llm.linear import make_linear, make_qkv

qkv = make_qkv(1, 32, 4, 2, 8)


@sd.dataflow
def proj(x: f32[1, 32], wq: f32[32, 32], wk: f32[16, 32], wv: f32[16, 32]) -> (f32[4, 1, 8], f32[2, 1, 8],
                                                                                 f32[2, 1, 8]):
    q, k, v = qkv(x, wq, wk, wv)
    return q, k, v


def _args():
    rng = np.random.default_rng(5)
    return tuple(rng.standard_normal(s).astype(np.float32) for s in ((1, 32), (32, 32), (16, 32), (16, 32)))


def design(read_order=True):
    g = DataflowSchedule(proj)
    for t in g.tasks():
        apply_recipe(g.schedule(t), True, 8)
    for w in ("wq", "wk", "wv"):  # by rows, as the explorer's default tile streams them
        g.stream(g.edge(w), tile=(1, 32))
    streamed = stream_in_read_order(g) if read_order else []
    g.size_fifos()
    return g, streamed


def _process(g):
    (task,) = g.graph.tasks
    return g.timing().processes[task]


def test_a_head_at_a_time_weight_streams_a_column_of_the_heads_rows_a_token():
    g, streamed = design()
    assert streamed == ["wq", "wk", "wv"]
    assert g.layout("wq", "qkv_1x32x4x2x8").element == (8, 1)  # what one iteration of the head's 8 lanes reads
    moves = {m.stream: m for m in walk(_process(g)) if isinstance(m, StreamMove)}
    assert moves["wq"].token_cycles == 1                             # 8 values into 8 banks, not 1 bank a row
    rows, _ = design(read_order=False)
    assert {m.stream: m for m in walk(_process(rows)) if isinstance(m, StreamMove)}["wq"].token_cycles == 16
    assert g.simulate().cycles < rows.simulate().cycles
    np.testing.assert_array_equal(np.concatenate([a.ravel() for a in g.build().csim(*_args())]),
                                  np.concatenate([a.ravel() for a in proj(*_args())]))


def test_a_token_moved_once_sits_beside_the_loop_not_in_its_pipeline():
    g, _ = design()
    proc = _process(g)
    for lp in (s for s in walk(proc) if isinstance(s, For) and "pipeline" in s.attrs):
        for m in (m for m in walk(lp) if isinstance(m, StreamMove)):
            # a read only at the first execution (or a write only at the last) would bound every iteration's II
            assert any(m.counts[1:]) if m.direction == "read" else any(m.counts[:-1])
    x = [m for m in walk(proc) if isinstance(m, StreamMove) and m.stream == "x"]
    assert len(x) == 1 and x[0].counts == (1,)


def test_buffer_ii_walks_the_tokens_tile():
    rows_partitioned = ((1, "cyclic", 8),)
    assert buffer_ii(8, (8, 32), rows_partitioned) == 4             # a row's values: one bank, two ports
    assert buffer_ii(8, (8, 32), rows_partitioned, (8, 1)) == 1     # a column's values: eight banks
    assert buffer_ii(8, (8, 32), rows_partitioned, (1, 32)) == 4


lin = make_linear(1, 256, 32, bias=False)


@sd.kernel
def double(x: f32[1, 256]) -> f32[1, 256]:
    y: f32[1, 256]
    for i, k in sd.grid(1, 256):
        y[i, k] = x[i, k] * 2.0
    return y


@sd.dataflow
def one_token_linear(x: f32[1, 256], w: f32[32, 256]) -> f32[1, 32]:
    return lin(double(x), w)


def test_an_input_vector_read_once_leaves_the_weights_streaming_through_the_pipeline():
    # the linear reads its input row (16 beats) at the reduction pipeline's first iteration alone: it moves beside
    # the loop, so it must not make the step tables read every weight before the loop (the whole matrix kept)
    g = DataflowSchedule(one_token_linear)
    for t in g.tasks():
        apply_recipe(g.schedule(t), True, 8)
    g.stream(g.edge("w"), tile=(1, 256))
    assert "w" in stream_in_read_order(g)
    g.size_fifos()
    task = next(t for t in g.graph.tasks if t.startswith("linear"))
    proc = g.timing().processes[task]
    (pipe,) = [s for s in proc.body if isinstance(s, For) and any(
        isinstance(m, StreamMove) and m.stream == "w" for m in walk(s))]
    assert "pipeline" in pipe.attrs
    assert [m.stream for m in walk(pipe) if isinstance(m, StreamMove)] == ["w"]  # a token an iteration
    assert {a.name: a.type.shape for a in walk(proc) if isinstance(a, Alloc)}["W"] == (32, 1)  # not (32, 256)
    rng = np.random.default_rng(3)
    args = (rng.standard_normal((1, 256)).astype(np.float32), rng.standard_normal((32, 256)).astype(np.float32))
    np.testing.assert_array_equal(g.build().csim(*args), one_token_linear(*args))
