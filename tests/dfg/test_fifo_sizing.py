"""The paper's Fig. 8 examples: tokens in flight, LP start offsets, stalls and deadlocks."""
import pytest

from streamdsl.dfg.fifo import explain, paper_depth, size_fifos, start_offsets
from streamdsl.dfg.tokensim import DeadlockError, Edge, Task, simulate

PRODUCER = Task("producer", iters=5, ii=1, lat=3)  # initial delay 3, II 1
CONSUMER = Task("consumer", iters=5, ii=2, lat=1)  # II 2
FIG8 = [Edge("e", "producer", "consumer", 5)]


def test_fig8_peak_occupancy_is_three():
    res = simulate([PRODUCER, CONSUMER], FIG8, {"e": None})
    assert res.peak["e"] == 3
    assert res.starts["consumer"] == 3


def test_fig8_sizing_gives_three_and_no_stall():
    sz = size_fifos([PRODUCER, CONSUMER], FIG8)
    assert sz.depths == {"e": 3}
    assert paper_depth(PRODUCER, CONSUMER, 5, sz.starts["consumer"] - sz.starts["producer"]) == 3
    res = simulate([PRODUCER, CONSUMER], FIG8, sz.depths)
    assert res.stall == {"producer": 0, "consumer": 0}


def test_fig8_one_less_stalls_the_producer():
    res = simulate([PRODUCER, CONSUMER], FIG8, {"e": 2})
    assert res.stall["producer"] > 0


# kernel0 -> kernel1 -> kernel2 and kernel0 -> kernel2; kernel1 sees its whole input first
K0 = Task("kernel0", 8, ii=1, lat=1)
K1 = Task("kernel1", 16, ii=1, lat=2, fill=8, drain=8)
K2 = Task("kernel2", 8, ii=1, lat=1)
BYPASS = [Edge("a", "kernel0", "kernel1", 8), Edge("b", "kernel1", "kernel2", 8),
          Edge("bypass", "kernel0", "kernel2", 8)]


def test_lp_start_offsets_follow_the_longest_initial_delay_path():
    s = start_offsets([K0, K1, K2], BYPASS)
    assert s["kernel1"] - s["kernel0"] >= K0.initial_delay
    assert s["kernel2"] - s["kernel0"] == K0.initial_delay + K1.initial_delay


def test_bypass_gets_the_depth_its_path_needs_with_zero_stalls():
    sz = size_fifos([K0, K1, K2], BYPASS)
    assert sz.depths["bypass"] == 8
    res = simulate([K0, K1, K2], BYPASS, sz.depths)
    assert all(v == 0 for v in res.stall.values())
    assert "kernel0 -> kernel1 -> kernel2" in explain([K0, K1, K2], BYPASS, sz, "bypass")


def test_bypass_depth_minus_one_deadlocks_and_names_the_cycle():
    sz = size_fifos([K0, K1, K2], BYPASS)
    depths = dict(sz.depths, bypass=sz.depths["bypass"] - 1)
    with pytest.raises(DeadlockError) as err:
        simulate([K0, K1, K2], BYPASS, depths)
    msg = str(err.value)
    assert "'bypass' (full at depth 7)" in msg
    assert "kernel1" in msg and "'a' (empty)" in msg


def test_conservative_mode_equalises_intervals():
    fast, slow = Task("p", 6, ii=1, lat=2), Task("c", 6, ii=3, lat=1)
    e = [Edge("x", "p", "c", 6)]
    normal = size_fifos([fast, slow], e)
    cons = size_fifos([fast, slow], e, mode="conservative")
    assert cons.depths["x"] <= normal.depths["x"]
    assert simulate([fast, slow], e, normal.depths).stall["p"] == 0


def test_printed_sizing_shows_loads_starting_when_they_do():
    """The printed starts are the sized design's as hardware runs it (every process launched at once): a load
    starts no later than the kernel that consumes it. The LP's offsets, which delay each producer as late as
    its consumers allow, are named as such (they had been printed as the starts)."""
    import re

    from df_kernels import ffn

    from streamdsl.dfg.dfschedule import DataflowSchedule

    g = DataflowSchedule(ffn)
    for e in "xhry":
        g.stream(g.edge(e), tile=(1, 8))
    g.fuse(*g.tasks())
    sz = g.size_fifos()
    text = str(sz)
    head = re.split(r"\n  \S+: depth", text)[0]  # the first (wrapped) line: the starts as run
    assert head.startswith("FIFO sizing (normal): starts as run, every process launched at once:")
    run = {t: int(n) for t, n in re.findall(r"(\w+)@(\d+)", head)}
    assert run == g.simulate().starts
    assert run["load_x"] <= run["gemm_1"] and run["load_w1"] <= run["gemm_1"] and run["load_w2"] <= run["gemm_2"]
    assert "LP's offsets, each task as late as its consumers allow" in " ".join(text.split())
