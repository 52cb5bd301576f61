"""User strings in generated text (a source path in a C++ comment, a model's name in a README or a Makefile).

A string the user chose may hold anything: a newline would end a comment and start a line of code (a
file named ``k\n#error boom.py``), a trailing backslash splices the next line into a ``//`` or ``#``
comment, ``??/`` is a backslash before C++17.  These functions spell such a string so it stays in its
place; identifiers go through :mod:`streamdsl.backend.hls.names` instead.
"""
from __future__ import annotations

import re


def comment(text: object) -> str:
    """``text`` made safe inside a one-line comment (C++ ``//``, ``#`` in tcl, make and cfg files).

    Control characters are escaped (a newline would end the comment), a backslash doubled and the text
    never ends in one (``\\`` before a line end splices the next line into the comment), and ``??`` is
    broken so that no trigraph (``??/`` is a backslash before C++17) forms."""
    out = []
    for c in str(text):
        if c == "\\":
            out.append("\\\\")
        elif not c.isprintable():
            out.append(repr(c)[1:-1] if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    s = "".join(out).replace("??", "?\\?")
    return s + "." if s.endswith("\\") else s


def md_code(text: object) -> str:
    """``text`` as one Markdown code span: escaped as :func:`comment`, fenced by more backticks than it holds."""
    s = comment(text)
    fence = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"
