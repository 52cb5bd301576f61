"""The synthesizability lint: IR that Vitis would reject is refused with a located error."""
import pytest

import streamdsl as sd
from streamdsl.backend.hls import build
from streamdsl.backend.hls.lint import LintError

TRI = """kernel tri(A: f32[8, 8]) -> (f32[8, 8]) {
  alloc C: f32[8, 8] = 0.0:f32
  for i in range(0:i32, 8:i32, 1) {
    for j in range(0:i32, (i + 1:i32), 1) [unroll=0] {
      C[i, j] = A[i, j]
    }
  }
  return C
}
"""

BAD_II = TRI.replace("[unroll=0]", "[pipeline=0]")
BAD_PART = """kernel p(A: f32[8]) -> (f32[8]) {
  alloc C: f32[8] = 0.0:f32 [partition=((1, "cyclic", 16),)]
  for i in range(0:i32, 8:i32, 1) {
    C[i] = A[i]
  }
  return C
}
"""


@pytest.mark.parametrize("text,message,line", [
    (TRI, "loop 'j' is fully unrolled but its trip count is not a constant", 4),
    (BAD_II, "loop 'j' has pipeline II=0", 4),
    (BAD_PART, "partition factor 16 of 'C' exceeds its dimension", 2),
])
def test_lint_refuses_unsynthesizable_ir_at_its_line(text, message, line):
    k = sd.parse_ir(text, filename="<lint>")
    with pytest.raises(LintError) as err:
        build(k)
    assert message in err.value.message
    assert err.value.loc.line == line
    assert "<lint>:" in str(err.value) and "^" in str(err.value)


def test_lint_accepts_a_good_kernel():
    k = sd.parse_ir(TRI.replace(" [unroll=0]", " [pipeline=1]"))
    assert "pipeline II=1" in build(k).source
