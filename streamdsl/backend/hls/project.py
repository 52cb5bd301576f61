"""Write a Vitis HLS project for a (scheduled) kernel and C-simulate it with g++."""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..._version import __version__
from ...boards import board as get_board
from ...errors import StreamDSLError
from ...ir.nodes import Kernel, Return, written_params
from ...numeric import convert
from ...progress import run as run_with_progress
from ...types import FixedType, FloatType, IntType, TensorType
from ..folder import OutputFolder, plain_parts
from ..text import comment, md_code
from .emit import KernelNames, ctype, dims, function, kernel_names, signature
from .gxx import CSimError, compiled
from .names import Scope

INCLUDE = Path(__file__).resolve().parent.parent / "include"  # streamdsl_rt.h: synthesis and C-simulation
CSIM_INCLUDE = INCLUDE / "csim"  # the C-simulation ap_int.h, ap_fixed.h, hls_stream.h, hls_math.h (C++17, threads)
SYNTH_INCLUDE = INCLUDE / "synth"  # the vendor's API declared in C++14: a -D__SYNTHESIS__ syntax check, nothing else


class HLSProjectError(StreamDSLError):
    kind = "HLS project error"


_env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), undefined=StrictUndefined,
                   keep_trailing_newline=True, trim_blocks=False, lstrip_blocks=False)


def _transport(t) -> str:
    if isinstance(t, FloatType):
        return "float" if t.name == "f32" else "double"
    if isinstance(t, FixedType):
        return "double"
    return "uint64_t" if (not t.signed and t.bits == 64) else "int64_t"


def _to_transport(t, x: str) -> str:
    if isinstance(t, FixedType):
        return f"{x}.to_double()"
    if isinstance(t, IntType) and t.bits not in (1, 8, 16, 32, 64):
        return f"{x}.{'to_int64' if t.signed else 'to_uint64'}()"
    return f"({_transport(t)}){x}" if isinstance(t, IntType) else x


def _np_transport(t) -> np.dtype:
    return np.dtype({"float": np.float32, "double": np.float64, "int64_t": np.int64, "uint64_t": np.uint64}[_transport(t)])


def _kernels_in_order(k: Kernel) -> list[Kernel]:
    seen: dict[str, Kernel] = {}

    def visit(x: Kernel):
        for c in x.callees:
            visit(c)
        if x.name not in seen:
            seen[x.name] = x

    visit(k)
    return list(seen.values())


def interface_pragmas(k: Kernel, names: KernelNames) -> list[str]:
    """The top function's port pragmas: m_axi masters with an s_axilite control (the default), or, under the
    ``interface`` primitive's ``ap_memory``, RAM ports with wire scalars and an ap_ctrl_hs handshake."""
    lines, bundle = [], 0
    ports = [(names.scope[p.name], p.type, True) for p in k.params] + [(r, t, False) for r, t in
                                                                      zip(names.results, k.results)]
    if k.attrs.get("interface") == "ap_memory":
        for name, t, is_in in ports:
            mode = "ap_memory" if isinstance(t, TensorType) else "ap_none" if is_in else "ap_vld"
            extra = " storage_type=ram_2p" if isinstance(t, TensorType) else ""
            lines.append(f"#pragma HLS interface mode={mode} port={name}{extra}")
        lines.append("#pragma HLS interface mode=ap_ctrl_hs port=return")
        return lines
    for name, t, _ in ports:
        if isinstance(t, TensorType):
            lines.append(f"#pragma HLS interface mode=m_axi port={name} offset=slave bundle=gmem{bundle} depth={t.size}")
            lines.append(f"#pragma HLS interface mode=s_axilite port={name}")
            bundle += 1
        else:
            lines.append(f"#pragma HLS interface mode=s_axilite port={name}")
    lines.append("#pragma HLS interface mode=s_axilite port=return")
    return lines


@dataclass
class HLSProject:
    """A generated project: ``files`` maps names to contents; ``csim`` runs it with g++."""

    kernel: Kernel
    files: dict[str, str]
    output: Path | None
    board: str
    part: str
    clock_mhz: float
    _binary: Path | None = field(default=None, repr=False)
    labels: dict = field(default_factory=dict, repr=False)  # IR loop id -> its label in the top function

    def lint(self) -> None:
        """Check the synthesis path of the project's files against the synthesizability rules
        (:mod:`streamdsl.backend.hls.lint`); raises a located ``CodeLintError`` naming the rule."""
        from .lint import lint_project

        lint_project(self)

    @property
    def top(self) -> str:
        """The top function's C++ name, which also names the files (``new_.cpp`` for a kernel ``new``)."""
        return next(n[3:-4] for n in self.files if n.startswith("tb_") and n.endswith(".cpp"))

    @property
    def source(self) -> str:
        return self.files[f"{self.top}.cpp"]

    def __repr__(self) -> str:
        where = f" in {self.output}" if self.output else ""
        return f"<HLSProject {self.kernel.name} for {self.board} ({self.part}){where}: {', '.join(self.files)}>"

    def report(self):
        """Model estimate of cycles and resources (see :mod:`streamdsl.cost.model`)."""
        from ...cost.model import estimate

        return estimate(self.kernel, self.board, self.clock_mhz, top=True)

    def write(self, output, overwrite: bool = False) -> Path:
        """Write the project's files to folder ``output`` (a path or an OutputFolder; see :func:`write`) and
        remember it as the output."""
        write(self.files, output, overwrite=overwrite)
        self.output = output.path if isinstance(output, OutputFolder) else Path(output)
        return self.output

    def csim(self, *arrays):
        """Compile (cached by content hash) and run the testbench; returns NumPy results."""
        return self._run(arrays, account=False)[0]

    def accounting(self, *arrays):
        """Run the C-simulation on ``arrays`` with every labelled loop counting its trips, and price the counts
        with the cost model's rules beside the model's own cycles (:mod:`streamdsl.backend.hls.accounting`)."""
        from .accounting import account_kernel

        _, counts = self._run(arrays, account=True)
        return account_kernel(self, counts)

    def _run(self, arrays, account: bool):
        from ..sim import _check_arg, _write_back  # the same input checks and in/out writes as the simulator

        k = self.kernel
        if len(arrays) != len(k.params):
            raise CSimError(f"'{k.name}' takes {len(k.params)} argument(s), got {len(arrays)}")
        binary = self._build(account)
        counts = None
        with tempfile.TemporaryDirectory(prefix="sd-csim-") as tmp:
            for n, (p, a) in enumerate(zip(k.params, arrays)):
                v = _check_arg(k, p, a, None)
                np.ascontiguousarray(np.asarray(v).astype(_np_transport(p.type.dtype if isinstance(p.type, TensorType) else p.type))).tofile(
                    os.path.join(tmp, f"in_{n}.bin"))
            _execute(binary, tmp, k.name, account, timeout=600)
            outs = []
            placed = self._placed()
            for n, t in enumerate(k.results):
                dt = t.dtype if isinstance(t, TensorType) else t
                raw = np.fromfile(os.path.join(tmp, f"out_{n}.bin"), dtype=_np_transport(dt))
                val = convert(raw, dt)
                if n in placed:
                    val = self._window(n, placed[n], val.reshape(placed[n].full_shape(t.shape)), t, arrays)
                outs.append(val.reshape(t.shape) if isinstance(t, TensorType) else val[0])
            for n, (p, a) in enumerate(zip(k.params, arrays)):  # in/out parameters: into the caller's arrays
                if p.name in written_params(k):
                    raw = np.fromfile(os.path.join(tmp, f"inout_{n}.bin"), dtype=_np_transport(p.type.dtype))
                    _write_back(a, convert(raw, p.type.dtype).reshape(p.type.shape), p, k, None)
            if account:
                counts = Path(tmp, "counts.txt").read_text() if Path(tmp, "counts.txt").exists() else ""
        return (outs[0] if len(outs) == 1 else (tuple(outs) if outs else None)), counts

    def _placed(self) -> dict:
        """Result index -> placement in a larger array (``g.store_at``); a kernel's project has none."""
        return {}

    def _window(self, n: int, place, full: np.ndarray, t: TensorType, arrays) -> np.ndarray:
        """The rows a placed result wrote, from the whole array the testbench gave it (zeros before the call);
        a write outside them is an error."""
        k = self.kernel
        rows = t.shape[place.axis]
        at = place.start(np.asarray(arrays[[p.name for p in k.params].index(place.offset)]), rows)
        inside = [slice(None)] * full.ndim
        inside[place.axis] = slice(at, at + rows)
        rest = full.copy()
        rest[tuple(inside)] = 0
        if np.any(rest != 0):
            raise CSimError(f"the C-simulation of '{k.name}' wrote result {n} outside rows {at}..{at + rows - 1} "
                            f"of axis {place.axis} ({place})", hint="this is a streamdsl bug; please report it")
        return full[tuple(inside)]

    def _build(self, account: bool = False) -> Path:
        if not account and self._binary is not None and self._binary.exists():
            return self._binary
        odd = [n for n in self.files if (parts := plain_parts(n)) is None or len(parts) != 1]
        if odd:  # g++ compiles the files in a temporary folder: a name may not lead out of it
            raise CSimError(f"the project's file names must be plain file names, got {', '.join(map(repr, odd[:3]))}",
                            hint="C-simulate the project streamdsl wrote, with its own file names")
        incs = []
        vitis = shutil.which("vitis_hls")
        if vitis:  # a real Vitis: its headers come first
            incs.append(Path(vitis).resolve().parent.parent / "include")
        incs += [CSIM_INCLUDE, INCLUDE]
        flags = ["-std=c++17", "-fwrapv", "-O2", "-pthread", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-ffp-contract=off",
                 "-Wno-unused-label"]  # g++ does not know HLS pragmas; Vitis does
        if account:  # every labelled loop counts its entries and trips (streamdsl_rt.h)
            flags.append("-DSD_ACCOUNT")
        binary = compiled(self.files, flags, f"the generated project for '{self.kernel.name}'", "csim",
                          includes=tuple(incs), desc=f"g++ {self.kernel.name}")
        if not account:
            self._binary = binary
        return binary


@dataclass
class DataflowProject(HLSProject):
    """The project of a dataflow schedule: its top function runs the regions; ``report`` is the graph's."""

    schedule: object = field(default=None, repr=False)
    ports: list = field(default_factory=list, repr=False)  # the top function's array ports (dataflow.port_table)
    placed: dict | None = field(default=None, repr=False)  # result index -> Placement, without the schedule
    timing: object = field(default=None, repr=False)  # the timing model the project was built from
    emitted: dict = field(default_factory=dict, repr=False)  # the tasks' functions, process IRs and loop labels

    def __repr__(self) -> str:
        return "<Dataflow" + super().__repr__()[1:]

    @property
    def scalars(self) -> list[tuple[str, str, str]]:
        """The top function's scalar arguments, after its ports: (parameter, C++ name, C type) each."""
        return self.emitted.get("scalars", [])

    def csim(self, *arrays):
        """Compile (cached by content hash) and run the testbench on ``arrays`` (the design's arguments): each
        array is packed into its ports' words as a host would (:mod:`streamdsl.dfg.packing`), the results
        unpacked from theirs; a result placed in a larger array (``g.store_at``) is its rows of it, and a write
        outside those rows is an error.  Returns NumPy results."""
        return self._run(arrays, account=False)[0]

    def _run(self, arrays, account: bool):
        from ...dfg.packing import pack, unpack
        from ..sim import _check_arg  # the same input checks as the simulator

        k = self.kernel
        if len(arrays) != len(k.params):
            raise CSimError(f"'{k.name}' takes {len(k.params)} argument(s), got {len(arrays)}")
        binary = self._build(account)
        values = {p.name: _check_arg(k, p, a, None) for p, a in zip(k.params, arrays)}
        place = self._placed()
        ret_names = [v.name for v in next(s for s in reversed(k.body) if isinstance(s, Return)).values]
        counts = None
        with tempfile.TemporaryDirectory(prefix="sd-csim-") as tmp:
            for n, p in enumerate(self.ports):
                if p["alias"]:
                    continue
                if p["kind"] == "in":
                    bufs = pack(np.asarray(values[p["tensor"]]), p["packing"], p["lanes"])
                    data = bufs[p["lane"]]
                else:
                    data = bytes(64 * max(1, p["words"]))
                Path(tmp, f"port_{n}.bin").write_bytes(data.ljust(64 * max(1, p["words"]), b"\0"))
            for n, q in enumerate(k.params):
                if not isinstance(q.type, TensorType):
                    np.asarray(values[q.name]).astype(_np_transport(q.type)).reshape(1).tofile(os.path.join(tmp, f"in_{n}.bin"))
            _execute(binary, tmp, k.name, account, timeout=1800)
            files = {p["name"]: Path(tmp, f"port_{n}.bin") for n, p in enumerate(self.ports)}
            outs = []
            for r, (name, t) in enumerate(zip(ret_names, k.results)):
                mine = [p for p in self.ports if p["tensor"] == name and p["kind"] == "out"]
                if not mine:  # a parameter returned unchanged
                    outs.append(np.asarray(values[name]))
                    continue
                bufs = [files[p["alias"] or p["name"]].read_bytes()[:64 * p["words"]] for p in mine]
                full = unpack(bufs, mine[0]["packing"])
                if r in place:
                    into = getattr(place[r], "into", None)
                    before = np.asarray(values[into]) if into else np.zeros_like(full)
                    full = self._rows(r, place[r], full, before, t, arrays)
                outs.append(convert(full, t.dtype).reshape(t.shape))
            if account:
                counts = Path(tmp, "counts.txt").read_text() if Path(tmp, "counts.txt").exists() else ""
        result = outs[0] if len(outs) == 1 else (tuple(outs) if outs else None)
        return result, counts

    def accounting(self, *arrays):
        """Run the C-simulation on ``arrays`` with every labelled loop counting its trips, and price the counts
        with the cost model's rules beside the model's own cycles, per process and for the design
        (:mod:`streamdsl.backend.hls.accounting`).  Returns an :class:`~.accounting.Accounting`."""
        from .accounting import account_dataflow

        _, counts = self._run(arrays, account=True)
        return account_dataflow(self, counts)

    def _rows(self, n: int, place, full: np.ndarray, before: np.ndarray, t: TensorType, arrays) -> np.ndarray:
        """The rows a placed result wrote; the rest of the array must be as it was (``before``)."""
        k = self.kernel
        rows = t.shape[place.axis]
        at = place.start(np.asarray(arrays[[p.name for p in k.params].index(place.offset)]), rows)
        inside = [slice(None)] * full.ndim
        inside[place.axis] = slice(at, at + rows)
        a, b = full.copy(), np.asarray(before, dtype=full.dtype).copy()
        a[tuple(inside)] = 0
        b[tuple(inside)] = 0
        if not np.array_equal(a, b):
            raise CSimError(f"the C-simulation of '{k.name}' wrote result {n} outside rows {at}..{at + rows - 1} "
                            f"of axis {place.axis} ({place})", hint="this is a streamdsl bug; please report it")
        return full[tuple(inside)]

    def _placed(self) -> dict:
        from .dataflow import placed_results

        if self.placed is not None:
            return self.placed
        return placed_results(self.schedule) if self.schedule is not None else {}

    def records(self) -> dict:
        """The ports and placements as JSON-able records (a folder's ``streamdsl.json``): what ``csim`` of the
        folder needs besides its files (:meth:`from_records`)."""
        ports = [{**{k: v for k, v in p.items() if k != "packing"}, "layout": str(p["packing"].layout),
                  "shape": [int(x) for x in p["packing"].tensor_type.shape]} for p in self.ports]
        placed = {str(n): dict(axis=q.axis, extent=q.extent, offset=q.offset, into=q.into)
                  for n, q in self._placed().items()}
        return dict(ports=ports, placed=placed)

    @classmethod
    def from_records(cls, kernel, files, output, board, part, clock_mhz, records: dict) -> "DataflowProject":
        """The project of a folder from its files and :meth:`records`."""
        from ...dfg.dfschedule import Placement
        from ...dfg.itensor import ITensor
        from ...dfg.packing import Packing

        ports = []
        for r in records["ports"]:
            it = ITensor.parse(r["layout"])
            ports.append({**{k: v for k, v in r.items() if k not in ("layout", "shape")},
                          "packing": Packing(TensorType(it.dtype, tuple(r["shape"])), it)})
        placed = {int(n): Placement(q["axis"], q["extent"], q["offset"], q["into"]) for n, q in records["placed"].items()}
        return cls(kernel, files, output, board, part, clock_mhz, ports=ports, placed=placed)

    def report(self) -> str:
        g = self.schedule
        onchip = g.onchip_bytes()
        lines = [str(g.simulate()), "on-chip bytes per region: " + ", ".join(f"{r}: {b}" for r, b in sorted(onchip.items()))]
        return "\n".join(lines)


def _execute(binary: Path, tmp: str, name: str, account: bool, timeout: float) -> None:
    """Run a built testbench on the files in ``tmp`` (``account``: its loop counts into ``tmp/counts.txt``); a
    deadlock is a ``DeadlockError``, any other failure a ``CSimError``."""
    env = dict(os.environ)
    if account:
        env["SD_ACCOUNT_FILE"] = os.path.join(tmp, "counts.txt")
    run = run_with_progress([str(binary), tmp], desc=f"csim {name}", timeout=timeout, env=env)
    if run.returncode == 3 and "deadlock" in run.stderr:
        from ...dfg.tokensim import DeadlockError

        raise DeadlockError(f"the C-simulation of '{name}' deadlocks: "
                            f"{run.stderr.strip().removeprefix('streamdsl csim: deadlock: ')[:2000]}",
                            hint="deepen the FIFOs 'blocked on write (full)', or let g.size_fifos() size them")
    if run.returncode != 0:
        raise CSimError(f"the C-simulation of '{name}' failed (exit {run.returncode}): "
                        f"{(run.stderr or run.stdout).strip()[:2000]}")


def emitted(prj: HLSProject) -> HLSProject:
    """A project the backend has just generated; with ``STREAMDSL_LINT`` set (the test suite sets it) it is
    linted first (:func:`.lint.lint_on_create`)."""
    spec = os.environ.get("STREAMDSL_LINT")
    if spec:
        from .lint import lint_on_create

        lint_on_create(prj, spec)
    return prj


def file_scope(kernels: list[Kernel]) -> Scope:
    """The scope of a project's functions, the user's kernels named first (the top one before its callees)."""
    file = Scope()
    for x in kernels:
        file.user(x.name)
    return file


def generate(k: Kernel, board: str = "u55c", source: str = "?", labels: dict | None = None) -> dict[str, str]:
    """The project's files as text (deterministic: identical input, identical bytes); ``labels`` (given)
    receives the top function's loop labels by IR loop id (what the accounting reads counts under)."""
    kernels = _kernels_in_order(k)
    file = file_scope(kernels[::-1])
    names = [kernel_names(x, file, top=x is k) for x in kernels]
    functions = [function(x, n, top=x is k, interface=interface_pragmas(x, n) if x is k else None,
                          labels=labels if x is k else None)
                 for x, n in zip(kernels, names)]
    prototypes = [signature(x, n) for x, n in zip(kernels, names)]
    return project_files(k, functions, prototypes, board, source, file, names[-1].fn)


def project_files(k: Kernel, functions: list[str], prototypes: list[str], board: str, source: str, file: Scope,
                  top: str, scratch: list[tuple[str, TensorType]] = (), includes: tuple[str, ...] = (),
                  placed: dict | None = None) -> dict[str, str]:
    """The files of a project whose top function has ``k``'s params and results (plus ``scratch``
    DRAM buffers the testbench allocates), defined by ``functions``; ``file`` is the scope of their names and
    ``top`` the top function's name.  ``placed`` (result index -> placement, ``g.store_at``): the testbench gives
    those results their whole arrays."""
    b = get_board(board)
    part, clock = b.part, b.clock_mhz
    name = top
    common = dict(name=name, version=__version__, source=comment(source), source_md=md_code(source))
    tb = Scope(file)  # main()'s locals: the arrays take the kernel's names, the testbench's own come after
    args, results = [], []
    written = written_params(k)
    for n, p in enumerate(k.params):
        t = p.type
        dt = t.dtype if isinstance(t, TensorType) else t
        args.append(dict(name=tb[p.name], tensor=isinstance(t, TensorType), ctype=ctype(dt), transport=_transport(dt),
                         dims=dims(t) if isinstance(t, TensorType) else "", file=f"in_{n}.bin",
                         size=t.size if isinstance(t, TensorType) else 1,
                         zero="".join("[0]" for _ in getattr(t, "shape", ())),
                         written=p.name in written, out_file=f"inout_{n}.bin", dt=dt))
    results_shape = []
    for n, t in enumerate(k.results):
        shape = t.shape if isinstance(t, TensorType) else (1,)
        if placed and n in placed:  # the whole array the result is placed in; csim reads its rows back
            shape = placed[n].full_shape(shape)
        results_shape.append(shape)
    result_names = [tb.fresh(f"result{n}") for n in range(len(k.results))]
    bufs = [dict(name=tb.fresh(b), ctype=ctype(t.dtype), dims=dims(t)) for b, t in scratch]
    v = {w: tb.fresh(w) for w in ("argc", "argv", "dir", "raw", "flat", "n")}
    v.update({w: file.fresh(w) for w in ("read_file", "write_file")})
    for a in args:  # an in/out parameter's values are written back like a result's
        a["to_transport"] = _to_transport(a.pop("dt"), f"{v['flat']}[{v['n']}]")
    for n, (t, shape) in enumerate(zip(k.results, results_shape)):
        dt = t.dtype if isinstance(t, TensorType) else t
        results.append(dict(name=result_names[n], ctype=ctype(dt), transport=_transport(dt),
                            dims="".join(f"[{d}]" for d in shape), size=int(np.prod(shape)), file=f"out_{n}.bin",
                            zero="[0]" * len(shape), to_transport=_to_transport(dt, f"{v['flat']}[{v['n']}]")))
    call_args = ", ".join([a["name"] for a in args] + [
        r["name"] if isinstance(t, TensorType) else f"{r['name']}[0]" for r, t in zip(results, k.results)]
        + [b["name"] for b in bufs])
    files = {
        f"{name}.h": _env.get_template("kernel.h.j2").render(prototypes=prototypes, includes=includes, **common),
        f"{name}.cpp": _env.get_template("kernel.cpp.j2").render(functions=functions, **common),
        f"tb_{name}.cpp": _env.get_template("tb.cpp.j2").render(args=args, results=results, call_args=call_args,
                                                                 scratch=bufs, v=v, **common),
        "run_hls.tcl": _env.get_template("run_hls.tcl.j2").render(part=part, clock_ns=f"{1000.0 / clock:g}", **common),
        "README.md": _env.get_template("README.md.j2").render(board=b.name, part=part, clock_mhz=f"{clock:g}", **common),
    }
    return files


def dataflow_files(ir: Kernel, functions: list[str], prototypes: list[str], board, source: str, file: Scope, top: str,
                   ports: list[dict], scalar_names: dict[str, str], blocks: bool = False) -> dict[str, str]:
    """The files of a dataflow design's project: its top function takes the array ``ports`` (words, see
    :func:`streamdsl.backend.hls.dataflow.port_table`) then the scalar parameters (their C++ names in
    ``scalar_names``); the testbench reads every port's words from a file (:mod:`streamdsl.dfg.packing`).
    ``blocks``: the design has streams of blocks (a layout converter's ping-pong buffer), so its header includes
    ``hls_streamofblocks.h``."""
    b = get_board(board)
    part, clock = b.part, b.clock_mhz
    common = dict(name=top, version=__version__, source=comment(source), source_md=md_code(source))
    includes = ("hls_stream.h", "hls_streamofblocks.h") if blocks else ("hls_stream.h",)
    tb = Scope(file)
    v = {w: tb.fresh(w) for w in ("argc", "argv", "dir")}
    v.update({w: file.fresh(w) for w in ("read_words", "write_words", "read_scalar")})
    rows = []
    var_of: dict[str, str] = {}
    for n, p in enumerate(ports):
        alias = p.get("alias")
        var = var_of[alias] if alias else tb.fresh(p["name"])
        var_of[p["name"]] = var
        written = p["kind"] != "in" or any(q.get("alias") == p["name"] for q in ports)  # a store writes it in place
        rows.append(dict(n=n, var=var, words=max(1, p["words"]), kind=p["kind"], alias=alias, written=written))
    scalars = []
    for n, q in enumerate(ir.params):
        if not isinstance(q.type, TensorType):
            scalars.append(dict(n=n, var=tb.fresh(scalar_names[q.name]), ctype=ctype(q.type), transport=_transport(q.type)))
    call_args = ", ".join([r["var"] for r in rows] + [a["var"] for a in scalars])
    return {
        f"{top}.h": _env.get_template("kernel.h.j2").render(prototypes=prototypes, includes=includes, **common),
        f"{top}.cpp": _env.get_template("kernel.cpp.j2").render(functions=functions, **common),
        f"tb_{top}.cpp": _env.get_template("tb_dataflow.cpp.j2").render(ports=rows, scalars=scalars,
                                                                          call_args=call_args, v=v, **common),
        "run_hls.tcl": _env.get_template("run_hls.tcl.j2").render(part=part, clock_ns=f"{1000.0 / clock:g}", **common),
        "README.md": _env.get_template("README.md.j2").render(board=b.name, part=part, clock_mhz=f"{clock:g}", **common),
    }


def write(files: dict[str, str], output, overwrite: bool = False) -> None:
    """Write ``files``, the bundled headers and an empty ``data/`` into ``output`` (a path or an
    :class:`~streamdsl.backend.folder.OutputFolder`), touching nothing streamdsl did not write there.  The headers:
    ``include/streamdsl_rt.h`` (on the synthesis include path) and ``include/csim/`` (C-simulation only)."""
    folder = output if isinstance(output, OutputFolder) else OutputFolder(output, overwrite)
    headers = {f"include/{h.relative_to(INCLUDE).as_posix()}": h.read_bytes()
               for h in sorted(INCLUDE.glob("*.h")) + sorted(CSIM_INCLUDE.glob("*.h"))}
    folder.write({**files, **headers}, dirs=("data",))
