"""LLM-level performance on a board: TTFT, decode tokens/s, bytes per token, rooflines.

``llm_perf(config_or_model, board="u55c", prompt=32, gen=32, bits=W4A8)``
explores the one-token decode layer of each layer kind (``sd.explore``),
builds the prefill layer (``prompt`` tokens) with the same tiling and unroll
factors, or those of the exploration's slowest-kernel-first unrolling when
they make a faster prefill (or explores it on its own with
``explore_prefill=True``), and
composes the model as the paper's accelerator runs it: one fused layer
accelerator re-invoked once per layer.

* per-layer latency: the token simulator's cycles of the layer design;
* TTFT = sum over layers of the prefill layer latency: the prompt at once, or
  in chunks (each chunk a pass of the layer at t = chunk over the cache) when
  the whole-prompt layer does not fit the board;
* decode tokens/s = 1 / sum over layers of the decode layer latency, with the
  KV cache at its full ``prompt + gen`` positions (the cost model takes the
  attention loops at their largest bound, so every decode step is modeled
  at the longest context: a worst case);
* latency = TTFT + gen / decode tokens/s (the paper's definition);
* bytes per token: every DMA of the decode layer, times the layers;
* HBM roofline: board bandwidth / bytes of the weights (each weight read once
  per token, the paper's 0.35 ms/token for GPT-2 Medium) and / the design's
  own traffic; compute rooflines: the fabric's fp32 peak (the datapath the
  layer is built with) and the vendor's INT8 peak, over 2 x MACs per token.

**Quantisation**: ``bits=W4A8`` (or ``W8A8``) models the quantised
accelerator as built (``model(config, quant="w4a8")``): int4 (int8) weight
matrices move at their width and feed int32 MACs (narrow multipliers in
LUTs); activations, norms, attention and the KV cache stay fp32, and every
tensor moves at the width the design stores it with.  ``bits=FP32`` models
the fp32 accelerator.  The LM head and the embedding run on the host (as the
paper's accelerator does only the decoder layers) and are excluded, as are the
launches and PCIe transfers: these are the layer kernels alone, of the explored
design (``streamdsl llm build`` emits its decode layer, not its prefill layer); :mod:`.e2e` prices
what a user of the generated project waits for.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from streamdsl import board as get_board
from streamdsl.explorer import Config, ExploreError, commit, evaluate, explore
from streamdsl.perf import ModelPerf

from .config import LLMConfig, LLMError, user_loc
from .models import LLM, model

W4A8 = {"weights": 4, "vectors": 8, "act": 8, "kv": 8}
W8A8 = {"weights": 8, "vectors": 8, "act": 8, "kv": 8}
FP32 = {"weights": 32, "vectors": 32, "act": 32, "kv": 32}
QUANT = {4: "w4a8", 8: "w8a8", 32: "fp32"}
ACT_EDGES = ("x", "y", "cos", "sin")


def _map_config(cfg: Config, src_fn, dst_fn) -> Config:
    """The same per-block unroll factors on a layer of another size (tasks match in program order)."""
    src, dst = list(src_fn.graph.tasks), list(dst_fn.graph.tasks)
    pos = {n: i for i, n in enumerate(src)}
    return dataclasses.replace(cfg, unroll=tuple((dst[pos[n]], u) for n, u in cfg.unroll),
                               dsp=tuple(dst[pos[n]] for n in cfg.dsp), fabric=tuple(dst[pos[n]] for n in cfg.fabric),
                               split=tuple(dst[pos[n]] for n in cfg.split))


def layer_matrix_elements(c: LLMConfig) -> int:
    """Elements of one layer's weight matrices (q, k, v, o and the MLP's)."""
    h = c.hidden
    return h * c.q_dim + 2 * h * c.kv_dim + c.q_dim * h + (3 if c.gated_mlp else 2) * h * c.intermediate


def layer_weight_bytes(c: LLMConfig, bits: dict | None) -> int:
    """Bytes of every layer's weight matrices at the scheme's weight width (``bits``; None: fp32)."""
    return c.layers * layer_matrix_elements(c) * (bits or FP32)["weights"] // 8


def layer_macs(c: LLMConfig, context: int) -> int:
    """Multiply-accumulates of one layer for one token: the weight matrices plus attention over ``context`` keys."""
    return layer_matrix_elements(c) + 2 * c.heads * context * c.head_dim


@dataclass
class LayerPerf:
    kind: str
    count: int
    decode: object  # DesignPerf
    prefill: object  # DesignPerf of one prefill chunk
    exploration: object  # Exploration
    chunk: int = 0  # tokens per prefill pass

    def prefill_passes(self, prompt: int) -> int:
        return -(-prompt // self.chunk)


@dataclass
class LLMPerf(ModelPerf):
    config: LLMConfig
    board: object
    prompt: int
    gen: int
    bits: dict | None
    quant: str = "fp32"
    layers: list[LayerPerf] = field(default_factory=list)
    pack: bool | str = False  # W4A8 linears with two outputs a DSP48E2 (quant.packs): in which phases (LLM.pack)

    @property
    def name(self) -> str:
        return self.config.name or self.config.family

    @property
    def clock_mhz(self) -> float:
        return self.layers[0].decode.clock_mhz

    @property
    def ttft_s(self) -> float:
        return sum(lp.count * lp.prefill_passes(self.prompt) * lp.prefill.latency_s for lp in self.layers)

    @property
    def decode_s(self) -> float:
        return sum(lp.count * lp.decode.latency_s for lp in self.layers)

    @property
    def tokens_per_s(self) -> float:
        return 1.0 / self.decode_s

    @property
    def latency_s(self) -> float:
        return self.ttft_s + self.gen / self.tokens_per_s

    def bytes_per_token(self) -> dict[str, int]:
        """DMA bytes of one decode step over all layers, by kind of tensor."""
        out = {"weights": 0, "kv": 0, "act": 0}
        for lp in self.layers:
            fn = lp.decode.schedule.function
            for d in lp.decode.dmas:
                e = fn.graph.edges[d.tensor]
                # rank 3: the KV caches read and the new keys and values stored into them
                k = "kv" if e.type.rank == 3 else "act" if d.tensor in ACT_EDGES or not e.is_input else "weights"
                out[k] += lp.count * d.bytes
        return out

    def weight_bytes(self) -> int:
        return layer_weight_bytes(self.config, self.bits)

    @property
    def hbm_roofline_tps(self) -> float:
        """Tokens/s if each token only read every weight matrix once at the board's full bandwidth."""
        return self.board.memory.total_gbs * 1e9 / self.weight_bytes()

    @property
    def traffic_roofline_tps(self) -> float:
        """Tokens/s at full bandwidth for this design's own traffic (weights, whole KV caches read, new rows stored, activations)."""
        return self.board.memory.total_gbs * 1e9 / sum(self.bytes_per_token().values())

    def ops_per_token(self) -> int:
        return 2 * self.config.layers * layer_macs(self.config, self.prompt + self.gen)

    @property
    def fp32_roofline_tps(self) -> float:
        return self.board.fp32_peak_gflops(self.clock_mhz) * 1e9 / self.ops_per_token()

    @property
    def int8_roofline_tps(self) -> float | None:
        p = self.board.peak_int8_tops
        return p * 1e12 / self.ops_per_token() if p else None

    def assumptions(self) -> list[str]:
        b = self.bits
        out = []
        if self.quant != "fp32":
            out.append(f"the {self.quant.upper()} accelerator as built: int{b['weights']} weight matrices (HBM "
                       f"traffic at {b['weights']} bits), int8 activations inside each linear, int32 MACs; scales, "
                       "norms, RoPE, attention, softmax and the KV cache in fp32, moved at 32 bits")
        if self.quant == "w4a8":
            where = {True: "in both phases' layers", "decode": "in the decode layer (the prefill layer's take one "
                     "MAC a lane)", "prefill": "in the prefill layer (the decode layer's take one MAC a lane)"}
            out.append(f"W4A8 linears accumulate two outputs a DSP48E2 where their sizes allow (at most 2064 inputs: "
                       f"quant.packs) {where[self.pack]}" if self.pack else "W4A8 linears take one MAC a lane")
            out[-1] += (f" (model(..., pack={self.pack!r})); llm_perf of a config models both, keeps the faster "
                        "decode layer and the faster prefill layer at its factors")
        else:
            out.append("the fp32 accelerator: every tensor moves at 32 bits")
        out += [
            f"one fused layer accelerator re-invoked per layer ({self.config.layers} layers: " + ", ".join(
                f"{lp.count} x {lp.kind}" for lp in self.layers) + "); layer-to-layer handoff through HBM, no overlap",
            f"TTFT = prefill of {self.prompt} tokens through every layer (" + ", ".join(
                f"{lp.kind}: {lp.prefill_passes(self.prompt)} pass(es) of {lp.chunk} tokens" for lp in self.layers)
            + "; a chunk's attention at the full cache bound); decode at a KV cache of "
            f"{self.prompt + self.gen} positions (attention walks the whole streamed cache, masked to the valid keys)",
            "latency = TTFT + gen / decode tokens/s (the paper's definition)",
            "LM head, final norm and embedding on the host, launches and PCIe: not modeled here (e2e.py prices them "
            "in the generated host program; the head would add "
            f"{self.config.vocab * self.config.hidden * (b or FP32)['weights'] / 8 / 2**20:.1f} MiB per token)",
            "the KV caches are updated in place: every decode step reads the whole cache of every layer and "
            "stores only the new token's keys and values into it (g.store_at)",
            f"HBM roofline: {self.board.memory.total_gbs:g} GB/s over the weight matrices read once per token "
            f"({self.weight_bytes() / 2**20:.1f} MiB)",
            f"compute rooflines: {2 * layer_macs(self.config, self.prompt + self.gen) * self.config.layers / 1e9:.3f} "
            f"GOP per token; fp32 fabric peak {self.board.fp32_peak_gflops(self.clock_mhz):.0f} GFLOP/s "
            "(DSPs / 5 per fp32 MAC x 2 x clock)" + (f"; vendor INT8 peak {self.board.peak_int8_tops} TOPS"
                                                      if self.board.peak_int8_tops else ""),
        ]
        return out

    def gaps(self, target_tps: float = 1000.0, target_frac: float = 0.35) -> list[str]:
        """Why the modeled decode rate falls short of the targets, from the model's own numbers."""
        out = []
        tps = self.tokens_per_s
        if tps < target_tps or tps < target_frac * self.hbm_roofline_tps:
            lp = max(self.layers, key=lambda x: x.count * x.decode.cycles)
            d = lp.decode
            slow = d.slowest(3)
            bundles = d.schedule.lowered().bundles if d.schedule is not None else []
            bundled = {m for b in bundles for m in b}
            cyc = {x.name: x.cycles for x in d.dmas}
            times = [x.cycles for x in d.dmas if x.name not in bundled] + [sum(cyc[m] for m in b) for b in bundles]
            dma_max = max(times, default=0)
            share = sum(n.cycles for n in d.nodes.values() if n.kind == "task")
            out.append(f"decode {tps:.1f} tokens/s = {tps / self.hbm_roofline_tps * 100:.1f} % of the HBM roofline "
                       f"({self.hbm_roofline_tps:.0f}); a {lp.kind} layer takes {d.cycles} cycles, its longest DMA "
                       f"(a bundle's DMAs, run in turn, counted as one) {dma_max} cycles: compute-bound by "
                       f"{d.cycles / max(1, dma_max):.1f}x")
            out.append("the one-token layer's kernels each need their whole input row, so they overlap little: "
                       f"kernel cycles sum to {share} against the layer's {d.cycles}; slowest: " + ", ".join(
                           f"{n.name} {n.cycles}" for n in slow))
            if d.cycles > share:
                chans = max((x.channels for x in d.dmas if x.name in bundled), default=0)
                out.append(f"the layer takes {d.cycles - share} cycles beyond its kernels' sum: a kernel waits "
                           "when its weights stream in slower than it reads them (one DMA process reads the layer's "
                           f"weights and vectors in turn over {chans:.0f} of the {self.board.memory.channels} HBM "
                           "channels; the KV caches' loads and the new rows' stores have the rest) and attention waits for the "
                           "KV cache")
            out.append("each W4A8 linear quantises its input row before its MACs and dequantises its outputs "
                       "after them (fp32 dividers and multipliers in few lanes), and the next kernel needs the "
                       "whole row: those phases add to the layer's time one after another")
            use = {r: d.total[r] / max(1, self.board.total[r]) for r in ("lut", "ff", "dsp", "bram", "uram")}
            out.append("the board is where the explorer stops widening (UG1393's guideline of a resource less the "
                       "device head and the other kinds' layers, and a kernel's lanes on one SLR): "
                       + ", ".join(f"{r.upper()} {v:.0%}" for r, v in use.items()) + "; an int8 x int4 "
                       "MAC lane is ~64 LUTs and 128 FFs in fabric; bound to DSPs, a W4A8 linear with at most "
                       "2064 inputs packs two outputs a DSP48E2 (quant.packs), a wider one (a down projection) "
                       "takes a DSP a MAC; fp32 adds of norms, attention and dequantisation take 2 DSPs each, or "
                       "~430 LUTs when the explorer moves a kernel's adds to LUTs, and fp32 multiplies 3 DSPs")
            red = [x for x in slow if x.name.split("_")[0] in ("layernorm", "rmsnorm", "attention")]
            caches = {pl.into for pl in d.schedule.placements().values()} if d.schedule is not None else set()
            kv = [x for x in d.dmas if x.direction == "load" and x.tensor in caches]
            if kv:
                out.append("the KV caches go from their loads straight into attention (the new rows read apart, "
                           "only they stored back), each over one m_axi port, since the new rows' store writes the "
                           "same buffer: " + ", ".join(f"{x.name} {x.bytes / 2**10:.0f} KiB in {x.cycles} cycles "
                                                       f"at {x.gbs:.1f} GB/s" for x in kv))
            if self.quant == "fp32":
                out.append("each fp32 MAC lane costs 5 DSPs and sustains 1 MAC per fadd recurrence (the add's "
                           "latency less one cycle, on the scalar accumulator of every library linear); int8 x int4 "
                           "MACs (quant='w4a8') are "
                           "LUT multipliers with 1-cycle adds")
            if red:
                out.append("fp32 reductions are bound by the fadd recurrence (the add's latency less one cycle): "
                           "a norm's sum retires one element per partial-sum lane each recurrence and its lanes "
                           "combine pairwise; attention "
                           f"walks the whole cache ({self.prompt + self.gen} positions) of every head, its softmax "
                           "sum in four interleaved parts (a key of every head a cycle) and its dot products and "
                           "value rows as many lanes as the board leaves: " + ", ".join(f"{n.name} {n.cycles}" for n in red) + " cycles")
            out.append(f"compute roofline of the fp32 fabric: {self.fp32_roofline_tps:.0f} tokens/s; the design "
                       f"reaches {tps / self.fp32_roofline_tps * 100:.1f} % of it")
        lp = max(self.layers, key=lambda x: x.count * x.prefill_passes(self.prompt) * x.prefill.cycles)
        pre = lp.prefill
        slow = pre.slowest(1)
        out.append(f"TTFT {self.ttft_s * 1e3:.1f} ms: the {lp.kind} prefill layer runs {lp.prefill_passes(self.prompt)} "
                   f"pass(es) of {lp.chunk} tokens ({'the whole prompt' if lp.chunk >= self.prompt else 'the whole prompt does not fit the board'}), "
                   f"{pre.cycles} cycles a pass, built at the decode exploration's unroll factors (explore_prefill=True "
                   "explores it on its own); its slowest kernel " + ", ".join(f"{n.name} {n.cycles}" for n in slow) +
                   (" (each chunk's queries walk the whole cache, masked keys included)"
                    if slow and slow[0].name.startswith("attention_decode") else ""))
        return out

    def _repr_html_(self) -> str:
        from streamdsl.htmlreport import perf_html

        return perf_html(self)

    def report(self) -> str:
        b = self.bytes_per_token()
        i8 = self.int8_roofline_tps
        lines = [
            f"{self.name} on {self.board.name} at {self.clock_mhz:g} MHz, "
            f"[in:out] = [{self.prompt}:{self.gen}] (model estimates)",
            f"  latency {self.latency_s * 1e3:.2f} ms, TTFT {self.ttft_s * 1e3:.2f} ms, decode "
            f"{self.tokens_per_s:.2f} tokens/s ({self.decode_s * 1e3:.3f} ms/token)",
            f"  bytes per token: {sum(b.values()) / 2**20:.2f} MiB (weights {b['weights'] / 2**20:.2f}, KV cache "
            f"{b['kv'] / 2**20:.2f}, activations {b['act'] / 2**20:.3f})",
            f"  HBM roofline {self.hbm_roofline_tps:.0f} tokens/s (design at {self.tokens_per_s / self.hbm_roofline_tps * 100:.2f} %); "
            f"own-traffic roofline {self.traffic_roofline_tps:.0f} tokens/s",
            f"  compute roofline fp32 {self.fp32_roofline_tps:.0f} tokens/s (design at "
            f"{self.tokens_per_s / self.fp32_roofline_tps * 100:.2f} %)" + (
                f", INT8 {i8:.0f} tokens/s (design at {self.tokens_per_s / i8 * 100:.3f} %)" if i8 else ""),
        ]
        for lp in self.layers:
            lines.append(f"  {lp.count} x {lp.kind} layer: decode {lp.decode.cycles} cycles "
                         f"({lp.decode.latency_s * 1e6:.1f} us), prefill {lp.prefill_passes(self.prompt)} x "
                         f"{lp.prefill.cycles} cycles ({lp.chunk} tokens, {lp.prefill.latency_s * 1e3:.3f} ms); fits: decode {'yes' if lp.decode.fits else 'NO'}, "
                         f"prefill {'yes' if lp.prefill.fits else 'NO: ' + '; '.join(lp.prefill.problems)}")
        lines.append("decode layer design:")
        from streamdsl.perf import resource_lines

        lines += ["  " + x for x in resource_lines(self.layers[0].decode)]
        gaps = self.gaps()
        if gaps:
            lines.append("gaps to the targets (>= 1000 tokens/s, >= 35 % of the HBM roofline):")
            lines += [f"  - {g}" for g in gaps]
        lines.append("assumptions:")
        lines += [f"  - {a}" for a in self.assumptions()]
        lines += [f"  - {a}" for a in self.layers[0].decode.assumptions]
        lines += [f"  - board: {x.strip()}" for x in self.board.assumptions()]
        return "\n".join(lines)


def llm_perf(target, board="u55c", prompt: int = 32, gen: int = 32, bits: dict | None = W4A8,
             clock_mhz: float | None = None, budget: int | None = None, explore_prefill: bool = False,
             prefill_chunk: int | None = None) -> LLMPerf:
    """Explore and model ``target`` (an LLMConfig or an LLM) for ``[prompt:gen]`` on ``board``.

    W4A8 from a config is modeled with the linears packed two outputs a DSP48E2 and with one MAC a lane
    (``model(..., pack=False)``); the faster decode layer is kept, with the faster of the prefill layers
    built at its factors with either linears, and ``pack`` says which (``model(..., pack=p.pack)`` models
    the same); an LLM is modeled as it is built.

    ``prefill_chunk``: tokens per prefill pass (``m.prefill(ids[i:i + chunk], cache)``, the layer
    dataflow at t = chunk); default: the whole prompt if its layer fits the board, else the largest
    halving of it (down to 16) that fits."""
    if prompt < 1 or gen < 1:
        raise LLMError(f"prompt and gen must be positive, got {prompt} and {gen}", user_loc(), hint="e.g. prompt=32, gen=32")
    if prefill_chunk is not None and (isinstance(prefill_chunk, bool) or not isinstance(prefill_chunk, int)
                                      or prefill_chunk < 1):
        raise LLMError(f"prefill_chunk must be a positive integer, got {prefill_chunk!r}", user_loc(),
                       hint="e.g. prefill_chunk=64, or leave it out to pick the largest that fits")
    if isinstance(target, LLM):
        c, blocks = target.config, target.blocks
    elif isinstance(target, LLMConfig):
        c, blocks = target, {}
    else:
        raise LLMError(f"llm_perf takes an LLMConfig or an LLM, got {type(target).__name__}", user_loc(),
                       hint='llm_perf(preset("gpt2-medium"))')
    b = get_board(board)
    bits = bits or FP32
    quant = QUANT.get(bits["weights"])
    if quant is None or (quant != "fp32" and (bits["act"] != 8)):
        raise LLMError(f"bits={bits} is not a scheme the library builds", user_loc(),
                       hint="bits=W4A8, W8A8 or FP32 (from streamdsl.library.llm.perf)")
    if isinstance(target, LLM) and target.quant != quant:
        raise LLMError(f"the model computes {target.quant} but bits asks for {quant}", user_loc(),
                       hint=f"build the model with quant={quant!r}, or pass the matching bits")
    if blocks and quant != "fp32":
        raise LLMError("swapped blocks are fp32 kernels: a quantised model cannot use them", user_loc(),
                       hint="model the fp32 design (bits=FP32)")
    args = (c, b, prompt, gen, bits, quant, budget, clock_mhz, explore_prefill, prefill_chunk)
    if isinstance(target, LLM) or quant != "w4a8":
        return _model_perf(model(c, blocks, max_len=prompt + gen, quant=quant,
                                 pack=target.pack if isinstance(target, LLM) else True), *args)
    # packed pairs need DSPs, one MAC a lane can live in LUTs: the board decides, per phase
    packed, plain = (_model_perf(model(c, blocks, max_len=prompt + gen, quant=quant, pack=p), *args)
                     for p in (True, False))
    dec = min((packed, plain), key=lambda x: (not all(lp.decode.fits for lp in x.layers), x.decode_s))
    # the faster decode layer kept, its prefill layer also tried with the other linears (built, like any prefill
    # layer, at the decode exploration's factors: what model(..., pack="decode" | "prefill") builds)
    mixed = _model_perf(model(c, blocks, max_len=prompt + gen, quant=quant,
                              pack="decode" if dec is packed else "prefill"), *args,
                        explored={lp.kind: lp.exploration for lp in dec.layers})
    return min((dec, mixed), key=lambda x: (not all(lp.prefill.fits for lp in x.layers), x.ttft_s))


def _model_perf(m: LLM, c: LLMConfig, b, prompt: int, gen: int, bits: dict, quant: str, budget, clock_mhz,
                explore_prefill: bool, prefill_chunk: int | None, explored: dict | None = None) -> LLMPerf:
    """``m`` modeled (``explored``: the decode layers' explorations, by kind, when they are already known)."""
    out = LLMPerf(c, b, prompt, gen, bits, quant, pack=m.pack if quant == "w4a8" else False)
    for kind in m.kinds():
        count = m.layer_kinds.count(kind)
        dec_fn = m.layer(1, kind).function
        ex = (explored[kind] if explored else m.exploration(kind, b) if budget is None and clock_mhz is None
              else explore(m, b, budget, clock_mhz=clock_mhz, bits=None, t=1, kind=kind, **m.neighbours(kind, b)))
        pre, chunk = None, prompt
        for chunk in _chunks(prompt, prefill_chunk):
            pre_fn = m.layer(chunk, kind).function
            pre = None
            for dec_cfg in _prefill_configs(ex):
                got = _prefill_at(pre_fn, _map_config(dec_cfg, dec_fn, pre_fn), b, clock_mhz, chunk)
                if pre is None or (got.fits and (not pre.fits or got.cycles < pre.cycles)):
                    pre = got
            if explore_prefill:
                try:
                    own = explore(m, b, budget, clock_mhz=clock_mhz, t=chunk, kind=kind, fusion=False).best
                except ExploreError:
                    own = None  # no prefill design fits: keep the mapped one, whose problems are reported
                if own is not None and own.fits and (not pre.fits or own.cycles < pre.cycles):
                    pre = own  # the prefill layer's own exploration, when it beats the decode factors
            if pre.fits:
                break
        out.layers.append(LayerPerf(kind, count, ex.best, pre, ex, chunk))
    return out


def _prefill_configs(ex) -> list:
    """Decode designs whose factors the prefill layer is built with: the chosen one and, when it differs, the
    fastest fitting one of the slowest-kernel-first unrolling (the paper's), each in both loop orders.  A one-token layer's best
    factors minimise a sum of kernel times; a prefill layer streams rows through every kernel at once, so
    its time is the slowest kernel's, which that unrolling minimises."""
    out = [ex.config]
    heap = [r for r in ex.tried if r.space == "tiling" and r.perf is not None and r.perf.fits
            and r.cfg.unroll and not r.why.startswith("by gain")]
    if heap:
        alt = dataclasses.replace(min(heap, key=lambda r: r.perf.cycles).cfg, fusion=ex.config.fusion,
                                  prefetch=ex.config.prefetch)
        if alt.unroll != ex.config.unroll:
            out.append(alt)
    # and each with the other loop order: many rows keep other buffers than one (a 64-row layer at the one-token
    # layer's order overfilled the BRAM where the other order fitted)
    return out + [dataclasses.replace(c, reorder=not c.reorder) for c in out]


def _prefill_at(pre_fn, cfg, b, clock_mhz, chunk: int):
    """The prefill layer at ``cfg`` (the decode factors), committed when it fits; when it does not, without
    weight prefetch and then at halved factors (up to three times)."""
    r = evaluate(pre_fn, cfg, b, clock_mhz, None, label=f"prefill {chunk}")
    if r.perf is not None and not r.perf.fits and cfg.prefetch:  # weight FIFOs may be what overfills it
        cfg = dataclasses.replace(cfg, prefetch=0)
        r = evaluate(pre_fn, cfg, b, clock_mhz, None, label=f"prefill {chunk}")
    narrow = 0
    while r.perf is not None and not r.perf.fits and narrow < 3 and any(u > 1 for _, u in cfg.unroll):
        # the prefill layer's own buffers overfill the board at the decode factors: halve them
        cfg = dataclasses.replace(cfg, unroll=tuple((n, max(1, u // 2)) for n, u in cfg.unroll))
        r = evaluate(pre_fn, cfg, b, clock_mhz, None, label=f"prefill {chunk}, factors / {2 << narrow}")
        narrow += 1
    if r.perf is None:
        raise LLMError(f"the {chunk}-token prefill layer could not be built: {r.why}", user_loc())
    return commit(r.perf, None, cfg.prefetch) if r.perf.fits else r.perf


def _chunks(prompt: int, chunk: int | None) -> list[int]:
    """Prefill chunk sizes to try: ``chunk`` if given, else the whole prompt, then halves down to 16 tokens."""
    if chunk is not None:
        return [min(chunk, prompt)]
    out = [prompt]
    while out[-1] > 16:
        out.append((out[-1] + 1) // 2)
    return out


__all__ = ["FP32", "LLMPerf", "W4A8", "W8A8", "layer_macs", "layer_matrix_elements", "layer_weight_bytes", "llm_perf"]
