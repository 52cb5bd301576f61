"""The paper's Fig. 5: three itensors of one 8x8 f32 tensor and the (b) -> (c) converter."""
import numpy as np
import pytest

import streamdsl as sd
from streamdsl.dfg.itensor import ITensor, ITensorParseError, converter

A = "itensor<2x2xf32, [4,4]*[2,2], (d0,d1)->(d0,d1)>"
B = "itensor<4x2xf32, [4,2]*[2,4], (d0,d1)->(d1,d0)>"
C = "itensor<4x2xf32, [4,2,2]*[2,1,4], (d0,d1,d2)->(d2,d0)>"


@pytest.mark.parametrize("text", [A, B, C])
def test_print_parse_round_trip(text):
    t = ITensor.parse(text)
    assert str(t) == text
    assert ITensor.parse(str(t)) == t
    assert t.tensor_shape == (8, 8)
    assert t.dtype == sd.f32


def test_long_form_parses_to_the_same_type():
    long = "itensor<4x2xf32, iter_space: [4,2]*[2,4], iter_map: (d0,d1)->(d1,d0)>"
    assert ITensor.parse(long) == ITensor.parse(B)


def test_fig5a_row_major_tiles():
    a = ITensor.parse(A)
    assert a.num_tokens == 16
    assert a.offsets() == [(r, c) for r in range(0, 8, 2) for c in range(0, 8, 2)]


def test_fig5b_offsets_as_listed_in_the_paper():
    b = ITensor.parse(B)
    assert list(b.iteration_indices()) == [(0, 0), (0, 4), (2, 0), (2, 4), (4, 0), (4, 4), (6, 0), (6, 4)]
    assert b.offsets() == [(0, 0), (4, 0), (0, 2), (4, 2), (0, 4), (4, 4), (0, 6), (4, 6)]
    assert b.num_tokens == 8


def test_fig5c_replays_each_column_band_twice():
    c = ITensor.parse(C)
    assert c.num_tokens == 16
    assert c.replays() == (1,)
    assert c.offsets()[:8] == [(0, 0), (4, 0), (0, 0), (4, 0), (0, 2), (4, 2), (0, 2), (4, 2)]
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    toks = c.tokens(x)
    assert np.array_equal(toks[0], toks[2]) and np.array_equal(toks[0], x[0:4, 0:2])


def test_converter_b_to_c_needs_an_8x2_buffer_and_delivers_c_tokens():
    cv = converter(ITensor.parse(B), ITensor.parse(C))
    assert cv.buffer_shape == (8, 2)
    assert cv.buffer_bytes == 64
    assert cv.shared == (0,)
    x = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    out = cv.run(x)
    ref = ITensor.parse(C).tokens(x)
    assert len(out) == 16 and all(np.array_equal(o, r) for o, r in zip(out, ref))


def test_unrelated_orders_buffer_the_whole_tensor():
    cv = converter(ITensor.parse(A), ITensor.parse(B))
    assert cv.buffer_shape == (8, 8) and cv.shared == ()
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    assert all(np.array_equal(o, r) for o, r in zip(cv.run(x), ITensor.parse(B).tokens(x)))


def test_equal_types_need_no_converter():
    b = ITensor.parse(B)
    assert converter(b, ITensor.parse(B)).is_identity
    assert not converter(b, ITensor.parse(C)).is_identity


@pytest.mark.parametrize("bad", [
    "itensor<4x2xf32, [4,2]*[2,4]>",
    "itensor<4x2xq32, [4,2]*[2,4], (d0,d1)->(d1,d0)>",
    "itensor<4x2xf32, [4]*[2,4], (d0,d1)->(d1,d0)>",
    "itensor<4x2xf32, [4,2]*[2,4], (d0,d1)->(d1,d7)>",
    "tensor<4x2xf32>",
])
def test_bad_itensor_text_is_a_located_user_error(bad):
    with pytest.raises((ITensorParseError, sd.ShapeError)):
        ITensor.parse(bad)


def test_converter_between_different_tensors_is_refused():
    with pytest.raises(sd.ShapeError):
        converter(ITensor.parse(B), ITensor.parse("itensor<4x2xf32, [2,2]*[2,4], (d0,d1)->(d1,d0)>"))
