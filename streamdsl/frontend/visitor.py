"""Python AST -> loop IR: one whitelisting visitor.

Each supported construct has a ``visit_X``; :meth:`KernelVisitor.generic_visit`
refuses everything else with the user's line.  Types come from the typed
builders in :mod:`streamdsl.ir.build`, so this file only resolves names and
shapes the loop structure.
"""
from __future__ import annotations

import ast
import builtins as _py
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import KernelSyntaxError, KernelTypeError, Loc, ShapeError
from ..ir import build as B
from ..ir.naming import unique_kernel_names
from ..ir.nodes import (
    Alloc, Assign, Attrs, CallKernel, Const, Decl, Expr, For, If, Kernel, Load, Param, Ref, Return,
    Stmt, Store, Var, written_params,
)
from ..types import DType, IntType, TensorType, f64, from_numpy, i64, index, u1
from .source import Source

_BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
    ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "bitand", ast.BitOr: "bitor", ast.BitXor: "bitxor",
    ast.LShift: "shl", ast.RShift: "shr",
}
ROM_MAX = 1 << 20  # elements of a constant tensor taken from the enclosing scope
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_PY_BUILTINS = {_py.min: "min", _py.max: "max", _py.abs: "abs"}
_UNSUPPORTED = {
    ast.While: ("while loops are not supported in a kernel", "use a for loop with a constant bound"),
    ast.Try: ("try/except is not supported in a kernel", "kernels are hardware; check inputs before calling"),
    ast.With: ("'with' is not supported in a kernel", "remove the with block; kernels have no resources to manage"),
    ast.Lambda: ("lambdas are not supported in a kernel", "write another @sd.kernel"),
    ast.ListComp: ("list comprehensions are not supported in a kernel", "allocate a tensor and fill it in a loop"),
    ast.List: ("lists are not supported in a kernel", "allocate a tensor: X: f32[N] = 0.0"),
    ast.Dict: ("dicts are not supported in a kernel", "use tensors and scalars"),
    ast.FunctionDef: ("nested functions are not supported in a kernel", "define another @sd.kernel at module level"),
    ast.Global: ("'global' is not supported in a kernel", "module-level numbers can be read without it; outputs are returned"),
    ast.Nonlocal: ("'nonlocal' is not supported in a kernel", "closure numbers can be read without it; outputs are returned"),
    ast.Break: ("'break' is not supported in a kernel", "loops have fixed trip counts in hardware; guard the body with if"),
    ast.Continue: ("'continue' is not supported in a kernel", "guard the rest of the body with if"),
    ast.Import: ("imports are not allowed inside a kernel", "import at module level"),
    ast.ImportFrom: ("imports are not allowed inside a kernel", "import at module level"),
    ast.Delete: ("'del' is not supported in a kernel", "kernel variables live until the end of the kernel"),
    ast.Raise: ("'raise' is not supported in a kernel", "check inputs before calling the kernel"),
    ast.Assert: ("'assert' is not supported in a kernel", "check inputs before calling the kernel"),
    ast.JoinedStr: ("f-strings are not supported in a kernel", "kernels compute on numbers only"),
    ast.Starred: ("starred expressions are not supported in a kernel", "pass every argument explicitly"),
}


@dataclass(frozen=True)
class Lit:
    """A compile-time Python number, typed only when it meets an operand (weak literal)."""

    value: int | float | bool


@dataclass(frozen=True)
class TensorName:
    name: str
    type: TensorType


@dataclass
class Symbol:
    name: str
    type: Any  # DType or TensorType
    kind: str  # "param", "local", "loop", "out", "rom" (a NumPy array of the enclosing scope)


class KernelVisitor(ast.NodeVisitor):
    def __init__(self, src: Source, env: dict[str, Any], resolve_kernel, name: str | None = None):
        self.src = src
        self.name = name or src.tree.name  # the kernel's name: its function's __name__
        self.env = env
        self.resolve_kernel = resolve_kernel  # object -> Kernel IR or None
        self.scopes: list[dict[str, Symbol]] = [{}]
        self.callees: dict[str, Kernel] = {}  # provisional name -> callee (distinct kernels may share a name)
        self.roms: list[Alloc] = []  # NumPy arrays of the enclosing scope used as constant tensors
        self.results: tuple = ()
        self.fresh_outs = 0
        self.pending: list[Stmt] = []  # kernel calls used as values in the statement being visited

    # ------------------------------------------------------------ helpers
    def loc(self, node) -> Loc:
        return self.src.loc(node)

    def error(self, node, message, hint=None, cls=KernelSyntaxError, undefined=False):
        """Raise ``cls`` at ``node``; ``undefined``: a name the kernel's scope does not hold yet (it may be
        defined later in the module, so ``@sd.kernel`` reports it at the first use instead)."""
        err = cls(message, self.loc(node), hint=hint)
        err.undefined_name = undefined
        raise err

    def lookup(self, name: str) -> Symbol | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def define(self, node, name: str, type_, kind: str) -> None:
        if self.lookup(name) is not None:
            prev = self.lookup(name)
            self.error(node, f"'{name}' is already defined (as a {prev.kind} of type {prev.type})",
                       hint="choose a new name; kernel variables have one type")
        self.scopes[-1][name] = Symbol(name, type_, kind)

    def evaluate(self, node: ast.expr) -> Any:
        """Evaluate a compile-time expression (an annotation, a bound) in the closure."""
        try:
            return eval(compile(ast.Expression(node), self.src.file, "eval"), dict(self.env))  # noqa: S307
        except (KernelSyntaxError, KernelTypeError, ShapeError) as exc:
            failure: Exception = exc
        except Exception as exc:  # the user's expression failed: show it at their line
            failure = exc
        if isinstance(failure, (KernelSyntaxError, KernelTypeError, ShapeError)):
            raise type(failure)(failure.message, self.loc(node), failure.hint) from None
        self.error(node, f"cannot evaluate '{ast.unparse(node)}' when the kernel is defined: {failure}",
                   hint="types and shapes must be built from constants visible to the kernel",
                   undefined=isinstance(failure, NameError))

    def annotation(self, node):
        """An annotation's expression; a string annotation ("sd.f32[N]") is parsed, keeping its location."""
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return node
        try:
            expr = ast.parse(node.value.strip(), mode="eval").body
        except SyntaxError:
            self.error(node, f"annotation {node.value!r} is not a Python expression", cls=KernelTypeError,
                       hint="annotate with streamdsl types, e.g. A: f32[M, N]")
        for n in ast.walk(expr):
            ast.copy_location(n, node)
            n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
        return expr

    def as_type(self, node, scalar_only=False):
        node = self.annotation(node)
        t = self.evaluate(node)
        if isinstance(t, DType) or (isinstance(t, TensorType) and not scalar_only):
            return t
        want = "a scalar type such as sd.i32" if scalar_only else "a type such as sd.f32[64, 128] or sd.i32"
        self.error(node, f"'{ast.unparse(node)}' is not {want}", cls=KernelTypeError,
                   hint="annotate with streamdsl types, e.g. A: f32[M, N]")

    def expr(self, node) -> Expr:
        """Visit ``node`` as a typed scalar expression (literals get their default type)."""
        v = self.visit(node)
        if isinstance(v, Lit):
            return B.const(v.value, B.literal_type(v.value), self.loc(node))
        if isinstance(v, TensorName):
            self.error(node, f"tensor '{v.name}' ({v.type}) used where a scalar is expected",
                       hint=f"index it: {v.name}[{', '.join(f'i{d}' for d in range(v.type.rank))}]",
                       cls=ShapeError)
        if not isinstance(v, Expr):
            self.error(node, f"'{ast.unparse(node)}' is not a value a kernel can compute with",
                       hint="kernels compute on scalars, tensor elements and compile-time numbers")
        return v

    def pair(self, a, b, node):
        """Type two operands, letting a literal follow the other operand's type."""
        if isinstance(a, Lit) and isinstance(b, Lit):
            raise AssertionError("folded by caller")
        if isinstance(a, Lit):
            b = self._typed(b, node)
            return B.weak_literal(a.value, b.dtype, self.loc(node)), b
        if isinstance(b, Lit):
            a = self._typed(a, node)
            return a, B.weak_literal(b.value, a.dtype, self.loc(node))
        return self._typed(a, node), self._typed(b, node)

    def _typed(self, v, node):
        if isinstance(v, Expr):
            return v
        if isinstance(v, TensorName):
            self.error(node, f"tensor '{v.name}' used as a scalar operand", cls=ShapeError,
                       hint=f"index it: {v.name}[...]")
        self.error(node, f"'{ast.unparse(node)}' is not a kernel value",
                   hint="kernels compute on scalars, tensor elements and compile-time numbers")

    def body(self, stmts) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        outer, self.pending = self.pending, []  # calls hoisted out of a compound statement's header stay with it
        try:
            for s in stmts:
                r = self.visit(s)
                out.extend(self.pending)  # kernel calls used as values run just before their statement
                self.pending = []
                if r is None:
                    continue
                out.extend(r if isinstance(r, (list, tuple)) else [r])
        finally:
            self.pending = outer
        return tuple(out)

    def scoped_body(self, stmts) -> tuple[Stmt, ...]:
        self.scopes.append({})
        try:
            return self.body(stmts)
        finally:
            self.scopes.pop()

    # ------------------------------------------------------------ kernel
    def kernel(self) -> Kernel:
        f = self.src.tree
        a = f.args
        for bad, what in ((a.vararg, "*args"), (a.kwarg, "**kwargs")):
            if bad is not None:
                self.error(bad, f"{what} is not supported in a kernel signature", hint="list every parameter")
        if a.kwonlyargs or a.posonlyargs or a.defaults or a.kw_defaults:
            node = (a.kwonlyargs or a.posonlyargs or a.defaults or a.kw_defaults)[0]
            self.error(node, "kernel parameters are positional without defaults", hint="def k(A: f32[N], n: i32)")
        params = []
        for arg in a.args:
            if arg.annotation is None:
                self.error(arg, f"parameter '{arg.arg}' needs a type annotation", cls=KernelTypeError,
                           hint=f"write {arg.arg}: f32[64, 128] or {arg.arg}: i32")
            t = self.as_type(arg.annotation)
            self.define(arg, arg.arg, t, "param")
            params.append(Param(arg.arg, t, self.loc(arg)))
        if f.returns is None:
            self.error(f, f"kernel '{f.name}' needs a return annotation", cls=KernelTypeError,
                       hint="write -> f32[M, N], -> (f32[M], f32[N]) or -> None")
        self.results = self._result_types(f.returns)
        body = list(self.body(f.body))
        if self.results and not (body and isinstance(body[-1], Return)):
            self.error(f, f"kernel '{f.name}' must end with a return of {', '.join(map(str, self.results))}",
                       cls=KernelTypeError, hint="return the output tensors as the last statement")
        k = Kernel(self.name, tuple(params), self.results, tuple(self.roms) + tuple(body),
                   callees=tuple(self.callees.values()), loc=self.loc(f))
        return unique_kernel_names(k, dict(self.callees))

    def _result_types(self, node) -> tuple:
        node = self.annotation(node)
        if isinstance(node, ast.Constant) and node.value is None:
            return ()
        if isinstance(node, ast.Tuple):
            return tuple(self.as_type(e) for e in node.elts)
        t = self.evaluate(node)
        if isinstance(t, tuple):
            if not all(isinstance(x, (DType, TensorType)) for x in t):
                self.error(node, "return annotation must list types", cls=KernelTypeError,
                           hint="write -> (f32[M], f32[N])")
            return t
        return (self.as_type(node),)

    # ------------------------------------------------------------ statements
    def generic_visit(self, node):
        for cls, (msg, hint) in _UNSUPPORTED.items():
            if isinstance(node, cls):
                self.error(node, msg, hint=hint)
        self.error(node, f"{type(node).__name__} ('{ast.unparse(node)[:40]}') is not supported in a kernel",
                   hint="see the list of supported Python in the streamdsl README")

    def visit_Pass(self, node):
        return None

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # docstring
        if isinstance(node.value, ast.Call):
            kern = self._callee(node.value)
            if kern is not None:
                return self._call_kernel(node.value, kern, [])
            self.visit(node.value)  # refuses print(...), np.exp(...), ... with their own message
        self.error(node, "an expression statement has no effect in a kernel",
                   hint="assign the value: x = ..., or store it into a tensor")

    def visit_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            self.error(node.target, "only a plain name can be declared with a type", hint="C: f32[M, N] = 0.0")
        name = node.target.id
        t = self.as_type(node.annotation)
        loc = self.loc(node)
        if isinstance(t, TensorType):
            init = None
            if node.value is not None:
                v = self.visit(node.value)
                if not isinstance(v, Lit):
                    self.error(node.value, "a local tensor is initialised with a constant",
                               hint=f"write {name}: {t} = 0.0 and fill it in a loop")
                init = B.const(v.value, t.dtype, self.loc(node.value))
            self.define(node, name, t, "local")
            return Alloc(name, t, init, loc=loc)
        value = B.const(0, t, loc) if node.value is None else self.coerce(node.value, t)
        self.define(node, name, t, "local")
        return Decl(name, t, value, loc)

    def coerce(self, node, dtype: DType) -> Expr:
        """The value of ``node`` converted to ``dtype`` (assignment conversion, as in C)."""
        v = self.visit(node)
        if isinstance(v, Lit):
            value = v.value
            if isinstance(dtype, IntType) and isinstance(value, float):
                if not float(value).is_integer():
                    self.error(node, f"float {value!r} assigned to {dtype}", cls=KernelTypeError,
                               hint="write sd.cast(x, dtype) to convert explicitly")
                value = int(value)
            return B.const(value, dtype, self.loc(node))
        return B.cast(self._typed(v, node), dtype, self.loc(node))

    def visit_Assign(self, node):
        if len(node.targets) != 1:
            self.error(node, "chained assignment is not supported", hint="assign one target per statement")
        target = node.targets[0]
        if isinstance(node.value, ast.Call):
            kern = self._callee(node.value)
            if kern is not None:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                return self._call_kernel(node.value, kern, names)
        if isinstance(target, ast.Tuple):
            self.error(target, "tuple assignment is only supported for kernel calls", hint="a, b = other_kernel(X)")
        return self._assign(target, node.value, node)

    def _assign(self, target, value_node, node, value: Expr | None = None):
        loc = self.loc(node)
        if isinstance(target, ast.Subscript):
            tname, indices = self._subscript(target)
            sym = self.lookup(tname.name)
            if sym.kind == "rom":
                self.error(target, f"'{tname.name}' is a constant array from the enclosing scope; it cannot be written",
                           hint=f"copy it into a local tensor ({tname.name}_copy: {tname.type} = 0.0) first")
            v = value if value is not None else self.coerce(value_node, tname.type.dtype)
            return Store(tname.name, indices, B.cast(v, tname.type.dtype, loc), loc)
        if not isinstance(target, ast.Name):
            self.error(target, f"cannot assign to '{ast.unparse(target)}'", hint="assign to a name or a tensor element")
        sym = self.lookup(target.id)
        if sym is None:
            v = value if value is not None else self.expr(value_node)
            self.define(target, target.id, v.dtype, "local")
            return Decl(target.id, v.dtype, v, loc)
        if isinstance(sym.type, TensorType):
            self.error(target, f"cannot assign a value to the whole tensor '{target.id}'",
                       hint=f"store elements in a loop: {target.id}[i] = ...")
        if sym.kind in ("loop", "param"):
            self.error(target, f"{'loop variable' if sym.kind == 'loop' else 'parameter'} '{target.id}' cannot be assigned",
                       hint="copy it into a new local first")
        v = value if value is not None else self.coerce(value_node, sym.type)
        return Assign(target.id, B.cast(v, sym.type, loc), loc)

    def visit_AugAssign(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.error(node, f"operator {type(node.op).__name__} is not supported",
                       hint="write the operation out: x = x op y")
        target = node.target
        if isinstance(target, ast.Name) and self.lookup(target.id) is None:
            self.error(target, f"'{target.id}' is not defined", hint=f"declare it first: {target.id}: f32 = 0.0")
        cur = ast.copy_location(ast.Subscript(target.value, target.slice, ast.Load()) if isinstance(target, ast.Subscript)
                                else ast.Name(target.id, ast.Load()), target)
        ast.fix_missing_locations(cur)
        combined = self._binop(op, self.visit(cur), self.visit(node.value), node)
        if isinstance(combined, Lit):
            raise AssertionError("target is never a literal")
        return self._assign(target, None, node, value=combined)

    def visit_For(self, node):
        if node.orelse:
            self.error(self._else_line(node), "for/else is not supported in a kernel",
                       hint="loops always run to completion in a kernel; move the else body after the loop")
        it = node.iter
        if not isinstance(it, ast.Call):
            self.error(it, "a kernel loop iterates over range(...) or sd.grid(...)", hint="for i in range(N):")
        fn = self._resolve_call(it.func)
        if it.keywords:
            self.error(it.keywords[0], "keyword arguments are not supported in loop headers",
                       hint="range(start, stop, step)")
        if fn is range:
            if not isinstance(node.target, ast.Name):
                self.error(node.target, "a range loop binds one variable", hint="for i in range(N):")
            return self._loop([(node.target, it.args, it)], node.body, node)
        if getattr(fn, "__sd_op__", None) == "grid":
            names = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
            if len(names) != len(it.args):
                self.error(node.target, f"sd.grid has {len(it.args)} extents but the loop binds {len(names)} names",
                           hint="for i, j in sd.grid(M, N):")
            for n in names:
                if not isinstance(n, ast.Name):
                    self.error(n, "loop variables are plain names", hint="for i, j in sd.grid(M, N):")
            return self._loop([(n, [a], node) for n, a in zip(names, it.args)], node.body, node)
        self.error(it, f"'{ast.unparse(it.func)}' is not a loop a kernel understands",
                   hint="use range(start, stop, step) or sd.grid(M, N)")

    def _else_line(self, node):
        """An AST-like position of the ``else:`` keyword of a for loop (it has no node of its own)."""
        import linecache

        first = node.orelse[0]
        for line in range(first.lineno, node.body[-1].end_lineno, -1):
            text = linecache.getline(self.src.file, line + self.src.line_offset)
            if text.strip().startswith("else"):
                col = len(text) - len(text.lstrip()) - self.src.col_offset
                return ast.Pass(lineno=line, col_offset=col, end_lineno=line, end_col_offset=col + 4)
        return first

    def _loop(self, levels, body, node):
        target, args, hdr = levels[0]
        if not 1 <= len(args) <= 3:
            self.error(hdr, "range takes 1 to 3 arguments", hint="range(N) or range(start, stop, step)")
        bounds = [self._bound(a) for a in args]
        start, stop = (B.const(0, index), bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
        step = 1
        if len(args) == 3:
            s = self.visit(args[2])
            if not isinstance(s, Lit) or not isinstance(s.value, int) or isinstance(s.value, bool) or s.value == 0:
                self.error(args[2], "a loop step must be a nonzero integer constant", hint="range(0, N, 2)")
            step = s.value
        self.scopes.append({})
        try:
            self.define(target, target.id, index, "loop")
            inner = self._loop(levels[1:], body, node) if len(levels) > 1 else self.body(body)
            inner = inner if isinstance(inner, tuple) else (inner,)
        finally:
            self.scopes.pop()
        return For(target.id, start, stop, step, inner, loc=self.loc(target) if len(levels) > 1 else self.loc(node))

    def _bound(self, node) -> Expr:
        v = self.visit(node)
        if isinstance(v, Lit):
            if not isinstance(v.value, int) or isinstance(v.value, bool):
                self.error(node, f"loop bound {v.value!r} is not an integer", cls=KernelTypeError,
                           hint="use integer arithmetic for bounds, e.g. N // 2")
            return B.const(v.value, index, self.loc(node))
        e = self._typed(v, node)
        if not isinstance(e.dtype, IntType):
            self.error(node, f"loop bound has type {e.dtype}, expected an integer", cls=KernelTypeError,
                       hint="loop bounds are constants or integer expressions of outer loop variables")
        return B.cast(e, index, self.loc(node))

    def visit_If(self, node):
        cond = B.truth(self.expr(node.test), self.loc(node.test))
        then = self.scoped_body(node.body)
        orelse = self.scoped_body(node.orelse) if node.orelse else ()
        return If(cond, then, orelse, self.loc(node))

    def visit_Return(self, node):
        if len(self.scopes) > 1:
            self.error(node, "return must be the last statement of the kernel, outside loops and branches",
                       hint="store results into output tensors and return them at the end")
        values = [] if node.value is None else (node.value.elts if isinstance(node.value, ast.Tuple) else [node.value])
        calls: list[Stmt] = []
        if len(values) == 1 and len(self.results) != 1:  # return other(x): all of its results
            kern = self._callee(values[0]) if isinstance(values[0], ast.Call) else None
            if kern is not None and len(kern.results) == len(self.results):
                names = self._result_names(values[0], len(kern.results))
                calls.append(self._call_kernel(values[0], kern, names))
                values = [ast.copy_location(ast.Name(n.id, ast.Load()), values[0]) for n in names]
        if len(values) != len(self.results):
            self.error(node, f"kernel returns {len(values)} value(s) but is annotated with {len(self.results)}",
                       cls=KernelTypeError, hint="make the return match the -> annotation")
        out = []
        for n, (v, t) in enumerate(zip(values, self.results)):
            kern = self._callee(v) if isinstance(v, ast.Call) else None
            if kern is not None:  # return gelu(h): the call, then its result
                names = self._result_names(v, 1)
                calls.append(self._call_kernel(v, kern, names))
                v = ast.copy_location(ast.Name(names[0].id, ast.Load()), v)
            if isinstance(t, TensorType):
                r = self.visit(v)
                if not isinstance(r, TensorName):
                    self.error(v, f"expected a tensor of type {t} here", cls=KernelTypeError,
                               hint="return a tensor parameter or a local tensor by name")
                if r.type != t:
                    self.error(v, f"returns '{r.name}' of type {r.type}, but the annotation says {t}",
                               cls=ShapeError if r.type.shape != t.shape else KernelTypeError,
                               hint="fix the return annotation or the tensor's declaration")
                out.append(Ref(r.name, r.type, self.loc(v)))
            else:
                out.append(self.coerce(v, t))
        return calls + [Return(tuple(out), self.loc(node))]

    def _call_value(self, node: ast.Call, kern: Kernel):
        """A kernel call used as a value (``R[i] = helper(A[i])``): the call runs just before the statement,
        into a fresh name, and the value is that name."""
        if written_params(kern):
            self.error(node, f"kernel '{kern.name}' writes its parameter '{written_params(kern)[0]}'; call it as a "
                             "statement", hint=f"{ast.unparse(node)} on its own line, then use what it wrote")
        if len(kern.results) != 1:
            self.error(node, f"kernel '{kern.name}' returns {len(kern.results)} values; a call used as a value "
                             "returns one", hint=f"bind them: T0, T1 = {ast.unparse(node)}")
        (name,) = self._result_names(node, 1)
        self.pending.append(self._call_kernel(node, kern, [name]))
        return self.visit(ast.copy_location(ast.Name(name.id, ast.Load()), node))

    def _result_names(self, call: ast.Call, n: int) -> list[ast.Name]:
        """Fresh names for the results of a kernel called in a return statement."""
        names = []
        for _ in range(n):
            while self.lookup(f"_ret{self.fresh_outs}") is not None:
                self.fresh_outs += 1
            names.append(ast.copy_location(ast.Name(f"_ret{self.fresh_outs}", ast.Store()), call))
            self.fresh_outs += 1
        return names

    # ------------------------------------------------------------ kernel calls
    def _resolve_call(self, func):
        if isinstance(func, ast.Name) and self.lookup(func.id) is not None:
            self.error(func, f"'{func.id}' is not callable", hint=f"'{func.id}' is a kernel variable")
        if isinstance(func, (ast.Name, ast.Attribute)) or self._template_instance(func):
            return self.evaluate(func)
        self.error(func, f"cannot call '{ast.unparse(func)}' in a kernel",
                   hint="call builtins (sd.exp, min, ...) or @sd.kernel functions by name")

    def _template_instance(self, func) -> bool:
        """``mm[f32, 32, 64]``: a generic kernel bound to values of the enclosing scope."""
        if not isinstance(func, ast.Subscript):
            return False
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and self.lookup(root.id) is None

    def _callee(self, call: ast.Call) -> Kernel | None:
        if isinstance(call.func, ast.Name) and self.lookup(call.func.id) is not None:
            return None
        if not (isinstance(call.func, (ast.Name, ast.Attribute)) or self._template_instance(call.func)):
            return None
        return self.resolve_kernel(self.evaluate(call.func), self.loc(call))

    def _call_kernel(self, call: ast.Call, kern: Kernel, targets):
        if call.keywords:
            self.error(call.keywords[0], "kernel calls take positional arguments",
                       hint=f"{kern.name}({', '.join(p.name for p in kern.params)})")
        if len(call.args) != len(kern.params):
            self.error(call, f"kernel '{kern.name}' takes {len(kern.params)} argument(s), got {len(call.args)}",
                       cls=KernelTypeError, hint=f"signature: {kern.name}({', '.join(f'{p.name}: {p.type}' for p in kern.params)})")
        args = []
        for a, p in zip(call.args, kern.params):
            if isinstance(p.type, TensorType):
                v = self.visit(a)
                if not isinstance(v, TensorName):
                    self.error(a, f"parameter '{p.name}' of '{kern.name}' is a tensor {p.type}", cls=KernelTypeError,
                               hint="pass a tensor by name")
                if v.type != p.type:
                    self.error(a, f"'{v.name}' has type {v.type} but '{kern.name}' expects {p.name}: {p.type}",
                               cls=ShapeError if v.type.shape != p.type.shape else KernelTypeError,
                               hint="shapes and dtypes of kernel arguments must match exactly")
                args.append(Ref(v.name, v.type, self.loc(a)))
            else:
                args.append(self.coerce(a, p.type))
        if len(targets) != len(kern.results):
            names = ", ".join(f"T{n}" for n in range(len(kern.results))) or "nothing"
            what = "the result of the call is not used" if not targets else f"assigned to {len(targets)}"
            self.error(call, f"kernel '{kern.name}' returns {len(kern.results)} value(s); {what}",
                       cls=KernelTypeError, hint=f"bind every result: {names} = {ast.unparse(call)}")
        outs = []
        for t, rt in zip(targets, kern.results):
            if not isinstance(t, ast.Name):
                self.error(t, "kernel results are bound to new names", hint="T = other_kernel(A)")
            self.define(t, t.id, rt, "out")
            outs.append(t.id)
        return CallKernel(self._callee_name(kern), tuple(args), tuple(outs), self.loc(call))

    def _callee_name(self, kern: Kernel) -> str:
        """The name the call uses: the kernel's own, or a provisional one when a different kernel of that name is
        called too (a factory at two shapes); :func:`unique_kernel_names` turns it into ``mm_64x64``."""
        n = 0
        while True:
            name = kern.name if n == 0 else f"{kern.name}#{n}"
            prev = self.callees.get(name)
            if prev is None or prev is kern or prev == kern:
                self.callees.setdefault(name, kern)
                return name
            n += 1

    # ------------------------------------------------------------ expressions
    def visit_Constant(self, node):
        if isinstance(node.value, (bool, int, float)):
            return Lit(node.value)
        self.error(node, f"constant {node.value!r} is not a number", hint="kernels compute on numbers only")

    def visit_Name(self, node):
        sym = self.lookup(node.id)
        if sym is not None:
            if isinstance(sym.type, TensorType):
                return TensorName(node.id, sym.type)
            return Var(node.id, sym.type, self.loc(node))
        if node.id in self.env:
            value = self.env[node.id]
            if isinstance(value, np.ndarray) and value.ndim:
                return self._rom(node.id, value, node)
            return self._from_env(value, node)
        self.error(node, f"name '{node.id}' is not defined", hint="declare locals with a type: x: f32 = 0.0",
                   undefined=True)

    def _rom(self, name: str, value: np.ndarray, node) -> TensorName:
        """A NumPy array of the enclosing scope: a constant tensor (a ROM in HLS), its values taken now."""
        sym = self.lookup(name)
        if sym is not None and sym.kind == "rom":
            return TensorName(name, sym.type)
        dt = from_numpy(value.dtype)
        if dt is None:
            self.error(node, f"'{name}' is a NumPy array of {value.dtype}, which no kernel dtype holds",
                       cls=KernelTypeError, hint="convert it with .astype(np.float32) or an integer dtype")
        if value.size > ROM_MAX:
            self.error(node, f"'{name}' has {value.size} elements; a constant tensor holds at most {ROM_MAX}",
                       cls=ShapeError, hint="pass a large array to the kernel as a parameter")
        t = dt[value.shape]
        flat = value.ravel()
        values = tuple(int(v) for v in flat) if isinstance(dt, IntType) else tuple(float(v) for v in flat)
        self.scopes[0][name] = Symbol(name, t, "rom")
        self.roms.append(Alloc(name, t, None, Attrs({"rom": values}), self.loc(node)))
        return TensorName(name, t)

    def visit_Attribute(self, node):
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and self.lookup(base.id) is not None:
            self.error(node, f"'{ast.unparse(node)}': kernel values have no attributes",
                       hint="shapes are compile-time constants: use the sizes the tensor was declared with")
        return self._from_env(self.evaluate(node), node)

    def _from_env(self, value, node):
        if isinstance(value, (bool, int, float, np.integer, np.floating, np.bool_)):
            return Lit(value.item() if isinstance(value, np.generic) else value)
        self.error(node, f"'{ast.unparse(node)}' ({type(value).__name__}) cannot be used as a value in a kernel",
                   hint="only numbers from the enclosing scope are compile-time constants")

    def visit_BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.error(node, f"operator '{type(node.op).__name__}' is not supported in a kernel",
                       hint="see the list of supported Python in the streamdsl README")
        return self._binop(op, self.visit(node.left), self.visit(node.right), node)

    def _binop(self, op, a, b, node):
        if isinstance(a, Lit) and isinstance(b, Lit):
            return self._fold(op, a.value, b.value, node)
        lhs, rhs = self.pair(a, b, node)
        return B.binop(op, lhs, rhs, self.loc(node))

    def _fold(self, op, x, y, node):
        fns = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y,
               "floordiv": lambda: x // y, "mod": lambda: x % y, "pow": lambda: x ** y, "bitand": lambda: x & y,
               "bitor": lambda: x | y, "bitxor": lambda: x ^ y, "shl": lambda: x << y, "shr": lambda: x >> y,
               "eq": lambda: x == y, "ne": lambda: x != y, "lt": lambda: x < y, "le": lambda: x <= y,
               "gt": lambda: x > y, "ge": lambda: x >= y}
        try:
            return Lit(fns[op]())
        except Exception as exc:
            self.error(node, f"constant expression '{ast.unparse(node)}' fails: {exc}", cls=KernelTypeError,
                       hint="fix the constants (they are evaluated when the kernel is defined)")

    def visit_UnaryOp(self, node):
        v = self.visit(node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        op = {ast.USub: "neg", ast.Not: "not", ast.Invert: "invert"}[type(node.op)]
        if isinstance(v, Lit):
            return Lit({"neg": lambda x: -x, "not": lambda x: not x, "invert": lambda x: ~x}[op](v.value))
        return B.unary(op, self._typed(v, node.operand), self.loc(node))

    def visit_BoolOp(self, node):
        op = "and" if isinstance(node.op, ast.And) else "or"
        acc = self.expr(node.values[0])
        for v in node.values[1:]:
            acc = B.binop(op, acc, self.expr(v), self.loc(node))
        return acc

    def visit_Compare(self, node):
        result, left = None, self.visit(node.left)
        for opnode, comp in zip(node.ops, node.comparators):
            op = _CMPOPS.get(type(opnode))
            if op is None:
                self.error(node, f"'{type(opnode).__name__}' comparisons are not supported in a kernel",
                           hint="compare numbers with ==, !=, <, <=, >, >=")
            right = self.visit(comp)
            c = self._binop(op, left, right, node)
            if isinstance(c, Lit):
                c = B.const(c.value, B.literal_type(c.value), self.loc(node))
            result = c if result is None else B.binop("and", result, c, self.loc(node))
            left = right
        return result

    def visit_IfExp(self, node):
        test = self.visit(node.test)
        if isinstance(test, (Lit, Const)):  # known when the kernel is defined: the branch is chosen then (constexpr)
            return self.visit(node.body if test.value else node.orelse)
        cond = self.expr(node.test)
        a, b = self.visit(node.body), self.visit(node.orelse)
        if isinstance(a, Lit) and isinstance(b, Lit):
            a = B.const(a.value, B.literal_type(a.value), self.loc(node.body))
        a, b = self.pair(a, b, node)
        return B.select(cond, a, b, self.loc(node))

    def visit_Subscript(self, node):
        root = node.value
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        array = isinstance(node.value, ast.Name) and self.lookup(node.value.id) is None \
            and isinstance(self.env.get(node.value.id), np.ndarray)  # a constant tensor, indexed at run time
        if not array and isinstance(root, ast.Name) and self.lookup(root.id) is None and root.id in self.env:
            return self._from_env(self.evaluate(node), node)  # a constant such as SHAPE[0]
        tname, indices = self._subscript(node)
        return Load(tname.name, indices, tname.type.dtype, self.loc(node))

    def _subscript(self, node):
        base = self.visit(node.value) if isinstance(node.value, (ast.Name, ast.Attribute)) else None
        if not isinstance(base, TensorName):
            self.error(node.value, f"'{ast.unparse(node.value)}' is not a tensor", cls=ShapeError,
                       hint="only tensors declared as parameters or locals can be indexed")
        idx_nodes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(idx_nodes) != base.type.rank:
            self.error(node, f"tensor '{base.name}' has rank {base.type.rank} but is indexed with {len(idx_nodes)} "
                             f"index{'es' if len(idx_nodes) != 1 else ''}", cls=ShapeError,
                       hint=f"'{base.name}' is {base.type}")
        indices = []
        for d, ix in enumerate(idx_nodes):
            if isinstance(ix, ast.Slice):
                self.error(ix, "slices are not supported in a kernel", hint="index element by element inside a loop")
            v = self.visit(ix)
            if isinstance(v, Lit):
                if not isinstance(v.value, int) or isinstance(v.value, bool):
                    self.error(ix, f"index {v.value!r} is not an integer", cls=KernelTypeError,
                               hint="indices are integers")
                if not 0 <= v.value < base.type.shape[d]:
                    self.error(ix, f"index {v.value} is out of bounds for dimension {d} of '{base.name}' "
                                   f"(size {base.type.shape[d]})", cls=ShapeError,
                               hint=f"'{base.name}' is {base.type}; valid indices are 0..{base.type.shape[d] - 1}")
                v = B.const(v.value, index, self.loc(ix))
            e = self._typed(v, ix)
            if not isinstance(e.dtype, IntType):
                self.error(ix, f"index has type {e.dtype}, expected an integer", cls=KernelTypeError,
                           hint="convert with sd.cast(x, sd.i32)")
            indices.append(e)
        return base, tuple(indices)

    def visit_Call(self, node):
        fn = self._resolve_call(node.func)
        if node.keywords:
            self.error(node.keywords[0], "keyword arguments are not supported in kernel calls",
                       hint="pass arguments by position")
        kern = self.resolve_kernel(fn, self.loc(node))
        if kern is not None:
            return self._call_value(node, kern)
        op = getattr(fn, "__sd_op__", None)
        if op is None and any(fn is b for b in _PY_BUILTINS):
            op = _PY_BUILTINS[fn]
        if op is None:
            self.error(node.func, f"'{ast.unparse(node.func)}' cannot be called in a kernel",
                       hint="kernels may call sd.exp, sd.log, sd.sqrt, sd.rsqrt, sd.tanh, sd.erf, sd.abs, "
                            "sd.max, sd.min, sd.cast, min, max, abs and other @sd.kernel functions")
        if op == "cast":
            if len(node.args) != 2:
                self.error(node, "sd.cast takes a value and a type", hint="sd.cast(x, sd.i32)")
            t = self.as_type(node.args[1], scalar_only=True)
            v = self.visit(node.args[0])
            if isinstance(v, Lit):  # an explicit cast converts the number (truncate, saturate, wrap)
                wide = u1 if isinstance(v.value, bool) else f64 if isinstance(v.value, float) else i64
                return B.cast(B.const(v.value, wide, self.loc(node.args[0])), t, self.loc(node))
            return B.cast(self.expr(node.args[0]), t, self.loc(node))
        if op == "grid":
            self.error(node, "sd.grid(...) is only allowed as a for loop's iterator",
                       hint="for i, j in sd.grid(M, N):")
        vals = [self.visit(a) for a in node.args]
        if op in ("max", "min") and len(vals) > 2:
            acc = vals[0]
            for v in vals[1:]:
                acc = self._call(op, [acc, v], node)
            return acc
        return self._call(op, vals, node)

    def _call(self, op, vals, node):
        from ..ir.ops import OPS

        if len(vals) != OPS[op].arity:
            self.error(node, f"{op} takes {OPS[op].arity} argument(s), got {len(vals)}", cls=KernelTypeError,
                       hint=f"{op}({', '.join('xyz'[:OPS[op].arity])})")
        if len(vals) == 2:
            a, b = vals
            if isinstance(a, Lit) and isinstance(b, Lit):
                a = B.const(a.value, B.literal_type(a.value), self.loc(node))
            args = self.pair(a, b, node)
        else:
            args = (self.expr(node.args[0]) if isinstance(vals[0], Lit) else self._typed(vals[0], node),)
        return B.call(op, tuple(args), self.loc(node))
