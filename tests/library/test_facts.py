"""library/llm/facts.py: every fact names its source and quotes the figure it holds (or says how it derived it)."""
from __future__ import annotations

import re

from streamdsl.library.llm import facts


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\.?\d*", text)}


def test_every_fact_quotes_its_figure_or_says_how_it_was_derived():
    for f in facts.FACTS:
        assert f.source.startswith("https://") and f.quote and f.unit and f.device, f.what
        quoted = _numbers(f.quote)
        shown = {v for v in (f.value, f.low, f.high) if v is not None}
        assert shown <= quoted or f.derived, f.what
        assert f.value in quoted or f.derived, f.what
        if f.low is not None:
            assert f.low <= f.value <= f.high, f.what


def test_facts_print_as_report_lines():
    line = str(facts.XRT_LAUNCH_U55C)
    assert line.startswith("XRT kernel launch to completion") and "75 us (50 .. 100)" in line
    assert "issues/8687" in line and "(50us~100us)" in line
    assert facts.report().count("\n") == len(facts.FACTS) - 1


def test_u55c_dynamic_region_is_the_sum_of_its_slrs():
    region = facts.u55c_dynamic_region()
    assert region == {"lut": 1163520, "ff": 2327040, "bram": 3504, "uram": 960, "dsp": 8496}
    assert all(region[r] <= d for r, d in zip(("lut", "ff", "bram", "uram", "dsp"), facts.U55C_DEVICE))
