"""The whole-model accelerator project: one generate kernel, host code, HBM link config, weight files.

``LLM.build("hls", output=DIR, prefill_len=P)`` (:func:`build`) writes::

    DIR/
      README.md              how to compile (v++), link, build the host, C-simulate and run it
      Makefile               the same commands (v++ -c of the generate kernel, v++ -l, g++ host, make csim)
      link.cfg               v++ [connectivity]: the kernel's compute unit, sp= per m_axi port -> HBM bank(s)
      project.json           the kernel's arguments (role, bytes, HBM banks, the files that fill them), the layers
      generate/              the xclbin's one kernel <family>_generate (:mod:`.device`): its top function, the
                             layer variants and the head as sub-functions, include/, and the C-simulation
                             testbench of a whole launch
      layer_<phase>_<kind>/  one HLS dataflow project per layer variant on its own (decode t=1, prefill t=P;
                             per attention kind the model uses), top <layer>_<phase>_<kind>
      host/host.cpp          the XRT host program: buffers and weights once, one run a generate call
      weights/manifest.json  every binary file: name, shape, dtype, layout, lane, bytes, HBM bank
      weights/*.bin          layer<i>_<field>[.lane<j>].bin and head_<tensor>[.lane<j>].bin: a port's 512-bit
                             words; the embedding, position and RoPE tables float32 row-major (in HBM as they
                             are), final_norm / lm_head float32 copies for reading the model back

Layer variants.  A layer kernel is compiled for a fixed number of new tokens
``t``: ``decode`` (t = 1) and ``prefill`` (t = ``prefill_len``), each once per
attention kind (Gemma 3: sliding and full).  Each is ``model.schedule(t,
kind).build("hls")`` with its top function renamed to a unique name
(``llama_layer_decode_full``); the generate kernel calls a copy of it.

Weight layout.  Every m_axi port moves 512-bit words: a weight lies in DRAM
packed in the words of its stream layout (streamdsl's ``Packing``), split
over the ports (lanes) its DMA reads it through, word ``w`` on lane
``w % lanes``.  Each lane of each layer is one file, ``layer<i>_<field>.bin``
(or ``.lane<j>.bin``); the generate kernel's buffer of a port holds every
layer's file, layer ``i`` at word ``i * words``.  :func:`read_weights`
unpacks them.  The prefill layer reads the weights over the decode layer's
ports (``LLM.schedule``), so both share one copy.

HBM plan (U55C: 32 pseudo-channels of 512 MiB).  A port's buffer lies where
the timing model's channels put it: a port of a DMA that has channels of its
own gets a bank range of its own (every lane its own; the head's table
lanes too), the buffers whose DMAs share a channel share one range
(``shared``: vectors, the embedding and RoPE tables, the ids); a range holds
every layer's copy of what it holds plus 3 %.  Stores of new K/V rows write
into the cache buffer itself (``g.store_at(..., into=kc)``).

The host (``host/host.cpp``, XRT native API) loads the xclbin, allocates
every buffer of the generate kernel once in its argument's bank, writes the
weight files into them, then for a generate call writes the prompt ids,
starts the kernel once and reads the generated ids back.  Usage::

    host/host XCLBIN WEIGHTS_DIR TOKEN_IDS... --max-new-tokens N

:func:`read_weights` reads the files back through the manifest and
:func:`load_weights` rebuilds :class:`~.weights.ModelWeights` from them.
"""
from __future__ import annotations

import json
import math
import re
import time
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined

import streamdsl as sd
from streamdsl.backend import OutputFolder, comment, md_code, plain_parts, write_hls_project
from streamdsl.dfg import ITensor, Packing, pack, unpack
from streamdsl.explorer import ExploreError
from streamdsl import TensorType

from . import device
from .config import FULL, SLIDING, LLMConfig, LLMError, user_loc
from .rope import rope_inv_freq, rope_tables
from .weights import LayerWeights, ModelWeights, QuantLinear



def _hbm(board) -> tuple[int, int]:
    """(pseudo-channels, bytes each) of the board's HBM, from its Board facts; a board without HBM is refused."""
    b = sd.board(board)
    mem = next((m for m in b.memories if m.kind.startswith("HBM")), None)
    if mem is None:
        hbm = [n for n, x in sd.BOARDS.items() if any(m.kind.startswith("HBM") for m in x.memories)]
        raise LLMError(f"board {b.name!r} has no HBM: the accelerator streams its weights from HBM channels",
                       user_loc(), hint=f"HBM boards: {', '.join(hbm)}")
    return mem.channels, int(mem.capacity_gb * 2**30) // mem.channels
KIND_TAG = {FULL: "full", SLIDING: "sliding"}
FORMAT = "streamdsl-weights/1"

_env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), undefined=StrictUndefined,
                   keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
_env.filters.update(comment=comment, md_code=md_code)  # a model's name is the user's: escaped where it lands


# ------------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Port:
    """One argument of a layer kernel, in the top function's order (= the XRT argument index).  An array
    argument is an ``m_axi`` port of 512-bit words (``sd::word``): lane ``lane`` of the ``lanes`` ports of a
    layer tensor, which lies in DRAM in ``packing`` (word ``w`` of the packing on lane ``w % lanes``)."""

    index: int
    name: str
    ctype: str  # sd::word (an m_axi port), or the scalar's C type
    shape: tuple[int, ...] | None  # the tensor's shape; None: a scalar (s_axilite only)
    const: bool
    role: str  # input | output | weight | kv_in | kv_out | rope | scalar | scratch
    field: str | None = None  # the LayerWeights field of a weight port
    banks: tuple[int, int] | None = None
    tensor: str | None = None  # the layer tensor an m_axi port carries
    lane: int = 0
    lanes: int = 1
    words: int = 0
    packing: object = dataclasses.field(default=None, repr=False, compare=False)
    alias: str | None = None  # the port whose buffer the host passes here too (a cache written in place)

    @property
    def count(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    @property
    def nbytes(self) -> int:
        """Bytes of the port's buffer: its words (a scalar: 4)."""
        return 64 * max(1, self.words) if self.shape else 4

    @property
    def hbm(self) -> str | None:
        return device.hbm_group(self.banks)


@dataclass
class LayerVariant:
    """One layer kernel: ``t`` new tokens, attention ``kind``; its HLS project in ``folder``."""

    name: str  # decode_full
    phase: str  # decode | prefill
    kind: str
    t: int
    kernel: str  # the top function = the xclbin kernel name
    folder: str  # layer_decode_full
    ports: list[Port]
    project: object = field(repr=False)  # the DataflowProject (its files renamed; csim works)
    own: frozenset = frozenset()  # tensors whose DMAs the timing model gave channels of their own
    bundled: dict = field(default_factory=dict, repr=False)  # tensor -> the first tensor of its DMA bundle

    @property
    def source(self) -> str:
        """The kernel's C++ source."""
        return self.project.files[f"{self.kernel}.cpp"]


@dataclass
class AcceleratorProject:
    """What :func:`build` wrote (see the module docstring for the layout)."""

    output: Path | None
    model: str
    variants: list[LayerVariant]
    banks: dict[str, tuple[int, int]]
    files: dict[str, str]  # relative path -> text (the weight .bin files are not in here)
    weights_written: bool
    prefill_len: int
    max_len: int
    build_seconds: float = 0.0
    schedule: str = "explored"  # the decode layers' schedule (SCHEDULES)
    generate: device.GenerateKernel | None = None  # the one kernel of the xclbin (generate/)
    prefill_why: str = ""  # why it has the prefill layer it has (auto_prefill's reason, or "as given")

    def __repr__(self) -> str:
        where = f" in {self.output}" if self.output else ""
        ks = ", ".join(v.kernel for v in self.variants)
        return (f"<AcceleratorProject {self.model}{where}: kernel {self.generate.kernel} (layers {ks}, "
                f"{self.schedule} decode schedule; head {self.generate.head.kernel}; prefill: {self.prefill_why}); "
                f"weights {'written' if self.weights_written else 'not written (no weights)'}>")

    def fit(self):
        """Whether the generate kernel fits the board: its layer variants (both phases, every layer kind) and
        its head together, as the xclbin holds them: a :class:`streamdsl.perf.fit.Fit` of their modeled designs."""
        from streamdsl.perf import fit_designs, model_design

        board = self.variants[0].project.board
        designs = {v.kernel: model_design(v.project.schedule, board) for v in self.variants}
        designs[self.generate.head.kernel] = model_design(self.generate.head.schedule, board)
        return fit_designs(designs, board)

    def csim(self, ids, n_new: int) -> list[int]:
        """The ids one C-simulated launch of the generate kernel gives for the prompt ``ids`` (the folder's own
        sources and weight files; :func:`.device.csim`)."""
        if self.output is None or not self.weights_written:
            raise LLMError("C-simulating a launch needs the project written with its weights", user_loc(),
                           hint='m.load(weights).build("hls", output=DIR), then prj.csim(ids, n)')
        ids = [int(i) for i in np.asarray(ids).reshape(-1)]
        if not ids or n_new < 1 or len(ids) + n_new - 1 > self.max_len or min(ids) < 0:
            raise LLMError(f"a launch takes 1 or more prompt ids (not negative) and n_new >= 1 with prompt + n_new - 1 "
                           f"<= {self.max_len} positions, got {len(ids)} ids and n_new={n_new!r}", user_loc(),
                           hint="build the model with a larger max_len for longer prompts")
        return device.csim(self.output, ids, n_new)

    def variant(self, phase: str, kind: str = FULL) -> LayerVariant:
        for v in self.variants:
            if v.phase == phase and v.kind == kind:
                return v
        raise LLMError(f"the project has no {phase} layer for {kind}", user_loc(),
                       hint=f"its variants: {', '.join(v.name for v in self.variants)}")


# ------------------------------------------------------------------------------------ variants


def _rename(files: dict[str, str], old: str, new: str) -> dict[str, str]:
    """The project's files with top function ``old`` called ``new`` (and declared extern "C")."""
    word = re.compile(rf"\b{re.escape(old)}\b")
    out = {}
    for name, text in files.items():
        text = word.sub(new, text.replace(f"tb_{old}", f"tb_{new}").replace(f"{old}_prj", f"{new}_prj"))
        if name == f"{old}.h":
            text = re.sub(rf"^void {re.escape(new)}\(", f'extern "C" void {new}(', text, flags=re.M)
        out[name.replace(old, new) if name in (f"{old}.h", f"{old}.cpp", f"tb_{old}.cpp") else name] = text
    return out


def weight_fields(spec) -> list[str]:
    """The file/field name of each weight argument: a quantised ``q*`` is ``q_codes`` then ``q_scale``."""
    out = []
    for name in spec.weights:
        out += [f"{name[:-1]}_codes", f"{name[:-1]}_scale"] if name.endswith("*") else [name]
    return out


_DTYPES = {"f32": "float32", "i8": "int8", "i4": "int4"}


def _dtype(p: Port) -> str:
    """The manifest's name of the values a weight port's tensor holds."""
    name = _DTYPES.get(str(p.packing.tensor_type.dtype))
    if name is None:
        raise LLMError(f"a layer weight of type {p.packing.tensor_type.dtype} has no file format", user_loc(),
                       hint=f"weight files hold {', '.join(_DTYPES.values())}")
    return name


def _ports(prj, ir, spec) -> list[Port]:
    """The kernel's arguments (its m_axi ports, then its scalars), with the role of each (from the layer's IR)."""
    params = [p.name for p in ir.params]
    fields_ = weight_fields(spec)
    nw = len(fields_)
    roles = {params[0]: ("input", None)}
    roles.update({p: ("weight", f) for p, f in zip(params[1:1 + nw], fields_)})
    rest = params[1 + nw:]
    roles[rest[0]], roles[rest[1]] = ("kv_in", None), ("kv_in", None)
    for p in rest[2:]:
        roles[p] = ("scalar", None) if p in ("pos", "n_valid") else ("rope", None)
    results = list(prj.schedule.graph.outputs)
    ports = []
    for i, p in enumerate(prj.ports):
        if p["kind"] == "in":
            role, fld = roles[p["tensor"]]
        elif p["kind"] == "out":
            role, fld = ("output", None) if p["tensor"] == results[0] else ("kv_out", None)
        else:
            role, fld = "scratch", None
        shape = tuple(int(x) for x in p["packing"].tensor_type.shape)
        ports.append(Port(i, p["name"], "sd::word", shape, p["kind"] == "in", role, fld, tensor=p["tensor"],
                          lane=p["lane"], lanes=p["lanes"], words=p["words"], packing=p["packing"], alias=p["alias"]))
    for param, name, ctype in prj.scalars:
        ports.append(Port(len(ports), name, ctype, None, True, roles[param][0]))
    for p in ports:  # what the host reads and writes as plain rows of floats
        if p.role in ("input", "output", "rope") and not (p.lanes == 1 and p.packing.plain):
            raise LLMError(f"the layer's {p.tensor} ({p.packing.tensor_type}) lies in DRAM as {p.packing}, not as "
                           "plain rows of floats: the host writes and reads it as rows", user_loc(),
                           hint="a hidden size and head dim that are multiples of 16 keep them plain rows")
    return ports


SCHEDULES = ("explored", "default")
"""``build``'s layer schedules: the decode layer ``sd.explore`` finds fastest (what the performance model
reports), or the library's default schedule (every loop pipelined, rows streamed); prefill is the default
schedule either way, reading the decode layer's weight and cache ports."""


AUTO_PREFILL = 16  # the prefill layer's tokens build(prefill_len=None) weighs against decoding the prompt


def auto_prefill(model, board, schedule: str = "explored", decode: dict | None = None) -> tuple[int, str]:
    """``build(prefill_len=None)``'s choice: a prefill layer of ``min(16, max_len)`` tokens when the model says
    it takes a prompt's token in fewer cycles than the decode layers do, else 1 (no prefill layer: the prompt
    goes through the decode layers, a token a step, in the same launch); (prefill_len, why).  ``decode``: kind
    -> the decode layer's schedule when the caller has it (else ``model.decode_layer(kind, schedule)``)."""
    from streamdsl.perf import model_design

    p = min(AUTO_PREFILL, model.max_len)
    if p == 1:
        return 1, "no prefill layer: max_len is 1"
    b = sd.board(board)
    dec = pre = 0
    try:
        for kind in model.kinds():
            n = model.layer_kinds.count(kind)
            g = decode[kind] if decode else model.decode_layer(kind, schedule, b)
            dec += n * model_design(g, b).cycles
            pre += n * model_design(model.schedule(p, kind, decode=g), b).cycles
    except ExploreError as err:
        raise LLMError(f"no explored decode layer: {err.message}", user_loc(),
                       hint="schedule='default' (--schedule default) builds the library's default schedule") from None
    weighed = (f"the layers take a prompt token in {pre / p:,.0f} cycles in a {p}-token prefill layer, "
               f"{dec:,} through the decode layers (modeled)")
    return (p, f"a {p}-token prefill layer: {weighed}") if pre < p * dec else (
        1, f"no prefill layer, the prompt through the decode layers: {weighed}")


def _variants(model, prefill_len: int, board, schedule: str) -> list[LayerVariant]:
    phases = [("decode", 1)] + ([("prefill", prefill_len)] if prefill_len > 1 else [])
    try:
        decode = {kind: model.decode_layer(kind, schedule, board) for kind in model.kinds()}
    except ExploreError as err:
        raise LLMError(f"no explored decode layer: {err.message}", user_loc(),
                       hint="schedule='default' (--schedule default) builds the library's default schedule; "
                            "prj.fit() then says what of it does not fit") from None
    out = []
    for phase, t in phases:
        for kind in model.kinds():
            g = decode[kind] if t == 1 else model.schedule(t, kind, decode=decode[kind])
            prj = g.build("hls", board=board)
            ir = g.graph.ir
            name = f"{phase}_{KIND_TAG.get(kind, kind)}"
            kernel = f"{prj.top}_{name}"
            files = _rename(prj.files, prj.top, kernel)
            ports = _ports(prj, ir, model.layer(t, kind))
            renamed = dataclasses.replace(prj, files=files, output=None)
            own = frozenset(d.tensor for d in prj.timing.dmas if d.channels >= 1)
            low = g.lowered()
            bundled = {low.nodes[m].dma.tensor: low.nodes[b[0]].dma.tensor for b in low.bundles for m in b}
            out.append(LayerVariant(name, phase, kind, t, kernel, f"layer_{name}", ports, renamed, own, bundled))
    return out


def _head(model, variants: list[LayerVariant], board) -> device.HeadKernel:
    """The head dataflow the generate kernel calls beside ``variants`` (:func:`.token.device_head_beside`: the
    device head widened into the room they leave, as ``prj.fit()`` places them), its top function named
    ``<family>_head``."""
    from streamdsl.perf import model_design

    from .token import device_head_beside

    beside = {v.kernel: model_design(v.project.schedule, board) for v in variants}
    g, _ = device_head_beside(model.config, model.quant, board, beside)
    prj = g.build("hls", board=board)
    kernel = f"{model.config.family}_head"
    renamed = dataclasses.replace(prj, files=_rename(prj.files, prj.top, kernel), output=None)
    return device.HeadKernel(kernel, renamed, g, model.quant)


def _head_arrays(model) -> dict[str, np.ndarray]:
    """The head's weights by tensor name: the final norm's, and the LM head's table (quantised per row for
    W8A8 / W4A8, as :func:`.quant.quantize_weights`)."""
    from .quant import quantize_weights

    w = model.weights
    out = {"w": w.final_norm}
    if model.config.norm == "layernorm":
        out["b"] = w.final_norm_b
    if model.quant == "fp32":
        out["E"] = w.lm_head
    else:
        out["Wq"], out["sw"] = quantize_weights(w.lm_head, {"w8a8": 8, "w4a8": 4}[model.quant])
    return out


# ------------------------------------------------------------------------------------ HBM plan
SHARED = "shared"
"""The bank range of every buffer whose DMAs share memory channels in the timing model."""


def _bank_keys(variants: list[LayerVariant], n_banks: int) -> dict[tuple[str, str], str]:
    """(variant, port) -> the bank range its buffer lies in, as the timing model priced the channels: a port
    of a DMA the model gave channels of its own has a range of its own (every lane its own; the same in every
    variant), the rest share one; the tensors of a DMA bundle, read one after another over one set of
    channels, share them lane by lane (lane j of each in one range); a store into a cache lies where the cache
    does.  When the variants' own ports together outnumber the banks, the activations and caches share first.
    A buffer lies in one range: the first variant (decode) that owns a port decides it."""
    def own(v, p) -> bool:
        return p.tensor in v.own and p.role not in ("scalar", "kv_out")

    owner: dict[str, str] = {}  # port -> its own range's key
    for v in variants:
        for p in v.ports:
            if own(v, p) and p.name not in owner:
                if p.role in ("input", "output"):  # the residual stream's two buffers swap roles every layer
                    owner[p.name] = "activations"
                else:
                    owner[p.name] = f"{v.bundled[p.tensor]}.lane{p.lane}" if p.tensor in v.bundled else p.name
    if "activations" in owner.values():
        owner.update({p.name: "activations" for v in variants for p in v.ports if p.role in ("input", "output")})

    def plan(weights_only: bool) -> dict:
        keys = {}
        for v in variants:
            for p in v.ports:
                if p.role == "scalar" or p.role == "kv_out":
                    continue
                mine = p.name in owner and (p.role == "weight" or not weights_only)
                keys[v.name, p.name] = owner[p.name] if mine else SHARED
            for p in v.ports:
                if p.role == "kv_out":
                    keys[v.name, p.name] = keys[v.name, p.alias]
        return keys

    keys = plan(False)
    if len(set(keys.values()) - {SHARED}) + 1 > n_banks:
        keys = plan(True)
    return keys


def _plan_banks(model, variants: list[LayerVariant], board, extra: dict[str, int] | None = None,
                spread: dict[str, int] | None = None) -> dict[str, tuple[int, int]]:
    """The bank range of each key of :func:`_bank_keys`, sized for what it holds (every layer's copy of a
    weight and a cache, two of each activation), and of each key of ``extra`` (the generate kernel's other
    buffers: key -> bytes); each variant's ports get theirs (``Port.banks``).  The keys of ``spread`` (the head's
    table lanes: they run after the last layer, when no other DMA moves, so they may share any bank) get one
    bank each, round the banks in turn; every bank must then still hold what lies in it."""
    n_banks, bank_bytes = _hbm(board)
    layers = model.config.layers
    keys = _bank_keys(variants, n_banks)
    need: dict[str, int] = {}
    for key, nbytes in (extra or {}).items():
        need[key] = need.get(key, 0) + nbytes
    counted: set = set()
    for v in variants:
        for p in v.ports:
            key = keys.get((v.name, p.name))
            if key is None or p.role == "kv_out":  # the store writes its cache's buffer, in place
                continue
            if p.role in ("weight", "kv_in"):  # every layer's copy, shared by all variants
                if (p.name, p.role) not in counted:
                    counted.add((p.name, p.role))
                    need[key] = need.get(key, 0) + layers * p.nbytes
            else:  # activations: two of each per variant
                need[key] = need.get(key, 0) + 2 * p.nbytes
    order = [k for k in [SHARED] + [k for k in dict.fromkeys([*keys.values(), *(extra or {})]) if k != SHARED]
             if k in need]
    width = {k: max(1, -(-(need[k] + need[k] // 32) // bank_bytes)) for k in order}  # 3 % headroom for alignment
    folded: list[str] = []
    if sum(width.values()) > n_banks:
        # More ports with channels of their own than banks: the ranges of several banks (and the shared one)
        # stay ranges; the one-bank ports share the banks left, one each in port order, round the banks in turn.
        folded = [k for k in order if k != SHARED and width[k] == 1]
    banks, nxt = {}, 0
    for key in order:
        if key not in folded:
            banks[key] = (nxt, nxt + width[key] - 1)
            nxt += width[key]
    if nxt > n_banks or (folded and nxt == n_banks):
        detail = ", ".join(f"{k} {b[1] - b[0] + 1}" for k, b in banks.items())
        raise LLMError(f"the weights and caches need {nxt} HBM banks of {bank_bytes >> 20} MiB; the {sd.board(board).name} has "
                       f"{n_banks} ({detail})", user_loc(),
                       hint="use a smaller max_len, or fewer layers; fp32 weights of this model do not fit")
    for j, key in enumerate(folded):
        b = nxt + j % (n_banks - nxt)
        banks[key] = (b, b)
    load = [0.0] * n_banks  # bytes in each bank: a range's spread evenly over its banks
    for key, (lo, hi) in banks.items():
        for b in range(lo, hi + 1):
            load[b] += need[key] / (hi - lo + 1)
    for j, (key, nbytes) in enumerate((spread or {}).items()):
        b = j % n_banks
        banks[key] = (b, b)
        load[b] += nbytes
    full = [b for b in range(n_banks) if load[b] * 1.03 > bank_bytes]
    if full:
        raise LLMError(f"HBM bank {full[0]} would hold {load[full[0]] / 2**20:.0f} MiB, more than its "
                       f"{bank_bytes >> 20} MiB", user_loc(), hint="use a smaller max_len, or fewer layers")
    for v in variants:
        v.ports = [dataclasses.replace(p, banks=banks[keys[v.name, p.name]]) if (v.name, p.name) in keys else p
                   for p in v.ports]
    return banks


def _gen_bank_keys(variants: list[LayerVariant], head: device.HeadKernel, args: list[device.GenArg]) -> dict:
    """Generate argument -> its bank key, or the (variant, port) whose range it takes: a layer port's buffer lies
    where the layer variants' port does; a head DMA the timing model gave channels of its own gets a bank of
    its own (:func:`_plan_banks` spreads them); the embedding and RoPE tables, the ids and ``tok`` share the
    shared range."""
    v0 = variants[0]
    port = {p.name: (v0.name, p.name) for p in v0.ports}
    scratch = {f"{v.name}_{p.name}": (v.name, p.name) for v in variants for p in v.ports if p.role == "scratch"}
    own = {d.tensor for d in head.project.timing.dmas if d.channels >= 1}
    hports = {f"head_{p['name']}": p for p in head.ports}
    out = {}
    for a in args:
        if a.scalar:
            continue
        if a.role in ("weight", "kv"):
            out[a.name] = port[a.name]
        elif a.role == "act":
            out[a.name] = next((v0.name, p.name) for p in v0.ports if p.role == "input")
        elif a.name in scratch:
            out[a.name] = scratch[a.name]
        elif a.name in hports and hports[a.name]["tensor"] in own and a.role == "head":
            out[a.name] = a.name
        else:
            out[a.name] = SHARED
    return out


def _same_weight_ports(variants: list[LayerVariant]) -> None:
    """Every variant reads a layer's weight buffers: each weight must lie in DRAM alike (ports, packing) in all."""
    def weights(v):
        return [(p.name, p.tensor, p.lanes, p.words, str(p.packing.layout)) for p in v.ports if p.role == "weight"]

    first = weights(variants[0])
    for v in variants[1:]:
        if weights(v) != first:
            diff = next((a, b) for a, b in zip(first, weights(v)) if a != b) if len(first) == len(weights(v)) else None
            raise LLMError(f"the {variants[0].name} and {v.name} layer kernels read the weights in different DRAM "
                           f"layouts{f' ({diff[0]} vs {diff[1]})' if diff else ''}; they share one copy of them",
                           user_loc(), hint="this is a streamdsl bug; please report it with the model's config")


def _generate(model, variants: list[LayerVariant], prefill_len: int, board) -> device.GenerateKernel:
    """The generate kernel over ``variants`` and the head: its arguments, their HBM banks (the plan's ranges,
    in ``.banks``) and the files of ``generate/``."""
    head = _head(model, variants, board)
    thetas, layer_rope = _rope_sets(model)
    args = device.gen_args(model, variants, head, prefill_len, thetas)
    keys = _gen_bank_keys(variants, head, args)
    extra: dict[str, int] = {}
    spread: dict[str, int] = {}
    for a in args:
        key = keys.get(a.name)
        if key == a.name:  # a head port with channels of its own
            spread[key] = a.nbytes
        elif isinstance(key, str):
            extra[key] = extra.get(key, 0) + a.nbytes
    banks = _plan_banks(model, variants, board, extra, spread)
    ports = {(v.name, p.name): p for v in variants for p in v.ports}  # with their banks now

    def where(key):
        return banks[key] if isinstance(key, str) else ports[key].banks

    args = [a if a.scalar else dataclasses.replace(a, banks=where(keys[a.name])) for a in args]
    files = device.render(model, variants, head, args, prefill_len, thetas, layer_rope, sd.__version__, _env)
    return device.GenerateKernel(f"{model.config.family}_generate", args, files, head, banks, model.config.layers,
                                 max(1, prefill_len), model.config.hidden // 16)


# ------------------------------------------------------------------------------------- weights
def _rope_sets(model) -> tuple[list[float], list[int]]:
    """The distinct RoPE thetas (in layer order) and each layer's index into them (empty without RoPE)."""
    c = model.config
    if c.rope_theta is None:
        return [], [-1] * c.layers
    thetas = list(dict.fromkeys(c.layer_theta(i) for i in range(c.layers)))
    return thetas, [thetas.index(c.layer_theta(i)) for i in range(c.layers)]


def _entry(name: str, shape, hbm: str | None, dtype: str = "float32", **extra) -> dict:
    shape = [int(s) for s in shape]
    size = 4 if dtype == "float32" else 1
    return dict(name=name, file=f"{name}.bin", shape=shape, dtype=dtype, offset=0,
                nbytes=size * math.prod(shape), hbm=hbm, **extra)


def weight_manifest(model, variants: list[LayerVariant], banks: dict, gen: device.GenerateKernel) -> dict:
    """The manifest of the weight files (see :func:`write_weights`); needs no weights."""
    c = model.config
    v0 = variants[0]
    wports = [p for p in v0.ports if p.role == "weight"]
    hbm = {a.name: a.hbm for a in gen.args}
    tensors = [_entry("embed", (c.vocab, c.hidden), hbm["embed"], where="hbm", role="embedding")]
    if c.family == "gpt2":
        tensors.append(_entry("pos_embed", (c.max_positions, c.hidden), hbm["pos_embed"], where="hbm",
                              role="positions"))
    for i in range(c.layers):
        for p in wports:
            name = f"layer{i}_{p.field}"
            tensors.append(dict(name=name, file=f"{name}.bin" if p.lanes == 1 else f"{name}.lane{p.lane}.bin",
                                shape=list(p.shape), dtype=_dtype(p), offset=0, nbytes=p.nbytes, hbm=p.hbm,
                                where="hbm", role="layer weight", layer=i, field=p.field, port=p.name,
                                layout=str(p.packing.layout), lane=p.lane, lanes=p.lanes, words=p.words))
    for p in gen.head.ports:
        if p["kind"] == "in" and p["tensor"] != "h":
            pk = p["packing"]
            tensors.append(dict(name=f"head_{p['tensor']}", file=device.head_file(p),
                                shape=[int(x) for x in pk.tensor_type.shape], dtype=_DTYPES[str(pk.tensor_type.dtype)],
                                offset=0, nbytes=64 * p["words"], hbm=hbm[f"head_{p['name']}"], where="hbm",
                                role=f"head {p['tensor']}", field=p["tensor"], port=f"head_{p['name']}",
                                layout=str(pk.layout), lane=p["lane"], lanes=p["lanes"], words=p["words"]))
    tensors.append(_entry("final_norm", (c.hidden,), None, where="host", role="final norm"))
    if c.norm == "layernorm":
        tensors.append(_entry("final_norm_b", (c.hidden,), None, where="host", role="final norm bias"))
    tied = model.weights.tied if model.weights is not None else c.tied_embeddings
    if tied:
        tensors.append(dict(_entry("lm_head", (c.vocab, c.hidden), None, where="host", role="lm head"),
                            file="embed.bin", tied=True))
    else:
        tensors.append(_entry("lm_head", (c.vocab, c.hidden), None, where="host", role="lm head", tied=False))
    thetas, _ = _rope_sets(model)
    for j, th in enumerate(thetas):
        for part in ("cos", "sin"):
            tensors.append(_entry(f"rope{j}_{part}", (model.max_len, c.head_dim), hbm[f"rope{j}_{part}"], where="hbm",
                                  role=f"rope {part} table", theta=th))
    return dict(format=FORMAT, model=c.name or c.family, family=c.family, scheme=model.quant, byte_order="little",
                layout="an entry without a layout is a float32 row-major (C order) array; where: hbm ones (the "
                       "embedding, position and RoPE tables) lie in HBM as they are, where: host ones are for "
                       "reading the model back (the device reads the head_* copies).  An entry with a layout is "
                       "the 512-bit words its m_axi port reads: the tensor packed in the words of its itensor "
                       "layout, tiles in stream order, value i of a word in bits [i*b, (i+1)*b), word w of the "
                       "tensor in lane w % lanes",
                complete=model.weights is not None, layers=c.layers, max_len=model.max_len, tensors=tensors)


def _arrays(model) -> dict[str, np.ndarray]:
    """Every file's contents by manifest name (RoPE tables always; weights when the model has them)."""
    c = model.config
    out: dict[str, np.ndarray] = {}
    w: ModelWeights | None = model.weights
    if w is not None:
        out["embed"] = w.embed
        if c.family == "gpt2":
            out["pos_embed"] = w.pos_embed
        for i in range(c.layers):
            spec = model.layer(1, model.layer_kinds[i])
            for fld, a in zip(weight_fields(spec), model.layer_args(i), strict=True):
                out[f"layer{i}_{fld}"] = a
        out["final_norm"] = w.final_norm
        if c.norm == "layernorm":
            out["final_norm_b"] = w.final_norm_b
        out.update({f"head_{k}": a for k, a in _head_arrays(model).items()})
        if not w.tied:
            out["lm_head"] = w.lm_head
    thetas, _ = _rope_sets(model)
    for j, th in enumerate(thetas):
        cos, sin = rope_tables(np.arange(model.max_len), rope_inv_freq(c.head_dim, th, c.rope_scaling))
        out[f"rope{j}_cos"], out[f"rope{j}_sin"] = cos, sin
    return out


def _packing(t: dict) -> Packing:
    """The packing of a manifest's layer weight entry."""
    it = ITensor.parse(t["layout"])
    return Packing(TensorType(it.dtype, tuple(t["shape"])), it)


def weight_files(model, manifest: dict) -> dict[str, np.ndarray | bytes]:
    """The binary files of ``manifest`` that the model has data for: file name -> the array or words to write."""
    arrays = _arrays(model)
    out = {}
    for t in manifest["tensors"]:
        a = arrays.get(t["name"])
        if a is None:
            continue
        if list(np.shape(a)) != t["shape"]:
            raise LLMError(f"weight {t['name']} has shape {np.shape(a)}, the kernel reads {tuple(t['shape'])}",
                           user_loc(), hint="the weights do not belong to this model's config")
        if "layout" in t:  # the words the port reads
            out[t["file"]] = pack(np.asarray(a), _packing(t), t["lanes"])[t["lane"]]
        else:
            out[t["file"]] = np.ascontiguousarray(a, dtype="<f4")
    return out


def write_weights(model, folder, manifest: dict, overwrite: bool = False) -> list[str]:
    """Write the binary files of ``manifest`` that the model has data for into ``folder``; returns the file names."""
    files = weight_files(model, manifest)
    OutputFolder(folder, overwrite).write(files)
    return list(files)


def read_weights(folder) -> dict[str, np.ndarray]:
    """The weight files of ``folder`` (a project's ``weights/``) by manifest name, as float32 arrays."""
    folder = Path(folder)
    path = folder / "manifest.json"
    if not path.exists():
        raise LLMError(f"'{folder}' has no manifest.json", user_loc(), hint="pass the weights/ folder LLM.build wrote")
    manifest = json.loads(path.read_text())
    if manifest.get("format") != FORMAT:
        raise LLMError(f"'{path}' is not a {FORMAT} manifest", user_loc(), hint="rebuild the project")
    out, lanes = {}, {}
    for t in manifest["tensors"]:
        parts = plain_parts(t["file"])
        if parts is None or len(parts) != 1:  # a weight file is a file of this folder, nothing else
            raise LLMError(f"'{path}' names the weight file {t['file']!r}, which is not a plain file name",
                           user_loc(), hint="rebuild the project")
        f = folder / t["file"]
        if not f.exists():
            raise LLMError(f"weight file '{f}' is missing", user_loc(),
                           hint="the project was built from a model without weights; model.load(weights) and rebuild")
        data = f.read_bytes()[t["offset"]:]
        if len(data) != t["nbytes"]:
            raise LLMError(f"'{f}' holds {len(data)} bytes from offset {t['offset']}, the manifest says "
                           f"{t['nbytes']}", user_loc(), hint="the file is truncated; rebuild the project")
        if "layout" in t:  # a port's words: the tensor once every lane is read
            lanes.setdefault(t["name"], (t, {}))[1][t["lane"]] = data
            continue
        out[t["name"]] = np.frombuffer(data, dtype="<f4").astype(np.float32).reshape(t["shape"])
    for name, (t, parts) in lanes.items():
        if sorted(parts) != list(range(t["lanes"])):
            raise LLMError(f"'{path}' lists {len(parts)} of the {t['lanes']} lanes of {name}", user_loc(),
                           hint="rebuild the project")
        a = unpack([parts[j] for j in range(t["lanes"])], _packing(t))
        out[name] = a.astype(np.float32) if t["dtype"] == "float32" else a.astype(np.int8)
    return out


def load_weights(folder, config: LLMConfig) -> ModelWeights:
    """:class:`ModelWeights` from a project's weight files (GPT-2's fused qkv split back into q, k, v)."""
    arrays = read_weights(folder)
    manifest = json.loads((Path(folder) / "manifest.json").read_text())
    scheme = manifest.get("scheme", "fp32")
    bits = {"w8a8": 8, "w4a8": 4}.get(scheme, 0)
    layers = []
    for i in range(config.layers):
        fields_ = {k.split("_", 1)[1]: v for k, v in arrays.items() if k.startswith(f"layer{i}_")}
        for name in [n[:-6] for n in fields_ if n.endswith("_codes")]:
            fields_[name] = QuantLinear(fields_.pop(f"{name}_codes"), fields_.pop(f"{name}_scale"), bits)
        h = config.hidden
        if "qkv_w" in fields_:
            w = fields_.pop("qkv_w")
            if isinstance(w, QuantLinear):
                fields_.update({n: QuantLinear(w.codes[j * h:(j + 1) * h], w.scale[j * h:(j + 1) * h], w.bits)
                                for j, n in enumerate("qkv")})
            else:
                fields_.update(q=w[:h], k=w[h:2 * h], v=w[2 * h:])
        if "qkv_b" in fields_:
            b = fields_.pop("qkv_b")
            fields_.update(q_b=b[:h], k_b=b[h:2 * h], v_b=b[2 * h:])
        layers.append(LayerWeights(**fields_))
    embed = arrays["embed"]
    tied = "lm_head" not in arrays or np.array_equal(arrays["lm_head"], embed) and _tied_in(folder)
    return ModelWeights(config, embed, layers, arrays["final_norm"], embed if tied else arrays["lm_head"],
                        pos_embed=arrays.get("pos_embed"), final_norm_b=arrays.get("final_norm_b"),
                        scheme=scheme, source=str(folder))


def _tied_in(folder) -> bool:
    m = json.loads((Path(folder) / "manifest.json").read_text())
    return any(t["name"] == "lm_head" and t.get("tied") for t in m["tensors"])


# ---------------------------------------------------------------------------------- rendering
def _host_context(model, gen: device.GenerateKernel) -> dict:
    index = {a.name: a.index for a in gen.args}
    return dict(vocab=model.config.vocab, kernel=gen.kernel, scheme=gen.head.scheme, args=gen.args,
                prompt=index["prompt"], out=index["out"], n_prompt=index["n_prompt"], n_new=index["n_new"],
                stop_at_eos=index["stop_at_eos"])


def _render(model, variants, banks, manifest, prefill_len, board, gen) -> dict[str, str]:
    c = model.config
    n_banks, bank_bytes = _hbm(board)
    board = sd.board(board).name
    common = dict(version=sd.__version__, model=c.name or c.family, board=board, n_banks=n_banks,
                  bank_mib=bank_bytes >> 20, variants=variants, banks=banks, prefill_len=prefill_len,
                  max_len=model.max_len, weights_complete=manifest["complete"], gen=gen,
                  sources=sorted(f for f in gen.files if f.endswith(".cpp") and not f.startswith("tb_")))
    proj = dict(format="streamdsl-accelerator/2", model=c.name or c.family, family=c.family, board=board,
                layers=c.layers, max_len=model.max_len, prefill_len=prefill_len,
                hbm=dict(banks=n_banks, bank_bytes=bank_bytes, plan={k: list(b) for k, b in banks.items()}),
                kernel=dict(name=gen.kernel, folder="generate", source=f"generate/{gen.kernel}.cpp",
                            head=gen.head.kernel, head_scheme=gen.head.scheme,
                            args=[dict(index=a.index, name=a.name, role=a.role, bytes=a.nbytes if not a.scalar else None,
                                       ctype="int32_t" if a.scalar else "sd::word", hbm=a.hbm,
                                       files=[dict(file=f.file, offset=64 * f.offset, bytes=64 * f.words)
                                              for f in a.files]) for a in gen.args]),
                layer_kernel=[next(v.kernel for v in variants if v.phase == "decode" and v.kind == k)
                              for k in model.layer_kinds],
                variants=[dict(name=v.name, phase=v.phase, kind=v.kind, t=v.t, kernel=v.kernel, folder=v.folder,
                               header=f"{v.folder}/{v.kernel}.h", source=f"{v.folder}/{v.kernel}.cpp",
                               args=[dict(index=p.index, name=p.name, ctype=p.ctype,
                                          shape=list(p.shape) if p.shape else None, role=p.role, field=p.field,
                                          hbm=p.hbm) for p in v.ports]) for v in variants])
    tied = manifest["tensors"][[t["name"] for t in manifest["tensors"]].index("lm_head")]["file"] == "embed.bin"
    return {
        "host/host.cpp": _env.get_template("host.cpp.j2").render(**{**_host_context(model, gen), **common}),
        "link.cfg": _env.get_template("link.cfg.j2").render(**common),
        "Makefile": _env.get_template("Makefile.j2").render(**common),
        "README.md": _env.get_template("README.md.j2").render(**common, family=c.family, layers=c.layers, tied=tied),
        "project.json": json.dumps(proj, indent=1) + "\n",
        "weights/manifest.json": json.dumps(manifest, indent=1) + "\n",
    }


# -------------------------------------------------------------------------------------- build
def build(model, output=None, prefill_len: int | None = None, board="u55c", overwrite: bool = False,
          weights: bool = True, schedule: str = "explored") -> AcceleratorProject:
    """Write the accelerator project of ``model`` into ``output`` (see the module docstring).

    ``schedule``: ``"explored"`` (the decode layer ``sd.explore`` finds fastest on ``board``, the design the
    performance model reports) or ``"default"`` (the library's default schedule; see :data:`SCHEDULES`).

    ``prefill_len``: the prompt length the prefill kernel takes (1: no prefill layer, the prompt goes through
    the decode layers; default: :func:`auto_prefill`, ``min(16, max_len)`` when the model says that layer is
    faster a token than the decode layers, else 1; ``prj.prefill_why`` says which).  ``weights=False``
    skips the weight files (they are skipped anyway when the model has none).
    ``output=None`` renders everything in memory and writes nothing.
    """
    t0 = time.perf_counter()
    if prefill_len is not None and (isinstance(prefill_len, bool) or not isinstance(prefill_len, (int, np.integer))
                                    or not 1 <= prefill_len <= model.max_len):
        raise LLMError(f"prefill_len must be an integer in 1..{model.max_len} (the KV cache's positions), got "
                       f"{prefill_len!r}", user_loc(), hint="e.g. prefill_len=16; build the model with a larger max_len "
                                                            "for longer prompts")
    if schedule not in SCHEDULES:
        raise LLMError(f"unknown schedule {schedule!r}", user_loc(), hint=f"schedule is one of {', '.join(SCHEDULES)}")
    try:
        board = sd.board(board)
    except sd.BoardError as err:
        raise LLMError(err.message, user_loc(), hint=err.hint) from None
    _hbm(board)
    out = Path(output) if output is not None else None
    folder = OutputFolder(out, overwrite) if out is not None else None
    if folder is not None:
        try:
            folder.check()  # before the layers are built
        except sd.StreamDSLError as err:
            err.loc = err.loc or user_loc()
            raise
    if prefill_len is None:
        prefill_len, why = auto_prefill(model, board, schedule)
    else:
        prefill_len, why = int(prefill_len), "as given (prefill_len)"
    variants = _variants(model, prefill_len, board, schedule)
    _same_weight_ports(variants)
    gen = _generate(model, variants, prefill_len, board)
    banks = gen.banks
    manifest = weight_manifest(model, variants, banks, gen)
    files = _render(model, variants, banks, manifest, prefill_len, board, gen)
    wrote_weights = False
    if folder is not None:
        try:
            for v in variants:
                v.project.write(folder.sub(v.folder))
            write_hls_project(gen.files, folder.sub("generate"))
            bins = weight_files(model, manifest) if weights else {}
            folder.write({**files, **{f"weights/{f}": a for f, a in bins.items()}})
            wrote_weights = weights and model.weights is not None
        except sd.StreamDSLError as err:
            err.loc = err.loc or user_loc()
            raise
    c = model.config
    return AcceleratorProject(out, c.name or c.family, variants, banks, files, wrote_weights, prefill_len,
                              model.max_len, time.perf_counter() - t0, schedule, gen, why)


__all__ = ["AUTO_PREFILL", "AcceleratorProject", "LayerVariant", "Port", "SCHEDULES", "auto_prefill", "build",
           "read_weights", "load_weights", "weight_manifest", "write_weights"]
