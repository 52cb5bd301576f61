"""Blocks against the transformers modules they stand for (fp32, eval mode).

A second, independent reference next to ``ref.py``: LlamaRMSNorm, Gemma3RMSNorm,
nn.LayerNorm, gelu_new and gelu(approximate="tanh"), the Llama-3 RoPE frequencies
and rotary tables, apply_rotary_pos_emb, eager_attention_forward with GQA and a
sliding-window mask, and torch.argmax.  Skipped when torch/transformers are not
installed (the ``llm`` extra).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch  # the README's test command installs the llm extra: a missing torch is a failure, not a skip
import transformers  # noqa: F401

from streamdsl.library.llm import blocks


def randn(r, *shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(np.float32)


def close(got, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(got, want.detach().numpy() if isinstance(want, torch.Tensor) else want,
                               rtol=rtol, atol=atol)


T = torch.from_numpy


def test_norms_match_transformers():
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RMSNorm
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    r = np.random.default_rng(0)
    x, w, b = randn(r, 3, 16, scale=2.0), randn(r, 16) + 1.0, randn(r, 16)
    llama = LlamaRMSNorm(16, eps=1e-5)
    gemma = Gemma3RMSNorm(16, eps=1e-6)
    ln = torch.nn.LayerNorm(16, eps=1e-5)
    with torch.no_grad():
        llama.weight.copy_(T(w))
        gemma.weight.copy_(T(w - 1.0))
        ln.weight.copy_(T(w))
        ln.bias.copy_(T(b))
        close(blocks.make_rmsnorm(3, 16, eps=1e-5)(x, w), llama(T(x)))
        close(blocks.make_rmsnorm(3, 16, eps=1e-6, unit_offset=True)(x, w - 1.0), gemma(T(x)))
        close(blocks.make_layernorm(3, 16, eps=1e-5)(x, w, b), ln(T(x)))
        # Gemma's q_norm / k_norm on [H, T, D]
        xh = randn(r, 2, 3, 16)
        close(blocks.make_head_rmsnorm(2, 3, 16, eps=1e-6)(xh, w - 1.0), gemma(T(xh)))


def test_activations_match_transformers():
    from transformers.activations import ACT2FN

    x = randn(np.random.default_rng(1), 4, 9, scale=3.0)
    with torch.no_grad():
        close(blocks.make_gelu(4, 9)(x), ACT2FN["gelu_new"](T(x)))
        close(blocks.make_gelu(4, 9)(x), torch.nn.functional.gelu(T(x), approximate="tanh"))
        close(blocks.make_silu(4, 9)(x), torch.nn.functional.silu(T(x)))


def test_llama3_rope_matches_transformers():
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import _compute_llama3_parameters
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    d, theta = 16, 500000.0
    sc = blocks.LLAMA3_SCALING
    params = {"rope_type": "llama3", "rope_theta": theta, "factor": sc.factor, "low_freq_factor": sc.low_freq_factor,
              "high_freq_factor": sc.high_freq_factor, "original_max_position_embeddings": sc.original_max_positions}
    cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, head_dim=d, rope_parameters=params,
                      max_position_embeddings=1 << 17)
    hf_inv, scaling = _compute_llama3_parameters(cfg, "cpu")
    inv = blocks.rope_inv_freq(d, theta, llama3=blocks.LLAMA3_SCALING)
    np.testing.assert_allclose(inv, hf_inv.numpy(), rtol=1e-6)
    # tables and the rotation of q at positions 5..7
    pos = np.arange(5, 8)
    rot = LlamaRotaryEmbedding(cfg)
    x = randn(np.random.default_rng(2), 1, 4, 3, d)
    with torch.no_grad():
        cos_t, sin_t = rot(T(x), T(pos[None]))
    cos, sin = blocks.rope_tables(pos, inv, attention_scaling=scaling)
    close(cos, cos_t[0], rtol=1e-5, atol=1e-6)
    close(sin, sin_t[0], rtol=1e-5, atol=1e-6)
    q_rot, _ = apply_rotary_pos_emb(T(x), T(x), cos_t, sin_t)
    close(blocks.make_rope(4, 3, d)(x[0], cos, sin), q_rot[0])


@pytest.mark.parametrize("window", [None, 3])
def test_prefill_attention_matches_eager_attention(window):
    from types import SimpleNamespace

    from transformers.models.llama.modeling_llama import eager_attention_forward

    r = np.random.default_rng(3)
    hq, hkv, t, d = 4, 2, 6, 8
    q, k, v = randn(r, hq, t, d), randn(r, hkv, t, d), randn(r, hkv, t, d)
    qp, kp = np.arange(t)[:, None], np.arange(t)[None, :]
    allowed = (kp <= qp) & ((kp > qp - window) if window else True)
    mask = torch.where(T(allowed), 0.0, torch.finfo(torch.float32).min)[None, None]
    module = SimpleNamespace(num_key_value_groups=hq // hkv, training=False)
    with torch.no_grad():
        out, _ = eager_attention_forward(module, T(q)[None], T(k)[None], T(v)[None], mask, scaling=d ** -0.5)
    got = blocks.make_attention_prefill(hq, hkv, t, d, window=window)(q, k, v)
    close(got, out[0].reshape(t, hq * d))


def test_argmax_matches_torch_on_ties():
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, 0, 0, 5]], np.float32)
    np.testing.assert_array_equal(blocks.make_argmax(3, 4)(x), torch.argmax(T(x), dim=-1).numpy())


def test_gemma_embedding_scale_is_fp32_sqrt():
    E = np.ones((3, 1152), np.float32)
    got = blocks.make_gemma_embedding(1, 3, 1152)(np.array([1], np.int32), E)
    assert got[0, 0] == np.float32(math.sqrt(1152)) == torch.tensor(1152 ** 0.5, dtype=torch.float32).item()
