"""The lint on what the project emits: every example and every tiny library layer (tests/emitted.py) passes every
rule but the pending ones, each pending rule still fails somewhere, every project the suite builds is linted,
and a dataflow task emits the bind_op pragmas of its loops (issue 21 item 6)."""
from __future__ import annotations

import functools
import re

import pytest

from streamdsl.backend.hls.lint import RULES, CodeLintError, expected, lint_code
from tests.emitted import PENDING, all_projects, converter_design, example_module, explored_w4a8, readme_gemm


def pending(e: CodeLintError) -> bool:
    return e.rule in PENDING or f"{e.rule}:{e.check}" in PENDING


@functools.lru_cache(maxsize=None)
def findings() -> dict[str, list[CodeLintError]]:
    """Project name -> every finding of every rule."""
    projects = {**all_projects(), "explored:gpt2-w4a8/decode_full": explored_w4a8()[1],
                "tests/cli/designs.py:bypass_sized": converter_design().build()}  # a layout converter of 8 x 8
    return {name: lint_code(prj.files, expected(prj), rules=RULES) for name, prj in projects.items()}


def test_every_example_and_library_layer_passes_the_lint():
    names = set(findings())
    assert {"ffn_dataflow:design", "attention_dataflow:design", "residual_dataflow:design", "README:gemm",
            "llm_demo/decode_full", "llm_demo/prefill_full"} <= names
    for family in ("gpt2", "llama", "qwen2", "gemma3"):
        for quant in ("fp32", "w4a8"):
            assert {f"{family}-{quant}/decode_full", f"{family}-{quant}/prefill_full"} <= names
    assert {"gemma3-fp32/decode_sliding", "gemma3-w4a8/prefill_sliding"} <= names
    bad = [f"{name}: {e}" for name, errs in findings().items() for e in errs if not pending(e)]
    assert not bad, "\n\n".join(bad[:10])


@pytest.mark.parametrize("key", sorted(PENDING))
def test_each_pending_rule_still_fails_somewhere(key):
    """A pending rule is one main's emitter breaks; when it stops breaking it, the table must lose it."""
    hits = [name for name, errs in findings().items() for e in errs if e.rule == key or f"{e.rule}:{e.check}" == key]
    assert hits, f"'{key}' passes on every example and layer now: take it out of PENDING in tests/emitted.py"


def test_every_project_the_suite_builds_is_linted(monkeypatch):
    s = readme_gemm()
    monkeypatch.setenv("STREAMDSL_LINT", "1")  # every rule, the pending ones too
    with pytest.raises(CodeLintError) as err:
        s.build("hls")
    assert err.value.rule == "strided-m_axi" and err.value.loc.file == "gemm.cpp"
    monkeypatch.setenv("STREAMDSL_LINT", "-strided-m_axi")
    assert s.build("hls").top == "gemm"


def test_an_explored_w4a8_layer_binds_the_operators_the_exploration_chose():
    """The explorer binds a kernel's narrow multiplies to DSPs (``Config.dsp``) or its float adds to the fabric
    (``Config.fabric``) by bind_op on its pipelined loops; each task's process names and binds every such
    operator in them, the pragma right after the operation it names."""
    ex, prj = explored_w4a8()
    chosen = [(t, "mul", "dsp", r"\*") for t in ex.config.dsp] + [(t, "f(?:add|sub)", "fabric", "[+-]")
                                                                   for t in ex.config.fabric]
    assert chosen
    cpp = prj.source
    for task, op, impl, sign in chosen:
        fn = re.search(rf"\nstatic void task_{task}\(.*?\n}}\n", cpp, re.S).group(0)
        pragmas = re.findall(rf"#pragma HLS bind_op variable=(\w+) op={op} impl={impl}", fn)
        assert pragmas, (task, op)
        for name in pragmas:  # each right after the operation it names
            assert re.search(rf"\n *[\w:<>, ]+ {name} = [^\n]*{sign}[^\n]*;\n *#pragma HLS bind_op variable={name} ",
                             fn), name
    assert [e for e in findings()["explored:gpt2-w4a8/decode_full"] if e.rule == "pragmas" and not pending(e)] == []
