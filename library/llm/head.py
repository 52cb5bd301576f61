"""The residual add and greedy token selection (the tied LM head is in :mod:`.linear`)."""
from __future__ import annotations

import streamdsl as sd
from streamdsl import f32, i32

from ._checks import named, sizes


def make_residual_add(t: int, hidden: int):
    """``A + B`` for A, B f32[t, hidden] (the residual stream update)."""
    sizes("residual_add", t=t, hidden=hidden)

    @sd.kernel
    def residual_add(A: f32[t, hidden], B: f32[t, hidden]) -> f32[t, hidden]:
        Y: f32[t, hidden]
        for i, j in sd.grid(t, hidden):
            Y[i, j] = A[i, j] + B[i, j]
        return Y

    return named(residual_add, "residual_add", t, hidden)


def make_argmax(t: int, n: int):
    """Index of the largest entry of each row of X f32[t, n] -> i32[t]; the first one on ties, like torch.argmax.

    Rows are expected to be NaN-free (a NaN never compares greater, so it is skipped).
    """
    sizes("argmax", t=t, n=n)

    @sd.kernel
    def argmax(X: f32[t, n]) -> i32[t]:
        idx: i32[t] = 0
        for i in range(t):
            best: f32 = X[i, 0]
            at: i32 = 0
            for j in range(1, n):
                if X[i, j] > best:
                    best = X[i, j]
                    at = j
            idx[i] = at
        return idx

    return named(argmax, "argmax", t, n)
