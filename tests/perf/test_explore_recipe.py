"""The explorer's kernel recipe, against hand-made expectations: a short inner loop unrolls inside its parent's
pipeline, and a dimension two nests vectorise keeps the partition both need."""
from __future__ import annotations

import streamdsl as sd
from streamdsl import f32
from streamdsl.perf.explore import _partitions, pipeline_innermost, unroll_parallel
from streamdsl.schedule.cost import estimate
from tests.schedule.test_cost_model import rowdots  # 32 rows, each a dot of 16


@sd.kernel
def two_nests(X: f32[1, 256]) -> f32[1, 256]:
    Y: f32[1, 256]
    m: f32 = 0.0
    for k in range(256):
        m = max(m, X[0, k])
    for k2 in range(256):
        Y[0, k2] = X[0, k2] - m
    return Y


def test_a_short_inner_loop_unrolls_in_its_parents_pipeline():
    s = sd.schedule(rowdots)
    pipeline_innermost(s)
    assert "pipeline" in s.ir.body[1].attrs  # for j, not for e
    assert _partitions(s.ir, "A") == ((2, "cyclic", 16),) and _partitions(s.ir, "B") == ((1, "cyclic", 16),)
    lp = next(x for x in estimate(s.ir).loops if x.var == "j")
    assert lp.ii == 1 and lp.cycles < 32 + 16 * 4 + 16  # a row a cycle, the 16-add chain once


def test_a_dimension_keeps_the_finer_partition():
    s = sd.schedule(two_nests)
    pipeline_innermost(s)
    unroll_parallel(s, 64)
    # the max nest takes 256 lanes (a float max: rfactor lanes), the subtract nest 64 after it; X keeps 256
    # (the later nest's 64 divides it), so the first nest is not port-bound by the second's partition
    assert [p[2] for p in _partitions(s.ir, "X") if p[0] == 2] == [256]
    assert all(x.ii == 1 for x in estimate(s.ir).loops if x.ii is not None)
