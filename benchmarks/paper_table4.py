"""The paper's Table 4 beside streamdsl's model: GPT-2 Medium W4A8 on the U55C at 250 MHz, plus Qwen2.5-0.5B,
Llama-3.2-1B and Gemma-3-1B, and the fusion ablation (on-chip intermediate memory, fused vs unfused).

Every modeled number comes from streamdsl.perf (cost model + token simulator) on the library's W4A8
accelerator as built (int4 weights, int8 activations into int32 MACs; norms, attention, softmax and the KV cache
in fp32); the paper's numbers are its measurements on the board.

The headline table (latency, TTFT, tok/s) is llm_perf's: the EXPLORED layer design, the layer kernels alone
(no head, no launch, no PCIe).  `streamdsl llm build` does not emit that design.  Beside it, the end-to-end model
(library/llm/e2e.py) prices what a user waits for from the one-kernel design the build writes: one launch a
generate call, the prompt ids in and the generated ids out over PCIe, and on the card per step the embedding
gather, every layer kernel in order and the device head (final norm, LM head, greedy argmax: token.device_head)
when the step yields a token (assumptions printed with their sources; loading the xclbin and the weights and
process start-up are not counted).  Three rows per size:

* emitted: the layer kernels `streamdsl llm build FAMILY --config full --quant w4a8 --max-len IN+OUT
  --prefill-len IN` writes (the explored decode layer, the default prefill layer) and its head: `emitted` true;
* emitted, prefill "decode": the same build with `--prefill-len 1` (no prefill layer: the prompt goes through
  the decode layers a token at a time): `emitted` true;
* explored: the headline's explored layer design in the same kernel: `emitted` false (not what is written).

Each model's decode layer is explored once: llm_perf's exploration of the packed linears is the build's, and the
emitted row reuses it (it explores again only when llm_perf kept the unpacked decode layer).

--json FILE writes the three rows of each model and size as a list of {"model", "in", "out", "design",
"decode_tps_end_to_end", "ttft_ms", "latency_ms", "hbm_roofline_tps", "fits", "emitted"}: hbm_roofline_tps is
the board's HBM bandwidth over every weight a token reads (layers and LM head, W4A8); fits is true when both
phases' layer kernels exist and they and the head fit the board together (each SLR less the platform's 10 %,
within UG1393's per-SLR guideline).

    .venv/bin/python benchmarks/paper_table4.py [--quick] [--json FILE]
"""
import argparse
import json
import time

from streamdsl.library.llm.config import preset
from streamdsl.library.llm.e2e import end_to_end, explored_end_to_end
from streamdsl.library.llm.models import model
from streamdsl.library.llm.perf import W4A8, llm_perf

PAPER = {(32, 32): (194.99, 34.59, 199.51), (64, 64): (358.24, 61.27, 215.51), (128, 128): (696.65, 125.35, 224.05),
         (256, 256): (1387.76, 272.85, 229.61)}
_ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
_ap.add_argument("--quick", action="store_true", help="only [32:32]")
_ap.add_argument("--report", action="store_true", help="also print GPT-2 Medium's whole model report")
_ap.add_argument("--json", metavar="FILE", help="write the end-to-end rows to FILE")
ARGS = _ap.parse_args()
SIZES = [(32, 32)] if ARGS.quick else list(PAPER)
MODELS = ["gpt2-medium", "qwen2.5-0.5b", "llama-3.2-1b", "gemma-3-1b"]

print("modeled: the W4A8 layer accelerator (int4 weights, int8 activations, int32 MACs; norms, attention and KV "
      "cache fp32), explored per model, its layer kernels alone (not the design streamdsl llm build emits: see the "
      "end-to-end rows); the paper: measured on a U55C\n")
ends = []
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
        # llm_perf's packed decode exploration is the build's: reused unless it kept the unpacked decode layer
        reuse = {lp.kind: lp.exploration for lp in p.layers} if p.pack in (True, "decode") else None
        ends += [end_to_end(preset(name), "u55c", n_in, n_out, "w4a8", explored=reuse),
                 end_to_end(preset(name), "u55c", n_in, n_out, "w4a8", prefill_len=1, explored=reuse),
                 explored_end_to_end(p)]
    print("end to end (one generate kernel, one launch a call: ids over PCIe, per step the gather, every layer, the "
          "head):")
    print(f"{'[in:out]':>10} {'design':>9} {'prefill':>7} {'emitted':>8} {'tok/s e2e':>10} {'paper':>7} {'layers':>8} {'TTFT ms':>10} "
          f"{'paper':>7} {'latency ms':>11} {'paper':>8} {'step ms':>8} {'head ms':>8} {'HBM roof':>9} {'% roof':>7} "
          f"{'fits':>5}")
    for e in ends[-3 * len(SIZES):]:
        st = e.decode_step()
        pl, pt, ps = PAPER[(e.prompt, e.gen)] if name == "gpt2-medium" else ("-", "-", "-")
        print(f"{f'[{e.prompt}:{e.gen}]':>10} {e.design:>9} {e.prefill_len if e.prefill_len > 1 else 'decode':>7} "
              f"{'yes' if e.emitted else 'no':>8} {e.tokens_per_s:>10.2f} "
              f"{ps:>7} {e.layer_tokens_per_s:>8.2f} {e.ttft_s * 1e3:>10.3f} {pt:>7} {e.latency_s * 1e3:>11.2f} "
              f"{pl:>8} {st.total_s * 1e3:>8.3f} {st.head_s * 1e3:>8.3f} {e.hbm_roofline_tps:>9.0f} "
              f"{100 * e.tokens_per_s / e.hbm_roofline_tps:>6.2f}% {'yes' if e.fits else 'NO':>5}")
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
print("\nend-to-end assumptions (every row; the embedding row's size is the first model's):")
for a in ends[0].assumptions():
    print("  -", a)
if ARGS.json:
    with open(ARGS.json, "w") as f:
        json.dump([e.row() for e in ends], f, indent=1)
    print(f"wrote {len(ends)} rows to {ARGS.json}")
print("\nfull report of the last GPT-2 design:")
print(llm_perf(preset("gpt2-medium"), "u55c", 32, 32, W4A8).report() if ARGS.report else "(pass --report)")
