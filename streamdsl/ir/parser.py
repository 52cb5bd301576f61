"""Parse the IR text written by :mod:`streamdsl.ir.printer` back into nodes.

lark (LALR, grammar in ``grammar.lark``) turns the text into a parse tree;
:class:`_Builder` then walks it top-down with a scoped symbol table, so every
name gets its type and every node a :class:`Loc` in the text.  The printed IR
is explicit (typed constants, visible casts), so nothing is inferred here:
operand types must be exactly what the op registry demands, otherwise the
text is rejected with an :class:`IRParseError` pointing at the operation.
"""
from __future__ import annotations

import functools
import importlib.resources
import json
import linecache
import math
import re
from dataclasses import dataclass

import lark
from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..errors import IRParseError, Loc, StreamDSLError, user_facing
from ..types import DType, IntType, TensorType, index, parse_dtype, u1
from .nodes import (
    Alloc, Assign, Attrs, BinOp, Call, CallKernel, Cast, Const, Decl, Expr, For,
    If, Kernel, Load, Param, Ref, Return, Select, Stmt, Store, UnaryOp, Var,
)
from .ops import CALLS, OPS, SYMBOL_TO_BINARY, UNARY, type_rule
from .printer import print_expr, print_type

SYMBOL_TO_UNARY = {OPS[n].symbol: n for n in UNARY}

_DTYPE_HINT = "types are f16, bf16, f32, f64, iN / uN (N = 1..64), fxW_I / ufxW_I (e.g. fx16_8)"

# How lark's terminals read in "expected ..." hints.
_TERMINAL_TEXT = {
    "NAME": "a name", "CONST": "a typed constant such as 1:i32", "INT": "a dimension",
    "SINT": "an integer step", "ANUM": "a number", "STRING": "a string",
    "_NL": "a line break", "$END": "end of input",
}


@functools.lru_cache(maxsize=None)
def _lark() -> lark.Lark:
    grammar = importlib.resources.files(__package__).joinpath("grammar.lark").read_text()
    return lark.Lark(grammar, start="module", parser="lalr", propagate_positions=True)


@user_facing
def parse_ir(text: str, filename: str = "<ir>") -> Kernel:
    """Parse IR text; the last kernel in ``text`` is returned (earlier ones are its callees)."""
    # Registered so that errors (now or later, e.g. from the verifier) can
    # show the offending line of the text.
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text, filename) from None
    return _Builder(filename).module(tree)


# ------------------------------------------------------------ syntax errors
@functools.lru_cache(maxsize=None)
def _literal_terminals() -> dict[str, str]:
    return {t.name: t.pattern.value for t in _lark().terminals if t.pattern.type == "str"}


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_TEXT:
        return _TERMINAL_TEXT[name]
    literal = _literal_terminals().get(name)
    return repr(literal) if literal is not None else name


def _expected_hint(expected) -> str | None:
    names = sorted({_describe_terminal(n) for n in expected or ()})
    if not names:
        return None
    if len(names) > 10:
        names = names[:10] + ["..."]
    return "expected " + (names[0] if len(names) == 1 else "one of: " + ", ".join(names))


def _end_loc(text: str, filename: str) -> Loc:
    lines = text.splitlines() or [""]
    n = len(lines)
    while n > 1 and not lines[n - 1].strip():
        n -= 1
    return Loc(filename, n, len(lines[n - 1]), len(lines[n - 1]) + 1)


def _syntax_error(e: UnexpectedInput, text: str, filename: str) -> IRParseError:
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            hint = _expected_hint(e.expected)
            if {"RBRACE", "_NL"} & set(e.expected or ()):
                hint = "the text ends inside a kernel: is a closing '}' missing?"
            return IRParseError("unexpected end of input", _end_loc(text, filename), hint)
        col = tok.column - 1
        if tok.type == "_NL":
            what, end = "end of line", col + 1
        else:
            what, end = repr(str(tok)), tok.end_column - 1 if tok.end_line == tok.line else None
        return IRParseError(f"unexpected {what}", Loc(filename, tok.line, col, end), _expected_hint(e.expected))
    if isinstance(e, UnexpectedCharacters):
        loc = Loc(filename, e.line, e.column - 1, e.column)
        return IRParseError(f"unexpected character {e.char!r}", loc, _expected_hint(e.allowed))
    if isinstance(e, UnexpectedEOF):
        return IRParseError("unexpected end of input", _end_loc(text, filename), _expected_hint(e.expected))
    return IRParseError(str(e), _end_loc(text, filename))


# ------------------------------------------------------------ tree -> nodes
@dataclass(frozen=True)
class _Sym:
    type: TensorType | DType
    kind: str  # param | alloc | let | loop | out
    loc: Loc


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class _Builder:
    def __init__(self, filename: str) -> None:
        self.file = filename
        self.kernels: dict[str, Kernel] = {}  # parsed so far, by name
        self.kernel_locs: dict[str, Loc] = {}
        self.scopes: list[dict[str, _Sym]] = []
        self.callees: list[Kernel] = []  # of the kernel being parsed, in first-call order
        self.current = ""
        self.results: tuple[TensorType | DType, ...] = ()

    # ---- locations
    def tok_loc(self, tok: Token, start: int = 0, length: int | None = None) -> Loc:
        """The span of ``tok`` (or of ``length`` characters from ``start`` within it)."""
        col = tok.column - 1 + start
        end = (tok.end_column - 1 if tok.end_line == tok.line else None) if length is None else col + length
        return Loc(self.file, tok.line, col, end)

    def loc(self, t: Tree | Token) -> Loc:
        if isinstance(t, Token):
            return self.tok_loc(t)
        m = t.meta
        return Loc(self.file, m.line, m.column - 1, m.end_column - 1 if m.end_line == m.line else None)

    # ---- module and kernels
    def module(self, tree: Tree) -> Kernel:
        for k in tree.children:
            self.kernel(k)
        if not self.kernels:
            raise IRParseError("the text contains no kernel", Loc(self.file, 1, 0), hint="write `kernel NAME(...) -> (...) {`")
        main = list(self.kernels.values())[-1]
        reached: set[str] = set()
        todo = [main]
        while todo:
            k = todo.pop()
            if k.name not in reached:
                reached.add(k.name)
                todo.extend(k.callees)
        for name, k in self.kernels.items():
            if name not in reached:
                raise IRParseError(
                    f"kernel '{name}' is defined but not called",
                    self.kernel_locs[name],
                    hint=f"the last kernel in the text ('{main.name}') is the result; "
                    "every other kernel must be called from it, directly or indirectly",
                )
        return main

    def kernel(self, t: Tree) -> None:
        name_tok, params_t, types_t, *rest = t.children
        name = str(name_tok)
        if name in self.kernels:
            raise IRParseError(
                f"kernel '{name}' is defined twice", self.tok_loc(name_tok),
                hint=f"the first definition is at line {self.kernel_locs[name].line}",
            )
        self.current, self.callees, self.scopes = name, [], [{}]
        params = []
        for p in params_t.children:
            p_tok, p_type = p.children
            typ = self.type(p_type)
            self.define(p_tok, typ, "param")
            params.append(Param(str(p_tok), typ, self.tok_loc(p_tok)))
        self.results = results = tuple(self.type(r) for r in types_t.children)
        attrs = self.attrs(rest[0]) if len(rest) == 2 else Attrs()
        body = self.block(rest[-1])
        loc = Loc(self.file, t.meta.line, t.meta.column - 1, None)
        self.kernels[name] = Kernel(name, tuple(params), results, body, attrs, tuple(self.callees), loc)
        self.kernel_locs[name] = self.tok_loc(name_tok)

    # ---- names and types
    def define(self, tok: Token, typ: TensorType | DType, kind: str) -> None:
        name = str(tok)
        for scope in self.scopes:
            if name in scope:
                raise IRParseError(
                    f"'{name}' is already defined", self.tok_loc(tok),
                    hint=f"the first definition is at line {scope[name].loc.line}; names must be unique in a kernel",
                )
        self.scopes[-1][name] = _Sym(typ, kind, self.tok_loc(tok))

    def lookup(self, tok: Token) -> _Sym:
        for scope in reversed(self.scopes):
            if str(tok) in scope:
                return scope[str(tok)]
        raise IRParseError(
            f"unknown name '{tok}'", self.tok_loc(tok),
            hint="a name must be a parameter, or defined earlier by alloc, let, for or a call, in an enclosing block",
        )

    def dtype(self, name: str, loc: Loc) -> DType:
        try:
            dt = parse_dtype(name)
        except StreamDSLError as e:  # e.g. fx16_20: a malformed fixed-point type
            raise IRParseError(e.message, loc, hint=e.hint) from None
        if dt is None:
            raise IRParseError(f"unknown type '{name}'", loc, hint=_DTYPE_HINT)
        return dt

    def type(self, t: Tree) -> TensorType | DType:
        dt = self.dtype(str(t.children[0]), self.tok_loc(t.children[0]))
        if len(t.children) == 1:
            return dt
        dims = []
        for d in t.children[1].children:
            if int(d) <= 0:
                raise IRParseError(f"tensor dimension must be a positive integer, got {d}", self.tok_loc(d))
            dims.append(int(d))
        return TensorType(dt, tuple(dims))

    def scalar_type(self, t: Tree, what: str) -> DType:
        typ = self.type(t)
        if isinstance(typ, TensorType):
            raise IRParseError(f"{what} needs a scalar type, got {typ}", self.loc(t), hint="alloc declares tensors")
        return typ

    # ---- attrs
    def attrs(self, t: Tree) -> Attrs:
        out: dict[str, object] = {}
        for a in t.children:
            key_tok, value = a.children
            key = self.string(key_tok) if key_tok.type == "STRING" else str(key_tok)
            if key in out:
                raise IRParseError(f"attribute '{key}' is given twice", self.tok_loc(key_tok))
            out[key] = self.value(value)
        return Attrs(out)

    def value(self, t: Tree) -> object:
        if t.data == "num":
            text = str(t.children[0])
            if re.fullmatch(r"-?\d+", text):
                return int(text)
            return math.nan if text.lstrip("-") == "nan" else float(text)
        if t.data == "str":
            return self.string(t.children[0])
        if t.data in ("true", "false"):
            return t.data == "true"
        return tuple(self.value(c) for c in t.children)

    def string(self, tok: Token) -> str:
        try:
            return json.loads(str(tok))
        except json.JSONDecodeError as e:
            raise IRParseError(f"invalid string literal: {e.msg}", self.tok_loc(tok)) from None

    # ---- statements
    def block(self, t: Tree) -> tuple[Stmt, ...]:
        self.scopes.append({})
        try:
            return tuple(getattr(self, "s_" + s.data)(s) for s in t.children)
        finally:
            self.scopes.pop()

    def s_alloc(self, t: Tree) -> Stmt:
        name_tok, type_t, *rest = t.children
        attrs = Attrs()
        if rest and rest[-1].data == "attrs":
            attrs = self.attrs(rest.pop())
        init_t = rest[0] if rest else None
        if init_t is not None and init_t.data == "load" and not attrs:
            items = init_t.children[1].children
            if items and all(i.data == "attr" for i in items):
                # `= x [a=1]` was lexed like a load: it is the init x and attrs.
                attrs = self.attrs(init_t.children[1])
                init_t = Tree("name", [init_t.children[0]], init_t.meta)
        typ = self.type(type_t)
        if not isinstance(typ, TensorType):
            raise IRParseError(
                f"alloc needs a tensor type, got {typ}", self.loc(type_t),
                hint=f"write {typ}[N] for a tensor, or `let {name_tok}: {typ} = ...` for a scalar",
            )
        init = None if init_t is None else self.expr(init_t)
        if init is not None:
            self.same_type(init, typ.dtype, f"the initial value of '{name_tok}'")
        self.define(name_tok, typ, "alloc")
        return Alloc(str(name_tok), typ, init, attrs, self.loc(t))

    def s_decl(self, t: Tree) -> Stmt:
        name_tok, type_t, init_t = t.children
        dt = self.scalar_type(type_t, "let")
        init = self.expr(init_t)
        self.same_type(init, dt, f"the initial value of '{name_tok}'")
        self.define(name_tok, dt, "let")
        return Decl(str(name_tok), dt, init, self.loc(t))

    def s_assign(self, t: Tree) -> Stmt:
        name_tok, value_t = t.children
        sym = self.lookup(name_tok)
        if isinstance(sym.type, TensorType):
            raise IRParseError(
                f"'{name_tok}' is a tensor and cannot be assigned as a whole", self.tok_loc(name_tok),
                hint=f"store to its elements, e.g. {name_tok}[{', '.join(['0:i32'] * sym.type.rank)}] = ...",
            )
        value = self.expr(value_t)
        self.same_type(value, sym.type, f"the value assigned to '{name_tok}'")
        return Assign(str(name_tok), value, self.loc(t))

    def s_store(self, t: Tree) -> Stmt:
        name_tok, items, value_t = t.children
        indices, typ = self.indices(name_tok, items)
        value = self.expr(value_t)
        self.same_type(value, typ.dtype, f"the value stored to '{name_tok}'")
        return Store(str(name_tok), indices, value, self.loc(t))

    def s_for(self, t: Tree) -> Stmt:
        var_tok, start_t, stop_t, step_tok, *rest = t.children
        start, stop = self.expr(start_t), self.expr(stop_t)
        for bound, what in ((start, "start"), (stop, "stop")):
            if not isinstance(bound.dtype, IntType):
                raise IRParseError(f"loop {what} has type {bound.dtype}; loop bounds must be integers", bound.loc)
        step = int(step_tok)
        if step == 0:
            raise IRParseError("loop step must not be 0", self.tok_loc(step_tok))
        attrs = self.attrs(rest[0]) if len(rest) == 2 else Attrs()
        self.scopes.append({})
        try:
            self.define(var_tok, index, "loop")
            body = self.block(rest[-1])
        finally:
            self.scopes.pop()
        return For(str(var_tok), start, stop, step, body, attrs, self.loc(t))

    def s_if(self, t: Tree) -> Stmt:
        cond = self.expr(t.children[0])
        self.check_cond(cond, "if condition")
        then = self.block(t.children[1])
        orelse = self.block(t.children[2]) if len(t.children) == 3 else ()
        return If(cond, then, orelse, self.loc(t))

    def s_callk(self, t: Tree) -> Stmt:
        *outs, callee_tok, args_t = t.children
        name, loc = str(callee_tok), self.loc(t)
        callee = self.kernels.get(name)
        if callee is None:
            why = "calls itself; recursion is not supported" if name == self.current else None
            raise IRParseError(
                f"kernel '{self.current}' {why}" if why else f"unknown kernel '{name}'", self.tok_loc(callee_tok),
                hint="a kernel must be defined above the kernels that call it",
            )
        args = tuple(self.expr(a, allow_ref=True) for a in args_t.children)
        if len(args) != len(callee.params):
            raise IRParseError(f"kernel '{name}' takes {_plural(len(callee.params), 'argument')}, got {len(args)}", loc)
        for i, (p, a) in enumerate(zip(callee.params, args)):
            got = a.type if isinstance(a, Ref) else a.dtype
            if got != p.type or isinstance(p.type, TensorType) != isinstance(a, Ref):
                raise IRParseError(
                    f"argument {i + 1} of '{name}' ({p.name}) must be {print_type(p.type)}, got {print_type(got)}",
                    a.loc, hint=None if isinstance(p.type, TensorType) else f"write cast<{p.type}>(...)",
                )
        if len(outs) != len(callee.results):
            msg = f"kernel '{name}' returns {_plural(len(callee.results), 'value')}, but the call assigns {len(outs)}"
            raise IRParseError(msg, loc)
        for o, typ in zip(outs, callee.results):
            self.define(o, typ, "out")
        if all(c.name != name for c in self.callees):
            self.callees.append(callee)
        return CallKernel(name, args, tuple(str(o) for o in outs), loc)

    def s_ret(self, t: Tree) -> Stmt:
        values = tuple(self.expr(v, allow_ref=True) for v in t.children)
        loc = self.loc(t)
        if len(values) != len(self.results):
            want = ", ".join(print_type(r) for r in self.results)
            raise IRParseError(
                f"kernel '{self.current}' returns {_plural(len(self.results), 'value')} ({want}), "
                f"but this return gives {len(values)}", loc,
            )
        for i, (v, r) in enumerate(zip(values, self.results)):
            got = v.type if isinstance(v, Ref) else v.dtype
            if got != r or isinstance(r, TensorType) != isinstance(v, Ref):
                raise IRParseError(f"return value {i + 1} has type {print_type(got)}, but the kernel returns {print_type(r)}", v.loc)
        return Return(values, loc)

    # ---- type checks shared by statements and expressions
    def same_type(self, e: Expr, want: DType, what: str) -> None:
        if e.dtype != want:
            raise IRParseError(f"{what} has type {e.dtype}, expected {want}", e.loc, hint=f"write cast<{want}>({print_expr(e)})")

    def check_cond(self, e: Expr, what: str) -> None:
        if e.dtype != u1:
            raise IRParseError(f"{what} has type {e.dtype}; it must be u1", e.loc, hint=f"compare it, e.g. ({print_expr(e)} != 0:{e.dtype})")

    def indices(self, name_tok: Token, items: Tree) -> tuple[tuple[Expr, ...], TensorType]:
        sym = self.lookup(name_tok)
        if not isinstance(sym.type, TensorType):
            raise IRParseError(f"'{name_tok}' is a scalar of type {sym.type} and cannot be indexed", self.tok_loc(name_tok))
        for it in items.children:
            if it.data == "attr":
                raise IRParseError("expected an index expression, got an attribute", self.loc(it))
        idx = tuple(self.expr(i) for i in items.children)
        rank = sym.type.rank
        if len(idx) != rank:
            raise IRParseError(
                f"tensor '{name_tok}' has rank {rank} but is indexed with {len(idx)} {'index' if len(idx) == 1 else 'indices'}",
                self.loc(items) if idx else self.tok_loc(name_tok), hint=f"'{name_tok}' is {sym.type}",
            )
        for i, e in enumerate(idx):
            if not isinstance(e.dtype, IntType):
                raise IRParseError(f"index {i + 1} of '{name_tok}' has type {e.dtype}; indices must be integers", e.loc)
        return idx, sym.type

    def op_type(self, op: str, shown: str, args: tuple[Expr, ...], loc: Loc) -> DType:
        got = tuple(a.dtype for a in args)
        res = type_rule(op, got)
        if isinstance(res, str):
            raise IRParseError(res, loc)
        want, result = res
        if got != tuple(want):
            one = len(args) == 1
            noun = ("argument" if op in CALLS else "operand") + ("" if one else "s"), "is" if one else "are"
            i = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
            arg = print_expr(args[i])
            # a truth value is a comparison, not a truncating cast to u1
            fix = f"({arg} != 0:{got[i]})" if want[i] == u1 else f"cast<{want[i]}>({arg})"
            raise IRParseError(
                f"{noun[0]} of '{shown}' {noun[1]} {' and '.join(map(str, got))}; the IR needs an explicit cast<...>",
                loc, hint=f"'{shown}' takes {', '.join(map(str, want))}: write {fix}",
            )
        return result

    # ---- expressions
    def expr(self, t: Tree, allow_ref: bool = False) -> Expr:
        kind, c, loc = t.data, t.children, self.loc(t)
        if kind in ("const", "neg_const"):
            return self.const(c[-1], kind == "neg_const", loc)
        if kind == "name":
            sym = self.lookup(c[0])
            if isinstance(sym.type, TensorType):
                if not allow_ref:
                    raise IRParseError(
                        f"tensor '{c[0]}' is used as a scalar value", loc,
                        hint=f"index it ({c[0]} is {sym.type}); whole tensors are only call arguments and return values",
                    )
                return Ref(str(c[0]), sym.type, loc)
            return Var(str(c[0]), sym.type, loc)
        if kind == "load":
            idx, typ = self.indices(c[0], c[1])
            return Load(str(c[0]), idx, typ.dtype, loc)
        if kind == "binop":
            lhs, rhs = self.expr(c[0]), self.expr(c[2])
            symbol = str(c[1].children[0])
            op = SYMBOL_TO_BINARY[symbol]
            return BinOp(op, lhs, rhs, self.op_type(op, symbol, (lhs, rhs), loc), loc)
        if kind == "unop":
            operand = self.expr(c[1])
            op = SYMBOL_TO_UNARY[str(c[0])]
            return UnaryOp(op, operand, self.op_type(op, str(c[0]), (operand,), loc), loc)
        if kind == "fcall":
            fn = str(c[0])
            if fn not in CALLS:
                raise IRParseError(f"unknown function '{fn}'", self.tok_loc(c[0]), hint="builtins are: " + ", ".join(sorted(CALLS)))
            args = tuple(self.expr(a) for a in c[1].children)
            return Call(fn, args, self.op_type(fn, fn, args, loc), loc)
        if kind == "cast":
            dt = self.scalar_type(c[0], "cast")
            return Cast(self.expr(c[1]), dt, loc)
        if kind == "select":
            cond, then, orelse = (self.expr(x) for x in c)
            self.check_cond(cond, "select condition")
            if then.dtype != orelse.dtype:
                msg = f"select branches have types {then.dtype} and {orelse.dtype}; they must be equal"
                raise IRParseError(msg, loc, hint="cast one branch explicitly")
            return Select(cond, then, orelse, then.dtype, loc)
        raise IRParseError(f"expected an expression, got {kind}", loc)  # e.g. an attr where a value belongs

    def const(self, tok: Token, negative: bool, loc: Loc) -> Const:
        text, _, tname = str(tok).partition(":")
        dt = self.dtype(tname, self.tok_loc(tok, len(text) + 1, len(tname)))
        if isinstance(dt, IntType):
            if not text.isdigit():
                raise IRParseError(f"float literal {text} used as {dt}", loc, hint=f"integer constants are written like 3:{dt}")
            v = -int(text) if negative else int(text)
            if not dt.min <= v <= dt.max:
                raise IRParseError(f"constant {v} does not fit in {dt} (range {dt.min}..{dt.max})", loc)
            return Const(v, dt, loc)
        return Const(-float(text) if negative else float(text), dt, loc)
