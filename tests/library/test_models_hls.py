"""The whole-model accelerator project (``LLM.build("hls", output=DIR)``, library/llm/hls_build.py).

Tiny random transformers models (test_hf_parity.build_hf) are built into
projects; the tests check the layer kernels' pragmas and ports, that
link.cfg connects every m_axi port of every kernel to HBM consistently,
that the weight files round-trip to the model's weights, and that the
generated XRT host compiles against a CPU mock of XRT (tests/library/xrt_mock)
whose one kernel is the generate kernel's C-simulation.  The C-simulation of a
whole launch (generate/tb_<kernel>.cpp) must give transformers' greedy tokens;
for Llama and Gemma 3 (sliding + full kernels, two RoPE thetas) the host runs on
the mock and must give the simulator's.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from test_hf_parity import build_hf, prompt

import streamdsl as sd
from streamdsl.backend.folder import OutputFolderError
from streamdsl.library.llm import models
from streamdsl.library.llm.config import FAMILIES, LLMError
from streamdsl.library.llm.device import csim
from streamdsl.library.llm.hls_build import load_weights, read_weights
from streamdsl.library.llm.weights import from_hf

MOCK = Path(__file__).resolve().parent / "xrt_mock"
INCLUDE = Path(sd.__file__).resolve().parent / "backend" / "include"
PROMPT_LEN, NEW = 6, 4
GXX = shutil.which("g++")
needs_gxx = pytest.mark.skipif(GXX is None, reason="g++ is not installed")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """family -> (model, project, prompt ids): every family built once, with weights."""
    out = {}
    for family in FAMILIES:
        config, hf = build_hf(family)
        m = models.model(config, max_len=PROMPT_LEN + NEW).load(from_hf(hf))
        d = tmp_path_factory.mktemp(f"acc_{family}")
        prj = m.build("hls", output=d, prefill_len=PROMPT_LEN, schedule="default")  # explored: its own test
        out[family] = (m, prj, prompt(config, seed=3, length=PROMPT_LEN))
    return out


def test_v_plus_plus_sees_streamdsl_rt_h_and_no_c_simulation_header(built):
    """The Makefile's v++ -c include path (the layer folder and its include/) holds streamdsl_rt.h and none of
    the C-simulation ap_int.h, ap_fixed.h, hls_stream.h, hls_streamofblocks.h, hls_math.h (include/csim): synthesis
    takes Vitis's."""
    _, prj, _ = built["llama"]
    make = (prj.output / "Makefile").read_text()
    dirs = [d for line in make.splitlines() if line.strip().startswith("v++ -c") for d in re.findall(r"-I(\S+)", line)]
    assert dirs
    seen = {h.name for d in dirs for h in (prj.output / d).glob("*.h")}
    assert "streamdsl_rt.h" in seen and not seen & {"ap_int.h", "ap_fixed.h", "hls_stream.h",
                                                   "hls_streamofblocks.h", "hls_math.h"}


def m_axi_ports(cpp: str, kernel: str) -> list[str]:
    top = cpp[cpp.index(f"void {kernel}("):]
    return re.findall(r"#pragma HLS interface mode=m_axi port=(\w+) ", top)


# ------------------------------------------------------------------------------ project files
@pytest.mark.parametrize("family", FAMILIES)
def test_layer_projects_have_the_kernels_ports_and_pragmas(built, family):
    m, prj, _ = built[family]
    d = prj.output
    kinds = {"full_attention": "full", "sliding_attention": "sliding"}
    want = sorted(f"{p}_{kinds[k]}" for p in ("decode", "prefill") for k in m.kinds())
    assert sorted(v.name for v in prj.variants) == want
    for top in ("README.md", "Makefile", "link.cfg", "project.json", "host/host.cpp", "weights/manifest.json"):
        assert (d / top).is_file(), top
    for v in prj.variants:
        f = d / v.folder
        for name in (f"{v.kernel}.cpp", f"{v.kernel}.h", f"tb_{v.kernel}.cpp", "run_hls.tcl", "include/streamdsl_rt.h",
                     "include/csim/hls_stream.h"):
            assert (f / name).is_file(), name
        cpp, h = (f / f"{v.kernel}.cpp").read_text(), (f / f"{v.kernel}.h").read_text()
        assert f'extern "C" void {v.kernel}(' in h
        assert "#pragma HLS dataflow" in cpp and "#pragma HLS stream variable=" in cpp
        assert f"set_top {v.kernel}\n" in (f / "run_hls.tcl").read_text()
        tensors = [p.name for p in v.ports if p.shape]
        assert m_axi_ports(cpp, v.kernel) == tensors
        # every port is 512-bit words, read and written in bursts
        assert all(f"port={p} offset=slave" in cpp and re.search(rf"sd::word \*{p}\b", cpp) for p in tensors)
        assert cpp.count("max_read_burst_length=64") == len(tensors)
        assert [p.name for p in v.ports if p.role == "scalar"] == ["pos", "n_valid"]
        assert v.t == (1 if v.phase == "decode" else PROMPT_LEN)
        # the generate kernel calls a copy of it: the same code, a sub-function (its ports are the top's)
        sub = (d / "generate" / f"{v.kernel}.cpp").read_text()
        assert f"generate/{v.kernel}.cpp" in (d / "Makefile").read_text()
        assert "#pragma HLS interface" not in sub and sub.count("#pragma") == cpp.count("#pragma") - 2 * len(tensors) - 3
        assert 'extern "C"' not in (d / "generate" / f"{v.kernel}.h").read_text()
        # the renamed project is the layer schedule's own project: same sizes, same pragmas
        orig = m.schedule(v.t, v.kind).build("hls").files[f"{m.schedule(v.t, v.kind).graph.ir.name}.cpp"]
        assert cpp.count("#pragma") == orig.count("#pragma") and len(cpp.splitlines()) == len(orig.splitlines())


@pytest.mark.parametrize("family", FAMILIES)
def test_link_cfg_maps_every_m_axi_port_consistently(built, family):
    _, prj, _ = built[family]
    d = prj.output
    cfg = (d / "link.cfg").read_text()
    assert "[connectivity]" in cfg
    sp = {}
    for cu, port, lo, hi in re.findall(r"^sp=(\w+)_1\.(\w+):HBM\[(\d+)(?::(\d+))?\]$", cfg, re.M):
        assert (cu, port) not in sp, f"{cu}.{port} mapped twice"
        sp[cu, port] = (int(lo), int(hi or lo))
    nk = re.findall(r"^nk=(\w+):1:(\w+)_1$", cfg, re.M)
    gen = prj.generate
    assert nk == [(gen.kernel, gen.kernel)], "the xclbin holds one kernel"
    cpp = (d / "generate" / f"{gen.kernel}.cpp").read_text()
    buffers = [a.name for a in gen.args if not a.scalar]
    assert m_axi_ports(cpp, gen.kernel) == buffers == [p for _, p in sp]  # every buffer on HBM, in order
    for (k, p), (lo, hi) in sp.items():
        assert 0 <= lo <= hi < 32
        assert gen.arg(p).hbm == (f"HBM[{lo}]" if lo == hi else f"HBM[{lo}:{hi}]")
    bank_of: dict[str, tuple[int, int]] = {}
    for v in prj.variants:  # a layer port's buffer: one bank range in every variant, the generate argument's
        for p in v.ports:
            if p.banks is None:
                continue
            assert bank_of.setdefault(p.name, p.banks) == p.banks, f"{p.name} on different banks in different kernels"
            if p.role in ("weight", "kv_in"):
                assert sp[gen.kernel, p.name] == p.banks
    kv_in = [p.name for p in prj.variants[0].ports if p.role == "kv_in"]
    kv_out = [p.name for p in prj.variants[0].ports if p.role == "kv_out"]
    assert [bank_of[p] for p in kv_in] == [bank_of[p] for p in kv_out], "the new rows go into the cache buffers"
    kv = {bank_of[p] for p in kv_in}
    others = {b for p, b in bank_of.items() if p not in kv_in + kv_out}
    # a cache has a range of its own where the timing model gave its DMA channels of its own, else the shared one
    owned = {t for v in prj.variants for t in v.own}
    assert len(kv_in) == 2 and all((bank_of[p] in others) == (p not in owned) for p in kv_in), (kv, owned)
    matrices = [p for v in prj.variants[:1] for p in v.ports if p.role == "weight" and len(p.shape) == 2]
    assert len({bank_of[p.name] for p in matrices}) == len(matrices), "every weight matrix has its own bank"
    plan = json.loads((d / "project.json").read_text())
    assert [(a["name"], a["hbm"]) for a in plan["kernel"]["args"] if a["bytes"]] == [(a.name, a.hbm) for a in gen.args
                                                                                     if not a.scalar]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_generate_kernel_passes_the_lint(built, family):
    """The generate kernel's sources (its top function, the layer and head sub-functions) on the synthesis path:
    C++14, bus-width streams and ports, one reader and writer a stream, canonical dataflow, their pragmas."""
    from streamdsl.backend.hls.lint import RULES, lint_code
    from tests.emitted import PENDING

    _, prj, _ = built[family]
    files = {k: v for k, v in prj.generate.files.items() if not k.startswith("tb_")}
    assert lint_code(files, rules=tuple(r for r in RULES if r not in PENDING)) == []


def test_the_emitted_files_do_not_depend_on_the_hash_seed():
    """The same build in two interpreters with different string hashing writes the same files (a set iterated
    into a file once ordered a task's window comments by hash)."""
    code = ("import hashlib, sys; import streamdsl as sd; from streamdsl.library.llm.models import model\n"
            "m = model(sd.llm.tiny('gpt2'), max_len=8, quant='w4a8')\n"
            "prj = m.build('hls', prefill_len=4)\n"
            "files = {**prj.generate.files, **{k: v for x in prj.variants for k, v in x.project.files.items()}}\n"
            "print(hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest())")
    digests = set()
    for seed in ("1", "2"):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, PYTHONHASHSEED=seed, STREAMDSL_QUIET="1"))
        assert r.returncode == 0, r.stderr[-2000:]
        digests.add(r.stdout.strip())
    assert len(digests) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2-medium", "qwen2.5-0.5b", "llama-3.2-1b", "gemma-3-1b"])
def test_the_full_size_projects_build(name, tmp_path):
    """What `streamdsl llm build FAMILY --config full --quant w4a8` writes, for the four models the end-to-end rows
    call emitted: every buffer of the generate kernel on one of the 32 banks (ports with channels of their own
    share banks round the banks when they outnumber them), the residual stream as plain rows over one port; no
    prefill layer (the model says the prompt goes faster through the decode layers), and the decode layers,
    explored beside the device head, and the head fit the U55C together."""
    from streamdsl.library.llm.config import preset

    m = models.model(preset(name), max_len=64, quant="w4a8")
    prj = m.build("hls", output=tmp_path / "p", weights=False)
    banks = [a.banks for a in prj.generate.args if not a.scalar]
    assert all(b is not None and 0 <= b[0] <= b[1] < 32 for b in banks)
    cfg = (tmp_path / "p" / "link.cfg").read_text()
    assert cfg.count("sp=") == len(banks) and f"nk={prj.generate.kernel}:1:" in cfg
    assert prj.prefill_len == 1 and "through the decode layers" in prj.prefill_why
    assert prj.fit().fits


def test_the_project_is_deterministic(built, tmp_path):
    m, prj, _ = built["gemma3"]
    again = m.build("hls", output=None, prefill_len=PROMPT_LEN, schedule="default")
    assert again.files == prj.files
    assert [v.project.files for v in again.variants] == [v.project.files for v in prj.variants]


# ------------------------------------------------------------------------------------ weights
@pytest.mark.parametrize("family", FAMILIES)
def test_weight_files_round_trip(built, family):
    m, prj, _ = built[family]
    wdir = prj.output / "weights"
    manifest = json.loads((wdir / "manifest.json").read_text())
    assert manifest["complete"] and manifest["scheme"] == "fp32" and manifest["byte_order"] == "little"
    lanes: dict[str, int] = {}
    for t in manifest["tensors"]:
        assert (wdir / t["file"]).stat().st_size == t["offset"] + t["nbytes"]
        if "layout" in t and "layer" in t:  # a layer port's words: 64 bytes each
            port = next(p for p in prj.variants[0].ports if p.name == t["port"])
            assert t["hbm"] == port.hbm and t["nbytes"] == 64 * t["words"] == port.nbytes and t["lane"] == port.lane
            lanes[t["name"]] = lanes.get(t["name"], 0) + t["nbytes"]
        elif "layout" in t:  # a head port's words, the whole buffer of its generate argument
            arg = prj.generate.arg(t["port"])
            assert t["hbm"] == arg.hbm and t["nbytes"] == arg.nbytes
            lanes[t["name"]] = lanes.get(t["name"], 0) + t["nbytes"]
        else:
            assert t["nbytes"] == 4 * int(np.prod(t["shape"]))
    for name, nbytes in lanes.items():  # f32 in words of 16: the lanes hold the tensor and less than a word more
        shape = next(t["shape"] for t in manifest["tensors"] if t["name"] == name)
        assert 0 <= nbytes - 4 * int(np.prod(shape)) < 64 * sum(t["name"] == name for t in manifest["tensors"])
    arrays = read_weights(wdir)
    for i in range(m.config.layers):
        spec = m.layer(1, m.config.layer_types[i])
        for name, want in zip(spec.weights, m.layer_args(i), strict=True):  # exactly what the layer kernel takes
            assert np.array_equal(arrays[f"layer{i}_{name}"], want)
    w = m.weights
    back = load_weights(wdir, m.config)
    assert back.tied == w.tied
    for (n1, a), (n2, b) in zip(w.items(), back.items(), strict=True):
        assert n1 == n2 and np.array_equal(a, b), n1
    raw = np.fromfile(wdir / "layer0_ln1.bin", dtype="<f4")
    assert np.array_equal(raw, w.layers[0].ln1)  # plain little-endian float32, row-major
    assert np.array_equal(arrays["head_E"], w.lm_head) and np.array_equal(arrays["head_w"], w.final_norm)


def test_a_model_without_weights_builds_without_weight_files(tmp_path):
    config, _ = build_hf("qwen2")
    m = models.model(config, max_len=8)
    prj = m.build("hls", output=tmp_path / "p", prefill_len=4, schedule="default")
    assert not prj.weights_written
    manifest = json.loads((tmp_path / "p" / "weights" / "manifest.json").read_text())
    assert not manifest["complete"]
    files = sorted(p.name for p in (tmp_path / "p" / "weights").iterdir())
    assert files == ["manifest.json", "rope0_cos.bin", "rope0_sin.bin"]
    with pytest.raises(LLMError, match="is missing"):
        read_weights(tmp_path / "p" / "weights")


def test_bad_options_are_located_errors(built, tmp_path):
    m, _, _ = built["llama"]
    with pytest.raises(LLMError) as err:
        m.build("hls", output=tmp_path / "a", prefill_len=m.max_len + 1)
    assert "prefill_len must be an integer" in str(err.value) and "test_models_hls.py" in str(err.value)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "mine.txt").write_text("x")
    with pytest.raises(OutputFolderError, match="did not write") as err:
        m.build("hls", output=tmp_path / "b")
    assert "test_models_hls.py" in str(err.value) and (tmp_path / "b" / "mine.txt").read_text() == "x"
    with pytest.raises(LLMError, match="has no HBM"):
        m.build("hls", output=tmp_path / "c", board="vck190")


# ------------------------------------------------------------------------------- host + mock
def _gxx(args: list[str]) -> None:
    r = subprocess.run([GXX, "-std=c++17", "-pthread", "-fwrapv", "-ffp-contract=off", *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]


def _cached_object(job: tuple[list[str], list[Path]]) -> None:
    """Compile ``-c SRC -o OBJ``, reusing an object of identical inputs (the csim cache's folder)."""
    args, inputs = job
    obj = Path(args[args.index("-o") + 1])
    h = hashlib.sha256(" ".join(a for a in args if not a.startswith(("-I", "/"))).encode())
    for f in [*inputs, *sorted(MOCK.rglob("*.h")), *sorted(INCLUDE.rglob("*.h"))]:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    cached = Path(os.environ.get("STREAMDSL_CACHE", Path.home() / ".cache" / "streamdsl")) / "xrt_mock" / h.hexdigest()[:24]
    if not cached.exists():
        _gxx(args)
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}")
        shutil.copyfile(obj, tmp)
        os.replace(tmp, cached)
    else:
        shutil.copyfile(cached, obj)


def _csim_jobs(prj, where: Path) -> list:
    """Compile jobs of the generate kernel's C-sim sources (every .cpp of generate/ but the testbench)."""
    g = prj.output / "generate"
    incs = [f"-I{g}", f"-I{g / 'include' / 'csim'}", f"-I{g / 'include'}"]
    jobs = []
    for src in sorted(g.glob("*.cpp")):
        if src.name.startswith("tb_"):
            continue
        jobs.append((["-O1", "-w", "-DSTREAMDSL_THREADED_DATAFLOW", "-DSD_ACCOUNT", *incs, "-c", str(src), "-o",
                      str(where / f"k_{src.stem}.o")], [src, *sorted(g.glob("*.h"))]))
    return jobs


def compile_host(prj, where: Path) -> Path:
    """The generated host linked with the XRT mock, whose one kernel is the generate kernel's C-sim."""
    where.mkdir(parents=True, exist_ok=True)
    d = prj.output
    g = d / "generate"
    gen = prj.generate
    names = ", ".join(f'"{a.name}"' for a in gen.args)
    reg = where / "register.cpp"
    reg.write_text('#include "xrt_mock.h"\n' + f'#include "{gen.kernel}.h"\n'
                   + f'XRT_MOCK_KERNEL("{gen.kernel}", &{gen.kernel}, {{{names}}});\n')
    incs = [f"-I{g}", f"-I{g / 'include' / 'csim'}", f"-I{g / 'include'}"]
    jobs = [(["-O1", "-Wall", "-Wextra", "-Werror", f"-I{MOCK}", "-c", str(d / "host" / "host.cpp"),
              "-o", str(where / "host.o")], [d / "host" / "host.cpp"]),
            (["-O0", "-w", f"-I{MOCK}", *incs, "-c", str(reg), "-o", str(where / "register.o")],
             [reg, *sorted(g.glob("*.h"))])]
    jobs += _csim_jobs(prj, where)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(_cached_object, jobs))
    exe = where / "host"
    _gxx([*(str(p) for p in sorted(where.glob("*.o"))), "-o", str(exe)])
    return exe


@needs_gxx
@pytest.mark.parametrize("family", FAMILIES)
def test_host_compiles_against_the_xrt_mock(built, family):
    _, prj, _ = built[family]
    host = prj.output / "host" / "host.cpp"
    _gxx(["-fsyntax-only", "-Wall", "-Wextra", "-Werror", f"-I{MOCK}", str(host)])
    text = host.read_text()
    for api in ("xrt::device device(", "load_xclbin(", "xrt::kernel kernel(", "group_id(", "XCL_BO_SYNC_BO_TO_DEVICE",
                "xrt::run run("):
        assert api in text, api
    assert text.count("run.start()") == 1 and text.count("xrt::kernel kernel(") == 1, "one kernel, one launch a call"


def hf_greedy(hf, ids, n: int) -> list[int]:
    import torch

    with torch.no_grad():
        out = hf.generate(torch.tensor([list(ids)]), max_new_tokens=n, do_sample=False, min_new_tokens=n,
                          attention_mask=torch.ones(1, len(ids), dtype=torch.long), pad_token_id=0)
    return out[0, len(ids):].tolist()


@needs_gxx
@pytest.mark.parametrize("family", FAMILIES)
def test_csim_of_a_whole_launch_generates_transformers_greedy_tokens(built, family, tmp_path):
    """One launch of the generate kernel in C-simulation (bounded FIFOs, one thread a process): the prompt ids
    in, every layer, the head and the argmax on the device, the ids fed back: the ids transformers' greedy
    generate gives, and the simulator's.  A prompt of prefill_len tokens goes through the prefill layers, a
    shorter one token by token through the decode layers, a longer one both ways."""
    m, prj, ids = built[family]
    hf = build_hf(family)[1]
    gen = prj.generate
    for prompt_ids in (ids, ids[:3], [*ids, *ids[:2]][:PROMPT_LEN + 2]):
        n = min(NEW, m.max_len - len(prompt_ids) + 1)
        want = hf_greedy(hf, prompt_ids, n)
        got, counts = csim(prj.output, prompt_ids, n, account=True)
        assert got == want == m.generate(prompt_ids, n), (family, len(prompt_ids))
        # the launch did what the end-to-end model prices: its steps, rows gathered, layer calls
        plan = {(gen.kernel if f == "{kernel}" else f, lab): v for (f, lab), v in gen.plan(len(prompt_ids), n).trips().items()}
        assert {k: counts[k] for k in plan} == plan


@needs_gxx
def test_a_prompt_that_fills_the_cache_in_one_prefill(tmp_path):
    """prefill_len = max_len: the prefill layers' stores write the whole cache (no offset to clamp); the launch
    still compiles warning-free and generates the simulator's id."""
    config, hf = build_hf("llama")
    m = models.model(config, max_len=PROMPT_LEN).load(from_hf(hf))
    prj = m.build("hls", output=tmp_path / "p", prefill_len=PROMPT_LEN, schedule="default")
    ids = prompt(config, seed=5, length=PROMPT_LEN)
    assert prj.csim(ids, 1) == m.generate(ids, 1) == hf_greedy(hf, ids, 1)


def test_call_syncs_are_the_generated_hosts(built):
    """A generate call of host.cpp: the prompt ids in, the out buffer's -1s in, the ids back (whole words), and
    one run; what device.call_syncs tells the end-to-end model."""
    from streamdsl.library.llm.device import call_syncs

    m, prj, _ = built["gemma3"]
    host = (prj.output / "host" / "host.cpp").read_text()
    call = host[host.index("// A generate call"):]
    syncs = re.findall(r"bos\[(PROMPT|OUT)\]\.sync\((XCL_BO_SYNC_BO_TO_DEVICE|XCL_BO_SYNC_BO_FROM_DEVICE)(.*?)\);", call)
    assert [(b, d) for b, d, _ in syncs] == [("PROMPT", "XCL_BO_SYNC_BO_TO_DEVICE"), ("OUT", "XCL_BO_SYNC_BO_TO_DEVICE"),
                                            ("OUT", "XCL_BO_SYNC_BO_FROM_DEVICE")]
    assert "(ids.size() * sizeof(int32_t) + 63) & ~size_t(63)" in syncs[0][2] and syncs[1][2] == ""
    assert "(size_t(max_new) * sizeof(int32_t) + 63) & ~size_t(63)" in syncs[2][2]
    assert call.count("run.start()") == call.count("run.wait()") == 1
    out_bytes = prj.generate.arg("out").nbytes
    assert call_syncs(m.max_len, 6, 4) == [("to_device", 64), ("to_device", out_bytes), ("from_device", 64)]
    assert call_syncs(64, 17, 40)[0] == ("to_device", 128) and call_syncs(64, 17, 40)[2] == ("from_device", 192)


XRT = Path(os.environ.get("XILINX_XRT", "/opt/xilinx/xrt"))


@pytest.mark.vendor
@needs_gxx
@pytest.mark.skipif(not (XRT / "include" / "xrt" / "xrt_kernel.h").exists(), reason="XRT is not installed")
def test_host_compiles_against_xrts_own_headers(built):
    """Where XRT is installed, the host compiles against its headers (the mock's API is a subset of them)."""
    _, prj, _ = built["llama"]
    _gxx(["-fsyntax-only", "-Wall", "-Werror", f"-I{XRT / 'include'}", str(prj.output / "host" / "host.cpp")])


@needs_gxx
@pytest.mark.parametrize("family", ["llama", "gemma3"])
def test_host_on_the_mock_generates_what_the_simulator_generates(built, family, tmp_path):
    """The generated host on the XRT mock (its one kernel the generate kernel's C-sim): buffers allocated once,
    one run, the ids back."""
    m, prj, ids = built[family]
    exe = compile_host(prj, tmp_path / "mock")
    d = prj.output
    cmd = [str(exe), str(d / "link.cfg"), str(d / "weights"), *map(str, ids), "--max-new-tokens", str(NEW)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [int(x) for x in r.stdout.split()] == m.generate(ids, NEW)
    assert "generated in one run" in r.stderr
    if family != "llama":
        return
    # a prompt shorter than prefill_len goes through the decode layers token by token
    r = subprocess.run([*cmd[:3], *map(str, ids[:3]), "--max-new-tokens", "2"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [int(x) for x in r.stdout.split()] == m.generate(ids[:3], 2)
    # too long for the KV cache: a clear error
    r = subprocess.run([*cmd[:3], *map(str, ids), "--max-new-tokens", str(NEW + 2)], capture_output=True, text=True)
    assert r.returncode == 1 and "do not fit the KV cache" in r.stderr


@needs_gxx
def test_a_w8a8_model_round_trips_its_codes_and_runs_on_the_mock(tmp_path):
    config, hf = build_hf("llama")
    m = models.model(config, max_len=PROMPT_LEN + NEW, quant="w8a8").load(from_hf(hf))
    prj = m.build("hls", output=tmp_path / "q", prefill_len=PROMPT_LEN, schedule="default")
    wdir = tmp_path / "q" / "weights"
    manifest = json.loads((wdir / "manifest.json").read_text())
    codes = [t for t in manifest["tensors"] if t["name"] == "layer0_q_codes"]
    assert manifest["scheme"] == "w8a8" and codes[0]["dtype"] == "int8" and codes[0]["nbytes"] == config.q_dim * config.hidden
    back = load_weights(wdir, config)
    for (n1, a), (n2, b) in zip(m.weights.items(), back.items(), strict=True):
        assert n1 == n2 and type(a) is type(b), n1
        if hasattr(a, "codes"):
            assert np.array_equal(a.codes, b.codes) and np.array_equal(a.scale, b.scale) and a.bits == b.bits, n1
        else:
            assert np.array_equal(a, b), n1
    exe = compile_host(prj, tmp_path / "mock")
    ids = prompt(config, seed=3, length=PROMPT_LEN)
    r = subprocess.run([str(exe), str(tmp_path / "q" / "link.cfg"), str(wdir), *map(str, ids), "--max-new-tokens", "3"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [int(x) for x in r.stdout.split()] == m.generate(ids, 3)


# ------------------------------------------------------------------------------- the schedule it emits
def test_the_build_emits_the_explored_decode_layer_the_report_prices():
    """By default the decode kernel is the design sd.explore picks beside the rest of the generate kernel (the
    one the performance model reports); schedule="default" gives the library's default schedule; prefill reads
    the decode layer's ports either way."""
    m = models.model(sd.llm.tiny("gpt2"), max_len=8, quant="w4a8")
    kind = m.kinds()[0]
    ex = sd.explore(m, "u55c", t=1, kind=kind, **m.neighbours(kind, "u55c"))
    acc = m.build("hls", prefill_len=4)
    assert acc.schedule == "explored" and "explored decode schedule" in repr(acc)
    dec = acc.variant("decode").project
    assert str(dec.schedule.trace) == str(ex.best.schedule.trace)  # the exploration's primitives, replayed alike
    default = m.build("hls", prefill_len=4, schedule="default")
    assert str(default.variant("decode").project.schedule.trace) == str(m.schedule(1).trace) != str(dec.schedule.trace)
    pre = acc.variant("prefill").project
    shared = [p for p in pre.ports if p["tensor"] in {"wqkv", "kc"}]
    assert shared and all(p["name"] in {q["name"] for q in dec.ports} for p in shared)
    with pytest.raises(LLMError, match="unknown schedule") as err:
        m.build("hls", schedule="fastest")
    assert "test_models_hls.py" in str(err.value)
