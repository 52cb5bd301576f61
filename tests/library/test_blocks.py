"""Transformer blocks of streamdsl.library.llm against independent NumPy math.

Every block runs in the reference simulator on seeded random inputs with
non-trivial weights (random norm weights, biases, GQA head maps) and is compared
with the whole-array NumPy math of :mod:`streamdsl.library.llm.ref` run on float64
copies of the inputs (``ref64``), so that only the kernel rounds in float32.
Floats: rtol 1e-5, atol 1e-6; integers and the quantised linears: exact.  A
representative subset is also C-simulated with g++ under
``blocks.default_schedule``: bit-identical to the simulator where the kernel
uses only + - * / max sqrt (IEEE-exact in both), within 2e-6 where it calls
exp, tanh or sigmoid (libm and NumPy may differ in the last ulp).
"""
from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import streamdsl as sd
from streamdsl.library.llm import blocks, ref
from streamdsl.library.llm.blocks import BlockError

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="C-simulation needs g++")


def rng(seed=0):
    return np.random.default_rng(seed)


def randn(r, *shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(np.float32)


def weight(r, n_out, n_in):
    return randn(r, n_out, n_in, scale=1.0 / math.sqrt(n_in))


class _Float64:
    """``ref``'s functions on float64 copies of their float inputs, rounded to float32 at the end."""

    def __getattr__(self, name):
        fn = getattr(ref, name)

        def call(*args, **kwargs):
            wide = [np.asarray(a, np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args]
            out = fn(*wide, **kwargs)
            return tuple(o.astype(np.float32) for o in out) if isinstance(out, tuple) else out.astype(np.float32)

        return call


ref64 = _Float64()


def close(got, want, rtol=1e-5, atol=1e-6):
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ embeddings
@pytest.mark.parametrize("t,vocab,hidden", [(1, 5, 3), (4, 11, 8)])
def test_embedding(t, vocab, hidden):
    r = rng(1)
    ids = r.integers(0, vocab, t).astype(np.int32)
    E = randn(r, vocab, hidden)
    got = blocks.make_embedding(t, vocab, hidden)(ids, E)
    np.testing.assert_array_equal(got, ref.embedding(ids, E))  # a gather is exact


def test_gemma_embedding_scales_by_sqrt_hidden():
    r = rng(2)
    t, vocab, hidden = 3, 7, 16
    ids = np.array([6, 0, 6], np.int32)
    E = randn(r, vocab, hidden)
    got = blocks.make_gemma_embedding(t, vocab, hidden)(ids, E)
    close(got, ref64.gemma_embedding(ids, E), rtol=1e-7, atol=0)
    np.testing.assert_allclose(got, E[ids] * 4.0, rtol=1e-7)  # sqrt(16) = 4


@pytest.mark.parametrize("past_len", [0, 3])
def test_gpt2_embedding_adds_positions_after_past(past_len):
    r = rng(3)
    t, vocab, hidden, max_pos = 4, 9, 6, 8
    ids = r.integers(0, vocab, t).astype(np.int32)
    wte, wpe = randn(r, vocab, hidden), randn(r, max_pos, hidden)
    got = blocks.make_gpt2_embedding(t, vocab, hidden, max_pos)(ids, wte, wpe, past_len)
    close(got, ref64.gpt2_embedding(ids, wte, wpe, past_len), rtol=1e-7, atol=0)


def test_embedding_id_out_of_range_is_a_located_error():
    k = blocks.make_embedding(2, 4, 3)
    with pytest.raises(sd.ShapeError, match="out of bounds"):
        k(np.array([0, 4], np.int32), np.zeros((4, 3), np.float32))


# ----------------------------------------------------------------------- norms
@pytest.mark.parametrize("t,n", [(1, 2), (3, 16), (2, 37)])
def test_layernorm(t, n):
    r = rng(4)
    x = randn(r, t, n, scale=3.0) + 1.5
    w, b = randn(r, n) + 1.0, randn(r, n, scale=0.5)
    close(blocks.make_layernorm(t, n, eps=1e-5)(x, w, b), ref64.layernorm(x, w, b, 1e-5))


def test_layernorm_eps_is_inside_the_sqrt():
    # a constant row has zero variance: y = b exactly when eps sits inside the sqrt (no division by zero)
    x = np.full((1, 4), 2.5, np.float32)
    w, b = np.ones(4, np.float32), np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(blocks.make_layernorm(1, 4)(x, w, b), b[None])


@pytest.mark.parametrize("unit_offset", [False, True])
@pytest.mark.parametrize("t,n", [(1, 3), (4, 16)])
def test_rmsnorm(t, n, unit_offset):
    r = rng(5)
    x = randn(r, t, n, scale=2.0)
    w = randn(r, n, scale=0.5) + (0.0 if unit_offset else 1.0)
    got = blocks.make_rmsnorm(t, n, eps=1e-6, unit_offset=unit_offset)(x, w)
    close(got, ref64.rmsnorm(x, w, 1e-6, unit_offset))


def test_gemma_rmsnorm_zero_weight_is_identity_scale():
    x = randn(rng(6), 2, 8)
    got = blocks.make_rmsnorm(2, 8, unit_offset=True)(x, np.zeros(8, np.float32))
    close(got, ref64.rmsnorm(x, np.ones(8, np.float32)))


@pytest.mark.parametrize("unit_offset", [True, False])
def test_head_rmsnorm_per_head(unit_offset):
    r = rng(7)
    h, t, d = 3, 2, 8
    x = randn(r, h, t, d, scale=2.0)
    w = randn(r, d, scale=0.5)
    got = blocks.make_head_rmsnorm(h, t, d, eps=1e-6, unit_offset=unit_offset)(x, w)
    close(got, ref64.rmsnorm(x, w, 1e-6, unit_offset))


# ---------------------------------------------------------------------- linear
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("t,n_in,n_out", [(1, 1, 1), (3, 16, 5), (2, 7, 12)])
def test_linear(t, n_in, n_out, bias):
    r = rng(8)
    x, W, b = randn(r, t, n_in), weight(r, n_out, n_in), randn(r, n_out, scale=0.5)
    k = blocks.make_linear(t, n_in, n_out, bias=bias)
    got = k(x, W, b) if bias else k(x, W)
    close(got, ref64.linear(x, W, b if bias else None))


def test_lm_head_is_tied_embedding():
    r = rng(9)
    h, E = randn(r, 2, 8), randn(r, 13, 8)
    close(blocks.make_lm_head(2, 8, 13)(h, E), ref64.linear(h, E))
    close(blocks.make_lm_head(2, 8, 13)(h, E), (h.astype(np.float64) @ E.T.astype(np.float64)).astype(np.float32))


def test_qkv_fused_splits_gpt2_style():
    r = rng(10)
    t, hidden, heads = 3, 8, 2
    x, W, b = randn(r, t, hidden), weight(r, 3 * hidden, hidden), randn(r, 3 * hidden, scale=0.5)
    got = blocks.make_qkv_fused(t, hidden, heads)(x, W, b)
    want = ref64.qkv_fused(x, W, b, heads)
    for g, w in zip(got, want):
        assert g.shape == (heads, t, hidden // heads)
        close(g, w)
    # head 1 of k is columns hidden + 4 .. hidden + 7 of the fused output
    full = (x.astype(np.float64) @ W.T.astype(np.float64) + b)
    close(got[1][1], full[:, hidden + 4: hidden + 8].astype(np.float32))


@pytest.mark.parametrize("bias", [False, True])
def test_qkv_separate_gqa(bias):
    r = rng(11)
    t, hidden, hq, hkv, d = 2, 8, 4, 2, 3
    x = randn(r, t, hidden)
    Wq, Wk, Wv = weight(r, hq * d, hidden), weight(r, hkv * d, hidden), weight(r, hkv * d, hidden)
    bq, bk, bv = randn(r, hq * d), randn(r, hkv * d), randn(r, hkv * d)
    k = blocks.make_qkv(t, hidden, hq, hkv, d, bias=bias)
    got = k(x, Wq, Wk, Wv, bq, bk, bv) if bias else k(x, Wq, Wk, Wv)
    want = ref64.qkv(x, Wq, Wk, Wv, hq, hkv, *((bq, bk, bv) if bias else ()))
    for g, w, heads in zip(got, want, (hq, hkv, hkv)):
        assert g.shape == (heads, t, d)
        close(g, w)


# ------------------------------------------------------------------- quantised
def test_quantize_weights_scheme():
    r = rng(12)
    W = randn(r, 5, 9)
    W[2] = 0.0
    for bits, q in ((8, 127), (4, 7)):
        Wq, sw = blocks.quantize_weights(W, bits)
        assert Wq.dtype == np.int8 and sw.dtype == np.float32
        assert np.abs(Wq).max() == q and Wq.min() >= -q
        np.testing.assert_array_equal(np.abs(Wq).max(axis=1), [q, q, 0, q, q])  # the max maps to +-q
        assert sw[2] == 1.0
        # dequantised weights are within half a step of the originals
        assert np.all(np.abs(Wq * sw[:, None] - W) <= sw[:, None] / 2 * (1 + 1e-6))


def test_quantize_rows_exact():
    r = rng(13)
    t, n = 4, 10
    x = randn(r, t, n, scale=3.0)
    x[1] = 0.0
    x[2, 3] = -np.abs(x[2]).max() * 1.5  # the row max is negative
    x[3, :4] = [0.5, 1.5, 2.5, -0.5]     # exact ties for rint after scaling by 127 / 127
    x[3, 4] = 127.0                       # so sx[3] = 1 and ties stay ties
    xq, sx = blocks.make_quantize_rows(t, n)(x)
    want_q, want_s = ref.quantize_rows(x)
    assert xq.dtype == np.int8 and sx.dtype == np.float32
    np.testing.assert_array_equal(xq, want_q)
    np.testing.assert_array_equal(sx, want_s)
    np.testing.assert_array_equal(xq[3, :4], [0, 2, 2, 0])  # half to even
    assert xq[2, 3] == -127 and np.all(xq[1] == 0) and sx[1] == 1.0


@pytest.mark.parametrize("wbits", [8, 4])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("t,n_in,n_out", [(1, 3, 2), (3, 24, 7)])
def test_quantized_linear_bit_exact(t, n_in, n_out, bias, wbits):
    r = rng(14)
    x, W, b = randn(r, t, n_in, scale=2.0), weight(r, n_out, n_in), randn(r, n_out)
    Wq, sw = blocks.quantize_weights(W, wbits)
    make = blocks.make_linear_w8a8 if wbits == 8 else blocks.make_linear_w4a8
    k = make(t, n_in, n_out, bias=bias)
    got = k(x, Wq, sw, b) if bias else k(x, Wq, sw)
    want = ref.linear_quant(x, Wq, sw, b if bias else None)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    # and the quantisation error against the float linear is what int8/int4 allow
    err = np.abs(got - ref64.linear(x, W, b if bias else None)).max()
    assert err < (0.05 if wbits == 8 else 0.6) * np.abs(ref64.linear(x, W)).max()


def test_w4a8_weights_outside_4_bits_are_refused():
    # an sd.Int(4) parameter holds -8..7: 9 in the int8 array is not an int4 weight, and the call says so
    k = blocks.make_linear_w4a8(1, 1, 1)
    x = np.array([[1.0]], np.float32)
    one = np.ones(1, np.float32)
    with pytest.raises(sd.KernelTypeError, match="argument 'Wq' of .* holds 9, which i4 cannot hold"):
        k(x, np.array([[9]], np.int8), one)
    got = k(x, np.array([[-7]], np.int8), one)
    np.testing.assert_array_equal(got, ref.linear_quant(x, np.array([[-7]], np.int8), one))
    np.testing.assert_allclose(got, [[-7.0]], rtol=1e-6)



def _packed(k) -> bool:
    return "alloc P: i48" in str(k.ir)  # the pairs' 48-bit DSP accumulators


@pytest.mark.parametrize("bias", [False, True])
def test_w4a8_packs_two_outputs_a_dsp_and_stays_bit_exact_at_the_extremes(bias):
    # the largest reduction the packed low field holds, every weight at -8 or 7 and every activation at +-127:
    # the sums reach +-n_in * 127 * 8, the edge of the low field, and unpack exactly
    from streamdsl.library.llm.quant import PACK_MAX_IN, pack_shift

    n_in, n_out = PACK_MAX_IN, 6
    assert PACK_MAX_IN * 127 * 8 < 2 ** (pack_shift(PACK_MAX_IN) - 1) and pack_shift(PACK_MAX_IN) <= 22
    k = blocks.make_linear_w4a8(2, n_in, n_out, bias=bias)
    assert _packed(k)
    Wq = np.full((n_out, n_in), -8, np.int8)
    Wq[1::2] = 7
    x = np.full((2, n_in), 3.0, np.float32)
    x[1, :] = -1.5
    x[1, 0] = 1.5
    sw, b = np.full(n_out, 0.25, np.float32), np.arange(n_out, dtype=np.float32)
    args = (x, Wq, sw, b) if bias else (x, Wq, sw)
    want = ref.linear_quant(x, Wq, sw, b if bias else None)
    acc = ref.int_matmul(ref.quantize_rows(x)[0], Wq)
    assert acc.min() == -n_in * 127 * 8 and acc.max() == (n_in - 2) * 127 * 8  # at the low field's edges
    np.testing.assert_array_equal(k(*args), want)
    if shutil.which("g++"):
        np.testing.assert_array_equal(sd.schedule(k).build("hls").csim(*args), want)


def test_w4a8_packs_only_what_the_low_field_and_pairs_allow():
    from streamdsl.library.llm.quant import PACK_MAX_IN

    assert _packed(blocks.make_linear_w4a8(1, 8, 4))
    assert not _packed(blocks.make_linear_w4a8(1, 8, 5))                # an odd output count has no pairs
    assert not _packed(blocks.make_linear_w4a8(1, PACK_MAX_IN + 1, 4))  # the low field would overflow
    assert not _packed(blocks.make_linear_w8a8(1, 8, 4))                # int8 x int8 products do not pack


# ------------------------------------------------------------------------ rope
@pytest.mark.parametrize("heads,t,d", [(1, 1, 2), (3, 5, 8)])
def test_rope(heads, t, d):
    r = rng(15)
    x = randn(r, heads, t, d)
    cos, sin = blocks.rope_tables(np.arange(7, 7 + t), blocks.rope_inv_freq(d, 10000.0))
    close(blocks.make_rope(heads, t, d)(x, cos, sin), ref64.rope(x, cos, sin))


def test_rope_is_a_rotation_of_pairs_i_and_i_plus_half():
    x = randn(rng(16), 1, 1, 4)
    a = 0.3
    cos = np.full((1, 4), np.cos(a), np.float32)
    sin = np.full((1, 4), np.sin(a), np.float32)
    y = blocks.make_rope(1, 1, 4)(x, cos, sin)[0, 0].astype(np.float64)
    x0 = x[0, 0].astype(np.float64)
    for i in range(2):  # (x_i, x_{i+2}) rotated by a
        np.testing.assert_allclose(y[i], x0[i] * np.cos(a) - x0[i + 2] * np.sin(a), rtol=1e-6)
        np.testing.assert_allclose(y[i + 2], x0[i + 2] * np.cos(a) + x0[i] * np.sin(a), rtol=1e-6)


def test_rope_inv_freq_default_and_llama3():
    d, theta = 64, 500000.0
    want = 1.0 / theta ** (np.arange(0, d, 2) / d)
    inv = blocks.rope_inv_freq(d, theta)
    assert inv.dtype == np.float32 and inv.shape == (d // 2,)
    np.testing.assert_allclose(inv, want, rtol=1e-6)
    # Llama-3 scaling, written out per frequency in float64
    sc = blocks.LLAMA3_SCALING
    got = blocks.rope_inv_freq(d, theta, llama3=sc)
    for i, f in enumerate(want):
        wl = 2 * math.pi / f
        if wl < sc.original_max_positions / sc.high_freq_factor:
            expect = f
        elif wl > sc.original_max_positions / sc.low_freq_factor:
            expect = f / sc.factor
        else:
            s = (sc.original_max_positions / wl - sc.low_freq_factor) / (sc.high_freq_factor - sc.low_freq_factor)
            expect = (1 - s) * f / sc.factor + s * f
        np.testing.assert_allclose(got[i], expect, rtol=2e-6)
    assert got[0] == inv[0] and got[-1] < inv[-1] / 31  # high frequencies kept, low ones divided by 32


def test_rope_tables():
    inv = blocks.rope_inv_freq(4, 100.0)
    cos, sin = blocks.rope_tables([0, 3], inv, attention_scaling=0.5)
    assert cos.shape == sin.shape == (2, 4) and cos.dtype == np.float32
    ang = np.array([0, 3])[:, None] * np.array([1.0, 0.1, 1.0, 0.1])[None]
    np.testing.assert_allclose(cos, 0.5 * np.cos(ang), rtol=1e-6)
    np.testing.assert_allclose(sin, 0.5 * np.sin(ang), rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------- attention
def qkv_inputs(r, hq, hkv, t, d):
    return randn(r, hq, t, d), randn(r, hkv, t, d), randn(r, hkv, t, d)


@pytest.mark.parametrize("hq,hkv,t,d", [(1, 1, 1, 2), (4, 2, 5, 4), (3, 1, 4, 2), (2, 2, 3, 3)])
def test_attention_prefill_causal_gqa(hq, hkv, t, d):
    r = rng(17)
    q, k, v = qkv_inputs(r, hq, hkv, t, d)
    got = blocks.make_attention_prefill(hq, hkv, t, d)(q, k, v)
    assert got.shape == (t, hq * d)
    close(got, ref64.attention_prefill(q, k, v))


def test_attention_prefill_first_row_copies_first_value():
    r = rng(18)
    q, k, v = qkv_inputs(r, 2, 1, 3, 2)
    got = blocks.make_attention_prefill(2, 1, 3, 2)(q, k, v)
    np.testing.assert_allclose(got[0], np.concatenate([v[0, 0], v[0, 0]]), rtol=1e-6)  # position 0 sees only itself


@pytest.mark.parametrize("window", [1, 2, 3, 10])
def test_attention_prefill_sliding_window_and_scale(window):
    r = rng(19)
    q, k, v = qkv_inputs(r, 4, 2, 6, 4)
    got = blocks.make_attention_prefill(4, 2, 6, 4, scale=0.3, window=window)(q, k, v)
    close(got, ref64.attention_prefill(q, k, v, scale=0.3, window=window))
    if window == 1:  # each query sees only itself
        close(got, ref.merge_heads(np.repeat(v, 2, axis=0)))


def new_rows(kc, vc, n_valid, t):
    """The keys and values of the t new tokens (cache rows n_valid - t ..), and the caches with junk in their place:
    attention reads the new rows from its own inputs, not from the cache."""
    kn, vn = (np.ascontiguousarray(c[:, n_valid - t:n_valid]) for c in (kc, vc))
    stale = [c.copy() for c in (kc, vc)]
    for c in stale:
        c[:, n_valid - t:n_valid] = -7e2
    return stale + [kn, vn]


@pytest.mark.parametrize("n_valid", [1, 4, 7])
def test_attention_decode_against_cache(n_valid):
    r = rng(20)
    hq, hkv, s, d = 6, 2, 7, 4
    q = randn(r, hq, 1, d)
    kc, vc = randn(r, hkv, s, d), randn(r, hkv, s, d)
    kc[:, n_valid:] = 1e3  # stale slots past n_valid must not be read
    got = blocks.make_attention_decode(hq, hkv, s, d)(q, *new_rows(kc, vc, n_valid, 1), n_valid)
    assert got.shape == (1, hq * d)
    close(got, ref64.attention_decode(q, kc, vc, n_valid))


def test_attention_decode_reads_what_an_append_leaves_bit_for_bit():
    # the new rows in place of the cache's: the same bits as attention over the cache kv_append returns
    r = rng(24)
    hq, hkv, s, d, t = 4, 2, 8, 4, 3
    q, kn, vn = randn(r, hq, t, d), randn(r, hkv, t, d), randn(r, hkv, t, d)
    kc, vc = randn(r, hkv, s, d), randn(r, hkv, s, d)
    attend = blocks.make_attention_decode(hq, hkv, s, d, t=t)
    for pos in (0, 2, s - t):
        kc2, vc2 = (blocks.make_kv_append(hkv, s, d, t)(c, x, pos) for c, x in ((kc, kn), (vc, vn)))
        got = attend(q, kc, vc, kn, vn, pos + t)
        np.testing.assert_array_equal(got, attend(q, kc2, vc2, kn, vn, pos + t))
        close(got, ref64.attention_decode(q, kc2, vc2, pos + t))


def test_attention_decode_chunk_equals_prefill_rows():
    # t new queries at the end of a full cache are the last t rows of prefill attention
    r = rng(21)
    hq, hkv, s, d, t = 2, 1, 6, 4, 2
    q, k, v = qkv_inputs(r, hq, hkv, s, d)
    got = blocks.make_attention_decode(hq, hkv, s, d, t=t)(np.ascontiguousarray(q[:, s - t:]), *new_rows(k, v, s, t), s)
    close(got, ref64.attention_prefill(q, k, v)[s - t:])


def test_attention_decode_window():
    r = rng(22)
    hq, hkv, s, d = 2, 1, 8, 2
    q, kc, vc = randn(r, hq, 1, d), randn(r, hkv, s, d), randn(r, hkv, s, d)
    got = blocks.make_attention_decode(hq, hkv, s, d, window=3, scale=0.5)(q, *new_rows(kc, vc, 6, 1), 6)
    close(got, ref64.attention_decode(q, kc, vc, 6, scale=0.5, window=3))


def test_kv_append():
    r = rng(23)
    c, x = randn(r, 2, 5, 3), randn(r, 2, 2, 3)
    got = blocks.make_kv_append(2, 5, 3, t=2)(c, x, 3)
    np.testing.assert_array_equal(got, ref.kv_append(c, x, 3))
    np.testing.assert_array_equal(got[:, :3], c[:, :3])


@pytest.mark.parametrize("t,n", [(1, 1), (3, 9)])
def test_softmax(t, n):
    x = randn(rng(24), t, n, scale=5.0) + 80.0  # exp(80) overflows nothing once the max is subtracted
    got = blocks.make_softmax(t, n)(x)
    close(got, ref64.softmax(x))


# ------------------------------------------------------------------------- mlp
def test_gelu_and_silu():
    x = randn(rng(25), 3, 11, scale=3.0)
    close(blocks.make_gelu(3, 11)(x), ref64.gelu(x))
    close(blocks.make_silu(3, 11)(x), ref64.silu(x))
    # the tanh GELU is within 1e-3 of the erf GELU
    from scipy.special import erf
    exact = 0.5 * x * (1 + erf(x / np.sqrt(2)))
    np.testing.assert_allclose(blocks.make_gelu(3, 11)(x), exact, atol=1e-3)


@pytest.mark.parametrize("kind", ["swiglu", "geglu"])
def test_gated_mlp(kind):
    r = rng(26)
    t, hidden, inter = 3, 8, 12
    x = randn(r, t, hidden, scale=2.0)
    Wg, Wu, Wd = weight(r, inter, hidden), weight(r, inter, hidden), weight(r, hidden, inter)
    make = blocks.make_swiglu_mlp if kind == "swiglu" else blocks.make_geglu_mlp
    want = ref64.swiglu_mlp if kind == "swiglu" else ref64.geglu_mlp
    close(make(t, hidden, inter)(x, Wg, Wu, Wd), want(x, Wg, Wu, Wd))


def test_gpt2_mlp():
    r = rng(27)
    t, hidden, inter = 2, 6, 24
    x = randn(r, t, hidden)
    W_fc, b_fc, W_proj, b_proj = weight(r, inter, hidden), randn(r, inter), weight(r, hidden, inter), randn(r, hidden)
    close(blocks.make_gpt2_mlp(t, hidden, inter)(x, W_fc, b_fc, W_proj, b_proj),
          ref64.gpt2_mlp(x, W_fc, b_fc, W_proj, b_proj))


def test_residual_add():
    r = rng(28)
    a, b = randn(r, 2, 5), randn(r, 2, 5)
    np.testing.assert_array_equal(blocks.make_residual_add(2, 5)(a, b), ref.residual_add(a, b))


def test_argmax_first_index_on_ties():
    r = rng(29)
    x = randn(r, 4, 9)
    x[1, [2, 6]] = 10.0         # a tie: the first index wins
    x[2] = -1.0                 # all equal: index 0
    x[3, 8] = 50.0              # the last column
    got = blocks.make_argmax(4, 9)(x)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref.argmax(x))
    np.testing.assert_array_equal(got[1:], [2, 0, 8])


# --------------------------------------------------------------- size checking
@pytest.mark.parametrize("call,message", [
    (lambda: blocks.make_qkv_fused(2, 10, 3), "hidden=10 is not a multiple of heads=3"),
    (lambda: blocks.make_qkv(2, 8, 3, 2, 4), "q_heads=3 is not a multiple of kv_heads=2"),
    (lambda: blocks.make_attention_prefill(4, 3, 2, 2), "q_heads=4 is not a multiple of kv_heads=3"),
    (lambda: blocks.make_attention_decode(2, 1, 2, 2, t=3), "do not fit in a cache"),
    (lambda: blocks.make_attention_prefill(2, 1, 4, 2, window=0), "window must be a positive integer"),
    (lambda: blocks.make_rope(1, 2, 5), "head_dim=5 must be even"),
    (lambda: blocks.rope_inv_freq(8, 1e4, llama3={"factor": 32.0}), "llama3 must be a RopeScaling, got dict"),
    (lambda: blocks.make_linear(0, 2, 2), "t must be a positive integer"),
    (lambda: blocks.make_rmsnorm(2, 2.5), "n must be a positive integer"),
    (lambda: blocks.make_layernorm(2, 4, eps=-1.0), "eps must be a positive number"),
    (lambda: blocks.make_linear_w8a8(1, 200_000, 2), "overflow the int32 accumulator"),
    (lambda: blocks.quantize_weights(np.zeros((2, 2), np.float32), bits=3), "bits must be 4 or 8"),
    (lambda: blocks.default_schedule(blocks.make_gelu(1, 2), unroll=0), "unroll must be a positive integer"),
])
def test_bad_sizes_are_located_block_errors(call, message):
    with pytest.raises(BlockError) as info:
        call()
    err = info.value
    assert isinstance(err, sd.StreamDSLError)
    assert message in err.message
    assert err.hint
    assert err.loc is not None and err.loc.file == __file__  # the caller's line, not the library's


def test_blocks_of_two_sizes_are_two_kernels():
    a, b = blocks.make_linear(2, 4, 8), blocks.make_linear(2, 8, 4)
    assert a.ir.name == "linear_2x4x8" and b.ir.name == "linear_2x8x4"

    @sd.kernel
    def two_linears(X: sd.f32[2, 4], W1: sd.f32[8, 4], b1: sd.f32[8], W2: sd.f32[4, 8],
                    b2: sd.f32[4]) -> sd.f32[2, 4]:
        H = a(X, W1, b1)
        Y = b(H, W2, b2)
        return Y

    r = rng(30)
    X, W1, b1, W2, b2 = randn(r, 2, 4), weight(r, 8, 4), randn(r, 8), weight(r, 4, 8), randn(r, 4)
    close(two_linears(X, W1, b1, W2, b2), ref64.linear(ref64.linear(X, W1, b1), W2, b2))
    assert sd.parse_ir(str(two_linears.ir)) == two_linears.ir


# ------------------------------------------------------------------ C-simulation
def _csim_cases():
    r = rng(31)
    t, n, hq, hkv, d, s = 2, 8, 4, 2, 4, 5
    x = randn(r, t, n, scale=2.0)
    w, b = randn(r, n) + 1.0, randn(r, n)
    W, bo = weight(r, 6, n), randn(r, 6)
    W8, sw8 = blocks.quantize_weights(W, 8)
    W4, sw4 = blocks.quantize_weights(W, 4)
    q, k, v = qkv_inputs(r, hq, hkv, 3, d)
    qd, kc, vc = randn(r, hq, 1, d), randn(r, hkv, s, d), randn(r, hkv, s, d)
    cos, sin = blocks.rope_tables([3, 4], blocks.rope_inv_freq(d, 1e4))
    Wg, Wu, Wd = weight(r, 12, n), weight(r, 12, n), weight(r, n, 12)
    # name -> (kernel, args, exact, schedule options)
    return {
        "rmsnorm": (blocks.make_rmsnorm(t, n), (x, w), True, {}),
        "rmsnorm_gemma": (blocks.make_rmsnorm(t, n, unit_offset=True), (x, w), True, {}),
        "layernorm": (blocks.make_layernorm(t, n), (x, w, b), True, {}),
        "linear": (blocks.make_linear(t, n, 6), (x, W, bo), True, {}),
        "linear_unroll4": (blocks.make_linear(t, n, 6), (x, W, bo), True, {"unroll": 4}),
        "w8a8": (blocks.make_linear_w8a8(t, n, 6, bias=True), (x, W8, sw8, bo), True, {}),
        "w4a8": (blocks.make_linear_w4a8(t, n, 6), (x, W4, sw4), True, {}),
        "rope": (blocks.make_rope(hq, t, d), (randn(r, hq, t, d), cos, sin), True, {}),
        "embedding_gpt2": (blocks.make_gpt2_embedding(t, 5, n, 6),
                           (np.array([4, 1], np.int32), randn(r, 5, n), randn(r, 6, n), 3), True, {}),
        "attention_prefill_gqa": (blocks.make_attention_prefill(hq, hkv, 3, d, window=2), (q, k, v), False, {}),
        "attention_decode": (blocks.make_attention_decode(hq, hkv, s, d), (qd, *new_rows(kc, vc, 4, 1), 4), False, {}),
        "swiglu": (blocks.make_swiglu_mlp(t, n, 12), (x, Wg, Wu, Wd), False, {}),
        "gelu": (blocks.make_gelu(t, n), (x,), False, {}),
        "argmax": (blocks.make_argmax(t, n), (x,), True, {}),
    }


CSIM = _csim_cases()


@needs_gxx
@pytest.mark.parametrize("name", sorted(CSIM))
def test_default_schedule_csim_matches_simulator(name):
    kernel, args, exact, opts = CSIM[name]
    want = kernel(*args)
    s = blocks.default_schedule(kernel, **opts)
    assert any("pipeline" in dict(lp_attrs) for lp_attrs in _loop_attrs(s.ir.body))
    np.testing.assert_array_equal(_simulate(s.ir, args), want)  # scheduling keeps every result bit
    got = s.build("hls").csim(*args)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    assert s.trace.replay(kernel).ir == s.ir


def _simulate(ir, args):
    from streamdsl.backend.sim import simulate

    return simulate(ir, *args)


def _loop_attrs(stmts):
    from streamdsl.ir.nodes import For, walk

    return [n.attrs for st in stmts for n in walk(st) if isinstance(n, For)]
