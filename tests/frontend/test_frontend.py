"""The IR the frontend builds for each supported construct.

Each test writes a kernel, prints its IR and checks the lines that show the
construct was translated as documented (promotion casts, weak literals,
loop structure, ...).  Every kernel here also round-trips through the text
form: ``sd.parse_ir(str(k.ir)) == k.ir``.
"""
import inspect

import numpy as np
import pytest

import streamdsl as sd
from streamdsl.ir.nodes import Alloc, Assign, CallKernel, Decl, For, If, Return, Store

N = 4
SCALE = 2.5


def ir_lines(k) -> list[str]:
    text = str(k.ir)
    assert sd.parse_ir(text) == k.ir, text
    return [line.strip() for line in text.splitlines()]


def has(k, *expected: str) -> None:
    lines = ir_lines(k)
    for e in expected:
        assert e in lines, f"{e!r} not among the IR lines:\n" + "\n".join(lines)


# ------------------------------------------------------------------ promotion
@sd.kernel
def promo(A: sd.i8[N], B: sd.i32[N], U: sd.u8[N], H: sd.u16[N], X: sd.f32[N], D: sd.f64[N]) -> sd.f32[N]:
    C: sd.f32[N] = 0.0
    for i in range(N):
        a = A[i] + B[i]
        b = A[i] / B[i]
        c = A[i] + 1
        d = 0.5 * i
        e = U[i] * A[i]
        f = H[i] - B[i]
        g = X[i] + D[i]
        h = X[i] + 1
        k = D[i] + 0.5
        m = U[i] + 1
        n = A[i] // B[i]
        C[i] = a + b + c + d + e + f + g + h + k + m + n
    return C


def test_a_narrow_int_and_a_c_word_widen_as_ap_int():
    # i8 + i32: the i32 counts as ap_int<32> (as the vendor's headers treat a C int): 33 bits, nothing wraps
    has(promo, "let a: i33 = (A[i] + B[i])")


def test_int_true_division_is_f32():
    has(promo, "let b: f32 = (cast<f32>(A[i]) / cast<f32>(B[i]))")


def test_weak_int_literal_widens_as_ap_int():
    has(promo, "let c: i9 = (A[i] + 1:i8)", "let m: u9 = (U[i] + 1:u8)", "let h: f32 = (X[i] + 1.0:f32)")


def test_float_literal_with_int_gives_f32():
    has(promo, "let d: f32 = (0.5:f32 * cast<f32>(i))")


def test_products_and_differences_widen():
    # u8 * i8: 16 bits, signed; u16 - i32: 33 bits (a difference is always signed)
    has(promo, "let e: i16 = (U[i] * A[i])", "let f: i33 = (H[i] - B[i])")


def test_float_widths_and_weak_float_literal():
    has(promo, "let g: f64 = (cast<f64>(X[i]) + D[i])", "let k: f64 = (D[i] + 0.5:f64)")


def test_floor_division_of_ints():
    has(promo, "let n: i9 = (A[i] // B[i])")  # |A // B| <= |A|, but -128 // -1 needs a ninth bit


def test_promotion_matches_types_arith(tmp_path):
    for a in (sd.i8, sd.u8, sd.i16, sd.u16, sd.i32, sd.Int(5), sd.UInt(7), sd.f32, sd.f64):
        for b in (sd.i8, sd.u8, sd.i32, sd.UInt(3), sd.f32):
            src = f"""
import streamdsl as sd
@sd.kernel
def k(A: sd.{_spell(a)}[2], B: sd.{_spell(b)}[2]) -> sd.f64[2]:
    C: sd.f64[2] = 0.0
    for i in range(2):
        x = A[i] + B[i]
        C[i] = x
    return C
"""
            k = _load(src, tmp_path)
            decl = next(s for s in k.ir.body[1].body if isinstance(s, Decl))
            assert decl.dtype == sd.types.arith("add", a, b)[1], (a, b)


_MOD_COUNT = [0]


def _spell(t) -> str:
    if isinstance(t, sd.IntType) and t.bits not in (8, 16, 32, 64):
        return f"{'Int' if t.signed else 'UInt'}({t.bits})"
    return str(t)


def _load(src: str, folder):
    """Import a kernel from source written to a real file in ``folder`` (kernels need source files)."""
    import importlib.util

    _MOD_COUNT[0] += 1
    path = folder / f"gen_{_MOD_COUNT[0]}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


# ------------------------------------------------------- conditions and select
@sd.kernel
def conds(A: sd.i8[N], X: sd.f32[N], B: sd.i32[N]) -> sd.f32[N]:
    C: sd.f32[N] = 0.0
    for i in range(N):
        y = A[i] + 1
        C[i] = X[i] if 0 < y < 3 else 2.0
        if i < 1:
            C[i] = 1.0
        elif i == 1:
            C[i] = 2.0
        elif i >= 3:
            C[i] = 3.0
        else:
            C[i] = X[i]
        if not (A[i] > 1 and B[i] != 0 or X[i] >= 0.0):
            C[i] += 1.0
        if B[i]:
            C[i] -= 1.0
    return C


def test_comparison_chain_is_a_conjunction():
    has(conds, "C[i] = select(((0:i9 < y) and (y < 3:i9)), X[i], 2.0:f32)")


def test_boolean_operators_and_not():
    has(conds, "if (not (((A[i] > 1:i8) and (B[i] != 0:i32)) or (X[i] >= 0.0:f32))) {")


def test_non_boolean_condition_compares_with_zero():
    has(conds, "if (B[i] != 0:i32) {")


def test_elif_nests_in_else():
    loop = conds.ir.body[1]
    chain = loop.body[2]
    assert isinstance(chain, If) and len(chain.orelse) == 1
    second = chain.orelse[0]
    assert isinstance(second, If) and len(second.orelse) == 1
    third = second.orelse[0]
    assert isinstance(third, If) and len(third.then) == 1 and len(third.orelse) == 1
    assert isinstance(third.orelse[0], Store)
    lines = ir_lines(conds)
    assert lines.count("} else {") == 3


def test_ternary_of_literals_and_of_mixed_types():
    @sd.kernel
    def t(A: sd.i16[N], X: sd.f64[N]) -> sd.f64[N]:
        C: sd.f64[N] = 0.0
        for i in range(N):
            C[i] = 1 if A[i] > 0 else 0
            C[i] = A[i] if A[i] > 0 else X[i]
        return C

    has(t, "C[i] = cast<f64>(select((A[i] > 0:i16), 1:i32, 0:i32))",
        "C[i] = select((A[i] > 0:i16), cast<f64>(A[i]), X[i])")


def _offset_kernel(unit_offset: bool):
    @sd.kernel
    def t(X: sd.f32[N], W: sd.f32[N]) -> sd.f32[N]:
        C: sd.f32[N] = 0.0
        for i in range(N):
            C[i] = X[i] * ((1.0 + W[i]) if unit_offset else W[i]) * (2.0 if N > SCALE else 3.0)
        return C

    return t


def test_ternary_on_a_closure_constant_is_chosen_when_the_kernel_is_defined():
    """A factory's option (``(1 + w) if unit_offset else w``) leaves only its branch in the IR: no select, no cast."""
    has(_offset_kernel(True), "C[i] = ((X[i] * (1.0:f32 + W[i])) * 2.0:f32)")
    has(_offset_kernel(False), "C[i] = ((X[i] * W[i]) * 2.0:f32)")
    x, w = np.arange(N, dtype=np.float32), np.full(N, 0.5, np.float32)
    np.testing.assert_array_equal(_offset_kernel(True)(x, w), x * 1.5 * 2)


# --------------------------------------------------------- assignment and loops
@sd.kernel
def augs(A: sd.f32[N, N], X: sd.f32[N]) -> (sd.f32[N, N], sd.i32, sd.f32):
    C: sd.f32[N, N] = 0.0
    acc: sd.i32 = 0
    s: sd.f32 = 0.0
    for i in range(N):
        for j in range(N):
            C[i, j] += A[i, j] * X[j]
            C[i, j] *= 2.0
        s += X[i]
        acc += X[i]
        acc -= 1
        acc <<= 1
    return C, acc, s


def test_augmented_assignment_on_elements_and_scalars():
    has(augs,
        "C[i, j] = (C[i, j] + (A[i, j] * X[j]))",
        "C[i, j] = (C[i, j] * 2.0:f32)",
        "s = (s + X[i])",
        "acc = cast<i32>((cast<f32>(acc) + X[i]))",  # assignment converts back to the declared type
        "acc = (acc - 1:i32)",
        "acc = (acc << 1:i32)")


def test_declarations():
    @sd.kernel
    def d(U: sd.u8[N]) -> sd.i16[N]:
        """A docstring is ignored."""
        C: sd.i16[N] = 0
        for i in range(N):
            pass
            x: sd.i16 = U[i]
            z: sd.f32
            c = sd.cast(7, sd.u8)
            C[i] = x + c + z
        return C

    has(d, "alloc C: i16[4] = 0:i16", "let x: i16 = cast<i16>(U[i])", "let z: f32 = 0.0:f32",
        "let c: u8 = 7:u8", "C[i] = cast<i16>((cast<f32>((x + cast<i16>(c))) + z))")


def test_sd_grid_is_nested_loops():
    @sd.kernel
    def grid(A: sd.f32[N, 3, 2]) -> sd.f32[N, 3, 2]:
        C: sd.f32[N, 3, 2] = 0.0
        for i, j, k in sd.grid(N, 3, 2):
            C[i, j, k] = A[i, j, k]
        return C

    @sd.kernel
    def nested(A: sd.f32[N, 3, 2]) -> sd.f32[N, 3, 2]:
        C: sd.f32[N, 3, 2] = 0.0
        for i in range(N):
            for j in range(3):
                for k in range(2):
                    C[i, j, k] = A[i, j, k]
        return C

    assert grid.ir.body == nested.ir.body
    has(grid, "for i in range(0:i32, 4:i32, 1) {", "for j in range(0:i32, 3:i32, 1) {",
        "for k in range(0:i32, 2:i32, 1) {")
    loop = grid.ir.body[1]
    assert isinstance(loop, For) and isinstance(loop.body[0], For) and isinstance(loop.body[0].body[0], For)


def test_triangular_bounds_and_steps():
    @sd.kernel
    def tri(A: sd.f32[N, N]) -> sd.f32[N, N]:
        C: sd.f32[N, N] = 0.0
        for i in range(N):
            for j in range(i + 1):
                C[i, j] = A[i, j]
            for j in range(i, N):
                C[i, j] = A[j, i]
        for i in range(0, N, 2):
            C[i, 0] = 0.0
        for i in range(N - 1, -1, -1):
            C[i, 1] = 1.0
        return C

    has(tri, "for j in range(0:i32, (i + 1:i32), 1) {", "for j in range(i, 4:i32, 1) {",
        "for i in range(0:i32, 4:i32, 2) {", "for i in range(3:i32, -1:i32, -1) {")
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    out = tri(x)
    want = np.where(np.tri(4, dtype=bool), x, x.T)
    want[::2, 0] = 0.0
    want[:, 1] = 1.0
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------ closures, calls
def _make_scaled():
    M = 6
    scale = np.float32(0.25)
    offset = 3

    @sd.kernel
    def scaled(X: sd.f32[M]) -> (sd.f32[M], sd.i32):
        Y: sd.f32[M] = 0.0
        for i in range(M):
            Y[i] = X[i] * scale + SCALE + offset
        return Y, M * 2 - 1

    return scaled


def test_closure_and_global_constants():
    k = _make_scaled()
    has(k, "kernel scaled(X: f32[6]) -> (f32[6], i32) {", "alloc Y: f32[6] = 0.0:f32",
        "Y[i] = (((X[i] * 0.25:f32) + 2.5:f32) + 3.0:f32)", "return Y, 11:i32")
    y, n = k(np.ones(6, np.float32))
    np.testing.assert_allclose(y, 5.75)
    assert n == 11


SHAPE = (3, 5)
CONSTS = {"bias": 0.5}


def test_subscripted_constants():
    @sd.kernel
    def k(A: sd.f32[SHAPE[0], SHAPE[1]]) -> sd.f32[SHAPE[0]]:
        C: sd.f32[SHAPE[0]] = 0.0
        for i in range(SHAPE[0]):
            for j in range(SHAPE[1]):
                C[i] += A[i, j] + CONSTS["bias"]
        return C

    has(k, "for j in range(0:i32, 5:i32, 1) {", "C[i] = (C[i] + (A[i, j] + 0.5:f32))")
    np.testing.assert_allclose(k(np.ones((3, 5), np.float32)), 7.5)


def test_string_annotations():
    @sd.kernel
    def s(A: "sd.f32[4]") -> "sd.f32[4]":
        C: "sd.f32[4]" = 0.0
        for i in range(4):
            C[i] = A[i]
        return C

    has(s, "kernel s(A: f32[4]) -> (f32[4]) {", "alloc C: f32[4] = 0.0:f32")


@sd.kernel
def stats(A: sd.f32[N]) -> (sd.f32[N], sd.f32):
    B: sd.f32[N] = 0.0
    s: sd.f32 = 0.0
    for i in range(N):
        B[i] = A[i] * SCALE
        s += A[i]
    return B, s


@sd.kernel
def caller(A: sd.f32[N]) -> sd.f32[N]:
    T, t = stats(A)
    U, u = stats(T)
    C: sd.f32[N] = 0.0
    for i in range(N):
        C[i] = U[i] + t + u
    return C


def test_kernel_call_with_two_results():
    lines = ir_lines(caller)
    assert "T, t = call stats(A)" in lines and "U, u = call stats(T)" in lines
    # the callee prints once, before its caller
    assert lines.index("kernel stats(A: f32[4]) -> (f32[4], f32) {") < lines.index(
        "kernel caller(A: f32[4]) -> (f32[4]) {")
    assert sum(line.startswith("kernel stats") for line in lines) == 1
    assert caller.ir.callees == (stats.ir,)
    assert isinstance(caller.ir.body[0], CallKernel) and caller.ir.body[0].outs == ("T", "t")
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(caller(x), x * 6.25 + x.sum() + (x * 2.5).sum())


def test_builtins_min_max_abs_cast():
    @sd.kernel
    def b(A: sd.i8[N], B: sd.i32[N], X: sd.f32[N], D: sd.f64[N]) -> sd.f64[N]:
        C: sd.f64[N] = 0.0
        for i in range(N):
            p = min(A[i], B[i])
            q = max(B[i], 3)
            r = abs(A[i])
            s = sd.max(X[i], 0.0)
            t = sd.min(X[i], D[i], 1.0)
            u = sd.abs(X[i])
            v = sd.cast(X[i], sd.i16)
            w = sd.exp(X[i]) + sd.sqrt(D[i]) + sd.tanh(A[i])
            C[i] = p + q + r + s + t + u + v + w
        return C

    has(b, "let p: i32 = min(cast<i32>(A[i]), B[i])", "let q: i32 = max(B[i], 3:i32)", "let r: i8 = abs(A[i])",
        "let s: f32 = max(X[i], 0.0:f32)", "let t: f64 = min(min(cast<f64>(X[i]), D[i]), 1.0:f64)",
        "let u: f32 = abs(X[i])", "let v: i16 = cast<i16>(X[i])",
        "let w: f64 = ((cast<f64>(exp(X[i])) + sqrt(D[i])) + cast<f64>(tanh(cast<f32>(A[i]))))")


def test_explicit_cast_of_literals_converts():
    """sd.cast on a number converts it like any cast: truncate, saturate, wrap (it is never an error)."""
    @sd.kernel
    def c(A: sd.f32[N]) -> sd.f64[N]:
        C: sd.f64[N] = 0.0
        for i in range(N):
            a = sd.cast(1.75, sd.i32)
            b = sd.cast(300, sd.u8)
            d = sd.cast(-1, sd.UInt(7))
            e = sd.cast(1e10, sd.i8)
            f = sd.cast(0.1, sd.f64)
            g = sd.cast(-2.5, sd.u8)
            C[i] = a + b + d + e + f + g
        return C

    has(c, "let a: i32 = 1:i32", "let b: u8 = 44:u8", "let d: u7 = 127:u7", "let e: i8 = 127:i8",
        "let f: f64 = 0.1:f64", "let g: u8 = 0:u8")
    np.testing.assert_allclose(c(np.zeros(N, np.float32)), 1 + 44 + 127 + 127 + 0.1 + 0)


def test_constant_folding_and_unary():
    @sd.kernel
    def c(A: sd.i32[N]) -> sd.i32[N]:
        C: sd.i32[N] = 0
        for i in range(N):
            C[i] = A[i] * (N * 2 - 1) + -A[i] + ~A[i] + (1 << 3)
        return C

    has(c, "C[i] = ((((A[i] * 7:i32) + (-A[i])) + (~A[i])) + 8:i32)")


def test_loop_variables_are_i32_and_indices_cast():
    @sd.kernel
    def idx(A: sd.f32[N], J: sd.u8[N]) -> sd.f32[N]:
        C: sd.f32[N] = 0.0
        for i in range(N):
            C[i] = A[J[i]] + A[3]
        return C

    has(idx, "C[i] = (A[J[i]] + A[3:i32])")
    assert idx(np.arange(4, dtype=np.float32), np.array([3, 2, 1, 0], np.uint8)).tolist() == [6, 5, 4, 3]


# -------------------------------------------------------- structure and repr
def test_statement_kinds_and_locations():
    k = augs.ir
    assert [type(s) for s in k.body] == [Alloc, Decl, Decl, For, Return]
    store = k.body[3].body[0].body[0]
    assert isinstance(store, Store)
    src, first = inspect.getsourcelines(augs.fn)
    line = first + next(n for n, t in enumerate(src) if "C[i, j] += A[i, j] * X[j]" in t)
    assert store.loc.file == __file__ and store.loc.line == line
    assert isinstance(k.body[3].body[2], Assign)


def test_ir_round_trips_and_is_cached():
    for k in (promo, conds, augs, stats, caller, _make_scaled()):
        assert sd.parse_ir(str(k.ir)) == k.ir
        assert k.ir is k.ir
        assert str(k) == str(k.ir)


def test_repr():
    assert repr(stats) == "<kernel stats(A: f32[4]) -> (f32[4], f32)>"
    assert repr(promo) == ("<kernel promo(A: i8[4], B: i32[4], U: u8[4], H: u16[4], X: f32[4], D: f64[4]) "
                           "-> (f32[4])>")
    assert stats.__name__ == "stats" and stats.__wrapped__ is stats.fn

    @sd.kernel
    def nothing(A: sd.f32[2]) -> None:
        pass

    assert repr(nothing) == "<kernel nothing(A: f32[2]) -> ()>"
    assert nothing(np.zeros(2, np.float32)) is None


def test_simulated_results_follow_the_ir():
    a = np.array([-3, 0, 2, 5], np.int8)
    b = np.array([2, -4, 3, 7], np.int32)
    u = np.array([250, 1, 2, 255], np.uint8)
    h = np.array([0, 1, 65535, 7], np.uint16)
    x = np.array([0.5, -1.5, 2.0, 3.0], np.float32)
    d = np.array([1.0, 2.0, -3.0, 0.25], np.float64)
    out = promo(a, b, u, h, x, d)
    i = np.arange(4)
    ai, bi = a.astype(np.int64), b.astype(np.int64)
    want = ((ai + bi) + ai / bi + (ai + 1) + 0.5 * i + u.astype(np.int64) * ai  # widened: nothing wraps
            + (h.astype(np.int64) - bi) + (x.astype(np.float64) + d) + (x + 1) + (d + 0.5)
            + (u.astype(np.int64) + 1) + np.floor_divide(ai, bi))
    np.testing.assert_allclose(out, want.astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("k", [promo, conds, augs, stats, caller])
def test_every_module_kernel_round_trips(k):
    assert sd.parse_ir(str(k.ir)) == k.ir
