"""The ``streamdsl`` command, run as a subprocess the way a user runs it.

Exit codes: 0 success, 1 a user error (the located message on stderr, no
traceback), 2 bad usage (argparse's usage on stderr).  Built folders are made
once per module (``built``) and reused; tests that change a folder copy it.
The designs named as FILE.py:NAME are examples/ and tests/cli/designs.py.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DESIGNS = ROOT / "tests" / "cli" / "designs.py"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def cli(*args) -> Result:
    """``streamdsl ARGS`` in this process (a subprocess costs a second): for the many error cases of one command."""
    from streamdsl.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as e:  # argparse: --help, bad usage
            rc = e.code
    return Result(rc, out.getvalue(), err.getvalue())


def run(*args, cwd=None, env=None):
    base = {k: v for k, v in os.environ.items() if k not in ("STREAMDSL_PROGRESS", "STREAMDSL_QUIET", "STREAMDSL_TRACEBACK")}
    return subprocess.run([sys.executable, "-m", "streamdsl", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600, env={**base, **(env or {})})


def user_error(r, *needles):
    """Exit 1, each needle in the message, and no Python traceback."""
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Folders `streamdsl build` wrote: a kernel, a dataflow, a dataflow whose bypass FIFO is too shallow, a tiny LLM."""
    root = tmp_path_factory.mktemp("built")
    for name, target, extra in (("k", EXAMPLES / "gemm.py:gemm", ()),
                                ("d", EXAMPLES / "ffn_dataflow.py:ffn", ("--board", "u280")),
                                ("dl", f"{DESIGNS}:bypass_small", ())):
        r = run("build", target, "-o", root / name, *extra)
        assert r.returncode == 0, r.stderr
        assert f"streamdsl csim {root / name}" in r.stdout
    r = run("llm", "build", "llama", "--max-len", "8", "--prefill-len", "1", "-o", root / "llm")
    assert r.returncode == 0, r.stderr
    return root


@pytest.mark.parametrize("sub", [[], ["sim"], ["build"], ["csim"], ["report"], ["explore"], ["llm"], ["llm", "build"],
                                 ["llm", "generate"]])
def test_every_subcommand_has_help(sub):
    r = cli(*sub, "--help")
    assert r.returncode == 0 and r.stdout.startswith(f"usage: streamdsl {' '.join(sub)}".rstrip())
    assert "-q, --quiet" in r.stdout


def test_help_and_bad_usage_from_the_shell():
    r = run("csim", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: streamdsl csim") and "DIR" in r.stdout
    for args in (["sim"], ["frobnicate"]):
        r = run(*args)
        assert r.returncode == 2 and "usage: streamdsl" in r.stderr and r.stdout == "", (args, r.stderr)


@pytest.mark.parametrize("args", [[], ["llm"], ["llm", "build", "mistral", "-o", "x"], ["build", "f.py:k"], ["csim"],
                                  ["explore", "f.py:g", "--budget", "0"], ["sim", "f.py:k", "--bogus"],
                                  ["csim", "x", "--rtol", "tight"], ["llm", "generate", "smollm2"]])
def test_bad_usage_exits_2_with_the_usage(args):
    r = cli(*args)
    assert r.returncode == 2, (args, r.stderr)
    assert "usage: streamdsl" in r.stderr and r.stdout == ""


# ------------------------------------------------------------------------------------------- sim
def test_sim_runs_a_kernel_and_a_dataflow_on_npy_inputs(tmp_path):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 128)).astype(np.float32), rng.standard_normal((128, 32)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    r = run("sim", EXAMPLES / "gemm.py:gemm", "--inputs", "a.npy", "b.npy", "-o", "c.npy", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "result 0: (64, 32) float32 -> c.npy" in r.stdout
    np.testing.assert_allclose(np.load(tmp_path / "c.npy"), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = run("sim", f"{DESIGNS}:bypass", "--inputs", "x.npy", "-o", "y.npy", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    relu = np.maximum(x, 0)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), relu + relu)


def test_inputs_of_the_wrong_shape_dtype_or_count_point_at_the_parameter(tmp_path):
    x, narrow, ints, junk = (tmp_path / f for f in ("x.npy", "narrow.npy", "ints.npy", "junk.npy"))
    np.save(x, np.ones((8, 8), np.float32))
    np.save(narrow, np.ones((8, 4), np.float32))
    np.save(ints, np.ones((8, 8), np.int32))
    junk.write_text("not numpy")
    decl = f"{DESIGNS}:{line_of(DESIGNS, 'def add(')}:23"  # the Z: f32[N, N] parameter
    r = run("sim", f"{DESIGNS}:add", "--inputs", "x.npy", "narrow.npy", cwd=tmp_path)
    user_error(r, "input narrow.npy has shape (8, 4), but 'add' declares Z: f32[8, 8]", decl, "^^^^^^^^^^^^")
    r = cli("build", f"{DESIGNS}:add", "-o", tmp_path / "out", "--inputs", x, ints)
    user_error(r, f"input {ints} has dtype int32", decl, "x.astype(np.float32)")
    assert not (tmp_path / "out").exists()  # nothing written for a bad input
    user_error(cli("sim", f"{DESIGNS}:add", "--inputs", x), "'add' takes 2 argument(s), got 1")
    user_error(cli("sim", f"{DESIGNS}:add", "--inputs", x, "1.5"), "is a tensor f32[8, 8], got a number")
    user_error(cli("sim", f"{DESIGNS}:scale", "--inputs", x, "1.5", "2.5"), "argument 'n' of 'scale' is i32, got 2.5")
    user_error(cli("sim", f"{DESIGNS}:add", "--inputs", x, junk), f"cannot read {junk}")
    user_error(cli("sim", f"{DESIGNS}:add", "--inputs", x, tmp_path / "nothere.npy"), "no such input file")


def test_bad_files_and_names_are_located_errors(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import streamdsl as sd\nfrom streamdsl import f32\n\n@sd.kernel\ndef k(x: f32[4]) -> f32[4]:\n"
                   "    y: f32[4] = 0.0\n    for i in range(4)\n        y[i] = x[i]\n    return y\n")
    r = run("build", f"{bad}:k", "-o", tmp_path / "out")
    user_error(r, "syntax error: expected ':'", f"{bad}:7:22", "    for i in range(4)\n", "^")
    user_error(cli("sim", tmp_path / "missing.py:k"), "no such file")
    user_error(cli("sim", "gemm.py"), "expected FILE.py:NAME")
    unsupported = tmp_path / "unsupported.py"
    unsupported.write_text("import streamdsl as sd\nfrom streamdsl import f32\n\n@sd.kernel\ndef k(x: f32[4]) -> f32[4]:\n"
                           "    y: f32[4] = 0.0\n    while True:\n        pass\n    return y\n")
    user_error(cli("sim", f"{unsupported}:k", "--inputs", "1.0"), f"{unsupported}:7")  # the kernel's own located error
    crash = tmp_path / "crash.py"
    crash.write_text("import numpy as np\nx = np.zeros(3)\ny = x[5]\n")
    user_error(cli("sim", f"{crash}:y"), "failed to run: IndexError", f"{crash}:3:5", "^^^^")
    user_error(cli("sim", f"{DESIGNS}:relux"), "defines no 'relux'", "did you mean 'relu'?",
               f"{DESIGNS}:{line_of(DESIGNS, 'def relu(')}:5")
    user_error(cli("build", f"{DESIGNS}:NOT_A_KERNEL", "-o", tmp_path / "o"), "'NOT_A_KERNEL'", "is of type int",
               f"{DESIGNS}:{line_of(DESIGNS, 'NOT_A_KERNEL =')}:1")
    assert not (tmp_path / "out").exists() and not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------------------- build
def test_build_leaves_what_csim_needs(built):
    k = built / "k"
    prj = json.loads((k / "streamdsl.json").read_text())
    assert (prj["format"], prj["kind"], prj["name"], prj["board"], prj["top"]) == (
        "streamdsl-project/1", "kernel", "gemm", "u55c", "gemm")
    assert prj["source"] == str(EXAMPLES / "gemm.py") and prj["results"] == ["f32[64, 32]"]
    assert all((k / f).is_file() for f in prj["files"]) and "tb_gemm.cpp" in prj["files"]
    a = np.load(k / "data" / "A.npy")
    assert a.shape == (64, 128) and a.dtype == np.float32 and a.std() > 0.5  # seeded random test data
    assert (k / "design.ir").read_text().startswith("kernel gemm(A: f32[64, 128], B: f32[128, 32])")
    d = json.loads((built / "d" / "streamdsl.json").read_text())
    assert d["kind"] == "dataflow" and d["board"] == "u280"
    assert "#pragma HLS dataflow" in (built / "d" / "ffn.cpp").read_text()


def test_build_never_writes_over_foreign_files(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    r = run("build", EXAMPLES / "gemm.py:gemm", "-o", out)
    user_error(r, "holds files streamdsl did not write: notes.txt", "--force")
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    r = cli("build", EXAMPLES / "gemm.py:gemm", "-o", out, "--force")
    assert r.returncode == 0, r.stderr
    assert (out / "notes.txt").read_text() == "keep me" and (out / "gemm.cpp").is_file()
    (tmp_path / "afile").write_text("x")
    user_error(cli("build", EXAMPLES / "gemm.py:gemm", "-o", tmp_path / "afile"), "is a file, not a folder")
    assert (tmp_path / "afile").read_text() == "x"
    user_error(cli("build", EXAMPLES / "gemm.py:gemm", "-o", tmp_path / "b", "--board", "zcu104"), "unknown board 'zcu104'")
    assert not (tmp_path / "b").exists()


def test_build_takes_the_testbench_inputs_and_rebuilds_its_own_folder(tmp_path):
    x = np.arange(64, dtype=np.float32).reshape(8, 8) - 30
    np.save(tmp_path / "x.npy", x)
    r = run("build", f"{DESIGNS}:scale", "-o", "p", "--inputs", "x.npy", "0.5", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "p" / "data" / "X.npy"), x)
    assert np.load(tmp_path / "p" / "data" / "n.npy") == 3
    r = cli("build", f"{DESIGNS}:add", "-o", tmp_path / "p")  # a streamdsl folder: replaced without --force
    assert r.returncode == 0, r.stderr
    r = run("csim", "p", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("PASS add (kernel on u55c)"), r.stderr  # the old scale files are ignored


# ------------------------------------------------------------------------------------------ csim
def test_csim_passes_on_a_built_kernel_and_dataflow(built):
    r = run("csim", built / "k")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"PASS gemm (kernel on u55c): C-simulation of {built / 'k'} matches the reference "
                               "simulator") and "max |error| 0" in r.stdout
    r = run("csim", built / "d")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("PASS ffn (dataflow on u280)") and "max |error|" in r.stdout


def test_csim_reports_the_deadlock_of_a_too_shallow_fifo(built):
    r = run("csim", built / "dl")
    user_error(r, "deadlock: the C-simulation of 'bypass' deadlocks", "'a:add' blocked on write (full)",
               "'b' blocked on read (empty)", f"{DESIGNS}:{line_of(DESIGNS, 'bypass_small =')}", "size_fifos")


def test_csim_detects_a_mismatch_and_a_damaged_project(built, tmp_path):
    edited = tmp_path / "edited"
    shutil.copytree(built / "k", edited)
    tb = edited / "tb_gemm.cpp"
    tb.write_text(tb.read_text().replace("raw[n] = flat[n];", "raw[n] = flat[n] + (n == 5 ? 1.0f : 0.0f);"))
    r = run("csim", edited)
    user_error(r, "C-simulation mismatch", "differs from the reference simulator", "index (0, 5)",
               f"{EXAMPLES / 'gemm.py'}:{line_of(EXAMPLES / 'gemm.py', 'gemm = make_gemm')}")
    (edited / "streamdsl.json").write_text("{\n  \"format\": oops\n}\n")
    user_error(cli("csim", edited), "is not valid JSON", f"{edited / 'streamdsl.json'}:2")
    (edited / "streamdsl.json").write_text((built / "k" / "streamdsl.json").read_text())
    (edited / "gemm.cpp").unlink()
    user_error(cli("csim", edited), "gemm.cpp' is missing", "streamdsl build")


def _sha(root: Path) -> dict[str, str]:
    import hashlib

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


OUTSIDE = "which is not a file inside the folder"


@pytest.mark.parametrize("key,value,why", [
    ("files", ["../outside_src.cpp", "gemm.h", "tb_gemm.cpp"], OUTSIDE), ("files", ["/etc/hostname"], OUTSIDE),
    ("files", ["sub/gemm.cpp"], "which is not a plain file name"), ("ir", "../design.ir", OUTSIDE),
    ("inputs", [{"param": "A", "type": "f32", "file": "../A.npy"}], OUTSIDE)])
def test_csim_reads_only_the_folders_own_files(built, tmp_path, key, value, why):
    """A streamdsl.json naming a path outside its folder is refused before anything is read or compiled."""
    prj = tmp_path / "prj"
    shutil.copytree(built / "k", prj)
    for name in ("outside_src.cpp", "design.ir", "A.npy"):  # what the hostile names point at
        shutil.copy(prj / ("gemm.cpp" if name.endswith(".cpp") else "design.ir" if name.endswith(".ir")
                           else "data/A.npy"), tmp_path / name)
    data = json.loads((prj / "streamdsl.json").read_text())
    data[key] = value
    (prj / "streamdsl.json").write_text(json.dumps(data))
    before = _sha(tmp_path)
    r = cli("csim", prj)
    user_error(r, why, f"{prj / 'streamdsl.json'}:1")
    assert "PASS" not in r.stdout and _sha(tmp_path) == before


def test_csim_help_says_it_runs_the_folders_code():
    r = cli("csim", "--help")
    assert r.returncode == 0 and "runs the folder's code" in " ".join(r.stdout.split())


def test_build_refuses_a_folder_of_the_users_headers_and_links(tmp_path):
    out = tmp_path / "prj"
    (out / "include").mkdir(parents=True)
    (out / "include" / "ap_int.h").write_text("// mine\n")
    before = _sha(tmp_path)
    user_error(cli("build", EXAMPLES / "gemm.py:gemm", "-o", out), "holds files streamdsl did not write: include")
    user_error(cli("build", EXAMPLES / "gemm.py:gemm", "-o", out, "--force"),
               "include' exists and streamdsl did not write it")
    assert _sha(tmp_path) == before
    out2 = tmp_path / "prj2"
    assert cli("build", EXAMPLES / "gemm.py:gemm", "-o", out2).returncode == 0
    shutil.rmtree(out2 / "data")
    (out2 / "data").symlink_to(out / "include", target_is_directory=True)  # a rebuild would write the .npy there
    before = _sha(tmp_path)
    user_error(cli("build", EXAMPLES / "gemm.py:gemm", "-o", out2, "--force"), "is a symbolic link")
    assert _sha(tmp_path) == before


def test_csim_of_a_folder_that_is_not_a_project_says_how_to_make_one(tmp_path):
    (tmp_path / "stuff.txt").write_text("x")
    user_error(run("csim", tmp_path), "is not a streamdsl project folder", "run `streamdsl build FILE.py:NAME -o DIR`")
    user_error(cli("csim", tmp_path / "nowhere"), "no such folder", "streamdsl build")
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / ".streamdsl-manifest").write_text("gemm.cpp\n")  # what .build(output=...) leaves
    user_error(cli("csim", tmp_path / "api"), "written from Python (.build(output=...))")


def test_quiet_turns_the_progress_bars_off(built, tmp_path):
    fresh = {"STREAMDSL_PROGRESS": "1", "STREAMDSL_CACHE": str(tmp_path / "cache")}  # an empty cache: g++ runs
    r = run("csim", built / "k", env=fresh)
    assert r.returncode == 0, r.stderr
    assert "g++ gemm" in r.stderr and "csim gemm" in r.stderr and "PASS" in r.stdout and "PASS" not in r.stderr
    for args in (["-q", "csim", built / "k"], ["csim", built / "k", "--quiet"]):
        r = run(*args, env={"STREAMDSL_PROGRESS": "1"})
        assert r.returncode == 0 and r.stderr == "" and r.stdout.startswith("PASS"), (args, r.stderr)
    r = run("csim", built / "k", env={"STREAMDSL_PROGRESS": "1", "STREAMDSL_QUIET": "1"})
    assert r.returncode == 0 and r.stderr == ""
    r = run("csim", built / "k")  # stderr is a pipe, not a terminal: no bars
    assert r.returncode == 0 and r.stderr == ""


# -------------------------------------------------------------------------------------------- llm
def test_llm_build_and_csim_of_its_layer(built):
    assert (built / "llm" / "link.cfg").is_file() and (built / "llm" / "project.json").is_file()
    prj = json.loads((built / "llm" / "streamdsl.json").read_text())
    assert (prj["kind"], prj["family"], prj["config"], prj["max_len"], prj["prefill_len"]) == ("llm", "llama", "tiny", 8, 1)
    r = run("csim", built / "llm")
    assert r.returncode == 0, r.stderr
    assert "PASS llama_layer_decode_full (layer 0, 1 token(s) after 3)" in r.stdout
    assert "PASS llama (1 layer kernel(s) on u55c)" in r.stdout
    assert "PASS llama_generate: one C-simulated launch (prompt [" in r.stdout, r.stdout  # ids in, ids out
    r = cli("report", built / "llm", "-o", built / "llm-report")
    assert r.returncode == 0, r.stderr
    assert "design llama_layer on u55c" in r.stdout and (built / "llm-report" / "report.html").is_file()


def test_llm_build_quantised_and_full_size(tmp_path):
    r = run("llm", "build", "gemma3", "--quant", "w8a8", "--max-len", "16", "--prefill-len", "4", "-o", tmp_path / "g")
    assert r.returncode == 0, r.stderr
    man = json.loads((tmp_path / "g" / "weights" / "manifest.json").read_text())
    assert man["scheme"] == "w8a8" and man["complete"]
    r = run("llm", "build", "qwen2", "--config", "full", "--schedule", "default", "-o", tmp_path / "q")
    assert r.returncode == 0, r.stderr
    assert "weights not written" in r.stdout
    user_error(cli("csim", tmp_path / "q"), "full-size qwen2 project, written without weights",
               "cannot be C-simulated", "--config tiny")
    user_error(cli("llm", "build", "gemma3", "-o", tmp_path / "g" / "weights"), "holds files streamdsl did not write")


@pytest.mark.slow
def test_llm_generate_says_paris():
    r = run("llm", "generate", "smollm2", "The capital of France is", "--max-new-tokens", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("The capital of France is Paris")


# ------------------------------------------------------------------------------- report, explore
def test_report_and_explore_model_a_dataflow_on_a_board():
    r = run("report", EXAMPLES / "ffn_dataflow.py:ffn", "--board", "u55c")
    assert r.returncode == 0, r.stderr
    assert "design ffn on u55c at 250 MHz" in r.stdout and "resources per SLR" in r.stdout
    r = run("explore", EXAMPLES / "attention_dataflow.py:attention", "--budget", "64")
    assert r.returncode == 0, r.stderr
    assert "default" in r.stdout and "fits" in r.stdout
    assert r.stdout.count("design  ") == 1, r.stdout  # the table once (it was printed twice)
    assert max(map(len, r.stdout.splitlines())) <= 120, r.stdout  # a screen's width (rows were up to 308)
    user_error(cli("explore", EXAMPLES / "gemm.py:gemm"), "explore takes a dataflow")
    user_error(cli("report", EXAMPLES / "ffn_dataflow.py:ffn", "--board", "zcu104"), "zcu104")


def test_report_of_a_kernel_and_a_project_folder_writes_html(built, tmp_path):
    r = run("report", built / "k", "-o", tmp_path / "rk")
    assert r.returncode == 0, r.stderr
    assert "Estimate for kernel 'gemm' on u55c" in r.stdout
    assert r.stdout.rstrip().endswith(f"wrote {tmp_path / 'rk' / 'report.html'}")
    assert "gemm" in (tmp_path / "rk" / "report.html").read_text()
    user_error(cli("report", tmp_path), "is not a streamdsl project folder")


def test_report_of_a_dataflow_folder_writes_html(built, tmp_path):
    r = run("report", built / "d", "-o", tmp_path / "rd")  # the folder's board (u280) unless --board
    assert r.returncode == 0, r.stderr
    assert "design ffn on u280" in r.stdout
    assert r.stdout.rstrip().endswith(f"wrote {tmp_path / 'rd' / 'report.html'}")
    assert "ffn" in (tmp_path / "rd" / "report.html").read_text()
