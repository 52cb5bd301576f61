"""The vendor-free HLS C-simulation headers (streamdsl/backend/include/csim) against
Python-computed expectations.

Each test writes a small C++ program, compiles it with g++ (-Wall -Werror) and
compares what it prints with values computed here with exact integer /
Fraction arithmetic.
"""
from __future__ import annotations

import math
import random
import shutil
import struct
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

INCLUDE = Path(__file__).resolve().parents[2] / "streamdsl" / "backend" / "include" / "csim"
GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

PRELUDE = """
#include "ap_int.h"
#include "ap_fixed.h"
#include "hls_stream.h"
#include "hls_math.h"
#include <cstdio>
#include <iomanip>
#include <iostream>
"""


# The csim build (backend/hls/project.py) uses -O2 -fwrapv; at -O2 g++ runs
# extra flow-sensitive warnings (-Warray-bounds), so some tests use both.
PROJECT_FLAGS = ("-O2", "-fwrapv", "-Wno-unknown-pragmas", "-Wno-unused-label")


def build(tmp_path: Path, body: str, name: str = "prog", flags=("-O1",)) -> Path:
    src = tmp_path / f"{name}.cpp"
    src.write_text(PRELUDE + body)
    exe = tmp_path / name
    cmd = [GXX, "-std=c++17", "-Wall", "-Werror", *flags, "-pthread", f"-I{INCLUDE}", str(src), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"compile failed:\n{r.stderr}"
    return exe


def run(exe: Path, *args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:  # a hang is a failure, never a skip
        pytest.fail(f"{exe.name} did not finish within {timeout} s (hang / undetected deadlock)")


def run_ok(tmp_path: Path, body: str, flags=("-O1",)) -> list[str]:
    r = run(build(tmp_path, body, flags=flags))
    assert r.returncode == 0, f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r.stdout.split()


def wrap(v: int, w: int, signed: bool) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if signed and v >> (w - 1) else v


def cpp_list(xs) -> str:
    return "{" + ", ".join(str(x) for x in xs) + "}"


def cpp_doubles(xs) -> str:
    return "{" + ", ".join(repr(float(x)) for x in xs) + "}"


# ------------------------------------------------------------------ ap_int / ap_uint
def test_ap_int5_add_mul_wrap_all_pairs(tmp_path):
    out = run_ok(tmp_path, """
int main() {
  for (int x = -16; x < 16; ++x)
    for (int y = -16; y < 16; ++y) {
      ap_int<5> a = x, b = y;
      ap_int<5> s = a + b, p = a * b;
      ap_int<5> c = a; c += b;
      ap_int<5> d = a; d *= b;
      std::cout << s << " " << p << " " << c << " " << d << "\\n";
    }
}""")
    want = []
    for x in range(-16, 16):
        for y in range(-16, 16):
            s, p = wrap(x + y, 5, True), wrap(x * y, 5, True)
            want += [str(s), str(p), str(s), str(p)]
    assert out == want


def test_ap_uint7_subtraction_underflow(tmp_path):
    out = run_ok(tmp_path, """
int main() {
  for (int x = 0; x < 128; x += 3)
    for (int y = 0; y < 128; y += 5) {
      ap_uint<7> a = x, b = y;
      ap_uint<7> d = a - b;
      ap_uint<7> e = a; e -= b;
      ap_uint<7> f = a; --f;
      // a - b is signed (as in Vitis): it is negative exactly when a < b.
      std::cout << d << " " << e << " " << f << " " << ((a - b) < 0) << "\\n";
    }
}""")
    want = []
    for x in range(0, 128, 3):
        for y in range(0, 128, 5):
            want += [str((x - y) % 128), str((x - y) % 128), str((x - 1) % 128), str(int(x < y))]
    assert out == want


def test_ap_int12_signed_multiply_wrap(tmp_path):
    rng = random.Random(12)
    xs = [rng.randrange(-2048, 2048) for _ in range(300)] + [-2048, 2047, -1, 0, 64, -64]
    ys = [rng.randrange(-2048, 2048) for _ in range(300)] + [-2048, 2047, -2048, 5, 64, 64]
    out = run_ok(tmp_path, f"""
int main() {{
  const int xs[] = {cpp_list(xs)}, ys[] = {cpp_list(ys)};
  for (unsigned i = 0; i < sizeof(xs) / sizeof(xs[0]); ++i) {{
    ap_int<12> a = xs[i], b = ys[i];
    ap_int<12> p = a * b;
    ap_int<24> wide = a * b;  // the product itself is not truncated before the cast
    std::cout << p << " " << wide << "\\n";
  }}
}}""")
    want = []
    for x, y in zip(xs, ys):
        want += [str(wrap(x * y, 12, True)), str(wrap(x * y, 24, True))]
    assert out == want


def test_mixed_signedness_comparisons_and_division(tmp_path):
    out = run_ok(tmp_path, """
int main() {
  ap_uint<8> big = 200; ap_int<8> m1 = -1; ap_uint<8> six = 6; ap_int<8> mtwo = -2;
  ap_int<8> q = six / mtwo, r = ap_int<8>(-7) % ap_int<8>(2);
  std::cout << (big > -1) << (m1 < big) << (big == 200) << (m1 == -1) << (big < 100u) << " "
            << q << " " << r << " " << ap_int<16>(-ap_uint<8>(5)) << "\\n";
}""")
    assert out == ["11110", "-3", "-1", "-5"]


def test_conversion_from_float_truncates_toward_zero_and_wraps(tmp_path):
    vals = [-3.7, 3.7, -0.5, 0.5, 0.0, 127.9, 128.5, -128.9, -129.2, 300.25, -300.75, 1e10, -1e10, 2.0**40 + 0.5]
    out = run_ok(tmp_path, f"""
int main() {{
  const double v[] = {cpp_doubles(vals)};
  for (double d : v) {{
    ap_int<8> a = d; ap_uint<8> b = d; ap_int<40> c = d; ap_uint<8> f = (float)d;
    std::cout << a << " " << b << " " << c << " " << f << "\\n";
  }}
}}""")
    want = []
    for d in vals:
        t = int(d)  # Python int() truncates toward zero, like a C cast
        tf = int(struct.unpack("f", struct.pack("f", d))[0])  # via (float)d
        want += [str(wrap(t, 8, True)), str(wrap(t, 8, False)), str(wrap(t, 40, True)), str(wrap(tf, 8, False))]
    assert out == want


def test_bit_select_and_range(tmp_path):
    out = run_ok(tmp_path, """
int main() {
  ap_uint<16> x = 0xABCD;
  for (int i = 0; i < 16; ++i) std::cout << x[i];
  std::cout << " " << x.range(11, 4) << " " << x(15, 12).to_uint() << "\\n";
  x.range(7, 0) = 0x12;  // replace the low byte
  x[15] = 0;
  x[0] = true;
  ap_uint<8> hi = x.range(15, 8);
  std::cout << x << " " << hi << "\\n";
  ap_int<12> n = -5;
  ap_int<8> s = 0;
  s[7] = 1;  // setting the sign bit makes it negative
  ap_int<12> m = n;
  m.range(11, 8) = 0;
  std::cout << n.range(11, 0) << " " << n[11] << " " << s << " " << m << " " << n.range(3, 0) << "\\n";
}""")
    x = 0xABCD
    bits = "".join(str((x >> i) & 1) for i in range(16))
    y = ((x & ~0xFF) | 0x12) & 0x7FFF | 1
    n12 = (-5) % 4096
    assert out == [bits, str((x >> 4) & 0xFF), str(x >> 12), str(y), str(y >> 8),
                   str(n12), "1", "-128", str(n12 & 0xFF), str(n12 & 0xF)]


@pytest.mark.parametrize("flags", [("-O1",), PROJECT_FLAGS], ids=["O1", "project-flags"])
def test_ap_uint512_pack_and_unpack(tmp_path, flags):
    rng = random.Random(512)
    words = [rng.randrange(1 << 32) for _ in range(16)]
    packed = sum(w << (32 * i) for i, w in enumerate(words))
    out = run_ok(tmp_path, f"""
// A constant top-word range once tripped g++ -O2 -fwrapv -Warray-bounds.
ap_uint<512> top_word(unsigned x) {{ ap_uint<512> w = 0; w.range(511, 480) = x; return w; }}
int main() {{
  const unsigned v[16] = {cpp_list(words)};
  ap_uint<512> bus = 0;
  for (int i = 0; i < 16; ++i) bus.range(32 * i + 31, 32 * i) = v[i];
  ap_uint<512> copy = bus;
  std::cout << bus << "\\n" << (copy == bus) << (copy == ap_uint<512>(0)) << (bus != 0) << "\\n";
  for (int i = 0; i < 16; ++i) std::cout << copy.range(32 * i + 31, 32 * i).to_uint() << " ";
  uint64_t straddle = bus.range(100, 37);           // 64 bits across a word boundary
  ap_uint<32> w3 = bus.range(127, 96);
  ap_uint<200> mid = bus.range(299, 100);           // wider than 64 bits
  copy.range(100, 37) = 0;
  std::cout << "\\n" << straddle << " " << w3 << " " << mid << " " << copy << " " << (top_word(v[15]) >> 480) << "\\n";
}}""", flags=flags)
    mask = lambda n: (1 << n) - 1  # noqa: E731
    cleared = packed & ~(mask(64) << 37)
    assert out == [str(packed), "101"] + [str(w) for w in words] + [
        str((packed >> 37) & mask(64)), str(words[3]), str((packed >> 100) & mask(200)), str(cleared), str(words[15])]


# ------------------------------------------------------------------ ap_fixed / ap_ufixed
def fx_raw(v: Fraction, w: int, i: int, signed: bool) -> int:
    """AP_TRN / AP_WRAP quantisation of an exact value: raw integer."""
    return wrap(math.floor(v * (1 << (w - i))), w, signed)


def g17(x: float) -> str:
    return "%.17g" % x


def fx(v, w=16, i=8, signed=True) -> str:
    """The value the C++ side prints with %.17g (exact for these widths)."""
    return g17(fx_raw(Fraction(v), w, i, signed) / (1 << (w - i)))


def test_ap_fixed16_8_truncation_and_wrap(tmp_path):
    vals = [-1.3, -0.001, -0.00390625, -127.99, -128.0, -128.01, 127.999, 128.0, 200.5, -200.5, 1.3, 3.14159]
    pairs = [(-1.3, 2.7), (-3.5, -0.75), (100.25, 2.0), (-7.9, 3.1), (1.0, 3.0), (-1.0, 3.0), (5.5, -0.3)]
    out = run_ok(tmp_path, f"""
void p(double x) {{ std::printf("%.17g ", x); }}
int main() {{
  const double v[] = {cpp_doubles(vals)};
  for (double d : v) {{ ap_fixed<16, 8> x = d; p(x.to_double()); std::printf("%d ", x.to_int()); }}
  const double a[] = {cpp_doubles([x for x, _ in pairs])}, b[] = {cpp_doubles([y for _, y in pairs])};
  for (int i = 0; i < {len(pairs)}; ++i) {{
    ap_fixed<16, 8> x = a[i], y = b[i];
    ap_fixed<16, 8> s = x + y, d = x - y, m = x * y, q = x / y;
    ap_fixed<16, 8> acc = x; acc *= y; acc += 1; acc -= 0.25;
    p(s.to_double()); p(d.to_double()); p(m.to_double()); p(q.to_double()); p(acc.to_double());
    std::printf("%d%d%d ", x < y, x == x, x > -1);
  }}
  std::printf("\\n");
}}""")
    want = []
    for d in vals:
        v = Fraction(fx(d))
        want += [fx(d), str(int(v))]  # int(): toward zero
    for a, b in pairs:
        x, y = Fraction(fx(a)), Fraction(fx(b))
        acc = Fraction(fx(Fraction(fx(x * y)) + 1)) - Fraction(1, 4)
        q = Fraction(math.trunc(x / y * 256), 256)  # Vitis: (Vx << F2) / Vy, toward zero, on x's grid
        want += [fx(x + y), fx(x - y), fx(x * y), fx(q), fx(acc), f"{int(x < y)}1{int(x > -1)}"]
    assert out == want


def test_ap_ufixed_and_rounding_saturation_modes(tmp_path):
    vals = [3.3, -0.5, 15.96875, 16.0, 17.25, 0.03, -3.3, 2.53125, -2.53125, 7.96875, -8.5, 0.09375, -0.09375]
    out = run_ok(tmp_path, f"""
void p(double x) {{ std::printf("%.17g ", x); }}
int main() {{
  const double v[] = {cpp_doubles(vals)};
  for (double d : v) {{
    ap_ufixed<8, 4> u = d;
    ap_fixed<8, 4, AP_RND, AP_SAT> r = d;
    ap_fixed<8, 4, AP_RND_CONV, AP_WRAP> c = d;
    ap_ufixed<8, 4, AP_TRN, AP_SAT> us = d;
    p(u.to_double()); p(r.to_double()); p(c.to_double()); p(us.to_double());
  }}
  std::printf("\\n");
}}""")

    def rnd_sat(v: Fraction) -> float:  # AP_RND: round half toward +inf; AP_SAT: clamp
        raw = math.floor(v * 16 + Fraction(1, 2))
        return min(max(raw, -128), 127) / 16

    def conv_wrap(v: Fraction) -> float:  # AP_RND_CONV: round half to even (Python round)
        return wrap(round(v * 16), 8, True) / 16

    def trn_usat(v: Fraction) -> float:
        return min(max(math.floor(v * 16), 0), 255) / 16

    want = []
    for d in vals:
        v = Fraction(d)
        want += [fx(d, 8, 4, False), g17(rnd_sat(v)), g17(conv_wrap(v)), g17(trn_usat(v))]
    assert out == want


# ------------------------------------------------------------------ hls::stream
def test_stream_fifo_order_and_nonblocking(tmp_path):
    out = run_ok(tmp_path, """
int main() {
  hls::stream<int> s("s");
  for (int i = 0; i < 10; ++i) s << i * i;
  int x; s >> x;
  std::cout << x << " " << s.read() << " " << s.size() << s.empty() << s.full() << " ";
  int y;
  while (s.read_nb(y)) std::cout << y << " ";
  std::cout << s.read_nb(y) << s.empty() << " ";
  hls::stream<ap_uint<7>> b("b");
  b.set_depth(2);
  std::cout << b.write_nb(3) << b.write_nb(4) << b.write_nb(5) << b.full() << " " << b.read() << b.read() << "\\n";
}""")
    assert out == ["0", "1", "800"] + [str(i * i) for i in range(2, 10)] + ["01", "1101", "34"]


def test_dataflow_producer_consumer_depth2(tmp_path):
    out = run_ok(tmp_path, """
int main() {
  hls::stream<ap_int<20>> data("data");
  hls::stream<long> result("result");
  data.set_depth(2);
  hls::sim::run_dataflow({
    [&] { for (int i = 0; i < 1000; ++i) data.write(i * 7 - 3000); },
    [&] {
      long sum = 0, prev = -100000, ordered = 1, maxfill = 0;
      for (int i = 0; i < 1000; ++i) {
        maxfill = std::max<long>(maxfill, (long)data.size());
        long v = data.read();
        ordered &= (v == i * 7 - 3000) && v > prev;
        prev = v; sum += v;
      }
      result.write(sum); result.write(ordered); result.write(maxfill);
    },
  });
  std::cout << result.read() << " " << result.read() << " " << (result.read() <= 2) << "\\n";
}""")
    assert out == [str(sum(i * 7 - 3000 for i in range(1000))), "1", "1"]


def test_dataflow_deadlock_is_reported(tmp_path):
    exe = build(tmp_path, """
int main() {
  hls::stream<int> ping("ping"), pong("pong");
  hls::sim::run_dataflow({
    [&] { int x = ping.read(); pong.write(x + 1); },   // each reads the other's output first
    [&] { int y = pong.read(); ping.write(y + 1); },
  });
  std::printf("not reached\\n");
}""")
    r = run(exe, timeout=20)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "streamdsl csim: deadlock" in r.stderr
    assert "'ping' blocked on read (empty)" in r.stderr and "'pong' blocked on read (empty)" in r.stderr
    assert "not reached" not in r.stdout


def test_dataflow_deadlock_on_full_stream_and_on_finish(tmp_path):
    # Producer blocks on a full depth-1 stream that the consumer never reads
    # because it waits for a stream nobody writes; and a consumer that wants
    # more data than was produced is reported when the producer finishes.
    exe = build(tmp_path, """
#include <cstring>
int main(int argc, char** argv) {
  hls::stream<int> narrow("narrow"), never("never");
  narrow.set_depth(1);
  if (argc > 1 && !std::strcmp(argv[1], "starve")) {
    hls::sim::run_dataflow({[&] { narrow.write(1); }, [&] { narrow.read(); narrow.read(); }});
  } else {
    hls::sim::run_dataflow({[&] { narrow.write(1); narrow.write(2); }, [&] { never.read(); }});
  }
}""")
    r = run(exe, timeout=20)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "'narrow' blocked on write (full)" in r.stderr and "'never' blocked on read (empty)" in r.stderr
    r2 = run(exe, "starve")  # the starved consumer is reported
    assert r2.returncode == 3 and "deadlock: 'narrow' blocked on read (empty)" in r2.stderr, r2.stderr


def test_no_false_deadlock_in_deep_depth1_pipeline(tmp_path):
    # Many short-lived blocks/wakeups across a chain with a nested dataflow:
    # an inexact detector would eventually report a deadlock here.
    out = run_ok(tmp_path, """
int main() {
  long total = 0;
  for (int rep = 0; rep < 20; ++rep) {
    const int K = 5, N = 300;
    hls::stream<int> s[K + 1];
    for (auto& x : s) x.set_depth(1);
    std::vector<std::function<void()>> ps;
    ps.push_back([&] { for (int i = 0; i < N; ++i) s[0].write(i); });
    for (int k = 0; k < K; ++k)
      ps.push_back([&, k] {
        if (k == 2) {
          hls::stream<int> mid("mid"); mid.set_depth(1);
          hls::sim::run_dataflow({[&] { for (int i = 0; i < N; ++i) mid.write(s[k].read() + 1); },
                                  [&] { for (int i = 0; i < N; ++i) s[k + 1].write(mid.read()); }});
        } else {
          for (int i = 0; i < N; ++i) s[k + 1].write(s[k].read() + 1);
        }
      });
    ps.push_back([&] { for (int i = 0; i < N; ++i) total += s[K].read(); });
    hls::sim::run_dataflow(ps);
  }
  std::cout << total << "\\n";
}""")
    assert out == [str(20 * (sum(range(300)) + 300 * 5))]


def test_single_threaded_read_from_empty_stream_errors(tmp_path):
    exe = build(tmp_path, """
int main() {
  hls::stream<int> lonely("lonely");
  lonely.write(1);
  std::printf("first %d\\n", lonely.read());
  std::fflush(stdout);
  int x = lonely.read();  // nothing can ever write it: must not hang
  std::printf("not reached %d\\n", x);
}""")
    r = run(exe, timeout=20)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "read from empty stream 'lonely'" in r.stderr
    assert "first 1" in r.stdout and "not reached" not in r.stdout


# ------------------------------------------------------------------ hls::stream_of_blocks
BLOCKS = """
#include "hls_streamofblocks.h"
typedef int blk[4][3];
"""


def test_stream_of_blocks_hands_blocks_over_in_order_and_holds_depth_blocks(tmp_path):
    """The producer fills each block under a write_lock, the consumer reads them under read_locks in the same
    order; at most DEPTH blocks are taken at once (the consumer's and the producer's included)."""
    out = run_ok(tmp_path, BLOCKS + """
int main() {
  hls::stream_of_blocks<blk, 3> s;  // binds to stream_of_blocks<blk>& (as in Vitis)
  hls::stream_of_blocks<blk>& ref = s;
  std::atomic<int> filled{0}, read{0};
  int most = 0, bad = 0;
  long sum = 0;
  hls::sim::run_dataflow({
    [&] { for (int k = 0; k < 200; ++k) {
            hls::write_lock<blk> b(ref);
            most = std::max(most, filled.load() - read.load() + 1);  // taken (at least): filled, unread, and this
            for (int i = 0; i < 4; ++i) for (int j = 0; j < 3; ++j) b[i][j] = k * 12 + i * 3 + j;
            ++filled;
          } },
    [&] { for (int k = 0; k < 200; ++k) {
            hls::read_lock<blk> b(ref);
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 3; ++j) { bad += b[i][j] != k * 12 + i * 3 + j; sum += b[i][j]; }
            ++read;
          } },
  });
  std::cout << sum << " " << bad << " " << (most <= 3) << " " << s.empty() << s.full() << "\\n";
}""")
    assert out == [str(sum(range(2400))), "0", "1", "10"]


def test_a_deadlock_through_a_lock_is_reported(tmp_path):
    """A producer blocked on a write_lock (both blocks taken) and a consumer blocked on a stream that only the
    producer would write after it: every process waits, and the report names the lock and the stream."""
    exe = build(tmp_path, BLOCKS + """
int main(int argc, char** argv) {
  hls::stream_of_blocks<blk> buf;
  buf.set_name("buf");
  hls::stream<int> done("done");
  if (argc > 1) {  // a consumer that wants a block nobody fills
    hls::sim::run_dataflow({[&] { hls::write_lock<blk> b(buf); b[0][0] = 1; },
                            [&] { for (int k = 0; k < 2; ++k) { hls::read_lock<blk> b(buf); } }});
  }
  hls::sim::run_dataflow({
    [&] { for (int k = 0; k < 3; ++k) { hls::write_lock<blk> b(buf); b[0][0] = k; } done.write(1); },
    [&] { done.read(); hls::read_lock<blk> b(buf); },
  });
  std::printf("not reached\\n");
}""")
    r = run(exe, timeout=20)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "streamdsl csim: deadlock: " in r.stderr
    assert "'buf' blocked on write_lock (all 2 blocks taken)" in r.stderr
    assert "'done' blocked on read (empty)" in r.stderr and "not reached" not in r.stdout
    r2 = run(exe, "starve")  # a read_lock no block will ever fill is reported
    assert r2.returncode == 3 and "deadlock: 'buf' blocked on read_lock (no block filled)" in r2.stderr, r2.stderr


def test_a_lock_outside_a_dataflow_that_can_never_be_granted_stops(tmp_path):
    exe = build(tmp_path, BLOCKS + """
#include <cstring>
int main(int argc, char** argv) {
  hls::stream_of_blocks<blk> buf;
  buf.set_name("buf");
  if (argc > 1 && !std::strcmp(argv[1], "nested")) {
    hls::write_lock<blk> a(buf);
    hls::write_lock<blk> b(buf);  // UG1399: no nested locks
  }
  { hls::write_lock<blk> b(buf); b[1][2] = 7; }
  { hls::read_lock<blk> b(buf); std::printf("got %d\\n", b[1][2]); std::fflush(stdout); }
  hls::read_lock<blk> never(buf);  // nothing can fill it: must not hang
  std::printf("not reached\\n");
}""")
    r = run(exe, timeout=20)
    assert r.returncode == 3 and "got 7" in r.stdout and "not reached" not in r.stdout, (r.stdout, r.stderr)
    assert "stream of blocks 'buf': read_lock with no block filled, outside a dataflow region" in r.stderr
    r2 = run(exe, "nested")
    assert r2.returncode == 3 and "write_lock of stream of blocks 'buf' taken again" in r2.stderr, r2.stderr


# ------------------------------------------------------------------ hls_math
def test_hls_math_matches_python(tmp_path):
    xs = [0.1, 0.5, 1.0, 2.5, 7.25]
    unary = {
        "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "rsqrt": lambda v: 1 / math.sqrt(v),
        "tanh": math.tanh, "erf": math.erf, "sin": math.sin, "cos": math.cos, "fabs": abs,
        "floor": math.floor, "ceil": math.ceil, "recip": lambda v: 1 / v,
        "round": lambda v: math.copysign(math.floor(abs(v) + 0.5), v),  # halfway away from zero
    }
    lines = []
    for name in unary:
        lines.append(f'for (double x : xs) {{ p(hls::{name}(x)); p(hls::{name}((float)x)); p(hls::{name}(-x)); }}')
    out = run_ok(tmp_path, f"""
void p(double x) {{ std::printf("%.17g ", x); }}
int main() {{
  const double xs[] = {cpp_doubles(xs)};
  {chr(10).join(lines)}
  p(hls::pow(2.0, 0.5)); p(hls::pow(1.5f, 3.0f)); p(hls::abs(-2.5)); p(hls::abs(-7)); p(hls::abs(ap_int<8>(-9)));
  p(hls::fmax(1.5, -2.0)); p(hls::fmin(1.5f, -2.0f)); p(hls::max(3, 8)); p(hls::min(-1.5, 2.0));
  p(hls::exp(ap_fixed<16, 8>(0.5)).to_double()); p(hls::sqrt(ap_ufixed<16, 4>(2.0)).to_double());
  p(hls::max(ap_fixed<16, 8>(-1.25), 0).to_double()); p(hls::sqrt(9)); p(hls::exp(ap_int<8>(2)));
  std::printf("\\n");
}}""")
    got = [float(t) for t in out]
    want, tol = [], []
    for name, fn in unary.items():
        for x in xs:
            for v, t in ((x, 1e-15), (x, 1e-6), (-x, 1e-15)):
                if name in ("log", "sqrt", "rsqrt") and v < 0:
                    want.append(math.nan)
                else:
                    want.append(float(fn(v)))
                tol.append(t)
    want += [2 ** 0.5, 3.375, 2.5, 7, 9, 1.5, -2.0, 8, -1.5,
             math.floor(math.exp(0.5) * 256) / 256, math.floor(math.sqrt(2.0) * 4096) / 4096,
             0.0, 3.0, math.exp(2)]
    tol += [1e-15] * 14
    assert len(got) == len(want)
    for i, (g, w, t) in enumerate(zip(got, want, tol)):
        if math.isnan(w):
            assert math.isnan(g), (i, g)
        else:
            assert math.isclose(g, w, rel_tol=t, abs_tol=t), (i, g, w)
