"""The dataflow examples: fused FFN, fused attention, residual block with an LP-sized bypass.

For each: the simulator against float64 NumPy, C-simulation of the emitted
HLS (threads, bounded FIFOs) against the simulator, the token simulator at
the sized depths (no back-pressure, as fast as unbounded FIFOs) and what
fusion saves.  C-sim calls libm's exp/tanh where NumPy uses its own, so
those compare to 2e-6 relative (1e-6 absolute where a sum cancels to near 0);
everything else is exact.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_examples import load

from streamdsl.dfg.tokensim import simulate


def unbounded_cycles(g) -> int:
    low = g.lowered()
    return simulate(g.timing().task_list, g.timing().edges, {f.name: None for f in low.fifos}).cycles


@pytest.mark.parametrize("name, fn", [("ffn_dataflow", "ffn"), ("attention_dataflow", "attention")])
def test_fused_example(name, fn):
    ex = load(name)
    args = ex.inputs()
    sim = getattr(ex, fn)(*args)
    np.testing.assert_allclose(sim, ex.reference(*args), rtol=1e-5, atol=1e-5)
    g = ex.design(fused=True)
    assert g.regions() == [[t.name for t in g.tasks()]]
    np.testing.assert_allclose(g.build().csim(*args), sim, rtol=2e-6, atol=1e-6)
    res = g.simulate()
    assert all(v == 0 for v in res.backpressure.values())
    assert res.cycles == unbounded_cycles(g)
    unfused = ex.design(fused=False)
    assert res.cycles < unfused.simulate().cycles  # streaming overlaps the kernels; DRAM does not
    streamed, whole = g.intermediate_bytes()
    assert 0 < streamed < whole / 10
    assert unfused.intermediate_bytes() == (0, 0)  # nothing passes on chip when every task is alone


def test_residual_bypass_is_sized_by_the_lp():
    ex = load("residual_dataflow")
    args = ex.inputs()
    sim = ex.residual(*args)
    np.testing.assert_allclose(sim, ex.reference(*args), rtol=1e-5, atol=1e-5)
    g = ex.design()
    name = ex.bypass_fifo(g)
    depth, src = g.depth(name)
    assert src == "sized" and depth > 2  # deeper than the default: the add waits for the long path
    why = g.explain_fifo(g.edge("x"), consumer=g.task(ex.add.ir.name))
    assert f"-> {ex.proj.ir.name} -> {ex.add.ir.name}" in why
    res = g.simulate()
    assert all(v == 0 for v in res.backpressure.values()) and res.cycles == unbounded_cycles(g)
    np.testing.assert_array_equal(g.build().csim(*args), sim)
    g.fifo(g.edge("x"), depth=depth - 1, consumer=g.task(ex.add.ir.name))
    less = g.simulate()
    assert less.backpressure["load_x"] > 0  # one token less: the DMA waits on the full bypass


def test_custom_mlp_in_a_llama_verifies_on_the_simulator_and_in_csim():
    ex = load("custom_mlp_llama")
    m = ex.build()
    assert "call my_mlp(n2, wg, wu, wd)" in str(m.layer(1).function)
    from streamdsl.library.llm.numpy_model import NumpyModel

    reference = NumpyModel(ex.config, ex.weights).forward
    prompt = np.arange(6)
    for mode in ("sim", "csim"):
        assert m.verify(reference, prompt, decode_steps=2, mode=mode).steps == 3


def test_a_block_with_another_interface_is_refused_where_it_is_swapped_in():
    from streamdsl.library.llm.config import LLMError
    from streamdsl.library.llm.models import llama

    ex = load("custom_mlp_llama")
    wrong = ex.make_my_mlp(ex.config.replace(intermediate=64), 1, 16)
    with pytest.raises(LLMError) as err:
        llama(ex.config, blocks={"mlp": wrong})
    text = str(err.value)
    assert "cannot replace block 'mlp'" in text and "f32[64, 64]" in text
    assert "test_dataflow_examples.py" in text  # at the user's line
    with pytest.raises(LLMError, match="has no block 'mpl'"):
        llama(ex.config, blocks={"mpl": wrong})


def test_a_wrong_reference_fails_verification():
    from streamdsl.library.llm.config import LLMError

    ex = load("custom_mlp_llama")
    m = ex.build()
    with pytest.raises(LLMError, match="differ from the reference"):
        m.verify(lambda ids: np.zeros((len(ids), ex.config.vocab), np.float32), np.arange(4), decode_steps=0)


def test_custom_mlp_script_runs(capsys, monkeypatch):
    import runpy
    import sys

    from test_examples import EXAMPLES

    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / "custom_mlp_llama.py")])
    runpy.run_path(str(EXAMPLES / "custom_mlp_llama.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "verified 3 step(s) (prefill + 2 decode) on sim" in out
    assert "verified 3 step(s) (prefill + 2 decode) on csim" in out
