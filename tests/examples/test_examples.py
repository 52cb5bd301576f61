"""Every example in examples/ agrees with its NumPy reference.

Each example module is imported from its file, its kernel is run on random
inputs with fixed seeds and compared with the module's ``reference``.  Floats
use rtol = atol = 1e-5 unless a comment says otherwise; integers are compared
exactly.  Examples that expose a ``make_*`` factory are also checked at other
sizes (odd, tiny, non-square).
"""
from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import streamdsl as sd

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str):
    """Import examples/<name>.py as a module (cached in sys.modules)."""
    modname = f"_sd_example_{name}"
    if modname in sys.modules:
        return sys.modules[modname]
    spec = importlib.util.spec_from_file_location(modname, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    spec.loader.exec_module(mod)
    return mod


def close(got, want, rtol=1e-5, atol=1e-5):
    assert isinstance(got, np.ndarray)
    assert got.shape == np.shape(want)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------- input makers
# Each maker takes the example's sizes and returns the kernel's arguments.
def vadd_args(n, seed=0):
    r = rng(seed)
    return r.standard_normal(n, dtype=np.float32), r.standard_normal(n, dtype=np.float32)


def gemm_args(m, k, n, seed=0):
    # uniform [0, 1): all-positive sums, so float32 reassociation error stays far below rtol
    r = rng(seed)
    return r.random((m, k), dtype=np.float32), r.random((k, n), dtype=np.float32)


def conv2d_args(c_in, h, w, c_out, seed=0):
    r = rng(seed)
    X = r.standard_normal((c_in, h, w), dtype=np.float32)
    Wt = r.standard_normal((c_out, c_in, 3, 3), dtype=np.float32) / 3
    bias = r.standard_normal(c_out, dtype=np.float32)
    return X, Wt, bias


def jacobi_args(n, seed=0):
    r = rng(seed)
    return r.random((n, n), dtype=np.float32), r.random((n, n), dtype=np.float32)


def syrk_args(n, m, seed=0):
    r = rng(seed)
    return 1.5, 1.2, r.random((n, n), dtype=np.float32), r.random((n, m), dtype=np.float32)


def softmax_args(m, n, seed=0):
    return (4 * rng(seed).standard_normal((m, n), dtype=np.float32),)


def layernorm_args(m, n, seed=0):
    r = rng(seed)
    X = r.standard_normal((m, n), dtype=np.float32) * 3 + 1
    return X, r.standard_normal(n, dtype=np.float32), r.standard_normal(n, dtype=np.float32)


def int8_args(m, k, n, seed=0):
    r = rng(seed)
    X = r.integers(-128, 128, (m, k), dtype=np.int8)
    Wt = r.integers(-128, 128, (k, n), dtype=np.int8)
    bias = r.integers(-(2**24), 2**24, n, dtype=np.int32)
    return X, Wt, bias


def rows_args(m, n, seed=0):
    return (rng(seed).standard_normal((m, n), dtype=np.float32),)


def clip_args(m, n, seed=0):
    r = rng(seed)
    # row scales spread the norms on both sides of MAX_NORM
    return (r.standard_normal((m, n), dtype=np.float32) * r.random((m, 1), dtype=np.float32) * 2,)


def huber_args(m, n, seed=0):
    r = rng(seed)
    return r.standard_normal((m, n), dtype=np.float32), r.standard_normal((m, n), dtype=np.float32)


# name -> (kernel attribute, factory, names of the module's size constants, other sizes, arg maker)
CASES = {
    "vadd": ("vadd", "make_vadd", ("N",), [(1,), (37,), (4096,)], vadd_args),
    "gemm": ("gemm", "make_gemm", ("M", "K", "N"), [(1, 1, 1), (17, 33, 5), (5, 200, 3)], gemm_args),
    "conv2d": ("conv2d", "make_conv2d", ("C_IN", "H", "W", "C_OUT"), [(1, 3, 3, 1), (3, 7, 9, 5), (2, 12, 4, 3)],
               conv2d_args),
    "jacobi2d": ("jacobi2d", "make_jacobi2d", ("N", "TSTEPS"), [(3, 1), (5, 3), (16, 7)], jacobi_args),
    "syrk": ("syrk", "make_syrk", ("N", "M"), [(1, 1), (1, 3), (17, 9)], syrk_args),
    "softmax": ("softmax", "make_softmax", ("M", "N"), [(3, 1), (5, 1000), (1, 2)], softmax_args),
    "layernorm": ("layernorm", "make_layernorm", ("M", "N"), [(1, 2), (3, 7), (9, 513)], layernorm_args),
    "int8_mac": ("int8_mac", "make_int8_mac", ("M", "K", "N"), [(1, 1, 1), (3, 5, 7), (2, 1000, 3)], int8_args),
    "multi_return": ("row_stats", "make_row_stats", ("M", "N"), [(1, 1), (7, 300)], rows_args),
    "clip_norm": ("clip_norm", "make_clip_norm", ("M", "N"), [(1, 1), (5, 3), (40, 17)], clip_args),
    "huber": ("huber", "make_huber", ("M", "N"), [(1, 1), (4, 9)], huber_args),
}


def check(name, mod, kernel, args, **ref_kw):
    got = kernel(*args)
    want = mod.reference(*args, **ref_kw)
    if name == "int8_mac":
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)
    elif name == "multi_return":
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            close(g, w)
    elif name == "softmax":
        close(got, want)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)
    else:
        close(got, want)
    return got


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_default_sizes(name):
    mod = load(name)
    attr, _, size_names, _, make_args = CASES[name]
    sizes = [getattr(mod, s) for s in size_names]
    args = make_args(*sizes[:1]) if name == "jacobi2d" else make_args(*sizes)
    before = [np.copy(a) for a in args]
    check(name, mod, getattr(mod, attr), args)
    for a, b in zip(args, before):  # kernels never modify their inputs
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,sizes", [(n, s) for n in sorted(CASES) for s in CASES[n][3]])
def test_example_other_sizes(name, sizes):
    mod = load(name)
    _, factory, _, _, make_args = CASES[name]
    kernel = getattr(mod, factory)(*sizes)
    if name == "jacobi2d":  # (n, tsteps); the inputs only depend on n
        n, tsteps = sizes
        check(name, mod, kernel, make_args(n, seed=1), tsteps=tsteps)
    else:
        check(name, mod, kernel, make_args(*sizes, seed=1))


def test_two_mm():
    mod = load("two_mm")
    r = rng(3)
    A = r.random((mod.NI, mod.NK), dtype=np.float32)
    B = r.random((mod.NK, mod.NJ), dtype=np.float32)
    C = r.random((mod.NJ, mod.NL), dtype=np.float32)
    D = r.random((mod.NI, mod.NL), dtype=np.float32)
    out = mod.two_mm(1.5, 1.2, A, B, C, D)
    close(out, mod.reference(1.5, 1.2, A, B, C, D))
    # the callee on its own is a plain matmul
    close(mod.matmul(A, B), A @ B)
    # two_mm really calls matmul through the IR
    ir = mod.two_mm.ir
    assert [k.name for k in ir.callees] == ["matmul"]
    # alpha and beta are not swapped and each matters
    close(mod.two_mm(0.0, 1.0, A, B, C, D), D)
    close(mod.two_mm(1.0, 0.0, A, B, C, D), (A @ B) @ C, rtol=2e-5)


def test_int8_mac_extremes_bit_exact():
    mod = load("int8_mac")
    k = mod.make_int8_mac(2, 300, 3)
    X = np.full((2, 300), -128, np.int8)
    X[1, ::2] = 127
    Wt = np.full((300, 3), -128, np.int8)
    Wt[:, 1] = 127
    bias = np.array([2**31 - 300 * 16384 - 1, -(2**31) + 300 * 16384 + 5, 0], np.int32)
    got = k(X, Wt, bias)
    want = X.astype(np.int64) @ Wt.astype(np.int64) + bias
    assert np.all((want >= -(2**31)) & (want < 2**31))
    np.testing.assert_array_equal(got, want.astype(np.int32))


def test_int8_mac_wraps_at_32_bits():
    # 2**17 + 16 products of (-128) * (-128) = 2**31 + 2**18: the i32 accumulator wraps around
    mod = load("int8_mac")
    K = 2**17 + 16
    k = mod.make_int8_mac(1, K, 1)
    X = np.full((1, K), -128, np.int8)
    Wt = np.full((K, 1), -128, np.int8)
    got = k(X, Wt, np.zeros(1, np.int32))
    want = np.array([[(K * 16384 + 2**31) % 2**32 - 2**31]], np.int64)
    assert want[0, 0] < 0
    np.testing.assert_array_equal(got, want.astype(np.int32))


def test_conv2d_hits_every_relu6_branch():
    mod = load("conv2d")
    args = conv2d_args(mod.C_IN, mod.H, mod.W, mod.C_OUT, seed=5)
    Y = mod.conv2d(*args)
    assert np.any(Y == 0.0) and np.any(Y == 6.0) and np.any((Y > 0.0) & (Y < 6.0))


def test_clip_norm_hits_both_branches():
    mod = load("clip_norm")
    (X,) = clip_args(mod.M, mod.N)
    norms = np.linalg.norm(X, axis=1)
    assert np.any(norms > mod.MAX_NORM) and np.any(norms < mod.MAX_NORM)
    Y = mod.clip_norm(X)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=1), np.minimum(norms, mod.MAX_NORM), rtol=1e-5)


def test_huber_hits_both_regimes():
    mod = load("huber")
    P, T = huber_args(mod.M, mod.N)
    a = np.abs(P - T)
    assert np.any(a < mod.DELTA) and np.any(a > mod.DELTA)
    close(mod.huber(P, T), mod.reference(P, T))


def test_syrk_upper_triangle_passes_through():
    mod = load("syrk")
    alpha, beta, C, A = syrk_args(mod.N, mod.M, seed=2)
    S = mod.syrk(alpha, beta, C, A)
    iu = np.triu_indices(mod.N, 1)
    np.testing.assert_array_equal(S[iu], C[iu])


MODEL_EXAMPLES = {"custom_mlp_llama", "llm_demo"}  # whole models: test_dataflow_examples.py, tests/library
ALL_EXAMPLES = sorted(p.stem for p in EXAMPLES.glob("*.py") if p.stem != "demo" and p.stem not in MODEL_EXAMPLES)


def test_every_example_is_covered():
    dataflows = {"ffn_dataflow", "attention_dataflow", "residual_dataflow"}  # test_dataflow_examples.py
    assert set(ALL_EXAMPLES) == set(CASES) | {"two_mm"} | dataflows


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_ir_text_round_trips(name):
    mod = load(name)
    kernels = [v for v in vars(mod).values() if isinstance(v, sd.KernelFunction)]
    assert kernels
    for k in kernels:
        assert sd.parse_ir(str(k.ir)) == k.ir


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_example_script_runs(name, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / f"{name}.py")])  # the script parses its (no) arguments
    runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "max |error| vs NumPy" in out
    err = float(out.split("max |error| vs NumPy = ")[1].split()[0])
    assert err <= 1e-3
    assert "kernel " in out and "return" in out  # the IR was printed
