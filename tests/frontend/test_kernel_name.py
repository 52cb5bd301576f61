"""Kernel names: a factory's kernels at several shapes in one design are named after their shapes.

Calls, the IR text and the C++ functions identify kernels by name, so two different kernels of one
factory (``scale`` at n=4 and n=8) called from one kernel or dataflow become ``scale_4`` and
``scale_8``; the user's own name stays in ``user_name`` for messages and task names.
"""
from __future__ import annotations

import numpy as np

import streamdsl as sd
from streamdsl import f32


def make_scale(n: int, factor: float):
    @sd.kernel
    def scale(X: f32[n]) -> f32[n]:
        Y: f32[n] = 0.0
        for i in range(n):
            Y[i] = X[i] * factor
        return Y

    return scale


def test_kernel_takes_the_function_name():
    k = make_scale(4, 2.0)
    assert k.ir.name == "scale"
    assert str(k.ir).startswith("kernel scale(")
    assert sd.parse_ir(str(k.ir)) == k.ir


def test_a_function_renamed_after_decoration_names_its_kernel():
    k = make_scale(4, 2.0)
    k.fn.__name__ = "scale_by_2"
    assert k.ir.name == "scale_by_2"


def test_one_factory_at_two_shapes_is_named_by_shape():
    a, b = make_scale(4, 2.0), make_scale(8, 3.0)

    @sd.kernel
    def both(X: f32[4], Z: f32[8]) -> (f32[4], f32[8]):
        Y = a(X)
        W = b(Z)
        return Y, W

    x, z = np.arange(4, dtype=np.float32), np.arange(8, dtype=np.float32)
    y, w = both(x, z)
    np.testing.assert_array_equal(y, x * 2)
    np.testing.assert_array_equal(w, z * 3)
    assert [c.name for c in both.ir.callees] == ["scale_4", "scale_8"]
    assert [c.attrs.get("user_name") for c in both.ir.callees] == ["scale", "scale"]
    assert sd.parse_ir(str(both.ir)) == both.ir
    src = sd.schedule(both).build("hls").source
    assert "void scale_4(" in src and "void scale_8(" in src
    assert "// scale, the kernel of this signature" in src  # printed with the user's name


def test_same_signature_different_constants_are_numbered():
    a, b = make_scale(4, 2.0), make_scale(4, 3.0)  # both scale(X: f32[4]) -> f32[4]

    @sd.kernel
    def chain(X: f32[4]) -> f32[4]:
        Y = a(X)
        Z = b(Y)
        return Z

    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(chain(x), x * 6)
    assert [c.name for c in chain.ir.callees] == ["scale_1", "scale_2"]


def test_the_same_kernel_called_twice_keeps_its_name():
    a = make_scale(4, 2.0)

    @sd.kernel
    def twice(X: f32[4]) -> f32[4]:
        Y = a(X)
        Z = a(Y)
        return Z

    assert [c.name for c in twice.ir.callees] == ["scale"]


def test_names_are_unique_through_nested_calls():
    a, b = make_scale(4, 2.0), make_scale(8, 2.0)

    @sd.kernel
    def left(X: f32[4]) -> f32[4]:
        return a(X)

    @sd.kernel
    def right(X: f32[8]) -> f32[8]:
        return b(X)

    @sd.kernel
    def top(X: f32[4], Z: f32[8]) -> (f32[4], f32[8]):
        Y = left(X)
        W = right(Z)
        return Y, W

    names = sorted(k.name for k in sd.parse_ir(str(top.ir)).callees for _ in [0])
    assert names == ["left", "right"]
    text = str(top.ir)
    assert "kernel scale_4(" in text and "kernel scale_8(" in text
    y, w = top(np.ones(4, np.float32), np.ones(8, np.float32))
    assert (y == 2).all() and (w == 2).all()
