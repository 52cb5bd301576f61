"""Load-time quantization of one matrix, and the DMA packing of weights into tiles and 512-bit words."""
from __future__ import annotations

import numpy as np
import pytest

from streamdsl.library.llm.config import LLMError
from streamdsl.library.llm.weights import from_words, pack, quantize_matrix, to_words, unpack


def test_pack_example_from_the_docstring():
    w = np.arange(16).reshape(4, 4)
    assert pack(w, (2, 2)).reshape(-1).tolist() == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
    # Column-major over the tile grid: the tile below comes before the tile to the right.
    assert pack(w, (2, 2), order=(1, 0)).reshape(-1).tolist() == [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15]


@pytest.mark.parametrize("shape,tile", [((64, 48), (16, 16)), ((64, 48), (64, 48)), ((64, 48), (1, 48)),
                                        ((12, 20), (3, 5)), ((8, 8), (8, 1))])
@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_pack_unpack_round_trip(shape, tile, order):
    w = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    p = pack(w, tile, order)
    assert p.shape[2:] == tile and p.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(unpack(p, order), w)
    # Each tile is one contiguous burst of the DRAM image; the second burst is the next tile in stream order.
    tr, tc = tile
    rows, cols = shape[0] // tr, shape[1] // tc
    if rows * cols > 1:
        right, below = w[0:tr, tc:2 * tc], w[tr:2 * tr, 0:tc]
        if order == (0, 1):
            expected = right if cols > 1 else below
        else:
            expected = below if rows > 1 else right
        np.testing.assert_array_equal(p.reshape(-1)[tr * tc:2 * tr * tc].reshape(tile), expected)


@pytest.mark.parametrize("dtype,lanes", [(np.float32, 16), (np.int8, 64), (np.float16, 32)])
def test_words_hold_512_bits(dtype, lanes):
    w = (np.random.default_rng(1).standard_normal((32, 40)) * 50).astype(dtype)
    p = pack(w, (8, 8))
    words = to_words(p)
    assert words.shape == (-(-w.size // lanes), lanes) and words.dtype == dtype and words.nbytes % 64 == 0
    np.testing.assert_array_equal(unpack(from_words(words, p.shape)), w)


def test_words_zero_pad_the_last_word():
    w = np.arange(1, 21, dtype=np.float32).reshape(4, 5)  # 20 floats: one full word and 4 lanes
    words = to_words(pack(w, (2, 5)))
    assert words.shape == (2, 16) and not words[1, 4:].any()
    np.testing.assert_array_equal(unpack(from_words(words, (2, 1, 2, 5))), w)


def test_int4_words_pack_two_codes_a_byte():
    q = quantize_matrix(np.random.default_rng(2).standard_normal((16, 64)).astype(np.float32), 4)
    p = pack(q, (16, 16))  # a QuantLinear packs its codes
    words = to_words(p, bits=4)
    assert words.dtype == np.uint8 and words.shape == (16 * 64 // 128, 64)  # 128 int4 lanes a word
    flat = p.reshape(-1)
    lo, hi = int(flat[0]) & 0xF, int(flat[1]) & 0xF
    assert int(words[0, 0]) == lo | (hi << 4)  # low nibble first, two's complement nibbles
    np.testing.assert_array_equal(unpack(from_words(words, p.shape, bits=4)), q.codes)
    with pytest.raises(LLMError, match=r"\[-8, 7\]"):
        to_words(np.array([9], dtype=np.int8), bits=4)
    with pytest.raises(LLMError, match="cannot view float32"):
        to_words(np.zeros(4, np.float32), bits=4)


def test_pack_errors():
    w = np.zeros((12, 20), np.float32)
    with pytest.raises(LLMError, match=r"does not divide the matrix shape \(12, 20\) \(dim 1\)") as err:
        pack(w, (4, 6))
    assert err.value.loc.file == __file__ and "1, 2, 4, 5, 10, 20" in err.value.hint
    with pytest.raises(LLMError, match="permutation"):
        pack(w, (4, 5), order=(0, 0))
    with pytest.raises(LLMError, match="2-d tile"):
        pack(np.zeros(8), (8,))
    with pytest.raises(LLMError, match="4 dims"):
        unpack(w)


@pytest.mark.parametrize("bits,qmax", [(8, 127), (4, 7)])
def test_quantize_matrix_is_symmetric_per_row(bits, qmax):
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((32, 48)) * rng.uniform(0.01, 3, (32, 1))).astype(np.float32)
    w[5] = 0.0
    q = quantize_matrix(w, bits)
    assert q.codes.dtype == np.int8 and q.scale.dtype == np.float32 and q.bits == bits
    assert np.abs(q.codes).max() == qmax  # the largest |w| of each row maps to +-qmax
    np.testing.assert_allclose(q.scale[[0, 1]], np.abs(w[[0, 1]]).max(1) / qmax, rtol=1e-7)
    assert q.scale[5] == 1.0 and not q.codes[5].any()
    err = np.abs(q.dequantize() - w)
    assert (err <= q.scale[:, None] / 2 * (1 + 1e-6)).all()  # round to nearest: at most half a step
    # Symmetric: negating the weights negates the codes.
    np.testing.assert_array_equal(quantize_matrix(-w, bits).codes, -q.codes)


def test_quantize_rounds_half_to_even():
    w = np.array([[127.0, 0.5, 1.5, 2.5, -0.5, -2.5]], np.float32)  # scale exactly 1
    assert quantize_matrix(w, 8).codes.tolist() == [[127, 0, 2, 2, 0, -2]]
    with pytest.raises(LLMError, match="4 or 8 bits"):
        quantize_matrix(w, 3)
