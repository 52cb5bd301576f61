"""Print the loop IR as text that :func:`streamdsl.ir.parser.parse_ir` reads back.

The format is fully explicit: every constant carries its dtype (``1:i32``),
every binary/unary operation is parenthesised, and every conversion is a
visible ``cast<...>``, so parsing needs no type inference beyond the op
registry's rules and ``parse_ir(print_kernel(k)) == k``.

A kernel prints as a module: its callees (transitively, in dependency order,
each once) and then the kernel itself, which is the last one in the text.
"""
from __future__ import annotations

import json
import math
import numbers
import re
from typing import Any

from ..errors import IRVerifyError
from ..types import DType, TensorType
from .nodes import (StreamMove, 
    Alloc, Assign, Attrs, BinOp, Call, CallKernel, Cast, Const, Decl, Expr, For,
    If, Kernel, Load, Ref, Return, Select, Stmt, Store, UnaryOp, Var,
)
from .ops import OPS

INDENT = "  "

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Words the grammar uses as keywords where a name could also stand; a name
# spelled like one would not parse back, so the printer refuses it.
RESERVED = frozenset("alloc let call cast select for if else in not and or return".split())


def _name(name: str, node: Any = None) -> str:
    if not isinstance(name, str) or not _IDENT.match(name) or name in RESERVED:
        raise IRVerifyError(
            f"name {name!r} cannot be written in the IR text",
            getattr(node, "loc", None),
            hint="names must be identifiers and not one of: " + ", ".join(sorted(RESERVED)),
        )
    return name


def print_type(t: TensorType | DType) -> str:
    if isinstance(t, TensorType):
        return f"{t.dtype}[{', '.join(str(d) for d in t.shape)}]"
    return str(t)


def _float(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def print_const(c: Const) -> str:
    v = c.value
    # bool is an int subclass; it prints as 0/1 (the verifier flags it).
    text = str(int(v)) if isinstance(v, numbers.Integral) else _float(float(v))
    return f"{text}:{c.dtype}"


# ----------------------------------------------------------------- attrs
def _attr_value(key: str, v: Any, loc: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, tuple):
        items = [_attr_value(key, x, loc) for x in v]
        return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    raise IRVerifyError(
        f"attribute {key!r} has a value of type {type(v).__name__}, which the IR text cannot hold",
        loc,
        hint="attribute values are int, float, str, bool or tuples of those",
    )


def print_attrs(attrs: Attrs, loc: Any = None) -> str:
    """`` [k=v, ...]`` with a leading space, or "" for no attrs."""
    if not attrs:
        return ""
    items = []
    for k, v in sorted(attrs.items()) if isinstance(attrs, dict) else attrs:  # a plain dict is tolerated
        key = k if _IDENT.match(k) and k not in RESERVED else json.dumps(k)
        items.append(f"{key}={_attr_value(k, v, loc)}")
    return " [" + ", ".join(items) + "]"


# ------------------------------------------------------------ expressions
def print_expr(e: Expr) -> str:
    if isinstance(e, Const):
        return print_const(e)
    if isinstance(e, (Var, Ref)):
        return _name(e.name, e)
    if isinstance(e, Load):
        return f"{_name(e.name, e)}[{', '.join(print_expr(i) for i in e.indices)}]"
    if isinstance(e, BinOp):
        info = OPS.get(e.op)
        if info is None or info.symbol is None or info.arity != 2:
            raise IRVerifyError(f"unknown binary operator {e.op!r}", e.loc)
        return f"({print_expr(e.lhs)} {info.symbol} {print_expr(e.rhs)})"
    if isinstance(e, UnaryOp):
        info = OPS.get(e.op)
        if info is None or info.symbol is None or info.arity != 1:
            raise IRVerifyError(f"unknown unary operator {e.op!r}", e.loc)
        sep = " " if info.symbol.isalpha() else ""  # `(not x)` but `(-x)`
        return f"({info.symbol}{sep}{print_expr(e.operand)})"
    if isinstance(e, Call):
        info = OPS.get(e.fn)
        if info is None or info.symbol is not None:
            raise IRVerifyError(f"unknown builtin function {e.fn!r}", e.loc)
        return f"{e.fn}({', '.join(print_expr(a) for a in e.args)})"
    if isinstance(e, Cast):
        return f"cast<{e.dtype}>({print_expr(e.operand)})"
    if isinstance(e, Select):
        return f"select({print_expr(e.cond)}, {print_expr(e.then)}, {print_expr(e.orelse)})"
    raise IRVerifyError(f"not an IR expression: {e!r}", getattr(e, "loc", None))


# ------------------------------------------------------------- statements
def _block(body: tuple[Stmt, ...], indent: int) -> list[str]:
    return [print_stmt(s, indent) for s in body]


def print_stmt(s: Stmt, indent: int = 0) -> str:
    """``s`` as text at ``indent`` levels; compound statements span several lines."""
    pad = INDENT * indent
    if isinstance(s, Alloc):
        init = "" if s.init is None else f" = {print_expr(s.init)}"
        return f"{pad}alloc {_name(s.name, s)}: {print_type(s.type)}{init}{print_attrs(s.attrs, s.loc)}"
    if isinstance(s, Decl):
        return f"{pad}let {_name(s.name, s)}: {print_type(s.dtype)} = {print_expr(s.init)}"
    if isinstance(s, Assign):
        return f"{pad}{_name(s.name, s)} = {print_expr(s.value)}"
    if isinstance(s, Store):
        idx = ", ".join(print_expr(i) for i in s.indices)
        return f"{pad}{_name(s.name, s)}[{idx}] = {print_expr(s.value)}"
    if isinstance(s, For):
        head = (
            f"{pad}for {_name(s.var, s)} in range({print_expr(s.start)}, {print_expr(s.stop)}, {int(s.step)})"
            f"{print_attrs(s.attrs, s.loc)} {{"
        )
        return "\n".join([head, *_block(s.body, indent + 1), pad + "}"])
    if isinstance(s, If):
        lines = [f"{pad}if {print_expr(s.cond)} {{", *_block(s.then, indent + 1)]
        if s.orelse:
            lines += [pad + "} else {", *_block(s.orelse, indent + 1)]
        return "\n".join([*lines, pad + "}"])
    if isinstance(s, CallKernel):
        outs = ", ".join(_name(o, s) for o in s.outs)
        call = f"call {_name(s.callee, s)}({', '.join(print_expr(a) for a in s.args)})"
        return f"{pad}{outs} = {call}" if s.outs else pad + call
    if isinstance(s, Return):
        return f"{pad}return {', '.join(print_expr(v) for v in s.values)}" if s.values else pad + "return"
    if isinstance(s, StreamMove):  # a dataflow task's process only: printed to read, not parsed back
        n = sum(s.counts)
        arrow = f"{s.stream} -> {s.buffer}" if s.direction == "read" else f"{s.buffer} -> {s.stream}"
        return (f"{pad}# stream {s.direction} {arrow}: {n} token(s) over {len(s.counts)} execution(s), "
                f"{s.token_cycles} cycle(s) each")
    raise IRVerifyError(f"not an IR statement: {s!r}", getattr(s, "loc", None))


def stmt_line(s: Stmt) -> str:
    """The first line of ``s`` (a compound statement's header), for messages."""
    try:
        return print_stmt(s).split("\n", 1)[0]
    except IRVerifyError:
        return repr(s)


# ---------------------------------------------------------------- kernels
def _print_one(k: Kernel) -> str:
    params = ", ".join(f"{_name(p.name, p)}: {print_type(p.type)}" for p in k.params)
    results = ", ".join(print_type(t) for t in k.results)
    head = f"kernel {_name(k.name, k)}({params}) -> ({results}){print_attrs(k.attrs, k.loc)} {{"
    return "\n".join([head, *_block(k.body, 1), "}"])


def kernel_order(kernel: Kernel) -> list[Kernel]:
    """``kernel`` and everything it calls, callees first, each distinct kernel once.

    Raises IRVerifyError when two different kernels share a name, since the
    text (and CallKernel) identify kernels by name only.
    """
    out: list[Kernel] = []
    by_name: dict[str, Kernel] = {}
    done: set[int] = set()  # ids already visited: shared callees are walked once

    def visit(k: Kernel) -> None:
        if id(k) in done:
            return
        done.add(id(k))
        for c in k.callees:
            visit(c)
        seen = by_name.get(k.name)
        if seen is None:
            by_name[k.name] = k
            out.append(k)
        elif seen != k:
            raise IRVerifyError(
                f"two different kernels are named {k.name!r}",
                k.loc or seen.loc,
                hint="kernels are called by name; give each a distinct name",
            )

    visit(kernel)
    return out


def print_kernel(kernel: Kernel) -> str:
    """The module text of ``kernel``: its callees first, ``kernel`` last."""
    return "\n\n".join(_print_one(k) for k in kernel_order(kernel))
