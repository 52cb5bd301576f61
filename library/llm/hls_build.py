"""The whole-model accelerator project: layer kernels, host code, HBM link config, weight files.

``LLM.build("hls", output=DIR, prefill_len=P)`` (:func:`build`) writes::

    DIR/
      README.md              how to compile (v++), link, build the host and run it
      Makefile               the same commands (v++ -c per kernel, v++ -l, g++ host)
      link.cfg               v++ [connectivity]: nk= per kernel, sp= per m_axi port -> HBM bank(s)
      project.json           every kernel, its arguments in order, their role and HBM banks
      layer_<phase>_<kind>/  one HLS dataflow project per layer variant (decode t=1, prefill t=P;
                             per attention kind the model uses), top <layer>_<phase>_<kind>
      host/host.cpp          the XRT host program (embedding, final norm and LM head on the CPU)
      weights/manifest.json  every binary file: name, shape, dtype, offset, bytes, HBM bank
      weights/*.bin          float32 little-endian, row-major: layer<i>_<field>.bin, embed.bin, ...

Layer variants.  A layer kernel is compiled for a fixed number of new tokens
``t``: ``decode`` (t = 1) and ``prefill`` (t = ``prefill_len``), each once per
attention kind (Gemma 3: sliding and full).  Each is ``model.schedule(t,
kind).build("hls")`` with its top function renamed to a unique kernel name
(``llama_layer_decode_full``: an xclbin cannot hold two kernels of one name)
and declared ``extern "C"``; nothing else changes.

Weight layout.  The layer's DMAs read every weight as one row-major tensor
(its ``m_axi`` array is the plain C array of the parameter), so the files are
the row-major arrays of :meth:`LLM.layer_args` (GPT-2's ``qkv_w`` is q | k | v
concatenated, as the kernel takes it).  :func:`~.weights.pack`'s tiled layout
is not used: the kernel, the files and the host all use row-major.

HBM plan (U55C: 32 pseudo-channels of 512 MiB).  Bank 0 holds the activations
(x, y, cos, sin, inter-region buffers); the K and V caches get banks of their
own (``kc`` and ``kc2`` are the same buffer per layer: the kernel reads the
cache as ``kc`` and writes only the new rows into it as ``kc2``, ``g.store_at``;
likewise V); the 1-D weights (norms, biases) share one
bank; every weight matrix gets its own range of banks, as many as its
``layers`` copies need plus 3 % (``sp=...:HBM[a:b]``).  A port's banks are the same
in every variant, so prefill and decode kernels share the weight and cache
buffers.  The plan is in ``project.json`` and ``weights/manifest.json``.

The host (``host/host.cpp``, XRT native API) loads the xclbin and every
layer's weight files into HBM buffers allocated with ``kernel.group_id(arg)``,
allocates the KV caches, and generates greedily: the prompt's first
``prefill_len`` tokens through the prefill kernel (the rest, or a shorter
prompt, one token at a time through the decode kernel), then one decode step
per new token.  The embedding lookup, the final norm and the LM head (over
the embedding file when tied) run on the host CPU as plain C++ loops that
follow the library kernels' arithmetic (sequential float32 sums).  Usage::

    host/host XCLBIN WEIGHTS_DIR TOKEN_IDS... --max-new-tokens N

:func:`read_weights` reads the files back through the manifest and
:func:`load_weights` rebuilds :class:`~.weights.ModelWeights` from them.
"""
from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined

import streamdsl as sd
from streamdsl.backend import OutputFolder, comment, md_code, plain_parts

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
    """One argument of a layer kernel, in the top function's order (= the XRT argument index)."""

    index: int
    name: str
    ctype: str
    shape: tuple[int, ...] | None  # None: a scalar (s_axilite only)
    const: bool
    role: str  # input | output | weight | kv_in | kv_out | rope | scalar | scratch
    field: str | None = None  # the LayerWeights field of a weight port
    banks: tuple[int, int] | None = None

    @property
    def count(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.count * (4 if self.ctype in ("float", "int32_t") else 1 if self.ctype in ("int8_t", "ap_int<4>")
                             else 8)

    @property
    def hbm(self) -> str | None:
        if self.banks is None:
            return None
        lo, hi = self.banks
        return f"HBM[{lo}]" if lo == hi else f"HBM[{lo}:{hi}]"


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

    def __repr__(self) -> str:
        where = f" in {self.output}" if self.output else ""
        ks = ", ".join(v.kernel for v in self.variants)
        return (f"<AcceleratorProject {self.model}{where}: kernels {ks}; "
                f"weights {'written' if self.weights_written else 'not written (no weights)'}>")

    def variant(self, phase: str, kind: str = FULL) -> LayerVariant:
        for v in self.variants:
            if v.phase == phase and v.kind == kind:
                return v
        raise LLMError(f"the project has no {phase} layer for {kind}", user_loc(),
                       hint=f"its variants: {', '.join(v.name for v in self.variants)}")


# ------------------------------------------------------------------------------------ variants
_PROTO = re.compile(r'^extern "C" void (\w+)\((.*)\);$', re.M)
_ARG = re.compile(r"^(const )?(.+?) (\w+)((?:\[\d+\])*)$")


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


_DTYPES = {"float": ("float32", "<f4"), "int8_t": ("int8", "i1"), "ap_int<4>": ("int4 (one per byte)", "i1")}


def _dtype(ctype: str) -> tuple[str, str]:
    if ctype not in _DTYPES:
        raise LLMError(f"a layer weight of C type {ctype} has no file format", user_loc(),
                       hint=f"weight files hold {', '.join(_DTYPES)}")
    return _DTYPES[ctype]


def _ports(header: str, kernel: str, ir, spec) -> list[Port]:
    """The kernel's arguments from its prototype, with the role of each (from the layer's IR)."""
    m = next((m for m in _PROTO.finditer(header) if m.group(1) == kernel), None)
    if m is None:
        raise LLMError(f"cannot find the prototype of '{kernel}' in its header", None,
                       hint="this is a streamdsl bug; please report it")
    params = [p.name for p in ir.params]
    fields_ = weight_fields(spec)
    nw = len(fields_)
    roles = {params[0]: ("input", None)}
    roles.update({p: ("weight", f) for p, f in zip(params[1:1 + nw], fields_)})
    rest = params[1 + nw:]
    roles[rest[0]], roles[rest[1]] = ("kv_in", None), ("kv_in", None)
    for p in rest[2:]:
        roles[p] = ("scalar", None) if p in ("pos", "n_valid") else ("rope", None)
    ports = []
    for i, arg in enumerate(a.strip() for a in m.group(2).split(",")):
        am = _ARG.match(arg)
        if am is None:
            raise LLMError(f"cannot read argument {arg!r} of '{kernel}'", None, hint="this is a streamdsl bug")
        const, ctype, name, dims = am.groups()  # the C++ name (a parameter's Python name spelled for C++)
        shape = tuple(int(d) for d in re.findall(r"\[(\d+)\]", dims)) or None
        outs = i - len(params)  # the top function's parameters, then its results, then DRAM buffers
        role, fld = roles[params[i]] if outs < 0 else ("output", None) if outs == 0 else \
            ("kv_out", None) if outs < 3 else ("scratch", None)
        ports.append(Port(i, name, ctype, shape, bool(const), role, fld))
    if len(ports) < len(params) + 3:
        raise LLMError(f"'{kernel}' takes ({', '.join(p.name for p in ports)}), expected ({', '.join(params)}, "
                       "y, kc2, vc2, ...)", None, hint="this is a streamdsl bug; please report it")
    return ports


def _variants(model, prefill_len: int, board) -> list[LayerVariant]:
    import dataclasses

    phases = [("decode", 1)] + ([("prefill", prefill_len)] if prefill_len > 1 else [])
    out = []
    for phase, t in phases:
        for kind in model.kinds():
            g = model.schedule(t, kind)
            prj = g.build("hls", board=board)
            ir = g.graph.ir
            name = f"{phase}_{KIND_TAG.get(kind, kind)}"
            kernel = f"{prj.top}_{name}"
            files = _rename(prj.files, prj.top, kernel)
            ports = _ports(files[f"{kernel}.h"], kernel, ir, model.layer(t, kind))
            renamed = dataclasses.replace(prj, files=files, output=None)
            out.append(LayerVariant(name, phase, kind, t, kernel, f"layer_{name}", ports, renamed))
    return out


# ------------------------------------------------------------------------------------ HBM plan
def _bank_key(p: Port) -> str | None:
    if p.role in ("input", "output", "rope", "scratch"):
        return "io"
    if p.role in ("kv_in", "kv_out"):
        return "kv_v" if p.name.startswith("v") else "kv_k"
    if p.role == "weight":
        return "vectors" if len(p.shape) == 1 else p.name
    return None


def _plan_banks(model, variants: list[LayerVariant], board) -> dict[str, tuple[int, int]]:
    n_banks, bank_bytes = _hbm(board)
    layers = model.config.layers
    need: dict[str, int] = {}
    for v in variants:
        for p in v.ports:
            key = _bank_key(p)
            if key is None or p.role == "kv_out":  # kc2/vc2 are the kc/vc buffers, written in place
                continue
            if p.role == "weight":  # every layer's copy; shared by all variants
                if v is variants[0]:
                    need[key] = need.get(key, 0) + layers * p.nbytes
            elif p.role == "kv_in":  # one buffer per layer (kv_out writes its new rows in place)
                need[key] = max(need.get(key, 0), layers * p.nbytes)
            else:  # activations: two of each per variant
                need[key] = need.get(key, 0) + 2 * p.nbytes
    order = ["io", "kv_k", "kv_v", "vectors"] + [k for k in dict.fromkeys(
        _bank_key(p) for p in variants[0].ports if p.role == "weight") if k != "vectors"]
    banks, nxt = {}, 0
    for key in order:
        if key not in need:
            continue
        n = max(1, -(-(need[key] + need[key] // 32) // bank_bytes))  # 3 % headroom for allocation alignment
        banks[key] = (nxt, nxt + n - 1)
        nxt += n
    if nxt > n_banks:
        detail = ", ".join(f"{k} {b[1] - b[0] + 1}" for k, b in banks.items())
        raise LLMError(f"the weights and caches need {nxt} HBM banks of {bank_bytes >> 20} MiB; the {sd.board(board).name} has "
                       f"{n_banks} ({detail})", user_loc(),
                       hint="use a smaller max_len, or fewer layers; fp32 weights of this model do not fit")
    return banks


def _with_banks(variants: list[LayerVariant], banks: dict[str, tuple[int, int]]) -> None:
    for v in variants:
        v.ports = [Port(p.index, p.name, p.ctype, p.shape, p.const, p.role, p.field,
                        banks.get(_bank_key(p)) if _bank_key(p) else None) for p in v.ports]


# ------------------------------------------------------------------------------------- weights
def _rope_sets(model) -> tuple[list[float], list[int]]:
    return _rope_sets_of(model.config)


def _rope_sets_of(c: LLMConfig) -> tuple[list[float], list[int]]:
    """The distinct RoPE thetas (in layer order) and each layer's index into them (empty without RoPE)."""
    if c.rope_theta is None:
        return [], [-1] * c.layers
    thetas = list(dict.fromkeys(c.layer_theta(i) for i in range(c.layers)))
    return thetas, [thetas.index(c.layer_theta(i)) for i in range(c.layers)]


def forward_syncs(config: LLMConfig, t: int) -> list[tuple[str, int]]:
    """The buffer syncs ``forward()`` of ``templates/host.cpp.j2`` makes for a step of ``t`` tokens, in order, as
    (direction, bytes): the embedded rows to the device, the step's cos and sin rows of every RoPE table, and
    the last layer's output back (the whole ``t``-row buffer).  The end-to-end model prices these."""
    c = config
    rows = [("to_device", t * c.hidden * 4)] + [("to_device", t * c.head_dim * 4)] * (2 * len(_rope_sets_of(c)[0]))
    return rows + [("from_device", t * c.hidden * 4)]


def _entry(name: str, shape, hbm: str | None, dtype: str = "float32", **extra) -> dict:
    shape = [int(s) for s in shape]
    size = 4 if dtype == "float32" else 1
    return dict(name=name, file=f"{name}.bin", shape=shape, dtype=dtype, offset=0,
                nbytes=size * math.prod(shape), hbm=hbm, **extra)


def weight_manifest(model, variants: list[LayerVariant], banks: dict) -> dict:
    """The manifest of the weight files (see :func:`write_weights`); needs no weights."""
    c = model.config
    v0 = variants[0]
    wports = [p for p in v0.ports if p.role == "weight"]
    tensors = [_entry("embed", (c.vocab, c.hidden), None, where="host", role="embedding")]
    if c.family == "gpt2":
        tensors.append(_entry("pos_embed", (c.max_positions, c.hidden), None, where="host", role="positions"))
    for i in range(c.layers):
        for p in wports:
            tensors.append(_entry(f"layer{i}_{p.field}", p.shape, p.hbm, _dtype(p.ctype)[0], where="hbm",
                                  role="layer weight", layer=i, field=p.field, port=p.name))
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
            tensors.append(_entry(f"rope{j}_{part}", (model.max_len, c.head_dim), None, where="host",
                                  role=f"rope {part} table", theta=th))
    return dict(format=FORMAT, model=c.name or c.family, family=c.family, scheme=model.quant, byte_order="little",
                layout="row-major (C order): each file is the plain array the layer kernel's m_axi port reads",
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
            spec = model.layer(1, c.layer_types[i])
            for fld, a in zip(weight_fields(spec), model.layer_args(i), strict=True):
                out[f"layer{i}_{fld}"] = a
        out["final_norm"] = w.final_norm
        if c.norm == "layernorm":
            out["final_norm_b"] = w.final_norm_b
        if not w.tied:
            out["lm_head"] = w.lm_head
    thetas, _ = _rope_sets(model)
    for j, th in enumerate(thetas):
        cos, sin = rope_tables(np.arange(model.max_len), rope_inv_freq(c.head_dim, th, c.rope_scaling))
        out[f"rope{j}_cos"], out[f"rope{j}_sin"] = cos, sin
    return out


def weight_files(model, manifest: dict) -> dict[str, np.ndarray]:
    """The binary files of ``manifest`` that the model has data for: file name -> the array to write."""
    arrays = _arrays(model)
    out = {}
    for t in manifest["tensors"]:
        a = arrays.get(t["name"])
        if a is None:
            continue
        a = np.ascontiguousarray(a, dtype="<f4" if t["dtype"] == "float32" else "i1")
        if list(a.shape) != t["shape"]:
            raise LLMError(f"weight {t['name']} has shape {a.shape}, the kernel reads {tuple(t['shape'])}", user_loc(),
                           hint="the weights do not belong to this model's config")
        out[t["file"]] = a
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
    out = {}
    for t in manifest["tensors"]:
        parts = plain_parts(t["file"])
        if parts is None or len(parts) != 1:  # a weight file is a file of this folder, nothing else
            raise LLMError(f"'{path}' names the weight file {t['file']!r}, which is not a plain file name",
                           user_loc(), hint="rebuild the project")
        f = folder / t["file"]
        if not f.exists():
            raise LLMError(f"weight file '{f}' is missing", user_loc(),
                           hint="the project was built from a model without weights; model.load(weights) and rebuild")
        count = math.prod(t["shape"])
        dt = "<f4" if t["dtype"] == "float32" else "i1"
        a = np.fromfile(f, dtype=dt, count=count, offset=t["offset"])
        if a.size != count:
            raise LLMError(f"'{f}' holds {a.size} floats from offset {t['offset']}, the manifest says {count}",
                           user_loc(), hint="the file is truncated; rebuild the project")
        out[t["name"]] = a.astype(np.float32 if dt == "<f4" else np.int8).reshape(t["shape"])
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
def _c_float(x: float) -> str:
    r = repr(float(np.float32(x)))
    return (r if ("e" in r or "." in r) else r + ".0") + "f"


def _host_context(model, variants, manifest, prefill_len) -> dict:
    c = model.config
    thetas, layer_rope = _rope_sets(model)
    vs = []
    for v in variants:
        by_role = {}
        for p in v.ports:
            by_role.setdefault(p.role, []).append(p)
        kv_in, kv_out = by_role["kv_in"], by_role["kv_out"]
        rope = {p.name: p for p in by_role.get("rope", [])}
        scal = {p.name: p for p in by_role["scalar"]}
        vs.append(dict(
            name=v.name, kernel=v.kernel, t=v.t, phase=v.phase, kind=model.kinds().index(v.kind), x=by_role["input"][0].index, y=by_role["output"][0].index,
            kc=kv_in[0].index, vc=kv_in[1].index, kc2=kv_out[0].index, vc2=kv_out[1].index,
            cos=rope["cos"].index if "cos" in rope else -1, sin=rope["sin"].index if "sin" in rope else -1,
            pos=scal["pos"].index, n_valid=scal["n_valid"].index,
            weights=[p.index for p in by_role["weight"]],
            scratch=[dict(index=p.index, bytes=4 * p.count, name=p.name) for p in by_role.get("scratch", [])],
            nargs=len(v.ports)))
    layer_files = [[t for t in manifest["tensors"] if t.get("layer") == i] for i in range(c.layers)]
    dec = {v["kind"]: k for k, v in enumerate(vs) if v["phase"] == "decode"}
    pre = {v["kind"]: k for k, v in enumerate(vs) if v["phase"] == "prefill"}
    kinds = model.kinds()
    return dict(
        family=c.family, layers=c.layers, hidden=c.hidden, vocab=c.vocab,
        head_dim=c.head_dim, max_positions=c.max_positions,
        norm=c.norm, norm_eps=_c_float(c.norm_eps), embed_scale=_c_float(c.embed_scale) if c.embed_scale != 1.0 else None,
        tied=manifest["tensors"][[t["name"] for t in manifest["tensors"]].index("lm_head")]["file"] == "embed.bin",
        rope_tables=len(thetas), layer_rope=layer_rope, thetas=thetas,
        layer_kind=[kinds.index(k) for k in c.layer_types], kinds=kinds,
        hvariants=vs, cache_count=next(p.count for p in variants[0].ports if p.role == "kv_in"), decode_of_kind=[dec[k] for k in range(len(kinds))],
        prefill_of_kind=[pre.get(k, -1) for k in range(len(kinds))],
        nweights=len(vs[0]["weights"]), layer_files=layer_files, eos=list(c.eos_token_ids),
    )


def _render(model, variants, banks, manifest, prefill_len, board) -> dict[str, str]:
    c = model.config
    ctx = _host_context(model, variants, manifest, prefill_len)
    n_banks, bank_bytes = _hbm(board)
    board = sd.board(board).name
    common = dict(version=sd.__version__, model=c.name or c.family, board=board, n_banks=n_banks,
                  bank_mib=bank_bytes >> 20, variants=variants, banks=banks, prefill_len=prefill_len,
                  max_len=model.max_len, weights_complete=manifest["complete"])
    proj = dict(format="streamdsl-accelerator/1", model=c.name or c.family, family=c.family, board=board,
                layers=c.layers, max_len=model.max_len, prefill_len=prefill_len,
                hbm=dict(banks=n_banks, bank_bytes=bank_bytes, plan={k: list(b) for k, b in banks.items()}),
                layer_kernel=[next(v.kernel for v in variants if v.phase == "decode" and v.kind == k)
                              for k in c.layer_types],
                variants=[dict(name=v.name, phase=v.phase, kind=v.kind, t=v.t, kernel=v.kernel, folder=v.folder,
                               header=f"{v.folder}/{v.kernel}.h", source=f"{v.folder}/{v.kernel}.cpp",
                               args=[dict(index=p.index, name=p.name, ctype=p.ctype,
                                          shape=list(p.shape) if p.shape else None, role=p.role, field=p.field,
                                          hbm=p.hbm) for p in v.ports]) for v in variants])
    return {
        "host/host.cpp": _env.get_template("host.cpp.j2").render(**{**ctx, **common}),
        "link.cfg": _env.get_template("link.cfg.j2").render(**common),
        "Makefile": _env.get_template("Makefile.j2").render(**common),
        "README.md": _env.get_template("README.md.j2").render(**common, family=c.family, layers=c.layers,
                                                               tied=ctx["tied"]),
        "project.json": json.dumps(proj, indent=1) + "\n",
        "weights/manifest.json": json.dumps(manifest, indent=1) + "\n",
    }


# -------------------------------------------------------------------------------------- build
def build(model, output=None, prefill_len: int | None = None, board="u55c", overwrite: bool = False,
          weights: bool = True) -> AcceleratorProject:
    """Write the accelerator project of ``model`` into ``output`` (see the module docstring).

    ``prefill_len``: the prompt length the prefill kernel takes (default
    ``min(16, max_len)``; 1 builds the decode kernel only).  ``weights=False``
    skips the weight files (they are skipped anyway when the model has none).
    ``output=None`` renders everything in memory and writes nothing.
    """
    t0 = time.perf_counter()
    if prefill_len is None:
        prefill_len = min(16, model.max_len)
    if isinstance(prefill_len, bool) or not isinstance(prefill_len, (int, np.integer)) or not 1 <= prefill_len <= model.max_len:
        raise LLMError(f"prefill_len must be an integer in 1..{model.max_len} (the KV cache's positions), got "
                       f"{prefill_len!r}", user_loc(), hint="e.g. prefill_len=16; build the model with a larger max_len "
                                                            "for longer prompts")
    prefill_len = int(prefill_len)
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
    variants = _variants(model, prefill_len, board)
    banks = _plan_banks(model, variants, board)
    _with_banks(variants, banks)
    manifest = weight_manifest(model, variants, banks)
    files = _render(model, variants, banks, manifest, prefill_len, board)
    wrote_weights = False
    if folder is not None:
        try:
            for v in variants:
                v.project.write(folder.sub(v.folder))
            bins = weight_files(model, manifest) if weights else {}
            folder.write({**files, **{f"weights/{f}": a for f, a in bins.items()}})
            wrote_weights = weights and model.weights is not None
        except sd.StreamDSLError as err:
            err.loc = err.loc or user_loc()
            raise
    c = model.config
    return AcceleratorProject(out, c.name or c.family, variants, banks, files, wrote_weights, prefill_len,
                              model.max_len, time.perf_counter() - t0)


__all__ = ["AcceleratorProject", "LayerVariant", "Port", "build", "forward_syncs", "read_weights", "load_weights",
           "weight_manifest", "write_weights", "HBM"]
