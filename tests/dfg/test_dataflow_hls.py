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
    # a row of 8 floats is one beat (256 bits): the FIFO is a beat wide and as deep as the sized tokens
    assert f"hls::stream<sd::beat<float, 8>, {g.depth('h')[0]}> s_h(\"h\");" in src
    assert f"#pragma HLS stream variable=s_h depth={g.depth('h')[0]}" in src  # CHECK: the sized depth
    # x lies in DRAM as its 8 rows of 256 bits, two a 512-bit word, read in order (a burst)
    assert ("#pragma HLS interface mode=m_axi port=x offset=slave bundle=gmem0 depth=4 max_read_burst_length=64 "
            "max_write_burst_length=64") in src
    assert "hls::sim::run_dataflow(" in src and "#ifdef STREAMDSL_THREADED_DATAFLOW" in src
    assert "//   reads x (itensor<1x8xf32, [8,1]*[1,8], (d0,d1)->(d0,d1)>): streamed: reads 8 token(s) at 8 of 9 steps, up to 1 at once" in src
    np.testing.assert_array_equal(prj.csim(X, W1, W2), ffn(X, W1, W2))


def test_fig5_converter_is_a_ping_pong_pair_and_csim_matches():
    g = fused(ffn)
    g.stream(g.edge("h"), tile=(4, 2), order=(1, 0), side="producer")
    g.stream(g.edge("h"), itensor=FIG5_C, side="consumer")
    prj = g.build()
    src = prj.source
    assert "typedef float cvt_h_block[8][2];" in src                         # CHECK: the 8x2 buffer of Fig. 5
    # CHECK: ping-pong: UG1399's stream of blocks, two blocks of memory, each taken under a lock for one block
    assert "hls::stream_of_blocks<cvt_h_block, 2> cvt_h_buf;" in src and "type=pipo" not in src
    assert '#include "hls_streamofblocks.h"' in prj.files["ffn.h"]
    assert "static void cvt_h_fill(hls::stream<sd::beat<float, 8>> &s_h_cvt_h, " \
           "hls::stream_of_blocks<cvt_h_block> &cvt_h_buf) {" in src
    assert "    SD_TRIP(L_cvt_h_blocks);\n    hls::write_lock<cvt_h_block> blk(cvt_h_buf);\n" in src
    assert "    SD_TRIP(L_cvt_h_blocks);\n    hls::read_lock<cvt_h_block> blk(cvt_h_buf);\n" in src
    assert "cvt_h_fill(s_h_cvt_h, cvt_h_buf);" in src and "cvt_h_drain(cvt_h_buf, s_h_relu);" in src
    np.testing.assert_array_equal(prj.csim(X, W1, W2), ffn(X, W1, W2))
    acc = prj.accounting(X, W1, W2)  # the converter's loops are the ones the model prices
    assert [round(r.ratio, 3) for r in acc.rows if r.kind == "converter"] == [1.0] and round(acc.ratio, 3) == 1.0


def test_unfused_regions_hand_over_through_dram_buffers():
    g = DataflowSchedule(ffn)
    for e in "xhry":
        g.stream(g.edge(e), tile=(2, 8))
    g.ports(g.edge("w1"), 4)
    prj = g.build()
    src = prj.source
    assert "sd::word *dram_h, sd::word *dram_r" in src                      # CHECK: host-allocated DRAM
    assert src.count("#pragma HLS dataflow") == 3
    assert ("ffn_region0(x, w1, w1_1, w1_2, w1_3, dram_h);\n  ffn_region1(dram_h, dram_r);\n  "
            "ffn_region2(w2, dram_r, y);") in src     # CHECK: w1 on the 4 ports g.ports asks, w2 on one
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
    assert "s_a_add.write(b0);\n    s_a_cvt_a.write(b0);" in src  # the bypass first: it is read latest
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


def test_ports_are_refused_where_the_words_do_not_split():
    from streamdsl.errors import ScheduleError

    g = DataflowSchedule(ffn)
    for e in "xhry":
        g.stream(g.edge(e), tile=(2, 8))
    with pytest.raises(ScheduleError, match="on chip"):
        g.ports(g.edge("h"), 2)
    with pytest.raises(ScheduleError, match="integer from 1 to 64"):
        g.ports(g.edge("w1"), 0)
    g.ports(g.edge("x"), 3)  # x's tokens are 2x8 floats: one word, not a multiple of 3
    with pytest.raises(ScheduleError, match="'x' cannot move over 3 ports") as err:
        g.build()
    assert err.value.loc is not None and err.value.loc.file == __file__
