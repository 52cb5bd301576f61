"""Model configurations of the four decoder families the library builds.

:class:`LLMConfig` is one frozen record of every number and switch the block
math of ``../shared/LLM_FACTS.md`` section 2 depends on, whatever the family:

* ``family`` picks the block set: ``"gpt2"`` (LayerNorm, learned positions,
  fused Conv1D QKV, GELU MLP), ``"llama"`` (RMSNorm, RoPE, SwiGLU; also
  SmolLM2), ``"qwen2"`` (Llama plus q/k/v biases), ``"gemma3"`` (RMSNorm(1+w)
  sandwich norms, QK-norm, GeGLU, scaled embeddings, 5 local : 1 global
  attention with a per-layer-type RoPE theta).
* The remaining fields are the sizes and constants; derived switches
  (``norm``, ``activation``, ``sandwich_norm``...) are stored explicitly so
  that ``print(config)`` says exactly what the model computes.

``LLMConfig.from_hf`` reads a transformers config object, :func:`to_hf` builds
one back (tests use it to make random models), :data:`PRESETS` holds the
full-size models of the paper plus SmolLM2-135M, and :func:`tiny` gives small
configs of each family for tests.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from streamdsl.errors import StreamDSLError, caller_loc

FAMILIES = ("gpt2", "llama", "qwen2", "gemma3")
FULL, SLIDING = "full_attention", "sliding_attention"



class LLMError(StreamDSLError):
    """A model configuration, weight set or model input the LLM library cannot use."""

    kind = "LLM error"


user_loc = caller_loc  # the user's call site: the first frame outside streamdsl/ and library/


@dataclass(frozen=True)
class RopeScaling:
    """Llama 3's frequency-dependent RoPE scaling (``rope_type="llama3"``), LLM_FACTS 2.5."""

    factor: float = 32.0
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_max_positions: int = 8192


@dataclass(frozen=True)
class LLMConfig:
    family: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    max_positions: int
    norm_eps: float
    rope_theta: float | None = None  # None: learned absolute positions (GPT-2)
    rope_scaling: RopeScaling | None = None
    rope_local_theta: float | None = None  # Gemma 3's sliding layers
    sliding_window: int | None = None  # a sliding query sees at most this many keys, itself included
    layer_types: tuple[str, ...] = ()  # per layer FULL or SLIDING; filled in by __post_init__
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    tied_embeddings: bool = True
    embed_scale: float = 1.0  # Gemma: sqrt(hidden), applied in fp32
    attn_scale: float = 0.0  # 0: head_dim ** -0.5
    attn_softcap: float | None = None
    final_softcap: float | None = None
    bos_token_id: int | None = None
    eos_token_ids: tuple[int, ...] = ()
    name: str = ""
    # Derived from the family unless given.
    norm: str = ""  # "layernorm" | "rmsnorm" | "rmsnorm1p" (Gemma's x * (1 + w))
    activation: str = ""  # "gelu_tanh" | "silu"
    gated_mlp: bool | None = None  # down(act(gate x) * up x) vs proj(act(fc x))
    sandwich_norm: bool | None = None  # Gemma's extra post-attention / post-MLP norms

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise LLMError(f"unknown model family {self.family!r}", user_loc(),
                           hint=f"family is one of {', '.join(map(repr, FAMILIES))}")
        gpt2, gemma = self.family == "gpt2", self.family == "gemma3"
        defaults = {
            "norm": "layernorm" if gpt2 else "rmsnorm1p" if gemma else "rmsnorm",
            "activation": "silu" if self.family in ("llama", "qwen2") else "gelu_tanh",
            "gated_mlp": not gpt2,
            "sandwich_norm": gemma,
        }
        for key, value in defaults.items():
            if getattr(self, key) in ("", None):
                object.__setattr__(self, key, value)
        if not self.attn_scale:
            object.__setattr__(self, "attn_scale", self.head_dim ** -0.5)
        if not self.layer_types:
            object.__setattr__(self, "layer_types", (FULL,) * self.layers)
        object.__setattr__(self, "layer_types", tuple(self.layer_types))
        object.__setattr__(self, "eos_token_ids", tuple(self.eos_token_ids))
        self._check()

    def _check(self) -> None:
        def bad(message: str, hint: str) -> LLMError:
            return LLMError(f"{self.name or self.family}: {message}", user_loc(), hint=hint)

        for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab", "max_positions"):
            if int(getattr(self, name)) < 1:
                raise bad(f"{name} must be positive, got {getattr(self, name)}", f"set {name} >= 1")
        if self.heads % self.kv_heads:
            raise bad(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}",
                      "grouped-query attention shares each KV head among heads // kv_heads query heads")
        if self.rope_theta is not None and self.head_dim % 2:
            raise bad(f"RoPE needs an even head_dim, got {self.head_dim}", "rotate_half pairs dim i with i + head_dim/2")
        if self.rope_theta is None and self.family != "gpt2":
            raise bad("only GPT-2 uses learned positions; this family needs rope_theta", "e.g. rope_theta=10000.0")
        if len(self.layer_types) != self.layers or set(self.layer_types) - {FULL, SLIDING}:
            raise bad(f"layer_types must name {self.layers} layers as {FULL!r} or {SLIDING!r}, got {self.layer_types}",
                      f"e.g. layer_types=({SLIDING!r},) * {self.layers}")
        if SLIDING in self.layer_types and (self.sliding_window is None or self.sliding_window < 1):
            raise bad("sliding layers need a positive sliding_window", "Gemma 3 1B uses sliding_window=512")
        if self.norm not in ("layernorm", "rmsnorm", "rmsnorm1p") or self.activation not in ("gelu_tanh", "silu"):
            raise bad(f"unknown norm {self.norm!r} or activation {self.activation!r}",
                      "norm is layernorm/rmsnorm/rmsnorm1p, activation gelu_tanh/silu")

    # -- derived sizes -------------------------------------------------------------------------
    @property
    def group(self) -> int:
        """Query heads per KV head (repeat-interleave: query head h reads KV head h // group)."""
        return self.heads // self.kv_heads

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def layer_theta(self, layer: int) -> float | None:
        """The RoPE base of one layer (Gemma's sliding layers use the local theta)."""
        if self.layer_types[layer] == SLIDING and self.rope_local_theta is not None:
            return self.rope_local_theta
        return self.rope_theta

    def window(self, layer: int) -> int | None:
        """The sliding window of one layer, or None for full causal attention."""
        return self.sliding_window if self.layer_types[layer] == SLIDING else None

    def num_parameters(self) -> int:
        """Parameters counted as transformers counts them (tied lm_head once)."""
        h, per = self.hidden, 0
        norm = 2 * h if self.norm == "layernorm" else h
        per += 2 * norm + (2 * h if self.sandwich_norm else 0)
        per += h * self.q_dim + 2 * h * self.kv_dim + self.q_dim * h
        per += (self.q_dim + 2 * self.kv_dim if self.qkv_bias else 0) + (h if self.o_bias else 0)
        per += 2 * self.head_dim if self.qk_norm else 0
        mlp_mats = 3 if self.gated_mlp else 2
        per += mlp_mats * h * self.intermediate
        if self.mlp_bias:
            per += (2 if self.gated_mlp else 1) * self.intermediate + h
        total = self.layers * per + self.vocab * h + norm
        total += self.max_positions * h if self.rope_theta is None else 0
        total += 0 if self.tied_embeddings else self.vocab * h
        return total

    def replace(self, **changes) -> "LLMConfig":
        """A copy with some fields changed; derived fields follow the family, head_dim and layers they came from."""
        derived = {}
        if "family" in changes:
            derived.update(norm="", activation="", gated_mlp=None, sandwich_norm=None)
        if "head_dim" in changes and self.attn_scale == self.head_dim ** -0.5:
            derived["attn_scale"] = 0.0
        if "layers" in changes and set(self.layer_types) == {FULL}:
            derived["layer_types"] = ()
        return replace(self, **{**derived, **changes})

    def __str__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "layer_types" and len(set(value)) == 1:
                value = f"{value[0]} x {len(value)}"
            elif f.name == "layer_types":
                value = "".join("G" if t == FULL else "L" for t in value) + "  (G full, L sliding)"
            shown.append(f"  {f.name:<16} {value}")
        head = f"LLMConfig {self.name or self.family} ({self.num_parameters() / 1e6:.1f}M parameters)"
        return "\n".join([head, *shown])

    # -- transformers --------------------------------------------------------------------------
    @classmethod
    def from_hf(cls, hf_config) -> "LLMConfig":
        """Read a transformers ``GPT2Config``, ``LlamaConfig``, ``Qwen2Config`` or ``Gemma3TextConfig``."""
        return _from_hf(hf_config)


def _eos(value) -> tuple[int, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (list, tuple)) else (int(value),)


def _rope(params: dict | None, where: str) -> tuple[float, RopeScaling | None]:
    if not params:
        raise LLMError(f"{where}: the config has no rope_parameters", user_loc(), hint="transformers 5.x configs carry them")
    kind = params.get("rope_type", params.get("type", "default"))
    if kind == "default":
        return float(params["rope_theta"]), None
    if kind == "llama3":
        return float(params["rope_theta"]), RopeScaling(
            float(params["factor"]), float(params["low_freq_factor"]), float(params["high_freq_factor"]),
            int(params["original_max_position_embeddings"]))
    raise LLMError(f"{where}: RoPE type {kind!r} is not implemented", user_loc(),
                   hint="the library implements 'default' and 'llama3' RoPE")


def _from_hf(c) -> LLMConfig:
    model_type = getattr(c, "model_type", None)
    name = getattr(c, "_name_or_path", "") or ""
    if model_type == "gpt2":
        if getattr(c, "scale_attn_by_inverse_layer_idx", False) or getattr(c, "reorder_and_upcast_attn", False):
            raise LLMError("GPT-2 configs with scale_attn_by_inverse_layer_idx or reorder_and_upcast_attn are not "
                           "supported", user_loc(), hint="the released GPT-2 models have both False")
        if c.activation_function not in ("gelu_new", "gelu_pytorch_tanh"):
            raise LLMError(f"GPT-2 activation {c.activation_function!r} is not supported", user_loc(),
                           hint="the library implements the tanh GELU (gelu_new)")
        hd = c.n_embd // c.n_head
        return LLMConfig(
            family="gpt2", layers=c.n_layer, hidden=c.n_embd, heads=c.n_head, kv_heads=c.n_head, head_dim=hd,
            intermediate=c.n_inner or 4 * c.n_embd, vocab=c.vocab_size, max_positions=c.n_positions,
            norm_eps=float(c.layer_norm_epsilon), qkv_bias=True, o_bias=True, mlp_bias=True,
            tied_embeddings=bool(c.tie_word_embeddings), attn_scale=hd ** -0.5 if c.scale_attn_weights else 1.0,
            bos_token_id=c.bos_token_id, eos_token_ids=_eos(c.eos_token_id), name=name)
    if model_type in ("llama", "qwen2"):
        if getattr(c, "pretraining_tp", 1) != 1:
            raise LLMError("Llama configs with pretraining_tp != 1 are not supported", user_loc(), hint="set pretraining_tp=1")
        if model_type == "qwen2" and getattr(c, "use_sliding_window", False):
            raise LLMError("Qwen2 with use_sliding_window=True is not supported", user_loc(),
                           hint="the released Qwen2.5 models keep it False")
        theta, scaling = _rope(getattr(c, "rope_parameters", None), model_type)
        hd = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        bias = model_type == "qwen2" or bool(getattr(c, "attention_bias", False))
        return LLMConfig(
            family=model_type, layers=c.num_hidden_layers, hidden=c.hidden_size, heads=c.num_attention_heads,
            kv_heads=c.num_key_value_heads or c.num_attention_heads, head_dim=hd, intermediate=c.intermediate_size,
            vocab=c.vocab_size, max_positions=c.max_position_embeddings, norm_eps=float(c.rms_norm_eps),
            rope_theta=theta, rope_scaling=scaling, qkv_bias=bias,
            o_bias=model_type == "llama" and bool(getattr(c, "attention_bias", False)),
            mlp_bias=bool(getattr(c, "mlp_bias", False)), tied_embeddings=bool(c.tie_word_embeddings),
            activation=_act(c.hidden_act), bos_token_id=c.bos_token_id, eos_token_ids=_eos(c.eos_token_id), name=name)
    if model_type == "gemma3_text":
        if getattr(c, "use_bidirectional_attention", False):
            raise LLMError("Gemma 3 with bidirectional attention is not supported", user_loc(),
                           hint="the causal language models have use_bidirectional_attention=False")
        rp = c.rope_parameters
        theta, scaling = _rope(rp.get(FULL), "gemma3 full_attention")
        local, local_scaling = _rope(rp.get(SLIDING), "gemma3 sliding_attention") if SLIDING in rp else (None, None)
        if local_scaling is not None:
            raise LLMError("scaled RoPE on Gemma's sliding layers is not supported", user_loc(),
                           hint="Gemma 3 uses the default RoPE on local layers")
        return LLMConfig(
            family="gemma3", layers=c.num_hidden_layers, hidden=c.hidden_size, heads=c.num_attention_heads,
            kv_heads=c.num_key_value_heads, head_dim=c.head_dim, intermediate=c.intermediate_size, vocab=c.vocab_size,
            max_positions=c.max_position_embeddings, norm_eps=float(c.rms_norm_eps), rope_theta=theta,
            rope_scaling=scaling, rope_local_theta=local, sliding_window=c.sliding_window,
            layer_types=tuple(c.layer_types), qkv_bias=bool(c.attention_bias), o_bias=bool(c.attention_bias),
            qk_norm=True, tied_embeddings=bool(c.tie_word_embeddings), embed_scale=float(math.sqrt(c.hidden_size)),
            attn_scale=float(c.query_pre_attn_scalar) ** -0.5, attn_softcap=c.attn_logit_softcapping,
            final_softcap=c.final_logit_softcapping, activation=_act(c.hidden_activation),
            bos_token_id=c.bos_token_id, eos_token_ids=_eos(c.eos_token_id), name=name)
    raise LLMError(f"transformers model_type {model_type!r} is not one of the library's families", user_loc(),
                   hint="supported: gpt2, llama, qwen2, gemma3_text (Gemma3ForCausalLM)")


def _act(name: str) -> str:
    if name == "silu":
        return "silu"
    if name in ("gelu_pytorch_tanh", "gelu_new"):
        return "gelu_tanh"
    raise LLMError(f"activation {name!r} is not supported", user_loc(), hint="supported: silu, gelu_pytorch_tanh, gelu_new")


def to_hf(config: LLMConfig):
    """The transformers config object of the same model (needs ``transformers``)."""
    import transformers as tf

    c = config
    common = dict(vocab_size=c.vocab, tie_word_embeddings=c.tied_embeddings, bos_token_id=c.bos_token_id,
                  eos_token_id=list(c.eos_token_ids) if len(c.eos_token_ids) > 1 else
                  (c.eos_token_ids[0] if c.eos_token_ids else None))
    if c.family == "gpt2":
        if c.kv_heads != c.heads or c.head_dim * c.heads != c.hidden:
            raise LLMError("GPT-2 has plain multi-head attention with head_dim = hidden / heads", user_loc(),
                           hint=f"use kv_heads={c.heads}, head_dim={c.hidden // c.heads}")
        return tf.GPT2Config(n_layer=c.layers, n_embd=c.hidden, n_head=c.heads, n_inner=c.intermediate,
                             n_positions=c.max_positions, layer_norm_epsilon=c.norm_eps, activation_function="gelu_new",
                             resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **common)
    rope = {"rope_type": "default", "rope_theta": c.rope_theta}
    if c.rope_scaling is not None:
        s = c.rope_scaling
        rope = {"rope_type": "llama3", "rope_theta": c.rope_theta, "factor": s.factor,
                "low_freq_factor": s.low_freq_factor, "high_freq_factor": s.high_freq_factor,
                "original_max_position_embeddings": s.original_max_positions}
    sizes = dict(num_hidden_layers=c.layers, hidden_size=c.hidden, num_attention_heads=c.heads,
                 num_key_value_heads=c.kv_heads, intermediate_size=c.intermediate, max_position_embeddings=c.max_positions,
                 rms_norm_eps=c.norm_eps, **common)
    if c.family == "llama":
        return tf.LlamaConfig(head_dim=c.head_dim, rope_parameters=rope, attention_bias=c.qkv_bias,
                              mlp_bias=c.mlp_bias, hidden_act="silu", **sizes)
    if c.family == "qwen2":
        if c.head_dim * c.heads != c.hidden:
            raise LLMError("transformers' Qwen2 derives head_dim = hidden / heads", user_loc(),
                           hint=f"use head_dim={c.hidden // c.heads}")
        return tf.Qwen2Config(rope_parameters=rope, hidden_act="silu", use_sliding_window=False, **sizes)
    local = {"rope_type": "default", "rope_theta": c.rope_local_theta or c.rope_theta}
    return tf.Gemma3TextConfig(
        head_dim=c.head_dim, rope_parameters={FULL: rope, SLIDING: local}, sliding_window=c.sliding_window or 4096,
        layer_types=list(c.layer_types), query_pre_attn_scalar=_int_if_integral(c.attn_scale ** -2), attention_bias=c.qkv_bias,
        attn_logit_softcapping=c.attn_softcap, final_logit_softcapping=c.final_softcap,
        hidden_activation="gelu_pytorch_tanh", pad_token_id=0, **sizes)


def _int_if_integral(x: float) -> int | float:
    r = round(x)
    return int(r) if abs(x - r) < 1e-9 * max(1.0, abs(x)) else x


def _gemma_layer_types(layers: int, pattern: int = 6) -> tuple[str, ...]:
    """Gemma 3's 5 local : 1 global pattern: layer i is global iff (i + 1) % pattern == 0."""
    return tuple(FULL if (i + 1) % pattern == 0 else SLIDING for i in range(layers))


PRESETS: dict[str, LLMConfig] = {
    "gpt2": LLMConfig(
        "gpt2", layers=12, hidden=768, heads=12, kv_heads=12, head_dim=64, intermediate=3072, vocab=50257,
        max_positions=1024, norm_eps=1e-5, qkv_bias=True, o_bias=True, mlp_bias=True,
        bos_token_id=50256, eos_token_ids=(50256,), name="gpt2"),
    "gpt2-medium": LLMConfig(
        "gpt2", layers=24, hidden=1024, heads=16, kv_heads=16, head_dim=64, intermediate=4096, vocab=50257,
        max_positions=1024, norm_eps=1e-5, qkv_bias=True, o_bias=True, mlp_bias=True,
        bos_token_id=50256, eos_token_ids=(50256,), name="gpt2-medium"),
    "llama-3.2-1b": LLMConfig(
        "llama", layers=16, hidden=2048, heads=32, kv_heads=8, head_dim=64, intermediate=8192, vocab=128256,
        max_positions=131072, norm_eps=1e-5, rope_theta=500000.0, rope_scaling=RopeScaling(32.0, 1.0, 4.0, 8192),
        bos_token_id=128000, eos_token_ids=(128001,), name="llama-3.2-1b"),
    "qwen2.5-0.5b": LLMConfig(
        "qwen2", layers=24, hidden=896, heads=14, kv_heads=2, head_dim=64, intermediate=4864, vocab=151936,
        max_positions=32768, norm_eps=1e-6, rope_theta=1e6, qkv_bias=True,
        bos_token_id=151643, eos_token_ids=(151643,), name="qwen2.5-0.5b"),
    "gemma-3-1b": LLMConfig(
        "gemma3", layers=26, hidden=1152, heads=4, kv_heads=1, head_dim=256, intermediate=6912, vocab=262144,
        max_positions=32768, norm_eps=1e-6, rope_theta=1e6, rope_local_theta=1e4, sliding_window=512,
        layer_types=_gemma_layer_types(26), qk_norm=True, embed_scale=math.sqrt(1152), attn_scale=256 ** -0.5,
        bos_token_id=2, eos_token_ids=(1, 106), name="gemma-3-1b"),
    "smollm2-135m": LLMConfig(
        "llama", layers=30, hidden=576, heads=9, kv_heads=3, head_dim=64, intermediate=1536, vocab=49152,
        max_positions=8192, norm_eps=1e-5, rope_theta=1e5, bos_token_id=1, eos_token_ids=(2,), name="smollm2-135m"),
}


def preset(name: str) -> LLMConfig:
    """A full-size configuration by name (see :data:`PRESETS`)."""
    try:
        return PRESETS[name]
    except KeyError:
        raise LLMError(f"unknown model preset {name!r}", user_loc(),
                       hint=f"presets: {', '.join(PRESETS)}; tiny(family) gives small test configs") from None


def tiny(family: str, **changes) -> LLMConfig:
    """A small config of one family for tests: 2 layers (Gemma 3: two local + one global), hidden 64.

    Llama keeps the llama3 RoPE scaling with original_max_positions 64 (so with
    head_dim 16 its frequencies fall in all three bands: kept, smoothed, divided), Llama/Qwen2 use GQA (4 query heads on 2 KV heads), Gemma 3
    uses MQA, an explicit head_dim 32 != hidden / heads and a sliding window of 4.
    """
    base = dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, intermediate=128, vocab=256,
                max_positions=128, name=f"tiny-{family}")
    if family == "gpt2":
        cfg = LLMConfig("gpt2", **{**base, "kv_heads": 4}, norm_eps=1e-5, qkv_bias=True, o_bias=True, mlp_bias=True)
    elif family == "llama":
        cfg = LLMConfig("llama", **base, norm_eps=1e-5, rope_theta=500000.0, rope_scaling=RopeScaling(32.0, 1.0, 4.0, 64))
    elif family == "qwen2":
        cfg = LLMConfig("qwen2", **base, norm_eps=1e-6, rope_theta=1e6, qkv_bias=True)
    elif family == "gemma3":
        cfg = LLMConfig("gemma3", **{**base, "layers": 3, "kv_heads": 1, "head_dim": 32}, norm_eps=1e-6,
                        rope_theta=1e6, rope_local_theta=1e4, sliding_window=4,
                        layer_types=(SLIDING, SLIDING, FULL), qk_norm=True, embed_scale=math.sqrt(64),
                        attn_scale=32 ** -0.5)
    else:
        raise LLMError(f"unknown model family {family!r}", user_loc(), hint=f"family is one of {', '.join(FAMILIES)}")
    return cfg.replace(**changes) if changes else cfg
