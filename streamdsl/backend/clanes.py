"""Jammed iterations as the lanes of vectors (``cgen.py``): float32 sums four at a time, bit for bit.

A jammed loop (:class:`cnest.Jam`) runs ``U`` independent iterations side by side.  When the innermost
body only updates float32 values of its iteration (a ``let`` made before the nest, or an array cell that
stays put inside the nest) with ``+ - * /`` of loads and values fixed for the iteration, copies ``4g ..
4g+3`` become the four lanes of GCC vectors: lane ``u`` computes copy ``u``'s operations in copy ``u``'s
order (vector arithmetic is IEEE per lane and is not contracted), so the results are the scalar jam's
bits.  An operand that differs between copies is loaded as a vector: one load when the copies' elements
are adjacent (``B[k, j + u]``); four loads along ``k``, transposed in registers, when they are a row
apart (``W[o + u, k]``, the linears' weights: the scalar code loads one float at a time from four rows).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..ir.nodes import Assign, BinOp, Const, Decl, Expr, For, Load, Store, UnaryOp, Var, walk
from ..types import FloatType, TensorType
from .cnest import Form, Jam, flat_step

LANES = 4


def _f32(t) -> bool:
    return isinstance(t, FloatType) and t.name == "f32"


@dataclass
class Lanes:
    """How a jam runs in vectors: ``groups`` vectors of four copies each."""

    jam: Jam
    groups: int
    accs: list[str]  # the iteration's lets the nest assigns: vectors, unpacked after the nest
    reads: list[str]  # the iteration's lets the nest only reads
    cells: dict[tuple, Store] = field(default_factory=dict)  # the array cells the nest updates: (name, forms)
    kinds: dict[int, str] = field(default_factory=dict)  # id(Load) -> splat | vector | rows | gather | cell


def plan(j: Jam, forms: dict[int, tuple[Form, ...]], array: Callable[[str], TensorType | None]) -> Lanes | None:
    """The vector form of ``j``, or None when its innermost body is not float32 updates of that kind."""
    s, nest = j.loop, j.nest
    body = nest[-1].body
    lets = {d.name: d for d in j.pre if isinstance(d, Decl)}
    inner = {d.name for d in body if isinstance(d, Decl)}
    nest_vars = {f.var for f in nest}
    stored = {st.name for f in nest for st in walk(f) if isinstance(st, Store)}
    accs: list[str] = []
    cells: dict[tuple, Store] = {}
    for st in body:
        if isinstance(st, Assign):
            if st.name not in lets or not _f32(lets[st.name].dtype):
                return None
            accs += [st.name] if st.name not in accs else []
        elif isinstance(st, Store):
            t = array(st.name)
            f = forms.get(id(st))
            if t is None or not _f32(t.dtype) or f is None or any(x.coeff(v) != 0 for x in f for v in nest_vars):
                return None
            cells[st.name, f] = st
        elif not (isinstance(st, Decl) and _f32(st.dtype)):
            return None
    if not accs and not cells:
        return None
    keys = list(cells)
    for i, (a, f) in enumerate(keys):  # two cells of an array must be apart by a constant: each its own vector
        if any(a == b and not any(p.terms == q.terms and p.fixed == q.fixed and p.const != q.const
                                  for p, q in zip(f, g)) for b, g in keys[i + 1:]):
            return None
    out = Lanes(j, 0, accs, [], cells)
    for st in body:
        if not _value(st.init if isinstance(st, Decl) else st.value, out, lets, inner, forms, array, stored,
                      s, nest[-1]):
            return None
    chains = len(accs) + len(cells)
    out.groups = 2 if chains == 1 else 1
    trips = _trips(s)
    if trips is not None and trips < LANES * out.groups:
        return None
    out.jam = Jam(s, LANES * out.groups, j.pre, j.nest, j.post)
    return out


def _trips(s: For) -> int | None:
    if isinstance(s.start, Const) and isinstance(s.stop, Const):
        return max(0, -(-(s.stop.value - s.start.value) // s.step))
    return None


def _value(e: Expr, out: Lanes, lets, inner, forms, array, stored, jammed: For, innermost: For) -> bool:
    """Check ``e`` can run in lanes, and record how each load is made."""
    if not _f32(e.dtype):
        return False
    if isinstance(e, BinOp) and e.op in ("add", "sub", "mul", "div"):
        return all(_value(x, out, lets, inner, forms, array, stored, jammed, innermost) for x in (e.lhs, e.rhs))
    if isinstance(e, UnaryOp) and e.op == "neg":
        return _value(e.operand, out, lets, inner, forms, array, stored, jammed, innermost)
    if isinstance(e, Const):
        return True
    if isinstance(e, Var):
        if e.name in lets:
            if e.name not in out.accs and e.name not in out.reads:
                out.reads.append(e.name)
            return True
        return e.name in inner or e.name not in _names_set(out.jam)  # a value fixed across the jammed loop
    if isinstance(e, Load):
        t, f = array(e.name), forms.get(id(e))
        if t is None or f is None:
            return False
        if (e.name, f) in out.cells:
            out.kinds[id(e)] = "cell"
            return True
        if e.name in stored:
            return False
        cv, ck = flat_step(f, jammed.var, t.shape), flat_step(f, innermost.var, t.shape)
        cv = None if cv is None else cv * jammed.step  # from one copy (lane) to the next
        if cv is None:
            out.kinds[id(e)] = "gather"
        elif cv == 0:
            out.kinds[id(e)] = "splat"
        elif cv == 1:
            out.kinds[id(e)] = "vector"
        elif ck == 1 and innermost.step == 1:
            out.kinds[id(e)] = "rows"
        else:
            out.kinds[id(e)] = "gather"
        return True
    return False


def _names_set(j: Jam) -> set[str]:
    names = {j.loop.var} | {f.var for f in j.nest}
    for s in j.loop.body:
        for n in walk(s):
            if isinstance(n, (Decl, Assign)):
                names.add(n.name)
    return names


# ------------------------------------------------------------------ printing
def print_lanes(p, ln: Lanes, copies: list, d: int) -> None:
    """The nest of ``ln`` in vectors, printed by ``p`` (``cgen._Function``) inside its jam frame (``copies``:
    the scopes of the jammed iterations, their ``pre`` printed): the iterations' values packed into vectors,
    the nest, the values unpacked for ``post``.  Nothing is packed when the nest runs no iteration (a cell
    is only known in bounds where an iteration reads it)."""
    new, nest = type(copies[0]), ln.jam.nest
    bounds = []
    for f in nest:  # steady bounds (cnest.jam): evaluated once
        flo, fhi = p.fresh("lo"), p.fresh("hi")
        p.emit(d, f"const int64_t {flo} = (int64_t)({p.expr(f.start, copies[0])}); "
                  f"const int64_t {fhi} = (int64_t)({p.expr(f.stop, copies[0])});")
        bounds.append((flo, fhi))
    p.emit(d, f"if ({' && '.join(f'{a} {_cmp(f)} {b}' for f, (a, b) in zip(nest, bounds))}) {{")
    d += 1
    vec: dict[tuple, str] = {}
    for g in range(ln.groups):
        mine = copies[LANES * g:LANES * g + LANES]
        for x in ln.accs + ln.reads:
            vec[g, x] = p.fresh("V" + x)
            p.emit(d, f"sdn::f4 {vec[g, x]} = {{{', '.join(c.find(x) for c in mine)}}};")
        for key, st in ln.cells.items():
            vec[g, key] = p.fresh("C" + st.name)
            p.emit(d, f"sdn::f4 {vec[g, key]} = {{{', '.join(_cell(p, st, c) for c in mine)}}};")
    inner = copies
    for f, (flo, fhi) in zip(nest[:-1], bounds):
        fv = "v_" + p.fresh(f.var)
        p.emit(d, f"for (int64_t {fv} = {flo}; {fv} {_cmp(f)} {fhi}; {fv} += {f.step}) {{")
        inner = [new(c) for c in inner]
        for c in inner:
            c.names[f.var] = fv
        d += 1
    last, (klo, khi) = nest[-1], bounds[-1]
    k = "v_" + p.fresh(last.var)

    def at(kval: str) -> list:
        out = [new(c) for c in inner]
        for c in out:
            c.names[last.var] = kval
        return out

    rows = [ld for ld in (n for st in last.body for n in walk(st)) if ln.kinds.get(id(ld)) == "rows"]
    if rows:
        p.emit(d, f"int64_t {k} = {klo};")
        p.emit(d, f"for (; {k} + {LANES - 1} < {khi}; {k} += {LANES}) {{  // {LANES} rows transposed")
        here, got = at(k), {}
        for g in range(ln.groups):
            for ld in rows:
                arr = p.array(ld.name, here[0])
                names = [p.fresh("R" + ld.name) for _ in range(LANES)]
                loads = ", ".join(f"{n} = sdn::ld4(&{arr.cname}[{p.index(arr, ld.indices, ld, c)}])"
                                  for n, c in zip(names, here[LANES * g:LANES * g + LANES]))
                p.emit(d + 1, f"sdn::f4 {loads};")
                p.emit(d + 1, f"sdn::tr4({', '.join(names)});")
                got[g, id(ld)] = names
        for jj in range(LANES):  # k, k+1, k+2, k+3 in order: every lane adds in its program order
            for g in range(ln.groups):
                _body(p, ln, g, at(f"({k} + {jj})"), {i: n[jj] for (gg, i), n in got.items() if gg == g}, vec, d + 1)
        p.emit(d, "}")
        p.emit(d, f"for (; {k} < {khi}; {k} += 1) {{")
    else:
        p.emit(d, f"for (int64_t {k} = {klo}; {k} {_cmp(last)} {khi}; {k} += {last.step}) {{")
    for g in range(ln.groups):
        _body(p, ln, g, at(k), {}, vec, d + 1)
    p.emit(d, "}")
    for _ in nest[:-1]:
        d -= 1
        p.emit(d, "}")
    for g in range(ln.groups):
        for i, c in enumerate(copies[LANES * g:LANES * g + LANES]):
            for x in ln.accs:
                p.emit(d, f"{c.find(x)} = {vec[g, x]}[{i}];")
            for key, st in ln.cells.items():
                p.emit(d, f"{_cell(p, st, c)} = {vec[g, key]}[{i}];")
    p.emit(d - 1, "}")


def _cmp(f: For) -> str:
    return "<" if f.step > 0 else ">"


def _cell(p, st: Store, scope) -> str:
    arr = p.array(st.name, scope)
    return f"{arr.cname}[{p.index(arr, st.indices, st, scope)}]"


def _body(p, ln: Lanes, g: int, lanes: list, rows: dict[int, str], vec: dict, d: int) -> None:
    """One iteration of the innermost body for the copies of group ``g`` (``lanes``: their scopes)."""
    from .cgen import const

    mine = lanes[LANES * g:LANES * g + LANES]
    temps: dict[str, str] = {}

    def ve(e: Expr) -> str:
        if isinstance(e, BinOp):
            return f"({ve(e.lhs)} {dict(add='+', sub='-', mul='*', div='/')[e.op]} {ve(e.rhs)})"
        if isinstance(e, UnaryOp):
            return f"(-{ve(e.operand)})"
        if isinstance(e, Const):
            return f"sdn::splat4({const(e.value, e.dtype)})"
        if isinstance(e, Var):
            return temps.get(e.name) or vec.get((g, e.name)) or f"sdn::splat4({p.expr(e, mine[0])})"
        kind = ln.kinds[id(e)]
        if kind == "cell":
            return vec[g, (e.name, p.forms[id(e)])]
        if kind == "splat":
            return f"sdn::splat4({p.expr(e, mine[0])})"
        if kind == "vector":
            arr = p.array(e.name, mine[0])
            return f"sdn::ld4(&{arr.cname}[{p.index(arr, e.indices, e, mine[0])}])"
        if kind == "rows" and id(e) in rows:
            return rows[id(e)]
        return "(sdn::f4){" + ", ".join(p.expr(e, c) for c in mine) + "}"

    for st in ln.jam.nest[-1].body:
        if isinstance(st, Decl):
            temps[st.name] = p.fresh("T" + st.name)
            p.emit(d, f"const sdn::f4 {temps[st.name]} = {ve(st.init)};")
        elif isinstance(st, Assign):
            p.emit(d, f"{vec[g, st.name]} = {ve(st.value)};")
        else:
            p.emit(d, f"{vec[g, (st.name, p.forms[id(st)])]} = {ve(st.value)};")


__all__ = ["LANES", "Lanes", "plan", "print_lanes"]
