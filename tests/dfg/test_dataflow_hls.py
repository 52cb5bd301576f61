"""Dataflow graphs as Vitis HLS projects: C-simulation with bounded streams == the simulator.

The expected pragmas sit next to what they belong to (CHECK-style), and the
bypass example deadlocks in C-simulation exactly where the token simulator
says it does.
"""
import numpy as np
import pytest
from df_kernels import bypass, ffn, two_readers

from streamdsl.dfg.dfschedule import DataflowSchedule
from streamdsl.dfg.tokensim import DeadlockError

FIG5_C = "itensor<4x2xf32, [4,2,2]*[2,1,4], (d0,d1,d2)->(d2,d0)>"
rng = np.random.default_rng(7)
X, W1, W2 = (rng.standard_normal((8, 8)).astype(np.float32) for _ in range(3))


def fused(fn):
    g = DataflowSchedule(fn)
    g.fuse(*g.tasks())
    return g


def test_fused_ffn_streams_rows_through_bounded_fifos():
    g = fused(ffn)
    for e in "xhry":
        g.stream(g.edge(e), tile=(1, 8))
    g.size_fifos()
    prj = g.build()
    src = prj.source
    assert "#pragma HLS dataflow" in src                                    # CHECK: the region
    assert f"hls::stream<sd::token<float, 8>, {g.depth('h')[0]}> s_h(\"h\");" in src
    assert f"#pragma HLS stream variable=s_h depth={g.depth('h')[0]}" in src  # CHECK: the sized depth
    assert "#pragma HLS interface mode=m_axi port=x offset=slave bundle=gmem0 depth=64 max_widen_bitwidth=512" in src
    assert "hls::sim::run_dataflow(" in src and "#ifndef __SYNTHESIS__" in src
    assert "//   reads x (itensor<1x8xf32, [8,1]*[1,8], (d0,d1)->(d0,d1)>): streamed: reads 8 token(s) at 8 of 9 steps, up to 1 at once" in src
    np.testing.assert_array_equal(prj.csim(X, W1, W2), ffn(X, W1, W2))


def test_fig5_converter_is_a_ping_pong_pair_and_csim_matches():
    g = fused(ffn)
    g.stream(g.edge("h"), tile=(4, 2), order=(1, 0), side="producer")
    g.stream(g.edge("h"), itensor=FIG5_C, side="consumer")
    src = g.build().source
    assert "struct cvt_h_block {\n  float v[8][2];\n};" in src               # CHECK: the 8x2 buffer of Fig. 5
    assert "#pragma HLS stream variable=cvt_h_buf depth=2 type=pipo" in src  # CHECK: ping-pong
    assert "cvt_h_fill(s_h_cvt_h, cvt_h_buf);" in src and "cvt_h_drain(cvt_h_buf, s_h_relu);" in src
    np.testing.assert_array_equal(g.build().csim(X, W1, W2), ffn(X, W1, W2))


def test_unfused_regions_hand_over_through_dram_buffers():
    g = DataflowSchedule(ffn)
    for e in "xhry":
        g.stream(g.edge(e), tile=(2, 8))
    prj = g.build()
    src = prj.source
    assert "float dram_h[8][8], float dram_r[8][8]" in src                  # CHECK: host-allocated DRAM
    assert src.count("#pragma HLS dataflow") == 3
    assert "ffn_region0(x, w1, dram_h);\n  ffn_region1(dram_h, dram_r);\n  ffn_region2(w2, dram_r, y);" in src
    np.testing.assert_array_equal(prj.csim(X, W1, W2), ffn(X, W1, W2))


def test_fork_feeds_two_readers():
    g = fused(two_readers)
    g.stream(g.edge("a"), tile=(2, 8))
    b, c = g.build().csim(X)
    rb, rc = two_readers(X)
    np.testing.assert_array_equal(b, rb)
    np.testing.assert_array_equal(c, rc)


def bypass_design():
    g = fused(bypass)
    for e in "xabc":
        g.stream(g.edge(e), tile=(2, 8))
    g.stream(g.edge("a"), tile=(8, 8), side=g.task("relu_2"))  # relu_2 needs all of a first
    g.size_fifos()
    return g


def test_bypass_at_the_lp_depth_runs_in_csim():
    g = bypass_design()
    depth, _ = g.depth("a:add")
    src = g.build().source
    assert f"#pragma HLS stream variable=s_a_add depth={depth}" in src
    assert "s_a_add.write(t);\n    s_a_cvt_a.write(t);" in src  # the bypass first: it is read latest
    np.testing.assert_array_equal(g.build().csim(X), bypass(X))


def test_bypass_depth_minus_one_deadlocks_in_tokensim_and_csim():
    g = bypass_design()
    depth, _ = g.depth("a:add")
    g.fifo(g.edge("a"), depth=depth - 1, consumer=g.task("add"))
    with pytest.raises(DeadlockError) as tok:
        g.simulate()
    assert f"'a:add' (full at depth {depth - 1})" in str(tok.value)
    with pytest.raises(DeadlockError) as cs:
        g.build().csim(X)
    assert "'a:add' blocked on write (full)" in str(cs.value)
    assert "'b' blocked on read (empty)" in str(cs.value)
