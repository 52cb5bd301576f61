"""Every script (examples/, benchmarks/) parses its arguments: ``--help`` prints its usage and writes nothing.

(``python examples/llm_demo.py --help`` used to run the whole demo and write 514 MB into folders named
``--help`` and ``--help_report``.)
"""
from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(ROOT.glob("examples/*.py")) + sorted(ROOT.glob("benchmarks/*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[f"{p.parent.name}/{p.name}" for p in SCRIPTS])
def test_help_prints_usage_and_writes_nothing(path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(path), "--help"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith(f"usage: {path.name}"), out[:300]
    first = path.read_text().split('"""')[1].strip().splitlines()[0]
    assert " ".join(first.split()) in " ".join(out.split())  # the docstring is the description
    assert not any(tmp_path.iterdir())


def test_llm_demo_takes_its_output_folder(tmp_path):
    demo = runpy.run_path(str(ROOT / "examples" / "llm_demo.py"))
    assert demo["parse_args"]([str(tmp_path / "out")]).output == str(tmp_path / "out")
    assert demo["parse_args"]([]).output == "smollm2_accelerator"
    with pytest.raises(SystemExit):
        demo["parse_args"](["a", "b"])


def test_setup_sh_prints_its_usage(tmp_path):
    import subprocess

    setup = ROOT / "scripts" / "setup.sh"
    r = subprocess.run(["sh", str(setup), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith("usage: sh scripts/setup.sh [test]") and not any(tmp_path.iterdir())
    r = subprocess.run(["sh", str(setup), "tests"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "usage:" in r.stderr and not any(tmp_path.iterdir())
    assert setup.read_text().count('step "') >= 4  # every long step says what it does first
