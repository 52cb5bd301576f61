"""Kernel IR printed as C++ for the simulator's compiled path (``native.py``).

Independent of the HLS emitter (``backend/hls``) on purpose: the simulator stays
a second opinion on the emitted C++.  The printed code computes what the
interpreter (``sim.py``) computes, bit for bit, with the helpers of
``native_include/streamdsl_native.h``:

* a value of an integer type is an ``int64_t`` (``uint64_t`` for u64) wrapped
  at its declared width after every operation (``numeric.compute_np``);
  f16/bf16/f32 compute in ``float`` and round back to their precision, f64 and
  fixed point in ``double``; arrays keep the interpreter's storage types (an
  f16 is its bits);
* statements run in program order, operands as NumPy orders them (indices
  are all evaluated before any is checked, the value of a store before its
  indices are checked); float expressions are printed as written and compiled
  without contraction (``-ffp-contract=off``) or fast-math;
* every index is checked against its dimension; a failure names the checked
  access (``Program.accesses``), whose ``loc`` is the user's line;
* exp, log, tanh, erf, sin, cos and ``**`` call the very NumPy/SciPy ufunc
  loops the interpreter calls (slots of ``native.LOOPS``).

A kernel that this printer cannot express exactly raises :class:`Unsupported`
and the simulator interprets it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import Loc
from ..ir.nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, Expr, For, If, Kernel, Load, Ref, Return,
    Select, Store, UnaryOp, Var, walk, written_params,
)
from ..ir.ops import uses_fixed
from ..types import DType, FixedType, FloatType, IntType, TensorType
from .clanes import LANES, print_lanes
from .clanes import plan as lanes
from .cnest import Form, Jam, Nest, batchable, interchange, jam

# NumPy/SciPy ufunc loops the compiled code calls (native.py binds them); the slot of (op, compute type).
LOOPS: tuple[tuple[str, str], ...] = tuple((op, t) for op in ("exp", "log", "tanh", "erf", "sin", "cos", "pow")
                                           for t in ("float", "double"))
SLOT = {key: i for i, key in enumerate(LOOPS)}
STRIP = 256  # iterations whose transcendentals are computed by one call of NumPy's loop


class Unsupported(Exception):
    """The kernel uses something the compiled path does not reproduce exactly (it is interpreted)."""


@dataclass
class Program:
    """A kernel's C++ source and what the loader needs to call it and to locate its errors."""

    source: str
    kernel: Kernel
    accesses: list[tuple[str, Loc | None]] = field(default_factory=list)  # checked access n: (array, loc)
    allocs: list[Alloc | None] = field(default_factory=list)  # local n's statement (None: not known)
    slots: set[int] = field(default_factory=set)  # LOOPS used


# ------------------------------------------------------------------ C types
def ctype(t: DType) -> str:
    """The C type of a value of ``t`` (NumPy's compute type)."""
    if isinstance(t, IntType):
        return "uint64_t" if (t.bits == 64 and not t.signed) else "int64_t"
    if isinstance(t, FloatType) and t.name != "f64":
        return "float"
    return "double"


def stype(t: DType) -> str:
    """The C type of an array element of ``t`` (the interpreter's storage type)."""
    if isinstance(t, IntType):
        return f"{'' if t.signed else 'u'}int{t.np.itemsize * 8}_t"
    if isinstance(t, FloatType):
        return {"f16": "uint16_t", "bf16": "float", "f32": "float", "f64": "double"}[t.name]
    return "double"


def _is_f16(t: DType) -> bool:
    return isinstance(t, FloatType) and t.name == "f16"


def load_value(t: DType, s: str) -> str:
    """A stored element ``s`` of ``t`` as a value."""
    return f"sdn::h2f({s})" if _is_f16(t) else f"(({ctype(t)}){s})"


def store_value(t: DType, v: str) -> str:
    """A value ``v`` of ``t`` as a stored element (exact: ``v`` is already of ``t``)."""
    return f"sdn::f2h({v})" if _is_f16(t) else f"(({stype(t)}){v})"


def fit(t: DType, raw: str) -> str:
    """A raw result in ``t``'s compute type brought to ``t`` (numeric.convert from the compute type)."""
    if isinstance(t, IntType):
        if t.bits == 64:
            return raw
        return f"sdn::{'ws' if t.signed else 'wu'}<{t.bits}>((uint64_t)({raw}))"
    if isinstance(t, FloatType):
        return {"f16": f"sdn::r16({raw})", "bf16": f"sdn::rbf16({raw})"}.get(t.name, raw)
    return _fix(t, raw)


def _fix(t: FixedType, raw: str) -> str:
    if (t.quant, t.overflow) != ("trn", "wrap"):  # sdn::fix floors and wraps (ap_fixed's defaults)
        raise Unsupported(f"fixed-point modes {t.quant}/{t.overflow}")
    return f"sdn::fix({raw}, {_dlit(2.0 ** t.frac_bits)}, {_dlit(2.0 ** t.width)}, {str(t.signed).lower()})"


def _dlit(x: float) -> str:
    if math.isfinite(x):
        return float(x).hex()
    return f"sdn::bitsd({np.float64(x).view(np.uint64)}ull)"


def _flit(x: np.float32) -> str:
    x = np.float32(x)
    if np.isfinite(x):
        return float(x).hex() + "f"
    return f"sdn::bitsf({x.view(np.uint32)}u)"


def const(value, t: DType) -> str:
    """A constant as the interpreter holds it (``np.asarray(value, dtype=t.np)``), as a C value of ``t``."""
    v = np.asarray(value, dtype=t.np)
    if isinstance(t, IntType):
        iv = int(v)
        if ctype(t) == "uint64_t":
            return f"((uint64_t){iv}ull)"
        return f"((int64_t){iv}ll)" if iv != -(1 << 63) else "((int64_t)(-9223372036854775807ll - 1))"
    if ctype(t) == "float":
        return _flit(np.float32(v))  # an f16 constant is exact in float
    return _dlit(float(v))


def convert(src: DType, dst: DType, v: str) -> str:
    """``numeric.convert`` of a value ``v`` of ``src`` (in its compute type) to ``dst``."""
    if isinstance(dst, IntType):
        if isinstance(src, IntType):
            return fit(dst, v) if dst.bits < 64 else f"(({ctype(dst)})({v}))"
        if dst.bits == 64 and not dst.signed:
            return f"sdn::f2u((double)({v}), {_dlit(float(dst.max))}, {dst.max}ull)"
        lo = "(-9223372036854775807ll - 1)" if dst.min == -(1 << 63) else f"{dst.min}ll"
        return f"sdn::f2s((double)({v}), {_dlit(float(dst.min))}, {_dlit(float(dst.max))}, {lo}, {dst.max}ll)"
    if isinstance(dst, FloatType):
        if dst.name == "f64":
            return f"((double)({v}))"
        if dst.name == "f32":
            return f"((float)({v}))"
        if dst.name == "f16":
            if ctype(src) == "double":
                return f"sdn::h2f(sdn::d2h({v}))"  # NumPy rounds a double to half directly
            return f"sdn::r16((float)({v}))"
        # bf16: an f32 rounds as it is; anything else goes through float64 then float32 first
        if isinstance(src, FloatType) and src.name in ("f32", "bf16"):
            return f"sdn::rbf16({v})"
        return f"sdn::rbf16((float)(double)({v}))"
    return _fix(dst, f"((double)({v}))")


# ------------------------------------------------------------------ printer
_ARITH = {"add": "+", "sub": "-", "mul": "*"}
_BITS = {"bitand": "&", "bitor": "|", "bitxor": "^"}
_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


class _Scope:
    def __init__(self, parent: "_Scope | None" = None):
        self.parent, self.names = parent, {}

    def find(self, name: str):
        s = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        raise Unsupported(f"name {name!r} is not in scope")

    def get(self, name: str):
        try:
            return self.find(name)
        except Unsupported:
            return None


@dataclass
class _Array:
    cname: str
    type: TensorType


class _Function:
    """One kernel as a C++ function ``void f(params..., outs...)``."""

    def __init__(self, prog: Program, kernel: Kernel, fname: str, callees: dict[Kernel, str]):
        self.prog, self.k, self.fname, self.callees = prog, kernel, fname, callees
        self.lines: list[str] = []
        self.hoisted: list[str] = []
        self.n = 0
        self.forms: dict[int, tuple[Form, ...]] | None = None  # inside a checked nest: its accesses' index forms
        self.arrays = None  # ... and its arrays' types by name
        self.batched: dict[int, str] = {}  # id() of a call computed for a strip -> its result for this iteration

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{re.sub(r'[^0-9A-Za-z_]', '_', base)}_{self.n}"

    # ---------------------------------------------------------------- top
    def print(self) -> str:
        k = self.k
        returns = [s for s in k.body if isinstance(s, Return)]
        if any(isinstance(n, Return) for s in k.body if not isinstance(s, Return) for n in walk(s)):
            raise Unsupported("a return inside a loop or branch")
        ret = returns[-1] if returns else None
        self.direct: dict[str, int] = {}  # top-level alloc -> the output it is built in
        if ret is not None:
            for i, v in enumerate(ret.values):
                if isinstance(v, Ref) and v.name not in self.direct and any(
                        isinstance(s, Alloc) and s.name == v.name for s in k.body):
                    self.direct[v.name] = i
        sig, scope = [], _Scope()
        written = set(written_params(k))
        for p in k.params:
            c = "p_" + self.fresh(p.name)
            if isinstance(p.type, TensorType):  # an in/out parameter is written where it lies (the caller copies)
                sig.append(f"{'' if p.name in written else 'const '}{stype(p.type.dtype)}* __restrict {c}")
                scope.names[p.name] = _Array(c, p.type)
            else:
                sig.append(f"{ctype(p.type)} {c}")
                scope.names[p.name] = c
        self.outs = []
        for i, t in enumerate(k.results):
            c = f"out_{i}"
            sig.append(f"{stype(t.dtype if isinstance(t, TensorType) else t)}* __restrict {c}")
            self.outs.append(c)
        self.block(k.body, scope, 1)
        head = f"static void {self.fname}({', '.join(sig)}) {{"
        return "\n".join([head, *self.hoisted, *self.lines, "}"])

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    # ---------------------------------------------------------- statements
    def block(self, stmts, scope: _Scope, depth: int) -> None:
        for s in stmts:
            self.stmt(s, scope, depth)

    def stmt(self, s, scope: _Scope, depth: int) -> None:
        if isinstance(s, For):
            if self.forms is not None:
                self.fast_loop(s, scope, depth)
            elif not self.versioned(s, scope, depth):
                self.plain_loop(s, scope, depth)
        elif isinstance(s, Store):
            arr = self.array(s.name, scope)
            val = self.fresh("st")
            self.emit(depth, f"{{ const {ctype(arr.type.dtype)} {val} = {self.expr(s.value, scope)};")
            self.emit(depth + 1, f"{arr.cname}[{self.index(arr, s.indices, s, scope)}] = "
                                 f"{store_value(arr.type.dtype, val)}; }}")
        elif isinstance(s, Decl):
            c = "v_" + self.fresh(s.name)
            self.emit(depth, f"{ctype(s.dtype)} {c} = {self.expr(s.init, scope)};")
            scope.names[s.name] = c
        elif isinstance(s, Assign):
            self.emit(depth, f"{self.var(s.name, scope)} = {self.expr(s.value, scope)};")
        elif isinstance(s, Alloc):
            self.alloc(s, scope, depth)
        elif isinstance(s, If):
            self.emit(depth, f"if ({self.expr(s.cond, scope)}) {{")
            self.block(s.then, _Scope(scope), depth + 1)
            if s.orelse:
                self.emit(depth, "} else {")
                self.block(s.orelse, _Scope(scope), depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, CallKernel):
            self.call(s, scope, depth)
        elif isinstance(s, Return):
            self.ret(s, scope, depth)
        else:
            raise Unsupported(f"statement {type(s).__name__}")

    def plain_loop(self, s: For, scope: _Scope, depth: int) -> None:
        calls = batchable(s, self.forms) if self.forms is not None else []
        if calls:
            self.batched_loop(s, calls, scope, depth)
            return
        lo, hi, v = self.fresh("lo"), self.fresh("hi"), "v_" + self.fresh(s.var)
        self.emit(depth, f"{{ const int64_t {lo} = (int64_t)({self.expr(s.start, scope)}); "
                         f"const int64_t {hi} = (int64_t)({self.expr(s.stop, scope)});")
        cmp = "<" if s.step > 0 else ">"
        self.emit(depth, f"for (int64_t {v} = {lo}; {v} {cmp} {hi}; {v} += {s.step}) {{")
        inner = _Scope(scope)
        inner.names[s.var] = v
        self.block(s.body, inner, depth + 1)
        self.emit(depth, "} }")

    # ------------------------------------------- nests checked before they run
    def versioned(self, s: For, scope: _Scope, depth: int) -> bool:
        """``if (every checkable access of the nest stays in bounds) { fast nest } else { nest as written }``."""
        local = {n.name: n.type for n in walk(s) if isinstance(n, Alloc)}

        def arrays(name: str) -> TensorType | None:
            a = scope.get(name)
            return local[name] if name in local else a.type if isinstance(a, _Array) else None

        nest = Nest(s, arrays)
        if not nest.forms:
            return False
        lines, ok = nest.check(lambda e: self.expr(e, scope), self.fresh)
        if ok == "false":
            return False
        self.emit(depth, f"{{  // the accesses of loop '{s.var}' checked once")
        for line in lines:
            self.emit(depth + 1, line)
        inner = depth + 1 if ok == "true" else depth + 2
        if ok != "true":
            self.emit(depth + 1, f"if ({ok}) {{")
        self.forms, self.arrays = nest.forms, arrays
        try:
            self.fast_loop(s, scope, inner)
        finally:
            self.forms = None
        if ok != "true":
            self.emit(depth + 1, "} else {")
            self.plain_loop(s, scope, depth + 2)
            self.emit(depth + 1, "}")
        self.emit(depth, "}")
        return True

    def fast_loop(self, s: For, scope: _Scope, depth: int) -> None:
        """A loop inside a checked nest: interchanged and jammed where every access under it was checked."""
        if all(id(n) in self.forms for n in walk(s) if isinstance(n, (Load, Store))):
            s = interchange(s, self.forms, self.arrays) or s
            plan = jam(s)
            if plan is not None:
                vector = lanes(plan, self.forms, self.arrays)
                if vector is not None:
                    self.jammed(vector.jam, scope, depth, lambda j, copies, d: print_lanes(self, vector, copies, d),
                                f", in {vector.groups} vector(s) of {LANES}")
                else:
                    self.jammed(plan, scope, depth)
                return
        self.plain_loop(s, scope, depth)

    def jammed(self, j: Jam, scope: _Scope, depth: int, nest=None, note: str = "") -> None:
        """``j.factor`` iterations side by side: each one's ``pre``, the nest (``nest(copies, depth)``; by default
        its innermost body once per copy), each one's ``post``; then the iterations left, one at a time."""
        s, u = j.loop, j.factor
        lo, hi, v = self.fresh("lo"), self.fresh("hi"), "v_" + self.fresh(s.var)
        cmp = "<" if s.step > 0 else ">"
        self.emit(depth, f"{{ const int64_t {lo} = (int64_t)({self.expr(s.start, scope)}); "
                         f"const int64_t {hi} = (int64_t)({self.expr(s.stop, scope)}); int64_t {v} = {lo};")
        self.emit(depth, f"for (; {v} + {(u - 1) * s.step} {cmp} {hi}; {v} += {u * s.step}) {{  // {u} jammed{note}")
        copies = []
        for c in range(u):
            copies.append(_Scope(scope))
            copies[-1].names[s.var] = f"({v} + {c * s.step})"
            self.block(j.pre, copies[-1], depth + 1)
        (nest or self.jammed_nest)(j, copies, depth + 1)
        for c in copies:
            self.block(j.post, c, depth + 1)
        self.emit(depth, "}")
        self.emit(depth, f"for (; {v} {cmp} {hi}; {v} += {s.step}) {{")
        rest = _Scope(scope)
        rest.names[s.var] = v
        self.block(s.body, rest, depth + 1)
        self.emit(depth, "} }")

    def jammed_nest(self, j: Jam, copies: list[_Scope], d: int) -> None:
        inner = copies
        for f in j.nest:
            flo, fhi, fv = self.fresh("lo"), self.fresh("hi"), "v_" + self.fresh(f.var)
            self.emit(d, f"{{ const int64_t {flo} = (int64_t)({self.expr(f.start, inner[0])}); "
                         f"const int64_t {fhi} = (int64_t)({self.expr(f.stop, inner[0])});")
            self.emit(d, f"for (int64_t {fv} = {flo}; {fv} {'<' if f.step > 0 else '>'} {fhi}; {fv} += {f.step}) {{")
            inner = [_Scope(c) for c in inner]
            for c in inner:
                c.names[f.var] = fv
            d += 1
        for c in inner:
            self.block(j.nest[-1].body, _Scope(c), d)
        for _ in j.nest:
            d -= 1
            self.emit(d, "} }")

    def batched_loop(self, s: For, calls, scope: _Scope, depth: int) -> None:
        """An innermost loop in strips of ``STRIP`` iterations: the arguments of ``calls`` first, then one call of
        NumPy's loop per transcendental on the strip, then the iterations with the results."""
        lo, hi, b, n = self.fresh("lo"), self.fresh("hi"), self.fresh("b"), self.fresh("n")
        step, cmp = s.step, "<" if s.step > 0 else ">"
        left = f"({hi} - {b} + {step - 1}) / {step}" if step > 0 else f"({b} - {hi} + {-step - 1}) / {-step}"
        self.emit(depth, f"{{ const int64_t {lo} = (int64_t)({self.expr(s.start, scope)}); "
                         f"const int64_t {hi} = (int64_t)({self.expr(s.stop, scope)});")
        self.emit(depth, f"for (int64_t {b} = {lo}; {b} {cmp} {hi}; {b} += {STRIP * step}) {{")
        self.emit(depth + 1, f"const int64_t {n} = {left} < {STRIP} ? {left} : {STRIP};")
        t, v = self.fresh("t"), "v_" + self.fresh(s.var)
        inner = _Scope(scope)
        inner.names[s.var] = v
        bufs = []
        for call, arg in calls:
            c = ctype(call.dtype)
            a, r = self.fresh("arg"), self.fresh("res")
            self.emit(depth + 1, f"{c} {a}[{STRIP}], {r}[{STRIP}];")
            bufs.append((call, arg, c, a, r))
        self.emit(depth + 1, f"for (int64_t {t} = 0; {t} < {n}; {t}++) {{ const int64_t {v} = {b} + {t} * {step};")
        for call, arg, c, a, r in bufs:
            x = self.expr(arg, inner)
            self.emit(depth + 2, f"{a}[{t}] = {'-' if call.fn == 'sigmoid' else ''}({x});")
        self.emit(depth + 1, "}")
        for call, arg, c, a, r in bufs:
            slot = SLOT[("exp" if call.fn == "sigmoid" else call.fn, c)]
            self.prog.slots.add(slot)
            self.emit(depth + 1, f"sdn::vcall1<{c}>({slot}, {a}, {r}, {n});")
            self.batched[id(call)] = f"{r}[{t}]"
        self.emit(depth + 1, f"for (int64_t {t} = 0; {t} < {n}; {t}++) {{ const int64_t {v} = {b} + {t} * {step};")
        self.block(s.body, _Scope(inner), depth + 2)
        self.emit(depth + 1, "}")
        for call, *_ in bufs:
            del self.batched[id(call)]
        self.emit(depth, "} }")

    def alloc(self, s: Alloc, scope: _Scope, depth: int) -> None:
        t, st = s.type, stype(s.type.dtype)
        if s.init is not None and s.init.dtype != t.dtype:
            raise Unsupported("an array initialised with a value of another type")
        if s.attrs.get("rom") is not None:
            raise Unsupported("a constant tensor (rom)")
        if s.name in self.direct and depth == 1:
            c = self.outs[self.direct[s.name]]
        else:
            c = "b_" + self.fresh(s.name)
            self.hoisted.append(f"  sdn::Buf<{st}> {c}_buf; {st}* __restrict {c} = nullptr;")
            self.emit(depth, f"{c} = {c}_buf.at({t.size}, {len(self.prog.allocs)});")
            self.prog.allocs.append(s)
        scope.names[s.name] = _Array(c, t)
        if s.init is None:
            self.emit(depth, f"memset({c}, 0, {t.size} * sizeof({st}));")
        else:
            self.emit(depth, f"sdn::fill<{st}>({c}, {t.size}, {store_value(t.dtype, self.expr(s.init, scope))});")

    def call(self, s: CallKernel, scope: _Scope, depth: int) -> None:
        callee = self.k.callee(s.callee)
        written, refs = set(written_params(callee)), [a.name for a in s.args if isinstance(a, Ref)]
        if any(isinstance(a, Ref) and p.name in written and refs.count(a.name) > 1
               for p, a in zip(callee.params, s.args)):
            raise Unsupported("an array passed twice to a callee that writes it")  # the interpreter writes a copy
        args = []
        for p, a in zip(callee.params, s.args):
            if isinstance(a, Ref):
                args.append(self.array(a.name, scope).cname)
            else:
                args.append(convert(a.dtype, p.type, self.expr(a, scope)) if a.dtype != p.type
                            else self.expr(a, scope))
        post = []
        for name, t in zip(s.outs, callee.results):
            if isinstance(t, TensorType):
                c = "b_" + self.fresh(name)
                self.hoisted.append(f"  sdn::Buf<{stype(t.dtype)}> {c}_buf; {stype(t.dtype)}* __restrict {c} = nullptr;")
                self.emit(depth, f"{c} = {c}_buf.at({t.size}, {len(self.prog.allocs)});")
                self.prog.allocs.append(made(callee, len(args) - len(callee.params)))
                scope.names[name] = _Array(c, t)
                args.append(c)
            else:
                c, raw = "v_" + self.fresh(name), self.fresh("r")
                self.emit(depth, f"{stype(t)} {raw};")
                args.append("&" + raw)
                post.append(f"{ctype(t)} {c} = {load_value(t, raw)};")
                scope.names[name] = c
        self.emit(depth, f"{self.callees[callee]}({', '.join(args)});")
        for line in post:
            self.emit(depth, line)

    def ret(self, s: Return, scope: _Scope, depth: int) -> None:
        for i, v in enumerate(s.values):
            out = self.outs[i]
            if isinstance(v, Ref):
                if self.direct.get(v.name) == i:
                    continue
                arr = self.array(v.name, scope)
                self.emit(depth, f"memcpy({out}, {arr.cname}, {arr.type.size} * sizeof({stype(arr.type.dtype)}));")
            else:
                self.emit(depth, f"*{out} = {store_value(v.dtype, self.expr(v, scope))};")
        self.emit(depth, "return;")

    # --------------------------------------------------------- expressions
    def array(self, name: str, scope: _Scope) -> _Array:
        a = scope.find(name)
        if not isinstance(a, _Array):
            raise Unsupported(f"{name!r} is not an array")
        return a

    def var(self, name: str, scope: _Scope) -> str:
        v = scope.find(name)
        if isinstance(v, _Array):
            raise Unsupported(f"{name!r} is an array")
        return v

    def index(self, arr: _Array, indices, node, scope: _Scope) -> str:
        """The flat offset of ``arr[indices]``: every index evaluated, then each checked (``sim._check_bounds``)."""
        shape = arr.type.shape
        if len(indices) != len(shape):
            raise Unsupported("an access with the wrong number of indices")
        if self.forms is not None and id(node) in self.forms:  # checked before the nest: its exact value
            flat = ""
            for f, d in zip(self.forms[id(node)], shape):
                flat = f"({flat}) * {d} + {self.form(f, scope)}" if flat else self.form(f, scope)
            return flat or "0"
        nid = len(self.prog.accesses)
        self.prog.accesses.append((node.name, node.loc))
        names = [self.fresh("i") for _ in indices]
        parts = [f"const int64_t {n} = (int64_t)({self.expr(e, scope)});" for n, e in zip(names, indices)]
        parts += [f"sdn::ck({n}, {d}, {nid}, {k});" for k, (n, d) in enumerate(zip(names, shape))]
        flat = names[0] if names else "0"
        for n, d in zip(names[1:], shape[1:]):
            flat = f"({flat}) * {d} + {n}"
        return f"({{ {' '.join(parts)} {flat}; }})"

    def form(self, f: Form, scope: _Scope) -> str:
        """An index checked before its nest, computed in int64 (it neither wraps nor leaves its bounds)."""
        terms = [(self.var(k, scope) if isinstance(k, str) else self.expr(k, scope), c) for k, c in f.terms]
        terms += [(self.expr(e, scope), c) for e, c in f.fixed]
        parts = [f"(int64_t)({t})" if c == 1 else f"{c} * (int64_t)({t})" for t, c in terms]
        return "(" + " + ".join(parts + ([f"(int64_t){f.const}"] if f.const or not parts else [])) + ")"

    def expr(self, e: Expr, scope: _Scope) -> str:
        if isinstance(e, Const):
            return const(e.value, e.dtype)
        if isinstance(e, Var):
            return self.var(e.name, scope)
        if isinstance(e, Load):
            arr = self.array(e.name, scope)
            return load_value(arr.type.dtype, f"{arr.cname}[{self.index(arr, e.indices, e, scope)}]")
        if isinstance(e, Cast):
            return convert(e.operand.dtype, e.dtype, self.expr(e.operand, scope))
        if isinstance(e, Select):
            return f"(({self.expr(e.cond, scope)}) ? ({self.expr(e.then, scope)}) : ({self.expr(e.orelse, scope)}))"
        if isinstance(e, BinOp):
            return self.binop(e, scope)
        if isinstance(e, UnaryOp):
            return self.unary(e, scope)
        if isinstance(e, Call):
            return self.callop(e, scope)
        raise Unsupported(f"expression {type(e).__name__}")

    def binop(self, e: BinOp, scope: _Scope) -> str:
        op, lt, rt = e.op, e.lhs.dtype, e.rhs.dtype
        a, b = self.expr(e.lhs, scope), self.expr(e.rhs, scope)
        if uses_fixed(op, (lt, rt), e.dtype):
            raise Unsupported(f"{op} on fixed-point bits")  # ap_fixed's truncating division and shifts
        if op in ("and", "or"):
            return f"((int64_t)(({a}) {'&&' if op == 'and' else '||'} ({b})))"
        if op in ("shl", "shr"):
            if not isinstance(lt, IntType):
                raise Unsupported("a shift of a non-integer")
            return fit(e.dtype, f"sdn::{op}(({ctype(lt)})({a}), (int64_t)({b}))")
        if ctype(lt) != ctype(rt):
            raise Unsupported(f"{op} of {lt} and {rt}")
        c = ctype(lt)
        if op in _CMP:
            return f"((int64_t)(({a}) {_CMP[op]} ({b})))"
        if op in _ARITH:
            if c == "int64_t":
                raw = f"(int64_t)((uint64_t)({a}) {_ARITH[op]} (uint64_t)({b}))"
            else:
                raw = f"(({a}) {_ARITH[op]} ({b}))"
        elif op in _BITS:
            raw = f"(({a}) {_BITS[op]} ({b}))"
        elif op == "div":
            if isinstance(lt, IntType):
                raise Unsupported("integer true division")
            raw = f"(({a}) / ({b}))"
        elif op in ("floordiv", "mod"):
            if not isinstance(lt, IntType):
                raise Unsupported(f"{op} of {lt}")
            raw = f"sdn::{'fdiv' if op == 'floordiv' else 'fmod_'}(({c})({a}), ({c})({b}))"
        elif op == "pow":
            raw = self.loop("pow", c, a, b)
        elif op in ("max", "min"):
            raw = self.minmax(op, c, a, b)
        else:
            raise Unsupported(f"operator {op}")
        return fit(e.dtype, raw) if _result_is(e.dtype, lt) else convert(lt, e.dtype, raw)

    def minmax(self, op: str, c: str, a: str, b: str) -> str:
        if c in ("float", "double"):
            return f"sdn::f{op}_<{c}>({a}, {b})"
        return f"sdn::i{op}<{c}>({a}, {b})"

    def loop(self, op: str, c: str, *args: str) -> str:
        slot = SLOT[(op, c)]
        self.prog.slots.add(slot)
        return f"sdn::call{len(args)}<{c}>({slot}, {', '.join(args)})"

    def unary(self, e: UnaryOp, scope: _Scope) -> str:
        a, t = self.expr(e.operand, scope), e.operand.dtype
        if e.op == "not":
            return f"((int64_t)!({a}))"
        if e.op == "neg":
            raw = f"(int64_t)(0 - (uint64_t)({a}))" if ctype(t) == "int64_t" else f"(-({a}))"
        elif e.op == "invert":
            if not isinstance(t, IntType):
                raise Unsupported("~ of a non-integer")
            raw = f"(~({a}))"
        else:
            raise Unsupported(f"unary {e.op}")
        return fit(e.dtype, raw)

    def callop(self, e: Call, scope: _Scope) -> str:
        t = e.args[0].dtype
        c = ctype(t)
        if id(e) in self.batched:  # computed for the whole strip (batched_loop): NumPy's loop's result
            done = self.batched[id(e)]
            raw = f"(({c})1 / (({c})1 + {done}))" if e.fn == "sigmoid" else done
            return fit(e.dtype, raw) if _result_is(e.dtype, t) else convert(t, e.dtype, raw)
        args = [self.expr(a, scope) for a in e.args]
        if any(ctype(a.dtype) != c for a in e.args):
            raise Unsupported(f"{e.fn} of mixed types")
        fn = e.fn
        if fn in ("exp", "log", "tanh", "erf", "sin", "cos"):
            if c not in ("float", "double"):
                raise Unsupported(f"{fn} of {t}")
            raw = self.loop(fn, c, args[0])
        elif fn == "sqrt":
            raw = f"{'sqrtf' if c == 'float' else 'sqrt'}({args[0]})"
        elif fn == "rsqrt":
            raw = f"(({c})1 / {'sqrtf' if c == 'float' else 'sqrt'}({args[0]}))"
        elif fn == "sigmoid":
            if c not in ("float", "double"):
                raise Unsupported(f"sigmoid of {t}")
            raw = f"(({c})1 / (({c})1 + {self.loop('exp', c, f'(-({args[0]}))')}))"
        elif fn == "abs":
            if c in ("float", "double"):
                raw = f"{'fabsf' if c == 'float' else 'fabs'}({args[0]})"
            elif c == "int64_t":
                v = self.fresh("a")
                raw = f"({{ const int64_t {v} = {args[0]}; {v} < 0 ? (int64_t)(0 - (uint64_t){v}) : {v}; }})"
            else:
                raw = args[0]
        elif fn in ("max", "min"):
            raw = self.minmax(fn, c, *args)
        else:
            raise Unsupported(f"builtin {fn}")
        return fit(e.dtype, raw) if _result_is(e.dtype, t) else convert(t, e.dtype, raw)


def made(k: Kernel, i: int) -> Alloc | None:
    """The statement that makes result ``i`` of ``k`` (a local returned as it is), if there is one."""
    ret = next((s for s in reversed(k.body) if isinstance(s, Return)), None)
    v = ret.values[i] if ret is not None and i < len(ret.values) else None
    return next((s for s in k.body if isinstance(s, Alloc) and isinstance(v, Ref) and s.name == v.name), None)



def _result_is(result: DType, operand: DType) -> bool:
    """Whether an op's raw value is already in ``result``'s compute type (then it only needs fitting)."""
    return ctype(result) == ctype(operand) and type(result) is type(operand)


def print_program(kernel: Kernel) -> Program:
    """The C++ translation unit of ``kernel`` (its callees first) with the exported ``sd_kernel`` entry."""
    prog = Program("", kernel)
    names: dict[Kernel, str] = {}  # callees first, each once
    funcs: list[str] = []

    def visit(k: Kernel) -> None:
        for s in (n for st in k.body for n in walk(st)):
            if isinstance(s, CallKernel):
                ck = k.callee(s.callee)
                if ck not in names:
                    visit(ck)
                    names[ck] = f"k{len(names) + 1}_{re.sub(r'[^0-9A-Za-z_]', '_', ck.name)}"
                    funcs.append(_Function(prog, ck, names[ck], names).print())

    visit(kernel)
    funcs.append(_Function(prog, kernel, "k0_main", names).print())
    n_in, n_out = len(kernel.params), len(kernel.results)
    unpack = []
    for i, p in enumerate(kernel.params):
        if isinstance(p.type, TensorType):
            unpack.append(f"({stype(p.type.dtype)}*)a[{i}]")
        else:
            unpack.append(load_value(p.type, f"*(const {stype(p.type)}*)a[{i}]"))
    for i, t in enumerate(kernel.results):
        unpack.append(f"({stype(t.dtype if isinstance(t, TensorType) else t)}*)a[{n_in + i}]")
    entry = [
        f'extern "C" int sd_kernel(void** a, int64_t* err) {{  // {n_in} inputs, then {n_out} outputs',
        "  try {",
        f"    k0_main({', '.join(unpack)});",
        "  } catch (const sdn::Oob& e) {",
        "    err[0] = e.node; err[1] = e.dim; err[2] = e.index; err[3] = e.size;",
        "    return 1;",
        "  }",
        "  return 0;",
        "}",
    ]
    prog.source = "\n\n".join(['#include "streamdsl_native.h"', *funcs, "\n".join(entry)]) + "\n"
    return prog


__all__ = ["LOOPS", "Program", "Unsupported", "ctype", "print_program", "stype"]
