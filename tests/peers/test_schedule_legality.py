"""Schedule legality, by property: 500 random loop nests and schedules, each primitive's decision checked
against an independent dependence-vector check, and every accepted schedule against the simulator.

For each case a random perfect nest (two or three loops, small constant bounds, possibly split first, with
guarded tails) holds a few statements over three arrays with random affine subscripts: plain stores,
integer or float accumulations (``X[...] += e``), some float sums consented to (``s.reassociate``).  Or two
nests over the same bounds, the second reading what the first wrote at shifted, modulo or transposed places,
for ``compute_at`` at a random depth.

The check shares nothing with ``streamdsl.ir.depend``: it runs the nest's loops in Python over the actual
iteration space, records every statement instance with the elements it reads and writes, and for the
transformation's new order of the instances (a permutation of the band's loop values; for compute_at, the
fused order of the two nests) looks for a pair that touches one element, one of them writing, whose order
flips, except two instances of one accumulation that may be reassociated (integers; floats only where
consented).  The property: a primitive is refused exactly when such a pair exists, and when it is accepted
the simulator gives the same arrays as before (bit for bit; to rounding for consented float sums).
"""
from __future__ import annotations

import importlib.util
import itertools
import random
from dataclasses import dataclass, field

import numpy as np
import pytest

import streamdsl as sd

CASES = 500
CHUNKS = 10


# ------------------------------------------------------------------------------------------ random kernels
@dataclass
class Stmt:
    """One statement of the innermost body: ``target[idx] (=|+=) value``; subscripts as (coefficients, offset)."""

    target: str
    idx: list  # per dimension: ({loop var: coefficient}, offset)
    reads: list  # (array, idx)
    accumulate: bool


@dataclass
class Case:
    loops: list  # (var, extent)
    stmts: list
    dtype: str  # "i32" or "f32"
    consent: bool  # s.reassociate on the outermost loop
    shapes: dict = field(default_factory=dict)
    src: str = ""


ARRAYS = ("X", "Y", "Z")


def _sub(rnd, loops):
    coefs = {}
    for var, _ in loops:
        if rnd.random() < 0.6:
            coefs[var] = rnd.choice([1, 1, 1, 2, -1])
    return coefs, rnd.randint(-1, 2)


def _extent(sub, loops):
    coefs, off = sub
    lo = hi = off
    for var, n in loops:
        c = coefs.get(var, 0)
        lo += min(0, c * (n - 1))
        hi += max(0, c * (n - 1))
    return lo, hi


def draw_nest(rnd) -> Case:
    depth = rnd.choice([2, 2, 3])
    loops = [(v, rnd.randint(2, 5)) for v in "ijk"[:depth]]
    stmts = []
    for _ in range(rnd.randint(1, 3)):
        target = rnd.choice(ARRAYS[:2])
        stmts.append(Stmt(target, [_sub(rnd, loops) for _ in range(2)],
                          [(rnd.choice(ARRAYS), [_sub(rnd, loops) for _ in range(2)]) for _ in range(rnd.randint(1, 2))],
                          rnd.random() < 0.5))
    case = Case(loops, stmts, rnd.choice(["i32", "i32", "f32"]), rnd.random() < 0.3)
    # every array large enough for its subscripts, each dimension shifted to start at 0
    lows: dict = {}
    highs: dict = {}
    for st in stmts:
        for name, idx in [(st.target, st.idx)] + st.reads:
            for d, sub in enumerate(idx):
                lo, hi = _extent(sub, loops)
                lows[(name, d)] = min(lows.get((name, d), 0), lo)
                highs[(name, d)] = max(highs.get((name, d), 0), hi)
    for name in ARRAYS:
        for d in range(2):
            shift = -lows.get((name, d), 0)
            for st in stmts:
                for arr, idx in [(st.target, st.idx)] + st.reads:
                    if arr == name:
                        coefs, off = idx[d]
                        idx[d] = (coefs, off + shift)
            highs[(name, d)] = highs.get((name, d), 0) + shift
        case.shapes[name] = tuple(highs[(name, d)] + 1 for d in range(2))
    return case


def _idx_src(sub) -> str:
    coefs, off = sub
    terms = [f"{c} * {v}" if c != 1 else v for v, c in coefs.items()]
    if off or not terms:
        terms.append(str(off))
    return " + ".join(terms)


def render(case: Case) -> str:
    t = case.dtype
    params = ", ".join(f"{n}: sd.{t}[{s[0]}, {s[1]}]" for n, s in case.shapes.items())
    lines = ["import streamdsl as sd", "", "", "@sd.kernel", f"def k({params}) -> None:"]
    indent = "    "
    for var, n in case.loops:
        lines.append(f"{indent}for {var} in range({n}):")
        indent += "    "
    for st in case.stmts:
        value = " + ".join(f"{arr}[{', '.join(_idx_src(s) for s in idx)}]" for arr, idx in st.reads)
        target = f"{st.target}[{', '.join(_idx_src(s) for s in st.idx)}]"
        lines.append(f"{indent}{target} {'+=' if st.accumulate else '='} {value}{' * 2' if not st.accumulate else ''}")
    return "\n".join(lines) + "\n"


_COUNT = itertools.count()


def load(directory, src: str):
    path = directory / f"legality_{next(_COUNT)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


# ------------------------------------------------------------------------------------------ the independent check
@dataclass
class Instance:
    stmt: int
    env: dict  # the original loop variables' values
    reads: list  # (array, element) its value reads (an accumulation's own target not among them)
    write: tuple  # (array, element)
    accumulate: bool


def instances(case: Case) -> list[Instance]:
    """Every statement instance of the nest, in program order, with the elements it touches."""
    out = []
    ranges = [range(n) for _, n in case.loops]
    names = [v for v, _ in case.loops]
    for values in itertools.product(*ranges):
        env = dict(zip(names, values))
        for n, st in enumerate(case.stmts):
            el = lambda idx: tuple(sum(c * env[v] for v, c in coefs.items()) + off for coefs, off in idx)  # noqa: E731
            out.append(Instance(n, env, [(a, el(idx)) for a, idx in st.reads], (st.target, el(st.idx)), st.accumulate))
    return out


def reassociable(case: Case, a: Instance, b: Instance) -> bool:
    """Two accumulations into one element that touch each other only there: their order may change (integers,
    or consented float sums)."""
    return a.accumulate and b.accumulate and a.write == b.write and a.write not in b.reads \
        and b.write not in a.reads and (case.dtype == "i32" or case.consent)


def conflict(a: Instance, b: Instance) -> bool:
    return a.write == b.write or a.write in b.reads or b.write in a.reads


def legal_order(case: Case, key) -> bool:
    """Whether running the instances sorted by ``key`` (ties keep program order) keeps every dependence."""
    insts = instances(case)
    order = {id(x): n for n, x in enumerate(sorted(insts, key=key))}  # sorted() is stable
    for i, a in enumerate(insts):
        for b in insts[i + 1:]:
            if conflict(a, b) and not reassociable(case, a, b) and order[id(a)] > order[id(b)]:
                return False
    return True


# ------------------------------------------------------------------------------------------ the property
def _arrays(case: Case, rng):
    if case.dtype == "i32":
        return [rng.integers(-5, 6, case.shapes[n]).astype(np.int32) for n in ARRAYS]
    return [rng.standard_normal(case.shapes[n]).astype(np.float32) for n in ARRAYS]


def _run(fn, arrays):
    got = [a.copy() for a in arrays]
    fn(*got)
    return got


def _same(case: Case, before, after, reassociated: bool):
    for x, y in zip(before, after):
        if case.dtype == "f32" and reassociated:
            np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)
        else:
            np.testing.assert_array_equal(x, y)


def check_reorder(case: Case, k, rnd, rng) -> str:
    s = sd.schedule(k)
    if case.consent:
        s.reassociate(s.loop(case.loops[0][0]))
    names = [v for v, _ in case.loops]
    order = names[:]
    while order == names:
        rnd.shuffle(order)
    key = lambda x: tuple(x.env[v] for v in order)  # noqa: E731
    want_legal = legal_order(case, key)
    arrays = _arrays(case, rng)
    before = _run(k, arrays)
    try:
        s.reorder(*(s.loop(v) for v in order))
        accepted = True
    except sd.ScheduleError as err:
        accepted = False
        assert want_legal is False, f"refused a legal reorder to {order}:\n{case.src}\n{err}"
    if accepted:
        assert want_legal, f"accepted an illegal reorder to {order}:\n{case.src}\n{s}"
        _same(case, before, _run(s, arrays), case.consent)
    return "accepted" if accepted else "refused"


def check_split_reorder(case: Case, k, rnd, rng) -> str:
    """Split one loop (maybe a ragged tail) and reorder the band: the check's key uses the split values."""
    s = sd.schedule(k)
    if case.consent:
        s.reassociate(s.loop(case.loops[0][0]))
    v, n = rnd.choice(case.loops)
    f = rnd.randint(2, max(2, n))
    o, i = s.split(s.loop(v), f)
    band = []
    for var, _ in case.loops:
        band += [o.var, i.var] if var == v else [var]
    order = band[:]
    rnd.shuffle(order)

    def value(x, name):
        if name == o.var:
            return x.env[v] // f
        if name == i.var:
            return x.env[v] % f
        return x.env[name]

    want_legal = legal_order(case, lambda x: tuple(value(x, name) for name in order))
    arrays = _arrays(case, rng)
    before = _run(k, arrays)
    try:
        s.reorder(*(s.loop(name) for name in order))
        accepted = True
    except sd.ScheduleError as err:
        accepted = False
        assert want_legal is False, f"refused a legal reorder to {order} after split({v}, {f}):\n{case.src}\n{err}"
    if accepted:
        assert want_legal, f"accepted an illegal reorder to {order} after split({v}, {f}):\n{case.src}\n{s}"
        _same(case, before, _run(s, arrays), case.consent)
        s.fuse(s.loop(order[0]), s.loop(order[1]))  # fusing keeps the order: always legal
        _same(case, before, _run(s, arrays), case.consent)
    return "accepted" if accepted else "refused"


def draw_pair(rnd) -> tuple[str, dict]:
    """Two nests over the same (n, m): P[i, j] = A[i, j] * 2, then Q[ii, jj] = P[f(ii, jj)] + 1."""
    n, m = rnd.randint(2, 5), rnd.randint(2, 5)
    reads = {
        "same": "P[ii, jj]", "shift": f"P[(ii + 1) % {n}, jj]", "back": f"P[(ii + {n} - 1) % {n}, jj]",
        "col": f"P[ii, (jj + 1) % {m}]", "row": f"P[ii, {m - 1} - jj]", "corner": "P[0, 0]",
        "transposed": f"P[jj % {n}, ii % {m}]",
    }
    pick = rnd.choice(sorted(reads))
    src = ("import streamdsl as sd\n\n\n@sd.kernel\n"
           f"def k(A: sd.i32[{n}, {m}], Q: sd.i32[{n}, {m}]) -> None:\n"
           f"    P: sd.i32[{n}, {m}] = 0\n"
           f"    for i in range({n}):\n        for j in range({m}):\n            P[i, j] = A[i, j] * 2 + 1\n"
           f"    for ii in range({n}):\n        for jj in range({m}):\n            Q[ii, jj] = {reads[pick]} + Q[ii, jj]\n")
    return src, dict(n=n, m=m, read=reads[pick])


def check_compute_at(src, info, k, rnd, rng) -> str:
    """compute_at at depth 1 or 2, against the check: each consumer instance must come after every producer
    instance writing what it reads (the fused order: the producer's (i, j) body at (i) or (i, j) first)."""
    n, m = info["n"], info["m"]
    level = rnd.choice([1, 2])
    ns = {"n": n, "m": m}
    prod = [(("P", (i, j)), (i, j)) for i in range(n) for j in range(m)]
    legal = True
    for ii in range(n):
        for jj in range(m):
            read = eval(compile(info["read"].replace("P", ""), "<read>", "eval"), dict(ns, ii=ii, jj=jj))  # noqa: S307
            read = tuple(read)  # the subscript list, evaluated
            writer = next(pos for (_, el), pos in prod if el == read)
            # fused: at level 1 the producer's whole row i runs before the consumer's row i; at level 2 the
            # producer's (i, j) runs just before the consumer's (i, j)
            consumer, producer = ((ii,), writer[:1]) if level == 1 else ((ii, jj), writer)
            if producer > consumer:
                legal = False
    s = sd.schedule(k)
    arrays = [rng.integers(-5, 6, (n, m)).astype(np.int32) for _ in range(2)]
    before = _run(k, arrays)
    try:
        s.compute_at(s.loop("i" if level == 1 else "j"), s.loop("ii" if level == 1 else "jj"))
        accepted = True
    except sd.ScheduleError as err:
        accepted = False
        assert not legal, f"refused a legal compute_at at depth {level}:\n{src}\n{err}"
    if accepted:
        assert legal, f"accepted an illegal compute_at at depth {level}:\n{src}\n{s}"
        np.testing.assert_array_equal(_run(s, arrays)[1], before[1])
    return "accepted" if accepted else "refused"


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_schedules_are_refused_exactly_when_a_dependence_reverses(chunk, tmp_path):
    tally: dict = {}
    for seed in range(chunk * CASES // CHUNKS, (chunk + 1) * CASES // CHUNKS):
        rnd = random.Random(seed)
        rng = np.random.default_rng(seed)
        kind = rnd.choice(["reorder", "reorder", "split_reorder", "split_reorder", "compute_at"])
        if kind == "compute_at":
            src, info = draw_pair(rnd)
            outcome = check_compute_at(src, info, load(tmp_path, src), rnd, rng)
        else:
            case = draw_nest(rnd)
            case.src = render(case)
            k = load(tmp_path, case.src)
            outcome = (check_reorder if kind == "reorder" else check_split_reorder)(case, k, rnd, rng)
        tally[(kind, outcome)] = tally.get((kind, outcome), 0) + 1
    # both outcomes occur: the property is not vacuous
    assert sum(v for (kd, out), v in tally.items() if out == "accepted") > 0, tally
    assert sum(v for (kd, out), v in tally.items() if out == "refused") > 0, tally
