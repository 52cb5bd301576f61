"""Small IR rewriting helpers shared by the schedule primitives."""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

from ..ir.memo import IdentityMemo
from ..ir.nodes import Expr, For, If, Kernel, Stmt, Var

Path = tuple[int, ...]  # child positions from the kernel body down to a statement


def replace(node, **changes):
    """Copy-on-write ``dataclasses.replace`` that returns ``node`` when nothing changes."""
    if all(getattr(node, k) is v or getattr(node, k) == v for k, v in changes.items()):
        return node
    return dataclasses.replace(node, **changes)


def map_expr(e: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rebuild ``e`` bottom-up; ``fn`` may return a replacement for a node (or None)."""
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, Expr):
            changes[f.name] = map_expr(v, fn)
        elif isinstance(v, tuple) and v and all(isinstance(x, Expr) for x in v):
            changes[f.name] = tuple(map_expr(x, fn) for x in v)
    e2 = replace(e, **changes) if changes else e
    r = fn(e2)
    return e2 if r is None else r


def map_stmt_exprs(s: Stmt, fn: Callable[[Expr], Expr | None]) -> Stmt:
    """Apply :func:`map_expr` to every expression in ``s`` and its nested statements."""
    changes = {}
    for f in dataclasses.fields(s):
        if f.name in ("loc", "attrs", "type", "dtype"):
            continue
        v = getattr(s, f.name)
        if isinstance(v, Expr):
            changes[f.name] = map_expr(v, fn)
        elif isinstance(v, Stmt):
            changes[f.name] = map_stmt_exprs(v, fn)
        elif isinstance(v, tuple) and v:
            if all(isinstance(x, Stmt) for x in v):
                changes[f.name] = tuple(map_stmt_exprs(x, fn) for x in v)
            elif all(isinstance(x, Expr) for x in v):
                changes[f.name] = tuple(map_expr(x, fn) for x in v)
    return replace(s, **changes) if changes else s


def substitute(s: Stmt, name: str, value: Expr) -> Stmt:
    """Replace every use of the scalar ``name`` in ``s`` by ``value``."""
    return map_stmt_exprs(s, lambda e: value if isinstance(e, Var) and e.name == name else None)


def loops_with_paths(body: tuple[Stmt, ...], prefix: Path = ()) -> Iterator[tuple[Path, For]]:
    """Every ``For`` in nest order (pre-order), with its path."""
    for n, s in enumerate(body):
        p = prefix + (n,)
        if isinstance(s, For):
            yield p, s
            yield from loops_with_paths(s.body, p)
        elif isinstance(s, If):
            yield from loops_with_paths(s.then, p + (0,))
            yield from loops_with_paths(s.orelse, p + (1,))


def get(body: tuple[Stmt, ...], path: Path) -> Stmt:
    s = body[path[0]]
    rest = path[1:]
    while rest:
        if isinstance(s, If):
            s, rest = (s.then if rest[0] == 0 else s.orelse)[rest[1]], rest[2:]
        else:
            s, rest = s.body[rest[0]], rest[1:]
    return s


def put(body: tuple[Stmt, ...], path: Path, new: Stmt | tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    """``body`` with the statement at ``path`` replaced by ``new`` (one or several statements)."""
    n, rest = path[0], path[1:]
    if not rest:
        repl = new if isinstance(new, tuple) else (new,)
        return body[:n] + repl + body[n + 1:]
    s = body[n]
    if isinstance(s, If):
        if rest[0] == 0:
            s2 = replace(s, then=put(s.then, rest[1:], new))
        else:
            s2 = replace(s, orelse=put(s.orelse, rest[1:], new))
    else:
        s2 = replace(s, body=put(s.body, rest, new))
    return body[:n] + (s2,) + body[n + 1:]


def find_loop(k: Kernel, var: str) -> tuple[Path, For] | None:
    for p, loop in loops_with_paths(k.body):
        if loop.var == var:
            return p, loop
    return None


def all_names(k: Kernel) -> set[str]:
    """Every name bound in ``k`` (params, locals, loop variables, call outputs)."""
    from ..ir.nodes import Alloc, CallKernel, Decl, walk

    names = {p.name for p in k.params}
    for n in (n for s in k.body for n in walk(s)):
        if isinstance(n, For):
            names.add(n.var)
        elif isinstance(n, (Decl, Alloc)):
            names.add(n.name)
        elif isinstance(n, CallKernel):
            names.update(n.outs)
    return names


def fresh(taken: set[str], base: str) -> str:
    if base not in taken:
        return base
    n = 1
    while f"{base}{n}" in taken:
        n += 1
    return f"{base}{n}"


def unique_loop_vars(k: Kernel) -> Kernel:
    """Rename loop variables so that every loop of ``k`` has its own name (j, j1, j2...).  Remembered per kernel
    object (every ``Schedule`` of a kernel starts here: the explorer makes one per kernel estimate)."""
    return _UNIQUE(k)


def _unique_loop_vars(k: Kernel) -> Kernel:
    taken = all_names(k)  # a new name must not clash with any name, loop variables included
    seen: set[str] = set()

    def visit(body):
        out = []
        for s in body:
            if isinstance(s, For):
                var = s.var
                if var in seen:
                    var = fresh(taken | seen, s.var)
                seen.add(var)
                inner = tuple(substitute(b, s.var, Var(var, s.start.dtype)) for b in s.body) if var != s.var else s.body
                s = replace(s, var=var, body=visit(inner))
            elif isinstance(s, If):
                s = replace(s, then=visit(s.then), orelse=visit(s.orelse))
            out.append(s)
        return tuple(out)

    return replace(k, body=visit(k.body))


_UNIQUE = IdentityMemo(_unique_loop_vars, 1024)


def map_stmts(body: tuple[Stmt, ...], fn: Callable[[Stmt], Stmt | None]) -> tuple[Stmt, ...]:
    """``body`` with every statement, at any depth, replaced by ``fn(stmt)`` unless that is None."""
    out = []
    for s in body:
        if isinstance(s, For):
            s = replace(s, body=map_stmts(s.body, fn))
        elif isinstance(s, If):
            s = replace(s, then=map_stmts(s.then, fn), orelse=map_stmts(s.orelse, fn))
        r = fn(s)
        out.append(s if r is None else r)
    return tuple(out)


def map_allocs(k: Kernel, name: str, fn) -> Kernel:
    """``k`` with the ``Alloc`` of ``name`` replaced by ``fn(alloc)``."""
    from ..ir.nodes import Alloc

    return replace(k, body=map_stmts(k.body, lambda s: fn(s) if isinstance(s, Alloc) and s.name == name else None))
