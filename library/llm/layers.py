"""One decoder layer of each family as one ``@sd.dataflow`` function of library blocks.

A layer takes the residual stream ``x [t, hidden]``, its weights, the KV
cache of this layer in DRAM (``kc, vc [kv_heads, cache_len, head_dim]``),
the RoPE tables of its positions and two scalars (``pos``: where the new
tokens go in the cache; ``n_valid = pos + t``), and returns the new
residual stream and the new keys and values ``[kv_heads, t, head_dim]``,
rows ``pos .. pos + t - 1`` of the updated cache: ``LLM.schedule`` stores
them in place (``g.store_at``), so a step writes those rows of the cache
buffers and nothing else of them.  Prefill (``t`` = prompt length,
``pos = 0``) and decode (``t = 1``) are the same function at two sizes.
Attention reads the cache for the positions before ``pos`` and the new keys
and values for ``pos ..`` (what transformers, which appends before attending,
reads there), so the cache goes from its DMA straight into attention and
only the new rows are written back.

Every block is a name in :data:`BLOCKS`; ``blocks={"mlp": my_kernel}``
replaces one with a user kernel of the same interface (checked), or with a
factory ``f(config, t, cache_len) -> kernel`` when the model runs at
several sizes (prefill and decode).
"""
from __future__ import annotations

from dataclasses import dataclass

import streamdsl as sd
from streamdsl import f32, i32

from .attention import make_attention_decode
from .config import FULL, LLMConfig, LLMError, user_loc
from .head import make_residual_add
from .linear import make_linear, make_qkv, make_qkv_fused
from .mlp import make_geglu_mlp, make_gpt2_mlp, make_swiglu_mlp
from .norms import make_head_rmsnorm, make_layernorm, make_rmsnorm
from .rope import make_rope

BLOCKS = ("attn_norm", "qkv", "q_norm", "k_norm", "rope_q", "rope_k", "attention", "o_proj",
          "post_attn_norm", "residual", "mlp_norm", "mlp", "post_mlp_norm")


@dataclass(frozen=True)
class LayerSpec:
    """A layer dataflow and the names of its weight arguments, in order."""

    function: object  # the DataflowFunction
    weights: tuple[str, ...]  # LayerWeights fields (``qkv_w``/``qkv_b`` fuse q, k, v for GPT-2)
    kind: str
    t: int
    cache_len: int


def _default_blocks(c: LLMConfig, t: int, s: int, kind: str) -> dict:
    H, D, Hq, Hkv, inter = c.hidden, c.head_dim, c.heads, c.kv_heads, c.intermediate
    window = c.sliding_window if kind != FULL else None
    b = {
        "attention": make_attention_decode(Hq, Hkv, s, D, t, scale=c.attn_scale, window=window),
        "residual": make_residual_add(t, H),
        "o_proj": make_linear(t, c.q_dim, H, bias=c.o_bias),
    }
    if c.norm == "layernorm":
        b["attn_norm"] = b["mlp_norm"] = make_layernorm(t, H, c.norm_eps)
    else:
        norm = make_rmsnorm(t, H, c.norm_eps, unit_offset=c.norm == "rmsnorm1p")
        b["attn_norm"] = b["mlp_norm"] = norm
        if c.sandwich_norm:
            b["post_attn_norm"] = b["post_mlp_norm"] = norm
    if c.family == "gpt2":
        b["qkv"] = make_qkv_fused(t, H, Hq)
        b["mlp"] = make_gpt2_mlp(t, H, inter)
    else:
        b["qkv"] = make_qkv(t, H, Hq, Hkv, D, bias=c.qkv_bias)
        b["rope_q"], b["rope_k"] = make_rope(Hq, t, D), make_rope(Hkv, t, D)
        b["mlp"] = make_swiglu_mlp(t, H, inter) if c.activation == "silu" else make_geglu_mlp(t, H, inter)
        if c.qk_norm:
            b["q_norm"] = make_head_rmsnorm(Hq, t, D, c.norm_eps, unit_offset=c.norm == "rmsnorm1p")
            b["k_norm"] = make_head_rmsnorm(Hkv, t, D, c.norm_eps, unit_offset=c.norm == "rmsnorm1p")
    return b


def _signature(k) -> tuple:
    ir = k.ir
    return tuple(str(p.type) for p in ir.params), tuple(str(r) for r in ir.results)


def resolve_blocks(c: LLMConfig, t: int, s: int, kind: str, swaps: dict | None) -> dict:
    """The layer's kernels, with user swaps checked against the default block's interface."""
    b = _default_blocks(c, t, s, kind)
    for name, k in (swaps or {}).items():
        if name not in b:
            known = ", ".join(n for n in BLOCKS if n in b)
            raise LLMError(f"a {c.family} layer has no block {name!r}", user_loc(), hint=f"its blocks are: {known}")
        if callable(k) and not isinstance(k, sd.KernelFunction):
            k = k(c, t, s)  # a factory: one kernel per size (prefill and decode differ in t)
        if not isinstance(k, sd.KernelFunction):
            raise LLMError(f"block {name!r} must be an @sd.kernel function or a factory (config, t, cache_len) -> "
                           f"kernel, got {type(k).__name__}", user_loc(), hint="decorate your kernel with @sd.kernel")
        want, got = _signature(b[name]), _signature(k)
        if want != got:
            raise LLMError(f"kernel '{k.ir.name}' cannot replace block {name!r}: it takes ({', '.join(got[0])}) -> "
                           f"({', '.join(got[1])}), the block takes ({', '.join(want[0])}) -> ({', '.join(want[1])})",
                           user_loc(), hint="give your kernel the same parameter and result types, in the same order")
        b[name] = k
    return b


def make_layer(c: LLMConfig, t: int, cache_len: int, kind: str = FULL, swaps: dict | None = None) -> LayerSpec:
    """The decoder layer of ``c`` for ``t`` new tokens and a cache of ``cache_len`` positions."""
    b = resolve_blocks(c, t, cache_len, kind, swaps)
    make = {"gpt2": _gpt2, "llama": _llama, "qwen2": _qwen2, "gemma3": _gemma3}[c.family]
    fn, weights = make(c, t, cache_len, b)
    return LayerSpec(fn, weights, kind, t, cache_len)


def _gpt2(c: LLMConfig, t: int, S: int, b: dict):
    H, D, Hq, I = c.hidden, c.head_dim, c.heads, c.intermediate
    H3 = 3 * H
    attn_norm, qkv, attention = b["attn_norm"], b["qkv"], b["attention"]
    o_proj, residual, mlp_norm, mlp = b["o_proj"], b["residual"], b["mlp_norm"], b["mlp"]

    @sd.dataflow
    def gpt2_layer(x: f32[t, H], ln1: f32[H], ln1_b: f32[H], qkv_w: f32[H3, H], qkv_b: f32[H3], wo: f32[H, H],
                   bo: f32[H], ln2: f32[H], ln2_b: f32[H], w_fc: f32[I, H], b_fc: f32[I], w_proj: f32[H, I],
                   b_proj: f32[H], kc: f32[Hq, S, D], vc: f32[Hq, S, D], pos: i32,
                   n_valid: i32) -> (f32[t, H], f32[Hq, t, D], f32[Hq, t, D]):
        n1 = attn_norm(x, ln1, ln1_b)
        q, k, v = qkv(n1, qkv_w, qkv_b)
        o = attention(q, kc, vc, k, v, n_valid)
        a = o_proj(o, wo, bo)
        h = residual(a, x)
        n2 = mlp_norm(h, ln2, ln2_b)
        m = mlp(n2, w_fc, b_fc, w_proj, b_proj)
        y = residual(m, h)
        return y, k, v  # the new rows only: LLM.schedule stores them in place

    return gpt2_layer, ("ln1", "ln1_b", "qkv_w", "qkv_b", "o", "o_b", "ln2", "ln2_b", "fc", "fc_b", "proj", "proj_b")


def _llama(c: LLMConfig, t: int, S: int, b: dict):
    H, D, Hkv, I, NQ, NKV = c.hidden, c.head_dim, c.kv_heads, c.intermediate, c.q_dim, c.kv_dim
    attn_norm, qkv, rope_q, rope_k = b["attn_norm"], b["qkv"], b["rope_q"], b["rope_k"]
    attention, o_proj, residual, mlp_norm, mlp = b["attention"], b["o_proj"], b["residual"], b["mlp_norm"], b["mlp"]

    @sd.dataflow
    def llama_layer(x: f32[t, H], ln1: f32[H], wq: f32[NQ, H], wk: f32[NKV, H], wv: f32[NKV, H], wo: f32[H, NQ],
                    ln2: f32[H], wg: f32[I, H], wu: f32[I, H], wd: f32[H, I], kc: f32[Hkv, S, D],
                    vc: f32[Hkv, S, D], cos: f32[t, D], sin: f32[t, D], pos: i32,
                    n_valid: i32) -> (f32[t, H], f32[Hkv, t, D], f32[Hkv, t, D]):
        n1 = attn_norm(x, ln1)
        q, k, v = qkv(n1, wq, wk, wv)
        qr = rope_q(q, cos, sin)
        kr = rope_k(k, cos, sin)
        o = attention(qr, kc, vc, kr, v, n_valid)
        a = o_proj(o, wo)
        h = residual(a, x)
        n2 = mlp_norm(h, ln2)
        m = mlp(n2, wg, wu, wd)
        y = residual(m, h)
        return y, kr, v  # the new rows only: LLM.schedule stores them in place

    return llama_layer, ("ln1", "q", "k", "v", "o", "ln2", "gate", "up", "down")


def _qwen2(c: LLMConfig, t: int, S: int, b: dict):
    if not c.qkv_bias:
        return _llama(c, t, S, b)
    H, D, Hkv, I, NQ, NKV = c.hidden, c.head_dim, c.kv_heads, c.intermediate, c.q_dim, c.kv_dim
    attn_norm, qkv, rope_q, rope_k = b["attn_norm"], b["qkv"], b["rope_q"], b["rope_k"]
    attention, o_proj, residual, mlp_norm, mlp = b["attention"], b["o_proj"], b["residual"], b["mlp_norm"], b["mlp"]

    @sd.dataflow
    def qwen2_layer(x: f32[t, H], ln1: f32[H], wq: f32[NQ, H], wk: f32[NKV, H], wv: f32[NKV, H], bq: f32[NQ],
                    bk: f32[NKV], bv: f32[NKV], wo: f32[H, NQ], ln2: f32[H], wg: f32[I, H], wu: f32[I, H],
                    wd: f32[H, I], kc: f32[Hkv, S, D], vc: f32[Hkv, S, D], cos: f32[t, D], sin: f32[t, D],
                    pos: i32, n_valid: i32) -> (f32[t, H], f32[Hkv, t, D], f32[Hkv, t, D]):
        n1 = attn_norm(x, ln1)
        q, k, v = qkv(n1, wq, wk, wv, bq, bk, bv)
        qr = rope_q(q, cos, sin)
        kr = rope_k(k, cos, sin)
        o = attention(qr, kc, vc, kr, v, n_valid)
        a = o_proj(o, wo)
        h = residual(a, x)
        n2 = mlp_norm(h, ln2)
        m = mlp(n2, wg, wu, wd)
        y = residual(m, h)
        return y, kr, v  # the new rows only: LLM.schedule stores them in place

    return qwen2_layer, ("ln1", "q", "k", "v", "q_b", "k_b", "v_b", "o", "ln2", "gate", "up", "down")


def _gemma3(c: LLMConfig, t: int, S: int, b: dict):
    H, D, Hkv, I, NQ, NKV = c.hidden, c.head_dim, c.kv_heads, c.intermediate, c.q_dim, c.kv_dim
    attn_norm, qkv, q_norm, k_norm = b["attn_norm"], b["qkv"], b["q_norm"], b["k_norm"]
    rope_q, rope_k, attention = b["rope_q"], b["rope_k"], b["attention"]
    o_proj, post_attn_norm, residual = b["o_proj"], b["post_attn_norm"], b["residual"]
    mlp_norm, mlp, post_mlp_norm = b["mlp_norm"], b["mlp"], b["post_mlp_norm"]

    @sd.dataflow
    def gemma3_layer(x: f32[t, H], ln1: f32[H], wq: f32[NQ, H], wk: f32[NKV, H], wv: f32[NKV, H], qn: f32[D],
                     kn: f32[D], wo: f32[H, NQ], pan: f32[H], ln2: f32[H], wg: f32[I, H], wu: f32[I, H],
                     wd: f32[H, I], pmn: f32[H], kc: f32[Hkv, S, D], vc: f32[Hkv, S, D], cos: f32[t, D],
                     sin: f32[t, D], pos: i32, n_valid: i32) -> (f32[t, H], f32[Hkv, t, D], f32[Hkv, t, D]):
        n1 = attn_norm(x, ln1)
        q, k, v = qkv(n1, wq, wk, wv)
        qq = q_norm(q, qn)
        kk = k_norm(k, kn)
        qr = rope_q(qq, cos, sin)
        kr = rope_k(kk, cos, sin)
        o = attention(qr, kc, vc, kr, v, n_valid)
        a = o_proj(o, wo)
        an = post_attn_norm(a, pan)
        h = residual(an, x)
        n2 = mlp_norm(h, ln2)
        m = mlp(n2, wg, wu, wd)
        mn = post_mlp_norm(m, pmn)
        y = residual(mn, h)
        return y, kr, v  # the new rows only: LLM.schedule stores them in place

    return gemma3_layer, ("ln1", "q", "k", "v", "q_norm", "k_norm", "o", "post_attn_norm", "ln2", "gate", "up",
                          "down", "post_mlp_norm")
