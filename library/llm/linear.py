"""fp32 linear layers: ``y = x @ W^T (+ b)`` with W in nn.Linear layout f32[out, in].

Also the attention input projections (GPT-2's fused c_attn and the separate
q/k/v projections of Llama, Qwen2 and Gemma), which write straight into the
per-head layout [heads, T, head_dim] the attention kernels read, and the tied
LM head ``logits = h @ E^T``.

GPT-2 checkpoints store Conv1D weights as [in, out]; transpose them to
[out, in] when loading.
"""
from __future__ import annotations

import streamdsl as sd
from streamdsl import f32

from ._checks import divides, named, sizes


def make_linear(t: int, n_in: int, n_out: int, bias: bool = True):
    """``Y = X @ W^T + b``: X f32[t, n_in], W f32[n_out, n_in], b f32[n_out] (omitted when bias=False)."""
    sizes("linear", t=t, n_in=n_in, n_out=n_out)
    if bias:

        @sd.kernel
        def linear(X: f32[t, n_in], W: f32[n_out, n_in], b: f32[n_out]) -> f32[t, n_out]:
            Y: f32[t, n_out]
            A: f32[n_out]  # one row's accumulators: outputs innermost, lanes over o inside one pipeline
            for i in range(t):
                for o in range(n_out):
                    A[o] = 0.0
                for k, o in sd.grid(n_in, n_out):
                    A[o] += X[i, k] * W[o, k]
                for o in range(n_out):
                    Y[i, o] = A[o] + b[o]
            return Y

        return named(linear, "linear", t, n_in, n_out)

    @sd.kernel
    def linear_nobias(X: f32[t, n_in], W: f32[n_out, n_in]) -> f32[t, n_out]:
        Y: f32[t, n_out]
        A: f32[n_out]  # one row's accumulators: outputs innermost, lanes over o inside one pipeline
        for i in range(t):
            for o in range(n_out):
                A[o] = 0.0
            for k, o in sd.grid(n_in, n_out):
                A[o] += X[i, k] * W[o, k]
            for o in range(n_out):
                Y[i, o] = A[o]
        return Y

    return named(linear_nobias, "linear_nobias", t, n_in, n_out)


def make_lm_head(t: int, hidden: int, vocab: int):
    """Tied LM head: ``logits = H @ E^T`` with H f32[t, hidden] and the token embedding E f32[vocab, hidden]."""
    sizes("lm_head", t=t, hidden=hidden, vocab=vocab)

    @sd.kernel
    def lm_head(H: f32[t, hidden], E: f32[vocab, hidden]) -> f32[t, vocab]:
        logits: f32[t, vocab] = 0.0
        for i, v in sd.grid(t, vocab):
            acc: f32 = 0.0
            for k in range(hidden):
                acc += H[i, k] * E[v, k]
            logits[i, v] = acc
        return logits

    return named(lm_head, "lm_head", t, hidden, vocab)


def make_qkv_fused(t: int, hidden: int, heads: int):
    """GPT-2's c_attn: one linear to 3*hidden, split into q, k, v and viewed per head.

    X f32[t, hidden], W f32[3*hidden, hidden] (rows: q, then k, then v), b f32[3*hidden]
    -> (q, k, v), each f32[heads, t, hidden // heads]; head hh is columns hh*D .. hh*D + D - 1
    of its third of the output.
    """
    sizes("qkv_fused", t=t, hidden=hidden, heads=heads)
    divides("qkv_fused", "heads", heads, "hidden", hidden)
    d = hidden // heads
    n3 = 3 * hidden

    @sd.kernel
    def qkv_fused(X: f32[t, hidden], W: f32[n3, hidden], b: f32[n3]) -> (f32[heads, t, d], f32[heads, t, d],
                                                                         f32[heads, t, d]):
        Q: f32[heads, t, d]
        K: f32[heads, t, d]
        V: f32[heads, t, d]
        A: f32[3, d]  # one head's q, k and v accumulators for one row: outputs innermost, lanes inside a pipeline
        for hh, i in sd.grid(heads, t):  # head by head, as the per-head streams leave
            for p, e in sd.grid(3, d):
                A[p, e] = 0.0
            for k, p, e in sd.grid(hidden, 3, d):
                A[p, e] += X[i, k] * W[p * hidden + hh * d + e, k]
            for e in range(d):
                Q[hh, i, e] = A[0, e] + b[hh * d + e]
                K[hh, i, e] = A[1, e] + b[hidden + hh * d + e]
                V[hh, i, e] = A[2, e] + b[2 * hidden + hh * d + e]
        return Q, K, V

    return named(qkv_fused, "qkv_fused", t, hidden, heads)


def make_qkv(t: int, hidden: int, q_heads: int, kv_heads: int, head_dim: int, bias: bool = False):
    """Separate q/k/v projections (Llama, Gemma; Qwen2 with ``bias=True``).

    X f32[t, hidden], Wq f32[q_heads*head_dim, hidden], Wk and Wv f32[kv_heads*head_dim, hidden]
    (+ bq, bk, bv when bias) -> q f32[q_heads, t, head_dim], k and v f32[kv_heads, t, head_dim].
    """
    sizes("qkv", t=t, hidden=hidden, q_heads=q_heads, kv_heads=kv_heads, head_dim=head_dim)
    divides("qkv", "kv_heads", kv_heads, "q_heads", q_heads)
    nq, nkv = q_heads * head_dim, kv_heads * head_dim
    if bias:

        @sd.kernel
        def qkv_bias(X: f32[t, hidden], Wq: f32[nq, hidden], Wk: f32[nkv, hidden], Wv: f32[nkv, hidden],
                     bq: f32[nq], bk: f32[nkv], bv: f32[nkv]) -> (f32[q_heads, t, head_dim],
                                                                  f32[kv_heads, t, head_dim],
                                                                  f32[kv_heads, t, head_dim]):
            Q: f32[q_heads, t, head_dim]
            K: f32[kv_heads, t, head_dim]
            V: f32[kv_heads, t, head_dim]
            AQ: f32[head_dim]  # one head's accumulators for one row: outputs innermost, lanes inside a pipeline
            AK: f32[head_dim]
            AV: f32[head_dim]
            for hh, i in sd.grid(q_heads, t):  # head by head, as the per-head streams leave
                for e in range(head_dim):
                    AQ[e] = 0.0
                for k, e in sd.grid(hidden, head_dim):
                    AQ[e] += X[i, k] * Wq[hh * head_dim + e, k]
                for e in range(head_dim):
                    Q[hh, i, e] = AQ[e] + bq[hh * head_dim + e]
            for hh, i in sd.grid(kv_heads, t):
                for e in range(head_dim):
                    AK[e] = 0.0
                    AV[e] = 0.0
                for k, e in sd.grid(hidden, head_dim):
                    AK[e] += X[i, k] * Wk[hh * head_dim + e, k]
                    AV[e] += X[i, k] * Wv[hh * head_dim + e, k]
                for e in range(head_dim):
                    K[hh, i, e] = AK[e] + bk[hh * head_dim + e]
                    V[hh, i, e] = AV[e] + bv[hh * head_dim + e]
            return Q, K, V

        return named(qkv_bias, "qkv_bias", t, hidden, q_heads, kv_heads, head_dim)

    @sd.kernel
    def qkv(X: f32[t, hidden], Wq: f32[nq, hidden], Wk: f32[nkv, hidden], Wv: f32[nkv, hidden]) -> (
            f32[q_heads, t, head_dim], f32[kv_heads, t, head_dim], f32[kv_heads, t, head_dim]):
        Q: f32[q_heads, t, head_dim]
        K: f32[kv_heads, t, head_dim]
        V: f32[kv_heads, t, head_dim]
        AQ: f32[head_dim]  # one head's accumulators for one row: outputs innermost, lanes inside a pipeline
        AK: f32[head_dim]
        AV: f32[head_dim]
        for hh, i in sd.grid(q_heads, t):  # head by head, as the per-head streams leave
            for e in range(head_dim):
                AQ[e] = 0.0
            for k, e in sd.grid(hidden, head_dim):
                AQ[e] += X[i, k] * Wq[hh * head_dim + e, k]
            for e in range(head_dim):
                Q[hh, i, e] = AQ[e]
        for hh, i in sd.grid(kv_heads, t):
            for e in range(head_dim):
                AK[e] = 0.0
                AV[e] = 0.0
            for k, e in sd.grid(hidden, head_dim):
                AK[e] += X[i, k] * Wk[hh * head_dim + e, k]
                AV[e] += X[i, k] * Wv[hh * head_dim + e, k]
            for e in range(head_dim):
                K[hh, i, e] = AK[e]
                V[hh, i, e] = AV[e]
        return Q, K, V

    return named(qkv, "qkv", t, hidden, q_heads, kv_heads, head_dim)
