"""Several designs on one device: every kernel placed on the SLRs together, within UG1393's per-SLR guideline."""
from types import SimpleNamespace

import streamdsl as sd
from streamdsl.boards import RESOURCES
from streamdsl.perf.fit import GUIDELINE, fit_designs
from streamdsl.perf.model import model_design
from tests.emitted import example_module


def _design(nodes, links=()):
    full = {n: {r: res.get(r, 0) for r in RESOURCES} for n, res in nodes.items()}
    return SimpleNamespace(plan=SimpleNamespace(nodes=full, links=list(links)))


def test_a_kernel_past_the_lut_guideline_of_every_slr_does_not_fit():
    slr = sd.board("u55c").slrs[0]["lut"]
    ok = fit_designs({"a": _design({"k": {"lut": int(0.69 * slr)}})})
    assert ok.fits and max(u["lut"] for u in ok.use) == int(0.69 * slr)
    bad = fit_designs({"a": _design({"k": {"lut": int(0.71 * slr)}})})
    assert not bad.fits and "guideline" in bad.problems[0] and "DO NOT FIT" in str(bad)
    assert GUIDELINE["lut"] == 0.70 and GUIDELINE["ff"] == 0.50 and GUIDELINE["bram"] == 0.80


def test_two_designs_share_the_slrs_and_their_crossings_are_counted():
    slr = sd.board("u55c").slrs[0]["dsp"]
    one = {"k": {"dsp": int(0.6 * slr)}}
    f = fit_designs({"decode": _design(one, [("k", "@memory", 100)]), "prefill": _design(one)})
    assert f.fits and sorted(u["dsp"] for u in f.use)[-2:] == [int(0.6 * slr)] * 2  # one a SLR: 1.2 > 0.8
    assert set(f.where) == {"decode/k", "prefill/k"} and f.where["decode/k"] != f.where["prefill/k"]
    assert f.crossing_bytes == (100 if f.where["decode/k"] != sd.board("u55c").memory_slr else 0)
    three = fit_designs({f"d{i}": _design(one) for i in range(4)})  # four kernels of 60 % on three SLRs
    assert not three.fits


def test_the_examples_fit_together_and_use_what_each_uses():
    ffn, att = example_module("ffn_dataflow").design(), example_module("attention_dataflow").design()
    p, q = model_design(ffn, "u55c"), model_design(att, "u55c")
    f = fit_designs({"ffn": p, "attention": q}, "u55c")
    assert f.fits, f
    for r in RESOURCES:
        assert sum(u[r] for u in f.use) == p.total[r] + q.total[r]
