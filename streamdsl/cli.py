"""The ``streamdsl`` command: simulate, build, C-simulate, model and generate from the shell.

    streamdsl sim FILE.py:KERNEL --inputs a.npy b.npy -o out.npy
    streamdsl build FILE.py:NAME --target hls --board u55c -o DIR [--inputs a.npy ...] [--force]
    streamdsl csim DIR
    streamdsl report DIR|FILE.py:NAME [--board u55c] [-o OUT_DIR]
    streamdsl explore FILE.py:DATAFLOW --board u55c
    streamdsl llm build llama --config tiny --quant w8a8 -o DIR
    streamdsl llm generate smollm2 "The capital of France is" --max-new-tokens 4

``NAME`` is a kernel, a dataflow function, or a schedule of either defined at
the top level of ``FILE.py``; a bare dataflow is built as one on-chip region
with its FIFOs sized.  Exit codes: 0 success, 1 a user error (printed as the
located streamdsl error, no traceback), 2 bad usage (argparse).  ``-q`` /
``--quiet``, before or after the subcommand, turns progress bars off (see
:mod:`streamdsl.progress`).

What ``build`` leaves for ``csim`` and ``report`` (besides the HLS project)::

    DIR/streamdsl.json    the design: FILE.py, NAME, kind, board, the project's files,
                          the testbench inputs and result types
    DIR/design.ir         the top function's IR (a dataflow: its kernel calls and callees)
    DIR/data/<param>.npy  the testbench inputs (``--inputs``, else seeded random data)

``csim DIR`` compiles DIR's own C++ with g++ and runs it on those inputs, and
compares the results with the reference simulator running ``design.ir``: the
folder is all it needs.  ``llm build`` records its model (family, config,
quantisation, sizes) in ``DIR/streamdsl.json``; ``csim`` rebuilds the model
from it, loads the folder's weight files and C-simulates every layer kernel
folder on one layer's weights.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import runpy
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import Loc, StreamDSLError

FORMAT = "streamdsl-project/1"
PROJECT = "streamdsl.json"
IR_FILE = "design.ir"
OWNED = ".streamdsl-manifest"  # the files streamdsl wrote into a folder (backend/hls/project.py keeps it)
FULL_MODELS = {"gpt2": "gpt2-medium", "llama": "llama-3.2-1b", "qwen2": "qwen2.5-0.5b", "gemma3": "gemma-3-1b"}


class CLIError(StreamDSLError):
    kind = "error"


class SourceError(CLIError):
    """The user's Python file does not compile."""

    kind = "syntax error"


class MismatchError(CLIError):
    kind = "C-simulation mismatch"


# ------------------------------------------------------------------------------ FILE.py:NAME
def _split(target: str) -> tuple[Path, str]:
    file, sep, name = target.rpartition(":")
    if not sep or not file or not name:
        raise CLIError(f"expected FILE.py:NAME, got {target!r}", hint="e.g. examples/gemm.py:gemm")
    path = Path(file)
    if not path.is_file():
        raise CLIError(f"no such file: {file}", hint="give the path of a Python file that defines the kernel")
    return path, name


def _definitions(path: Path) -> dict[str, Loc]:
    """Where FILE.py binds each top-level name (def, class, assignment)."""
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (SyntaxError, ValueError, OSError):
        return {}
    out: dict[str, Loc] = {}
    for node in tree.body:
        targets = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            col = node.col_offset + len("async def " if isinstance(node, ast.AsyncFunctionDef) else
                                        "class " if isinstance(node, ast.ClassDef) else "def ")
            out.setdefault(node.name, Loc(str(path), node.lineno, col, col + len(node.name)))  # the name after def
            continue
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    out.setdefault(n.id, Loc(str(path), n.lineno, n.col_offset, n.end_col_offset))
    return out


def _run_file(path: Path) -> dict:
    """Run FILE.py as a module (its ``if __name__ == "__main__"`` block does not run)."""
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # as ``python FILE.py`` would: its neighbours import
    try:
        return runpy.run_path(str(path), run_name="__streamdsl_cli__")
    except StreamDSLError:
        raise
    except SyntaxError as err:
        line = err.lineno or 1
        col = max(0, (err.offset or 1) - 1)
        end = (err.end_offset - 1) if err.end_offset and err.end_lineno in (None, line) and err.end_offset > err.offset else None
        raise SourceError(f"{err.msg}", Loc(err.filename or str(path), line, col, end),
                          hint=f"{path} is not valid Python") from None
    except SystemExit as err:
        raise CLIError(f"{path} called sys.exit({err.code!r}) while loading", _user_frame(err, path),
                       hint="move the script part under `if __name__ == \"__main__\":`") from None
    except Exception as err:  # the user's module failed: show where, in their file
        raise CLIError(f"{path} failed to run: {type(err).__name__}: {err}", _user_frame(err, path),
                       hint=f"run `python {path}` to see the whole traceback") from None
    finally:
        if folder in sys.path:
            sys.path.remove(folder)


def _user_frame(err: BaseException, path: Path) -> Loc | None:
    mine = str(path.resolve())
    frames = [f for f in traceback.extract_tb(err.__traceback__) if os.path.abspath(f.filename) == mine]
    if not frames:
        return None
    f = frames[-1]
    col = getattr(f, "colno", None)
    end = getattr(f, "end_colno", None) if getattr(f, "end_lineno", None) == f.lineno else None
    return Loc(f.filename, f.lineno, col or 0, end)


def _kind(obj) -> str | None:
    from .api import KernelFunction
    from .dfg.dfschedule import DataflowSchedule
    from .dfg.graph import DataflowFunction
    from .sched.schedule import Schedule

    for cls, kind in ((KernelFunction, "kernel"), (DataflowFunction, "dataflow"), (Schedule, "schedule"),
                      (DataflowSchedule, "dataflow schedule")):
        if isinstance(obj, cls):
            return kind
    return None


def _load(target: str):
    """``FILE.py:NAME`` -> (the object NAME defined in FILE.py, where it is defined)."""
    path, name = _split(target)
    scope = _run_file(path)
    defs = _definitions(path)
    if name not in scope:
        names = sorted(k for k, v in scope.items() if not k.startswith("__") and _kind(v))
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"it defines: {', '.join(names) or 'no kernels or dataflows'}"
        if close:
            hint = f"did you mean {close[0]!r}? " + hint
        raise CLIError(f"{path} defines no {name!r}", defs.get(close[0]) if close else None, hint=hint)
    obj = scope[name]
    if not _kind(obj):
        raise CLIError(f"{name!r} in {path} is of type {type(obj).__name__}, not a kernel, dataflow or schedule",
                       defs.get(name), hint="decorate it with @sd.kernel or @sd.dataflow, or name a sd.schedule(...)")
    return obj, defs.get(name)


@dataclass
class Design:
    """What ``FILE.py:NAME`` names, and what the command line builds from it."""

    target: str
    obj: object
    kind: str  # kernel | dataflow
    loc: Loc | None

    @property
    def ir(self):
        """The top function: the (scheduled) kernel, or the dataflow function's calls."""
        return self.obj.graph.ir if _kind(self.obj) == "dataflow schedule" else self.obj.ir

    def schedule(self):
        """What ``build`` builds: the user's schedule, or a plain one (a bare dataflow: one region, FIFOs sized)."""
        from .api import schedule

        k = _kind(self.obj)
        if "schedule" in k:
            return self.obj
        s = schedule(self.obj)
        if k == "dataflow":
            s.fuse(*s.tasks())
            s.size_fifos()
        return s


def _design(target: str) -> Design:
    obj, loc = _load(target)
    kind = "kernel" if _kind(obj) in ("kernel", "schedule") else "dataflow"
    return Design(target, obj, kind, loc)


# ------------------------------------------------------------------------------------ inputs
def _read_value(text: str):
    if text.endswith(".npy"):
        if not Path(text).is_file():
            raise CLIError(f"no such input file: {text}", hint="inputs are .npy files or numbers")
        try:
            return np.load(text, allow_pickle=False)
        except (ValueError, OSError, EOFError) as err:
            raise CLIError(f"cannot read {text} as a NumPy array: {err}", hint="write it with np.save") from None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise CLIError(f"input {text!r} is neither a .npy file nor a number", hint="e.g. --inputs a.npy 0.5") from None


def _signature(k) -> str:
    return f"{k.name}({', '.join(f'{p.name}: {p.type}' for p in k.params)})"


def read_inputs(texts: list[str], k, loc: Loc | None) -> list:
    """``--inputs`` checked against ``k``'s parameters; an error points at the parameter's declaration."""
    from .numeric import accepts
    from .types import IntType, TensorType

    if len(texts) != len(k.params):
        raise CLIError(f"'{k.name}' takes {len(k.params)} argument(s), got {len(texts)} input(s)", k.loc or loc,
                       hint=f"pass --inputs for {_signature(k)}")
    out = []
    for text, p in zip(texts, k.params):
        v, t, where = _read_value(text), p.type, p.loc or k.loc or loc
        if isinstance(t, TensorType):
            if not isinstance(v, np.ndarray) or v.ndim == 0:
                raise CLIError(f"input {text}: argument '{p.name}' of '{k.name}' is a tensor {t}, got a number", where,
                               hint=f"save an array of shape {t.shape} with np.save")
            if v.shape != t.shape:
                raise CLIError(f"input {text} has shape {v.shape}, but '{k.name}' declares {p.name}: {t}", where,
                               hint=f"save an array of shape {t.shape}")
            if not accepts(v, t.dtype):
                raise CLIError(f"input {text} has dtype {v.dtype}, but '{k.name}' declares {p.name}: {t}", where,
                               hint=f"save it as x.astype(np.{t.dtype.np})")
        else:
            if isinstance(v, np.ndarray):
                if v.ndim != 0:
                    raise CLIError(f"input {text} has shape {v.shape}, but '{k.name}' declares the scalar {p.name}: {t}",
                                   where, hint="pass a number, or a 0-d array")
                v = v[()]
            if isinstance(t, IntType) and not isinstance(v, (int, np.integer, np.bool_)):
                raise CLIError(f"input {text}: argument '{p.name}' of '{k.name}' is {t}, got {v!r}", where,
                               hint="pass an integer")
        out.append(v)
    return out


def random_inputs(k, seed: int = 0) -> list:
    """Seeded test data for ``k``: normal floats, small integers (scalars 1..8, so loop bounds stay sane)."""
    from .types import FloatType, IntType, TensorType

    rng = np.random.default_rng(seed)
    out = []
    for p in k.params:
        t = p.type
        dt = t.dtype if isinstance(t, TensorType) else t
        shape = t.shape if isinstance(t, TensorType) else ()
        if isinstance(dt, IntType):
            if dt.bits == 1:
                v = rng.integers(0, 2, shape).astype(bool)
            else:
                lo, hi = (max(dt.min, -8), min(dt.max, 8)) if shape else (min(1, dt.max), min(dt.max, 8))
                v = rng.integers(lo, hi + 1, shape).astype(dt.np)
        else:
            v = rng.standard_normal(shape).astype(dt.np if isinstance(dt, FloatType) else np.float64)
        out.append(v if shape else v[()])
    return out


# ----------------------------------------------------------------------------- project folders
def _owned(folder: Path) -> set[str]:
    m = folder / OWNED
    return set(m.read_text().split()) if m.is_file() else set()


def check_output(out: Path, force: bool) -> None:
    """Refuse to write into a file, or into a folder holding files streamdsl did not write (unless --force)."""
    if out.exists() and not out.is_dir():
        raise CLIError(f"'{out}' is a file, not a folder", hint="give -o a new or empty folder")
    if not out.is_dir() or force:
        return
    ours = _owned(out) | {OWNED, "include"}
    foreign = sorted(p.name for p in out.iterdir() if p.name not in ours)
    if foreign:
        raise CLIError(f"'{out}' holds files streamdsl did not write: {', '.join(foreign[:5])}"
                       + (" ..." if len(foreign) > 5 else ""),
                       hint="choose a new or empty folder, or pass --force to write there anyway "
                            "(streamdsl's own files are replaced, the others are left alone)")


def _claim(folder: Path, names) -> None:
    """Record ``names`` as streamdsl's in the folder's manifest, so a rebuild may replace them."""
    m = folder / OWNED
    m.write_text("\n".join(sorted(_owned(folder) | set(names))) + "\n")


def _version() -> str:
    from . import __version__

    return __version__


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n")


def read_project(folder: Path) -> dict:
    """DIR's ``streamdsl.json``; a folder that is not a command-line project is a located error with a hint."""
    hint = "run `streamdsl build FILE.py:NAME -o DIR` (or `streamdsl llm build ... -o DIR`) first"
    if not folder.exists():
        raise CLIError(f"no such folder: {folder}", hint=hint)
    if not folder.is_dir():
        raise CLIError(f"'{folder}' is a file, not a project folder", hint=hint)
    path = folder / PROJECT
    if not path.is_file():
        why = ("it was written from Python (.build(output=...)), which records no design or test inputs"
               if (folder / OWNED).is_file() else "it has no streamdsl.json")
        raise CLIError(f"'{folder}' is not a streamdsl project folder: {why}", hint=hint)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise CLIError(f"'{path}' is not valid JSON: {err.msg}", Loc(str(path), err.lineno, err.colno - 1),
                       hint="rebuild the project") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CLIError(f"'{path}' is not a {FORMAT} project file", Loc(str(path), 1), hint="rebuild the project")
    return data


def _source_loc(prj: dict) -> Loc | None:
    return Loc(prj["source"], prj["line"], prj.get("col", 0)) if prj.get("source") and prj.get("line") else None


def _check_board(board: str) -> tuple[str, float]:
    from .backend.hls.project import BOARDS

    if board not in BOARDS:
        raise CLIError(f"unknown board {board!r}", hint=f"known boards: {', '.join(BOARDS)}")
    return BOARDS[board]


# ---------------------------------------------------------------------------------- commands
def cmd_sim(args) -> int:
    from .backend.sim import simulate

    d = _design(args.target)
    k = d.ir
    outs = simulate(k, *read_inputs(args.inputs, k, d.loc))
    outs = () if outs is None else outs if isinstance(outs, tuple) else (outs,)
    for n, v in enumerate(outs):
        dest = args.output if len(outs) == 1 else (f"{Path(args.output).with_suffix('')}_{n}.npy" if args.output else None)
        if dest:
            np.save(dest, np.asarray(v))
        print(f"result {n}: {np.shape(v)} {np.asarray(v).dtype}" + (f" -> {dest}" if dest else ""))
    if not outs:
        print(f"'{k.name}' returns nothing")
    return 0


def cmd_build(args) -> int:
    d = _design(args.target)
    _check_board(args.board)
    out = Path(args.output)
    check_output(out, args.force)
    k = d.ir
    values = read_inputs(args.inputs, k, d.loc) if args.inputs is not None else random_inputs(k, args.seed)
    s = d.schedule()
    prj = s.build(args.target_kind, output=out, board=args.board, overwrite=args.force)
    inputs = []
    for p, v in zip(k.params, values):
        np.save(out / "data" / f"{p.name}.npy", np.asarray(v))
        inputs.append(dict(param=p.name, type=str(p.type), file=f"data/{p.name}.npy"))
    (out / IR_FILE).write_text(str(k) + "\n")
    path, name = _split(args.target)
    loc = d.loc
    _write_json(out / PROJECT, dict(
        format=FORMAT, kind=d.kind, source=str(path.resolve()), name=name, line=loc.line if loc else None,
        col=loc.col if loc else 0, board=args.board, top=k.name, ir=IR_FILE, files=sorted(prj.files),
        inputs=inputs, inputs_from=("--inputs " + " ".join(args.inputs)) if args.inputs is not None
        else f"random (seed {args.seed})", results=[str(t) for t in k.results], version=_version()))
    _claim(out, [PROJECT, IR_FILE])
    print(f"wrote {prj}")
    print(f"C-simulate it with: streamdsl csim {out}")
    return 0


def _compare(got, want, rtol: float, atol: float) -> tuple[float, list[str]]:
    """Max |error| over all results, and what differs (empty: they match)."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    worst, bad = 0.0, []
    for n, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            bad.append(f"result {n} has shape {g.shape}, the reference {w.shape}")
            continue
        diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
        diff = np.where(np.isnan(g) & np.isnan(w), 0.0, diff) if g.dtype.kind == "f" else diff
        err = float(np.nanmax(diff, initial=0.0)) if diff.size else 0.0
        err = float("inf") if np.isnan(diff).any() else err
        worst = max(worst, err)
        exact = g.dtype.kind != "f" and w.dtype.kind != "f"
        ok = np.array_equal(g, w) if exact else bool(np.all(diff <= atol + rtol * np.abs(w.astype(np.float64))))
        if not ok:
            at = np.unravel_index(int(np.argmax(np.nan_to_num(diff, nan=np.inf))), diff.shape) if diff.ndim else ()
            bad.append(f"result {n} differs by up to {err:.3g} at index {tuple(int(i) for i in at)}: "
                       f"C-sim {g[at]!r}, reference {w[at]!r}" + ("" if exact else f" (rtol {rtol:g}, atol {atol:g})"))
    if len(got) != len(want):
        bad.append(f"the C-simulation returned {len(got)} result(s), the reference {len(want)}")
    return worst, bad


def _project_files(folder: Path, names, rebuild: str) -> dict[str, str]:
    files = {}
    for n in names:
        f = folder / n
        if not f.is_file():
            raise CLIError(f"'{f}' is missing from the project", hint=rebuild)
        files[n] = f.read_text()
    return files


def cmd_csim(args) -> int:
    from . import parse_ir
    from .backend.hls.project import HLSProject
    from .backend.sim import simulate

    folder = Path(args.dir)
    prj = read_project(folder)
    if prj.get("kind") == "llm":
        return _csim_llm(folder, prj, args)
    rebuild = f"rebuild it: streamdsl build {prj.get('source', 'FILE.py')}:{prj.get('name', 'NAME')} -o {folder}"
    loc = _source_loc(prj)
    try:
        k = parse_ir((folder / prj["ir"]).read_text())
        part, clock = _check_board(prj["board"])
        files = _project_files(folder, prj["files"], rebuild)
        inputs = []
        for item in prj["inputs"]:
            f = folder / item["file"]
            if not f.is_file():
                raise CLIError(f"testbench input '{f}' is missing", hint=rebuild)
            a = np.load(f, allow_pickle=False)
            inputs.append(a if a.ndim else a[()])
    except (KeyError, TypeError, OSError, ValueError) as err:
        raise CLIError(f"'{folder / PROJECT}' is damaged or incomplete ({type(err).__name__}: {err})",
                       Loc(str(folder / PROJECT), 1), hint=rebuild) from None
    try:
        want = simulate(k, *inputs)
        got = HLSProject(k, files, folder, prj["board"], part, clock).csim(*inputs)
    except StreamDSLError as err:
        if err.loc is None or not Path(err.loc.file).is_file():  # a C-sim error, a deadlock: the design's line
            err.loc = loc
        raise
    worst, bad = _compare(got, want, args.rtol, args.atol)
    if bad:
        raise MismatchError(f"{k.name} in {folder}: the C-simulation differs from the reference simulator: "
                            + "; ".join(bad), loc, hint="the C++ in the folder may have been edited, or this is "
                                                        "a streamdsl bug (please report it with the folder)")
    n = len(k.results)
    print(f"PASS {k.name} ({prj['kind']} on {prj['board']}): C-simulation of {folder} matches the reference "
          f"simulator on {len(inputs)} input(s), {n} result(s); max |error| {worst:.3g}")
    return 0


def _llm_model(prj: dict, folder: Path | None):
    from .library.llm.config import preset, tiny
    from .library.llm.models import model

    config = tiny(prj["family"]) if prj["config"] == "tiny" else preset(FULL_MODELS[prj["family"]])
    m = model(config, max_len=prj["max_len"], quant=prj["quant"])
    if folder is not None:
        from .library.llm.hls_build import load_weights

        m.load(load_weights(folder / "weights", config))
    return m


def _layer_args(m, i: int, t: int, pos: int, rng) -> list:
    """Layer ``i``'s arguments for ``t`` new tokens after ``pos`` cached ones, as :meth:`LLM.prefill` passes them."""
    from .library.llm.numpy_model import rope_inv_freq, rope_tables

    c = m.config
    x = rng.standard_normal((t, c.hidden)).astype(np.float32)
    kc, vc = (rng.standard_normal((c.kv_heads, m.max_len, c.head_dim)).astype(np.float32) for _ in range(2))
    args = [x] + m.layer_args(i) + [kc, vc]
    if c.rope_theta is not None:
        cos, sin = rope_tables(rope_inv_freq(c, c.layer_theta(i)), np.arange(pos, pos + t))
        args += [np.ascontiguousarray(cos, np.float32), np.ascontiguousarray(sin, np.float32)]
    return args + [np.int32(pos), np.int32(pos + t)]


def _csim_llm(folder: Path, prj: dict, args) -> int:
    from .backend.hls.project import DataflowProject
    from .progress import bar

    rebuild = f"rebuild it: streamdsl llm build {prj.get('family', 'FAMILY')} -o {folder}"
    if prj.get("config") != "tiny":
        raise CLIError(f"'{folder}' is a full-size {prj.get('family')} project, written without weights: its layer "
                       "kernels cannot be C-simulated from the folder (no weight files to feed them)",
                       hint=f"C-simulate a tiny build: streamdsl llm build {prj.get('family')} --config tiny -o DIR; "
                            "streamdsl csim DIR")
    try:
        accel = json.loads((folder / "project.json").read_text())
        variants = accel["variants"]
        part, clock = _check_board(prj["board"])
    except (KeyError, TypeError, OSError, ValueError) as err:
        raise CLIError(f"'{folder / 'project.json'}' is missing or damaged ({type(err).__name__}: {err})",
                       hint=rebuild) from None
    m = _llm_model(prj, folder)
    c = m.config
    rng = np.random.default_rng(args.seed)
    worst = 0.0
    for v in bar(variants, desc="csim layers", unit="layer"):
        t, kind = int(v["t"]), v["kind"]
        layer = c.layer_types.index(kind)
        g = m.schedule(t, kind)
        ir = g.graph.ir
        names = [a["name"] for a in v["args"]][:len(ir.params)]
        if names != [p.name for p in ir.params]:
            raise CLIError(f"'{folder / v['folder']}' takes ({', '.join(names)}), this streamdsl's layer takes "
                           f"({', '.join(p.name for p in ir.params)})", hint=rebuild)
        sub = folder / v["folder"]
        files = _project_files(sub, sorted(_owned(sub) - {"include", "data"}), rebuild)
        pos = min(3, m.max_len - t)  # a few cached tokens, so attention reads the cache
        inputs = _layer_args(m, layer, t, pos, rng)
        want = m.layer(t, kind).function(*inputs)
        got = DataflowProject(ir, files, sub, prj["board"], part, clock, schedule=g).csim(*inputs)  # rows stored in place
        err, bad = _compare(got, want, args.rtol, args.atol)
        if bad:
            raise MismatchError(f"{v['kernel']} in {sub}: the C-simulation differs from the reference simulator: "
                                + "; ".join(bad), hint="this is a streamdsl bug; please report it with the folder")
        worst = max(worst, err)
        print(f"PASS {v['kernel']} (layer {layer}, {t} token(s) after {pos}): max |error| {err:.3g}")
    print(f"PASS {prj['family']} ({len(variants)} layer kernel(s) on {prj['board']}): C-simulation of {folder} "
          f"matches the reference simulator; max |error| {worst:.3g}. The embedding, final norm and LM head run on "
          "the host CPU (host/host.cpp, XRT) and are not C-simulated here")
    return 0


def _report_target(args):
    """(what to model, a title for its page or None, the board) from ``FILE.py:NAME`` or a project folder."""
    t = args.target
    if ":" in t and not Path(t).is_dir():
        d = _design(t)
        return d.schedule(), None, args.board
    folder = Path(t)
    prj = read_project(folder)
    board = args.board or prj.get("board", "u55c")
    if prj.get("kind") == "llm":
        m = _llm_model(prj, None)
        return m.schedule(1, m.kinds()[0]), f"{m.config.name or prj['family']} decode layer", board
    src = Path(prj["source"])
    if not src.is_file():
        raise CLIError(f"the design of '{folder}' came from {src}, which no longer exists",
                       hint="report FILE.py:NAME of the design instead")
    d = _design(f"{src}:{prj['name']}")
    return d.schedule(), None, board


def cmd_report(args) -> int:
    from .dfg.dfschedule import DataflowSchedule

    target, name, board = _report_target(args)
    board = board or "u55c"
    if isinstance(target, DataflowSchedule):
        from .perf import model_design

        print(model_design(target, board).report())
    else:
        from .cost.model import estimate

        part, clock = _check_board(board)
        print(estimate(target.ir, board, clock))
    if args.output:
        out = Path(args.output)
        if out.exists() and not out.is_dir():
            raise CLIError(f"'{out}' is a file, not a folder", hint="give -o a folder for report.html")
        from .htmlreport import write_report

        path = write_report(target, out, board=board, title=name, quiet=True)  # the command says what it wrote
        print(f"wrote {path}")
    return 0


def cmd_explore(args) -> int:
    from .perf import explore

    d = _design(args.target)
    if d.kind != "dataflow":
        raise CLIError(f"{args.target} is a kernel; explore takes a dataflow or its schedule", d.loc,
                       hint="name an @sd.dataflow function or a DataflowSchedule (g = sd.schedule(fn))")
    ex = explore(d.schedule(), args.board, args.budget)
    print(ex.table())
    print(ex.report())
    return 0


def cmd_llm_build(args) -> int:
    from .library.llm.weights import random_weights

    out = Path(args.output)
    check_output(out, args.force)
    prj = dict(format=FORMAT, kind="llm", family=args.family, config=args.config, quant=args.quant,
               max_len=args.max_len, prefill_len=min(args.prefill_len, args.max_len), board=args.board)
    m = _llm_model(prj, None)
    prj["max_len"] = m.max_len  # GPT-2's learned positions may cap it
    prj["prefill_len"] = min(prj["prefill_len"], m.max_len)
    if args.config == "tiny":
        m.load(random_weights(m.config, seed=0))  # full-size projects are built without weights
    accel = m.build("hls", output=out, prefill_len=prj["prefill_len"], board=args.board, overwrite=args.force)
    prj.update(model=m.config.name or args.family, version=_version())
    _write_json(out / PROJECT, prj)
    _claim(out, [PROJECT])
    print(f"wrote {accel}")
    if args.config == "tiny":
        print(f"C-simulate its layers with: streamdsl csim {out}")
    return 0


def cmd_llm_generate(args) -> int:
    from .library.llm.gguf_loader import load_smollm2
    from .library.llm.models import llama

    config, weights, tokenizer = load_smollm2()
    ids = tokenizer(args.prompt).input_ids
    m = llama(config, max_len=len(ids) + args.max_new_tokens).load(weights)
    new = m.generate(ids, args.max_new_tokens, backend=args.backend)
    print(args.prompt + tokenizer.decode(new))
    return 0


# ------------------------------------------------------------------------------------ parser
def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                        help="no progress bars (also: STREAMDSL_QUIET=1; bars show only on a terminal anyway)")
    p = argparse.ArgumentParser(prog="streamdsl", parents=[common],
                                description="streamdsl: a Python HLS DSL for stream-based dataflow accelerators",
                                epilog="exit codes: 0 success, 1 a user error (the located message), 2 bad usage")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(parent, name, help_, run, **kw):
        c = parent.add_parser(name, help=help_, description=help_, parents=[common], **kw)
        c.set_defaults(run=run)
        return c

    s = command(sub, "sim", "run a kernel or dataflow on the reference simulator", cmd_sim)
    s.add_argument("target", metavar="FILE.py:KERNEL")
    s.add_argument("--inputs", nargs="*", default=[], metavar="X", help="arguments in order: .npy files or numbers")
    s.add_argument("-o", "--output", help="where to save the result (.npy; several results get _0, _1, ...)")

    b = command(sub, "build", "write the Vitis HLS project of a kernel, dataflow or schedule (and what csim needs)",
                cmd_build)
    b.add_argument("target", metavar="FILE.py:NAME")
    b.add_argument("--target", dest="target_kind", default="hls", choices=["hls"], help="the backend (hls)")
    b.add_argument("--board", default="u55c", help="u55c, u280 or vck190 (default u55c)")
    b.add_argument("-o", "--output", required=True, metavar="DIR")
    b.add_argument("--inputs", nargs="*", default=None, metavar="X",
                   help="the testbench's inputs (.npy files or numbers); default: seeded random data")
    b.add_argument("--seed", type=int, default=0, help="seed of the random testbench inputs (default 0)")
    b.add_argument("-f", "--force", "--overwrite", dest="force", action="store_true",
                   help="write into a folder that holds files streamdsl did not write")

    c = command(sub, "csim", "compile a built project's C++ with g++, run it, compare with the reference simulator",
                cmd_csim)
    c.add_argument("dir", metavar="DIR", help="a folder `streamdsl build` or `streamdsl llm build` wrote")
    c.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance for float results (default 1e-5)")
    c.add_argument("--atol", type=float, default=1e-6, help="absolute tolerance for float results (default 1e-6)")
    c.add_argument("--seed", type=int, default=0, help="seed of an LLM layer's random activations and cache")

    r = command(sub, "report", "model a design on a board (latency, resources); -o writes report.html", cmd_report)
    r.add_argument("target", metavar="DIR|FILE.py:NAME",
                   help="a built project folder, or a kernel, dataflow (built as one region) or schedule")
    r.add_argument("--board", default=None, help="u55c, u280 or vck190 (default: the project's board, else u55c)")
    r.add_argument("-o", "--output", metavar="OUT_DIR", help="also write the HTML report into OUT_DIR")

    x = command(sub, "explore", "explore tiling, fusion and resources of a dataflow design", cmd_explore)
    x.add_argument("target", metavar="FILE.py:NAME")
    x.add_argument("--board", default="u55c", help="u55c, u280 or vck190")
    x.add_argument("--budget", type=_positive, default=None, help="overall unroll budget (default: fill the board)")

    llm_p = sub.add_parser("llm", help="LLM accelerators from the library", description="LLM accelerators from the library",
                           parents=[common])
    llm = llm_p.add_subparsers(dest="llm_command", required=True, metavar="COMMAND")
    lb = command(llm, "build", "write a whole LLM accelerator project (layer kernels, host, link config, weights)",
                 cmd_llm_build)
    lb.add_argument("family", choices=["gpt2", "llama", "qwen2", "gemma3"])
    lb.add_argument("--config", choices=["tiny", "full"], default="tiny",
                    help="tiny (random weights written; csim works) or the full-size model (no weights)")
    lb.add_argument("--quant", choices=["fp32", "w8a8", "w4a8"], default="fp32")
    lb.add_argument("--max-len", type=_positive, default=64, help="KV cache positions")
    lb.add_argument("--prefill-len", type=_positive, default=16, help="tokens the prefill kernel takes at once")
    lb.add_argument("--board", default="u55c", choices=["u55c", "u280"], help="an HBM board (default u55c)")
    lb.add_argument("-o", "--output", required=True, metavar="DIR")
    lb.add_argument("-f", "--force", "--overwrite", dest="force", action="store_true",
                    help="write into a folder that holds files streamdsl did not write")
    lg = command(llm, "generate", "greedy generation with SmolLM2-135M on the accelerator", cmd_llm_generate)
    lg.add_argument("model", choices=["smollm2"])
    lg.add_argument("prompt")
    lg.add_argument("--max-new-tokens", type=_positive, default=8)
    lg.add_argument("--backend", choices=["sim", "csim"], default="sim")
    return p


def _quiet(args) -> bool:
    return bool(getattr(args, "quiet", False))


def main(argv: list[str] | None = None) -> int:
    from .progress import set_quiet

    args = parser().parse_args(argv)
    if _quiet(args):
        set_quiet(True)
    try:
        return args.run(args)
    except StreamDSLError as err:
        if os.environ.get("STREAMDSL_TRACEBACK") == "1":
            raise
        print(str(err), file=sys.stderr)
        return 1
    except BrokenPipeError:  # `streamdsl report ... | head`: the reader left; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as err:  # a folder we cannot write, a full disk: the user's to fix
        print(str(CLIError(f"{err.strerror or err}" + (f": {err.filename}" if err.filename else ""),
                           hint="check the path and its permissions")), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug of ours: say so in one line; STREAMDSL_TRACEBACK=1 shows where
        if os.environ.get("STREAMDSL_TRACEBACK") == "1":
            raise
        print(f"internal error: {type(err).__name__}: {err}\n   = hint: this is a streamdsl bug; rerun with "
              "STREAMDSL_TRACEBACK=1 to see the traceback, and please report it", file=sys.stderr)
        return 1
    finally:
        set_quiet(None)


if __name__ == "__main__":
    sys.exit(main())
