"""One-token linears stream their weights through the pipeline, and one DMA process reads a layer's inputs in turn.

* ``stream_in_read_order`` fuses a one-token linear's reduction loop with the lanes' pipeline and streams its
  weight a column block an iteration; the task then reads one token a pipeline iteration into a one-token
  window instead of keeping the whole matrix and starting only once it has it.
* ``bundle_in_need_order`` / ``g.bundle`` chain the loads of the layer's inputs in the order the kernels need
  them; the token simulator orders them, the emitted HLS runs them in one process.

C-simulation of the emitted design equals the simulator bit for bit.
"""
import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32
from streamdsl.dfg.dfschedule import DataflowSchedule
from streamdsl.dfg.order import bundle_in_need_order, stream_in_read_order
from streamdsl.dfg.tokensim import DeadlockError
from streamdsl.errors import ScheduleError
from streamdsl.library.llm.quant import I4, make_linear_w4a8, quantize_weights
from streamdsl.explorer import apply_recipe
from streamdsl.perf.model import model_design

up = make_linear_w4a8(1, 64, 256, bias=True)  # two outputs a DSP: 128 pairs, lanes over 16 of them
down = make_linear_w4a8(1, 256, 64, bias=True)


@sd.dataflow
def mlp(x: f32[1, 64], w1: I4[256, 64], s1: f32[256], b1: f32[256], w2: I4[64, 256], s2: f32[64],
        b2: f32[64]) -> f32[1, 64]:
    h = up(x, w1, s1, b1)
    y = down(h, w2, s2, b2)
    return y


def _args():
    rng = np.random.default_rng(3)
    w1, s1 = quantize_weights(rng.standard_normal((256, 64)).astype(np.float32), 4)
    w2, s2 = quantize_weights(rng.standard_normal((64, 256)).astype(np.float32), 4)
    return (rng.standard_normal((1, 64)).astype(np.float32), w1, s1, rng.standard_normal(256).astype(np.float32),
            w2, s2, rng.standard_normal(64).astype(np.float32))


def design(bundle=True):
    g = DataflowSchedule(mlp)
    for t in g.tasks():
        apply_recipe(g.schedule(t), True, 16)
    for e in g.edges():
        if g.graph.edges[e.name].type.rank == 2 and not g.graph.edges[e.name].is_input:
            g.stream(e, tile=(1, g.graph.edges[e.name].type.shape[1]))
    streamed = stream_in_read_order(g)
    g.fuse(*g.tasks())
    bundled = bundle_in_need_order(g) if bundle else ()
    g.size_fifos()
    return g, streamed, bundled


def test_weights_stream_a_column_block_an_iteration_through_a_window():
    g, streamed, _ = design(bundle=False)
    assert streamed == ["w1", "w2"]
    lay = g.layout("w1", "linear_w4a8_1x64x256")
    assert lay.element == (32, 1) and lay.num_tokens == 256 * 64 // 32  # what one iteration's 16 lanes (pairs) read
    tables = g.lowered().nodes["linear_w4a8_1x64x256"].tables
    assert "Wq" in tables.windows
    assert max(tables.bursts("Wq")) == 1 and not tables.buffered("Wq")  # a token a step, never the whole matrix
    src = g.build().source
    assert "Wq[32][1];" in src                                             # CHECK: the one-token window
    # CHECK: the read inside the pipeline: a token's one beat (32 int4 values, 128 bits) an iteration, unrolled
    assert "// read w1: 1 beat(s) of 32 a token over 1 FIFO(s)" in src and "Wq[l][0] = bt.v[l];" in src
    np.testing.assert_array_equal(g.build().csim(*_args()), mlp(*_args()))


def test_the_bundle_reads_the_inputs_in_the_order_the_kernels_need_them():
    g, _, bundled = design()
    assert bundled == ("x", "w1", "s1", "b1", "w2", "s2", "b2")
    low = g.lowered()
    assert low.bundles == [tuple(f"load_{e}" for e in bundled)]
    order = [e for e in low.sim_edges() if "->" in e.name]
    assert [(e.src, e.dst) for e in order][:2] == [("load_x", "load_w1"), ("load_w1", "load_s1")]
    src = g.build().source
    assert "static void bundle_load_x(" in src and "load_w1(w1, s_w1);\n  load_s1(s1, s_s1);" in src
    np.testing.assert_array_equal(g.build().csim(*_args()), mlp(*_args()))
    p = model_design(g, "u55c")
    chans = {d.channels for d in p.dmas if d.name in low.bundles[0]}
    assert len(chans) == 1  # the bundle's members move over the same channels


def test_a_bundle_against_the_order_of_need_deadlocks():
    g, _, _ = design(bundle=False)
    g.bundle(g.edge("w1"), g.edge("x"))  # the linear quantises x before it reads a weight
    with pytest.raises(DeadlockError):
        g.simulate(g.depths())


def test_bundle_refusals():
    g, _, _ = design(bundle=False)
    with pytest.raises(ScheduleError, match="two or more"):
        g.bundle(g.edge("w1"))
    with pytest.raises(ScheduleError, match="not a graph input"):
        g.bundle(g.edge("w1"), g.edge("h"))
    g.bundle(g.edge("w1"), g.edge("w2"))
    with pytest.raises(ScheduleError, match="already in the bundle"):
        g.bundle(g.edge("w2"), g.edge("x"))


def test_a_kernel_that_writes_before_it_has_read_its_bundled_weight_closes_the_bundle():
    # the fp32 q/k/v block writes the query heads while it still reads the key and value weights; the RoPE
    # tables behind them in one bundle would wait for it, and it for RoPE to take its keys: the bundle stops
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.models import model
    from streamdsl.explorer import explore

    ex = explore(model(tiny("llama"), max_len=8), "u55c", t=1)
    assert ex.best.fits and ex.best.sim is not None
    bundled = {e for b in ex.best.schedule.bundles() for e in b}
    assert bundled and not bundled & {"cos", "sin", "wo"}
