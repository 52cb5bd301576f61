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


@sd.kernel
def per_head(X: f32[3, 32], W: f32[8, 32]) -> f32[2, 3, 4]:
    Q: f32[2, 3, 4]
    A: f32[4]
    for h, i in sd.grid(2, 3):  # a perfect nest: A gets a copy per (h, i)
        for e in range(4):
            s: f32 = 0.0
            A[e] = s
        for k, e in sd.grid(32, 4):
            A[e] += X[i, k] * W[h * 4 + e, k]
        for e in range(4):
            Q[h, i, e] = A[e]
    return Q


def test_a_perfect_nest_privatises_along_all_its_loops(monkeypatch):
    a = next(s for s in privatize(per_head.ir).body if getattr(s, "name", None) == "A")
    assert tuple(a.type.shape) == (2, 3, 4)
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((3, 32)).astype(np.float32), rng.standard_normal((8, 32)).astype(np.float32)
    got = sim.simulate(per_head.ir, x, w)
    assert np.array_equal(got, _unprivatized(per_head, x, w, monkeypatch=monkeypatch))
    np.testing.assert_allclose(got, (x @ w.T).reshape(3, 2, 4).transpose(1, 0, 2), rtol=1e-5, atol=1e-5)
