"""Small dataflow designs with every kind of node the pictures draw, and one full-size LLM layer."""
import functools

import streamdsl as sd
from streamdsl import f32

N = 16


@sd.kernel
def relu(X: f32[N, N]) -> f32[N, N]:
    Y: f32[N, N] = 0.0
    for i, j in sd.grid(N, N):
        Y[i, j] = sd.max(X[i, j], 0.0)
    return Y


@sd.kernel
def add(X: f32[N, N], Z: f32[N, N]) -> f32[N, N]:
    Y: f32[N, N] = 0.0
    for i, j in sd.grid(N, N):
        Y[i, j] = X[i, j] + Z[i, j]
    return Y


@sd.kernel
def gemm(A: f32[N, N], B: f32[N, N]) -> f32[N, N]:
    C: f32[N, N] = 0.0
    for i, j in sd.grid(N, N):
        acc: f32 = 0.0
        for k in range(N):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
    return C


@sd.dataflow
def mixed(x: f32[N, N]) -> f32[N, N]:
    a = relu(x)
    b = relu(a)
    c = add(a, b)
    return c


@sd.dataflow
def chain(x: f32[N, N], w: f32[N, N]) -> f32[N, N]:
    a = relu(x)
    b = gemm(a, w)
    c = relu(b)
    return c


def mixed_design():
    """Rows streamed; relu_2 reads ``a`` by columns (a converter); ``a`` also feeds add (a fork);
    add in a region of its own (a store, the DRAM hand-off and a load)."""
    g = sd.schedule(mixed)
    for e in ("x", "a", "b", "c"):
        g.stream(g.edge(e), tile=(1, N))
    g.stream(g.edge("a"), tile=(N, 1), order=(1, 0), side=g.task("relu_2"))
    g.fuse(g.task("relu_1"), g.task("relu_2"))
    g.size_fifos()
    return g


def chain_design(fused: bool = True, sized: bool = True):
    g = sd.schedule(chain)
    for e in ("x", "a", "b", "c"):
        g.stream(g.edge(e), tile=(1, N))
    if fused:
        g.fuse(*g.tasks())
    if sized:
        g.size_fifos()
    return g


@functools.lru_cache(maxsize=1)
def llm_layer():
    """GPT-2 Medium's decode layer as the LLM library schedules it (8 kernels, 18 DMAs, one region)."""
    from streamdsl.library.llm.config import preset
    from streamdsl.library.llm.models import model

    m = model(preset("gpt2-medium"), max_len=64)
    return m.schedule(1, m.kinds()[0])
