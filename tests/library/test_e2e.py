"""The end-to-end model of the one-kernel generate design (library/llm/e2e.py).

* Its sums: a decode step is its gather, its layers and its head; TTFT and the call are one launch, the ids'
  syncs and the steps the kernel runs (the prefill kernel over the first prefill_len tokens only when the prompt
  has that many, the head once for the prompt); each part at the stated costs.
* Its parts move it: a slower head lowers tokens/s by exactly its time; a head too big for the board makes the
  design not fit; the launch and sync costs are parameters.
* It prices the design the CLI writes (emitted: the explored decode layer, the default prefill, the device head)
  and says so only for configs and boards the CLI writes; the explored design of llm_perf is never emitted.
* The rows benchmarks/paper_table4.py --json writes have the schema the issue gives; the HTML report shows the
  same figures and every assumption.
"""
from __future__ import annotations

import dataclasses

import json
import math

import pytest
from markupsafe import escape

from streamdsl.dfg.channels import DMA_LATENCY
from streamdsl.htmlreport import report_html
from streamdsl.perf import fit_designs, model_design
from streamdsl.perf.model import SlrPlan

from streamdsl.library.llm import e2e as e2e_module
from streamdsl.library.llm import facts
from streamdsl.library.llm.cli import model_of
from streamdsl.library.llm.config import LLMError, tiny
from streamdsl.library.llm.e2e import Cost, HostCosts, emittable, end_to_end, explored_end_to_end, gather_cycles
from streamdsl.library.llm.perf import llm_perf
from streamdsl.library.llm.token import device_head, device_head_beside

ROW_KEYS = {"model", "in", "out", "design", "decode_tps_end_to_end", "ttft_ms", "latency_ms", "hbm_roofline_tps",
            "fits", "emitted", "prefill_len", "build"}


@pytest.fixture(scope="module")
def e2e():
    """family -> the emitted tiny model for [8:4] with a 4-token prefill kernel."""
    return {f: end_to_end(tiny(f), prompt=8, gen=4, quant="w4a8", prefill_len=4) for f in ("llama", "gpt2")}


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def same(a: Cost, b: Cost) -> bool:
    return all(close(x, y) for x, y in zip(a._values(), b._values()))


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_a_decode_step_is_its_gather_its_layers_and_its_head(e2e, family):
    e = e2e[family]
    c, clock = e.config, e.board.clock_mhz * 1e6
    step = e.decode_step()
    assert close(step.total_s, step.gather_s + step.layers_s + step.head_s) and close(step.device_s, step.total_s)
    assert close(step.gather_s, (DMA_LATENCY + c.hidden * 4 // 64) / clock)  # one row: latency + its words
    assert close(step.layers_s, sum(lp.count * lp.decode.latency_s for lp in e.layers))
    assert sum(lp.count for lp in e.layers) == c.layers
    assert close(step.head_s, e.head.latency_s) and step.heads == 1
    assert step.launches == step.syncs == 0 and step.launch_s == step.pcie_s == 0.0  # all on the card
    assert close(e.tokens_per_s, 1 / step.total_s) and e.tokens_per_s < e.layer_tokens_per_s


def test_the_gather_reads_rows_one_after_another():
    assert e2e_module.DMA_LATENCY == DMA_LATENCY  # the timing model's HBM latency, the same figure
    assert gather_cycles(1024, 1) == DMA_LATENCY + 64  # GPT-2 Medium: 64 words a row
    assert gather_cycles(1024, 3) == 3 * gather_cycles(1024, 1)
    assert gather_cycles(896, 1) == DMA_LATENCY + 56


def test_a_generate_call_is_one_launch_and_the_hosts_three_syncs(e2e):
    """The host's syncs (device.call_syncs, checked against host.cpp in test_models_hls): the prompt in, the
    out buffer's -1s in, the ids back; TTFT counts the first id back instead of all of them."""
    e = e2e["llama"]
    k = e.costs
    call, first = e.call(), e.ttft()
    assert call.launches == first.launches == 1 and close(call.launch_s, k.launch_us * 1e-6)
    assert call.syncs == first.syncs == 3
    assert call.pcie_bytes == 64 + 64 + 64 and first.pcie_bytes == 64 + 64 + 64  # 8, 12 and 4 ids: a word each
    assert close(call.pcie_s, 2 * k.sync_s("to_device", 64) + k.sync_s("from_device", 64))
    assert close(k.sync_s("to_device", 64), k.sync_us * 1e-6 + 64 / (k.to_device_mbs * 1e6))
    long = end_to_end(e.config, prompt=40, gen=4, quant="w4a8", prefill_len=4)
    assert long.ttft().pcie_bytes == 3 * 64 + 3 * 64 + 64  # 40 ids in three words, the out buffer of 44 in three
    assert close(e.latency_s, call.total_s)
    syncs = e.syncs()
    assert same(call, e.launch() + syncs[0] + syncs[1] + e.prompt_steps() + e.decode_step() * 3 + syncs[2])
    assert call.heads == 4  # one token from the prompt, three decode steps
    plan = e.plan
    assert (plan.prefill_steps, plan.prompt_decode_steps, plan.decode_steps, plan.head_calls) == (1, 4, 3, 4)


def test_ttft_is_one_prefill_the_rest_one_by_one_and_the_head_once(e2e):
    e = e2e["llama"]
    assert e.prefill_tokens == 4
    prompt = e.prompt_steps()
    want = e.step(4, head=False) + e.step(1, head=False) * 4
    assert close(prompt.layers_s, want.layers_s)
    assert close(prompt.layers_s, sum(lp.count * (lp.prefill.latency_s + 4 * lp.decode.latency_s) for lp in e.layers))
    assert close(prompt.gather_s, gather_cycles(e.config.hidden, 8) / (e.board.clock_mhz * 1e6))
    assert prompt.heads == 1 and close(prompt.head_s, e.head.latency_s)
    syncs = e.syncs()
    assert same(e.ttft(), e.launch() + syncs[0] + syncs[1] + prompt + e.ids_sync("from_device", 1))


def test_a_prompt_shorter_than_the_prefill_kernel_goes_one_token_at_a_time(e2e):
    e = e2e["llama"]
    short = dataclasses.replace(e, prompt=3)
    assert short.prefill_tokens == 0
    assert close(short.prompt_steps().layers_s, 3 * short.decode_step().layers_s)
    assert short.prompt_steps().heads == 1
    with pytest.raises(LLMError, match="no 4-token layer kernel"):
        dataclasses.replace(e, layers=[dataclasses.replace(lp, prefill=None) for lp in e.layers]).step(4)


def test_a_slower_head_lowers_tokens_per_s_by_its_time(e2e):
    e = e2e["gpt2"]
    slow = dataclasses.replace(e, head=dataclasses.replace(e.head, cycles=e.head.cycles + 25_000))
    extra = 25_000 / (e.board.clock_mhz * 1e6)
    assert slow.tokens_per_s < e.tokens_per_s
    assert close(1 / slow.tokens_per_s, 1 / e.tokens_per_s + extra)
    assert close(slow.ttft_s, e.ttft_s + extra) and close(slow.latency_s, e.latency_s + e.gen * extra)


def test_fits_is_every_variant_and_the_head_together(e2e):
    e = e2e["gpt2"]
    designs = e.designs()
    assert set(designs) == {f"{p}_{lp.kind}" for lp in e.layers for p in ("decode", "prefill")} | {"head"}
    assert e.fits == fit_designs(designs, e.board).fits
    def scaled(d, f):  # the design with every node's resources times f
        nodes = {n: {r: int(f * v) for r, v in res.items()} for n, res in d.plan.nodes.items()}
        return dataclasses.replace(d, plan=SlrPlan(nodes, d.plan.links, e.board, False))

    small = dataclasses.replace(e, layers=[dataclasses.replace(lp, decode=scaled(lp.decode, 0.01),
                                                               prefill=scaled(lp.prefill, 0.01)) for lp in e.layers],
                                head=scaled(e.head, 0.01))
    assert small.fits  # the check is not always False
    assert not dataclasses.replace(small, head=scaled(e.head, 100)).fits  # the head made to overflow the board
    assert not dataclasses.replace(e, layers=[dataclasses.replace(lp, prefill=None) for lp in e.layers]).fits


def test_costs_are_parameters(e2e):
    e = e2e["llama"]
    slow = dataclasses.replace(e, costs=HostCosts(launch_us=2 * e.costs.launch_us, sync_us=0.0))
    assert close(slow.call().launch_s, 2 * e.call().launch_s)
    assert close(slow.call().pcie_s, e.call().pcie_s - 3 * e.costs.sync_us * 1e-6)  # three syncs a call
    assert close(slow.tokens_per_s, e.tokens_per_s)  # no launch or sync a token
    d = HostCosts()
    assert (d.launch_us, d.sync_us, d.to_device_mbs, d.from_device_mbs) == (
        facts.XRT_LAUNCH_U55C.value, facts.BO_SYNC_SMALL.value, facts.PCIE_WRITE_LARGE.value,
        facts.PCIE_READ_LARGE.value)


def test_report_and_html_print_every_assumption_and_the_same_figures(e2e):
    e = e2e["gpt2"]
    text = e.report()
    for a in e.costs.assumptions():
        assert f"{a.value:g} {a.unit}" in text and a.source in text
    assert facts.XRT_LAUNCH_U55C.source in text and "DMA_LATENCY" in text
    assert e.build_command in text and "not counted" in text and "--config tiny" in e.build_command
    page = report_html(e)
    for a in e.assumptions():
        assert str(escape(a)) in page  # as the template escapes it
    for figure in (f"{e.ttft_s * 1e3:.3f} ms", f"{e.latency_s * 1e3:.2f} ms", f"{e.decode_step().total_s * 1e3:.3f}"):
        assert figure in text and figure in page
    assert "End to end" in page and "head" in page


def test_the_head_is_the_device_head_widened_beside_the_layers(e2e):
    """The head the model prices is the build's: the device head widened into the room its layer variants leave
    (both phases here), at least as fast as the device head the layers were explored beside.  (The full-size
    builds, whose heads widen, fit: test_models_hls.)"""
    for name in ("gpt2", "llama"):
        e = e2e[name]
        beside = {f"{p}_{lp.kind}": d for lp in e.layers for p, d in (("decode", lp.decode), ("prefill", lp.prefill))}
        g, p = device_head_beside(e.config, "w4a8", e.board, beside)
        assert p.cycles == e.head.cycles
        assert e.head.schedule.build("hls").files == g.build("hls").files
        assert e.head.cycles <= model_design(device_head(e.config, "w4a8", e.board), e.board).cycles


def test_emitted_is_the_clis_design_and_only_for_configs_it_writes(e2e):
    e = e2e["llama"]
    assert e.emitted and e.design == "emitted" and emittable(tiny("llama"))
    cli = model_of({"family": "llama", "config": "tiny", "quant": "w4a8", "max_len": 12}, None)
    for lp in e.layers:  # the build's: the explored decode layer, the default prefill reading its ports
        dec = cli.decode_layer(lp.kind, "explored", "u55c")
        assert lp.decode.schedule.build("hls").files == dec.build("hls").files
        assert lp.prefill.schedule.build("hls").files == cli.schedule(4, lp.kind, decode=dec).build("hls").files
    other = tiny("llama").replace(layers=3)
    assert not emittable(other) and not end_to_end(other, prompt=4, gen=2, prefill_len=2).emitted
    assert not end_to_end(tiny("llama"), "vck190", prompt=4, gen=2, prefill_len=2).emitted  # llm build needs HBM


def test_the_explored_design_is_not_emitted_and_its_exploration_is_reused():
    p = llm_perf(tiny("llama"), "u55c", 8, 4)
    e = explored_end_to_end(p)
    assert not e.emitted and e.design == "explored"
    assert close(e.decode_step().layers_s, p.decode_s)  # the layers are llm_perf's
    assert e.prefill_len == p.layers[0].chunk
    again = end_to_end(tiny("llama"), prompt=8, gen=4, explored={lp.kind: lp.exploration for lp in p.layers})
    assert [lp.decode.schedule for lp in again.layers] == [lp.exploration.best.schedule for lp in p.layers]


def test_rows_have_the_schema(e2e):
    for e in e2e.values():
        row = json.loads(json.dumps(e.row()))
        assert set(row) == ROW_KEYS
        assert isinstance(row["fits"], bool) and isinstance(row["emitted"], bool)
        assert (row["in"], row["out"]) == (8, 4) and row["model"] == e.name
        assert all(isinstance(row[k], float) and row[k] > 0 for k in ("decode_tps_end_to_end", "ttft_ms", "latency_ms",
                                                                       "hbm_roofline_tps"))
        assert close(row["decode_tps_end_to_end"], e.tokens_per_s) and close(row["ttft_ms"], e.ttft_s * 1e3)
        assert close(row["latency_ms"], e.call().total_s * 1e3)
        assert row["fits"] == fit_designs(e.designs(), e.board).fits


def test_without_a_prefill_layer_the_prompt_goes_through_the_decode_layers():
    """--prefill-len 1: no prefill layer in the kernel; the prompt is one decode step a token, and fits asks about
    the decode layers and the head only."""
    e = end_to_end(tiny("llama"), prompt=8, gen=4, quant="w4a8", prefill_len=1)
    assert e.prefill_len == 1 and e.plan.prefill_steps == 0 and e.plan.prompt_decode_steps == 8
    assert sorted(e.designs()) == ["decode_full_attention", "head"] and "--prefill-len 1" in e.build_command
    assert close(e.prompt_steps().layers_s, 8 * e.step(1, head=False).layers_s)
    assert e.fits == fit_designs(e.designs(), e.board).fits and e.row()["prefill_len"] == 1


def test_bad_arguments_are_llm_errors():
    with pytest.raises(LLMError, match="prompt and gen"):
        end_to_end(tiny("llama"), prompt=0)
    with pytest.raises(LLMError, match="unknown quant"):
        end_to_end(tiny("llama"), quant="int3")
    assert Cost(1.0, 2.0, 3.0).total_s == 6.0


def test_the_build_keeps_a_prefill_layer_only_when_the_model_says_it_is_faster_a_token():
    """build(prefill_len=None) (the CLI's default): a 16-token prefill layer when its layers take a prompt token in
    fewer modeled cycles than the decode layers, else none (the prompt through the decode layers); the end-to-end
    model prices that same choice; an explicit prefill_len is kept."""
    from streamdsl.library.llm.hls_build import AUTO_PREFILL, auto_prefill
    from streamdsl.library.llm.models import model

    m = model(tiny("llama"), max_len=32, quant="w4a8")
    prj = m.build("hls", weights=False)
    b = prj.variants[0].project.board
    dec = sum(m.layer_kinds.count(k) * model_design(m.decode_layer(k, "explored", b), b).cycles for k in m.kinds())
    pre = sum(m.layer_kinds.count(k) * model_design(m.schedule(AUTO_PREFILL, k, decode=m.decode_layer(k, "explored", b)),
                                                    b).cycles for k in m.kinds())
    assert prj.prefill_len == (AUTO_PREFILL if pre < AUTO_PREFILL * dec else 1)
    assert (prj.prefill_len, prj.prefill_why) == auto_prefill(m, b) and f"{dec:,}" in prj.prefill_why
    assert prj.prefill_why in repr(prj)
    assert end_to_end(tiny("llama"), prompt=16, gen=16, quant="w4a8").prefill_len == prj.prefill_len
    assert m.build("hls", weights=False, prefill_len=4).prefill_len == 4


def test_a_decode_layer_that_fits_nowhere_beside_the_rest_is_explored_alone(monkeypatch):
    """When nothing fits beside the head (here a stand-in that fills every SLR), the build still gets the fastest
    decode layer that fits alone, and prj.fit() is the one to say the kernel does not fit."""
    from types import SimpleNamespace

    import streamdsl as sd
    from streamdsl.boards import RESOURCES
    from streamdsl.library.llm.models import model
    from streamdsl.perf import GUIDELINE

    b = sd.board("u55c")
    nodes = {f"k{s}": {**{r: 0 for r in RESOURCES}, "lut": int(GUIDELINE["lut"] * sl["lut"])} for s, sl in enumerate(b.slrs)}
    full = SimpleNamespace(plan=SimpleNamespace(nodes=nodes, links=[]),
                           total={r: sum(n[r] for n in nodes.values()) for r in RESOURCES})
    m = model(tiny("llama"), max_len=16, quant="w4a8")
    monkeypatch.setattr(m, "neighbours", lambda kind, board: {"beside": {"full": full}})
    ex = m.exploration(m.kinds()[0], b)
    assert ex.best.fits and not fit_designs({"full": full, "layer": ex.best}, b).fits
