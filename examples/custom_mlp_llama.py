"""Swap a library block for your own kernel: a user-written SwiGLU MLP inside a Llama.

The library's Llama layer is a dataflow of blocks; ``llama(config,
blocks={"mlp": ...})`` replaces one.  The replacement must take and return
the same tensors as the block it replaces (checked when the model is
built).  A model runs at two sizes (the prompt in prefill, one token in
decode), so this example gives a *factory* ``(config, t, cache_len) ->
kernel``; a plain kernel works for a model run at one size.

This MLP computes the gate and up projections in separate loop nests,
writes SiLU as ``g / (1 + exp(-g))`` and accumulates the down projection
column by column: the same math as the library's ``swiglu_mlp`` in a
different loop structure.  ``m.verify`` checks the model against a
reference the user gives (here the library's NumPy model of the same
weights) on the prompt and on cached decode steps, on the simulator and
through C-simulation of the emitted HLS.

Run:  python examples/custom_mlp_llama.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32
from streamdsl.library.llm.config import tiny
from streamdsl.library.llm.models import llama
from streamdsl.library.llm.numpy_model import NumpyModel
from streamdsl.library.llm.weights import random_weights


def make_my_mlp(config, t: int, cache_len: int):
    H, I = config.hidden, config.intermediate

    @sd.kernel
    def my_mlp(X: f32[t, H], Wg: f32[I, H], Wu: f32[I, H], Wd: f32[H, I]) -> f32[t, H]:
        G: f32[t, I] = 0.0
        U: f32[t, I] = 0.0
        for i, c in sd.grid(t, I):
            acc: f32 = 0.0
            for k in range(H):
                acc += X[i, k] * Wg[c, k]
            G[i, c] = acc / (1.0 + sd.exp(-acc))
        for i, c in sd.grid(t, I):
            acc: f32 = 0.0
            for k in range(H):
                acc += X[i, k] * Wu[c, k]
            U[i, c] = G[i, c] * acc
        Y: f32[t, H] = 0.0
        for i, o in sd.grid(t, H):
            acc: f32 = 0.0
            for c in range(I):
                acc += U[i, c] * Wd[o, c]
            Y[i, o] = acc
        return Y

    return my_mlp


config = tiny("llama")
weights = random_weights(config, seed=1)


def build():
    return llama(config, blocks={"mlp": make_my_mlp}, max_len=16).load(weights)


def main() -> None:
    m = build()
    print(m)
    print(m.layer(1).function)  # the decode layer: the user's kernel is one of its calls
    reference = NumpyModel(config, weights).forward
    prompt = np.random.default_rng(0).integers(0, config.vocab, 6)
    for mode in ("sim", "csim"):
        print(m.verify(reference, prompt, decode_steps=2, mode=mode))
    print("greedy continuation:", m.generate(prompt, 4))


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
