import pytest

import streamdsl as sd
from streamdsl.types import parse_dtype, promote


def test_tensor_type_text():
    assert str(sd.f32[64, 128]) == "f32[64, 128]"
    assert sd.f32[4].shape == (4,)


@pytest.mark.parametrize("a,b,want", [
    (sd.f16, sd.bf16, sd.f32), (sd.f32, sd.f64, sd.f64), (sd.i8, sd.f16, sd.f16),
    (sd.i8, sd.i32, sd.i32), (sd.i8, sd.u8, sd.Int(9)), (sd.u32, sd.i8, sd.Int(33)),
    (sd.u64, sd.i8, sd.i64), (sd.u8, sd.u16, sd.u16),
])
def test_promotion(a, b, want):
    assert promote(a, b) == want
    assert promote(b, a) == want


@pytest.mark.parametrize("name", ["i8", "u1", "u7", "i64", "f16", "bf16", "fx16_8", "ufx8_0"])
def test_dtype_names_round_trip(name):
    assert str(parse_dtype(name)) == name


def test_bad_width_is_a_user_error():
    with pytest.raises(sd.KernelTypeError):
        sd.Int(65)
    with pytest.raises(sd.ShapeError):
        sd.f32[0]


@pytest.mark.parametrize("make,cls,message", [
    (lambda: sd.f32[0], sd.ShapeError, "tensor dimension must be a positive integer, got 0"),
    (lambda: sd.f32[-3], sd.ShapeError, "got -3"),
    (lambda: sd.f32[2.5], sd.ShapeError, "got 2.5"),
    (lambda: sd.f32[4, True], sd.ShapeError, "got True"),
    (lambda: sd.Int(65), sd.KernelTypeError, "between 1 and 64 bits, got 65"),
    (lambda: sd.UInt(0), sd.KernelTypeError, "got 0"),
    (lambda: sd.Int(2.5), sd.KernelTypeError, "must be an integer, got 2.5"),
    (lambda: sd.Fixed(8, 12), sd.KernelTypeError, "int_bits <= width, got (8, 12)"),
    (lambda: sd.Fixed("8", 4), sd.KernelTypeError, "must be an integer, got '8'"),
])
def test_type_constructors_point_at_the_users_line(make, cls, message):
    with pytest.raises(cls, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        make()
    loc = err.value.loc
    assert loc is not None and loc.file == __file__ and "lambda: sd." in open(__file__).read().splitlines()[loc.line - 1]
    assert err.value.hint
