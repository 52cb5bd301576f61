"""The generated host's LM head on this machine: the loop of ``next_token()`` in library/llm/templates/host.cpp.j2
(cut out of the template, not copied), compiled with the generated Makefile's g++ flags and timed over a model's
VOCAB x HIDDEN table.  Prints ms a token and ns a multiply-add: the figure library/llm/e2e.py's HOST_NS_PER_MAC
states (the model prices the host's head with it).  Best of --reps runs; the machine's load shows in the figure.

    .venv/bin/python benchmarks/host_head.py [--vocab 50257 --hidden 1024 --reps 5]
"""
import argparse
import os
import re
import subprocess
import tempfile
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[1] / "library" / "llm" / "templates"
HARNESS = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
namespace {
int VOCAB, HIDDEN;
[[noreturn]] void die(const std::string &m) { std::fprintf(stderr, "%s\n", m.c_str()); std::exit(1); }
int head_argmax(const float *head, const std::vector<float> &n, FILE *logits) {
@LOOP@
}
}  // namespace
int main(int argc, char **argv) {
  VOCAB = std::atoi(argv[1]); HIDDEN = std::atoi(argv[2]); const int reps = std::atoi(argv[3]);
  std::vector<float> head(size_t(VOCAB) * HIDDEN), n(HIDDEN);
  for (size_t i = 0; i < head.size(); i++) head[i] = float(i % 1000) * 1e-3f;
  for (int i = 0; i < HIDDEN; i++) n[i] = float(i % 7) * 0.1f;
  double best = 1e30; long sink = 0;
  for (int r = 0; r < reps; r++) {
    auto t0 = std::chrono::steady_clock::now();
    sink += head_argmax(head.data(), n, nullptr);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%.3f %ld\n", best, sink);
}
"""


def head_loop() -> str:
    """The template's LM-head loop: from ``int best = 0;`` to ``return best;`` of ``next_token()``."""
    text = (TEMPLATE / "host.cpp.j2").read_text()
    m = re.search(r"^  int best = 0;\n.*?^  return best;\n", text, re.S | re.M)
    if m is None or "{{" in m.group(0) or "{%" in m.group(0):
        raise SystemExit("host_head: next_token()'s loop is not where this benchmark cuts it out; update it")
    return m.group(0)


def flags() -> list[str]:
    """The host's g++ flags from the generated Makefile (without the XRT include and link options)."""
    line = next(x for x in (TEMPLATE / "Makefile.j2").read_text().splitlines() if x.strip().startswith("g++"))
    return [f for f in line.split() if f.startswith(("-std", "-O", "-f"))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        src, exe = Path(d) / "head.cpp", Path(d) / "head"
        src.write_text(HARNESS.replace("@LOOP@", head_loop()))
        subprocess.run(["g++", *flags(), str(src), "-o", str(exe)], check=True)
        ms = float(subprocess.run([str(exe), str(a.vocab), str(a.hidden), str(a.reps)], check=True,
                                  capture_output=True, text=True).stdout.split()[0])
    macs = a.vocab * a.hidden
    print(f"g++ {' '.join(flags())}: {a.vocab} x {a.hidden} LM head, best of {a.reps}: {ms:.1f} ms a token, "
          f"{ms * 1e6 / macs:.3f} ns a multiply-add; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
