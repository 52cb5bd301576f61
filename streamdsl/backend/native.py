"""The simulator's compiled path: a kernel printed as C++ (``cgen.py``), compiled by g++ into a shared
library, loaded in-process with ctypes and called on the user's NumPy arrays (passed by pointer, no copies).

* Compiled once per kernel: the library is cached by the hash of its source, the runtime header, the
  flags and the compiler in ``$STREAMDSL_CACHE/sim`` (default ``~/.cache/streamdsl/sim``); nothing is
  written beside the user's files.  Loaded libraries are kept for the process.
* Flags: ``-O2 -ffp-contract=off`` and no fast-math, so float operations run as written, in order.
* Transcendentals: the compiled code calls the ufunc inner loops NumPy (and SciPy, for erf) run in the
  interpreter; each loop is found in the ufunc object and checked against the ufunc on probe values
  before it is bound (:func:`_bind_loop`).  A kernel needing a loop that is not found is interpreted.
* Errors: an index out of bounds comes back as the number of the checked access; it is raised as the
  interpreter's ``ShapeError`` at that access's line (the first offending index in program order).
* Where it pays (``mode="auto"``, the default): a kernel estimated faster compiled (:func:`estimate`) is
  compiled once the interpreter is estimated or measured to spend ``COMPILE_AFTER`` seconds on it; a
  library already in the cache is used once it has spent ``LOOKUP_AFTER``; a kernel measured slower
  compiled than interpreted goes back to the interpreter.  ``mode="compiled"`` always compiles,
  ``mode="interp"`` (or ``STREAMDSL_SIM=interp``) never does.
* Without g++ the simulator interprets, after one notice on stderr.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import Loc, ShapeError, StreamDSLError
from ..ir.memo import IdentityMemo
from ..ir.nodes import Alloc, Call, CallKernel, For, If, Kernel, Ref, Return, walk, written_params
from ..types import TensorType
from .cgen import LOOPS, Program, Unsupported, made, print_program, stype

MODES = ("auto", "compiled", "interp")
COMPILE_AFTER = 0.25  # seconds of interpretation after which compiling a kernel pays (a compile takes ~0.3 s)
LOOKUP_AFTER = 0.005  # a kernel estimated below this never looks for a cached library
FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno", "-fwrapv", "-w")
_HEADER = Path(__file__).resolve().parent / "native_include" / "streamdsl_native.h"  # never in an HLS project


class SimModeError(StreamDSLError):
    """An unknown simulator mode."""


def sim_mode(mode: str | None) -> str:
    """The mode asked for, else ``$STREAMDSL_SIM``, else ``auto``."""
    chosen = mode if mode is not None else (os.environ.get("STREAMDSL_SIM") or "auto")
    if chosen not in MODES:
        where = "mode" if mode is not None else "STREAMDSL_SIM"
        raise SimModeError(f"unknown simulator mode {chosen!r} ({where})",
                           hint=f"the simulator's modes are {', '.join(MODES)}")
    return chosen


# ------------------------------------------------------------------ compiler
_notice_lock = threading.Lock()
_noticed: set[str] = set()


def notice(key: str, text: str) -> None:
    """Print ``text`` on stderr once per process (unless STREAMDSL_QUIET)."""
    with _notice_lock:
        if key in _noticed:
            return
        _noticed.add(key)
    if os.environ.get("STREAMDSL_QUIET", "") in ("", "0"):
        print(f"streamdsl: {text}", file=sys.stderr)


def compiler() -> str | None:
    """The C++ compiler (``$CXX`` or g++), or None with one notice that the simulator interprets."""
    cxx = os.environ.get("CXX") or "g++"
    path = shutil.which(cxx)
    if path is None:
        notice("no-cxx", f"{cxx} was not found, so the simulator interprets every kernel (slower); "
                         "install g++ (Debian: apt install g++) for compiled simulation")
    return path


_versions: dict[str, str] = {}


def _version(cxx: str) -> str:
    if cxx not in _versions:
        r = subprocess.run([cxx, "--version"], capture_output=True, text=True)
        _versions[cxx] = r.stdout.splitlines()[0] if r.stdout else cxx
    return _versions[cxx]


def cache_dir() -> Path:
    base = os.environ.get("STREAMDSL_CACHE") or Path.home() / ".cache" / "streamdsl"
    return Path(base) / "sim"


def library_path(prog: Program, cxx: str) -> Path:
    h = hashlib.sha256()
    if not _header_text:
        _header_text.append(_HEADER.read_text())
    for part in (prog.source, _header_text[0], " ".join(FLAGS), _version(cxx), platform.machine()):
        h.update(part.encode())
        h.update(b"\0")
    return cache_dir() / f"{prog.kernel.name[:40]}-{h.hexdigest()[:24]}.so"


def build(prog: Program, cxx: str, path: Path) -> None:
    """Compile ``prog`` to ``path`` (atomically: concurrent builders of one kernel each replace it whole)."""
    from ..progress import run

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sd-sim-", dir=path.parent) as tmp:
        src = Path(tmp, "kernel.cpp")
        src.write_text(prog.source)
        out = Path(tmp, "kernel.so")
        cmd = [cxx, *FLAGS, f"-I{_HEADER.parent}", str(src), "-o", str(out)]
        r = run(cmd, desc=f"compiling {prog.kernel.name}", delay=1.0)
        if r.returncode != 0:
            raise RuntimeError(f"g++ could not compile the simulator's C++ for '{prog.kernel.name}':\n"
                               f"{r.stderr[-4000:]}")
        os.replace(out, path)


# -------------------------------------------------------- NumPy's own loops
class _UFunc(ctypes.Structure):  # the head of NumPy's PyUFuncObject (numpy/ufuncobject.h)
    _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p), ("nin", ctypes.c_int),
                ("nout", ctypes.c_int), ("nargs", ctypes.c_int), ("identity", ctypes.c_int),
                ("functions", ctypes.POINTER(ctypes.c_void_p)), ("data", ctypes.POINTER(ctypes.c_void_p)),
                ("ntypes", ctypes.c_int), ("reserved1", ctypes.c_int), ("name", ctypes.c_char_p),
                ("types", ctypes.POINTER(ctypes.c_char))]


_LOOP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ssize_t),
                         ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_void_p)
_bound: dict[int, tuple[int, int] | None] = {}


def _ufunc(op: str):
    if op == "erf":
        from scipy.special import erf

        return erf
    return {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "pow": np.power}[op]


def _probe(nin: int, dt: np.dtype) -> list[np.ndarray]:
    r = np.random.default_rng(7)
    base = np.concatenate([r.standard_normal(509) * 4, r.standard_normal(256) * 100, [0.0, -0.0, 1.0, -1.0, 0.5,
                                                                                        88.0, -104.0, 1e-30, 1e30,
                                                                                        np.inf, -np.inf, np.nan]])
    return [base.astype(dt)] + ([np.abs(r.standard_normal(base.size) * 3).astype(dt)] if nin == 2 else [])


def _bind_loop(slot: int) -> tuple[int, int] | None:
    """(function, data) of the inner loop the interpreter's ufunc runs for LOOPS[slot], or None.

    A candidate must give, called as the compiled code calls it (one element, or a strip of them), the
    bits the ufunc gives on a probe array; the first that does is the one."""
    if slot in _bound:
        return _bound[slot]
    op, c = LOOPS[slot]
    dt = np.dtype(np.float32 if c == "float" else np.float64)
    found = None
    try:
        uf = _ufunc(op)
        head = _UFunc.from_address(id(uf))
        if head.nin + head.nout == uf.nin + uf.nout == head.nargs and head.ntypes == uf.ntypes:
            args = _probe(uf.nin, dt)
            with np.errstate(all="ignore"):
                want = uf(*args)
            code = bytes([dt.num])
            for i in range(head.ntypes):
                if any(head.types[i * head.nargs + j] != code for j in range(head.nargs)):
                    continue
                fn, data = head.functions[i], head.data[i]
                if fn and all(_same_bits(_call(fn, data, args, dt, n), want) for n in (1, 256, len(want))):
                    found = (fn, data or 0)
                    break
    except Exception:  # noqa: BLE001 - any surprise in NumPy's layout means: not bound, interpret
        found = None
    _bound[slot] = found
    return found


def _call(fn: int, data: int, args: list[np.ndarray], dt: np.dtype, n: int) -> np.ndarray:
    """The loop called on ``n`` elements at a time, as the compiled code calls it (one, or a strip)."""
    loop = _LOOP(fn)
    out = np.empty_like(args[0])
    ptrs = (ctypes.c_void_p * (len(args) + 1))()
    steps = (ctypes.c_ssize_t * (len(args) + 1))(*([dt.itemsize] * (len(args) + 1)))
    base = [a.ctypes.data for a in args] + [out.ctypes.data]
    for i in range(0, out.size, n):
        for j, b in enumerate(base):
            ptrs[j] = b + i * dt.itemsize
        loop(ptrs, (ctypes.c_ssize_t * 1)(min(n, out.size - i)), steps, data)
    return out


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and (a.view(np.uint8) == b.view(np.uint8)).all()


# -------------------------------------------------------------- the kernel
@dataclass
class _Out:
    dtype: np.dtype
    shape: tuple[int, ...]


class Native:
    """A loaded kernel library; calling it runs the kernel like ``Interpreter(kernel).run``."""

    def __init__(self, prog: Program, path: Path):
        self.prog, self.kernel = prog, prog.kernel
        self.lib = ctypes.CDLL(str(path))
        for slot in sorted(prog.slots):
            fn, data = _bound[slot]  # type: ignore[misc]
            self.lib.sd_bind(slot, ctypes.c_void_p(fn), ctypes.c_void_p(data))
        self.fn = self.lib.sd_kernel
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.fn.restype = ctypes.c_int
        self.outs = [_Out(np.dtype(t.dtype.np), t.shape) if isinstance(t, TensorType) else _Out(np.dtype(t.np), ())
                     for t in self.kernel.results]
        ret = [s for s in self.kernel.body if isinstance(s, Return)]
        self.returns = None if not ret else len(ret[-1].values)
        params = {p.name for p in self.kernel.params}
        self.copies_param = bool(ret) and any(isinstance(v, Ref) and v.name in params for v in ret[-1].values)
        self.n = len(self.kernel.params) + len(self.outs)
        self.written = set(written_params(self.kernel))

    def run(self, args, call_loc: Loc | None = None):
        from .sim import _check_arg, _write_back, check_count

        k = self.kernel
        check_count(k, args, call_loc)
        keep = []
        ptrs = (ctypes.c_void_p * self.n)()
        for i, (p, a) in enumerate(zip(k.params, args)):
            v = _check_arg(k, p, a, call_loc)
            if p.name in self.written and v is a:  # written on a copy, stored back once the kernel has succeeded
                v = np.array(v, order="C")
            v = np.ascontiguousarray(v) if isinstance(p.type, TensorType) else np.asarray(v)
            keep.append(v)
            ptrs[i] = v.ctypes.data
        outs = []
        for i, o in enumerate(self.outs):
            try:
                outs.append(np.empty(o.shape, o.dtype))
            except (MemoryError, ValueError):  # NumPy: cannot allocate, or a size past its index range
                raise self._no_memory(made(k, i)) from None
        for i, o in enumerate(outs):
            ptrs[len(k.params) + i] = o.ctypes.data
        err = np.zeros(4, np.int64)
        if self.fn(ptrs, err.ctypes.data):
            raise self._error(err)
        for p, a, v in zip(k.params, args, keep):
            if p.name in self.written:
                _write_back(a, v, p, k, call_loc)
        if self.returns is None:
            return None
        vals = [o if o.ndim else o[()] for o in outs[:self.returns]]
        return vals[0] if len(vals) == 1 else tuple(vals)

    def _error(self, err: np.ndarray) -> StreamDSLError:
        node, dim, index, size = (int(x) for x in err)
        if node < 0:
            return self._no_memory(self.prog.allocs[-1 - node])
        name, loc = self.prog.accesses[node]
        return ShapeError(f"index {index} is out of bounds for dimension {dim} of '{name}' (size {size})",
                          loc, hint="check the loop bounds and the index expression")


    def _no_memory(self, made: Alloc | None) -> Exception:
        """The interpreter's error for the local ``made`` that could not be allocated."""
        from .sim import alloc_error

        if made is not None:
            return alloc_error(made)
        return MemoryError(f"the compiled simulation of '{self.kernel.name}' ran out of memory")


_loaded: dict[Path, Native] = {}
_lock = threading.Lock()


def load(kernel: Kernel, may_compile: bool) -> Native | None:
    """The kernel's library: from this process, from the cache, or (``may_compile``) built now.

    None when there is no compiler, the kernel is not expressible, a NumPy loop it needs is not bound,
    or it is not cached and may not be compiled."""
    cxx = compiler()
    if cxx is None:
        return None
    prog = _program(kernel)
    if prog is None or any(_bind_loop(s) is None for s in prog.slots):
        return None
    path = library_path(prog, cxx)
    with _lock:
        if path in _loaded:
            return _loaded[path]
        if not path.exists():
            if not may_compile:
                return None
            build(prog, cxx, path)
        native = _loaded[path] = Native(prog, path)
        return native


def _program_uncached(kernel: Kernel) -> Program | None:
    try:
        return print_program(kernel)
    except Unsupported:
        return None


_program = IdentityMemo(_program_uncached, 512)


# ------------------------------------------------------------- the policy
INTERP_CALL = 40e-6  # seconds the interpreter spends on a call itself (arguments checked, NumPy set up)
STEP = 2e-6  # ... on an IR node at a Python-level step
VECTOR = 0.075e-9  # ... on a node per vector element (NumPy)
NATIVE_CALL = 12e-6  # seconds the compiled code spends on a call itself (arguments, outputs, ctypes)
NATIVE = 0.05e-9  # ... on a node per element
TRANSCENDENTAL = 1.5e-9  # an exp, log, tanh, ... of one element: NumPy's loop, on either path
_TRANSCENDENTALS = ("exp", "log", "tanh", "erf", "sin", "cos", "sigmoid")


def estimate(kernel: Kernel) -> tuple[float, float]:
    """Rough seconds of one call: (interpreted, compiled).

    A loop the interpreter vectorises multiplies the elements of its body's steps; a sequential loop, and
    a float sum that the interpreter adds one vector step per iteration (a sum no more than 64 times
    longer than the sums it runs side by side; a longer one is one C-level pass), multiplies the steps.
    The compiled code pays for every element of every step alike.  The constants are this machine's
    order of magnitude (a gemm, a softmax, the library's linears), not a promise."""
    from ..ir.bounds import loop_trips
    from .sim import _plan

    plan = _plan(kernel)  # how the interpreter runs each loop (classify, the exact dependence test, float sums)
    k = plan.kernel
    trips = loop_trips(k.body)
    interp, compiled = INTERP_CALL, NATIVE_CALL

    def nodes(s) -> tuple[int, int]:
        ns = [n for n in walk(s) if not isinstance(n, (For, If))]
        return len(ns), sum(1 for n in ns if isinstance(n, Call) and n.fn in _TRANSCENDENTALS)

    def go(stmts, steps: float, elems: float) -> None:
        nonlocal interp, compiled
        for s in stmts:
            if isinstance(s, For):
                n = trips.get(id(s)) or 16
                info = plan.loops[id(s)]
                if info.kind == "sequential" or id(s) in plan.stepped or (
                        _float_reduction(s, info) and n <= 64 * elems):
                    go(s.body, steps * n, elems)
                else:
                    go(s.body, steps, elems * n)
            elif isinstance(s, If):
                go(s.then, steps, elems)
                go(s.orelse, steps, elems)
            elif isinstance(s, CallKernel):
                i, c = estimate(k.callee(s.callee))
                interp, compiled = interp + steps * i, compiled + steps * elems * c
            else:
                c, t = (1, 0) if isinstance(s, Alloc) else nodes(s)
                interp += steps * (c * (STEP + elems * VECTOR) + t * elems * TRANSCENDENTAL)
                compiled += steps * elems * (c * NATIVE + t * TRANSCENDENTAL)

    go(k.body, 1.0, 1.0)
    return interp, compiled


def _float_reduction(loop: For, info) -> bool:
    from ..ir.nodes import Assign, Store
    from ..types import FloatType

    return info.kind == "reduction" and any(
        id(n) in info.accumulations and isinstance(n.value.dtype, FloatType)
        for b in loop.body for n in walk(b) if isinstance(n, (Store, Assign)))


@dataclass
class _Heat:
    """What the policy knows of a kernel: the estimate, and what its calls took in either mode."""

    interp: float  # estimated seconds of an interpreted call
    pays: bool  # the compiled code is estimated faster
    spent: float = 0.0  # seconds interpreted so far
    best: float = float("inf")  # the fastest interpreted call
    native: Native | None = None
    native_best: float = float("inf")  # the fastest compiled call
    looked: bool = False  # the cache was searched
    failed: bool = False  # no compiler, the kernel cannot be compiled, or it ran slower compiled: interpreted


def _new_heat(k: Kernel) -> _Heat:
    interp, compiled = estimate(k)
    return _Heat(interp, interp > 1.25 * compiled)


def interp_seconds(kernel: Kernel) -> float:
    """The interpreter's estimated seconds on a call of ``kernel`` where compiling it would save time, else 0."""
    heat = _heat(kernel)
    return heat.interp if heat.pays else 0.0


_heat = IdentityMemo(_new_heat, 1024)
_header_text: list[str] = []


def run(kernel: Kernel, args, call_loc: Loc | None, mode: str):
    """Run ``kernel`` compiled when ``mode`` and the policy say so; else None, and the caller interprets
    (then :func:`spent` records the time).

    ``auto``: a kernel estimated faster compiled is looked up in the cache once the interpreter is
    estimated or measured to have spent ``LOOKUP_AFTER`` on it, and compiled once it has spent
    ``COMPILE_AFTER``; a kernel whose fastest compiled call is slower than its fastest interpreted call
    goes back to the interpreter."""
    heat = _heat(kernel)
    if heat.native is None and mode == "compiled":
        if heat.failed:
            return None
        heat.native = load(kernel, may_compile=True)
        heat.failed = heat.native is None
        if heat.failed:
            return None
    if mode == "compiled":
        return (heat.native.run(args, call_loc),)
    if heat.native is None:
        hot = heat.interp + heat.spent
        if heat.failed or not heat.pays or hot < LOOKUP_AFTER or (heat.looked and hot < COMPILE_AFTER):
            return None
        heat.looked = True
        heat.native = load(kernel, may_compile=hot >= COMPILE_AFTER)
        if heat.native is None:
            heat.failed = hot >= COMPILE_AFTER
            return None
    t0 = time.perf_counter()
    out = heat.native.run(args, call_loc)
    heat.native_best = min(heat.native_best, time.perf_counter() - t0)
    if heat.native_best > heat.best:  # measured: the interpreter runs this kernel faster
        heat.native, heat.failed = None, True
    return (out,)


def spent(kernel: Kernel, seconds: float) -> None:
    """Record an interpreted call of ``kernel`` (the policy compiles it once it has cost enough)."""
    heat = _heat(kernel)
    heat.spent += seconds
    heat.best = min(heat.best, seconds)


__all__ = ["COMPILE_AFTER", "MODES", "Native", "SimModeError", "cache_dir", "interp_seconds", "load", "run",
           "sim_mode", "spent"]
