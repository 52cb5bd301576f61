"""Scaled dot-product attention (prefill and decode), row softmax and the KV-cache append.

Layouts follow transformers' eager attention: q f32[q_heads, T, D], k and v
f32[kv_heads, T, D] (or a cache f32[kv_heads, S, D]).  Query head ``h`` reads kv
head ``h // (q_heads // kv_heads)`` (GQA; MQA is kv_heads = 1); the loops run over
kv head ``g`` and its ``group`` query heads ``r``, so ``h = g * group + r`` and
every index stays affine.  The output is already merged for o_proj:
f32[T, q_heads * D] with head h in columns h*D .. h*D + D - 1.

Softmax is fp32 with the row max subtracted.  Masking is by loop bounds rather
than an additive -inf mask: query position p reads keys ``lo(p) <= j <= p``
with ``lo(p) = max(0, p - window + 1)`` for a sliding window (Gemma's
``kv_pos > q_pos - window``) and 0 otherwise, so masked keys cost nothing.
"""
from __future__ import annotations

import math

import streamdsl as sd
from streamdsl import f32, i32

from ._checks import divides, fail, named, positive_float, sizes


def _attention_sizes(block, q_heads, kv_heads, head_dim, scale, window, **more):
    sizes(block, q_heads=q_heads, kv_heads=kv_heads, head_dim=head_dim, **more)
    divides(block, "kv_heads", kv_heads, "q_heads", q_heads)
    if window is not None:
        sizes(block, window=window)
    scale = 1.0 / math.sqrt(head_dim) if scale is None else positive_float(block, "scale", scale)
    return q_heads // kv_heads, scale


def make_attention_prefill(q_heads: int, kv_heads: int, t: int, head_dim: int, scale: float | None = None,
                           window: int | None = None):
    """Causal self-attention over t positions: (Q f32[q_heads, t, D], K, V f32[kv_heads, t, D]) -> f32[t, q_heads*D].

    ``scale`` defaults to 1/sqrt(D) (Gemma3 passes query_pre_attn_scalar**-0.5);
    ``window`` enables the sliding-window rule ``kv_pos > q_pos - window``.
    """
    group, scale = _attention_sizes("attention_prefill", q_heads, kv_heads, head_dim, scale, window, t=t)
    win = t if window is None else min(window, t)  # a window of t or more is plain causal attention
    width = q_heads * head_dim

    @sd.kernel
    def attention_prefill(Q: f32[q_heads, t, head_dim], K: f32[kv_heads, t, head_dim],
                          V: f32[kv_heads, t, head_dim]) -> f32[t, width]:
        O: f32[t, width]
        P: f32[t] = 0.0  # one query's scores, then its unnormalised probabilities
        for g, r, i in sd.grid(kv_heads, group, t):
            h: i32 = g * group + r
            lo: i32 = max(0, i - win + 1)
            for j in range(lo, i + 1):
                dot: f32 = 0.0
                for e in range(head_dim):
                    dot += Q[h, i, e] * K[g, j, e]
                P[j] = dot * scale
            mx: f32 = P[lo]
            for j in range(lo + 1, i + 1):
                mx = max(mx, P[j])
            total: f32 = 0.0
            for j in range(lo, i + 1):
                P[j] = sd.exp(P[j] - mx)
                total += P[j]
            for e in range(head_dim):
                acc: f32 = 0.0
                for j in range(lo, i + 1):
                    acc += P[j] * V[g, j, e]
                O[i, h * head_dim + e] = acc / total
        return O

    return named(attention_prefill, "attention_prefill" if window is None else "attention_prefill_sw",
                 q_heads, kv_heads, t, head_dim)


def make_attention_decode(q_heads: int, kv_heads: int, cache_len: int, head_dim: int, t: int = 1,
                          scale: float | None = None, window: int | None = None):
    """Attention of t new queries (t = 1: decode; more: chunked prefill) against a KV cache and their own keys.

    (Q f32[q_heads, t, D], Kc, Vc f32[kv_heads, cache_len, D], Kn, Vn f32[kv_heads, t, D], n_valid: i32)
    -> f32[t, q_heads*D].

    ``n_valid`` counts the positions filled once the t new tokens are in, so the new queries sit at
    positions ``p .. n_valid - 1`` (``p = n_valid - t``) and query i reads keys ``lo <= j <= p + i``
    (``lo`` from ``window`` as in prefill).  Keys and values ``j < p`` come from the cache; those at
    ``p .. p + t - 1`` are the new ones ``Kn``/``Vn`` whatever the cache holds there, as if they had been
    appended first (transformers appends before attending; :func:`make_kv_append` does that on its own),
    so the layer never copies the cache to put the new rows in.  The new queries, keys and values are
    copied on chip first, so the score and value phases read the cache in its order (head, position, as
    it streams in) and nothing else from a stream.  Precondition: ``t <= n_valid <= cache_len``;
    larger values are clamped to cache_len so the kernel never reads outside the cache.
    """
    group, scale = _attention_sizes("attention_decode", q_heads, kv_heads, head_dim, scale, window,
                                    cache_len=cache_len, t=t)
    if t > cache_len:
        fail(f"attention_decode: t={t} new queries do not fit in a cache of {cache_len} positions",
             hint="the cache must hold the new tokens too: cache_len >= t")
    win = cache_len if window is None else min(window, cache_len)
    width = q_heads * head_dim
    last = t - 1

    @sd.kernel
    def attention_decode(Q: f32[q_heads, t, head_dim], Kc: f32[kv_heads, cache_len, head_dim],
                         Vc: f32[kv_heads, cache_len, head_dim], Kn: f32[kv_heads, t, head_dim],
                         Vn: f32[kv_heads, t, head_dim], n_valid: i32) -> f32[t, width]:
        O: f32[t, width]
        S: f32[q_heads, t, cache_len]  # scores, then probabilities: a row per head and query
        M: f32[q_heads, t]
        T: f32[q_heads, t]
        T4: f32[q_heads, t, 4]  # the softmax sums in 4 interleaved parts: a key j adds to part j % 4, so a part
        # recurs every 4th key, the fp32 add's latency, and a key of every head retires each cycle
        Qb: f32[q_heads, t, head_dim]  # the new tokens' queries, keys and values, on chip before the phases
        Kb: f32[kv_heads, t, head_dim]  # over the cache: those then move only the cache's rows, which stream in
        Vb: f32[kv_heads, t, head_dim]  # (in their order: head, position) while the layer computes these
        n: i32 = max(min(n_valid, cache_len), t)
        p: i32 = n - t  # the new rows: keys and values p <= j < n are Kn[j - p], Vn[j - p]
        # (in the order a q|k|v split writes them, each all heads; the query row outermost, so that no copy is
        # fused into the scores' nest by head)
        for i, h, e in sd.grid(t, q_heads, head_dim):
            Qb[h, i, e] = Q[h, i, e]
        for i, g, e in sd.grid(t, kv_heads, head_dim):
            Kb[g, i, e] = Kn[g, i, e]
        for i, g, e in sd.grid(t, kv_heads, head_dim):
            Vb[g, i, e] = Vn[g, i, e]
        # each phase is one perfect loop nest, which Vitis flattens into a single pipeline over every head; the
        # cache's keys and values are read in its order, each row by a head's group of queries
        for g, i, j, r in sd.grid(kv_heads, t, cache_len, group):  # a key per cycle: its head_dim products
            h: i32 = g * group + r
            pos: i32 = p + i
            lo: i32 = max(0, pos - win + 1)
            dot: f32 = 0.0
            for e in range(head_dim):  # (the new row's index clamped: in range, and read, only when it is one)
                dot += Qb[h, i, e] * (Kb[g, max(0, min(j - p, last)), e] if j >= p and j < n else Kc[g, j, e])
            S[h, i, j] = dot * scale if j >= lo and j <= pos else -3.0e38  # keys outside lo..pos masked out
        for h, i in sd.grid(q_heads, t):
            M[h, i] = -3.0e38
        for h, i, q in sd.grid(q_heads, t, 4):
            T4[h, i, q] = 0.0
        for i, j, h in sd.grid(t, cache_len, q_heads):  # the heads side by side: a key of every head per cycle
            M[h, i] = max(M[h, i], S[h, i, j])
        for i, j, h in sd.grid(t, cache_len, q_heads):
            S[h, i, j] = sd.exp(S[h, i, j] - M[h, i])  # a masked key: exp(-3e38 - max) = 0, adds nothing
            T4[h, i, j % 4] += S[h, i, j]
        for h, i in sd.grid(q_heads, t):
            T[h, i] = (T4[h, i, 0] + T4[h, i, 1]) + (T4[h, i, 2] + T4[h, i, 3])
        for i, h, e in sd.grid(t, q_heads, head_dim):
            O[i, h * head_dim + e] = 0.0
        for i, j, g, r in sd.grid(t, cache_len, kv_heads, group):  # a value row into head_dim accumulators
            for e in range(head_dim):
                O[i, (g * group + r) * head_dim + e] += S[g * group + r, i, j] * (
                    Vb[g, max(0, min(j - p, last)), e] if j >= p and j < n else Vc[g, j, e])
        for i, h, e in sd.grid(t, q_heads, head_dim):
            O[i, h * head_dim + e] = O[i, h * head_dim + e] / T[h, i]
        return O

    return named(attention_decode, "attention_decode" if window is None else "attention_decode_sw",
                 q_heads, kv_heads, cache_len, head_dim, t)


def make_kv_append(kv_heads: int, cache_len: int, head_dim: int, t: int = 1):
    """Write t new keys or values X f32[kv_heads, t, D] into a cache at positions pos..pos+t-1.

    (C f32[kv_heads, cache_len, D], X f32[kv_heads, t, D], pos: i32) -> the updated cache
    (a new tensor: kernel parameters are read-only).  Precondition ``0 <= pos <= cache_len - t``;
    ``pos`` is clamped to that range.
    """
    sizes("kv_append", kv_heads=kv_heads, cache_len=cache_len, head_dim=head_dim, t=t)
    if t > cache_len:
        fail(f"kv_append: t={t} new tokens do not fit in a cache of {cache_len} positions",
             hint="cache_len >= t")
    last = cache_len - t

    @sd.kernel
    def kv_append(C: f32[kv_heads, cache_len, head_dim], X: f32[kv_heads, t, head_dim],
                  pos: i32) -> f32[kv_heads, cache_len, head_dim]:
        Y: f32[kv_heads, cache_len, head_dim]
        p: i32 = max(0, min(pos, last))
        for g, j, e in sd.grid(kv_heads, cache_len, head_dim):
            Y[g, j, e] = C[g, j, e]
        for g, i, e in sd.grid(kv_heads, t, head_dim):
            Y[g, p + i, e] = X[g, i, e]
        return Y

    return named(kv_append, "kv_append", kv_heads, cache_len, head_dim, t)


def make_softmax(t: int, n: int):
    """Row softmax of X f32[t, n] in fp32, subtracting the row max."""
    sizes("softmax", t=t, n=n)

    @sd.kernel
    def softmax(X: f32[t, n]) -> f32[t, n]:
        Y: f32[t, n]
        for i in range(t):
            mx: f32 = X[i, 0]
            for j in range(1, n):
                mx = max(mx, X[i, j])
            total: f32 = 0.0
            for j in range(n):
                Y[i, j] = sd.exp(X[i, j] - mx)
                total += Y[i, j]
            for j in range(n):
                Y[i, j] = Y[i, j] / total
        return Y

    return named(softmax, "softmax", t, n)
