"""The NumPy model against transformers 5.24.0, family by family, on tiny random models.

Golden data is made here: each family's transformers model is built from
``tiny(family)`` with eager attention, *every* parameter re-randomised (the
default init leaves biases 0 and norm weights 1, which would hide a missing
bias or a ``w`` vs ``1 + w``), and run in float32.

Measured on these models: prefill and decode logits agree to <= 2e-5 absolute
on logits of magnitude 45-80 (asserted: rtol 1e-4, atol 1e-4), cached keys and
values to <= 2e-6.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers

from streamdsl.library.llm.config import FAMILIES, LLMError, tiny, to_hf
from streamdsl.library.llm.numpy_model import KVCache, NumpyModel, linear
from streamdsl.library.llm.ref import quantize_rows
from streamdsl.library.llm.weights import QuantLinear, from_hf, load_state_dict, quantize, quantize_matrix

RTOL, ATOL = 1e-4, 1e-4
PROMPT_LEN, DECODE_STEPS = 10, 4  # Gemma's tiny window is 4, so its sliding layers drop tokens


def rerandomize(model: torch.nn.Module, family: str, seed: int) -> None:
    """Give every parameter random values at scales that keep activations O(1).

    Norm weights around 1 (Gemma: around 0, since it multiplies by 1 + w),
    biases N(0, 0.1), embeddings N(0, 1) so logits are peaked, matrices
    N(0, 1/fan_in) (GPT-2's Conv1D is [in, out]).
    """
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim == 1 and ("norm" in name or "ln_" in name) and name.endswith("weight"):
                p.copy_((0.0 if family == "gemma3" else 1.0) + 0.3 * torch.randn(p.shape, generator=g))
            elif p.ndim == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif any(e in name for e in ("wte", "wpe", "embed")):
                p.copy_(torch.randn(p.shape, generator=g))
            else:
                fan_in = p.shape[0] if family == "gpt2" else p.shape[1]
                p.copy_(torch.randn(p.shape, generator=g) / fan_in ** 0.5)


def build_hf(family: str, seed: int = 0, **changes):
    config = tiny(family, **changes)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(to_hf(config), attn_implementation="eager").eval()
    rerandomize(model, family, seed)
    return config, model


@pytest.fixture(scope="module", params=FAMILIES)
def pair(request):
    config, hf = build_hf(request.param)
    return request.param, config, hf, NumpyModel(config, from_hf(hf))


def prompt(config, seed: int = 0, length: int = PROMPT_LEN) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, config.vocab, length)


def test_every_parameter_was_randomised(pair):
    family, _, hf, _ = pair
    for name, p in hf.named_parameters():
        assert not torch.all(p == p.flatten()[0]), f"{family}: {name} is constant"


def test_prefill_and_decode_match_transformers(pair):
    family, config, hf, model = pair
    ids = prompt(config)
    with torch.no_grad():
        out = hf(torch.tensor(ids)[None], use_cache=True)
    ref = out.logits[0].numpy()
    logits, cache = model.prefill(ids)
    np.testing.assert_allclose(logits, ref, rtol=RTOL, atol=ATOL)
    assert (logits.argmax(-1) == ref.argmax(-1)).all()

    hf_cache, token = out.past_key_values, int(ref[-1].argmax())
    for step in range(DECODE_STEPS):
        with torch.no_grad():
            out = hf(torch.tensor([[token]]), cache=hf_cache, use_cache=True)
        hf_cache, ref = out.past_key_values, out.logits[0, -1].numpy()
        logits, cache = model.decode(token, cache)
        np.testing.assert_allclose(logits, ref, rtol=RTOL, atol=ATOL, err_msg=f"{family} decode step {step}")
        assert int(logits.argmax()) == int(ref.argmax())
        # The cache holds what DynamicCache holds: keys after RoPE (and k_norm), values raw, [kv_heads, S, D].
        assert cache.length == PROMPT_LEN + step + 1
        for i, layer in enumerate(hf_cache.layers):
            np.testing.assert_allclose(cache.keys[i], layer.keys[0].numpy(), rtol=RTOL, atol=1e-5)
            np.testing.assert_allclose(cache.values[i], layer.values[0].numpy(), rtol=RTOL, atol=1e-5)
        token = int(ref.argmax())


@pytest.mark.parametrize("family,changes", [
    ("llama", dict(qkv_bias=True, o_bias=True, mlp_bias=True)),  # attention_bias / mlp_bias Llama variants
    ("llama", dict(rope_scaling=None, kv_heads=1)),  # SmolLM2-style plain RoPE, MQA
    ("gpt2", dict(tied_embeddings=False)),  # an untied head is read from lm_head.weight
])
def test_variants_match_transformers(family, changes):
    config, hf = build_hf(family, seed=5, **changes)
    if not config.tied_embeddings:
        with torch.no_grad():
            hf.lm_head.weight.copy_(torch.randn(hf.lm_head.weight.shape))
    model = NumpyModel(config, from_hf(hf))
    assert model.weights.tied == config.tied_embeddings
    ids = prompt(config, seed=5)
    with torch.no_grad():
        ref = hf(torch.tensor(ids)[None]).logits[0].numpy()
    np.testing.assert_allclose(model.forward(ids), ref, rtol=RTOL, atol=ATOL)
    loaded = load_state_dict(hf.state_dict(), config)
    np.testing.assert_array_equal(loaded.lm_head, model.weights.lm_head)


def test_gemma_sliding_layers_keep_window_minus_one_tokens():
    config, hf = build_hf("gemma3")
    model = NumpyModel(config, from_hf(hf))
    _, cache = model.prefill(prompt(config))
    kept = [k.shape for k in cache.keys]
    w = config.sliding_window
    assert kept == [(1, w - 1, 32), (1, w - 1, 32), (1, PROMPT_LEN, 32)], kept  # layers L L G


def test_gemma_window_matters():
    """The window is shorter than the prompt, so a wider window must change the logits (and transformers agrees)."""
    config, hf = build_hf("gemma3")
    wide_config, wide_hf = build_hf("gemma3", sliding_window=64)
    ids = prompt(config)
    narrow, wide = NumpyModel(config, from_hf(hf)).forward(ids), NumpyModel(wide_config, from_hf(wide_hf)).forward(ids)
    assert np.abs(narrow[:config.sliding_window] - wide[:config.sliding_window]).max() < 1e-4  # not reached yet
    assert np.abs(narrow[-1] - wide[-1]).max() > 1e-1
    with torch.no_grad():
        np.testing.assert_allclose(wide, wide_hf(torch.tensor(ids)[None]).logits[0].numpy(), rtol=RTOL, atol=ATOL)


def test_decode_with_cache_equals_full_forward(pair):
    family, config, _, model = pair
    ids = prompt(config, seed=3, length=PROMPT_LEN + DECODE_STEPS)
    full = model.forward(ids)
    logits, cache = model.prefill(ids[:PROMPT_LEN])
    rows = [logits[-1]]
    for t in ids[PROMPT_LEN:]:
        step, cache = model.decode(int(t), cache)
        rows.append(step)
    np.testing.assert_allclose(np.stack(rows), full[PROMPT_LEN - 1:], rtol=RTOL, atol=ATOL)
    # Chunked prefill (two chunks) gives the same logits as one.
    first, cache = model.prefill(ids[:6])
    second, _ = model.prefill(ids[6:], cache)
    np.testing.assert_allclose(np.concatenate([first, second]), full, rtol=RTOL, atol=ATOL)


def test_decode_leaves_the_old_cache_unchanged(pair):
    _, config, _, model = pair
    _, cache = model.prefill(prompt(config))
    before = [k.copy() for k in cache.keys]
    a, _ = model.decode(5, cache)
    b, _ = model.decode(5, cache)
    np.testing.assert_array_equal(a, b)
    assert all(np.array_equal(x, y) for x, y in zip(before, cache.keys))


def test_greedy_generate_matches_transformers(pair):
    family, config, hf, model = pair
    ids = prompt(config, seed=7, length=6)
    with torch.no_grad():
        ref = hf.generate(torch.tensor(ids)[None], max_new_tokens=8, do_sample=False, pad_token_id=0)
    assert model.generate(ids, 8) == ref[0, len(ids):].tolist()


def test_generate_stops_at_a_stop_token(pair):
    _, config, _, model = pair
    ids = prompt(config, seed=7, length=6)
    free = model.generate(ids, 6)
    assert model.generate(ids, 6, stop_tokens=[free[2]]) == free[:free.index(free[2]) + 1]


def test_state_dict_gives_the_same_weights_as_the_module_walk(pair):
    family, config, hf, model = pair
    walked = list(model.weights.items())
    loaded = list(load_state_dict(hf.state_dict(), config).items())
    assert [n for n, _ in walked] == [n for n, _ in loaded]
    for (name, a), (_, b) in zip(walked, loaded):
        assert a.dtype == np.float32 and b.dtype == np.float32, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert model.weights.tied  # lm_head is the embedding array itself


def test_gpt2_conv1d_is_split_and_transposed():
    config, hf = build_hf("gpt2")
    w = from_hf(hf)
    c_attn = hf.transformer.h[0].attn.c_attn
    x = torch.randn(3, config.hidden)
    with torch.no_grad():
        qkv = c_attn(x).numpy()
    h = config.hidden
    for j, name in enumerate("qkv"):
        got = linear(x.numpy(), getattr(w.layers[0], name), getattr(w.layers[0], name + "_b"))
        np.testing.assert_allclose(got, qkv[:, j * h:(j + 1) * h], rtol=1e-5, atol=1e-5)


def test_state_dict_errors_name_the_key():
    config, hf = build_hf("llama")
    sd = hf.state_dict()
    missing = {k: v for k, v in sd.items() if k != "model.layers.1.mlp.up_proj.weight"}
    with pytest.raises(LLMError, match=r"no model.layers.1.mlp.up_proj.weight") as err:
        load_state_dict(missing, config)
    assert err.value.loc.file == __file__ and err.value.hint
    with pytest.raises(LLMError, match=r"shape .* but the config needs"):
        load_state_dict(sd, config.replace(intermediate=96))
    with pytest.raises(LLMError, match=r"does not use"):
        load_state_dict({**sd, "model.layers.2.input_layernorm.weight": torch.ones(64)}, config)
    with pytest.raises(LLMError, match=r"needs an LLMConfig"):
        load_state_dict(sd, "llama")


def test_model_refuses_bad_input():
    config, hf = build_hf("qwen2")
    model = NumpyModel(config, from_hf(hf))
    with pytest.raises(LLMError, match="outside the vocabulary"):
        model.forward([1, config.vocab])
    with pytest.raises(LLMError, match="1-d sequence"):
        model.forward([[1, 2]])
    with pytest.raises(LLMError, match="different model"):
        NumpyModel(config.replace(hidden=32, head_dim=8), model.weights)
    with pytest.raises(LLMError, match="cache that prefill returned"):
        model.decode(1, KVCache())
    gpt2_config, gpt2 = build_hf("gpt2")
    with pytest.raises(LLMError, match="learned positions") as err:
        NumpyModel(gpt2_config, from_hf(gpt2)).forward(np.zeros(gpt2_config.max_positions + 1, dtype=int))
    assert err.value.loc.file == __file__


# -- quantized (W8A8 / W4A8) ----------------------------------------------------------------------
def test_a8_linear_equals_torch_integer_matmul():
    """The A8 path: per-token int8 activations (round half to even), integer dot products, dequantize."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 48)).astype(np.float32)
    x[2] = 0.0  # an all-zero token
    w = quantize_matrix(rng.standard_normal((24, 48)).astype(np.float32), 8)
    xt = torch.from_numpy(x)
    s = xt.abs().amax(-1).div(127).where(xt.abs().amax(-1) > 0, torch.tensor(1.0))
    xq = torch.round(xt / s[:, None]).clamp(-127, 127).to(torch.int64)  # torch.round is half-to-even
    acc = xq @ torch.from_numpy(w.codes).to(torch.int64).T
    ref = (acc.double() * s[:, None].double() * torch.from_numpy(w.scale)[None, :].double()).float().numpy()
    np.testing.assert_array_equal(linear(x, w), ref)
    codes, scales = quantize_rows(x)
    np.testing.assert_array_equal(codes, xq.numpy().astype(np.int8))
    assert scales[2] == 1.0 and not codes[2].any()


def _agreement(config, hf, scheme, prompts=8, length=16):
    fp32 = NumpyModel(config, from_hf(hf))
    quant = NumpyModel(config, quantize(fp32.weights, scheme))
    assert quant.quantized and isinstance(quant.weights.layers[0].q, QuantLinear)
    rng = np.random.default_rng(11)
    cos, top1 = [], []
    for _ in range(prompts):
        ids = rng.integers(0, config.vocab, length)
        a, b = fp32.forward(ids), quant.forward(ids)
        cos.extend((a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1))
        top1.extend(a.argmax(-1) == b.argmax(-1))
    return float(np.min(cos)), float(np.mean(cos)), float(np.mean(top1))


@pytest.mark.parametrize("family", FAMILIES)
def test_w8a8_tracks_fp32(family):
    """Measured (8 prompts x 16 tokens): min cosine 0.9989 (GPT-2) .. 0.99997 (Gemma); top-1 99.2 .. 100 %."""
    config, hf = build_hf(family)
    min_cos, _, top1 = _agreement(config, hf, "w8a8")
    assert min_cos >= 0.99 and top1 >= 0.95, (min_cos, top1)


@pytest.mark.parametrize("family", FAMILIES)
def test_w4a8_is_coarser_but_close(family):
    """W4A8 (7 levels a side) on random weights, measured: mean cosine 0.980 (Qwen2) .. 0.998 (Gemma),
    top-1 89.8 % (GPT-2) .. 100 %. The floors below sit under those numbers; W4 must lose more than W8."""
    config, hf = build_hf(family)
    _, mean8, _ = _agreement(config, hf, "w8a8")
    min4, mean4, top1 = _agreement(config, hf, "w4a8")
    assert mean4 >= 0.97 and top1 >= 0.85 and mean4 < mean8, (mean4, top1, mean8)


def test_quantize_keeps_norms_and_embeddings_fp32():
    config, hf = build_hf("qwen2")
    w = from_hf(hf)
    q = quantize(w, "w4a8")
    assert q.scheme == "w4a8" and q.embed is w.embed and q.lm_head is w.embed
    for name, value in q.items():
        leaf = name.rsplit(".", 1)[-1]
        if leaf in ("q", "k", "v", "o", "gate", "up", "down"):
            assert isinstance(value, QuantLinear) and value.bits == 4 and np.abs(value.codes).max() <= 7, name
        else:
            assert isinstance(value, np.ndarray) and value.dtype == np.float32, name
    assert q.nbytes() < w.nbytes()
    head = quantize(w, "w8a8", lm_head=True)
    assert isinstance(head.lm_head, QuantLinear) and head.embed is w.embed
    with pytest.raises(LLMError, match="already quantized"):
        quantize(q, "w8a8")
    with pytest.raises(LLMError, match="unknown quantization scheme") as err:
        quantize(w, "w2a2")
    assert err.value.loc.file == __file__
