"""Exact dependences of affine loop nests: which new orders of a nest's iterations keep every result.

Two statement instances *depend* when they touch the same element (of a tensor, or the same scalar) and
at least one of them writes it.  A transformation that reorders iterations is legal when every dependent
pair keeps its order.  For a band of loops ``L1 .. Ln`` and two accesses, the *direction vector* has one
sign per loop: of ``y_k - x_k``, where ``x`` and ``y`` are the iterations of the two instances.  The
analysis finds every direction vector some pair of instances realises, exactly:

* An access is a ``Load``/``Store`` (or a scalar read/assignment, a tensor passed to a kernel call) with the
  loops and ``if`` conditions around it.  Loop bounds, affine conditions (``i_o * 4 + i_i < N``, the guard of
  a ragged split) and the equality of each pair of affine subscripts are integer constraints; ``e // c`` and
  ``e % c`` (from ``fuse``) become ``q`` with ``c*q <= e <= c*q + c - 1``, so split, tiled and fused loops need
  no special case.  A subscript or condition that is not affine constrains nothing (it may take any value).
* For each pair the signs are refined loop by loop (``<``, ``=``, ``>``), each candidate decided by the
  exact integer solver of :mod:`streamdsl.ir.intsolve`; infeasible prefixes are pruned.
* A reduction's order may change when the IR says the sum may be reassociated: two instances of
  accumulations ``x = x op e`` into the same location with the same op do not constrain each other when
  the op is exact in any order (integers, fixed point that wraps, ``max``/``min``), or when it is a float
  sum or product inside a loop the user marked ``reassociate`` (``s.reassociate(loop)``).

:func:`reorder_violation` checks a permutation of a perfect band; :func:`fusion_violation` checks moving a
producer nest into a consumer nest (``compute_at``).  Both return None when legal and otherwise a
:class:`Violation` naming the carried dependence.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..types import FixedType, FloatType, IntType
from .deps import accumulation
from .intsolve import INF, System
from .nodes import (
    Alloc, Assign, BinOp, CallKernel, Cast, Const, Decl, Expr, For, If, Kernel, Load, Ref, Return, Store, UnaryOp,
    Var, walk, written_params,
)

# ------------------------------------------------------------------------------------------- accesses


@dataclass(frozen=True, eq=False)
class Access:
    """One read or write: ``indices`` is ``()`` for a scalar and None for a whole tensor (a kernel call)."""

    name: str
    write: bool
    indices: tuple | None
    loops: tuple  # the region's loops around it, outermost first
    guards: tuple  # (condition, branch taken) of the region's ifs around it
    stmt: object
    pos: int  # program order of its statement in the region
    acc: str | None = None  # the op, when this access is the target of an accumulation that may be reassociated
    path: tuple = field(default=())  # statement positions from the region down to it


def _reassociable(op: str, dtype, permitted: bool) -> bool:
    """May accumulations of ``op`` in ``dtype`` run in another order?  Exact ones always; float sums when permitted."""
    if op in ("max", "min"):
        return True
    if isinstance(dtype, IntType):
        return op in ("add", "mul", "bitand", "bitor", "bitxor")
    if isinstance(dtype, FixedType):
        return op == "add" and getattr(dtype, "overflow", "wrap") == "wrap"  # saturation is not associative
    return isinstance(dtype, FloatType) and op in ("add", "mul") and permitted


def _acc_dtype(stmt):
    v = stmt.value
    while isinstance(v, Cast):
        v = v.operand
    return v.dtype


def accesses(stmts, reassociate: bool = False, fresh: frozenset = frozenset(), scalars: frozenset = frozenset(),
             callees=None) -> list[Access]:
    """Every access in ``stmts`` to a tensor or to a scalar in ``scalars`` (locals declared outside ``stmts``),
    except those of names declared inside them (``fresh``: new every time the region runs).
    ``reassociate``: the region sits in a loop marked so.  ``callees`` resolves kernel calls (their in/out
    arguments are written)."""
    out: list[Access] = []
    counter = [0]

    def reads(e, loops, guards, stmt, pos, path, fresh_now, acc_target=None, acc_op=None):
        for n in walk(e):
            if isinstance(n, Load) and n.name not in fresh_now:
                tag = acc_op if acc_target is not None and acc_target(n) else None
                out.append(Access(n.name, False, n.indices, loops, guards, stmt, pos, tag, path))
            elif isinstance(n, Var) and n.name in scalars and n.name not in fresh_now:
                tag = acc_op if acc_target is not None and acc_target(n) else None
                out.append(Access(n.name, False, (), loops, guards, stmt, pos, tag, path))

    def visit(body, loops, guards, fresh_now, re, path):
        fresh_now = set(fresh_now)
        for n, s in enumerate(body):
            pos = counter[0]
            counter[0] += 1
            here = path + (n,)
            if isinstance(s, For):
                reads(s.start, loops, guards, s, pos, here, fresh_now)
                reads(s.stop, loops, guards, s, pos, here, fresh_now)
                visit(s.body, loops + (s,), guards, fresh_now, re or "reassociate" in s.attrs, here)
            elif isinstance(s, If):
                reads(s.cond, loops, guards, s, pos, here, fresh_now)
                visit(s.then, loops, guards + ((s.cond, True),), fresh_now, re, here + (0,))
                visit(s.orelse, loops, guards + ((s.cond, False),), fresh_now, re, here + (1,))
            elif isinstance(s, (Store, Assign)):
                tag, target = None, None
                acc = accumulation(s)
                if acc is not None and _reassociable(acc[0], _acc_dtype(s), re):
                    tag = acc[0]
                    target = ((lambda e, s=s: isinstance(e, Load) and e.name == s.name and e.indices == s.indices)
                              if isinstance(s, Store) else (lambda e, s=s: isinstance(e, Var) and e.name == s.name))
                reads(s.value, loops, guards, s, pos, here, fresh_now, target, tag)
                if isinstance(s, Store):
                    for ix in s.indices:
                        reads(ix, loops, guards, s, pos, here, fresh_now)
                    if s.name not in fresh_now:
                        out.append(Access(s.name, True, s.indices, loops, guards, s, pos, tag, here))
                elif s.name in scalars and s.name not in fresh_now:
                    out.append(Access(s.name, True, (), loops, guards, s, pos, tag, here))
            elif isinstance(s, Decl):
                reads(s.init, loops, guards, s, pos, here, fresh_now)
                fresh_now.add(s.name)
            elif isinstance(s, Alloc):
                if s.init is not None:
                    reads(s.init, loops, guards, s, pos, here, fresh_now)
                fresh_now.add(s.name)
            elif isinstance(s, CallKernel):
                callee = callees(s.callee) if callees is not None else None
                written = set(written_params(callee)) if callee is not None else None
                for i, a in enumerate(s.args):
                    if isinstance(a, Ref):
                        if a.name in fresh_now:
                            continue
                        out.append(Access(a.name, False, None, loops, guards, s, pos, None, here))
                        pname = callee.params[i].name if callee is not None else None
                        if written is None or pname in written:
                            out.append(Access(a.name, True, None, loops, guards, s, pos, None, here))
                    else:
                        reads(a, loops, guards, s, pos, here, fresh_now)
                fresh_now.update(s.outs)
            elif isinstance(s, Return):
                for v in s.values:
                    if isinstance(v, Ref):
                        if v.name not in fresh_now:
                            out.append(Access(v.name, False, None, loops, guards, s, pos, None, here))
                    else:
                        reads(v, loops, guards, s, pos, here, fresh_now)

    visit(tuple(stmts), (), (), set(fresh), reassociate, ())
    return out


# ------------------------------------------------------------------------------------------- systems


class _Builder:
    """Affine forms over a :class:`System`'s variables: one copy of the loop variables per instance."""

    def __init__(self, sys: System, scalar_params: dict):
        self.sys = sys
        self.params = scalar_params  # scalar kernel parameter -> dtype (shared unknowns)
        self.shared: dict[str, int] = {}

    def lin(self, e: Expr, env: dict) -> dict | None:
        """``e`` as {variable: coefficient, None: constant}, or None when it is not affine."""
        if isinstance(e, Const):
            return {None: e.value} if isinstance(e.value, int) else None
        if isinstance(e, Var):
            if e.name in env:
                return {env[e.name]: 1}
            if e.name in self.params:
                v = self.shared.get(e.name)
                if v is None:
                    t = self.params[e.name]
                    v = self.shared[e.name] = self.sys.var(max(t.min, -INF), min(t.max, INF))
                return {v: 1}
            return None
        if isinstance(e, Cast):
            src, dst = e.operand.dtype, e.dtype
            if isinstance(src, IntType) and isinstance(dst, IntType) and dst.min <= src.min and src.max <= dst.max:
                return self.lin(e.operand, env)  # a widening cast keeps the value
            return None
        if isinstance(e, UnaryOp) and e.op == "neg":
            a = self.lin(e.operand, env)
            return None if a is None else {k: -c for k, c in a.items()}
        if isinstance(e, BinOp) and e.op in ("add", "sub"):
            a, b = self.lin(e.lhs, env), self.lin(e.rhs, env)
            if a is None or b is None:
                return None
            out = dict(a)
            for k, c in b.items():
                out[k] = out.get(k, 0) + (c if e.op == "add" else -c)
            return out
        if isinstance(e, BinOp) and e.op == "mul":
            a, b = self.lin(e.lhs, env), self.lin(e.rhs, env)
            if a is None or b is None:
                return None
            if set(a) - {None}:
                a, b = b, a
            if set(a) - {None}:
                return None  # a product of two variables
            c = a.get(None, 0)
            return {k: v * c for k, v in b.items()}
        if isinstance(e, BinOp) and e.op in ("floordiv", "mod") and isinstance(e.rhs, Const) \
                and isinstance(e.rhs.value, int) and e.rhs.value > 0:
            a = self.lin(e.lhs, env)
            if a is None:
                return None
            c = e.rhs.value
            q = self.sys.var()  # c*q <= a <= c*q + c - 1
            self.sys.le({**{k: -v for k, v in _without_const(a).items()}, q: c}, a.get(None, 0))
            self.sys.le({**_without_const(a), q: -c}, c - 1 - a.get(None, 0))
            if e.op == "floordiv":
                return {q: 1}
            out = dict(a)
            out[q] = out.get(q, 0) - c
            return out
        return None

    def bind_loop(self, lp: For, env: dict) -> int:
        """A variable for one instance of ``lp``'s loop variable, within its bounds."""
        start, stop = self.lin(lp.start, env), self.lin(lp.stop, env)
        if isinstance(lp.start, Const) and isinstance(lp.stop, Const) and lp.step in (1, -1):
            lo, hi = (lp.start.value, lp.stop.value - 1) if lp.step == 1 else (lp.stop.value + 1, lp.start.value)
            v = self.sys.var(lo, hi)
            if lo > hi:
                self.sys.eq({}, 1)  # no iterations: nothing depends on this loop's body
            return v
        v = self.sys.var()
        if lp.step == 1:
            if start is not None:
                self.sys.le({**_without_const(start), v: -1}, -start.get(None, 0))  # start <= v
            if stop is not None:
                self.sys.le({**{k: -c for k, c in _without_const(stop).items()}, v: 1}, stop.get(None, 0) - 1)
            return v
        t = self.sys.var(0, INF)
        if start is not None:  # v = start + step * t
            self.sys.eq({**{k: -c for k, c in _without_const(start).items()}, v: 1, t: -lp.step}, start.get(None, 0))
        if stop is not None:
            if lp.step > 0:  # v <= stop - 1
                self.sys.le({**{k: -c for k, c in _without_const(stop).items()}, v: 1}, stop.get(None, 0) - 1)
            else:  # v >= stop + 1
                self.sys.le({**_without_const(stop), v: -1}, -stop.get(None, 0) - 1)
        return v

    def guard(self, cond: Expr, taken: bool, env: dict) -> None:
        """Constrain the instance to the branch of ``if cond`` it runs in (affine parts only)."""
        if isinstance(cond, UnaryOp) and cond.op == "not":
            return self.guard(cond.operand, not taken, env)
        if isinstance(cond, BinOp) and cond.op in ("and", "or"):
            if (cond.op == "and") == taken:  # both hold (and, taken) / both fail (or, not taken)
                self.guard(cond.lhs, taken, env)
                self.guard(cond.rhs, taken, env)
            return None
        if not (isinstance(cond, BinOp) and cond.op in ("lt", "le", "gt", "ge", "eq", "ne")):
            return None
        a, b = self.lin(cond.lhs, env), self.lin(cond.rhs, env)
        if a is None or b is None:
            return None
        op = cond.op if taken else {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}[cond.op]
        d = dict(a)  # a - b
        for k, c in b.items():
            d[k] = d.get(k, 0) - c
        const = d.pop(None, 0)
        if op == "lt":
            self.sys.le(d, -const - 1)
        elif op == "le":
            self.sys.le(d, -const)
        elif op == "gt":
            self.sys.le({k: -c for k, c in d.items()}, const - 1)
        elif op == "ge":
            self.sys.le({k: -c for k, c in d.items()}, const)
        elif op == "eq":
            self.sys.eq(d, -const)
        return None  # "ne" is a disjunction: no constraint

    def same_element(self, a: Access, b: Access, env_a: dict, env_b: dict) -> None:
        if a.indices is None or b.indices is None:
            return
        for ia, ib in zip(a.indices, b.indices):
            la, lb = self.lin(ia, env_a), self.lin(ib, env_b)
            if la is None or lb is None:
                continue
            d = dict(la)
            for k, c in lb.items():
                d[k] = d.get(k, 0) - c
            const = d.pop(None, 0)
            self.sys.eq(d, -const)


def _without_const(a: dict) -> dict:
    return {k: c for k, c in a.items() if k is not None}


def _instance(bld: _Builder, acc: Access, env: dict, skip: int = 0) -> dict:
    """Bind the loops around ``acc`` (after the first ``skip``, already in ``env``) and its conditions."""
    env = dict(env)
    for lp in acc.loops[skip:]:
        env[lp.var] = bld.bind_loop(lp, env)
    for cond, taken in acc.guards:
        bld.guard(cond, taken, env)
    return env


def _directions(sys: System, pairs: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    """Every sign vector of ``y - x`` over ``pairs`` that some integer point of ``sys`` realises."""
    out: list[tuple[int, ...]] = []

    def rec(s: System, k: int, prefix: tuple[int, ...]) -> None:
        if not s.feasible():
            return
        if k == len(pairs):
            out.append(prefix)
            return
        x, y = pairs[k]
        for sign in (1, 0, -1):
            t = s.copy()
            if sign == 1:
                t.le({x: 1, y: -1}, -1)
            elif sign == 0:
                t.eq({x: 1, y: -1}, 0)
            else:
                t.le({x: -1, y: 1}, -1)
            rec(t, k + 1, prefix + (sign,))

    rec(sys, 0, ())
    return out


def _lexsign(d) -> int:
    for x in d:
        if x:
            return x
    return 0


# ------------------------------------------------------------------------------------------- context


@dataclass(frozen=True)
class Violation:
    """A dependence a transformation would reverse: between ``first`` and ``second`` (in program order) on
    ``name``, realised with ``direction`` over ``loops`` (signs of the second instance's iteration minus the
    first's)."""

    name: str
    first: Access
    second: Access
    loops: tuple[str, ...]
    direction: tuple[int, ...]
    float_sum: bool  # both accesses are a float accumulation that s.reassociate(...) would let move

    def describe(self) -> str:
        from .printer import stmt_line

        def what(a: Access) -> str:
            text = stmt_line(a.stmt)
            return f"{'written' if a.write else 'read'} by `{text if len(text) <= 60 else text[:57] + '...'}`"

        carrier = next((v for v, d in zip(self.loops, self.direction) if d), None)
        signs = ", ".join(f"{v} {'<' if d > 0 else '>' if d < 0 else '='}" for v, d in zip(self.loops, self.direction))
        when = f"at a later iteration of loop '{carrier}' (direction {signs})" if carrier else "later"
        return f"'{self.name}' is {what(self.first)} and then {what(self.second)} {when}"


def _scalar_params(k: Kernel) -> dict:
    return {p.name: p.type for p in k.params if isinstance(p.type, IntType)}


def enclosing(k: Kernel, target) -> tuple[list[For], list[tuple[Expr, bool]], set[str]]:
    """The loops and if-conditions around statement ``target`` (outermost first) and the scalars declared
    before it in the blocks around it (locals that live across its iterations)."""
    def search(body, loops, guards, decls):
        decls = set(decls)
        for s in body:
            if s is target:
                return loops, guards, decls
            if isinstance(s, For):
                got = search(s.body, loops + [s], guards, decls)
                if got is not None:
                    return got
            elif isinstance(s, If):
                for branch, taken in ((s.then, True), (s.orelse, False)):
                    got = search(branch, loops, guards + [(s.cond, taken)], decls)
                    if got is not None:
                        return got
            elif isinstance(s, Decl):
                decls.add(s.name)
        return None

    got = search(k.body, [], [], set())
    if got is None:
        raise KeyError("statement not in kernel")
    return got


def _permitted(loops) -> bool:
    return any("reassociate" in lp.attrs for lp in loops)


def _pairs(accs: list[Access], reductions: bool = True):
    """Pairs (in program order, a self pair for each write) that may conflict: same name, one writes;
    ``reductions``: not two accumulations that may be reassociated into one location."""
    by_name: dict[str, list[Access]] = {}
    for a in accs:
        by_name.setdefault(a.name, []).append(a)
    for name, group in by_name.items():
        if not any(a.write for a in group):
            continue
        for i, a in enumerate(group):
            for b in group[i:]:
                if (a.write or b.write) and not (reductions and a.acc is not None and a.acc == b.acc):
                    yield a, b


def _is_float_sum(a: Access, b: Access) -> bool:
    for x in (a, b):
        acc = accumulation(x.stmt) if isinstance(x.stmt, (Store, Assign)) else None
        if acc is None or acc[0] not in ("add", "mul") or not isinstance(_acc_dtype(x.stmt), FloatType):
            return False
    return a.stmt is b.stmt or accumulation(a.stmt)[0] == accumulation(b.stmt)[0]


# ------------------------------------------------------------------------------------------- reorder


def band_directions(k: Kernel, band: list[For], reductions: bool = True):
    """(accesses pair, direction vectors over ``band``) for every pair of accesses in the band's body that
    may touch one element; ``reductions``: leave out the pairs of accumulations that may be reassociated.
    Remembered per band and kernel (IR nodes are immutable, and one loop node may sit in two kernels with
    different loops around it)."""
    key = (id(band[0]), id(k), tuple(lp.var for lp in band), reductions)
    hit = _BAND.get(key)
    if hit is not None and hit[0] is band[0] and hit[1] is k:
        return hit[2]
    found = _band_directions(band[0], k, key[2], reductions)
    if len(_BAND) >= 2048:
        _BAND.pop(next(iter(_BAND)))
    _BAND[key] = (band[0], k, found)  # keeps both alive, so their ids are not reused while the entry stands
    return found


def carries_nothing(k: Kernel, loop: For) -> bool:
    """Whether no two iterations of ``loop`` (in ``k``) touch one element with a write between them, exactly:
    its iterations may then run in any order, or all at once (the simulator's vectorised loops)."""
    return not band_directions(k, [loop], reductions=False)


def _band_directions(top: For, k: Kernel, names: tuple[str, ...], reductions: bool = True):
    band = [top]
    while len(band) < len(names):
        band.append(band[-1].body[0])
    outer, guards, decls = enclosing(k, top)
    permitted = _permitted(outer + band)
    scalars = frozenset(decls)
    accs = accesses(band[-1].body, permitted, scalars=scalars, callees=k.callee)
    found = []
    for a, b in _pairs(accs, reductions):
        sys = System()
        bld = _Builder(sys, _scalar_params(k))
        env: dict = {}
        for lp in outer:
            env[lp.var] = bld.bind_loop(lp, env)
        for cond, taken in guards:
            bld.guard(cond, taken, env)
        env_a, env_b = dict(env), dict(env)
        pairs = []
        for lp in band:
            xa, xb = bld.bind_loop(lp, env_a), bld.bind_loop(lp, env_b)
            env_a[lp.var], env_b[lp.var] = xa, xb
            pairs.append((xa, xb))
        env_a, env_b = _instance(bld, a, env_a), _instance(bld, b, env_b)
        bld.same_element(a, b, env_a, env_b)
        dirs = [d for d in _directions(sys, pairs) if any(d)]
        if dirs:
            found.append((a, b, dirs))
    return found


_BAND: dict = {}


def reorder_violation(k: Kernel, band: list[For], order: list[str]) -> Violation | None:
    """The first dependence that running ``band`` (a perfect nest, outermost first) in ``order`` reverses."""
    names = [lp.var for lp in band]
    perm = [names.index(v) for v in order]
    for a, b, dirs in band_directions(k, band):
        for d in dirs:
            new = tuple(d[p] for p in perm)
            if _lexsign(new) != _lexsign(d):
                first, second, d0 = (a, b, d) if _lexsign(d) > 0 else (b, a, tuple(-x for x in d))
                return Violation(a.name, first, second, tuple(names), d0, _is_float_sum(a, b))
    return None


# ------------------------------------------------------------------------------------------- fusion


def _levels(path: list[For], permitted: bool, scalars, callees):
    """The accesses of the statements of a loop nest along ``path``, each with its level (the depth of the
    path loop whose body holds it) and whether it comes before the path's next loop in that body."""
    out: list[tuple[Access, int, bool]] = []
    for level, lp in enumerate(path):
        nxt = path[level + 1] if level + 1 < len(path) else None
        before = True
        for s in lp.body:
            if s is nxt:
                before = False
                continue
            for a in accesses((s,), permitted or _permitted(path[:level + 1]), scalars=scalars, callees=callees):
                out.append((a, level, before))
    return out


def fusion_violation(k: Kernel, block: tuple, prod_at: int, cons_at: int, prod_path: list[For],
                     cons_path: list[For]) -> Violation | None:
    """The first dependence reversed by fusing the producer nest ``block[prod_at]`` (loops ``prod_path``) into
    the consumer nest ``block[cons_at]`` (loops ``cons_path``) level by level (their bounds are equal).

    In the fused nest a producer statement at level ``l`` (in ``prod_path[l]``'s body, all of them before the
    next path loop) runs at the start of the fused level-``l`` body, at its iteration's prefix; a consumer
    statement keeps its place in its level's body, before or after the path loop.  A pair of instances at
    iterations ``t1`` (producer) and ``t2`` (consumer) is reversed when the consumer's now runs first: ``t2``
    before ``t1`` over their common levels, or equal there with the consumer statement before the path loop
    of a level the producer's lies inside.  The statements between the two nests now run before every
    producer instance: any conflict with them is reversed too."""
    outer, guards, decls = enclosing(k, block[prod_at])
    permitted = _permitted(outer)
    scalars = frozenset(decls)
    depth = len(prod_path)
    prod = _levels(prod_path, permitted, scalars, k.callee)
    cons = _levels(cons_path, permitted, scalars, k.callee)
    between = accesses(block[prod_at + 1:cons_at], permitted, scalars=scalars, callees=k.callee)

    def env0(bld):
        env: dict = {}
        for lp in outer:
            env[lp.var] = bld.bind_loop(lp, env)
        for cond, taken in guards:
            bld.guard(cond, taken, env)
        return env

    for p, plev, _ in prod:
        for c in between:
            if c.name == p.name and (c.write or p.write):
                sys = System()
                bld = _Builder(sys, _scalar_params(k))
                env = env0(bld)
                ep = dict(env)
                for lp in prod_path[:plev + 1]:
                    ep[lp.var] = bld.bind_loop(lp, ep)
                ep, ec = _instance(bld, p, ep), _instance(bld, c, dict(env))
                bld.same_element(p, c, ep, ec)
                if sys.feasible():
                    return Violation(p.name, p, c, (), (), False)
        for c, clev, before in cons:
            if c.name != p.name or not (c.write or p.write) or (p.acc is not None and p.acc == c.acc):
                continue
            sys = System()
            bld = _Builder(sys, _scalar_params(k))
            env = env0(bld)
            ep, ec = dict(env), dict(env)
            pairs = []
            for lv in range(max(plev, clev) + 1):
                x = y = None
                if lv <= plev:
                    ep[prod_path[lv].var] = x = bld.bind_loop(prod_path[lv], ep)
                if lv <= clev:
                    ec[cons_path[lv].var] = y = bld.bind_loop(cons_path[lv], ec)
                if x is not None and y is not None:
                    pairs.append((x, y))
            ep, ec = _instance(bld, p, ep), _instance(bld, c, ec)
            bld.same_element(p, c, ep, ec)
            for d in _directions(sys, pairs):
                s = _lexsign(d)
                if s < 0 or (s == 0 and plev > clev and before):
                    names = tuple(lp.var for lp in cons_path[:len(pairs)])
                    return Violation(p.name, p, c, names, d, _is_float_sum(p, c))
    return None


