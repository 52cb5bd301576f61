"""Step tables computed all steps at once equal the step-by-step definition.

``access.step_tables`` walks each top-level statement once with the loop
variable as an array of every step's value and finds the tokens a box meets
from the layout's grid.  The reference here is the definition, written out
the slow way: walk the statement once per step with scalar intervals
(:func:`access.interval`, :func:`access.loop_range`) and test every token's
tile against every step's box.  Both must give identical tables on library
kernels (as scheduled by default, unrolled, and as the explorer rewrites
them) in many layouts, and on a kernel of awkward index expressions.
"""
import itertools
import random

import numpy as np
import pytest

import streamdsl as sd
from streamdsl import f32, i32
from streamdsl.dfg.access import Step, interval, loop_range, step_body, step_tables, steps, _vinterval
from streamdsl.dfg.itensor import ITensor
from streamdsl.dfg.layout import tiled, whole
from streamdsl.dfg.lower import result_locals
from streamdsl.ir.nodes import Alloc, Assign, BinOp, CallKernel, Cast, Const, Decl, For, If, Load, Ref, \
    Select, Store, UnaryOp, Var, walk
from streamdsl.library.llm import blocks
from streamdsl.library.llm.qlayers import make_mul, make_split_heads
from streamdsl.explorer import apply_recipe
from streamdsl.types import index


# ------------------------------------------------------------------ the definition, one step at a time
class _RefBoxes:
    def __init__(self, shapes):
        self.shapes, self.reads, self.writes = shapes, {}, {}

    def touch(self, table, name, idx, env):
        shape = self.shapes.get(name)
        if shape is None:
            return
        box = [[0, n - 1] for n in shape]
        for d, i in enumerate(idx or ()):
            iv = interval(i, env)
            if iv is not None:
                box[d] = [max(0, iv[0]), min(shape[d] - 1, iv[1])]
        cur = table.get(name)
        if cur is None:
            table[name] = box
        else:
            for c, b in zip(cur, box):
                c[0], c[1] = min(c[0], b[0]), max(c[1], b[1])

    def expr(self, e, env):
        for n in walk(e):
            if isinstance(n, Load):
                self.touch(self.reads, n.name, n.indices, env)
            elif isinstance(n, Ref):
                self.touch(self.reads, n.name, None, env)

    def stmt(self, s, env):
        if isinstance(s, For):
            self.expr(s.start, env)
            self.expr(s.stop, env)
            inner = dict(env)
            r = loop_range(s, env)
            if r is None:
                inner.pop(s.var, None)
            else:
                inner[s.var] = r
            for b in s.body:
                self.stmt(b, inner)
        elif isinstance(s, Store):
            for i in s.indices:
                self.expr(i, env)
            self.expr(s.value, env)
            self.touch(self.writes, s.name, s.indices, env)
        elif isinstance(s, (Decl, Assign)):
            self.expr(s.init if isinstance(s, Decl) else s.value, env)
        elif isinstance(s, Alloc) and s.init is not None:
            self.expr(s.init, env)
            self.touch(self.writes, s.name, None, env)
        elif isinstance(s, If):
            self.expr(s.cond, env)
            for b in s.then + s.orelse:
                self.stmt(b, env)
        elif isinstance(s, CallKernel):
            for a in s.args:
                self.expr(a, env)
            for o in s.outs:
                self.touch(self.writes, o, None, env)


def _ref_boxes(k, st, shapes):
    out = []
    for s in st:
        bx = _RefBoxes(shapes)
        stmt = step_body(k)[s.stmt]
        if s.value is None:
            bx.stmt(stmt, {})
        else:
            bx.expr(stmt.start, {})
            bx.expr(stmt.stop, {})
            for b in stmt.body:
                bx.stmt(b, {stmt.var: (s.value, s.value)})
        out.append(bx)
    return out


def _meets(box, tile_lo, tile_hi):
    return all(b[0] <= h and lo <= b[1] for b, lo, h in zip(box, tile_lo, tile_hi))


def reference_tables(k, inputs, results):
    st = steps(k)
    shapes = {n: it.tensor_shape for n, it in {**inputs, **results}.items()}
    boxes = _ref_boxes(k, st, shapes)
    need, done = {}, {}
    for name, it in inputs.items():
        tiles = [(off, tuple(o + e - 1 for o, e in zip(off, it.element))) for off in it.offsets()]
        first = {}
        for p, (off, _) in enumerate(tiles):
            first.setdefault(off, p)  # a replayed tile is never needed
        last = []
        for bx in boxes:
            b = bx.reads.get(name)
            hit = [p for p, (lo, hi) in enumerate(tiles) if first[lo] == p and b is not None and _meets(b, lo, hi)]
            last.append(max(hit) + 1 if hit else 0)
        need[name] = tuple(itertools.accumulate(last, max))
    for name, it in results.items():
        tiles = [(off, tuple(o + e - 1 for o, e in zip(off, it.element))) for off in it.offsets()]
        last_write = []
        for lo, hi in tiles:
            hit = [s for s, bx in enumerate(boxes) if bx.writes.get(name) is not None and _meets(bx.writes[name], lo, hi)]
            last_write.append(max(hit) if hit else 0)
        ready = list(itertools.accumulate(last_write, max))
        done[name] = tuple(sum(1 for r in ready if r <= s) for s in range(len(st)))
    return st, need, done


# ------------------------------------------------------------------ layouts and kernels
def _layouts(t, rng: random.Random) -> list[ITensor]:
    """Whole, row tiles, column-major tiles, a random tiling and order, and one with a replayed dim."""
    out = [whole(t)]
    if t.rank >= 1:
        out.append(tiled(t, (1,) + tuple(t.shape[1:])))
    if t.rank >= 2:
        out.append(tiled(t, (t.shape[0],) + (1,) * (t.rank - 1), order=tuple(reversed(range(t.rank)))))
    divs = [[d for d in range(1, n + 1) if n % d == 0] for n in t.shape]
    order = list(range(t.rank))
    rng.shuffle(order)
    out.append(tiled(t, tuple(rng.choice(d) for d in divs), order=tuple(order)))
    base = out[-1]
    out.append(ITensor(base.dtype, base.element, (2,) + base.trips, (1,) + base.steps, tuple(m + 1 for m in base.map)))
    return out


def _kernels():
    ks = [blocks.make_rmsnorm(2, 16), blocks.make_layernorm(2, 16), blocks.make_linear(2, 16, 8),
          blocks.make_linear_w4a8(2, 16, 8), blocks.make_gelu(2, 16), blocks.make_softmax(2, 8),
          blocks.make_rope(2, 2, 8), blocks.make_attention_decode(2, 1, 8, 4), blocks.make_kv_append(1, 8, 4),
          blocks.make_residual_add(2, 8), make_mul(2, 8), make_split_heads(1, 2, 4)]
    out = []
    for kf in ks:
        out.append(kf.ir)
        out.append(blocks.default_schedule(kf, unroll=4).ir)
        for reorder, u in ((True, 1), (True, 4), (False, 8)):
            s = sd.schedule(kf)
            apply_recipe(s, reorder, u)
            out.append(s.ir)
    return out


@sd.kernel
def awkward(X: f32[8, 8], I: i32[8]) -> f32[8, 8]:
    """Triangular, reversed and sometimes-empty loops; floordiv, mod, min, max, select, a data-dependent index."""
    Y: f32[8, 8] = 0.0
    for i in range(8):
        for j in range(i + 1):
            Y[i, j] = X[i // 2, j % 4] + X[sd.min(i, 3), sd.max(j - 2, 0)]
        for j in range(7, i - 1, -1):
            Y[j, i] = X[I[j], 7 - j]
        for j in range(i - 3):
            Y[i, j + 3] = X[j, i] if i > 4 else X[i, j]
    for i in range(4, 8):
        Y[i, (i * 3) % 8] = X[i - 4, i // 3]
    return Y


def _check(k, rng):
    ins_t = {p.name: p.type for p in k.params if isinstance(p.type, sd.TensorType)}
    outs_t = dict(zip(result_locals(k), k.results))
    lay = {n: _layouts(t, rng) for n, t in {**ins_t, **outs_t}.items()}
    for trial in range(4):
        ins = {n: rng.choice(lay[n]) for n in ins_t}
        outs = {n: rng.choice(lay[n]) for n in outs_t}
        got = step_tables(k, ins, outs, merge=False)
        st, need, done = reference_tables(k, ins, outs)
        assert got.steps == tuple(st)
        assert got.need == need, (k.name, ins)
        assert got.done == done, (k.name, outs)


@pytest.mark.parametrize("n", range(len(_kernels())))
def test_tables_equal_the_step_by_step_definition(n):
    k = _kernels()[n]
    _check(k, random.Random(n))


def test_tables_of_awkward_indices():
    _check(awkward.ir, random.Random(7))
    # the replayed layout and a transposed one, every combination
    X, Y = awkward.ir.params[0].type, awkward.ir.results[0]
    for lx, ly in itertools.product(_layouts(X, random.Random(1)), _layouts(Y, random.Random(2))):
        got = step_tables(awkward.ir, {"X": lx}, {"Y": ly}, merge=False)
        st, need, done = reference_tables(awkward.ir, {"X": lx}, {"Y": ly})
        assert (got.need, got.done) == (need, done)


# ------------------------------------------------------------------ intervals, elementwise
_OPS = ["add", "sub", "mul", "floordiv", "mod", "min", "max", "lt"]


def _expr(rng: random.Random, depth: int):
    r = rng.random()
    if depth == 0 or r < 0.3:
        if rng.random() < 0.5:
            return Var(rng.choice("ijk"), index)
        return Const(rng.choice([-3, -1, 0, 1, 2, 3, 4, 7, 0.5]), index)
    if r < 0.4:
        return UnaryOp("neg", _expr(rng, depth - 1), index)
    if r < 0.45:
        return Cast(_expr(rng, depth - 1), index)
    if r < 0.55:
        return Select(Const(True, index), _expr(rng, depth - 1), _expr(rng, depth - 1), index)
    return BinOp(rng.choice(_OPS), _expr(rng, depth - 1), _expr(rng, depth - 1), index)


def test_vector_intervals_are_the_scalar_ones_at_every_step():
    rng = random.Random(0)
    n = 12
    for _ in range(3000):
        e = _expr(rng, 4)
        lo_i = np.array([rng.randint(-5, 5) for _ in range(n)])
        hi_i = lo_i + np.array([rng.randint(0, 6) for _ in range(n)])
        known_i = np.array([rng.random() < 0.8 for _ in range(n)])
        venv = {"i": (lo_i, hi_i, known_i), "j": (2, 5, True)}  # k: unknown everywhere
        got = _vinterval(e, venv)
        for s in range(n):
            env = {"j": (2, 5)} | ({"i": (int(lo_i[s]), int(hi_i[s]))} if known_i[s] else {})
            want = interval(e, env)
            if got is None or not np.broadcast_to(got[2], (n,))[s]:
                assert want is None, e
            else:
                lo, hi = (int(np.broadcast_to(x, (n,))[s]) for x in got[:2])
                assert want == (lo, hi), e


def test_steps_of_a_kernel_without_loops():
    @sd.kernel
    def copy(X: f32[4]) -> f32[4]:
        Y: f32[4] = 0.0
        Y[0] = X[3]
        return Y

    got = step_tables(copy.ir, {"X": tiled(copy.ir.params[0].type, (1,))}, {"Y": tiled(copy.ir.results[0], (1,))})
    assert got.steps == (Step(0, None), Step(1, None))
    # step 0 (the alloc) writes all of Y, step 1 reads X[3] and rewrites Y[0]: every token leaves after step 1
    assert got.need == {"X": (0, 4)} and got.done == {"Y": (0, 4)}


# ------------------------------------------------------------------ the IR walk the tables (and every pass) use
def _recursive_walk(node):
    """ir.nodes.walk's definition: pre-order, a kernel's body statements in order, children in field order."""
    from streamdsl.ir.nodes import Expr, Kernel, Stmt

    if isinstance(node, Kernel):
        for s in node.body:
            yield from _recursive_walk(s)
        return
    yield node
    for name in node.__dataclass_fields__:
        if name in ("loc", "dtype", "type", "attrs", "callees"):
            continue
        value = getattr(node, name)
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, (Expr, Stmt)):
                yield from _recursive_walk(v)


def test_walk_is_the_recursive_pre_order():
    from streamdsl.ir.nodes import children

    for k in _kernels() + [awkward.ir]:
        got, want = list(walk(k)), list(_recursive_walk(k))
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want))
        for n in got:
            assert list(walk(n)) == list(_recursive_walk(n))
            assert list(walk(n)) == [n] + [x for c in children(n) for x in walk(c)]  # children: the direct sub-nodes
