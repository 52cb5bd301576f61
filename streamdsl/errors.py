"""User-facing errors.

Every error a user can provoke is a :class:`StreamDSLError`. It carries the
location in the *user's* source (file, line, column span) and renders like a
compiler diagnostic::

    error: tensor 'A' has rank 2 but is indexed with 1 index
      --> examples/gemm.py:12:16
       |
    12 |         C[i] += A[i] * B[i, j]
       |                 ^^^^
       = hint: write A[i, k]

Internal frames are hidden from the user: :func:`user_facing` strips
streamdsl's own frames from the traceback unless ``STREAMDSL_TRACEBACK=1``.
"""
from __future__ import annotations

import functools
import itertools
import linecache
import os
import sys
from dataclasses import dataclass
from pathlib import Path

_PKG_DIR = str(Path(__file__).resolve().parent)
BOUNDARY = "<streamdsl>"  # the file name of the one frame a user's traceback keeps for a call into streamdsl


@dataclass(frozen=True, slots=True)
class Loc:
    """A span in a source file: 1-based line, 0-based columns."""

    file: str
    line: int
    col: int = 0
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


@functools.lru_cache(maxsize=1)
def _internal_dirs() -> tuple[str, ...]:
    """The core package and the library (installed from its own folder, ``library/``)."""
    import importlib.util

    dirs = [_PKG_DIR]
    spec = importlib.util.find_spec("streamdsl.library")
    for d in (spec.submodule_search_locations or []) if spec is not None else []:
        dirs.append(str(Path(d).resolve()))
    return tuple(dirs)


def _internal(frame) -> bool:
    file = frame.f_code.co_filename
    if file.startswith("<frozen") or file == BOUNDARY:
        return True
    if file == "<string>" and frame.f_code.co_name != "<module>":
        return True  # a method dataclasses generated (``__init__`` of a library object); ``python -c`` is the user's
    path = os.path.abspath(file)
    return any(path.startswith(d) for d in _internal_dirs())


def caller_loc() -> Loc | None:
    """Where the user called into streamdsl: the first frame outside the package and its library.

    On Python 3.11+ the span is the call expression itself, so the caret
    underlines ``s.split(i, 5)`` rather than the whole line.
    """
    import inspect

    frame = inspect.currentframe()
    while frame is not None:
        if not _internal(frame):
            return _frame_loc(frame)
        frame = frame.f_back
    return None


def _frame_loc(frame) -> Loc:
    line, col, end_col = frame.f_lineno, None, None
    positions = None
    if hasattr(frame.f_code, "co_positions"):  # Python >= 3.11; what inspect.getframeinfo reads, without its file I/O
        i = frame.f_lasti // 2
        positions = next(itertools.islice(frame.f_code.co_positions(), i, i + 1), None)
    if positions is not None and positions[0] == line and positions[2] is not None:
        col = positions[2]
        end_col = positions[3] if positions[1] == line else None
    if col is None:  # older Pythons: start at the statement's indentation
        text = linecache.getline(frame.f_code.co_filename, line)
        col = len(text) - len(text.lstrip())
    return Loc(frame.f_code.co_filename, line, col, end_col)


class StreamDSLError(Exception):
    """Base class of every error streamdsl reports to a user."""

    kind = "error"

    def __init__(self, message: str, loc: Loc | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        out = [f"{self.kind}: {self.message}"]
        if self.loc is not None:
            out.append(f"  --> {self.loc}")
            text = linecache.getline(self.loc.file, self.loc.line).rstrip("\n")
            if text:
                num = str(self.loc.line)
                pad = " " * len(num)
                end = self.loc.end_col if self.loc.end_col and self.loc.end_col > self.loc.col else len(text)
                width = max(1, min(end, len(text)) - self.loc.col)
                out.append(f"   {pad} |")
                out.append(f"   {num} | {text}")
                out.append(f"   {pad} | {' ' * self.loc.col}{'^' * width}")
        if self.hint:
            out.append(f"   = hint: {self.hint}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.render()


class KernelSyntaxError(StreamDSLError):
    """The kernel uses Python that streamdsl does not support."""

    kind = "syntax error"


class KernelTypeError(StreamDSLError):
    """Types do not match (operands, assignment, call arguments, returns)."""

    kind = "type error"


class ShapeError(StreamDSLError):
    """Shapes or index counts do not match."""

    kind = "shape error"


class IRParseError(StreamDSLError):
    """Text given to :func:`streamdsl.parse_ir` is not valid IR."""

    kind = "IR parse error"


class IRVerifyError(StreamDSLError):
    """An IR violates an invariant (raised by the verifier)."""

    kind = "IR verify error"


class ScheduleError(StreamDSLError):
    """A schedule primitive cannot be applied."""

    kind = "schedule error"


def _strip_internal(tb):
    """Keep the user's traceback entries: those before the first streamdsl frame.

    Everything below that frame runs on streamdsl's behalf (its own modules and
    what they call, such as ``ast.NodeVisitor.visit``), so it is dropped too.
    """
    frames = []
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith((_PKG_DIR, BOUNDARY)):
        frames.append(tb)
        tb = tb.tb_next
    head = None
    for entry in reversed(frames):
        entry.tb_next = head
        head = entry
    return head


def _surfaced(err: StreamDSLError, tb) -> StreamDSLError:
    err.__cause__ = None
    err.__context__ = None
    err.__suppress_context__ = True
    return err.with_traceback(_strip_internal(tb))


# The boundary is compiled under the file name BOUNDARY, not this file's: the frame an exception keeps for the
# function it leaves is then a line "File "<streamdsl>", in split" after the user's own frames, and not a
# frame of streamdsl's source (IPython and pytest hide it altogether: __tracebackhide__).
_BOUNDARY_SRC = """
def wrapper(*args, **kwargs):
    __tracebackhide__ = True
    try:
        return fn(*args, **kwargs)
    except StreamDSLError as err:
        if os.environ.get("STREAMDSL_TRACEBACK") == "1":
            raise
        raise _surfaced(err, sys.exc_info()[2]) from None
"""
_BOUNDARY_CODE = compile(_BOUNDARY_SRC, BOUNDARY, "exec")


def user_facing(fn):
    """Decorate a public entry point so StreamDSLErrors surface without our frames."""
    scope = {"fn": fn, "StreamDSLError": StreamDSLError, "_surfaced": _surfaced, "os": os, "sys": sys}
    exec(_BOUNDARY_CODE, scope)
    return functools.wraps(fn)(scope["wrapper"])


def user_facing_methods(cls):
    """Wrap every public method of ``cls`` in :func:`user_facing` (a schedule's primitives, a graph's methods), so
    an error a user catches from one carries no streamdsl frames."""
    for name, attr in list(vars(cls).items()):
        if not name.startswith("_") and callable(attr) and not isinstance(attr, (staticmethod, classmethod, type)):
            setattr(cls, name, user_facing(attr))
    return cls


def _locate_at(err: StreamDSLError, tb) -> None:
    """Give an error raised without a location (e.g. ``sd.f32[0]`` in an annotation) the user's line."""
    if err.loc is not None or tb is None:
        return
    while tb.tb_next is not None:
        tb = tb.tb_next
    code, line, col, end_col = tb.tb_frame.f_code, tb.tb_lineno, 0, None
    if hasattr(code, "co_positions"):  # Python >= 3.11: the span of the failing expression
        for i, pos in enumerate(code.co_positions()):
            if i == tb.tb_lasti // 2:
                if pos[0] == line and pos[2] is not None:
                    col, end_col = pos[2], pos[3] if pos[1] == line else None
                break
    err.loc = Loc(code.co_filename, line, col, end_col)


def _excepthook(exc_type, exc, tb, _previous=sys.excepthook):
    """Print StreamDSLErrors with streamdsl's own frames removed."""
    if isinstance(exc, StreamDSLError) and os.environ.get("STREAMDSL_TRACEBACK") != "1":
        tb = _strip_internal(tb)
        _locate_at(exc, tb)
    _previous(exc_type, exc, tb)


def install_excepthook() -> None:
    if getattr(sys.excepthook, "__name__", "") != "_excepthook":
        sys.excepthook = functools.partial(_excepthook, _previous=sys.excepthook)
        sys.excepthook.__name__ = "_excepthook"  # type: ignore[attr-defined]


__all__ = [
    "IRParseError", "IRVerifyError", "KernelSyntaxError", "KernelTypeError", "Loc", "ScheduleError", "ShapeError",
    "StreamDSLError", "caller_loc", "install_excepthook", "user_facing",
]
