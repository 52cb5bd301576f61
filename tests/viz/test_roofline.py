"""Roofline plots of a design model and of an LLM model; ops counted from the kernel IR; no pyplot state."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from designs import chain_design, gemm, relu
from matplotlib.image import imread

import streamdsl as sd
from streamdsl import f32, viz
from streamdsl.boards import U55C
from streamdsl.perf.model import model_design

N = 8


@sd.kernel
def triangular(A: f32[N, N]) -> f32[N]:
    y: f32[N] = 0.0
    for i in range(N):
        acc: f32 = 0.0
        for j in range(i + 1):
            acc += A[i, j] * 2.0
        if acc > 1.0:
            y[i] = sd.exp(acc)
        else:
            y[i] = acc
    return y


def test_kernel_ops():
    assert viz.kernel_ops(gemm.ir) == 2 * 16**3  # one multiply and one add per (i, j, k)
    assert viz.kernel_ops(relu.ir) == 16 * 16  # one max per element
    # range(i + 1) counts at its largest (8 trips: the worst case), the if at its costlier branch (exp)
    assert viz.kernel_ops(triangular.ir) == N * (N * 2 + 1)


def roof_lines(ax) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {ln.get_label(): (np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float))
            for ln in ax.get_lines()}


def test_design_roofline(tmp_path):
    perf = model_design(chain_design(), "u55c")
    fig = viz.roofline_figure(perf)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert ax.get_xlabel() == "operational intensity (ops / byte of off-chip traffic)"
    assert ax.get_ylabel() == "attainable performance (GOP/s)"
    ops = 2 * 16**3 + 2 * 16 * 16  # gemm + two relus
    nbytes = 3 * 16 * 16 * 4  # x and w in, c out, f32
    assert perf.dma_bytes == nbytes
    assert ax.get_title().startswith("chain on u55c @ 250 MHz: ") and f"{ops:,} ops, {nbytes:,} B" in ax.get_title()
    lines = roof_lines(ax)
    x, y = lines["memory roof: HBM2 460 GB/s"]
    np.testing.assert_allclose(y / x, 460.0)  # GB/s x ops/B = GOP/s
    fp32 = U55C.fp32_peak_gflops()
    x, y = lines[f"compute roof: fp32 fabric peak {fp32:,.0f} GOP/s"]
    np.testing.assert_allclose(y, fp32)
    assert x[0] == pytest.approx(fp32 / 460.0)  # starts at the ridge
    x, y = lines["compute roof: INT8 peak 24,500 GOP/s"]
    np.testing.assert_allclose(y, 24500.0)
    x, y = lines["design"]
    assert x[0] == pytest.approx(ops / nbytes)
    assert y[0] == pytest.approx(ops / (perf.cycles / 250e6) / 1e9)
    assert fig._supxlabel.get_text().startswith("ops = arithmetic the kernels' IR executes")
    assert len(lines) == 4  # one memory roof, two compute roofs, the design
    p = viz.roofline_png(perf, tmp_path / "roof")
    img = imread(p)
    assert p.suffix == ".png" and img.shape == (600, 900, 4)
    assert img[..., :3].std() > 0.05  # not one colour


def test_llm_roofline():
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.perf import llm_perf

    p = llm_perf(tiny("gpt2"), prompt=4, gen=4, budget=2)
    fig = viz.roofline_figure(p)
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_xscale() == "log"
    ops, nbytes = p.ops_per_token(), sum(p.bytes_per_token().values())
    lines = roof_lines(ax)
    x, y = lines[f"decode: {p.tokens_per_s:,.1f} tokens/s"]
    assert x[0] == pytest.approx(ops / nbytes) and y[0] == pytest.approx(p.tokens_per_s * ops / 1e9)
    x, y = lines[f"HBM roofline (weights only): {p.hbm_roofline_tps:,.0f} tokens/s"]
    assert y[0] / x[0] == pytest.approx(460.0)  # on the memory roof
    assert y[0] == pytest.approx(p.hbm_roofline_tps * ops / 1e9)
    fp32 = next(v for k, v in lines.items() if k.startswith("compute roof: fp32"))
    np.testing.assert_allclose(fp32[1], p.fp32_roofline_tps * ops / 1e9)
    assert ax.get_title().startswith(f"tiny-gpt2 decode on u55c: {p.tokens_per_s:,.1f} tokens/s")


def test_errors():
    g = chain_design()
    with pytest.raises(viz.VizError, match="roofline_figure takes a performance model, got DataflowSchedule") as ei:
        viz.roofline_figure(g)
    assert "model_design" in ei.value.hint and ei.value.loc.file == __file__
    dead = dataclasses.replace(model_design(g, "u55c"), cycles=0, problems=["deadlock in the token simulator: ..."])
    with pytest.raises(viz.VizError, match="has no run time") as ei:
        viz.roofline_png(dead, "never.png")
    assert ei.value.loc.file == __file__
    assert not Path("never.png").exists()


def test_pictures_leave_pyplot_alone(tmp_path):
    """A notebook's pyplot state (its current figure, its backend) is untouched: pyplot is never imported."""
    script = tmp_path / "user.py"
    script.write_text(f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from designs import chain_design
from streamdsl import viz
from streamdsl.perf.model import model_design
g = chain_design()
figs = [viz.timeline_figure(g), viz.roofline_figure(model_design(g, "u55c"))]
viz.timeline_png(g, {str(tmp_path / 't')!r})
assert all(type(f.canvas).__name__ == "FigureCanvasAgg" for f in figs)
print("pyplot" if "matplotlib.pyplot" in sys.modules else "no pyplot")
""")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "no pyplot"
