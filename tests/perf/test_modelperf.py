"""ModelPerf: the one test the report and the roofline use for "a whole model's performance"."""
from __future__ import annotations

import pytest

from streamdsl.boards import board
from streamdsl.htmlreport import _is_llm_perf as report_takes
from streamdsl.perf import ModelPerf
from streamdsl.viz.roofline import _is_llm_perf as roofline_takes, llm_roofline


class Stack(ModelPerf):
    """Two 1 ms decode layers on a U55C, with nothing else the library's LLMPerf knows."""

    board, prompt, gen, layers = board("u55c"), 8, 8, []
    name, clock_mhz, ttft_s, decode_s, tokens_per_s, latency_s = "stack", 250.0, 0.004, 0.002, 500.0, 0.02
    hbm_roofline_tps, fp32_roofline_tps, int8_roofline_tps = 2000.0, 1000.0, None

    def ops_per_token(self) -> int:
        return 10**9

    def bytes_per_token(self) -> dict[str, int]:
        return {"weights": 2**27, "kv": 2**20, "act": 2**10}

    def assumptions(self) -> list[str]:
        return []

    def gaps(self) -> list[str]:
        return []

    def report(self) -> str:
        return "stack"


def test_the_report_and_the_roofline_take_a_model_perf_and_nothing_that_only_looks_like_one():
    s = Stack()
    assert report_takes(s) and roofline_takes(s)
    lookalike = type("Duck", (), {a: getattr(Stack, a) for a in dir(Stack) if not a.startswith("_")})()
    assert not report_takes(lookalike) and not roofline_takes(lookalike)
    r = llm_roofline(s)  # reads only ModelPerf's members
    assert r.title.startswith("stack decode on u55c: 500.0 tokens/s") and len(r.compute) == 1


def test_a_model_perf_must_give_every_member():
    class Half(ModelPerf):
        name = "half"

    with pytest.raises(TypeError, match="abstract"):
        Half()


def test_the_library_llm_perf_is_a_model_perf():
    from streamdsl.library.llm.perf import LLMPerf

    assert issubclass(LLMPerf, ModelPerf) and not LLMPerf.__abstractmethods__
