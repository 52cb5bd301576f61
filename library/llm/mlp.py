"""Activations and MLP blocks, fp32; weights in nn.Linear layout [out, in].

* GELU, tanh form (GPT-2's gelu_new, Gemma's gelu_pytorch_tanh):
  ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
* SiLU: ``x * sigmoid(x)``.
* SwiGLU (Llama, Qwen2): ``down(silu(gate x) * up x)``; GeGLU (Gemma): ``down(gelu(gate x) * up x)``.
  Gate and up share one pass over x; none of them has a bias.
* GPT-2: ``c_proj(gelu(c_fc x + b_fc)) + b_proj``.
"""
from __future__ import annotations

import math

import streamdsl as sd
from streamdsl import f32

from ._checks import named, sizes

GELU_C = math.sqrt(2.0 / math.pi)


def make_gelu(t: int, n: int):
    """Tanh GELU of X f32[t, n], elementwise."""
    sizes("gelu", t=t, n=n)

    @sd.kernel
    def gelu(X: f32[t, n]) -> f32[t, n]:
        Y: f32[t, n]
        for i, j in sd.grid(t, n):
            x: f32 = X[i, j]
            Y[i, j] = 0.5 * x * (1.0 + sd.tanh(GELU_C * (x + 0.044715 * x * x * x)))
        return Y

    return named(gelu, "gelu", t, n)


def make_silu(t: int, n: int):
    """SiLU of X f32[t, n], elementwise."""
    sizes("silu", t=t, n=n)

    @sd.kernel
    def silu(X: f32[t, n]) -> f32[t, n]:
        Y: f32[t, n]
        for i, j in sd.grid(t, n):
            Y[i, j] = X[i, j] * sd.sigmoid(X[i, j])
        return Y

    return named(silu, "silu", t, n)


def make_swiglu_mlp(t: int, hidden: int, inter: int):
    """``down(silu(X Wg^T) * (X Wu^T))``: X f32[t, hidden], Wg, Wu f32[inter, hidden], Wd f32[hidden, inter]."""
    return _gated_mlp("swiglu_mlp", t, hidden, inter)


def make_geglu_mlp(t: int, hidden: int, inter: int):
    """``down(gelu(X Wg^T) * (X Wu^T))`` (Gemma), with the tanh GELU; shapes as :func:`make_swiglu_mlp`."""
    return _gated_mlp("geglu_mlp", t, hidden, inter)


def _gated_mlp(name: str, t: int, hidden: int, inter: int):
    """The gated MLP, its activation GELU (``geglu_mlp``) or SiLU (``swiglu_mlp``), chosen when the kernel is built."""
    sizes(name, t=t, hidden=hidden, inter=inter)
    gelu = name == "geglu_mlp"

    @sd.kernel
    def gated_mlp(X: f32[t, hidden], Wg: f32[inter, hidden], Wu: f32[inter, hidden],
                  Wd: f32[hidden, inter]) -> f32[t, hidden]:
        Y: f32[t, hidden]
        G: f32[inter]  # one row's accumulators: outputs innermost, lanes over them inside one pipeline
        U: f32[inter]
        A: f32[inter]
        D: f32[hidden]
        for i in range(t):
            for c in range(inter):
                G[c] = 0.0
                U[c] = 0.0
            for k, c in sd.grid(hidden, inter):
                G[c] += X[i, k] * Wg[c, k]
                U[c] += X[i, k] * Wu[c, k]
            for c in range(inter):
                g: f32 = G[c]
                A[c] = (0.5 * g * (1.0 + sd.tanh(GELU_C * (g + 0.044715 * g * g * g))) if gelu
                        else g * sd.sigmoid(g)) * U[c]
            for o in range(hidden):
                D[o] = 0.0
            for c, o in sd.grid(inter, hidden):
                D[o] += A[c] * Wd[o, c]
            for o in range(hidden):
                Y[i, o] = D[o]
        return Y

    return named(gated_mlp, name, t, hidden, inter)


def make_gpt2_mlp(t: int, hidden: int, inter: int):
    """GPT-2 MLP: X f32[t, hidden], W_fc f32[inter, hidden], b_fc f32[inter], W_proj f32[hidden, inter],
    b_proj f32[hidden] -> ``gelu(X W_fc^T + b_fc) W_proj^T + b_proj``."""
    sizes("gpt2_mlp", t=t, hidden=hidden, inter=inter)

    @sd.kernel
    def gpt2_mlp(X: f32[t, hidden], W_fc: f32[inter, hidden], b_fc: f32[inter], W_proj: f32[hidden, inter],
                 b_proj: f32[hidden]) -> f32[t, hidden]:
        Y: f32[t, hidden]
        F: f32[inter]  # one row's accumulators: outputs innermost, lanes over them inside one pipeline
        A: f32[inter]
        D: f32[hidden]
        for i in range(t):
            for c in range(inter):
                F[c] = 0.0
            for k, c in sd.grid(hidden, inter):
                F[c] += X[i, k] * W_fc[c, k]
            for c in range(inter):
                x: f32 = F[c] + b_fc[c]
                A[c] = 0.5 * x * (1.0 + sd.tanh(GELU_C * (x + 0.044715 * x * x * x)))
            for o in range(hidden):
                D[o] = 0.0
            for c, o in sd.grid(inter, hidden):
                D[o] += A[c] * W_proj[o, c]
            for o in range(hidden):
                Y[i, o] = D[o] + b_proj[o]
        return Y

    return named(gpt2_mlp, "gpt2_mlp", t, hidden, inter)
