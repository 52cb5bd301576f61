"""The README's line-buffered convolution runs as written: its schedule on the simulator and in C-simulation
give the kernel's own result."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from peers_util import needs_gxx

README = Path(__file__).resolve().parents[2] / "README.md"


def _snippet() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    (block,) = [b for b in blocks if "reuse_at" in b]
    return block


@needs_gxx
def test_the_readme_conv2d_with_reuse_at_runs(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "readme_conv2d.py"  # kernels need a source file
    path.write_text("import streamdsl as sd\nfrom streamdsl import f32\n\n" + _snippet())
    env = {"A": rng.random((34, 34)).astype(np.float32), "F": rng.random((3, 3)).astype(np.float32)}
    code = compile(path.read_text(), str(path), "exec")
    exec(code, env)  # noqa: S102 - the README's own code, asserting what it shows
    s = env["s"]
    assert "alloc A_line: f32[3, 34]" in str(s) and "alloc A_window: f32[3, 3]" in str(s)
    assert "#pragma HLS pipeline II=1" in s.build("hls").source
