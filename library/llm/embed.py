"""Token embeddings: a gather of table rows by token id.

* Llama, Qwen2: ``h = E[ids]``.
* GPT-2: ``h = wte[ids] + wpe[past_len + arange(T)]`` (learned absolute positions).
* Gemma3: ``h = E[ids] * sqrt(hidden)``, the scale rounded to fp32 (it is 34.0 only in bf16).

Token ids must lie in ``0 .. vocab-1`` (and GPT-2 positions below ``max_pos``); the
simulator reports an out-of-range id as a located ``ShapeError``, hardware reads
whatever row the address selects.
"""
from __future__ import annotations

import math

import numpy as np

import streamdsl as sd
from streamdsl import f32, i32

from ._checks import named, sizes


def make_embedding(t: int, vocab: int, hidden: int, scale: float | None = None):
    """``E[ids]`` (times ``scale`` if given): ids i32[t], E f32[vocab, hidden] -> f32[t, hidden]."""
    sizes("embedding", t=t, vocab=vocab, hidden=hidden)
    scaled = scale is not None
    mul = float(np.float32(scale)) if scaled else 1.0

    @sd.kernel
    def embedding(ids: i32[t], E: f32[vocab, hidden]) -> f32[t, hidden]:
        Y: f32[t, hidden]
        for i, j in sd.grid(t, hidden):
            Y[i, j] = E[ids[i], j] * mul if scaled else E[ids[i], j]  # chosen when the kernel is built
        return Y

    return named(embedding, "embedding_scaled" if scaled else "embedding", t, vocab, hidden)


def make_gemma_embedding(t: int, vocab: int, hidden: int):
    """Gemma3's scaled embedding: ``E[ids] * f32(sqrt(hidden))``."""
    return make_embedding(t, vocab, hidden, scale=math.sqrt(hidden))


def make_gpt2_embedding(t: int, vocab: int, hidden: int, max_pos: int):
    """GPT-2: (ids i32[t], wte f32[vocab, hidden], wpe f32[max_pos, hidden], past_len: i32) -> f32[t, hidden].

    Row i gets ``wte[ids[i]] + wpe[past_len + i]``; ``past_len`` is the number of tokens
    already in the KV cache (0 for a prompt).  Precondition ``past_len + t <= max_pos``.
    """
    sizes("gpt2_embedding", t=t, vocab=vocab, hidden=hidden, max_pos=max_pos)

    @sd.kernel
    def gpt2_embedding(ids: i32[t], wte: f32[vocab, hidden], wpe: f32[max_pos, hidden],
                       past_len: i32) -> f32[t, hidden]:
        Y: f32[t, hidden]
        for i, j in sd.grid(t, hidden):
            Y[i, j] = wte[ids[i], j] + wpe[past_len + i, j]
        return Y

    return named(gpt2_embedding, "gpt2_embedding", t, vocab, hidden, max_pos)
