"""The device side of a token: the LM head streamed from HBM, greedy argmax and top-k sampling on chip, and the
head dataflow (final norm -> LM head -> argmax) that turns the last hidden state into the next token id.

* **Embedding** (:mod:`.embed`, re-exported here): ids i32[t] index rows of the table f32[vocab, H]; output row
  ``i`` reads table row ``ids[i]`` (``E[ids[i], j]``: a data-dependent row address), so a device reads t rows of
  the table, never all of it.  GPT-2 adds the position rows ``wpe[pos + i]``, Gemma scales by ``f32(sqrt(H))``.
  :func:`embedding_for` picks the family's kernel.
* **LM head**: one row h f32[1, H] against the table [vocab, H] read row by row in the order it is stored.  Logit
  ``v`` is ``dot(h, W[v])`` and leaves as soon as row ``v`` has been read, so the logits are a stream and nothing
  holds all of them.  fp32: :func:`.linear.make_lm_head`; W8A8 / W4A8: :func:`make_lm_head_q` (h quantised once
  per token by :func:`.quant.make_quantize_rows`, each logit an int32 dot product dequantised as
  ``(f32(acc) * sx) * sw[v]``: bit for bit :func:`.ref.linear_quant`).  The library's quantised linears keep
  every output's accumulator on chip (outputs innermost), which for a vocabulary would be a buffer of every
  logit; the head keeps the reduction innermost instead.
* **Greedy argmax** (:func:`make_argmax_stream`): a running maximum over the logits stream, ``lanes`` logits a
  step: the step's largest value and the first lane holding it (a max and a min reduction that carry nothing
  from step to step, so they unroll), then one compare with the running best, strictly greater so the first
  index wins a tie, as ``torch.argmax``.  Logits are expected NaN-free.
* **Sampling** (:func:`make_sampler`): temperature and top-k with a seed.  Each of ``lanes`` lanes keeps its k
  largest logits in a sorted register file (k compare-and-shift cells, one logit a step); the lanes' lists merge
  into one (ties by the smaller id); ``p_j = exp((x_j - x_0) / T)`` over the k survivors, their running sum
  ``S_j``, and the token is the first ``j`` with ``u * S_{k-1} < S_j`` (inverse CDF, survivors largest first).  The
  uniform ``u = (r >> 8) * 2**-24`` comes from a counter-based RNG, Philox-2x32-10 (Salmon et al., SC 2011; the
  Random123 library's constants) with counter ``(step, 0)`` and key ``seed``: one 32 x 32 -> 64-bit multiply a
  round (:func:`make_philox`), bit for bit :func:`.ref.philox2x32`.  Its price is the selection, not the RNG:
  ``n / lanes`` steps a token and ``lanes * k`` cells.  By the cost model (the step loop pipelined, the cells
  unrolled), k = 50 over GPT-2's 50,257 logits takes 50,771 cycles (203 us at 250 MHz) and 68k LUT in one lane,
  3,648 cycles and 851k LUT (72 % of the U55C's) in 29; over Gemma 3's 262,144 one lane takes 1.05 ms.  It is
  not cheap at decode rates for these vocabularies, so no head uses it: greedy decoding does not pay for it.

The head dataflow (:func:`make_head`, :func:`head_for`) and its streaming schedule (:func:`schedule_head`) run
on the simulator and in C-sim; :mod:`.ref` has the NumPy references (``lm_head_quant``, ``argmax``,
``philox2x32``, ``uniform``, ``sample_top_k``).
"""
from __future__ import annotations

import streamdsl as sd
from streamdsl import f32, i8, i32, u32, u64

from ._checks import divides, fail, named, sizes
from .blocks import default_schedule
from .config import LLMConfig
from .embed import make_embedding, make_gemma_embedding, make_gpt2_embedding
from .linear import make_lm_head
from .norms import make_layernorm, make_rmsnorm
from .quant import I4, check_accumulator, make_quantize_rows

NORMS = ("layernorm", "rmsnorm", "rmsnorm1p")  # LLMConfig.norm
SCHEMES = {"fp32": 32, "w8a8": 8, "w4a8": 4}  # the LM head's weights
LOWEST = -3.4028234663852886e38  # the lowest finite f32: an empty top-k slot, beaten by any finite logit
PHILOX_M = 0xD256D193  # Random123's PHILOX_M2x32_0
PHILOX_W = 0x9E3779B9  # Random123's PHILOX_W32_0 (the key's bump each round)
PHILOX_ROUNDS = 10
TWO_M24 = 2.0**-24  # a 24-bit integer times this is an f32 in [0, 1), exactly
TABLE_FIFO_DEPTH = 2  # tokens (table rows) between the table's DMA and the LM head: a double buffer

__all__ = ["LOWEST", "NORMS", "SCHEMES", "device_head", "embedding_for", "head_for", "make_argmax_stream", "make_embedding",
           "make_gemma_embedding", "make_gpt2_embedding", "make_head", "make_lm_head_q", "make_philox",
           "make_sampler", "schedule_head"]


def embedding_for(config: LLMConfig, t: int):
    """The embedding kernel of ``config``'s family for ``t`` ids (GPT-2's with the position rows at ``past_len``)."""
    c = config
    if c.family == "gpt2":
        return make_gpt2_embedding(t, c.vocab, c.hidden, c.max_positions)
    return make_embedding(t, c.vocab, c.hidden, c.embed_scale if c.embed_scale != 1.0 else None)


def make_lm_head_q(hidden: int, vocab: int, bits: int = 4):
    """The W8A8 (``bits=8``) or W4A8 LM head of one row: H f32[1, hidden], Wq i8/int4[vocab, hidden],
    sw f32[vocab] -> logits f32[1, vocab], logit ``v`` as soon as row ``v`` of Wq has been read.

    Wq, sw from ``quant.quantize_weights(E, bits)``; H is quantised per token inside (the scheme of :mod:`.quant`).
    """
    if bits not in (4, 8):
        fail(f"lm_head_q: bits must be 4 or 8, got {bits!r}", hint="W8A8 is bits=8, W4A8 bits=4")
    sizes("lm_head_q", hidden=hidden, vocab=vocab)
    check_accumulator("lm_head_q", hidden, bits)
    quantize_rows = make_quantize_rows(1, hidden)
    wt = i8 if bits == 8 else I4

    @sd.kernel
    def lm_head_q(H: f32[1, hidden], Wq: wt[vocab, hidden], sw: f32[vocab]) -> f32[1, vocab]:
        logits: f32[1, vocab]
        Hq, sx = quantize_rows(H)  # once a token
        for v in range(vocab):  # a table row a step, as stored: logit v leaves when its row has been read
            acc: i32 = 0
            for k in range(hidden):
                acc += sd.cast(Hq[0, k], i32) * sd.cast(Wq[v, k], i32)
            logits[0, v] = sd.cast(acc, f32) * sx[0] * sw[v]
        return logits

    return named(lm_head_q, f"lm_head_w{bits}a8", hidden, vocab)


def make_argmax_stream(n: int, lanes: int = 1):
    """Greedy selection over one row of logits X f32[1, n] -> i32[1], ``lanes`` logits a step (``lanes`` divides n):
    the first index of the largest value, as torch.argmax (module docstring)."""
    sizes("argmax_stream", n=n, lanes=lanes)
    divides("argmax_stream", "lanes", lanes, "n", n)
    steps = n // lanes

    @sd.kernel
    def argmax_stream(X: f32[1, n]) -> i32[1]:
        idx: i32[1]
        best: f32 = X[0, 0]
        at: i32 = 0
        for c in range(steps):
            m: f32 = X[0, c * lanes]
            for lane in range(lanes):
                m = max(m, X[0, c * lanes + lane])
            first: i32 = lanes
            for lane in range(lanes):
                first = min(first, lane if X[0, c * lanes + lane] == m else lanes)
            if m > best:  # strictly: an equal value later in the stream never replaces the first
                best = m
                at = c * lanes + first
        idx[0] = at
        return idx

    return named(argmax_stream, "argmax_stream", n, lanes)


def make_philox(rounds: int = PHILOX_ROUNDS):
    """Philox-2x32-``rounds`` (Random123): (c0: u32, c1: u32, key: u32) -> u32[2], the counter (c0, c1) encrypted
    under ``key``.  A round: ``hi:lo = c0 * M`` (64 bits), ``(c0, c1) = (hi ^ key ^ c1, lo)``, ``key += W``."""
    sizes("philox", rounds=rounds)

    @sd.kernel
    def philox(c0: u32, c1: u32, key: u32) -> u32[2]:
        out: u32[2]
        a: u32 = c0
        b: u32 = c1
        kk: u32 = key
        for r in range(rounds):
            p: u64 = sd.cast(a, u64) * PHILOX_M
            a = sd.cast(p >> 32, u32) ^ kk ^ b
            b = sd.cast(p, u32)
            kk = kk + PHILOX_W
        out[0] = a
        out[1] = b
        return out

    return named(philox, "philox2x32", rounds)


def make_sampler(n: int, k: int, lanes: int = 1):
    """Temperature and top-k sampling over one row of logits (module docstring): X f32[1, n], temperature: f32
    (> 0), seed: u32, step: u32 -> i32[1].  ``k`` (<= n / lanes) survivors; ``lanes`` logits a step.

    The same (seed, step) always draws the same uniform, so a generate call that numbers its tokens is
    reproducible.  Logits must be finite (an empty slot holds the lowest finite f32); Gemma's final soft-cap
    (null for the 1B model) is not applied here.
    """
    sizes("sampler", n=n, k=k, lanes=lanes)
    divides("sampler", "lanes", lanes, "n", n)
    if k > n // lanes:
        fail(f"sampler: k={k} survivors need at least k logits a lane, a lane sees {n // lanes}",
             hint=f"use k <= {n // lanes}, or fewer lanes")
    steps = n // lanes
    cands = lanes * k
    philox = make_philox()

    @sd.kernel
    def sampler(X: f32[1, n], temperature: f32, seed: u32, step: u32) -> i32[1]:
        out: i32[1]
        V: f32[lanes, k] = LOWEST  # each lane's k largest logits so far, largest first
        I: i32[lanes, k] = n  # their ids (n: an empty slot)
        NV: f32[lanes, k]
        NI: i32[lanes, k]
        for c in range(steps):
            for lane, j in sd.grid(lanes, k):  # every cell compares at once: the entry above moves down, or x lands
                x: f32 = X[0, c * lanes + lane]
                above: i32 = max(j - 1, 0)
                down: u32 = 1 if j > 0 and x > V[lane, above] else 0  # strictly: equal logits keep stream order
                NV[lane, j] = V[lane, above] if down == 1 else (x if x > V[lane, j] else V[lane, j])
                NI[lane, j] = I[lane, above] if down == 1 else (c * lanes + lane if x > V[lane, j] else I[lane, j])
            for lane, j in sd.grid(lanes, k):
                V[lane, j] = NV[lane, j]
                I[lane, j] = NI[lane, j]
        F: f32[k] = LOWEST  # the lanes' lists merged: the k largest, ties by the smaller id
        FI: i32[k] = n
        G: f32[k]
        GI: i32[k]
        for m in range(cands):
            y: f32 = V[m // k, m % k]
            yi: i32 = I[m // k, m % k]
            for j in range(k):
                up: i32 = max(j - 1, 0)
                moves: u32 = 1 if j > 0 and (y > F[up] or y == F[up] and yi < FI[up]) else 0
                lands: u32 = 1 if y > F[j] or y == F[j] and yi < FI[j] else 0
                G[j] = F[up] if moves == 1 else (y if lands == 1 else F[j])
                GI[j] = FI[up] if moves == 1 else (yi if lands == 1 else FI[j])
            for j in range(k):
                F[j] = G[j]
                FI[j] = GI[j]
        S: f32[k]  # running sums of the survivors' unnormalised probabilities
        total: f32 = 0.0
        for j in range(k):
            total += sd.exp((F[j] - F[0]) / temperature)
            S[j] = total
        R = philox(step, 0, seed)
        u: f32 = sd.cast(R[0] >> 8, f32) * TWO_M24
        target: f32 = u * total
        pick: i32 = k - 1
        for j in range(k):
            pick = min(pick, j if target < S[j] else k - 1)
        out[0] = FI[pick]
        return out

    return named(sampler, "sampler", n, k, lanes)


def _norm(kind: str, hidden: int, eps: float):
    if kind not in NORMS:
        fail(f"head: unknown norm {kind!r}", hint=f"norm is one of {', '.join(NORMS)}")
    if kind == "layernorm":
        return make_layernorm(1, hidden, eps)
    return make_rmsnorm(1, hidden, eps, unit_offset=kind == "rmsnorm1p")


def make_head(hidden: int, vocab: int, norm: str = "rmsnorm", eps: float = 1e-6, scheme: str = "fp32",
              lanes: int = 1):
    """The head dataflow: final norm -> LM head -> greedy argmax, last hidden state -> next token id i32[1].

    Parameters: ``h f32[1, hidden]``, the norm's weight ``w`` (and bias ``b`` for a layernorm), then the table:
    ``E f32[vocab, hidden]`` (fp32) or ``Wq, sw`` (``scheme`` "w8a8" / "w4a8", from ``quantize_weights``).
    ``lanes`` logits a step into the argmax (it must divide ``vocab``).
    """
    if scheme not in SCHEMES:
        fail(f"head: unknown scheme {scheme!r}", hint=f"scheme is one of {', '.join(SCHEMES)}")
    final_norm = _norm(norm, hidden, eps)
    greedy = make_argmax_stream(vocab, lanes)
    bias = norm == "layernorm"
    if scheme == "fp32":
        lm_head = make_lm_head(1, hidden, vocab)
        if bias:

            @sd.dataflow
            def head(h: f32[1, hidden], w: f32[hidden], b: f32[hidden], E: f32[vocab, hidden]) -> i32[1]:
                hn = final_norm(h, w, b)
                logits = lm_head(hn, E)
                return greedy(logits)
        else:

            @sd.dataflow
            def head(h: f32[1, hidden], w: f32[hidden], E: f32[vocab, hidden]) -> i32[1]:
                hn = final_norm(h, w)
                logits = lm_head(hn, E)
                return greedy(logits)
    else:
        bits = SCHEMES[scheme]
        WT = i8 if bits == 8 else I4
        lm_head = make_lm_head_q(hidden, vocab, bits)
        if bias:

            @sd.dataflow
            def head(h: f32[1, hidden], w: f32[hidden], b: f32[hidden], Wq: WT[vocab, hidden],
                     sw: f32[vocab]) -> i32[1]:
                hn = final_norm(h, w, b)
                logits = lm_head(hn, Wq, sw)
                return greedy(logits)
        else:

            @sd.dataflow
            def head(h: f32[1, hidden], w: f32[hidden], Wq: WT[vocab, hidden], sw: f32[vocab]) -> i32[1]:
                hn = final_norm(h, w)
                logits = lm_head(hn, Wq, sw)
                return greedy(logits)
    return named(head, f"head_{scheme}", hidden, vocab)


def head_for(config: LLMConfig, scheme: str = "fp32", lanes: int = 1):
    """:func:`make_head` for ``config``'s final norm, hidden size and vocabulary."""
    return make_head(config.hidden, config.vocab, config.norm, config.norm_eps, scheme, lanes)


def schedule_head(head, lanes: int = 1) -> sd.DataflowSchedule:
    """The head as a device streams it: every task pipelined, the table a row a token (scales a value a token)
    through a FIFO of :data:`TABLE_FIFO_DEPTH` rows, the logits ``lanes`` a token, one fused region, the other
    FIFOs sized."""
    g = sd.schedule(head)
    for task in g.tasks():
        default_schedule(g.schedule(task))
    names = {e.name for e in g.edges()}
    table = "E" if "E" in names else "Wq"
    g.stream(g.edge(table), tile=(1, g.graph.edges[table].type.shape[1]))
    if "sw" in names:
        g.stream(g.edge("sw"), tile=(1,))
    g.stream(g.edge("logits"), tile=(1, lanes))
    g.fuse(*g.tasks())
    for name in sorted(names & {table, "sw"}):  # the DMA may wait for the head; the table never sits on chip
        g.fifo(g.edge(name), TABLE_FIFO_DEPTH)
    g.size_fifos()
    return g


def device_head(config: LLMConfig, scheme: str = "fp32") -> sd.DataflowSchedule:
    """The head the generate kernel runs (:mod:`.device`): :func:`schedule_head` of :func:`head_for` with as many
    logits a step as a 512-bit word of f32 holds that divide the vocabulary."""
    lanes = max(d for d in range(1, 17) if config.vocab % d == 0)
    return schedule_head(head_for(config, scheme, lanes), lanes)
