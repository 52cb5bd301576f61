"""Model weights under one set of names, as NumPy, plus load-time quantization and DMA packing.

Every family's weights land in :class:`ModelWeights` (one :class:`LayerWeights`
per decoder layer) with canonical names; every matrix is ``[out, in]`` like
``nn.Linear`` (so ``y = x @ W.T + b``) and every array is float32:

=============  ==================================================================
``embed``      token embedding ``[vocab, hidden]`` (Gemma's sqrt(hidden) scale is
               *not* folded in: it is ``config.embed_scale``)
``pos_embed``  GPT-2's learned positions ``[max_positions, hidden]``, else None
``ln1``        norm before attention (``ln_1`` / ``input_layernorm``); ``ln1_b`` its
               bias (LayerNorm only)
``ln2``        norm before the MLP (``ln_2`` / ``post_attention_layernorm`` for
               Llama and Qwen2 / ``pre_feedforward_layernorm`` for Gemma)
``post_attn_norm``, ``post_mlp_norm``  Gemma's sandwich norms on the attention and
               MLP outputs (``post_attention_layernorm``, ``post_feedforward_layernorm``)
``q k v o``    attention projections, ``q_b k_b v_b o_b`` their biases or None;
               GPT-2's fused ``c_attn`` is split into q | k | v and transposed
``q_norm``, ``k_norm``  Gemma's per-head RMSNorm weights ``[head_dim]``
``gate up down``  gated MLP (SwiGLU/GeGLU): ``down(act(gate x) * up x)``
``fc proj``    GPT-2's MLP ``proj(act(fc x))``, biases ``fc_b proj_b``
``final_norm`` the last norm (``final_norm_b`` for LayerNorm)
``lm_head``    ``[vocab, hidden]``; the very same array as ``embed`` when tied
=============  ==================================================================

Norm weights are stored as the checkpoint holds them: Gemma's ``(1 + w)`` is
applied by the model, not folded in here.

:func:`quantize` replaces the linear weights by :class:`QuantLinear`
(symmetric int8 or int4 codes with one float32 scale per output channel);
:func:`pack` lays a matrix out in the tile order a DMA streams it and
:func:`to_words` views the result as 512-bit bus words.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Iterator, Mapping

import numpy as np

from .config import LLMConfig, LLMError, user_loc
from .ref import quantize_rows

LINEARS = ("q", "k", "v", "o", "gate", "up", "down", "fc", "proj")
BUS_BITS = 512


# -- quantized linears ----------------------------------------------------------------------------
@dataclass(frozen=True)
class QuantLinear:
    """A linear weight as integer codes and one scale per output channel: ``W ~= codes * scale[:, None]``.

    ``codes`` is int8 ``[out, in]``; for 4-bit weights its values lie in
    [-7, 7] (one byte each here; :func:`to_words` packs two per byte).
    """

    codes: np.ndarray
    scale: np.ndarray
    bits: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape

    def dequantize(self) -> np.ndarray:
        return self.codes.astype(np.float32) * self.scale[:, None]

    def __repr__(self) -> str:
        return f"QuantLinear(int{self.bits} {self.codes.shape[0]}x{self.codes.shape[1]}, per-channel f32 scale)"


def quantize_matrix(w: np.ndarray, bits: int) -> QuantLinear:
    """Symmetric per-output-channel quantization of a ``[out, in]`` matrix (:func:`.ref.quantize_rows`).

    ``qmax = 2**(bits-1) - 1`` (127 for int8, 7 for int4; the code -qmax-1 is
    never used, so the grid is symmetric), ``scale[r] = max|w[r]| / qmax``
    computed in float32, ``codes = clip(rint(w / scale), -qmax, qmax)``.
    ``np.rint`` rounds half to even, as the accelerator's convergent rounding
    does. An all-zero row gets scale 1.0 so it dequantizes to exact zeros.
    """
    if bits not in (4, 8):
        raise LLMError(f"weights quantize to 4 or 8 bits, not {bits}", user_loc(), hint="use 'w8a8' or 'w4a8'")
    return QuantLinear(*quantize_rows(w, bits), bits)


# -- the weight containers ------------------------------------------------------------------------
Array = np.ndarray | None


@dataclass
class LayerWeights:
    ln1: np.ndarray
    ln2: np.ndarray
    q: np.ndarray | QuantLinear
    k: np.ndarray | QuantLinear
    v: np.ndarray | QuantLinear
    o: np.ndarray | QuantLinear
    ln1_b: Array = None
    ln2_b: Array = None
    post_attn_norm: Array = None
    post_mlp_norm: Array = None
    q_b: Array = None
    k_b: Array = None
    v_b: Array = None
    o_b: Array = None
    q_norm: Array = None
    k_norm: Array = None
    gate: np.ndarray | QuantLinear | None = None
    up: np.ndarray | QuantLinear | None = None
    down: np.ndarray | QuantLinear | None = None
    fc: np.ndarray | QuantLinear | None = None
    proj: np.ndarray | QuantLinear | None = None
    gate_b: Array = None
    up_b: Array = None
    down_b: Array = None
    fc_b: Array = None
    proj_b: Array = None

    def items(self) -> Iterator[tuple[str, np.ndarray | QuantLinear]]:
        """The weights this layer has (None fields skipped), in declaration order."""
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                yield f.name, value


@dataclass
class ModelWeights:
    config: LLMConfig
    embed: np.ndarray
    layers: list[LayerWeights]
    final_norm: np.ndarray
    lm_head: np.ndarray | QuantLinear
    pos_embed: Array = None
    final_norm_b: Array = None
    scheme: str = "fp32"  # "fp32" | "w8a8" | "w4a8"
    source: str = field(default="", compare=False)

    @property
    def tied(self) -> bool:
        return self.lm_head is self.embed

    def items(self) -> Iterator[tuple[str, np.ndarray | QuantLinear]]:
        """Every weight under its canonical dotted name, e.g. ``layers.3.q``."""
        yield "embed", self.embed
        if self.pos_embed is not None:
            yield "pos_embed", self.pos_embed
        for i, layer in enumerate(self.layers):
            for name, value in layer.items():
                yield f"layers.{i}.{name}", value
        yield "final_norm", self.final_norm
        if self.final_norm_b is not None:
            yield "final_norm_b", self.final_norm_b
        yield "lm_head", self.lm_head

    def nbytes(self) -> int:
        """Bytes the weights take (a tied lm_head counted once), codes plus scales when quantized."""
        total = 0
        for name, value in self.items():
            if name == "lm_head" and self.tied:
                continue
            total += value.codes.nbytes + value.scale.nbytes if isinstance(value, QuantLinear) else value.nbytes
        return total

    def __repr__(self) -> str:
        c = self.config
        lines = [f"ModelWeights {c.name or c.family} ({self.scheme}, {self.nbytes() / 2**20:.1f} MiB"
                 f"{', tied lm_head' if self.tied else ''}{', from ' + self.source if self.source else ''})"]
        shown = [(n, v) for n, v in self.items() if not n.startswith("layers.") or n.startswith("layers.0.")]
        for name, value in shown:
            desc = repr(value) if isinstance(value, QuantLinear) else f"{value.dtype} {'x'.join(map(str, value.shape))}"
            if name == "lm_head" and self.tied:
                desc = "= embed (tied)"
            lines.append(f"  {name:<22} {desc}")
        if len(self.layers) > 1:
            lines.append(f"  (layers.1 .. layers.{len(self.layers) - 1} alike)")
        return "\n".join(lines)


def _f32(x) -> np.ndarray:
    """A torch tensor (any dtype, any device) or array-like as a contiguous float32 array."""
    if hasattr(x, "detach"):
        x = x.detach().to("cpu").float().numpy()
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32))


# -- from a transformers model object -------------------------------------------------------------
def from_hf(model) -> ModelWeights:
    """Read the weights of a transformers causal LM by walking its modules.

    Accepts ``GPT2LMHeadModel``, ``LlamaForCausalLM``, ``Qwen2ForCausalLM``
    and ``Gemma3ForCausalLM`` (or their bare base models, with a tied head).
    """
    config = LLMConfig.from_hf(model.config)
    base = model
    for attr in ("transformer", "model"):
        if getattr(model, attr, None) is not None:
            base = getattr(model, attr)
            break
    head = getattr(model, "lm_head", None)
    if config.family == "gpt2":
        layers = []
        h = config.hidden
        for blk in base.h:
            w, b = _f32(blk.attn.c_attn.weight), _f32(blk.attn.c_attn.bias)  # Conv1D: [in, out]
            q, k, v = (np.ascontiguousarray(w[:, i * h:(i + 1) * h].T) for i in range(3))
            layers.append(LayerWeights(
                ln1=_f32(blk.ln_1.weight), ln1_b=_f32(blk.ln_1.bias), ln2=_f32(blk.ln_2.weight), ln2_b=_f32(blk.ln_2.bias),
                q=q, k=k, v=v, q_b=b[:h].copy(), k_b=b[h:2 * h].copy(), v_b=b[2 * h:].copy(),
                o=np.ascontiguousarray(_f32(blk.attn.c_proj.weight).T), o_b=_f32(blk.attn.c_proj.bias),
                fc=np.ascontiguousarray(_f32(blk.mlp.c_fc.weight).T), fc_b=_f32(blk.mlp.c_fc.bias),
                proj=np.ascontiguousarray(_f32(blk.mlp.c_proj.weight).T), proj_b=_f32(blk.mlp.c_proj.bias)))
        embed = _f32(base.wte.weight)
        return _finish(config, embed, layers, _f32(base.ln_f.weight), _f32(base.ln_f.bias), head,
                       pos_embed=_f32(base.wpe.weight), source=type(model).__name__)
    layers = []
    for blk in base.layers:
        a, m = blk.self_attn, blk.mlp
        lw = LayerWeights(
            ln1=_f32(blk.input_layernorm.weight), ln2=_f32(blk.post_attention_layernorm.weight),
            q=_f32(a.q_proj.weight), k=_f32(a.k_proj.weight), v=_f32(a.v_proj.weight), o=_f32(a.o_proj.weight),
            q_b=_bias(a.q_proj), k_b=_bias(a.k_proj), v_b=_bias(a.v_proj), o_b=_bias(a.o_proj),
            gate=_f32(m.gate_proj.weight), up=_f32(m.up_proj.weight), down=_f32(m.down_proj.weight),
            gate_b=_bias(m.gate_proj), up_b=_bias(m.up_proj), down_b=_bias(m.down_proj))
        if config.family == "gemma3":
            lw.post_attn_norm = lw.ln2
            lw.ln2 = _f32(blk.pre_feedforward_layernorm.weight)
            lw.post_mlp_norm = _f32(blk.post_feedforward_layernorm.weight)
            lw.q_norm, lw.k_norm = _f32(a.q_norm.weight), _f32(a.k_norm.weight)
        layers.append(lw)
    return _finish(config, _f32(base.embed_tokens.weight), layers, _f32(base.norm.weight), None, head,
                   source=type(model).__name__)


def _bias(linear) -> Array:
    return None if linear.bias is None else _f32(linear.bias)


def _finish(config, embed, layers, final_norm, final_norm_b, head, pos_embed=None, source="") -> ModelWeights:
    if config.tied_embeddings or head is None:
        lm_head = embed
    else:
        lm_head = _f32(head.weight if hasattr(head, "weight") else head)
    return ModelWeights(config, embed, layers, final_norm, lm_head, pos_embed=pos_embed, final_norm_b=final_norm_b,
                        source=source)


def random_weights(config: LLMConfig, seed: int = 0) -> ModelWeights:
    """Random weights of ``config``'s shapes at scales that keep activations O(1), for tests and demos.

    Norm weights around 1 (Gemma's ``1 + w`` form: around 0), biases N(0, 0.1),
    embeddings N(0, 1), matrices N(0, 1/fan_in): every parameter non-trivial, so
    a missing bias or a ``w`` vs ``1 + w`` shows in the logits.
    """
    c, rng = config, np.random.default_rng(seed)

    def mat(out: int, inp: int) -> np.ndarray:
        return (rng.standard_normal((out, inp)) / np.sqrt(inp)).astype(np.float32)

    def vec(n: int, flag: bool = True) -> Array:
        return (0.1 * rng.standard_normal(n)).astype(np.float32) if flag else None

    def norm(n: int) -> np.ndarray:
        base = 0.0 if c.norm == "rmsnorm1p" else 1.0
        return (base + 0.3 * rng.standard_normal(n)).astype(np.float32)

    ln_bias = c.norm == "layernorm"
    layers = []
    for _ in range(c.layers):
        lw = LayerWeights(ln1=norm(c.hidden), ln2=norm(c.hidden), q=mat(c.q_dim, c.hidden),
                          k=mat(c.kv_dim, c.hidden), v=mat(c.kv_dim, c.hidden), o=mat(c.hidden, c.q_dim),
                          ln1_b=vec(c.hidden, ln_bias), ln2_b=vec(c.hidden, ln_bias), q_b=vec(c.q_dim, c.qkv_bias),
                          k_b=vec(c.kv_dim, c.qkv_bias), v_b=vec(c.kv_dim, c.qkv_bias), o_b=vec(c.hidden, c.o_bias))
        if c.gated_mlp:
            lw.gate, lw.up, lw.down = mat(c.intermediate, c.hidden), mat(c.intermediate, c.hidden), mat(c.hidden, c.intermediate)
            lw.gate_b, lw.up_b, lw.down_b = (vec(n, c.mlp_bias) for n in (c.intermediate, c.intermediate, c.hidden))
        else:
            lw.fc, lw.proj = mat(c.intermediate, c.hidden), mat(c.hidden, c.intermediate)
            lw.fc_b, lw.proj_b = vec(c.intermediate, c.mlp_bias), vec(c.hidden, c.mlp_bias)
        if c.sandwich_norm:
            lw.post_attn_norm, lw.post_mlp_norm = norm(c.hidden), norm(c.hidden)
        if c.qk_norm:
            lw.q_norm, lw.k_norm = norm(c.head_dim), norm(c.head_dim)
        layers.append(lw)
    embed = rng.standard_normal((c.vocab, c.hidden)).astype(np.float32)
    pos = rng.standard_normal((c.max_positions, c.hidden)).astype(np.float32) if c.rope_theta is None else None
    head = embed if c.tied_embeddings else mat(c.vocab, c.hidden)
    return ModelWeights(c, embed, layers, norm(c.hidden), head, pos_embed=pos, final_norm_b=vec(c.hidden, ln_bias),
                        source=f"random (seed {seed})")


# -- from a state dict ----------------------------------------------------------------------------
_GPT2_IGNORED = (".attn.bias", ".attn.masked_bias")  # causal-mask buffers of older checkpoints


def load_state_dict(state_dict: Mapping, config: LLMConfig) -> ModelWeights:
    """Build weights from a torch state dict (``model.state_dict()`` or a checkpoint) of ``config``'s family.

    Keys may carry the causal-LM prefix (``transformer.`` / ``model.``) or not.
    GPT-2's Conv1D weights are stored ``[in, out]`` and ``c_attn`` fuses
    q | k | v: they are split and transposed to ``[out, in]``. Missing keys
    and wrong shapes are errors; keys this family does not use are errors too,
    so a checkpoint of another model is not half-loaded by accident.
    """
    if not isinstance(config, LLMConfig):
        raise LLMError(f"load_state_dict needs an LLMConfig, got {type(config).__name__}", user_loc(),
                       hint="pass LLMConfig.from_hf(model.config), a preset(...) or tiny(family)")
    sd = dict(state_dict)
    prefix = "transformer." if config.family == "gpt2" else "model."
    used: set[str] = set()

    def key(name: str) -> str | None:
        for k in (prefix + name, name):
            if k in sd:
                return k
        return None

    def get(name: str, shape: tuple[int, ...], optional: bool = False) -> np.ndarray | None:
        k = key(name)
        if k is None:
            if optional:
                return None
            near = sorted(sd)[:3]
            raise LLMError(f"state dict has no {prefix}{name} (nor {name}) for a {config.family} model", user_loc(),
                           hint=f"is this a {config.family} checkpoint of the config's size? its first keys are {near}")
        used.add(k)
        arr = _f32(sd[k])
        if arr.shape != shape:
            raise LLMError(f"{k} has shape {arr.shape} but the config needs {shape}", user_loc(),
                           hint="the config and the checkpoint disagree on the model's size")
        return arr

    c, h = config, config.hidden
    layers = []
    if c.family == "gpt2":
        for i in range(c.layers):
            p = f"h.{i}."
            w = get(p + "attn.c_attn.weight", (h, 3 * h))
            b = get(p + "attn.c_attn.bias", (3 * h,))
            q, k, v = (np.ascontiguousarray(w[:, j * h:(j + 1) * h].T) for j in range(3))
            layers.append(LayerWeights(
                ln1=get(p + "ln_1.weight", (h,)), ln1_b=get(p + "ln_1.bias", (h,)),
                ln2=get(p + "ln_2.weight", (h,)), ln2_b=get(p + "ln_2.bias", (h,)),
                q=q, k=k, v=v, q_b=b[:h].copy(), k_b=b[h:2 * h].copy(), v_b=b[2 * h:].copy(),
                o=np.ascontiguousarray(get(p + "attn.c_proj.weight", (h, h)).T), o_b=get(p + "attn.c_proj.bias", (h,)),
                fc=np.ascontiguousarray(get(p + "mlp.c_fc.weight", (h, c.intermediate)).T),
                fc_b=get(p + "mlp.c_fc.bias", (c.intermediate,)),
                proj=np.ascontiguousarray(get(p + "mlp.c_proj.weight", (c.intermediate, h)).T),
                proj_b=get(p + "mlp.c_proj.bias", (h,))))
        embed = get("wte.weight", (c.vocab, h))
        pos = get("wpe.weight", (c.max_positions, h))
        final, final_b = get("ln_f.weight", (h,)), get("ln_f.bias", (h,))
        used.update(k for k in sd if k.endswith(_GPT2_IGNORED))
    else:
        qd, kvd, hd, f = c.q_dim, c.kv_dim, c.head_dim, c.intermediate
        for i in range(c.layers):
            p = f"layers.{i}."

            def lin(name, out, inp, has_bias):
                return get(p + name + ".weight", (out, inp)), (get(p + name + ".bias", (out,)) if has_bias else None)

            q, q_b = lin("self_attn.q_proj", qd, h, c.qkv_bias)
            k, k_b = lin("self_attn.k_proj", kvd, h, c.qkv_bias)
            v, v_b = lin("self_attn.v_proj", kvd, h, c.qkv_bias)
            o, o_b = lin("self_attn.o_proj", h, qd, c.o_bias)
            gate, gate_b = lin("mlp.gate_proj", f, h, c.mlp_bias)
            up, up_b = lin("mlp.up_proj", f, h, c.mlp_bias)
            down, down_b = lin("mlp.down_proj", h, f, c.mlp_bias)
            lw = LayerWeights(ln1=get(p + "input_layernorm.weight", (h,)), ln2=get(p + "post_attention_layernorm.weight", (h,)),
                              q=q, k=k, v=v, o=o, q_b=q_b, k_b=k_b, v_b=v_b, o_b=o_b, gate=gate, up=up, down=down,
                              gate_b=gate_b, up_b=up_b, down_b=down_b)
            if c.family == "gemma3":
                lw.post_attn_norm, lw.ln2 = lw.ln2, get(p + "pre_feedforward_layernorm.weight", (h,))
                lw.post_mlp_norm = get(p + "post_feedforward_layernorm.weight", (h,))
                lw.q_norm, lw.k_norm = get(p + "self_attn.q_norm.weight", (hd,)), get(p + "self_attn.k_norm.weight", (hd,))
            layers.append(lw)
        embed = get("embed_tokens.weight", (c.vocab, h))
        pos, final, final_b = None, get("norm.weight", (h,)), None
    head = get("lm_head.weight", (c.vocab, h), optional=c.tied_embeddings)
    if c.tied_embeddings and head is not None and not np.array_equal(head, embed):
        raise LLMError("the config ties lm_head to the embedding but the state dict's lm_head.weight differs", user_loc(),
                       hint="build the config with tied_embeddings=False for this checkpoint")
    unused = sorted(set(sd) - used)
    if unused:
        raise LLMError(f"state dict has {len(unused)} keys a {c.family} model of this config does not use, "
                       f"e.g. {unused[:3]}", user_loc(),
                       hint="check the config (layers, biases, family) matches the checkpoint")
    return ModelWeights(c, embed, layers, final, embed if c.tied_embeddings else head, pos_embed=pos,
                        final_norm_b=final_b, source="state_dict")


# -- quantization of a whole model ----------------------------------------------------------------
SCHEMES = {"w8a8": 8, "w4a8": 4}


def quantize(weights: ModelWeights, scheme: str, lm_head: bool = False) -> ModelWeights:
    """Quantize every linear weight of every layer (see :func:`quantize_matrix`).

    ``"w8a8"``: int8 weights, ``"w4a8"``: int4 weights; in both the model
    quantizes activations to int8 per token at run time. Norms, biases and the
    embedding stay float32; the (tied) ``lm_head`` too unless ``lm_head=True``,
    which gives it its own int codes while the embedding lookup stays fp32.
    """
    if scheme not in SCHEMES:
        raise LLMError(f"unknown quantization scheme {scheme!r}", user_loc(), hint=f"schemes: {', '.join(SCHEMES)}")
    if weights.scheme != "fp32":
        raise LLMError(f"weights are already quantized ({weights.scheme})", user_loc(),
                       hint="quantize the float32 weights once")
    bits = SCHEMES[scheme]
    layers = [replace(layer, **{name: quantize_matrix(getattr(layer, name), bits)
                                for name in LINEARS if getattr(layer, name) is not None})
              for layer in weights.layers]
    head = quantize_matrix(weights.lm_head, bits) if lm_head else weights.lm_head
    return replace(weights, layers=layers, lm_head=head, scheme=scheme)


# -- DMA packing ----------------------------------------------------------------------------------
def _check_tile(shape: tuple[int, int], tile, order) -> tuple[tuple[int, int], tuple[int, int]]:
    try:
        tile = tuple(int(t) for t in tile)
    except (TypeError, ValueError):
        raise LLMError(f"tile must be two integers, got {tile!r}", user_loc(), hint="e.g. tile=(16, 64)") from None
    if len(shape) != 2 or len(tile) != 2:
        raise LLMError(f"pack works on [out, in] matrices with a 2-d tile, got shape {shape} and tile {tile}",
                       user_loc(), hint="reshape vectors to [1, n]")
    bad = [d for d in range(2) if tile[d] < 1 or shape[d] % tile[d]]
    if bad:
        d = bad[0]
        divs = [x for x in range(1, shape[d] + 1) if shape[d] % x == 0]
        raise LLMError(f"tile {tile} does not divide the matrix shape {shape} (dim {d})", user_loc(),
                       hint=f"dim {d} can be tiled by {', '.join(map(str, divs[:12]))}{' ...' if len(divs) > 12 else ''}")
    order = tuple(order)
    if sorted(order) != [0, 1]:
        raise LLMError(f"order {order} is not a permutation of (0, 1)", user_loc(),
                       hint="(0, 1) walks tile rows outermost, (1, 0) tile columns outermost")
    return tile, order


def pack(weight: np.ndarray, tile, order=(0, 1)) -> np.ndarray:
    """Lay a ``[R, C]`` matrix out as the tiled stream a DMA reads.

    The result has shape ``[g0, g1, tr, tc]``: the tile grid in stream order
    (data dim ``order[0]`` outermost; ``order=(0, 1)`` row-major over tiles),
    then each tile row-major. Flattened, it is the DRAM image, so each tile is
    one contiguous burst. Works for float32 weights and for int codes::

        pack(np.arange(16).reshape(4, 4), (2, 2)).reshape(-1)
        -> [0 1 4 5 | 2 3 6 7 | 8 9 12 13 | 10 11 14 15]
    """
    w = weight.codes if isinstance(weight, QuantLinear) else np.asarray(weight)
    (tr, tc), order = _check_tile(w.shape, tile, order)
    R, C = w.shape
    blocks = w.reshape(R // tr, tr, C // tc, tc).transpose(0, 2, 1, 3)  # [gr, gc, tr, tc]
    if order == (1, 0):
        blocks = blocks.transpose(1, 0, 2, 3)
    return np.ascontiguousarray(blocks)


def unpack(packed: np.ndarray, order=(0, 1)) -> np.ndarray:
    """The inverse of :func:`pack`: ``unpack(pack(w, tile, order), order) == w``."""
    p = np.asarray(packed)
    if p.ndim != 4:
        raise LLMError(f"a packed matrix has 4 dims [g0, g1, tr, tc], got shape {p.shape}", user_loc(),
                       hint="pass the array pack() returned (or from_words(...) reshaped to it)")
    if tuple(order) == (1, 0):
        p = p.transpose(1, 0, 2, 3)
    gr, gc, tr, tc = p.shape
    return np.ascontiguousarray(p.transpose(0, 2, 1, 3).reshape(gr * tr, gc * tc))


def _bits(arr: np.ndarray, bits: int | None) -> int:
    native = arr.dtype.itemsize * 8
    if bits is None:
        return native
    if bits == native or (bits == 4 and arr.dtype == np.int8):
        return bits
    raise LLMError(f"cannot view {arr.dtype} elements as {bits}-bit lanes", user_loc(),
                   hint="bits=4 packs int8 arrays holding int4 codes; otherwise leave bits unset")


def to_words(packed: np.ndarray, bits: int | None = None) -> np.ndarray:
    """The packed stream as 512-bit bus words: ``[n_words, lanes]`` of the element type.

    16 float32 or 64 int8 lanes per word. ``bits=4`` packs int4 codes (int8
    arrays with values in [-8, 7]) two per byte, low nibble first, giving
    uint8 words of 64 bytes = 128 lanes. The last word is zero-padded.
    """
    flat = np.asarray(packed).reshape(-1)
    bits = _bits(flat, bits)
    if bits == 4:
        if flat.size and (flat.min() < -8 or flat.max() > 7):
            raise LLMError("bits=4 needs codes in [-8, 7]", user_loc(), hint="quantize with 'w4a8' first")
        nib = (flat.astype(np.int16) & 0xF).astype(np.uint8)
        if nib.size % 2:
            nib = np.append(nib, np.uint8(0))
        flat = nib[0::2] | (nib[1::2] << 4)
        bits = 8
    lanes = BUS_BITS // bits
    pad = (-flat.size) % lanes
    if pad:
        flat = np.concatenate([flat, np.zeros(pad, flat.dtype)])
    return flat.reshape(-1, lanes)


def from_words(words: np.ndarray, shape: tuple[int, ...], bits: int | None = None,
               dtype=None) -> np.ndarray:
    """The inverse of :func:`to_words`: the first ``prod(shape)`` lanes, reshaped (int4: unpacked to int8)."""
    n = int(np.prod(shape))
    flat = np.asarray(words).reshape(-1)
    if bits == 4:
        lo = (flat & 0xF).astype(np.int8)
        hi = (flat >> 4).astype(np.int8)
        codes = np.stack([lo, hi], axis=1).reshape(-1)
        codes = np.where(codes > 7, codes - 16, codes).astype(np.int8)
        return codes[:n].reshape(shape)
    out = flat[:n].reshape(shape)
    return out.astype(dtype) if dtype is not None else out


__all__ = ["LINEARS", "SCHEMES", "QuantLinear", "LayerWeights", "ModelWeights", "from_hf", "load_state_dict",
           "quantize", "quantize_matrix", "pack", "unpack", "to_words", "from_words"]
