"""Build (not run) the accelerator projects of the paper's full-size models and compile them with g++.

For GPT-2 Medium, Llama-3.2-1B, Qwen2.5-0.5B and Gemma-3-1B (the presets of
``library/llm/config.py``) this times

* build: ``LLM.build("hls", output=DIR, prefill_len=P)`` -- every layer
  variant's schedule (fusion, step tables, FIFO sizing by LP) and HLS
  project, the host, link.cfg, the manifest.  The models have no weights
  (none are allocated), so no weight files are written; the RoPE tables are.
* compile: g++ on every generated C++ file: ``-fsyntax-only`` of each layer
  kernel and its C-sim testbench (whose static arrays of a full-size layer
  take GBs: compiled, never run), and of the host against the XRT mock of
  the tests (``--full`` compiles the layer kernels to objects with -O0 instead
  of the syntax-only pass).  Compiles run on ``--jobs`` processes.

and prints, per model, the kernels, the HBM banks used, the build and compile
times and the project's size (files streamdsl wrote, without the bundled
``include/`` headers).  Exit status 1 if any compile fails.

Run:  python benchmarks/llm_build.py [--max-len 512] [--prefill-len 128] [--full] [--keep DIR]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from streamdsl.library.llm import models
from streamdsl.library.llm.config import preset

MODELS = ("gpt2-medium", "llama-3.2-1b", "qwen2.5-0.5b", "gemma-3-1b")
MOCK = Path(__file__).resolve().parent.parent / "tests" / "library" / "xrt_mock"
FLAGS = ["-std=c++17", "-fwrapv", "-pthread", "-Wall", "-Wno-unknown-pragmas", "-Wno-unused-label"]


def project_bytes(d: Path) -> tuple[int, int]:
    """(bytes, files) under ``d``, without the copied include/ headers."""
    files = [p for p in d.rglob("*") if p.is_file() and "include" not in p.relative_to(d).parts]
    return sum(p.stat().st_size for p in files), len(files)


def compile_jobs(prj, full: bool) -> list[list[str]]:
    d = prj.output
    jobs = []
    for v in prj.variants:
        f = d / v.folder
        inc = [f"-I{f}", f"-I{f / 'include' / 'csim'}", f"-I{f / 'include'}"]
        kernel = f / f"{v.kernel}.cpp"
        jobs.append([*FLAGS, *inc, "-O0", "-c", str(kernel), "-o", str(f / f"{v.kernel}.o")] if full
                    else [*FLAGS, *inc, "-fsyntax-only", str(kernel)])
        jobs.append([*FLAGS, *inc, "-fsyntax-only", str(f / f"tb_{v.kernel}.cpp")])
    if MOCK.exists():
        jobs.append([*FLAGS, f"-I{MOCK}", "-fsyntax-only", str(d / "host" / "host.cpp")])
    return jobs


def gxx(args: list[str]) -> tuple[list[str], int, str]:
    r = subprocess.run(["g++", *args], capture_output=True, text=True)
    return args, r.returncode, r.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-len", type=int, default=512, help="KV cache positions (default 512)")
    ap.add_argument("--prefill-len", type=int, default=128, help="tokens of the prefill kernel (default 128)")
    ap.add_argument("--full", action="store_true", help="compile the layer kernels to objects (-O0), not -fsyntax-only")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="write the projects here (default: a temporary folder, removed)")
    ap.add_argument("models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    if shutil.which("g++") is None:
        print("g++ is not installed", file=sys.stderr)
        return 2
    root = args.keep or Path(tempfile.mkdtemp(prefix="sd-llm-build-"))
    failed = False
    print(f"max_len {args.max_len}, prefill_len {args.prefill_len}, compile "
          f"{'-O0 objects' if args.full else '-fsyntax-only'} on {args.jobs} jobs; projects in {root}")
    print(f"{'model':<14} {'kernels':>7} {'banks':>5} {'build s':>8} {'compile s':>9} {'project MiB':>11} {'files':>5}  "
          "kernel sources (lines)")
    try:
        for name in args.models:
            m = models.model(preset(name), max_len=args.max_len)
            out = root / name
            if out.exists():
                shutil.rmtree(out)
            t0 = time.perf_counter()
            prj = m.build("hls", output=out, prefill_len=args.prefill_len)
            build_s = time.perf_counter() - t0
            size, nfiles = project_bytes(out)
            t0 = time.perf_counter()
            with ThreadPoolExecutor(args.jobs) as pool:
                results = list(pool.map(gxx, compile_jobs(prj, args.full)))
            compile_s = time.perf_counter() - t0
            for cmd, rc, err in results:
                if rc != 0:
                    failed = True
                    print(f"  g++ failed on {cmd[-1] if not args.full else cmd[-3]}:\n{err[:3000]}", file=sys.stderr)
            banks = max(b[1] for b in prj.banks.values()) + 1
            lines = ", ".join(f"{v.name} {len(v.source.splitlines())}" for v in prj.variants)
            print(f"{name:<14} {len(prj.variants):>7} {banks:>5} {build_s:>8.2f} {compile_s:>9.2f} "
                  f"{size / 2**20:>11.2f} {nfiles:>5}  {lines}", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print("FAIL: a generated file does not compile" if failed else "PASS: every generated C++ file compiles")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
