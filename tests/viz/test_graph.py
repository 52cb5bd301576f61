"""The design graph picture: DOT source, SVG through graphviz, the .dot fallback, and its errors."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import traceback
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from designs import chain_design, llm_layer, mixed, mixed_design, relu

import streamdsl
from streamdsl import viz
from streamdsl.errors import StreamDSLError
from streamdsl.perf.model import model_design
from streamdsl.viz.graph import quote, stacked_loads

SVG = "{http://www.w3.org/2000/svg}"
PKG = str(Path(streamdsl.__file__).resolve().parent)


def svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def node_labels(dot: str) -> dict[str, str]:
    """Node name -> its label (DOT escapes undone) from graph_dot's one-node-per-line output."""
    out = {}
    for m in re.finditer(r'^\s+"([^"]+)" \[label="((?:[^"\\]|\\.)*)"(.*)\];$', dot, re.M):
        out[m.group(1)] = m.group(2).replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\") + m.group(3)
    return out


def bank_ranges(text: str) -> list[tuple[int, int]]:
    return [(int(a), int(b or a)) for a, b in re.findall(r"HBM\[(\d+)(?::(\d+))?\]", text)]


def test_svg_shows_every_node_fifo_depth_and_bank():
    g = mixed_design()
    low = g.lowered()
    svg = viz.graph_svg(g)
    texts = svg_texts(svg)
    joined = "\n".join(texts)
    for name in low.nodes:  # kernel tasks, the converter, the fork, every DMA
        assert name in texts, name
    for f in low.streams:
        d, src = g.depth(f.name)
        assert src == "sized"
        assert f"depth {d} (sized)" in joined
    assert "depth 16 (sized)" in texts and "depth 15 (sized)" in texts  # x and the converted a into relu_2
    for t in g.graph.tasks.values():
        assert f"kernel {t.kernel}" in texts
    # each DMA names its bank(s); within a region no two DMAs share a bank here (6 DMAs, 32 channels)
    dot = viz.graph_dot(g)
    labels = node_labels(dot)
    for region in {n.region for n in low.nodes.values()}:
        used: list[int] = []
        dmas = [n for n in low.nodes.values() if n.kind in ("load", "store") and n.region == region]
        for n in dmas:
            (lo, hi), = bank_ranges(labels[n.name])
            assert f"HBM[{lo}{'' if lo == hi else f':{hi}'}]" in joined
            assert 0 <= lo <= hi < 32
            used += range(lo, hi + 1)
        # rows of 16 f32 = 64-byte tokens, 57.5 bytes per channel-cycle: 2 channels would move a token a cycle,
        # but a channel each keeps the DMAs within their kernels' time (more would not pay): one bank each
        assert len(used) == len(set(used)) == len(dmas)
    assert "16 tokens of 16x1 f32" in joined  # relu_2's column stream, and its itensor in the edge's tooltip
    import html

    assert 'title="itensor<16x1xf32, [16,1]*[1,16], (d0,d1)->(d1,d0)> (16 tokens)"' in html.unescape(svg)


def test_shapes_and_clusters_distinguish_kinds():
    g = mixed_design()
    dot = viz.graph_dot(g)
    labels = node_labels(dot)
    assert 'shape="box"' in labels["relu_1"] and 'shape="hexagon"' in labels["cvt_a"]
    assert 'shape="diamond"' in labels["fork_a"] and 'shape="cylinder"' in labels["load_x"]
    assert labels["cvt_a"].startswith("cvt_a\nconverter, buffer 16x16xf32")
    # the figures are the cost model's (relu's 16 x 16 nest, pipelined by default, takes 16 cycles a column)
    m = re.match(r"relu_2\nkernel relu\n([\d,]+) cycles in 32 token steps ~(\d+) apart", labels["relu_2"])
    assert m and int(m[2]) == round(int(m[1].replace(",", "")) / 32)  # 16 tokens in, 16 out, evenly apart
    assert dot.count("subgraph \"cluster_region_") == 2
    assert re.search(r'"store_a" -> "load_a" \[label="a via DRAM", style="dashed"\]', dot)
    # the region clusters hold their own nodes
    body = dot.split('subgraph "cluster_region_1"')[1].split("}")[0]
    assert '"add"' in body and '"relu_1"' not in body


def test_labels_are_escaped_for_dot():
    tricky = 'a "quoted" name\\with backslash\nand a second line {x|y} <b>'
    assert quote(tricky) == '"a \\"quoted\\" name\\\\with backslash\\nand a second line {x|y} <b>"'
    svg = subprocess.run(["dot", "-Tsvg"], input=f"digraph {{ n [shape=box, label={quote(tricky)}]; }}",
                         capture_output=True, text=True, check=True).stdout
    texts = svg_texts(svg)
    assert 'a "quoted" name\\with backslash' in texts and "and a second line {x|y} <b>" in texts


def test_perf_labels_cycles_and_channels():
    g = chain_design()
    perf = model_design(g, "u55c")
    labels = node_labels(viz.graph_dot(g, perf))
    for t in g.graph.tasks:
        assert f"{perf.nodes[t].cycles} cycles" in labels[t]
    total = 0
    for d in perf.dmas:
        (lo, hi), = bank_ranges(labels[d.name])
        assert hi - lo + 1 == d.channels  # one bank per channel the model allocated
        assert f"{d.gbs:g} GB/s, {d.cycles} cycles" in labels[d.name]
        total += hi - lo + 1
    assert total == perf.channels_used
    assert viz.graph_dot(perf) == viz.graph_dot(g, perf)  # a DesignPerf draws its own design


def test_dataflow_function_is_scheduled_as_it_stands():
    texts = svg_texts(viz.graph_svg(mixed))
    assert {"relu_1", "relu_2", "add", "load_x", "store_c"} <= set(texts)
    assert "depth 2 (default)" in "\n".join(texts)  # nothing sized yet


def test_write_graph_svg(tmp_path):
    p = viz.write_graph(mixed_design(), tmp_path / "sub" / "design.png")
    assert p == tmp_path / "sub" / "design.svg" and p.is_file()
    assert "cvt_a" in svg_texts(p.read_text())


def test_without_graphviz_writes_dot_and_one_notice(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no `dot` anywhere on PATH
    assert shutil.which("dot") is None
    g = mixed_design()
    assert viz.graph_svg(g) is None
    p = viz.write_graph(g, tmp_path / "design")
    assert p == tmp_path / "design.dot"
    text = p.read_text()
    assert text.startswith('digraph "mixed" {')
    for name in g.graph.tasks:
        assert f'"{name}" [label="{name}\\nkernel ' in text
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n")
    assert err == f"graphviz `dot` not found: wrote {p}; install graphviz to get {tmp_path / 'design.svg'}\n"


def test_full_size_layer_is_complete():
    g = llm_layer()
    g.lowered()
    dot = viz.graph_dot(g)
    texts = svg_texts(viz.graph_svg(g))
    low = g.lowered()
    # 8 kernels: 2 layernorms, the fused QKV, attention (reading the K/V caches row by row and the new
    # row from its FIFO: no kv_append kernels), the output projection, the MLP and 2 residual adds
    assert len(g.graph.tasks) == 8
    for name in low.nodes:
        assert name in texts
    labels = node_labels(dot)
    # every DMA has its bank(s), in one region of 32; the layer as scheduled by default is compute-bound, so a
    # channel each keeps its DMAs within their kernels' time and no DMA is given more (they would not pay)
    (lo, hi), = bank_ranges(labels["load_w_fc"])
    assert 0 <= lo <= hi <= 31
    assert max(h for n in low.nodes.values() if n.dma for _, h in bank_ranges(labels[n.name])) == 31


def svg_width_px(svg: str) -> float:
    return float(ET.fromstring(svg).get("viewBox").split()[2]) * 4 / 3  # pt -> CSS px


def test_decode_layers_stay_a_screen_wide():
    """Attention takes five inputs (q, the new k and v rows, the K and V caches), so the rank above it holds two
    cache DMAs beside the forks and stores of the new rows; DMA labels are one short fact a line and a kernel's
    own loads go DMAS_A_ROW a row, so GPT-2's and Qwen2's layers fit 1,400 px as Llama's does (test_htmlreport)."""
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.models import model

    qwen = model(tiny("qwen2"), max_len=16).schedule(1)
    # Qwen2's QKV reads 3 weights and 3 biases: the biases are stacked a rank above the weights
    assert stacked_loads(qwen.lowered()) == [("load_bq", "load_wq"), ("load_bk", "load_wk"), ("load_bv", "load_wv")]
    assert '"load_bq" -> "load_wq" [style="invis"];' in viz.graph_dot(qwen)
    for g in (llm_layer(), qwen):
        for perf in (None, model_design(g, "u55c")):
            svg = viz.graph_svg(g, perf)
            assert svg_width_px(svg) <= 1400, (g.graph.ir.name, perf is not None, svg_width_px(svg))
            texts = svg_texts(svg)
            for n in g.lowered().nodes.values():  # nothing was dropped to make it fit
                assert n.name in texts
            for d in (perf.dmas if perf is not None else g.timing().dmas):
                node = g.lowered().nodes[d.name].dma
                assert f"{d.bytes} B, {node.words} bus words" in texts
                assert perf is None or f"{d.gbs:g} GB/s, {d.cycles} cycles" in texts


def user_frames(excinfo) -> list[str]:
    """The package's frames left in the traceback the caller sees, but for ``errors.user_facing``'s re-raise."""
    return [f.filename for f in traceback.extract_tb(excinfo.tb)
            if str(Path(f.filename).resolve()).startswith(PKG) and not f.filename.endswith("errors.py")]


@pytest.mark.parametrize("bad, what", [(relu, "a kernel"), (42, "int"), ("mixed", "str")])
def test_not_a_design_is_a_located_error(bad, what):
    with pytest.raises(viz.VizError) as ei:
        viz.graph_dot(bad)
    err = ei.value
    assert isinstance(err, StreamDSLError)
    assert err.message == f"graph_dot takes a dataflow design, got {what}"
    assert err.loc is not None and err.loc.file == __file__
    assert "sd.schedule(fn)" in err.hint
    assert user_frames(ei) == []  # no streamdsl frame reaches the user


def test_bad_perf_and_path_are_located_errors(tmp_path):
    g = mixed_design()
    with pytest.raises(viz.VizError, match="perf must be a DesignPerf, got str") as ei:
        viz.graph_svg(g, perf="u55c")
    assert ei.value.loc.file == __file__ and user_frames(ei) == []
    other = model_design(chain_design(), "u55c")
    with pytest.raises(viz.VizError, match="perf models another design") as ei:
        viz.graph_dot(g, other)
    assert "model_design(g, board)" in ei.value.hint
    with pytest.raises(viz.VizError, match="path must be a file name") as ei:
        viz.write_graph(g, 3)
    assert ei.value.loc.file == __file__ and user_frames(ei) == []


def test_uncaught_error_shows_only_the_users_frames(tmp_path):
    script = tmp_path / "user.py"
    script.write_text("import streamdsl as sd\nfrom streamdsl import viz\n\nsd.install_excepthook()\nviz.graph_dot(sd.f32)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert run.returncode == 1
    frames = re.findall(r'^  File "([^"]+)"', run.stderr, re.M)
    assert frames == [str(script)], run.stderr
    assert f"--> {script}:5:1" in run.stderr and "viz error: graph_dot takes a dataflow design" in run.stderr
