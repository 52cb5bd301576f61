"""End to end: what a user of the project ``streamdsl llm build`` writes waits for, per token and to the first.

``end_to_end(config, board="u55c", prompt=32, gen=32, quant="w4a8")`` prices the one-kernel design: the xclbin
holds one kernel, ``<family>_generate`` (:mod:`.device`), that runs a whole generate call on the card, and the
host launches it once a call.  The layer kernels it calls are the ones ``LLM.build`` writes (the decode layer
``model.decode_layer(kind, "explored", board)``, the prefill layer ``model.schedule(t, kind, decode=...)``
reading its ports) of the model ``streamdsl llm build FAMILY --config full --quant QUANT --max-len PROMPT+GEN
--prefill-len PROMPT`` makes (the CLI's own ``model_of``), and its head is :func:`.token.device_head_beside` (the
device head widened into the room its layers leave).

A generate call, as the host and the kernel run it:

* **host, before**: one ``xrt::run`` (:data:`.facts.XRT_LAUNCH_U55C` beyond the kernel's time), the prompt
  ids and the ``out`` buffer's -1s synced to the card (int32, 16 to a 512-bit word; :func:`.device.call_syncs`:
  each :data:`.facts.BO_SYNC_SMALL` plus the words over the PCIe write rate :data:`.facts.PCIE_WRITE_LARGE`);
* **device, a step of t tokens**: the embedding gather of ``t`` rows, one after another, each ``hidden / 16``
  words in one burst (:func:`gather_cycles`: the timing model's first-beat latency ``DMA_LATENCY`` plus a word a
  cycle; GPT-2's position row comes over a second port in the same loop, Gemma's scale in the same pipeline),
  then every layer in order (each layer kernel's latency from :func:`streamdsl.perf.model_design`, cost model +
  token simulator; attention walks the whole KV cache of prompt + gen positions, masked, as the emitted layer
  does; nothing of layer l + 1 is fetched while layer l runs, so the latencies add), then, when the step yields a
  token, the head (``model_design`` of :func:`.token.device_head_beside`: final norm, LM head, greedy argmax);
* **the prompt**: when it has at least ``prefill_len`` tokens (and ``prefill_len > 1``), one prefill step over
  the first ``prefill_len``, then a one-token step per remaining prompt token, the head once at the end (the
  kernel's rule, :class:`.device.CallPlan`, whose counts the C-simulation of a launch checks);
* **decoding**: ``gen - 1`` one-token steps with the head (the first token came from the prompt's head), the id
  fed back on the card;
* **host, after**: the generated ids synced back (:data:`.facts.BO_SYNC_SMALL` plus their words over
  :data:`.facts.PCIE_READ_LARGE`).

Decode tokens/s is the inverse of a decode step's device time (no launch or sync a token).  **TTFT** counts the
launch, the prompt's sync, the prompt steps and the head, and one sync of the first id back, as a host that
read it as soon as it is written would (the generated host reads every id after the call: its user sees the
first id at ``latency``).  **latency** is the whole call for ``[prompt:gen]`` (no end-of-sequence id).

**Not counted**: loading the xclbin and writing the weights, the caches' zeroing and the RoPE tables (once,
before the first call), setting the run's arguments beyond what the launch figure holds, process start-up.

:func:`explored_end_to_end` puts the explored layer design of :func:`.perf.llm_perf` (the figures
``benchmarks/paper_table4.py`` headlines) into the same kernel.  ``streamdsl llm build`` does not emit that
design (its prefill layer is built at the decode layer's unroll factors, which the build does not write), so
its :attr:`EndToEnd.emitted` is False.  ``emitted`` is True only for the emitted design of a config the command
writes (the four full-size presets and the tiny configs) on a board it builds for (HBM).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from streamdsl import board as get_board
from streamdsl.perf import fit_designs, model_design

from . import facts
from .device import CallPlan, call_syncs
from .hls_build import auto_prefill
from .config import LLMConfig, LLMError, preset, tiny, user_loc
from .perf import FP32, W4A8, W8A8, LLMPerf, layer_weight_bytes
from .token import device_head_beside

BITS = {"w4a8": W4A8, "w8a8": W8A8, "fp32": FP32}
# Cycles from a DMA's request to its first beat: the timing model's assumed HBM latency at 250 MHz
# (streamdsl/dfg/channels.py DMA_LATENCY, not a public name; tests/library/test_e2e.py keeps the two equal)
DMA_LATENCY = 64
WORD_BYTES = 64  # a 512-bit HBM word: the gather's burst beat and the ids' packing
IDS_PER_WORD = WORD_BYTES // 4  # int32 ids


@dataclass(frozen=True)
class Assumption:
    """One figure the model uses: its value, unit and where it comes from."""

    what: str
    value: float
    unit: str
    source: str

    def __str__(self) -> str:
        return f"{self.what} = {self.value:g} {self.unit}  [{self.source}]"


def gather_cycles(hidden: int, rows: int) -> int:
    """Cycles of the embedding gather of ``rows`` rows of ``hidden`` fp32 values: one after another, each a burst
    of ``hidden / 16`` 512-bit words whose first beat comes ``DMA_LATENCY`` cycles after its request (the
    timing model's HBM latency, :mod:`streamdsl.dfg.channels`), then a word a cycle."""
    return rows * (DMA_LATENCY + -(-hidden * 4 // WORD_BYTES))


@dataclass(frozen=True)
class HostCosts:
    """What the host's part of a generate call costs (defaults: :mod:`.facts`)."""

    launch_us: float = facts.XRT_LAUNCH_U55C.value
    sync_us: float = facts.BO_SYNC_SMALL.value
    to_device_mbs: float = facts.PCIE_WRITE_LARGE.value
    from_device_mbs: float = facts.PCIE_READ_LARGE.value

    def sync_s(self, direction: str, nbytes: int) -> float:
        rate = self.to_device_mbs if direction == "to_device" else self.from_device_mbs
        return self.sync_us * 1e-6 + nbytes / (rate * 1e6)

    def assumptions(self) -> list[Assumption]:
        def cited(f: facts.Fact, value: float) -> str:
            return f"{f.what} on {f.device}: {f.source}" + ("" if value == f.value else "; overridden")

        return [
            Assumption("kernel launch to completion beyond the kernel's time (one xrt::run a generate call)",
                       self.launch_us, "us", cited(facts.XRT_LAUNCH_U55C, self.launch_us)),
            Assumption("xrt::bo::sync, fixed cost a call (the prompt ids in, the generated ids out)", self.sync_us,
                       "us", cited(facts.BO_SYNC_SMALL, self.sync_us)),
            Assumption("PCIe host -> card rate (a sync's bytes over it)", self.to_device_mbs, "MB/s",
                       cited(facts.PCIE_WRITE_LARGE, self.to_device_mbs)),
            Assumption("PCIe card -> host rate", self.from_device_mbs, "MB/s",
                       cited(facts.PCIE_READ_LARGE, self.from_device_mbs)),
            Assumption("HBM latency: cycles from a DMA's request to its first beat (an embedding row's burst)",
                       DMA_LATENCY, "cycles", "the timing model's assumption, streamdsl.dfg.channels.DMA_LATENCY"),
        ]


@dataclass(frozen=True)
class Cost:
    """Seconds of a generate call or part of one, by part, with the counts they come from."""

    device_s: float = 0.0  # the kernel's time: gathers, layers, heads
    launch_s: float = 0.0
    pcie_s: float = 0.0
    launches: int = 0
    syncs: int = 0
    pcie_bytes: int = 0
    gather_s: float = 0.0  # of device_s: the embedding gathers
    layers_s: float = 0.0  # of device_s: the layer kernels
    head_s: float = 0.0  # of device_s: the heads
    heads: int = 0

    @property
    def total_s(self) -> float:
        return self.device_s + self.launch_s + self.pcie_s

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(*(a + b for a, b in zip(self._values(), other._values())))

    def __mul__(self, n: int) -> "Cost":
        return Cost(*(a * n for a in self._values()))

    def _values(self) -> tuple:
        return (self.device_s, self.launch_s, self.pcie_s, self.launches, self.syncs, self.pcie_bytes, self.gather_s,
                self.layers_s, self.head_s, self.heads)

    def __str__(self) -> str:
        return (f"{self.total_s * 1e3:.3f} ms = device {self.device_s * 1e3:.3f} (gather {self.gather_s * 1e3:.3f} + "
                f"layers {self.layers_s * 1e3:.3f} + {self.heads} head(s) {self.head_s * 1e3:.3f}) + launches "
                f"{self.launches} x -> {self.launch_s * 1e3:.3f} + PCIe {self.syncs} syncs of {self.pcie_bytes:,} B "
                f"-> {self.pcie_s * 1e3:.3f}")


@dataclass
class LayerDesigns:
    """The layer kernels of one attention kind: ``count`` layers, the decode design and the prefill one."""

    kind: str
    count: int
    decode: object  # DesignPerf, t = 1
    prefill: object | None  # DesignPerf, t = prefill_len (None: no prefill kernel)


@dataclass
class EndToEnd:
    """The one-kernel design of a layer design and its head: TTFT, decode step, tokens/s; ``report()`` says how."""

    config: LLMConfig
    board: object  # Board
    prompt: int
    gen: int
    quant: str
    prefill_len: int  # tokens of the prefill kernel; 1: none
    layers: list[LayerDesigns]
    head: object  # DesignPerf of token.device_head_beside
    design: str  # "emitted" or "explored": where the layer designs come from
    emitted: bool
    costs: HostCosts = field(default_factory=HostCosts)

    @property
    def name(self) -> str:
        return self.config.name or self.config.family

    @property
    def build_command(self) -> str:
        size = "tiny" if self.config == tiny(self.config.family) else "full"
        return (f"streamdsl llm build {self.config.family} --config {size} --quant {self.quant} --max-len "
                f"{self.prompt + self.gen} --prefill-len {self.prefill_len} --board {self.board.name}")

    def step(self, t: int, head: bool = True) -> Cost:
        """One step of ``t`` tokens on the device: the gather of ``t`` rows, every layer in order, and the head
        when the step yields a token."""
        designs = [(lp.count, lp.decode if t == 1 else lp.prefill) for lp in self.layers]
        if any(d is None for _, d in designs):
            raise LLMError(f"no {t}-token layer kernel in this design", user_loc(), hint="prefill_len > 1")
        gather = gather_cycles(self.config.hidden, t) / (self.board.clock_mhz * 1e6)
        layers = sum(n * d.latency_s for n, d in designs)
        heads = self.head.latency_s if head else 0.0
        return Cost(device_s=gather + layers + heads, gather_s=gather, layers_s=layers, head_s=heads,
                    heads=int(head))

    def ids_sync(self, direction: str, n: int) -> Cost:
        """``n`` ids synced between host and card: int32, 16 to a 512-bit word."""
        nbytes = -(-n // IDS_PER_WORD) * WORD_BYTES
        return Cost(pcie_s=self.costs.sync_s(direction, nbytes), syncs=1, pcie_bytes=nbytes)

    @property
    def prefill_tokens(self) -> int:
        """Prompt tokens the prefill kernel takes (only a prompt of at least prefill_len)."""
        return self.plan.prefill_steps * self.prefill_len

    def launch(self) -> Cost:
        return Cost(launch_s=self.costs.launch_us * 1e-6, launches=1)

    def prompt_steps(self) -> Cost:
        """The prompt on the device: the prefill step, one step a remaining token, the head once."""
        plan = self.plan
        pre = self.step(self.prefill_len, head=False) * plan.prefill_steps
        return pre + self.step(1, head=False) * plan.prompt_decode_steps + Cost(
            device_s=self.head.latency_s, head_s=self.head.latency_s, heads=1)

    @property
    def plan(self) -> CallPlan:
        """What the kernel does in the call (:class:`.device.CallPlan`: the rule its C-simulation counts)."""
        return CallPlan(self.prompt, self.gen, self.prefill_len, self.config.layers, -(-self.config.hidden // 16))

    def syncs(self) -> list[Cost]:
        """The host's buffer syncs of a call, as :func:`.device.call_syncs` lists them: the prompt ids in, the
        ``out`` buffer's -1s in, the generated ids back."""
        return [Cost(pcie_s=self.costs.sync_s(d, b), syncs=1, pcie_bytes=b)
                for d, b in call_syncs(self.prompt + self.gen, self.prompt, self.gen)]

    def ttft(self) -> Cost:
        """Launch, the prompt in, the prompt's steps and head, the first id out (module docstring)."""
        before = self.syncs()[:2]
        return self.launch() + before[0] + before[1] + self.prompt_steps() + self.ids_sync("from_device", 1)

    def decode_step(self) -> Cost:
        return self.step(1)

    def call(self) -> Cost:
        """The whole generate call for ``[prompt:gen]``: one launch, the ids in and out, every step."""
        syncs = self.syncs()
        return self.launch() + syncs[0] + syncs[1] + self.prompt_steps() + self.decode_step() * (self.gen - 1) + \
            syncs[2]

    @property
    def ttft_s(self) -> float:
        return self.ttft().total_s

    @property
    def tokens_per_s(self) -> float:
        return 1.0 / self.decode_step().total_s

    @property
    def layer_tokens_per_s(self) -> float:
        """Decode tokens/s of the layer kernels alone (what :mod:`.perf` reports for its design)."""
        return 1.0 / self.decode_step().layers_s

    @property
    def latency_s(self) -> float:
        return self.call().total_s

    def weight_bytes(self) -> int:
        """Every weight a token reads: the layers' matrices and the LM head, at the scheme's weight width."""
        bits = BITS[self.quant]
        return layer_weight_bytes(self.config, bits) + self.config.vocab * self.config.hidden * bits["weights"] // 8

    @property
    def hbm_roofline_tps(self) -> float:
        """Tokens/s if a token only read every weight (the LM head's too) once at the board's HBM bandwidth."""
        return self.board.memory.total_gbs * 1e9 / self.weight_bytes()

    def designs(self) -> dict:
        """Every kernel design the xclbin holds, by name (None: a missing prefill layer)."""
        return {**variant_designs(self.layers, self.prefill_len), "head": self.head}

    def fit(self):
        """:func:`streamdsl.perf.fit_designs` of every layer variant and the head together (None: one is missing)."""
        designs = self.designs()
        return None if any(d is None for d in designs.values()) else fit_designs(designs, self.board)

    @property
    def fits(self) -> bool:
        """Both phases present (a prefill layer of ``prefill_len`` tokens, or with ``prefill_len`` 1 the prompt
        through the decode layers) and every layer variant and the head on the board together, as the one kernel
        holds them (each SLR less the platform's share, within UG1393's guideline)."""
        f = self.fit()
        return f is not None and f.fits

    def row(self) -> dict:
        """The row ``benchmarks/paper_table4.py --json`` writes."""
        return {"model": self.name, "in": self.prompt, "out": self.gen, "design": self.design,
                "prefill_len": self.prefill_len, "build": self.build_command,
                "decode_tps_end_to_end": self.tokens_per_s, "ttft_ms": self.ttft_s * 1e3,
                "latency_ms": self.latency_s * 1e3, "hbm_roofline_tps": self.hbm_roofline_tps, "fits": self.fits,
                "emitted": self.emitted}

    def assumptions(self) -> list[str]:
        """Every assumption, with its value and source: the costs', then the design's."""
        c = self.config
        out = [str(a) for a in self.costs.assumptions()]
        out += [
            f"an embedding row = {-(-c.hidden * 4 // WORD_BYTES)} words in one burst, {DMA_LATENCY} + "
            f"{-(-c.hidden * 4 // WORD_BYTES)} cycles at {self.board.clock_mhz:g} MHz, rows one after another"
            + (" (GPT-2's position row over a second port in the same loop)" if c.family == "gpt2" else ""),
            "one launch a generate call; every layer in order, nothing of the next layer fetched while one runs "
            "(latencies add); the head only in a step that yields a token; the next id fed back on the card",
            f"a layer's attention walks its whole KV cache ({self.prompt + self.gen} positions) at every step, the "
            "keys past the valid ones masked (constant trips, as the emitted layer runs)",
            "TTFT counts one sync of the first id back, as if read when written (the host reads every id after "
            "the call)",
            "every DMA the timing model gave channels of its own has its own HBM bank while they fit the board's; "
            "past that the build puts ports one to a bank round the banks (in port order), and DMAs that run at "
            "once on one bank would share its bandwidth: not priced",
            "not counted: loading the xclbin, the weights, the caches' zeroing and the RoPE tables (once, before "
            "the first call); process start-up",
        ]
        return out

    def report(self) -> str:
        step, first, call = self.decode_step(), self.ttft(), self.call()
        what = (f"emitted by: {self.build_command}" if self.emitted else
                "NOT what streamdsl llm build writes (it emits the explored decode layer and the default prefill layer)"
                if self.design == "explored" else "not a config streamdsl llm build writes")
        f = self.fit()
        h = self.head
        lines = [
            f"{self.name} end to end on {self.board.name}, {self.quant.upper()}, [{self.prompt}:{self.gen}], one "
            f"generate kernel with the {self.design} layer design ({what})",
            f"  decode {self.tokens_per_s:.2f} tokens/s end to end (the layer kernels alone "
            f"{self.layer_tokens_per_s:.2f}); TTFT {self.ttft_s * 1e3:.3f} ms; latency {self.latency_s * 1e3:.2f} ms",
            f"  a decode step: {step}",
            f"  TTFT: {first}" + (f" (prefill kernel over {self.prefill_tokens} tokens, "
                                  f"{self.prompt - self.prefill_tokens} one-token steps, the head once)"),
            f"  the call: {call}",
            f"  HBM roofline {self.hbm_roofline_tps:.0f} tokens/s over {self.weight_bytes() / 2**20:.1f} MiB a token "
            f"(layers and LM head): {100 * self.tokens_per_s / self.hbm_roofline_tps:.2f} % of it",
            f"  head (token.device_head_beside): {h.latency_s * 1e6:.1f} us ({h.cycles} cycles), "
            f"{'fits' if h.fits else 'does NOT fit'} alone",
        ]
        for lp in self.layers:
            pre = lp.prefill
            lines.append(f"  {lp.count} x {lp.kind}: decode kernel {lp.decode.latency_s * 1e6:.1f} us "
                         f"({'fits' if lp.decode.fits else 'does NOT fit'}), prefill kernel " +
                         (f"{pre.latency_s * 1e3:.3f} ms ({'fits' if pre.fits else 'does NOT fit'})" if pre else "none"))
        lines.append("  together: " + ("no prefill kernel (both phases are needed)" if f is None else
                                       "every variant and the head fit" if f.fits else "; ".join(f.problems)))
        lines.append("assumptions:")
        lines += [f"  - {a}" for a in self.assumptions()]
        return "\n".join(lines)

    __str__ = report

    def _repr_html_(self) -> str:
        from streamdsl.htmlreport import perf_html

        return perf_html(self)


def emittable(config: LLMConfig) -> bool:
    """Does ``streamdsl llm build`` write ``config`` (a full-size preset of a family, or its tiny config)?"""
    from .cli import FULL_MODELS

    return config.family in FULL_MODELS and config in (preset(FULL_MODELS[config.family]), tiny(config.family))


def _check(prompt: int, gen: int, quant: str) -> None:
    if isinstance(prompt, bool) or isinstance(gen, bool) or not (isinstance(prompt, int) and isinstance(gen, int)) \
            or prompt < 1 or gen < 1:
        raise LLMError(f"prompt and gen must be positive integers, got {prompt!r} and {gen!r}", user_loc(),
                       hint="e.g. prompt=32, gen=32")
    if quant not in BITS:
        raise LLMError(f"unknown quant {quant!r}", user_loc(), hint=f"one of {', '.join(BITS)}")


def variant_designs(layers: list[LayerDesigns], prefill_len: int) -> dict:
    """The layer kernels the xclbin holds, by name: each kind's decode design, and its prefill design when
    ``prefill_len > 1`` (None: missing; with 1 the prompt goes through the decode layers)."""
    return {f"{p}_{lp.kind}": d for lp in layers for p, d in (("decode", lp.decode), ("prefill", lp.prefill))
            if p == "decode" or prefill_len > 1}


def head_design(config: LLMConfig, quant: str, board, layers: list[LayerDesigns] = (), prefill_len: int = 1) -> object:
    """The modeled head the generate kernel runs beside its layer kernels (:func:`variant_designs`, as the build
    places its variants): :func:`.token.device_head_beside`."""
    beside = {k: d for k, d in variant_designs(list(layers), prefill_len).items() if d is not None}
    return device_head_beside(config, quant, board, beside)[1]


def end_to_end(config: LLMConfig, board="u55c", prompt: int = 32, gen: int = 32, quant: str = "w4a8",
               prefill_len: int | None = None, costs: HostCosts | None = None,
               explored: dict | None = None) -> EndToEnd:
    """The emitted project of ``config`` for ``[prompt:gen]``: ``streamdsl llm build`` at ``--max-len prompt + gen
    --prefill-len prefill_len`` (default: the build's own choice, :func:`.hls_build.auto_prefill`), its layer
    kernels and head modeled as written.

    ``explored``: kind -> the decode layer's exploration of this very model on ``board`` when the caller has it
    (``llm_perf``'s, of the linears packed as the build packs them): the build's ``sd.explore`` of the same model
    gives the same design, so it is not explored again."""
    from .cli import model_of
    from .models import model

    _check(prompt, gen, quant)
    b = get_board(board)
    writes = emittable(config) and any(mem.kind.startswith("HBM") for mem in b.memories)  # llm build needs HBM
    if writes:  # the CLI's own model: the design it writes, by construction
        from .cli import FULL_MODELS

        full = config == preset(FULL_MODELS[config.family])
        m = model_of({"family": config.family, "config": "full" if full else "tiny", "quant": quant,
                      "max_len": prompt + gen}, None)
    else:
        m = model(config, max_len=prompt + gen, quant=quant)
    decode = {kind: explored[kind].best.schedule if explored else m.decode_layer(kind, "explored", b)  # the build's
              for kind in m.kinds()}
    # as cmd_build clamps it; None: the build's own choice
    p = min(prefill_len, m.max_len) if prefill_len else auto_prefill(m, b, "explored", decode)[0]
    layers = []
    for kind in m.kinds():
        g = decode[kind]
        dec = model_design(g, b)
        pre = model_design(m.schedule(p, kind, decode=g), b) if p > 1 else None
        layers.append(LayerDesigns(kind, m.layer_kinds.count(kind), dec, pre))
    return EndToEnd(config, b, prompt, gen, quant, p, layers, head_design(config, quant, b, layers, p), "emitted",
                    writes, costs or HostCosts())


def explored_end_to_end(perf: LLMPerf, costs: HostCosts | None = None) -> EndToEnd:
    """The explored layer design of ``perf`` (:func:`.perf.llm_perf`) in the one generate kernel (its prefill
    kernel takes the explored prefill chunk).  ``streamdsl llm build`` does not write it: ``emitted`` is False."""
    chunks = {lp.chunk for lp in perf.layers}
    if len(chunks) != 1:
        raise LLMError(f"the explored layer kinds prefill {sorted(chunks)} tokens a pass; the generate kernel takes "
                       "one prefill length", user_loc(), hint="llm_perf(..., prefill_chunk=N)")
    layers = [LayerDesigns(lp.kind, lp.count, lp.decode, lp.prefill) for lp in perf.layers]
    chunk = chunks.pop()
    return EndToEnd(perf.config, perf.board, perf.prompt, perf.gen, perf.quant, chunk, layers,
                    head_design(perf.config, perf.quant, perf.board, layers, chunk), "explored", False,
                    costs or HostCosts())


__all__ = ["Assumption", "Cost", "EndToEnd", "HostCosts", "LayerDesigns", "emittable", "end_to_end",
           "explored_end_to_end", "gather_cycles", "head_design", "variant_designs"]
