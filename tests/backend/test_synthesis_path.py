"""The synthesis path of every emitted kernel file is plain C++14 against the vendor's API: g++ -std=c++14
-D__SYNTHESIS__ -pedantic-errors -fsyntax-only with include/synth (the vendor's ap_int.h, ap_fixed.h, hls_stream.h,
hls_streamofblocks.h, hls_math.h declared from UG1399) and include/ (streamdsl_rt.h) on the include path -- the
examples and the library's tiny layers of tests/emitted.py, each checked once per content (a cache keyed by the file's hash).

The declarations are checked too: their operator results have the widths UG1399 gives, and code the vendor's
library rejects (fixed-point arithmetic with a double, C++17, streamdsl's C-simulation API) fails the check."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from streamdsl.backend.hls.lint import synthesis_files
from streamdsl.backend.hls.project import CSIM_INCLUDE, INCLUDE, SYNTH_INCLUDE
from tests.emitted import all_projects, explored_w4a8

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="the synthesis-path check compiles with g++")
FLAGS = ["-std=c++14", "-D__SYNTHESIS__", "-pedantic-errors", "-fsyntax-only", "-Wall", "-Werror",
         "-Wno-unknown-pragmas", "-Wno-unused-label", f"-I{SYNTH_INCLUDE}", f"-I{INCLUDE}"]
CACHE = Path(os.environ.get("STREAMDSL_CACHE", Path.home() / ".cache" / "streamdsl")) / "synthesis-path"


def _headers() -> bytes:
    return b"".join(h.read_bytes() for h in sorted(INCLUDE.glob("*.h")) + sorted(SYNTH_INCLUDE.glob("*.h")))


def syntax_check(files: dict[str, str], tmp: Path) -> list[str]:
    """The g++ errors of each kernel source of ``files`` on the synthesis path (none: []); a source whose
    text, headers and flags passed before is not compiled again."""
    out = []
    for name in (n for n in files if n.endswith(".cpp")):
        key = hashlib.sha256(b"\0".join([" ".join(FLAGS).encode(), _headers()] + [
            f"{n}\0{t}".encode() for n, t in sorted(files.items())] + [name.encode()])).hexdigest()[:32]
        if (CACHE / key).exists():
            continue
        d = tmp / key
        d.mkdir(parents=True)
        for n, t in files.items():
            (d / n).write_text(t)
        r = subprocess.run([GXX, *FLAGS, str(d / name)], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            out.append(f"{name}:\n{r.stderr.strip()[:3000]}")
        else:
            CACHE.mkdir(parents=True, exist_ok=True)
            (CACHE / key).touch()
    return out


def test_every_emitted_kernel_file_is_cxx14_against_the_vendor_api(tmp_path):
    projects = {**all_projects(), "explored:gpt2-w4a8/decode_full": explored_w4a8()[1]}
    jobs = [(name, synthesis_files(prj.files), tmp_path / str(i)) for i, (name, prj) in enumerate(projects.items())]
    with ThreadPoolExecutor(2) as pool:
        errors = [f"{name}: {e}" for (name, _, _), errs in zip(jobs, pool.map(lambda j: syntax_check(*j[1:]), jobs))
                  for e in errs]
    assert not errors, "\n\n".join(errors[:5])


def check(tmp_path: Path, code: str, name: str = "k.cpp") -> subprocess.CompletedProcess:
    src = tmp_path / name
    src.write_text('#include "ap_int.h"\n#include "ap_fixed.h"\n#include "hls_stream.h"\n#include "hls_math.h"\n'
                   '#include "hls_streamofblocks.h"\n#include "streamdsl_rt.h"\n#include <type_traits>\n' + code)
    return subprocess.run([GXX, *FLAGS, str(src)], capture_output=True, text=True, timeout=120)


def test_the_declarations_give_the_vendor_result_types(tmp_path):
    r = check(tmp_path, """
static_assert(std::is_same<decltype(ap_int<8>() * ap_int<8>()), ap_int<16>>::value, "W1 + W2");
static_assert(std::is_same<decltype(ap_uint<4>() + ap_int<4>()), ap_int<6>>::value, "sum: one bit more");
static_assert(std::is_same<decltype(ap_int<4>() - ap_int<4>()), ap_int<5>>::value, "difference: signed");
static_assert(std::is_same<decltype(ap_int<4>() * 3), ap_int<36>>::value, "an int is ap_int<32>");
static_assert(std::is_same<decltype(ap_int<8>() * 0.5f), float>::value, "with a float: float");
static_assert(std::is_same<decltype(ap_fixed<8, 4>() * ap_fixed<8, 4>()), ap_fixed<16, 8>>::value, "fixed product");
static_assert(std::is_same<decltype(ap_fixed<8, 4>() + ap_fixed<6, 2>()), ap_fixed<9, 5>>::value, "fixed sum");
static_assert(std::is_same<decltype(hls::exp(1.0f)), float>::value, "float stays float");
static_assert(std::is_base_of<hls::stream<int>, hls::stream<int, 4>>::value, "a sized stream binds to stream<T>&");
typedef float blk[2][3];
static_assert(std::is_base_of<hls::stream_of_blocks<blk>, hls::stream_of_blocks<blk, 3>>::value, "and a sized PIPO");
void g(hls::stream_of_blocks<blk> &a, hls::stream_of_blocks<blk> &b) {  // a lock is used as the block it holds
  { hls::write_lock<blk> w(a); w[1][2] = 1.0f; }
  { hls::read_lock<blk> r(b); float x = r[1][2]; (void)x; }
}
void f(hls::stream<sd::beat<float, 4>> &s, sd::word &w) {
  w.range(31, 0) = 7ull;
  s.write(s.read());
  int x = sd::floordiv(ap_int<5>(-7), ap_int<5>(2)) + sd::max(1, 2) + sd::shl(ap_int<4>(1), 2);
  (void)x;
}
""")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("code, says", [
    ("ap_fixed<8, 4> f(ap_fixed<8, 4> x) { return x * 0.5; }", "ambiguous overload for 'operator*'"),
    ("int f(int x) { if constexpr (sizeof(int) == 4) return x; return 0; }", "only available with '-std=c++17'"),
    ("bool f() { return std::is_same_v<int, int>; }", "is_same_v"),
    ("void f() { hls::sim::run_dataflow([] {}); }", "'hls::sim' has not been declared"),
    ("void f(hls::stream<int> &s) { hls::stream<int> t = s; }", "deleted"),
    ("ap_uint<2048> wide;", "AP_INT_MAX_W"),
    ('#include "hls_streamofblocks.h"\ntypedef int b_t[4];\nvoid f() { hls::stream_of_blocks<b_t> s; '
     's.set_name("s"); }', "has no member named 'set_name'"),  # streamdsl's C-simulation extension
    ('#include "hls_streamofblocks.h"\ntypedef int b_t[4];\nvoid f(hls::stream_of_blocks<b_t> &s) { '
     'hls::stream_of_blocks<b_t> t = s; }', "deleted"),
])
def test_code_the_vendor_rejects_fails_the_check(tmp_path, code, says):
    r = check(tmp_path, code + "\n")
    assert r.returncode != 0 and says in r.stderr.replace("\u2018", "'").replace("\u2019", "'"), r.stderr


def test_the_c_simulation_headers_stay_off_the_synthesis_path(tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "hls_stream.h"\n')
    r = subprocess.run([GXX, "-std=c++14", "-D__SYNTHESIS__", "-fsyntax-only", f"-I{CSIM_INCLUDE}", str(src)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "keep it off the synthesis include path" in r.stderr
    r = subprocess.run([GXX, "-std=c++14", "-fsyntax-only", f"-I{SYNTH_INCLUDE}", str(src)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0 and "syntax check only" in r.stderr


def test_a_project_gives_synthesis_cxx14_and_only_streamdsl_rt_h(tmp_path):
    """run_hls.tcl compiles the kernel and the testbench as C++14 with include/ on the path; include/ holds
    streamdsl_rt.h alone, the C-simulation headers sit in include/csim (off every synthesis path)."""
    prj = all_projects()["vadd:vadd"]
    out = prj.write(tmp_path / "prj")
    tcl = (out / "run_hls.tcl").read_text()
    for src in (f"{prj.top}.cpp", f"tb_{prj.top}.cpp"):
        assert any(src in line and '-cflags "-std=c++14 -fwrapv -I[file normalize include]"' in line
                   for line in tcl.splitlines() if line.startswith("add_files")), src
    assert sorted(h.name for h in (out / "include").glob("*.h")) == ["streamdsl_rt.h"]
    assert sorted(h.name for h in (out / "include" / "csim").glob("*.h")) == ["ap_fixed.h", "ap_int.h", "hls_math.h",
                                                                              "hls_stream.h", "hls_streamofblocks.h"]
