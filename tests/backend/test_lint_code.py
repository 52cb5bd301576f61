"""The synthesizability lint of emitted C++ (streamdsl/backend/hls/lint.py): one test per rule, each on a file
holding the defect the rule was written for (issue 21's audit of the emitted C++), and what the rule lets pass.

Each finding names its rule, the generated file and the line; the tests check all three."""
from __future__ import annotations

import re

import pytest

from streamdsl.backend.hls.lint import PRICED_WIDE, CodeLintError, expected, lint_code, lint_headers, lint_project
from tests.emitted import explored_w4a8

HEAD = '#include "k.h"\n'


def findings(cpp: str, rule: str) -> list[CodeLintError]:
    """What ``rule`` finds in a kernel file k.cpp (the testbench beside it is C++17 and not its business)."""
    return lint_code({"k.cpp": HEAD + cpp, "tb_k.cpp": "int main() { if constexpr (true) {} }\n"}, rules=(rule,))


def line_of(cpp: str, text: str) -> int:
    """The line of ``text`` in the file lint_code saw (HEAD first)."""
    return (HEAD + cpp).split("\n").index(next(x for x in (HEAD + cpp).split("\n") if text in x)) + 1


def region(decls: str, calls: str, name: str = "k_region0") -> str:
    return f"static void {name}() {{\n  #pragma HLS dataflow\n{decls}{calls}}}\n"


# ------------------------------------------------------------------------------------- stream-width
WIDE = """static void load_w(hls::stream<sd::token<ap_int<4>, 4194304>> &s_w) {}
static void task_l(hls::stream<sd::token<ap_int<4>, 4194304>> &s_w) {}
""" + region("  hls::stream<sd::token<ap_int<4>, 4194304>, 2> s_w(\"w\");\n  #pragma HLS stream variable=s_w depth=2\n",
             "  load_w(s_w);\n  task_l(s_w);\n")


def test_stream_width_catches_a_whole_weight_tensor_as_one_token():
    (e,) = findings(WIDE, "stream-width")
    assert e.rule == "stream-width" and e.loc.file == "k.cpp" and e.loc.line == line_of(WIDE, "s_w(")
    assert "stream 's_w' carries sd::token<ap_int<4>, 4194304>: 16,777,216 bits a token, over the 512-bit bus" \
        in e.message
    assert "[stream-width]" in str(e) and "k.cpp:" in str(e) and "^" in str(e)  # the generated line, underlined


@pytest.mark.parametrize("decl, ok", [
    ("hls::stream<sd::beat<float, 16>> s_a;", True),  # 512 bits: a bus word
    ("hls::stream<sd::beat<ap_int<4>, 128>, 4> s_a[4];", True),  # four lanes of 512 bits
    ("hls::stream<ap_uint<512>> s_a;", True),
    ("hls::stream<sd::beat<float, 32>> s_a;", False),  # 1,024 bits ...
    (f"// {PRICED_WIDE}\n  hls::stream<sd::beat<float, 32>> s_a;", True),  # ... unless the model priced it
    (f"// {PRICED_WIDE}\n  hls::stream<sd::beat<float, 64>> s_a;", False),  # never over 1,024
    ("hls::stream<blk_t, 2> s_a;", False),  # a struct: its members' widths
    ("hls::stream<sd::token<ap_fixed<12, 4>, 42>> s_a;", True),  # 504 bits
    ("hls::stream<bus_t> s_a;", True),  # a typedef
    ("hls::stream<wide_t> s_a;", False),
])
def test_stream_width_reads_the_element_type(decl, ok):
    cpp = "struct blk_t {\n  float v[4][8];\n};\ntypedef ap_uint<512> bus_t;\nusing wide_t = sd::beat<float, 64>;\n" \
        + region(f"  {decl}\n", "")
    got = findings(cpp, "stream-width")
    assert (not got) == ok, [e.message for e in got]
    if not ok:
        assert got[0].loc.line == line_of(cpp, "s_a")


# ------------------------------------------------------------------------------------ strided-m_axi
COLUMN = """static void load_wqkv(const ap_int<4> wqkv[3072][1024], hls::stream<sd::token<ap_int<4>, 3072>> &s_wqkv) {
  L_load_wqkv: for (int p = 0; p < 1024; p++) {
    sd::token<ap_int<4>, 3072> t;
    for (int e0 = 0; e0 < 3072; e0++) {
      for (int e1 = 0; e1 < 1; e1++) {
        #pragma HLS pipeline II=1
        t.v[e0 * 1 + e1] = wqkv[e0][((p) % 1024) + e1];
      }
    }
    s_wqkv.write(t);
  }
}
static void k_region0(const ap_int<4> wqkv[3072][1024]) {
  #pragma HLS dataflow
  hls::stream<sd::token<ap_int<4>, 3072>, 2> s_wqkv("wqkv");
  load_wqkv(wqkv, s_wqkv);
}
void k(const ap_int<4> wqkv[3072][1024]) {
  #pragma HLS interface mode=m_axi port=wqkv offset=slave bundle=gmem0 depth=3145728 max_widen_bitwidth=512
  k_region0(wqkv);
}
"""


def test_strided_m_axi_catches_a_weight_dma_that_reads_a_column_at_a_time():
    (e,) = findings(COLUMN, "strided-m_axi")
    assert e.loc.line == line_of(COLUMN, "= wqkv[e0]") and e.loc.col == (HEAD + COLUMN).split("\n")[e.loc.line - 1].index("wqkv")
    assert "m_axi array 'wqkv' is read at wqkv[e0][((p) % 1024) + e1] inside the pipelined loop" in e.message
    assert "moves with 'e0'" in e.message and "cannot burst" in e.message  # the one-trip pipeline pipelines e0


def test_strided_m_axi_catches_a_whole_token_copy_in_a_pipeline():
    cpp = COLUMN.replace("""    for (int e0 = 0; e0 < 3072; e0++) {
      for (int e1 = 0; e1 < 1; e1++) {
        #pragma HLS pipeline II=1
        t.v[e0 * 1 + e1] = wqkv[e0][((p) % 1024) + e1];
      }
    }""", """    #pragma HLS pipeline II=1
    for (int e0 = 0; e0 < 3072; e0++) {
      #pragma HLS unroll
      t.v[e0] = wqkv[(p * 3072) + e0];
    }""").replace("wqkv[3072][1024]", "wqkv[3145728]")
    (e,) = findings(cpp, "strided-m_axi")
    assert "loop 'e0', unrolled inside the pipeline, moves a whole tile each iteration" in e.message


@pytest.mark.parametrize("body", [
    "for (int e1 = 0; e1 < 1024; e1++) {\n#pragma HLS pipeline II=1\nt.v[e1] = wqkv[p][e1];\n}",  # a row, in order
    "for (int e1 = 0; e1 < 1024; e1++) {\n#pragma HLS pipeline II=1\nt.v[e1] = wqkv[p % 3][(p / 3) * 8 + e1];\n}",
    "for (int e1 = 0; e1 < 1024; e1++) {\nt.v[e1] = wqkv[e1][p];\n}",  # a column, but not pipelined
])
def test_strided_m_axi_lets_sequential_reads_pass(body):
    cpp = COLUMN.replace("""    for (int e0 = 0; e0 < 3072; e0++) {
      for (int e1 = 0; e1 < 1; e1++) {
        #pragma HLS pipeline II=1
        t.v[e0 * 1 + e1] = wqkv[e0][((p) % 1024) + e1];
      }
    }""", body)
    assert findings(cpp, "strided-m_axi") == []


def test_strided_m_axi_follows_the_port_through_the_calls():
    # the same load, but the top names its port 'w' and the region passes it on: still the m_axi array
    cpp = COLUMN.replace("void k(const ap_int<4> wqkv[3072][1024]) {", "void k(const ap_int<4> w[3072][1024]) {") \
        .replace("port=wqkv", "port=w").replace("k_region0(wqkv);\n}\n", "k_region0(w);\n}\n")
    assert [e.rule for e in findings(cpp, "strided-m_axi")] == ["strided-m_axi"]
    assert findings(cpp.replace("mode=m_axi", "mode=s_axilite"), "strided-m_axi") == []  # not an m_axi port


WORDS = """static void load_w(const sd::word *w, const sd::word *w_1, hls::stream<sd::beat<float, 16>> &s_w,
                   hls::stream<sd::beat<float, 16>> &s_w_1) {
  L_load_w: for (int i = 0; i < 64; i++) {
    #pragma HLS pipeline II=1
    s_w.write(sd::word_beat<float, 16, 32>(w[((0) * 128 + (i) * 2 + 0) / 2]));
    s_w_1.write(sd::word_beat<float, 16, 32>(w_1[((0) * 128 + (i) * 2 + 1) / 2]));
  }
}
static void store_k(hls::stream<sd::beat<float, 16>> &s_k, sd::word *k, int pos) {
  const int at = pos < 0 ? 0 : (pos > 7 ? 7 : pos);
  L_store_k: for (int i = 0; i < 4; i++) {
    #pragma HLS pipeline II=1
    const int slot = (((i)) * 8 + (((at) % 8) * 16) / 16) * 16;
    k[slot / 16] = sd::beat_word<float, 16, 32>(s_k.read());
  }
}
void k(const sd::word *w, const sd::word *w_1, sd::word *kc, int pos) {
  #pragma HLS interface mode=m_axi port=w offset=slave bundle=gmem0
  #pragma HLS interface mode=m_axi port=w_1 offset=slave bundle=gmem1
  #pragma HLS interface mode=m_axi port=kc offset=slave bundle=gmem2
  load_w(w, w_1, s_w, s_w_1);
  store_k(s_k, kc, pos);
}
"""


def test_strided_m_axi_computes_the_index_of_bus_words_over_several_ports():
    """Words of a tensor split over two ports (lane l reads words l, l + 2, ...) walk each port in order; new
    K rows written a head apart (a local computed from the iteration and an invariant) do not."""
    (e,) = findings(WORDS, "strided-m_axi")
    assert e.loc.line == line_of(WORDS, "k[slot / 16] =")
    assert "m_axi array 'k' is written at k[slot / 16]" in e.message and "steps by 8" in e.message


# -------------------------------------------------------------------------------------------- cxx17
RT_OLD = """template <typename T> constexpr bool is_signed_builtin = std::is_integral<T>::value;
template <typename T> inline T floordiv(T a, T b) {
  if constexpr (is_signed_builtin<T>) {
    if (b == T(-1)) return T(0);
  }
  return a / b;
}
"""


def test_cxx17_catches_if_constexpr_in_the_synthesis_path():
    (e,) = findings(RT_OLD, "cxx17")
    assert e.loc.line == line_of(RT_OLD, "if constexpr") and "`if constexpr` is C++17" in e.message


@pytest.mark.parametrize("code, what", [
    ("bool f() { return std::is_same_v<int, long>; }", "a `std::..._v` type trait"),
    ("int f() { auto [a, b] = pair(); return a; }", "a structured binding"),
    ("inline constexpr int kLanes = 16;", "an `inline` variable"),
    ("template <class... T> int f(T... t) { return (t + ...); }", "a fold expression"),
    ("namespace sd::detail { int x; }", "a nested namespace definition"),
    ("[[nodiscard]] int f();", "a C++17 attribute"),
])
def test_cxx17_names_each_construct(code, what):
    (e,) = findings(code + "\n", "cxx17")
    assert e.message.startswith(what) and e.loc.line == 2


def test_cxx17_reads_only_the_synthesis_path():
    assert findings("#ifndef __SYNTHESIS__\n" + RT_OLD + "#endif\n", "cxx17") == []
    assert findings("// if constexpr (x)\nconst char *s = \"if constexpr\";\n", "cxx17") == []  # comments, strings
    assert len(findings("#ifdef __SYNTHESIS__\n" + RT_OLD + "#endif\n", "cxx17")) == 1


def test_the_headers_synthesis_side_is_cxx14():
    assert lint_headers() == []


# ---------------------------------------------------------------------------- one-writer-reader
PROCS = """static void load_x(const float x[4], hls::stream<float> &s_x) { s_x.write(x[0]); }
static void copy(hls::stream<float> &a, hls::stream<float> &b) { b.write(a.read()); }
static void store_y(hls::stream<float> &s_y, float y[4]) { y[0] = s_y.read(); }
static void both(hls::stream<float> &s) { s.write(1.0f); s.read(); }
"""


def test_one_writer_reader_catches_a_second_writer():
    cpp = PROCS + region("  hls::stream<float> s_x;\n  hls::stream<float> s_y;\n",
                         "  load_x(x, s_x);\n  copy(s_x, s_y);\n  load_x(x, s_y);\n  store_y(s_y, y);\n")
    (e,) = findings(cpp, "one-writer-reader")
    assert e.loc.line == line_of(cpp, "  load_x(x, s_y)")
    assert "stream 's_y' of region 'k_region0' has a second writer: 'load_x' writes it after 'copy'" in e.message


def test_one_writer_reader_catches_a_stream_no_process_reads_and_one_that_reads_its_own():
    cpp = PROCS + region("  hls::stream<float> s_x;\n  hls::stream<float> s_z;\n", "  load_x(x, s_x);\n  both(s_z);\n")
    got = {(e.loc.line, e.message.split(":")[0]) for e in findings(cpp, "one-writer-reader")}
    assert (line_of(cpp, "s_x;"), "stream 's_x' of region 'k_region0' has no reader") in got
    assert any(m.startswith("process 'both' both writes and reads stream 's_z'") for _, m in got)


def test_one_writer_reader_follows_a_bundle_and_lanes_of_an_array_of_streams():
    procs = PROCS + """static void lane(hls::stream<sd::beat<float, 16>> &s) { s.write(sd::beat<float, 16>()); }
static void lanes(hls::stream<sd::beat<float, 16>> s[2]) { s[0].read(); s[1].read(); }
static void bundle(const float x[4], hls::stream<float> &s_x) { load_x(x, s_x); }
"""
    decls = "  hls::stream<float> s_x;\n  hls::stream<float> s_y;\n  hls::stream<sd::beat<float, 16>> s_b[2];\n"
    ok = procs + region(decls, "  bundle(x, s_x);\n  copy(s_x, s_y);\n  store_y(s_y, y);\n"
                               "  lane(s_b[0]);\n  lane(s_b[1]);\n  lanes(s_b);\n")
    assert findings(ok, "one-writer-reader") == []
    bad = ok.replace("lane(s_b[1]);", "lane(s_b[0]);")
    (e,) = findings(bad, "one-writer-reader")
    assert "stream 's_b' of region 'k_region0' has a second writer" in e.message


# A layout converter's ping-pong buffer: UG1399's stream of blocks, filled under write_locks, read under read_locks
BLOCKS = """typedef float blk_t[8][8];
static void fill(hls::stream<float> &a, hls::stream_of_blocks<blk_t> &buf) {
  hls::write_lock<blk_t> b(buf);
  b[0][0] = a.read();
}
static void drain(hls::stream_of_blocks<blk_t> &buf, hls::stream<float> &c) {
  hls::read_lock<blk_t> b(buf);
  c.write(b[0][0]);
}
"""
PIPO = "  hls::stream<float> s_x;\n  hls::stream<float> s_y;\n  hls::stream_of_blocks<blk_t, 2> buf;\n"


def test_a_stream_of_blocks_is_memory_and_a_fifo_of_blocks_is_too_wide():
    """A stream of blocks is a PIPO (two memories of a block each), no FIFO: stream-width lets it pass; an
    hls::stream of the same 2,048-bit blocks (the converter buffer before issue 21's fix) is a FIFO token over the
    bus, whether the block is a struct or an array typedef."""
    ok = PROCS + BLOCKS + region(PIPO, "  load_x(x, s_x);\n  fill(s_x, buf);\n  drain(buf, s_y);\n  store_y(s_y, y);\n")
    for rule in ("stream-width", "one-writer-reader", "canonical-order"):
        assert findings(ok, rule) == [], rule
    for block in ("struct blk_s {\n  float v[8][8];\n};\n", "typedef float blk_s[8][8];\n"):
        fifo = block + region("  hls::stream<blk_s, 2> buf(\"b\");\n", "")
        (e,) = findings(fifo, "stream-width")
        assert e.loc.line == line_of(fifo, "buf(") and "2,048 bits a token, over the 512-bit bus" in e.message


def test_one_writer_reader_reads_the_locks_of_a_stream_of_blocks():
    """The process taking write_locks on a stream of blocks writes it, the one taking read_locks reads it."""
    decls = PIPO + "  hls::stream<float> s_z;\n"
    bad = PROCS + BLOCKS + region(decls, "  load_x(x, s_x);\n  load_x(x, s_z);\n  fill(s_x, buf);\n  fill(s_z, buf);\n"
                                         "  drain(buf, s_y);\n  store_y(s_y, y);\n")
    (e,) = findings(bad, "one-writer-reader")
    assert e.loc.line == line_of(bad, "  fill(s_z, buf)")
    assert "stream 'buf' of region 'k_region0' has a second writer: 'fill' writes it after 'fill'" in e.message
    early = PROCS + BLOCKS + region(PIPO, "  load_x(x, s_x);\n  drain(buf, s_y);\n  fill(s_x, buf);\n  store_y(s_y, y);\n")
    (e,) = findings(early, "canonical-order")
    assert "calls 'drain', which reads stream 'buf', before its writer 'fill'" in e.message


# ------------------------------------------------------------------------------ canonical-order
def test_canonical_order_catches_a_task_called_before_the_load_that_feeds_it():
    cpp = PROCS + region("  hls::stream<float> s_x;\n  hls::stream<float> s_y;\n",
                         "  copy(s_x, s_y);\n  load_x(x, s_x);\n  store_y(s_y, y);\n")
    got = findings(cpp, "canonical-order")
    assert got and got[0].loc.line == line_of(cpp, "  copy(s_x, s_y)")
    assert "calls 'copy', which reads stream 's_x', before its writer 'load_x'" in got[0].message
    assert any("calls the load 'load_x' after 'copy'" in e.message for e in got)


def test_canonical_order_wants_the_stores_last():
    cpp = PROCS + region("  hls::stream<float> s_x;\n  hls::stream<float> s_y;\n  hls::stream<float> s_z;\n",
                         "  load_x(x, s_x);\n  load_x(x, s_z);\n  store_y(s_z, y);\n  copy(s_x, s_y);\n"
                         "  store_y(s_y, y);\n")
    (e,) = findings(cpp, "canonical-order")
    assert e.loc.line == line_of(cpp, "  store_y(s_z, y)")
    assert "calls the store 'store_y' before 'copy'" in e.message


def test_canonical_order_passes_producers_first():
    cpp = PROCS + region("  hls::stream<float> s_x;\n  hls::stream<float> s_y;\n",
                         "  load_x(x, s_x);\n  copy(s_x, s_y);\n  store_y(s_y, y);\n")
    assert findings(cpp, "canonical-order") == [] and findings(cpp, "one-writer-reader") == []


# ------------------------------------------------------------------------------------------ pragmas
def test_pragmas_catches_a_bind_op_the_text_leaves_out():
    """The explored W4A8 layer binds operators (its linears' multiplies to DSPs, or float adds to the fabric, as
    the exploration chose); a task without those bind_op pragmas (the dataflow emitter's step loops before issue
    21) is a finding at the loop that binds them."""
    _ex, prj = explored_w4a8()
    cpp = prj.files[f"{prj.top}.cpp"]
    assert lint_code(prj.files, expected(prj), rules=("pragmas",)) == []
    op, impl = re.search(r"#pragma HLS bind_op variable=\w+ op=(\w+) impl=(\w+)", cpp).groups()
    stripped = re.sub(rf"\n *#pragma HLS bind_op [^\n]*op={op} impl={impl}", "", cpp)
    assert stripped != cpp
    got = [e for e in lint_code({**prj.files, f"{prj.top}.cpp": stripped}, expected(prj), rules=("pragmas",))
           if e.check is None]
    assert got and all(f"binds its {op} operators to {impl}, but no '#pragma HLS bind_op ... op={op} impl={impl}'"
                       in e.message for e in got)
    e = got[0]
    assert e.loc.file == f"{prj.top}.cpp" and stripped.split("\n")[e.loc.line - 1].lstrip().startswith("L_")


def test_pragmas_catches_a_missing_pipeline_and_a_fifo_of_another_depth():
    _ex, prj = explored_w4a8()
    cpp = prj.files[f"{prj.top}.cpp"]
    m = re.search(r"#pragma HLS stream variable=(\w+) depth=(\d+)", cpp)
    text = cpp.replace(m.group(0), f"#pragma HLS stream variable={m.group(1)} depth={int(m.group(2)) + 1}")
    # a loop of a kernel's IR (not a DMA's, a stream move's or a converter's, which the emitter adds)
    piped = re.search(r"\n( *L_(?!load|store|get|put|fill|drain|fork|bundle)\w+: for [^\n]*\n) *#pragma HLS pipeline II=1\n",
                      text)
    text = text.replace(piped.group(0), "\n" + piped.group(1))
    got = [e for e in lint_code({**prj.files, f"{prj.top}.cpp": text}, expected(prj), rules=("pragmas",))
           if e.check is None]
    assert any(f"stream '{m.group(1)}' has no '#pragma HLS stream variable={m.group(1)} depth={m.group(2)}'" in e.message
               for e in got)
    assert any("has no '#pragma HLS pipeline II=1'" in e.message and
               e.loc.line == text[:text.index(piped.group(1))].count("\n") + 1 for e in got)


def test_a_project_lints_itself():
    _ex, prj = explored_w4a8()
    with pytest.raises(CodeLintError) as err:
        lint_project(prj)
    # the new K and V rows go to one row per head of the head-major caches: a word a head, not a burst
    assert err.value.rule == "strided-m_axi" and err.value.loc.file == f"{prj.top}.cpp"
    assert "k[" in err.value.message and "not by one" in err.value.message
