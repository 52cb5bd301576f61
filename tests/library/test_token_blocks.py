"""The device side of a token (library/llm/token.py) against NumPy, transformers and Random123.

* The LM head, the argmax and the sampler run on the reference simulator and equal their NumPy references bit for
  bit where the arithmetic is the same (the integer LM head, the selections, Philox's bits and the sampled id).
* The head dataflow (final norm -> LM head -> argmax) picks transformers' greedy token from the NumpyModel's last
  hidden state of tiny random gpt2, llama, qwen2 and gemma3 models; its quantised forms pick the argmax of the
  NumPy W8A8 / W4A8 logits.
* Philox-2x32-10 gives Random123's known-answer vectors (DEShawResearch/random123, tests/kat_vectors); the sampler
  equals inverse-CDF sampling of transformers' TemperatureLogitsWarper + TopKLogitsWarper distribution.
* One head dataflow and the sampler are C-simulated (g++) and equal the simulator; so is the device head the
  generate kernel emits (fp32 and W4A8), which also equals the unscheduled head and picks a planted largest logit.
* The greedy LM head (LM head and argmax in one pipeline, lanes side by side, one loop or two) picks the first
  index of the largest of make_lm_head_q's logits.
"""
from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest
import torch
from test_explored_csim import scheduled
from test_hf_parity import build_hf, prompt
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper

import streamdsl as sd
from streamdsl.ir.nodes import Load, walk
from streamdsl.library.llm import ref, token
from streamdsl.library.llm.blocks import BlockError
from streamdsl.library.llm.numpy_model import NumpyModel
from streamdsl.library.llm.quant import quantize_weights
from streamdsl.library.llm.weights import from_hf
from streamdsl.perf import model_design

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="C-simulation needs g++")
FAMILIES = ("gpt2", "llama", "qwen2", "gemma3")
KAT = [  # Random123 kat_vectors, "philox2x32 10": ctr0 ctr1 key -> out0 out1
    ((0x00000000, 0x00000000, 0x00000000), (0xFF1DAE59, 0x6CD10DF2)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0x2C3F628B, 0xAB4FD7AD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E), (0xDD7CE038, 0xF62A4C12)),
]


def randn(seed, *shape, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


# ------------------------------------------------------------------ embedding
@pytest.mark.parametrize("family", FAMILIES)
def test_embedding_equals_transformers_input_embeddings(family):
    config, hf = build_hf(family)
    w = from_hf(hf)
    ids = np.array([5, 200, 5], np.int32)
    pos = 3
    kernel = token.embedding_for(config, len(ids))
    args = [ids, w.embed] + ([w.pos_embed, np.int32(pos)] if family == "gpt2" else [])
    got = kernel(*args)
    with torch.no_grad():
        want = hf.get_input_embeddings()(torch.tensor(ids)).numpy()
        if family == "gpt2":  # the position rows pos .. pos + t - 1
            want = want + hf.transformer.wpe(torch.arange(pos, pos + len(ids))).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def test_embedding_reads_table_rows_at_the_ids():
    """The table's row address is the id just read, so a device reads t rows, never the whole table."""
    kernel = token.embedding_for(sd.llm.tiny("llama"), 2)
    rows = [ld.indices[0] for ld in walk(kernel.ir) if isinstance(ld, Load) and ld.name == "E"]
    assert rows and all(isinstance(r, Load) and r.name == "ids" for r in rows)


# ------------------------------------------------------------------ LM head and argmax
@pytest.mark.parametrize("bits", [4, 8])
def test_quantised_lm_head_is_bit_exact(bits):
    hidden, vocab = 48, 96
    h, E = randn(1, 1, hidden), randn(2, vocab, hidden)
    Wq, sw = quantize_weights(E, bits)
    got = token.make_lm_head_q(hidden, vocab, bits)(h, Wq, sw)
    np.testing.assert_array_equal(got, ref.lm_head_quant(h, Wq, sw))


@pytest.mark.parametrize("n,lanes", [(96, 1), (96, 8), (96, 96)])
def test_argmax_stream_first_index_on_ties(n, lanes):
    kernel = token.make_argmax_stream(n, lanes)
    x = randn(3, 1, n)
    for first, second in [(0, n - 1), (5, 6), (n - 9, n - 2), (n - 1, n - 1)]:
        y = x.copy()
        y[0, [first, second]] = x.max() + 1.0
        assert kernel(y)[0] == first == int(torch.argmax(torch.tensor(y[0])))
    assert kernel(np.full((1, n), -2.5, np.float32))[0] == 0  # all equal: the first
    assert kernel(x)[0] == ref.argmax(x)[0]


@pytest.mark.parametrize("n,lanes", [(50257, 29), (262144, 64)])  # GPT-2's and Gemma 3's vocabularies
def test_argmax_stream_over_a_long_vocabulary(n, lanes):
    x = randn(4, 1, n)
    x[0, n - 3] = x[0, n // 2] = 9.0
    assert token.make_argmax_stream(n, lanes)(x)[0] == n // 2


def test_head_streams_a_long_vocabulary():
    """GPT-2's 50,257-row table through the whole head (tiny hidden size), W4A8."""
    hidden, vocab = 8, 50257
    h, w, b, E = randn(5, 1, hidden), randn(6, hidden), randn(7, hidden), randn(8, vocab, hidden)
    Wq, sw = quantize_weights(E, 4)
    head = token.make_head(hidden, vocab, "layernorm", 1e-5, "w4a8", lanes=29)
    hn = sd.llm.blocks.make_layernorm(1, hidden, 1e-5)(h, w, b)
    assert head(h, w, b, Wq, sw)[0] == ref.argmax(ref.lm_head_quant(hn, Wq, sw))[0]


# ------------------------------------------------------------------ the head against transformers
def _last_hidden(model: NumpyModel, ids) -> np.ndarray:
    """The residual stream after the last layer (before the final norm) at the last position."""
    positions = np.arange(len(ids))
    h = model.embed(ids, 0)
    for i in range(model.config.layers):
        h, _, _ = model.layer(i, h, positions, None)
    return np.ascontiguousarray(h[-1:], np.float32)


def _norm_args(config, w):
    return [w.final_norm] + ([w.final_norm_b] if config.norm == "layernorm" else [])


@pytest.fixture(scope="module", params=FAMILIES)
def family_case(request):
    config, hf = build_hf(request.param, seed=2)
    model = NumpyModel(config, from_hf(hf))
    ids = prompt(config, seed=4, length=7)
    with torch.no_grad():
        greedy = int(hf(torch.tensor(ids)[None]).logits[0, -1].argmax())
    return config, model, _last_hidden(model, ids), greedy


def test_head_picks_transformers_greedy_token(family_case):
    config, model, h, greedy = family_case
    w = model.weights
    head = token.head_for(config, "fp32", lanes=8)
    assert head(h, *_norm_args(config, w), w.lm_head)[0] == greedy


@pytest.mark.parametrize("scheme", ["w8a8", "w4a8"])
def test_quantised_head_picks_the_argmax_of_the_quantised_logits(family_case, scheme):
    config, model, h, _ = family_case
    w = model.weights
    Wq, sw = quantize_weights(w.lm_head, token.SCHEMES[scheme])
    head = token.head_for(config, scheme, lanes=8)
    blocks = sd.llm.blocks  # the final norm's kernel on the simulator: the bits the LM head is given
    norm = (blocks.make_layernorm(1, config.hidden, config.norm_eps) if config.norm == "layernorm"
            else blocks.make_rmsnorm(1, config.hidden, config.norm_eps, unit_offset=config.norm == "rmsnorm1p"))
    want = ref.argmax(ref.lm_head_quant(norm(h, *_norm_args(config, w)), Wq, sw))[0]
    assert head(h, *_norm_args(config, w), Wq, sw)[0] == want


@needs_gxx
def test_head_dataflow_csim_equals_simulator():
    config, hf = build_hf("gpt2", seed=3)  # a layernorm with a bias, and an int4 table
    model = NumpyModel(config, from_hf(hf))
    h = _last_hidden(model, prompt(config, seed=1, length=5))
    Wq, sw = quantize_weights(model.weights.lm_head, 4)
    args = [h, *_norm_args(config, model.weights), Wq, sw]
    head = token.head_for(config, "w4a8", lanes=8)
    g = token.schedule_head(head, lanes=8)
    assert g.simulate().cycles > 0  # the streamed design runs without deadlock in the token simulator
    np.testing.assert_array_equal(g.build().csim(*args), head(*args))


@needs_gxx
@pytest.mark.parametrize("family,scheme,vocab", [("gpt2", "fp32", None), ("gpt2", "w4a8", None),
                                                 ("gemma3", "w4a8", None), ("gpt2", "w4a8", 232)])
def test_device_head_csim_equals_simulator(family, scheme, vocab):
    """The head the generate kernel emits (device_head): C-simulated, it picks the scheduled simulator's id, the
    unscheduled head's, and (quantised) the argmax of the NumPy logits; at the largest logit on purpose too.
    A vocabulary of 232 rows takes 29 lanes (as GPT-2's 50,257 do): a token of the table is not whole bus words."""
    config = sd.llm.tiny(family, **({"vocab": vocab} if vocab else {}))
    g = token.device_head(config, scheme)
    lanes = token.head_lanes(config)
    assert 1 < lanes <= sd.board("u55c").memory.channels and config.vocab % lanes == 0
    chunk, _ = token.device_head_chunk(config, scheme)
    assert chunk <= token.head_chunk(config, scheme) and config.hidden % chunk == 0
    words = -(-lanes * chunk * token.SCHEMES[scheme] // 512)  # a token of the table
    assert g.pinned_ports()[("E" if scheme == "fp32" else "Wq")] == words  # a word of every lane a cycle
    project = g.build("hls")
    w, b = randn(21, config.hidden), randn(22, config.hidden)
    table = randn(23, config.vocab, config.hidden)
    for seed, top in [(24, None), (25, 7), (26, config.vocab - 1)]:
        h = randn(seed, 1, config.hidden)
        tab = table.copy()
        if top is not None:  # a row along the normed state: its logit is the largest
            tab[top] = 4 * np.sign(sd.llm.blocks.make_layernorm(1, config.hidden, config.norm_eps)(h, w, b)[0]
                                   if config.norm == "layernorm" else h[0])
        args = [h, w] + ([b] if config.norm == "layernorm" else []) + (
            [tab] if scheme == "fp32" else list(quantize_weights(tab, token.SCHEMES[scheme])))
        got = project.csim(*args)
        np.testing.assert_array_equal(got, scheduled(g, args)[0])  # the simulator of the scheduled kernels
        unscheduled = token.make_greedy_head(config.hidden, config.vocab, config.norm, config.norm_eps, scheme,
                                             lanes, chunk)
        assert got[0] == unscheduled(*args)[0]
        if top is not None:
            assert got[0] == top


def test_the_head_widens_into_the_room_its_neighbours_leave(monkeypatch):
    """device_head_beside: a packed head widens its chunk while it fits one SLR and beside the other kernels
    (alone, up to a bus word's codes a lane), and stays the device head when a wider one would not fit beside
    them; the widened head C-simulates to the scheduled simulator's id."""
    config = sd.llm.tiny("llama")
    chunk, mac = token.device_head_chunk(config, "w4a8")
    assert mac == "packed" and chunk < token.head_chunk(config, "w4a8")
    rule = model_design(token.device_head(config, "w4a8"), "u55c")
    g, p = token.device_head_beside(config, "w4a8", "u55c", {})
    assert p.cycles < rule.cycles and g.pinned_ports()["Wq"] > token.device_head(config, "w4a8").pinned_ports()["Wq"]
    h = randn(31, 1, config.hidden)
    args = [h, randn(32, config.hidden)] + list(quantize_weights(randn(33, config.vocab, config.hidden), 4))
    np.testing.assert_array_equal(g.build("hls").csim(*args), scheduled(g, args)[0])
    real = token.fit_designs
    monkeypatch.setattr(token, "fit_designs", lambda designs, board: real(designs, board) if
                        designs["head"].cycles >= rule.cycles else
                        dataclasses.replace(real(designs, board), problems=["a stand-in: the wider head does not fit"]))
    g2, p2 = token.device_head_beside(config, "w4a8", "u55c", {"layer": rule})
    assert p2.cycles == rule.cycles and g2 is token.device_head(config, "w4a8")


def test_greedy_lm_head_is_the_argmax_of_the_lm_head():
    """Lanes side by side, chunks of a row a step, one loop or two: the first index of the largest logit of
    make_lm_head_q's bits (ties across lanes and within one)."""
    hidden, vocab = 48, 96
    h, E = randn(27, 1, hidden), randn(28, vocab, hidden)
    for bits in (4, 8):
        Wq, sw = quantize_weights(E, bits)
        for lanes, chunk, halves in [(1, None, 1), (4, 16, 1), (8, 16, 2), (96, 48, 1), (2, 24, 2)]:
            k = token.make_greedy_lm_head(hidden, vocab, f"w{bits}a8", lanes, chunk, halves)
            logits = token.make_lm_head_q(hidden, vocab, bits, lanes, chunk)(h, Wq, sw)
            np.testing.assert_array_equal(logits, ref.lm_head_quant(h, Wq, sw))
            assert k(h, Wq, sw)[0] == int(torch.argmax(torch.tensor(logits[0])))
            for first, second in [(13, 70), (5, 9), (90, 3)]:  # a tie at the top: the smaller id
                Wt, st = Wq.copy(), sw.copy()
                Wt[[first, second]] = Wq[0]
                st[[first, second]] = 1e3 * np.sign(ref.lm_head_quant(h, Wq[:1], np.ones(1, np.float32))[0, 0] or 1)
                tie = ref.lm_head_quant(h, Wt, st)
                assert k(h, Wt, st)[0] == min(first, second) == int(torch.argmax(torch.tensor(tie[0])))
    k = token.make_greedy_lm_head(hidden, vocab, "fp32", 8, 16)
    assert k(h, E)[0] == int(np.argmax(h[0] @ E.T))


def test_the_packed_greedy_lm_head_picks_the_unpacked_heads_ids():
    """Two lanes a DSP48E2 accumulator (pack=True, W4A8): the same ids as one lane a DSP, ties to the smaller id
    within a pair and across pairs, and at the largest sums the packed low field holds (every code +-7, every
    activation +-127, 2048 inputs: the low sum at its bound)."""
    hidden, vocab = 48, 96
    h, E = randn(29, 1, hidden), randn(30, vocab, hidden)
    Wq, sw = quantize_weights(E, 4)
    for lanes, chunk in [(2, 48), (4, 16), (8, 24), (96, 48)]:
        packed = token.make_greedy_lm_head(hidden, vocab, "w4a8", lanes, chunk, pack=True)
        plain = token.make_greedy_lm_head(hidden, vocab, "w4a8", lanes, chunk)
        assert packed(h, Wq, sw)[0] == plain(h, Wq, sw)[0] == int(np.argmax(ref.lm_head_quant(h, Wq, sw)[0]))
        for first, second in [(12, 13), (13, 70), (90, 3), (1, 0)]:  # (12, 13) and (1, 0): one pair's two lanes
            Wt, st = Wq.copy(), sw.copy()
            Wt[[first, second]] = Wq[0]
            st[[first, second]] = 1e3 * np.sign(ref.lm_head_quant(h, Wq[:1], np.ones(1, np.float32))[0, 0] or 1)
            assert packed(h, Wt, st)[0] == plain(h, Wt, st)[0] == min(first, second)
    hidden, vocab = 2048, 8
    x = np.where(np.arange(hidden) % 3 == 0, -1.0, 1.0).astype(np.float32)[None]  # quantised to +-127
    for signs in ([7, -7, -7, 7, 7, 7, -7, -7], [-7, 7, 7, -7, -7, -7, 7, 7]):
        Wq = np.array([s * np.sign(x[0]) for s in signs], np.int8)  # rows of sums +-2048 * 127 * 7
        Wq[5] = -Wq[5]
        Wq[6, :7] = 0  # one row a little below the largest
        sw = np.ones(vocab, np.float32)
        packed = token.make_greedy_lm_head(hidden, vocab, "w4a8", 8, 256, pack=True)
        plain = token.make_greedy_lm_head(hidden, vocab, "w4a8", 8, 256)
        assert packed(x, Wq, sw)[0] == plain(x, Wq, sw)[0] == int(np.argmax(ref.lm_head_quant(x, Wq, sw)[0]))
    with pytest.raises(sd.StreamDSLError, match="an even number of lanes"):
        token.make_greedy_lm_head(48, 96, "w4a8", 3, 16, pack=True)
    with pytest.raises(sd.StreamDSLError, match="pack=True needs w4a8"):
        token.make_greedy_lm_head(48, 96, "w8a8", 4, 16, pack=True)


# ------------------------------------------------------------------ sampling
@pytest.mark.parametrize("counter,want", KAT)
def test_philox_gives_random123s_known_answers(counter, want):
    assert ref.philox2x32(*counter) == want
    got = token.make_philox()(*(np.uint32(c) for c in counter))
    assert tuple(int(v) for v in got) == want


def _warped_inverse_cdf(logits, k, temperature, u) -> int:
    """transformers' temperature + top-k distribution, sampled by inverse CDF over the logits largest first."""
    x = torch.tensor(logits.reshape(1, -1))
    scores = TopKLogitsWarper(k)(None, TemperatureLogitsWarper(temperature)(None, x))
    p = torch.softmax(scores, -1)[0].double().numpy()
    order = np.argsort(-logits.reshape(-1), kind="stable")
    cdf = np.cumsum(p[order])
    return int(order[min(np.searchsorted(cdf, u, side="right"), len(order) - 1)]), cdf


def test_sampling_reference_is_inverse_cdf_of_transformers_warpers():
    logits = randn(9, 1, 64, scale=2.0)
    for k, temperature in [(1, 1.0), (5, 0.7), (12, 1.5)]:
        for u in np.linspace(0.0, 0.999, 37, dtype=np.float32):
            want, cdf = _warped_inverse_cdf(logits, k, temperature, float(u))
            if np.min(np.abs(cdf - u)) < 1e-5:  # float32 and float64 may round a boundary apart
                continue
            assert ref.sample_top_k(logits, k, temperature, u) == want, (k, temperature, u)


@pytest.mark.parametrize("k,lanes", [(1, 1), (4, 1), (6, 8)])
def test_sampler_equals_reference(k, lanes):
    n = 64
    sampler = token.make_sampler(n, k, lanes)
    logits = randn(10, 1, n, scale=2.0)
    logits[0, 40] = logits[0, 3] = logits.max()  # a tie at the top: id 3 ranks first
    for seed, step, temperature in [(0, 0, 1.0), (7, 1, 0.5), (123456789, 2, 2.0), (2**32 - 1, 41, 0.9)]:
        u = ref.uniform(ref.philox2x32(step, 0, seed)[0])
        got = sampler(logits, np.float32(temperature), np.uint32(seed), np.uint32(step))[0]
        assert got == ref.sample_top_k(logits, k, temperature, u), (seed, step, temperature)
    if k == 1:  # one survivor is greedy
        assert got == 3


@needs_gxx
def test_sampler_csim_equals_simulator():
    n, k, lanes = 64, 6, 8
    sampler = token.make_sampler(n, k, lanes)
    logits = randn(11, 1, n, scale=2.0)
    project = sd.llm.blocks.default_schedule(sampler).build("hls")
    for seed, step in [(1, 0), (99, 5), (2**31 + 7, 12)]:
        args = (logits, np.float32(0.8), np.uint32(seed), np.uint32(step))
        np.testing.assert_array_equal(project.csim(*args), sampler(*args))


# ------------------------------------------------------------------ errors at the user's call
@pytest.mark.parametrize("make,match", [
    (lambda: token.make_argmax_stream(100, 7), "not a multiple of lanes"),
    (lambda: token.make_lm_head_q(64, 96, bits=3), "bits must be 4 or 8"),
    (lambda: token.make_head(64, 96, norm="batchnorm"), "unknown norm"),
    (lambda: token.make_head(64, 96, scheme="w2a8"), "unknown scheme"),
    (lambda: token.make_sampler(64, 9, lanes=8), "k=9 survivors"),
    (lambda: token.make_greedy_lm_head(64, 96, "w4a8", lanes=5), "not a multiple of lanes"),
    (lambda: token.make_greedy_lm_head(64, 96, "w4a8", lanes=4, chunk=48), "not a multiple of chunk"),
    (lambda: token.make_greedy_lm_head(64, 96, "fp32", lanes=4, halves=2), "fp32 head walks"),
    (lambda: token.device_head(sd.llm.tiny("llama"), "w2a8"), "unknown scheme"),
])
def test_bad_sizes_are_block_errors_at_the_call(make, match):
    with pytest.raises(BlockError, match=match) as info:
        make()
    assert info.value.loc.file.endswith("test_token_blocks.py")
