"""``g.store_at``: a result stored in place into rows of a larger array (a KV cache's new rows).

The function's value is the rows; the emitted top function's port is the whole array and the store DMA
writes the rows at the offset parameter, clamped to the array.  C-simulation gives the store a zeroed
array, reads the rows back and fails if anything else of it was written.
"""
import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i32
from streamdsl.backend.hls.project import CSimError
from streamdsl.dfg.dfschedule import Placement
from streamdsl.errors import ScheduleError

H, S, D, T = 2, 8, 4, 2


@sd.kernel
def scale(X: f32[H, T, D]) -> f32[H, T, D]:
    Y: f32[H, T, D]
    for h, i, e in sd.grid(H, T, D):
        Y[h, i, e] = X[h, i, e] * 2.0
    return Y


@sd.kernel
def total(C: f32[H, S, D], Y: f32[H, T, D]) -> f32[H, D]:
    Z: f32[H, D]
    for h, e in sd.grid(H, D):
        Z[h, e] = 0.0
    for h, j, e in sd.grid(H, S, D):
        Z[h, e] += C[h, j, e]
    for h, i, e in sd.grid(H, T, D):
        Z[h, e] += Y[h, i, e]
    return Z


@sd.dataflow
def rows(C: f32[H, S, D], X: f32[H, T, D], pos: i32, scale_by: f32) -> (f32[H, T, D], f32[H, D]):
    y = scale(X)
    z = total(C, y)
    return y, z


def design():
    g = sd.schedule(rows)
    g.store_at(g.edge("y"), "pos", axis=1, extent=S)
    g.fuse(*g.tasks())
    return g


def test_the_rows_land_at_the_clamped_offset_and_nothing_else_is_written():
    g = design()
    prj = g.build("hls")
    src = prj.source
    assert "sd::word *y, int32_t pos)" in src  # the store's port is the whole array's words, with the offset
    assert "const int at = pos < 0 ? 0 : (pos > 6 ? 6 : pos);" in src
    assert "//   in DRAM: 4 x 512-bit words: 4 tile(s) of itensor<2x2x4xf32" in src  # the array as 8 rows of tiles
    rng = np.random.default_rng(0)
    C = rng.standard_normal((H, S, D)).astype(np.float32)
    X = rng.standard_normal((H, T, D)).astype(np.float32)
    for pos in (0, 3, 6, 7, -2):  # 7 and -2 are clamped, as the store clamps them
        y, z = prj.csim(C, X, np.int32(pos), np.float32(1.0))
        want_y, want_z = rows(C, X, np.int32(pos), np.float32(1.0))
        np.testing.assert_array_equal(y, want_y)
        np.testing.assert_array_equal(z, want_z)


def test_a_write_outside_the_rows_fails_the_csim():
    prj = design().build("hls")
    place = Placement(1, S, "pos")
    full = np.zeros((H, S, D), np.float32)
    full[:, 3:5] = 1.0
    args = (None, None, np.int32(3), None)
    before = np.zeros_like(full)
    np.testing.assert_array_equal(prj._rows(0, place, full, before, rows.graph.ir.results[0], args), np.ones((H, T, D)))
    full[1, 7, 0] = 5.0
    with pytest.raises(CSimError, match="outside rows 3..4"):
        prj._rows(0, place, full, before, rows.graph.ir.results[0], args)


def test_print_trace_and_timing_show_the_rows_only():
    g = design()
    assert "output (DMA, at pos of 8 along axis 1)" in str(g)
    assert 'g.store_at(g.edge("y"), \'pos\', axis=1, extent=8)' in g.trace
    store = next(d for d in g.lowered().nodes.values() if d.kind == "store" and d.dma.tensor == "y")
    assert store.dma.tensor_type.shape == (H, T, D)  # the DMA moves the rows, not the array


def test_store_at_refusals():
    g = sd.schedule(rows)
    with pytest.raises(ScheduleError, match="not a result"):
        g.store_at(g.edge("C"), "pos", axis=1, extent=S)
    with pytest.raises(ScheduleError, match="axis must be"):
        g.store_at(g.edge("y"), "pos", axis=3, extent=S)
    with pytest.raises(ScheduleError, match="extent must be"):
        g.store_at(g.edge("y"), "pos", axis=1, extent=1)
    with pytest.raises(ScheduleError, match="integer scalar parameter") as err:
        g.store_at(g.edge("y"), "scale_by", axis=1, extent=S)
    assert "pos" in err.value.hint
    with pytest.raises(ScheduleError, match="edge handles"):
        g.store_at("y", "pos", axis=1, extent=S)
    assert g.placements() == {}  # nothing was recorded by the refused calls
    g.store_at(g.edge("y"), "pos", axis=1, extent=S)
    with pytest.raises(ScheduleError, match="already stored"):
        g.store_at(g.edge("y"), "pos", axis=1, extent=S)
