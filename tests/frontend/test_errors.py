"""What a user sees when a kernel is wrong.

The corpus in ``bad_kernels/`` holds small user programs with one mistake
each.  The line with the mistake carries a marker comment::

    C[i] = A[i]  # EXPECT shape error: tensor 'A' has rank 2

Each program runs as a subprocess (``sys.executable file.py`` in a temporary
directory), exactly as a user would run it, and its stderr must show: the
error kind and message, ``file.py:LINE:`` with the marked line, that source
line with a caret line under it, a ``= hint:`` line, and a traceback that
contains only the user's own frames.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import streamdsl as sd

CORPUS = Path(__file__).parent / "bad_kernels"
CASES = sorted(p.name for p in CORPUS.glob("*.py"))
MARKER = re.compile(r"#\s*EXPECT\s+(syntax error|type error|shape error):\s*(.+?)\s*$")
CLASS_OF_KIND = {"syntax error": "KernelSyntaxError", "type error": "KernelTypeError", "shape error": "ShapeError"}
PKG_DIR = str(Path(sd.__file__).resolve().parent)


def expectation(name: str):
    """(line number, kind, message) of the one marked line in a corpus file."""
    marks = []
    for n, text in enumerate((CORPUS / name).read_text().splitlines(), 1):
        m = MARKER.search(text)
        if m:
            marks.append((n, m.group(1), m.group(2)))
    assert len(marks) == 1, f"{name}: expected exactly one '# EXPECT <kind>: <message>' marker, found {len(marks)}"
    return marks[0]


def run_user_file(path: Path, **env) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "STREAMDSL_TRACEBACK"}
    full_env.update(env)
    return subprocess.run([sys.executable, path.name], cwd=path.parent, capture_output=True, text=True,
                          env=full_env, timeout=120)


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("user_programs")
    for name in CASES:
        shutil.copy(CORPUS / name, d / name)
    return d


@pytest.fixture(scope="module")
def results(user_dir):
    """Run every corpus program once (in parallel) and keep its CompletedProcess."""
    with ThreadPoolExecutor(max_workers=min(16, (os.cpu_count() or 2) * 2)) as pool:
        procs = list(pool.map(lambda n: run_user_file(user_dir / n), CASES))
    return dict(zip(CASES, procs))


def test_corpus_is_large_enough():
    assert len(CASES) >= 30
    kinds = {expectation(n)[1] for n in CASES}
    assert kinds == set(CLASS_OF_KIND)


@pytest.mark.parametrize("name", CASES)
def test_user_sees_located_diagnostic(name, results, user_dir):
    line, kind, message = expectation(name)
    proc = results[name]
    err = proc.stderr
    user_file = str(user_dir / name)
    context = f"\n--- stderr of {name} ---\n{err}"

    assert proc.returncode != 0, context
    # the error class and its kind + message
    # (the echoed source line holds the EXPECT comment, so look at the exception line only)
    head = re.findall(r"^streamdsl\.errors\.(\w+): (.*)$", err, re.M)
    assert len(head) == 1, context
    assert head[0][0] == CLASS_OF_KIND[kind], context
    assert head[0][1].startswith(f"{kind}: {message}"), context
    # the location: the user's file and the exact line
    loc = re.search(r"^  --> (.+):(\d+):(\d+)$", err, re.M)
    assert loc is not None, context
    assert loc.group(1) == user_file and int(loc.group(2)) == line, context
    col = int(loc.group(3)) - 1
    # the source line, then a caret line under it
    src_text = (user_dir / name).read_text().splitlines()[line - 1]
    lines = err.splitlines()
    src_idx = next((i for i, t in enumerate(lines) if re.fullmatch(rf"\s*{line} \| " + re.escape(src_text), t)), None)
    assert src_idx is not None, context
    caret = lines[src_idx + 1]
    m = re.fullmatch(r"(\s*\| )( *)(\^+)", caret)
    assert m is not None, context
    assert len(m.group(2)) == col, context
    assert col + len(m.group(3)) <= len(src_text), context
    assert src_text[col:col + len(m.group(3))].strip(), context  # the caret points at code, not at blanks
    # a hint
    assert re.search(r"^   = hint: \S", err, re.M), context
    # the traceback shows only the user's frames
    frames = re.findall(r'^  File "([^"]+)", line (\d+)', err, re.M)
    assert frames, context
    assert all(f == user_file for f, _ in frames), context
    assert "/streamdsl/" not in err.replace(user_file, ""), context
    assert PKG_DIR not in err, context
    assert "During handling of the above exception" not in err and "direct cause" not in err, context


def test_full_traceback_on_request(user_dir):
    """STREAMDSL_TRACEBACK=1 brings streamdsl's own frames back, for a compile and a run-time error."""
    for name, internal in (("undefined_name.py", "frontend/visitor.py"), ("runtime_oob_load.py", "backend/sim.py")):
        proc = run_user_file(user_dir / name, STREAMDSL_TRACEBACK="1")
        assert proc.returncode != 0
        frames = re.findall(r'^  File "([^"]+)"', proc.stderr, re.M)
        assert any(f.endswith(internal) and f.startswith(PKG_DIR) for f in frames), proc.stderr
        assert str(user_dir / name) in frames


def test_good_program_runs_clean(tmp_path):
    """The harness itself: a correct program exits 0 with nothing on stderr."""
    f = tmp_path / "good.py"
    f.write_text(
        "import numpy as np\nimport streamdsl as sd\n\n\n@sd.kernel\n"
        "def k(A: sd.f32[8]) -> sd.f32[8]:\n    C: sd.f32[8] = 0.0\n    for i in range(8):\n"
        "        C[i] = A[i] * 2.0\n    return C\n\n\n"
        "assert (k(np.arange(8, dtype=np.float32)) == 2 * np.arange(8)).all()\n")
    proc = run_user_file(f)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_without_the_hook_errors_are_located_and_the_hook_is_left_alone(tmp_path):
    """``import streamdsl`` leaves sys.excepthook as it was; an API error is still located at the user's line,
    and of streamdsl's frames only the API boundary (``user_facing``'s, named ``<streamdsl>``) is left."""
    f = tmp_path / "plain_user.py"
    f.write_text("import sys\nhook = sys.excepthook\nimport streamdsl as sd\nassert sys.excepthook is hook\n\n\n"
                 "@sd.kernel\ndef k(A: sd.f32[8]) -> sd.f32[8]:\n    while True:\n        pass\n    return A\n\n\n"
                 "print(k.ir)\n")
    proc = run_user_file(f)
    assert proc.returncode == 1
    assert "plain_user.py:9:" in proc.stderr and "= hint:" in proc.stderr, proc.stderr
    frames = [p for p, _ in re.findall(r'^  File "([^"]+)", line (\d+)', proc.stderr, re.M)]
    assert frames[0] == str(f) and [p for p in frames if p != str(f)] == ["<streamdsl>"], frames  # the boundary


def test_non_streamdsl_errors_keep_their_traceback(tmp_path):
    """The excepthook only edits StreamDSLErrors."""
    f = tmp_path / "plain.py"
    f.write_text("import streamdsl as sd\n\n\ndef g():\n    raise ValueError('boom')\n\n\ng()\n")
    proc = run_user_file(f)
    assert proc.returncode != 0
    assert "ValueError: boom" in proc.stderr and 'line 5, in g' in proc.stderr


# --------------------------------------------------------------- in-process
def _line_of(fn, marker: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    hits = [first + n for n, t in enumerate(lines) if marker in t and "_line_of(" not in t]
    assert len(hits) == 1
    return hits[0]


def test_error_classes_are_streamdsl_errors():
    for cls in (sd.KernelSyntaxError, sd.KernelTypeError, sd.ShapeError, sd.IRParseError, sd.IRVerifyError,
                sd.ScheduleError):
        assert issubclass(cls, sd.StreamDSLError) and issubclass(cls, Exception)
    assert len({c.kind for c in (sd.KernelSyntaxError, sd.KernelTypeError, sd.ShapeError)}) == 3


def test_syntax_error_in_process():
    with pytest.raises(sd.KernelSyntaxError) as info:  # at the definition: the kernel cannot compile
        @sd.kernel
        def k(A: sd.f32[4]) -> sd.f32[4]:
            C: sd.f32[4] = 0.0
            i: sd.i32 = 0
            while i < 4:  # <- here
                i += 1
            return C

    err = info.value
    assert isinstance(err, sd.StreamDSLError)
    assert err.loc.file == __file__ and err.loc.line == _line_of(test_syntax_error_in_process, "# <- here")
    assert "while loops are not supported" in err.message and err.hint
    assert err.__cause__ is None and err.__suppress_context__
    text = str(err)
    assert f"--> {__file__}:{err.loc.line}:" in text and "^" in text and "= hint:" in text
    # the traceback that reaches the caller holds none of the frontend's frames
    import traceback

    files = [f.filename for f in traceback.extract_tb(err.__traceback__)]
    assert not any(f.startswith(os.path.join(PKG_DIR, "frontend")) for f in files), files


def test_type_and_shape_errors_in_process():
    with pytest.raises(sd.KernelTypeError) as t:
        @sd.kernel
        def bad_type(A: sd.f32[4]) -> sd.f32[4]:
            C: sd.f32[4] = 0.0
            for i in range(4):
                C[i] = A[i] ^ A[i]  # <- type
            return C

    assert t.value.loc.line == _line_of(test_type_and_shape_errors_in_process, "# <- type")
    with pytest.raises(sd.ShapeError) as s:
        @sd.kernel
        def bad_shape(A: sd.f32[4, 4]) -> sd.f32[4]:
            C: sd.f32[4] = 0.0
            for i in range(4):
                C[i] = A[i]  # <- shape
            return C

    assert s.value.loc.line == _line_of(test_type_and_shape_errors_in_process, "# <- shape")


def test_an_undefined_name_waits_for_the_first_use():
    """A name not yet defined (a kernel or constant further down the module) is looked up at the first use."""
    @sd.kernel
    def k(A: sd.f32[4]) -> sd.f32[4]:
        C: sd.f32[4] = 0.0
        for i in range(4):
            C[i] = A[i] * NOT_YET  # noqa: F821 <- later
        return C

    with pytest.raises(sd.KernelSyntaxError, match="NOT_YET") as e:
        k(np.zeros(4, np.float32))  # the error surfaces at the first call, located
    assert e.value.loc.line == _line_of(k.fn, "# noqa: F821 <- later")


def test_call_time_errors_in_process():
    @sd.kernel
    def k(A: sd.f32[4], n: sd.i32) -> sd.f32[4]:
        C: sd.f32[4] = 0.0
        for i in range(4):
            C[i] = A[i] + n
        return C

    x = np.zeros(4, np.float32)
    with pytest.raises(sd.ShapeError) as e:
        k(np.zeros(5, np.float32), 1)
    assert e.value.loc.file == __file__
    with pytest.raises(sd.KernelTypeError):
        k(x.astype(np.float64), 1)
    with pytest.raises(sd.KernelTypeError):
        k(x)
    with pytest.raises(sd.KernelTypeError):
        k(x, 1.5)  # a float for an i32 scalar
    assert (k(x, 3) == 3).all()


def test_runtime_out_of_bounds_is_located_at_the_load():
    @sd.kernel
    def k(A: sd.f32[8]) -> sd.f32[8]:
        C: sd.f32[8] = 0.0
        for i in range(8):
            C[i] = A[i] + A[7 - i - 1]  # <- oob
        return C

    with pytest.raises(sd.ShapeError) as e:
        k(np.zeros(8, np.float32))
    assert e.value.loc.line == _line_of(k.fn, "# <- oob")
    assert "index -1 is out of bounds for dimension 0 of 'A' (size 8)" in e.value.message
    assert e.value.loc.col == _source_col(k.fn, "# <- oob", "A[7 - i - 1]")


def _source_col(fn, marker, text):
    import inspect
    import linecache

    line = _line_of(fn, marker)
    return linecache.getline(inspect.getsourcefile(fn), line).index(text)


def test_error_in_a_callee_is_located_in_the_callee():
    @sd.kernel
    def inner(A: sd.f32[4]) -> sd.f32[4]:
        C: sd.f32[4] = 0.0
        for i in range(4):
            C[i] = A[i] * MISSING_GAIN  # noqa: F821 <- callee
        return C

    @sd.kernel
    def outer(A: sd.f32[4]) -> sd.f32[4]:
        T = inner(A)
        return T

    with pytest.raises(sd.KernelSyntaxError) as e:
        outer.ir
    assert e.value.loc.line == _line_of(inner.fn, "<- callee")


def test_failed_definition_does_not_corrupt_state():
    @sd.kernel
    def good(A: sd.f32[4]) -> sd.f32[4]:
        C: sd.f32[4] = 0.0
        for i in range(4):
            C[i] = A[i] * 2.0
        return C

    before = str(good.ir)

    def bad(A: sd.f32[4]) -> sd.f32[4]:
        C: sd.f32[4] = 0.0
        for i in range(4):
            t = A[i] * 2.0
            t: sd.i32 = 1  # redefinition with another type, after a local was declared
            C[i] = t
        return C

    for _ in range(2):  # failing twice gives the same error: nothing was cached half-built
        with pytest.raises(sd.KernelSyntaxError, match="already defined"):
            sd.kernel(bad)

    @sd.kernel
    def also_good(A: sd.f32[4]) -> sd.f32[4]:
        C: sd.f32[4] = 0.0
        for i in range(4):
            t = A[i] + 1.0
            C[i] = t
        return C

    x = np.arange(4, dtype=np.float32)
    assert (good(x) == 2 * x).all() and (also_good(x) == x + 1).all()
    assert str(good.ir) == before
    assert sd.parse_ir(str(also_good.ir)) == also_good.ir


def test_missing_global_can_be_defined_later():
    """A kernel that failed because a constant was missing compiles once it exists (no poisoned cache)."""
    @sd.kernel
    def k(A: sd.f32[4]) -> sd.f32[4]:
        C: sd.f32[4] = 0.0
        for i in range(4):
            C[i] = A[i] * LATE_SCALE  # noqa: F821
        return C

    with pytest.raises(sd.KernelSyntaxError, match="LATE_SCALE"):
        k.ir
    globals()["LATE_SCALE"] = 3.0
    try:
        assert (k(np.ones(4, np.float32)) == 3.0).all()
    finally:
        del globals()["LATE_SCALE"]


def test_kernel_without_source_is_refused():
    ns: dict = {}
    with pytest.raises(sd.KernelSyntaxError, match="cannot read the source"):
        exec("import streamdsl as sd\n@sd.kernel\ndef k(A: sd.f32[4]) -> sd.f32[4]:\n    return A\n", ns)  # noqa: S102
