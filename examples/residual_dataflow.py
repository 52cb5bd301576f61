"""A residual block, x -> RMSNorm -> linear -> + x, whose bypass FIFO the LP sizes.

x's DMA feeds both the norm and the final add: the bypass branch must hold
every token of x that arrives before the add takes its first one, which
waits for the norm and the linear on the other branch.  ``g.size_fifos()``
finds that depth by linear programming over task start times;
``g.explain_fifo`` names the path that forces it.  With one token less the
DMA waits on a full FIFO (back-pressure) and the design gets slower; it
does not deadlock, because the short path never needs the bypass to drain
(examples with a kernel that buffers its whole input do deadlock: see
tests/dataflow/test_dataflow_hls.py).

Run:  python examples/residual_dataflow.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32
from streamdsl.library.llm.blocks import default_schedule
from streamdsl.library.llm.head import make_residual_add
from streamdsl.library.llm.linear import make_linear
from streamdsl.library.llm.norms import make_rmsnorm

T, H = 16, 32
EPS = 1e-5

norm = make_rmsnorm(T, H, eps=EPS)
proj = make_linear(T, H, H, bias=False)
add = make_residual_add(T, H)


@sd.dataflow
def residual(x: f32[T, H], g: f32[H], w: f32[H, H]) -> f32[T, H]:
    n = norm(x, g)
    p = proj(n, w)
    y = add(p, x)
    return y


def reference(x, g, w):
    x, g, w = (np.asarray(a, np.float64) for a in (x, g, w))
    n = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * g
    return n @ w.T + x


def inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((T, H)).astype(np.float32), (1 + 0.1 * rng.standard_normal(H)).astype(np.float32),
            (0.2 * rng.standard_normal((H, H))).astype(np.float32)]


def bypass_fifo(g) -> str:
    """The FIFO of x that feeds the add (the bypass branch of the fork)."""
    return next(f.name for f in g.fifos() if f.name.startswith("x:") and f.name.endswith(add.ir.name))


def design():
    g = sd.schedule(residual)
    for e in ("x", "n", "p", "y"):
        g.stream(g.edge(e), tile=(1, H))
    for t in g.tasks():
        default_schedule(g.schedule(t))
    g.fuse(*g.tasks())
    g.size_fifos()
    return g


def main() -> None:
    args = inputs()
    sim = residual(*args)
    print(residual)  # the dataflow function's IR: its kernel calls
    print(f"simulator: max |error| vs NumPy = {np.abs(sim - reference(*args)).max():.2e}")
    g = design()
    print(g)
    name = bypass_fifo(g)
    print(g.explain_fifo(g.edge("x"), consumer=g.task(add.ir.name)))
    cs = g.build().csim(*args)
    print(f"C-sim vs simulator: max |error| = {np.abs(cs - sim).max():.2e}")
    res = g.simulate()
    print(f"token simulation: {res.cycles} cycles, back-pressure stalls: {sum(res.backpressure.values())} cycles")
    depth = g.depth(name)[0]
    g.fifo(g.edge("x"), depth=depth - 1, consumer=g.task(add.ir.name))
    less = g.simulate()
    print(f"bypass depth {depth - 1}: {less.cycles} cycles, back-pressure {sum(less.backpressure.values())} cycles")
    cs = g.build().csim(*args)
    print(f"C-sim at bypass depth {depth - 1}: max |error| vs simulator = {np.abs(cs - sim).max():.2e}")

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
