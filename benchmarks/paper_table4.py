"""The paper's Table 4 beside streamdsl's model: GPT-2 Medium W4A8 on the U55C at 250 MHz, plus Qwen2.5-0.5B,
Llama-3.2-1B and Gemma-3-1B, and the fusion ablation (on-chip intermediate memory, fused vs unfused).

Every modeled number comes from streamdsl.perf (cost model + token simulator) on the library's W4A8
accelerator as built (int4 weights, int8 activations into int32 MACs; norms, attention, softmax and the KV cache
in fp32); the paper's numbers are its measurements on the board.

    .venv/bin/python benchmarks/paper_table4.py [--quick]
"""
import argparse
import time

from streamdsl.library.llm.config import preset
from streamdsl.library.llm.models import model
from streamdsl.library.llm.perf import W4A8, llm_perf

PAPER = {(32, 32): (194.99, 34.59, 199.51), (64, 64): (358.24, 61.27, 215.51), (128, 128): (696.65, 125.35, 224.05),
         (256, 256): (1387.76, 272.85, 229.61)}
_ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
_ap.add_argument("--quick", action="store_true", help="only [32:32]")
_ap.add_argument("--report", action="store_true", help="also print GPT-2 Medium's whole model report")
ARGS = _ap.parse_args()
SIZES = [(32, 32)] if ARGS.quick else list(PAPER)
MODELS = ["gpt2-medium", "qwen2.5-0.5b", "llama-3.2-1b", "gemma-3-1b"]

print("modeled: the W4A8 layer accelerator as built (int4 weights, int8 activations, int32 MACs; norms, attention "
      "and KV cache fp32), explored per model; the paper: measured on a U55C\n")
for name in MODELS:
    print(f"== {name} on u55c @ 250 MHz ==")
    print(f"{'[in:out]':>10} {'latency ms':>11} {'paper':>8} {'TTFT ms':>10} {'paper':>7} {'tok/s':>8} {'paper':>7} "
          f"{'HBM roof':>9} {'% roof':>7} {'fp32 roof':>9} {'fits':>5} {'s':>5}")
    last = None
    for n_in, n_out in SIZES:
        t0 = time.time()
        p = llm_perf(preset(name), "u55c", n_in, n_out, W4A8)
        pl, pt, ps = PAPER[(n_in, n_out)] if name == "gpt2-medium" else ("-", "-", "-")
        fits = all(lp.decode.fits and lp.prefill.fits for lp in p.layers)
        print(f"{f'[{n_in}:{n_out}]':>10} {p.latency_s * 1e3:>11.1f} {pl:>8} {p.ttft_s * 1e3:>10.1f} {pt:>7} "
              f"{p.tokens_per_s:>8.2f} {ps:>7} {p.hbm_roofline_tps:>9.0f} {100 * p.tokens_per_s / p.hbm_roofline_tps:>6.2f}% "
              f"{p.fp32_roofline_tps:>9.0f} {'yes' if fits else 'NO':>5} {time.time() - t0:>5.1f}")
        last = p
    print("why the gaps (from the model's own numbers):")
    for g in last.gaps():
        print("  -", g)
    for lp in last.layers:
        if not lp.prefill.fits:
            print(f"  - prefill {lp.kind} layer: " + "; ".join(lp.prefill.problems))
    ex = last.layers[0].exploration
    print(f"exploration vs default (decode layer, {last.layers[0].kind}): default "
          f"{ex.default.cycles if ex.default else '-'} cycles "
          f"({'fits' if ex.default and ex.default.fits else 'does not fit'}), best {ex.best.cycles} cycles")
    print(ex.table())
    print()

print("== fusion ablation: on-chip intermediate memory of one fused layer vs the unfused layer (paper: 14.8-16.8 %) ==")
for name in MODELS:
    m = model(preset(name), max_len=64, quant="w4a8")
    g = m.schedule(32, m.kinds()[0])
    streamed, whole = g.intermediate_bytes()
    print(f"  {name:<14} t=32: streamed {streamed / 2**10:9.1f} KiB vs whole ping-pong buffers {whole / 2**10:9.1f} KiB "
          f"= {100 * streamed / whole:6.1f} %")
print("  (streamed: FIFOs at their sized depths + ping-pong converters between kernels of the region; unfused: each "
      "intermediate a whole ping-pong array. The library streams activations by token row and per-head tensors "
      "and KV caches by head, so a FIFO holds whole rows or heads.)")
print("\nfull report of the last GPT-2 design:")
print(llm_perf(preset("gpt2-medium"), "u55c", 32, 32, W4A8).report() if ARGS.report else "(pass --report)")
