"""A pure NumPy float32 forward of the four families: the model-level truth the library is checked against.

It follows ``../shared/LLM_FACTS.md`` section 2 (transformers 5.24.0) step by
step, one sequence at a time (no batch axis), with the blocks' NumPy math of
:mod:`.ref` on float32 arrays (so in float32, as transformers computes):

* embedding: ``embed[ids]`` (+ ``pos_embed[pos]`` for GPT-2; ``* float32(sqrt(hidden))``
  for Gemma 3);
* per layer ``h += attn(norm1(h)); h += mlp(norm2(h))``, or Gemma's sandwich
  ``h += post_attn_norm(attn(ln1(h))); h += post_mlp_norm(mlp(ln2(h)))``;
* attention: q/k/v projections (+ Qwen's biases), Gemma's q_norm/k_norm over
  head_dim, RoPE with HF's half-split ``rotate_half`` (llama3 scaling and a
  per-layer-type theta), GQA by repeat-interleave (query head ``h`` reads KV
  head ``h // group``), ``softmax(q k^T * scale + mask)`` in float32 with the
  causal rule ``kv_pos <= q_pos`` and, on sliding layers, ``kv_pos > q_pos - window``;
* final norm and ``logits = h @ lm_head.T`` (Gemma: optional tanh softcap).

The KV cache (:class:`KVCache`) keeps per layer keys (after RoPE, after
``k_norm``) and values as ``[kv_heads, S, head_dim]``; new tokens are appended
before attention; sliding layers keep only their last ``window - 1`` tokens,
like transformers' ``DynamicSlidingWindowLayer`` (a ring of ``window`` slots in
hardware: ``window - 1`` past tokens plus the current one).

With quantized weights (:func:`~.weights.quantize`) every linear layer runs as
W8A8 / W4A8: activations quantized per token (symmetric int8, dynamic scale
``max|x_t| / 127``, round half to even), an integer dot product, then
``y = acc * s_x[t] * s_w[o]`` in float64, rounded to float32 (``+ bias`` in
float32): :func:`.ref.linear_quant` with ``in_float64`` (the kernels dequantise
in float32 left to right, so the quantised layers agree with it to rounding).
The accumulation is exact (an int32 accumulator holds it while
``in * 127 * 127 < 2**31``, i.e. ``in < 133,000``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import ref
from .config import LLMConfig, LLMError, user_loc
from .rope import rope_inv_freq, rope_tables
from .weights import LayerWeights, ModelWeights, QuantLinear


def linear(x: np.ndarray, w: np.ndarray | QuantLinear, b: np.ndarray | None = None) -> np.ndarray:
    """``x @ W.T + b``; with a :class:`QuantLinear` the A8 integer path of the module docstring."""
    if isinstance(w, QuantLinear):
        return ref.linear_quant(x, w.codes, w.scale, b, in_float64=True)
    return ref.linear(x, w, b)


# -- the cache ------------------------------------------------------------------------------------
@dataclass
class KVCache:
    """Per layer keys and values ``[kv_heads, S, head_dim]``; ``length`` tokens have been seen."""

    keys: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)
    length: int = 0

    def nbytes(self) -> int:
        return sum(k.nbytes + v.nbytes for k, v in zip(self.keys, self.values))

    def __repr__(self) -> str:
        kept = sorted({k.shape[1] for k in self.keys})
        return (f"KVCache({self.length} tokens, {len(self.keys)} layers, kept per layer {kept}, "
                f"{self.nbytes() / 1024:.1f} KiB)")


# -- the model ------------------------------------------------------------------------------------
class NumpyModel:
    """A float32 NumPy model of one configuration and weight set.

    >>> m = NumpyModel(config, weights)
    >>> logits, cache = m.prefill(ids)           # logits [T, vocab]
    >>> logits, cache = m.decode(next_id, cache)  # logits [vocab]
    >>> m.generate(ids, 8)                        # greedy new token ids
    """

    def __init__(self, config: LLMConfig, weights: ModelWeights):
        if not isinstance(weights, ModelWeights):
            raise LLMError(f"NumpyModel needs ModelWeights, got {type(weights).__name__}", user_loc(),
                           hint="use weights.from_hf(model), weights.load_state_dict(sd, config) or gguf_loader")
        wc = weights.config
        sizes = ("family", "layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab")
        diff = [n for n in sizes if getattr(wc, n) != getattr(config, n)]
        if diff or len(weights.layers) != config.layers:
            raise LLMError(f"the weights are for a different model: {', '.join(f'{n} {getattr(wc, n)} vs {getattr(config, n)}' for n in diff)}",
                           user_loc(), hint="load the weights with the same config")
        self.config = config
        self.weights = weights
        self._inv_freq = {}
        if config.rope_theta is not None:
            for i in range(config.layers):
                theta = config.layer_theta(i)
                if theta not in self._inv_freq:
                    self._inv_freq[theta] = rope_inv_freq(config.head_dim, theta, config.rope_scaling)

    def __repr__(self) -> str:
        c = self.config
        return f"NumpyModel({c.name or c.family}, {c.layers} layers, {self.weights.scheme})"

    @property
    def quantized(self) -> bool:
        return self.weights.scheme != "fp32"

    # -- pieces --------------------------------------------------------------------------------
    def _norm(self, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
        c = self.config
        if c.norm == "layernorm":
            return ref.layernorm(x, w, b, c.norm_eps)
        return ref.rmsnorm(x, w, c.norm_eps, unit_offset=c.norm == "rmsnorm1p")

    def _act(self, x: np.ndarray) -> np.ndarray:
        return ref.silu(x) if self.config.activation == "silu" else ref.gelu(x)

    def embed(self, ids: np.ndarray, start: int) -> np.ndarray:
        c, w = self.config, self.weights
        return ref.embedding(ids, w.embed, c.embed_scale if c.embed_scale != 1.0 else None, w.pos_embed, start)

    def attention(self, i: int, x: np.ndarray, positions: np.ndarray, cache: KVCache | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One layer's attention on normed ``x [T, hidden]``: (output [T, hidden], keys, values to cache)."""
        c, lw = self.config, self.weights.layers[i]
        q = ref.split_heads(linear(x, lw.q, lw.q_b), c.heads)
        k = ref.split_heads(linear(x, lw.k, lw.k_b), c.kv_heads)
        v = ref.split_heads(linear(x, lw.v, lw.v_b), c.kv_heads)
        if c.qk_norm:
            q = ref.rmsnorm(q, lw.q_norm, c.norm_eps, unit_offset=c.norm == "rmsnorm1p")
            k = ref.rmsnorm(k, lw.k_norm, c.norm_eps, unit_offset=c.norm == "rmsnorm1p")
        if c.rope_theta is not None:
            cos, sin = rope_tables(positions, self._inv_freq[c.layer_theta(i)])
            q, k = ref.rope(q, cos, sin), ref.rope(k, cos, sin)
        past = 0
        if cache is not None and cache.keys:
            past = cache.keys[i].shape[1]
            k = np.concatenate([cache.keys[i], k], axis=1)
            v = np.concatenate([cache.values[i], v], axis=1)
        kv_pos = np.arange(positions[0] - past, positions[-1] + 1)
        window = c.window(i)
        o = ref.attention(q, k, v, positions, kv_pos, c.attn_scale, window, c.attn_softcap)
        out = linear(o, lw.o, lw.o_b)
        if window is not None:
            first = max(0, k.shape[1] - (window - 1))  # keep the last window - 1 tokens
            k, v = k[:, first:], v[:, first:]
        return out, k, v

    def mlp(self, lw: LayerWeights, x: np.ndarray) -> np.ndarray:
        if self.config.gated_mlp:
            return linear(self._act(linear(x, lw.gate, lw.gate_b)) * linear(x, lw.up, lw.up_b), lw.down, lw.down_b)
        return linear(self._act(linear(x, lw.fc, lw.fc_b)), lw.proj, lw.proj_b)

    def layer(self, i: int, h: np.ndarray, positions: np.ndarray, cache: KVCache | None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lw = self.weights.layers[i]
        a, k, v = self.attention(i, self._norm(h, lw.ln1, lw.ln1_b), positions, cache)
        if self.config.sandwich_norm:
            h = h + self._norm(a, lw.post_attn_norm)
            h = h + self._norm(self.mlp(lw, self._norm(h, lw.ln2)), lw.post_mlp_norm)
        else:
            h = h + a
            h = h + self.mlp(lw, self._norm(h, lw.ln2, lw.ln2_b))
        return h, k, v

    def head(self, h: np.ndarray) -> np.ndarray:
        c, w = self.config, self.weights
        logits = linear(self._norm(h, w.final_norm, w.final_norm_b), w.lm_head)
        if c.final_softcap is not None:
            logits = ref.softcap(logits, c.final_softcap)
        return logits

    # -- entry points --------------------------------------------------------------------------
    def _ids(self, ids) -> np.ndarray:
        arr = np.asarray(ids)
        if arr.ndim == 0:
            arr = arr[None]
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
            raise LLMError(f"token ids must be a non-empty 1-d sequence of integers, got shape {arr.shape} "
                           f"of {arr.dtype}", user_loc(), hint="one sequence at a time, e.g. [15496, 11, 995]")
        if arr.min() < 0 or arr.max() >= self.config.vocab:
            raise LLMError(f"token id {int(arr.max() if arr.max() >= self.config.vocab else arr.min())} is outside "
                           f"the vocabulary of {self.config.vocab}", user_loc(), hint="check the tokenizer matches the model")
        return arr.astype(np.int64)

    def prefill(self, ids, cache: KVCache | None = None) -> tuple[np.ndarray, KVCache]:
        """Run ``ids`` (after ``cache``'s tokens, if given: chunked prefill); logits ``[T, vocab]`` and the new cache."""
        ids = self._ids(ids)
        start = cache.length if cache is not None else 0
        if start + len(ids) > self.config.max_positions and self.config.rope_theta is None:
            raise LLMError(f"{start + len(ids)} tokens exceed GPT-2's {self.config.max_positions} learned positions",
                           user_loc(), hint="GPT-2's position table is a hard limit; shorten the prompt")
        positions = np.arange(start, start + len(ids))
        h = self.embed(ids, start)
        keys, values = [], []
        for i in range(self.config.layers):
            h, k, v = self.layer(i, h, positions, cache)
            keys.append(k)
            values.append(v)
        return self.head(h), KVCache(keys, values, start + len(ids))

    def decode(self, token_id: int, cache: KVCache) -> tuple[np.ndarray, KVCache]:
        """One token after ``cache``: logits ``[vocab]`` and the cache with it appended (``cache`` is left as it was)."""
        if not isinstance(cache, KVCache) or not cache.keys:
            raise LLMError("decode needs the cache that prefill returned", user_loc(),
                           hint="logits, cache = model.prefill(prompt_ids); then model.decode(token, cache)")
        logits, cache = self.prefill([int(token_id)], cache)
        return logits[0], cache

    def forward(self, ids) -> np.ndarray:
        """Logits ``[T, vocab]`` of the whole sequence, no cache kept."""
        return self.prefill(ids)[0]

    def generate(self, prompt_ids, max_new_tokens: int, stop_tokens=()) -> list[int]:
        """Greedy decoding: ``argmax`` (first index on ties) of each step's logits; the new ids only."""
        logits, cache = self.prefill(prompt_ids)
        out: list[int] = []
        stop = set(int(t) for t in stop_tokens)
        nxt = int(np.argmax(logits[-1]))
        while len(out) < max_new_tokens:
            out.append(nxt)
            if nxt in stop or len(out) == max_new_tokens:
                break
            logits, cache = self.decode(nxt, cache)
            nxt = int(np.argmax(logits))
        return out
