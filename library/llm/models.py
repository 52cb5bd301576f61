"""Whole decoder models: one fused layer accelerator, re-invoked once per layer.

``llama(config)`` (and ``gpt2``, ``qwen2``, ``gemma3``; SmolLM2 is a Llama)
returns an :class:`LLM`: the model's layer as one dataflow region of
library blocks (:mod:`.layers`), run once per layer with that layer's
weights and KV cache, plus the embedding and the head (final norm, tied LM
head) as kernels of their own, as the paper's host does.

>>> m = llama(config).load(weights)                  # weights: from_hf / load_state_dict / gguf
>>> logits, cache = m.prefill(ids)                    # on the simulator
>>> logits, cache = m.decode(next_id, cache, mode="csim")
>>> m.generate(ids, max_new_tokens=8)

Everything runs on the reference simulator (``mode="sim"``) or through
g++ C-simulation of the emitted HLS (``mode="csim"``): the layer
accelerator as a dataflow project, the embedding and the head as kernel
projects.  Each size is built once and cached.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import streamdsl as sd
from streamdsl.compat import renamed
from streamdsl import Placement
from streamdsl.explorer import UTIL as EXPLORE_UTIL, ExploreError
from streamdsl.perf import GUIDELINE, fit_designs
from streamdsl.progress import bar

from .blocks import default_schedule
from .config import FULL, LLMConfig, LLMError, user_loc
from .layers import LayerSpec, make_layer
from .linear import make_lm_head
from .norms import make_layernorm, make_rmsnorm
from .rope import rope_inv_freq, rope_tables
from .qlayers import SCHEMES, make_qlayer
from .token import device_head_design, embedding_for
from .weights import LayerWeights, ModelWeights, QuantLinear, quantize

MODES = ("sim", "csim")  # the reference simulator, or g++ C-simulation of the emitted HLS


def _with_rows(cache: np.ndarray, rows: np.ndarray, pos: int, place: Placement) -> np.ndarray:
    """A copy of one layer's cache [kv_heads, max_len, head_dim] with a layer's new rows [kv_heads, t, head_dim]
    where ``place`` (the layer's ``store_at``) puts them for ``pos``: what its in-place store leaves in DRAM."""
    out = cache.copy()
    t = rows.shape[1]
    at = place.start(pos, t)
    out[:, at:at + t] = rows
    return out


@dataclass
class Cache:
    """The KV cache in (simulated) DRAM: per layer keys and values [kv_heads, max_len, head_dim]."""

    keys: list[np.ndarray]
    values: list[np.ndarray]
    length: int = 0

    def __repr__(self) -> str:
        shape = self.keys[0].shape if self.keys else ()
        return f"Cache({len(self.keys)} layers of {shape}, {self.length} tokens)"


@dataclass(frozen=True)
class Verification:
    steps: int
    max_abs_error: float
    mode: str

    def __str__(self) -> str:
        return (f"verified {self.steps} step(s) (prefill + {self.steps - 1} decode) on {self.mode}: "
                f"max |logit error| {self.max_abs_error:.2e}")


PACKS = (True, False, "decode", "prefill")  # LLM.pack: which phases' layers pack their W4A8 linears


@dataclass
class LLM:
    config: LLMConfig
    max_len: int = 64  # positions the KV cache holds
    blocks: dict = field(default_factory=dict)
    quant: str = "fp32"  # "fp32" | "w8a8" | "w4a8": the layer's linears
    weights: ModelWeights | None = None
    pack: bool | str = True  # W4A8: two outputs a DSP48E2 where the sizes allow (quant.packs), in both phases'
    # layers, neither (False), or only the "decode" or the "prefill" layer's; the same results either way
    _layers: dict = field(default_factory=dict, repr=False)
    _schedules: dict = field(default_factory=dict, repr=False)
    _projects: dict = field(default_factory=dict, repr=False)
    _kernels: dict = field(default_factory=dict, repr=False)
    _args: dict = field(default_factory=dict, repr=False)  # layer -> its weight arguments, built once per load

    def __post_init__(self):
        if self.quant not in ("fp32", *SCHEMES):
            raise LLMError(f"unknown quantisation {self.quant!r}", user_loc(), hint="quant is fp32, w8a8 or w4a8")
        if self.quant != "fp32" and self.blocks:
            raise LLMError("blocks can be swapped in fp32 layers only", user_loc(),
                           hint="build the model with quant='fp32' to swap blocks")
        if self.pack not in PACKS or isinstance(self.pack, (int, float)) and not isinstance(self.pack, bool):
            raise LLMError(f"pack must be True, False, 'decode' or 'prefill', got {self.pack!r}", user_loc(),
                           hint="pack=False keeps one MAC a lane in the W4A8 linears")
        if self.config.rope_theta is None:  # GPT-2's learned positions are a hard limit
            self.max_len = min(self.max_len, self.config.max_positions)
        self._inv_freq = {}
        if self.config.rope_theta is not None:
            for i in range(self.config.layers):
                th = self.config.layer_theta(i)
                self._inv_freq.setdefault(th, rope_inv_freq(self.config.head_dim, th, self.config.rope_scaling))
        self.layer(1)  # build (and check any swapped blocks) now, at the user's call

    def __repr__(self) -> str:
        c = self.config
        w = f", weights {self.weights.scheme}" if self.weights is not None else ", no weights"
        return f"<LLM {c.name or c.family}: {c.layers} layers, hidden {c.hidden}, cache {self.max_len}{w}>"

    # ------------------------------------------------------------ structure
    def layer(self, t: int, kind: str = FULL) -> LayerSpec:
        """The layer dataflow for ``t`` new tokens (``kind``: full or sliding attention)."""
        key = (t, kind)
        if key not in self._layers:
            self._layers[key] = (make_layer(self.config, t, self.max_len, kind, self.blocks) if self.quant == "fp32"
                                 else make_qlayer(self.config, t, self.max_len, kind, self.quant, self.packs(t)))
        return self._layers[key]

    def packs(self, t: int) -> bool:
        """Does the layer for ``t`` new tokens (1: decode, more: prefill) pack its W4A8 linears (``pack``)?"""
        return self.pack is True or self.pack == ("decode" if t == 1 else "prefill")

    def schedule(self, t: int, kind: str = FULL, decode=None):
        """The layer's dataflow schedule: every task pipelined, one fused region, rows streamed, FIFOs sized.

        A layer of ``t > 1`` tokens reads the weights and caches over the ports of the decode layer's schedule
        ``decode`` (default: ``schedule(1, kind)``), so both phases read one copy in DRAM."""
        key = (t, kind, id(decode) if decode is not None and t != 1 else None)
        if key not in self._schedules:
            spec = self.layer(t, kind)
            g = sd.schedule(spec.function)
            for task in g.tasks():
                default_schedule(g.schedule(task))
            for e in g.edges():
                ty = g.graph.edges[e.name].type
                if ty.rank == 2 and ty.shape[0] == t:  # the residual stream and per-token activations
                    g.stream(e, tile=(1, ty.shape[1]))
                elif ty.rank == 3:  # per-head tensors and KV caches: one head at a time
                    g.stream(e, tile=(1,) + ty.shape[1:])
            self._rows_over_one_port(g)
            self._store_new_rows(g)
            if t != 1:
                self._share_buffers(g, decode if decode is not None else self.schedule(1, kind))
            g.fuse(*g.tasks())
            g.size_fifos()
            self._schedules[key] = (g, decode)  # the decode schedule kept alive while its id() keys this one
        return self._schedules[key][0]

    def decode_layer(self, kind: str = FULL, schedule: str = "explored", board="u55c"):
        """The one-token layer of ``kind`` that ``build(schedule=...)`` emits: :meth:`explored` on ``board``
        (``"explored"``) or the library's default schedule (``"default"``, :meth:`schedule`)."""
        return self.explored(kind, board) if schedule == "explored" else self.schedule(1, kind)

    def explored(self, kind: str = FULL, board="u55c"):
        """The decode layer of ``kind`` as ``sd.explore(model, board)`` finds it fastest on ``board`` (the design
        the performance model reports and ``build`` emits by default); explored once per board."""
        return self.exploration(kind, board).best.schedule

    def exploration(self, kind: str = FULL, board="u55c"):
        """``sd.explore`` of the decode layer of ``kind`` on ``board`` beside the rest of the generate kernel
        (:meth:`neighbours`), once per board: the exploration :meth:`explored` takes its design from.  When no
        design fits beside them, the fastest that fits alone (``prj.fit()`` then says the kernel does not fit)."""
        key = ("explored", kind, sd.board(board).name)
        if key not in self._schedules:
            try:
                ex = sd.explore(self, board, t=1, kind=kind, **self.neighbours(kind, board))
            except ExploreError:  # no design fits beside the rest: the fastest that fits alone (prj.fit() says no)
                ex = sd.explore(self, board, t=1, kind=kind)
            self._schedules[key] = (ex, None)
        return self._schedules[key][0]

    def neighbours(self, kind: str = FULL, board="u55c", util: float = EXPLORE_UTIL) -> dict:
        """What the generate kernel holds beside the decode layer of ``kind``, as ``sd.explore``'s ``beside``
        and ``reserve``: the device head (:func:`.token.device_head`; reserved, not placed beside, when it
        does not fit one SLR itself: ``prj.fit()`` says so) and the other kinds' decode layers, an equal share
        each of the room the head leaves (``util`` of each resource, at most UG1393's guideline): the kinds'
        layers read one copy of the weights, so each kind is explored in the same room and their designs
        differ only where the kinds do (Gemma 3's attention window).  The prefill layer is not reserved
        (``prj.fit()`` says whether a build with one fits)."""
        b = sd.board(board)
        head = device_head_design(self.config, self.quant, b)
        beside, held = ({"head": head}, {}) if fit_designs({"head": head}, b).fits else ({}, dict(head.total))
        others = (len(self.kinds()) - 1) / len(self.kinds())
        room = {r: min(util, GUIDELINE[r]) * b.total[r] - head.total.get(r, 0) for r in GUIDELINE}
        return {"beside": beside, "reserve": {r: held.get(r, 0) + others * max(0.0, v) for r, v in room.items()}}

    def _rows_over_one_port(self, g) -> None:
        """The residual stream in and out (the layer's first parameter and result) and the RoPE rows lie in DRAM
        as plain rows over one port each: the generate kernel gathers the embedding rows into the one, the next
        layer reads the other as its input, the head reads the last row, and the RoPE rows are read in place at
        the step's position in the tables (:mod:`.device`)."""
        ir = g.graph.ir
        names = [ir.params[0].name, *(p.name for p in ir.params if p.name in ("cos", "sin")),
                 next(iter(g.graph.outputs))]
        for name in names:
            g.ports(g.edge(name), 1)

    def _store_new_rows(self, g) -> None:
        """The layer's new keys and values (its 2nd and 3rd results) go into its caches (its rank-3
        parameters, in order) at ``pos``: each store writes the cache's own buffer, in its layout."""
        caches = [p.name for p in g.graph.ir.params if getattr(p.type, "rank", 0) == 3]
        place = self.kv_rows()
        for new, cache in zip(g.graph.outputs[1:], caches, strict=True):
            g.store_at(g.edge(new), place.offset, axis=place.axis, extent=place.extent, into=g.edge(cache))

    def _share_buffers(self, g, decode) -> None:
        """The inputs the layer shares with the decode layer (the weights, the caches: every input of one
        type in both) lie in DRAM alike: ``g`` reads each in the decode layer's stream layout (a DMA stores
        its tensor's tiles in stream order) over the decode layer's ports."""
        mine = {p.name: p.type for p in g.graph.ir.params}
        ports = decode.timing().plan.ports
        for p in decode.graph.ir.params:
            if mine.get(p.name) != p.type or not isinstance(p.type, sd.TensorType):
                continue
            theirs = decode.graph.edges[p.name].consumers
            if len(theirs) == 1 and len(g.graph.edges[p.name].consumers) == 1:
                lay = decode.layout(p.name, theirs[0][0])
                if str(lay) != str(g.layout(p.name, g.graph.edges[p.name].consumers[0][0])):
                    g.stream(g.edge(p.name), itensor=lay)
            if p.name in ports:
                g.ports(g.edge(p.name), ports[p.name])

    def design(self, t: int = 1, kind: str | None = None):
        """The layer design for ``t`` new tokens of layer kind ``kind`` (default: the first kind) as
        :meth:`schedule` builds it: what ``sd.explore(model)`` explores (``streamdsl.explorer.Explorable``)."""
        return self.schedule(t, kind or self.kinds()[0])

    def kv_rows(self) -> Placement:
        """Where a layer's new keys and values go: rows ``pos ..`` of its caches (``g.store_at`` of the schedule)."""
        return Placement(axis=1, extent=self.max_len, offset="pos")

    @property
    def layer_kinds(self) -> list[str]:
        """The kind of each layer's kernel: its layer type, but a sliding window at least ``max_len`` long is
        plain causal attention (no cached position falls out of it), so such layers are the full kind's."""
        c = self.config
        return [FULL if k != FULL and (c.sliding_window or 0) >= self.max_len else k for k in c.layer_types]

    def kinds(self) -> list[str]:
        """The layer kernels' kinds, in order of first use (:attr:`layer_kinds`)."""
        return list(dict.fromkeys(self.layer_kinds))

    def _kernel(self, what: str, t: int):
        key = (what, t)
        if key not in self._kernels:
            c = self.config
            if what == "embed":
                k = embedding_for(c, t)
            elif what == "norm":
                k = (make_layernorm(t, c.hidden, c.norm_eps) if c.norm == "layernorm"
                     else make_rmsnorm(t, c.hidden, c.norm_eps, unit_offset=c.norm == "rmsnorm1p"))
            else:
                k = make_lm_head(t, c.hidden, c.vocab)
            self._kernels[key] = k
        return self._kernels[key]

    # ------------------------------------------------------------- weights
    def load(self, weights: ModelWeights) -> "LLM":
        """Use ``weights``; fp32 weights are quantised here when the model is W8A8/W4A8."""
        if not isinstance(weights, ModelWeights):
            raise LLMError(f"load takes ModelWeights, got {type(weights).__name__}", user_loc(),
                           hint="weights.from_hf(model), weights.load_state_dict(sd, config) or gguf_loader")
        if weights.scheme != self.quant:
            if weights.scheme != "fp32":
                raise LLMError(f"the model computes {self.quant} but the weights are {weights.scheme}", user_loc(),
                               hint=f"build the model with quant={weights.scheme!r}, or load fp32 weights")
            weights = quantize(weights, self.quant)
        c = weights.config
        mine = self.config
        diff = [n for n in ("family", "layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab")
                if getattr(c, n) != getattr(mine, n)]
        if diff:
            raise LLMError(f"weights for a different model: {', '.join(f'{n} {getattr(c, n)} vs {getattr(mine, n)}' for n in diff)}",
                           user_loc(), hint="build the model from the weights' config")
        self.weights = weights
        self._args = {}
        return self

    def layer_args(self, i: int) -> list[np.ndarray]:
        """Layer ``i``'s weight arguments in the order of its dataflow (a ``name*`` is codes, then scales)."""
        if i not in self._args:
            self._args[i] = self._layer_args(i)
        return self._args[i]

    def _layer_args(self, i: int) -> list[np.ndarray]:
        lw: LayerWeights = self.weights.layers[i]
        spec = self.layer(1, self.layer_kinds[i])
        out = []
        for name in spec.weights:
            base = name.rstrip("*")
            if base == "qkv_w":
                parts = [lw.q, lw.k, lw.v]
                w = (QuantLinear(np.concatenate([p.codes for p in parts]), np.concatenate([p.scale for p in parts]),
                                 parts[0].bits) if isinstance(lw.q, QuantLinear) else np.concatenate(parts, axis=0))
            elif base == "qkv_b":
                w = np.concatenate([lw.q_b, lw.k_b, lw.v_b])
            else:
                w = getattr(lw, base)
            if isinstance(w, QuantLinear):
                out += [np.ascontiguousarray(w.codes, dtype=np.int8), np.ascontiguousarray(w.scale, dtype=np.float32)]
            else:
                out.append(np.ascontiguousarray(w, dtype=np.float32))
        return out

    # ---------------------------------------------------------------- run
    def new_cache(self) -> Cache:
        c = self.config
        shape = (c.kv_heads, self.max_len, c.head_dim)
        z = [np.zeros(shape, np.float32) for _ in range(c.layers)]
        return Cache(z, [x.copy() for x in z], 0)

    def _run_kernel(self, k, args, mode):
        if mode == "sim":
            return k(*args)
        key = ("kernel", k.ir.name)
        if key not in self._projects:
            self._projects[key] = default_schedule(k).build("hls")
        return self._projects[key].csim(*args)

    def _rope(self, pos: int, t: int) -> dict:
        """theta -> (cos, sin) of positions pos .. pos + t - 1, once per call for all layers."""
        out = {}
        for theta, inv in self._inv_freq.items():
            cos, sin = rope_tables(np.arange(pos, pos + t), inv)
            out[theta] = (np.ascontiguousarray(cos, np.float32), np.ascontiguousarray(sin, np.float32))
        return out

    def layer_inputs(self, i: int, x: np.ndarray, keys: np.ndarray, values: np.ndarray, pos: int,
                     rope: dict | None = None) -> list:
        """Layer ``i``'s arguments for the ``t = len(x)`` new tokens after ``pos`` cached ones: the residual
        stream, its weights, its KV cache, RoPE's tables of those positions and ``pos``/``n_valid``."""
        c = self.config
        t = len(x)
        args = [x] + self.layer_args(i) + [keys, values]
        if c.rope_theta is not None:
            rope = rope if rope is not None else self._rope(pos, t)
            args += list(rope[c.layer_theta(i)])
        return args + [np.int32(pos), np.int32(pos + t)]

    def _run_layer(self, i: int, t: int, x, cache: Cache, pos: int, rope: dict, mode: str):
        kind = self.layer_kinds[i]
        spec = self.layer(t, kind)
        args = self.layer_inputs(i, x, cache.keys[i], cache.values[i], pos, rope)
        if mode == "sim":
            return spec.function(*args)
        key = ("layer", t, kind)
        if key not in self._projects:
            self._projects[key] = self.schedule(t, kind).build("hls")
        return self._projects[key].csim(*args)

    def _check(self, mode: str, cache: Cache | None, t: int):
        if self.weights is None:
            raise LLMError("the model has no weights", user_loc(), hint="model.load(weights) first")
        if mode not in MODES:
            raise LLMError(f"unknown mode {mode!r}", user_loc(), hint=f"mode is one of {', '.join(MODES)}")
        used = cache.length if cache is not None else 0
        if used + t > self.max_len:
            raise LLMError(f"{used + t} tokens do not fit the KV cache of {self.max_len} positions", user_loc(),
                           hint=f"build the model with a larger max_len, e.g. {self.config.family}(config, max_len="
                                f"{max(2 * self.max_len, used + t)})")

    @renamed(backend="mode")
    def prefill(self, ids, cache: Cache | None = None, mode: str = "sim") -> tuple[np.ndarray, Cache]:
        """Logits ``[T, vocab]`` of ``ids`` after ``cache``'s tokens, and the updated cache."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size == 0 or ids.min() < 0 or ids.max() >= self.config.vocab:
            raise LLMError(f"token ids must be a non-empty sequence in 0..{self.config.vocab - 1}", user_loc(),
                           hint="check the tokenizer matches the model")
        t = int(ids.size)
        self._check(mode, cache, t)
        cache = cache if cache is not None else self.new_cache()
        pos = cache.length
        w = self.weights
        emb = self._kernel("embed", t)
        ids32 = ids.astype(np.int32)
        eargs = [ids32, w.embed] + ([w.pos_embed, np.int32(pos)] if self.config.family == "gpt2" else [])
        x = self._run_kernel(emb, eargs, mode)
        keys, values = list(cache.keys), list(cache.values)
        new = Cache(keys, values, pos + t)
        place = self.kv_rows()
        rope = self._rope(pos, t)
        for i in bar(range(self.config.layers), desc="prefill" if t > 1 else "decode", unit="layer"):
            x, k, v = self._run_layer(i, t, x, cache, pos, rope, mode)
            keys[i], values[i] = _with_rows(keys[i], k, pos, place), _with_rows(values[i], v, pos, place)
        nargs = [x, w.final_norm] + ([w.final_norm_b] if self.config.norm == "layernorm" else [])
        hn = self._run_kernel(self._kernel("norm", t), nargs, mode)
        logits = self._run_kernel(self._kernel("head", t), [hn, w.lm_head], mode)
        return logits, new

    @renamed(backend="mode")
    def decode(self, token_id: int, cache: Cache, mode: str = "sim") -> tuple[np.ndarray, Cache]:
        """Logits ``[vocab]`` of one token after ``cache``, and the cache with it appended."""
        if not isinstance(cache, Cache) or cache.length == 0:
            raise LLMError("decode needs the cache prefill returned", user_loc(),
                           hint="logits, cache = model.prefill(prompt_ids); then model.decode(token, cache)")
        logits, cache = self.prefill([int(token_id)], cache, mode)
        return logits[0], cache

    def build(self, target: str = "hls", output=None, **options):
        """The accelerator's project: the layer dataflow, host code, link config, packed weights (:mod:`.hls_build`)."""
        if target != "hls":
            raise LLMError(f"unknown target {target!r}", user_loc(), hint='use target="hls"')
        from .hls_build import build

        return build(self, output, **options)

    @renamed(backend="mode")
    def verify(self, reference, ids, decode_steps: int = 2, mode: str = "sim", rtol: float = 1e-4,
               atol: float = 1e-4) -> "Verification":
        """Check prefill and ``decode_steps`` cached decode steps against ``reference(ids) -> logits [T, vocab]``.

        ``reference`` is the user's truth (a NumpyModel's ``forward``, a transformers
        model wrapped to NumPy, ...); decode step ``n`` is compared with the last row of
        ``reference`` on the whole sequence so far.  Raises :class:`LLMError` on a mismatch.
        """
        ids = [int(i) for i in np.asarray(ids).reshape(-1)]
        logits, cache = self.prefill(ids, mode=mode)
        seq = list(ids)
        rows = [(logits, np.asarray(reference(seq), np.float32))]
        for _ in bar(range(decode_steps), desc="verify", unit="step"):
            nxt = int(np.argmax(rows[-1][0] if rows[-1][0].ndim == 1 else rows[-1][0][-1]))
            seq.append(nxt)
            lg, cache = self.decode(nxt, cache, mode)
            rows.append((lg, np.asarray(reference(seq), np.float32)[-1]))
        worst = 0.0
        for step, (got, want) in enumerate(rows):
            if got.shape != want.shape:
                raise LLMError(f"reference logits have shape {want.shape}, the model's {got.shape} (step {step})",
                               user_loc(), hint="reference(ids) must return logits [len(ids), vocab]")
            err = np.abs(got - want) - (atol + rtol * np.abs(want))
            if (err > 0).any() or not np.array_equal(np.argmax(got, -1), np.argmax(want, -1)):
                raise LLMError(f"step {step}: logits differ from the reference by up to "
                               f"{float(np.abs(got - want).max()):.3g} (rtol {rtol}, atol {atol}) or pick another token",
                               user_loc(), hint="compare the swapped block with the library block on the same inputs")
            worst = max(worst, float(np.abs(got - want).max()))
        return Verification(len(rows), worst, mode)

    @renamed(backend="mode")
    def generate(self, prompt_ids, max_new_tokens: int, mode: str = "sim", stop_tokens=()) -> list[int]:
        """Greedy generation (argmax, first index on ties): prefill, then one decode per new token."""
        with bar(total=max_new_tokens, desc="generate", unit="tok") as progress:
            logits, cache = self.prefill(prompt_ids, mode=mode)
            out: list[int] = []
            nxt = int(np.argmax(logits[-1]))
            stop = {int(s) for s in stop_tokens}
            while len(out) < max_new_tokens:
                out.append(nxt)
                progress.update(1)
                if nxt in stop or len(out) == max_new_tokens:
                    break
                logits, cache = self.decode(nxt, cache, mode)
                nxt = int(np.argmax(logits))
        return out


def _builder(family: str):
    def build(config: LLMConfig, blocks: dict | None = None, max_len: int = 64, quant: str = "fp32",
              pack: bool | str = True) -> LLM:
        if config.family != family:
            raise LLMError(f"{family}() takes a {family} config, got a {config.family} one", user_loc(),
                           hint=f"use {config.family}(config)")
        return LLM(config, max_len, dict(blocks or {}), quant, pack=pack)

    build.__name__ = family
    build.__doc__ = f"The {family} decoder: one fused layer dataflow re-invoked per layer (see :class:`LLM`)."
    return build


gpt2, llama, qwen2, gemma3 = (_builder(f) for f in ("gpt2", "llama", "qwen2", "gemma3"))


def model(config: LLMConfig, blocks: dict | None = None, max_len: int = 64, quant: str = "fp32",
          pack: bool | str = True) -> LLM:
    """The builder of ``config``'s family."""
    return {"gpt2": gpt2, "llama": llama, "qwen2": qwen2, "gemma3": gemma3}[config.family](config, blocks, max_len,
                                                                                          quant, pack)
