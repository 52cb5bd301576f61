"""NumPy references of every block in :mod:`streamdsl.library.llm.blocks`.

Written from the model math (``../shared/LLM_FACTS.md`` section 2, i.e. what
transformers computes), not from the kernels: whole-array NumPy, float64
internally, results returned as float32.  The quantised references are the
exception: they follow the fp32 integer scheme of :mod:`.quant` step by step
in float32, because the kernels are checked against them bit for bit.

Shapes are the kernels' (no batch axis): x [T, hidden], per-head tensors
[heads, T, head_dim], weights in nn.Linear layout [out, in].
"""
from __future__ import annotations

import numpy as np


def _f64(*xs):
    return [np.asarray(x, dtype=np.float64) for x in xs]


def _f32(x) -> np.ndarray:
    return np.asarray(x).astype(np.float32)


# ----------------------------------------------------------------- embeddings
def embedding(ids, E, scale: float | None = None):
    out = np.asarray(E, np.float64)[np.asarray(ids)]
    return _f32(out * np.float64(np.float32(scale)) if scale is not None else out)


def gemma_embedding(ids, E):
    return embedding(ids, E, scale=float(np.sqrt(np.asarray(E).shape[1])))


def gpt2_embedding(ids, wte, wpe, past_len: int):
    ids = np.asarray(ids)
    pos = past_len + np.arange(ids.shape[0])
    wte, wpe = _f64(wte, wpe)
    return _f32(wte[ids] + wpe[pos])


# ---------------------------------------------------------------------- norms
def layernorm(x, w, b, eps: float = 1e-5):
    x, w, b = _f64(x, w, b)
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)  # biased
    return _f32((x - mean) / np.sqrt(var + eps) * w + b)


def rmsnorm(x, w, eps: float = 1e-6, unit_offset: bool = False):
    """Over the last axis, so it is also the per-head Q/K norm on [H, T, D]."""
    x, w = _f64(x, w)
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return _f32(y * (1.0 + w if unit_offset else w))


# --------------------------------------------------------------------- linear
def linear(x, W, b=None):
    x, W = _f64(x, W)
    y = x @ W.T
    return _f32(y if b is None else y + np.asarray(b, np.float64))


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
def quantize_rows(x):
    """Per-row int8 quantisation, fp32 step by step: (xq int8[T, n], sx f32[T])."""
    x = np.asarray(x, np.float32)
    amax = np.abs(x).max(axis=1)
    sx = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
    xq = np.clip(np.rint(x / sx[:, None]), -127, 127).astype(np.int8)
    return xq, sx


def int_matmul(xq, wq):
    """int32 accumulation of int8 x int8 (or int4) products, exact (computed in int64 and range-checked)."""
    acc = np.asarray(xq, np.int64) @ np.asarray(wq, np.int64).T
    assert np.abs(acc).max(initial=0) < 2**31, "int32 accumulator overflow"
    return acc.astype(np.int32)


def linear_quant(x, wq, sw, b=None):
    """W8A8 / W4A8 linear: ``(f32(acc) * sx[r]) * sw[o] (+ b[o])`` in fp32, left to right."""
    xq, sx = quantize_rows(x)
    acc = int_matmul(xq, wq).astype(np.float32)
    y = (acc * sx[:, None]) * np.asarray(sw, np.float32)[None, :]
    return y if b is None else (y + np.asarray(b, np.float32)[None, :]).astype(np.float32)


# ----------------------------------------------------------------------- rope
def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope(x, cos, sin):
    """x [H, T, D], cos/sin [T, D]: ``x * cos + rotate_half(x) * sin``."""
    x, cos, sin = _f64(x, cos, sin)
    return _f32(x * cos[None] + rotate_half(x) * sin[None])


# ------------------------------------------------------------------ attention
def softmax(x, axis: int = -1):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention(q, k, v, q_pos, kv_pos, scale: float | None = None, window: int | None = None):
    """Eager attention with an additive-style boolean mask: q [Hq, T, D], k/v [Hkv, S, D] -> [T, Hq*D].

    Query t (at absolute position q_pos[t]) may read key j (at kv_pos[j]) when
    ``kv_pos <= q_pos`` and, with a window, ``kv_pos > q_pos - window``.  KV heads
    are expanded by repeat-interleave (``repeat_kv``).
    """
    q, k, v = _f64(q, k, v)
    hq, _, d = q.shape
    group = hq // k.shape[0]
    k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    s = q @ k.transpose(0, 2, 1) * scale
    qp, kp = np.asarray(q_pos)[:, None], np.asarray(kv_pos)[None, :]
    allowed = kp <= qp
    if window is not None:
        allowed &= kp > qp - window
    s = np.where(allowed[None], s, -np.inf)
    return _f32(merge_heads(softmax(s) @ v))


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
def _gelu64(x):
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def _silu64(x):
    x = np.asarray(x, np.float64)
    return x / (1.0 + np.exp(-x))


def gelu(x):
    """Tanh GELU (gelu_new / gelu_pytorch_tanh)."""
    return _f32(_gelu64(x))


def silu(x):
    return _f32(_silu64(x))


def swiglu_mlp(x, Wg, Wu, Wd):
    x, Wg, Wu, Wd = _f64(x, Wg, Wu, Wd)
    return _f32((_silu64(x @ Wg.T) * (x @ Wu.T)) @ Wd.T)


def geglu_mlp(x, Wg, Wu, Wd):
    x, Wg, Wu, Wd = _f64(x, Wg, Wu, Wd)
    return _f32((_gelu64(x @ Wg.T) * (x @ Wu.T)) @ Wd.T)


def gpt2_mlp(x, W_fc, b_fc, W_proj, b_proj):
    x, W_fc, b_fc, W_proj, b_proj = _f64(x, W_fc, b_fc, W_proj, b_proj)
    return _f32(_gelu64(x @ W_fc.T + b_fc) @ W_proj.T + b_proj)


# ------------------------------------------------------------------ residual, selection
def residual_add(a, b):
    return _f32(np.asarray(a, np.float64) + np.asarray(b, np.float64))


def argmax(x):
    """First index of the maximum along the last axis (np.argmax, like torch.argmax)."""
    return np.argmax(np.asarray(x), axis=-1).astype(np.int32)
