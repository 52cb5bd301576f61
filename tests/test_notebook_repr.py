"""``_repr_html_`` of the objects a notebook shows: escaped printed forms, and pictures of dataflows."""
import shutil

import pytest

import streamdsl as sd
from streamdsl import f32
from streamdsl.htmlreport import perf_html
from streamdsl.perf.model import model_design


def make_kernels(n: int):
    @sd.kernel
    def scale(X: f32[n, n]) -> f32[n, n]:
        Y: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            Y[i, j] = X[i, j] * 2.0 if X[i, j] < 1.0 else X[i, j]  # a '<' the HTML must escape
        return Y

    @sd.kernel
    def add(X: f32[n, n], Z: f32[n, n]) -> f32[n, n]:
        Y: f32[n, n] = 0.0
        for i, j in sd.grid(n, n):
            Y[i, j] = X[i, j] + Z[i, j]
        return Y

    return scale, add


scale, add = make_kernels(8)


@sd.dataflow
def twice(x: f32[8, 8], z: f32[8, 8]) -> f32[8, 8]:
    h = scale(x)
    y = add(h, z)
    return y


@pytest.fixture
def design():
    g = sd.schedule(twice)
    g.fuse(*g.tasks())
    g.size_fifos()
    return g


def test_kernel_shows_its_escaped_ir():
    h = scale._repr_html_()
    assert "<pre>" in h and "kernel scale(" in h
    assert "&lt; 1.0" in h and "< 1.0" not in h
    assert "&lt;kernel scale(X: f32[8, 8]) -&gt; (f32[8, 8])&gt;" in h  # the repr, escaped


def test_a_kernel_that_does_not_compile_shows_its_error():
    @sd.kernel  # a name not defined yet is looked up at the first use: this one never will be
    def bad(X: f32[4]) -> f32[4]:
        Y: f32[4] = 0.0
        for i in range(4):
            Y[i] = X[i] * NEVER_DEFINED  # noqa: F821
        return Y

    h = bad._repr_html_()
    assert "does not compile" in h and "error" in h and "<pre>" in h


def test_schedule_and_trace_show_ir_and_python():
    s = sd.schedule(scale)
    s.pipeline(s.loop("j"))
    h = s._repr_html_()
    assert "&lt;Schedule of scale: 1 step(s)&gt;" in h and "kernel scale(" in h
    assert "s.pipeline(s.loop(&quot;j&quot;), ii=1)" in h
    t = s.trace._repr_html_()
    assert t.startswith("<pre>") and "s = sd.schedule(scale)" in t and "&quot;j&quot;" in t


def test_dataflow_schedule_draws_its_graph(design):
    h = design._repr_html_()
    assert "<svg" in h and "<?xml" not in h and "<!DOCTYPE" not in h
    assert "scale" in h and "add" in h
    assert "&lt;DataflowSchedule of twice: 2 task(s), 1 region(s)&gt;" in h
    assert "FIFO" in h or "fifo" in h  # print(g) below the picture


def test_dataflow_function_draws_its_graph():
    h = twice._repr_html_()
    assert "<svg" in h and "&lt;dataflow twice(" in h and "kernel twice(" in h


def test_dataflow_graph_prints_its_tasks():
    h = twice.graph._repr_html_()
    assert h.startswith("<pre>") and "scale: h = scale(x)" in h and "-&gt;" in h


def test_without_graphviz_the_text_is_shown(design, monkeypatch):
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "dot" else real(name, *a, **k))
    h = design._repr_html_()
    assert "<svg" not in h and "<details open>" in h and "dataflow twice(" in h


def test_perf_html_of_a_design(design):
    p = model_design(design, "u55c")
    h = perf_html(p)
    assert "design twice on u55c" in h and "SLR2" in h and "scale" in h and "<table>" in h
    assert "<script" not in h
    assert "full report (text)" in h and "resources per SLR" in h


def test_perf_html_of_anything_else_is_its_escaped_repr():
    assert perf_html(3) == "<pre>3</pre>"
    assert perf_html("<b>") == "<pre>&#x27;&lt;b&gt;&#x27;</pre>"


def test_perf_objects_render_in_notebooks(design):
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.perf import W4A8, llm_perf
    from streamdsl.explorer import explore

    p = model_design(design, "u55c")
    assert p._repr_html_() == perf_html(p)
    ex = explore(design, "u55c", fusion=False)
    assert ex._repr_html_() == perf_html(ex)
    lp = llm_perf(tiny("llama"), "u55c", prompt=4, gen=2, bits=W4A8)
    assert lp._repr_html_() == perf_html(lp) and "tokens/s" in lp._repr_html_()
