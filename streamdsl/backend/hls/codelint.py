"""The rules of the C++ lint (:func:`.lint.lint_code`): the text of a project's synthesis path, read by :mod:`.cxx`,
against each rule; the IR a project was emitted from against its pragmas (``pragmas``)."""
from __future__ import annotations

import ast
import bisect
import functools
import re
import zlib

from ...errors import Loc
from ...ir.deps import bind_class, bound_impl, loop_binds
from ...ir.loops import loops_with_parents
from ...ir.nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Decl, For, If, Kernel, Load, Return, Select, Store, UnaryOp, walk,
)
from . import cxx
from .lint import BUS_BITS, PRICED_BITS, PRICED_WIDE, SYNTHESIS, CodeLintError, Expected

_SCALAR_BITS = {"float": 32, "double": 64, "half": 16, "bool": 1, "char": 8, "signed char": 8, "unsigned char": 8,
                "short": 16, "unsigned short": 16, "int": 32, "unsigned": 32, "unsigned int": 32, "long": 64,
                "unsigned long": 64, "long long": 64, "unsigned long long": 64, "size_t": 64, "ap_slong": 64,
                "ap_ulong": 64}
_CXX17 = [  # (what, a word it needs, pattern) over blanked synthesis-path text
    ("`if constexpr`", "constexpr", r"\bif\s+constexpr\b"),
    ("a `std::..._v` type trait", "_v", r"\bstd\s*::\s*\w+_v\b"),
    ("a structured binding", "auto", r"\bauto\s*(?:&&?)?\s*\["),
    ("an `inline` variable", "inline", r"\binline\s+(?:(?:static|const|constexpr|thread_local|volatile)\s+)*"
                                       r"[\w:]+(?:\s*<[^;(){}]*>)?[\s&*]+\w+\s*(?:=|\{|;)"),
    ("a fold expression", "...", r"\(\s*\.\.\.\s*(?:[-+*/%^&|<>=!]=?|<<|>>|&&|\|\||,)\s*\w|"
                                 r"\w\s*(?:[-+*/%^&|<>=!]=?|<<|>>|&&|\|\|)\s*\.\.\.\s*\)"),
    ("a C++17 attribute", "[[", r"\[\[\s*(?:nodiscard|maybe_unused|fallthrough)\b"),
    ("a C++17 library name", "std", r"\bstd\s*::\s*(?:optional|variant|string_view|any|byte|apply|invoke|clamp|"
                                    r"in_place|conjunction|disjunction|void_t)\b"),
    ("a C++17 header", "include", r"#\s*include\s*<(?:optional|variant|string_view|any|filesystem|charconv|"
                                  r"execution|memory_resource)>"),
    ("a nested namespace definition", "namespace", r"\bnamespace\s+\w+\s*::\s*\w+"),
    ("`template <auto ...>`", "template", r"\btemplate\s*<\s*auto\b"),
    ("`if`/`switch` with an initializer", "", r"\b(?:if|switch)\s*\((?:[^;()]|\([^()]*\))*;"),
]


class Code:
    """The synthesis path of a project's files, read once, and the rules over it."""

    def __init__(self, units: list[cxx.Unit]):
        self.units = units
        self.functions: dict[str, cxx.Function] = {}
        self.unit_of: dict[str, cxx.Unit] = {}
        for u in units:
            for name, f in u.functions.items():
                self.functions[name] = f
                self.unit_of[name] = u
        self.structs = {n: s for u in units for n, s in u.structs.items()}
        self._use: dict[str, dict[str, frozenset]] = {}
        self.typedefs = {**_rt_unit().typedefs, **{n: t for u in units for n, t in u.typedefs.items()}}

    # -------------------------------------------------------------------------------- helpers
    def error(self, rule: str, unit: cxx.Unit, tok: cxx.Tok | int, message: str, hint: str | None = None,
              check: str | None = None):
        line, col, end = (tok, 0, None) if isinstance(tok, int) else (tok.line, tok.col, tok.col + len(tok.text))
        return CodeLintError(rule, message, Loc(unit.file, line, col, end), hint, check)

    def calls(self, toks: list[cxx.Tok]) -> list[tuple[str, list[list[cxx.Tok]], cxx.Tok]]:
        """(callee, argument tokens, the callee's token) of the calls of project functions in ``toks``."""
        out = []
        for k, t in enumerate(toks[:-1]):
            if t.text in self.functions and toks[k + 1].text == "(" and not (k and toks[k - 1].text in (".", "->")):
                close = cxx.matching(toks, k + 1)
                args = cxx.split_top(toks[k + 2:close], ",")
                out.append((t.text, [a for a in args if a], t))
        return out

    def bits(self, toks: list[cxx.Tok], seen=()) -> int | None:
        """The width in bits of a C++ type, or None when the lint cannot tell it."""
        toks = cxx.split_angles([t for t in toks if t.text not in ("const", "volatile", "struct", "&")])
        if toks and toks[-1].text == "]":  # an array type (a typedef's): its element's bits times its size
            k = next(i for i, t in enumerate(toks) if t.text == "[")
            b, j = self.bits(toks[:k], seen), k
            while b is not None and j < len(toks) and toks[j].text == "[":
                end = cxx.matching(toks, j)
                n = _const(toks[j + 1:end])
                b, j = (b * n if n is not None else None), end + 1
            return b
        text = " ".join(t.text for t in toks)
        text = re.sub(r"^(?:::\s*)?(?:std|sd|hls)\s*::\s*", "", text)
        if text in _SCALAR_BITS:
            return _SCALAR_BITS[text]
        m = re.fullmatch(r"u?int(8|16|32|64)_t", text)
        if m:
            return int(m.group(1))
        name = toks[-1].text if toks and not text.endswith(">") else None
        m = re.match(r"^((?:\w+\s*::\s*)*)(\w+)\s*<", text)
        if m:
            lt = next(k for k, t in enumerate(toks) if t.text == "<")
            args = cxx.split_top(toks[lt + 1:cxx.close_angle(toks, lt)], ",")
            base = m.group(2)
            if base in ("ap_int", "ap_uint", "ap_fixed", "ap_ufixed") and args:
                return _const(args[0])
            if base in ("token", "beat") and len(args) == 2:
                each, n = self.bits(args[0], seen), _const(args[1])
                return each * n if each is not None and n is not None else None
            return None
        if name in self.typedefs and name not in seen:
            return self.bits(self.typedefs[name], seen + (name,))
        if name in self.structs and name not in seen:
            total = 0
            for mtype, _, dims in self.structs[name].members:
                b = self.bits(mtype, seen + (name,))
                sizes = [_const(d) for d in dims]
                if b is None or None in sizes:
                    return None
                for s in sizes:
                    b *= s
                total += b
            return total
        return None

    def stream_decls(self, blocks: bool = True):
        """(unit, function or None, statement, name, element type, dims) of every stream variable declared: an
        ``hls::stream`` (a FIFO), and with ``blocks`` an ``hls::stream_of_blocks`` too (a PIPO: the element type
        is its block's, an array type)."""
        kinds = ("stream", "stream_of_blocks") if blocks else ("stream",)
        for u in self.units:
            stmts = [(None, s) for s in u.statements] + [(f, s) for f in u.functions.values()
                                                          for s, _ in cxx.walk(f.body) if isinstance(s, cxx.Stmt)]
            for f, s in stmts:
                toks = cxx.split_angles([t for t in s.toks if t.text != "static"])
                if len(toks) > 3 and [t.text for t in toks[:2]] == ["hls", "::"] and toks[2].text in kinds \
                        and toks[3].text == "<":
                    name = cxx.declared(s)
                    if name is None:
                        continue
                    close = cxx.close_angle(toks, 3)
                    targs = cxx.split_top(toks[4:close], ",")
                    k = next(i for i, t in enumerate(toks) if t.text == name and i > close)
                    dims = []
                    while k + 1 < len(toks) and toks[k + 1].text == "[":
                        end = cxx.matching(toks, k + 1)
                        dims.append(toks[k + 2:end])
                        k = end
                    yield u, f, s, name, targs[0], dims

    # ---------------------------------------------------------------------------- stream-width
    def stream_width(self) -> list[CodeLintError]:
        """The FIFOs' widths; a stream of blocks is memory (a PIPO of whole blocks), not a FIFO."""
        out = []
        for u, _f, s, name, elem, _dims in self.stream_decls(blocks=False):
            b = self.bits(elem)
            where = next(t for t in reversed(s.toks) if t.text == name)
            if b is None:
                out.append(self.error("stream-width", u, where, f"cannot tell the width of {u.quote(elem)}, the element "
                                      f"type of stream '{name}'", hint="streams carry C scalars, ap types, sd::beat "
                                      "or sd::token tiles, or structs of them"))
                continue
            lines = u.lines[max(0, s.line - 2):s.line]
            priced = any(PRICED_WIDE in line for line in lines)
            limit = PRICED_BITS if priced else BUS_BITS
            if b > limit:
                why = "" if not priced else f" (more than the {PRICED_BITS} bits a priced wide stream may have)"
                out.append(self.error(
                    "stream-width", u, where, f"stream '{name}' carries {u.quote(elem)}: {b:,} bits a token, over "
                    f"the {BUS_BITS}-bit bus{why}; a FIFO is built of memories at most 72 bits wide, so this one "
                    f"takes about {-(-b // 72):,} of them side by side",
                    hint=f"move the tile as beats of at most {BUS_BITS} bits (sd::beat<T, L>); {PRICED_BITS} "
                         f"where the model prices it, marked '// {PRICED_WIDE}'"))
        return out

    # --------------------------------------------------------------------------- strided-m_axi
    def maxi(self) -> dict[str, set[str]]:
        """Function -> its m_axi arrays: the top's interface ports and the parameters they are passed to."""
        arrays: dict[str, set[str]] = {n: set() for n in self.functions}
        for n, f in self.functions.items():
            for s, _ in cxx.walk(f.body):
                if isinstance(s, cxx.Pragma):
                    o = s.hls("interface")
                    if o is not None and (o.get("mode", "").lower() == "m_axi" or "m_axi" in s.words) and "port" in o:
                        arrays[n].add(o["port"])
        changed = True
        while changed:
            changed = False
            for n, f in self.functions.items():
                for s, _ in cxx.walk(f.body):
                    if not isinstance(s, cxx.Stmt):
                        continue
                    for callee, args, _t in self.calls(s.toks):
                        params = self.functions[callee].params
                        for a, p in zip(args, params):
                            a = cxx.strip_parens(a)
                            if len(a) == 1 and a[0].text in arrays[n] and p.name not in arrays[callee]:
                                arrays[callee].add(p.name)
                                changed = True
        return arrays

    def strided(self) -> list[CodeLintError]:
        out = []
        arrays = self.maxi()
        for n, f in self.functions.items():
            if not arrays[n]:
                continue
            u = self.unit_of[n]
            inside: dict[int, tuple] = {}  # id(loop) -> (the names that vary inside it, the constants it declares)
            for s, loops in cxx.walk(f.body):
                if not isinstance(s, cxx.Stmt):
                    continue
                piped = next((lp for lp in loops if (o := lp.pragma("pipeline")) is not None and "off" not in o),
                             None)  # the outermost: Vitis unrolls the loops inside a pipeline
                if piped is None:
                    continue
                eff = piped
                while eff.trips() == 1 and eff.parent is not None:
                    eff = eff.parent  # a pipeline of one trip: the loop around it is the one that iterates
                varies, consts = inside.setdefault(id(eff), _varying(eff))
                unrolled = {lp.var for lp in loops[loops.index(piped) + 1:] if lp.var}
                for a in cxx.accesses(s.toks, arrays[n]):
                    why = _strided_why(a, eff, varies, consts, unrolled)
                    if why:
                        idx = "".join(f"[{u.quote(i)}]" for i in a.indices)
                        out.append(self.error(
                            "strided-m_axi", u, cxx.Tok(a.name + idx, a.tok.line, a.tok.col),  # the whole access
                            f"m_axi array '{a.name}' is {'written' if a.write else 'read'} at {a.name}{idx} inside "
                            f"the pipelined loop at line {piped.line}: {why}; the accesses cannot burst "
                            "(one AXI transaction each)",
                            hint="move the tensor in bus words in the order it lies in memory (a burst) and "
                                 "reorder it on chip; or pipeline the loop that walks its last dimension"))
        return out

    # ------------------------------------------------------------------------------------- cxx17
    def cxx17(self) -> list[CodeLintError]:
        out = []
        for u in self.units:
            code = u.code
            starts = [0] + [m.end() for m in re.finditer("\n", code)]
            for what, needle, pattern in _CXX17:
                for m in re.finditer(pattern, code) if needle in code else ():
                    line = bisect.bisect_right(starts, m.start())
                    col = m.start() - starts[line - 1]
                    tok = cxx.Tok(m.group(0).split("\n")[0], line, col)
                    out.append(self.error("cxx17", u, tok, f"{what} is C++17; the synthesis path is C++14 "
                                          "(UG1399 documents C, C++11 and C++14)",
                                          hint="use tag dispatch or overloads for if constexpr, "
                                               "std::is_x<T>::value for std::is_x_v<T>"))
        return out

    # ------------------------------------------------------------------- one writer, one reader
    @functools.cached_property
    def regions(self) -> list[tuple[cxx.Function, dict, list]]:
        """(region function, stream name -> (statement, lanes), process calls (callee, args, token))."""
        out = []
        for f in self.functions.values():
            if not any(isinstance(s, cxx.Pragma) and s.hls("dataflow") is not None for s in f.body):
                continue
            streams = {name: (s, dims) for u, g, s, name, _e, dims in self.stream_decls() if g is f}
            calls = [c for s in f.body if isinstance(s, cxx.Stmt) for c in self.calls(s.toks)]
            out.append((f, streams, calls))
        return out

    def use(self, fn: str, _seen: tuple = ()) -> dict[str, frozenset]:
        """Parameter -> what ``fn`` does with the stream it names: ``{"r"}``, ``{"w"}`` or both (through the
        functions it passes it to, too)."""
        if fn not in self._use:
            self._use[fn] = self._stream_use(fn, _seen)
        return self._use[fn]

    def _stream_use(self, fn: str, _seen: tuple) -> dict[str, frozenset]:
        f = self.functions[fn]
        streams = {p.name for p in f.params if p.is_stream}
        out: dict[str, set] = {p: set() for p in streams}
        for s, _ in cxx.walk(f.body):
            if not isinstance(s, cxx.Stmt):
                continue
            toks = s.toks
            lock = _lock(toks)
            for k, t in enumerate(toks):
                if t.text not in streams or (k and toks[k - 1].text in (".", "->", "::")):
                    continue
                if lock and k and toks[k - 1].text in ("(", "{"):  # hls::write_lock<B> b(s): a block of s
                    out[t.text].add(lock)
                    continue
                j = k + 1
                while j < len(toks) and toks[j].text == "[":
                    j = cxx.matching(toks, j) + 1
                if j + 1 < len(toks) and toks[j].text == "." and toks[j + 1].text in ("read", "read_nb"):
                    out[t.text].add("r")
                elif j + 1 < len(toks) and toks[j].text == "." and toks[j + 1].text in ("write", "write_nb"):
                    out[t.text].add("w")
                elif j < len(toks) and toks[j].text == ">>":
                    out[t.text].add("r")
                elif j < len(toks) and toks[j].text == "<<":
                    out[t.text].add("w")
            for callee, args, _t in self.calls(toks):
                if callee in _seen or callee == fn:
                    continue
                inner = self.use(callee, _seen + (fn,))
                for a, p in zip(args, self.functions[callee].params):
                    a = cxx.strip_parens(a)
                    if a and a[0].text in streams and p.name in inner:
                        out[a[0].text] |= inner[p.name]
        return {p: frozenset(m) for p, m in out.items()}

    def ends(self, streams: dict, calls: list) -> dict[str, dict[str, list]]:
        """Stream -> {"w": [(call index, lane or None)], "r": [...]} over a region's process calls."""
        out = {name: {"w": [], "r": []} for name in streams}
        for i, (callee, args, _t) in enumerate(calls):
            use = self.use(callee)
            for a, p in zip(args, self.functions[callee].params):
                a = cxx.strip_parens(a)
                if not a or a[0].text not in streams:
                    continue
                lane = _const(a[2:-1]) if len(a) > 3 and a[1].text == "[" and a[-1].text == "]" else None
                for mode in sorted(use.get(p.name, ())):
                    out[a[0].text][mode].append((i, lane))
        return out

    def writers_readers(self) -> list[CodeLintError]:
        out = []
        for f, streams, calls in self.regions:
            u = self.unit_of[f.name]
            for name, ends in self.ends(streams, calls).items():
                decl = streams[name][0].toks[0]
                for mode, what in (("w", "writer"), ("r", "reader")):
                    procs = ends[mode]
                    if not procs:
                        out.append(self.error("one-writer-reader", u, decl, f"stream '{name}' of region '{f.name}' "
                                              f"has no {what}: no process the region calls "
                                              f"{'writes' if mode == 'w' else 'reads'} it",
                                              hint="every stream joins one writing process to one reading process"))
                    clash = [(i, lane) for k, (i, lane) in enumerate(procs) for (j, other) in procs[:k]
                             if i != j and (lane is None or other is None or lane == other)]
                    if clash:
                        i = clash[0][0]
                        first = next(j for j, _ in procs if j != i)
                        out.append(self.error(
                            "one-writer-reader", u, calls[i][2],
                            f"stream '{name}' of region '{f.name}' has a second {what}: '{calls[i][0]}' "
                            f"{'writes' if mode == 'w' else 'reads'} it after '{calls[first][0]}' (line "
                            f"{calls[first][2].line}); a stream has exactly one writer and one reader",
                            hint="give each consumer its own stream (a fork process copies the tokens)"))
                both = {i for i, _ in ends["w"]} & {i for i, _ in ends["r"]}
                for i in sorted(both):
                    out.append(self.error("one-writer-reader", u, calls[i][2], f"process '{calls[i][0]}' both writes "
                                          f"and reads stream '{name}' of region '{f.name}'",
                                          hint="a FIFO joins two processes; keep a process's own data in a local"))
        return out

    # --------------------------------------------------------------------------- canonical-order
    def canonical(self) -> list[CodeLintError]:
        out = []
        for f, streams, calls in self.regions:
            u = self.unit_of[f.name]
            ends = self.ends(streams, calls)
            for name, e in ends.items():
                if len(e["w"]) == 1 and len(e["r"]) == 1 and e["r"][0][0] < e["w"][0][0]:
                    r, w = e["r"][0][0], e["w"][0][0]
                    out.append(self.error(
                        "canonical-order", u, calls[r][2],
                        f"region '{f.name}' calls '{calls[r][0]}', which reads stream '{name}', before its writer "
                        f"'{calls[w][0]}' (line {calls[w][2].line})",
                        hint="call the processes producers first (UG1448 canonical dataflow): loads, then the "
                             "tasks in the order of their streams, then stores"))
            reads = {i for e in ends.values() for i, _ in e["r"]}
            writes = {i for e in ends.values() for i, _ in e["w"]}
            loads = [i for i in range(len(calls)) if i not in reads and i in writes]
            stores = [i for i in range(len(calls)) if i in reads and i not in writes]
            for i in loads:
                early = [j for j in range(i) if j in reads]
                if early:
                    out.append(self.error("canonical-order", u, calls[i][2], f"region '{f.name}' calls the load "
                                          f"'{calls[i][0]}' after '{calls[early[0]][0]}' (line "
                                          f"{calls[early[0]][2].line}), which reads a stream",
                                          hint="call the processes that only write streams (loads) first"))
            for i in stores:
                late = [j for j in range(i + 1, len(calls)) if j in writes]
                if late:
                    out.append(self.error("canonical-order", u, calls[i][2], f"region '{f.name}' calls the store "
                                          f"'{calls[i][0]}' before '{calls[late[0]][0]}' (line "
                                          f"{calls[late[0]][2].line}), which writes a stream",
                                          hint="call the processes that only read streams (stores) last"))
        return out

    # ----------------------------------------------------------------------------------- pragmas
    def pragmas(self, exp: Expected) -> list[CodeLintError]:
        out = []
        for fn, k, body in exp.functions:
            f = self.functions.get(fn)
            if f is None:
                u = self.units[0]
                out.append(self.error("pragmas", u, 1, f"the project has no function '{fn}' for kernel '{k.name}'"))
                continue
            out += self._kernel_pragmas(f, k, body)
        for fn, k, lp in exp.dissolved:
            f = self.functions.get(fn)
            if f is None:
                continue
            u = self.unit_of[fn]
            dropped = {a: v for a, v in lp.attrs if a in ("pipeline", "unroll")}
            if dropped:
                out.append(self.error(
                    "pragmas", u, f.line, f"loop '{lp.var}' of kernel '{k.name}' runs once and '{fn}' emits its "
                    f"body without it, dropping its {_attrs(dropped)} (which pipelines the body and unrolls the "
                    "loops in it)", hint="schedule the loops inside it, or drop the pragma from a loop of one trip",
                    check="one-trip-loop"))
            have = {(o.get("op"), o.get("impl")) for s, _ in cxx.walk(f.body) if isinstance(s, cxx.Pragma)
                    for o in [s.hls("bind_op")] if o is not None}
            for op, impl in sorted(_bind_ops(lp) - have):
                out.append(self.error("pragmas", u, f.line, f"loop '{lp.var}' of kernel '{k.name}' (run once, as "
                                      f"'{fn}''s body) binds its {op} operators to {impl}, but '{fn}' has no "
                                      f"'#pragma HLS bind_op ... op={op} impl={impl}'"))
        out += self._fifo_pragmas(exp.fifos)
        return out

    def _kernel_pragmas(self, f: cxx.Function, k: Kernel, body) -> list[CodeLintError]:
        out = []
        u = self.unit_of[f.name]
        c = lambda name: f.renamed.get(name, name)  # noqa: E731  the C++ name of a Python name
        loops = [lp for lp, _ in cxx.walk(f.body) if isinstance(lp, cxx.Loop) and lp.label and lp.var]
        seen: dict[str, int] = {}
        pragmas = [(s, ls) for s, ls in cxx.walk(f.body) if isinstance(s, cxx.Pragma)]
        for lp, _ in loops_with_parents(body):
            var = c(lp.var)
            n = seen.get(var, 0)
            seen[var] = n + 1
            attrs = {a: v for a, v in lp.attrs}
            if not attrs:
                continue
            mine = [t for t in loops if t.var == var]
            if n >= len(mine):
                out.append(self.error("pragmas", u, f.line, f"'{f.name}' has no loop for loop '{lp.var}' of kernel "
                                      f"'{k.name}', so its {_attrs(attrs)} is not emitted"))
                continue
            t = mine[n]
            head = cxx.Tok("for", t.line, t.col)
            if "pipeline" in attrs and (t.pragma("pipeline") or {}).get("ii") != str(attrs["pipeline"]):
                out.append(self.error("pragmas", u, head, f"loop '{t.label}' (loop '{lp.var}' of kernel "
                                      f"'{k.name}', pipeline II={attrs['pipeline']}) has no "
                                      f"'#pragma HLS pipeline II={attrs['pipeline']}'"))
            if "unroll" in attrs:
                got = t.pragma("unroll")
                want = None if attrs["unroll"] == 0 else str(attrs["unroll"])
                if got is None or got.get("factor") != want:
                    text = "#pragma HLS unroll" + (f" factor={want}" if want else "")
                    out.append(self.error("pragmas", u, head, f"loop '{t.label}' (loop '{lp.var}' of kernel "
                                          f"'{k.name}') has no '{text}'"))
            want = _bind_ops(lp)
            if want:
                have = {(o.get("op"), o.get("impl")) for s, ls in pragmas if t in ls
                        for o in [s.hls("bind_op")] if o is not None}
                for op, impl in sorted(want - have):
                    out.append(self.error("pragmas", u, head, f"loop '{t.label}' (loop '{lp.var}' of kernel "
                                          f"'{k.name}') binds its {op} operators to {impl}, but no "
                                          f"'#pragma HLS bind_op ... op={op} impl={impl}' is inside it",
                                          hint="name the operator and bind it (Emitter.binding)"))
        parts = {}  # C++ variable -> the array_partition pragmas on it
        storage = {}
        for s, _ in pragmas:
            if (o := s.hls("array_partition")) is not None:
                parts.setdefault(o.get("variable"), []).append(o)
            if (o := s.hls("bind_storage")) is not None:
                storage[o.get("variable")] = o
        decl_dims = {}
        for s, _ in cxx.walk(f.body):
            if isinstance(s, cxx.Stmt) and (name := cxx.declared(s)) is not None:
                ks = [i for i, x in enumerate(s.toks) if x.text == name]
                dims, j = [], ks[0] + 1
                while j < len(s.toks) and s.toks[j].text == "[":
                    end = cxx.matching(s.toks, j)
                    dims.append(_const(s.toks[j + 1:end]))
                    j = end + 1
                decl_dims.setdefault(name, dims)
        allocs = [a for s in body for a in walk(s) if isinstance(a, Alloc)]
        wanted = [(a.name, a.attrs.get("partition", ()), a.attrs.get("bind")) for a in allocs]
        wanted += [(p, list(ps), None) for p, ps in k.attrs.get("partition", ())]
        for name, partition, bind in wanted:
            var = c(name)
            names = [v for v in parts if v == var or (v or "").startswith(var + "_local")] or [var]
            dims = decl_dims.get(names[0], [])
            for dim, kind, factor in partition:
                if 0 < dim <= len(dims) and dims[dim - 1] == 1:
                    continue  # a one-token window's dimension of one: nothing to partition
                if not any(o.get("dim") == str(dim) for v in names for o in parts.get(v, [])):
                    out.append(self.error("pragmas", u, f.line, f"'{f.name}' has no '#pragma HLS array_partition "
                                          f"variable={var} ... dim={dim}' for the {kind} partition of '{name}' in "
                                          f"kernel '{k.name}'"))
            if bind == "reg" and not any(o.get("dim") == "0" and o.get("type") == "complete"
                                         for o in parts.get(var, [])):
                out.append(self.error("pragmas", u, f.line, f"'{f.name}' does not partition '{var}' completely "
                                      f"(dim=0) though kernel '{k.name}' binds '{name}' to registers"))
            elif bind in ("bram", "uram", "lutram") and storage.get(var, {}).get("impl") != bind:
                out.append(self.error("pragmas", u, f.line, f"'{f.name}' has no '#pragma HLS bind_storage "
                                      f"variable={var} ... impl={bind}' for buffer '{name}' of kernel '{k.name}'"))
        return out

    def _fifo_pragmas(self, fifos: dict[str, int]) -> list[CodeLintError]:
        out = []
        decls = {name: (u, s) for u, _f, s, name, _e, _d in self.stream_decls()}
        depth = {}
        for f in self.functions.values():
            for s, _ in cxx.walk(f.body):
                if isinstance(s, cxx.Pragma) and (o := s.hls("stream")) is not None:
                    depth[o.get("variable")] = o.get("depth")
        for name, d in fifos.items():
            if depth.get(name) != str(d):
                u, s = decls.get(name, (self.units[0], None))
                out.append(self.error("pragmas", u, s.toks[0] if s else 1, f"stream '{name}' has no "
                                      f"'#pragma HLS stream variable={name} depth={d}' (the schedule's depth)"
                                      + (f"; it says depth={depth[name]}" if name in depth else "")))
        return out


def _lock(toks: list[cxx.Tok]) -> str | None:
    """``"w"`` for a statement declaring an ``hls::write_lock`` (it takes a block of a stream of blocks to fill),
    ``"r"`` for an ``hls::read_lock``, else None."""
    words = [t.text for t in toks[:4] if t.text != "const"]
    if words[:2] == ["hls", "::"] and len(words) > 2:
        return {"write_lock": "w", "read_lock": "r"}.get(words[2])
    return None


def _const(toks: list[cxx.Tok]) -> int | None:
    """An integer constant expression of literals (``4096``, ``16 * 4``), else None."""
    text = " ".join(t.text for t in toks)
    text = re.sub(r"(?<=\d)[uUlL]+\b", "", text)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    ok = all(isinstance(n, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop))
             for n in ast.walk(tree))
    if not ok or any(isinstance(n, ast.Constant) and not isinstance(n.value, int) for n in ast.walk(tree)):
        return None
    try:
        v = eval(compile(tree, "<const>", "eval"), {"__builtins__": {}})  # literals and + - * / only
    except (ArithmeticError, ValueError):
        return None
    return int(v)


@functools.lru_cache(maxsize=1)
def _rt_unit() -> cxx.Unit:
    """streamdsl_rt.h's synthesis side, for its typedefs (``sd::word``)."""
    from .project import INCLUDE

    path = INCLUDE / "streamdsl_rt.h"
    return cxx.read(str(path), path.read_text(), SYNTHESIS)


def _varying(loop: cxx.Loop) -> tuple[set[str], dict[str, list[cxx.Tok]]]:
    """(the names whose value may change between iterations of ``loop``: its variable, the variables of the loops
    inside it, what its body declares or assigns; the ``const`` locals it declares, with their initialisers)."""
    out = {loop.var} if loop.var else set()
    consts = {}
    for s, _ in cxx.walk(loop.body):
        if isinstance(s, cxx.Loop) and s.var:
            out.add(s.var)
        elif isinstance(s, cxx.Stmt) and (name := cxx.declared(s)) is not None:
            out.add(name)
            eq = next((k for k, x in enumerate(s.toks) if x.text == "="), None)
            if s.toks[0].text == "const" and eq is not None and s.toks[-1].text == ";":
                consts[name] = s.toks[eq + 1:-1]
        elif isinstance(s, cxx.Stmt):
            toks = s.toks
            if len(toks) > 1 and cxx.is_ident(toks[0].text) and toks[1].text in cxx.ASSIGN | {"++", "--"}:
                out.add(toks[0].text)
            elif len(toks) > 1 and toks[0].text in ("++", "--") and cxx.is_ident(toks[1].text):
                out.add(toks[1].text)
    return out, consts


def _strided_why(a: cxx.Access, loop: cxx.Loop, varies: set[str], consts: dict, unrolled: set[str]) -> str | None:
    """Why access ``a`` inside the pipeline iterating over ``loop`` does not walk memory one element an
    iteration, or None.  The index is computed for the loop's iterations with every invariant at a few values;
    an index the evaluator cannot compute is judged by its shape: ``var + invariant`` in the last dimension."""
    n = len(a.indices)
    for d, idx in enumerate(a.indices):
        inner = sorted(_names(idx, consts) & unrolled)
        if inner and d < n - 1:
            return f"loop '{inner[0]}', unrolled inside the pipeline, moves its index in dimension {d + 1} of {n} " \
                   "(not the last): a strided tile each iteration"
        if inner:
            return f"loop '{inner[0]}', unrolled inside the pipeline, moves a whole tile each iteration"
    try:
        return _probe(a, loop, varies, consts)
    except cxx.NotConstant:
        pass
    var = loop.var
    for d, idx in enumerate(a.indices[:-1]):
        moving = sorted(cxx.idents(idx) & varies)
        if moving:
            return f"its index in dimension {d + 1} of {n} (not the last) moves with '{moving[0]}' from one " \
                   "iteration to the next: a strided walk"
    terms = [cxx.strip_parens(t) for t in cxx.split_top(cxx.strip_parens(a.indices[-1]), "+")]
    moving = [t for t in terms if cxx.idents(t) & varies]
    if not moving or (len(moving) == 1 and len(moving[0]) == 1 and moving[0][0].text == var):
        return None  # the same element every iteration, or var + invariant: one element an iteration, in order
    return f"its last index does not step by one element an iteration of the pipelined loop's '{var}'"


def _names(toks: list[cxx.Tok], consts: dict, seen: frozenset = frozenset()) -> set[str]:
    """The names ``toks`` depends on, through the constants they name."""
    out = set()
    for name in cxx.idents(toks):
        out.add(name)
        if name in consts and name not in seen:
            out |= _names(consts[name], consts, seen | {name})
    return out


_SAMPLES = 3  # the invariants at 0, at small and at larger values


def _probe(a: cxx.Access, loop: cxx.Loop, varies: set[str], consts: dict) -> str | None:
    """``_strided_why`` by computing the index at the loop's first iterations (raises NotConstant)."""
    if loop.var is None:
        raise cxx.NotConstant("a loop without a variable")
    trips = loop.trips()
    count = min(trips if trips is not None else 16, 16)
    if count < 2:
        return None
    init = cxx.split_top(loop.header, ";")[0]
    eq = next((k for k, t in enumerate(init) if t.text == "="), None)
    n = len(a.indices)
    for salt in range(_SAMPLES):
        def value(name: str, i: int, depth: int = 0) -> int:
            if name == loop.var:
                return i
            if name in consts and depth < 16:
                return cxx.evaluate(consts[name], lambda m: value(m, i, depth + 1))
            if name in varies:
                raise cxx.NotConstant(f"'{name}' changes inside the loop")
            return 0 if salt == 0 else zlib.crc32(name.encode()) % (7 if salt == 1 else 97) + salt

        start = cxx.evaluate(init[eq + 1:], lambda m: value(m, 0)) if eq is not None else 0
        rows = [[cxx.evaluate(idx, lambda m, i=i: value(m, i)) for idx in a.indices]
                for i in range(start, start + count)]
        for d in range(n - 1):
            if any(r[d] != rows[0][d] for r in rows):
                return f"its index in dimension {d + 1} of {n} (not the last) changes from one iteration of " \
                       f"'{loop.var}' to the next: a strided walk"
        steps = sorted({b[-1] - r[-1] for r, b in zip(rows, rows[1:])})
        if steps not in ([0], [1]):
            return f"its last index steps by {', '.join(map(str, steps))} from one iteration of '{loop.var}' to " \
                   "the next, not by one"
    return None


def _attrs(attrs: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in attrs.items())


_OP_NAME = {"add": "fadd", "sub": "fsub", "mul": "fmul"}


def _bind_ops(loop: For) -> set[tuple[str, str]]:
    """The (op, impl) pairs of the ``bind_op`` pragmas the emitter writes inside ``loop`` for the bindings it
    sets: every operator of a bound class it names (not in a select's branches or a loop's bounds)."""
    own = loop_binds(loop.attrs)
    if not own:
        return set()
    out: set[tuple[str, str]] = set()

    def expr(e, stack):
        if isinstance(e, BinOp):
            cls = bind_class(e)
            impl = bound_impl(stack, cls)
            if impl is not None and cls in own:
                out.add(("mul" if cls == "mul" else _OP_NAME[e.op], impl))
            expr(e.lhs, stack)
            expr(e.rhs, stack)
        elif isinstance(e, Select):
            expr(e.cond, stack)
        elif isinstance(e, Load):
            for i in e.indices:
                expr(i, stack)
        elif isinstance(e, (UnaryOp, Cast)):
            expr(e.operand, stack)
        elif isinstance(e, Call):
            for x in e.args:
                expr(x, stack)

    def stmts(body, stack):
        for s in body:
            if isinstance(s, For):
                b = loop_binds(s.attrs)
                stmts(s.body, stack + [b] if b else stack)
            elif isinstance(s, Store):
                for i in s.indices:
                    expr(i, stack)
                expr(s.value, stack)
            elif isinstance(s, (Decl, Alloc)) and getattr(s, "init", None) is not None:
                expr(s.init, stack)
            elif isinstance(s, Assign):
                expr(s.value, stack)
            elif isinstance(s, If):
                expr(s.cond, stack)
                stmts(s.then, stack)
                stmts(s.orelse, stack)
            elif isinstance(s, CallKernel):
                for a in s.args:
                    expr(a, stack)
            elif isinstance(s, Return):
                for v in s.values:
                    expr(v, stack)

    stmts(loop.body, [own])
    return out
