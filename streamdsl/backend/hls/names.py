"""How user names and strings are spelled in generated text.

Every C++ identifier the HLS backend writes goes through one function, :func:`mangle`, and one table per
scope, :class:`Scope`.  A Python name C++ cannot take -- a keyword (``new``, ``template``), a macro the
included headers define (``NULL``, ``INFINITY``, ``EOF``, ``L_tmpnam``), a name the generated code itself
uses unqualified (``main``, ``size_t``, ``int32_t``, ``sd``) or a name the standard reserves (``__x``,
``_X``) -- gets a trailing underscore (``new_``); non-ASCII letters are spelled ``_u<code>``; and a name
already taken in its scope (a testbench local ``flat``, a result parameter ``out0`` next to a local
``out0``) gets a number (``out0_2``).  A scope registers the user's names first, so they keep their
spelling wherever C++ allows it, and the generator's own names (``step``, ``t``, ``out0``, ``task_x``)
are then drawn fresh around them.  Where a user name changed, the generated code says so in a comment.

User strings that reach generated text outside identifiers (a source path in a comment, a model name in a
README) go through :func:`streamdsl.backend.text.comment` or ``md_code``, so they can neither end a comment
nor splice the next line into one.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from ..text import comment

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@functools.lru_cache(maxsize=1)
def reserved() -> frozenset[str]:
    """Keywords, names the generated code uses unqualified, and macros of its headers (``reserved.txt``)."""
    text = (Path(__file__).with_name("reserved.txt")).read_text()
    return frozenset(w for line in text.splitlines() if not line.startswith("#") for w in line.split())


def _standard_reserved(name: str) -> bool:
    """Names the C++ standard keeps for the implementation: ``__x`` anywhere, ``_X`` at the start."""
    return "__" in name or (len(name) > 1 and name[0] == "_" and name[1].isupper())


def mangle(name: str) -> str:
    """The C++ spelling of a user's ``name``, before it is made unique in its scope.

    >>> mangle("gemm"), mangle("new"), mangle("NULL"), mangle("__x"), mangle("café")
    ('gemm', 'new_', 'NULL_', 'u_x', 'caf_u00e9')
    """
    out = "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else f"_u{ord(c):04x}" for c in name) or "u"
    if out[0].isdigit():
        out = "u" + out
    if _standard_reserved(out):
        out = "u" + re.sub(r"_+", "_", out)
    if out in reserved():
        out += "_"
    assert _IDENT.match(out), out
    return out


class Scope:
    """The identifiers of one C++ scope: each user name spelled once, generated names drawn around them.

    ``parent``: the enclosing scope (a function's is the file's), whose names this one never reuses."""

    def __init__(self, parent: Scope | None = None):
        self.parent = parent
        self.users: dict[str, str] = {}  # user name -> its identifier here
        self.taken: set[str] = set()

    def __contains__(self, ident: str) -> bool:
        return ident in self.taken or ident in reserved() or (self.parent is not None and ident in self.parent)

    def _claim(self, base: str) -> str:
        ident, n = base, 1
        while ident in self:
            n += 1
            ident = f"{base}{'' if base.endswith('_') else '_'}{n}"
        self.taken.add(ident)
        return ident

    def user(self, name: str) -> str:
        """The identifier of the user's ``name`` in this scope (the same one every time)."""
        if name not in self.users:
            self.users[name] = self._claim(mangle(name))
        return self.users[name]

    def __getitem__(self, name: str) -> str:
        return self.user(name)

    def take(self, ident: str) -> None:
        """Claim ``ident``, a name of an enclosing function's (a stream passed in), so no local takes it."""
        assert ident not in self.taken, ident
        self.taken.add(ident)

    def fresh(self, base: str) -> str:
        """A new identifier spelled like ``base`` that no other name of this scope or its parents has."""
        return self._claim(mangle(base))

    def release(self, *idents: str) -> None:
        """Give back generated names whose C++ scope has ended (a loop's variables), for the next loop."""
        self.taken.difference_update(idents)

    def renamed(self) -> list[tuple[str, str]]:
        """(user name, identifier) of the user names C++ spells differently, in registration order."""
        return [(u, c) for u, c in self.users.items() if u != c]


def renamed_comment(pairs, indent: str = "") -> list[str]:
    """A comment line naming the (user name, identifier) pairs that differ (none: no line)."""
    pairs = [(u, c) for u, c in pairs if u != c]
    if not pairs:
        return []
    return [f"{indent}// C++ names of Python names: " + ", ".join(f"{comment(u)} -> {c}" for u, c in pairs)]
