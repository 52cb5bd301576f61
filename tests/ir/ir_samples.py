"""Hand-built, valid IR kernels shared by the printer/parser and verifier tests.

Built through :mod:`streamdsl.ir.build` (which inserts the casts) and the raw
nodes, the way the frontend and the passes build IR.
"""
from __future__ import annotations

from typing import Callable

from streamdsl.ir import build as b
from streamdsl.ir.nodes import (
    Alloc, Assign, Attrs, CallKernel, Cast, Const, Decl, Expr, For, If, Kernel,
    Load, Param, Ref, Return, Select, Store, Var,
)
from streamdsl.ir.ops import BINARY, CALLS, OPS, UNARY
from streamdsl.types import (
    DType, Fixed, Int, UFixed, bf16, f16, f32, f64, i8, i32, i64, u1, u8, u64,
)


def c(v: int | float, dt: DType = i32) -> Const:
    return b.const(v, dt)


def loop(var: str, start: Expr | int, stop: Expr | int, body, step: int = 1, **attrs) -> For:
    start = c(start) if isinstance(start, int) else start
    stop = c(stop) if isinstance(stop, int) else stop
    return For(var, start, stop, step, tuple(body), Attrs(attrs))


def _decl(name: str, e: Expr) -> Decl:
    return Decl(name, e.dtype, e)


def idx(name: str) -> Var:
    return Var(name, i32)


def matmul(name: str = "mm", m: int = 8, k: int = 16, n: int = 4) -> Kernel:
    A, B, C = f32[m, k], f32[k, n], f32[m, n]
    i, j, kk = idx("i"), idx("j"), idx("k")
    acc = b.binop("add", Load("C", (i, j), f32), b.binop("mul", Load("A", (i, kk), f32), Load("B", (kk, j), f32)))
    body = (
        Alloc("C", C, c(0.0, f32), Attrs({"partition": ("cyclic", 2)})),
        loop("i", 0, m, [loop("j", 0, n, [loop("k", 0, k, [Store("C", (i, j), acc)], pipeline=1)])]),
        Return((Ref("C", C),)),
    )
    return Kernel(name, (Param("A", A), Param("B", B)), (C,), body)


def scale(name: str = "scale") -> Kernel:
    """Two results, a scalar parameter and a scalar result."""
    X, s = f32[4], Var("s", f32)
    body = (
        Alloc("Y", X, None),
        loop("i", 0, 4, [Store("Y", (idx("i"),), b.binop("mul", Load("X", (idx("i"),), f32), s))]),
        Return((Ref("Y", X), b.binop("add", s, c(1.0, f32)))),
    )
    return Kernel(name, (Param("X", X), Param("s", f32)), (X, f32), body)


def nested_callees() -> Kernel:
    """main calls k1 and k2; k2 calls k1 too (k1 must be printed once, first)."""
    k1 = scale("k1")
    X = f32[4]
    k2 = Kernel(
        "k2", (Param("X", X),), (X,),
        (CallKernel("k1", (Ref("X", X), c(2.0, f32)), ("Y", "t")), Return((Ref("Y", X),))),
        callees=(k1,),
    )
    n = Var("n", i32)
    body = (
        CallKernel("k2", (Ref("X", X),), ("A",)),
        CallKernel("k1", (Ref("A", X), b.cast(n, f32)), ("B", "u")),
        CallKernel("k2", (Ref("B", X),), ("C",)),
        Return((Ref("C", X), Var("u", f32))),
    )
    return Kernel("main", (Param("X", X), Param("n", i32)), (X, f32), body, Attrs({"top": True}), (k2, k1))


def _operands(op: str) -> tuple[Expr, ...]:
    """Operands of mixed dtypes, so that build inserts the casts the rule wants."""
    x, y, n, m, w = Var("x", f32), Var("y", f16), Var("n", i32), Var("m", u8), Var("w", i64)
    if op in ("floordiv", "mod", "bitand", "bitor", "bitxor"):
        return (n, m)
    if op in ("shl", "shr"):
        return (w, m)
    if op in ("and", "or"):
        return (n, Var("flag", u1))
    if op in ("not", "invert"):
        return (n,)
    if op in ("pow", "max", "min"):
        return (x, y)
    if op in ("neg", "abs"):
        return (y,)
    if OPS[op].arity == 1:
        return (n,)  # float builtins on an int operand: cast to f32
    return (x, n)


def all_ops() -> Kernel:
    """One `let` per entry of OPS, plus a Select and a Cast."""
    body: list = []
    for op in sorted(OPS):
        args = _operands(op)
        if op in BINARY:
            e = b.binop(op, *args)
        elif op in UNARY:
            e = b.unary(op, *args)
        else:
            assert op in CALLS
            e = b.call(op, args)
        body.append(_decl(f"r_{op}", e))
    sel = b.select(b.binop("lt", Var("x", f32), c(0.5, f32)), Var("n", i32), Var("w", i64))
    body.append(Decl("r_select", sel.dtype, sel))
    body.append(Decl("r_cast", bf16, Cast(Var("x", f32), bf16)))
    body.append(Return((Var("r_add", f32),)))
    params = tuple(Param(n, t) for n, t in [("x", f32), ("y", f16), ("n", i32), ("m", u8), ("w", i64), ("flag", u1)])
    return Kernel("ops", params, (f32,), tuple(body))


def odd_dtypes() -> Kernel:
    """Unusual widths, non-finite and negative constants, a rank-0 tensor."""
    i5, fx, ufx = Int(5), Fixed(16, 8), UFixed(8, 0)
    consts = [
        c(1, u1), c(-16, i5), c(15, i5), c(2**64 - 1, u64), c(-(2**63), i64), c(float("nan"), f32),
        c(float("inf"), f64), c(float("-inf"), f16), c(-2.5, bf16), c(1e-05, f32), c(-0.0, f32),
        c(1e20, f64), c(-3.25, fx), c(0.5, ufx), c(-128, i8),
    ]
    body: list = [Decl(f"c{n}", k.dtype, k) for n, k in enumerate(consts)]
    body += [
        Alloc("Z", f32[()], None),
        Store("Z", (), b.cast(Var("c5", f32), f32)),
        Decl("neg", Int(6), b.unary("neg", c(-3, i5))),  # (--3:i5): one bit wider, as ap_int's unary minus
        Decl("neg2", bf16, b.unary("neg", c(2.0, bf16))),  # (-2.0:bf16), not the constant -2.0
        Decl("sub", Int(6), b.binop("sub", c(-3, i5), c(-4, i5))),
        Decl("fx_sum", fx, b.cast(b.binop("add", Var("p", fx), Var("c12", fx)), fx)),  # fx17_9 wrapped to fx16_8
        _decl("mixed", b.binop("mul", Var("q", ufx), Var("c12", fx))),
        Return((Load("Z", (), f32), Var("fx_sum", fx))),
    ]
    params = (Param("p", fx), Param("q", ufx), Param("bits", u1))
    return Kernel("odd", params, (f32, fx), tuple(body))


def control() -> Kernel:
    """Triangular and negative-step loops, if/else, an empty else, assign, a void call."""
    N = f32[8, 8]
    i, j = idx("i"), idx("j")
    tri = loop("j", 0, b.binop("add", i, c(1)), [Store("L", (i, j), Load("M", (i, j), f32))])
    down = loop("k", 7, -1, [Assign("acc", b.binop("add", Var("acc", i32), idx("k")))], step=-2, unroll=4)
    sink = Kernel("sink", (Param("V", N), Param("t", i32)), (), (Return(()),))
    branch = If(
        b.binop("gt", Var("acc", i32), c(3)),
        (Store("L", (c(0), c(0)), b.cast(Var("acc", i32), f32)),),
        (If(b.unary("not", b.binop("eq", Var("acc", i32), c(0))), (Assign("acc", c(1)),)),),
    )
    body = (
        Alloc("L", N, None, Attrs({"bind": "bram"})),
        Decl("acc", i32, c(0)),
        loop("i", 0, 8, [tri]),
        down,
        branch,
        If(Select(b.binop("lt", Var("acc", i32), c(1)), c(1, u1), c(0, u1), u1), (Assign("acc", c(2)),), ()),
        CallKernel("sink", (Ref("L", N), Var("acc", i32)), ()),
        Return((Ref("L", N),)),
    )
    return Kernel("tri", (Param("M", N),), (N,), body, callees=(sink,))


def attr_kinds() -> Kernel:
    """Every attr value kind, on a kernel, a loop and an alloc whose init is a Var."""
    kattrs = Attrs({
        "top": True, "off": False, "n": -3, "big": 2**40, "ratio": 0.25, "tiny": 1e-05, "inf": float("inf"),
        "name": 'quote " back \\ tab \t é', "one": (1,), "empty": (), "pair": (1, "a"),
        "nested": ((1, 2.5), (True,), ()), "a.b": 1, "for": "x",
    })
    body = (
        Alloc("T", f32[4], Var("s", f32), Attrs({"partition": ("block", 2), "dim": 0})),
        loop("i", 0, 4, [Store("T", (idx("i"),), Var("s", f32))], ii=1, tag="x"),
        Return(()),
    )
    return Kernel("attrs", (Param("s", f32),), (), body, kattrs)


def empty() -> Kernel:
    return Kernel("nothing", (), (), ())


SAMPLES: dict[str, Callable[[], Kernel]] = {
    f.__name__: f for f in (matmul, scale, nested_callees, all_ops, odd_dtypes, control, attr_kinds, empty)
}

