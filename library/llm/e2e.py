"""End to end: what a user of the project ``streamdsl llm build`` writes waits for, per token and to the first.

``end_to_end(config, board="u55c", prompt=32, gen=32, quant="w4a8")`` prices the emitted design: the layer
kernels ``LLM.build`` writes (the decode layer ``model.explored(kind, board)``, the prefill layer
``model.schedule(t, kind, decode=...)`` reading its ports, of the model ``streamdsl llm build FAMILY --config full
--quant QUANT --max-len PROMPT+GEN --prefill-len PROMPT`` makes, the CLI's own ``model_of``) run by the host
program it writes (``templates/host.cpp.j2``), step by step as that program runs them:

* **device**: each layer kernel's latency from :func:`streamdsl.perf.model_design` (cost model + token
  simulator; attention walks the whole KV cache of prompt + gen positions at every step, masking the keys
  past the valid ones, as the emitted layer does), summed over the layers: the host waits for each run before
  it starts the next, so nothing overlaps;
* **launches**: one ``xrt::run`` started and waited for per layer per step (``forward()``), each
  ``launch_us`` beyond its kernel's time (:data:`.facts.XRT_LAUNCH_U55C`);
* **PCIe**: the buffer syncs ``forward()`` makes (:func:`.hls_build.forward_syncs`: the embedded rows and the
  RoPE rows to the card, the last layer's output back), each a fixed ``bo::sync`` cost
  (:data:`.facts.BO_SYNC_SMALL`) plus its bytes over the link's rate (:data:`.facts.PCIE_WRITE_LARGE`,
  :data:`.facts.PCIE_READ_LARGE`);
* **host**: the embedding rows (``forward()``), the final norm and the fp32 LM head (``next_token()``: VOCAB x
  HIDDEN multiply-adds into one float, in order) on the CPU, at ``host_ns_per_mac`` a multiply-add (and a
  norm or embedding element): measured on this machine by ``benchmarks/host_head.py``.

TTFT is what the host program times: the prefill kernel over the first ``prefill_len`` tokens (no prefill
kernel when ``prefill_len`` is 1 or the prompt is shorter), one decode step per remaining prompt token, then
the head once.  A decode step is one forward of one token and the head; decode tokens/s is its inverse and
latency = TTFT + (gen - 1) decode steps (the host decodes gen - 1 tokens after the first).

**Not counted**: loading the xclbin and writing the weights (once, before the host starts its clock), the
``--logits`` file, the RoPE rows' memcpy into the mapped buffers (t x head_dim floats), setting the run's
arguments beyond what the launch figure holds, and process start-up.

:func:`explored_end_to_end` puts the explored layer design of :func:`.perf.llm_perf` (the figures
``benchmarks/paper_table4.py`` headlines) into the same host program.  ``streamdsl llm build`` does not emit
that design (its decode layer is the one the build explores, but its prefill layer is built at the decode
layer's unroll factors, which the build does not write), so its :attr:`EndToEnd.emitted` is False.  ``emitted`` is True only for the emitted design of a
config the command writes (the four full-size presets and the tiny configs) on a board it builds for (HBM).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from streamdsl import board as get_board
from streamdsl.perf import fit_designs, model_design

from . import facts
from .config import LLMConfig, LLMError, preset, tiny, user_loc
from .hls_build import forward_syncs
from .perf import FP32, W4A8, W8A8, LLMPerf, layer_weight_bytes

BITS = {"w4a8": W4A8, "w8a8": W8A8, "fp32": FP32}

# The host's fp32 loop, measured: benchmarks/host_head.py compiles the LM-head loop of next_token() in
# templates/host.cpp.j2 with the generated Makefile's flags and times it over GPT-2 Medium's 50,257 x 1,024 table.
HOST_NS_PER_MAC = 1.58
HOST_SOURCE = ("measured on this machine (Intel Xeon at 2.6 GHz, 2 cores shared by several users): "
               "benchmarks/host_head.py, g++ 12 -std=c++17 -O2 -ffp-contract=off, best of 8 over 50,257 x 1,024: "
               "81 ms a token, 4.1 cycles a multiply-add (the adds into one float wait for each other); other runs "
               "gave 1.71-2.66 ns as the load varied (load average 2.5-4.1), issue 22 measured 40-62 ms (0.8-1.2 ns)")


@dataclass(frozen=True)
class Assumption:
    """One figure the model uses: its value, unit and where it comes from."""

    what: str
    value: float
    unit: str
    source: str

    def __str__(self) -> str:
        return f"{self.what} = {self.value:g} {self.unit}  [{self.source}]"


@dataclass(frozen=True)
class HostCosts:
    """What the host program's steps cost beyond the kernels (defaults: :mod:`.facts` and a measurement)."""

    launch_us: float = facts.XRT_LAUNCH_U55C.value
    sync_us: float = facts.BO_SYNC_SMALL.value
    to_device_mbs: float = facts.PCIE_WRITE_LARGE.value
    from_device_mbs: float = facts.PCIE_READ_LARGE.value
    host_ns_per_mac: float = HOST_NS_PER_MAC

    def sync_s(self, direction: str, nbytes: int) -> float:
        rate = self.to_device_mbs if direction == "to_device" else self.from_device_mbs
        return self.sync_us * 1e-6 + nbytes / (rate * 1e6)

    def assumptions(self) -> list[Assumption]:
        def cited(f: facts.Fact, value: float) -> str:
            return f"{f.what} on {f.device}: {f.source}" + ("" if value == f.value else "; overridden")

        return [
            Assumption("kernel launch to completion beyond the kernel's time (one xrt::run a layer a step)",
                       self.launch_us, "us", cited(facts.XRT_LAUNCH_U55C, self.launch_us)),
            Assumption("xrt::bo::sync, fixed cost a call", self.sync_us, "us",
                       cited(facts.BO_SYNC_SMALL, self.sync_us)),
            Assumption("PCIe host -> card rate (a sync's bytes over it)", self.to_device_mbs, "MB/s",
                       cited(facts.PCIE_WRITE_LARGE, self.to_device_mbs)),
            Assumption("PCIe card -> host rate", self.from_device_mbs, "MB/s",
                       cited(facts.PCIE_READ_LARGE, self.from_device_mbs)),
            Assumption("host fp32 multiply-add of the LM head (and an element of the final norm or embedding)",
                       self.host_ns_per_mac, "ns", HOST_SOURCE if self.host_ns_per_mac == HOST_NS_PER_MAC
                       else "given"),
        ]


@dataclass(frozen=True)
class Cost:
    """Seconds of one or more host-program steps, by part, with the counts they come from."""

    device_s: float = 0.0
    launch_s: float = 0.0
    pcie_s: float = 0.0
    host_s: float = 0.0
    launches: int = 0
    syncs: int = 0
    pcie_bytes: int = 0
    host_macs: int = 0

    @property
    def total_s(self) -> float:
        return self.device_s + self.launch_s + self.pcie_s + self.host_s

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(*(a + b for a, b in zip(self._values(), other._values())))

    def __mul__(self, n: int) -> "Cost":
        return Cost(*(a * n for a in self._values()))

    def _values(self) -> tuple:
        return (self.device_s, self.launch_s, self.pcie_s, self.host_s, self.launches, self.syncs, self.pcie_bytes,
                self.host_macs)

    def __str__(self) -> str:
        return (f"{self.total_s * 1e3:.3f} ms = device {self.device_s * 1e3:.3f} + launches {self.launches} x -> "
                f"{self.launch_s * 1e3:.3f} + PCIe {self.syncs} syncs of {self.pcie_bytes:,} B -> "
                f"{self.pcie_s * 1e3:.3f} + host {self.host_macs:,} MACs -> {self.host_s * 1e3:.3f}")


@dataclass
class LayerDesigns:
    """The layer kernels of one attention kind: ``count`` layers, the decode design and the prefill one."""

    kind: str
    count: int
    decode: object  # DesignPerf, t = 1
    prefill: object | None  # DesignPerf, t = prefill_len (None: no prefill kernel)


@dataclass
class EndToEnd:
    """A layer design in the emitted host program: TTFT, decode step, tokens/s; ``report()`` says how."""

    config: LLMConfig
    board: object  # Board
    prompt: int
    gen: int
    quant: str
    prefill_len: int  # tokens of the prefill kernel; 1: none
    layers: list[LayerDesigns]
    design: str  # "emitted" or "explored": where the layer designs come from
    emitted: bool
    costs: HostCosts = field(default_factory=HostCosts)

    @property
    def name(self) -> str:
        return self.config.name or self.config.family

    @property
    def build_command(self) -> str:
        return (f"streamdsl llm build {self.config.family} --config full --quant {self.quant} --max-len "
                f"{self.prompt + self.gen} --prefill-len {self.prefill_len} --board {self.board.name}")

    def forward(self, t: int) -> Cost:
        """One ``forward()`` of ``t`` tokens: embed on the host, sync in, every layer launched, sync out."""
        c = self.config
        designs = [(lp.count, lp.decode if t == 1 else lp.prefill) for lp in self.layers]
        if any(d is None for _, d in designs):
            raise LLMError(f"no {t}-token layer kernel in this design", user_loc(), hint="prefill_len > 1")
        syncs = forward_syncs(c, t)
        return Cost(device_s=sum(n * d.latency_s for n, d in designs),
                    launch_s=c.layers * self.costs.launch_us * 1e-6, launches=c.layers,
                    pcie_s=sum(self.costs.sync_s(d, b) for d, b in syncs), syncs=len(syncs),
                    pcie_bytes=sum(b for _, b in syncs),
                    host_s=t * c.hidden * self.costs.host_ns_per_mac * 1e-9, host_macs=t * c.hidden)

    def head(self) -> Cost:
        """``next_token()`` on the host: the final norm (a pass over the row per statistic and one to scale)
        and the LM head's VOCAB x HIDDEN multiply-adds."""
        c = self.config
        work = (3 if c.norm == "layernorm" else 2) * c.hidden + c.vocab * c.hidden
        return Cost(host_s=work * self.costs.host_ns_per_mac * 1e-9, host_macs=work)

    @property
    def prefill_tokens(self) -> int:
        """Prompt tokens the prefill kernel takes (the host's rule: only a prompt of at least prefill_len)."""
        return self.prefill_len if self.prefill_len > 1 and self.prompt >= self.prefill_len else 0

    def ttft(self) -> Cost:
        pre = self.forward(self.prefill_len) if self.prefill_tokens else Cost()
        return pre + self.forward(1) * (self.prompt - self.prefill_tokens) + self.head()

    def decode_step(self) -> Cost:
        return self.forward(1) + self.head()

    @property
    def ttft_s(self) -> float:
        return self.ttft().total_s

    @property
    def tokens_per_s(self) -> float:
        return 1.0 / self.decode_step().total_s

    @property
    def kernel_tokens_per_s(self) -> float:
        """Decode tokens/s of the layer kernels alone (what :mod:`.perf` reports for its design)."""
        return 1.0 / self.decode_step().device_s

    @property
    def latency_s(self) -> float:
        return self.ttft_s + (self.gen - 1) * self.decode_step().total_s

    def weight_bytes(self) -> int:
        """Every weight a token reads: the layers' matrices and the LM head, at the scheme's weight width."""
        bits = BITS[self.quant]
        return layer_weight_bytes(self.config, bits) + self.config.vocab * self.config.hidden * bits["weights"] // 8

    @property
    def hbm_roofline_tps(self) -> float:
        """Tokens/s if a token only read every weight (the LM head's too) once at the board's HBM bandwidth."""
        return self.board.memory.total_gbs * 1e9 / self.weight_bytes()

    @property
    def fits(self) -> bool:
        """Both phases present and all their layer kernels on the board together, as the xclbin holds them
        (:func:`streamdsl.perf.fit_designs`: each SLR less the platform's share, within UG1393's guideline)."""
        if any(lp.prefill is None for lp in self.layers):
            return False
        designs = {f"{p}_{lp.kind}": d for lp in self.layers for p, d in (("decode", lp.decode),
                                                                          ("prefill", lp.prefill))}
        return fit_designs(designs, self.board).fits

    def row(self) -> dict:
        """The row ``benchmarks/paper_table4.py --json`` writes."""
        return {"model": self.name, "in": self.prompt, "out": self.gen, "design": self.design,
                "decode_tps_end_to_end": self.tokens_per_s, "ttft_ms": self.ttft_s * 1e3,
                "latency_ms": self.latency_s * 1e3, "hbm_roofline_tps": self.hbm_roofline_tps, "fits": self.fits,
                "emitted": self.emitted}

    def report(self) -> str:
        step, first = self.decode_step(), self.ttft()
        what = (f"emitted by: {self.build_command}" if self.emitted else
                "NOT what streamdsl llm build writes (it emits the explored decode layer and the default prefill layer)"
                if self.design == "explored" else "not a config streamdsl llm build writes")
        lines = [
            f"{self.name} end to end on {self.board.name}, {self.quant.upper()}, [{self.prompt}:{self.gen}], the "
            f"{self.design} layer design ({what})",
            f"  decode {self.tokens_per_s:.2f} tokens/s end to end (the layer kernels alone "
            f"{self.kernel_tokens_per_s:.2f}); TTFT {self.ttft_s * 1e3:.2f} ms; latency {self.latency_s * 1e3:.1f} ms",
            f"  a decode step: {step}",
            f"  TTFT: {first}" + (f" (prefill kernel over {self.prefill_tokens} tokens, "
                                  f"{self.prompt - self.prefill_tokens} one-token steps, the head once)"),
            f"  HBM roofline {self.hbm_roofline_tps:.0f} tokens/s over {self.weight_bytes() / 2**20:.1f} MiB a token "
            f"(layers and LM head): {100 * self.tokens_per_s / self.hbm_roofline_tps:.2f} % of it",
        ]
        for lp in self.layers:
            pre = lp.prefill
            lines.append(f"  {lp.count} x {lp.kind}: decode kernel {lp.decode.latency_s * 1e6:.1f} us "
                         f"({'fits' if lp.decode.fits else 'does NOT fit'}), prefill kernel " +
                         (f"{pre.latency_s * 1e3:.3f} ms ({'fits' if pre.fits else 'does NOT fit'})" if pre else "none"))
        lines.append("assumptions:")
        lines += [f"  - {a}" for a in self.costs.assumptions()]
        lines.append("  - the host runs every step in turn: nothing overlaps (run.start(); run.wait() per layer)")
        lines.append(f"  - a layer's attention walks its whole KV cache ({self.prompt + self.gen} positions) at every "
                     "step, the keys past the valid ones masked (constant trips, as the emitted layer runs)")
        lines.append("not counted: loading the xclbin and the weights, the --logits file, the RoPE rows' memcpy, "
                     "process start-up")
        return "\n".join(lines)

    __str__ = report


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


def end_to_end(config: LLMConfig, board="u55c", prompt: int = 32, gen: int = 32, quant: str = "w4a8",
               prefill_len: int | None = None, costs: HostCosts | None = None) -> EndToEnd:
    """The emitted project of ``config`` for ``[prompt:gen]``: ``streamdsl llm build`` at ``--max-len prompt + gen
    --prefill-len prefill_len`` (default: the prompt), its layer kernels modeled as written."""
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
    p = min(prefill_len or prompt, m.max_len)  # as cmd_build clamps it
    layers = []
    for kind in m.kinds():
        g = m.decode_layer(kind, "explored", b)  # the decode layer the build writes by default
        dec = model_design(g, b)
        pre = model_design(m.schedule(p, kind, decode=g), b) if p > 1 else None
        layers.append(LayerDesigns(kind, sum(k == kind for k in config.layer_types), dec, pre))
    return EndToEnd(config, b, prompt, gen, quant, p, layers, "emitted", writes, costs or HostCosts())


def explored_end_to_end(perf: LLMPerf, costs: HostCosts | None = None) -> EndToEnd:
    """The explored layer design of ``perf`` (:func:`.perf.llm_perf`) run by the emitted host program (its prefill
    kernel takes the explored prefill chunk).  ``streamdsl llm build`` does not write it: ``emitted`` is False."""
    chunks = {lp.chunk for lp in perf.layers}
    if len(chunks) != 1:
        raise LLMError(f"the explored layer kinds prefill {sorted(chunks)} tokens a pass; the host program takes one "
                       "prefill length", user_loc(), hint="llm_perf(..., prefill_chunk=N)")
    layers = [LayerDesigns(lp.kind, lp.count, lp.decode, lp.prefill) for lp in perf.layers]
    return EndToEnd(perf.config, perf.board, perf.prompt, perf.gen, perf.quant, chunks.pop(), layers, "explored",
                    False, costs or HostCosts())


__all__ = ["Assumption", "Cost", "EndToEnd", "HostCosts", "LayerDesigns", "emittable", "end_to_end",
           "explored_end_to_end"]
