"""The kernels the simulator's own tests call run interpreted and compiled, and must agree bit for bit."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

_BOTH = ("test_sim", "test_privatize")


@pytest.fixture(autouse=True)
def _both_modes(request, monkeypatch):
    """In test_sim.py and test_privatize.py, every ``kernel(*args)`` runs in both modes (test_native.both)."""
    if not request.module.__name__.rsplit(".", 1)[-1] in _BOTH or shutil.which("g++") is None:
        yield
        return
    import streamdsl.api as api
    from streamdsl.backend import sim
    from streamdsl.backend.sim import simulate
    from streamdsl.errors import StreamDSLError
    from streamdsl.ir.nodes import written_params

    from .test_native import same

    def checked(kernel, *args, call_loc=None):
        # the compiled run gets copies of the in/out parameters' arrays; the interpreter's run is the caller's
        written = set(written_params(kernel))
        mine = [a.copy() if p.name in written and isinstance(a, np.ndarray) else a
                for p, a in zip(kernel.params, args)] + list(args[len(kernel.params):])
        try:
            want = simulate(kernel, *args, call_loc=call_loc, mode="interp")
        except StreamDSLError as err:
            with pytest.raises(type(err)) as again:
                simulate(kernel, *mine, call_loc=call_loc, mode="compiled")
            assert again.value.loc == err.loc
            raise
        got = simulate(kernel, *mine, call_loc=call_loc, mode="compiled")
        assert same(got, want), f"{kernel.name}: compiled and interpreted results differ (CHUNK={sim.CHUNK})"
        assert all(same(m, a) for m, a in zip(mine, args)), f"{kernel.name}: in/out arguments differ"
        return want

    monkeypatch.setattr(api, "simulate", checked)
    yield
