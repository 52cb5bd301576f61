"""The simulator's array privatisation: a per-row accumulator gets a row per iteration only when every
iteration overwrites it before reading it, and the results are bit-identical either way."""
from __future__ import annotations

import numpy as np

import streamdsl as sd
import streamdsl.backend.sim as sim
from streamdsl import f32
from streamdsl.backend.privatize import privatize


@sd.kernel
def rows(X: f32[6, 32], W: f32[16, 32]) -> f32[6, 16]:
    Y: f32[6, 16]
    A: f32[16]
    for i in range(6):
        for o in range(16):
            A[o] = 0.0
        for k, o in sd.grid(32, 16):
            A[o] += X[i, k] * W[o, k]
        for o in range(16):
            Y[i, o] = A[o]
    return Y


@sd.kernel
def running(X: f32[6, 16]) -> f32[6, 16]:
    Y: f32[6, 16]
    A: f32[16] = 0.0
    for i in range(6):
        for o in range(16):
            A[o] += X[i, o]  # carried from row to row: must stay shared
        for o in range(16):
            Y[i, o] = A[o]
    return Y


def _unprivatized(k, *args, monkeypatch):
    monkeypatch.setattr(sim, "privatize", lambda kk: kk)
    return sim.simulate(k.ir, *args)


def test_a_row_accumulator_becomes_a_row_per_iteration(monkeypatch):
    p = privatize(rows.ir)
    a = next(s for s in p.body if getattr(s, "name", None) == "A")
    assert tuple(a.type.shape) == (6, 16)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((6, 32)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)
    got = sim.simulate(rows.ir, x, w)
    assert np.array_equal(got, _unprivatized(rows, x, w, monkeypatch=monkeypatch))
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-5, atol=1e-5)


def test_an_accumulator_carried_between_rows_stays_shared(monkeypatch):
    assert privatize(running.ir) is running.ir
    x = np.random.default_rng(1).standard_normal((6, 16)).astype(np.float32)
    np.testing.assert_allclose(sim.simulate(running.ir, x), np.cumsum(x, axis=0), rtol=1e-5)
