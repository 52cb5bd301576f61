"""Hostile names and numbers in generated C++: every Python name C++ cannot take is spelled so it compiles.

Each kernel here puts names C++ reserves where the emitter writes them (the kernel, its parameters, locals,
loop variables, results, the testbench's own locals, a dataflow's edges and tasks); the test builds it,
C-simulates it with g++ and compares with the reference simulator, and checks that the user's names are kept
in the comment the generated function carries.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i32, i64
from streamdsl.backend.hls.names import Scope, mangle, reserved
from streamdsl.backend.text import comment, md_code
from streamdsl.backend.hls.project import INCLUDE
from streamdsl.dfg import dataflow

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
rng = np.random.default_rng(26)
V = rng.standard_normal(4).astype(np.float32)


@sd.kernel
def new(delete: f32[4], template: f32[4], register: f32[4], auto: f32[4]) -> f32[4]:
    default: f32[4] = 0.0
    union: f32 = 1.5
    for int in range(4):
        for double in range(1):
            switch: f32 = delete[int] * template[int]
            default[int] = switch + register[int] - auto[int] + union + double
    return default


@sd.kernel
def main(NULL: f32[4], INFINITY: f32[4], EOF: i32, this: f32[4]) -> f32[4]:
    case: f32[4] = 0.0
    for tmpnam in range(4):  # the loop's label would be L_tmpnam, a glibc macro
        case[tmpnam] = NULL[tmpnam] * INFINITY[tmpnam] + EOF - this[tmpnam]
    return case


@sd.kernel
def tb(dir: f32[4], argc: f32[4], result0: f32[4], flat: f32[4], raw: f32[4], tb: f32[4]) -> f32[4]:
    n: f32[4] = 0.0
    for argv in range(4):
        n[argv] = dir[argv] + argc[argv] * result0[argv] - flat[argv] + raw[argv] * tb[argv]
    return n


@sd.kernel
def twice(a: f32[4]) -> (f32[4], f32[4]):
    out0: f32[4] = 0.0
    for i in range(4):
        out0[i] = a[i] * 2.0
    return a, out0


@sd.kernel
def read_file(x: f32[4]) -> f32[4]:
    y: f32[4] = 0.0
    for i in range(4):
        y[i] = x[i] + 1.0
    return y


@sd.kernel
def write_file(café: f32[4], __x: f32[4], _Y: f32[4]) -> f32[4]:
    y = read_file(café)
    z: f32[4] = 0.0
    for i in range(4):
        z[i] = y[i] * __x[i] + _Y[i]
    return z


CASES = [(new, (V, V * 2, V + 1, V - 3)), (main, (V, V + 2, np.int32(3), V)), (tb, (V,) * 6), (twice, (V,)),
         (write_file, (V, V + 1, V * 3))]


@needs_gxx
@pytest.mark.parametrize("kernel,args", CASES, ids=[k.fn.__name__ for k, _ in CASES])
def test_reserved_names_compile_and_match_the_simulator(kernel, args):
    prj = sd.schedule(kernel).build("hls")
    got, want = prj.csim(*args), kernel(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)
    # the user's names that C++ spells differently are named next to the function (twice keeps its names)
    renamed = [line for line in prj.source.splitlines() if line.startswith("// C++ names of Python names:")]
    assert bool(renamed) == (kernel is not twice), prj.source


def test_the_comment_names_the_users_names():
    src = sd.schedule(new).build("hls").source
    assert "// C++ names of Python names: new -> new_, delete -> delete_, template -> template_, register -> " \
           "register_, auto -> auto_, default -> default_, union -> union_, int -> int_, double -> double_, " \
           "switch -> switch_\nvoid new_(const float delete_[4], const float template_[4]" in src
    assert sd.schedule(twice).build("hls").files["twice.h"].count("out0") == 2  # out0 and out0_2, not twice out0


def test_a_kernel_named_new_names_its_files_after_its_cxx_name():
    prj = sd.schedule(new).build("hls")
    assert prj.top == "new_" and {"new_.cpp", "new_.h", "tb_new_.cpp"} <= set(prj.files)
    assert "set_top new_" in prj.files["run_hls.tcl"]


@pytest.mark.parametrize("name", ["new", "delete", "template", "register", "auto", "default", "union", "int",
                                  "double", "switch", "case", "this", "main", "NULL", "INFINITY", "EOF", "errno",
                                  "stdin", "size_t", "int32_t", "sd", "hls", "std", "L_tmpnam", "__x", "_Tag"])
def test_mangle_never_returns_a_reserved_name(name):
    m = mangle(name)
    assert m != name and m not in reserved() and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", m)
    assert "__" not in m and not re.match(r"_[A-Z]", m)


def test_a_scope_keeps_names_apart():
    s = Scope()
    assert s.user("out0") == "out0" and s.fresh("out0") == "out0_2" and s.user("out0") == "out0"
    assert s.user("new") == "new_" and s.user("new_") == "new_2"
    inner = Scope(s)
    assert inner.user("out0") == "out0_3" and inner.fresh("step") == "step"


@needs_gxx
def test_reserved_list_covers_every_macro_of_the_included_headers(tmp_path):
    """Every macro g++ defines for the headers generated code includes is reserved (or reserved by rule)."""
    headers = ["chrono", "cmath", "cstdint", "cstdio", "cstdlib", "cstring", "string", "utility", "vector",
               "hls_stream.h", "hls_streamofblocks.h", "ap_int.h", "ap_fixed.h", "hls_math.h", "streamdsl_rt.h"]
    src = tmp_path / "all.cpp"
    src.write_text("".join(f"#include <{h}>\n" if "." not in h else f'#include "{h}"\n' for h in headers))
    macros = set()
    for flags in (["-std=c++17", "-pthread", f"-I{INCLUDE / 'csim'}"],  # C-simulation
                  ["-std=c++14", "-D__SYNTHESIS__", f"-I{INCLUDE / 'synth'}"]):  # the synthesis path's declarations
        out = subprocess.run(["g++", *flags, "-dM", "-E", f"-I{INCLUDE}", str(src)],
                             capture_output=True, text=True, check=True).stdout
        macros |= {line.split()[1].split("(")[0] for line in out.splitlines() if line.startswith("#define")}
    missing = sorted(m for m in macros if mangle(m) == m and m not in reserved())
    assert not missing, f"add to streamdsl/backend/hls/reserved.txt: {missing}"


# ------------------------------------------------------------------------------------- numerics
def make_divmod(dt):
    @sd.kernel
    def divmod_(a: dt[4], b: dt[4]) -> (dt[4], dt[4]):
        q: dt[4] = 0
        r: dt[4] = 0
        for i in range(4):
            q[i] = a[i] // b[i]
            r[i] = a[i] % b[i]
        return q, r

    divmod_.fn.__name__ = f"divmod_{dt}"
    return divmod_


divmod32, divmod64 = make_divmod(i32), make_divmod(i64)


@needs_gxx
@pytest.mark.parametrize("kernel,dt", [(divmod32, np.int32), (divmod64, np.int64)])
def test_int_min_divided_by_minus_one_wraps_as_the_simulator_says(kernel, dt):
    lo = np.iinfo(dt).min
    a, b = np.array([lo, lo, 7, -7], dt), np.array([-1, 0, -1, 2], dt)
    q, r = kernel(a, b)
    assert q[0] == lo and r[0] == 0 and q[1] == 0 and r[1] == 0  # the simulator's definition
    got = sd.schedule(kernel).build("hls").csim(a, b)  # was SIGFPE
    np.testing.assert_array_equal(got[0], q)
    np.testing.assert_array_equal(got[1], r)


# -------------------------------------------------------------------------------------- dataflow
@sd.kernel
def load_x(t: f32[4, 4]) -> f32[4, 4]:
    step: f32[4, 4] = 0.0
    for p, e0 in sd.grid(4, 4):
        step[p, e0] = t[p, e0] * 2.0
    return step


@sd.kernel
def task_load_x_1(s_t: f32[4, 4], moved_t: f32[4, 4]) -> f32[4, 4]:
    at: f32[4, 4] = 0.0
    for b, q in sd.grid(4, 4):
        at[b, q] = s_t[b, q] + moved_t[b, q]
    return at


@dataflow
def delete(x: f32[4, 4], t: f32[4, 4]) -> f32[4, 4]:
    p = load_x(x)
    NULL = task_load_x_1(p, t)
    return NULL


@needs_gxx
def test_a_dataflow_whose_names_clash_with_the_generated_ones():
    x, t = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(2))
    g = sd.schedule(delete)
    g.fuse(*g.tasks())
    g.size_fifos()
    prj = g.build("hls")
    np.testing.assert_array_equal(prj.csim(x, t), delete(x, t))
    assert prj.top == "delete_" and "void delete_(" in prj.source


# ------------------------------------------------------------------------------ text around names
@pytest.mark.parametrize("text", ["k\n#error boom.py", "a\\", "x??/", "tab\tand\rcr", "end\\\n"])
def test_comment_text_cannot_leave_its_line(text):
    c = comment(text)
    assert "\n" not in c and "\r" not in c and not c.endswith("\\") and "??" not in c


def test_md_code_fences_backticks():
    assert md_code("a`b") == "``a`b``" and md_code("`x") == "`` `x ``" and "\n" not in md_code("a\nb")


@needs_gxx
def test_a_source_path_with_a_newline_stays_in_its_comment(tmp_path, monkeypatch):
    import runpy

    path = tmp_path / "k\n#error boom.py"
    path.write_text("import streamdsl as sd\nfrom streamdsl import f32\n\n\n@sd.kernel\n"
                    "def add1(a: f32[4]) -> f32[4]:\n    b: f32[4] = 0.0\n    for i in range(4):\n"
                    "        b[i] = a[i] + 1.0\n    return b\n")
    monkeypatch.chdir(tmp_path)
    k = runpy.run_path(path.name)["add1"]
    prj = sd.schedule(k).build("hls")
    for name, text in prj.files.items():
        assert not any(line.lstrip().startswith("#error") for line in text.splitlines()), name
    assert "k\\n#error boom.py" in prj.files["add1.cpp"] and "k\\n#error boom.py" in prj.files["README.md"]
    np.testing.assert_array_equal(prj.csim(V), k(V))
