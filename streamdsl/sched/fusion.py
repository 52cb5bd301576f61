"""``compute_at``: a producer loop nest computed inside a consumer loop nest, the loops around both fused.

Before ``compute_at(j, jj)``::              After::

    for i in range(10) {                      alloc C: i32[10, 20] = 0
      for j in range(20) {                    for ii in range(10) {
        B[i, j] = A[i, j] * 2                   for jj in range(20) {
    alloc C: i32[10, 20] = 0                      B[ii, jj] = A[ii, jj] * 2
    for ii in range(10) {                         C[ii, jj] = B[ii, jj] + 1
      for jj in range(20) {
        C[ii, jj] = B[ii, jj] + 1

The producer's loops from the top of its nest down to the producer loop are matched level by level with the
consumer's down to the consumer loop (Allo's ``compute_at``): they must have the same bounds, and the
statements between the two nests must not touch what the producer does.  At each level the producer's
statements (its whole body at the producer loop; at the levels above, those before the next loop) run at the
start of the fused loop's body, at the same iteration, then the consumer's.  Legal when no
dependence between the two nests runs backwards in the fused order
(:func:`streamdsl.ir.depend.fusion_violation`).
"""
from __future__ import annotations

from ..ir.depend import fusion_violation
from ..ir.nodes import Alloc, Assign, Decl, For, If, Kernel, Load, Ref, Store, Var, walk
from ..ir.printer import print_expr
from ..types import index
from .primitives import Refusal, _dependence_refusal, _loop
from .rewrite import all_names, fresh, get, map_expr, map_stmt_exprs, map_stmts, put, replace, substitute


def compute_at(k: Kernel, producer: str, consumer: str) -> Kernel:
    ppath, _ploop = _loop(k, producer)
    cpath, _cloop = _loop(k, consumer)
    n = 0
    while n < min(len(ppath), len(cpath)) and ppath[n] == cpath[n]:
        n += 1
    common = ppath[:n]
    holder = get(k.body, common) if common else None
    if n == len(ppath) or n == len(cpath) or isinstance(holder, If):
        raise Refusal(f"loops '{producer}' and '{consumer}' are not in two loop nests of one block", loop=producer,
                      hint="compute_at moves a producer nest into a consumer nest that follows it in the same block")
    block = holder.body if isinstance(holder, For) else k.body
    prod_at, cons_at = ppath[n], cpath[n]
    if prod_at >= cons_at:
        raise Refusal(f"loop '{producer}' must come before loop '{consumer}'", loop=producer,
                      hint="compute_at(producer, consumer): the producer nest runs first")
    prod_path = _path(block[prod_at], ppath[n + 1:], producer)
    for lp, nxt in zip(prod_path, prod_path[1:]):
        if lp.body[-1] is not nxt:
            raise Refusal(f"loop '{lp.var}' has statements after loop '{nxt.var}'", loop=lp.var,
                          hint="compute_at moves the producer's statements before the consumer's at each level; "
                               "move them before the loop")
    cons_path = _path(block[cons_at], cpath[n + 1:], consumer)
    if len(prod_path) != len(cons_path):
        raise Refusal(f"loop '{producer}' is {_depth(len(prod_path))} of its nest, but loop '{consumer}' is "
                      f"{_depth(len(cons_path))} of its own", loop=consumer,
                      hint="compute_at fuses the loops of both nests level by level down to the two loops given")
    rename: dict[str, Var] = {}
    for p, c in zip(prod_path, cons_path):
        bounds = [map_expr(e, lambda x: rename.get(x.name) if isinstance(x, Var) else None) for e in (p.start, p.stop)]
        if (bounds[0], bounds[1], p.step) != (c.start, c.stop, c.step):
            raise Refusal(f"loops '{p.var}' and '{c.var}' have different bounds (range({print_expr(p.start)}, "
                          f"{print_expr(p.stop)}, {p.step}) and range({print_expr(c.start)}, {print_expr(c.stop)}, "
                          f"{c.step}))", loop=c.var, hint="split one of them so the trip counts match")
        rename[p.var] = Var(c.var, index)
    bad = fusion_violation(k, block, prod_at, cons_at, prod_path, cons_path)
    if bad is not None:
        if not bad.loops:
            raise Refusal(f"compute_at would move loop '{producer}' past a statement between the two nests that "
                          f"also uses '{bad.name}'", loop=producer,
                          hint="move that statement before the producer nest, or compute the producer elsewhere")
        raise _dependence_refusal("compute_at", bad)
    # level by level from the innermost: the producer's statements first, then the consumer's level body.  Its
    # locals are renamed where the consumer's names would clash (before its loop variables become the consumer's)
    taken = all_names(replace(k, body=block[:prod_at] + block[prod_at + 1:])) | all_names(k) - _declared(
        (block[prod_at],))
    fused = None
    for level in reversed(range(len(prod_path))):
        p, c = prod_path[level], cons_path[level]
        mine = p.body if level == len(prod_path) - 1 else p.body[:-1]
        mine = _fresh_locals(mine, taken)
        for q in prod_path[:level + 1]:
            mine = tuple(substitute(st, q.var, rename[q.var]) for st in mine)
        theirs = c.body if fused is None else tuple(fused if st is cons_path[level + 1] else st for st in c.body)
        fused = replace(c, body=mine + theirs)
    new_nest = fused
    new_block = block[:prod_at] + block[prod_at + 1:cons_at] + (new_nest,) + block[cons_at + 1:]
    if holder is None:
        return replace(k, body=new_block)
    return replace(k, body=put(k.body, common, replace(holder, body=new_block)))


def _path(top, rel: tuple, name: str) -> list[For]:
    """The loops from ``top`` down to the loop at relative path ``rel`` (through loop bodies only)."""
    if not isinstance(top, For):
        raise Refusal(f"loop '{name}' is inside an if; compute_at fuses loop nests", loop=name)
    loops, cur = [top], top
    for step in rel:
        if not isinstance(cur, For) or not isinstance(cur.body[step], For):
            raise Refusal(f"loop '{name}' is inside an if; compute_at fuses loop nests", loop=name)
        cur = cur.body[step]
        loops.append(cur)
    return loops


def _depth(n: int) -> str:
    return "the outermost loop" if n == 1 else f"at depth {n}"


def _declared(body) -> set[str]:
    return {n.name for s in body for n in walk(s) if isinstance(n, (Decl, Alloc))} | \
        {n.var for s in body for n in walk(s) if isinstance(n, For)}


def _fresh_locals(body, taken: set[str]):
    """``body`` with its locals renamed where their names are taken elsewhere in the kernel (the consumer's
    body, where it now runs, may declare the same names or use them as loop variables)."""
    taken = set(taken)
    for name in sorted({n.name for s in body for n in walk(s) if isinstance(n, (Decl, Alloc))}):
        if name in taken:
            new = fresh(taken | _declared(body), name)
            taken.add(new)
            body = tuple(_rename(s, name, new) for s in body)
    return body


def _rename(s, old: str, new: str):
    s = map_stmt_exprs(s, lambda e: replace(e, name=new) if isinstance(e, (Var, Load, Ref)) and e.name == old else None)
    return map_stmts((s,), lambda t: replace(t, name=new) if isinstance(t, (Decl, Alloc, Assign, Store))
                     and t.name == old else None)[0]
