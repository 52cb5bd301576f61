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
on the simulator and in C-sim.  The head the generate kernel emits is :func:`device_head`: the final norm, then
the LM head and the argmax in one pipeline (:func:`make_greedy_lm_head`: each of ``lanes`` table rows side by
side keeps its largest logit and id, merged at the end), the table streamed in (lanes x chunk) tiles over as
many HBM ports as they fill words, ``lanes`` the most rows that divide the vocabulary, at most one a memory
channel of the board (:func:`head_lanes`), ``chunk`` codes a lane a cycle, the most with which the head fits one
SLR, in DSPs (:func:`device_head_chunk`), two lanes a DSP48E2 where the lanes pair up (``pack``, W4A8: the same
chunk in about 2/3 of the DSPs); modeled on the U55C at W4A8 it takes 259 us for GPT-2 Medium (29 lanes: unpacked),
603 us for Qwen2.5-0.5B, 1,164 us for Llama-3.2-1B and 889 us for Gemma-3-1B (a bus word a lane, 73-342 us, would
not fit one SLR).
:mod:`.ref` has the NumPy references (``lm_head_quant``, ``argmax``, ``philox2x32``, ``uniform``,
``sample_top_k``).
"""
from __future__ import annotations

import functools

import streamdsl as sd
from streamdsl import board as get_board
from streamdsl import f32, i8, i32, u32, u64
from streamdsl.explorer import apply_recipe
from streamdsl.ir import CallKernel, For, Load, loops_with_parents, walk
from streamdsl.perf import GUIDELINE, fit_designs, model_design

from ._checks import divides, fail, named, sizes
from .blocks import default_schedule
from .config import LLMConfig
from .embed import make_embedding, make_gemma_embedding, make_gpt2_embedding
from .linear import make_lm_head
from .norms import make_layernorm, make_rmsnorm
from .quant import I4, I48, check_accumulator, make_quantize_rows, pack_shift, packs

NORMS = ("layernorm", "rmsnorm", "rmsnorm1p")  # LLMConfig.norm
SCHEMES = {"fp32": 32, "w8a8": 8, "w4a8": 4}  # the LM head's weights
LOWEST = -3.4028234663852886e38  # the lowest finite f32: an empty top-k slot, beaten by any finite logit
PHILOX_M = 0xD256D193  # Random123's PHILOX_M2x32_0
PHILOX_W = 0x9E3779B9  # Random123's PHILOX_W32_0 (the key's bump each round)
PHILOX_ROUNDS = 10
TWO_M24 = 2.0**-24  # a 24-bit integer times this is an f32 in [0, 1), exactly
TABLE_FIFO_DEPTH = 2  # tokens (table rows) between the table's DMA and the LM head: a double buffer

__all__ = ["LOWEST", "NORMS", "SCHEMES", "device_head", "device_head_beside", "device_head_chunk", "device_head_design",
           "embedding_for", "head_chunk", "head_for", "head_lanes",
           "make_argmax_stream", "make_embedding", "make_gemma_embedding", "make_gpt2_embedding",
           "make_greedy_head", "make_greedy_lm_head", "make_head", "make_lm_head_q", "make_philox", "make_sampler",
           "schedule_head"]


def embedding_for(config: LLMConfig, t: int):
    """The embedding kernel of ``config``'s family for ``t`` ids (GPT-2's with the position rows at ``past_len``)."""
    c = config
    if c.family == "gpt2":
        return make_gpt2_embedding(t, c.vocab, c.hidden, c.max_positions)
    return make_embedding(t, c.vocab, c.hidden, c.embed_scale if c.embed_scale != 1.0 else None)


def make_lm_head_q(hidden: int, vocab: int, bits: int = 4, lanes: int = 1, chunk: int | None = None):
    """The W8A8 (``bits=8``) or W4A8 LM head of one row: H f32[1, hidden], Wq i8/int4[vocab, hidden],
    sw f32[vocab] -> logits f32[1, vocab].

    ``lanes`` table rows (``lanes`` divides vocab) are reduced side by side, ``chunk`` codes of each a step
    (``chunk`` divides hidden; default: the whole row): a block of ``lanes`` logits leaves once its rows have
    been read.  One loop walks blocks x chunks (a step of the stream model each), so one pipeline walks the
    table with every lane's ``chunk`` multiply-adds inside (each lane's int32 sum carried from chunk to chunk,
    exactly: integer adds in any order give the same bits), and the block's dequantisation sits in the same
    pipeline, taken on the last chunk.  Wq, sw from ``quant.quantize_weights(E, bits)``; H is quantised per
    token inside (the scheme of :mod:`.quant`).
    """
    if bits not in (4, 8):
        fail(f"lm_head_q: bits must be 4 or 8, got {bits!r}", hint="W8A8 is bits=8, W4A8 bits=4")
    chunk = hidden if chunk is None else chunk
    sizes("lm_head_q", hidden=hidden, vocab=vocab, lanes=lanes, chunk=chunk)
    divides("lm_head_q", "lanes", lanes, "vocab", vocab)
    divides("lm_head_q", "chunk", chunk, "hidden", hidden)
    check_accumulator("lm_head_q", hidden, bits)
    quantize_rows = make_quantize_rows(1, hidden)
    wt = i8 if bits == 8 else I4
    blocks, words = vocab // lanes, hidden // chunk

    @sd.kernel
    def lm_head_q(H: f32[1, hidden], Wq: wt[vocab, hidden], sw: f32[vocab]) -> f32[1, vocab]:
        logits: f32[1, vocab]
        A: i32[lanes]  # each lane's sum over the chunks of its row read so far
        Hq, sx = quantize_rows(H)  # once a token
        for s in range(blocks * words):  # chunk w = s % words of the rows of block s // words, as stored
            for lane in range(lanes):
                p: i32 = 0
                for k in range(chunk):
                    p += sd.cast(Hq[0, s % words * chunk + k], i32) * \
                        sd.cast(Wq[s // words * lanes + lane, s % words * chunk + k], i32)
                a: i32 = p if s % words == 0 else A[lane] + p
                A[lane] = a
                if s % words == words - 1:  # the row is summed: its logit leaves
                    logits[0, s // words * lanes + lane] = sd.cast(a, f32) * sx[0] * sw[s // words * lanes + lane]
        return logits

    return named(lm_head_q, f"lm_head_w{bits}a8", hidden, vocab, lanes, chunk)


def make_greedy_lm_head(hidden: int, vocab: int, scheme: str = "w4a8", lanes: int = 1, chunk: int | None = None,
                        halves: int = 1, pack: bool = False):
    """The LM head and greedy argmax in one pipeline: H f32[1, hidden] and the table (``E f32[vocab, hidden]``
    for "fp32", ``Wq, sw`` for "w8a8" / "w4a8") -> the first index of the largest logit, i32[1].

    The table is walked as :func:`make_lm_head_q` walks it (``lanes`` rows side by side, ``chunk`` values of
    each a step, a block of rows at a time in stored order); each lane keeps the largest logit it has seen and
    its id (strictly greater: the first id wins a tie), and the lanes' bests merge at the end (the largest,
    ties by the smaller id), as ``torch.argmax``.  No logit leaves the pipeline, so nothing holds them and no
    stream of logits bounds its rate.  fp32 sums each chunk's products in order, then adds it to the row's
    sum (another order than :func:`.linear.make_lm_head`'s one chain: the roundings may differ); the
    quantised sums are exact and their logits bit for bit :func:`make_lm_head_q`'s.

    ``halves=2`` (quantised only) walks the table in two loops, the first ``ceil(blocks / 2)`` blocks then the
    rest: the stream model takes each iteration of a top-level loop as a step only up to a limit (65,536
    iterations: a longer loop is one step, its whole table on chip).

    ``pack=True`` (W4A8, an even ``lanes``, ``hidden <= quant.PACK_MAX_IN``, one loop): lanes ``2h`` and ``2h + 1``
    share a DSP48E2 as :mod:`.quant`'s packed linear does (WP486): ``P[h] += (Wq[row 2h+1, k] * 2**S +
    Wq[row 2h, k]) * Hq[k]``, both rows' sums in one 48-bit accumulator, split exactly when the row is summed;
    the ids and logits are the unpacked head's, bit for bit.
    """
    if scheme not in SCHEMES:
        fail(f"greedy_lm_head: unknown scheme {scheme!r}", hint=f"scheme is one of {', '.join(SCHEMES)}")
    chunk = hidden if chunk is None else chunk
    sizes("greedy_lm_head", hidden=hidden, vocab=vocab, lanes=lanes, chunk=chunk)
    divides("greedy_lm_head", "lanes", lanes, "vocab", vocab)
    divides("greedy_lm_head", "chunk", chunk, "hidden", hidden)
    if pack:
        return _packed_greedy_lm_head(hidden, vocab, scheme, lanes, chunk, halves)
    blocks, words = vocab // lanes, hidden // chunk
    merge_lanes = _merge_lanes(lanes)
    if scheme == "fp32":
        if halves != 1:
            fail("greedy_lm_head: the fp32 head walks its table in one loop", hint="halves=1")

        @sd.kernel
        def greedy_lm_head(H: f32[1, hidden], E: f32[vocab, hidden]) -> i32[1]:
            A: f32[lanes]  # each lane's sum over the chunks of its row read so far
            B: f32[lanes] = LOWEST  # each lane's largest logit so far
            I: i32[lanes]  # ... and its id
            for lane in range(lanes):
                I[lane] = lane
            for s in range(blocks * words):  # chunk s % words of the rows of block s // words, as stored
                for lane in range(lanes):
                    p: f32 = 0.0
                    for k in range(chunk):
                        p += H[0, s % words * chunk + k] * E[s // words * lanes + lane, s % words * chunk + k]
                    a: f32 = p if s % words == 0 else A[lane] + p
                    A[lane] = a
                    if s % words == words - 1 and a > B[lane]:  # the row is summed: its logit competes
                        B[lane] = a
                        I[lane] = s // words * lanes + lane
            return merge_lanes(B, I)

        return named(greedy_lm_head, "greedy_lm_head_fp32", hidden, vocab, lanes, chunk)

    bits = SCHEMES[scheme]
    check_accumulator("greedy_lm_head", hidden, bits)
    quantize_rows = make_quantize_rows(1, hidden)
    wt = i8 if bits == 8 else I4
    if halves not in (1, 2):
        fail(f"greedy_lm_head: halves must be 1 or 2, got {halves!r}", hint="2 walks the table in two loops")
    if halves == 2 and blocks < 2:
        fail(f"greedy_lm_head: {blocks} block(s) of {lanes} rows cannot be walked in two halves", hint="halves=1")
    first = (blocks + 1) // 2 if halves == 2 else blocks  # blocks the first loop walks

    if halves == 1:

        @sd.kernel
        def greedy_lm_head_q(H: f32[1, hidden], Wq: wt[vocab, hidden], sw: f32[vocab]) -> i32[1]:
            A: i32[lanes]  # each lane's sum over the chunks of its row read so far
            B: f32[lanes] = LOWEST  # each lane's largest logit so far
            I: i32[lanes]  # ... and its id
            for lane in range(lanes):
                I[lane] = lane
            Hq, sx = quantize_rows(H)  # once a token
            for s in range(blocks * words):  # chunk s % words of the rows of block s // words, as stored
                for lane in range(lanes):
                    p: i32 = 0
                    for k in range(chunk):
                        p += sd.cast(Hq[0, s % words * chunk + k], i32) * \
                            sd.cast(Wq[s // words * lanes + lane, s % words * chunk + k], i32)
                    a: i32 = p if s % words == 0 else A[lane] + p
                    A[lane] = a
                    if s % words == words - 1:  # the row is summed: its logit competes
                        x: f32 = sd.cast(a, f32) * sx[0] * sw[s // words * lanes + lane]
                        if x > B[lane]:
                            B[lane] = x
                            I[lane] = s // words * lanes + lane
            return merge_lanes(B, I)
    else:

        @sd.kernel
        def greedy_lm_head_q(H: f32[1, hidden], Wq: wt[vocab, hidden], sw: f32[vocab]) -> i32[1]:
            A: i32[lanes]
            B: f32[lanes] = LOWEST
            I: i32[lanes]
            for lane in range(lanes):
                I[lane] = lane
            Hq, sx = quantize_rows(H)
            for s in range(first * words):  # the first half of the blocks, as above
                for lane in range(lanes):
                    p: i32 = 0
                    for k in range(chunk):
                        p += sd.cast(Hq[0, s % words * chunk + k], i32) * \
                            sd.cast(Wq[s // words * lanes + lane, s % words * chunk + k], i32)
                    a: i32 = p if s % words == 0 else A[lane] + p
                    A[lane] = a
                    if s % words == words - 1:
                        x: f32 = sd.cast(a, f32) * sx[0] * sw[s // words * lanes + lane]
                        if x > B[lane]:
                            B[lane] = x
                            I[lane] = s // words * lanes + lane
            for s2 in range((blocks - first) * words):  # the second half: blocks first + s2 // words
                for lane in range(lanes):
                    p2: i32 = 0
                    for k in range(chunk):
                        p2 += sd.cast(Hq[0, s2 % words * chunk + k], i32) * \
                            sd.cast(Wq[(s2 // words + first) * lanes + lane, s2 % words * chunk + k], i32)
                    a2: i32 = p2 if s2 % words == 0 else A[lane] + p2
                    A[lane] = a2
                    if s2 % words == words - 1:
                        x2: f32 = sd.cast(a2, f32) * sx[0] * sw[(s2 // words + first) * lanes + lane]
                        if x2 > B[lane]:
                            B[lane] = x2
                            I[lane] = (s2 // words + first) * lanes + lane
            return merge_lanes(B, I)

    return named(greedy_lm_head_q, f"greedy_lm_head_w{bits}a8", hidden, vocab, lanes, chunk, halves)


def _merge_lanes(lanes: int):
    """The lanes' bests merged: the id of the largest logit, ties to the smaller id (``torch.argmax``)."""

    @sd.kernel
    def merge_lanes(B: f32[lanes], I: i32[lanes]) -> i32[1]:
        idx: i32[1]
        m: f32 = B[0]
        at: i32 = I[0]
        for lane in range(1, lanes):
            if B[lane] > m or B[lane] == m and I[lane] < at:
                m = B[lane]
                at = I[lane]
        idx[0] = at
        return idx

    return named(merge_lanes, "merge_lanes", lanes)


def _packed_greedy_lm_head(hidden: int, vocab: int, scheme: str, lanes: int, chunk: int, halves: int):
    """:func:`make_greedy_lm_head` with two lanes a DSP48E2 accumulator (its ``pack``; sizes checked there)."""
    if scheme != "w4a8" or halves != 1 or not packs(4, hidden, lanes):
        fail(f"greedy_lm_head: pack=True needs w4a8, one loop, an even number of lanes and at most 2064 inputs; "
             f"got {scheme}, halves={halves}, lanes={lanes}, hidden={hidden}",
             hint="pack=False accumulates a lane a DSP")
    check_accumulator("greedy_lm_head", hidden, 4)
    quantize_rows = make_quantize_rows(1, hidden)
    blocks, words, pairs = vocab // lanes, hidden // chunk, lanes // 2
    merge_lanes = _merge_lanes(lanes)
    S = pack_shift(hidden)
    LOW = sd.Int(S)
    SHIFT = 1 << S

    @sd.kernel
    def greedy_lm_head_p(H: f32[1, hidden], Wq: I4[vocab, hidden], sw: f32[vocab]) -> i32[1]:
        A: I48[pairs]  # lanes 2h (low S bits) and 2h + 1 (above): their rows' sums over the chunks read so far
        B: f32[lanes] = LOWEST  # each lane's largest logit so far
        I: i32[lanes]  # ... and its id
        for lane in range(lanes):
            I[lane] = lane
        Hq, sx = quantize_rows(H)  # once a token
        for s in range(blocks * words):  # chunk s % words of the rows of block s // words, as stored
            for h in range(pairs):
                p: I48 = 0
                for k in range(chunk):
                    p += (sd.cast(Wq[s // words * lanes + 2 * h + 1, s % words * chunk + k], I48) * SHIFT +
                          sd.cast(Wq[s // words * lanes + 2 * h, s % words * chunk + k], I48)) * \
                        sd.cast(Hq[0, s % words * chunk + k], I48)
                a: I48 = p if s % words == 0 else A[h] + p
                A[h] = a
                if s % words == words - 1:  # the rows are summed: split them, their logits compete
                    lo: I48 = sd.cast(sd.cast(a, LOW), I48)  # the low field, sign-extended
                    x0: f32 = sd.cast(lo, f32) * sx[0] * sw[s // words * lanes + 2 * h]
                    x1: f32 = sd.cast((a - lo) // SHIFT, f32) * sx[0] * sw[s // words * lanes + 2 * h + 1]
                    if x0 > B[2 * h]:
                        B[2 * h] = x0
                        I[2 * h] = s // words * lanes + 2 * h
                    if x1 > B[2 * h + 1]:
                        B[2 * h + 1] = x1
                        I[2 * h + 1] = s // words * lanes + 2 * h + 1
        return merge_lanes(B, I)

    return named(greedy_lm_head_p, "greedy_lm_head_w4a8_packed", hidden, vocab, lanes, chunk)


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
              lanes: int = 1, chunk: int | None = None):
    """The head dataflow: final norm -> LM head -> greedy argmax, last hidden state -> next token id i32[1].

    Parameters: ``h f32[1, hidden]``, the norm's weight ``w`` (and bias ``b`` for a layernorm), then the table:
    ``E f32[vocab, hidden]`` (fp32) or ``Wq, sw`` (``scheme`` "w8a8" / "w4a8", from ``quantize_weights``).
    ``lanes`` logits a step into the argmax (it must divide ``vocab``); a quantised LM head reduces ``lanes``
    table rows side by side, ``chunk`` codes of each a step (:func:`make_lm_head_q`).
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
        lm_head = make_lm_head_q(hidden, vocab, bits, lanes, chunk)
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


def head_for(config: LLMConfig, scheme: str = "fp32", lanes: int = 1, chunk: int | None = None):
    """:func:`make_head` for ``config``'s final norm, hidden size and vocabulary."""
    return make_head(config.hidden, config.vocab, config.norm, config.norm_eps, scheme, lanes, chunk)


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


def make_greedy_head(hidden: int, vocab: int, norm: str = "rmsnorm", eps: float = 1e-6, scheme: str = "fp32",
                     lanes: int = 1, chunk: int | None = None, halves: int = 1, pack: bool = False):
    """:func:`make_head` with the LM head and the argmax in one pipeline (:func:`make_greedy_lm_head`, its
    ``pack`` too): the same parameters, last hidden state -> next token id i32[1]."""
    if scheme not in SCHEMES:
        fail(f"head: unknown scheme {scheme!r}", hint=f"scheme is one of {', '.join(SCHEMES)}")
    final_norm = _norm(norm, hidden, eps)
    greedy = make_greedy_lm_head(hidden, vocab, scheme, lanes, chunk, halves, pack)
    bias = norm == "layernorm"
    WT = f32 if scheme == "fp32" else i8 if SCHEMES[scheme] == 8 else I4
    if scheme == "fp32":
        if bias:

            @sd.dataflow
            def head(h: f32[1, hidden], w: f32[hidden], b: f32[hidden], E: f32[vocab, hidden]) -> i32[1]:
                return greedy(final_norm(h, w, b), E)
        else:

            @sd.dataflow
            def head(h: f32[1, hidden], w: f32[hidden], E: f32[vocab, hidden]) -> i32[1]:
                return greedy(final_norm(h, w), E)
    elif bias:

        @sd.dataflow
        def head(h: f32[1, hidden], w: f32[hidden], b: f32[hidden], Wq: WT[vocab, hidden], sw: f32[vocab]) -> i32[1]:
            return greedy(final_norm(h, w, b), Wq, sw)
    else:

        @sd.dataflow
        def head(h: f32[1, hidden], w: f32[hidden], Wq: WT[vocab, hidden], sw: f32[vocab]) -> i32[1]:
            return greedy(final_norm(h, w), Wq, sw)
    return named(head, f"greedy_head_{scheme}", hidden, vocab)


def head_lanes(config: LLMConfig, board="u55c") -> int:
    """Table rows the device head reduces side by side: the most that divide the vocabulary, at most one a
    memory channel of ``board`` (each lane reads a 512-bit word a cycle from a channel of its own; the head
    runs alone, so it may have them all)."""
    n = get_board(board).memory.channels
    return max(d for d in range(1, min(n, config.vocab) + 1) if config.vocab % d == 0)


def head_chunk(config: LLMConfig, scheme: str, board="u55c") -> int:
    """Values of a table row a lane takes a cycle at most: one bus word's (512 // bits: 128 int4, 64 int8, 16
    fp32 codes), or the largest divisor of the hidden size below it (:func:`device_head` may take fewer)."""
    per_word = get_board(board).memory.port_bits // SCHEMES[scheme]
    return max(d for d in range(1, min(per_word, config.hidden) + 1) if config.hidden % d == 0)


def device_head(config: LLMConfig, scheme: str = "w4a8", board="u55c") -> sd.DataflowSchedule:
    """The head the generate kernel runs after the last layer: final norm -> LM head -> greedy argmax, as
    scheduled for ``board`` (the build emits this design; :mod:`.e2e` prices it; :meth:`.models.LLM.neighbours`
    explores the decode layers beside it).  One object for the same arguments: do not change it.

    * The table streams a (lanes x chunk) tile a token (:func:`head_lanes`) over as many ports as the tile
      fills words, so the LM head's one pipeline takes ``chunk`` codes of every lane a cycle, every multiply-add
      of it unrolled; the scales come ``lanes`` a token over as many ports as words they fill.
    * ``chunk``: the most codes, from a bus word's (:func:`head_chunk`) down the divisors of the hidden size
      to a quarter of it, with which the modeled head fits one SLR at UG1393's guideline (its kernels lie in
      one SLR: GPT-2 Medium's at a bus word a lane, its multiply-adds in LUTs, would take 0.34 M LUTs of an
      SLR's 0.27 M), the multiply-adds of a quantised table in DSPs (Vitis's ``mac_muladd``), else the most
      with them in LUTs; when none fits, a bus word's in LUTs (``prj.fit()`` says it does not fit).  In DSPs
      at W4A8 with an even number of lanes, two lanes share a DSP48E2 at that chunk (:func:`make_greedy_lm_head`'s
      ``pack``): fewer DSPs, LUTs and FFs for the decode layers beside it.
    * The LM head and the argmax are one kernel (:func:`make_greedy_lm_head`): a stream of logits would carry
      ``lanes`` floats (more than a bus word) a block and bound the pipeline's rate.  When the stream model does
      not take each iteration of its walk as a step (a loop longer than its step limit is one step: the whole
      table on chip), the quantised walk is split into two loops.
    * The final norm and the row's quantiser take a word of fp32 values a cycle (the explorer's recipe at that
      factor: its sums reassociated, so the scheduled design, not the unscheduled head, is the reference).
    """
    if scheme not in SCHEMES:
        fail(f"device_head: unknown scheme {scheme!r}", hint=f"scheme is one of {', '.join(SCHEMES)}")
    return _head_on_one_slr(config, scheme, get_board(board).name)[2]


def device_head_chunk(config: LLMConfig, scheme: str = "w4a8", board="u55c") -> tuple[int, str]:
    """(chunk, where its multiply-adds go: "packed" (two lanes a DSP), "dsp" or "fabric") of :func:`device_head`."""
    return _head_on_one_slr(config, scheme, get_board(board).name)[:2]


def device_head_design(config: LLMConfig, scheme: str = "w4a8", board="u55c"):
    """The modeled :func:`device_head` (``streamdsl.perf.model_design`` of it, remembered with it)."""
    return _head_on_one_slr(config, scheme, get_board(board).name)[3]


def device_head_beside(config: LLMConfig, scheme: str, board, beside: dict) -> tuple:
    """(schedule, modeled design) of the head the generate kernel emits beside its layer kernels ``beside``
    (name -> modeled design, as ``prj.fit()`` places them): :func:`device_head`, its chunk then widened into
    the room they leave.  The layers are explored beside :func:`device_head`; a head with two lanes a DSP
    (packed) takes the next wider divisors of the hidden size, up to a bus word's (:func:`head_chunk`), while it
    still fits one SLR and :func:`~streamdsl.perf.fit_designs` places it with ``beside`` (the layers unchanged,
    the head faster: Llama 3.2's 290,982 cycles -> 148,228 at 64 codes a lane).  An unpacked head is already
    the widest that fits one SLR in its binding; it, and a head that does not fit beside them, stay as they are."""
    b = get_board(board)
    chunk, mac, g, perf = _head_on_one_slr(config, scheme, b.name)
    if mac != "packed" or not fit_designs({**beside, "head": perf}, b).fits:
        return g, perf
    lanes = head_lanes(config, b)
    for wider in [d for d in range(chunk + 1, head_chunk(config, scheme, b) + 1) if config.hidden % d == 0]:
        if lanes * wider // 2 > _slr_share(b)["dsp"]:
            break  # two multiply-adds a DSP: more than an SLR holds (a wider chunk takes more of everything)
        cand = _device_head_halved(config, scheme, b, wider, mac)
        if cand is None:
            break
        p = model_design(cand, b)
        if not _on_one_slr(p, b) or not fit_designs({**beside, "head": p}, b).fits:
            break
        g, perf = cand, p
    return g, perf


def _slr_share(b) -> dict[str, float]:
    """What one kernel may take of ``b``'s smallest SLR: UG1393's guideline share of each resource."""
    return {r: GUIDELINE[r] * min(sl[r] for sl in b.slrs) for r in GUIDELINE}


def _on_one_slr(perf, b) -> bool:
    """Does the modeled head ``perf`` fit one SLR of ``b`` (:func:`_slr_share`)?"""
    return all(perf.total.get(r, 0) <= v for r, v in _slr_share(b).items())


@functools.lru_cache(maxsize=16)
def _head_on_one_slr(config: LLMConfig, scheme: str, board_name: str) -> tuple:
    b = get_board(board_name)
    slr = _slr_share(b)
    widest, lanes = head_chunk(config, scheme, b), head_lanes(config, b)
    chunks = [d for d in range(widest, 0, -1) if config.hidden % d == 0 and 4 * d >= widest]
    # DSPs first: in LUTs the multiply-adds take the LUTs and flip-flops the decode layers' kernels need (Llama
    # 3.2's head at 64 codes a lane in LUTs: 0.37 M FFs, an SLR's whole guideline share, and the explored layer
    # then packs onto the other two SLRs only at 162 K cycles, not 105 K); fp32's multiplies are float cores
    for mac, chunk in [(m, c) for m in (("dsp", "fabric") if scheme != "fp32" else ("fabric",)) for c in chunks]:
        if mac == "dsp" and lanes * chunk > slr["dsp"]:
            continue  # a DSP a multiply-add: more than an SLR holds
        g = _device_head_halved(config, scheme, b, chunk, mac)
        perf = model_design(g, b)
        if _on_one_slr(perf, b):
            if mac == "dsp" and scheme == "w4a8" and packs(4, config.hidden, lanes):
                # the same chunk with two lanes a DSP: about the same head time (its pipeline a few stages
                # deeper: Qwen2.5's 150,735 cycles, not 150,676) in 2/3 of the DSPs, the rest left to the decode
                # layers.  A wider packed head is faster but takes room the layers' kernels need (Gemma 3: 96
                # codes a lane, 0.45 ms, made the step 9 % slower than this 0.89 ms head); only a joint choice
                # with the layers' exploration could weigh the two, which is not built
                packed = _device_head_halved(config, scheme, b, chunk, "packed")
                pperf = None if packed is None else model_design(packed, b)
                if pperf is not None and _on_one_slr(pperf, b) and pperf.total["dsp"] < perf.total["dsp"]:
                    return chunk, "packed", packed, pperf
            return chunk, mac, g, perf
    # none down to a quarter of a word a lane fits one SLR: the widest, in LUTs, which prj.fit() reports
    g = _device_head_halved(config, scheme, b, widest, "fabric")
    return widest, "fabric", g, model_design(g, b)


def _device_head_halved(config: LLMConfig, scheme: str, b, chunk: int, mac: str) -> sd.DataflowSchedule | None:
    """The head in one loop, or in two when the stream model does not walk one (None: packed, which is one loop)."""
    g = _device_head(config, scheme, b, 1, chunk, mac)
    table = "E" if scheme == "fp32" else "Wq"
    # the step tables (which tables the walk streams) do not depend on the FIFO depths: the design is sized once
    # it is chosen
    walked = any(table in n.tables.windows for n in g.lowered().of_kind("task") if n.name.startswith("greedy"))
    if not walked and scheme != "fp32" and config.vocab // head_lanes(config, b) > 1:
        if mac == "packed":
            return None
        g = _device_head(config, scheme, b, 2, chunk, mac)
    g.size_fifos(board=b)
    return g


def _device_head(config: LLMConfig, scheme: str, b, halves: int, chunk: int, mac: str) -> sd.DataflowSchedule:
    lanes = head_lanes(config, b)
    floats = b.memory.port_bits // 32  # fp32 values a bus word holds
    head = make_greedy_head(config.hidden, config.vocab, config.norm, config.norm_eps, scheme, lanes, chunk,
                            halves, mac == "packed")
    g = sd.schedule(head)
    table = "E" if scheme == "fp32" else "Wq"
    for task in g.tasks():
        s = g.schedule(task)
        if task.name.startswith("greedy_lm_head"):
            _schedule_greedy(s, table, lanes, chunk, "dsp" if mac == "packed" else mac)
        else:
            apply_recipe(s, False, floats)
    g.stream(g.edge(table), tile=(lanes, chunk))
    g.ports(g.edge(table), _ports(-(-lanes * chunk * SCHEMES[scheme] // b.memory.port_bits), b))
    if scheme != "fp32":
        g.stream(g.edge("sw"), tile=(lanes,))
        g.ports(g.edge("sw"), _ports(-(-lanes // floats), b))
    g.fuse(*g.tasks())
    for name in (table, "sw") if scheme != "fp32" else (table,):
        g.fifo(g.edge(name), TABLE_FIFO_DEPTH)
    return g  # FIFOs not sized yet (_device_head_halved sizes the one it keeps)


def _ports(words: int, board) -> int:
    """Ports for a stream of ``words``-word tokens: the most that divide them, at most one a memory channel."""
    return max(d for d in range(1, min(words, board.memory.channels) + 1) if words % d == 0)


def _schedule_greedy(s: sd.Schedule, table: str, lanes: int, chunk: int, mac: str) -> None:
    """The greedy LM head's schedule: each table walk one pipeline (every lane's chunk unrolled, its multiplies
    in ``mac`` ("dsp" or "fabric"), the arrays its lanes read partitioned to match), the row's quantiser
    inlined, every other loop pipelined."""
    for callee in sorted({n.callee for st in s.ir.body for n in walk(st) if isinstance(n, CallKernel)}):
        s.inline(callee)
    walks = [st for st in s.ir.body if isinstance(st, For) and any(
        isinstance(n, Load) and n.name == table for b in st.body for n in walk(b))]
    for st in walks:
        s.pipeline(s.loop(st))
        if table == "Wq":  # integer multiply-adds (fp32's are float cores)
            s.bind_op(s.loop(st), "mul", mac)
        for lp, _ in list(loops_with_parents(st.body)):
            s.unroll(s.loop(lp))
    for buf in ("A", "B", "I"):
        s.partition(s.buffer(buf), 1, "complete")
    s.partition(s.buffer(table), 1, "cyclic", lanes)
    s.partition(s.buffer(table), 2, "cyclic", chunk)
    s.partition(s.buffer("Hq" if table == "Wq" else "H"), 2, "cyclic", chunk)
    if table == "Wq":
        s.partition(s.buffer("sw"), 1, "cyclic", lanes)
    for lp, parents in list(loops_with_parents(s.ir.body)):
        if not any("pipeline" in x.attrs or "unroll" in x.attrs for x in (lp, *parents)) and \
                not any(isinstance(n, For) for b in lp.body for n in walk(b)):
            s.pipeline(s.loop(lp))
