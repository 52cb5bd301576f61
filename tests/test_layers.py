"""The package's parts import only downward (tests/layers.py holds the map and the checker)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import streamdsl as sd
from tests.layers import LAYERS, layer_violations, public_use_violations

ROOT = Path(__file__).resolve().parent.parent
PKG = Path(sd.__file__).resolve().parent


def test_every_module_is_in_one_part_and_imports_only_downward():
    assert layer_violations(PKG) == []


def test_every_part_of_the_package_is_on_the_map():
    parts = {p.stem if p.is_file() else p.name for p in PKG.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    assert parts == {part for layer in LAYERS for part in layer}


def test_the_library_and_the_examples_use_public_names_only():
    files = sorted((ROOT / "library").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))
    assert public_use_violations(files, PKG) == []


def _plant(tmp_path: Path, rel: str, line: str) -> list[str]:
    copy = tmp_path / "streamdsl"
    shutil.copytree(PKG, copy, ignore=shutil.ignore_patterns("__pycache__"))
    f = copy / rel
    f.write_text(f.read_text() + f"\n\ndef _planted():\n    {line}\n")
    return layer_violations(copy)


def test_an_upward_import_inside_a_function_is_caught(tmp_path):
    found = _plant(tmp_path, "ir/nodes.py", "from ..backend import sim")
    assert any("ir/nodes.py" in p and "streamdsl.backend" in p and "a part above it" in p for p in found), found
    assert any("import cycle between parts" in p for p in found), found


def test_importing_the_face_from_below_it_is_caught(tmp_path):
    found = _plant(tmp_path, "dfg/lower.py", "from .. import __version__")
    assert any("dfg/lower.py" in p and "imports streamdsl/__init__" in p for p in found), found


def test_a_deep_import_from_the_library_is_caught(tmp_path):
    f = tmp_path / "user.py"
    f.write_text("from streamdsl.dfg.dfschedule import Placement\nfrom streamdsl.dfg import Placement as P\n")
    found = public_use_violations([f], PKG)
    assert len(found) == 1 and "streamdsl.dfg.dfschedule" in found[0], found


def test_import_streamdsl_loads_no_scipy_no_explorer_and_leaves_the_excepthook():
    code = ("import sys; hook = sys.excepthook; import streamdsl; "
            "assert 'scipy' not in sys.modules, 'scipy'; "
            "assert not any(m.startswith(('streamdsl.explore', 'streamdsl.perf', 'streamdsl.backend.hls', "
            "'streamdsl.htmlreport', 'streamdsl.library')) for m in sys.modules), sorted(sys.modules); "
            "assert sys.excepthook is hook")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_sd_llm_is_the_library_loaded_on_first_use():
    code = ("import sys, streamdsl as sd; assert 'streamdsl.library.llm' not in sys.modules; "
            "assert sd.llm.tiny('gpt2').family == 'gpt2' and sd.llm is sys.modules['streamdsl.library.llm']")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_no_public_name_shadows_a_subpackage():
    import importlib

    for name in ("schedule", "dataflow", "explore"):
        obj = getattr(sd, name)
        assert callable(obj)
        try:
            mod = importlib.import_module(f"streamdsl.{name}")
        except ModuleNotFoundError:
            continue
        assert mod is obj, f"streamdsl.{name} is both a function and a subpackage"
