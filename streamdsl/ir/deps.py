"""Affine index analysis and loop-carried dependences.

:func:`classify` decides how a loop may run without changing results:

* ``parallel``: no iteration reads or writes what another iteration writes.
  The test is the classic dimension-separation test: for every tensor written
  in the loop, some dimension is indexed by ``c*v + g`` in every access, with
  the same ``c != 0`` and the same ``g`` over variables fixed across the loop.
* ``reduction``: like parallel, except that some tensors or outer scalars are
  only updated as ``x = x op e`` (op associative and commutative, ``e`` not
  reading ``x``) at an index that does not depend on the loop.  Such loops can
  run as a tree reduction.  Float sums are reassociated (as an adder tree
  would); bf16/f16 accumulators are never reassociated.
* ``sequential``: anything else (including loops that call kernels or
  allocate tensors).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..types import FixedType, FloatType, IntType
from .memo import IdentityMemo
from .nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, Expr, For, Load, Store, UnaryOp, Var, walk,
)

ACC_OPS = {"add", "sub", "mul", "max", "min", "bitand", "bitor", "bitxor"}  # sub: x = x - e only


def is_var_mul(e) -> bool:
    """An integer multiply neither of whose operands is a constant: what a DSP or a LUT multiplier computes
    (a multiply by a constant is shifts and adds)."""
    return (isinstance(e, BinOp) and e.op == "mul" and isinstance(e.dtype, IntType)
            and not isinstance(e.lhs, Const) and not isinstance(e.rhs, Const))


BIND_IMPL = {  # bind_op: the operator classes a loop can bind, and the implementations Vitis offers for each
    "mul": ("dsp", "fabric"),  # integer multiplies of two values (UG1399 bind_op: mul)
    "fadd": ("fabric", "fulldsp"),  # float adds and subtracts (fadd, fsub)
    "fmul": ("fabric", "fulldsp"),  # float multiplies (fmul)
}
BIND_WHAT = {"mul": "integer multiply of two values", "fadd": "float add or subtract", "fmul": "float multiply"}


def bind_class(e) -> str | None:
    """The ``bind_op`` class of an expression node: ``mul`` (an integer multiply of two values), ``fadd`` (a
    float add or subtract), ``fmul`` (a float multiply), or None."""
    if not isinstance(e, BinOp):
        return None
    if is_var_mul(e):
        return "mul"
    if isinstance(e.dtype, FloatType):
        return "fadd" if e.op in ("add", "sub") else "fmul" if e.op == "mul" else None
    return None


def loop_binds(attrs) -> dict[str, str]:
    """The bindings a loop's attrs set: ``{"mul": "dsp", "fadd": "fabric"}`` from ``bind_mul`` / ``bind_fadd`` ..."""
    return {op: attrs.get("bind_" + op) for op in BIND_IMPL if "bind_" + op in attrs}


def bound_impl(stack: list[dict[str, str]], cls: str | None) -> str | None:
    """The implementation the innermost of the loops around (``stack`` of :func:`loop_binds`, innermost
    last) that binds operator class ``cls`` asks for, or None."""
    return next((b[cls] for b in reversed(stack) if cls in b), None) if cls else None


def affine(e: Expr) -> dict | None:
    """``e`` as {var: coeff, None: const} over integer vars, or None if not affine."""
    if isinstance(e, Const) and isinstance(e.value, int):
        return _clean({None: e.value})
    if isinstance(e, Var) and isinstance(e.dtype, IntType):
        return {e.name: 1}
    if isinstance(e, Cast) and isinstance(e.dtype, IntType) and isinstance(e.operand.dtype, IntType):
        return affine(e.operand)
    if isinstance(e, BinOp) and e.op in ("add", "sub", "mul"):
        a, b = affine(e.lhs), affine(e.rhs)
        if a is None or b is None:
            return None
        if e.op == "mul":
            if not set(a) - {None}:
                a, b = b, a
            if set(b) - {None}:
                return None
            return _clean({k: c * b.get(None, 0) for k, c in a.items()})
        sign = 1 if e.op == "add" else -1
        out = dict(a)
        for k, c in b.items():
            out[k] = out.get(k, 0) + sign * c
        return _clean(out)
    if isinstance(e, UnaryOp) and e.op == "neg":
        a = affine(e.operand)
        return None if a is None else {k: -c for k, c in a.items()}
    return None


def _clean(d: dict) -> dict:
    return {k: c for k, c in d.items() if c != 0}


def names_in(e: Expr) -> set[str]:
    return {n.name for n in walk(e) if isinstance(n, (Var,))}


@dataclass
class LoopInfo:
    kind: str  # parallel | reduction | sequential
    accumulations: set[int] = field(default_factory=set)  # id() of accumulating Store/Assign stmts
    reason: str = ""


def target_of(stmt):
    """A predicate recognising the location ``stmt`` writes: ``C[i, j]`` for a Store, ``x`` for an Assign."""
    if isinstance(stmt, Store):
        return lambda e: isinstance(e, Load) and e.name == stmt.name and e.indices == stmt.indices
    return lambda e: isinstance(e, Var) and e.name == stmt.name


def accumulation(stmt) -> tuple[str, Expr] | None:
    """If ``stmt`` is ``x = [cast](x op e)`` (``x`` its own target) return (op, e).

    The cast may wrap a wider integer result back to ``x``'s width: wrapping commutes with sums, products
    and bitwise ops (arithmetic modulo 2^n), so the accumulation is one; it does not with max/min."""
    target_is = target_of(stmt)
    v = stmt.value
    wraps = False
    if isinstance(v, Cast):
        if not (isinstance(v.dtype, IntType) and isinstance(v.operand.dtype, IntType)):
            return None
        wraps = not (v.dtype.min <= v.operand.dtype.min and v.operand.dtype.max <= v.dtype.max)
        v = v.operand
    if isinstance(v, BinOp) and v.op in ACC_OPS:
        op, a, b = v.op, v.lhs, v.rhs
    elif isinstance(v, Call) and v.fn in ("max", "min"):
        op, a, b = v.fn, v.args[0], v.args[1]
    else:
        return None
    if wraps and op in ("max", "min"):
        return None
    if target_is(_widened(a)) and not _mentions(b, target_is):
        return op, b
    if op != "sub" and target_is(_widened(b)) and not _mentions(a, target_is):
        return op, a
    return None


def _widened(e):
    """``e`` without integer casts that keep its value (``x + e`` on a narrow ``x`` widens ``x`` first)."""
    while isinstance(e, Cast) and isinstance(e.dtype, IntType) and isinstance(e.operand.dtype, IntType) \
            and e.dtype.min <= e.operand.dtype.min and e.operand.dtype.max <= e.dtype.max:
        e = e.operand
    return e


def carried_accumulations(loop: For) -> tuple:
    """(stmt, op) of every accumulation in ``loop`` into a location that does not move with its variable:
    each iteration waits for the previous one's op (a scalar sum, or ``Y[i] += ...`` inside a loop over ``k``).
    A scalar or array declared inside the loop starts afresh every iteration: its sums are not carried.  Remembered per
    loop node (IR nodes are immutable; the cost model asks about the same loops many times)."""
    return _carried(loop)


def periodic_accumulations(loop: For) -> tuple:
    """(stmt, op, period) of every accumulation in ``loop`` into a location that comes round every ``period``
    iterations (``T[j % 4] += ...`` inside a loop over ``j``: period 4): each iteration waits only for the one
    ``period`` before it."""
    return _accumulations(loop)[1]


def _period(index: Expr, var: str) -> int | None:
    """Iterations of ``var`` after which ``index`` repeats, when ``var`` appears in it only inside one
    ``(affine) % P`` (``j % 4``, ``(k_o % 4) * 32 + k_i``: period 4)."""
    mods = [n for n in walk(index) if isinstance(n, BinOp) and n.op == "mod" and isinstance(n.rhs, Const)
            and isinstance(n.rhs.value, int) and n.rhs.value > 0 and var in names_in(n.lhs)]
    uses = sum(1 for n in walk(index) if isinstance(n, Var) and n.name == var)
    if len(mods) != 1 or uses != sum(1 for n in walk(mods[0].lhs) if isinstance(n, Var) and n.name == var):
        return None
    a = affine(mods[0].lhs)
    if a is None or not a.get(var):
        return None
    return mods[0].rhs.value // math.gcd(abs(a[var]), mods[0].rhs.value)


def _coeff(e: Expr, var: str) -> int | None:
    """The coefficient of ``var`` in ``e`` when ``e`` is affine in it, its ``var``-free parts taken as unknown
    constants (``(k_o % 4) * 16 + k_i`` is ``k_i`` plus a constant); None when it is not."""
    if var not in names_in(e):
        return 0
    if isinstance(e, Var):
        return 1
    if isinstance(e, Cast) and isinstance(e.dtype, IntType):
        return _coeff(e.operand, var)
    if isinstance(e, BinOp) and e.op in ("add", "sub"):
        a, b = _coeff(e.lhs, var), _coeff(e.rhs, var)
        return None if a is None or b is None else a + b if e.op == "add" else a - b
    if isinstance(e, BinOp) and e.op == "mul":
        for c, x in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if isinstance(c, Const) and isinstance(c.value, int):
                a = _coeff(x, var)
                return None if a is None else a * c.value
    return None


def _moves(index: Expr, var: str) -> bool:
    """Does ``index`` take a new value at every iteration of ``var``?"""
    c = _coeff(index, var)
    return c is not None and c != 0


def _accumulations_uncached(loop: For) -> tuple[tuple, tuple]:
    # a scalar or array declared inside the loop is a new one every iteration (C block scope): its sums are not carried
    fresh = {n.name for b in loop.body for n in walk(b) if isinstance(n, (Decl, Alloc))}
    carried, periodic = [], []
    for n in (n for b in loop.body for n in walk(b)):
        if isinstance(n, (Assign, Store)) and n.name in fresh:
            continue
        if isinstance(n, (Store, Assign)):
            acc = accumulation(n)
            indices = getattr(n, "indices", ())
            if acc is None or any(_moves(i, loop.var) for i in indices):
                continue
            periods = [p for p in (_period(i, loop.var) for i in indices) if p is not None]
            period = math.lcm(*periods) if periods else 1
            if period > 1:
                periodic.append((n, acc[0], period))
            else:
                carried.append((n, acc[0]))
    return tuple(carried), tuple(periodic)


_accumulations = IdentityMemo(_accumulations_uncached, 8192)


def _carried(loop: For) -> tuple:
    return _accumulations(loop)[0]


def _mentions(e: Expr, target_is) -> bool:
    return any(target_is(n) for n in walk(e))


def _reassociable(op: str, dtype) -> bool:
    if op in ("max", "min"):
        return True
    if isinstance(dtype, IntType):
        return True
    if isinstance(dtype, FixedType):
        return op in ("add", "sub")
    return isinstance(dtype, FloatType) and dtype.name in ("f32", "f64") and op in ("add", "sub", "mul")


def classify(loop: For) -> LoopInfo:
    v = loop.var
    inner_defs: set[str] = set()
    inner_scalars: set[str] = set()
    stores: dict[str, list] = {}
    loads: dict[str, list] = {}
    assigns: dict[str, list] = {}
    scalar_reads: dict[str, int] = {}
    for node in (n for s in loop.body for n in walk(s)):
        if isinstance(node, (CallKernel, Alloc)):
            return LoopInfo("sequential", reason=f"the loop body {'calls a kernel' if isinstance(node, CallKernel) else 'allocates a tensor'}")
        if isinstance(node, For):
            inner_defs.add(node.var)
        elif isinstance(node, Decl):
            inner_defs.add(node.name)
            inner_scalars.add(node.name)
        elif isinstance(node, Store):
            stores.setdefault(node.name, []).append(node)
        elif isinstance(node, Load):
            loads.setdefault(node.name, []).append(node)
        elif isinstance(node, Assign):
            assigns.setdefault(node.name, []).append(node)
        elif isinstance(node, Var):
            scalar_reads[node.name] = scalar_reads.get(node.name, 0) + 1
    outer_assigned = {n for n in assigns if n not in inner_defs}
    fixed_ok = lambda names: not (names & (inner_defs | outer_assigned | {v}))  # noqa: E731
    accs: set[int] = set()
    ranges = inner_loop_ranges(loop)

    for name, sts in stores.items():
        accesses = [s.indices for s in sts] + [ld.indices for ld in loads.get(name, [])]
        if _separated(accesses, v, fixed_ok, ranges):
            continue
        # every store must accumulate at a loop-invariant index, and nothing else may read it
        acc_loads = 0
        op0 = None
        for s in sts:
            acc = accumulation(s)
            names = set().union(*(names_in(i) for i in s.indices)) if s.indices else set()
            if acc is None or v in names or names & inner_scalars or names & outer_assigned:
                return LoopInfo("sequential", reason=f"'{name}' is read and written across iterations of '{v}'")
            if op0 not in (None, acc[0]) or not _reassociable(acc[0], _value_dtype(s)):
                return LoopInfo("sequential", reason=f"'{name}' is updated with an order-sensitive operation")
            op0 = acc[0]
            acc_loads += 1
            accs.add(id(s))
        if len(loads.get(name, [])) != acc_loads:
            return LoopInfo("sequential", reason=f"'{name}' is read outside its accumulation in loop '{v}'")
    for name in outer_assigned:
        op0 = None
        for a in assigns[name]:
            acc = accumulation(a)
            if acc is None or (op0 not in (None, acc[0])) or not _reassociable(acc[0], _value_dtype(a)):
                return LoopInfo("sequential", reason=f"scalar '{name}' carries a value across iterations of '{v}'")
            op0 = acc[0]
            accs.add(id(a))
        if scalar_reads.get(name, 0) != len(assigns[name]):
            return LoopInfo("sequential", reason=f"scalar '{name}' is read outside its accumulation in loop '{v}'")
    return LoopInfo("reduction" if accs else "parallel", accs)


def _value_dtype(stmt):
    v = stmt.value.operand if isinstance(stmt.value, Cast) else stmt.value
    return v.dtype


def _separated(accesses, v, fixed_ok, inner_ranges=None) -> bool:
    """Some dimension is ``c*v + g + h`` in every access: ``g`` identical and fixed
    across the loop, ``h`` over inner loop variables spanning less than ``|c|``
    (so iterations touch disjoint blocks, as after ``split``)."""
    if not accesses:
        return True
    inner_ranges = inner_ranges or {}
    for d in range(len(accesses[0])):
        forms = [affine(ix[d]) for ix in accesses]
        if any(f is None for f in forms):
            continue
        c = forms[0].get(v, 0)
        if c == 0 or any(f.get(v, 0) != c for f in forms):
            continue
        fixed_parts, lo, hi, ok = [], [], [], True
        for f in forms:
            fixed = {k: x for k, x in f.items() if k != v and k not in inner_ranges}
            inner = {k: x for k, x in f.items() if k in inner_ranges}
            if not fixed_ok({k for k in fixed if k is not None}):
                ok = False
                break
            fixed_parts.append(fixed)
            span_lo = sum(min(x * inner_ranges[k][0], x * inner_ranges[k][1]) for k, x in inner.items())
            span_hi = sum(max(x * inner_ranges[k][0], x * inner_ranges[k][1]) for k, x in inner.items())
            lo.append(span_lo)
            hi.append(span_hi)
        if not ok or any(p != fixed_parts[0] for p in fixed_parts):
            continue
        if max(hi) - min(lo) < abs(c):
            return True
    return False


def inner_loop_ranges(loop: For) -> dict[str, tuple[int, int]]:
    """Inclusive value ranges of loops inside ``loop`` whose bounds are constants."""
    out = {}
    for n in (n for s in loop.body for n in walk(s)):
        if isinstance(n, For) and isinstance(n.start, Const) and isinstance(n.stop, Const):
            first, stop, step = n.start.value, n.stop.value, n.step
            count = max(0, -(-(stop - first) // step))
            if count:
                last = first + (count - 1) * step
                out[n.var] = (min(first, last), max(first, last))
    return out
