"""The reference simulator: the IR's meaning, executed over NumPy.

Every other backend is tested against this interpreter.  Statements run in
program order with the value semantics of :mod:`streamdsl.types`.  For speed,
loops that :func:`streamdsl.ir.deps.classify` proves dependence-free run as
one vectorised step: the loop variable becomes an array along its own axis
(every value has ``ndim == depth`` of the kernel's deepest nest, so axes never
misalign), iterations outside triangular bounds or ``if`` conditions are
masked, and accumulations (``C[i, j] += A[i, k] * B[k, j]``) become NumPy
reductions: integer sums of products an ``einsum``, float sums and products
one vector step per iteration in program order (bit-exact, see ``_ordered``).
Large iteration spaces run in chunks so memory stays bounded.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np

from ..errors import KernelTypeError, Loc, ShapeError, caller_loc, user_facing
from ..ir.depend import carries_nothing
from ..ir.deps import LoopInfo, accumulation, classify
from ..ir.memo import IdentityMemo
from ..ir.nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, Expr, For, If, Kernel, Load,
    Ref, Return, Select, Store, UnaryOp, Var, walk, written_params,
)
from ..ir.ops import OPS, uses_fixed
from ..numeric import accepts, compute_np, convert, out_of_range
from ..types import DType, FloatType, IntType, TensorType, index
from .privatize import privatize

CHUNK = 1 << 22  # elements per vectorised step
_NATIVE_OPS = {"add", "sub", "mul", "neg", "bitand", "bitor", "bitxor", "invert", "max", "min", "abs",
               "eq", "ne", "lt", "le", "gt", "ge"}
_REDUCE = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
           "bitand": np.bitwise_and, "bitor": np.bitwise_or, "bitxor": np.bitwise_xor}


def _native(dtype: DType) -> bool:
    if isinstance(dtype, IntType):
        return dtype.bits in (8, 16, 32, 64)
    return isinstance(dtype, FloatType) and dtype.name in ("f32", "f64")


def _identity(op: str, dtype: DType):
    np_t = compute_np(dtype)
    if op in ("add", "sub", "bitor", "bitxor"):
        return np.zeros((), np_t)
    if op == "mul":
        return np.ones((), np_t)
    if op == "bitand":
        return np.array(-1 if np_t.kind == "i" else np.iinfo(np_t).max, np_t)
    if np_t.kind == "f":
        return np.array(-np.inf if op == "max" else np.inf, np_t)
    lo, hi = (dtype.min, dtype.max) if isinstance(dtype, IntType) else (np.iinfo(np_t).min, np.iinfo(np_t).max)
    return np.array(lo if op == "max" else hi, np_t)


@dataclass
class _Ctx:
    depth: int = 0
    extents: tuple[int, ...] = ()
    mask: np.ndarray | None = None

    def shape(self, ndim: int) -> tuple[int, ...]:
        return tuple(self.extents) + (1,) * (ndim - len(self.extents))


@dataclass
class _Plan:
    """How a kernel runs: its privatized IR, how each loop may run, and the float sums' constraints."""

    kernel: Kernel
    ndim: int
    loops: dict[int, LoopInfo]
    accs: set[int]
    stepped: set[int]
    whole: set[int]
    room: dict[int, int]


def _plan_uncached(kernel: Kernel) -> _Plan:
    kernel = privatize(kernel)  # per-row accumulators made per-iteration, so row loops vectorise
    loops: dict[int, LoopInfo] = {}
    accs: set[int] = set()
    for n in (n for s in kernel.body for n in walk(s)):
        if isinstance(n, For):
            info = classify(n)
            if info.kind == "sequential" and _vectorisable(kernel, n):
                info = LoopInfo("parallel")  # the exact dependence test proves what classify could not
            loops[id(n)] = info
            accs |= info.accumulations
    return _Plan(kernel, _max_depth(kernel.body), loops, accs, *_ordered_sums(kernel, loops))


_plan = IdentityMemo(_plan_uncached, 512)


class Interpreter:
    """Runs one kernel invocation; ``run`` returns its results as NumPy values."""

    def __init__(self, kernel: Kernel):
        plan = _plan(kernel)  # the same for every call of the kernel
        self.kernel, self.ndim, self.loops, self.accs = plan.kernel, plan.ndim, plan.loops, plan.accs
        self.stepped, self.whole, self.room = plan.stepped, plan.whole, plan.room

    # ------------------------------------------------------------------ entry
    def run(self, args, call_loc: Loc | None = None):
        k = self.kernel
        check_count(k, args, call_loc)
        self.env: dict[str, object] = {}
        self.decl_depth: dict[str, int] = {}
        written = set(written_params(k))
        for p, a in zip(k.params, args):
            v = _check_arg(k, p, a, call_loc)
            self.env[p.name] = np.array(v) if p.name in written and v is a else v  # written on a copy
            self.decl_depth[p.name] = 0
        with np.errstate(all="ignore"):
            out = self.block(k.body, _Ctx())
        for p, a in zip(k.params, args):  # in/out parameters: the caller's arrays, once the kernel has succeeded
            if p.name in written:
                _write_back(a, self.env[p.name], p, k, call_loc)
        return out

    # ------------------------------------------------------------- statements
    def block(self, stmts, ctx: _Ctx):
        for s in stmts:
            r = self.stmt(s, ctx)
            if r is not None:
                return r
        return None

    def stmt(self, s, ctx: _Ctx):
        if isinstance(s, For):
            return self.loop(s, ctx)
        if isinstance(s, Store):
            return self.store(s, ctx)
        if isinstance(s, Decl):
            v = self.eval(s.init, ctx)
            self.env[s.name] = np.broadcast_to(v, ctx.shape(self.ndim)).copy() if ctx.depth else v
            self.decl_depth[s.name] = ctx.depth
            return None
        if isinstance(s, Assign):
            return self.assign(s, ctx)
        if isinstance(s, Alloc):
            t = s.type
            rom = s.attrs.get("rom")
            if rom is not None:  # a constant tensor: its values, as stored
                self.env[s.name] = convert(np.array(rom).reshape(t.shape), t.dtype)
                return None
            fill = 0 if s.init is None else self.eval(s.init, ctx)
            try:
                self.env[s.name] = np.full(t.shape, fill, dtype=t.dtype.np)
            except (MemoryError, ValueError):  # NumPy: cannot allocate, or a size past its index range
                raise alloc_error(s) from None
            return None
        if isinstance(s, If):
            cond = np.asarray(self.eval(s.cond, ctx)).astype(bool)
            if cond.ndim == 0 and ctx.mask is None:
                return self.block(s.then if cond else s.orelse, ctx)
            for branch, m in ((s.then, cond), (s.orelse, ~cond)):
                if branch:
                    mask = m if ctx.mask is None else (ctx.mask & m)
                    if np.any(mask):
                        self.block(branch, _Ctx(ctx.depth, ctx.extents, np.asarray(mask)))
            return None
        if isinstance(s, CallKernel):
            callee = self.kernel.callee(s.callee)
            args = [self.env[a.name] if isinstance(a, Ref) else self.eval(a, ctx) for a in s.args]
            res = Interpreter(callee).run(args, s.loc)
            res = res if isinstance(res, tuple) else (res,)
            for name, val in zip(s.outs, res):
                self.env[name] = val
                self.decl_depth[name] = ctx.depth
            return None
        if isinstance(s, Return):
            vals = []
            params = {p.name for p in self.kernel.params}
            for v in s.values:
                if isinstance(v, Ref):
                    arr = self.env[v.name]
                    vals.append(arr.copy() if v.name in params else arr)
                else:
                    vals.append(np.asarray(self.eval(v, ctx))[()])
            return vals[0] if len(vals) == 1 else tuple(vals)
        raise AssertionError(f"unknown statement {type(s).__name__}")

    def loop(self, s: For, ctx: _Ctx):
        start, stop = self.eval(s.start, ctx), self.eval(s.stop, ctx)
        start64, stop64 = np.asarray(start, np.int64), np.asarray(stop, np.int64)
        vector = self.loops[id(s)].kind != "sequential" and id(s) not in self.stepped and ctx.depth < self.ndim
        if s.step > 0:
            lo, hi = int(start64.min()), int(stop64.max())
        else:
            lo, hi = int(start64.max()), int(stop64.min())
        ragged = start64.ndim > 0 or stop64.ndim > 0
        # a start that differs between lanes puts each lane on its own stride: visit every
        # value in between and let _in_range keep those on the lane's stride
        stride = s.step if start64.ndim == 0 else (1 if s.step > 0 else -1)
        values = np.arange(lo, hi, stride, dtype=np.int64)
        if values.size == 0:
            return None
        if not vector:
            for val in values:
                v = np.asarray(val, dtype=index.np)
                inner = ctx
                if ragged:
                    m = _in_range(v.astype(np.int64), start64, stop64, s.step)
                    m = m if ctx.mask is None else ctx.mask & m
                    if not np.any(m):
                        continue
                    inner = _Ctx(ctx.depth, ctx.extents, m)
                self.env[s.var] = v
                r = self.block(s.body, inner)
                if r is not None:
                    return r
            return None
        outer = int(np.prod(ctx.extents)) if ctx.extents else 1
        per = values.size if id(s) in self.whole else max(1, CHUNK // max(1, outer * self.room.get(id(s), 1)))
        axis_shape = [1] * self.ndim
        for c0 in range(0, values.size, per):
            chunk = values[c0:c0 + per]
            axis_shape[ctx.depth] = chunk.size
            v = chunk.reshape(axis_shape)
            mask = ctx.mask
            if ragged:
                m = _in_range(v, start64, stop64, s.step)
                mask = m if mask is None else mask & m
            self.env[s.var] = v.astype(index.np)
            self.block(s.body, _Ctx(ctx.depth + 1, ctx.extents + (chunk.size,), mask))
        return None

    def assign(self, s: Assign, ctx: _Ctx):
        old = self.env[s.name]
        d0 = self.decl_depth[s.name]
        if id(s) in self.accs and ctx.depth > d0:
            new, mask = self._accumulate(s, old, range(d0, ctx.depth), ctx)
        else:
            new, mask = self.eval(s.value, ctx), ctx.mask
        new = new if mask is None else np.where(mask, new, old)
        if d0 == 0 and np.ndim(new):  # reduced over every vectorised axis: back to a 0-d scalar
            new = np.reshape(new, ())
        self.env[s.name] = new

    def store(self, s: Store, ctx: _Ctx):
        buf = self.env[s.name]
        idx = [np.asarray(self.eval(i, ctx)) for i in s.indices]
        if id(s) in self.accs and ctx.depth:
            used = [False] * self.ndim
            for ix in idx:
                for ax in range(ix.ndim):
                    used[ax] |= ix.shape[ax] > 1
            axes = [ax for ax in range(ctx.depth) if not used[ax]]
            cur = self._load(buf, idx, _any_over(ctx.mask, axes), s)
            value, mask = self._accumulate(s, cur, axes, ctx)
        else:
            value, mask = self.eval(s.value, ctx), ctx.mask
        self._write(buf, idx, value, mask, s)

    def _accumulate(self, s, current, axes, ctx: _Ctx):
        """``x = x op reduce(e)`` over ``axes``: the vectorised form of an accumulation."""
        op, e = accumulation(s)
        axes = tuple(axes)
        inner = s.value.operand if isinstance(s.value, Cast) else s.value
        acc_t = inner.dtype
        mask = _any_over(ctx.mask, axes)  # where any iteration contributes to the target
        if isinstance(acc_t, FloatType) and op in ("add", "sub", "mul") and axes:
            return self._ordered(op, e, current, axes, acc_t, ctx), mask
        gather = "add" if op == "sub" else op  # x - e1 - e2 ... is x - (e1 + e2 + ...), exact for integers
        red = self._einsum(e, axes, ctx, acc_t) if gather == "add" and isinstance(acc_t, IntType) else None
        if red is None:
            val = np.asarray(self.eval(e, ctx))
            if isinstance(acc_t, IntType):  # sum in the accumulator's width (e may be narrower: i8 * i8 is an i16)
                val = val.astype(compute_np(acc_t), copy=False)
            if ctx.mask is not None:
                val = np.where(ctx.mask, val, _identity(gather, acc_t).astype(val.dtype))
            full = np.broadcast_shapes(val.shape, ctx.shape(self.ndim),
                                       ctx.mask.shape if ctx.mask is not None else ())
            val = np.broadcast_to(val, full) if val.shape != full else val
            red = _REDUCE[gather].reduce(val, axis=axes, keepdims=True) if axes and val.ndim else val
        red = convert(red, acc_t) if not _native(acc_t) or red.dtype != acc_t.np else red
        combined = self._apply(op, (current, red), (acc_t, acc_t), acc_t)
        if isinstance(s.value, Cast):
            combined = convert(combined, s.value.dtype)
        return combined, mask

    def _ordered(self, op, e, current, axes, acc_t, ctx: _Ctx):
        """A float accumulation in program order: ``((x op e0) op e1) op ...``, bit-exact.

        Float addition is not associative, so the simulator never reorders it:
        ``ufunc.accumulate`` runs left to right over the iterations (flattened
        in loop-nest order), starting from the current value of the target.
        When each step is wide, it runs one vector operation per iteration on
        contiguous slices; a sum of products (``acc += A[i, k] * B[k, j]``)
        then multiplies one iteration at a time, so the product over the whole
        iteration space (M*N*K for a gemm) is never materialised.
        """
        nd, mask = self.ndim, ctx.mask
        pair = op in ("add", "sub") and isinstance(e, BinOp) and e.op == "mul" and e.dtype == acc_t and _native(acc_t)
        vals = [np.asarray(self.eval(t, ctx)) for t in ((e.lhs, e.rhs) if pair else (e,))]
        vals = [v.astype(acc_t.np, copy=False).reshape(v.shape if v.ndim else (1,) * nd) for v in vals]
        full = np.broadcast_shapes(*(v.shape for v in vals), ctx.shape(nd), mask.shape if mask is not None else (),
                                   np.shape(current) if np.ndim(current) else ())
        keep_shape = [1 if a in axes else full[a] for a in range(nd)]
        rest = [full[a] for a in range(nd) if a not in axes]
        acc = np.array(np.broadcast_to(np.asarray(current, dtype=acc_t.np), keep_shape).reshape(rest))
        ufunc = _REDUCE[op]
        steps = int(np.prod([full[a] for a in axes]))
        lead = list(range(len(axes)))
        if steps > 64 * max(1, acc.size):  # long and thin: one C-level pass
            val = np.multiply(*vals) if pair else vals[0]
            if mask is not None:
                val = np.where(mask, val, _identity(op, acc_t).astype(val.dtype))
            moved = np.moveaxis(np.broadcast_to(val, full), list(axes), lead).reshape((-1, *rest))
            seq = np.concatenate([acc[None], moved], axis=0)
            acc = ufunc.accumulate(seq, axis=0)[-1]
            return acc.reshape(keep_shape)
        # one vector operation per iteration on contiguous slices; masked-off lanes are skipped
        vals = [np.ascontiguousarray(np.moveaxis(v, list(axes), lead)) for v in vals]
        if mask is not None:
            mask = np.ascontiguousarray(np.moveaxis(np.broadcast_to(mask, np.broadcast_shapes(mask.shape, (1,) * nd)),
                                                    list(axes), lead))
        tmp = np.empty(rest, acc_t.np) if pair else None
        at = lambda v, pos: v[tuple(p if v.shape[d] > 1 else 0 for d, p in enumerate(pos))]  # noqa: E731
        for pos in itertools.product(*(range(full[a]) for a in axes)):
            term = np.multiply(at(vals[0], pos), at(vals[1], pos), out=tmp) if pair else at(vals[0], pos)
            if mask is None:
                ufunc(acc, term, out=acc)
            else:
                ufunc(acc, term, out=acc, where=at(mask, pos))
        return acc.reshape(keep_shape)

    def _einsum(self, e: Expr, axes, ctx: _Ctx, acc_t: DType):
        """Integer sum over ``axes`` of a product of two factors (exact, so any order will do), summed in a type
        at least as wide as the accumulator ``acc_t``: in int64 when the product never wraps (a widened product),
        in the product's own type when it wraps but is no narrower than the accumulator (C's words)."""
        if not (isinstance(e, BinOp) and e.op == "mul" and _native(e.dtype) and axes):
            return None
        exact = e.dtype.bits >= e.lhs.dtype.bits + e.rhs.dtype.bits
        if not exact and e.dtype.bits < acc_t.bits:
            return None  # each product wraps narrower than the sum: the plain path wraps them one by one
        work = compute_np(acc_t) if exact else e.dtype.np
        x, y = (np.asarray(self.eval(t, ctx)) for t in (e.lhs, e.rhs))
        if ctx.mask is not None:
            x = np.where(ctx.mask, x, 0).astype(x.dtype, copy=False)
        if x.ndim == 0 or y.ndim == 0:
            return None
        x, y = x.astype(work, copy=False), y.astype(work, copy=False)
        lx = [a for a in range(self.ndim) if x.shape[a] > 1]
        ly = [a for a in range(self.ndim) if y.shape[a] > 1]
        if any(ctx.extents[a] > 1 and a not in lx and a not in ly for a in axes):
            return None  # a factor constant along a reduced axis: let the plain path count it
        out = [a for a in range(self.ndim) if a not in axes and (a in lx or a in ly)]
        res = np.einsum(x.reshape([x.shape[a] for a in lx]), lx, y.reshape([y.shape[a] for a in ly]), ly, out,
                        optimize=len(lx) + len(ly) > 2)
        shape = [1] * self.ndim
        for a in out:
            shape[a] = x.shape[a] if x.shape[a] > 1 else y.shape[a]
        return np.asarray(res, dtype=work).reshape(shape)

    # ------------------------------------------------------------ expressions
    def eval(self, e: Expr, ctx: _Ctx):
        if isinstance(e, Const):
            return np.asarray(e.value, dtype=e.dtype.np)
        if isinstance(e, Var):
            return self.env[e.name]
        if isinstance(e, Load):
            idx = [np.asarray(self.eval(i, ctx)) for i in e.indices]
            return self._load(self.env[e.name], idx, ctx.mask, e)
        if isinstance(e, BinOp):
            a = self.eval(e.lhs, ctx)
            if e.op in ("and", "or"):  # short-circuit, as in Python and C++
                c = np.asarray(a).astype(bool)
                b = self._eval_where(e.rhs, c if e.op == "and" else ~c, ctx)
            else:
                b = self.eval(e.rhs, ctx)
            return self._apply(e.op, (a, b), (e.lhs.dtype, e.rhs.dtype), e.dtype)
        if isinstance(e, UnaryOp):
            return self._apply(e.op, (self.eval(e.operand, ctx),), (e.operand.dtype,), e.dtype)
        if isinstance(e, Call):
            vals = tuple(self.eval(a, ctx) for a in e.args)
            return self._apply(e.fn, vals, tuple(a.dtype for a in e.args), e.dtype)
        if isinstance(e, Cast):
            v = np.asarray(self.eval(e.operand, ctx))
            return convert(v, e.dtype)
        if isinstance(e, Select):  # only the chosen branch is evaluated (lanes masked)
            c = np.asarray(self.eval(e.cond, ctx)).astype(bool)
            if c.ndim == 0:
                return self.eval(e.then if c else e.orelse, ctx)
            return np.where(c, self._eval_where(e.then, c, ctx), self._eval_where(e.orelse, ~c, ctx))
        raise AssertionError(f"cannot evaluate {type(e).__name__}")

    def _eval_where(self, e: Expr, cond: np.ndarray, ctx: _Ctx):
        """``e`` in the lanes where ``cond`` holds (others are don't-care, never out of bounds)."""
        if cond.ndim == 0:
            return self.eval(e, ctx) if cond else np.zeros((), e.dtype.np)
        mask = cond if ctx.mask is None else ctx.mask & cond
        if not np.any(mask):
            return np.zeros((), e.dtype.np)
        return self.eval(e, _Ctx(ctx.depth, ctx.extents, mask))

    @staticmethod
    def _apply(op: str, vals, dtypes, result: DType):
        info = OPS[op]
        if uses_fixed(op, dtypes, result):  # from the raw bits (ap_fixed's division and shifts)
            return convert(info.fixed(tuple(np.asarray(v) for v in vals), tuple(dtypes), result), result)
        if op in _NATIVE_OPS and all(_native(t) and t == dtypes[0] for t in dtypes) and (
                result == dtypes[0] or result == _U1):
            raw = info.np(*vals)
            return raw.astype(np.uint8) if result == _U1 else raw
        raw = info.np(*(np.asarray(v).astype(compute_np(t), copy=False) for v, t in zip(vals, dtypes)))
        return convert(raw, result)

    def _load(self, buf, idx, mask, node):
        if all(ix.ndim == 0 for ix in idx):
            pos = tuple(int(ix) for ix in idx)
            _check_bounds(buf, [np.asarray(p) for p in pos], node)
            return buf[pos]
        if mask is not None:
            idx = [np.where(mask, ix, 0) if ix.ndim else ix for ix in idx]
        idx = [ix.astype(np.intp, copy=False) for ix in idx]
        _check_bounds(buf, idx, node)
        return buf[tuple(idx)]

    def _write(self, buf, idx, value, mask, node):
        value = np.asarray(value)
        if mask is None or (mask.ndim == 0 and bool(mask)):
            small = [ix.astype(np.intp, copy=False) for ix in idx]
            ishape = np.broadcast_shapes(*(ix.shape for ix in small))
            if np.broadcast_shapes(ishape, value.shape) == ishape:  # let NumPy broadcast, unmaterialised
                _check_bounds(buf, small, node)
                buf[tuple(small)] = value
                return
        shapes = [ix.shape for ix in idx] + [value.shape] + ([mask.shape] if mask is not None else [])
        full = np.broadcast_shapes(*shapes)
        if mask is not None and mask.ndim:
            sel = np.broadcast_to(mask, full)
            idx = [np.broadcast_to(ix, full)[sel] for ix in idx]
            value = np.broadcast_to(value, full)[sel]
        elif mask is not None and not bool(mask):
            return
        else:
            idx = [np.broadcast_to(ix, full) for ix in idx]
            value = np.broadcast_to(value, full)
        idx = [ix.astype(np.intp, copy=False) for ix in idx]
        _check_bounds(buf, idx, node)
        buf[tuple(idx)] = value


_U1 = IntType(1, False)


def _vectorisable(k: Kernel, loop: For) -> bool:
    """A loop ``classify`` calls sequential whose iterations still carry nothing (``A[i, j]`` written for
    ``j >= i`` while ``A[i, k]``, ``k < i``, is read): it runs as one vector step.  Loops that call a kernel or
    allocate stay sequential (the vector step holds neither)."""
    if any(isinstance(n, (CallKernel, Alloc)) for s in loop.body for n in walk(s)):
        return False
    return carries_nothing(k, loop)


def _any_over(mask, axes):
    """``mask`` reduced with ``any`` over the accumulated ``axes`` (kept as size-1 axes)."""
    if mask is None or not axes or not np.ndim(mask):
        return mask
    return np.any(mask, axis=tuple(axes), keepdims=True)


def _in_range(v, start, stop, step):
    if step > 0:
        m = (v >= start) & (v < stop)
        return m & ((v - start) % step == 0) if step != 1 and np.ndim(start) else m
    m = (v <= start) & (v > stop)
    return m & ((start - v) % -step == 0) if step != -1 and np.ndim(start) else m


def _check_bounds(buf, idx, node) -> None:
    for d, ix in enumerate(idx):
        if ix.size == 0:
            continue
        lo, hi = int(ix.min()), int(ix.max())
        n = buf.shape[d]
        if lo < 0 or hi >= n:
            bad = lo if lo < 0 else hi
            name = getattr(node, "name", "?")
            raise ShapeError(
                f"index {bad} is out of bounds for dimension {d} of '{name}' (size {n})",
                node.loc, hint="check the loop bounds and the index expression",
            )


def _ordered_sums(k: Kernel, loops: dict[int, LoopInfo]) -> tuple[set[int], set[int], dict[int, int]]:
    """How loops run so that every float sum (and product) adds in program order, whatever the chunking.

    A vectorised accumulation adds its iterations in loop-nest order over the vectorised loops it sums over
    (its axes), one vector step at a time, so the sum is in program order only if every step covers whole
    runs of its inner axes: an axis inside a vectorised axis may neither run sequentially nor in chunks.
    Returns the loops that run sequentially although they could be vectorised (outside a sequential
    axis), the loops that never run in chunks (inside a vectorised axis), and per loop the elements its
    unchunked inner axes add to each of its chunks (at most, from the loop bounds), so memory stays
    bounded by about ``CHUNK``."""
    from ..ir.bounds import loop_trips

    sums: list[tuple[list[For], list[For]]] = []  # per float sum: the loops around it, and those it sums over

    def go(body, around: list[For], decls: dict[str, int]) -> None:
        decls = dict(decls)
        for s in body:
            if isinstance(s, Decl):
                decls[s.name] = len(around)
            elif isinstance(s, For):
                go(s.body, around + [s], decls)
            elif isinstance(s, If):
                go(s.then, around, decls)
                go(s.orelse, around, decls)
            elif isinstance(s, (Store, Assign)) and _ordered_float(s):
                if isinstance(s, Assign):
                    axes = around[decls.get(s.name, 0):]
                else:  # a loop whose variable, or a local made inside it, moves the index is not summed over
                    used = {n.name for i in s.indices for n in walk(i) if isinstance(n, Var)}
                    axes = [lp for d, lp in enumerate(around)
                            if lp.var not in used and not any(decls.get(u, -1) > d for u in used)]
                sums.append((around, axes))

    go(k.body, [], {})
    stepped: set[int] = set()
    changed = True
    while changed:  # an axis made sequential may put another sum's outer axis outside a sequential one
        changed = False
        for _, axes in sums:
            seq = [i for i, lp in enumerate(axes) if loops[id(lp)].kind == "sequential" or id(lp) in stepped]
            for lp in axes[:seq[-1]] if seq else ():
                if id(lp) not in stepped and loops[id(lp)].kind != "sequential":
                    stepped.add(id(lp))
                    changed = True
    trips = loop_trips(k.body)
    whole: set[int] = set()
    room: dict[int, int] = {}
    for around, axes in sums:
        vec = [lp for lp in axes if loops[id(lp)].kind != "sequential" and id(lp) not in stepped]
        whole |= {id(lp) for lp in vec[1:]}
        for i, lp in enumerate(around):
            inner = int(np.prod([trips.get(id(x)) or 1 for x in vec[1:] if around.index(x) > i]))
            room[id(lp)] = max(room.get(id(lp), 1), inner)
    return stepped, whole, room


def _ordered_float(s) -> bool:
    acc = accumulation(s) if isinstance(s, (Store, Assign)) else None
    v = s.value.operand if isinstance(s.value, Cast) else s.value
    return acc is not None and acc[0] in ("add", "sub", "mul") and isinstance(v.dtype, FloatType)


def alloc_error(s: Alloc) -> ShapeError:
    """The error of a local tensor the simulator cannot allocate (either path)."""
    t = s.type
    return ShapeError(f"local tensor '{s.name}: {t}' needs {_bytes(t.size * t.dtype.np.itemsize)}, more than the "
                      "simulator can allocate", s.loc,
                      hint="no accelerator holds it on chip either: use a smaller shape, or tile the computation "
                           "over a smaller buffer")


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"


def _max_depth(stmts) -> int:
    best = 0
    for s in stmts:
        if isinstance(s, For):
            best = max(best, 1 + _max_depth(s.body))
        elif isinstance(s, If):
            best = max(best, _max_depth(s.then), _max_depth(s.orelse))
    return best


def check_count(k: Kernel, args, call_loc) -> None:
    if len(args) != len(k.params):
        raise KernelTypeError(
            f"kernel '{k.name}' takes {len(k.params)} argument(s), got {len(args)}", call_loc,
            hint=f"signature: {k.name}({', '.join(f'{p.name}: {p.type}' for p in k.params)})")


def _check_arg(k: Kernel, p, a, call_loc):
    t = p.type
    where = f" (declared at {p.loc})" if p.loc is not None else ""
    if isinstance(t, TensorType):
        if not isinstance(a, np.ndarray):
            raise KernelTypeError(
                f"argument '{p.name}' of '{k.name}' must be a NumPy array of {t}, got {type(a).__name__}",
                call_loc, hint=f"pass np.asarray(...) with dtype {t.dtype.np}{where}")
        if a.shape != t.shape:
            raise ShapeError(
                f"argument '{p.name}' of '{k.name}' has shape {a.shape}, but the kernel declares {p.name}: {t}",
                call_loc, hint=f"pass an array of shape {t.shape}{where}")
        if not accepts(a, t.dtype):
            raise KernelTypeError(
                f"argument '{p.name}' of '{k.name}' has dtype {a.dtype}, but the kernel declares {p.name}: {t}",
                call_loc, hint=f"convert with .astype(np.{t.dtype.np}){where}")
        bad = out_of_range(a, t.dtype)
        if bad is not None:
            raise KernelTypeError(
                f"argument '{p.name}' of '{k.name}' holds {bad}, which {t.dtype} cannot hold "
                f"(range {t.dtype.min}..{t.dtype.max})", call_loc,
                hint=f"pass values that fit {p.name}: {t}, or declare a wider type{where}")
        return convert(a, t.dtype) if not (_native(t.dtype) and a.dtype == t.dtype.np) else a
    if isinstance(a, np.ndarray) and a.ndim == 0:
        a = a[()]
    if isinstance(a, (bool, int, float, np.integer, np.floating, np.bool_)):
        if isinstance(t, IntType) and isinstance(a, (float, np.floating)):
            raise KernelTypeError(f"argument '{p.name}' of '{k.name}' is {t}, got float {a!r}", call_loc,
                                  hint=f"pass an integer{where}")
        return convert(np.asarray(a), t)
    raise KernelTypeError(f"argument '{p.name}' of '{k.name}' must be a {t} scalar, got {type(a).__name__}",
                          call_loc, hint=f"pass a Python or NumPy number{where}")


def _write_back(user: np.ndarray, value: np.ndarray, p, k: Kernel, call_loc) -> None:
    """Store an in/out parameter's final values into the array the caller passed (as an HLS C++ array is)."""
    if not user.flags.writeable:
        raise KernelTypeError(f"'{k.name}' writes its parameter '{p.name}', but the array passed is read-only",
                              call_loc, hint="pass a writable copy: arr.copy()")
    np.copyto(user, np.asarray(value).astype(user.dtype, copy=False), casting="unsafe")


def simulate(kernel: Kernel, *args, call_loc: Loc | None = None, mode: str | None = None):
    """Run ``kernel`` on NumPy arrays; returns one array, a tuple, or None.

    ``mode``: ``"interp"`` runs this interpreter (the definition), ``"compiled"`` the kernel compiled to
    native code (``native.py``, bit-identical), ``"auto"`` (the default, or ``$STREAMDSL_SIM``) compiles a
    kernel once that pays and interprets the rest."""
    from . import native

    mode = native.sim_mode(mode)
    if mode != "interp":
        done = native.run(kernel, args, call_loc, mode)
        if done is not None:
            return done[0]
    if mode != "auto":
        return Interpreter(kernel).run(args, call_loc)
    t0 = time.perf_counter()
    try:
        return Interpreter(kernel).run(args, call_loc)
    finally:
        native.spent(kernel, time.perf_counter() - t0)


class SimModule:
    """A (scheduled) kernel built for the reference simulator: call it with NumPy arrays."""

    def __init__(self, kernel: Kernel, **_options):  # output, board, overwrite: nothing to write
        self.ir = kernel

    @user_facing
    def __call__(self, *args):
        return self.run(args, caller_loc())

    def run(self, args, call_loc: Loc | None = None):
        return simulate(self.ir, *args, call_loc=call_loc)

    def __repr__(self) -> str:
        return f"<simulator module of {self.ir.name}>"
