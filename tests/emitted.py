"""The HLS projects of every example and of the library's tiny layers, built once a session; and the lint rules
the emitter does not meet yet.

Examples: each kernel an ``examples/*.py`` file defines, built as it stands (no schedule); each dataflow
example's ``design()``; the README's gemm schedule; the LLM examples' layer kernels (custom_mlp_llama's
swapped MLP on tiny Llama, llm_demo's SmolLM2-135M configuration).  Library: ``tiny(family)`` of gpt2, llama,
qwen2 and gemma3, fp32 and w4a8, decode and prefill of every attention kind, as ``LLM.build`` renders them.
"""
from __future__ import annotations

import functools

import streamdsl as sd
from streamdsl.library.llm.config import FAMILIES, preset, tiny
from streamdsl.library.llm.models import llama, model
from tests.examples.test_examples import EXAMPLES, load

PREFILL = 4

# The lint rules (``rule`` or ``rule:check``, streamdsl/backend/hls/lint.py) that main's emitter does not meet
# yet, and why.  Every other rule is checked on every HLS project the suite emits (tests/conftest.py sets
# STREAMDSL_LINT); tests/backend/test_lint_projects.py checks that each of these still fails on some example
# or library layer, so one that stops failing must leave this table.
PENDING = {
    "strided-m_axi": "a kernel project reads its m_axi ports in place inside its pipelines (the README gemm's "
                     "B[kk][j] under the schedule below), and a decode layer writes its new K and V rows a word a "
                     "head into the head-major caches (kc[h][pos]: one AXI write each, not a burst)",
}


def lint_env() -> str:
    """The STREAMDSL_LINT value that checks every rule but the pending ones."""
    return ",".join("-" + r for r in PENDING)


example_module = load  # examples/<name>.py, imported once


def readme_gemm():
    """The schedule of the README's "A schedule and an HLS project"."""
    s = sd.schedule(example_module("gemm").gemm)
    i_o, i_i = s.split(s.loop("i"), 8)
    s.reorder(i_o, s.loop("j"), i_i)
    s.pipeline(i_i, ii=1)
    s.partition(s.buffer("A"), dim=2, kind="cyclic", factor=4)
    return s


def _layers(m, name: str) -> dict[str, object]:
    acc = m.build("hls", prefill_len=PREFILL)
    return {f"{name}/{v.name}": v.project for v in acc.variants}


@functools.lru_cache(maxsize=None)
def example_projects() -> dict[str, object]:
    """Example name -> its HLS project (an LLM example: one a layer kernel)."""
    out = {}
    for path in sorted(EXAMPLES.glob("*.py")):
        mod = example_module(path.stem)
        for attr, v in vars(mod).items():
            if isinstance(v, sd.KernelFunction) and getattr(v, "__module__", mod.__name__) == mod.__name__:
                out[f"{path.stem}:{attr}"] = sd.schedule(v).build("hls")
        if hasattr(mod, "design"):
            out[f"{path.stem}:design"] = mod.design().build("hls")
    out["README:gemm"] = readme_gemm().build("hls")
    out.update(_layers(example_module("custom_mlp_llama").build(), "custom_mlp_llama"))
    out.update(_layers(llama(preset("smollm2-135m"), max_len=2 * PREFILL), "llm_demo"))
    return out


@functools.lru_cache(maxsize=None)
def library_projects() -> dict[str, object]:
    """``family-quant/phase_kind`` -> the layer's HLS project."""
    out = {}
    for family in FAMILIES:
        for quant in ("fp32", "w4a8"):
            out.update(_layers(model(tiny(family), max_len=2 * PREFILL, quant=quant), f"{family}-{quant}"))
    return out


def all_projects() -> dict[str, object]:
    return {**example_projects(), **library_projects()}


def converter_design():
    """tests/cli/designs.py's bypass dataflow at its sized depths: a layout converter (rows of 2 to the whole 8 x 8
    tile), whose ping-pong buffer is an hls::stream_of_blocks of two 2,048-bit blocks."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("cli_designs", Path(__file__).parent / "cli" / "designs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.bypass_sized


@functools.lru_cache(maxsize=None)
def explored_w4a8():
    """The explored tiny GPT-2 W4A8 decode layer (the explorer binds its linears' multiplies to DSPs), built:
    (exploration, project)."""
    m = model(tiny("gpt2"), max_len=8, quant="w4a8")
    ex = sd.explore(m, "u55c", t=1)
    return ex, ex.best.schedule.build("hls")
