"""Local buffers for the part of a tensor a loop iteration touches: ``buffer_at`` (a window copied in and out
every iteration) and ``reuse_at`` (line and window buffers that keep what the next iteration reads again).

Both look at each access of the tensor inside the loop dimension by dimension, as ``fixed + inner`` with
``fixed`` the same affine expression in every access and unchanged while the loop body runs (outer loop
variables, scalar parameters) and ``inner`` affine in the loops inside with constant bounds, so its range is
known: ``A[y + r, x + c]`` inside ``for r, c in grid(3, 3)`` spans 3 rows and 3 columns.
"""
from __future__ import annotations

from ..ir import build as B
from ..ir.deps import affine
from ..ir.nodes import (
    Alloc, Assign, Attrs, CallKernel, Const, Decl, For, If, Kernel, Load, Store, TensorType, Var, walk,
)
from ..types import index
from .primitives import Refusal, _buffer, _loop, trip_count
from .rewrite import all_names, fresh, map_stmt_exprs, map_stmts, put, replace, substitute


def _ranges(loop: For) -> dict[str, tuple[int, int]]:
    """Inclusive value ranges of the loops inside ``loop`` (None for one whose bounds are not constant)."""
    out = {}
    for n in (n for s in loop.body for n in walk(s)):
        if isinstance(n, For):
            t = trip_count(n)
            out[n.var] = None if t is None or t == 0 else tuple(sorted((n.start.value, n.start.value + (t - 1) * n.step)))
    return out


class _Access:
    """One access's indices split per dimension into (fixed affine part, inner affine part, inner range)."""

    def __init__(self, node, dims):
        self.node, self.dims = node, dims


def _split_index(e, var: str, inner: dict, loc_name: str, loop: For, varying: set[str]):
    """(coefficient of ``var``, fixed part, inner part incl. constant, inner range) of index ``e``."""
    a = affine(e)
    if a is None:
        raise Refusal(f"'{loc_name}' is indexed by a non-affine expression in loop '{loop.var}'", loop=loop.var,
                      hint="the buffer's shape comes from affine indices of the loop variables")
    coef = a.get(var, 0)
    fixed, part = {}, {None: a.get(None, 0)}
    lo = hi = a.get(None, 0)
    for name, c in a.items():
        if name is None or name == var:
            continue
        if name in inner:
            r = inner[name]
            if r is None:
                raise Refusal(f"loop '{name}' inside loop '{loop.var}' has bounds that are not constant",
                              loop=loop.var, hint="the buffer's shape must be known")
            part[name] = c
            lo += min(c * r[0], c * r[1])
            hi += max(c * r[0], c * r[1])
        elif name in varying:
            raise Refusal(f"'{loc_name}' is indexed by '{name}', which changes inside loop '{loop.var}'",
                          loop=loop.var, hint="index with loop variables and constants")
        else:
            fixed[name] = c
    return coef, fixed, part, (lo, hi)


def _expr(a: dict):
    """An index expression from an affine form {var: coefficient, None: constant}."""
    e = None
    for name, c in sorted((k, v) for k, v in a.items() if k is not None and v):
        term = Var(name, index) if c == 1 else B.binop("mul", Var(name, index), B.const(c, index))
        e = term if e is None else B.binop("add", e, term)
    const = a.get(None, 0)
    if e is None:
        return B.const(const, index)
    return e if const == 0 else B.binop("add", e, B.const(const, index)) if const > 0 else \
        B.binop("sub", e, B.const(-const, index))


def _plus(*forms: dict) -> dict:
    out: dict = {}
    for f in forms:
        for k, c in f.items():
            out[k] = out.get(k, 0) + c
    return out


def _gather(k: Kernel, name: str, var: str, what: str):
    """The loop, the buffer, and the accesses of ``name`` inside loop ``var``, each split by dimension."""
    path, loop = _loop(k, var)
    buf = _buffer(k, name)
    if not isinstance(buf.type, TensorType):
        raise Refusal(f"'{name}' is a scalar, not a buffer")
    nodes = [n for s in loop.body for n in walk(s) if isinstance(n, (Load, Store)) and n.name == name]
    if any(isinstance(n, CallKernel) and any(getattr(a, "name", None) == name for a in n.args)
           for s in loop.body for n in walk(s)):
        raise Refusal(f"loop '{var}' passes '{name}' whole to a kernel call", loop=var,
                      hint=f"{what} buffers element accesses")
    if not nodes:
        raise Refusal(f"loop '{var}' does not access '{name}'", loop=var, hint="pick the loop that computes it")
    inner = _ranges(loop)
    varying = {n.name for s in loop.body for n in walk(s) if isinstance(n, (Decl, Assign, Alloc))}
    accs = [_Access(n, [_split_index(ix, var, inner, name, loop, varying) for ix in n.indices]) for n in nodes]
    for d in range(buf.type.rank):
        fixed = {(a.dims[d][0],) + tuple(sorted(a.dims[d][1].items())) for a in accs}
        if len(fixed) > 1:
            raise Refusal(f"the accesses of '{name}' in loop '{var}' differ in dimension {d + 1} by more than "
                          "constants and inner loop variables", loop=var,
                          hint="the buffer holds one window for all of them")
    return path, loop, buf, accs


def buffer_at(k: Kernel, name: str, var: str) -> tuple[Kernel, str]:
    """Give each iteration of loop ``var`` a local copy of the window of ``name`` it touches.

    Before::                                  After ``buffer_at(A, y)``::

        for y in range(8) {                       for y in range(8) {
          for r in range(3) {                       alloc A_buf: f32[3, 10]
            for x in range(10) {                    for A_buf_0, A_buf_1: A_buf[..] = A[y + A_buf_0, A_buf_1]
              ... A[(y + r), x] ...                 for r { for x { ... A_buf[r, x] ... } }
                                                    (written back when the loop writes A)

    Every access indexes each dimension as the same ``fixed`` part (outer loop variables) plus an ``inner``
    part over the loops inside with constant bounds; the window is the range of the inner parts.  The copy
    in and out holds exactly what the original reads and writes, so results are unchanged.
    """
    path, loop, buf, accs = _gather(k, name, var, "buffer_at")
    rank = buf.type.rank
    lo = [min(a.dims[d][3][0] for a in accs) for d in range(rank)]
    hi = [max(a.dims[d][3][1] for a in accs) for d in range(rank)]
    shape = tuple(h - l + 1 for l, h in zip(lo, hi))
    # within one iteration the loop's own variable is fixed too: every iteration gets its own window
    fixed = {d: _plus(accs[0].dims[d][1], {var: accs[0].dims[d][0]}) for d in range(rank)}
    if shape == buf.type.shape and not any(c for d in range(rank) for c in _without_const(fixed[d]).values()):
        raise Refusal(f"every access of '{name}' in loop '{var}' spans all of it; a local buffer would be a copy",
                      loop=var, hint="buffer at an inner loop, or bind the buffer itself")
    keep = [d for d in range(rank) if shape[d] > 1] or [0]
    taken = all_names(k)
    local = fresh(taken, f"{name}_buf")
    ltype = TensorType(buf.type.dtype, tuple(shape[d] for d in keep))

    def local_idx(node_dims):
        return tuple(_expr(_plus(node_dims[d][2], {None: -lo[d]})) for d in keep)

    by_node = {id(a.node): a for a in accs}
    body = map_stmts(loop.body, lambda s: Store(local, local_idx(by_node[id(s)].dims), s.value, s.loc)
                     if isinstance(s, Store) and id(s) in by_node else None)
    body = tuple(map_stmt_exprs(s, lambda e: Load(local, local_idx(by_node[id(e)].dims), e.dtype, e.loc)
                                if isinstance(e, Load) and id(e) in by_node else None) for s in body)
    names = [fresh(taken | {local}, f"{local}_{d}") for d in range(rank)]

    def copy(into_local: bool, vars_: list[str]):
        full = tuple(_expr(_plus(fixed[d], {None: lo[d]}, {vars_[d]: 1} if d in keep else {})) for d in range(rank))
        lidx = tuple(Var(vars_[d], index) for d in keep)
        dt = buf.type.dtype
        st = Store(local, lidx, Load(name, full, dt)) if into_local else Store(name, full, Load(local, lidx, dt))
        for d in reversed(keep):
            st = For(vars_[d], B.const(0, index), B.const(shape[d], index), 1, (st,), Attrs(), loop.loc)
        return st

    new_body = (Alloc(local, ltype, None, Attrs(), loop.loc), copy(True, names), *body)
    if any(isinstance(a.node, Store) for a in accs):  # written back: exactly the values read, where not written
        back = [fresh(taken | {local} | set(names), f"{local}_w{d}") for d in range(rank)]
        new_body = new_body + (copy(False, back),)
    return replace(k, body=put(k.body, path, replace(loop, body=new_body))), local


def _without_const(a: dict) -> dict:
    return {k: c for k, c in a.items() if k is not None}


def reuse_at(k: Kernel, name: str, var: str) -> tuple[Kernel, str]:
    """A line or window buffer of ``name`` at loop ``var``: what one iteration reads and the next reads again
    stays on chip, and each iteration loads only the new slice (Allo's ``reuse_at``).

    Before (3-point blur along x)::           After ``reuse_at(A, x)``::

        for y in range(10) {                      for y in range(10) {
          for x in range(8) {                       alloc A_window: i32[3] [partition complete]
            B[y, x] = A[y, x] + A[y, x + 1]         for x in range(0, 10) {
                      + A[y, x + 2]                   for r in range(2) [unroll]: A_reuse[r] = A_reuse[r + 1]
                                                      A_reuse[2] = A[y, x]
                                                      if x >= 2: B[y, x - 2] = A_reuse[0] + A_reuse[1] + A_reuse[2]

    Every read of ``name`` in the loop indexes one dimension as ``s * var + g`` (``g`` over the loops inside, the
    stride ``s`` the same in each) and the others without ``var``; the buffer keeps ``R = range of g`` slices
    along that dimension (a shift register, partitioned completely) and the inner parts' range along the others
    (a line buffer, one bank a row).  The loop then visits every position the reads cover, loading one slice an
    iteration; the body runs, guarded, when the window holds an original iteration's slices, at the same values
    as before and in the same order, so results are unchanged.  ``name`` must not be written in the loop.  Returns the
    buffer, which ``reuse_at`` can take again (a window on a line buffer).
    """
    path, loop, buf, accs = _gather(k, name, var, "reuse_at")
    if any(isinstance(a.node, Store) for a in accs):
        raise Refusal(f"loop '{var}' writes '{name}'; reuse_at keeps what it reads", loop=var,
                      hint="reuse a tensor the loop only reads, or buffer it with buffer_at")
    rank = buf.type.rank
    dims = [d for d in range(rank) if any(a.dims[d][0] for a in accs)]
    if len(dims) != 1:
        raise Refusal(f"loop '{var}' {'indexes no' if not dims else 'indexes more than one'} dimension of '{name}'",
                      loop=var, hint="reuse_at keeps slices along the one dimension the loop moves along")
    d = dims[0]
    stride = accs[0].dims[d][0]  # the same in every access (_gather checks the fixed parts agree)
    if stride < 0:
        raise Refusal(f"'{name}' is indexed by a negative multiple of loop '{var}'", loop=var,
                      hint="reuse_at follows an index that grows with the loop")
    if not (trip_count(loop) and loop.step == 1 and isinstance(loop.start, Const)):
        raise Refusal(f"loop '{var}' needs constant bounds and step 1 for reuse_at", loop=var)
    g_lo = min(a.dims[d][3][0] for a in accs)
    g_hi = max(a.dims[d][3][1] for a in accs)
    R = g_hi - g_lo + 1
    if R <= stride:
        raise Refusal(f"each element of '{name}' is read in one iteration of loop '{var}' only; nothing to reuse",
                      loop=var, hint="reuse_at pays off for stencils and convolutions (A[x], A[x + 1], ...)")
    lo = [min(a.dims[e][3][0] for a in accs) for e in range(rank)]
    hi = [max(a.dims[e][3][1] for a in accs) for e in range(rank)]
    others = [e for e in range(rank) if e != d and hi[e] > lo[e]]
    shape = tuple(R if e == d else hi[e] - lo[e] + 1 for e in range(rank) if e == d or e in others)
    bdims = [e for e in range(rank) if e == d or e in others]  # the buffer's dimensions, in the tensor's order
    taken = all_names(k)
    base = name.removesuffix("_line")  # a buffer reused again at an inner loop is a window on the line buffer
    local = fresh(taken, f"{base}_line" if others and base == name else f"{base}_window")
    fixed = {e: dict(accs[0].dims[e][1]) for e in range(rank)}
    start = loop.start.value
    vv = Var(var, index)
    # the loop now visits every position the reads cover, one slice an iteration: stride * (trips - 1) + R of
    # them; the body runs once the window holds iteration v's slices, at the position of its last one
    count = stride * (trip_count(loop) - 1) + R
    late = B.binop("sub", vv, B.const(start + R - 1, index))  # positions past the first full window

    def bidx(node_dims):
        return tuple(_expr(_plus(node_dims[e][2], {None: -(g_lo if e == d else lo[e])})) for e in bdims)

    by_node = {id(a.node): a for a in accs}
    body = tuple(map_stmt_exprs(s, lambda e: Load(local, bidx(by_node[id(e)].dims), e.dtype, e.loc)
                                if isinstance(e, Load) and e.name == name and id(e) in by_node else None)
                 for s in loop.body)
    v = B.binop("sub", vv, B.const(R - 1, index)) if stride == 1 else \
        B.binop("floordiv", late, B.const(stride, index))
    if stride > 1 and start:
        v = B.binop("add", v, B.const(start, index))
    body = tuple(substitute(s, var, v) for s in body)
    full = B.binop("ge", vv, B.const(start + R - 1, index))
    if stride > 1:
        full = B.binop("and", full, B.binop("eq", B.binop("mod", late, B.const(stride, index)), B.const(0, index)))
    guard = If(full, body, (), loop.loc)
    # shift and load: for each element of the other dimensions, slots 0..R-2 take 1..R-1, slot R-1 the new slice
    ts = {e: fresh(taken | {local}, f"{local}_{e}") for e in others}
    r = fresh(taken | {local} | set(ts.values()), f"{local}_r")

    def at(slot):
        return tuple(slot if e == d else Var(ts[e], index) for e in bdims)

    dt = buf.type.dtype
    shift = For(r, B.const(0, index), B.const(R - 1, index), 1,
                (Store(local, at(Var(r, index)), Load(local, at(B.binop("add", Var(r, index), B.const(1, index))), dt)),),
                Attrs({"unroll": 0}), loop.loc)
    src = tuple(_expr(_plus(fixed[e], {var: 1, None: stride * start + g_lo - start})) if e == d else
                _expr(_plus(fixed[e], {None: lo[e]}, {ts[e]: 1} if e in others else {})) for e in range(rank))
    load = Store(local, at(B.const(R - 1, index)), Load(name, src, dt))
    fill: tuple = (shift, load)
    for e in reversed(others):
        fill = (For(ts[e], B.const(0, index), B.const(hi[e] - lo[e] + 1, index), 1, fill, Attrs(), loop.loc),)
    extended = replace(loop, stop=B.const(start + count, index), body=fill + (guard,))
    alloc = Alloc(local, TensorType(dt, shape), None, Attrs({"partition": ((bdims.index(d) + 1, "complete", 0),)}),
                  loop.loc)
    return replace(k, body=put(k.body, path, (alloc, extended))), local
