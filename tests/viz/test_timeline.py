"""The timeline picture: busy/wait bars per task and FIFO occupancy curves of a token simulation."""
from __future__ import annotations


import numpy as np
import pytest
from designs import chain_design, llm_layer, mixed_design
from matplotlib.colors import to_rgb
from matplotlib.image import imread

from streamdsl import viz
from streamdsl.dfg.tokensim import Edge, Task, simulate
from streamdsl.perf.model import model_design
from streamdsl.viz.timeline import COLORS, MAX_POINTS, MAX_SPANS, merge_spans, step_points


def bars(ax) -> dict[str, np.ndarray]:
    """gid ("busy:task") -> the (start, width) of every rectangle drawn."""
    out = {}
    for c in ax.collections:
        if c.get_gid():
            out[c.get_gid()] = np.array([[p.vertices[:, 0].min(), np.ptp(p.vertices[:, 0])] for p in c.get_paths()])
    return out


def colours(img: np.ndarray) -> np.ndarray:
    """Every pixel's RGB as one integer 0xRRGGBB."""
    c = np.rint(img[..., :3] * 255).astype(np.int64).reshape(-1, 3)
    return c[:, 0] << 16 | c[:, 1] << 8 | c[:, 2]


def test_small_simulation_is_drawn_exactly():
    tasks = [Task("p", 6, 1, 1), Task("c", 6, 3, 1)]
    res = simulate(tasks, [Edge("e", "p", "c", 6)], {"e": 2}, trace=True)
    fig = viz.timeline_figure(res)
    ax, occ = fig.axes[:2]
    assert ax.get_xlabel() == occ.get_xlabel() == "cycle"
    fig.canvas.draw()
    for a in (ax, occ):  # both plots number their cycle axis (sharex had hidden the upper one's)
        assert [t.get_text() for t in a.get_xticklabels() if t.get_visible() and t.get_text()], a.get_ylabel()
    assert ax.get_ylabel().startswith("task") and occ.get_ylabel() == "FIFO occupancy (tokens)"
    assert ax.get_title() == "token simulation, 17 cycles"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["p", "c"]
    b = bars(ax)
    assert b["busy:p"].tolist() == [[0, 3], [4, 1], [7, 1], [10, 1]]  # the trace itself, nothing merged
    assert b["blocked:p"].tolist() == [[3, 1], [5, 2], [8, 2]] and b["busy:c"].tolist() == [[1, 16]]
    assert "starved:p" not in b
    line, = occ.get_lines()[:1]
    assert line.get_label() == "e (peak 2, depth 2)"
    assert line.get_drawstyle() == "steps-post"
    assert list(zip(line.get_xdata(), line.get_ydata())) == [(0, 0), (1, 1), (3, 2), (14, 1), (17, 0), (17, 0)]
    assert any(h.get_ydata()[0] == 2 and h.get_linestyle() == ":" for h in occ.get_lines()[1:])  # the depth


def test_design_timeline_png(tmp_path):
    g = chain_design(sized=False)  # depth-2 FIFOs: load_x and relu_1 wait on full FIFOs
    res = g.simulate()
    fig = viz.timeline_figure(g)
    ax, occ = fig.axes[:2]
    assert f"chain: token simulation, {res.cycles} cycles" in ax.get_title()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["relu_1", "gemm", "relu_2", "load_x (load)",
                                                             "load_w (load)", "store_c (store)"]
    b = bars(ax)
    assert b["busy:gemm"][:, 1].sum() == res.busy["gemm"]  # gemm never waits: one run
    assert b["blocked:load_x"][:, 1].sum() >= res.backpressure["load_x"] > 0  # merged spans only grow
    labels = [ln.get_label() for ln in occ.get_lines() if not ln.get_label().startswith("_")]
    assert labels[:2] == ["x (peak 2, depth 2)", "a (peak 2, depth 2)"]
    p = viz.timeline_png(g, tmp_path / "chain.svg")
    assert p == tmp_path / "chain.png"
    img = imread(p)
    w, h = fig.get_size_inches() * fig.dpi
    assert img.shape == (round(h), round(w), 4)
    packed = colours(img)
    assert len(np.unique(packed)) > 50
    for key in ("busy", "starved", "blocked"):  # each kind of bar is on the picture
        assert (packed == colours(np.array([[to_rgb(COLORS[key])]]))[0]).sum() > 100, key


def test_full_size_layer_and_perf_timing():
    g = llm_layer()
    fig = viz.timeline_figure(g)
    ax = fig.axes[0]
    assert len(ax.get_yticklabels()) == len(g.lowered().nodes) == 29  # 8 kernels, 3 forks, 15 loads, 3 stores
    perf = model_design(g, "u55c")
    fig = viz.timeline_figure(perf)
    ax, occ = fig.axes[:2]
    assert ax.get_title().startswith(f"gpt2_layer on u55c @ 250 MHz: token simulation, {perf.cycles} cycles")
    assert bars(ax)["busy:load_w_fc"][:, 1].sum() == perf.nodes["load_w_fc"].task.latency
    # the DRAM links are not FIFOs; attention reads kc/vc and the new k/v rows itself (no kc2/vc2 out of kv_append)
    assert occ.get_title().startswith("8 of 32 FIFOs")


def test_tens_of_thousands_of_tokens_stay_drawable(tmp_path):
    n, tokens = 10, 5000  # II 1, 2, 3 alternating through depth-2 FIFOs: a wait after nearly every iteration
    tasks = [Task(f"t{i}", tokens, 1 + i % 3, 3) for i in range(n)]
    edges = [Edge(f"e{i}", f"t{i}", f"t{i + 1}", tokens) for i in range(n - 1)]
    res = simulate(tasks, edges, {e.name: 2 for e in edges}, trace=True)
    assert sum(len(t.starved) + len(t.blocked) for t in res.trace.tasks.values()) > 30000
    fig = viz.timeline_figure(res)
    p = viz.timeline_png(res, tmp_path / "big")
    ax, occ = fig.axes[:2]
    assert "merged" in ax.get_title() and "max per bin" in occ.get_title()
    for spans in bars(ax).values():
        assert len(spans) <= MAX_SPANS + 1
    for ln in occ.get_lines():
        assert len(ln.get_xdata()) <= MAX_POINTS + 2
    curve = next(ln for ln in occ.get_lines() if ln.get_label().startswith("e0 "))
    assert curve.get_ydata().max() == res.peak["e0"] == 2  # peaks survive decimation
    assert imread(p).shape[2] == 4


def test_merge_and_decimate():
    spans = np.array([[0, 2], [3, 1], [10, 5], [16, 1]])
    assert merge_spans(spans, 1).tolist() == [[0, 4], [10, 7]]
    assert merge_spans(spans, 0.5).tolist() == spans.tolist()
    times = np.arange(0, 10000, 2)
    values = np.where(np.arange(len(times)) % 2 == 0, 3, 1)
    values[2500] = 9
    x, y, dec = step_points(times, values, 10000, 100)
    assert dec and len(x) <= 102 and y.max() == 9 and y.min() == 3  # every bin holds a 3; the 9 survives


def test_errors():
    res = simulate([Task("p", 2)], [], {})
    with pytest.raises(viz.VizError, match="has no trace") as ei:
        viz.timeline_figure(res)
    assert "trace=True" in ei.value.hint and ei.value.loc.file == __file__
    with pytest.raises(viz.VizError, match="timeline_png takes a dataflow design, got list") as ei:
        viz.timeline_png([1, 2], "x.png")
    assert ei.value.loc.file == __file__
    with pytest.raises(viz.VizError, match="path must be a file name"):
        viz.timeline_png(mixed_design(), None)
    g = chain_design(fused=False)
    perf = model_design(g, "u55c")
    g.fuse(*g.tasks())  # the model no longer describes g
    with pytest.raises(viz.VizError, match="the design changed after it was modeled") as ei:
        viz.timeline_figure(perf)
    assert "model_design(g, board)" in ei.value.hint and ei.value.loc.file == __file__
    with pytest.raises(viz.VizError, match="the design changed after it was modeled"):
        viz.graph_dot(g, perf)
