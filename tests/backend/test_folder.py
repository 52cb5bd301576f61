"""A build never touches a file or a link target it did not write; a bad output path is a located error.

Each case fingerprints the user's files (sha256 of every file under a folder, and where every link points)
before the build and checks that nothing changed after it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

import streamdsl as sd
from streamdsl import f32
from streamdsl.backend.folder import MANIFEST, OutputFolder, OutputFolderError, plain_parts


@sd.kernel
def scale(x: f32[4]) -> f32[4]:
    y: f32[4] = 0.0
    for i in range(4):
        y[i] = x[i] * 2.0
    return y


def fingerprint(root: Path) -> dict[str, str]:
    """Every path under ``root`` -> the sha256 of its bytes, or where a link points (links are not followed)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "-> " + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def build(out, overwrite=False):
    return sd.schedule(scale).build("hls", output=out, overwrite=overwrite)  # @build


def located(err) -> None:
    assert err.loc is not None and err.loc.file == __file__, err
    assert "@build" in open(__file__).read().splitlines()[err.loc.line - 1]


def test_a_folder_holding_only_the_users_include_is_refused_even_with_overwrite(tmp_path):
    out = tmp_path / "prj"
    (out / "include").mkdir(parents=True)
    (out / "include" / "ap_int.h").write_text("// the user's own ap_int.h\n")
    before = fingerprint(tmp_path)
    with pytest.raises(OutputFolderError, match="holds files streamdsl did not write: include") as err:
        build(out)
    located(err.value)
    with pytest.raises(OutputFolderError, match="include' exists and streamdsl did not write it") as err:
        build(out, overwrite=True)
    located(err.value)
    assert fingerprint(tmp_path) == before


def test_a_rebuild_never_writes_through_a_link_into_the_users_folder(tmp_path):
    out, mine = tmp_path / "prj", tmp_path / "my_headers"
    build(out)
    mine.mkdir()
    (mine / "ap_int.h").write_text("// mine\n")
    (mine / "scale.cpp").write_text("// also mine\n")
    for sub in ("include", "data"):  # the build's own folders, replaced by links to the user's
        shutil.rmtree(out / sub)
        (out / sub).symlink_to(mine, target_is_directory=True)
    (out / "scale.cpp").unlink()
    (out / "scale.cpp").symlink_to(mine / "scale.cpp")  # a listed file replaced by a link
    before = fingerprint(tmp_path)
    for overwrite in (False, True):
        with pytest.raises(OutputFolderError, match="is a symbolic link streamdsl did not make") as err:
            build(out, overwrite=overwrite)
        located(err.value)
    assert fingerprint(tmp_path) == before


def test_overwrite_writes_beside_the_users_files_and_replaces_only_its_own(tmp_path):
    out = tmp_path / "prj"
    build(out)
    (out / "notes.txt").write_text("mine\n")
    (out / "scale.cpp").write_text("// edited\n")  # listed in the manifest: the build's to replace
    keep = fingerprint(tmp_path)["prj/notes.txt"]
    with pytest.raises(OutputFolderError, match="notes.txt"):
        build(out)
    build(out, overwrite=True)
    assert fingerprint(tmp_path)["prj/notes.txt"] == keep and "// edited" not in (out / "scale.cpp").read_text()
    owned = (out / MANIFEST).read_text().splitlines()
    assert "include/csim/ap_int.h" in owned and "notes.txt" not in owned


def test_output_paths_that_cannot_be_folders_are_located_errors(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    before = fingerprint(tmp_path)
    for out, why in [(afile, "is a file, not a folder"), (afile / "sub" / "prj", "cannot be made: '.*afile' is a file"),
                     (Path("/proc/streamdsl-no/prj"), "cannot")]:
        with pytest.raises(OutputFolderError, match=why) as err:
            build(out)
        located(err.value)
    assert fingerprint(tmp_path) == before


def test_a_refused_build_writes_nothing(tmp_path):
    out = tmp_path / "prj"
    out.mkdir()
    (out / "run_hls.tcl").write_text("# mine\n")  # a path the build wants, not listed as its own
    with pytest.raises(OutputFolderError, match="run_hls.tcl' exists and streamdsl did not write it"):
        build(out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["run_hls.tcl"]


@pytest.mark.parametrize("rel", ["../x", "/etc/passwd", "a/../b", "", ".", "a\\b", "c:/x", "x\0y"])
def test_only_plain_relative_paths_are_project_paths(rel):
    assert plain_parts(rel) is None


def test_a_manifest_that_is_a_link_is_refused(tmp_path):
    out = tmp_path / "prj"
    out.mkdir()
    (tmp_path / "elsewhere").write_text("scale.cpp\n")
    (out / MANIFEST).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OutputFolderError, match="symbolic link"):
        OutputFolder(out).write({"a.txt": "x"})
    assert (tmp_path / "elsewhere").read_text() == "scale.cpp\n"
