"""Normalisation blocks: LayerNorm (GPT-2), RMSNorm (Llama, Qwen2), Gemma's RMSNorm(1 + w),
and the per-head Q/K norm of Gemma3.  All in fp32, one row at a time.

LayerNorm: ``y = (x - mean) * rsqrt(var + eps) * w + b`` with the biased variance
(mean of squared deviations) and eps inside the square root, as ``torch.nn.LayerNorm``.
RMSNorm: ``y = x * rsqrt(mean(x^2) + eps) * w``; the Gemma form multiplies by ``(1 + w)``.
"""
from __future__ import annotations

import streamdsl as sd
from streamdsl import f32

from ._checks import named, positive_float, sizes


def make_layernorm(t: int, n: int, eps: float = 1e-5):
    """LayerNorm over the last axis of X: f32[t, n] with weight and bias f32[n]."""
    sizes("layernorm", t=t, n=n)
    eps = positive_float("layernorm", "eps", eps)

    @sd.kernel
    def layernorm(X: f32[t, n], w: f32[n], b: f32[n]) -> f32[t, n]:
        Y: f32[t, n]
        for i in range(t):
            mean: f32 = 0.0
            for j in range(n):
                mean += X[i, j]
            mean = mean / n
            var: f32 = 0.0
            for j in range(n):
                dev: f32 = X[i, j] - mean
                var += dev * dev
            var = var / n
            inv: f32 = sd.rsqrt(var + eps)
            for j in range(n):
                Y[i, j] = (X[i, j] - mean) * inv * w[j] + b[j]
        return Y

    return named(layernorm, "layernorm", t, n)


def make_rmsnorm(t: int, n: int, eps: float = 1e-6, unit_offset: bool = False):
    """RMSNorm over the last axis of X: f32[t, n] with weight f32[n].

    ``unit_offset=False`` is Llama/Qwen2 (``x * rsqrt(mean(x^2) + eps) * w``);
    ``unit_offset=True`` is Gemma3 (``... * (1 + w)``, weights initialised to 0).
    Also the final norm of every model.
    """
    sizes("rmsnorm", t=t, n=n)
    eps = positive_float("rmsnorm", "eps", eps)

    @sd.kernel
    def rmsnorm(X: f32[t, n], w: f32[n]) -> f32[t, n]:
        Y: f32[t, n]
        for i in range(t):
            ss: f32 = 0.0
            for j in range(n):
                ss += X[i, j] * X[i, j]
            inv: f32 = sd.rsqrt(ss / n + eps)
            for j in range(n):
                Y[i, j] = X[i, j] * inv * ((1.0 + w[j]) if unit_offset else w[j])  # chosen when the kernel is built
        return Y

    return named(rmsnorm, "rmsnorm_gemma" if unit_offset else "rmsnorm", t, n)


def make_head_rmsnorm(h: int, t: int, d: int, eps: float = 1e-6, unit_offset: bool = True):
    """Gemma3's q_norm / k_norm: RMSNorm over head_dim of X: f32[h, t, d], one weight f32[d] for all heads.

    Applied to q and k after the projection and before RoPE (values are not normed).
    ``unit_offset=True`` is Gemma's ``(1 + w)``; False gives the plain ``* w`` form (Qwen3).
    """
    sizes("head_rmsnorm", h=h, t=t, d=d)
    eps = positive_float("head_rmsnorm", "eps", eps)

    @sd.kernel
    def head_rmsnorm(X: f32[h, t, d], w: f32[d]) -> f32[h, t, d]:
        Y: f32[h, t, d]
        for hh, i in sd.grid(h, t):
            ss: f32 = 0.0
            for e in range(d):
                ss += X[hh, i, e] * X[hh, i, e]
            inv: f32 = sd.rsqrt(ss / d + eps)
            for e in range(d):
                Y[hh, i, e] = X[hh, i, e] * inv * ((1.0 + w[e]) if unit_offset else w[e])
        return Y

    return named(head_rmsnorm, "head_rmsnorm_gemma" if unit_offset else "head_rmsnorm", h, t, d)
