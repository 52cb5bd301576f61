"""Distinct kernels that share a name get names of their own.

A kernel factory used at two shapes in one design (``mm`` at 64x64 and at
32x32) gives two different kernels named ``mm``.  Calls, the IR text and the
C++ functions identify kernels by name, so each gets the name of its shape
(``mm_64x64``, ``mm_32x32``); the user's own name stays in the kernel's
``user_name`` attr, which messages and task names use.  The suffix is the
first that tells the kernels apart: the first tensor parameter's shape, then
every dimension of the signature in order (``linear_8x64x128``), then the
dtypes too, and last a count (``mm_1``, ``mm_2``: the same signature with
different constants).
"""
from __future__ import annotations

import dataclasses

from ..types import TensorType
from .nodes import CallKernel, For, If, Kernel


def user_name(k: Kernel) -> str:
    """The name the user gave the kernel (its function's name)."""
    return k.attrs.get("user_name", k.name)


def unique_kernel_names(k: Kernel, calls: dict[str, Kernel] | None = None) -> Kernel:
    """``k`` with every kernel under it uniquely named.

    ``calls`` maps the names ``k``'s own ``CallKernel`` statements use to their
    kernels (the frontend's provisional ``mm#1`` for a second kernel named
    ``mm``); by default ``k``'s callees by name."""
    calls = {c.name: c for c in k.callees} if calls is None else calls
    groups: dict[str, list[Kernel]] = {}  # a name -> the distinct kernels carrying it
    order: list[Kernel] = []
    seen: set[int] = set()

    def collect(table: dict[str, Kernel]) -> None:
        for c in table.values():
            if id(c) in seen:
                continue
            seen.add(id(c))
            members = groups.setdefault(c.name, [])
            if not any(m is c or m == c for m in members):
                members.append(c)
            order.append(c)
            collect({x.name: x for x in c.callees})

    collect(calls)
    if all(len(m) == 1 for m in groups.values()) and all(name == c.name for name, c in calls.items()):
        return k
    taken = {k.name} | set(groups)
    final: dict[int, str] = {}  # id of a kernel -> its name
    for name, members in groups.items():
        names = [name] if len(members) == 1 else _distinct_names(name, members, taken)
        taken |= set(names)
        for c in order:
            if c.name == name:
                final[id(c)] = names[next(i for i, m in enumerate(members) if m is c or m == c)]
    rebuilt: dict[int, Kernel] = {}

    def rebuild(owner: Kernel, table: dict[str, Kernel]) -> Kernel:
        rename = {}
        callees = []
        for name, c in table.items():
            new = rebuilt.get(id(c))
            if new is None:
                new = rebuild(c, {x.name: x for x in c.callees})
                if final[id(c)] != c.name:
                    new = dataclasses.replace(new, name=final[id(c)], attrs=new.attrs.set("user_name", user_name(c)))
                rebuilt[id(c)] = new
            rename[name] = new.name
            if all(x is not new for x in callees):
                callees.append(new)
        body = _rename_calls(owner.body, rename)
        if body is owner.body and all(a is b for a, b in zip(callees, owner.callees)) and len(callees) == len(owner.callees):
            return owner
        return dataclasses.replace(owner, body=body, callees=tuple(callees))

    return rebuild(k, calls)


def _distinct_names(base: str, members: list[Kernel], taken: set[str]) -> list[str]:
    for level in range(3):
        names = [f"{base}_{_suffix(m, level)}" for m in members]
        if len(set(names)) == len(names) and not set(names) & taken:
            return names
    names, n = [], 1
    for _ in members:
        while f"{base}_{n}" in taken:
            n += 1
        names.append(f"{base}_{n}")
        n += 1
    return names


def _suffix(k: Kernel, level: int) -> str:
    """``64x64`` (the first tensor's shape), ``8x64x128`` (every dimension, in order) or ``f32_i8_8x64x128``."""
    types = [p.type for p in k.params] + list(k.results)
    tensors = [t for t in types if isinstance(t, TensorType)]
    if level == 0:
        return "x".join(map(str, tensors[0].shape)) if tensors else "scalar"
    dims: list[int] = []
    for t in tensors:
        dims += [d for d in t.shape if d not in dims]
    shape = "x".join(map(str, dims)) or "scalar"
    if level == 1:
        return shape
    dtypes: list[str] = []
    for t in types:
        name = str(t.dtype if isinstance(t, TensorType) else t)
        if name not in dtypes:
            dtypes.append(name)
    return "_".join(dtypes + [shape])


def _rename_calls(body, rename: dict[str, str]):
    """``body`` with each ``CallKernel``'s callee renamed by ``rename`` (the same tuple when none changes)."""
    out, changed = [], False
    for s in body:
        t = s
        if isinstance(s, CallKernel) and rename.get(s.callee, s.callee) != s.callee:
            t = dataclasses.replace(s, callee=rename[s.callee])
        elif isinstance(s, For):
            inner = _rename_calls(s.body, rename)
            t = s if inner is s.body else dataclasses.replace(s, body=inner)
        elif isinstance(s, If):
            a, b = _rename_calls(s.then, rename), _rename_calls(s.orelse, rename)
            t = s if (a is s.then and b is s.orelse) else dataclasses.replace(s, then=a, orelse=b)
        changed |= t is not s
        out.append(t)
    return tuple(out) if changed else body
