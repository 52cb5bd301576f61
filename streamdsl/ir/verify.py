"""The IR verifier: the invariants every pass may rely on.

``verify(kernel)`` checks scoping (every name defined once, used only where
visible), typing (operands exactly as :func:`streamdsl.ir.ops.type_rule`
demands, stores/assignments/returns of the declared types), read-only-ness
(scalar parameters, loop variables and constant tensors) and structure (one final ``return``; calls
match their callee).  The IR is fully explicit, so a pass that forgets a cast
or leaks a loop variable out of its loop is caught here rather than in the
simulator or the generated C++.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from ..errors import IRVerifyError, Loc
from ..types import DType, IntType, TensorType, index, u1
from .nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, Expr, For, If,
    Kernel, Load, Ref, Return, Select, Stmt, Store, UnaryOp, Var, written_params,
)
from .ops import BINARY, CALLS, OPS, UNARY, type_rule
from .printer import kernel_order, print_expr, print_type, stmt_line


def verify(kernel: Kernel) -> Kernel:
    """Check ``kernel`` and (once each) every kernel it calls; returns ``kernel``."""
    # kernel_order also rejects two different kernels sharing a name.
    for k in kernel_order(kernel):
        _Verifier(k).run()
    return kernel


@dataclass(frozen=True)
class _Sym:
    type: TensorType | DType
    kind: str  # param | alloc | rom | let | loop | out


def _n(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def _is_type(t: object) -> bool:
    return isinstance(t, DType) or (isinstance(t, TensorType) and isinstance(t.dtype, DType))


class _Verifier:
    def __init__(self, kernel: Kernel) -> None:
        self.k = kernel
        self.scopes: list[dict[str, _Sym]] = [{}]
        self.stmt: Stmt | None = None  # innermost statement being checked, for messages

    def fail(self, msg: str, node: object = None, hint: str | None = None) -> NoReturn:
        loc: Loc | None = getattr(node, "loc", None)
        if loc is None and self.stmt is not None:
            loc = self.stmt.loc
        where = f"in `{stmt_line(self.stmt)}` " if self.stmt is not None else ""
        raise IRVerifyError(f"{msg}\n    {where}(kernel '{self.k.name}')", loc or self.k.loc, hint)

    # ---- names
    def define(self, name: str, typ: TensorType | DType, kind: str, node: object) -> None:
        for scope in self.scopes:
            if name in scope:
                self.fail(f"'{name}' is defined twice", node, hint="names must be unique within a kernel's visible scopes")
        self.scopes[-1][name] = _Sym(typ, kind)

    def lookup(self, name: str, node: object) -> _Sym:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        self.fail(f"'{name}' is not defined here", node, hint="names defined in a loop or if body are not visible after it")

    def tensor(self, name: str, node: object) -> TensorType:
        sym = self.lookup(name, node)
        if not isinstance(sym.type, TensorType):
            self.fail(f"'{name}' is a scalar of type {sym.type}, not a tensor", node)
        return sym.type

    # ---- kernel
    def run(self) -> None:
        k = self.k
        for t in k.results:
            if not _is_type(t):
                self.fail(f"result type {t!r} is not a dtype or tensor type", k)
        for p in k.params:
            if not _is_type(p.type):
                self.fail(f"parameter '{p.name}' has type {p.type!r}, not a dtype or tensor type", p)
            self.define(p.name, p.type, "param", p)
        names = [c.name for c in k.callees]
        if len(set(names)) != len(names):
            self.fail("callees contain two kernels of the same name", k)
        if k.results and not (k.body and isinstance(k.body[-1], Return)):
            self.fail(
                f"kernel '{k.name}' has results but its body does not end with a return", k,
                hint="the last top-level statement must be `return ...`",
            )
        self.block(k.body, top=True)

    def block(self, body: tuple[Stmt, ...], top: bool = False) -> None:
        self.scopes.append({})
        outer = self.stmt
        try:
            for i, s in enumerate(body):
                self.stmt = s
                if isinstance(s, Return) and not (top and i == len(body) - 1):
                    self.fail("return must be the last statement of the kernel body", s)
                self.statement(s)
        finally:
            self.stmt = outer
            self.scopes.pop()

    # ---- statements
    def statement(self, s: Stmt) -> None:
        if isinstance(s, Alloc):
            if not isinstance(s.type, TensorType) or not _is_type(s.type):
                self.fail(f"alloc '{s.name}' needs a tensor type, got {s.type!r}", s)
            if s.init is not None:
                self.expect(self.expr(s.init), s.type.dtype, f"initial value of '{s.name}'", s.init)
            rom = s.attrs.get("rom")
            if rom is not None:
                self.rom(s, rom)
            self.define(s.name, s.type, "rom" if rom is not None else "alloc", s)
        elif isinstance(s, Decl):
            if not isinstance(s.dtype, DType):
                self.fail(f"let '{s.name}' needs a scalar dtype, got {s.dtype!r}", s)
            self.expect(self.expr(s.init), s.dtype, f"initial value of '{s.name}'", s.init)
            self.define(s.name, s.dtype, "let", s)
        elif isinstance(s, Assign):
            sym = self.lookup(s.name, s)
            if sym.kind == "loop":
                self.fail(f"loop variable '{s.name}' cannot be assigned", s)
            if sym.kind == "param":
                self.fail(f"parameter '{s.name}' is read-only", s, hint="copy it into a `let` first")
            if isinstance(sym.type, TensorType):
                self.fail(f"'{s.name}' is a tensor and cannot be assigned as a whole", s, hint="store to its elements")
            self.expect(self.expr(s.value), sym.type, f"value assigned to '{s.name}'", s.value)
        elif isinstance(s, Store):
            sym = self.lookup(s.name, s)
            if sym.kind == "loop":
                self.fail(f"loop variable '{s.name}' cannot be stored to", s)
            if sym.kind == "rom":
                self.fail(f"'{s.name}' is a constant tensor (a ROM); it cannot be stored to", s,
                          hint="copy it into a local tensor first")
            typ = self.tensor(s.name, s)
            self.indices(s.name, typ, s.indices, s)
            self.expect(self.expr(s.value), typ.dtype, f"value stored to '{s.name}'", s.value)
        elif isinstance(s, For):
            if type(s.step) is not int or s.step == 0:
                self.fail(f"loop step must be a non-zero int, got {s.step!r}", s)
            for bound, what in ((s.start, "start"), (s.stop, "stop")):
                if not isinstance(self.expr(bound), IntType):
                    self.fail(f"loop {what} has type {bound.dtype}; loop bounds must be integers", bound)
            self.scopes.append({})
            try:
                self.define(s.var, index, "loop", s)
                self.block(s.body)
            finally:
                self.scopes.pop()
        elif isinstance(s, If):
            self.expect(self.expr(s.cond), u1, "if condition", s.cond)
            self.block(s.then)
            self.block(s.orelse)
        elif isinstance(s, CallKernel):
            self.call(s)
        elif isinstance(s, Return):
            self.ret(s)
        else:
            self.fail(f"not an IR statement: {s!r}", s)

    def rom(self, s: Alloc, values) -> None:
        """A constant tensor: one value of its dtype per element, row-major."""
        if s.init is not None:
            self.fail(f"constant tensor '{s.name}' also has an initial value", s)
        if not isinstance(values, tuple) or len(values) != s.type.size:
            self.fail(f"constant tensor '{s.name}' needs {s.type.size} values, got "
                      f"{len(values) if isinstance(values, tuple) else type(values).__name__}", s)
        dt = s.type.dtype
        for v in values:
            ok = type(v) is int and dt.min <= v <= dt.max if isinstance(dt, IntType) else type(v) is float
            if not ok:
                self.fail(f"constant tensor '{s.name}' holds {v!r}, not a value of {dt}", s)

    def call(self, s: CallKernel) -> None:
        callee = next((c for c in self.k.callees if c.name == s.callee), None)
        if callee is None:
            self.fail(f"kernel '{s.callee}' is not among the callees of '{self.k.name}'", s,
                      hint="Kernel.callees must hold every kernel that the body calls")
        if len(s.args) != len(callee.params):
            self.fail(f"kernel '{s.callee}' takes {_n(len(callee.params), 'argument')}, got {len(s.args)}", s)
        written = written_params(callee)
        for i, (p, a) in enumerate(zip(callee.params, s.args)):
            self.value_of_type(a, p.type, f"argument {i + 1} of '{s.callee}' ({p.name})")
            if p.name in written and self.lookup(a.name, a).kind == "rom":
                self.fail(f"'{s.callee}' writes its parameter '{p.name}', but '{a.name}' is a constant tensor", s,
                          hint="pass a local copy")
        if len(s.outs) != len(callee.results):
            self.fail(f"kernel '{s.callee}' returns {_n(len(callee.results), 'value')}, but the call has {_n(len(s.outs), 'output')}", s)
        for o, t in zip(s.outs, callee.results):
            self.define(o, t, "out", s)

    def ret(self, s: Return) -> None:
        results = self.k.results
        if len(s.values) != len(results):
            self.fail(f"return gives {_n(len(s.values), 'value')}, but kernel '{self.k.name}' returns {len(results)}", s)
        for i, (v, t) in enumerate(zip(s.values, results)):
            self.value_of_type(v, t, f"return value {i + 1}")

    def value_of_type(self, e: Expr, want: TensorType | DType, what: str) -> None:
        """A call argument / returned value: a Ref for a tensor, a scalar expression otherwise."""
        if isinstance(want, TensorType):
            if not isinstance(e, Ref):
                self.fail(f"{what} must be a whole tensor of type {want}, got `{print_expr(e)}`", e)
            self.expr(e, allow_ref=True)
            if e.type != want:
                self.fail(f"{what} has type {e.type}, expected {want}", e)
        else:
            self.expect(self.expr(e), want, what, e)

    # ---- expressions
    def expect(self, got: DType, want: DType, what: str, node: object) -> None:
        if got != want:
            self.fail(f"{what} has type {got}, expected {want}", node, hint=f"insert an explicit Cast to {want}")

    def indices(self, name: str, typ: TensorType, idx: tuple[Expr, ...], node: object) -> None:
        if len(idx) != typ.rank:
            self.fail(f"tensor '{name}' has rank {typ.rank} but is indexed with {_n(len(idx), 'index', 'indices')}", node)
        for i, e in enumerate(idx):
            if not isinstance(self.expr(e), IntType):
                self.fail(f"index {i + 1} of '{name}' has type {e.dtype}; indices must be integers", e)

    def op(self, op: str, e: Expr, args: tuple[Expr, ...]) -> None:
        got = tuple(self.expr(a) for a in args)
        res = type_rule(op, got)
        if isinstance(res, str):
            self.fail(res, e)
        want, result = res
        shown = OPS[op].symbol or op
        if got != tuple(want):
            self.fail(f"operands of '{shown}' are {', '.join(map(str, got))}, but it needs {', '.join(map(str, want))}",
                      e, hint="insert explicit Casts (streamdsl.ir.build does this)")
        if e.dtype != result:
            self.fail(f"'{shown}' produces {result}, but the node says {e.dtype}", e)

    def expr(self, e: Expr, allow_ref: bool = False) -> DType:
        """Check ``e``; returns its dtype."""
        if isinstance(e, Const):
            if not isinstance(e.dtype, DType):
                self.fail(f"constant has type {e.dtype!r}, not a dtype", e)
            if isinstance(e.dtype, IntType):
                if type(e.value) is not int:
                    self.fail(f"constant {e.value!r} of {e.dtype} must hold a Python int", e)
                if not e.dtype.min <= e.value <= e.dtype.max:
                    self.fail(f"constant {e.value} does not fit in {e.dtype}", e)
            elif type(e.value) is not float:
                self.fail(f"constant {e.value!r} of {e.dtype} must hold a Python float", e)
        elif isinstance(e, Var):
            sym = self.lookup(e.name, e)
            if isinstance(sym.type, TensorType):
                self.fail(f"'{e.name}' is a tensor of type {sym.type} used as a scalar", e, hint="use a Load or a Ref")
            if e.dtype != sym.type:
                self.fail(f"Var '{e.name}' has dtype {e.dtype}, but '{e.name}' is {sym.type}", e)
        elif isinstance(e, Ref):
            if not allow_ref:
                self.fail(f"whole tensor '{e.name}' used as a value", e,
                          hint="whole tensors are only call arguments and return values")
            typ = self.tensor(e.name, e)
            if e.type != typ:
                self.fail(f"Ref '{e.name}' has type {print_type(e.type)}, but '{e.name}' is {typ}", e)
        elif isinstance(e, Load):
            typ = self.tensor(e.name, e)
            self.indices(e.name, typ, e.indices, e)
            if e.dtype != typ.dtype:
                self.fail(f"load of '{e.name}' has dtype {e.dtype}, but its elements are {typ.dtype}", e)
        elif isinstance(e, BinOp):
            if e.op not in BINARY:
                self.fail(f"unknown binary operator {e.op!r}", e)
            self.op(e.op, e, (e.lhs, e.rhs))
        elif isinstance(e, UnaryOp):
            if e.op not in UNARY:
                self.fail(f"unknown unary operator {e.op!r}", e)
            self.op(e.op, e, (e.operand,))
        elif isinstance(e, Call):
            if e.fn not in CALLS:
                self.fail(f"unknown builtin function {e.fn!r}", e)
            self.op(e.fn, e, e.args)
        elif isinstance(e, Cast):
            self.expr(e.operand)
            if not isinstance(e.dtype, DType):
                self.fail(f"cast to {e.dtype!r}, which is not a dtype", e)
        elif isinstance(e, Select):
            self.expect(self.expr(e.cond), u1, "select condition", e.cond)
            for branch in (e.then, e.orelse):
                self.expect(self.expr(branch), e.dtype, "select branch", branch)
        else:
            self.fail(f"not an IR expression: {e!r}", e)
        return e.dtype
