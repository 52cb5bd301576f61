"""FIFO sizing on seeded random dataflow DAGs: no back-pressure at the sized depths, one less is too few,
and the per-edge LP gives the start offsets of the paper's every-path formulation."""
import random

import numpy as np
import pytest
from scipy.optimize import linprog

from streamdsl.dfg.fifo import size_fifos, start_offsets
from streamdsl.dfg.tokensim import DeadlockError, Edge, Task, simulate


def random_dag(n, seed):
    """Tasks in topological order; each streams N tokens (converters buffer all N), edges carry min(N_u, N_v)."""
    rng = random.Random(seed)
    tasks, count = [], []
    for i in range(n):
        tokens = rng.choice([4, 8, 16, 32])
        ii, lat = rng.randint(1, 4), rng.randint(1, 20)
        if i and rng.random() < 0.15:
            tasks.append(Task(f"t{i}", 2 * tokens, ii, lat, fill=tokens, drain=tokens))
        else:
            tasks.append(Task(f"t{i}", tokens, ii, lat))
        count.append(tokens)
    edges, seen = [], set()
    for v in range(1, n):
        if rng.random() < 0.05:
            continue
        for lo, p in ((4, 1.0), (8, 0.4), (20, 0.2)):
            u = rng.randint(max(0, v - lo), v - 1)
            if rng.random() < p and (u, v) not in seen:
                seen.add((u, v))
                edges.append(Edge(f"e{len(edges)}", f"t{u}", f"t{v}", min(count[u], count[v])))
    return tasks, edges


def reconvergent(edges):
    """Edges u -> v with another path from u to v (a bypass)."""
    succ = {}
    for e in edges:
        succ.setdefault(e.src, set()).add(e.dst)

    def reach(a, b, skip):
        stack, seen = [a], set()
        while stack:
            x = stack.pop()
            for y in succ.get(x, ()):
                if (x, y) == skip or y in seen:
                    continue
                if y == b:
                    return True
                seen.add(y)
                stack.append(y)
        return False

    return [e for e in edges if reach(e.src, e.dst, (e.src, e.dst))]


SEEDS = [(30, 1), (45, 2), (60, 3)]


@pytest.mark.parametrize("n,seed", SEEDS)
def test_sized_depths_give_zero_back_pressure(n, seed):
    tasks, edges = random_dag(n, seed)
    assert reconvergent(edges), "the graph should have bypass edges"
    sz = size_fifos(tasks, edges)
    res = simulate(tasks, edges, sz.depths, sz.starts)
    assert all(v == 0 for v in res.backpressure.values())
    assert all(res.peak[e] <= d for e, d in sz.depths.items())


@pytest.mark.parametrize("n,seed", SEEDS)
def test_one_less_on_a_bypass_is_too_few(n, seed):
    tasks, edges = random_dag(n, seed)
    sz = size_fifos(tasks, edges)
    for e in reconvergent(edges)[:3]:
        depths = dict(sz.depths, **{e.name: sz.depths[e.name] - 1})
        try:
            res = simulate(tasks, edges, depths, sz.starts)
        except DeadlockError:
            continue
        assert sum(res.backpressure.values()) > 0, e.name


def test_converter_bypass_minus_one_deadlocks():
    # a -> conv (buffers all 32 tokens) -> b and a -> b: the bypass holds every token while conv fills
    a, conv, b = Task("a", 32, 1, 3), Task("conv", 64, 1, 2, fill=32, drain=32), Task("b", 32, 2, 1)
    edges = [Edge("in", "a", "conv", 32), Edge("out", "conv", "b", 32), Edge("bypass", "a", "b", 32)]
    sz = size_fifos([a, conv, b], edges)
    assert sz.depths["bypass"] == 32
    assert sum(simulate([a, conv, b], edges, sz.depths, sz.starts).backpressure.values()) == 0
    with pytest.raises(DeadlockError, match="'bypass' \\(full at depth 31\\)"):
        simulate([a, conv, b], edges, dict(sz.depths, bypass=31), sz.starts)


def every_path_starts(tasks, edges):
    """The paper's LP: s_v - s_u >= the delay sum of P, for every path P from u to v (dense, small graphs)."""
    by = {t.name: t for t in tasks}
    idx = {t.name: i for i, t in enumerate(tasks)}
    n = len(tasks)
    out = [[] for _ in range(n)]
    for e in edges:
        out[idx[e.src]].append((idx[e.dst], e.delay(by[e.src], by[e.dst])))
    rows, rhs = [], []
    for u in range(n):
        stack = [(u, 0)]
        while stack:
            x, d = stack.pop()
            for v, dv in out[x]:
                row = np.zeros(n)
                row[u], row[v] = 1, -1
                rows.append(row)
                rhs.append(-(d + dv))
                stack.append((v, d + dv))
    c = np.zeros(n)
    for e in edges:
        c[idx[e.dst]] += 1
        c[idx[e.src]] -= 1
    res = linprog(c + 1e-6, A_ub=np.array(rows), b_ub=np.array(rhs, dtype=float), bounds=(0, None), method="highs")
    assert res.status == 0
    return {t.name: int(round(res.x[i])) for i, t in enumerate(tasks)}, len(rows)


@pytest.mark.parametrize("seed", [1, 2])
def test_per_edge_lp_equals_the_every_path_lp(seed):
    tasks, edges = random_dag(25, seed)
    want, paths = every_path_starts(tasks, edges)
    assert paths > 2 * len(edges)  # reconvergent: many more paths than edges
    assert start_offsets(tasks, edges) == want
