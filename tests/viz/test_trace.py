"""The token simulator's trace: busy runs, waits by cause and FIFO occupancy agree with its totals."""
from __future__ import annotations

import random

import numpy as np
import pytest
from designs import chain_design, llm_layer, mixed_design

from streamdsl.dfg.tokensim import DeadlockError, Edge, Task, simulate


def check_trace(res, tasks, depths):
    tr = res.trace
    assert set(tr.tasks) == {t.name for t in tasks}
    for t in tasks:
        x = tr.tasks[t.name]
        assert len(x.issues) == t.iters and x.issues[0] == res.starts[t.name]
        for spans in (x.busy, x.starved, x.blocked):
            assert spans.shape[1] == 2 and (spans[:, 1] > 0).all()
            assert (np.diff(spans[:, 0]) > 0).all()  # in time order
        assert x.busy[:, 1].sum() == res.busy[t.name] == (t.iters - 1) * t.ii + t.lat  # its latency, unstalled
        after = x.blocked[x.blocked[:, 0] >= x.issues[0]]
        assert x.starved[:, 1].sum() + after[:, 1].sum() == res.stall[t.name]
        assert x.blocked[:, 1].sum() == res.backpressure[t.name]
        # busy runs, starved and blocked waits tile the time from the first issue without overlapping
        spans = np.concatenate([x.busy, x.starved, after])
        spans = spans[np.argsort(spans[:, 0])]
        assert spans[0, 0] == x.issues[0]
        assert (spans[1:, 0] == spans[:-1, 0] + spans[:-1, 1]).all()
        assert spans[-1].sum() == x.issues[-1] + t.lat <= res.cycles  # busy ends when the task does: in the run
    for name, f in tr.fifos.items():
        assert f.depth == depths.get(name)
        assert (np.diff(f.times) > 0).all() and (f.occupancy >= 0).all()
        assert (np.diff(f.occupancy) != 0).all()  # change points only
        peak = int(f.occupancy.max()) if len(f.occupancy) else 0
        assert peak == res.peak[name]
        if f.depth is not None:
            assert peak <= f.depth
        if len(f.occupancy):
            assert f.occupancy[-1] == 0  # every token written was read


def sim_both(tasks, edges, depths, starts=None):
    plain = simulate(tasks, edges, depths, starts)
    traced = simulate(tasks, edges, depths, starts, trace=True)
    assert plain.trace is None
    for a in ("cycles", "busy", "stall", "peak", "starts", "backpressure"):
        assert getattr(plain, a) == getattr(traced, a), a
    return traced


@pytest.mark.parametrize("design", [mixed_design, lambda: chain_design(sized=False), chain_design, llm_layer])
def test_design_trace(design):
    g = design()
    low = g.lowered()
    res = g.simulate(trace=True)
    check_trace(res, g.timing().task_list, g.depths(low))
    assert g.simulate().trace is None


def test_depth_two_chain_waits_for_space_and_for_tokens():
    """Unsized FIFOs (depth 2) make load_x wait on a full FIFO; relu_2 starves waiting for gemm."""
    g = chain_design(sized=False)
    res = g.simulate(trace=True)
    load = res.trace.tasks["load_x"]
    assert res.backpressure["load_x"] > 0 and load.blocked[:, 1].sum() == res.backpressure["load_x"]
    relu2 = res.trace.tasks["relu_2"]
    assert relu2.starved[:, 1].sum() == res.stall["relu_2"] > 0 and len(relu2.blocked) == 0
    x = res.trace.fifos["x"]
    assert x.depth == 2 and x.occupancy.max() == 2


def test_hand_made_pipeline():
    """A producer at II 1 into a consumer at II 3 through a depth-2 FIFO: the producer stalls on space."""
    tasks = [Task("p", 6, 1, 1), Task("c", 6, 3, 1)]
    edges = [Edge("e", "p", "c", 6)]
    res = sim_both(tasks, edges, {"e": 2})
    check_trace(res, tasks, {"e": 2})
    p, c = res.trace.tasks["p"], res.trace.tasks["c"]
    # c reads token k at 1, 4, 7, ... (II 3); p's write of token j needs token j - 2 read by then:
    # p issues 0, 1, 2 back to back, then 4, 7, 10 (the cycles of the reads of tokens 1, 2, 3)
    assert p.issues.tolist() == [0, 1, 2, 4, 7, 10]
    assert p.busy.tolist() == [[0, 3], [4, 1], [7, 1], [10, 1]]
    assert p.blocked.tolist() == [[3, 1], [5, 2], [8, 2]] and len(p.starved) == 0
    assert c.issues.tolist() == [1, 4, 7, 10, 13, 16] and c.busy.tolist() == [[1, 16]] and len(c.starved) == 0
    # writes land at 1, 2, 3, 5, 8, 11; a token leaves the cycle after its read (1, 4, 7, 10, 13, 16)
    f = res.trace.fifos["e"]
    assert list(zip(f.times.tolist(), f.occupancy.tolist())) == [(1, 1), (3, 2), (14, 1), (17, 0)]


def random_graph(seed):
    rng = random.Random(seed)
    n = rng.randint(4, 12)
    tasks, count = [], []
    for i in range(n):
        tokens = rng.choice([4, 8, 16])
        ii, lat = rng.randint(1, 4), rng.randint(1, 12)
        if i and rng.random() < 0.2:
            tasks.append(Task(f"t{i}", 2 * tokens, ii, lat, fill=tokens, drain=tokens))
        else:
            tasks.append(Task(f"t{i}", tokens, ii, lat))
        count.append(tokens)
    edges = []
    for v in range(1, n):
        for u in sorted(rng.sample(range(v), min(v, rng.randint(1, 2)))):
            edges.append(Edge(f"e{len(edges)}", f"t{u}", f"t{v}", min(count[u], count[v])))
    depths = {e.name: rng.choice([None, 1, 2, 3, 8, 64]) for e in edges}
    starts = {t.name: rng.choice([0, 0, 5, 40]) for t in tasks}
    return tasks, edges, depths, starts


def test_random_graphs():
    checked = 0
    for seed in range(120):
        tasks, edges, depths, starts = random_graph(seed)
        try:
            res = sim_both(tasks, edges, depths, starts)
        except DeadlockError:
            continue
        check_trace(res, tasks, depths)
        checked += 1
    assert checked >= 60
