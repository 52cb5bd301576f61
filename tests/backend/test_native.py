"""The simulator's compiled path (backend/native.py) against the interpreter (backend/sim.py), the definition.

Every kernel of the corpora (the IR samples, the examples, the library blocks and a tiny model, PolyBench's
30 kernels updating their arguments in place, kernels at every integer width, fixed point, f16/bf16 and the transcendentals on
special values) runs in both modes on the same inputs and must give the same bits; the same errors come
out at the same user line.  ``conftest.py`` also runs every kernel that test_sim.py and test_privatize.py
call in both modes.  Plus: the fallback without a compiler, the cache, and the auto policy.
"""
from __future__ import annotations

import importlib.util
import shutil
import time
import sys
from pathlib import Path

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import Fixed, Int, UFixed, UInt, bf16, f16, f32, f64, i32, i64, u8, u64
from streamdsl.backend import native
from streamdsl.backend.sim import simulate
from streamdsl.errors import ShapeError
from streamdsl.ir.nodes import written_params
from streamdsl.types import FixedType, FloatType, IntType, TensorType

ROOT = Path(__file__).resolve().parents[2]
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="the compiled simulator needs g++")
pytestmark = needs_gxx


def _module(path: Path, name: str):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def values(dt, shape, r: np.random.Generator) -> np.ndarray:
    """Inputs that reach the edges: the whole range of an integer type; floats with zeros, infinities, NaN."""
    if isinstance(dt, IntType):
        if dt.bits == 64:
            raw = r.integers(0, 2**64, shape, dtype=np.uint64, endpoint=False)
            return raw.astype(dt.np) if not dt.signed else raw.view(np.int64)
        return r.integers(dt.min, dt.max + 1, shape).astype(dt.np)
    x = r.standard_normal(shape) * 3
    if isinstance(dt, FixedType):
        return x
    x = x.astype(np.float32 if dt.name != "f64" else np.float64)
    flat = x.reshape(-1)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 90.0]
    flat[: min(flat.size, len(specials))] = specials[: min(flat.size, len(specials))]
    if dt.name == "f16":
        return x.astype(np.float16)
    if dt.name == "bf16":
        from streamdsl.numeric import round_bf16

        return round_bf16(x)
    return x


def random_args(k, seed: int = 0):
    r = np.random.default_rng(seed)
    out = []
    for p in k.params:
        t = p.type
        if isinstance(t, TensorType):
            out.append(values(t.dtype, t.shape, r))
        else:
            v = values(t, (), r)
            out.append(v[()] if isinstance(t, IntType) or not np.isnan(v) else v[()])
    return out


def same(a, b) -> bool:
    """Bit-identical results, signed zeros included; a NaN matches any NaN (IEEE leaves a NaN's sign and
    payload to the machine: x86 gives inf - inf a negative NaN, NumPy's own NaN is positive)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        if not np.array_equal(nan, np.isnan(b)):
            return False
        a, b = np.where(nan, 0, a).astype(a.dtype), np.where(nan, 0, b).astype(b.dtype)
    return a.tobytes() == b.tobytes()


def both(k, args):
    """Run ``k`` interpreted and compiled; they must agree bit for bit, or raise the same located error.

    A kernel with in/out parameters runs on copies of their arrays, and its result is followed by them."""
    written = set(written_params(k))
    results = []
    for mode in ("interp", "compiled"):
        mine = [a.copy() if p.name in written else a for p, a in zip(k.params, args)]
        try:
            out = simulate(k, *mine, mode=mode)
            results.append(("ok", (out, *(m for p, m in zip(k.params, mine) if p.name in written)) if written else out))
        except ShapeError as e:
            results.append(("error", (type(e), e.loc, str(e.message).split(" is out of bounds")[0][:6])))
    (ka, a), (kb, b) = results
    assert ka == kb, f"interp {ka}, compiled {kb}"
    if ka == "error":
        assert a[:2] == b[:2]
    else:
        assert same(a, b), f"{k.name}: the compiled result differs from the interpreter's"
    return a


# ------------------------------------------------------------------ corpora
def _samples():
    mod = _module(ROOT / "tests" / "ir" / "ir_samples.py", "_sd_native_ir_samples")
    return mod.SAMPLES


@pytest.mark.parametrize("name", sorted(_samples()))
def test_ir_samples(name):
    k = _samples()[name]()
    assert native.load(k, may_compile=True) is not None, f"{name} was not compiled"
    for seed in range(3):
        both(k, random_args(k, seed))


EXAMPLES = ["vadd", "gemm", "two_mm", "conv2d", "jacobi2d", "syrk", "softmax", "layernorm", "int8_mac",
            "multi_return", "clip_norm", "huber"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples(name):
    hls = _module(ROOT / "tests" / "backend" / "test_examples_hls.py", "_sd_native_examples")
    k = hls.kernel(name)
    both(k.ir, hls.inputs(k))
    both(k.ir, random_args(k.ir, 1))


def _peers():
    return _module(ROOT / "tests" / "peers" / "polybench.py", "_sd_native_peers_polybench")


@pytest.mark.parametrize("name", sorted(_peers().KERNELS))
def test_polybench_in_place(name):
    """PolyBench's 30 kernels as PolyBench writes them, updating their arguments in place (in/out parameters),
    at a quarter of SMALL: the arrays after the compiled run are the interpreter's, bit for bit."""
    pb = _peers()
    sizes = {key: max(4, v // 4) for key, v in pb.KERNELS[name].sizes.items()}
    both(pb.kernel(name, sizes).ir, pb.inputs(name, sizes=sizes))


def test_in_out_parameters_are_written_once_the_kernel_has_succeeded():
    """The caller's array holds the kernel's updates after a compiled run (through a callee as well) and is
    untouched when the kernel fails."""
    @sd.kernel
    def bump(A: i32[6], by: i32) -> None:
        for i in range(6):
            A[i] += by

    @sd.kernel
    def twice(A: i32[6], n: i32) -> None:
        bump(A, 3)
        for i in range(n):
            A[i] = A[i] * 2  # out of bounds once n > 6

    A = np.arange(6, dtype=np.int32)
    simulate(twice.ir, A, 6, mode="compiled")
    np.testing.assert_array_equal(A, (np.arange(6) + 3) * 2)
    before = A.copy()
    with pytest.raises(ShapeError):
        simulate(twice.ir, A, 7, mode="compiled")
    np.testing.assert_array_equal(A, before)
    both(twice.ir, [A, 6])


def _blocks():
    from streamdsl.library.llm import blocks

    return _module(ROOT / "tests" / "library" / "test_blocks.py", "_sd_native_blocks").CSIM, blocks


def test_library_blocks():
    cases, _ = _blocks()
    for name, (kernel, args, _exact, _opts) in sorted(cases.items()):
        both(kernel.ir, args)


def test_tiny_model_prefill_and_decode(monkeypatch):
    """A two-layer Llama through its dataflow layer: every kernel compiled gives the interpreter's logits."""
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.models import llama
    from streamdsl.library.llm.weights import random_weights

    cfg = tiny("llama")
    compiled = []
    real = native.Native.run
    monkeypatch.setattr(native.Native, "run", lambda self, *a: (compiled.append(self.kernel.name), real(self, *a))[1])
    runs = []
    for mode in ("interp", "compiled"):
        monkeypatch.setenv("STREAMDSL_SIM", mode)
        m = llama(cfg, max_len=8).load(random_weights(cfg, seed=3))
        logits, cache = m.prefill([1, 5, 2])
        step, _ = m.decode(int(np.argmax(logits[-1])), cache)
        runs.append((logits, step))
    assert same(runs[0][0], runs[1][0]) and same(runs[0][1], runs[1][1])
    assert {"attention_decode_4x2x8x16x3", "swiglu_mlp_3x64x128", "lm_head_3x64x256"} <= set(compiled)


# ------------------------------------------------------------ value semantics
WIDTHS = [1, 2, 3, 5, 7, 8, 13, 16, 31, 32, 33, 48, 63, 64]


def _int_kernel(t, name: str):
    n = 64

    @sd.kernel
    def ints(A: t[n], B: t[n], S: u8[n]) -> (t[n], t[n], t[n], t[n], t[n], t[n], t[n], t[n], f32[n], i32[n]):
        P: t[n] = 0
        Q: t[n] = 0
        R: t[n] = 0
        D: t[n] = 0
        M: t[n] = 0
        L: t[n] = 0
        H: t[n] = 0
        X: t[n] = 0
        F: f32[n] = 0.0
        C: i32[n] = 0
        for i in range(n):
            P[i] = A[i] + B[i]
            Q[i] = A[i] * B[i] - A[i]
            R[i] = (A[i] ^ B[i]) | (A[i] & ~B[i])
            D[i] = A[i] // B[i]
            M[i] = A[i] % B[i]
            L[i] = A[i] << S[i]
            H[i] = A[i] >> S[i]
            X[i] = max(A[i], -B[i]) + abs(A[i])
            F[i] = sd.cast(A[i], f32) / sd.cast(B[i], f32)
            C[i] = sd.cast(A[i], i32) + (1 if A[i] < B[i] else 0)
        return P, Q, R, D, M, L, H, X, F, C

    return ints


@pytest.mark.parametrize("bits", WIDTHS)
@pytest.mark.parametrize("signed", [True, False])
def test_integers_wrap_at_every_width(bits, signed):
    t = (Int if signed else UInt)(bits)
    k = _int_kernel(t, f"ints_{t}")
    for seed in range(2):
        A, B, _ = random_args(k.ir, seed)
        S = np.random.default_rng(seed).integers(0, 70, 64).astype(np.uint8)
        both(k.ir, [A, B, S])


@sd.kernel
def casts(X: f32[48], D: f64[48], H: f16[48], G: bf16[48]) -> (
        i32[48], u8[48], Int(5)[48], u64[48], i64[48], f16[48], bf16[48], f16[48], bf16[48], f32[48], f64[48]):
    a: i32[48] = 0
    b: u8[48] = 0
    c: Int(5)[48] = 0
    d: u64[48] = 0
    e: i64[48] = 0
    h: f16[48] = 0.0
    g: bf16[48] = 0.0
    h2: f16[48] = 0.0
    g2: bf16[48] = 0.0
    x: f32[48] = 0.0
    y: f64[48] = 0.0
    for i in range(48):
        a[i] = sd.cast(X[i] * 1e9, i32)
        b[i] = sd.cast(D[i] * 100.0, u8)
        c[i] = sd.cast(X[i] * 10.0, Int(5))
        d[i] = sd.cast(D[i] * 1e19, u64)
        e[i] = sd.cast(a[i], i64) * sd.cast(a[i], i64)
        h[i] = sd.cast(D[i] * 1e4, f16)
        g[i] = sd.cast(D[i], bf16) * G[i]
        h2[i] = H[i] * H[i] + sd.cast(e[i], f16)
        g2[i] = sd.cast(e[i], bf16) + sd.cast(H[i], bf16)
        x[i] = sd.cast(d[i], f32) + sd.cast(h[i], f32) - sd.cast(g2[i], f32)
        y[i] = sd.cast(e[i], f64) + sd.cast(X[i], f64) / D[i]
    return a, b, c, d, e, h, g, h2, g2, x, y


def test_casts_round_and_saturate():
    for seed in range(3):
        both(casts.ir, random_args(casts.ir, seed))


FX, UFX = Fixed(16, 6), UFixed(12, 4)


@sd.kernel
def fixed(A: FX[32], B: FX[32], U: UFX[32]) -> (FX[32], FX[32], FX[32], UFX[32], f32[32], i32[32]):
    S: FX[32] = 0.0
    P: FX[32] = 0.0
    Q: FX[32] = 0.0
    V: UFX[32] = 0.0
    F: f32[32] = 0.0
    I: i32[32] = 0
    acc: FX = 0.0
    for i in range(32):
        S[i] = A[i] + B[i]
        P[i] = A[i] * B[i]
        Q[i] = A[i] - B[i] * A[i]
        V[i] = U[i] - U[31 - i]
        acc = acc + P[i]
        F[i] = sd.cast(acc, f32) + sd.exp(sd.cast(A[i], f32))
        I[i] = sd.cast(A[i], i32)
    return S, P, Q, V, F, I


def test_fixed_point():
    assert native.load(fixed.ir, may_compile=True) is not None  # compiled, not interpreted twice
    for seed in range(3):
        both(fixed.ir, random_args(fixed.ir, seed))


RS = Fixed(16, 6, "rnd", "sat")


@sd.kernel
def fixed_division(A: FX[16], B: FX[16]) -> FX[16]:
    Q: FX[16] = 0.0
    for i in range(16):
        Q[i] = A[i] / B[i]
    return Q


@sd.kernel
def fixed_modes(A: FX[16], B: FX[16]) -> RS[16]:
    R: RS[16] = 0.0
    for i in range(16):
        R[i] = A[i] * B[i]
    return R


@pytest.mark.parametrize("k", [fixed_division, fixed_modes], ids=["division", "rounding and saturation"])
def test_fixed_point_the_printer_does_not_reproduce_is_interpreted(k):
    """ap_fixed's division (on the raw bits) and fixed point that rounds or saturates are not in the C helpers:
    such a kernel is interpreted, with the interpreter's bits, in every mode."""
    from streamdsl.backend.cgen import Unsupported, print_program

    with pytest.raises(Unsupported):
        print_program(k.ir)
    for seed in range(2):
        both(k.ir, random_args(k.ir, seed))


@sd.kernel
def rom_lookup(I: i32[8]) -> f32[8]:
    Y: f32[8] = 0.0
    for i in range(8):
        Y[i] = TABLE[I[i] % 4]
    return Y


TABLE = np.array([0.5, -1.25, 3.0, 1e-3], np.float32)


def test_a_constant_tensor_is_interpreted():
    from streamdsl.backend.cgen import Unsupported, print_program

    with pytest.raises(Unsupported, match="rom"):
        print_program(rom_lookup.ir)
    both(rom_lookup.ir, [np.arange(8, dtype=np.int32)])


@sd.kernel
def transcendental(X: f32[64], D: f64[64], H: f16[64], G: bf16[64]) -> (f32[64], f64[64], f16[64], bf16[64]):
    Y: f32[64] = 0.0
    Z: f64[64] = 0.0
    W: f16[64] = 0.0
    V: bf16[64] = 0.0
    for i in range(64):
        Y[i] = (sd.exp(X[i]) + sd.log(X[i]) + sd.tanh(X[i]) + sd.erf(X[i]) + sd.sin(X[i]) + sd.cos(X[i])
                + sd.sqrt(X[i]) + sd.rsqrt(X[i]) + sd.sigmoid(X[i]) + X[i] ** 1.5 + max(X[i], 0.0) + min(X[i], -X[i]))
        Z[i] = (sd.exp(D[i]) + sd.log(D[i]) + sd.tanh(D[i]) + sd.erf(D[i]) + sd.sin(D[i]) + sd.cos(D[i])
                + sd.sqrt(D[i]) + D[i] ** D[i] + sd.sigmoid(D[i]) + abs(D[i]))
        W[i] = sd.exp(H[i]) * H[i] + sd.tanh(H[i])
        V[i] = sd.exp(G[i]) * G[i] - sd.erf(G[i])
    return Y, Z, W, V


def test_transcendentals_are_numpys():
    for seed in range(4):
        both(transcendental.ir, random_args(transcendental.ir, seed))


# ------------------------------------------------------------------ errors
@sd.kernel
def overrun(A: f32[8], n: i32) -> f32[8]:
    B: f32[8] = 0.0
    for i in range(8):
        B[i] = A[i] * 2.0
    for i in range(n):
        B[i] = B[i] + A[i + 1]  # the error points here
    return B


def test_out_of_bounds_located_at_the_users_line():
    line = next(i for i, s in enumerate(Path(__file__).read_text().splitlines(), 1) if "# the error points here" in s)
    A = np.arange(8, dtype=np.float32)
    for mode in ("interp", "compiled"):
        with pytest.raises(ShapeError) as err:
            simulate(overrun.ir, A, 8, mode=mode)
        assert err.value.loc.line == line and "out of bounds for dimension 0 of 'A' (size 8)" in str(err.value)
    both(overrun.ir, [A, 7])


def test_argument_errors_are_the_interpreters():
    k = overrun.ir
    for mode in ("interp", "compiled"):
        with pytest.raises(ShapeError, match="has shape"):
            simulate(k, np.zeros(7, np.float32), 3, mode=mode)
        with pytest.raises(sd.KernelTypeError, match="dtype"):
            simulate(k, np.zeros(8, np.float64), 3, mode=mode)


def test_unknown_mode_is_a_located_error(monkeypatch):
    monkeypatch.setenv("STREAMDSL_SIM", "fast")
    with pytest.raises(native.SimModeError, match="STREAMDSL_SIM"):
        simulate(overrun.ir, np.zeros(8, np.float32), 1)


# ---------------------------------------------------- cache, fallback, policy
def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("STREAMDSL_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "_loaded", {})
    builds = []
    real = native.build
    monkeypatch.setattr(native, "build", lambda *a: (builds.append(a[0].kernel.name), real(*a)))
    return builds


def _on_copies(k, args, **options):
    """The arrays after ``k`` (a PolyBench kernel, which updates its arguments in place) ran on copies of them."""
    mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    assert simulate(k, *mine, **options) is None
    return mine


def test_cache_second_run_does_not_compile(monkeypatch, tmp_path):
    builds = _fresh(monkeypatch, tmp_path)
    k = _peers().kernel("trisolv", dict(N=16))
    args = _peers().inputs("trisolv", sizes=dict(N=16))
    first = _on_copies(k.ir, args, mode="compiled")
    assert builds == ["trisolv"] and list((tmp_path / "sim").glob("trisolv-*.so"))
    monkeypatch.setattr(native, "_loaded", {})  # a new process: only the disk cache is left
    again = _on_copies(_peers().kernel("trisolv", dict(N=16)).ir, args, mode="compiled")
    assert builds == ["trisolv"] and same(first, again)
    assert not list(tmp_path.glob("*.cpp")) and not list(Path.cwd().glob("*.so"))


def test_without_a_compiler_interprets_with_one_notice(monkeypatch, tmp_path, capsys):
    builds = _fresh(monkeypatch, tmp_path)
    monkeypatch.setenv("CXX", "no-such-compiler-sd")
    monkeypatch.setattr(native, "_noticed", set())
    monkeypatch.delenv("STREAMDSL_QUIET", raising=False)
    k = _peers().kernel("durbin", dict(N=12))
    args = _peers().inputs("durbin", sizes=dict(N=12))
    want = _on_copies(k.ir, args, mode="interp")
    for _ in range(3):
        assert same(_on_copies(k.ir, args, mode="compiled"), want)
    err = capsys.readouterr().err
    assert err.count("no-such-compiler-sd was not found") == 1 and "interprets" in err
    assert builds == []


def test_auto_compiles_a_sequential_kernel_and_interprets_a_tiny_one(monkeypatch, tmp_path):
    builds = _fresh(monkeypatch, tmp_path)
    monkeypatch.delenv("STREAMDSL_SIM", raising=False)
    fw = _peers().kernel("floyd-warshall", dict(N=60))
    assert native.interp_seconds(fw.ir) > native.COMPILE_AFTER  # 216,000 interpreted steps
    fw(*_peers().inputs("floyd-warshall", sizes=dict(N=60)))
    assert builds == ["floyd_warshall"]

    @sd.kernel
    def small(A: f32[16]) -> f32[16]:
        B: f32[16] = 0.0
        for i in range(16):
            B[i] = A[i] + 1.0
        return B

    assert native.interp_seconds(small.ir) < native.LOOKUP_AFTER
    small(np.zeros(16, np.float32))
    assert builds == ["floyd_warshall"]


def test_auto_goes_back_to_the_interpreter_when_compiled_runs_slower(monkeypatch, tmp_path):
    builds = _fresh(monkeypatch, tmp_path)
    monkeypatch.delenv("STREAMDSL_SIM", raising=False)
    k = _peers().kernel("trisolv", dict(N=40))
    args = _peers().inputs("trisolv", sizes=dict(N=40))

    def run():  # the default mode, as k(*args) runs it
        return _on_copies(k.ir, args)

    heat = native._heat(k.ir)
    assert heat.pays
    monkeypatch.setattr(native, "LOOKUP_AFTER", 0.0)
    monkeypatch.setattr(native, "COMPILE_AFTER", heat.interp * 1.001)  # compiled on the second call
    real = native.Native.run
    monkeypatch.setattr(native.Native, "run", lambda self, *a: (time.sleep(0.5), real(self, *a))[1])
    want = _on_copies(k.ir, args, mode="interp")
    assert same(run(), want) and builds == [] and heat.best < 0.5  # interpreted: the cache was empty
    assert same(run(), want) and builds == ["trisolv"]  # compiled, and measured slower
    assert heat.native is None and heat.failed
    spent = heat.spent
    assert same(run(), want) and heat.spent > spent  # interpreted again


@sd.kernel
def huge_local(A: f32[8]) -> f32[8]:
    C: f32[8] = 0.0
    B: f32[10**12] = 0.0  # more than can be allocated
    for i in range(8):
        C[i] = A[i] + B[i]
    return C


def test_a_local_that_cannot_be_allocated_is_the_interpreters_error():
    line = next(i for i, s in enumerate(Path(__file__).read_text().splitlines(), 1) if "# more than can be" in s)
    for mode in ("interp", "compiled"):
        with pytest.raises(ShapeError, match="more than the simulator can allocate") as err:
            simulate(huge_local.ir, np.zeros(8, np.float32), mode=mode)
        assert err.value.loc.line == line and "3.64 TiB" in str(err.value)
