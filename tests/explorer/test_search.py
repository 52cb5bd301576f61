"""The Search owns the explorer's caches: a recipe or estimate remembered, equal IRs one object (the identity
rule ``DataflowSchedule.design_key`` depends on), everything forgotten by one ``clear()``."""
from __future__ import annotations

import streamdsl as sd
from streamdsl.dfg.dfschedule import DataflowSchedule
from streamdsl.explorer import Config, Search, apply_recipe, build_design, evaluate
from streamdsl.explorer.evaluation import Seen
from tests.explorer.test_recipes import heads, mac
from tests.perf.test_perf import pipe


def test_a_recipe_given_again_hands_back_the_remembered_ir_and_trace():
    search = Search()
    a, b = sd.schedule(mac), sd.schedule(mac)
    assert search.apply_recipe(a, True, 256) == search.apply_recipe(b, True, 256) == 256
    assert a.ir is b.ir and str(a.trace) == str(b.trace) and len(a.trace.steps) > 3
    assert a.trace.replay(mac).ir == a.ir  # the remembered steps rebuild the remembered IR
    plain = sd.schedule(mac)
    assert apply_recipe(plain, True, 256) == 256 and plain.ir == a.ir and plain.ir is not a.ir
    search.clear()
    c = sd.schedule(mac)
    search.apply_recipe(c, True, 256)
    assert c.ir == a.ir and c.ir is not a.ir  # forgotten: made again


def test_equal_irs_from_two_recipes_are_one_object():
    # heads' outer loops have no larger only child, so the stream loop order changes nothing
    search = Search()
    a, b = sd.schedule(heads), sd.schedule(heads)
    search.apply_recipe(a, True, 8)
    search.apply_recipe(b, False, 8)
    assert a.ir is b.ir and str(a.trace) == str(b.trace)
    c, d = sd.schedule(heads), sd.schedule(heads)
    apply_recipe(c, True, 8)
    apply_recipe(d, False, 8)
    assert c.ir == d.ir and c.ir is not d.ir  # without the search: equal, two objects, two design keys


def test_one_design_built_twice_has_one_key_and_is_modeled_once():
    search = Search()
    cfg = Config(unroll=(("scale", 4),), dsp=("scale",))
    g, h = build_design(pipe, cfg, search=search), build_design(pipe, cfg, search=search)
    assert isinstance(g, DataflowSchedule) and g.design_key() == h.design_key()
    seen = Seen()
    first = evaluate(pipe, cfg, "u55c", None, None, label="first", seen=seen, search=search)
    again = evaluate(pipe, cfg, "u55c", None, None, label="again", seen=seen, search=search)
    assert again.perf is first.perf and again.why.endswith("the same design as 'first'")


def test_estimates_are_remembered_and_a_move_with_nothing_to_move_is_no_variant():
    search = Search()
    e = search.estimate(mac.ir, True, 64, frozenset(), "u55c", 250.0)
    assert e is search.estimate(mac.ir, True, 64, frozenset(), "u55c", 250.0) and e.lanes == 64 and e.cycles > 0
    assert search.estimate(mac.ir, True, 64, frozenset({"split"}), "u55c", 250.0) is None  # no float sum
    assert search.estimate(mac.ir, True, 64, frozenset({"fabric"}), "u55c", 250.0) is None  # no float add
    assert search.estimate(heads.ir, True, 1, frozenset({"split"}), "u55c", 250.0) is not None  # its dot
    assert search.entries() > 0
    search.clear()
    assert search.entries() == 0 and repr(search) == "<Search: 0 recipe(s), 0 estimate(s), 0 interned IR(s)>"


def test_an_exploration_fills_the_search_it_is_given():
    search = Search()
    ex = sd.explore(sd.schedule(pipe), "u55c", 16, search=search)
    assert ex.best.fits and search.entries() > 0
    again = sd.explore(sd.schedule(pipe), "u55c", 16, search=search)  # from the remembered recipes
    assert again.table() == ex.table()
