"""The ``streamdsl`` command, run as a subprocess the way a user runs it.

Exit codes: 0 success, 1 a user error (the located message on stderr), 2 bad usage.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "streamdsl", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


@pytest.mark.parametrize("sub", [[], ["sim"], ["build"], ["report"], ["explore"], ["llm"], ["llm", "build"], ["llm", "generate"]])
def test_every_subcommand_has_help(sub):
    r = run(*sub, "--help")
    assert r.returncode == 0 and "usage: streamdsl" in r.stdout


def test_sim_runs_a_kernel_on_npy_inputs(tmp_path):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 128)).astype(np.float32), rng.standard_normal((128, 32)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    r = run("sim", EXAMPLES / "gemm.py:gemm", "--inputs", "a.npy", "b.npy", "-o", "c.npy", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "c.npy"), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_build_writes_kernel_and_dataflow_projects(tmp_path):
    r = run("build", EXAMPLES / "gemm.py:gemm", "-o", tmp_path / "k")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "k" / "gemm.cpp").is_file()
    r = run("build", EXAMPLES / "ffn_dataflow.py:ffn", "--board", "u280", "-o", tmp_path / "d")
    assert r.returncode == 0, r.stderr
    assert "#pragma HLS dataflow" in (tmp_path / "d" / "ffn.cpp").read_text()


def test_llm_build_writes_the_accelerator(tmp_path):
    r = run("llm", "build", "gemma3", "--quant", "w8a8", "--max-len", "16", "--prefill-len", "4", "-o", tmp_path / "g")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "g" / "link.cfg").is_file() and (tmp_path / "g" / "project.json").is_file()


def test_user_errors_exit_1_with_the_message(tmp_path):
    r = run("sim", EXAMPLES / "gemm.py:nope")
    assert r.returncode == 1 and "defines no 'nope'" in r.stderr and "it defines: gemm" in r.stderr
    r = run("sim", tmp_path / "missing.py:k")
    assert r.returncode == 1 and "no such file" in r.stderr
    r = run("sim", EXAMPLES / "gemm.py:gemm", "--inputs", "nothere.npy", cwd=tmp_path)
    assert r.returncode == 1 and "no such input file" in r.stderr
    bad = tmp_path / "bad.py"
    bad.write_text("import streamdsl as sd\nfrom streamdsl import f32\n\n@sd.kernel\ndef k(x: f32[4]) -> f32[4]:\n"
                   "    y: f32[4] = 0.0\n    while True:\n        pass\n    return y\n")
    r = run("sim", f"{bad}:k", "--inputs", "1.0")
    assert r.returncode == 1 and f"{bad}:7" in r.stderr  # the kernel's own located error
    assert "Traceback" not in r.stderr


def test_bad_usage_exits_2():
    assert run("sim").returncode == 2
    assert run("frobnicate").returncode == 2
    assert run("llm", "build", "mistral", "-o", "x").returncode == 2


@pytest.mark.slow
def test_llm_generate_says_paris():
    r = run("llm", "generate", "smollm2", "The capital of France is", "--max-new-tokens", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("The capital of France is Paris")


def test_report_and_explore_model_a_dataflow_on_a_board():
    r = run("report", EXAMPLES / "ffn_dataflow.py:ffn", "--board", "u55c")
    assert r.returncode == 0, r.stderr
    assert "design ffn on u55c at 250 MHz" in r.stdout and "resources per SLR" in r.stdout
    r = run("explore", EXAMPLES / "attention_dataflow.py:attention", "--budget", "64")
    assert r.returncode == 0, r.stderr
    assert "default" in r.stdout and "fits" in r.stdout
    r = run("report", EXAMPLES / "gemm.py:gemm")
    assert r.returncode == 1 and "take a dataflow" in r.stderr
    r = run("report", EXAMPLES / "ffn_dataflow.py:ffn", "--board", "zcu104")
    assert r.returncode == 1 and "zcu104" in r.stderr
