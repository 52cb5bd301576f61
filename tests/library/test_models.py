"""Whole models built from the library: the layer accelerator against transformers 5.24.0.

For each family a tiny transformers model (every parameter re-randomised,
eager attention; see test_hf_parity.py) is the truth.  The streamdsl model
(:mod:`streamdsl.library.llm.models`: one fused layer dataflow re-invoked per
layer, embedding and head as kernels) runs the prompt and then 4 decode
steps with its KV cache, on the reference simulator and through g++
C-simulation of the emitted HLS; logits must match to rtol 1e-4 (atol 1e-4
on logits of magnitude 45-80) with the same argmax at every step.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from test_hf_parity import build_hf, prompt

from streamdsl.dfg.dfschedule import Placement
from streamdsl.library.llm import models
from streamdsl.library.llm.config import FAMILIES, LLMError
from streamdsl.library.llm.weights import from_hf

RTOL, ATOL = 1e-4, 1e-4
PROMPT_LEN, DECODE_STEPS = 10, 4


def hf_steps(hf, ids, steps):
    """transformers' prefill logits, then the logits of ``steps`` greedy decode steps with its cache."""
    with torch.no_grad():
        out = hf(torch.tensor(ids)[None], use_cache=True)
        logits = [out.logits[0].numpy()]
        cache, token, tokens = out.past_key_values, int(out.logits[0, -1].argmax()), []
        for _ in range(steps):
            tokens.append(token)
            out = hf(torch.tensor([[token]]), cache=cache, use_cache=True)
            cache = out.past_key_values
            logits.append(out.logits[0, -1].numpy())
            token = int(out.logits[0, -1].argmax())
    return logits, tokens


@pytest.fixture(scope="module", params=FAMILIES)
def case(request):
    config, hf = build_hf(request.param)
    ids = prompt(config, length=PROMPT_LEN)
    want, tokens = hf_steps(hf, ids, DECODE_STEPS)
    return config, from_hf(hf), ids, want, tokens


def run(m, ids, tokens, mode):
    logits, cache = m.prefill(ids, mode=mode)
    got = [logits]
    for tok in tokens:
        lg, cache = m.decode(tok, cache, mode=mode)
        got.append(lg)
    return got, cache


def check(got, want):
    for step, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"step {step}")
        assert np.array_equal(np.argmax(g, axis=-1), np.argmax(w, axis=-1)), f"argmax differs at step {step}"


@pytest.mark.parametrize("mode", ["sim", "csim"])
def test_prefill_and_decode_match_transformers(case, mode):
    config, weights, ids, want, tokens = case
    m = models.model(config, max_len=PROMPT_LEN + DECODE_STEPS).load(weights)
    got, cache = run(m, ids, tokens, mode)
    check(got, want)
    assert cache.length == PROMPT_LEN + DECODE_STEPS


def test_decode_with_the_cache_equals_a_full_forward(case):
    config, weights, ids, _want, tokens = case
    m = models.model(config, max_len=PROMPT_LEN + DECODE_STEPS).load(weights)
    got, _ = run(m, ids, tokens, "sim")
    full, _ = m.prefill(np.concatenate([ids, tokens]))
    for step in range(1, DECODE_STEPS + 1):
        np.testing.assert_allclose(got[step], full[PROMPT_LEN + step - 1], rtol=RTOL, atol=ATOL)


def test_generate_is_greedy_and_matches_transformers(case):
    config, weights, ids, _want, tokens = case
    m = models.model(config, max_len=PROMPT_LEN + DECODE_STEPS + 1).load(weights)
    assert m.generate(ids, DECODE_STEPS) == tokens


def test_one_layer_is_one_fused_region_with_sized_fifos():
    config, _ = build_hf("llama")
    m = models.llama(config, max_len=16)
    g = m.schedule(1)
    assert len(g.regions()) == 1 and len(g.tasks()) == 10
    res = g.simulate()
    assert all(v == 0 for v in res.backpressure.values())
    text = str(g)
    assert "(sized)" in text and "attention_decode" in text
    # the caches go from their loads into attention (no task copies them to put the new rows in)
    low = g.lowered()
    (kc,) = [f for f in low.streams if f.src == "load_kc"]
    assert kc.dst.startswith("attention_decode") and not any(t.name.startswith("kv_append") for t in g.tasks())


def test_a_step_stores_only_its_new_rows_into_the_caches_in_place():
    config, hf = build_hf("llama")
    m = models.llama(config, max_len=16).load(from_hf(hf))
    g = m.schedule(1)
    assert g.placements() == {"kr": Placement(1, 16, "pos", into="kc"), "v": Placement(1, 16, "pos", into="vc")}
    row = config.kv_heads * config.head_dim * 4
    stores = {n.dma.tensor: n.dma.tensor_type.size * 4 for n in g.lowered().nodes.values() if n.kind == "store"}
    assert stores == {"y": config.hidden * 4, "kr": row, "v": row}  # the rows, not the 16-position caches
    src = g.build("hls").source
    # the store's own port (the host passes the cache's buffer: into="kc"), written at the clamped position
    assert "sd::word *kr, int32_t pos)" in src and "const int at = pos < 0" in src
    ids = prompt(config, length=5)
    _, cache = m.prefill(ids)
    before = [k.copy() for k in cache.keys]
    _, after = m.decode(3, cache, mode="csim")
    assert all(np.array_equal(k, b) for k, b in zip(cache.keys, before)), "the caller's cache is left as it was"
    for k, b in zip(after.keys, before):  # only row 5 changed: the rows C-simulation wrote back
        assert np.array_equal(np.delete(k, 5, axis=1), np.delete(b, 5, axis=1)) and np.any(k[:, 5] != 0)


def test_a_full_cache_is_a_located_error():
    config, hf = build_hf("llama")
    m = models.llama(config, max_len=4).load(from_hf(hf))
    with pytest.raises(LLMError) as err:
        m.prefill(np.arange(5))
    assert "do not fit the KV cache of 4 positions" in str(err.value)
    assert "test_models.py" in str(err.value)  # points at the user's call


def test_a_sliding_window_as_long_as_the_cache_is_the_full_kernel():
    """Gemma 3's sliding layers with a window of at least max_len positions attend to every cached position, as
    its full layers do: one decode kernel serves both (one explored layer, one weight layout), the sliding layers'
    outputs unchanged (transformers' greedy tokens); a shorter window keeps two kernels."""
    from streamdsl.library.llm.config import FULL, SLIDING, tiny
    from streamdsl.library.llm.numpy_model import NumpyModel
    from streamdsl.library.llm.weights import random_weights

    config = tiny("gemma3", sliding_window=16)
    w = random_weights(config, seed=3)
    m = models.gemma3(config, max_len=16).load(w)
    assert SLIDING in config.layer_types and m.kinds() == [FULL] and set(m.layer_kinds) == {FULL}
    ids = [5, 9, 2, 7]
    assert m.generate(ids, 6) == NumpyModel(config, w).generate(ids, 6)
    prj = m.build("hls", weights=False, prefill_len=1)
    assert [v.kind for v in prj.variants] == [FULL]
    assert set(models.gemma3(config, max_len=17).kinds()) == {FULL, SLIDING}  # position 16 falls out of a window
