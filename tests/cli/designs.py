"""Designs the command-line tests name as FILE.py:NAME (the file is run by ``streamdsl``, not imported by pytest).

``bypass_small`` is the bypass dataflow of tests/dfg/test_dataflow_hls.py
with the bypass FIFO one token shallower than the LP depth: relu_2 needs all
of ``a`` before it writes ``b``, so ``add`` waits on ``b`` while the bypass
``a:add`` is full, and the C-simulation deadlocks.
"""
import streamdsl as sd
from streamdsl import f32, i32

N = 8


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
def scale(X: f32[N, N], s: f32, n: i32) -> f32[N, N]:
    Y: f32[N, N] = 0.0
    for i, j in sd.grid(N, N):
        Y[i, j] = X[i, j] * s + n
    return Y


@sd.dataflow
def bypass(x: f32[N, N]) -> f32[N, N]:
    a = relu(x)
    b = relu(a)
    c = add(a, b)
    return c


def _bypass_design(shallower: int):
    g = sd.schedule(bypass)
    g.fuse(*g.tasks())
    for e in "xabc":
        g.stream(g.edge(e), tile=(2, N))
    g.stream(g.edge("a"), tile=(N, N), side=g.task("relu_2"))  # relu_2 needs all of a first
    g.size_fifos()
    if shallower:
        depth, _ = g.depth("a:add")
        g.fifo(g.edge("a"), depth=depth - shallower, consumer=g.task("add"))
    return g


bypass_sized = _bypass_design(0)
bypass_small = _bypass_design(1)
NOT_A_KERNEL = 3
