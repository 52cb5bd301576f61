"""Single-head attention (QK^T -> softmax -> PV) fused into one on-chip dataflow region.

Scores and probabilities stream row by row between the three kernels; K
and V arrive whole through their DMAs.  Checked like examples/ffn_dataflow.py:
simulator vs NumPy, C-simulation vs simulator, token simulation at the
LP-sized depths, and the on-chip bytes fusion saves.

Run:  python examples/attention_dataflow.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32
from streamdsl.library.llm.attention import make_softmax
from streamdsl.library.llm.blocks import default_schedule

S, D = 16, 16  # sequence length, head dim
SCALE = 1.0 / np.sqrt(D)


@sd.kernel
def scores(Q: f32[S, D], K: f32[S, D]) -> f32[S, S]:
    A: f32[S, S] = 0.0
    for i, j in sd.grid(S, S):
        acc: f32 = 0.0
        for d in range(D):
            acc += Q[i, d] * K[j, d]
        A[i, j] = acc * SCALE
    return A


softmax = make_softmax(S, S)


@sd.kernel
def weighted(P: f32[S, S], V: f32[S, D]) -> f32[S, D]:
    O: f32[S, D] = 0.0
    for i, d in sd.grid(S, D):
        acc: f32 = 0.0
        for j in range(S):
            acc += P[i, j] * V[j, d]
        O[i, d] = acc
    return O


@sd.dataflow
def attention(q: f32[S, D], k: f32[S, D], v: f32[S, D]) -> f32[S, D]:
    a = scores(q, k)
    p = softmax(a)
    o = weighted(p, v)
    return o


def reference(q, k, v):
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    a = q @ k.T / np.sqrt(D)
    p = np.exp(a - a.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


def inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((S, D)).astype(np.float32) for _ in range(3)]


def design(fused: bool = True):
    """Rows stream on q, a, p and o; ``fused`` puts the three tasks in one region."""
    g = sd.schedule(attention)
    for e in ("q", "a", "p", "o"):
        g.stream(g.edge(e), tile=(1, S if e in "ap" else D))
    for t in g.tasks():
        default_schedule(g.schedule(t))
    if fused:
        g.fuse(*g.tasks())
    g.size_fifos()
    return g


def main() -> None:
    args = inputs()
    sim = attention(*args)
    print(attention)  # the dataflow function's IR: its kernel calls
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
    print(f"intermediates a, p on chip: {streamed} B streamed vs {whole} B as whole ping-pong buffers "
          f"({streamed / whole:.1%})")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
