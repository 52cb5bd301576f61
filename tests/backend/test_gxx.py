"""The one g++ build both C-simulations use (a kernel's testbench, an LLM project's generate kernel): cached by
the sources, the headers on its include path and the flags; a failed build leaves nothing in the cache."""
import subprocess

import pytest

from streamdsl.backend.hls import gxx
from streamdsl.backend.hls.gxx import CSimError, compiled

MAIN = '#include "answer.h"\n#include <cstdio>\nint main() { std::printf("%d\\n", ANSWER); return 0; }\n'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMDSL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def run(binary) -> str:
    return subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.strip()


def test_a_build_is_compiled_once_and_found_again(cache, tmp_path, monkeypatch):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "answer.h").write_text("#define ANSWER 42\n")
    files = {"main.cpp": MAIN, "sub/ignored.cpp": "this is not compiled: only the folder's top-level .cpp are"}
    first = compiled(files, ["-O1"], "the test program", "t", includes=(inc,))
    assert run(first) == "42" and first.is_relative_to(cache / "t")

    def no_gxx(*a, **k):
        raise AssertionError("g++ ran again for sources it has compiled")

    monkeypatch.setattr(gxx, "run_with_progress", no_gxx)
    assert compiled(dict(files), ["-O1"], "the test program", "t", includes=(inc,)) == first
    monkeypatch.undo()
    monkeypatch.setenv("STREAMDSL_CACHE", str(cache))
    (inc / "answer.h").write_text("#define ANSWER 7\n")  # a header on the include path is a source too
    again = compiled(files, ["-O1"], "the test program", "t", includes=(inc,))
    assert again != first and run(again) == "7" and run(first) == "42"
    other = compiled(files, ["-O2"], "the test program", "t", includes=(inc,))  # and so are the flags
    assert other not in (first, again)


def test_local_include_folders_are_on_the_path(cache):
    files = {"main.cpp": MAIN, "include/answer.h": "#define ANSWER 5\n"}
    assert run(compiled(files, [], "the test program", "t", local_includes=("include",))) == "5"


def test_a_failed_build_says_what_and_leaves_no_binary(cache):
    with pytest.raises(CSimError, match="g\\+\\+ could not compile the broken program:") as err:
        compiled({"main.cpp": "int main() { return missing; }"}, [], "the broken program", "t")
    assert "missing" in err.value.message
    assert not [p for p in cache.rglob("*") if p.is_file()]  # no half binary, no temporary folder left
