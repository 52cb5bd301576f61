"""Dataflow graphs: construction, stream layouts and converters, fusion, DMAs, FIFO sizing, simulation."""
import numpy as np
import pytest

from df_kernels import (
    big_relu, bypass, chain4, ffn, ffn16, gemm8, int8_relu, relu8, relu_then_gemm, two_readers, with_scratch,
)
from streamdsl.dfg import DataflowSchedule, DeadlockError
from streamdsl.dfg.itensor import ITensor
from streamdsl.dfg.tokensim import simulate
from streamdsl.ir.nodes import CallKernel, Return

FIG5_B = "itensor<4x2xf32, [4,2]*[2,4], (d0,d1)->(d1,d0)>"
FIG5_C = "itensor<4x2xf32, [4,2,2]*[2,1,4], (d0,d1,d2)->(d2,d0)>"


def fused(fn):
    g = DataflowSchedule(fn)
    g.fuse(*g.tasks())
    return g


# ------------------------------------------------------------ construction
def test_ir_is_kernel_calls_and_a_return():
    body = ffn.ir.body
    assert [type(s) for s in body] == [CallKernel, CallKernel, CallKernel, Return]
    assert [s.callee for s in body[:3]] == ["gemm", "relu", "gemm"]


def test_graph_tasks_and_edges():
    g = ffn.graph
    assert list(g.tasks) == ["gemm_1", "relu", "gemm_2"]
    assert list(g.edges) == ["x", "w1", "w2", "h", "r", "y"]
    assert g.edges["x"].is_input and g.edges["y"].is_output
    assert g.edges["h"].producer == "gemm_1" and g.edges["h"].consumers == [("relu", 0)]
    assert g.predecessors("gemm_2") == ["relu"] and g.successors("gemm_1") == ["relu"]
    text = str(g)
    assert "gemm_1: h = gemm(x, w1)" in text and "h: f32[8, 8]  gemm_1 -> relu" in text


def test_handles_and_print_sections():
    g = DataflowSchedule(ffn)
    assert [t.name for t in g.tasks()] == ["gemm_1", "relu", "gemm_2"]
    assert g.edge("h").name == "h" and g.task("relu").name == "relu"
    text = str(g)
    for section in ("tasks:", "edges:", "regions:", "DMAs:", "FIFOs:"):
        assert section in text
    assert "itensor<8x8xf32, [1,1]*[8,8], (d0,d1)->(d0,d1)> (1 token)" in text  # unstreamed: one token
    assert "depth 2 (default)" in text


def test_calling_the_dataflow_equals_its_kernels_in_sequence():
    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal((8, 8)).astype(np.float32) for _ in range(3))
    y = ffn(x, w1, w2)
    ref = gemm8(relu8(gemm8(x, w1)), w2)
    assert np.array_equal(y, ref)
    np.testing.assert_allclose(y, np.maximum(x @ w1, 0) @ w2, rtol=1e-5, atol=1e-5)
    b, c = two_readers(x)
    assert np.array_equal(b, relu8(relu8(x))) and np.array_equal(b, c)


# ------------------------------------------------------- layouts, converters
def test_stream_builds_the_papers_itensor():
    g = DataflowSchedule(ffn)
    lay = g.stream(g.edge("h"), tile=(4, 2), order=(1, 0))
    assert lay == ITensor.parse(FIG5_B)
    assert g.stream(g.edge("r"), tile=(2, 2)) == ITensor.parse("itensor<2x2xf32, [4,4]*[2,2], (d0,d1)->(d0,d1)>")


def test_fig5_b_to_c_converter_on_a_fused_edge():
    g = fused(ffn)
    g.stream(g.edge("h"), tile=(4, 2), order=(1, 0), side="producer")
    g.stream(g.edge("h"), itensor=FIG5_C, side="consumer")
    (cv,) = g.converters()
    assert cv.converter.buffer_shape == (8, 2) and cv.converter.buffer_bytes == 64
    assert g.timing()[cv.name].fill == g.timing()[cv.name].drain == 4  # 16 output tokens over 4 shared-loop blocks
    text = str(g)
    assert "cvt_h (edge h, region 0)" in text and "buffer 8x2xf32 (64 B, x2 ping-pong), shared loops: d0:4" in text
    assert "h:cvt_h: gemm_1 -> cvt_h" in text and "h:relu: cvt_h -> relu" in text
    res = g.simulate()
    assert res.cycles > 0 and "cvt_h" in res.busy


def test_equal_layouts_need_no_converter_and_whole_buffers_fill_completely():
    g = fused(ffn)
    g.stream(g.edge("h"), tile=(2, 8))
    assert g.converters() == [] and [f.name for f in g.fifos()] == ["x", "w1", "w2", "h", "r", "y"]
    g.stream(g.edge("r"), tile=(2, 8), side="producer")  # consumer side stays one whole token
    (cv,) = g.converters()
    assert cv.converter.buffer_shape == (8, 8) and g.timing()[cv.name].fill == g.timing()[cv.name].drain == 4


def test_consumers_wanting_one_layout_share_a_converter():
    g = fused(two_readers)
    g.stream(g.edge("a"), tile=(2, 8), side="producer")
    g.stream(g.edge("a"), tile=(8, 2), side="consumer")
    assert len(g.converters()) == 1
    assert g.forks() == []  # the converter is generated code: it writes both consumer FIFOs itself
    names = [f.name for f in g.fifos() if f.name.startswith("a")]
    assert names == ["a:cvt_a", "a:relu_2", "a:relu_3"]


def test_a_stream_read_twice_gets_a_fork():
    g = fused(bypass)
    (fork,) = g.forks()
    assert fork.name == "fork_a"
    assert "fork_a (region 0): a -> relu_2, add" in str(g)


# ----------------------------------------------------------- fusion and DMAs
def test_unfused_edges_go_through_dram_fused_edges_are_fifos():
    g = DataflowSchedule(ffn)
    loads = sorted(d.name for d in g.dmas() if d.direction == "load")
    stores = sorted(d.name for d in g.dmas() if d.direction == "store")
    assert loads == ["load_h", "load_r", "load_w1", "load_w2", "load_x"]
    assert stores == ["store_h", "store_r", "store_y"]
    assert [f.name for f in g.lowered().fifos if f.kind == "dram"] == ["h:dram", "r:dram"]
    unfused = g.simulate()
    # h goes to DRAM and back: its load starts once its store (after gemm_1's results) has finished
    assert unfused.starts["load_h"] >= unfused.starts["store_h"] + unfused.busy["store_h"] > unfused.starts["gemm_1"]
    g.fuse(*g.tasks())
    assert sorted(d.name for d in g.dmas()) == ["load_w1", "load_w2", "load_x", "store_y"]
    assert g.regions() == [["gemm_1", "relu", "gemm_2"]]


def test_streaming_on_chip_overlaps_the_kernels():
    g = DataflowSchedule(ffn)
    for e in "xhry":
        g.stream(g.edge(e), tile=(1, 8))
    unfused = g.simulate().cycles
    g.fuse(*g.tasks())
    g.size_fifos()
    assert g.simulate().cycles < unfused


def test_partial_fusion_keeps_a_dma_between_regions():
    g = DataflowSchedule(ffn)
    g.fuse(g.task("gemm_1"), g.task("relu"))
    assert g.regions() == [["gemm_1", "relu"], ["gemm_2"]]
    names = {d.name: d for d in g.dmas()}
    assert "store_r" in names and "load_r" in names and "load_h" not in names
    assert names["store_r"].region == 0 and names["load_r"].region == 1


def test_dma_lanes_and_packing():
    g = DataflowSchedule(ffn)
    g.stream(g.edge("x"), tile=(2, 4))
    load_x = next(d for d in g.dmas() if d.name == "load_x")
    assert load_x.lanes == 16 and load_x.bus_bits == 512  # f32
    assert load_x.packed_shape == (4, 2, 2, 4) and load_x.words_per_token == 1 and load_x.words == 8
    gi = DataflowSchedule(int8_relu)
    gi.stream(gi.edge("x"), tile=(8, 32))
    (load,) = [d for d in gi.dmas() if d.direction == "load"]
    assert load.lanes == 64 and load.words_per_token == 4  # 256 int8 per token, 64 per 512-bit word
    gb = DataflowSchedule(big_relu)
    gb.stream(gb.edge("x"), tile=(16, 16))  # the paper's example: 64x64 with 16x16 tiles
    (load,) = [d for d in gb.dmas() if d.direction == "load"]
    assert load.packed_shape == (4, 4, 16, 16)
    assert "packed 4x4x16x16xf32, 512-bit bus: 16 lanes" in str(gb)


def test_fused_design_needs_less_on_chip_memory_per_region():
    g = DataflowSchedule(ffn16)
    for e in "xhry":
        g.stream(g.edge(e), tile=(1, 16))
    unfused = g.onchip_bytes()
    g.fuse(*g.tasks())
    fused_bytes = g.onchip_bytes()
    assert len(unfused) == 3 and len(fused_bytes) == 1
    assert fused_bytes[0] < sum(unfused.values())


def test_auto_fuse_splits_a_chain_under_a_small_cap():
    g = DataflowSchedule(chain4)
    g.stream(g.edge("a"), tile=(1, 16))
    g.stream(g.edge("b"), tile=(16, 1), side="producer")  # b: converter with a whole-tensor buffer
    g.stream(g.edge("b"), tile=(1, 16), side="consumer")
    g.stream(g.edge("c"), tile=(1, 16))
    cost_a = g.edge_cost("a", "relu_2")
    cost_b = g.edge_cost("b", "relu_3")
    assert cost_a == 2 * 64 and cost_b == 2 * 16 * 16 * 4
    plan = g.auto_fuse(max_bytes=1024)
    assert plan.groups == [["relu_1", "relu_2"], ["relu_3", "relu_4"]]
    assert g.regions() == plan.groups and plan.costs == [128, 128]
    assert "load_b" in {d.name for d in g.dmas()}
    assert g.auto_fuse(max_bytes=4096).groups == [["relu_1", "relu_2", "relu_3", "relu_4"]]
    assert len(g.auto_fuse(max_bytes=1).groups) == 4


def test_auto_fuse_reports_a_task_too_big_on_its_own():
    g = DataflowSchedule(with_scratch)
    plan = g.auto_fuse(max_bytes=512)
    assert plan.oversized == [("scratch", 16 * 16 * 4)]
    assert "task scratch alone needs 1024 B > 512 B" in str(plan)


# --------------------------------------------------------------- FIFO sizing
def test_size_fifos_gives_zero_stalls():
    g = fused(relu_then_gemm)
    for e in ("x", "r"):
        g.stream(g.edge(e), tile=(1, 16))
    g.size_fifos()
    res = g.simulate()
    assert all(v == 0 for v in res.backpressure.values())
    # no task waits on a FIFO but for its first tokens: relu for the first row of x, which no depth brings before
    # the DMA's latency, and gemm for relu's first row after that
    t = g.timing()
    assert res.stall["relu"] <= t["load_x"].lat and res.stall["gemm"] <= t["load_x"].lat + t["relu"].ii
    assert "(sized)" in str(g)


def test_size_fifos_removes_the_back_pressure_of_default_depths():
    g = fused(ffn16)
    g.stream(g.edge("h"), tile=(4, 4), order=(1, 0), side="producer")
    g.stream(g.edge("h"), tile=(2, 16), side="consumer")
    g.stream(g.edge("r"), tile=(1, 16))
    default = g.simulate()
    assert sum(default.backpressure.values()) > 0  # a producer outruns its consumer and fills a 2-deep FIFO
    g.size_fifos()
    res = g.simulate()
    assert all(v == 0 for v in res.backpressure.values()), res
    assert res.cycles <= default.cycles


def bypass_design():
    g = fused(bypass)
    for e in "xabc":
        g.stream(g.edge(e), tile=(2, 8))
    g.stream(g.edge("a"), tile=(8, 8), side=g.task("relu_2"))  # relu_2 needs all of a first
    return g


def test_bypass_fifo_depth_is_forced_by_the_path():
    g = bypass_design()
    g.size_fifos()
    depth, src = g.depth("a:add")
    assert (depth, src) == (4, "sized")  # the whole of a waits for relu_2's first token
    res = g.simulate()
    assert all(v == 0 for v in res.backpressure.values())
    # the sized design runs as fast as one with unbounded FIFOs: what waiting is left is
    # starvation behind the slow relu_1, which no depth removes
    low, timing = g.lowered(), g.timing()
    unbounded = simulate(timing.task_list, timing.edges, {f.name: None for f in low.fifos})
    assert res.cycles == unbounded.cycles
    why = g.explain_fifo(g.edge("a"), consumer=g.task("add"))
    assert "relu_1 -> fork_a -> cvt_a -> relu_2 -> add" in why


def test_bypass_depth_minus_one_deadlocks():
    g = bypass_design()
    g.size_fifos()
    pinned = g.fifo(g.edge("a"), depth=3, consumer=g.task("add"))
    assert pinned == {"a:add": 3} and "depth 3 (pinned)" in str(g)
    with pytest.raises(DeadlockError) as err:
        g.simulate()
    msg = str(err.value)
    assert "'a:add' (full at depth 3)" in msg and "relu_2" in msg
    assert err.value.loc is not None and err.value.loc.file == __file__


def test_fifo_auto_resizes_one_edge():
    g = bypass_design()
    g.fifo(g.edge("a"), depth=1, consumer=g.task("add"))
    assert g.fifo(g.edge("a"), depth="auto", consumer=g.task("add")) == {"a:add": 4}
    assert g.depth("a:add") == (4, "sized")


def test_conservative_mode_gives_no_deeper_fifos():
    g = fused(relu_then_gemm)
    for e in ("x", "r"):
        g.stream(g.edge(e), tile=(1, 16))
    normal = g.size_fifos().depths
    fast = g.simulate().cycles
    cons = g.size_fifos(mode="conservative").depths
    assert all(cons[n] <= normal[n] for n in normal) and cons["r"] < normal["r"]
    assert g.simulate().cycles >= fast  # smaller FIFOs, maybe some latency: never a deadlock


def test_kernel_schedules_feed_the_timing():
    g = fused(relu_then_gemm)
    g.stream(g.edge("x"), tile=(1, 16))
    g.stream(g.edge("r"), tile=(1, 16))
    before = g.timing()["relu"]
    s = g.schedule(g.task("relu"))
    assert g.schedule(g.task("relu")) is s
    s.partition(s.buffer("X"), dim=2, kind="complete")  # a row's 16 values a cycle into its window
    s.partition(s.buffer("Y"), dim=2, kind="complete")  # and out (Vitis already pipelines i, j unrolled)
    s.pipeline(s.loop("i"), 1)  # a row a pipeline iteration, j unrolled (the default already pipelines i x j)
    after = g.timing()["relu"]
    assert after.latency < before.latency and "(scheduled)" in str(g)


def test_stale_sizing_is_flagged():
    g = bypass_design()
    g.size_fifos()
    g.stream(g.edge("c"), tile=(1, 8))
    assert "call it again" in str(g)


def test_print_gives_a_tasks_cycles_and_token_steps_not_an_initiation_interval():
    """The token simulator's iterations are where tokens move; print(g) says so, with the task's modeled cycles."""
    from streamdsl.dfg.dfschedule import DataflowSchedule

    g = DataflowSchedule(ffn)
    for e in "xhry":
        g.stream(g.edge(e), tile=(1, 8))  # 8 rows: 8 token steps per stream
    g.fuse(*g.tasks())
    text = str(g)
    s = g.timing()["relu"]
    assert f"[{s.latency:,} cycles in {s.iters} token steps ~{s.ii:,} apart by the cost model]" in text
    assert "iter x II" not in text
