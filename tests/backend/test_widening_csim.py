"""The widening rules of ``streamdsl.types`` against the bundled ap_int.h / ap_fixed.h in C-simulation.

Random kernels compute binary and unary operations on ap_int, ap_uint, C integer and ap_fixed operands of
random widths, each result stored at the type the rules give it (and once more assigned to a narrow,
wrapping or saturating type); the simulator and the g++ C-simulation of the emitted C++ must agree bit for
bit on random full-range inputs.  The result types are also checked against the vendor's width formulas
(UG1399; ap_int_base / ap_fixed_base ``RType``) written out again here.
"""
from __future__ import annotations

import importlib.util
import itertools
import random
import shutil

import numpy as np
import pytest

import streamdsl as sd
from streamdsl.types import FixedType, IntType, arith

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="C-simulation needs g++")

N = 16
INTS = [sd.Int(3), sd.Int(7), sd.Int(12), sd.Int(20), sd.UInt(4), sd.UInt(9), sd.UInt(17), sd.i8, sd.u8, sd.i16,
        sd.i32]
FIXED = [sd.Fixed(8, 5), sd.Fixed(12, 4), sd.Fixed(10, 10), sd.UFixed(8, 3), sd.Fixed(16, 8)]
INT_OPS = ["+", "-", "*", "//", "%", "&", "|", "^"]
FIXED_OPS = ["+", "-", "*", "/"]


def vendor(op: str, a, b):
    """The result type by the vendor's formulas (C words between themselves: C's own rule)."""
    if isinstance(a, IntType) and isinstance(b, IntType):
        if a.bits in (32, 64) and b.bits in (32, 64):
            return None  # not an ap_int operation
        w1, s1, w2, s2 = a.bits, a.signed, b.bits, b.signed
        logic = max(w1 + (s2 and not s1), w2 + (s1 and not s2))
        bits, signed = {"+": (logic + 1, s1 or s2), "-": (logic + 1, True), "*": (w1 + w2, s1 or s2),
                        "//": (w1 + s2, s1 or s2), "%": (w2 + (s1 and not s2), s1 or s2), "&": (logic, s1 or s2),
                        "|": (logic, s1 or s2), "^": (logic, s1 or s2)}[op]
        return IntType(min(bits, 64), signed)
    fa = a if isinstance(a, FixedType) else FixedType(a.bits, a.bits, a.signed)
    fb = b if isinstance(b, FixedType) else FixedType(b.bits, b.bits, b.signed)
    s1, s2 = fa.signed, fb.signed
    f1, f2 = fa.width - fa.int_bits, fb.width - fb.int_bits
    if op in ("+", "-"):
        i = max(fa.int_bits + (s2 and not s1), fb.int_bits + (s1 and not s2)) + 1
        w, signed = i + max(f1, f2), s1 or s2 or op == "-"
    elif op == "*":
        w, i, signed = fa.width + fb.width, fa.int_bits + fb.int_bits, s1 or s2
    else:
        w, i, signed = s2 + fa.width + max(f2, 0), s2 + fa.int_bits + f2, s1 or s2
    return FixedType(w, i, signed)


def spell(t) -> str:
    if isinstance(t, FixedType):
        return f"sd.{'Fixed' if t.signed else 'UFixed'}({t.width}, {t.int_bits})"
    if t.bits in (8, 16, 32, 64):
        return f"sd.{t}"
    return f"sd.{'Int' if t.signed else 'UInt'}({t.bits})"


SYM = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "mod", "&": "bitand", "|": "bitor", "^": "bitxor",
       "/": "div"}


def draw(rnd, count: int):
    exprs = []
    for _ in range(count):
        if rnd.random() < 0.3:
            a, b = rnd.choice(FIXED), rnd.choice(FIXED + INTS[:6])
            if rnd.random() < 0.5:
                a, b = b, a
            op = rnd.choice(FIXED_OPS)
        else:
            a, b, op = rnd.choice(INTS), rnd.choice(INTS), rnd.choice(INT_OPS)
        exprs.append((op, a, b))
    return exprs


_COUNT = itertools.count()


def build(tmp_path, exprs, narrow):
    params = ", ".join(f"A{n}: {spell(a)}[{N}], B{n}: {spell(b)}[{N}]" for n, (_, a, b) in enumerate(exprs))
    results, body = [], []
    for n, (op, a, b) in enumerate(exprs):
        (_, r) = arith(SYM[op], a, b)
        results += [f"{spell(r)}[{N}]", f"{spell(narrow[n])}[{N}]"]
        body += [f"    R{n}: {spell(r)}[{N}] = 0", f"    W{n}: {spell(narrow[n])}[{N}] = 0",
                 f"    for i in range({N}):", f"        R{n}[i] = A{n}[i] {op} B{n}[i]",
                 f"        W{n}[i] = A{n}[i] {op} B{n}[i]"]
    outs = ", ".join(f"R{n}, W{n}" for n in range(len(exprs)))
    src = "\n".join(["import streamdsl as sd", "", "", "@sd.kernel",
                     f"def k({params}) -> ({', '.join(results)}):", *body, f"    return {outs}", ""])
    path = tmp_path / f"widen_{next(_COUNT)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


def values(rng, t):
    if isinstance(t, FixedType):
        lo, hi = int(t.min * 2 ** (t.width - t.int_bits)), int(t.max * 2 ** (t.width - t.int_bits))
        return rng.integers(lo, hi + 1, N).astype(np.float64) / 2.0 ** (t.width - t.int_bits)
    return rng.integers(t.min, t.max + 1, N, dtype=np.int64)


@pytest.mark.parametrize("seed", range(3))
def test_simulator_and_headers_agree_on_widened_results(seed, tmp_path):
    rnd, rng = random.Random(seed), np.random.default_rng(seed)
    exprs = draw(rnd, 24)
    narrow = [rnd.choice([sd.Int(5), sd.UInt(6), sd.Fixed(8, 4, "rnd", "sat"), sd.Fixed(6, 3, "trn", "wrap"),
                          sd.UFixed(7, 4, "rnd_conv", "sat")]) if isinstance(arith(SYM[op], a, b)[1], FixedType)
              else rnd.choice([sd.Int(5), sd.UInt(6), sd.i8]) for op, a, b in exprs]
    for op, a, b in exprs:
        want = vendor(op, a, b)
        if want is not None:
            assert arith(SYM[op], a, b)[1] == want, (op, a, b)
    k = build(tmp_path, exprs, narrow)
    args = []
    for _, a, b in exprs:
        args += [values(rng, a), values(rng, b)]
    sim = k(*args)
    csim = sd.schedule(k).build("hls").csim(*args)
    for n, (x, y) in enumerate(zip(sim, csim)):
        op, a, b = exprs[n // 2]
        np.testing.assert_array_equal(x, y, err_msg=f"{'R' if n % 2 == 0 else 'W'}{n // 2}: {a} {op} {b}")
