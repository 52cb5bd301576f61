"""Schedule primitives: pure functions ``Kernel -> Kernel`` that check legality.

Each primitive takes loop variables by name (names are unique in a scheduled
kernel, see :func:`rewrite.unique_loop_vars`) and raises :class:`Refusal` when
it cannot apply; :class:`streamdsl.sched.schedule.Schedule` turns a refusal into a
located :class:`streamdsl.ScheduleError` that shows the offending loop.
"""
from __future__ import annotations

from ..ir import build as B
from ..ir.depend import reorder_violation
from ..ir.deps import BIND_IMPL, BIND_WHAT, accumulation, affine, bind_class, names_in
from ..ir.nodes import (
    Alloc, Assign, Attrs, CallKernel, Const, Decl, For, If, Kernel, Load, Ref, Return, Store, TensorType, Var, walk,
)
from ..ir.loops import trip_count
from ..ir.printer import print_expr
from ..types import FloatType, index
from .rewrite import (
    all_names, find_loop, fresh, get, loops_with_paths, map_allocs, map_expr, map_stmt_exprs, map_stmts, put, replace,
    substitute, unique_loop_vars,
)


class Refusal(Exception):
    """A primitive cannot apply: message, hint and the loop (by var) to mark."""
    def __init__(self, message: str, hint: str | None = None, loop: str | None = None):
        super().__init__(message)
        self.message, self.hint, self.loop = message, hint, loop


def _loop(k: Kernel, var: str):
    found = find_loop(k, var)
    if found is None:
        raise Refusal(f"kernel '{k.name}' has no loop '{var}'", hint="list the loops with s.loops()")
    return found


def _const_bounds(loop: For, what: str) -> tuple[int, int]:
    if not (isinstance(loop.start, Const) and isinstance(loop.stop, Const)):
        raise Refusal(f"{what} needs constant bounds, but loop '{loop.var}' runs over "
                      f"range({_txt(loop.start)}, {_txt(loop.stop)})", loop=loop.var,
                      hint="apply it to a loop whose bounds do not depend on other loops")
    return loop.start.value, loop.stop.value


def _txt(e) -> str:
    return print_expr(e)


def split(k: Kernel, var: str, factor: int, tail: str = "guard") -> tuple[Kernel, str, str]:
    """``for i in range(N)`` -> ``for i_o in range(ceil(N/f)): for i_i in range(f)``.

    Before::                                 After ``split(i, 4)``::

        for i in range(0, 64, 1) {               for i_o in range(0, 16, 1) {
          C[i] = A[i]                              for i_i in range(0, 4, 1) {
        }                                            C[((i_o * 4) + i_i)] = A[...]

    A factor that does not divide the trip count gets a guarded tail
    (``if i < N``) unless ``tail="refuse"``.
    """
    if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
        raise Refusal(f"split factor must be a positive integer, got {factor!r}", hint="e.g. s.split(i, 4)",
                      loop=var if find_loop(k, var) else None)
    if tail not in ("guard", "refuse"):
        raise Refusal(f"split tail must be 'guard' or 'refuse', got {tail!r}", loop=var if find_loop(k, var) else None)
    path, loop = _loop(k, var)
    start, _stop = _const_bounds(loop, "split")
    n = trip_count(loop)
    if factor > n:
        raise Refusal(f"split factor {factor} exceeds the {n} iterations of loop '{var}'", loop=var,
                      hint=f"use a factor between 1 and {n}")
    taken = all_names(k)
    outer, inner = fresh(taken, f"{var}_o"), fresh(taken | {f"{var}_o"}, f"{var}_i")
    n_outer = -(-n // factor)
    ragged = n % factor != 0
    if ragged and tail == "refuse":
        raise Refusal(f"split factor {factor} does not divide the {n} iterations of loop '{var}'", loop=var,
                      hint=f"choose a divisor of {n}, or let split guard the tail")
    vo, vi = Var(outer, index), Var(inner, index)
    flat = B.binop("add", B.binop("mul", vo, B.const(factor, index)), vi)  # iteration number
    value = flat if (start == 0 and loop.step == 1) else B.binop(
        "add", B.const(start, index), B.binop("mul", flat, B.const(loop.step, index)))
    body = tuple(substitute(s, var, value) for s in loop.body)
    if ragged:
        body = (If(B.binop("lt", flat, B.const(n, index)), body, (), loop.loc),)
    attrs = loop.attrs
    inner_loop = For(inner, B.const(0, index), B.const(factor, index), 1, body, Attrs(), loop.loc)
    outer_loop = For(outer, B.const(0, index), B.const(n_outer, index), 1, (inner_loop,), attrs, loop.loc)
    return replace(k, body=put(k.body, path, outer_loop)), outer, inner


def sink_guards(loop: For) -> For:
    """``loop`` with each ``if`` that is a loop's whole body and holds one loop moved inside that loop
    (``for a: if g: for b: S`` -> ``for a: for b: if g: S``, ``g`` not using ``b``): the same iterations run
    ``S``, and a ragged split's guard no longer breaks the perfect nest that reorder, fuse and tile need."""
    body = loop.body
    if len(body) == 1 and isinstance(body[0], If) and not body[0].orelse and len(body[0].then) == 1 \
            and isinstance(body[0].then[0], For) and body[0].then[0].var not in names_in(body[0].cond):
        guard, inner = body[0], body[0].then[0]
        body = (replace(inner, body=(replace(guard, then=inner.body),)),)
    if len(body) == 1 and isinstance(body[0], For):
        body = (sink_guards(body[0]),)
    return replace(loop, body=body)


def _perfect(k: Kernel, vars_) -> Kernel:
    """``k`` with the guards of the nest holding ``vars_`` sunk below its loops (:func:`sink_guards`)."""
    paths = [find_loop(k, v) for v in vars_]
    if any(p is None for p in paths):
        return k
    top, loop = min(paths, key=lambda p: len(p[0]))
    return replace(k, body=put(k.body, top, sink_guards(loop)))


def band(k: Kernel, vars_: tuple[str, ...]) -> tuple[tuple, list[For]]:
    """The perfect nest containing ``vars_``: (path of its top loop, the loops top-down)."""
    paths = {v: _loop(k, v)[0] for v in vars_}
    top = min(paths.values(), key=len)
    loops = [get(k.body, top)]
    depth = max(len(p) for p in paths.values()) - len(top)
    while len(loops) <= depth:
        cur = loops[-1]
        if len(cur.body) != 1 or not isinstance(cur.body[0], For):
            missing = [v for v in vars_ if v not in {lp.var for lp in loops}]
            raise Refusal(f"loops {', '.join(repr(v) for v in vars_)} are not a perfect nest: loop "
                          f"'{cur.var}' holds other statements besides loop '{missing[0]}'", loop=cur.var,
                          hint="reorder and fuse only apply to perfectly nested loops")
        loops.append(cur.body[0])
    names = [lp.var for lp in loops]
    if set(vars_) - set(names):
        raise Refusal(f"loops {', '.join(repr(v) for v in vars_)} are not nested in one another",
                      hint="pick loops of one nest, outermost first", loop=vars_[0])
    return top, loops


def reorder(k: Kernel, vars_: tuple[str, ...]) -> Kernel:
    """Permute loops of a perfect nest into the order given (outermost first).

    Legal when every dependence keeps its direction (:func:`streamdsl.ir.depend.reorder_violation`: exact
    direction vectors over the nest, split loops' ``outer * f + inner`` included); a reduction may change
    order when its sum may be reassociated (integers, ``max``/``min``; float sums inside a loop marked by
    ``reassociate``).  A quick sufficient test runs first: at most one of the loops whose relative order
    changes carries any dependence (:func:`_carries`), so no dependent pair changes order.
    """
    if len(set(vars_)) != len(vars_):
        twice = next(v for v in vars_ if vars_.count(v) > 1)
        raise Refusal(f"reorder lists loop '{twice}' twice", hint="name each loop once",
                      loop=twice if find_loop(k, twice) else None)
    k = _perfect(k, vars_)
    top, loops = band(k, vars_)
    names = [lp.var for lp in loops]
    positions = [names.index(v) for v in vars_]
    if positions == sorted(positions):
        return k
    slots = sorted(positions)
    new_order = list(loops)
    for slot, v in zip(slots, vars_):
        new_order[slot] = loops[names.index(v)]
    moved = [n for n, (a, b) in enumerate(zip(loops, new_order)) if a is not b]
    affected = loops[moved[0]:moved[-1] + 1]  # every loop whose order relative to another changes
    for lp in affected:
        for other in affected:
            if other is not lp and _uses(other, lp.var):
                raise Refusal(f"loop '{other.var}' has bounds that depend on loop '{lp.var}'", loop=other.var,
                              hint="triangular loops cannot be interchanged")
    carrying = [lp.var for lp in affected if _carries(lp, {o.var: o for o in affected if o is not lp})]
    if len(carrying) > 1:
        bad = reorder_violation(k, loops, [lp.var for lp in new_order])
        if bad is not None:
            raise _dependence_refusal("reorder", bad)
    inner_body = loops[-1].body
    rebuilt = inner_body
    for lp in reversed(new_order):
        rebuilt = (replace(lp, body=rebuilt),)
    return replace(k, body=put(k.body, top, rebuilt[0]))


def _dependence_refusal(what: str, bad) -> Refusal:
    """The refusal of a transformation that would reverse dependence ``bad`` (a :class:`Violation`)."""
    carrier = next((v for v, d in zip(bad.loops, bad.direction) if d), bad.loops[0] if bad.loops else None)
    hint = ("the float sum would change order: s.reassociate(loop) allows it (the result then differs by "
            "rounding)" if bad.float_sum else "only loops without a loop-carried dependence can move past each other")
    return Refusal(f"{what} would reverse a dependence: {bad.describe()}", hint=hint, loop=carrier)


def reassociate(k: Kernel, var: str) -> Kernel:
    """Let the float sums and products accumulated inside loop ``var`` be reassociated (attr ``reassociate``).

    Integer, fixed-point and max/min reductions may always run in another order (they are exact in any order);
    a float sum changes by rounding when it does, so ``reorder``, ``compute_at`` and ``rfactor`` keep its order
    unless the user opts in here, as Vitis keeps float operations in order without ``-unsafe_math_optimizations``.
    """
    _loop(k, var)
    return set_loop_attr(k, var, "reassociate", True)


def _carries(loop: For, moving: dict[str, For]) -> bool:
    """Whether a dependence may cross iterations of ``loop`` when the loops ``moving`` move around it.

    Conservative.  ``loop`` is dependence-free when it calls no kernel,
    allocates nothing, assigns no scalar declared outside it, and every tensor
    it stores to has a dimension that all of its accesses in ``loop`` index by
    the same affine ``c*v + h + g``: ``g`` over names fixed while the nest runs
    and ``h`` over loop variables (inner or moving loops, constant bounds)
    whose values span less than ``|c|``.  Then distinct iterations of ``v``
    touch distinct elements, whatever order the other loops run in; this
    covers split loops (``C[i_o * 4 + i_i]`` with ``i_i < 4``).
    """

    nodes = [n for s in loop.body for n in walk(s)]
    if any(isinstance(n, (CallKernel, Alloc)) for n in nodes):
        return True
    decls = {n.name for n in nodes if isinstance(n, Decl)}
    if any(isinstance(n, Assign) and n.name not in decls for n in nodes):
        return True  # a scalar that lives across iterations
    bounded = {**moving, **{n.var: n for n in nodes if isinstance(n, For)}}
    varying = set(bounded) | decls | {loop.var}
    accesses: dict[str, list] = {}
    for n in nodes:
        if isinstance(n, (Load, Store)):
            accesses.setdefault(n.name, []).append(n.indices)
    stored = {n.name for n in nodes if isinstance(n, Store)}

    def separated(idxs, d) -> bool:
        forms = [affine(ix[d]) for ix in idxs]
        if any(f is None for f in forms) or any(f != forms[0] for f in forms):
            return False
        c = forms[0].get(loop.var, 0)
        span = 0
        for name, coef in forms[0].items():
            if name is None or name == loop.var or name not in varying:
                continue
            lp = bounded.get(name)
            n = trip_count(lp) if lp is not None else None
            if n is None:
                return False
            span += abs(coef) * abs(lp.step) * max(n - 1, 0)
        return c != 0 and span < abs(c)

    return any(not any(separated(accesses[name], d) for d in range(len(accesses[name][0])))
               for name in stored)


def _uses(loop: For, var: str) -> bool:
    return any(isinstance(n, Var) and n.name == var for e in (loop.start, loop.stop) for n in walk(e))


def fuse(k: Kernel, vars_: tuple[str, ...]) -> tuple[Kernel, str]:
    """Fuse adjacent loops of a perfect nest into one loop over their product."""
    if len(vars_) < 2:
        raise Refusal("fuse needs at least two loops", hint="s.fuse(i, j)",
                      loop=vars_[0] if vars_ and find_loop(k, vars_[0]) else None)
    k = _perfect(k, vars_)
    top, loops = band(k, vars_)
    names = [lp.var for lp in loops]
    pos = [names.index(v) for v in vars_]
    if pos != list(range(pos[0], pos[0] + len(pos))):
        raise Refusal("fuse needs adjacent loops, listed outermost first", loop=vars_[0],
                      hint=f"the nest is {' > '.join(names)}")
    chosen = loops[pos[0]:pos[-1] + 1]
    trips = []
    for lp in chosen:
        _const_bounds(lp, "fuse")
        trips.append(trip_count(lp))
    taken = all_names(k)
    name = fresh(taken, "_".join(vars_))
    f = Var(name, index)
    body = chosen[-1].body
    stride = 1
    for lp, n in reversed(list(zip(chosen, trips))):
        it = B.binop("mod", B.binop("floordiv", f, B.const(stride, index)), B.const(n, index)) if stride > 1 \
            else B.binop("mod", f, B.const(n, index))
        if lp is chosen[0]:
            it = B.binop("floordiv", f, B.const(stride, index)) if stride > 1 else f
        value = it if (lp.start.value == 0 and lp.step == 1) else B.binop(
            "add", B.const(lp.start.value, index), B.binop("mul", it, B.const(lp.step, index)))
        body = tuple(substitute(s, lp.var, value) for s in body)
        stride *= n
    total = stride
    fused = For(name, B.const(0, index), B.const(total, index), 1, body, chosen[-1].attrs, chosen[0].loc)
    rebuilt = (fused,)
    for lp in reversed(loops[:pos[0]]):
        rebuilt = (replace(lp, body=rebuilt),)
    if pos[0] == 0:
        return replace(k, body=put(k.body, top, fused)), name
    return replace(k, body=put(k.body, top, rebuilt[0])), name


def set_loop_attr(k: Kernel, var: str, key: str, value) -> Kernel:
    path, loop = _loop(k, var)
    return replace(k, body=put(k.body, path, replace(loop, attrs=loop.attrs.set(key, value))))


def pipeline(k: Kernel, var: str, ii: int = 1) -> Kernel:
    if not isinstance(ii, int) or isinstance(ii, bool) or ii < 1:
        raise Refusal(f"pipeline II must be a positive integer, got {ii!r}", hint="s.pipeline(j, ii=1)",
                      loop=var if find_loop(k, var) else None)
    _path, loop = _loop(k, var)
    if loop.attrs.get("unroll") == 0:
        raise Refusal(f"loop '{var}' is fully unrolled; it has no iterations left to pipeline", loop=var,
                      hint="pipeline the loop around it instead")
    return set_loop_attr(k, var, "pipeline", ii)


def unroll(k: Kernel, var: str, factor: int | None = None) -> Kernel:
    """Mark a loop for unrolling: ``factor=None`` unrolls fully (attr ``unroll=0``)."""
    _path, loop = _loop(k, var)
    n = trip_count(loop)
    if factor is None:
        if n is None:
            raise Refusal(f"loop '{var}' has a variable trip count and cannot be fully unrolled", loop=var,
                          hint="give a factor: s.unroll(loop, 4)")
        if "pipeline" in loop.attrs:
            raise Refusal(f"loop '{var}' is pipelined; a fully unrolled loop cannot be", loop=var,
                          hint="unroll a loop inside the pipelined one")
        return set_loop_attr(k, var, "unroll", 0)
    if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
        raise Refusal(f"unroll factor must be a positive integer or None, got {factor!r}", loop=var,
                      hint="s.unroll(loop, 4), or s.unroll(loop) to unroll fully")
    if n is not None and factor > n:
        raise Refusal(f"unroll factor {factor} exceeds the {n} iterations of loop '{var}'", loop=var,
                      hint="use factor=None to unroll fully")
    return set_loop_attr(k, var, "unroll", factor)


def bind_op(k: Kernel, var: str, op: str = "mul", impl: str = "dsp") -> Kernel:
    """``#pragma HLS bind_op`` on every operator of one class inside loop ``var``:

    * ``op="mul"``, ``impl="dsp" | "fabric"``: integer multiplies of two values.  Vitis puts a multiply as
      narrow as int8 x int4 in LUTs on its own; bound to a DSP48E2 (27 x 18) it takes one, and the add of its
      product into an accumulation goes in the DSP's post-adder.
    * ``op="fadd"`` (adds and subtracts) or ``"fmul"``, ``impl="fabric" | "fulldsp"``: float operators in
      LUTs only, or in Vitis's default DSP implementation (an fp32 add takes 2 DSPs, a multiply 3).
    """
    if op not in BIND_IMPL:
        raise Refusal(f"bind_op binds op='mul' (integer multiplies), 'fadd' or 'fmul' (float adds and multiplies), "
                      f"got op={op!r}", hint="s.bind_op(loop, 'mul', 'dsp') or s.bind_op(loop, 'fadd', 'fabric')")
    if impl not in BIND_IMPL[op]:
        raise Refusal(f"impl must be one of {', '.join(BIND_IMPL[op])}, got {impl!r}",
                      hint=f"s.bind_op(loop, {op!r}, {BIND_IMPL[op][0]!r})")
    _path, loop = _loop(k, var)
    if not any(bind_class(n) == op for s in loop.body for n in walk(s)):
        raise Refusal(f"loop '{var}' has no {BIND_WHAT[op]} to bind", loop=var,
                      hint="a multiply by a constant is shifts and adds; bind the loop that holds the product"
                      if op == "mul" else "bind the loop that holds the float operators")
    return set_loop_attr(k, var, "bind_" + op, impl)


STORAGE = ("bram", "uram", "lutram", "reg")
KINDS = ("cyclic", "block", "complete")


def _buffer(k: Kernel, name: str):
    for p in k.params:
        if p.name == name:
            return p
    for n in (n for s in k.body for n in walk(s)):
        if isinstance(n, Alloc) and n.name == name:
            return n
    raise Refusal(f"kernel '{k.name}' has no buffer '{name}'",
                  hint="buffers are tensor parameters and local tensors")


def _update_buffer(k: Kernel, name: str, key: str, value) -> Kernel:
    buf = _buffer(k, name)
    if not isinstance(buf.type, TensorType):
        raise Refusal(f"'{name}' is a scalar, not a buffer")
    if isinstance(buf, Alloc):

        return map_allocs(k, name, lambda a: replace(a, attrs=a.attrs.set(key, value)))
    table = dict(k.attrs.get(key, ()))
    table[name] = value
    return replace(k, attrs=k.attrs.set(key, tuple(sorted(table.items()))))


def partition(k: Kernel, name: str, dim: int = 0, kind: str = "cyclic", factor: int | None = None) -> Kernel:
    """``#pragma HLS array_partition``; ``dim=0`` partitions every dimension."""
    buf = _buffer(k, name)
    shape = buf.type.shape if hasattr(buf.type, "shape") else ()
    if kind not in KINDS:
        raise Refusal(f"partition kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not isinstance(dim, int) or not 0 <= dim <= len(shape):
        raise Refusal(f"'{name}' has {len(shape)} dimension(s); dim must be 0 (all) or 1..{len(shape)}, got {dim!r}",
                      hint="dimensions count from 1, as in Vitis HLS")
    if kind == "complete":
        if factor is not None:
            raise Refusal("a complete partition takes no factor", hint="drop factor=...")
        factor = 0
    else:
        if not isinstance(factor, int) or isinstance(factor, bool) or factor < 2:
            raise Refusal(f"{kind} partition needs an integer factor >= 2, got {factor!r}")
        extents = shape if dim == 0 else (shape[dim - 1],)
        for e in extents:
            if factor > e:
                raise Refusal(f"partition factor {factor} exceeds dimension size {e} of '{name}'")
    return _update_buffer(k, name, "partition", tuple(sorted(((dim, kind, factor),) + tuple(
        p for p in _current(k, name, "partition") if p[0] != dim and dim != 0 and p[0] != 0))))
    # one entry per dim, by dim; dim=0 (every dim) replaces and is replaced by per-dim entries


def _current(k: Kernel, name: str, key: str):
    buf = _buffer(k, name)
    if isinstance(buf, Alloc):
        return buf.attrs.get(key, ())
    return dict(k.attrs.get(key, ())).get(name, ())


INTERFACES = ("m_axi", "ap_memory")


def interface(k: Kernel, mode: str = "ap_memory") -> Kernel:
    """``#pragma HLS interface`` for the top function's array ports: ``m_axi`` (the default, AXI masters onto
    card memory) or ``ap_memory`` (RAM ports: address, enable, data, as a kernel inside a larger design or the
    published PolyBench-style reports have them); scalars stay ``s_axilite`` / ``ap_none`` accordingly.

    Before: ``kernel k(A: i32[20]) -> (i32[20])``; after ``interface(k, "ap_memory")``:
    ``kernel k(A: i32[20]) -> (i32[20]) [interface=ap_memory]``."""
    if mode not in INTERFACES:
        raise Refusal(f"interface mode must be one of {', '.join(INTERFACES)}, got {mode!r}")
    return replace(k, attrs=k.attrs.set("interface", mode))


def bind(k: Kernel, name: str, storage: str) -> Kernel:
    """``#pragma HLS bind_storage``: put a buffer in BRAM, URAM, LUTRAM or registers."""
    if storage not in STORAGE:
        raise Refusal(f"storage must be one of {', '.join(STORAGE)}, got {storage!r}")
    buf = _buffer(k, name)
    if not isinstance(buf, Alloc):
        raise Refusal(f"'{name}' is a kernel parameter; its storage is the caller's",
                      hint="bind a local buffer instead")
    return _update_buffer(k, name, "bind", storage)


RFACTOR_OPS = ("add", "max", "min")


def rfactor(k: Kernel, var: str, factor: int, lanes: int | None = None) -> tuple[Kernel, str, str, str]:
    """Split the scalar reductions of loop ``var`` over ``factor`` partial accumulators (Halide's rfactor).

    Before::                                    After ``rfactor(k, 4)``::

        let acc: f32 = 0.0                          let acc: f32 = 0.0
        for k in range(0, 64, 1) [pipeline=1] {     alloc acc_rf: f32[4] [partition complete]
          acc = (acc + X[k])                        for k_l in range(0, 4, 1) [unroll] { acc_rf[k_l] = 0.0 }
        }                                           for k_o in range(0, 16, 1) [pipeline=1] {
                                                      for k_i in range(0, 4, 1) [unroll] {
                                                        acc_rf[k_i] = (acc_rf[k_i] + X[k_o * 4 + k_i])
                                                      }
                                                    }
                                                    for k_r in range(0, 2, 1) [pipeline=1] {
                                                      acc_rf[k_r] = (acc_rf[k_r] + acc_rf[(k_r + 2)])
                                                    }
                                                    for k_r1 in range(0, 1, 1) {
                                                      acc_rf[k_r1] = (acc_rf[k_r1] + acc_rf[(k_r1 + 1)])
                                                    }
                                                    acc = (acc + acc_rf[0])

    Each lane's recurrence spans one outer iteration, so a pipelined loop
    whose float sum held it at II 4 now retires ``factor`` elements per II.
    The lanes then combine pairwise, a level per loop (each of independent
    ops, pipelined): about ``factor + log2(factor) x`` the op's latency
    cycles, not ``factor x`` it as a running sum would take.  Sums are
    reassociated (lane by lane, then as that tree): the result differs from
    the sequential float sum by rounding; ``max`` and ``min`` are exact
    (lanes start from the accumulator itself).  Returns (kernel, outer loop,
    lane loop, first partial buffer).

    ``lanes`` (a divisor of ``factor``, default ``factor``): the lanes the
    pipeline unrolls.  With fewer lanes than partials, iteration ``k_o`` adds
    into partials ``(k_o % (factor / lanes)) * lanes + k_i``, so a partial
    comes round every ``factor / lanes`` iterations: ``lanes`` adders at II 1
    do what ``factor`` adders do at II ``factor / lanes`` (the same partials,
    the same sums in the same order), and each combine level is unrolled by up
    to ``lanes``.
    """
    if not isinstance(factor, int) or isinstance(factor, bool) or factor < 2:
        raise Refusal(f"rfactor factor must be an integer >= 2, got {factor!r}", hint="e.g. s.rfactor(k, 8)",
                      loop=var if find_loop(k, var) else None)
    lanes = factor if lanes is None else lanes
    if not isinstance(lanes, int) or isinstance(lanes, bool) or lanes < 1 or factor % lanes:
        raise Refusal(f"rfactor lanes must be a positive divisor of the factor {factor}, got {lanes!r}",
                      hint=f"e.g. s.rfactor(k, {factor}, lanes={max(1, factor // 4)})",
                      loop=var if find_loop(k, var) else None)
    path, loop = _loop(k, var)
    start, _stop = _const_bounds(loop, "rfactor")
    n = trip_count(loop)
    # inside a pipelined loop every loop unrolls: the combine levels too, not pipelines of their own
    inside = any("pipeline" in lp.attrs for p, lp in loops_with_paths(k.body)
                 if len(p) < len(path) and path[:len(p)] == p)  # a loop around it (its path a prefix)
    if n % factor:
        raise Refusal(f"rfactor factor {factor} does not divide the {n} iterations of loop '{var}'", loop=var,
                      hint=f"choose a divisor of {n}")
    decls = {s.name: s.dtype for s in (n_ for st in k.body for n_ in walk(st)) if isinstance(s, Decl)}
    inner_stmts = [s for st in loop.body for s in walk(st) if isinstance(s, (Assign, Store, Decl, For, If))]
    accs: dict[str, str] = {}
    for s in inner_stmts:
        if isinstance(s, Assign):
            acc = accumulation(s)
            if acc is None or acc[0] not in RFACTOR_OPS or s.name not in decls:
                raise Refusal(f"loop '{var}' assigns '{s.name}' other than by a sum, max or min of itself",
                              loop=var, hint="rfactor splits loops whose scalars are only accumulated")
            if accs.setdefault(s.name, acc[0]) != acc[0]:
                raise Refusal(f"'{s.name}' is accumulated with both {accs[s.name]} and {acc[0]} in loop '{var}'",
                              loop=var)
    if not accs:
        raise Refusal(f"loop '{var}' accumulates no scalar", loop=var,
                      hint="rfactor applies to loops such as `acc += X[k]`; split or unroll other loops")
    for s in inner_stmts:  # the accumulators must not be read anywhere but in their own accumulation
        own = isinstance(s, Assign) and s.name in accs
        exprs = [s.value] if own else _stmt_exprs(s)
        for e in exprs:
            uses = [x.name for x in walk(e) if isinstance(x, Var) and x.name in accs]
            if (own and uses.count(s.name) != 1) or (not own and uses) or (own and set(uses) - {s.name}):
                raise Refusal(f"loop '{var}' reads accumulator '{(uses or [s.name])[0]}' outside its accumulation",
                              loop=var, hint="only loops whose partial results are not used inside can be split")
    permitted = any("reassociate" in lp.attrs for p, lp in loops_with_paths(k.body) if path[:len(p)] == p)
    for a, op in accs.items():
        if op == "add" and isinstance(decls[a], FloatType) and not permitted:
            raise Refusal(f"rfactor would reassociate the float sum '{a}' of loop '{var}'", loop=var,
                          hint=f"a float sum changes by rounding in another order; s.reassociate(s.loop({var!r})) "
                               "allows it")
    taken = all_names(k)
    outer = fresh(taken, f"{var}_o")
    lane = fresh(taken | {outer}, f"{var}_i")
    init_v = fresh(taken | {outer, lane}, f"{var}_l")
    comb_v = fresh(taken | {outer, lane, init_v}, f"{var}_r")
    used = taken | {outer, lane, init_v, comb_v}
    rf = {}
    for a in accs:
        rf[a] = fresh(used, f"{a}_rf")
        used.add(rf[a])
    vo, vl = Var(outer, index), Var(lane, index)
    flat = B.binop("add", B.binop("mul", vo, B.const(lanes, index)), vl)
    rounds = factor // lanes  # iterations after which a partial comes round
    slot = vl if rounds == 1 else B.binop(
        "add", B.binop("mul", B.binop("mod", vo, B.const(rounds, index)), B.const(lanes, index)), vl)
    value = flat if (start == 0 and loop.step == 1) else B.binop(
        "add", B.const(start, index), B.binop("mul", flat, B.const(loop.step, index)))
    body = tuple(substitute(s, var, value) for s in loop.body)

    def to_lane(idx):
        def fn(s):
            if isinstance(s, Assign) and s.name in accs:
                v = map_stmt_exprs(s, lambda e: Load(rf[s.name], (idx,), decls[s.name], e.loc)
                                   if isinstance(e, Var) and e.name == s.name else None).value
                return Store(rf[s.name], (idx,), v, s.loc)
            return None
        return fn

    body = map_stmts(body, to_lane(slot))
    lane_loop = For(lane, B.const(0, index), B.const(lanes, index), 1, body, Attrs({"unroll": 0}), loop.loc)
    outer_loop = For(outer, B.const(0, index), B.const(n // lanes, index), 1, (lane_loop,), loop.attrs, loop.loc)
    before, after = [], []
    vi = Var(init_v, index)
    for a, op in accs.items():
        t = decls[a]
        before.append(Alloc(rf[a], TensorType(t, (factor,)), None, Attrs({"partition": ((0, "complete", 0),)}),
                            loop.loc))
        before.append(For(init_v, B.const(0, index), B.const(factor, index), 1,
                          (Store(rf[a], (vi,), B.const(0, t) if op == "add" else Var(a, t), loop.loc),),
                          Attrs({"unroll": 0}), loop.loc))
        m = factor
        while m > 1:  # pairwise: lane t takes lane t + (m - h); log2(factor) levels of independent ops
            h = m // 2
            lv = fresh(used, comb_v)
            used.add(lv)
            f = max(d for d in range(1, min(h, lanes) + 1) if h % d == 0) if lanes < factor else 1
            if f > 1:  # a level's ops side by side, up to one per lane: f unrolled inside a pipeline of h / f
                li = fresh(used, comb_v)
                used.add(li)
                vt = B.binop("add", B.binop("mul", Var(lv, index), B.const(f, index)), Var(li, index))
            else:
                vt = Var(lv, index)
            pair = (Load(rf[a], (vt,), t, loop.loc),
                    Load(rf[a], (B.binop("add", vt, B.const(m - h, index)),), t, loop.loc))
            both = B.binop("add", *pair) if op == "add" else B.call(op, pair)
            level = (Store(rf[a], (vt,), both, loop.loc),)
            if f > 1:
                level = (For(li, B.const(0, index), B.const(f, index), 1, level, Attrs({"unroll": 0}), loop.loc),)
            after.append(For(lv, B.const(0, index), B.const(h // f, index), 1, level,
                             Attrs({"unroll": 0}) if inside else Attrs({"pipeline": 1}) if h // f > 1 else Attrs(),
                             loop.loc))
            m -= h
        part = Load(rf[a], (B.const(0, index),), t, loop.loc)
        comb = B.binop("add", Var(a, t), part) if op == "add" else B.call(op, (Var(a, t), part))
        after.append(Assign(a, comb, loop.loc))
    new = tuple(before) + (outer_loop,) + tuple(after)
    return unique_loop_vars(replace(k, body=put(k.body, path, new))), outer, lane, rf[next(iter(accs))]


def _stmt_exprs(s):
    """The expressions a statement evaluates itself (not those of nested statements)."""
    if isinstance(s, (Assign, Store)):
        return [s.value] + list(getattr(s, "indices", ()))
    if isinstance(s, Decl):
        return [s.init]
    if isinstance(s, For):
        return [s.start, s.stop]
    if isinstance(s, If):
        return [s.cond]
    return []


def inline(k: Kernel, callee: str) -> Kernel:
    """Replace every ``outs = callee(args)`` by the callee's body (TVM's compute_inline for kernel calls).

    Array parameters become the caller's arrays, scalar parameters the
    argument expressions; the callee's locals and loops get fresh names,
    and the arrays it returns take the names of the call's outputs.  The
    inlined loops can then be scheduled like the caller's own.
    """
    names = {c.name for c in k.callees}
    if callee not in names:
        raise Refusal(f"kernel '{k.name}' calls no kernel '{callee}'",
                      hint="calls: " + (", ".join(sorted(names)) or "none"))
    c = k.callee(callee)
    ret = c.body[-1] if c.body else None
    if not isinstance(ret, Return) or any(isinstance(n, Return) for s in c.body[:-1] for n in walk(s)):
        raise Refusal(f"'{callee}' does not end in its only return", hint="inline kernels that return at the end")
    local_arrays = {s.name for s in (n for st in c.body for n in walk(st)) if isinstance(s, Alloc)}
    for v in ret.values:
        if not (isinstance(v, Ref) and v.name in local_arrays):
            raise Refusal(f"'{callee}' returns {print_expr(v)}, not an array of its own",
                          hint="only kernels returning their local arrays can be inlined")
    if any(isinstance(n, CallKernel) for s in c.body for n in walk(s)):
        raise Refusal(f"'{callee}' calls other kernels; inline those into it first")
    count = [0]

    def expand(s):
        if not (isinstance(s, CallKernel) and s.callee == callee):
            return None
        count[0] += 1
        taken = all_names(k) | used
        mapping: dict[str, str] = {}
        for v, out in zip(ret.values, s.outs):
            mapping[v.name] = out
        scalars: dict[str, object] = {}
        for p, a in zip(c.params, s.args):
            if isinstance(p.type, TensorType):
                mapping[p.name] = a.name
            else:
                scalars[p.name] = a
        for n in (n for st in c.body for n in walk(st)):
            nm = n.var if isinstance(n, For) else n.name if isinstance(n, (Decl, Alloc)) else None
            if nm is not None and nm not in mapping:
                mapping[nm] = fresh(taken, nm)
                taken.add(mapping[nm])
        used.update(mapping.values())

        def ren_e(e):
            if isinstance(e, Var) and e.name in scalars:
                return scalars[e.name]
            if isinstance(e, (Var, Load, Ref)) and e.name in mapping:
                return replace(e, name=mapping[e.name])
            return None

        def ren_s(st):
            if isinstance(st, For):  # map_stmts has renamed the nested statements already
                st = replace(st, start=map_expr(st.start, ren_e), stop=map_expr(st.stop, ren_e))
            elif isinstance(st, If):
                st = replace(st, cond=map_expr(st.cond, ren_e))
            else:
                st = map_stmt_exprs(st, ren_e)
            if isinstance(st, For):
                return replace(st, var=mapping.get(st.var, st.var))
            if isinstance(st, (Decl, Alloc, Assign, Store)) and st.name in mapping:
                return replace(st, name=mapping[st.name])
            return st

        return tuple(map_stmts(c.body[:-1], ren_s))

    used: set[str] = set()
    body = _splice(k.body, expand)
    calls_left = any(isinstance(n, CallKernel) and n.callee == callee for s in body for n in walk(s))
    callees = tuple(x for x in k.callees if x.name != callee or calls_left)
    return unique_loop_vars(replace(k, body=body, callees=callees))


def _splice(body, fn):
    """``body`` with each statement that ``fn`` maps to a tuple replaced by those statements, at any depth."""
    out = []
    for s in body:
        if isinstance(s, For):
            s = replace(s, body=_splice(s.body, fn))
        elif isinstance(s, If):
            s = replace(s, then=_splice(s.then, fn), orelse=_splice(s.orelse, fn))
        r = fn(s)
        out.extend(r if r is not None else (s,))
    return tuple(out)
