"""PolyBench/C 4.2 at the SMALL dataset size: every kernel against NumPy, and ten of them scheduled and
C-simulated.

Sources: the PolyBench/C 4.2 kernels and Allo's port of them (cornell-zhang/allo, examples/polybench/*.py and
examples/polybench/test_polybench.py, sizes from its psize.json "small"); the kernels, references and
inputs are in ``polybench.py`` beside this file.

Three kernels carry a dependence in every loop (floyd-warshall, nussinov, seidel-2d): the simulator runs them
through its compiled path (backend/native.py; floyd-warshall N=180, 5.8 million updates, in under a second), and
their HLS C++ is C-simulated at SMALL too.
"""
from __future__ import annotations

import numpy as np
import polybench as pb
import pytest
from peers_util import needs_gxx

import streamdsl as sd

SEQUENTIAL = ("floyd-warshall", "nussinov", "seidel-2d")  # a dependence in every loop


def _run(k, args):
    """The arrays after ``k`` ran on copies of ``args`` (the kernels update their arguments in place)."""
    got = _copy(args)
    assert k(*got) is None
    return got


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _close(name, got, want):
    b = pb.KERNELS[name]
    for n, (g, w) in enumerate(zip(pb.compared(name, got), pb.compared(name, want))):
        if np.issubdtype(g.dtype, np.integer) or b.rtol == 0:
            np.testing.assert_array_equal(g, w, err_msg=f"{name}: argument {n}")
        else:
            np.testing.assert_allclose(g, w, rtol=b.rtol, atol=b.atol, err_msg=f"{name}: argument {n}")


@pytest.mark.parametrize("name", list(pb.KERNELS))
def test_polybench_on_the_simulator(name):
    """examples/polybench/<name>.py in Allo: the kernel at SMALL size against its NumPy formulation."""
    args = pb.inputs(name)
    _close(name, _run(pb.kernel(name), args), pb.reference(name, args))


@needs_gxx
@pytest.mark.parametrize("name", SEQUENTIAL)
def test_sequential_polybench_small_in_csim(name):
    """The three fully sequential kernels at SMALL size: their HLS C++ C-simulated against NumPy."""
    args = pb.inputs(name)
    got = _copy(args)
    assert sd.schedule(pb.kernel(name)).build("hls").csim(*got) is None
    _close(name, got, pb.reference(name, args))


def test_thirty_kernels():
    assert len(pb.KERNELS) == 30


def _gemm(s):
    s.pipeline(s.loop("j", 1))  # the accumulation's inner loop: C's row read and written once a cycle
    s.unroll(s.loop("j", 0), 2)


def _two_mm(s):
    s.compute_at(s.loop("i", 0), s.loop("i", 1))  # tmp's row i is ready when D's row i needs it
    s.pipeline(s.loop("k", 1))


def _three_mm(s):
    for n in range(3):
        s.pipeline(s.loop("k", n))


def _atax(s):
    s.pipeline(s.loop("j", 0))
    s.pipeline(s.loop("j", 1))


def _bicg(s):
    s.pipeline(s.loop("j"))
    s.partition(s.buffer("s"), dim=1, kind="cyclic", factor=2)


def _mvt(s):
    s.reorder(s.loop("j", 1), s.loop("i", 1))  # A read by rows in both nests; x2's sums keep their order
    s.pipeline(s.loop("i", 1))


def _jacobi_2d(s):
    s.reuse_at(s.buffer("A"), s.loop("i", 0))  # a three-row line buffer of A for the first stencil
    s.pipeline(s.loop("j", 1))


def _heat_3d(s):
    s.pipeline(s.loop("k", 0))
    s.pipeline(s.loop("k", 1))


def _syrk(s):
    s.pipeline(s.loop("j", 1))


def _doitgen(s):
    s.pipeline(s.loop("s"))
    s.split(s.loop("p", 1), 5)


SCHEDULES = {"gemm": _gemm, "2mm": _two_mm, "3mm": _three_mm, "atax": _atax, "bicg": _bicg, "mvt": _mvt,
             "jacobi-2d": _jacobi_2d, "heat-3d": _heat_3d, "syrk": _syrk, "doitgen": _doitgen}


@needs_gxx
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_scheduled_polybench_c_simulates(name):
    """Ten PolyBench kernels, each with a schedule: the schedule keeps the simulator's result bit for bit,
    and the C-simulation of the HLS C++ (cached builds) gives those bits too."""
    k = pb.kernel(name)
    s = sd.schedule(k)
    SCHEDULES[name](s)
    args = pb.inputs(name)
    want = _run(k, args)
    _close(name, want, pb.reference(name, args))
    scheduled = _copy(args)
    s(*scheduled)
    csim = _copy(args)
    assert s.build("hls").csim(*csim) is None
    for g, c, w in zip(scheduled, csim, want):
        np.testing.assert_array_equal(g, w, err_msg=f"{name}: the schedule changed a result")
        np.testing.assert_array_equal(c, w, err_msg=f"{name}: C-simulation differs from the simulator")
