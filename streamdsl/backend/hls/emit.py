"""Kernel IR -> Vitis HLS C++ statements.

Names come from the Python source, spelled for C++ by :mod:`.names` (one :class:`KernelNames` per
function: a keyword or macro gets a trailing underscore, a clash a number), loops are labelled, and pragmas come only
from IR attrs: ``pipeline`` (II), ``unroll`` (0 = full), ``partition`` and
``bind`` on buffers, ``bind_mul`` / ``bind_fadd`` / ``bind_fmul`` on loops (each integer
multiply of two values, float add/subtract or float multiply inside is named, ``_bm<n>`` /
``_bf<n>``, and given ``#pragma HLS bind_op``).  Expressions use the C++ templates of the op registry,
and every integer result narrower than ``int`` is cast back to its type, so
the code computes what the simulator computes (compile with ``-fwrapv``).
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

from ...errors import StreamDSLError
from ...ir.nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, Expr, For, If, Kernel, Load, Ref,
    Return, Select, Store, StreamMove, UnaryOp, Var, written_params,
)
from ...ir.deps import bind_class, bound_impl, loop_binds
from ...ir.ops import OPS, uses_fixed
from ...types import DType, FixedType, FloatType, IntType, TensorType, promote
from .names import Scope, renamed_comment


class HLSEmitError(StreamDSLError):
    """The kernel uses something the HLS backend cannot express."""

    kind = "HLS error"


_STORAGE = {"bram": "ram_2p impl=bram", "uram": "ram_2p impl=uram", "lutram": "ram_2p impl=lutram"}


def ctype(t: DType) -> str:
    if isinstance(t, IntType):
        if t.bits == 1 and not t.signed:
            return "bool"
        if t.bits in (8, 16, 32, 64):
            return f"{'' if t.signed else 'u'}int{t.bits}_t"
        return f"ap_{'' if t.signed else 'u'}int<{t.bits}>"
    if isinstance(t, FixedType):
        modes = "" if (t.quant, t.overflow) == ("trn", "wrap") else f", AP_{t.quant.upper()}, AP_{t.overflow.upper()}"
        return f"ap_{'' if t.signed else 'u'}fixed<{t.width}, {t.int_bits}{modes}>"
    if isinstance(t, FloatType) and t.name in ("f32", "f64"):
        return "float" if t.name == "f32" else "double"
    raise HLSEmitError(f"{t} is not supported by the HLS backend yet", hint="compute in f32 and cast at the edges")


def dims(t: TensorType) -> str:
    return "".join(f"[{d}]" for d in t.shape)


def literal(c: Const) -> str:
    t = c.dtype
    if isinstance(t, FloatType):
        v = float(c.value)
        suffix = "f" if t.name == "f32" else ""
        if math.isnan(v):
            return "NAN" if t.name == "f32" else "double(NAN)"
        if math.isinf(v):
            s = "INFINITY" if t.name == "f32" else "double(INFINITY)"
            return s if v > 0 else f"(-{s})"
        text = repr(v) if t.name == "f64" else f"{v:.9g}"
        if "." not in text and "e" not in text and "n" not in text:
            text += ".0"
        return f"{text}{suffix}" if not text.startswith("-") else f"({text}{suffix})"
    if isinstance(t, FixedType):
        return f"{ctype(t)}({float(c.value)!r})"
    v = int(c.value)
    if t.bits == 1 and not t.signed:
        return "true" if v else "false"
    if t.bits in (32,) and t.signed:
        return str(v) if v >= 0 else f"({v})"
    if v < 0:
        return f"{ctype(t)}({v}LL)" if v != -(1 << 63) else f"{ctype(t)}(-9223372036854775807LL - 1)"
    return f"{ctype(t)}({v}ULL)" if v > (1 << 62) else f"{ctype(t)}({v})"


def _c_int(t: DType) -> bool:
    """An integer the C++ holds in a <cstdint> type (C's promotions apply to it, not ap_int's)."""
    return isinstance(t, IntType) and (t.bits in (8, 16, 32, 64) or (t.bits == 1 and not t.signed))


def _compute_type(e: BinOp) -> DType | None:
    """The type the operands of integer ``e`` are converted to in C++ so that it computes exactly what the IR
    says (None: as they are).  An ap_int operand makes the vendor's header widen exactly; two <cstdint>
    operands are promoted to int, exact for a result of at most 31 bits (and 32 unsigned: modulo 2^32), so a
    wider result, or a floor division or modulo (``sd::floordiv`` takes one type), converts them first."""
    t, a, b = e.dtype, e.lhs.dtype, e.rhs.dtype
    if not (isinstance(t, IntType) and isinstance(a, IntType) and isinstance(b, IntType)):
        return None
    if e.op in ("floordiv", "mod"):
        return None if a == b == t else promote(promote(a, b), t)
    if e.op not in ("add", "sub", "mul", "bitand", "bitor", "bitxor") or t == a == b:
        return None
    if not (_c_int(a) and _c_int(b)):
        return None
    return t if t.bits > 32 or (t.bits == 32 and t.signed) else None


def _needs_cast(t: DType) -> bool:
    """Whether C's promotions could leave a result outside ``t`` (narrow or ap types)."""
    if isinstance(t, FixedType):
        return True
    if isinstance(t, IntType):
        return not (t.bits in (32, 64)) and not (t.bits == 1 and not t.signed)
    return False


class Emitter:
    def __init__(self, kernel: Kernel, names: KernelNames, top: bool = False):
        self.k = kernel
        self.top = top
        self.names = names
        self.out_names = dict(names.out_names)  # returned local tensor -> output parameter name
        self.lines: list[str] = []
        self.labels = Scope()  # labels have a namespace of their own (but macros still apply)
        self.bind: list[dict[str, str]] = []  # bind_op classes -> impls of the loops around (innermost last)
        self.pending: list[str] = []  # named multiplies of the statement being emitted, with their pragmas
        self.hoist = True  # off inside a select's branches and loop headers: they must not run unconditionally
        self.named = 0
        self.pipe_depth = 0  # pipelined or unrolled loops around the statement being emitted
        self.on_move = None  # a dataflow task's StreamMove: (statement, depth, inside a pipeline) -> emits it
        self.loop_labels: dict[int, str] = {}  # id of a For (or StreamMove) -> the label of its loop
        self.element_labels: dict[tuple[str, str], list[str]] = {}  # (init|load|copy, IR array) -> loop labels
        self.ir_name: dict[str, str] = {}  # C++ array name of an element loop -> the IR array it serves

    def label(self, base: str) -> str:
        """A loop label unique in this function (sibling loops may share a variable name)."""
        return self.labels.fresh(base)

    def c(self, name: str) -> str:
        """The C++ name of the kernel's variable ``name`` (an output parameter when it is written in place)."""
        return self.out_names.get(name) or self.names.scope[name]

    # ------------------------------------------------------------ expressions
    def expr(self, e: Expr) -> str:
        if isinstance(e, Const):
            return literal(e)
        if isinstance(e, (Var, Ref)):
            return self.c(e.name)
        if isinstance(e, Load):
            return self.c(e.name) + "".join(f"[{self.index(i)}]" for i in e.indices)
        if isinstance(e, BinOp):
            info = OPS[e.op]
            cpp = info.cpp_fixed if uses_fixed(e.op, (e.lhs.dtype, e.rhs.dtype), e.dtype) else info.cpp
            at = _compute_type(e)
            lhs, rhs = (self.expr(x) if at is None or x.dtype == at else f"{ctype(at)}({self.index(x)})"
                        for x in (e.lhs, e.rhs))
            text = self._typed(cpp.format(lhs, rhs), e.dtype, e.op)
            cls = bind_class(e) if self.hoist else None
            impl = bound_impl(self.bind, cls)
            if impl is not None:
                name = self.names.scope.fresh(f"_b{'m' if cls == 'mul' else 'f'}{self.named}")
                self.named += 1
                op = "mul" if cls == "mul" else {"add": "fadd", "sub": "fsub", "mul": "fmul"}[e.op]
                self.pending += [f"{ctype(e.dtype)} {name} = {text};",
                                 f"#pragma HLS bind_op variable={name} op={op} impl={impl}"]
                return name
            return text
        if isinstance(e, UnaryOp):
            return self._typed(OPS[e.op].cpp.format(self.expr(e.operand)), e.dtype, e.op)
        if isinstance(e, Call):
            return self._typed(OPS[e.fn].cpp.format(*(self.expr(a) for a in e.args)), e.dtype, e.fn)
        if isinstance(e, Cast):
            return self.cast(e)
        if isinstance(e, Select):
            cond, outer = self.expr(e.cond), self.hoist
            self.hoist = False
            try:
                return f"({cond} ? {self.expr(e.then)} : {self.expr(e.orelse)})"
            finally:
                self.hoist = outer
        raise AssertionError(type(e).__name__)

    def index(self, e: Expr) -> str:
        s = self.expr(e)
        return s[1:-1] if s.startswith("(") and s.endswith(")") and _balanced(s[1:-1]) else s

    def _typed(self, text: str, t: DType, op: str) -> str:
        if op in ("eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not"):
            return text
        return f"{ctype(t)}{text if text.startswith('(') else '(' + text + ')'}" if _needs_cast(t) else text

    def cast(self, e: Cast) -> str:
        src, dst, inner = e.operand.dtype, e.dtype, self.expr(e.operand)
        if isinstance(src, FixedType) and not isinstance(dst, FixedType):
            inner, src = f"({inner}).to_double()", FloatType("f64")
        if isinstance(dst, IntType) and isinstance(src, (FloatType, FixedType)):
            return f"sd::cast_int<{ctype(dst)}>({inner}, {dst.min}LL, {dst.max}ULL)"
        if isinstance(dst, IntType) and dst.bits == 1 and not dst.signed:
            return f"(({inner} & 1) != 0)"
        if isinstance(src, IntType) and not (src.bits in (8, 16, 32, 64) or src.bits == 1) and isinstance(dst, FloatType):
            return f"{ctype(dst)}(({inner}).to_int64())" if src.signed else f"{ctype(dst)}(({inner}).to_uint64())"
        return f"{ctype(dst)}({inner})"

    # ------------------------------------------------------------- statements
    def emit(self, line: str, depth: int) -> None:
        for p in self.pending:  # the multiplies the line uses, named first
            self.lines.append("  " * depth + p)
        self.pending = []
        self.lines.append("  " * depth + line)

    def body(self, stmts, depth: int) -> None:
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s, depth: int) -> None:
        if isinstance(s, For):
            self.open_for(s, depth)
            piped = "pipeline" in s.attrs or "unroll" in s.attrs
            self.pipe_depth += piped
            with self.binding(s):
                self.body(s.body, depth + 1)
            self.pipe_depth -= piped
            self.emit("}", depth)
        elif isinstance(s, StreamMove):
            self.on_move(s, depth, self.pipe_depth > 0)
        elif isinstance(s, Store):
            target = self.c(s.name)
            self.emit(f"{target}{''.join(f'[{self.index(i)}]' for i in s.indices)} = {self.index(s.value)};", depth)
        elif isinstance(s, Decl):
            self.emit(f"{ctype(s.dtype)} {self.c(s.name)} = {self.index(s.init)};", depth)
        elif isinstance(s, Assign):
            self.emit(f"{self.c(s.name)} = {self.index(s.value)};", depth)
        elif isinstance(s, Alloc):
            self.alloc(s, depth)
        elif isinstance(s, If):
            self.emit(f"if ({self.index(s.cond)}) {{", depth)
            self.body(s.then, depth + 1)
            if s.orelse:
                self.emit("} else {", depth)
                self.body(s.orelse, depth + 1)
            self.emit("}", depth)
        elif isinstance(s, CallKernel):
            callee = self.k.callee(s.callee)
            outs = [self.c(name) for name in s.outs]
            for py, name, t in zip(s.outs, outs, callee.results):
                if py in self.out_names:
                    continue  # a returned result: the callee writes the output parameter itself
                if isinstance(t, TensorType):
                    self.emit(f"{ctype(t.dtype)} {name}{dims(t)};", depth)
                else:
                    self.emit(f"{ctype(t)} {name};", depth)
            args = [self.expr(a) for a in s.args] + outs
            self.emit(f"{self.names.scope.parent[s.callee]}({', '.join(args)});", depth)
        elif isinstance(s, Return):
            self.ret(s, depth)
        else:
            raise AssertionError(type(s).__name__)

    @contextmanager
    def binding(self, s: For | None):
        """The ``bind_op`` classes loop ``s`` sets (``bind_mul`` ...) name the operators emitted inside it."""
        binds = loop_binds(s.attrs) if s is not None else {}
        if binds:
            self.bind.append(binds)
        try:
            yield
        finally:
            if binds:
                self.bind.pop()

    def open_for(self, s: For, depth: int) -> None:
        """The labelled loop header and its pragmas; the caller emits the body and the brace."""
        cmp, var = "<" if s.step > 0 else ">", self.c(s.var)
        inc = f"{var}++" if s.step == 1 else f"{var} += {s.step}"
        outer, self.hoist = self.hoist, False  # the bounds stay in the header
        start, stop = self.index(s.start), self.index(s.stop)
        self.hoist = outer
        label = self.label('L_' + var)
        self.loop_labels[id(s)] = label
        self.emit(f"SD_ENTRY({label});", depth)
        self.emit(f"{label}: for (int {var} = {start}; {var} {cmp} {stop}; {inc}) {{", depth)
        if "pipeline" in s.attrs:
            self.emit(f"#pragma HLS pipeline II={s.attrs.get('pipeline')}", depth + 1)
        if "unroll" in s.attrs:
            f = s.attrs.get("unroll")
            self.emit("#pragma HLS unroll" if f == 0 else f"#pragma HLS unroll factor={f}", depth + 1)
        self.emit(f"SD_TRIP({label});", depth + 1)

    def alloc(self, s: Alloc, depth: int) -> None:
        name = self.c(s.name)
        t = s.type
        rom = s.attrs.get("rom")
        if rom is not None:  # a constant tensor: a ROM, its values in the source
            values = ", ".join(literal(Const(v, t.dtype)) for v in rom)
            self.emit(f"static const {ctype(t.dtype)} {name}{dims(t)} = {{{values}}};", depth)
        elif s.name not in self.out_names:
            self.emit(f"{ctype(t.dtype)} {name}{dims(t)};", depth)
        for dim, kind, factor in s.attrs.get("partition", ()):
            self.emit(partition_pragma(name, dim, kind, factor), depth)
        if "bind" in s.attrs and s.attrs.get("bind") in _STORAGE:
            self.emit(f"#pragma HLS bind_storage variable={name} type={_STORAGE[s.attrs.get('bind')]}", depth)
        elif s.attrs.get("bind") == "reg" and (0, "complete", 0) not in s.attrs.get("partition", ()):
            self.emit(partition_pragma(name, 0, "complete", 0), depth)  # registers: one per element
        if s.init is not None:
            self.ir_name[name] = s.name
            self.fill(name, t, self.index(s.init), depth)

    def element_loop(self, dst: str, t: TensorType, value, what: str, depth: int) -> None:
        """``for each index: dst[index] = value(index)``, labelled ``L_<dst>_<what><d>``; outside a pipeline its
        innermost loop is pipelined at II 1 (the nest flattens into one pipeline: an element a cycle)."""
        ivars = [self.names.scope.fresh(f"{dst}_i{d}") for d in range(t.rank)]
        for d, (v, n) in enumerate(zip(ivars, t.shape)):
            label = self.label(f'L_{dst}_{what}{d}')
            self.element_labels.setdefault((what, self.ir_name.get(dst, dst)), []).append(label)
            self.emit(f"SD_ENTRY({label});", depth + d)
            self.emit(f"{label}: for (int {v} = 0; {v} < {n}; {v}++) {{", depth + d)
            if d == t.rank - 1 and self.pipe_depth == 0:
                self.emit("#pragma HLS pipeline II=1", depth + d + 1)
            self.emit(f"SD_TRIP({label});", depth + d + 1)
        sub = "".join(f"[{v}]" for v in ivars)
        self.emit(f"{dst}{sub} = {value(sub)};", depth + t.rank)
        for d in reversed(range(t.rank)):
            self.emit("}", depth + d)
        self.names.scope.release(*ivars)  # the loops' variables end with them

    def fill(self, name: str, t: TensorType, value: str, depth: int) -> None:
        self.element_loop(name, t, lambda _sub: value, "init", depth)

    def ret(self, s: Return, depth: int) -> None:
        for n, (v, t) in enumerate(zip(s.values, self.k.results)):
            out = self.names.results[n]
            if isinstance(t, TensorType):
                assert isinstance(v, Ref)
                if self.out_names.get(v.name) == out:
                    continue  # computed in place
                self.ir_name[out] = v.name
                self.element_loop(out, t, lambda sub, src=self.c(v.name): f"{src}{sub}", "copy", depth)
            else:
                self.emit(f"{out} = {self.index(v)};", depth)


def partition_pragma(name: str, dim: int, kind: str, factor: int) -> str:
    if kind == "complete":
        return f"#pragma HLS array_partition variable={name} type=complete dim={dim}"
    return f"#pragma HLS array_partition variable={name} type={kind} factor={factor} dim={dim}"


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


@dataclass
class KernelNames:
    """The C++ names of one kernel's function: its own (in the file's scope), its variables', its results'."""

    fn: str
    scope: Scope  # parameters, locals and loop variables, then the names the emitter draws
    results: list[str]  # the output parameters
    out_names: dict[str, str]  # a returned local written in place -> its output parameter


def _user_names(stmts, out: list[str]) -> list[str]:
    """The variables the statements declare, in program order (loop variables, locals, call results)."""
    for s in stmts:
        if isinstance(s, For):
            out.append(s.var)
            _user_names(s.body, out)
        elif isinstance(s, (Alloc, Decl)):
            out.append(s.name)
        elif isinstance(s, CallKernel):
            out += list(s.outs)
        elif isinstance(s, If):
            _user_names(s.then, out)
            _user_names(s.orelse, out)
    return out


def declare(scope: Scope, k: Kernel) -> None:
    """Give ``k``'s parameters, locals and loop variables their names in ``scope``, in program order."""
    for p in k.params:
        scope.user(p.name)
    for name in _user_names(k.body, []):
        scope.user(name)


def kernel_names(k: Kernel, file: Scope, top: bool = False) -> KernelNames:
    """Name ``k``'s function in ``file`` (the scope of the file's functions).

    A result is written through the returned local's own name when it is unique (``<name>_out`` when
    the top function keeps that local for its pragmas, since Vitis takes neither ``array_partition`` nor
    ``bind_storage`` on a port), else through ``out<n>``."""
    scope = Scope(file)
    declare(scope, k)
    ret = k.body[-1] if k.body and isinstance(k.body[-1], Return) else None
    params = {p.name for p in k.params}
    top_allocs = {s.name for s in k.body if isinstance(s, Alloc) and not (top and s.attrs)}
    top_allocs |= {o for s in k.body if isinstance(s, CallKernel) for o in s.outs}  # a callee writes it in place
    results, out_names = [], {}
    for n, t in enumerate(k.results):
        v = ret.values[n] if ret is not None else None
        others = [x.name for i, x in enumerate(ret.values) if i != n and isinstance(x, Ref)] if ret else []
        if isinstance(v, Ref) and v.name not in params and v.name not in others:
            kept = top and any(isinstance(s, Alloc) and s.name == v.name and s.attrs for s in k.body)
            name = scope.fresh(f"{scope[v.name]}_out") if kept else scope[v.name]
            if isinstance(t, TensorType) and v.name in top_allocs:
                out_names[v.name] = name
        else:
            name = scope.fresh(f"out{n}")
        results.append(name)
    return KernelNames(file[k.name], scope, results, out_names)


def signature(k: Kernel, names: KernelNames) -> str:
    """The C++ prototype of ``k``: its parameters, then one output parameter per result."""
    args = []
    written = written_params(k)
    for p in k.params:
        c = names.scope[p.name]
        if isinstance(p.type, TensorType):  # an in/out parameter is a plain array argument, written in place
            args.append(f"{'' if p.name in written else 'const '}{ctype(p.type.dtype)} {c}{dims(p.type)}")
        else:
            args.append(f"{ctype(p.type)} {c}")
    for name, t in zip(names.results, k.results):
        args.append(f"{ctype(t.dtype)} {name}{dims(t)}" if isinstance(t, TensorType) else f"{ctype(t)} &{name}")
    return f"void {names.fn}({', '.join(args)})"


def function(k: Kernel, names: KernelNames, top: bool = False, interface: list[str] | None = None,
             labels: dict | None = None) -> str:
    """The C++ definition of one kernel (callees are emitted separately), with a comment naming the
    Python names the C++ spells differently; ``labels`` (given) receives each IR loop's label (by id)."""
    proto = signature(k, names)
    em = Emitter(k, names, top)
    for line in interface or []:
        em.emit(line, 1)
    params = {p.name: p.type for p in k.params}
    for name, parts in k.attrs.get("partition", ()):
        target = em.c(name)
        if top:
            # an m_axi port cannot be partitioned: copy it into a partitioned local first
            src, target = target, names.scope.fresh(f"{target}_local")
            em.out_names[name] = target
            t = params[name]
            em.emit(f"{ctype(t.dtype)} {target}{dims(t)};", 1)
        for dim, kind, factor in parts:
            em.emit(partition_pragma(target, dim, kind, factor), 1)
        if top:
            em.ir_name[target] = name
            em.element_loop(target, t, lambda sub, src=src: f"{src}{sub}", "load", 1)
    em.body(k.body, 1)
    for name, _parts in k.attrs.get("partition", ()):  # an in/out port copied into a partitioned local: back out
        if top and name in written_params(k):
            em.element_loop(names.scope[name], params[name], lambda sub, src=em.out_names[name]: f"{src}{sub}",
                            "store", 1)
    if labels is not None:
        labels.update(em.loop_labels)
        labels.update({key: tuple(v) for key, v in em.element_labels.items()})  # (what, array) -> its labels
    head = renamed_comment([(k.name, names.fn)] + names.scope.renamed())
    user = k.attrs.get("user_name")
    if user:
        head = [f"// {user}, the kernel of this signature: one of several named {user} in this design"] + head
    return "\n".join(head + [proto + " {"] + em.lines) + "\n}\n"
