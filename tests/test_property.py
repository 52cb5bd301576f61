"""Property test: random kernels, simulated, against an independent NumPy model.

Hypothesis draws a kernel (elementwise expressions over 1..3 input tensors of
mixed dtypes with broadcasting, triangular loops and masks, or a reduction),
renders it as Python *source*, writes it to a temporary ``.py`` file and
imports it (kernels need real source files).  The simulator's result is then
compared with a NumPy evaluation written here from the documented semantics
(``streamdsl.types``): results that widen as ap_int's do (C's words i32/u32
keeping C's rule among themselves), weak literals, wrap-around at a declared
width where a value is assigned or cast (implemented with masks), floor ``//``
and ``%`` with ``x // 0 == 0`` and ``x % 0 == 0``, saturating float -> int
casts.  Floats compare with ``allclose``, integers exactly.  Every kernel's
IR must also round-trip: ``sd.parse_ir(str(k.ir)) == k.ir``.

The model shares nothing with streamdsl except the type objects used to name
dtypes; promotion and every operation are re-implemented below.
"""
from __future__ import annotations

import importlib.util
import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamdsl as sd

SETTINGS = dict(deadline=None, derandomize=True, database=None, print_blob=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

INT_TYPES = [sd.i8, sd.i16, sd.i32, sd.u8, sd.u16,
             sd.Int(3), sd.Int(5), sd.Int(12), sd.Int(17), sd.UInt(3), sd.UInt(7), sd.UInt(13), sd.UInt(31)]
FLOAT_TYPES = [sd.f32, sd.f64]
ALL_TYPES = INT_TYPES + FLOAT_TYPES


# ------------------------------------------------------------ the model's types
def is_float(t) -> bool:
    return isinstance(t, sd.FloatType)


def promote(a, b):
    """The documented promotion rule, written out again."""
    if a == b:
        return a
    if is_float(a) and is_float(b):
        return a if a.bits >= b.bits else b
    if is_float(a) or is_float(b):
        return a if is_float(a) else b
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.signed else (b, a)
    return sd.Int(min(64, max(s.bits, u.bits + 1)))


def is_word(t) -> bool:
    return not is_float(t) and t.bits in (32, 64)


def grown(op, a, b):
    """The result type of integer ``op`` on a and b: C's rule between two words, ap_int's widths otherwise."""
    if is_word(a) and is_word(b):
        return promote(a, b)
    w1, s1, w2, s2 = a.bits, a.signed, b.bits, b.signed
    logic = max(w1 + (s2 and not s1), w2 + (s1 and not s2))
    bits, signed = {"+": (logic + 1, s1 or s2), "-": (logic + 1, True), "*": (w1 + w2, s1 or s2),
                    "//": (w1 + s2, s1 or s2), "%": (w2 + (s1 and not s2), s1 or s2),
                    "&": (logic, s1 or s2), "|": (logic, s1 or s2), "^": (logic, s1 or s2)}[op]
    bits = min(bits, 64)
    return sd.Int(bits) if signed else sd.UInt(bits)


def lo_hi(t) -> tuple[int, int]:
    return (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.signed else (0, (1 << t.bits) - 1)


def npf(t):
    return np.float64 if t.bits == 64 else np.float32


def spell(t) -> str:
    if isinstance(t, sd.IntType) and t.bits not in (8, 16, 32, 64):
        return f"sd.{'Int' if t.signed else 'UInt'}({t.bits})"
    return f"sd.{t}"


# ------------------------------------------------------------ the model's values
# Integers are int64 arrays holding the value; floats are float32/float64 arrays.
def wrap(x, t) -> np.ndarray:
    """Two's-complement wrap to t's width, with masks (int64 values wrap at 64 bits by themselves)."""
    x = np.asarray(x, dtype=np.int64)
    if t.bits >= 64:
        return x
    u = x & np.int64((1 << t.bits) - 1)
    if t.signed:
        half = np.int64(1 << (t.bits - 1))
        u = np.where(u >= half, u - half - half, u)
    return u.astype(np.int64)


def conv(x, src, dst) -> np.ndarray:
    """Value conversion (a cast or an assignment)."""
    x = np.asarray(x)
    if src == dst:
        return x
    if is_float(dst):
        return x.astype(npf(dst))
    if is_float(src):  # truncate toward zero, saturate, NaN -> 0
        lo, hi = lo_hi(dst)
        t = np.trunc(np.where(np.isnan(x), 0.0, x.astype(np.float64)))
        return np.clip(t, lo, hi).astype(np.int64)
    return wrap(x, dst)


def floor_div(a, b):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.floor_divide(a, safe))


def floor_mod(a, b):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.mod(a, safe))


INT_OPS: dict[str, Callable] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "//": floor_div, "%": floor_mod,
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor, "min": np.minimum, "max": np.maximum,
}
FLOAT_OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "min": np.minimum, "max": np.maximum}
CMP_OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
           "!=": np.not_equal}


def apply_binary(op, a, b, t):
    """op on values a, b already converted to t; the result is in t."""
    if is_float(t):
        with np.errstate(all="ignore"):
            return FLOAT_OPS[op](a.astype(npf(t)), b.astype(npf(t))).astype(npf(t))
    return wrap(INT_OPS[op](a.astype(np.int64), b.astype(np.int64)), t)


# ------------------------------------------------------------ expressions
@dataclass(frozen=True)
class Lit:
    value: int | float

    def src(self) -> str:
        return f"({self.value!r})" if self.value < 0 else repr(self.value)


@dataclass(frozen=True)
class E:
    """A typed expression: its source text, dtype, and model evaluation over an env of arrays."""

    src: str
    type: object
    ev: Callable[[dict], np.ndarray]
    is_index: bool = False  # a loop variable


def lit_as(lit: Lit, other):
    """A weak literal next to an operand of type ``other``: (dtype, the value it stands for)."""
    if isinstance(lit.value, float) and not is_float(other):
        return sd.f32, float(lit.value)  # 0.5 * i is an f32 expression
    if is_float(other):
        return other, float(lit.value)
    if is_word(other):
        return other, lit.value
    v = lit.value  # next to an ap integer: the narrowest type that holds it
    if v >= 0 and not other.signed:
        return sd.UInt(max(1, v.bit_length())), v
    return sd.Int((v if v >= 0 else -v - 1).bit_length() + 1), v


def fit_literal(lit: Lit, other) -> Lit:
    """Clamp an int literal into a C word's range (a literal that does not fit one is an error)."""
    if isinstance(lit.value, int) and not is_float(other) and is_word(other):
        lo, hi = lo_hi(other)
        return Lit(min(max(lit.value, lo), hi))
    return lit


def const_ev(value, t):
    if is_float(t):
        return lambda env: np.asarray(value, dtype=npf(t))
    return lambda env: np.asarray(value, dtype=np.int64)


def operands(a, b):
    """Type a pair (at most one a literal) as the frontend does: (src_a, src_b, ta, tb, ev_a, ev_b)."""
    if isinstance(a, Lit):
        a = fit_literal(a, b.type)
        ta, va = lit_as(a, b.type)
        return a.src(), b.src, ta, b.type, const_ev(va, ta), b.ev
    if isinstance(b, Lit):
        b = fit_literal(b, a.type)
        tb, vb = lit_as(b, a.type)
        return a.src, b.src(), a.type, tb, a.ev, const_ev(vb, tb)
    return a.src, b.src, a.type, b.type, a.ev, b.ev


def binary(op, a, b) -> E:
    sa, sb, ta, tb, ea, eb = operands(a, b)
    t = promote(ta, tb)
    if op not in (FLOAT_OPS if is_float(t) else INT_OPS):
        op = "+"  # // % & | ^ need integers
    if op in ("min", "max"):
        fn = {"min": ["min", "sd.min"], "max": ["max", "sd.max"]}[op][len(sa + sb) % 2]
        src = f"{fn}({sa}, {sb})"
    else:
        src = f"({sa} {op} {sb})"
    if is_float(t) or op in ("min", "max") or (is_word(ta) and is_word(tb)):
        return E(src, t, lambda env: apply_binary(op, conv(ea(env), ta, t), conv(eb(env), tb, t), t))
    r = grown(op, ta, tb)  # exact on the operands' values, kept in the grown type (wraps only past 64 bits)
    return E(src, r, lambda env: wrap(INT_OPS[op](ea(env).astype(np.int64), eb(env).astype(np.int64)), r))


def unary(op, a: E) -> E:
    t = a.type
    if op == "neg":
        if not is_float(t) and not is_word(t):  # one bit wider, signed
            t = sd.Int(min(64, t.bits + 1))
        return E(f"(-{a.src})", t, lambda env: (-a.ev(env)).astype(npf(t)) if is_float(t) else wrap(-a.ev(env), t))
    fn = "abs" if len(a.src) % 2 else "sd.abs"
    return E(f"{fn}({a.src})", t,
             lambda env: np.abs(a.ev(env)).astype(npf(t)) if is_float(t) else wrap(np.abs(a.ev(env)), t))


def cast(a: E, t) -> E:
    return E(f"sd.cast({a.src}, {spell(t)})", t, lambda env: conv(a.ev(env), a.type, t))


def compare(op, a, b):
    sa, sb, ta, tb, ea, eb = operands(a, b)
    t = promote(ta, tb)
    return f"{sa} {op} {sb}", lambda env: CMP_OPS[op](conv(ea(env), ta, t), conv(eb(env), tb, t))


def boolean(op, c1, c2=None):
    """``not c1``, ``c1 and c2``, ``c1 or c2`` over conditions (source, model) pairs."""
    (s1, e1) = c1
    if op == "not":
        return f"(not {s1})", lambda env: np.logical_not(e1(env))
    (s2, e2) = c2
    fn = np.logical_and if op == "and" else np.logical_or
    return f"({s1} {op} {s2})", lambda env: fn(e1(env), e2(env))


def ternary(cond, a, b) -> E:
    csrc, cev = cond
    sa, sb, ta, tb, ea, eb = operands(a, b)
    t = promote(ta, tb)
    return E(f"({sa} if {csrc} else {sb})", t,
             lambda env: np.where(cev(env), conv(ea(env), ta, t), conv(eb(env), tb, t)))


# ------------------------------------------------------------ strategies
def literal(rnd) -> Lit:
    pick = rnd.randrange(3)
    if pick == 0:
        return Lit(rnd.randint(-9, 9))
    if pick == 1:
        return Lit(rnd.choice([0, 1, 2, 3, 7, 100, 127, 128, 255, -128, 1000, 40000]))
    return Lit(rnd.choice([0.5, -0.25, 1.5, 2.0, -3.0, 0.125]))
BIN_OPS = ["+", "-", "*", "//", "%", "&", "|", "^", "min", "max"]


def draw_expr(rnd, leaves: list[E], depth: int) -> E:
    """A random expression over ``leaves`` of at most ``depth`` operator levels."""
    if depth == 0 or rnd.randrange(5) == 0:
        return rnd.choice(leaves)
    kind = rnd.choice(["bin", "bin", "bin", "bin", "unary", "cast", "ternary"])
    a = draw_expr(rnd, leaves, depth - 1)
    if kind == "unary":
        return unary(rnd.choice(["neg", "abs"]), a)
    if kind == "cast":
        return cast(a, rnd.choice(ALL_TYPES))

    def other():
        return literal(rnd) if rnd.randrange(3) == 0 else draw_expr(rnd, leaves, depth - 1)

    if kind == "bin":
        b = other()
        if isinstance(b, Lit) and rnd.random() < 0.5:
            a, b = b, a  # the literal on the left: 3 - x
        return binary(rnd.choice(BIN_OPS), a, b)
    cond = compare(rnd.choice(list(CMP_OPS)), a, other())
    logic = rnd.choice(["", "", "and", "or", "not"])
    if logic == "not":
        cond = boolean("not", cond)
    elif logic:
        cond = boolean(logic, cond, compare(rnd.choice(list(CMP_OPS)), draw_expr(rnd, leaves, depth - 1), other()))
    then, orelse = draw_expr(rnd, leaves, depth - 1), other()
    if isinstance(orelse, Lit) and rnd.random() < 0.5:
        then, orelse = orelse, then
    return ternary(cond, then, orelse)


@dataclass
class Input:
    name: str
    type: object
    shape: tuple  # () for a scalar parameter
    index: str  # how the kernel body indexes it, e.g. "[i, j]"
    view: Callable[[np.ndarray], np.ndarray]  # model: the array broadcast over the (M, N) iteration space


def draw_inputs(rnd, rank: int, M: int, N: int, count: int) -> list[Input]:
    ins = []
    for n in range(count):
        t = rnd.choice(ALL_TYPES)
        name = "XYZ"[n]
        if rank == 1:
            kind = rnd.choice(["vec", "vec", "vec", "scalar"])
        else:
            kind = rnd.choice(["mat", "mat", "row", "col", "tmat", "scalar"])
        if n == 0:  # the first input sets the iteration space
            kind = "vec" if rank == 1 else "mat"
        shape, index, view = {
            "vec": ((N,), "[i]", lambda a: a),
            "mat": ((M, N), "[i, j]", lambda a: a),
            "row": ((N,), "[j]", lambda a: a[None, :]),
            "col": ((M,), "[i]", lambda a: a[:, None]),
            "tmat": ((N, M), "[j, i]", lambda a: a.T),
            "scalar": ((), "", lambda a: a),
        }[kind]
        ins.append(Input(name, t, shape, index, view))
    return ins


SPECIAL_FLOATS = [127.0, 128.0, -128.0, -129.0, 255.0, 256.0, 32768.0, -32769.0, 65536.0, 2.0**31, -2.0**31,
                  1e10, -1e10, -0.0, 0.5, -0.5, 1e-3, float("nan"), float("inf"), float("-inf")]


def random_values(rng: np.random.Generator, t, shape, special=False):
    """Stored values for t: full-range or small integers, quarter-step or uniform floats.

    With ``special``, some floats are replaced by cast boundaries, huge values, NaN and infinities.
    """
    if is_float(t):
        x = rng.uniform(-8, 8, size=shape)
        if rng.integers(2):
            x = np.round(x * 4) / 4
        if special and rng.integers(3) == 0:
            pick = rng.random(size=shape) < 0.3
            x = np.where(pick, rng.choice(SPECIAL_FLOATS, size=shape), x)
        return x.astype(t.np)
    lo, hi = lo_hi(t)
    if rng.integers(2):
        lo, hi = max(lo, -3), min(hi, 3)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(t.np)


def leaves_for(inputs: list[Input], rank: int, M: int, N: int) -> list[E]:
    out = []
    for inp in inputs:
        def ev(env, inp=inp):
            a = env[inp.name]
            return inp.view(a.astype(np.int64) if not is_float(inp.type) else a)
        out += [E(inp.name + inp.index, inp.type, ev)] * 2  # inputs twice as likely as loop variables
    out.append(E("i", sd.i32, (lambda env: np.arange(N, dtype=np.int64)) if rank == 1
                 else (lambda env: np.arange(M, dtype=np.int64)[:, None]), is_index=True))
    if rank == 2:
        out.append(E("j", sd.i32, lambda env: np.arange(N, dtype=np.int64)[None, :], is_index=True))
    return out


def signature(inputs: list[Input]) -> str:
    parts = []
    for inp in inputs:
        parts.append(f"{inp.name}: {spell(inp.type)}" + (f"[{', '.join(map(str, inp.shape))}]" if inp.shape else ""))
    return ", ".join(parts)


def call_args(inputs: list[Input], env: dict):
    args = []
    for inp in inputs:
        v = env[inp.name]
        if not inp.shape:  # scalar parameters are passed as Python numbers
            v = float(v) if is_float(inp.type) else int(v)
        args.append(v)
    return args


# ------------------------------------------------------------ loading and checking
_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("generated_kernels")


def load_kernel(directory, src: str):
    path = directory / f"gen_kernel_{next(_COUNTER)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


def check(k, src: str, args, want, t, *, rtol=1e-6, atol=1e-6):
    ir = k.ir
    text = str(ir)
    assert sd.parse_ir(text) == ir, f"round trip failed for\n{src}\n{text}"
    got = np.asarray(k(*args))
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape, src)
    info = f"\nkernel:\n{src}\nIR:\n{text}\nargs: {args}\ngot:\n{got}\nwant:\n{want}"
    if is_float(t):
        assert got.dtype == t.np, info
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=info)
    else:
        assert got.dtype == t.np, info
        assert np.array_equal(got.astype(np.int64), want.astype(np.int64)), info


# ------------------------------------------------------------ elementwise kernels
RANDOMS = st.randoms(use_true_random=False)  # draws recorded by Hypothesis: deterministic and shrinkable


@settings(max_examples=300, **SETTINGS)
@given(rnd=RANDOMS)
def test_elementwise_kernels_match_numpy(rnd, kernel_dir):
    rank = rnd.choice([1, 2, 2])
    loops = rnd.choice(["full", "grid", "lower", "upper", "mask", "rev", "step"] if rank == 2 else
                       ["full", "full", "rev", "step"])
    M, N = rnd.randint(4, 8), rnd.randint(4, 8)
    if loops in ("lower", "upper", "mask"):
        N = M
    inputs = draw_inputs(rnd, rank, M, N, rnd.randint(1, 3))
    leaves = leaves_for(inputs, rank, M, N)
    tensor_leaves = [e for e in leaves if not e.is_index]
    expr = draw_expr(rnd, leaves, rnd.randint(1, 4))
    if expr.is_index or all(e.src not in expr.src for e in tensor_leaves):  # make the inputs matter
        expr = binary("+", expr, tensor_leaves[0])
    out_t = rnd.choice([rnd.choice(ALL_TYPES), expr.type])
    shape = (N,) if rank == 1 else (M, N)
    dims = ", ".join(map(str, shape))
    store = "C[i]" if rank == 1 else "C[i, j]"
    body = [f"    C: {spell(out_t)}[{dims}] = 0"]
    written = np.ones(shape, dtype=bool)  # where the loops store
    second = None
    outer = {"full": f"range({M if rank == 2 else N})", "rev": f"range({(M if rank == 2 else N) - 1}, -1, -1)",
             "step": f"range(1, {M if rank == 2 else N}, 2)"}.get(loops)
    if loops == "step":  # odd rows (or elements) only
        written = np.zeros(shape, dtype=bool)
        written[1::2] = True
    if rank == 1:
        body += [f"    for i in {outer}:", f"        {store} = {expr.src}"]
    elif loops in ("full", "rev", "step"):
        body += [f"    for i in {outer}:", f"        for j in range({N}):", f"            {store} = {expr.src}"]
    elif loops == "grid":
        body += [f"    for i, j in sd.grid({M}, {N}):", f"        {store} = {expr.src}"]
    elif loops == "lower":
        body += [f"    for i in range({M}):", "        for j in range(i + 1):", f"            {store} = {expr.src}"]
        written = np.tri(M, N, dtype=bool)
    elif loops == "upper":
        body += [f"    for i in range({M}):", f"        for j in range(i, {N}):", f"            {store} = {expr.src}"]
        written = np.tri(M, N, dtype=bool).T
    else:
        second = draw_expr(rnd, leaves, 1)
        body += [f"    for i in range({M}):", f"        for j in range({N}):", "            if j <= i:",
                 f"                {store} = {expr.src}", "            else:",
                 f"                {store} = {second.src}"]
    body.append("    return C")
    src = (f"import streamdsl as sd\n\n\n@sd.kernel\ndef k({signature(inputs)}) -> {spell(out_t)}[{dims}]:\n"
           + "\n".join(body) + "\n")

    rng = np.random.default_rng(rnd.getrandbits(32))
    env = {inp.name: random_values(rng, inp.type, inp.shape, special=True) for inp in inputs}
    want = np.broadcast_to(conv(expr.ev(env), expr.type, out_t), shape)
    want = np.where(written, want, np.zeros(shape, dtype=want.dtype))
    if second is not None:
        other = np.broadcast_to(conv(second.ev(env), second.type, out_t), shape)
        want = np.where(np.tri(M, N, dtype=bool), want, other)
    k = load_kernel(kernel_dir, src)
    check(k, src, call_args(inputs, env), want, out_t)


# ------------------------------------------------------------ reductions
ACC_FORMS = {  # op -> (source of one update of acc with e, model op name)
    "+": ("{acc} += {e}", "+"),
    "*": ("{acc} *= {e}", "*"),
    "|": ("{acc} |= {e}", "|"),
    "^": ("{acc} ^= {e}", "^"),
    "&": ("{acc} &= {e}", "&"),
    "max": ("{acc} = max({acc}, {e})", "max"),
    "min": ("{acc} = sd.min({e}, {acc})", "min"),
}


@settings(max_examples=200, **SETTINGS)
@given(rnd=RANDOMS)
def test_reductions_match_numpy(rnd, kernel_dir):
    target = rnd.choice(["scalar", "rows", "cols", "vector"])
    rank = 1 if target == "vector" else 2
    tri = rnd.choice(["none", "none", "loop", "mask"]) if rank == 2 else "none"
    M, N = rnd.randint(4, 8), rnd.randint(4, 8)
    if rnd.randrange(4) == 0:  # sometimes long enough (> 64 steps) for the simulator's long-reduction path
        M, N = (rnd.randint(9, 12), rnd.randint(9, 12)) if rank == 2 else (M, rnd.randint(65, 150))
    if tri != "none":
        N = M
    inputs = draw_inputs(rnd, rank, M, N, rnd.randint(1, 3))
    leaves = leaves_for(inputs, rank, M, N)
    expr = draw_expr(rnd, leaves, rnd.randint(0, 2))
    if expr.is_index:
        expr = binary("*", expr, leaves[0])
    acc_t = rnd.choice([rnd.choice(ALL_TYPES), expr.type])
    if rnd.randrange(4) == 0:  # a sum of products in the accumulator's type, as in a matmul
        tensors = [e for e in leaves if not e.is_index]
        expr = binary("*", rnd.choice(tensors), rnd.choice(tensors))
        acc_t = expr.type
    ops = ["+", "+", "max", "min"] + ([] if is_float(acc_t) or is_float(expr.type) else ["*", "|", "^", "&"])
    op = rnd.choice(ops)
    lit_init = rnd.choice([0, 1, 3, -2])
    if not is_float(acc_t):
        lit_init = min(max(lit_init, lo_hi(acc_t)[0]), lo_hi(acc_t)[1])
    init = np.asarray(lit_init, npf(acc_t)) if is_float(acc_t) else np.asarray(lit_init, np.int64)

    form, model_op = ACC_FORMS[op]
    if rank == 2:
        head = [f"    for i in range({M}):", f"        for j in range({'i + 1' if tri == 'loop' else N}):"]
    else:
        head = [f"    for i in range({N}):"]
    pad = " " * (4 * (len(head) + 1))
    acc_name = {"scalar": "s", "vector": "s", "rows": "R[i]", "cols": "R[j]"}[target]
    update = form.format(acc=acc_name, e=expr.src)
    inner = [pad + "if j <= i:", pad + "    " + update] if tri == "mask" else [pad + update]
    if target in ("scalar", "vector"):
        decl, ret, res = f"    s: {spell(acc_t)} = {lit_init}", "    return s", spell(acc_t)
    else:
        size = M if target == "rows" else N
        decl, ret, res = f"    R: {spell(acc_t)}[{size}] = {lit_init}", "    return R", f"{spell(acc_t)}[{size}]"
    src = (f"import streamdsl as sd\n\n\n@sd.kernel\ndef k({signature(inputs)}) -> {res}:\n"
           + "\n".join([decl] + head + inner + [ret]) + "\n")

    rng = np.random.default_rng(rnd.getrandbits(32))
    env = {inp.name: random_values(rng, inp.type, inp.shape) for inp in inputs}
    e = np.broadcast_to(expr.ev(env), (N,) if rank == 1 else (M, N))
    w = promote(acc_t, expr.type)  # the type the update computes in, then converts back to acc_t

    def step(acc, x):
        return conv(apply_binary(model_op, conv(acc, acc_t, w), conv(x, expr.type, w), w), w, acc_t)

    # the model runs the updates in program order, one at a time, where the loops run them
    mask = np.tri(M, N, dtype=bool) if tri != "none" else np.ones(e.shape, dtype=bool)
    if target == "vector":
        acc = init
        for i in range(N):
            acc = step(acc, e[i])
        t_abs = np.abs(e.astype(np.float64)).sum()
    elif target == "scalar":
        acc = init
        for i in range(M):
            for j in range(N):
                if mask[i, j]:
                    acc = step(acc, e[i, j])
        t_abs = np.abs(e.astype(np.float64)).sum()
    elif target == "rows":
        acc = np.broadcast_to(init, (M,))
        for j in range(N):
            acc = np.where(mask[:, j], step(acc, e[:, j]), acc)
        t_abs = np.abs(e.astype(np.float64)).sum(axis=1)
    else:
        acc = np.broadcast_to(init, (N,))
        for i in range(M):
            acc = np.where(mask[i, :], step(acc, e[i, :]), acc)
        t_abs = np.abs(e.astype(np.float64)).sum(axis=0)
    k = load_kernel(kernel_dir, src)
    # float sums may be reassociated (an adder tree): allow the worst-case rounding error of a sum of
    # n terms, n * eps * sum(|terms|), for each of the two summation orders
    eps = max(float(np.finfo(npf(t)).eps) for t in (w, acc_t) if is_float(t)) if is_float(w) else 0.0
    atol = 2 * e.size * eps * float(np.max(t_abs + abs(float(init)))) + 1e-9
    check(k, src, call_args(inputs, env), acc, acc_t, rtol=1e-6, atol=atol)


# ------------------------------------------------------------ the model itself
def test_model_wraps_and_divides_like_the_docs():
    """The reference semantics used above, pinned on hand-computed values (so the model can fail too)."""
    assert wrap(np.array([127 + 1, -129, 255]), sd.i8).tolist() == [-128, 127, -1]
    assert wrap(np.array([16, -17, 31]), sd.Int(5)).tolist() == [-16, 15, -1]
    assert wrap(np.array([-1, 128]), sd.UInt(7)).tolist() == [127, 0]
    assert floor_div(np.array([-7, 7, 5]), np.array([2, -2, 0])).tolist() == [-4, -4, 0]
    assert floor_mod(np.array([-7, 7, 5]), np.array([2, -2, 0])).tolist() == [1, -1, 0]
    assert conv(np.array([-2.7, 300.0, np.nan], np.float32), sd.f32, sd.u8).tolist() == [0, 255, 0]
    assert conv(np.array([-2.7, 2.7]), sd.f64, sd.i8).tolist() == [-2, 2]
    assert promote(sd.u8, sd.i8) == sd.Int(9) and promote(sd.UInt(31), sd.i8) == sd.i32
    assert promote(sd.i16, sd.f32) == sd.f32 and promote(sd.f32, sd.f64) == sd.f64
    assert lit_as(Lit(0.5), sd.i8) == (sd.f32, 0.5) and lit_as(Lit(3), sd.u8) == (sd.UInt(2), 3)
    assert lit_as(Lit(-3), sd.u8) == (sd.Int(3), -3) and lit_as(Lit(3), sd.i32) == (sd.i32, 3)
    assert fit_literal(Lit(300), sd.u8) == Lit(300) and fit_literal(Lit(-5), sd.u32) == Lit(0)
    assert grown("*", sd.Int(3), sd.Int(3)) == sd.Int(6) and grown("+", sd.UInt(17), sd.UInt(17)) == sd.UInt(18)
    assert grown("-", sd.u8, sd.u8) == sd.Int(9) and grown("+", sd.i32, sd.i32) == sd.i32
    assert grown("+", sd.i8, sd.i32) == sd.Int(33) and grown("//", sd.i8, sd.i8) == sd.Int(9)


def test_a_known_kernel_through_the_harness(kernel_dir):
    """One fixed kernel through load/check, with a deliberately wrong expectation rejected."""
    src = ("import streamdsl as sd\n\n\n@sd.kernel\ndef k(A: sd.i8[4], B: sd.UInt(7)[4]) -> sd.Int(5)[4]:\n"
           "    C: sd.Int(5)[4] = 0\n    for i in range(4):\n        C[i] = (A[i] * B[i]) // (-3)\n    return C\n")
    k = load_kernel(kernel_dir, src)
    a = np.array([-128, 5, 100, 7], np.int8)
    b = np.array([127, 3, 2, 0], np.uint8)
    assert grown("*", sd.i8, sd.UInt(7)) == sd.Int(15)  # the product widens: nothing wraps before the store
    prod = a.astype(np.int64) * b.astype(np.int64)
    want = wrap(floor_div(prod, np.full(4, -3)), sd.Int(5))
    check(k, src, [a, b], want, sd.Int(5))
    with pytest.raises(AssertionError):
        check(k, src, [a, b], want + 1, sd.Int(5))
