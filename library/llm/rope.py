"""Rotary position embedding, half-split (GPT-NeoX / Hugging Face ``rotate_half``) pairing.

``y = x * cos + rotate_half(x) * sin`` with ``rotate_half(x) = cat(-x[D/2:], x[:D/2])``:
dimension i rotates with i + D/2.  (Meta's original checkpoints and llama.cpp's GGUF
Llama tensors pair (2i, 2i+1) instead; permute their q/k rows to use this kernel.)

The cos/sin tables depend only on positions, so they are kernel inputs computed here
in NumPy (fp32, as transformers computes them), for the kernels and the NumPy model
alike: :func:`rope_inv_freq` (optionally with Llama-3 frequency scaling, and any theta,
e.g. Gemma's 1e4 for sliding and 1e6 for global layers) and :func:`rope_tables`.
"""
from __future__ import annotations

import math

import numpy as np

import streamdsl as sd
from streamdsl import f32

from ._checks import even, fail, named, positive_float, sizes
from .config import RopeScaling

LLAMA3_SCALING = RopeScaling()  # Llama 3.2's rope_scaling (factor 32, low/high frequency factors 1 and 4, 8192)


def rope_inv_freq(head_dim: int, theta: float = 10000.0, llama3: RopeScaling | None = None) -> np.ndarray:
    """``inv_freq[i] = 1 / theta**(2i / head_dim)`` for i < head_dim/2, in fp32 (f32[head_dim // 2]).

    ``llama3`` (a config's ``rope_scaling``, e.g. :data:`LLAMA3_SCALING`) divides low frequencies by
    ``factor`` and blends the medium band, as transformers' ``_compute_llama3_parameters``.
    """
    sizes("rope_inv_freq", head_dim=head_dim)
    even("rope_inv_freq", "head_dim", head_dim)
    theta = positive_float("rope_inv_freq", "theta", theta)
    exps = np.arange(0, head_dim, 2, dtype=np.int64).astype(np.float32) / np.float32(head_dim)
    inv = (np.float32(1.0) / np.power(np.float32(theta), exps)).astype(np.float32)
    if llama3 is None:
        return inv
    if not isinstance(llama3, RopeScaling):
        fail(f"rope_inv_freq: llama3 must be a RopeScaling, got {type(llama3).__name__}",
             hint="pass the config's rope_scaling or LLAMA3_SCALING (config.RopeScaling)")
    factor = np.float32(llama3.factor)
    low, high = float(llama3.low_freq_factor), float(llama3.high_freq_factor)
    old = float(llama3.original_max_positions)
    wavelen = np.float32(2 * math.pi) / inv
    scaled = np.where(wavelen > old / low, inv / factor, inv).astype(np.float32)
    smooth = ((np.float32(old) / wavelen - np.float32(low)) / np.float32(high - low)).astype(np.float32)
    smoothed = ((np.float32(1) - smooth) * scaled / factor + smooth * scaled).astype(np.float32)
    medium = ~(wavelen < old / high) & ~(wavelen > old / low)
    return np.where(medium, smoothed, scaled).astype(np.float32)


def rope_tables(positions, inv_freq: np.ndarray, attention_scaling: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin tables f32[len(positions), 2 * len(inv_freq)] for the given absolute positions.

    ``emb = cat(freqs, freqs)`` with ``freqs = pos * inv_freq``; both tables are scaled by
    ``attention_scaling`` (1.0 for default and llama3 RoPE).  Decode at position p uses
    ``rope_tables([p], ...)``; prefill after ``past`` tokens uses ``past + arange(T)``.
    """
    pos = np.asarray(positions, dtype=np.float32).reshape(-1)
    freqs = pos[:, None] * np.asarray(inv_freq, dtype=np.float32)[None, :]
    emb = np.concatenate([freqs, freqs], axis=1)
    s = np.float32(attention_scaling)
    return (np.cos(emb) * s).astype(np.float32), (np.sin(emb) * s).astype(np.float32)


def make_rope(heads: int, t: int, head_dim: int):
    """Apply RoPE to X f32[heads, t, head_dim] with tables cos, sin f32[t, head_dim] -> f32[heads, t, head_dim]."""
    sizes("rope", heads=heads, t=t, head_dim=head_dim)
    even("rope", "head_dim", head_dim)
    half = head_dim // 2

    @sd.kernel
    def rope(X: f32[heads, t, head_dim], cos: f32[t, head_dim], sin: f32[t, head_dim]) -> f32[heads, t, head_dim]:
        Y: f32[heads, t, head_dim]
        for h, i, e in sd.grid(heads, t, half):
            lo: f32 = X[h, i, e]
            hi: f32 = X[h, i, e + half]
            Y[h, i, e] = lo * cos[i, e] - hi * sin[i, e]
            Y[h, i, e + half] = hi * cos[i, e + half] + lo * sin[i, e + half]
        return Y

    return named(rope, "rope", heads, t, head_dim)
