"""A pure NumPy float32 forward of the four families: the model-level truth the library is checked against.

It follows ``../shared/LLM_FACTS.md`` section 2 (transformers 5.24.0) step by
step, one sequence at a time (no batch axis):

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
``y = acc * s_x[t] * s_w[o] (+ bias)``. The accumulation is done exactly (in
float64, which holds every sum these sizes produce; an int32 accumulator holds
them too while ``in * 127 * 127 < 2**31``, i.e. ``in < 133,000``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .config import LLMConfig, LLMError, user_loc
from .weights import LayerWeights, ModelWeights, QuantLinear

F32 = np.float32
_GELU_C = F32(np.sqrt(2.0 / np.pi))


# -- elementwise math, as transformers computes it in float32 -------------------------------------
def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """``gelu_new`` / ``gelu_pytorch_tanh``: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    return F32(0.5) * x * (F32(1.0) + np.tanh(_GELU_C * (x + F32(0.044715) * x * x * x)))


def silu(x: np.ndarray) -> np.ndarray:
    return x / (F32(1.0) + np.exp(-x))


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, eps: float) -> np.ndarray:
    """``(x - mean) / sqrt(var + eps) * w + b`` with the biased variance."""
    mean = x.mean(-1, keepdims=True)
    var = np.square(x - mean).mean(-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + F32(eps)) * w
    return y + b if b is not None else y


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float, one_plus: bool = False) -> np.ndarray:
    """``x * rsqrt(mean(x^2) + eps) * w``; Gemma (``one_plus``) multiplies by ``1 + w``."""
    y = x / np.sqrt(np.square(x).mean(-1, keepdims=True) + F32(eps))
    return y * (F32(1.0) + w) if one_plus else y * w


def softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def rope_inv_freq(config: LLMConfig, theta: float) -> np.ndarray:
    """``inv_freq[i] = 1 / theta^(2i/D)`` in float32, with Llama 3's band scaling if the config has it."""
    d = config.head_dim
    inv = (F32(1.0) / (F32(theta) ** (np.arange(0, d, 2, dtype=F32) / F32(d)))).astype(F32)
    s = config.rope_scaling
    if s is None:
        return inv
    low_wavelen = s.original_max_positions / s.low_freq_factor
    high_wavelen = s.original_max_positions / s.high_freq_factor
    wavelen = (F32(2 * np.pi) / inv).astype(F32)
    scaled = np.where(wavelen > low_wavelen, inv / F32(s.factor), inv).astype(F32)
    smooth = ((s.original_max_positions / wavelen - s.low_freq_factor) /
              (s.high_freq_factor - s.low_freq_factor)).astype(F32)
    smoothed = ((F32(1) - smooth) * scaled / F32(s.factor) + smooth * scaled).astype(F32)
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, scaled).astype(F32)


def rope_tables(inv_freq: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos/sin tables ``[T, D]`` of ``cat(freqs, freqs)`` with ``freqs = pos * inv_freq``."""
    freqs = positions.astype(F32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """``x * cos + rotate_half(x) * sin`` on ``[H, T, D]``; ``rotate_half(x) = cat(-x[D/2:], x[:D/2])``."""
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


# -- linear layers --------------------------------------------------------------------------------
def quantize_activations(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-token symmetric int8: ``s = max|x_t| / 127`` (1.0 for an all-zero token), codes ``rint(x / s)``."""
    amax = np.max(np.abs(x), axis=-1)
    s = np.where(amax > 0, amax / F32(127), F32(1)).astype(F32)
    codes = np.clip(np.rint(x / s[..., None]), -127, 127).astype(np.int8)
    return codes, s


def linear(x: np.ndarray, w: np.ndarray | QuantLinear, b: np.ndarray | None = None) -> np.ndarray:
    """``x @ W.T + b``; with a :class:`QuantLinear` the A8 integer path of the module docstring."""
    if isinstance(w, QuantLinear):
        codes, s = quantize_activations(x)
        acc = codes.astype(np.float64) @ w.codes.T.astype(np.float64)  # exact integer sums
        y = (acc * s[:, None].astype(np.float64) * w.scale[None, :].astype(np.float64)).astype(F32)
    else:
        y = x @ w.T
    return y + b if b is not None else y


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
                    self._inv_freq[theta] = rope_inv_freq(config, theta)

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
            return layer_norm(x, w, b, c.norm_eps)
        return rms_norm(x, w, c.norm_eps, one_plus=c.norm == "rmsnorm1p")

    def _act(self, x: np.ndarray) -> np.ndarray:
        return silu(x) if self.config.activation == "silu" else gelu_tanh(x)

    def embed(self, ids: np.ndarray, start: int) -> np.ndarray:
        c, w = self.config, self.weights
        h = w.embed[ids]
        if c.embed_scale != 1.0:
            h = h * F32(c.embed_scale)
        if w.pos_embed is not None:
            h = h + w.pos_embed[start:start + len(ids)]
        return h

    def attention(self, i: int, x: np.ndarray, positions: np.ndarray, cache: KVCache | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One layer's attention on normed ``x [T, hidden]``: (output [T, hidden], keys, values to cache)."""
        c, lw = self.config, self.weights.layers[i]
        T, D = x.shape[0], c.head_dim
        q = linear(x, lw.q, lw.q_b).reshape(T, c.heads, D).transpose(1, 0, 2)
        k = linear(x, lw.k, lw.k_b).reshape(T, c.kv_heads, D).transpose(1, 0, 2)
        v = linear(x, lw.v, lw.v_b).reshape(T, c.kv_heads, D).transpose(1, 0, 2)
        if c.qk_norm:
            q = rms_norm(q, lw.q_norm, c.norm_eps, one_plus=c.norm == "rmsnorm1p")
            k = rms_norm(k, lw.k_norm, c.norm_eps, one_plus=c.norm == "rmsnorm1p")
        if c.rope_theta is not None:
            cos, sin = rope_tables(self._inv_freq[c.layer_theta(i)], positions)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        past = 0
        if cache is not None and cache.keys:
            past = cache.keys[i].shape[1]
            k = np.concatenate([cache.keys[i], k], axis=1)
            v = np.concatenate([cache.values[i], v], axis=1)
        kv_pos = np.arange(positions[0] - past, positions[-1] + 1)
        allowed = kv_pos[None, :] <= positions[:, None]
        window = c.window(i)
        if window is not None:
            allowed &= kv_pos[None, :] > positions[:, None] - window
        # GQA: query head h = g * group + r reads KV head g.
        qg = q.reshape(c.kv_heads, c.group, T, D)
        s = (qg @ k[:, None].transpose(0, 1, 3, 2)) * F32(c.attn_scale)  # [kv, group, T, S]
        if c.attn_softcap is not None:
            s = np.tanh(s / F32(c.attn_softcap)) * F32(c.attn_softcap)
        s = np.where(allowed, s, F32(-np.inf))
        o = softmax(s) @ v[:, None]  # [kv, group, T, D]
        o = o.reshape(c.heads, T, D).transpose(1, 0, 2).reshape(T, c.q_dim)
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
            logits = np.tanh(logits / F32(c.final_softcap)) * F32(c.final_softcap)
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
