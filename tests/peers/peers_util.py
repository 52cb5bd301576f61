"""Shared helpers of the ports of Allo's tests (cornell-zhang/allo): kernels written as an Allo user writes
them, checked against NumPy on the simulator and, where marked, in g++ C-simulation (cached builds)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="C-simulation needs g++")


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def ints(shape, lo: int = 0, hi: int = 10, seed: int = 0, dtype=np.int32) -> np.ndarray:
    return rng(seed).integers(lo, hi, size=shape).astype(dtype)


def floats(shape, seed: int = 0, dtype=np.float32) -> np.ndarray:
    return rng(seed).random(shape).astype(dtype)
