"""Quantised whole models (W8A8, W4A8) on the layer accelerator.

The accelerator's quantised layer uses the bit-exact integer linears of
``quant.py``; the truth is the library's NumPy model of the same quantised
weights (tests/library/test_hf_parity.py ties that one to transformers), and
the fp32 model for accuracy.  Thresholds: W8A8 cosine >= 0.99 and top-1
agreement >= 95 % against fp32 on random prompts (the issue's numbers).
"""
from __future__ import annotations

import numpy as np
import pytest

from streamdsl.library.llm.config import FAMILIES, LLMError, tiny
from streamdsl.library.llm.models import model
from streamdsl.library.llm.numpy_model import NumpyModel
from streamdsl.library.llm.weights import quantize, random_weights

PROMPTS, LENGTH = 4, 10


def cosine(a, b):
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


@pytest.mark.parametrize("family", FAMILIES)
def test_w8a8_model_is_close_to_fp32_and_equals_the_quantised_reference(family):
    c = tiny(family)
    w = random_weights(c, seed=3)
    m = model(c, max_len=LENGTH + 2, quant="w8a8").load(w)  # quantised at load time
    fp32, q_ref = NumpyModel(c, w), NumpyModel(c, quantize(w, "w8a8"))
    rng = np.random.default_rng(0)
    cos, top1 = [], []
    for _ in range(PROMPTS):
        ids = rng.integers(0, c.vocab, LENGTH)
        got, cache = m.prefill(ids)
        np.testing.assert_allclose(got, q_ref.forward(ids), rtol=1e-4, atol=1e-4)
        want = fp32.forward(ids)
        cos += list(cosine(got, want))
        top1 += list(got.argmax(-1) == want.argmax(-1))
        nxt = int(got[-1].argmax())
        step, _ = m.decode(nxt, cache)
        np.testing.assert_allclose(step, q_ref.forward(np.append(ids, nxt))[-1], rtol=1e-4, atol=1e-4)
    assert min(cos) >= 0.99, min(cos)
    assert np.mean(top1) >= 0.95, np.mean(top1)


@pytest.mark.parametrize("family, scheme", [("llama", "w4a8"), ("gpt2", "w8a8")])
def test_quantised_layers_csim_like_the_simulator(family, scheme):
    c = tiny(family)
    m = model(c, max_len=8, quant=scheme).load(random_weights(c))
    ids = np.arange(5)
    sim, cache = m.prefill(ids)
    np.testing.assert_allclose(m.prefill(ids, mode="csim")[0], sim, rtol=1e-5, atol=1e-5)
    src = m.schedule(1).build().source
    assert "ap_int<4>" in src if scheme == "w4a8" else "int8_t" in src  # weights stay narrow in hardware


def test_weights_of_another_scheme_are_refused():
    c = tiny("llama")
    with pytest.raises(LLMError, match="computes w8a8 but the weights are w4a8"):
        model(c, quant="w8a8").load(quantize(random_weights(c), "w4a8"))
    with pytest.raises(LLMError, match="unknown quantisation"):
        model(c, quant="int3")
