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

``csim DIR`` compiles DIR's own C++ with g++ and runs it on those inputs (so it
runs whatever code the folder holds), and compares the results with the reference
simulator running ``design.ir``: the folder is all it needs, and only the plain
file names ``streamdsl.json`` lists inside it are read.  ``llm build`` records its model (family, config,
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

from ._version import __version__
from .errors import Loc, StreamDSLError

FORMAT = "streamdsl-project/1"
PROJECT = "streamdsl.json"
IR_FILE = "design.ir"
OWNED = ".streamdsl-manifest"  # the files streamdsl wrote into a folder (backend/folder.py keeps it)


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
def check_output(out: Path, force: bool):
    """``-o DIR`` checked before anything is built: a folder (or one that can be made) that holds nothing of the
    user's unless ``--force``; returns it as an :class:`~streamdsl.backend.folder.OutputFolder`, through which the
    build writes only what its manifest says is streamdsl's."""
    from .backend.folder import OutputFolder

    folder = OutputFolder(out, force, what="-o")
    folder.check()
    return folder


def owned(folder: Path) -> set[str]:
    """What the folder's manifest says streamdsl wrote there (relative paths)."""
    from .backend.folder import OutputFolder

    return OutputFolder(folder).owned()


def owned_sources(folder: Path) -> list[str]:
    """The project files streamdsl wrote at the top of ``folder`` (not include/ or data/): what csim compiles."""
    return sorted(n for n in owned(folder) if "/" not in n and n not in ("include", "data"))


def inside(folder: Path, rel, what: str, rebuild: str) -> Path:
    """``folder / rel`` for a path ``streamdsl.json`` names: only plain names inside the folder, never a link out."""
    from .backend.folder import plain_parts

    parts = plain_parts(rel)
    path = folder.joinpath(*parts) if parts else None
    if path is None or not path.resolve().is_relative_to(folder.resolve()):
        raise CLIError(f"'{folder / PROJECT}' names {what} {rel!r}, which is not a file inside the folder",
                       Loc(str(folder / PROJECT), 1),
                       hint="csim reads only the folder's own files; " + rebuild)
    return path


def json_text(data: dict) -> str:
    return json.dumps(data, indent=1) + "\n"


def _npy(v) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, np.asarray(v))
    return buf.getvalue()


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


def check_board(name):
    """The Board a --board (or a project's board) names; any other name is the one unknown-board error."""
    from .boards import BOARDS, Board, board

    if isinstance(name, Board) or (isinstance(name, str) and name.lower() in BOARDS):
        return board(name)
    raise CLIError(f"unknown board {name!r}", hint=f"known boards: {', '.join(BOARDS)}")


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
    check_board(args.board)
    out = Path(args.output)
    folder = check_output(out, args.force)
    k = d.ir
    values = read_inputs(args.inputs, k, d.loc) if args.inputs is not None else random_inputs(k, args.seed)
    s = d.schedule()
    prj = s.build(args.target_kind, output=out, board=args.board, overwrite=args.force)
    inputs, extra = [], {}
    for p, v in zip(k.params, values):
        rel = f"data/{p.name}.npy"
        extra[rel] = _npy(v)
        inputs.append(dict(param=p.name, type=str(p.type), file=rel))
    path, name = _split(args.target)
    loc = d.loc
    extra[IR_FILE] = str(k) + "\n"
    extra[PROJECT] = json_text(dict(
        format=FORMAT, kind=d.kind, source=str(path.resolve()), name=name, line=loc.line if loc else None,
        col=loc.col if loc else 0, board=args.board, top=k.name, ir=IR_FILE, files=sorted(prj.files),
        inputs=inputs, inputs_from=("--inputs " + " ".join(args.inputs)) if args.inputs is not None
        else f"random (seed {args.seed})", results=[str(t) for t in k.results], version=__version__,
        **(prj.records() if hasattr(prj, "records") else {})))
    folder.write(extra)
    print(f"wrote {prj}")
    print(f"C-simulate it with: streamdsl csim {out}")
    return 0


def compare(got, want, rtol: float, atol: float) -> tuple[float, list[str]]:
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


def project_files(folder: Path, names, rebuild: str) -> dict[str, str]:
    files = {}
    if not isinstance(names, list):
        raise CLIError(f"'{folder / PROJECT}' lists no project files", Loc(str(folder / PROJECT), 1), hint=rebuild)
    for n in names:
        f = inside(folder, n, "the project file", rebuild)
        if "/" in n:
            raise CLIError(f"'{folder / PROJECT}' names the project file {n!r}, which is not a plain file name",
                           Loc(str(folder / PROJECT), 1), hint="csim compiles only the folder's own files; " + rebuild)
        if not f.is_file():
            raise CLIError(f"'{f}' is missing from the project", hint=rebuild)
        files[n] = f.read_text()
    return files


def cmd_csim(args) -> int:
    from . import parse_ir
    from .backend.hls.project import DataflowProject, HLSProject
    from .backend.sim import simulate

    folder = Path(args.dir)
    prj = read_project(folder)
    ext = project_kind(prj.get("kind"))
    if ext is not None:
        return ext.csim(folder, prj, args)
    rebuild = f"rebuild it: streamdsl build {prj.get('source', 'FILE.py')}:{prj.get('name', 'NAME')} -o {folder}"
    loc = _source_loc(prj)
    try:
        k = parse_ir(inside(folder, prj["ir"], "the IR file", rebuild).read_text())
        b = check_board(prj["board"])
        part, clock = b.part, b.clock_mhz
        files = project_files(folder, prj["files"], rebuild)
        inputs = []
        for item in prj["inputs"]:
            f = inside(folder, item["file"], "the testbench input", rebuild)
            if not f.is_file():
                raise CLIError(f"testbench input '{f}' is missing", hint=rebuild)
            a = np.load(f, allow_pickle=False)
            inputs.append(a if a.ndim else a[()])
    except (KeyError, TypeError, OSError, ValueError) as err:
        raise CLIError(f"'{folder / PROJECT}' is damaged or incomplete ({type(err).__name__}: {err})",
                       Loc(str(folder / PROJECT), 1), hint=rebuild) from None
    try:
        want = simulate(k, *inputs)
        got = (DataflowProject.from_records(k, files, folder, prj["board"], part, clock, prj) if "ports" in prj
               else HLSProject(k, files, folder, prj["board"], part, clock)).csim(*inputs)
    except StreamDSLError as err:
        if err.loc is None or not Path(err.loc.file).is_file():  # a C-sim error, a deadlock: the design's line
            err.loc = loc
        raise
    worst, bad = compare(got, want, args.rtol, args.atol)
    if bad:
        raise MismatchError(f"{k.name} in {folder}: the C-simulation differs from the reference simulator: "
                            + "; ".join(bad), loc, hint="the C++ in the folder may have been edited, or this is "
                                                        "a streamdsl bug (please report it with the folder)")
    n = len(k.results)
    print(f"PASS {k.name} ({prj['kind']} on {prj['board']}): C-simulation of {folder} matches the reference "
          f"simulator on {len(inputs)} input(s), {n} result(s); max |error| {worst:.3g}")
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
    ext = project_kind(prj.get("kind"))
    if ext is not None:
        return (*ext.report_design(folder, prj), board)
    src = Path(prj["source"])
    if not src.is_file():
        raise CLIError(f"the design of '{folder}' came from {src}, which no longer exists",
                       hint="report FILE.py:NAME of the design instead")
    d = _design(f"{src}:{prj['name']}")
    return d.schedule(), None, board


def cmd_report(args) -> int:
    from .dfg.dfschedule import DataflowSchedule

    target, name, board = _report_target(args)
    board = check_board(board or "u55c")
    if isinstance(target, DataflowSchedule):
        from .perf import model_design

        print(model_design(target, board).report())
    else:
        from .cost.model import estimate

        print(estimate(target.ir, board))
    if args.output:
        out = Path(args.output)
        if out.exists() and not out.is_dir():
            raise CLIError(f"'{out}' is a file, not a folder", hint="give -o a folder for report.html")
        from .htmlreport import write_report

        path = write_report(target, out, board=board, title=name, quiet=True)  # the command says what it wrote
        print(f"wrote {path}")
    return 0


def cmd_explore(args) -> int:
    from .api import explore

    board = check_board(args.board)
    d = _design(args.target)
    if d.kind != "dataflow":
        raise CLIError(f"{args.target} is a kernel; explore takes a dataflow or its schedule", d.loc,
                       hint="name an @sd.dataflow function or a DataflowSchedule (g = sd.schedule(fn))")
    ex = explore(d.schedule(), board, args.budget)
    print(ex.report())  # the table of the designs tried, then the best one's model
    return 0


# ----------------------------------------------------------------------------------- extensions
COMMANDS = "streamdsl.commands"  # entry points: add_commands(subparsers, command, common) adds subcommands
PROJECT_KINDS = "streamdsl.project_kinds"  # entry points: an object with csim(folder, prj, args) and report_design


def _entry_points(group: str):
    from importlib.metadata import entry_points

    return sorted(entry_points(group=group), key=lambda ep: ep.name)


def project_kind(kind):
    """The extension that handles project folders of ``kind`` (``streamdsl.json``'s "kind"), or None."""
    for ep in _entry_points(PROJECT_KINDS):
        if ep.name == kind:
            return ep.load()
    return None


# ------------------------------------------------------------------------------------ parser
def positive(text: str) -> int:
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

    c = command(sub, "csim", "compile the C++ in a built project folder with g++ and run it (it runs the folder's "
                             "code: C-simulate only folders you trust), then compare with the reference simulator",
                cmd_csim)
    c.add_argument("dir", metavar="DIR", help="a folder `streamdsl build` or `streamdsl llm build` wrote; only the "
                                              "plain file names its streamdsl.json lists inside it are read")
    c.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance for float results (default 1e-5)")
    c.add_argument("--atol", type=float, default=1e-6, help="absolute tolerance for float results (default 1e-6)")
    c.add_argument("--seed", type=int, default=0, help="seed of an LLM layer's random activations and cache")

    r = command(sub, "report", "model a design on a board (latency, resources); -o writes report.html", cmd_report)
    r.add_argument("target", metavar="DIR|FILE.py:NAME",
                   help="a built project folder (its design is modeled again: the FILE.py its streamdsl.json "
                        "names is run), or a kernel, dataflow (built as one region) or schedule")
    r.add_argument("--board", default=None, help="u55c, u280 or vck190 (default: the project's board, else u55c)")
    r.add_argument("-o", "--output", metavar="OUT_DIR", help="also write the HTML report into OUT_DIR")

    x = command(sub, "explore", "explore tiling, fusion and resources of a dataflow design", cmd_explore)
    x.add_argument("target", metavar="FILE.py:NAME")
    x.add_argument("--board", default="u55c", help="u55c, u280 or vck190")
    x.add_argument("--budget", type=positive, default=None, help="overall unroll budget (default: fill the board)")

    for ep in _entry_points(COMMANDS):  # subcommands of installed extensions (the LLM library's `llm`)
        ep.load()(sub, command, common)
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


__all__ = ["CLIError", "FORMAT", "MismatchError", "PROJECT", "check_board", "check_output", "compare", "inside",
           "json_text", "main", "owned", "owned_sources", "parser", "positive", "project_files", "read_project"]


if __name__ == "__main__":
    sys.exit(main())
