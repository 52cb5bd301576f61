"""The whole generate call on the device: one kernel, ``<family>_generate``, that turns prompt ids into new ids.

``LLM.build("hls")`` writes it into ``generate/`` of the accelerator project (:mod:`.hls_build`); the xclbin
holds this one kernel.  One launch runs a whole generate call::

    prompt ids (HBM) -> [embedding gather -> every layer -> head -> argmax] per step -> generated ids (HBM)

* **Embedding**: :func:`gather` reads a token's row of the fp32 table, ``hidden / 16`` 512-bit words in one
  burst over its own port (GPT-2 adds its position row, read in the same loop over a second port; Gemma
  multiplies by its scale), into the residual stream's buffer ``act0``.
* **Layers**: a persistent loop over the layers calls the layer variants (the decode and prefill layer
  kernels of :mod:`.hls_build`, each a dataflow region, as sub-functions) with layer ``l``'s weights and KV
  cache at word offset ``l * words`` of their ports' buffers (every layer's copy lies in one buffer a port),
  the RoPE rows at the step's position in the tables, the residual stream ping-ponging between ``act0`` and
  ``act1``.  Layers run one after another: nothing of layer ``l + 1`` is fetched while layer ``l`` runs.
* **Head**: the head dataflow (:func:`.token.device_head`: final norm -> LM head streamed from HBM ->
  greedy argmax) reads the last row of the last layer's output and writes the token id into ``tok``.
* **Feedback**: the top function reads the id back, appends it to the generated ids and, unless ``n_new``
  ids are out (or, with ``stop_at_eos`` set, it is an end-of-sequence id), gathers its row for the next step.

The prompt: when it has at least ``prefill_len`` tokens (and there is a prefill kernel), its first
``prefill_len`` go through the prefill layers at once, the rest one at a time through the decode layers (the
rule of the previous host program, kept so the figures compare).

Ids lie in HBM as int32, 16 to a 512-bit word.  ``out`` receives one id a generated token; its other lanes
keep what the host wrote (the host writes -1 everywhere first), so the host reads the ids up to the first -1.

The testbench ``tb_<family>_generate.cpp`` is the C-simulation of a whole launch: it fills every buffer from
the project's ``weights/`` files as the host does, calls the top function (bounded FIFOs, threads with
``-DSTREAMDSL_THREADED_DATAFLOW``) and prints the generated ids.
"""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

WORD_BYTES = 64
IDS_PER_WORD = 16


def hbm_group(banks: tuple[int, int] | None) -> str | None:
    """The link config's name of a bank range: ``HBM[3]`` or ``HBM[3:5]`` (None: no range)."""
    if banks is None:
        return None
    lo, hi = banks
    return f"HBM[{lo}]" if lo == hi else f"HBM[{lo}:{hi}]"


@dataclass(frozen=True)
class BufferFile:
    """Part of a buffer the host (and the testbench) fills from a weight file: ``words`` words at ``offset``."""

    file: str
    offset: int  # words
    words: int


@dataclass(frozen=True)
class GenArg:
    """An argument of the generate kernel, in order (= the XRT argument index).  A buffer is an ``m_axi`` port
    of 512-bit words; ``files`` say what fills it (none: zeros, or the ids for ``prompt`` and ``out``)."""

    index: int
    name: str
    role: str  # weight | kv | rope | embed | pos_embed | head | act | scratch | tok | prompt | out | scalar
    words: int = 0  # 0: a scalar (int32_t, s_axilite)
    const: bool = True
    files: tuple[BufferFile, ...] = ()
    banks: tuple[int, int] | None = None

    @property
    def scalar(self) -> bool:
        return self.words == 0

    @property
    def nbytes(self) -> int:
        return WORD_BYTES * self.words if self.words else 4

    @property
    def hbm(self) -> str | None:
        return hbm_group(self.banks)

    @property
    def cdecl(self) -> str:
        if self.scalar:
            return f"int32_t {self.name}"
        return f"{'const ' if self.const else ''}sd::word *{self.name}"


@dataclass
class HeadKernel:
    """The head dataflow's project (top ``<family>_head``) and its array ports (``DataflowProject.ports``)."""

    kernel: str
    project: object = field(repr=False)
    schedule: object = field(repr=False)
    scheme: str = "fp32"

    @property
    def ports(self) -> list[dict]:
        return self.project.ports

    @property
    def source(self) -> str:
        return self.project.files[f"{self.kernel}.cpp"]


@dataclass
class GenerateKernel:
    """The one kernel of the xclbin: its arguments and the files of ``generate/``."""

    kernel: str
    args: list[GenArg]
    files: dict[str, str] = field(repr=False)
    head: HeadKernel = field(repr=False)
    banks: dict = field(default_factory=dict, repr=False)  # the HBM plan's ranges (key -> (first, last))
    layers: int = 0
    prefill_len: int = 1
    wpr: int = 0  # words of a hidden-state row

    def arg(self, name: str) -> GenArg:
        return next(a for a in self.args if a.name == name)

    def plan(self, n_prompt: int, n_new: int) -> CallPlan:
        """What a launch with these ids does (:class:`CallPlan`)."""
        return CallPlan(n_prompt, n_new, self.prefill_len, self.layers, self.wpr)

    def __repr__(self) -> str:
        bufs = [a for a in self.args if not a.scalar]
        return (f"<GenerateKernel {self.kernel}: {len(bufs)} m_axi buffers "
                f"({sum(a.nbytes for a in bufs) / 2**20:.1f} MiB), head {self.head.kernel} ({self.head.scheme})>")


@dataclass(frozen=True)
class CallPlan:
    """What one launch of the generate kernel does for a prompt of ``n_prompt`` tokens and ``n_new`` new ids
    (no end-of-sequence stop): the rule of the top function, which the end-to-end model prices and the C-sim
    counts (:meth:`trips`)."""

    n_prompt: int
    n_new: int
    prefill_len: int  # tokens of the prefill layers (1: none)
    layers: int
    wpr: int  # words of a hidden-state row

    @property
    def prefill_steps(self) -> int:
        """Steps through the prefill layers: one when the prompt has at least prefill_len tokens."""
        return int(self.prefill_len > 1 and self.n_prompt >= self.prefill_len)

    @property
    def prompt_decode_steps(self) -> int:
        """Prompt tokens that go one at a time through the decode layers."""
        return self.n_prompt - self.prefill_steps * self.prefill_len

    @property
    def decode_steps(self) -> int:
        """Steps for the new ids after the first (the first comes from the prompt's last step)."""
        return self.n_new - 1

    @property
    def gathered_rows(self) -> int:
        return self.n_prompt + self.decode_steps

    @property
    def head_calls(self) -> int:
        return self.n_new

    def trips(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(function, loop label) -> (entries, trips) the labelled loops of the top function's file count."""
        steps = self.prefill_steps + self.prompt_decode_steps
        return {("gather", "L_gather"): (self.gathered_rows, self.gathered_rows * self.wpr),
                ("layers", "L_layers"): (steps + self.decode_steps, (steps + self.decode_steps) * self.layers),
                # the prompt loop counts the trip that finds the prompt done; the token loop ends on its last id
                ("{kernel}", "L_prompt"): (1, steps + 1),
                ("{kernel}", "L_tokens"): (1, self.n_new)}


def sub_function(files: dict[str, str], top: str) -> dict[str, str]:
    """A kernel project's source and header as a sub-function of the generate kernel: no ``extern "C"``, no
    interface pragmas (they belong to the top function; its ports carry them), and every other function of the
    file ``static`` (two sub-functions may call kernels of one name: a quantiser in a layer and in the head)."""
    definition = re.compile(r"^(?!static |extern |typedef |using |namespace )[\w:<>, ]+ (\w+)\(.*\{$")
    lines = []
    for line in files[f"{top}.cpp"].splitlines():
        if line.lstrip().startswith("#pragma HLS interface"):
            continue
        m = definition.match(line)
        if m and m.group(1) != top:  # a callee kernel's function: this file's own, as the tasks are
            line = "static " + line
        lines.append(line)
    cpp = "\n".join(lines) + "\n"
    h = re.sub(rf'^extern "C" void {re.escape(top)}\(', f"void {top}(", files[f"{top}.h"], flags=re.M)
    return {f"{top}.cpp": cpp, f"{top}.h": h}


CSIM_FLAGS = ["-std=c++17", "-fwrapv", "-O1", "-pthread", "-Wall", "-Werror", "-Wno-unknown-pragmas",
              "-ffp-contract=off", "-Wno-unused-label", "-DSTREAMDSL_THREADED_DATAFLOW"]


def csim(folder, ids, n_new: int, account: bool = False, timeout: float = 3600.0):
    """C-simulate one launch of the generate kernel of the project in ``folder`` (its own ``generate/`` sources,
    compiled once into streamdsl's cache; bounded FIFOs, one thread a process) on its ``weights/`` files:
    the ids it generates for the prompt ``ids``.  With ``account``: (ids, {(function, loop): (entries, trips)}).
    Raises ``CSimError`` (g++ missing or failing, the launch failing) or ``DeadlockError``."""
    from streamdsl.backend import CSimError, csim_binary
    from streamdsl.progress import run as run_with_progress

    folder = Path(folder)
    src = folder / "generate"
    tops = sorted(src.glob("tb_*.cpp"))
    if len(tops) != 1:
        raise CSimError(f"'{src}' holds {len(tops)} testbenches, not one", hint="rebuild the project")
    files = {f.relative_to(src).as_posix(): f.read_bytes()
             for f in sorted(src.glob("*.cpp")) + sorted(src.glob("*.h")) + sorted(src.glob("include/**/*.h"))}
    binary = csim_binary(files, CSIM_FLAGS + (["-DSD_ACCOUNT"] if account else []), f"'{src}'", "generate",
                         local_includes=("include/csim", "include"), desc=f"g++ {tops[0].stem[3:]}")
    with tempfile.TemporaryDirectory(prefix="sd-generate-") as tmp:
        env = dict(os.environ, SD_ACCOUNT_FILE=os.path.join(tmp, "counts.txt")) if account else None
        r = run_with_progress([str(binary), str(folder / "weights"), str(int(n_new)), *(str(int(i)) for i in ids)],
                              desc=f"csim {tops[0].stem[3:]}", timeout=timeout, env=env)
        if r.returncode == 3 and "deadlock" in r.stderr:
            from streamdsl.dfg import DeadlockError

            raise DeadlockError(f"the C-simulation of '{src}' deadlocks: {r.stderr.strip()[:2000]}",
                                hint="this is a streamdsl bug; please report it with the folder")
        if r.returncode != 0:
            raise CSimError(f"the C-simulation of '{src}' failed (exit {r.returncode}): "
                            f"{(r.stderr or r.stdout).strip()[:2000]}")
        out = [int(x) for x in r.stdout.split()]
        if not account:
            return out
        counts = {}
        for line in Path(tmp, "counts.txt").read_text().splitlines():
            fn, label, entries, trips = line.split()
            counts[fn, label] = (int(entries), int(trips))
        return out, counts


def call_syncs(max_len: int, n_prompt: int, n_new: int) -> list[tuple[str, int]]:
    """The buffer syncs a generate call of ``templates/host.cpp.j2`` makes, in order, as (direction, bytes): the
    prompt ids to the card (whole words), the ``out`` buffer of -1s to the card, the generated ids back (whole
    words).  The weights and caches are written once, before any call; the end-to-end model prices these."""
    def words(n_ids: int) -> int:
        return WORD_BYTES * ids_words(n_ids)

    return [("to_device", words(n_prompt)), ("to_device", words(max_len)), ("from_device", words(n_new))]


def ids_words(n: int) -> int:
    return max(1, -(-n // IDS_PER_WORD))


def _lane_file(name: str, lane: int, lanes: int) -> str:
    return f"{name}.bin" if lanes == 1 else f"{name}.lane{lane}.bin"


def head_file(port: dict) -> str:
    """The weight file of a head port: ``head_<tensor>[.lane<j>].bin``."""
    return _lane_file(f"head_{port['tensor']}", port["lane"], port["lanes"])


def gen_args(model, variants, head: HeadKernel, prefill_len: int, thetas: list) -> list[GenArg]:
    """The generate kernel's arguments in order: every layer weight port (all layers' copies), the KV caches,
    the RoPE tables, the embedding tables, the head's weights, the activations, the regions' scratch buffers,
    ``tok``, ``prompt`` and ``out``; then the scalars ``n_prompt``, ``n_new`` and ``stop_at_eos``."""
    c = model.config
    L = c.layers
    v0 = variants[0]
    wpr = c.hidden // 16
    args: list[GenArg] = []

    def add(name, role, words, const=True, files=()):
        args.append(GenArg(len(args), name, role, words, const, tuple(files)))

    for p in v0.ports:
        if p.role == "weight":
            add(p.name, "weight", L * p.words, files=[BufferFile(_lane_file(f"layer{i}_{p.field}", p.lane, p.lanes),
                                                                 i * p.words, p.words) for i in range(L)])
    for p in v0.ports:
        if p.role == "kv_in":
            add(p.name, "kv", L * p.words, const=False)
    for j in range(len(thetas)):
        for part in ("cos", "sin"):
            words = model.max_len * c.head_dim // 16
            add(f"rope{j}_{part}", "rope", words, files=[BufferFile(f"rope{j}_{part}.bin", 0, words)])
    add("embed", "embed", c.vocab * wpr, files=[BufferFile("embed.bin", 0, c.vocab * wpr)])
    if c.family == "gpt2":
        add("pos_embed", "pos_embed", c.max_positions * wpr,
            files=[BufferFile("pos_embed.bin", 0, c.max_positions * wpr)])
    for p in head.ports:
        if p["kind"] == "in" and p["tensor"] != "h":
            add(f"head_{p['name']}", "head", p["words"], files=[BufferFile(head_file(p), 0, p["words"])])
    rows = max(1, prefill_len)
    add("act0", "act", rows * wpr, const=False)
    add("act1", "act", rows * wpr, const=False)
    for v in variants:
        for p in v.ports:
            if p.role == "scratch":
                add(f"{v.name}_{p.name}", "scratch", p.words, const=False)
    for p in head.ports:
        if p["kind"] == "scratch":
            add(f"head_{p['name']}", "scratch", p["words"], const=False)
    outs = [p for p in head.ports if p["kind"] == "out"]
    if len(outs) != 1 or outs[0]["words"] != 1:
        raise AssertionError(f"the head writes one word, the token id: {outs}")
    add("tok", "tok", 1, const=False)
    add("prompt", "prompt", ids_words(model.max_len))
    add("out", "out", ids_words(model.max_len), const=False)
    add("n_prompt", "scalar", 0)
    add("n_new", "scalar", 0)
    add("stop_at_eos", "scalar", 0)
    return args


def _layer_call(v, layers_words: dict[str, int]) -> list[str]:
    """The arguments of variant ``v``'s call inside ``layers()``: layer ``l``'s copies, the step's RoPE rows."""
    out = []
    for p in v.ports:
        if p.role in ("weight", "kv_in"):
            out.append(f"{p.name} + l * {p.words}")
        elif p.role == "kv_out":
            out.append(f"{p.alias} + l * {layers_words[p.alias]}")
        elif p.role == "input":
            out.append("x")
        elif p.role == "output":
            out.append("y")
        elif p.role == "rope":
            out.append(f"{p.name} + pos * HDW")
        elif p.role == "scratch":
            out.append(f"{v.name}_{p.name}")
        elif p.name == "pos":
            out.append("pos")
        elif p.name == "n_valid":
            out.append(f"pos + {v.t}")
        else:
            raise AssertionError(f"a layer argument of role {p.role}: {p.name}")
    return out


def _head_call(head: HeadKernel) -> list[str]:
    out = []
    for p in head.ports:
        if p["tensor"] == "h":
            out.append("last + (t - 1) * WPR")
        elif p["kind"] == "out":
            out.append("tok")
        else:
            out.append(f"head_{p['name']}")
    return out


def render(model, variants, head: HeadKernel, args: list[GenArg], prefill_len: int, thetas: list,
           layer_rope: list, version: str, env) -> dict[str, str]:
    """The files of ``generate/``: the top function, its header, the sub-functions' sources, the testbench."""
    c = model.config
    kernel = f"{c.family}_generate"
    kinds = model.kinds()
    kv_words = {p.name: p.words for p in variants[0].ports if p.role == "kv_in"}
    for v in variants:
        mine = {p.name: p.words for p in v.ports if p.role == "kv_in"}
        if mine != kv_words:
            raise AssertionError(f"every layer variant reads the caches alike: {v.name} {mine} vs {kv_words}")
    buffers = [a for a in args if not a.scalar]
    calls = [dict(kernel=v.kernel, phase=0 if v.phase == "decode" else 1, kind=kinds.index(v.kind),
                  args=_layer_call(v, kv_words)) for v in variants]
    ctx = dict(
        kernel=kernel, model=c.name or c.family, version=version, layers=c.layers, hidden=c.hidden,
        wpr=c.hidden // 16, hdw=max(1, c.head_dim // 16), head_dim=c.head_dim, max_len=model.max_len,
        prefill_len=max(1, prefill_len), layer_kind=[kinds.index(k) for k in model.layer_kinds], kinds=kinds,
        rope_tables=len(thetas), layer_rope=layer_rope, eos=list(c.eos_token_ids), gpt2=c.family == "gpt2",
        scale=_c_float(c.embed_scale) if c.embed_scale != 1.0 else None,
        buffers=buffers, args=args, calls=calls, head=dict(kernel=head.kernel, args=_head_call(head)),
        params=", ".join(a.cdecl for a in args),
        buffer_params=", ".join(a.cdecl for a in buffers if a.role not in ("embed", "pos_embed", "tok", "prompt", "out")
                                and not a.name.startswith("head_")),
        buffer_names=", ".join(a.name for a in buffers if a.role not in ("embed", "pos_embed", "tok", "prompt", "out")
                               and not a.name.startswith("head_")),
        out_words=ids_words(model.max_len), call=", ".join(f"{a.name}.data()" if not a.scalar else a.name
                                                           for a in args))
    protos = [f'#include "{v.kernel}.h"' for v in variants] + [f'#include "{head.kernel}.h"']
    header = "\n".join([f"// {kernel}.h: generated by streamdsl {version}. Do not edit.", "#pragma once",
                        "#include <cstdint>", "", *protos, "",
                        f'extern "C" void {kernel}({ctx["params"]});', ""])
    files = {f"{kernel}.h": header,
             f"{kernel}.cpp": env.get_template("generate.cpp.j2").render(**ctx),
             f"tb_{kernel}.cpp": env.get_template("tb_generate.cpp.j2").render(**ctx)}
    for v in variants:
        files.update(sub_function(v.project.files, v.kernel))
    files.update(sub_function(head.project.files, head.kernel))
    return files


def _c_float(x: float) -> str:
    import numpy as np

    r = repr(float(np.float32(x)))
    return (r if ("e" in r or "." in r) else r + ".0") + "f"


__all__ = ["BufferFile", "CSIM_FLAGS", "CallPlan", "GenArg", "GenerateKernel", "HeadKernel", "IDS_PER_WORD",
           "WORD_BYTES", "call_syncs", "csim", "hbm_group", "ids_words", "sub_function"]
