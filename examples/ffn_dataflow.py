"""A transformer FFN (linear -> GELU -> linear) fused into one on-chip dataflow region.

The three library kernels stream their activations row by row through
FIFOs instead of DRAM; the weights come in whole through their DMAs.  The
script checks the simulator against NumPy, C-simulates the emitted HLS
(each process on its own thread, bounded FIFOs) against the simulator, runs
the token simulator at the LP-sized depths, and prints what fusion saves.

Run:  python examples/ffn_dataflow.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32
from streamdsl.library.llm.blocks import default_schedule
from streamdsl.library.llm.linear import make_linear
from streamdsl.library.llm.mlp import make_gelu

T, H, I = 16, 32, 64  # tokens, hidden, intermediate

up = make_linear(T, H, I)
gelu = make_gelu(T, I)
down = make_linear(T, I, H)


@sd.dataflow
def ffn(x: f32[T, H], w1: f32[I, H], b1: f32[I], w2: f32[H, I], b2: f32[H]) -> f32[T, H]:
    h = up(x, w1, b1)
    a = gelu(h)
    y = down(a, w2, b2)
    return y


def reference(x, w1, b1, w2, b2):
    x, w1, b1, w2, b2 = (np.asarray(v, np.float64) for v in (x, w1, b1, w2, b2))
    h = x @ w1.T + b1
    a = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))
    return a @ w2.T + b2


def inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) * sc
            for s, sc in (((T, H), 1.0), ((I, H), 0.2), ((I,), 0.1), ((H, I), 0.2), ((H,), 0.1))]


def design(fused: bool = True):
    """Rows stream on every activation edge; ``fused`` puts the three tasks in one region."""
    g = sd.schedule(ffn)
    for e, n in (("x", H), ("h", I), ("a", I), ("y", H)):
        g.stream(g.edge(e), tile=(1, n))
    for t in g.tasks():
        default_schedule(g.schedule(t))  # pipeline every innermost loop
    if fused:
        g.fuse(*g.tasks())
    g.size_fifos()
    return g


def main() -> None:
    args = inputs()
    sim = ffn(*args)
    print(ffn)  # the dataflow function's IR: its kernel calls
    print(f"simulator: max |error| vs NumPy = {np.abs(sim - reference(*args)).max():.2e}")
    g = design(fused=True)
    print(g)
    cs = g.build().csim(*args)
    print(f"C-sim vs simulator: max |error| = {np.abs(cs - sim).max():.2e}")
    res = g.simulate()
    print(res)
    print(f"back-pressure stalls: {sum(res.backpressure.values())} cycles")
    unfused = design(fused=False)
    ures = unfused.simulate()
    streamed, whole = g.intermediate_bytes()
    print(f"fused: {res.cycles} cycles, {sum(g.onchip_bytes().values())} B on chip; "
          f"unfused (DRAM between kernels): {ures.cycles} cycles, {sum(unfused.onchip_bytes().values())} B on chip")
    print(f"intermediates h, a on chip: {streamed} B streamed vs {whole} B as whole ping-pong buffers "
          f"({streamed / whole:.1%})")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
