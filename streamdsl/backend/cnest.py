"""Loop nests of the compiled simulator (``cgen.py``): range checks taken out of a nest, and loops reordered.

Both change how fast the printed C++ runs, never what it computes or which error it raises.

Checks.  An index that is affine in the nest's loop variables (constant coefficients) plus values fixed
across the nest and ``x % C`` terms (:class:`Form`) is checked once before the nest: its exact range over
the box of the loops' ranges (each loop's range from its bounds, themselves such forms of the loops
around it) must lie inside its dimension and inside its own type, so it never wraps and every value it
takes is in bounds.  ``cgen`` prints ``if (all in range) { the nest, those accesses unchecked } else {
the nest as written }``, and the fallback raises the interpreter's error where the interpreter raises it.
An access that runs only under a condition (an ``if``, a branch of a conditional expression, the right
side of ``and``/``or``) keeps its check: its guard is usually what keeps it in bounds.

Reordering, only where every access under the loops was checked before the nest (so no error can come
in an order the program does not have):

* interchange: in a perfect nest, the loop whose step moves the fewest accesses by more than an element
  runs innermost (``for k: for o: A[o] += X[k] * W[o, k]`` as ``for o: for k``; the library's linears
  put the output index innermost, a weight row apart), when every other loop of the new nest has
  independent iterations (``deps.classify``: parallel), so only the order within each output changes;
* unroll-and-jam: a parallel loop whose body is one loop nest carrying a value (a sum), with statements
  before and after it, runs ``U`` iterations side by side, so the innermost loop carries ``U``
  independent chains instead of one (the adder's latency, not its throughput, bounds a single chain);
  ``clanes.py`` runs them in vector lanes where it can.

An innermost loop's transcendentals are computed a strip of iterations at a time (:func:`batchable`).

Independent iterations may interleave in any order that keeps each iteration's own order, so every float
sum is still added in program order, bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from ..ir.deps import carried_accumulations, classify, names_in
from ..ir.nodes import (
    Alloc, Assign, BinOp, Call, Cast, Const, Decl, Expr, For, If, Load, Select, Store, UnaryOp, Var, walk,
)
from ..sched.rewrite import map_expr
from ..types import IntType, TensorType

Key = object  # a loop variable's name, or an ``x % C`` node (a term whose value lies in 0 .. C-1)


@dataclass(frozen=True)
class Form:
    """An integer expression as exact arithmetic: ``sum(c * term) + sum(c * fixed) + const``."""

    terms: tuple[tuple[Key, int], ...] = ()
    fixed: tuple[tuple[Expr, int], ...] = ()  # expressions with one value across the nest
    const: int = 0

    def __add__(self, o: "Form") -> "Form":
        terms = dict(self.terms)
        for k, c in o.terms:
            terms[k] = terms.get(k, 0) + c
        return Form(tuple((k, c) for k, c in terms.items() if c), self.fixed + o.fixed, self.const + o.const)

    def scale(self, k: int) -> "Form":
        return Form(tuple((t, c * k) for t, c in self.terms if c * k), tuple((e, c * k) for e, c in self.fixed),
                    self.const * k)

    def coeff(self, var: str) -> int | None:
        """The step of the value per step of ``var`` (None when a ``% C`` term moves with it)."""
        if any(not isinstance(k, str) and var in names_in(k) for k, _ in self.terms):
            return None
        return dict(self.terms).get(var, 0)


def _int(t) -> bool:
    return isinstance(t, IntType) and (t.bits < 64 or t.signed)  # every value fits an int64


def _widens(src, dst) -> bool:
    return _int(src) and _int(dst) and dst.min <= src.min and src.max <= dst.max


@dataclass
class _Access:
    node: Load | Store
    loops: tuple[For, ...]  # the nest's loops around it, outermost first
    conditional: bool


class Nest:
    """What can be checked before the loop nest ``root``: ``forms`` maps ``id()`` of each such access to the
    :class:`Form` of each of its indices.  ``arrays(name)`` gives an array's type."""

    def __init__(self, root: For, arrays: Callable[[str], TensorType | None]):
        self.loops: list[tuple[For, tuple[For, ...]]] = []
        self.accesses: list[_Access] = []
        self.decls: dict[str, list[Decl]] = {}
        self.assigned: set[str] = set()
        self.defined: set[str] = set()
        self.opaque = False  # a kernel call or a return: nothing is taken out
        self.arrays = arrays
        self._visit(root, (), False)
        self.ranges: dict[int, tuple[Form, Form]] = {}  # id() of a loop whose bounds are forms -> them
        self.forms: dict[int, tuple[Form, ...]] = {}
        if self.opaque:
            return
        self._inlining: set[str] = set()
        for loop, around in self.loops:  # outer loops first, so the ranges a bound needs are known
            start, stop = self.form(loop.start), self.form(loop.stop)
            if start is not None and stop is not None and self._known(start, around) and self._known(stop, around):
                self.ranges[id(loop)] = (start, stop)
        for a in self.accesses:
            t = arrays(a.node.name)
            if a.conditional or t is None or len(t.shape) != len(a.node.indices):
                continue
            forms = [self.form(i) for i in a.node.indices]
            if all(f is not None and self._known(f, a.loops) for f in forms):
                self.forms[id(a.node)] = tuple(forms)  # type: ignore[arg-type]

    def _known(self, f: Form, loops: tuple[For, ...]) -> bool:
        """Every loop variable of ``f`` names a loop around it (``loops``) whose range is known."""
        return all(id(_loop(k, loops)) in self.ranges for k, _ in f.terms if isinstance(k, str))

    # ------------------------------------------------------------ collect
    def _visit(self, s, loops: tuple[For, ...], cond: bool) -> None:
        if isinstance(s, For):
            self.loops.append((s, loops))
            self.defined.add(s.var)
            for e in (s.start, s.stop):
                self._expr(e, loops, cond)
            for b in s.body:
                self._visit(b, loops + (s,), cond)
        elif isinstance(s, If):
            self._expr(s.cond, loops, cond)
            for b in s.then + s.orelse:
                self._visit(b, loops, True)
        elif isinstance(s, Store):
            self._expr(s.value, loops, cond)
            for i in s.indices:
                self._expr(i, loops, cond)
            self.accesses.append(_Access(s, loops, cond))
        elif isinstance(s, Decl):
            self._expr(s.init, loops, cond)
            self.decls.setdefault(s.name, []).append(s)
            self.defined.add(s.name)
        elif isinstance(s, Assign):
            self._expr(s.value, loops, cond)
            self.assigned.add(s.name)
        elif isinstance(s, Alloc):
            if s.init is not None:
                self._expr(s.init, loops, cond)
            self.defined.add(s.name)
        else:  # a kernel call (it may raise) or a return
            self.opaque = True

    def _expr(self, e: Expr, loops, cond: bool) -> None:
        if isinstance(e, Load):
            for i in e.indices:
                self._expr(i, loops, cond)
            self.accesses.append(_Access(e, loops, cond))
        elif isinstance(e, Select):
            self._expr(e.cond, loops, cond)
            self._expr(e.then, loops, True)
            self._expr(e.orelse, loops, True)
        elif isinstance(e, BinOp) and e.op in ("and", "or"):
            self._expr(e.lhs, loops, cond)
            self._expr(e.rhs, loops, True)
        else:
            for n in _kids(e):
                self._expr(n, loops, cond)

    # -------------------------------------------------------------- forms
    def fixed(self, e: Expr) -> bool:
        """``e`` has one value across the nest (reads no array and no name the nest sets)."""
        return not any(isinstance(n, Load) or (isinstance(n, Var) and (n.name in self.defined or n.name in self.assigned))
                       for n in walk(e))

    def form(self, e: Expr, t=None) -> Form | None:
        """``e`` as a :class:`Form` whose value is ``e``'s whenever no operation wraps, or None.

        Every add, sub, mul and neg must be of ``t`` (``e``'s type): the caller checks that the form's
        range lies inside ``t``, and then no operation of ``t`` wrapped (they agree modulo 2**bits).
        Coefficients stay int64 (the C code computes with them)."""
        f = self._form(e, t or e.dtype)
        if f is None or not all(-(1 << 63) <= c < (1 << 63) for c in [f.const] + [c for _, c in f.terms + f.fixed]):
            return None
        return f

    def _form(self, e: Expr, t) -> Form | None:
        if not _int(e.dtype):
            return None
        if isinstance(e, Const):
            return Form(const=int(e.value)) if isinstance(e.value, int) else None
        if self.fixed(e):
            return Form(fixed=((e, 1),))
        if isinstance(e, Var):
            if e.name in self.assigned:
                return None
            if any(l.var == e.name for l, _ in self.loops):
                return Form(terms=((e.name, 1),))
            decls = self.decls.get(e.name, [])
            if len(decls) != 1 or e.name in self._inlining or decls[0].init.dtype != e.dtype:
                return None
            self._inlining.add(e.name)
            try:
                return self.form(decls[0].init, t)
            finally:
                self._inlining.discard(e.name)
        if isinstance(e, Cast):
            if _widens(e.operand.dtype, e.dtype) and isinstance(e.operand, (Var, Const)):
                return self.form(e.operand, e.operand.dtype)
            return None
        if e.dtype != t:
            return None
        if isinstance(e, BinOp) and e.op in ("add", "sub"):
            a, b = self.form(e.lhs, t), self.form(e.rhs, t)
            if a is None or b is None:
                return None
            return a + (b if e.op == "add" else b.scale(-1))
        if isinstance(e, BinOp) and e.op == "mul":
            a, b = self.form(e.lhs, t), self.form(e.rhs, t)
            if a is None or b is None:
                return None
            for x, y in ((a, b), (b, a)):
                if not x.terms and not x.fixed:
                    return y.scale(x.const)
            return None
        if isinstance(e, UnaryOp) and e.op == "neg":
            a = self.form(e.operand, t)
            return None if a is None else a.scale(-1)
        if (isinstance(e, BinOp) and e.op == "mod" and isinstance(e.rhs, Const) and isinstance(e.rhs.value, int)
                and e.rhs.value > 0 and not any(isinstance(n, Load) or (isinstance(n, Var) and n.name in self.assigned)
                                                for n in walk(e.lhs))):
            return Form(terms=((e, 1),))  # Python's modulo by C > 0 lies in 0 .. C-1, whatever its operand
        return None

    # ----------------------------------------------------------- C checks
    def check(self, cexpr: Callable[[Expr], str], fresh: Callable[[str], str]) -> tuple[list[str], str]:
        """C statements computing whether every access in :attr:`forms` stays in bounds, and its flag's name
        (or ``"true"``/``"false"`` when that is known here).

        ``cexpr`` prints an expression fixed across the nest (evaluated before it: pure, reads no array)."""
        lines: list[str] = []
        val: dict[Expr, str] = {}
        box: dict[int, tuple] = {}  # id() of a loop -> its lowest, highest value and whether it runs (or C names)

        def fixed(e: Expr) -> str:
            if e not in val:
                val[e] = fresh("q")
                lines.append(f"const __int128 {val[e]} = (__int128)({cexpr(e)});")
            return val[e]

        def span(f: Form, loops) -> tuple[str | int, str | int]:
            """The lowest and highest value of ``f`` in ``loops`` over the box (ints when they are known here)."""
            lo, hi = [f.const], [f.const]
            for e, c in f.fixed:
                lo.append(f"{c} * {fixed(e)}")
                hi.append(f"{c} * {fixed(e)}")
            for k, c in f.terms:
                a, b = box[id(_loop(k, loops))][:2] if isinstance(k, str) else (0, k.rhs.value - 1)
                lo.append(c * (a if c > 0 else b) if isinstance(a, int) and isinstance(b, int) else
                          f"{c} * {a if c > 0 else b}")
                hi.append(c * (b if c > 0 else a) if isinstance(a, int) and isinstance(b, int) else
                          f"{c} * {b if c > 0 else a}")
            return _sum(lo), _sum(hi)

        def within(f: Form, loops, lo: int, hi: int) -> str | bool:
            a, b = span(f, loops)
            if isinstance(a, int) and isinstance(b, int):
                return lo <= a and b <= hi
            return f"({a} >= {_i128(lo)} && {b} <= {_i128(hi)})"

        def guard(loops) -> str | None:
            """The condition under which code in ``loops`` runs at all (None: never)."""
            ne = [box[id(lp)][2] for lp in loops if id(lp) in box]
            if False in ne:
                return None
            ne = [n for n in ne if n is not True]
            return "!(" + " && ".join(ne) + ") || " if ne else ""

        conds: list[str] = []

        def need(loops, *tests: str | bool) -> None:
            tests = [t for t in tests if t is not True]
            if not tests:
                return
            g = guard(loops)
            if g is None:
                return
            c = f"({g}{'false' if False in tests else ' && '.join(tests)})"  # type: ignore[arg-type]
            if c not in conds:
                conds.append(c)

        for loop, around in self.loops:
            if id(loop) not in self.ranges:
                continue
            start, stop = self.ranges[id(loop)]
            (s_lo, s_hi), (e_lo, e_hi) = span(start, around), span(stop, around)
            lo, hi = (s_lo, _sum([e_hi, -1])) if loop.step > 0 else (_sum([e_lo, 1]), s_hi)
            if isinstance(lo, int) and isinstance(hi, int):
                ne = lo <= hi
            else:
                names = fresh("lo"), fresh("hi"), fresh("ne")
                lines.append(f"const __int128 {names[0]} = {lo}, {names[1]} = {hi};")
                lines.append(f"const bool {names[2]} = {names[0]} <= {names[1]};")
                lo, hi, ne = names
            ts, te = loop.start.dtype, loop.stop.dtype
            need(around, within(start, around, ts.min, ts.max), within(stop, around, te.min, te.max))
            box[id(loop)] = (lo, hi, ne)
        for a in self.accesses:
            forms = self.forms.get(id(a.node))
            if forms is None:
                continue
            for f, ix, n in zip(forms, a.node.indices, self.arrays(a.node.name).shape):
                need(a.loops, within(f, a.loops, 0, min(n - 1, ix.dtype.max)))
        if "(false)" in conds:
            return [], "false"
        if not conds:
            return [], "true"
        ok = fresh("ok")
        lines.append(f"const bool {ok} = " + " &&\n    ".join(conds) + ";")
        return lines, ok


def _sum(parts: list) -> int | str:
    """``parts`` (ints and C terms) added: an int when they all are."""
    n = sum(p for p in parts if isinstance(p, int))
    terms = [p for p in parts if not isinstance(p, int)]
    return n if not terms else "(" + " + ".join(terms + ([str(n)] if n else [])) + ")"


def _loop(var: str, loops: tuple[For, ...]) -> For | None:
    """The loop of ``var`` among ``loops`` (outermost first): sibling loops may share a name, nested ones not."""
    return next((lp for lp in reversed(loops) if lp.var == var), None)


def _i128(v: int) -> str:
    """An int64 value (every bound here is one: types of at most 64 bits, u64 excluded) as an __int128."""
    return "((__int128)(-9223372036854775807ll - 1))" if v == -(1 << 63) else f"((__int128){v}ll)"


def _kids(e: Expr):
    if isinstance(e, BinOp):
        return (e.lhs, e.rhs)
    if isinstance(e, (UnaryOp, Cast)):
        return (e.operand,)
    if isinstance(e, Select):
        return (e.cond, e.then, e.orelse)
    if isinstance(e, Load):
        return e.indices
    return getattr(e, "args", ())


# ------------------------------------------------------------ reordering
def _accesses(stmts):
    return [n for s in stmts for n in walk(s) if isinstance(n, (Load, Store))]


def _loops_in(stmts) -> bool:
    return any(isinstance(n, For) for s in stmts for n in walk(s))


def _steady(e: Expr, moving: set[str]) -> bool:
    """A loop bound that reads no array and none of ``moving``: the same value wherever it is evaluated."""
    return not any(isinstance(n, Load) or (isinstance(n, Var) and n.name in moving) for n in walk(e))


def _set_in(stmts) -> set[str]:
    return {n.name for s in stmts for n in walk(s) if isinstance(n, (Decl, Assign, Alloc))} | {
        n.var for s in stmts for n in walk(s) if isinstance(n, For)}


def flat_step(forms: tuple[Form, ...], var: str, dims) -> int | None:
    """How far an access moves in memory per step of ``var`` (None: not by a constant)."""
    step, stride = 0, 1
    for f, d in zip(reversed(forms), reversed(dims)):
        c = f.coeff(var)
        if c is None:
            return None
        step += c * stride
        stride *= d
    return step


def strided(stmts, var: str, forms: dict[int, tuple[Form, ...]], arrays) -> int:
    """How many accesses in ``stmts`` move by more than one element per step of ``var``."""
    steps = [flat_step(forms[id(n)], var, arrays(n.name).shape) for n in _accesses(stmts)]
    return sum(1 for s in steps if s is None or abs(s) > 1)


def interchange(loop: For, forms, arrays) -> For | None:
    """A perfect nest from ``loop`` with the loop that walks memory most contiguously moved innermost (the
    others keep their order), when every other loop of the new nest has independent iterations; or None."""
    nest = [loop]
    while len(nest[-1].body) == 1 and isinstance(nest[-1].body[0], For):
        nest.append(nest[-1].body[0])
    body = nest[-1].body
    if len(nest) < 2 or _loops_in(body):
        return None
    moving = _set_in(body) | {f.var for f in nest}
    if not all(_steady(e, moving) for f in nest for e in (f.start, f.stop)):
        return None
    cost = [strided(body, f.var, forms, arrays) for f in nest]
    best = min(range(len(nest)), key=lambda i: (cost[i], i != len(nest) - 1))
    if best == len(nest) - 1:
        return None
    order = nest[:best] + nest[best + 1:] + [nest[best]]
    for f in reversed(order):
        body = (replace(f, body=body),)
    new = body[0]
    loops = [new]
    while isinstance(loops[-1].body[0], For):
        loops.append(loops[-1].body[0])
    return new if all(classify(f).kind == "parallel" for f in loops[:-1]) else None


@dataclass
class Jam:
    """``loop`` runs ``factor`` iterations side by side: ``pre`` of each, then ``nest`` (perfect, its innermost
    body once per iteration), then ``post`` of each."""

    loop: For
    factor: int
    pre: tuple
    nest: tuple[For, ...]
    post: tuple


def jam(loop: For) -> Jam | None:
    """The unroll-and-jam of a parallel ``loop`` whose body is one loop nest carrying a value (a sum, or any
    update of a ``let`` made before it), or None."""
    at = [i for i, s in enumerate(loop.body) if isinstance(s, For)]
    if len(at) != 1:
        return None
    pre, post = loop.body[:at[0]], loop.body[at[0] + 1:]
    if _loops_in(pre) or _loops_in(post):
        return None
    nest = [loop.body[at[0]]]
    while len(nest[-1].body) == 1 and isinstance(nest[-1].body[0], For):
        nest.append(nest[-1].body[0])
    if _loops_in(nest[-1].body):
        return None
    moving = _set_in(loop.body) | {loop.var}
    if not all(_steady(e, moving) for f in nest for e in (f.start, f.stop)):
        return None
    body = nest[-1].body  # the chains the innermost loop carries: lets made before it, cells that stay put
    local = {n.name for st in body for n in walk(st) if isinstance(n, Decl)}
    chains = len({n.name for st in body for n in walk(st) if isinstance(n, Assign) and n.name not in local}) + sum(
        isinstance(st, Store) for st, _ in carried_accumulations(nest[-1]))
    if not chains:
        return None
    factor = 4 if chains == 1 else 2
    if isinstance(loop.start, Const) and isinstance(loop.stop, Const) and (
            abs(loop.stop.value - loop.start.value) < 2 * factor * abs(loop.step)):
        return None
    if classify(loop).kind != "parallel":
        return None
    return Jam(loop, factor, pre, tuple(nest), post)


# ------------------------------------------------- transcendentals in batches
BATCHED = ("exp", "log", "tanh", "erf", "sin", "cos", "sigmoid")


def batchable(loop: For, forms: dict[int, tuple[Form, ...]]) -> list[tuple[Call, Expr]]:
    """The calls of an innermost ``loop`` whose arguments can all be computed before it runs, each with its
    argument (the loop's own ``let`` names replaced by their values).

    The compiled code then computes the arguments of a strip of iterations, calls NumPy's loop once on
    them (the interpreter's vector call; every element is computed alone) and runs the iterations.  An
    argument qualifies when it reads nothing the loop changes before the call: no name assigned in the
    loop, and an array the loop stores only at the very cell it reads, in statements after the call's.
    Its array reads must have been checked before the nest (computing it early cannot raise)."""
    if _loops_in(loop.body):
        return []
    decls = {n.name: n for s in loop.body for n in walk(s) if isinstance(n, Decl)}
    assigned = {n.name for s in loop.body for n in walk(s) if isinstance(n, Assign)}
    if any(sum(1 for s in loop.body for n in walk(s) if isinstance(n, Decl) and n.name == d) > 1 for d in decls):
        return []
    stores = [(at, n) for at, s in enumerate(loop.body) for n in walk(s) if isinstance(n, Store)]
    out = []
    for at, st in enumerate(loop.body):
        for call in (n for n in walk(st) if isinstance(n, Call) and n.fn in BATCHED):
            if len(call.args) != 1 or call.args[0].dtype != call.dtype or ctype_float(call.dtype) is None:
                continue
            arg = _inline(call.args[0], decls, assigned)
            if arg is not None and _early(arg, at, loop.var, stores, forms, set(decls) | assigned):
                out.append((call, arg))
    return out


def ctype_float(t) -> str | None:
    from ..types import FloatType

    if not isinstance(t, FloatType):
        return None
    return "double" if t.name == "f64" else "float"


def _inline(e: Expr, decls: dict[str, Decl], assigned: set[str]) -> Expr | None:
    """``e`` with the loop's own ``let`` names replaced by their initial values (None if one is reassigned)."""
    bad = []

    def sub(n: Expr):
        if isinstance(n, Var) and n.name in decls:
            if n.name in assigned or decls[n.name].init.dtype != n.dtype:
                bad.append(n)
                return None
            return _inline(decls[n.name].init, decls, assigned) or (bad.append(n) or None)
        return None

    out = map_expr(e, sub)
    return None if bad else out


def _early(arg: Expr, at: int, var: str, stores, forms, local: set[str]) -> bool:
    """``arg`` (of the call in body statement ``at``) has the same value when computed before the loop runs."""
    for n in walk(arg):
        if isinstance(n, Call) and n.fn in BATCHED + ("pow",):
            return False  # its own transcendental is batched first, if at all
        if isinstance(n, Var) and n.name in local:
            return False
        if isinstance(n, Load):
            if id(n) not in forms or any(not isinstance(k, str) and names_in(k) & local for f in forms[id(n)]
                                         for k, _ in f.terms):
                return False
            for where, st in stores:
                if st.name != n.name:
                    continue
                steps = [f.coeff(var) for f in forms[id(n)]]
                same = id(st) in forms and forms[id(st)] == forms[id(n)]
                if where < at or not same or None in steps or not any(steps):  # a cell of its own per iteration
                    return False
    return True


__all__ = ["BATCHED", "Form", "Jam", "Nest", "batchable", "flat_step", "interchange", "jam", "strided"]
