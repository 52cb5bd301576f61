"""Every code block and command of the README runs as written, in a fresh copy of the checkout.

The checkout's tracked files are copied into a temporary folder with ``.venv`` linked to the environment these
tests run in (what ``sh scripts/setup.sh`` made), and there:

* each ``python`` block runs in a fresh interpreter as pasted; a block whose first line is
  ``# continues the kernel above`` (or another block named the same way) runs after the block before it;
* each line of a ``bash`` block runs in ``sh``, one after the other, in the copy.  Two commands are not run
  again: ``sh scripts/setup.sh [test]`` (it made the environment these tests run in; CI runs it, .ci/run)
  and ``.venv/bin/python -m pytest`` (these tests).

The quick start's demo (a minute, 0.5 GB of weight files in the temporary folder) runs beside the others.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
NOT_RERUN = (re.compile(r"^sh scripts/setup\.sh( test)?$"), re.compile(r"^\.venv/bin/python -m pytest$"))


def blocks() -> list[tuple[str, str, int]]:
    """(language, text, line of the opening fence) of every fenced block."""
    out, lines = [], README.read_text().splitlines()
    n = 0
    while n < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[n])
        if m and m.group(1):
            end = next(k for k in range(n + 1, len(lines)) if lines[k].startswith("```"))
            out.append((m.group(1), "\n".join(lines[n + 1:end]) + "\n", n + 1))
            n = end
        n += 1
    return out


def python_programs() -> list[tuple[str, int]]:
    """Each python block as the program it is pasted into: alone, or after the block it continues."""
    out: list[tuple[str, int]] = []
    for lang, text, line in blocks():
        if lang != "python":
            continue
        if text.startswith("# continues the ") and out:
            out.append((out[-1][0] + text, line))
        else:
            out.append((text, line))
    return out


def commands() -> list[tuple[str, int]]:
    """Every command of the bash blocks, split at ``&&``, with the README line it is on."""
    out = []
    for lang, text, line in blocks():
        if lang != "bash":
            continue
        for k, cmd in enumerate(text.splitlines()):
            out += [(part.strip(), line + 1 + k) for part in cmd.split(" && ") if part.strip()]
    return out


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A copy of the checkout's tracked files, its .venv the environment of these tests."""
    dst = tmp_path_factory.mktemp("readme")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dst / f)
    (dst / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    yield dst
    shutil.rmtree(dst)  # the demo's 0.5 GB of weight files do not outlive the test


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMDSL_PROGRESS", "STREAMDSL_TRACEBACK"))}
    return env | {"PYTHONDONTWRITEBYTECODE": "1"}


def _run(args, cwd: Path, what: str) -> str:
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=900, env=_env())
    assert r.returncode == 0, f"README {what} failed (exit {r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def test_the_readme_has_code_and_commands():
    assert len(python_programs()) >= 5 and len(commands()) >= 10
    assert all(not cmd.startswith("streamdsl ") for cmd, _ in commands())  # the venv path is spelled out


def test_every_readme_block_and_command_runs_in_a_fresh_checkout(fresh):
    """The demo of the quick start runs beside the rest: the python blocks, then the commands, in order."""
    demo = [(c, n) for c, n in commands() if "llm_demo.py" in c]
    rest = [(c, n) for c, n in commands() if "llm_demo.py" not in c]

    def run_commands(cmds) -> list[str]:
        outs = []
        for cmd, line in cmds:
            if any(p.match(cmd) for p in NOT_RERUN):
                assert (fresh / ".venv" / "bin" / "python").exists()  # what the set-up made
                continue
            outs.append(_run(["sh", "-c", cmd], fresh, f"command at line {line}: {cmd}"))
        return outs

    def run_python() -> None:
        for k, (program, line) in enumerate(python_programs()):
            work = fresh / f"python_block_{k}"
            work.mkdir()
            (work / "block.py").write_text(program)
            _run([str(fresh / ".venv" / "bin" / "python"), "block.py"], work, f"python block at line {line}")

    with ThreadPoolExecutor(max_workers=2) as pool:
        demo_out = pool.submit(run_commands, demo)
        pool.submit(run_python).result()
        outs = run_commands(rest)
        demo_out = demo_out.result()
    assert demo and demo_out[-1].rstrip().endswith("OK")  # the demo says Paris like the reference
    assert any(o.startswith("PASS ffn") for o in outs)  # csim of the built folder
    assert any("Paris" in o for o in outs)  # llm generate
    assert (fresh / "smollm2_accelerator_report" / "report.html").is_file() and (fresh / "c.npy").is_file()
