"""The SLR partition against enumeration of every assignment, and the design model's lazy placement.

``partition_slrs`` orders SLRs that are copies of each other (symmetry
breaking) and ``feasible_assignment`` answers "does anything fit" without the
objective; both are checked here against trying all ``3 ** n`` assignments of
small random designs (pinned nodes and tight capacities included).
"""
import itertools
import random

import pytest

import streamdsl as sd
from streamdsl.perf import board, model_design, partition_slrs
from streamdsl.boards import RESOURCES
from streamdsl.perf.model import SLR_CROSSING_WEIGHT, feasible_assignment

N = 32


@sd.kernel
def double(X: sd.f32[N, N]) -> sd.f32[N, N]:
    Y: sd.f32[N, N] = 0.0
    for i in range(N):
        for j in range(N):
            Y[i, j] = X[i, j] * 2.0
    return Y


@sd.dataflow
def pipe(X: sd.f32[N, N]) -> sd.f32[N, N]:
    a = double(X)
    b = double(a)
    return b


def _objective(where, nodes, links, b):
    at = lambda n: b.memory_slr if n == "@memory" else where[n]  # noqa: E731
    total = sum(w for *_, w in links) or 1
    crossing = sum(w for u, v, w in links if at(u) != at(v))
    dsp = [sum(nodes[n]["dsp"] for n in nodes if where[n] == s) / max(1, b.slrs[s]["dsp"]) for s in range(len(b.slrs))]
    return SLR_CROSSING_WEIGHT * crossing / total + max(dsp), crossing


def _fits(where, nodes, b, util=1.0):
    return all(sum(nodes[n][r] for n in nodes if where[n] == s) <= util * b.slrs[s][r]
               for s in range(len(b.slrs)) for r in RESOURCES)


def _design(rng: random.Random, n: int, b, load: float):
    """n nodes with resources summing to about ``load`` of the board, a chain of streams and memory links."""
    nodes = {}
    for i in range(n):
        share = rng.random() * 2 * load / n
        nodes[f"n{i}"] = {r: int(share * b.total[r] * rng.uniform(0.5, 1.5)) if rng.random() < 0.8 else 0
                          for r in RESOURCES}
    names = list(nodes)
    links = [(names[i], names[i + 1], rng.randint(1, 1000)) for i in range(n - 1)]
    links += [("@memory", m, rng.randint(1, 3000)) for m in rng.sample(names, k=max(1, n // 3))]
    links += [(rng.choice(names), rng.choice(names), rng.randint(1, 500)) for _ in range(2)]
    return nodes, links


def _all_assignments(nodes, b, pinned):
    names = list(nodes)
    for combo in itertools.product(range(len(b.slrs)), repeat=len(names)):
        where = dict(zip(names, combo))
        if all(where[p] == s for p, s in pinned.items()):
            yield where


@pytest.mark.parametrize("seed", range(24))
def test_partition_is_the_best_of_every_assignment(seed):
    rng = random.Random(seed)
    b = board("u55c")
    nodes, links = _design(rng, rng.randint(3, 7), b, load=rng.choice([0.3, 0.7, 0.95, 1.2]))
    pinned = {"n0": rng.randrange(3)} if seed % 3 == 0 else {}
    fitting = [w for w in _all_assignments(nodes, b, pinned) if _fits(w, nodes, b)]
    status = {}
    got = partition_slrs(nodes, links, b, pinned=pinned, status=status)
    found = feasible_assignment(nodes, b, pinned=pinned)
    if not fitting:
        assert got is None and found is None
        return
    assert found is not None and _fits(found, nodes, b) and all(found[p] == s for p, s in pinned.items())
    where, crossing = got
    assert _fits(where, nodes, b) and all(where[p] == s for p, s in pinned.items())
    obj, want_crossing = _objective(where, nodes, links, b)
    assert crossing == want_crossing
    best = min(_objective(w, nodes, links, b)[0] for w in fitting)
    assert status["optimal"] and obj <= best * (1 + 1e-4) + 1e-9


def test_interchangeable_slrs_need_not_be_ordered_when_pinned():
    """A node pinned to SLR2 makes SLR1 and SLR2 different: the ordering must not push it to SLR1."""
    b = board("u55c")
    heavy = {"dsp": int(b.slrs[0]["dsp"] * 0.9), "bram": 0, "uram": 0, "lut": 10, "ff": 10}
    nodes = {"a": dict(heavy), "b": dict(heavy), "c": dict(heavy)}
    where, _ = partition_slrs(nodes, [("a", "b", 10), ("b", "c", 10)], b, pinned={"c": 2})
    assert where["c"] == 2 and sorted(where.values()) == [0, 1, 2]


def test_model_design_places_nodes_when_asked():
    g = sd.schedule(pipe)
    g.fuse(*g.tasks())
    g.size_fifos()
    p = model_design(g, "u55c")
    nodes = {n: v.resources for n, v in p.nodes.items()}
    where, crossing = partition_slrs(nodes, p.plan.links, p.board)
    assert {n: v.slr for n, v in p.nodes.items()} == where and p.crossing_bytes == crossing
    assert [sum(nodes[n][r] for n in nodes if where[n] == s) for s in range(3) for r in RESOURCES] == \
        [u[r] for u in p.slr_use for r in RESOURCES]
    assert p.total == {r: sum(u[r] for u in p.slr_use) for r in RESOURCES} and p.slr_optimal


def test_feasible_where_first_fit_decreasing_is_not(monkeypatch):
    """DSP shares of one SLR 63, 52, 51, 34, 32, 26, 19 %: first-fit decreasing strands one, the MILP packs them."""
    from streamdsl.perf import model

    b = board("u55c")
    cap = b.slrs[0]["dsp"]
    nodes = {f"n{i}": {"dsp": cap * s // 100, "bram": 0, "uram": 0, "lut": 0, "ff": 0}
             for i, s in enumerate([51, 32, 34, 63, 52, 26, 19])}
    asked = []
    milp = model._feasible_milp
    monkeypatch.setattr(model, "_feasible_milp", lambda *a: asked.append(a) or milp(*a))
    found = feasible_assignment(nodes, b)
    assert asked and found is not None and _fits(found, nodes, b)
    assert partition_slrs(nodes, [("n0", "n1", 1)], b) is not None
