"""The end-to-end model of the emitted project (library/llm/e2e.py).

* Its sums: a decode step and TTFT are the parts they print (device, launches, PCIe, host), each part what the
  host program does (a launch per layer, the syncs of forward(), the head's VOCAB x HIDDEN multiply-adds) at the
  stated costs; the prefill kernel takes the first prefill_len tokens only when the prompt has that many.
* Its PCIe syncs are the generated host's: forward() of a built project's host.cpp syncs what forward_syncs says.
* It prices the design the CLI writes (emitted) and says so only for configs and boards the CLI writes; the
  explored design of llm_perf is never emitted.
* The rows benchmarks/paper_table4.py --json writes have the schema the issue gives.
"""
from __future__ import annotations

import json
import math
import re

import pytest

from streamdsl.perf import fit_designs

from streamdsl.library.llm import facts
from streamdsl.library.llm.cli import model_of
from streamdsl.library.llm.config import LLMError, tiny
from streamdsl.library.llm.e2e import Cost, HostCosts, emittable, end_to_end, explored_end_to_end
from streamdsl.library.llm.hls_build import forward_syncs
from streamdsl.library.llm.models import model
from streamdsl.library.llm.perf import llm_perf

ROW_KEYS = {"model", "in", "out", "design", "decode_tps_end_to_end", "ttft_ms", "latency_ms", "hbm_roofline_tps",
            "fits", "emitted"}


@pytest.fixture(scope="module")
def e2e():
    """family -> the emitted tiny model for [8:4] with a 4-token prefill kernel."""
    return {f: end_to_end(tiny(f), prompt=8, gen=4, quant="w4a8", prefill_len=4) for f in ("llama", "gemma3")}


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("family", ["llama", "gemma3"])
def test_a_decode_step_is_its_parts(e2e, family):
    e = e2e[family]
    c, k = e.config, e.costs
    step = e.decode_step()
    assert close(step.total_s, step.device_s + step.launch_s + step.pcie_s + step.host_s)
    assert close(step.device_s, sum(lp.count * lp.decode.latency_s for lp in e.layers))
    assert sum(lp.count for lp in e.layers) == c.layers == step.launches
    assert close(step.launch_s, c.layers * k.launch_us * 1e-6)
    syncs = forward_syncs(c, 1)
    assert step.syncs == len(syncs) and step.pcie_bytes == sum(b for _, b in syncs)
    assert close(step.pcie_s, sum(k.sync_us * 1e-6 + b / ((k.to_device_mbs if d == "to_device" else k.from_device_mbs)
                                                           * 1e6) for d, b in syncs))
    head = c.vocab * c.hidden + 2 * c.hidden  # RMSNorm: sum of squares, scale
    assert step.host_macs == c.hidden + head
    assert close(step.host_s, step.host_macs * k.host_ns_per_mac * 1e-9)
    assert close(e.tokens_per_s, 1 / step.total_s) and e.tokens_per_s < e.kernel_tokens_per_s


def test_ttft_is_one_prefill_the_rest_one_by_one_and_the_head(e2e):
    e = e2e["llama"]
    want = e.forward(4) + e.forward(1) * 4 + e.head()
    assert e.prefill_tokens == 4
    assert all(close(a, b) for a, b in zip(e.ttft()._values(), want._values()))
    assert close(e.ttft().device_s, sum(lp.count * (lp.prefill.latency_s + 4 * lp.decode.latency_s) for lp in e.layers))
    assert e.ttft().launches == 5 * e.config.layers
    assert close(e.latency_s, e.ttft_s + 3 * e.decode_step().total_s)


def test_a_prompt_shorter_than_the_prefill_kernel_goes_one_token_at_a_time(e2e):
    e = e2e["llama"]
    short = end_to_end(e.config, prompt=3, gen=4, quant="w4a8", prefill_len=4)
    assert short.prefill_tokens == 0
    assert short.ttft().launches == 3 * e.config.layers
    assert close(short.ttft().total_s, (short.forward(1) * 3 + short.head()).total_s)


def test_costs_are_parameters(e2e):
    e = e2e["llama"]
    slow = end_to_end(e.config, prompt=8, gen=4, quant="w4a8", prefill_len=4,
                      costs=HostCosts(launch_us=2 * e.costs.launch_us, host_ns_per_mac=0.0))
    assert close(slow.decode_step().launch_s, 2 * e.decode_step().launch_s)
    assert slow.decode_step().host_s == 0.0 and slow.decode_step().host_macs == e.decode_step().host_macs
    d = HostCosts()
    assert (d.launch_us, d.sync_us, d.to_device_mbs, d.from_device_mbs) == (
        facts.XRT_LAUNCH_U55C.value, facts.BO_SYNC_SMALL.value, facts.PCIE_WRITE_LARGE.value,
        facts.PCIE_READ_LARGE.value)


def test_report_prints_every_assumption_with_its_value_and_source(e2e):
    e = e2e["gemma3"]
    text = e.report()
    for a in e.costs.assumptions():
        assert f"{a.value:g} {a.unit}" in text and a.source in text
    assert facts.XRT_LAUNCH_U55C.source in text and "benchmarks/host_head.py" in text
    assert e.build_command in text and "not counted" in text


def test_forward_syncs_are_the_generated_hosts(tmp_path):
    """forward() of host.cpp: the embedded rows in, per RoPE table its cos and sin rows in, the output back."""
    c = tiny("gemma3")  # two RoPE tables (local and global theta)
    prj = model(c, max_len=8, quant="w4a8").build("hls", output=tmp_path, prefill_len=4)
    host = (prj.output / "host" / "host.cpp").read_text()
    body = host[host.index("std::vector<float> forward("):host.index("int next_token(")]
    nrope = int(re.search(r"constexpr int NROPE = (\d+);", host).group(1))
    rope_loop = body[body.index("for (int r = 0; r < NROPE; r++)"):body.index("int cur = 0;")]
    to_dev, from_dev = body.count("sync(XCL_BO_SYNC_BO_TO_DEVICE)"), body.count("sync(XCL_BO_SYNC_BO_FROM_DEVICE)")
    in_loop = rope_loop.count("sync(XCL_BO_SYNC_BO_TO_DEVICE)")
    syncs = forward_syncs(c, 4)
    assert nrope == 2 and in_loop == 2
    assert [d for d, _ in syncs] == ["to_device"] * (to_dev - in_loop + in_loop * nrope) + ["from_device"] * from_dev
    assert syncs[0][1] == syncs[-1][1] == 4 * c.hidden * 4  # the act buffers: PHASE_T x HIDDEN floats
    assert "const size_t n = size_t(t) * HEAD_DIM;" in rope_loop and all(b == 4 * c.head_dim * 4 for _, b in syncs[1:-1])
    assert forward_syncs(tiny("gpt2"), 1) == [("to_device", tiny("gpt2").hidden * 4),
                                              ("from_device", tiny("gpt2").hidden * 4)]


def test_emitted_is_the_clis_design_and_only_for_configs_it_writes(e2e):
    e = e2e["llama"]
    assert e.emitted and e.design == "emitted" and emittable(tiny("llama"))
    cli = model_of({"family": "llama", "config": "tiny", "quant": "w4a8", "max_len": 12}, None)
    for lp in e.layers:  # the build's: the explored decode layer, the default prefill reading its ports
        dec = cli.explored(lp.kind, "u55c")
        assert lp.decode.schedule.build("hls").files == dec.build("hls").files
        assert lp.prefill.schedule.build("hls").files == cli.schedule(4, lp.kind, decode=dec).build("hls").files
    other = tiny("llama").replace(layers=3)
    assert not emittable(other) and not end_to_end(other, prompt=4, gen=2, prefill_len=2).emitted
    assert not end_to_end(tiny("llama"), "vck190", prompt=4, gen=2, prefill_len=2).emitted  # llm build needs HBM


def test_the_explored_design_is_not_emitted():
    p = llm_perf(tiny("llama"), "u55c", 8, 4)
    e = explored_end_to_end(p)
    assert not e.emitted and e.design == "explored"
    assert close(e.decode_step().device_s, p.decode_s)  # the layers are llm_perf's
    assert e.prefill_len == p.layers[0].chunk


def test_rows_have_the_schema(e2e):
    for e in e2e.values():
        row = json.loads(json.dumps(e.row()))
        assert set(row) == ROW_KEYS
        assert isinstance(row["fits"], bool) and isinstance(row["emitted"], bool)
        assert (row["in"], row["out"]) == (8, 4) and row["model"] == e.name
        assert all(isinstance(row[k], float) and row[k] > 0 for k in ("decode_tps_end_to_end", "ttft_ms", "latency_ms",
                                                                       "hbm_roofline_tps"))
        assert close(row["decode_tps_end_to_end"], e.tokens_per_s) and close(row["ttft_ms"], e.ttft_s * 1e3)
        both = {f"{lp.kind}/{n}": d for lp in e.layers for n, d in (("decode", lp.decode), ("prefill", lp.prefill))}
        assert row["fits"] == (all(lp.prefill is not None for lp in e.layers) and fit_designs(both, e.board).fits)


def test_bad_arguments_are_llm_errors():
    with pytest.raises(LLMError, match="prompt and gen"):
        end_to_end(tiny("llama"), prompt=0)
    with pytest.raises(LLMError, match="unknown quant"):
        end_to_end(tiny("llama"), quant="int3")
    assert Cost(1.0, 2.0, 3.0, 4.0).total_s == 10.0
