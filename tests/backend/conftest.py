"""The kernels the simulator's own tests call run interpreted and compiled, and must agree bit for bit."""
from __future__ import annotations

import shutil

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

    from .test_native import same

    def checked(kernel, *args, call_loc=None):
        try:
            want = simulate(kernel, *args, call_loc=call_loc, mode="interp")
        except StreamDSLError as err:
            with pytest.raises(type(err)) as again:
                simulate(kernel, *args, call_loc=call_loc, mode="compiled")
            assert again.value.loc == err.loc
            raise
        got = simulate(kernel, *args, call_loc=call_loc, mode="compiled")
        assert same(got, want), f"{kernel.name}: compiled and interpreted results differ (CHUNK={sim.CHUNK})"
        return want

    monkeypatch.setattr(api, "simulate", checked)
    yield
