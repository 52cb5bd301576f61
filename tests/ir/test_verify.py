"""The IR verifier: valid IRs pass, each broken invariant is reported at its node."""
from __future__ import annotations

import pytest
from ir_samples import SAMPLES, c, loop, scale

from streamdsl.errors import IRVerifyError, Loc
from streamdsl.ir import build as b
from streamdsl.ir.nodes import (
    Alloc, Assign, Attrs, BinOp, Call, CallKernel, Cast, Const, Decl, If, Kernel, Load,
    Param, Ref, Return, Select, Store, UnaryOp, Var,
)
from streamdsl.ir.parser import parse_ir
from streamdsl.ir.printer import print_kernel
from streamdsl.ir.verify import verify
from streamdsl.types import f32, i32, u1, u8

T = f32[4, 4]
NV, AREF = Var("n", i32), Ref("A", T)  # the parameters as operands
PARAMS = (Param("A", T), Param("n", i32))
i, j = Var("i", i32), Var("j", i32)
ZERO = c(0)


def kern(*body, results=(), params=PARAMS, callees=()) -> Kernel:
    return Kernel("k", params, tuple(results), tuple(body), callees=tuple(callees))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_valid_samples_pass(name: str) -> None:
    k = SAMPLES[name]()
    assert verify(k) is k
    assert verify(parse_ir(print_kernel(k))) == k


LOCAL = Alloc("L", T, None)
SCALE = scale("g")

INVALID = [
    # (kernel, message, printed offending statement)
    (kern(Decl("v", i32, Var("m", i32))), "'m' is not defined here", "let v: i32 = m"),
    (kern(loop("i", 0, 4, [Decl("v", i32, i)]), Assign("v", ZERO)), "'v' is not defined here", "v = 0:i32"),
    (kern(loop("i", 0, 4, [Decl("n", i32, i)])), "'n' is defined twice", "let n: i32 = i"),
    (kern(loop("i", 0, 4, [loop("i", 0, 4, [])])), "'i' is defined twice", "for i in range(0:i32, 4:i32, 1) {"),
    (kern(loop("i", 0, 4, [Assign("i", ZERO)])), "loop variable 'i' cannot be assigned", "i = 0:i32"),
    (kern(Assign("n", ZERO)), "parameter 'n' is read-only", "n = 0:i32"),
    (kern(Alloc("R", f32[2], None, Attrs({"rom": (1.0, 2.0)})), Store("R", (ZERO,), c(1.0, f32))),
     "'R' is a constant tensor (a ROM); it cannot be stored to", "R[0:i32] = 1.0:f32"),
    (kern(Alloc("R", f32[2], None, Attrs({"rom": (1.0,)}))), "constant tensor 'R' needs 2 values, got 1",
     "alloc R: f32[2] [rom=(1.0,)]"),
    (kern(LOCAL, Store("L", (ZERO,), c(1.0, f32))), "tensor 'L' has rank 2 but is indexed with 1 index", "L[0:i32] = 1.0:f32"),
    (kern(Decl("v", f32, Load("A", (ZERO, c(1.0, f32)), f32))), "index 2 of 'A' has type f32", "let v: f32 = A[0:i32, 1.0:f32]"),
    (kern(LOCAL, Store("L", (ZERO, ZERO), NV)), "value stored to 'L' has type i32, expected f32", "L[0:i32, 0:i32] = n"),
    (kern(Decl("v", f32, c(0.0, f32)), Assign("v", NV)), "value assigned to 'v' has type i32, expected f32", "v = n"),
    (kern(Decl("v", f32, NV)), "initial value of 'v' has type i32, expected f32", "let v: f32 = n"),
    (kern(Alloc("L", T, ZERO)), "initial value of 'L' has type i32, expected f32", "alloc L: f32[4, 4] = 0:i32"),
    (kern(Decl("v", f32, BinOp("add", c(1.0, f32), NV, f32))), "operands of '+' are f32, i32, but it needs f32, f32",
     "let v: f32 = (1.0:f32 + n)"),
    (kern(Decl("v", f32, BinOp("lt", NV, NV, f32))), "'<' produces u1, but the node says f32", "let v: f32 = (n < n)"),
    (kern(Decl("v", i32, UnaryOp("not", NV, u1))), "operands of 'not' are i32, but it needs u1", "let v: i32 = (not n)"),
    (kern(Decl("v", f32, Call("exp", (NV,), f32))), "operands of 'exp' are i32, but it needs f32", "let v: f32 = exp(n)"),
    (kern(Decl("v", f32, Call("max", (c(1.0, f32),), f32))), "max takes 2 arguments, got 1", "let v: f32 = max(1.0:f32)"),
    (kern(Decl("v", f32, Call("frob", (NV,), f32))), "unknown builtin function 'frob'", None),
    (kern(Decl("v", i32, Select(NV, NV, NV, i32))), "select condition has type i32, expected u1", "let v: i32 = select(n, n, n)"),
    (kern(Decl("v", i32, Select(c(1, u1), NV, c(1.0, f32), i32))), "select branch has type f32, expected i32", None),
    (kern(If(NV, ())), "if condition has type i32, expected u1", "if n {"),
    (kern(loop("i", 0, 4, [], step=0)), "loop step must be a non-zero int", "for i in range(0:i32, 4:i32, 0) {"),
    (kern(loop("i", c(0.0, f32), 4, [])), "loop start has type f32", "for i in range(0.0:f32, 4:i32, 1) {"),
    (kern(Return((NV,)), results=(i32, i32)), "return gives 1 value, but kernel 'k' returns 2", "return n"),
    (kern(Return((NV,)), results=(T,)), "return value 1 must be a whole tensor of type f32[4, 4], got `n`", "return n"),
    (kern(LOCAL, Return((Ref("L", f32[4, 4]),)), results=(f32[2, 8],)), "return value 1 has type f32[4, 4], expected f32[2, 8]",
     "return L"),
    (kern(Decl("v", i32, NV), results=(i32,)), "kernel 'k' has results but its body does not end with a return", None),
    (kern(If(c(1, u1), (Return((NV,)),)), Return((NV,)), results=(i32,)), "return must be the last statement", "return n"),
    (kern(Return(()), Decl("v", i32, NV)), "return must be the last statement", "return"),
    (kern(CallKernel("g", (AREF, c(1.0, f32)), ("Y", "s"))), "kernel 'g' is not among the callees of 'k'", None),
    (kern(CallKernel("g", (AREF,), ("Y", "s")), callees=[SCALE]), "kernel 'g' takes 2 arguments, got 1", None),
    (kern(Alloc("X", f32[4], None), CallKernel("g", (Ref("X", f32[4]), NV), ("Y", "s")), callees=[SCALE]),
     "argument 2 of 'g' (s) has type i32, expected f32", "Y, s = call g(X, n)"),
    (kern(CallKernel("g", (Load("A", (ZERO, ZERO), f32), c(1.0, f32)), ("Y", "s")), callees=[SCALE]),
     "argument 1 of 'g' (X) must be a whole tensor of type f32[4]", None),
    (kern(CallKernel("g", (AREF, c(1.0, f32)), ("Y", "s")), callees=[SCALE]), "argument 1 of 'g' (X) has type f32[4, 4], expected f32[4]",
     None),
    (kern(LOCAL, CallKernel("g", (Ref("L", f32[4]), c(1.0, f32)), ("Y",)), callees=[SCALE]),
     "Ref 'L' has type f32[4], but 'L' is f32[4, 4]", None),
    (kern(Alloc("X", f32[4], None), CallKernel("g", (Ref("X", f32[4]), c(1.0, f32)), ("Y",)), callees=[SCALE]),
     "kernel 'g' returns 2 values, but the call has 1 output", "Y = call g(X, 1.0:f32)"),
    (kern(Decl("v", f32, BinOp("add", Ref("A", T), c(1.0, f32), f32))), "whole tensor 'A' used as a value", None),
    (kern(Decl("v", i32, Var("A", i32))), "'A' is a tensor of type f32[4, 4] used as a scalar", None),
    (kern(Decl("v", f32, Var("n", f32))), "Var 'n' has dtype f32, but 'n' is i32", None),
    (kern(Decl("v", i32, Load("n", (), i32))), "'n' is a scalar of type i32, not a tensor", None),
    (kern(Decl("v", i32, Load("A", (ZERO, ZERO), i32))), "load of 'A' has dtype i32, but its elements are f32", None),
    (kern(Decl("v", i32, Const(1.0, i32))), "constant 1.0 of i32 must hold a Python int", None),
    (kern(Decl("v", u8, Const(300, u8))), "constant 300 does not fit in u8", None),
    (kern(Decl("v", f32, Const(1, f32))), "constant 1 of f32 must hold a Python float", None),
]


@pytest.mark.parametrize("kernel,message,stmt", INVALID, ids=[e[1][:40] for e in INVALID])
def test_invalid(kernel: Kernel, message: str, stmt: str | None) -> None:
    with pytest.raises(IRVerifyError) as info:
        verify(kernel)
    assert message in info.value.message
    assert "(kernel 'k')" in info.value.message
    if stmt is not None:
        assert f"in `{stmt}`" in info.value.message


def test_callees_are_verified() -> None:
    bad = Kernel("g", (Param("X", f32[4]), Param("m", i32)), (f32[4],), (Assign("m", ZERO), Return((Ref("X", f32[4]),))))
    k = kern(CallKernel("g", (Ref("B", f32[4]), ZERO), ("Y",)), params=(Param("B", f32[4]),), callees=[bad])
    with pytest.raises(IRVerifyError, match="parameter 'm' is read-only") as info:
        verify(k)
    assert "(kernel 'g')" in info.value.message


def test_two_kernels_with_one_name() -> None:
    other = Kernel("g", (Param("X", f32[4]),), (f32[4],), (Return((Ref("X", f32[4]),)),))
    k2 = Kernel("h", (Param("X", f32[4]),), (f32[4],), (CallKernel("g", (Ref("X", f32[4]),), ("Y",)), Return((Ref("Y", f32[4]),))),
                callees=(other,))
    body = (
        CallKernel("g", (Ref("B", f32[4]), c(1.0, f32)), ("Y", "s")),
        CallKernel("h", (Ref("B", f32[4]),), ("Z",)),
    )
    k = kern(*body, params=(Param("B", f32[4]),), callees=[SCALE, k2])
    with pytest.raises(IRVerifyError, match="two different kernels are named 'g'"):
        verify(k)


def test_names_may_be_reused_in_sibling_scopes() -> None:
    body = [loop("i", 0, 4, [Decl("t", i32, i)]), loop("i", 0, 4, [Decl("t", i32, i)])]
    verify(kern(*body))


def test_triangular_bounds_see_outer_loop_var() -> None:
    inner = loop("j", 0, b.binop("add", i, c(1)), [Decl("t", i32, j)])
    verify(kern(loop("i", 0, 4, [inner])))
    with pytest.raises(IRVerifyError, match="'j' is not defined here"):
        verify(kern(loop("j", 0, Var("j", i32), [])))


def test_scalar_results_take_any_expression_and_casts_are_free() -> None:
    k = kern(Return((Cast(Load("A", (ZERO, ZERO), f32), i32), b.binop("add", NV, c(1)))), results=(i32, i32))
    verify(k)


def test_error_points_into_parsed_text() -> None:
    text = "kernel k(n: i32) -> () {\n  for i in range(0:i32, n, 1) {\n    i = n\n  }\n}\n"
    k = parse_ir(text, filename="loop.ir")  # the parser types names; read-only-ness is the verifier's
    with pytest.raises(IRVerifyError) as info:
        verify(k)
    err = info.value
    assert err.loc == Loc("loop.ir", 3, 4, 9)
    assert "loop.ir:3:5" in str(err) and "3 |     i = n" in str(err) and "^^^^^" in str(err)
