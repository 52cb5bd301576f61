"""Synthesizability lint: the IR the HLS backend is given (:func:`lint`) and the C++ it emits (:func:`lint_code`).

The IR lint refuses what no C++ could synthesize (recursion, a fully unrolled loop of unknown trips, a bad II).
The code lint reads the synthesis path of the emitted files (``__SYNTHESIS__`` defined, C++14, the testbench
left out) with :mod:`.cxx` and checks the rules Vitis builds by; each finding is a :class:`CodeLintError`
naming the rule and pointing at the generated file's line:

``stream-width``       a FIFO's element (an ``hls::stream``'s; an ``hls::stream_of_blocks`` is memory, a PIPO of
                       whole blocks, not a FIFO) is at most the 512-bit bus (1024 where the emitter marks the stream as
                       priced by the model, :data:`PRICED_WIDE`): a FIFO is built of memories at most 72 bits
                       wide, so a 131-kbit token is ~1,800 URAMs.  The width comes from the element type:
                       ``sd::token<T, N>``, ``sd::beat<T, L>``, ``ap_[u]int<W>``, ``ap_[u]fixed<W, I>``, a C
                       scalar, a struct of the file (its members), a typedef.
``strided-m_axi``      inside a pipelined loop an ``m_axi`` array (a top port, or a parameter it is passed to) is
                       indexed by the pipelined loop's variable, plus a loop-invariant offset, in its last
                       dimension and by loop invariants elsewhere; anything else (a column walk, a loop unrolled
                       inside the pipeline copying a whole token) cannot burst.  A pipelined loop of one trip
                       pipelines the loop around it.
``cxx17``              no C++17 in the synthesis path (``if constexpr``, ``std::..._v`` traits, structured
                       bindings, ``inline`` variables, fold expressions, C++17 attributes and library types).
``one-writer-reader``  every stream of a dataflow region has exactly one writing and one (other) reading process
                       (the region's process calls, and what each process does with the stream it is passed);
                       an ``hls::stream_of_blocks`` too, its writer taking ``hls::write_lock``s on it and its
                       reader ``hls::read_lock``s.
``canonical-order``    a region calls its processes producers first: each stream's writer before its reader, the
                       processes that read no stream (loads) first, those that write none (stores) last.
``pragmas``            every pragma the IR carries is in the text: pipeline, unroll, bind_op on loops;
                       array_partition and bind_storage on buffers; each FIFO's depth (needs :class:`Expected`).
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import Loc, StreamDSLError
from ...ir.nodes import Alloc, Const, For, Kernel, walk
from . import cxx


class LintError(StreamDSLError):
    kind = "HLS lint error"


def lint(k: Kernel, _stack: tuple[str, ...] = ()) -> None:
    """Static sizes, no recursion, bounded loops, pragmas on the right constructs."""
    if k.name in _stack:
        raise LintError(f"kernel '{k.name}' calls itself (through {' -> '.join(_stack)}); hardware has no recursion",
                        k.loc, hint="write the recursion as a loop")
    for c in k.callees:
        lint(c, _stack + (k.name,))
    for n in (n for s in k.body for n in walk(s)):
        if isinstance(n, For):
            if n.attrs.get("unroll") == 0 and not (isinstance(n.start, Const) and isinstance(n.stop, Const)):
                raise LintError(f"loop '{n.var}' is fully unrolled but its trip count is not a constant", n.loc,
                                hint="unroll by a factor instead")
            ii = n.attrs.get("pipeline")
            if ii is not None and (not isinstance(ii, int) or ii < 1):
                raise LintError(f"loop '{n.var}' has pipeline II={ii!r}; II must be a positive integer", n.loc)
        if isinstance(n, Alloc):
            for dim, kind, factor in n.attrs.get("partition", ()):
                shape = n.type.shape
                if not 0 <= dim <= len(shape):
                    raise LintError(f"partition of '{n.name}' names dim {dim}, but it has {len(shape)}", n.loc)
                if kind != "complete" and any(factor > e for e in (shape if dim == 0 else (shape[dim - 1],))):
                    raise LintError(f"partition factor {factor} of '{n.name}' exceeds its dimension", n.loc)


# ============================================================================== the emitted C++
RULES = ("stream-width", "strided-m_axi", "cxx17", "one-writer-reader", "canonical-order", "pragmas")
BUS_BITS = 512
PRICED_BITS = 1024
# The comment the emitter writes on (or just above) the declaration of a stream of up to PRICED_BITS the model priced
PRICED_WIDE = "streamdsl: wide stream priced by the model"
SYNTHESIS = {"__SYNTHESIS__": 1, "__cplusplus": 201402}  # the macros of the synthesis path


class CodeLintError(LintError):
    """A line of a generated file that breaks rule ``rule`` (one of :data:`RULES`); ``check`` names the part of
    the rule when it has several (``pragmas``: ``one-trip-loop`` for a loop a dataflow task emits as its body)."""

    def __init__(self, rule: str, message: str, loc: Loc | None, hint: str | None = None, check: str | None = None):
        self.rule = rule
        self.check = check
        self.kind = f"HLS lint error [{rule}]"
        super().__init__(message, loc, hint)


@dataclass
class Expected:
    """What the IR of a project asks its text to hold (rule ``pragmas``)."""

    # (C++ function, the kernel it was emitted from, the kernel's statements as the function runs them)
    functions: list[tuple[str, Kernel, tuple]] = field(default_factory=list)
    # (task function, kernel, a top-level loop of one trip the task runs as its body, without the loop)
    dissolved: list[tuple[str, Kernel, For]] = field(default_factory=list)
    fifos: dict[str, int] = field(default_factory=dict)  # stream variable -> the depth the schedule holds


def synthesis_files(files: dict[str, str]) -> dict[str, str]:
    """The files of a project Vitis synthesizes: the kernel sources and headers, not the testbench."""
    return {n: t for n, t in files.items() if n.endswith((".cpp", ".h")) and not n.startswith("tb_")}


def lint_code(files: dict[str, str], expected: Expected | None = None, where=None,
              rules=RULES) -> list[CodeLintError]:
    """Every finding of ``rules`` in the synthesis path of ``files`` (name -> text); errors point at
    ``where/name`` (the project folder when it was written)."""
    units = []
    for name, text in synthesis_files(files).items():
        path = str(Path(where) / name) if where is not None else name
        _remember(path, text)
        units.append(cxx.read(path, text, SYNTHESIS))
    from .codelint import Code  # the rules, over what cxx reads

    code = Code(units)
    out: list[CodeLintError] = []
    checks = {"stream-width": code.stream_width, "strided-m_axi": code.strided, "cxx17": code.cxx17,
              "one-writer-reader": code.writers_readers, "canonical-order": code.canonical,
              "pragmas": (lambda: code.pragmas(expected)) if expected is not None else (lambda: [])}
    for rule in rules:
        out += checks[rule]()
    return out


def lint_project(prj, rules=RULES) -> None:
    """Raise the first finding of ``rules`` on an :class:`~.project.HLSProject` (all of them in its message)."""
    _raise(lint_code(prj.files, expected(prj), prj.output, rules))


_SEEN: dict[tuple, tuple] = {}  # (files, rules, what the IR expects) -> the findings: a project is linted once


def lint_on_create(prj, spec: str) -> None:
    """Lint a project as it is created (``STREAMDSL_LINT``, which the test suite sets): ``spec`` is ``1`` for
    every rule, or lists what to leave out, ``-rule`` or ``-rule:check`` (``-stream-width,-pragmas:one-trip-loop``)."""
    skip = {s.strip()[1:] for s in spec.split(",") if s.strip().startswith("-")}
    rules = tuple(r for r in RULES if r not in skip)
    exp = expected(prj)
    key = (tuple(sorted(prj.files.items())), rules, tuple((fn, hash(k), hash(tuple(b))) for fn, k, b in exp.functions),
           tuple((fn, hash(lp)) for fn, _k, lp in exp.dissolved), tuple(sorted(exp.fifos.items())), str(prj.output))
    if key not in _SEEN:
        if len(_SEEN) > 256:
            _SEEN.clear()
        _SEEN[key] = tuple(e for e in lint_code(prj.files, exp, prj.output, rules) if f"{e.rule}:{e.check}" not in skip)
    _raise(list(_SEEN[key]))


def _raise(errors: list[CodeLintError]) -> None:
    """Raise the first of ``errors`` (the others named in its message)."""
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more: " + "; ".join(
            f"{e.loc.file.rsplit('/', 1)[-1]}:{e.loc.line} [{e.rule}]" for e in errors[1:6]) + \
            (", ..." if len(errors) > 6 else "") + ")" if len(errors) > 1 else ""
        raise CodeLintError(first.rule, first.message + more, first.loc, first.hint, first.check)


def lint_headers(rules=("cxx17",)) -> list[CodeLintError]:
    """The synthesis side of the bundled headers (``streamdsl_rt.h`` and ``include/synth``) under ``rules``."""
    from .project import INCLUDE, SYNTH_INCLUDE

    files = {str(h): h.read_text() for h in sorted(INCLUDE.glob("*.h")) + sorted(SYNTH_INCLUDE.glob("*.h"))}
    return lint_code(files, rules=rules)


def expected(prj) -> Expected:
    """The kernels a project's functions were emitted from, and its FIFO depths."""
    from .project import _kernels_in_order, file_scope

    g = getattr(prj, "schedule", None)
    if g is None:
        kernels = _kernels_in_order(prj.kernel)
        file = file_scope(kernels[::-1])
        return Expected([(file[k.name], k, k.body) for k in kernels])
    record = getattr(prj, "emitted", None) or {}  # what the dataflow emitter wrote each function from
    return Expected(list(record.get("functions", ())), fifos=dict(record.get("fifos", {})))


def _remember(path: str, text: str) -> None:
    """Let an error render the generated line of a file not (yet) written: linecache keeps entries with no
    modification time (``None``) through ``checkcache``."""
    if not Path(path).is_file():
        linecache.cache[path] = (len(text), None, text.splitlines(True), path)
