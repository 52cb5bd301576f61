"""Transformer blocks as parametric streamdsl kernels, and their default schedule.

Each ``make_*`` factory takes sizes (and options), checks them (a ``BlockError``
at the caller's line), and returns an ``@sd.kernel`` named after the block and
its sizes (``linear_4x64x128``), so blocks of different sizes can be called from
one kernel or dataflow.  NumPy references of every block are in
:mod:`streamdsl.library.llm.ref`.

    from streamdsl.library.llm import blocks
    norm = blocks.make_rmsnorm(t=8, n=64, eps=1e-5)
    y = norm(x, w)                                  # reference simulator
    s = blocks.default_schedule(norm)               # pipelined inner loops
    y_hls = s.build("hls").csim(x, w)               # g++ C-simulation

Modules: :mod:`.norms`, :mod:`.linear`, :mod:`.quant`, :mod:`.rope`,
:mod:`.attention`, :mod:`.mlp`, :mod:`.embed`, :mod:`.head`.
"""
from __future__ import annotations

import streamdsl as sd
from streamdsl.ir import Const, For, If, Load, Var, walk

from ._checks import BlockError, fail
from .attention import make_attention_decode, make_attention_prefill, make_kv_append, make_softmax
from .embed import make_embedding, make_gemma_embedding, make_gpt2_embedding
from .head import make_argmax, make_residual_add
from .linear import make_linear, make_lm_head, make_qkv, make_qkv_fused
from .mlp import make_geglu_mlp, make_gelu, make_gpt2_mlp, make_silu, make_swiglu_mlp
from .norms import make_head_rmsnorm, make_layernorm, make_rmsnorm
from .quant import make_linear_w4a8, make_linear_w8a8, make_quantize_rows, quantize_weights
from .rope import LLAMA3_SCALING, make_rope, rope_inv_freq, rope_tables

__all__ = [
    "BlockError", "LLAMA3_SCALING", "default_schedule",
    "make_argmax", "make_attention_decode", "make_attention_prefill", "make_embedding", "make_geglu_mlp",
    "make_gelu", "make_gemma_embedding", "make_gpt2_embedding", "make_gpt2_mlp", "make_head_rmsnorm",
    "make_kv_append", "make_layernorm", "make_linear", "make_linear_w4a8", "make_linear_w8a8", "make_lm_head",
    "make_qkv", "make_qkv_fused", "make_quantize_rows", "make_residual_add", "make_rmsnorm", "make_rope",
    "make_silu", "make_softmax", "make_swiglu_mlp", "quantize_weights", "rope_inv_freq", "rope_tables",
]


def _innermost(stmts) -> list[For]:
    """Loops with no loop inside them, in program order."""
    out: list[For] = []
    for s in stmts:
        if isinstance(s, For):
            inner = _innermost(s.body)
            out.extend(inner if inner else [s])
        elif isinstance(s, If):
            out.extend(_innermost(s.then) + _innermost(s.orelse))
    return out


def _loads(stmts):
    return (n for st in stmts for n in walk(st) if isinstance(n, Load))


def default_schedule(kernel, ii: int = 1, unroll: int = 1) -> sd.Schedule:
    """Pipeline every innermost loop of a block kernel (II ``ii``); returns the Schedule.

    ``kernel`` may also be a Schedule already (``g.schedule(task)`` of a dataflow).

    With ``unroll > 1``, an innermost loop of a constant trip count that ``unroll``
    divides is split by it; the outer part is pipelined, the inner part fully
    unrolled, and each kernel input the loop reads along its last dimension is
    partitioned cyclically by ``unroll`` so the unrolled reads can happen in one cycle.
    Kernels a block calls (the quantiser inside a quantised linear) keep their own
    loops: schedule them separately if needed.

        for k in range(64) { acc = acc + X[i, k] * W[o, k] }        # default_schedule(k, unroll=4)
        ->  partition X, W dim=2 cyclic 4
            for k_o in range(16) pipeline(1) { for k_i in range(4) unroll { ... X[i, k_o*4 + k_i] ... } }
    """
    if isinstance(unroll, bool) or not isinstance(unroll, int) or unroll < 1:
        fail(f"default_schedule: unroll must be a positive integer, got {unroll!r}", hint="unroll=1 or e.g. 4")
    s = kernel if isinstance(kernel, sd.Schedule) else sd.schedule(kernel)  # a task's schedule in a dataflow, too
    params = {p.name: p.type for p in s.ir.params if isinstance(p.type, sd.TensorType)}
    partitioned: set[str] = set()
    for lp in _innermost(s.ir.body):
        n = lp.stop.value - lp.start.value if isinstance(lp.start, Const) and isinstance(lp.stop, Const) else None
        if unroll == 1 or n is None or lp.step != 1 or n <= unroll or n % unroll:
            s.pipeline(s.loop(lp), ii=ii)
            continue
        for ld in _loads(lp.body):
            last = ld.indices[-1]
            if (ld.name in params and ld.name not in partitioned and isinstance(last, Var) and last.name == lp.var
                    and params[ld.name].shape[-1] % unroll == 0):
                s.partition(s.buffer(ld.name), dim=params[ld.name].rank, kind="cyclic", factor=unroll)
                partitioned.add(ld.name)
        outer, inner = s.split(s.loop(lp), unroll)
        s.pipeline(outer, ii=ii)
        s.unroll(inner)
    return s
