"""Emitted-code accounting: the C-simulation counts every labelled loop's entries and trips (SD_ENTRY/SD_TRIP,
compiled in only with -DSD_ACCOUNT) and `prj.accounting()` prices the counts with the cost model's rules.  The
emitted designs are priced as the model prices them; a loop the C++ runs more often than the IR says shows."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from streamdsl.backend.hls.accounting import parse_counts
from streamdsl.backend.hls.project import INCLUDE
from tests.emitted import example_module, readme_gemm


def _tampered(prj, fn_file: str, label_re: str):
    """``prj`` with the first loop whose label matches ``label_re`` counting each trip twice (as if its C++
    ran the body twice an iteration): a copy, the project itself untouched."""
    text = prj.files[fn_file]
    m = re.search(rf"SD_TRIP\(({label_re})\);", text)
    assert m, label_re
    files = {**prj.files, fn_file: text.replace(m.group(0), m.group(0) + " " + m.group(0), 1)}
    return dataclasses.replace(prj, files=files, _binary=None), m.group(1)


def _gemm_inputs(s):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(p.type.shape).astype(np.float32) for p in s.ir.params]


def test_the_trips_are_counted_in_csim_only():
    s = readme_gemm()
    prj = s.build("hls")
    assert "-DSD_ACCOUNT" not in "".join(prj.files.values())  # the counters are a C-sim build flag
    assert "SD_ACCOUNT" in (INCLUDE / "streamdsl_rt.h").read_text()
    acc = prj.accounting(*_gemm_inputs(s))
    assert acc.rows and acc.modeled > 0
    assert abs(acc.ratio - 1) < 0.10 and all(abs(r.ratio - 1) < 0.10 for r in acc.rows)
    assert "emitted-code accounting of gemm" in str(acc)


def test_a_kernel_loop_run_twice_as_often_is_priced_higher():
    s = readme_gemm()
    prj = s.build("hls")
    base = prj.accounting(*_gemm_inputs(s))
    bad, label = _tampered(prj, f"{prj.top}.cpp", r"L_i_i\w*")
    acc = bad.accounting(*_gemm_inputs(s))
    assert acc.accounted > 1.5 * base.accounted, (label, base.accounted, acc.accounted)


def test_a_dataflow_task_loop_run_twice_as_often_is_priced_higher():
    ffn = example_module("ffn_dataflow")
    prj = ffn.design().build()
    base = prj.accounting(*ffn.inputs())
    assert abs(base.ratio - 1) < 0.10 and all(abs(r.ratio - 1) < 0.10 for r in base.rows)
    assert {r.kind for r in base.rows} >= {"task", "load", "store"}
    name = prj.emitted["tasks"]["linear_16x32x64"][0] if "linear_16x32x64" in prj.emitted["tasks"] else None
    if name is None:
        pytest.fail(f"the ffn's first linear task is not among {sorted(prj.emitted['tasks'])}")
    counts = parse_counts(prj._run(ffn.inputs(), account=True)[1])
    # the kernel's loop that runs most (its pipeline), not a stream move the emitter adds
    label = max((lb for (fn, lb) in counts if fn == name and not lb.startswith(("L_get", "L_put"))),
                key=lambda lb: counts[name, lb][1])
    bad, _ = _tampered(prj, f"{prj.top}.cpp", re.escape(label))
    acc = bad.accounting(*ffn.inputs())
    row = next(r for r in acc.rows if r.name == "linear_16x32x64")
    assert row.accounted > 1.3 * row.modeled, (label, row)


def test_parse_counts_reads_the_counter_file():
    assert parse_counts("task_a L_j 4 256\nload_x L_load_x 1 16\n\n") == {("task_a", "L_j"): (4, 256),
                                                                          ("load_x", "L_load_x"): (1, 16)}
