"""LLMConfig: presets carry the numbers of LLM_FACTS.md, and agree with transformers' own configs and models."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from streamdsl.library.llm.config import FAMILIES, FULL, SLIDING, LLMConfig, LLMError, preset, tiny, to_hf
from streamdsl.library.llm.rope import rope_inv_freq

# name: layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, max_positions, eps  (LLM_FACTS section 1)
FACTS = {
    "gpt2": (12, 768, 12, 12, 64, 3072, 50257, 1024, 1e-5),
    "gpt2-medium": (24, 1024, 16, 16, 64, 4096, 50257, 1024, 1e-5),
    "llama-3.2-1b": (16, 2048, 32, 8, 64, 8192, 128256, 131072, 1e-5),
    "qwen2.5-0.5b": (24, 896, 14, 2, 64, 4864, 151936, 32768, 1e-6),
    "gemma-3-1b": (26, 1152, 4, 1, 256, 6912, 262144, 32768, 1e-6),
    "smollm2-135m": (30, 576, 9, 3, 64, 1536, 49152, 8192, 1e-5),
}
# Parameter counts of the released models (GPT-2 124M, Gemma 3 1B "999.9M", ...).
PARAMS = {"gpt2": 124_439_808, "gpt2-medium": 354_823_168, "llama-3.2-1b": 1_235_814_400,
          "qwen2.5-0.5b": 494_032_768, "gemma-3-1b": 999_885_952, "smollm2-135m": 134_515_008}


@pytest.mark.parametrize("name", FACTS)
def test_preset_numbers(name):
    c = preset(name)
    got = (c.layers, c.hidden, c.heads, c.kv_heads, c.head_dim, c.intermediate, c.vocab, c.max_positions, c.norm_eps)
    assert got == FACTS[name]
    assert c.num_parameters() == PARAMS[name]
    assert c.tied_embeddings


@pytest.mark.parametrize("name", FACTS)
def test_preset_builds_the_same_model_in_transformers(name):
    """to_hf(preset) is a transformers config whose model (on the meta device) has the same parameter count,
    and from_hf reads it back to the same LLMConfig."""
    c = preset(name)
    hf_config = to_hf(c)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(hf_config)
    assert sum(p.numel() for p in model.parameters()) == c.num_parameters()
    assert LLMConfig.from_hf(hf_config) == c.replace(name="")


def test_family_specific_facts():
    gpt2, llama, qwen, gemma = (preset(n) for n in ("gpt2", "llama-3.2-1b", "qwen2.5-0.5b", "gemma-3-1b"))
    assert gpt2.norm == "layernorm" and gpt2.rope_theta is None and gpt2.qkv_bias and gpt2.mlp_bias
    assert not gpt2.gated_mlp and gpt2.activation == "gelu_tanh"
    assert llama.rope_theta == 500000.0 and llama.rope_scaling.factor == 32 and llama.rope_scaling.original_max_positions == 8192
    assert llama.group == 4 and llama.activation == "silu" and not llama.qkv_bias
    assert qwen.qkv_bias and not qwen.o_bias and qwen.rope_theta == 1e6 and qwen.group == 7
    assert gemma.norm == "rmsnorm1p" and gemma.qk_norm and gemma.sandwich_norm and gemma.group == 4
    assert gemma.attn_scale == 1 / 16 and abs(gemma.embed_scale - 33.9411) < 1e-4
    assert [i for i, t in enumerate(gemma.layer_types) if t == FULL] == [5, 11, 17, 23]
    assert gemma.layer_theta(0) == 1e4 and gemma.layer_theta(5) == 1e6 and gemma.window(0) == 512
    assert gemma.window(5) is None and gemma.q_dim == 1024 != gemma.hidden
    assert preset("smollm2-135m").rope_theta == 1e5 and preset("smollm2-135m").rope_scaling is None


@pytest.mark.parametrize("family", FAMILIES)
def test_tiny_round_trips_through_transformers(family):
    c = tiny(family)
    assert LLMConfig.from_hf(to_hf(c)) == c.replace(name="")
    assert c.layers <= 3 and c.hidden == 64
    if family in ("llama", "qwen2"):
        assert c.kv_heads < c.heads  # GQA
    if family == "gemma3":
        assert set(c.layer_types) == {FULL, SLIDING} and c.sliding_window < 10


@pytest.mark.parametrize("name", ["llama-3.2-1b", "qwen2.5-0.5b", "gemma-3-1b"])
def test_rope_frequencies_equal_transformers(name):
    c = preset(name)
    hf_config = to_hf(c)
    if c.family == "gemma3":
        from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

        for layer_type, theta in ((FULL, c.rope_theta), (SLIDING, c.rope_local_theta)):
            expected, _ = Gemma3RotaryEmbedding.compute_default_rope_parameters(hf_config, layer_type=layer_type)
            np.testing.assert_allclose(rope_inv_freq(c.head_dim, theta, c.rope_scaling), expected.numpy(), rtol=1e-6)
        return
    kind = hf_config.rope_parameters["rope_type"]
    if kind == "default":
        expected = 1.0 / (c.rope_theta ** (torch.arange(0, c.head_dim, 2, dtype=torch.float) / c.head_dim))
    else:
        expected, _ = ROPE_INIT_FUNCTIONS[kind](hf_config, None)
    np.testing.assert_allclose(rope_inv_freq(c.head_dim, c.rope_theta, c.rope_scaling), expected.numpy(), rtol=1e-6)


def test_llama3_scaling_hits_all_three_bands_in_tiny():
    c = tiny("llama")
    plain = rope_inv_freq(c.head_dim, c.rope_theta)
    ratio = plain / rope_inv_freq(c.head_dim, c.rope_theta, c.rope_scaling)
    assert np.isclose(ratio, 1).any() and np.isclose(ratio, 32).any()
    assert ((ratio > 1.01) & (ratio < 31.9)).any()


def test_print_is_readable():
    text = str(preset("gemma-3-1b"))
    assert text.startswith("LLMConfig gemma-3-1b (999.9M parameters)")
    assert "LLLLLGLLLLLGLLLLLGLLLLLGLL" in text and "sliding_window   512" in text
    assert "full_attention x 12" in str(preset("gpt2"))


def test_replace_follows_derived_fields():
    c = tiny("llama").replace(head_dim=32)
    assert c.attn_scale == 32 ** -0.5
    assert tiny("llama").replace(layers=4).layer_types == (FULL,) * 4
    assert tiny("llama").replace(family="gpt2", rope_theta=None, rope_scaling=None).norm == "layernorm"


def test_errors_point_at_the_caller():
    with pytest.raises(LLMError, match="unknown model preset 'gpt3'") as err:
        preset("gpt3")
    assert err.value.loc.file == __file__ and "gpt2-medium" in err.value.hint
    with pytest.raises(LLMError, match="unknown model family 'mamba'") as err:
        tiny("mamba")
    assert err.value.loc.file == __file__
    with pytest.raises(LLMError, match="not a multiple of kv_heads"):
        tiny("llama", kv_heads=3)
    with pytest.raises(LLMError, match="sliding layers need"):
        tiny("gemma3", sliding_window=None)
    with pytest.raises(LLMError, match="layer_types"):
        tiny("gemma3", layer_types=(FULL,))
    with pytest.raises(LLMError, match="model_type 'bert'"):
        LLMConfig.from_hf(transformers.BertConfig())
    with pytest.raises(LLMError, match="RoPE type 'yarn'"):
        LLMConfig.from_hf(transformers.LlamaConfig(rope_parameters={"rope_type": "yarn", "rope_theta": 1e4, "factor": 2.0}))
