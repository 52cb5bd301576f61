"""The NumPy math of every block in :mod:`streamdsl.library.llm.blocks`: one set of references.

The block tests check the kernels against these functions, and the whole-model
reference (:mod:`.numpy_model`) is built from them.  Written from the model math
(``../shared/LLM_FACTS.md`` section 2, i.e. what transformers computes), not from
the kernels, as whole-array NumPy.

Each function computes in the precision of its float inputs: float32 inputs give
float32 arithmetic, step by step as transformers computes in float32 (the NumPy
model); the block tests pass float64 copies, so that a kernel is measured against
the math without float32 rounding on the way.  Constants are Python numbers, which
take the inputs' precision.  The quantised functions are the exception: they follow
the integer scheme of :mod:`.quant` in float32 whatever they are given, because the
kernels are checked against them bit for bit.

Shapes are the kernels' (no batch axis): x [T, hidden], per-head tensors
[heads, T, head_dim], weights in nn.Linear layout [out, in].
"""
from __future__ import annotations

import math

import numpy as np

_GELU_C = math.sqrt(2.0 / math.pi)


# ----------------------------------------------------------------- embeddings
def embedding(ids, E, scale: float | None = None, pos_embed=None, past_len: int = 0):
    """``E[ids]``, times ``scale`` rounded to float32 (as the kernel holds it), plus ``pos_embed[past_len + i]``."""
    ids = np.asarray(ids)
    out = np.asarray(E)[ids]
    if scale is not None:
        out = out * np.float32(scale)
    if pos_embed is not None:
        out = out + np.asarray(pos_embed)[past_len + np.arange(ids.shape[0])]
    return out


def gemma_embedding(ids, E):
    return embedding(ids, E, scale=float(np.sqrt(np.asarray(E).shape[1])))


def gpt2_embedding(ids, wte, wpe, past_len: int):
    return embedding(ids, wte, pos_embed=wpe, past_len=past_len)


# ---------------------------------------------------------------------- norms
def layernorm(x, w, b=None, eps: float = 1e-5):
    """``(x - mean) / sqrt(var + eps) * w (+ b)`` over the last axis, with the biased variance."""
    x = np.asarray(x)
    mean = x.mean(-1, keepdims=True)
    var = np.square(x - mean).mean(-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + float(eps)) * w
    return y if b is None else y + b


def rmsnorm(x, w, eps: float = 1e-6, unit_offset: bool = False):
    """``x / sqrt(mean(x^2) + eps) * w`` over the last axis (so also the per-head Q/K norm on [H, T, D]);
    Gemma (``unit_offset``) multiplies by ``1 + w``."""
    x = np.asarray(x)
    y = x / np.sqrt(np.square(x).mean(-1, keepdims=True) + float(eps))
    return y * (1.0 + w) if unit_offset else y * w


# --------------------------------------------------------------------- linear
def linear(x, W, b=None):
    y = np.asarray(x) @ np.asarray(W).T
    return y if b is None else y + b


def lm_head(h, E):
    return linear(h, E)


def split_heads(y, heads: int):
    """[T, heads*D] -> [heads, T, D]: head h is columns h*D .. h*D + D - 1."""
    t, n = y.shape
    return np.ascontiguousarray(y.reshape(t, heads, n // heads).transpose(1, 0, 2))


def merge_heads(o):
    """[heads, T, D] -> [T, heads*D]."""
    h, t, d = o.shape
    return np.ascontiguousarray(o.transpose(1, 0, 2).reshape(t, h * d))


def qkv_fused(x, W, b, heads: int):
    y = linear(x, W, b)
    hidden = y.shape[1] // 3
    return tuple(split_heads(y[:, n * hidden:(n + 1) * hidden], heads) for n in range(3))


def qkv(x, Wq, Wk, Wv, q_heads: int, kv_heads: int, bq=None, bk=None, bv=None):
    return (split_heads(linear(x, Wq, bq), q_heads), split_heads(linear(x, Wk, bk), kv_heads),
            split_heads(linear(x, Wv, bv), kv_heads))


# ------------------------------------------------------------------ quantised
def qmax(bits: int) -> int:
    """The largest code of a symmetric ``bits``-bit grid: 127 for int8, 7 for int4 (-qmax-1 is never used)."""
    return (1 << (bits - 1)) - 1


def quantize_rows(x, bits: int = 8):
    """Per-row symmetric quantisation in float32: ``(codes int8[..., n], scale f32[...])``.

    ``scale[r] = max|x[r]| / qmax`` (1.0 for an all-zero row) and ``codes = clip(rint(x / scale), -qmax, qmax)``,
    ``rint`` rounding half to even.  The activations' scheme (per token, 8 bits, in the kernel) and the weights'
    (per output channel, 8 or 4 bits, offline).
    """
    x = np.asarray(x, np.float32)
    q = np.float32(qmax(bits))
    amax = np.abs(x).max(axis=-1)
    scale = np.where(amax > 0, amax / q, np.float32(1)).astype(np.float32)
    codes = np.clip(np.rint(x / scale[..., None]), -q, q).astype(np.int8)
    return codes, scale


def int_matmul(xq, wq):
    """int32 accumulation of int8 x int8 (or int4) products, exact: float64 holds every such sum below 2**53."""
    acc = np.asarray(xq, np.float64) @ np.asarray(wq, np.float64).T
    assert np.abs(acc).max(initial=0) < 2**31, "int32 accumulator overflow"
    return acc.astype(np.int32)


def linear_quant(x, wq, sw, b=None, in_float64: bool = False):
    """W8A8 / W4A8 linear: x quantised per row (:func:`quantize_rows`), integer dot products, then dequantised.

    By default in the kernels' order, ``(f32(acc) * sx[r]) * sw[o] (+ b[o])`` in float32 left to right (bit for
    bit what :mod:`.quant` computes); ``in_float64`` dequantises ``acc * sx[r] * sw[o]`` in float64 and rounds
    it to float32 once, then adds ``b`` in float32 (the NumPy model's linear).
    """
    xq, sx = quantize_rows(x)
    acc = int_matmul(xq, wq)
    sw = np.asarray(sw, np.float32)
    if in_float64:
        y = (acc * sx[:, None].astype(np.float64) * sw[None, :].astype(np.float64)).astype(np.float32)
    else:
        y = (acc.astype(np.float32) * sx[:, None]) * sw[None, :]
    return y if b is None else (y + np.asarray(b, np.float32)[None, :]).astype(np.float32)


# ----------------------------------------------------------------------- rope
def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope(x, cos, sin):
    """x [H, T, D], cos/sin [T, D] (:func:`.rope.rope_tables`): ``x * cos + rotate_half(x) * sin``."""
    x = np.asarray(x)
    return x * cos + rotate_half(x) * sin


# ------------------------------------------------------------------ attention
def softmax(x, axis: int = -1):
    x = np.asarray(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softcap(x, cap: float):
    """Gemma's logit soft-capping ``tanh(x / cap) * cap``."""
    return np.tanh(x / float(cap)) * float(cap)


def attention(q, k, v, q_pos, kv_pos, scale: float | None = None, window: int | None = None,
              cap: float | None = None):
    """Eager attention: q [Hq, T, D], k/v [Hkv, S, D] -> [T, Hq*D].

    ``softmax(q k^T * scale (soft-capped by ``cap``) + mask) v``, scale 1/sqrt(D) by default.  Query t (at
    absolute position q_pos[t]) may read key j (at kv_pos[j]) when ``kv_pos <= q_pos`` and, with a window,
    ``kv_pos > q_pos - window``.  GQA: query head ``h = g * group + r`` reads KV head ``g`` (``repeat_kv``).
    """
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    hq, t, d = q.shape
    hkv = k.shape[0]
    scale = float(1.0 / np.sqrt(d)) if scale is None else float(scale)
    s = (q.reshape(hkv, hq // hkv, t, d) @ k[:, None].transpose(0, 1, 3, 2)) * scale  # [Hkv, group, T, S]
    if cap is not None:
        s = softcap(s, cap)
    qp, kp = np.asarray(q_pos)[:, None], np.asarray(kv_pos)[None, :]
    allowed = kp <= qp
    if window is not None:
        allowed &= kp > qp - window
    o = softmax(np.where(allowed, s, -np.inf)) @ v[:, None]  # [Hkv, group, T, D]
    return merge_heads(o.reshape(hq, t, d))


def attention_prefill(q, k, v, scale: float | None = None, window: int | None = None):
    t = q.shape[1]
    return attention(q, k, v, np.arange(t), np.arange(t), scale, window)


def attention_decode(q, k_cache, v_cache, n_valid: int, scale: float | None = None, window: int | None = None):
    """t = q.shape[1] new queries at positions n_valid-t .. n_valid-1 against cache positions 0..n_valid-1."""
    t = q.shape[1]
    return attention(q, k_cache[:, :n_valid], v_cache[:, :n_valid], np.arange(n_valid - t, n_valid),
                     np.arange(n_valid), scale, window)


def kv_append(cache, x, pos: int):
    out = np.array(cache, dtype=np.float32, copy=True)
    out[:, pos:pos + x.shape[1]] = x
    return out


# ------------------------------------------------------------------------ mlp
def gelu(x):
    """Tanh GELU (gelu_new / gelu_pytorch_tanh): ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    x = np.asarray(x)
    return 0.5 * x * (1.0 + np.tanh(_GELU_C * (x + 0.044715 * x * x * x)))


def silu(x):
    x = np.asarray(x)
    return x / (1.0 + np.exp(-x))


def swiglu_mlp(x, Wg, Wu, Wd):
    return linear(silu(linear(x, Wg)) * linear(x, Wu), Wd)


def geglu_mlp(x, Wg, Wu, Wd):
    return linear(gelu(linear(x, Wg)) * linear(x, Wu), Wd)


def gpt2_mlp(x, W_fc, b_fc, W_proj, b_proj):
    return linear(gelu(linear(x, W_fc, b_fc)), W_proj, b_proj)


# ------------------------------------------------------------------ residual, selection
def residual_add(a, b):
    return np.asarray(a) + np.asarray(b)


def argmax(x):
    """First index of the maximum along the last axis (np.argmax, like torch.argmax)."""
    return np.argmax(np.asarray(x), axis=-1).astype(np.int32)


# ------------------------------------------------------------------ the device side of a token
def lm_head_quant(h, wq, sw):
    """The W8A8 / W4A8 LM head of :mod:`.token`: :func:`linear_quant` in the kernels' order (no bias)."""
    return linear_quant(h, wq, sw)


_M32 = 0xFFFFFFFF


def philox2x32(c0: int, c1: int, key: int, rounds: int = 10) -> tuple[int, int]:
    """Philox-2x32-``rounds`` (Salmon et al., SC 2011; Random123's constants): the counter (c0, c1) under ``key``.

    A round: ``hi:lo = c0 * 0xD256D193`` (64 bits), ``(c0, c1) = (hi ^ key ^ c1, lo)``, then ``key += 0x9E3779B9``.
    """
    c0, c1, key = c0 & _M32, c1 & _M32, key & _M32
    for _ in range(rounds):
        p = c0 * 0xD256D193
        c0, c1 = ((p >> 32) ^ key ^ c1) & _M32, p & _M32
        key = (key + 0x9E3779B9) & _M32
    return c0, c1


def uniform(bits: int) -> np.float32:
    """The top 24 of 32 random bits as an exact float32 in [0, 1): ``(bits >> 8) * 2**-24``."""
    return np.float32(bits >> 8) * np.float32(2.0**-24)


def sample_top_k(logits, k: int, temperature: float, u: float) -> int:
    """Temperature and top-k sampling by inverse CDF, as :func:`.token.make_sampler` computes it in float32.

    The k largest logits (ties by the smaller id: a stable descending sort), ``p_j = exp((x_j - x_0) / T)``,
    running sums ``S_j`` in order, and the first ``j`` with ``u * S_{k-1} < S_j`` (``k - 1`` if none).
    """
    x = np.asarray(logits, np.float32).reshape(-1)
    order = np.argsort(-x, kind="stable")[:k]
    top = x[order]
    sums = np.cumsum(np.exp((top - top[0]) / np.float32(temperature)), dtype=np.float32)
    target = np.float32(u) * sums[-1]
    hits = np.nonzero(target < sums)[0]
    return int(order[hits[0] if hits.size else k - 1])
