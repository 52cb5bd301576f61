"""Single-image 3x3 convolution (valid padding) with bias and a ReLU6.

X is C_IN x H x W, the weights are C_OUT x C_IN x 3 x 3, the output is
C_OUT x (H - 2) x (W - 2).

Run:  python examples/conv2d.py
"""
import argparse

import numpy as np

import streamdsl as sd
from streamdsl import f32

C_IN, H, W, C_OUT = 8, 32, 32, 16
R = 3  # kernel size


def make_conv2d(c_in: int, h: int, w: int, c_out: int):
    """A conv2d + ReLU6 kernel for a c_in x h x w image and c_out filters."""

    @sd.kernel
    def conv2d(X: f32[c_in, h, w], Wt: f32[c_out, c_in, R, R],
               bias: f32[c_out]) -> f32[c_out, h - R + 1, w - R + 1]:
        Y: f32[c_out, h - R + 1, w - R + 1] = 0.0
        for co, y, x in sd.grid(c_out, h - R + 1, w - R + 1):
            acc: f32 = bias[co]
            for ci, ky, kx in sd.grid(c_in, R, R):
                acc += X[ci, y + ky, x + kx] * Wt[co, ci, ky, kx]
            if acc < 0.0:  # ReLU6
                Y[co, y, x] = 0.0
            elif acc > 6.0:
                Y[co, y, x] = 6.0
            else:
                Y[co, y, x] = acc
        return Y

    return conv2d


conv2d = make_conv2d(C_IN, H, W, C_OUT)


def reference(X: np.ndarray, Wt: np.ndarray, bias: np.ndarray) -> np.ndarray:
    r = Wt.shape[-1]
    win = np.lib.stride_tricks.sliding_window_view(X, (r, r), axis=(1, 2))  # c_in, oh, ow, r, r
    y = np.einsum("chwyx,ocyx->ohw", win, Wt) + bias[:, None, None]
    return np.clip(y, 0.0, 6.0).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((C_IN, H, W), dtype=np.float32)
    Wt = rng.standard_normal((C_OUT, C_IN, R, R), dtype=np.float32)
    bias = rng.standard_normal(C_OUT, dtype=np.float32)
    Y = conv2d(X, Wt, bias)
    err = float(np.abs(Y - reference(X, Wt, bias)).max())
    print(f"conv2d {C_IN}x{H}x{W} -> {C_OUT} channels: max |error| vs NumPy = {err:.3e}")
    print(conv2d.ir)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
