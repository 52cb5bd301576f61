"""The loop IR: frozen, hashable nodes with source locations and pragma attrs.

Meaning (the reference simulator, ``backend/sim.py``, is the executable form):

* Values.  Every expression carries its result ``dtype``; operands already have
  the types their op demands (the builders insert explicit :class:`Cast`), so
  nothing converts implicitly.  Arithmetic follows :mod:`streamdsl.types`:
  integers wrap at their declared width after every op, floats round to
  nearest-even at their precision, fixed point truncates toward -inf and wraps.
* Indices.  Loop variables are ``i32``.  Tensor indices are integer
  expressions, usually affine in loop variables; an index outside the
  tensor is an error (the simulator raises a located ``ShapeError``).
* Scope.  A loop variable is bound inside its ``For`` body only and is never
  assigned; ``Decl``/``Alloc`` bind a name from that statement to the end of
  the enclosing block; names are unique in overlapping scopes.  A tensor
  parameter the kernel stores into (or passes to a callee that does) is an
  in/out parameter, written in place as an HLS C++ array argument is
  (:func:`written_params`); scalar parameters are read-only.  Results are
  returned by ``Return``, the last top-level statement.  ``CallKernel`` binds
  the callee's results to new names; a callee writes its in/out arguments,
  the caller's tensors, in place.
* Order.  Statements run in program order; loops run their iterations in
  increasing (or, for a negative step, decreasing) order.  A transformation is
  legal only if it keeps the order of every pair of dependent accesses.
* Streams (the dataflow layer): a stream is a FIFO of tokens; a read blocks
  while it is empty, a write blocks while it is full, tokens leave in the
  order they entered, and each stream has one writer and one reader.
* Attrs.  Pragmas live in ``attrs``; keys: ``pipeline`` (II, int), ``unroll``
  (factor, 0 = full) on ``For``; ``partition`` ((dim, kind, factor), ...) and
  ``bind`` (storage) on ``Alloc``; ``rom`` (the values, row-major) on an
  ``Alloc`` that is a constant tensor (read-only, a ROM in HLS);
  ``partition`` ((param, ((dim, kind, factor), ...)), ...) on ``Kernel`` for
  parameters; ``reassociate`` (True) on ``For``: sums carried by the loop
  may be reassociated even in floating point (:mod:`streamdsl.ir.depend`).

``loc`` never takes part in equality, so an IR printed and parsed back
compares equal to the original (``sd.parse_ir(str(k.ir)) == k.ir``).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..errors import Loc
from ..types import DType, TensorType
from .memo import IdentityMemo

_loc = lambda: field(default=None, compare=False, repr=False)  # noqa: E731


class Attrs(tuple):
    """An immutable, hashable mapping of pragma attributes, kept sorted by key."""

    def __new__(cls, items: Any = ()):
        if isinstance(items, dict):
            items = items.items()
        return super().__new__(cls, tuple(sorted((str(k), v) for k, v in items)))

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self:
            if k == key:
                return v
        return default

    def __contains__(self, key) -> bool:  # type: ignore[override]
        return any(k == key for k, _ in self)

    def set(self, key: str, value: Any) -> "Attrs":
        return Attrs({**dict(self), key: value})

    def remove(self, key: str) -> "Attrs":
        return Attrs({k: v for k, v in self if k != key})

    def __repr__(self) -> str:
        return "Attrs(" + repr(dict(self)) + ")"


NO_ATTRS = Attrs()


# ----------------------------------------------------------------- expressions
class Expr:
    __slots__ = ()
    dtype: DType


@dataclass(frozen=True, slots=True)
class Const(Expr):
    value: int | float
    dtype: DType
    loc: Loc | None = _loc()

    def __eq__(self, other):  # NaN constants compare equal to themselves
        return (
            type(other) is Const
            and self.dtype == other.dtype
            and (self.value == other.value or (self.value != self.value and other.value != other.value))
            and type(self.value) is type(other.value)
        )

    def __hash__(self):
        return hash((self.dtype, repr(self.value)))


@dataclass(frozen=True, slots=True)
class Var(Expr):
    """A scalar variable: a loop variable, a scalar parameter or a local scalar."""

    name: str
    dtype: DType
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Load(Expr):
    """``name[indices]``: one element of a tensor."""

    name: str
    indices: tuple[Expr, ...]
    dtype: DType
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Ref(Expr):
    """A whole tensor, as an argument of a kernel call or a returned value."""

    name: str
    type: TensorType
    loc: Loc | None = _loc()

    @property
    def dtype(self) -> DType:  # type: ignore[override]
        return self.type.dtype


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    """``lhs op rhs``; ``op`` names an entry of :data:`streamdsl.ir.ops.OPS`."""

    op: str
    lhs: Expr
    rhs: Expr
    dtype: DType
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class UnaryOp(Expr):
    op: str  # neg, not, invert
    operand: Expr
    dtype: DType
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """A math builtin (exp, log, sqrt, rsqrt, tanh, erf, abs, max, min, ...)."""

    fn: str
    args: tuple[Expr, ...]
    dtype: DType
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    operand: Expr
    dtype: DType
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Select(Expr):
    """``then if cond else orelse``."""

    cond: Expr
    then: Expr
    orelse: Expr
    dtype: DType
    loc: Loc | None = _loc()


# ------------------------------------------------------------------ statements
class Stmt:
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class For(Stmt):
    """``for var in range(start, stop, step)``; bounds may use outer loop vars."""

    var: str
    start: Expr
    stop: Expr
    step: int
    body: tuple[Stmt, ...]
    attrs: Attrs = NO_ATTRS
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Store(Stmt):
    """``name[indices] = value``."""

    name: str
    indices: tuple[Expr, ...]
    value: Expr
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Decl(Stmt):
    """``name: dtype = init`` for a local scalar."""

    name: str
    dtype: DType
    init: Expr
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Assign(Stmt):
    """``name = value`` for a declared local scalar."""

    name: str
    value: Expr
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Alloc(Stmt):
    """A local tensor ``name: type = init`` (``init`` None: uninitialised, zero in the simulator)."""

    name: str
    type: TensorType
    init: Expr | None
    attrs: Attrs = NO_ATTRS
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class If(Stmt):
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class CallKernel(Stmt):
    """``outs = callee(args)``: runs another kernel; ``outs`` are new locals."""

    callee: str
    args: tuple[Expr, ...]
    outs: tuple[str, ...]
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class StreamMove(Stmt):
    """Move tokens of dataflow stream ``stream`` between its FIFOs and local tensor ``buffer`` (a dataflow task's
    process: :mod:`streamdsl.dfg.tasks`; kernels written by users hold none).  ``direction`` is ``"read"`` (FIFO
    to buffer) or ``"write"``; at its ``i``-th execution it moves ``counts[i]`` tokens (``counts`` cycles when
    the statement runs more often), each ``token_cycles`` cycles of beats (its beats over its FIFOs, at the
    buffer's ports), the next tokens of the stream in order."""

    stream: str
    direction: str
    buffer: str
    counts: tuple[int, ...]
    token_cycles: int
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Return(Stmt):
    values: tuple[Expr, ...]
    loc: Loc | None = _loc()


# -------------------------------------------------------------------- kernels
@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: TensorType | DType
    loc: Loc | None = _loc()


@dataclass(frozen=True, slots=True)
class Kernel:
    """A kernel: parameters, result types, a body, and the kernels it calls."""

    name: str
    params: tuple[Param, ...]
    results: tuple[TensorType | DType, ...]
    body: tuple[Stmt, ...]
    attrs: Attrs = NO_ATTRS
    callees: tuple["Kernel", ...] = ()
    loc: Loc | None = _loc()

    def callee(self, name: str) -> "Kernel":
        for k in self.callees:
            if k.name == name:
                return k
        raise KeyError(name)

    def __str__(self) -> str:
        from .printer import print_kernel

        return print_kernel(self)


# ------------------------------------------------------------------ traversal
_NOT_CHILDREN = ("loc", "dtype", "type", "attrs", "callees")
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_NODE = (Expr, Stmt)


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(n for n in cls.__dataclass_fields__ if n not in _NOT_CHILDREN)
    return fields


def _children_list(node) -> list:
    out = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, _NODE):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, _NODE))
    return out


def children(node) -> Iterator:
    """Direct sub-nodes (expressions and statements) of ``node``."""
    return iter(_children_list(node))


def walk(node) -> Iterator:
    """Pre-order traversal of ``node`` and everything under it.

    Every pass over the IR (verification, the cost model, the explorer) walks it, the same loops many times
    over: a statement's nodes are remembered per object (:data:`_SUBTREES`; nodes are immutable, and
    a primitive's copy-on-write result shares the loops it did not change), and anything else is walked with
    an explicit stack (a ``yield from`` per level made each node cost a generator frame per ancestor)."""
    if isinstance(node, Kernel):
        return itertools.chain.from_iterable(map(walk, node.body))
    if isinstance(node, _COMPOUND):
        return iter(_SUBTREES(node))
    return _walk_stack(node)


def _walk_stack(node) -> Iterator:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        kids = _children_list(n)
        if kids:
            kids.reverse()
            stack.extend(kids)


def _subtree(node) -> tuple:
    """``node`` and everything under it, in pre-order (the statements inside from their own entries)."""
    out = [node]
    for kid in _children_list(node):
        out.extend(_SUBTREES(kid) if isinstance(kid, _COMPOUND) else _walk_stack(kid))
    return tuple(out)


_COMPOUND = Stmt  # every statement: the rules of the cost model walk a loop body statement by statement
# statement -> its nodes in pre-order; an entry keeps its node alive, the least recently used go first
_SUBTREES = IdentityMemo(_subtree, 16384)


def _written_params(k: Kernel) -> tuple[str, ...]:
    tensors = {p.name for p in k.params if isinstance(p.type, TensorType)}
    out: set[str] = set()
    for n in walk(k):
        if isinstance(n, Store) and n.name in tensors:
            out.add(n.name)
        elif isinstance(n, CallKernel):
            inner = set(written_params(k.callee(n.callee)))
            callee = k.callee(n.callee)
            out |= {a.name for p, a in zip(callee.params, n.args) if p.name in inner and isinstance(a, Ref)} & tensors
    return tuple(p.name for p in k.params if p.name in out)


_WRITTEN = IdentityMemo(_written_params, 4096)


def written_params(k: Kernel) -> tuple[str, ...]:
    """The in/out parameters of ``k`` (in parameter order): tensors it stores into, itself or through a callee."""
    return _WRITTEN(k)
