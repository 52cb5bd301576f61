"""``sd.explore``: what it takes (a schedule, a dataflow function, an ``Explorable``), what it returns."""
from __future__ import annotations

import pytest

import streamdsl as sd
from streamdsl.api import explore as api_explore
from streamdsl.explorer import Explorable, ExploreError
from tests.perf.test_perf import pipe


def test_explore_returns_a_design_that_simulates_and_fits():
    ex = sd.explore(sd.schedule(pipe), board="u55c", budget=16)
    best = ex.best
    assert best.fits and best.sim is not None
    best.schedule.simulate()  # the committed design passes the token simulator at its pinned depths
    assert best.cycles <= min(t.perf.cycles for t in ex.tried if t.perf is not None and t.perf.fits)
    assert [t.label for t in ex.tried].count("* " + best.name) == 1  # the table stars the best
    text = ex.report()
    assert "design" in ex.table() and "assumptions:" in text


def test_explore_rejects_bad_input():
    with pytest.raises(sd.StreamDSLError):
        sd.explore(42)
    with pytest.raises(sd.StreamDSLError):
        sd.explore(sd.schedule(pipe), budget=0)


class Pipes:
    """An Explorable that is not a library model: its one design is the pipe schedule."""

    def __init__(self):
        self.asked = []

    def design(self, t: int = 1, kind: str | None = None):
        self.asked.append((t, kind))
        g = sd.schedule(pipe)
        g.fuse(*g.tasks())
        g.size_fifos()
        return g


def test_anything_that_gives_a_design_is_explored_as_it():
    p = Pipes()
    ex = sd.explore(p, "u55c", 16, t=4, kind="main")
    assert p.asked == [(4, "main")] and ex.default is not None and ex.best.fits
    assert ex.tried[0].label == "default" and ex.best.schedule.graph.ir.name == "pipe"
    assert isinstance(p, Explorable) and not isinstance(sd.schedule(pipe), Explorable)


def test_a_library_llm_is_explorable():
    m = sd.llm.model(sd.llm.tiny("gpt2"), max_len=8)
    kind = m.kinds()[0]
    assert isinstance(m, Explorable) and m.design() is m.schedule(1, kind) and m.design(2, kind) is m.schedule(2, kind)


def test_a_design_method_that_gives_no_schedule_is_a_located_error():
    class Wrong:
        def design(self, t=1, kind=None):
            return "a layer"

    with pytest.raises(ExploreError, match="gave a str, not a DataflowSchedule") as err:
        sd.explore(Wrong())
    assert err.value.loc is not None and err.value.loc.file.endswith("test_driver.py")


def test_sd_explore_stays_the_function_once_the_explorer_is_loaded():
    import streamdsl.explorer  # noqa: F401  (a package named explore would replace sd.explore with itself)

    sd.explore(sd.schedule(pipe), "u55c", 4)
    assert sd.explore is api_explore and callable(sd.explore)


def test_the_old_target_keyword_still_works_with_a_warning():
    with pytest.warns(DeprecationWarning, match="explore\\(target=...\\) is now explore\\(design=...\\)"):
        ex = sd.explore(target=sd.schedule(pipe), budget=4)
    assert ex.best.fits


def _holding(lut_share: float):
    """A stand-in for another design on the device: one kernel an SLR holding ``lut_share`` of its guideline LUTs."""
    from types import SimpleNamespace

    from streamdsl.boards import RESOURCES
    from streamdsl.perf import GUIDELINE

    b = sd.board("u55c")
    nodes = {f"k{s}": {**{r: 0 for r in RESOURCES}, "lut": int(lut_share * GUIDELINE["lut"] * sl["lut"])}
             for s, sl in enumerate(b.slrs)}
    return SimpleNamespace(plan=SimpleNamespace(nodes=nodes, links=[]),
                           total={r: sum(n[r] for n in nodes.values()) for r in RESOURCES})


def test_a_design_explored_beside_others_fits_the_device_with_them():
    from streamdsl.perf import fit_designs

    other = _holding(0.95)
    ex = sd.explore(sd.schedule(pipe), "u55c", beside={"other": other})
    assert fit_designs({"other": other, "mine": ex.best}, "u55c").fits
    alone = sd.explore(sd.schedule(pipe), "u55c")
    lut = lambda d: d.total["lut"]  # noqa: E731
    assert lut(ex.best) <= lut(alone.best)  # the room it had was the 5 % the other left of each SLR
    with pytest.raises(ExploreError, match="does not fit beside other"):
        sd.explore(sd.schedule(pipe), "u55c", beside={"other": _holding(1.0)})  # no room at all
