"""The IR text format: print -> parse round trips, locations, and parse errors."""
from __future__ import annotations

import pytest
from ir_samples import SAMPLES, c, loop, matmul, nested_callees, scale

from streamdsl.errors import IRParseError, IRVerifyError, Loc
from streamdsl.ir import build as b
from streamdsl.ir.nodes import (
    Alloc, Attrs, Kernel, Load, Param, Ref, Return, Store, Var, walk,
)
from streamdsl.ir.ops import OPS
from streamdsl.ir.parser import parse_ir
from streamdsl.ir.printer import print_expr, print_kernel, print_stmt
from streamdsl.types import f32, i32

MM_TEXT = """\
kernel mm(A: f32[8, 16], B: f32[16, 4]) -> (f32[8, 4]) {
  alloc C: f32[8, 4] = 0.0:f32 [partition=("cyclic", 2)]
  for i in range(0:i32, 8:i32, 1) {
    for j in range(0:i32, 4:i32, 1) {
      for k in range(0:i32, 16:i32, 1) [pipeline=1] {
        C[i, j] = (C[i, j] + (A[i, k] * B[k, j]))
      }
    }
  }
  return C
}"""


# ------------------------------------------------------------- round trips
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_round_trip(name: str) -> None:
    k = SAMPLES[name]()
    text = print_kernel(k)
    parsed = parse_ir(text)
    assert parsed == k
    assert print_kernel(parsed) == text
    assert str(parsed) == text  # Kernel.__str__ is the printer


def test_matmul_text_is_exact() -> None:
    assert print_kernel(matmul()) == MM_TEXT


def test_samples_cover_every_op() -> None:
    used = {getattr(n, "op", None) or getattr(n, "fn", None) for n in walk(SAMPLES["all_ops"]())}
    assert set(OPS) <= used


def test_callees_print_once_in_dependency_order_and_are_rebuilt() -> None:
    k = nested_callees()
    text = print_kernel(k)
    heads = [line.split("(")[0] for line in text.splitlines() if line.startswith("kernel ")]
    assert heads == ["kernel k1", "kernel k2", "kernel main"]
    parsed = parse_ir(text)
    # canonical order: first call in the body, k2 before k1
    assert [c.name for c in parsed.callees] == ["k2", "k1"]
    assert parsed.callee("k2").callees == (parsed.callee("k1"),)


def test_callees_reordered_to_first_call() -> None:
    # callees listed out of first-call order come back in canonical order
    k = nested_callees()
    swapped = Kernel(k.name, k.params, k.results, k.body, k.attrs, tuple(reversed(k.callees)))
    assert parse_ir(print_kernel(swapped)) == k


def test_two_kernels_with_one_name_cannot_print() -> None:
    X = f32[4]
    other = Kernel("k1", (Param("X", X),), (X,), (Return((Ref("X", X),)),))
    k = nested_callees()
    bad = Kernel("main", k.params, k.results, k.body, k.attrs, (k.callees[0], other))
    with pytest.raises(IRVerifyError, match="two different kernels are named 'k1'"):
        print_kernel(bad)


def test_comments_blank_lines_and_trailing_newline() -> None:
    text = "# header comment\n\n" + MM_TEXT.replace("{\n", "{   # open\n", 1).replace("  return C", "\n  # done\n  return C") + "\n\n"
    assert parse_ir(text) == matmul()


def test_alloc_with_var_init_and_attrs() -> None:
    k = SAMPLES["attr_kinds"]()
    alloc = parse_ir(print_kernel(k)).body[0]
    assert isinstance(alloc, Alloc) and alloc.init == Var("s", f32)
    assert alloc.attrs == Attrs({"dim": 0, "partition": ("block", 2)})


def test_negative_constant_vs_negation() -> None:
    assert print_expr(c(-2.0, f32)) == "-2.0:f32"
    assert print_expr(b.unary("neg", c(2.0, f32))) == "(-2.0:f32)"
    assert print_expr(b.unary("neg", c(-2, i32))) == "(--2:i32)"
    assert print_expr(b.unary("not", b.binop("lt", c(1), c(2)))) == "(not (1:i32 < 2:i32))"


def test_print_stmt_indents() -> None:
    s = loop("i", 0, 4, [Store("T", (Var("i", i32),), c(1.0, f32))], unroll=2)
    assert print_stmt(s, 1) == "  for i in range(0:i32, 4:i32, 1) [unroll=2] {\n    T[i] = 1.0:f32\n  }"


def test_unprintable_names_are_refused() -> None:
    k = Kernel("k", (Param("select", i32),), (), ())
    with pytest.raises(IRVerifyError, match="name 'select' cannot be written"):
        print_kernel(k)


def test_locations() -> None:
    k = parse_ir(MM_TEXT, filename="mm.ir")
    alloc, outer, ret = k.body
    assert alloc.loc == Loc("mm.ir", 2, 2, 56)
    assert outer.loc.line == 3 and outer.loc.col == 2
    store = outer.body[0].body[0].body[0]
    assert store.loc == Loc("mm.ir", 6, 8, 49)
    assert store.value.rhs.lhs.loc == Loc("mm.ir", 6, 30, 37)  # A[i, k]
    assert ret.values[0].loc == Loc("mm.ir", 10, 9, 10)
    assert k.params[1].loc == Loc("mm.ir", 1, 25, 26)
    assert all(n.loc is not None and n.loc.file == "mm.ir" for n in walk(k))


def test_hand_written_variants() -> None:
    """Text a person might write: `{}`, CRLF line ends, tabs, comment-only lines."""
    assert parse_ir("kernel nothing() -> () {}") == SAMPLES["empty"]()
    text = MM_TEXT.replace("\n", "\r\n").replace("    ", "\t").replace("\r\n  return", "\r\n\t# end\r\n  return")
    assert parse_ir(text) == matmul()


def test_loop_var_and_ref_typing() -> None:
    k = parse_ir(print_kernel(scale()))
    store = k.body[1].body[0]
    assert store.indices == (Var("i", i32),)
    assert store.value.lhs == Load("X", (Var("i", i32),), f32)
    assert k.body[-1].values[0] == Ref("Y", f32[4])


# ------------------------------------------------------------ parse errors
HEAD = "kernel f(A: f32[4, 4], n: i32) -> (f32) {\n"


def _k(*lines: str, head: str = HEAD) -> str:
    return head + "".join(f"  {ln}\n" for ln in lines) + "}\n"


G = "kernel g(X: f32[4, 4], s: f32) -> (f32[4, 4]) {\n  return X\n}\n\n"

PARSE_ERRORS = [
    # (text, message, line, column of the caret (1-based))
    (_k("return x"), "unknown name 'x'", 2, 10),
    (_k("let v: f33 = 0.0:f32", "return v"), "unknown type 'f33'", 2, 10),
    (_k("let v: f32 = 0.0:f33", "return v"), "unknown type 'f33'", 2, 20),
    (_k("for i in range(0:i32, 4:i32, 1)", "}", "return 0.0:f32"), "unexpected end of line", 2, 34),
    (_k("return A[0:i32]"), "tensor 'A' has rank 2 but is indexed with 1 index", 2, 12),
    (_k("let v: f32 = (A[0:i32, 0:i32] + n)", "return v"),
     "operands of '+' are f32 and i32; the IR needs an explicit cast<...>", 2, 16),
    (_k("let v: f32 = exp(n)", "return v"), "argument of 'exp' is i32; the IR needs an explicit cast<...>", 2, 16),
    (_k("let v: i32 = (-n)", "let w: u1 = (not v)", "return 0.0:f32"), "operand of 'not' is i32", 3, 15),
    (_k("T = call g(A, 1.0:f32)", "return 0.0:f32"), "unknown kernel 'g'", 2, 12),
    (G + _k("T = call g(A)", "return 0.0:f32"), "kernel 'g' takes 2 arguments, got 1", 6, 3),
    (G + _k("T = call g(A, n)", "return 0.0:f32"), "argument 2 of 'g' (s) must be f32, got i32", 6, 17),
    (G + _k("T, U = call g(A, 1.0:f32)", "return 0.0:f32"), "kernel 'g' returns 1 value, but the call assigns 2", 6, 3),
    (G + _k("return 0.0:f32").replace("kernel f", "kernel h") + "\n" + _k("return 0.0:f32"),
     "kernel 'g' is defined but not called", 1, 8),
    (_k("for i in range(0:i32, 4:i32, 1) [unroll=] {", "}", "return 0.0:f32"), "unexpected ']'", 2, 43),
    (_k("for i in range(0:i32, 4:i32, 1) [a=1, a=2] {", "}", "return 0.0:f32"), "attribute 'a' is given twice", 2, 41),
    (_k("let n: i32 = 0:i32", "return 0.0:f32"), "'n' is already defined", 2, 7),
    (_k("for i in range(0:i32, 4:i32, 1) {", "  let i: i32 = 0:i32", "}", "return 0.0:f32"), "'i' is already defined", 3, 9),
    (_k("for i in range(0:i32, 4:i32, 1) {", "}", "return i"), "unknown name 'i'", 4, 10),
    (_k("return"), "kernel 'f' returns 1 value (f32), but this return gives 0", 2, 3),
    (_k("return n"), "return value 1 has type i32, but the kernel returns f32", 2, 10),
    (_k("let v: i32 = 1.5:i32", "return 0.0:f32"), "float literal 1.5 used as i32", 2, 16),
    (_k("let v: u8 = 256:u8", "return 0.0:f32"), "constant 256 does not fit in u8", 2, 15),
    (_k("if n {", "}", "return 0.0:f32"), "if condition has type i32; it must be u1", 2, 6),
    (_k("A[0:i32, 0:i32] = n", "return 0.0:f32"), "the value stored to 'A' has type i32, expected f32", 2, 21),
    (_k("return frob(1.0:f32)"), "unknown function 'frob'", 2, 10),
    (_k("return A"), "return value 1 has type f32[4, 4], but the kernel returns f32", 2, 10),
    (_k("let v: f32 = (A + 1.0:f32)", "return v"), "tensor 'A' is used as a scalar value", 2, 17),
    (_k("return A[0.5:f32, 0:i32]"), "index 1 of 'A' has type f32; indices must be integers", 2, 12),
    (_k("n[0:i32] = 1:i32", "return 0.0:f32"), "'n' is a scalar of type i32 and cannot be indexed", 2, 3),
    (_k("let v: fx16_20 = 0.0:f32", "return v"), "fixed-point type needs", 2, 10),
    (_k("alloc T: f32[0]", "return 0.0:f32"), "tensor dimension must be a positive integer, got 0", 2, 16),
    (_k("let v: f32 = select((n > 0:i32), 1.0:f32, n)", "return v"), "select branches have types f32 and i32", 2, 16),
    (_k("let v: f32 = $", "return v"), "unexpected character '$'", 2, 16),
    (_k("return 0.0:f32").rstrip("}\n"), "unexpected end of input", 2, 17),
    (_k("call f(A, n)", "return 0.0:f32"), "kernel 'f' calls itself", 2, 8),
    (_k("return 0.0:f32") + "\n" + _k("return 0.0:f32"), "kernel 'f' is defined twice", 5, 8),
    ("# nothing here\n", "the text contains no kernel", 1, 1),
    (_k('for i in range(0:i32, 4:i32, 1) [tag="\\q"] {', "}", "return 0.0:f32"), "invalid string literal", 2, 40),
    (_k("alloc T: f32", "return 0.0:f32"), "alloc needs a tensor type, got f32", 2, 12),
    (_k("let T: f32[2] = 0.0:f32", "return 0.0:f32"), "let needs a scalar type, got f32[2]", 2, 10),
]


@pytest.mark.parametrize("text,message,line,col", PARSE_ERRORS, ids=[e[1][:40] for e in PARSE_ERRORS])
def test_parse_error(text: str, message: str, line: int, col: int) -> None:
    with pytest.raises(IRParseError) as info:
        parse_ir(text)
    err = info.value
    assert message in err.message
    rendered = str(err)
    assert f"<ir>:{line}:{col}" in rendered
    source = text.splitlines()[line - 1]
    if source.strip():
        assert f"{line} | {source}" in rendered
        caret = next(ln for ln in rendered.splitlines() if ln.strip().endswith("^") and "|" in ln)
        bar = caret.index("|") + 2
        assert caret.index("^") - bar == col - 1


def test_syntax_error_hint_lists_expected_tokens() -> None:
    with pytest.raises(IRParseError) as info:
        parse_ir(_k("for i in range(0:i32, 4:i32, 1)", "}", "return 0.0:f32"))
    assert info.value.hint == "expected one of: '[', '{'"
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_custom_filename() -> None:
    with pytest.raises(IRParseError) as info:
        parse_ir(_k("return x"), filename="my.ir")
    assert "my.ir:2:10" in str(info.value) and "  return x" in str(info.value)


# ------------------------------------------------ property: random expressions
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from streamdsl.errors import StreamDSLError  # noqa: E402
from streamdsl.ir.ops import BINARY, CALLS, UNARY  # noqa: E402
from streamdsl.ir.verify import verify  # noqa: E402
from streamdsl.types import (  # noqa: E402
    Fixed, FixedType, Int, IntType, UFixed, bf16, f16, f64, i64, u1, u8, u64,
)

DTYPES = [u1, Int(5), i32, u8, i64, u64, f16, bf16, f32, f64, Fixed(16, 8), UFixed(8, 0)]
VARS = [Var(f"p{n}", t) for n, t in enumerate(DTYPES)]


@st.composite
def _const(draw):
    dt = draw(st.sampled_from(DTYPES))
    if isinstance(dt, IntType):
        return c(draw(st.integers(dt.min, dt.max)), dt)
    if isinstance(dt, FixedType):
        return c(draw(st.floats(-100, 100)), dt)
    return c(draw(st.floats(allow_nan=True, allow_infinity=True, width=32)), dt)


def _combine(draw, parts):
    """One build-level operation over subexpressions; ill-typed choices fall back to an operand."""
    kind = draw(st.sampled_from(["bin", "un", "call", "cast", "select"]))
    a, b2, c3 = parts
    try:
        if kind == "bin":
            return b.binop(draw(st.sampled_from(sorted(BINARY))), a, b2)
        if kind == "un":
            return b.unary(draw(st.sampled_from(sorted(UNARY))), a)
        if kind == "call":
            fn = draw(st.sampled_from(sorted(CALLS)))
            return b.call(fn, (a, b2)[: OPS[fn].arity])
        if kind == "cast":
            return b.cast(a, draw(st.sampled_from(DTYPES)))
        return b.select(a, b2, c3)
    except StreamDSLError:
        return a


@st.composite
def exprs(draw, depth: int = 3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(st.sampled_from(VARS), _const()))
    return _combine(draw, [draw(exprs(depth - 1)) for _ in range(3)])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs())
def test_random_expression_round_trip(e) -> None:
    k = Kernel("h", tuple(Param(v.name, v.dtype) for v in VARS), (e.dtype,), (Return((e,)),))
    verify(k)  # build produces valid IR ...
    text = print_kernel(k)
    assert parse_ir(text) == k  # ... that survives the text format
    assert print_kernel(parse_ir(text)) == text
