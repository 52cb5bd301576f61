"""A reader of the C++ the HLS backend emits, for the synthesizability lint (:mod:`.lint`).

Not a C++ parser: it reads the shapes generated code has -- functions, structs and typedefs at file scope;
inside a body, labelled ``for`` loops with their pragmas, ``if``/``else``, blocks and statements -- and keeps
every token's line and column in the file, so a lint rule can point at the text it objects to.  The
preprocessor is applied for one build (:func:`preprocess`: the synthesis path keeps ``#else`` of
``#ifdef STREAMDSL_THREADED_DATAFLOW``); comments and string literals are blanked first (:func:`blank`),
keeping every offset.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

# ------------------------------------------------------------------------------------------- text
_BLANK = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def blank(text: str) -> str:
    """``text`` with comments and the insides of string and character literals blanked (same length and
    lines), so no rule matches words in them."""

    def repl(m: re.Match) -> str:
        s = m.group(0)
        keep = s[0] if s[0] in "\"'" else ""
        inner = re.sub(r"[^\n]", " ", s[len(keep):len(s) - len(keep)])
        return keep + inner + keep

    return _BLANK.sub(repl, text)


_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)(.*)$")


def preprocess(text: str, defines: dict[str, int]) -> str:
    """The lines of ``text`` a compiler with ``defines`` compiles (the others blanked, the line count kept);
    ``#if`` expressions of ``defined(X)``, macro names, integers, ``! && || == != < <= > >=`` and parentheses.
    ``#define``/``#undef`` of the text take part; ``#include`` is not followed.  Input: :func:`blank`'s output."""
    macros = dict(defines)
    out, stack = [], []  # stack: (this branch active, some branch of the group taken, parent active)
    for line in text.split("\n"):
        m = _DIRECTIVE.match(line)
        active = all(a for a, _, _ in stack)
        if m is None:
            out.append(line if active else "")
            continue
        word, rest = m.group(1), m.group(2).strip()
        if word in ("if", "ifdef", "ifndef"):
            cond = (rest.split()[0] in macros if rest else False) if word == "ifdef" else \
                (rest.split()[0] not in macros if rest else True) if word == "ifndef" else _if(rest, macros)
            stack.append((active and cond, cond, active))
        elif word == "elif" and stack:
            _, taken, parent = stack[-1]
            cond = not taken and _if(rest, macros)
            stack[-1] = (parent and cond, taken or cond, parent)
        elif word == "else" and stack:
            _, taken, parent = stack[-1]
            stack[-1] = (parent and not taken, True, parent)
        elif word == "endif" and stack:
            stack.pop()
        elif word == "define" and active and rest:
            name = re.match(r"\w+", rest)
            if name:
                value = rest[name.end():].strip()
                macros[name.group(0)] = int(value) if re.fullmatch(r"-?\d+", value) else 1
        elif word == "undef" and active and rest:
            macros.pop(rest.split()[0], None)
        out.append(line if active and word == "pragma" else "")  # pragmas stay: they are what the rules read
    return "\n".join(out)


_IF_TOKEN = re.compile(r"\s*(defined|\w+|&&|\|\||==|!=|<=|>=|[()!<>])")


def _if(expr: str, macros: dict[str, int]) -> bool:
    toks = [m.group(1) for m in _IF_TOKEN.finditer(expr)]
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1] if pos <= len(toks) else None

    def atom() -> int:
        t = take()
        if t == "!":
            return int(not atom())
        if t == "(":
            v = disj()
            take()
            return v
        if t == "defined":
            paren = peek() == "("
            if paren:
                take()
            name = take()
            if paren:
                take()
            return int(name in macros)
        if t is not None and re.fullmatch(r"\d+[uUlL]*", t):
            return int(re.sub(r"[uUlL]+$", "", t))
        return macros.get(t, 0)

    def rel() -> int:
        v = atom()
        while peek() in ("==", "!=", "<", "<=", ">", ">="):
            op, w = take(), atom()
            v = int({"==": v == w, "!=": v != w, "<": v < w, "<=": v <= w, ">": v > w, ">=": v >= w}[op])
        return v

    def conj() -> int:
        v = rel()
        while peek() == "&&":
            take()
            v = int(rel() and v)
        return v

    def disj() -> int:
        v = conj()
        while peek() == "||":
            take()
            v = int(conj() or v)
        return v

    return bool(disj())


# ----------------------------------------------------------------------------------------- tokens
class Tok(NamedTuple):
    text: str
    line: int  # 1-based
    col: int  # 0-based


_TOKEN = re.compile(r"[A-Za-z_]\w*|\.?\d(?:[\w.]|[eEpP][+-])*|::|->|\.\.\.|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|"
                    r"[-+*/%&|^!=<>]=|\S")


_tok = tuple.__new__  # Tok(text, line, col) without the keyword handling: a big file has 10^5 tokens


def tokens(text: str) -> list[Tok]:
    """The tokens of blanked, preprocessed text; a ``#pragma`` line is one token (``#pragma HLS ...``), other
    directives none."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        s = line.lstrip()
        if s.startswith("#"):
            if re.match(r"#\s*pragma\b", s):
                out.append(Tok(s.rstrip(), n, len(line) - len(s)))
            continue
        out += [_tok(Tok, (m.group(0), n, m.start())) for m in _TOKEN.finditer(line)]
    return out


def matching(toks: list[Tok], i: int) -> int:
    """The index of the bracket closing the one at ``i``."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opener, closer, depth = toks[i].text, pairs[toks[i].text], 0
    for j in range(i, len(toks)):
        if toks[j].text == opener:
            depth += 1
        elif toks[j].text == closer:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def split_top(toks: list[Tok], sep: str) -> list[list[Tok]]:
    """``toks`` split at ``sep`` outside brackets (template angle brackets count when ``sep`` is ``,``)."""
    parts, cur, depth, angle = [], [], 0, 0
    for t in toks:
        if t.text in "([{":
            depth += 1
        elif t.text in ")]}":
            depth -= 1
        elif sep == "," and t.text == "<" and depth == 0 and cur and re.match(r"\w", cur[-1].text) and \
                cur[-1].text not in _VALUE_WORDS:
            angle += 1
        elif sep == "," and t.text in (">", ">>") and angle and depth == 0:
            angle = max(0, angle - len(t.text))
        if t.text == sep and depth == 0 and angle == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    parts.append(cur)
    return parts


_VALUE_WORDS = {"return", "if", "while", "for"}


def text_of(toks: list[Tok]) -> str:
    """The tokens joined by single spaces (for comparing shapes: ``v = 0``, ``v < 16``)."""
    return " ".join(t.text for t in toks)


def strip_parens(toks: list[Tok]) -> list[Tok]:
    while len(toks) >= 2 and toks[0].text == "(" and matching(toks, 0) == len(toks) - 1:
        toks = toks[1:-1]
    return toks


# ---------------------------------------------------------------------------------- structure
@dataclass(eq=False)  # compared by identity
class Stmt:
    toks: list[Tok]

    @property
    def line(self) -> int:
        return self.toks[0].line


@dataclass(eq=False)  # compared by identity
class Pragma:
    tok: Tok

    @property
    def line(self) -> int:
        return self.tok.line

    @property
    def words(self) -> list[str]:
        """``#pragma HLS pipeline II=1`` -> ``["HLS", "pipeline", "II=1"]``."""
        return self.tok.text.lstrip("#").split()[1:]

    def hls(self, directive: str) -> dict[str, str] | None:
        """The options of an ``HLS <directive>`` pragma, keys in lower case (``{"ii": "1"}``), or None for
        another pragma."""
        w = self.words
        if len(w) < 2 or w[0].upper() != "HLS" or w[1].lower() != directive:
            return None
        return {k.lower(): v for k, _, v in (x.partition("=") for x in w[2:])}


@dataclass(eq=False)  # compared by identity
class Block:
    body: list
    line: int


@dataclass(eq=False)  # compared by identity
class Loop:
    label: str | None
    var: str | None  # the variable the header increments
    header: list[Tok]  # inside the parentheses
    body: list
    line: int
    col: int
    parent: "Loop | None" = field(default=None, repr=False)

    @property
    def pragmas(self) -> list[Pragma]:
        return [s for s in self.body if isinstance(s, Pragma)]

    def pragma(self, directive: str) -> dict[str, str] | None:
        return next((o for p in self.pragmas if (o := p.hls(directive)) is not None), None)

    def trips(self) -> int | None:
        """The trip count of ``for (int v = a; v < b; v++)`` with constant ``a`` and ``b``, else None."""
        parts = split_top(self.header, ";")
        if len(parts) != 3 or self.var is None:
            return None
        init, cond, inc = (text_of(p) for p in parts)
        a = re.fullmatch(rf"(?:int )?{self.var} = (-? ?\d+)", init)
        b = re.fullmatch(rf"{self.var} < (\d+)", cond)
        if a and b and inc in (f"{self.var} ++", f"++ {self.var}"):
            return max(0, int(b.group(1)) - int(a.group(1).replace(" ", "")))
        return None


@dataclass(eq=False)  # compared by identity
class If:
    cond: list[Tok]
    then: list
    orelse: list
    line: int


@dataclass
class Param:
    name: str
    type: list[Tok]  # the declaration without the name and array dims
    dims: list[list[Tok]]

    @property
    def is_stream(self) -> bool:
        """An ``hls::stream`` or an ``hls::stream_of_blocks`` (a channel with one writer and one reader)."""
        return any(t.text in ("stream", "stream_of_blocks") for t in self.type) and \
            any(t.text == "hls" for t in self.type)


@dataclass(eq=False)  # compared by identity
class Function:
    name: str
    params: list[Param]
    body: list
    line: int
    col: int
    file: str
    renamed: dict[str, str]  # Python name -> C++ name, from the comment above the function


@dataclass
class Struct:
    name: str
    members: list[tuple[list[Tok], str, list[list[Tok]]]]  # (type, name, dims)
    line: int


@dataclass
class Unit:
    """One file: its functions, structs and typedefs (namespaces flattened: ``sd::token`` is ``token``)."""

    file: str
    lines: list[str] = field(default_factory=list, repr=False)  # the source, for quoting it
    code: str = field(default="", repr=False)  # what a compiler with the defines reads (comments, strings blanked)
    functions: dict[str, Function] = field(default_factory=dict)
    structs: dict[str, Struct] = field(default_factory=dict)
    typedefs: dict[str, list[Tok]] = field(default_factory=dict)
    statements: list[Stmt] = field(default_factory=list)  # other declarations at file scope

    def quote(self, toks: list[Tok]) -> str:
        """The source text from the first token to the last (tokens on one line), else the tokens spaced."""
        if toks and toks[0].line == toks[-1].line and toks[0].line <= len(self.lines):
            return self.lines[toks[0].line - 1][toks[0].col:toks[-1].col + len(toks[-1].text)]
        return text_of(toks)


_RENAMED = re.compile(r"^\s*// C\+\+ names of Python names: (.*)$")


def read(file: str, text: str, defines: dict[str, int]) -> Unit:
    """The structure of one C++ file compiled with ``defines``."""
    code = preprocess(blank(text), defines)
    toks = tokens(code)
    raw = text.split("\n")
    unit = Unit(file, raw, code)
    _scope(toks, 0, len(toks), unit, raw)
    return unit


def _renamed_above(raw: list[str], line: int) -> dict[str, str]:
    m = _RENAMED.match(raw[line - 2]) if line >= 2 else None
    if m is None:
        return {}
    return dict(pair.split(" -> ", 1) for pair in m.group(1).split(", ") if " -> " in pair)


def _scope(toks: list[Tok], i: int, end: int, unit: Unit, raw: list[str]) -> None:
    """File or namespace scope: functions, structs, typedefs; templates are skipped whole."""
    while i < end:
        t = toks[i]
        if t.text == "namespace":
            j = i + 1
            while j < end and toks[j].text != "{":
                j += 1
            close = matching(toks, j)
            _scope(toks, j + 1, close, unit, raw)
            i = close + 1
            continue
        if t.text in ("}", ";") or t.text.startswith("#"):
            i += 1
            continue
        if t.text == "extern":  # extern "C" (the literal blanked to two quotes)
            i += 1
            while i < end and toks[i].text == '"':
                i += 1
            continue
        if t.text == "template":
            i = _skip_declaration(toks, i, end)
            continue
        if t.text == "struct" and i + 2 < end and toks[i + 2].text == "{":
            close = matching(toks, i + 2)
            unit.structs[toks[i + 1].text] = Struct(toks[i + 1].text, _members(toks[i + 3:close]), t.line)
            i = _skip_declaration(toks, close, end)
            continue
        if t.text == "typedef":
            j = _statement_end(toks, i, end)
            decl = toks[i + 1:j]
            p = _param(decl)  # typedef float blk[8][2]: blk names `float [8][2]`
            if p is not None:
                k = max(n for n, t in enumerate(decl) if t.text == p.name and (n + 1 == len(decl) or
                                                                                  decl[n + 1].text == "["))
                unit.typedefs[p.name] = decl[:k] + decl[k + 1:]
            i = j + 1
            continue
        if t.text == "using" and i + 2 < end and toks[i + 2].text == "=":
            j = _statement_end(toks, i, end)
            unit.typedefs[toks[i + 1].text] = toks[i + 3:j]
            i = j + 1
            continue
        # a function (a name followed by its parameter list, then a body or ';') or another declaration
        j, paren = i, None
        while j < end and toks[j].text not in (";", "{", "="):
            if toks[j].text == "(" and paren is None:
                paren = j
                j = matching(toks, j)
            j += 1
        if paren is not None and j < end and toks[j].text == "{" and paren > i:
            close = matching(toks, j)
            name = toks[paren - 1]
            params = [_param(p) for p in split_top(toks[paren + 1:matching(toks, paren)], ",") if p]
            params = [p for p in params if p is not None]
            unit.functions[name.text] = Function(name.text, params, _body(toks, j + 1, close), name.line, name.col,
                                                 unit.file, _renamed_above(raw, toks[i].line))
            i = close + 1
        else:
            j = _statement_end(toks, i, end)
            unit.statements.append(Stmt(toks[i:j + 1]))
            i = j + 1


def _skip_declaration(toks: list[Tok], i: int, end: int) -> int:
    """Past the declaration starting at ``i``: its ``;``, or its body's ``}`` (and a ``;`` right after)."""
    while i < end:
        t = toks[i].text
        if t in ("(", "["):
            i = matching(toks, i) + 1
        elif t == "{":
            i = matching(toks, i) + 1
            return i + 1 if i < end and toks[i].text == ";" else i
        elif t == ";":
            return i + 1
        else:
            i += 1
    return end


def _statement_end(toks: list[Tok], i: int, end: int) -> int:
    """The index of the ``;`` ending the statement at ``i`` (brackets skipped)."""
    while i < end:
        if toks[i].text in ("(", "[", "{"):
            i = matching(toks, i) + 1
            continue
        if toks[i].text == ";":
            return i
        i += 1
    return end - 1


def _members(toks: list[Tok]) -> list[tuple[list[Tok], str, list[list[Tok]]]]:
    out, i = [], 0
    while i < len(toks):
        j = _statement_end(toks, i, len(toks))
        p = _param(toks[i:j])
        if p is not None:
            out.append((p.type, p.name, p.dims))
        i = j + 1
    return out


def _param(toks: list[Tok]) -> Param | None:
    """``const float x[16][32]`` / ``hls::stream<T> &s`` / ``hls::stream<T> (&s)[4]`` -> Param."""
    toks = [t for t in toks if t.text not in ("(", ")")] if any(t.text == "(" for t in toks) else toks
    dims = []
    while toks and toks[-1].text == "]":
        depth, k = 0, len(toks) - 1
        while k >= 0:
            depth += toks[k].text == "]"
            depth -= toks[k].text == "["
            if depth == 0:
                break
            k -= 1
        dims.insert(0, toks[k + 1:-1])
        toks = toks[:k]
    if "=" in [t.text for t in toks]:
        toks = toks[:[t.text for t in toks].index("=")]
    if not toks or not re.match(r"[A-Za-z_]", toks[-1].text):
        return None
    return Param(toks[-1].text, toks[:-1], dims)


def _body(toks: list[Tok], i: int, end: int, parent: Loop | None = None) -> list:
    """The statements of a block (``toks[i:end]``)."""
    out: list = []
    label = None
    while i < end:
        t = toks[i]
        if t.text.startswith("#pragma"):
            out.append(Pragma(t))
            i += 1
        elif t.text == "{":
            close = matching(toks, i)
            out.append(Block(_body(toks, i + 1, close, parent), t.line))
            i = close + 1
        elif re.match(r"[A-Za-z_]\w*$", t.text) and i + 2 < end and toks[i + 1].text == ":" and \
                toks[i + 2].text in ("for", "while", "do"):
            label = t.text
            i += 2
            continue
        elif t.text in ("for", "while") and i + 1 < end and toks[i + 1].text == "(":
            close = matching(toks, i + 1)
            header = toks[i + 2:close]
            loop = Loop(label, _loop_var(header, t.text), header, [], t.line, t.col, parent)
            s, e = _sub_statement(toks, close + 1, end)
            loop.body = _body(toks, s, e, loop)
            out.append(loop)
            i = _after(toks, close + 1, end)
        elif t.text == "if" and i + 1 < end and toks[i + 1].text == "(":
            close = matching(toks, i + 1)
            s, e = _sub_statement(toks, close + 1, end)
            then = _body(toks, s, e, parent)
            i = _after(toks, close + 1, end)
            orelse: list = []
            if i < end and toks[i].text == "else":
                s, e = _sub_statement(toks, i + 1, end)
                orelse = _body(toks, s, e, parent)
                i = _after(toks, i + 1, end)
            out.append(If(toks[_index(toks, t) + 2:close], then, orelse, t.line))
        elif t.text == ";":
            i += 1
        else:
            j = _statement_end(toks, i, end)
            out.append(Stmt(toks[i:j + 1]))
            i = j + 1
        label = None
    return out


def _index(toks: list[Tok], t: Tok) -> int:
    return next(k for k, x in enumerate(toks) if x is t)


def _sub_statement(toks: list[Tok], i: int, end: int) -> tuple[int, int]:
    """(start, end) of the tokens of the statement at ``i`` as a block's contents."""
    if i < end and toks[i].text == "{":
        return i + 1, matching(toks, i)
    return i, _after(toks, i, end)


def _after(toks: list[Tok], i: int, end: int) -> int:
    """The index past the statement starting at ``i``."""
    if i >= end:
        return end
    t = toks[i].text
    if t == "{":
        return matching(toks, i) + 1
    if t in ("for", "while") and i + 1 < end and toks[i + 1].text == "(":
        return _after(toks, matching(toks, i + 1) + 1, end)
    if t == "if" and i + 1 < end and toks[i + 1].text == "(":
        k = _after(toks, matching(toks, i + 1) + 1, end)
        if k < end and toks[k].text == "else":
            k = _after(toks, k + 1, end)
        return k
    if t.startswith("#pragma"):
        return i + 1
    if re.match(r"[A-Za-z_]\w*$", t) and i + 2 < end and toks[i + 1].text == ":" and toks[i + 2].text in ("for", "while"):
        return _after(toks, i + 2, end)
    return _statement_end(toks, i, end) + 1


def _loop_var(header: list[Tok], kind: str) -> str | None:
    parts = split_top(header, ";")
    if kind != "for" or len(parts) != 3:
        return None
    inc = parts[2]
    names = [t.text for t in inc if re.match(r"[A-Za-z_]\w*$", t.text)]
    return names[0] if names else None


# ------------------------------------------------------------------------------------ walking
def walk(body: list, loops: tuple = ()):
    """(statement, enclosing loops outermost first) for every Stmt, Pragma and Loop in ``body``, depth first;
    an If's condition is visited as a Stmt."""
    for s in body:
        if isinstance(s, Loop):
            yield s, loops
            yield from walk(s.body, loops + (s,))
        elif isinstance(s, Block):
            yield from walk(s.body, loops)
        elif isinstance(s, If):
            if s.cond:
                yield Stmt(s.cond), loops
            yield from walk(s.then, loops)
            yield from walk(s.orelse, loops)
        else:
            yield s, loops


def idents(toks: list[Tok]) -> set[str]:
    """The identifiers of ``toks`` (member names after ``.`` and ``->`` left out)."""
    out = set()
    for k, t in enumerate(toks):
        if re.match(r"[A-Za-z_]\w*$", t.text) and not (k and toks[k - 1].text in (".", "->", "::")):
            out.add(t.text)
    return out


@dataclass
class Access:
    """``name[i0][i1]...`` in a statement."""

    name: str
    indices: list[list[Tok]]
    write: bool
    tok: Tok


ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}


def accesses(toks: list[Tok], names) -> list[Access]:
    """The subscripted uses of ``names`` in one statement; a write is the statement's first term assigned to."""
    out = []
    for k, t in enumerate(toks):
        if t.text not in names or (k and toks[k - 1].text in (".", "->", "::")):
            continue
        j, idx = k + 1, []
        while j < len(toks) and toks[j].text == "[":
            close = matching(toks, j)
            idx.append(toks[j + 1:close])
            j = close + 1
        if not idx:
            continue
        start = k == 0 or (k == 1 and toks[0].text == "const")
        write = start and j < len(toks) and toks[j].text in ASSIGN
        out.append(Access(t.text, idx, write, t))
    return out


_NOT_TYPE = {"return", "else", "break", "continue", "goto", "case", "default", "delete", "new", "throw", "sizeof"}
_BUILTIN_WORDS = {"int", "long", "char", "short", "unsigned", "signed", "float", "double", "bool"}


def is_ident(s: str) -> bool:
    return re.match(r"[A-Za-z_]\w*$", s) is not None


def split_angles(toks: list[Tok]) -> list[Tok]:
    """``toks`` with each ``>>`` as two ``>`` (a type's nested template arguments, ``token<ap_int<4>, 8>>``)."""
    out = []
    for t in toks:
        if t.text == ">>":
            out += [Tok(">", t.line, t.col), Tok(">", t.line, t.col + 1)]
        else:
            out.append(t)
    return out


def close_angle(toks: list[Tok], k: int) -> int:
    """The index of the ``>`` closing the template argument list opened at ``k`` (``>>`` closes two)."""
    depth = 0
    for j in range(k, len(toks)):
        depth += toks[j].text == "<"
        depth -= 1 if toks[j].text == ">" else 2 if toks[j].text == ">>" else 0
        if depth <= 0:
            return j
    return len(toks) - 1


def declared(stmt: Stmt) -> str | None:
    """The variable a declaration statement declares (``const int at = ...`` -> ``at``), or None."""
    toks = [t for t in stmt.toks if t.text not in ("const", "static", "volatile", "constexpr")]
    n = len(toks)
    if n < 3 or not is_ident(toks[0].text) or toks[0].text in _NOT_TYPE:
        return None
    k = 1  # past the type: words joined by ::, template arguments, unsigned int / long long, then & or *
    while k < n:
        if toks[k].text == "<":
            k = close_angle(toks, k) + 1
        elif toks[k].text == "::" and k + 1 < n:
            k += 2
        elif toks[k].text in _BUILTIN_WORDS and toks[k - 1].text in _BUILTIN_WORDS:
            k += 1
        else:
            break
    while k < n and toks[k].text in ("&", "*"):
        k += 1
    if k + 1 < n and is_ident(toks[k].text) and toks[k + 1].text in ("=", ";", "[", "(", "{"):
        return toks[k].text
    return None


# -------------------------------------------------------------------------------- evaluating
class NotConstant(Exception):
    """An expression the evaluator cannot compute (a call it does not know, a float, a name with no value)."""


_PREC = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7, "<<": 8,
         ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_CALLS = {"floormod": lambda a, b: a % b if b else 0, "floordiv": lambda a, b: a // b if b else 0,
          "min": min, "max": max}


def _cdiv(a: int, b: int) -> int:
    if b == 0:
        raise NotConstant("division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_BINARY = {"||": lambda a, b: int(bool(a) or bool(b)), "&&": lambda a, b: int(bool(a) and bool(b)),
           "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "&": lambda a, b: a & b, "==": lambda a, b: int(a == b),
           "!=": lambda a, b: int(a != b), "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
           ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b), "<<": lambda a, b: a << b,
           ">>": lambda a, b: a >> b, "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
           "/": _cdiv, "%": lambda a, b: a - b * _cdiv(a, b)}


def evaluate(toks: list[Tok], value) -> int:
    """The value of a C integer expression (literals, names, ``+ - * / % << >> & | ^``, comparisons, ``&& || !``,
    ``?:``, parentheses, ``int`` casts, ``sd::floormod/floordiv/min/max``) with C's division; ``value(name)``
    gives a name's value.  Raises :class:`NotConstant` for anything else."""
    pos = 0

    def peek(k: int = 0) -> str | None:
        return toks[pos + k].text if pos + k < len(toks) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(toks):
            raise NotConstant("the expression ends early")
        pos += 1
        return toks[pos - 1].text

    def primary() -> int:
        t = take()
        if t in ("-", "+", "!", "~"):
            v = primary()
            return {"-": -v, "+": v, "!": int(not v), "~": ~v}[t]
        if t == "(":
            if peek() in ("int", "unsigned", "long") and peek(1) == ")":  # a cast to an integer
                take(), take()
                return primary()
            v = ternary()
            if take() != ")":
                raise NotConstant("unbalanced parentheses")
            return v
        if re.fullmatch(r"0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*", t):
            return int(re.sub(r"[uUlL]+$", "", t), 0)
        if is_ident(t):
            name = t
            while peek() == "::":
                take()
                name = take()
            if peek() == "(":
                take()
                args = []
                while peek() != ")":
                    args.append(ternary())
                    if peek() == ",":
                        take()
                take()
                if name not in _CALLS:
                    raise NotConstant(f"a call of {name}")
                return _CALLS[name](*args)
            return value(name)
        raise NotConstant(f"'{t}'")

    def binary(level: int) -> int:
        v = primary()
        while (op := peek()) in _PREC and _PREC[op] >= level:
            take()
            v = _BINARY[op](v, binary(_PREC[op] + 1))
        return v

    def ternary() -> int:
        c = binary(1)
        if peek() != "?":
            return c
        take()
        a = ternary()
        if take() != ":":
            raise NotConstant("a ? without :")
        b = ternary()
        return a if c else b

    v = ternary()
    if pos != len(toks):
        raise NotConstant("more after the expression")
    return v
