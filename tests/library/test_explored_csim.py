"""The explorer's one-token layer as it would be built: C-simulation equals the simulator.

The explored design streams each linear's weight in the order its pipeline reads it (a one-token window per
task) and reads the layer's weights and vectors with one DMA process in the order the kernels need them;
the tiny W4A8 layers of a gated (Llama) and a plain (GPT-2) family check that the emitted C++ computes the
same bits as the reference simulator and runs without deadlocking.
"""
from __future__ import annotations

import numpy as np
import pytest

import streamdsl as sd
from streamdsl.backend.sim import simulate
from streamdsl.ir.nodes import CallKernel, Ref, Return, Var
from streamdsl.library.llm.config import tiny
from streamdsl.library.llm.models import model
from streamdsl.types import IntType


def _args(fn, rng):
    out = []
    for p in fn.ir.params:
        t = p.type
        if not isinstance(t, sd.TensorType):
            out.append(2 if p.name == "pos" else 3)  # the new token at position 2 of a cache holding 3 rows
        elif isinstance(t.dtype, IntType):
            out.append(rng.integers(-7, 8, t.shape).astype(np.int8))
        else:
            out.append(rng.standard_normal(t.shape).astype(np.float32) * 0.5)
    return out


def scheduled(g, args):
    """The dataflow with every task's kernel as scheduled, on the reference simulator (the explorer's rfactor
    reassociates float sums, so the unscheduled kernels give other roundings)."""
    ir = g.graph.ir
    env = {p.name: a for p, a in zip(ir.params, args)}
    tasks = iter(g.graph.tasks)
    for s in ir.body:
        if isinstance(s, CallKernel):
            out = simulate(g.kernel_ir(next(tasks)), *[env[a.name] if isinstance(a, (Ref, Var)) else a.value
                                                       for a in s.args])
            env.update(zip(s.outs, out if len(s.outs) != 1 else (out,)))
        elif isinstance(s, Return):
            return tuple(env[v.name] for v in s.values)


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_the_explored_decode_layer_csims_like_the_simulator(family):
    m = model(tiny(family), max_len=8, quant="w4a8")
    ex = sd.explore(m, "u55c", t=1)
    g = ex.best.schedule
    assert g.placements() == m.schedule(1).placements() != {}  # the new K/V rows still go into the caches
    assert any(t.startswith("attention") for t in ex.config.split)  # its dot products split into partial sums
    low = g.lowered()
    assert low.bundles and any(n.tables.windows for n in low.of_kind("task"))  # streamed and bundled as modeled
    _csims_like_the_simulator(m, g)


def test_a_cache_read_over_one_port_into_several_fifos_csims_like_the_simulator():
    # heads of 32 values: a cache row is two beats, which attention's pipelines take a row an iteration from
    # two FIFOs the cache's one port fills in turn
    m = model(tiny("gpt2", heads=2, kv_heads=2, head_dim=32), max_len=8, quant="w4a8")
    g = sd.explore(m, "u55c", t=1).best.schedule
    plan = g.timing().plan
    assert plan.ports["kc"] == plan.ports["vc"] == 1
    assert plan.dma_lanes["load_kc"] > 1 and plan.dma_lanes["load_vc"] > 1
    task = next(n for n in g.lowered().of_kind("task") if n.name.startswith("attention"))
    assert {"Kc", "Vc"} <= task.tables.piped  # a row (or rows) an iteration of a pipeline
    _csims_like_the_simulator(m, g)


def _csims_like_the_simulator(m, g):
    fn = m.layer(1).function
    args = _args(fn, np.random.default_rng(5))
    want = scheduled(g, args)
    got = g.build().csim(*args)
    for w, c in zip(want, got):
        np.testing.assert_array_equal(c, w)
    for w, c in zip(fn(*args), got):  # and the unscheduled layer, but for reassociated float sums
        np.testing.assert_allclose(c, w, rtol=1e-4, atol=1e-3)
