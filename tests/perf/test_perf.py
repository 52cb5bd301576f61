"""Board facts, model arithmetic on small designs, the SLR MILP and the reports (exploration: tests/explorer)."""
import math

import pytest

import streamdsl as sd
from streamdsl import f32
from streamdsl.dfg.channels import DMA_LATENCY
from streamdsl.dfg.tokensim import Edge, Task
from streamdsl.perf import BOARDS, board, model_design, partition_slrs
from streamdsl.boards import BoardError, RESOURCES
from streamdsl.dfg.channels import DmaModel, allocate_channels, analytic_cycles
from streamdsl.perf.model import bind_memory

N = 64


@sd.kernel
def scale(X: f32[N, N]) -> f32[N, N]:
    Y: f32[N, N] = 0.0
    for i in range(N):
        for j in range(N):
            Y[i, j] = X[i, j] * 2.0
    return Y


@sd.kernel
def shift(X: f32[N, N]) -> f32[N, N]:
    Y: f32[N, N] = 0.0
    for i in range(N):
        for j in range(N):
            Y[i, j] = X[i, j] + 1.0
    return Y


@sd.dataflow
def pipe(X: f32[N, N]) -> f32[N, N]:
    a = scale(X)
    b = shift(a)
    return b


def test_boards_present_and_cited():
    for name in ("u55c", "u280", "vck190"):
        b = board(name)
        assert b.clock_mhz > 0 and b.slrs and b.memories
        assert all(all(s[r] > 0 for r in RESOURCES) for s in b.slrs)
        text = "\n".join(b.assumptions())
        assert ("DS978" in text) if name == "u55c" else ("DS963" in text) if name == "u280" else ("DS950" in text)
        assert "derived estimate" in text
    u = BOARDS["u55c"]
    assert u.device_total["dsp"] == 9024 and u.device_total["uram"] == 960 and len(u.slrs) == 3
    # a design may use each SLR less the platform's 10 % (UG1393)
    assert u.slrs[0]["dsp"] == int(3008 * 0.9) and u.total["dsp"] == 3 * int(3008 * 0.9)
    assert u.memory.channels == 32 and u.memory.channel_gbs == 14.375 and math.isclose(u.memory.total_gbs, 460)
    with pytest.raises(BoardError) as info:
        board("u999")  # <- the user's line
    assert info.value.loc is not None and info.value.loc.file == __file__ and "known boards: u55c, u280, vck190" in info.value.hint


def test_memory_binding_by_size():
    assert bind_memory(512)[0] == "lutram" and bind_memory(512)[1]["lut"] == 64
    st, r = bind_memory(4096)
    assert st == "bram" and r["bram"] == math.ceil(4096 * 8 / (18 * 1024))
    st, r = bind_memory(1 << 20)
    assert st == "uram" and r["uram"] == math.ceil((1 << 23) / (288 * 1024))


def test_channel_allocation_hand_computed():
    ds = [DmaModel(n, n, "load", 0, 32, b, 1, b) for n, b in (("a", 3000), ("b", 1000), ("c", 10))]
    assert allocate_channels(ds, 8) == 8
    got = {d.name: d.channels for d in ds}
    # one each, then 5 spares to the most bytes per channel: a(3000/1=3000) a(1500) b(1000) a(1000) a(750)
    assert got == {"a": 5.0, "b": 2.0, "c": 1.0}


def test_analytic_cycles_hand_computed():
    t = [Task("p", 4, 2, 3), Task("c", 4, 1, 1)]
    e = [Edge("e", "p", "c", 4)]
    # p: latency (4-1)*2+3 = 9; c starts at delay 3 (first token), ends max(3 + 4, 9 + 1) = 10
    assert analytic_cycles(t, e) == 10


def test_model_design_dma_arithmetic():
    g = sd.schedule(pipe)
    for e in g.edges():
        g.stream(e, tile=(1, N))
    g.fuse(*g.tasks())
    g.size_fifos()
    p = model_design(g, "u55c")
    load = next(d for d in p.dmas if d.direction == "load")
    assert load.bytes == N * N * 4 and load.token_bytes == N * 4
    # one load + one store of 256-byte tokens; a channel moves 14.375 GB/s / 250 MHz = 57.5 B a cycle, so 5
    # channels would move a token a cycle, but the kernels take 8,000 cycles and a channel each keeps both DMAs
    # inside them: the other channels would shorten the design by less than 2 %, so they are not given
    assert p.channels_used == 2 and all(d.channels == 1 for d in p.dmas)
    per_cycle = load.gbs * 1e9 / 250e6
    assert load.ii == max(1, round(N * 4 / per_cycle))  # the nearest whole II (dma_timing), the rest in the latency
    assert p.sim is not None and p.cycles == p.sim.cycles and p.fits
    p4 = model_design(g, "u55c", bits={"X": 4})
    # a row of 64 values at 4 bits is 256 bits: still one 512-bit word a token in DRAM (a tile is whole words)
    assert next(d for d in p4.dmas if d.tensor == "X").bytes == N * 64


def test_partition_respects_slr_capacity():
    b = board("u55c")
    cap = b.slrs[0]["dsp"]
    nodes = {f"k{i}": {"dsp": int(cap * 0.6), "bram": 0, "uram": 0, "lut": 1000, "ff": 1000} for i in range(3)}
    links = [("k0", "k1", 100), ("k1", "k2", 100)]
    where, crossing = partition_slrs(nodes, links, b)
    assert sorted(where.values()) == [0, 1, 2]  # two of them would exceed one SLR's DSPs
    assert crossing == 200
    nodes["k3"] = dict(nodes["k0"])
    assert partition_slrs(nodes, links, b) is None  # four 60 % kernels cannot fit three SLRs


def test_report_prints_every_assumption():
    g = sd.schedule(pipe)
    g.fuse(*g.tasks())
    g.size_fifos()
    p = model_design(g, "vck190", bits={"X": 8})
    text = p.report()
    flat = " ".join(text.split())  # long assumptions wrap to the terminal's width
    for a in p.assumptions:
        assert " ".join(a.split()) in flat
    for line in p.board.assumptions():
        assert " ".join(line.split()) in flat
    assert max(map(len, text.splitlines())) <= 120
    assert "8-bit: X" in text and "SLR0" in text


def test_llm_perf_tiny():
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.perf import W4A8, layer_macs, llm_perf

    c = tiny("llama")
    p = llm_perf(c, "u55c", prompt=4, gen=4, bits=W4A8)
    assert p.tokens_per_s > 0 and p.ttft_s > 0
    assert math.isclose(p.latency_s, p.ttft_s + 4 / p.tokens_per_s)
    h = c.hidden
    mats = h * c.q_dim + 2 * h * c.kv_dim + c.q_dim * h + 3 * h * c.intermediate
    assert p.weight_bytes() == c.layers * mats * 4 // 8
    assert math.isclose(p.hbm_roofline_tps, 460e9 / p.weight_bytes())
    assert layer_macs(c, 8) == mats + 2 * c.heads * 8 * c.head_dim
    text = p.report()
    assert "W4A8 accelerator as built" in text and "HBM roofline" in text
    for a in p.assumptions():
        assert a in text


def test_llm_perf_keeps_the_faster_of_packed_and_plain_w4a8_linears():
    from streamdsl.library.llm.config import LLMError, tiny
    from streamdsl.library.llm.models import model
    from streamdsl.library.llm.perf import W4A8, llm_perf

    c = tiny("gpt2")
    packed = llm_perf(model(c, max_len=8, quant="w4a8"), "u55c", prompt=4, gen=4, bits=W4A8)
    plain = llm_perf(model(c, max_len=8, quant="w4a8", pack=False), "u55c", prompt=4, gen=4, bits=W4A8)
    assert packed.pack and not plain.pack  # an LLM is modeled as it is built
    # the packed layer's linears hold 48-bit pair accumulators; the plain one's int32 accumulators
    kinds = {lp.decode.schedule.kernel_ir(n).name: str(lp.decode.schedule.kernel_ir(n))
             for lp in packed.layers for n in lp.decode.schedule.graph.tasks}
    assert any("alloc P: i48" in ir for n, ir in kinds.items() if n.startswith("linear_w4a8"))
    best = llm_perf(c, "u55c", prompt=4, gen=4, bits=W4A8)  # a config: the faster decode layer, then prefill
    assert best.decode_s == min(packed.decode_s, plain.decode_s)
    assert best.pack in ((True, "decode") if best.decode_s == packed.decode_s else (False, "prefill"))
    assert best.ttft_s <= (packed if best.decode_s == packed.decode_s else plain).ttft_s
    assert ("two outputs a DSP48E2" if best.pack else "one MAC a lane") in best.report()
    # the model llm_perf names is the one it modeled
    again = llm_perf(model(c, max_len=8, quant="w4a8", pack=best.pack), "u55c", prompt=4, gen=4, bits=W4A8)
    assert (again.decode_s, again.ttft_s, again.pack) == (best.decode_s, best.ttft_s, best.pack)
    half = model(c, max_len=8, quant="w4a8", pack="decode")
    assert half.packs(1) and not half.packs(4)
    assert "alloc P: i48" in str(half.layer(1).function.graph.kernel("linear_w4a8_1x64x192"))
    assert "alloc P: i48" not in str(half.layer(4).function.graph.kernel("linear_w4a8_4x64x192"))
    for bad in ("yes", 1, None):
        with pytest.raises(LLMError, match="pack must be True, False, 'decode' or 'prefill'"):
            model(c, quant="w4a8", pack=bad)


def test_llm_perf_prefill_in_chunks():
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.perf import W4A8, llm_perf

    c = tiny("llama")
    whole = llm_perf(c, "u55c", prompt=8, gen=2, bits=W4A8)
    assert whole.layers[0].chunk == 8 and whole.layers[0].prefill_passes(8) == 1
    p = llm_perf(c, "u55c", prompt=8, gen=2, bits=W4A8, prefill_chunk=4)
    lp = p.layers[0]
    assert lp.chunk == 4 and lp.prefill_passes(8) == 2
    assert math.isclose(p.ttft_s, sum(x.count * 2 * x.prefill.latency_s for x in p.layers))
    assert "2 pass(es) of 4 tokens" in p.report()
    with pytest.raises(Exception) as ei:
        llm_perf(c, "u55c", prompt=8, gen=2, bits=W4A8, prefill_chunk=0)
    assert "prefill_chunk must be a positive integer" in str(ei.value) and "test_perf.py" in str(ei.value)


def test_small_dmas_share_one_channel():
    ds = [DmaModel(n, n, "load", 0, 32, b, 1, b) for n, b in (("w1", 4000), ("w2", 3000), ("s1", 40), ("s2", 60))]
    # 7100 bytes over 4 channels: 1775 a channel; s1 + s2 = 100 fit in one, so they share the last, served
    # round-robin: s1 is done after 40 + 40 bytes (half the channel on average), s2 after 40 + 60 (0.6 of it)
    assert allocate_channels(ds, 4) == 4
    got = {d.name: d.channels for d in ds}
    assert got["s1"] == pytest.approx(0.5) and got["s2"] == pytest.approx(0.6)
    assert got["w1"] + got["w2"] == 3 and got["w1"] == 2  # the spare to the most bytes per channel


def test_a_dma_moves_its_data_at_the_channels_rate_not_whole_cycles_a_token():
    from streamdsl.dfg.channels import dma_data_cycles, dma_timing

    assert dma_timing(100, 512, 64.0) == (8, DMA_LATENCY + 7)  # a whole 8 cycles a token: as before
    # 1792-byte tokens over 31 HBM channels (1782.5 bytes a cycle): a token a cycle, 7 cycles behind by the end
    # (whole cycles a token would take 2 a token, 2432 cycles)
    ii, lat = dma_timing(1216, 1792, 31 * 57.5)
    assert ii == 1 and dma_data_cycles(1216, 1792, 31 * 57.5) == 1223 == -(-1216 * 1792 // 1782.5)
    assert lat == DMA_LATENCY + 7  # the last token lands when the data is in
    assert dma_data_cycles(10, 64, 640.0) == 10  # at least a cycle a token: the stream moves one a cycle
    assert dma_timing(1, 100, 64.0) == (2, DMA_LATENCY + 1)


def test_channels_by_token_time_minimise_the_longest_dma():
    # 512-byte tokens at 64 bytes per channel-cycle: 8 channels move a token a cycle (100 cycles), 6 the data at
    # their rate (134 cycles)
    ds = [DmaModel("a", "a", "load", 0, 4, 512 * 100, 100, 512), DmaModel("b", "b", "load", 0, 4, 512 * 100, 100, 512)]
    used = allocate_channels(ds, 12, channel_bytes=64.0)
    assert sorted(d.channels for d in ds) == [6.0, 6.0]  # 134 cycles each: 4 + 8 would give 200 and 100
    assert used == 12
    ds2 = [DmaModel("a", "a", "load", 0, 4, 512 * 100, 100, 512)]
    assert allocate_channels(ds2, 12, channel_bytes=64.0) == 8  # a 9th channel shortens nothing: unused


def test_exploring_the_prefill_layer_never_models_it_slower():
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.perf import W4A8, llm_perf

    c = tiny("llama")
    mapped = llm_perf(c, "u55c", prompt=8, gen=2, bits=W4A8)
    own = llm_perf(c, "u55c", prompt=8, gen=2, bits=W4A8, explore_prefill=True)
    assert all(lp.prefill.fits for lp in own.layers)
    assert own.ttft_s <= mapped.ttft_s  # the prefill's own best is kept only when it beats the decode factors


def test_a_small_dma_its_shared_channel_would_make_late_gets_its_own():
    def dmas():
        return [DmaModel("w", "w", "load", 0, 4, 1 << 20, 1024, 1024), DmaModel("k", "k", "load", 0, 32, 6400, 10, 640),
                DmaModel("s1", "s1", "load", 0, 32, 640, 1, 640), DmaModel("s2", "s2", "load", 0, 32, 640, 1, 640)]
    ds = dmas()  # k shares the last channel with s1 and s2: 5/6 of it, 120 cycles
    allocate_channels(ds, 4, channel_bytes=64.0, windows={"w": 10_000, "k": 1000, "s1": 1000, "s2": 1000})
    assert {d.name: d.channels for d in ds}["k"] == pytest.approx(6400 / 7680)
    ds = dmas()  # needed within 110 cycles: a channel of its own (100 cycles), s1 and s2 share the last
    allocate_channels(ds, 4, channel_bytes=64.0, windows={"w": 10_000, "k": 110, "s1": 1000, "s2": 1000})
    got = {d.name: d.channels for d in ds}
    assert got["k"] == 1.0 and got["s1"] == got["s2"] == pytest.approx(0.5) and got["w"] == 2.0


def test_channels_follow_the_windows():
    # 512-byte tokens at 64 bytes per channel-cycle: 8 channels move a token a cycle (100 cycles), 4 two
    # (200), 1 eight (800).  Minimising the longest time gives 4 + 4 + 4 and one spare 4 to a: 200 cycles
    # for two of them.  With a needed by cycle 100 and b, c by 800, a takes 8 and meets it, b and c need 1
    # each to meet theirs, and the channels left shorten them (4 each: 200 cycles, well inside)
    def three():
        return [DmaModel(n, n, "load", 0, 4, 512 * 100, 100, 512) for n in "abc"]
    ds = three()
    allocate_channels(ds, 16, channel_bytes=64.0, windows={"a": 100, "b": 800, "c": 800})
    assert {d.name: d.channels for d in ds} == {"a": 8.0, "b": 4.0, "c": 4.0}
    ds = three()
    allocate_channels(ds, 16, channel_bytes=64.0, windows={"a": 800, "b": 800, "c": 100})
    assert {d.name: d.channels for d in ds}["c"] == 8.0


def test_dma_windows_from_the_consumers():
    from streamdsl.dfg.channels import dma_windows

    tasks = [Task("w", 10, 50, 1), Task("k1", 10, 10, 5), Task("k2", 10, 10, 5), Task("out", 10, 50, 1)]
    edges = [Edge("e0", "k1", "k2", 10), Edge("e1", "w", "k2", 10), Edge("e2", "k2", "out", 10)]
    dmas = [DmaModel("w", "w", "load", 0, 32, 640, 10, 64), DmaModel("out", "out", "store", 0, 32, 640, 10, 64)]
    win = dma_windows(tasks, edges, dmas)
    # with the DMAs free (II 1): k1 runs 0..95 and its first token is out at 5, when k2 starts; k2 ends one
    # latency after k1 (100), the store one cycle after that (101).  The load may take until k2 ends, the
    # store from k2's start to the end
    assert win == {"w": 100, "out": 101 - 5}


def test_spare_channels_go_where_they_save_the_most_cycles():
    # a bundle: 1000 one-KiB tokens and one 16 KiB token; at 64 bytes per channel-cycle 16 channels move a KiB
    # a cycle (1016 cycles), 32 would only shave its big token (1008).  A 2-token DMA of 16 KiB needs 256
    # cycles a token on 1 channel and 128 on 2: within 2 % of the shortest longest time the bundle keeps 16
    # channels and the spares shorten the small DMA, where each saves hundreds of cycles
    bundle = DmaModel("w", "w", "load", 0, 4, 1000 * 1024 + 16384, 1001, 16384, parts=((1000, 1024), (1, 16384)))
    kv = DmaModel("kv", "kv", "load", 0, 4, 2 * 16384, 2, 16384)
    allocate_channels([bundle, kv], 24, channel_bytes=64.0, windows={"w": 5000, "kv": 5000})
    assert bundle.channels == 16.0 and kv.channels == 8.0


def test_channels_go_only_where_they_pay():
    """examples/ffn_dataflow.py: 20 KiB of DMAs under 35,000 cycles of kernels. A channel each keeps every DMA
    inside its kernels' time; the spare channels would shorten the design by a fraction of a percent, so they
    are not given (the design had all 32 channels, an 8 KiB load on 13 of them)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("ffn_ex", Path(__file__).parents[2] / "examples" / "ffn_dataflow.py")
    ffn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ffn)
    p = model_design(ffn.design(fused=True), "u55c")
    assert p.channels_used <= 6 and all(d.channels <= 1 for d in p.dmas)
    assert f"this design: {p.channels_used} of 32" in p.report().replace("\n    ", " ")
