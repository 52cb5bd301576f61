"""A kernel is named after its function's ``__name__``, so factories can name each size.

Two kernels of one factory at different sizes are different kernels; when one
kernel (or dataflow) calls both, and in the C++ they become, they need distinct names.
"""
from __future__ import annotations

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32


def make_scale(n: int, factor: float):
    @sd.kernel
    def scale(X: f32[n]) -> f32[n]:
        Y: f32[n] = 0.0
        for i in range(n):
            Y[i] = X[i] * factor
        return Y

    scale.fn.__name__ = f"scale_{n}"
    return scale


def test_kernel_takes_the_function_name():
    k = make_scale(4, 2.0)
    assert k.ir.name == "scale_4"
    assert str(k.ir).startswith("kernel scale_4(")
    assert sd.parse_ir(str(k.ir)) == k.ir


def test_renamed_kernels_of_two_sizes_can_be_called_together():
    a, b = make_scale(4, 2.0), make_scale(4, 3.0)
    b.fn.__name__ = "scale_4_by_3"

    @sd.kernel
    def both(X: f32[4]) -> f32[4]:
        Y = a(X)
        Z = b(Y)
        return Z

    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(both(x), x * 6)
    assert [c.name for c in both.ir.callees] == ["scale_4", "scale_4_by_3"]
    assert sd.parse_ir(str(both.ir)) == both.ir


def test_same_name_for_different_kernels_is_still_refused():
    a, b = make_scale(4, 2.0), make_scale(4, 3.0)  # both named scale_4

    @sd.kernel
    def clash(X: f32[4]) -> f32[4]:
        Y = a(X)
        Z = b(Y)
        return Z

    with pytest.raises(sd.KernelSyntaxError, match="two different kernels are named 'scale_4'"):
        clash.ir
