"""Quantised decoder layers (W8A8, W4A8): every projection is an integer linear.

The layer is the fp32 layer of :mod:`.layers` with each matmul replaced by
the bit-exact quantised linear of :mod:`.quant` (int8 activations per token,
int8 or int4 weights per output channel, int32 accumulation); norms, RoPE,
attention, softmax and the activation functions stay fp32, as in the paper's
W4A8 designs.  The projections then produce ``[t, n]`` tensors, so the
attention side gets a head split (``[t, heads*d] -> [heads, t, d]``) and
the gated MLP an elementwise product as blocks of their own.
"""
from __future__ import annotations

import functools

import streamdsl as sd
from streamdsl import f32, i8, i32

from ._checks import named, sizes
from .attention import make_attention_decode
from .config import FULL, LLMConfig
from .head import make_residual_add
from .layers import LayerSpec
from .mlp import make_gelu, make_silu
from .norms import make_head_rmsnorm, make_layernorm, make_rmsnorm
from .quant import I4, make_linear_w4a8, make_linear_w8a8
from .rope import make_rope

SCHEMES = {"w8a8": 8, "w4a8": 4}


def make_split_heads(t: int, heads: int, d: int, first: int = 0):
    """Columns ``first .. first + heads*d`` of X f32[t, n] as f32[heads, t, d] (head h: columns first + h*d ..)."""
    sizes("split_heads", t=t, heads=heads, d=d)
    n = first + heads * d

    @sd.kernel
    def split_heads(X: f32[t, n]) -> f32[heads, t, d]:
        Y: f32[heads, t, d]
        for h, i, e in sd.grid(heads, t, d):
            Y[h, i, e] = X[i, first + h * d + e]
        return Y

    return named(split_heads, "split_heads", t, heads, d, n)


def make_split_qkv(t: int, heads: int, d: int):
    """GPT-2's fused q|k|v projection X f32[t, 3*heads*d] as three f32[heads, t, d]."""
    sizes("split_qkv", t=t, heads=heads, d=d)
    w = heads * d
    n = 3 * w

    @sd.kernel
    def split_qkv(X: f32[t, n]) -> (f32[heads, t, d], f32[heads, t, d], f32[heads, t, d]):
        Q: f32[heads, t, d]
        K: f32[heads, t, d]
        V: f32[heads, t, d]
        for h, i, e in sd.grid(heads, t, d):
            Q[h, i, e] = X[i, h * d + e]
            K[h, i, e] = X[i, w + h * d + e]
            V[h, i, e] = X[i, 2 * w + h * d + e]
        return Q, K, V

    return named(split_qkv, "split_qkv", t, heads, d)


def make_mul(t: int, n: int):
    """``A * B`` elementwise for A, B f32[t, n] (the gate of a gated MLP)."""
    sizes("mul", t=t, n=n)

    @sd.kernel
    def mul(A: f32[t, n], B: f32[t, n]) -> f32[t, n]:
        Y: f32[t, n]
        for i, j in sd.grid(t, n):
            Y[i, j] = A[i, j] * B[i, j]
        return Y

    return named(mul, "mul", t, n)


def make_qlayer(c: LLMConfig, t: int, S: int, kind: str, scheme: str, pack: bool = True) -> LayerSpec:
    """The quantised layer of ``c`` (``scheme`` "w8a8" or "w4a8") for ``t`` new tokens and a cache of ``S``;
    ``pack``: W4A8 linears accumulate two outputs a DSP48E2 where their sizes allow (``quant.packs``)."""
    bits = SCHEMES[scheme]
    WT = i8 if bits == 8 else I4
    lin = make_linear_w8a8 if bits == 8 else functools.partial(make_linear_w4a8, pack=pack)
    H, D, Hq, Hkv, I, NQ, NKV = c.hidden, c.head_dim, c.heads, c.kv_heads, c.intermediate, c.q_dim, c.kv_dim
    window = c.sliding_window if kind != FULL else None
    attention = make_attention_decode(Hq, Hkv, S, D, t, scale=c.attn_scale, window=window)
    residual = make_residual_add(t, H)
    if c.family == "gpt2":
        H3 = 3 * H
        norm = make_layernorm(t, H, c.norm_eps)
        qkv_proj, split = lin(t, H, H3, bias=True), make_split_qkv(t, Hq, D)
        o_proj, fc, proj, act = lin(t, H, H, bias=True), lin(t, H, I, bias=True), lin(t, I, H, bias=True), make_gelu(t, I)

        @sd.dataflow
        def gpt2_qlayer(x: f32[t, H], ln1: f32[H], ln1_b: f32[H], wqkv: WT[H3, H], sqkv: f32[H3], bqkv: f32[H3],
                        wo: WT[H, H], so: f32[H], bo: f32[H], ln2: f32[H], ln2_b: f32[H], wfc: WT[I, H], sfc: f32[I],
                        bfc: f32[I], wpr: WT[H, I], spr: f32[H], bpr: f32[H], kc: f32[Hq, S, D], vc: f32[Hq, S, D],
                        pos: i32, n_valid: i32) -> (f32[t, H], f32[Hq, t, D], f32[Hq, t, D]):
            n1 = norm(x, ln1, ln1_b)
            qkv = qkv_proj(n1, wqkv, sqkv, bqkv)
            q, k, v = split(qkv)
            o = attention(q, kc, vc, k, v, n_valid)
            a = o_proj(o, wo, so, bo)
            h = residual(a, x)
            n2 = norm(h, ln2, ln2_b)
            f = fc(n2, wfc, sfc, bfc)
            g = act(f)
            m = proj(g, wpr, spr, bpr)
            y = residual(m, h)
            return y, k, v  # the new rows only: LLM.schedule stores them in place

        names = ("ln1", "ln1_b", "qkv_w*", "qkv_b", "o*", "o_b", "ln2", "ln2_b", "fc*", "fc_b", "proj*", "proj_b")
        return LayerSpec(gpt2_qlayer, names, kind, t, S)

    one_plus = c.norm == "rmsnorm1p"
    norm = make_rmsnorm(t, H, c.norm_eps, unit_offset=one_plus)
    bias = c.qkv_bias
    q_proj, kv_proj = lin(t, H, NQ, bias=bias), lin(t, H, NKV, bias=bias)
    q_heads, kv_heads = make_split_heads(t, Hq, D), make_split_heads(t, Hkv, D)
    rope_q, rope_k = make_rope(Hq, t, D), make_rope(Hkv, t, D)
    o_proj = lin(t, NQ, H)
    gate_proj, down_proj = lin(t, H, I), lin(t, I, H)
    act = make_silu(t, I) if c.activation == "silu" else make_gelu(t, I)
    mul = make_mul(t, I)
    if c.family == "gemma3":
        q_norm = make_head_rmsnorm(Hq, t, D, c.norm_eps, unit_offset=one_plus)
        k_norm = make_head_rmsnorm(Hkv, t, D, c.norm_eps, unit_offset=one_plus)

        @sd.dataflow
        def gemma3_qlayer(x: f32[t, H], ln1: f32[H], wq: WT[NQ, H], sq: f32[NQ], wk: WT[NKV, H], sk: f32[NKV],
                          wv: WT[NKV, H], sv: f32[NKV], qn: f32[D], kn: f32[D], wo: WT[H, NQ], so: f32[H],
                          pan: f32[H], ln2: f32[H], wg: WT[I, H], sg: f32[I], wu: WT[I, H], su: f32[I],
                          wd: WT[H, I], sd_: f32[H], pmn: f32[H], kc: f32[Hkv, S, D], vc: f32[Hkv, S, D],
                          cos: f32[t, D], sin: f32[t, D], pos: i32,
                          n_valid: i32) -> (f32[t, H], f32[Hkv, t, D], f32[Hkv, t, D]):
            n1 = norm(x, ln1)
            q2 = q_proj(n1, wq, sq)
            k2 = kv_proj(n1, wk, sk)
            v2 = kv_proj(n1, wv, sv)
            q = q_heads(q2)
            k = kv_heads(k2)
            v = kv_heads(v2)
            qq = q_norm(q, qn)
            kk = k_norm(k, kn)
            qr = rope_q(qq, cos, sin)
            kr = rope_k(kk, cos, sin)
            o = attention(qr, kc, vc, kr, v, n_valid)
            a = o_proj(o, wo, so)
            an = norm(a, pan)
            h = residual(an, x)
            n2 = norm(h, ln2)
            g = gate_proj(n2, wg, sg)
            u = gate_proj(n2, wu, su)
            ga = act(g)
            gu = mul(ga, u)
            m = down_proj(gu, wd, sd_)
            mn = norm(m, pmn)
            y = residual(mn, h)
            return y, kr, v  # the new rows only: LLM.schedule stores them in place

        names = ("ln1", "q*", "k*", "v*", "q_norm", "k_norm", "o*", "post_attn_norm", "ln2", "gate*", "up*", "down*",
                 "post_mlp_norm")
        return LayerSpec(gemma3_qlayer, names, kind, t, S)
    if bias:

        @sd.dataflow
        def qwen2_qlayer(x: f32[t, H], ln1: f32[H], wq: WT[NQ, H], sq: f32[NQ], bq: f32[NQ], wk: WT[NKV, H],
                         sk: f32[NKV], bk: f32[NKV], wv: WT[NKV, H], sv: f32[NKV], bv: f32[NKV], wo: WT[H, NQ],
                         so: f32[H], ln2: f32[H], wg: WT[I, H], sg: f32[I], wu: WT[I, H], su: f32[I],
                         wd: WT[H, I], sd_: f32[H], kc: f32[Hkv, S, D], vc: f32[Hkv, S, D], cos: f32[t, D],
                         sin: f32[t, D], pos: i32, n_valid: i32) -> (f32[t, H], f32[Hkv, t, D], f32[Hkv, t, D]):
            n1 = norm(x, ln1)
            q2 = q_proj(n1, wq, sq, bq)
            k2 = kv_proj(n1, wk, sk, bk)
            v2 = kv_proj(n1, wv, sv, bv)
            q = q_heads(q2)
            k = kv_heads(k2)
            v = kv_heads(v2)
            qr = rope_q(q, cos, sin)
            kr = rope_k(k, cos, sin)
            o = attention(qr, kc, vc, kr, v, n_valid)
            a = o_proj(o, wo, so)
            h = residual(a, x)
            n2 = norm(h, ln2)
            g = gate_proj(n2, wg, sg)
            u = gate_proj(n2, wu, su)
            ga = act(g)
            gu = mul(ga, u)
            m = down_proj(gu, wd, sd_)
            y = residual(m, h)
            return y, kr, v  # the new rows only: LLM.schedule stores them in place

        names = ("ln1", "q*", "q_b", "k*", "k_b", "v*", "v_b", "o*", "ln2", "gate*", "up*", "down*")
        return LayerSpec(qwen2_qlayer, names, kind, t, S)

    @sd.dataflow
    def llama_qlayer(x: f32[t, H], ln1: f32[H], wq: WT[NQ, H], sq: f32[NQ], wk: WT[NKV, H], sk: f32[NKV],
                     wv: WT[NKV, H], sv: f32[NKV], wo: WT[H, NQ], so: f32[H], ln2: f32[H], wg: WT[I, H],
                     sg: f32[I], wu: WT[I, H], su: f32[I], wd: WT[H, I], sd_: f32[H], kc: f32[Hkv, S, D],
                     vc: f32[Hkv, S, D], cos: f32[t, D], sin: f32[t, D], pos: i32,
                     n_valid: i32) -> (f32[t, H], f32[Hkv, t, D], f32[Hkv, t, D]):
        n1 = norm(x, ln1)
        q2 = q_proj(n1, wq, sq)
        k2 = kv_proj(n1, wk, sk)
        v2 = kv_proj(n1, wv, sv)
        q = q_heads(q2)
        k = kv_heads(k2)
        v = kv_heads(v2)
        qr = rope_q(q, cos, sin)
        kr = rope_k(k, cos, sin)
        o = attention(qr, kc, vc, kr, v, n_valid)
        a = o_proj(o, wo, so)
        h = residual(a, x)
        n2 = norm(h, ln2)
        g = gate_proj(n2, wg, sg)
        u = gate_proj(n2, wu, su)
        ga = act(g)
        gu = mul(ga, u)
        m = down_proj(gu, wd, sd_)
        y = residual(m, h)
        return y, kr, v  # the new rows only: LLM.schedule stores them in place

    names = ("ln1", "q*", "k*", "v*", "o*", "ln2", "gate*", "up*", "down*")
    return LayerSpec(llama_qlayer, names, kind, t, S)
