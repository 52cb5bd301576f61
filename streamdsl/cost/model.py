"""A per-kernel performance and resource estimate from the scheduled IR.

These are model estimates, not Vitis HLS reports.  The model:

* An operation takes the latency in :data:`LATENCY` (cycles at 250 MHz; scaled
  by clock / 250 MHz and rounded up for other clocks).  A statement's latency is
  its critical path: loads, the op tree, then the store.
* A loop whose bounds are expressions (``range(lo, pos + 1)``) makes the most
  trips its bounds allow (:mod:`streamdsl.ir.bounds`: intervals of the loop
  variables and integer locals in scope; a bound on an unknown scalar
  argument takes the largest constant in it).
* A loop without ``pipeline`` takes ``trips * (body + 1)`` cycles (one cycle of
  loop control per iteration); ``unroll=f`` divides the trips by ``f`` when
  the body is straight-line code.  When the body holds a loop that is not
  fully unrolled (a rolled or pipelined loop), the ``f`` copies of that loop
  run one after another, so the trips are not divided: "a loop containing a
  pipelined loop is either dataflow or sequential" (UG1399, "Working with
  Nested Loops").
* A perfect nest (each loop holding only the next, constant bounds, no
  directive) around a pipelined loop is flattened into one pipeline, as
  Vitis does by default: ``(prod trips - 1) * II + depth``.  An accumulation
  the outer loops carry (``A[o] += ...`` inside ``for k: for o``) recurs
  only after the loops inside the innermost loop that does not index it come
  round, so it bounds II by latency / that distance.
* An innermost loop with no directive and more than :data:`AUTO_PIPELINE_TRIPS`
  constant trips is pipelined at II 1, as Vitis HLS does by default
  (``syn.compile.pipeline_loops`` = 64, UG1399 "Automatic Loop Pipelining"; the
  emitter never writes ``pipeline off``).
* A pipelined loop takes ``(trips - 1) * II + depth`` cycles, where loops inside
  it are fully unrolled (as Vitis does) and ``depth`` is the body's latency.
  The achieved II is the largest of the requested II, the recurrence bound of
  an accumulation into a location the loop does not index (the add latency),
  and the memory-port bound (accesses per iteration to one array bank / 2 ports; copies of an access
  along an unrolled loop its index does not use share one address: one read, or one write).
  An unrolled accumulation is a chain of adds for floats (not reassociated) and
  a balanced tree for integers (Vitis balances integer expressions).
* Resources: DSPs and LUTs per operator and dtype (:data:`COST`), times the
  number of parallel copies (unroll factors, unrolled loops inside a pipeline);
  an integer multiply by a constant (index arithmetic) is shifts and adds in LUTs, by a power of two
  wiring, and so is any integer-to-integer cast (extension or truncation);
  an integer multiply is priced at the widths of its operands before widening
  casts (``i32(int8) * i32(int4)`` is an 8 x 4 multiplier: LUTs, no DSP, as
  Vitis narrows it), or, inside a loop bound by ``bind_op`` to DSPs, one
  DSP48E2 per 27 x 18 with the add of its product in the DSP's post-adder and an add forming one
  of its operands in the pre-adder (a packed pair of int4 weights, ``w1 * 2**S + w0``: its width is
  that of its value range); a float add, subtract or multiply inside a loop bound by ``bind_op``
  ``fadd``/``fmul`` to ``fabric`` takes LUTs only (:data:`COST`, ``*_fabric``); address arithmetic is charged once per access, not per
  unrolled copy (the copies differ by constant offsets, which partitioning
  turns into bank wiring);
  local arrays take BRAM18K blocks (or URAM, or LUTs / registers when bound so),
  per partition; a partition of at most :data:`SMALL_BANK_BITS` bits is
  distributed RAM in LUTs (a 1024-way partitioned accumulator row is not a
  thousand BRAMs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..ir.bounds import Ranges
from ..ir.deps import (
    bind_class, bound_impl, carried_accumulations, is_var_mul, loop_binds, names_in, periodic_accumulations,
)
from ..ir.nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, For, If, Kernel, Load, Select, Store, UnaryOp, Var, walk,
)
from ..types import FixedType, FloatType, IntType

BOARD_BUDGET = {  # DSP, BRAM18K, URAM, LUT, FF per device (AMD data sheets DS963, DS963/U280, DS957)
    "u55c": dict(dsp=9024, bram=4032, uram=960, lut=1303680, ff=2607360),
    "u280": dict(dsp=9024, bram=4032, uram=960, lut=1303680, ff=2607360),
    "vck190": dict(dsp=1968, bram=1934, uram=463, lut=899840, ff=1799680),
}

LATENCY = {  # cycles at 250 MHz
    "f": {"add": 4, "sub": 4, "mul": 3, "add_fabric": 4, "sub_fabric": 4, "mul_fabric": 4, "div": 12, "exp": 8, "log": 10, "sqrt": 12, "rsqrt": 12, "tanh": 20,
          "erf": 20, "sin": 16, "cos": 16, "sigmoid": 22, "pow": 30, "max": 1, "min": 1, "abs": 0, "neg": 0,
          "cmp": 1, "cast": 3},
    "i": {"add": 1, "sub": 1, "mul": 2, "mul_dsp": 3, "mul_fabric": 2, "add_dsp": 0, "floordiv": 20, "mod": 20, "div": 12, "cmp": 1, "cast": 0,
          "shift": 0},
}
COST = {  # (DSP, LUT) per operator; abs and neg of a float are sign-bit wiring (no logic); "_fabric": bound to LUTs
    # only (bind_op fadd/fmul impl=fabric; AMD PG060's logic-only add and multiply are a few hundred LUTs each)
    "f32": {"abs": (0, 0), "neg": (0, 0), "add": (2, 220), "sub": (2, 220), "mul": (3, 90), "div": (0, 800), "exp": (7, 700), "log": (6, 900),
            "sqrt": (0, 500), "rsqrt": (0, 600), "tanh": (8, 1800), "erf": (8, 1800), "cast": (0, 250),
            "add_fabric": (0, 430), "sub_fabric": (0, 430), "mul_fabric": (0, 700)},
    "f64": {"abs": (0, 0), "neg": (0, 0), "add": (3, 700), "sub": (3, 700), "mul": (11, 200), "div": (0, 3200), "exp": (26, 2000),
            "add_fabric": (0, 1000), "sub_fabric": (0, 1000), "mul_fabric": (0, 2600)},
}
AUTO_PIPELINE_TRIPS = 64
BRAM_BITS = 18 * 1024
SMALL_BANK_BITS = 1024  # a bank this small is distributed RAM (LUTs), not a BRAM18K of its own
URAM_BITS = 288 * 1024


def _class(t) -> str:
    return "f" if isinstance(t, FloatType) else "i"


def op_latency(op: str, t, clock_mhz: float) -> int:
    table = LATENCY[_class(t)]
    key = "cmp" if op in ("eq", "ne", "lt", "le", "gt", "ge") else op
    base = table.get(key, 1 if _class(t) == "i" else 4)
    return math.ceil(base * clock_mhz / 250.0)


def _power_of_two(e) -> bool:
    return isinstance(e, Const) and not isinstance(e.value, bool) and float(e.value).is_integer() and \
        int(e.value) > 0 and int(e.value) & (int(e.value) - 1) == 0


def _bits(t) -> int:
    return t.bits if isinstance(t, IntType) else t.width if isinstance(t, FixedType) else 32


def op_cost(op: str, t, widths: tuple[int, int] | None = None) -> tuple[int, int]:
    """(DSP, LUT) of one operator on dtype ``t``; ``widths``: a multiply's operand widths before widening."""
    if isinstance(t, FloatType):
        table = COST.get(t.name if t.name in COST else "f32", COST["f32"])
        return table.get(op, (0, 100))
    bits = _bits(t)
    if op in ("mul_dsp", "mul_fabric"):  # bound by bind_op
        a, b = sorted(widths or (bits, bits))
        return (math.ceil(a / 18) * math.ceil(b / 27), 0) if op == "mul_dsp" else (0, a * b)
    if op == "add_dsp":  # the add of a DSP product: the DSP48's post-adder
        return (0, 0)
    if op == "mul":
        a, b = sorted(widths or (bits, bits))
        if a <= 10:
            return (0, a * b)  # a narrow multiplier in LUTs
        return (math.ceil(b / 27) * math.ceil(a / 18), 20)
    if op == "shift":  # floordiv / mod by a power of two: bit selection
        return (0, 0)
    if op in ("floordiv", "mod"):
        return (0, bits * bits)
    if op == "mul_const":
        return (0, 2 * bits)
    return (0, bits)


@dataclass
class LoopEstimate:
    var: str
    trips: int
    cycles: int
    ii: int | None = None
    depth: int | None = None
    note: str = ""


@dataclass
class KernelReport:
    """Cycles and resources of one kernel, with the model's assumptions."""

    kernel: str
    board: str
    clock_mhz: float
    cycles: int
    resources: dict[str, int]
    budget: dict[str, int]
    loops: list[LoopEstimate] = field(default_factory=list)

    @property
    def latency_us(self) -> float:
        return self.cycles / self.clock_mhz

    def __str__(self) -> str:
        out = [f"Estimate for kernel '{self.kernel}' on {self.board} at {self.clock_mhz:g} MHz "
               "(model estimates from the scheduled IR, not a Vitis report)",
               f"  latency: {self.cycles} cycles = {self.latency_us:.2f} us", "  loops:"]
        for lp in self.loops:
            extra = f", II={lp.ii}, depth={lp.depth}" if lp.ii is not None else ""
            out.append(f"    {lp.var:<12} trips={lp.trips:<6} cycles={lp.cycles}{extra}{'  ' + lp.note if lp.note else ''}")
        out.append("  resources (used / available):")
        for key in ("dsp", "bram", "uram", "lut", "ff"):
            used, avail = self.resources.get(key, 0), self.budget[key]
            out.append(f"    {key.upper():<5} {used:>9} / {avail:<9} ({100.0 * used / avail:.2f} %)")
        out.append("  assumptions: see streamdsl/backend/hls/report.py (op latencies at 250 MHz, "
                   "loop control 1 cycle/iteration, 2 ports per memory bank)")
        return "\n".join(out)


class _Model:
    def __init__(self, k: Kernel, clock: float):
        self.k, self.clock = k, clock
        self.res = dict(dsp=0, bram=0, uram=0, lut=0, ff=0)
        self.loops: list[LoopEstimate] = []
        self.bind: list[dict[str, str]] = []  # bind_op classes -> impls of the loops around (innermost last)
        self.preadd: set[int] = set()  # ids of adds that feed a DSP multiplier (its pre-adder)
        self.ranges = Ranges()  # integer scalars' intervals, for loops with expression bounds
        self.banks = {p.name: 1 for p in k.params}
        self.regs: set[str] = set()  # locals partitioned into registers (a bank an element): no port limit
        for n in (n for s in k.body for n in walk(s)):
            if isinstance(n, Alloc):
                self.banks[n.name] = alloc_banks(n)
                if _in_registers(n, self.banks[n.name]):
                    self.regs.add(n.name)
        for name, parts in k.attrs.get("partition", ()):
            self.banks[name] = _banks_of(parts, dict((p.name, p.type) for p in k.params)[name].shape)

    # latency of an expression (critical path), and its operators for resources
    def expr(self, e, ops: list) -> int:
        if isinstance(e, (Const, Var)):
            return 0
        if isinstance(e, Load):  # address arithmetic once: unrolled copies differ by constant offsets (bank wiring)
            idx: list = []
            lat = 2 + max((self.expr(i, idx) for i in e.indices), default=0)
            self._charge(idx, 1)
            return lat
        if isinstance(e, (BinOp, UnaryOp, Call)):
            kids = (e.lhs, e.rhs) if isinstance(e, BinOp) else (e.operand,) if isinstance(e, UnaryOp) else e.args
            name = e.op if not isinstance(e, Call) else e.fn
            t = kids[0].dtype
            widths = None
            if name == "mul" and _class(t) == "i" and any(_power_of_two(c) for c in kids):
                name = "shift"  # a multiply by 2**n: wiring
            elif name == "mul" and _class(t) == "i" and any(isinstance(c, Const) for c in kids):
                name = "mul_const"  # index arithmetic such as i * 48: shifts and adds in LUTs, no DSP
            elif name in ("floordiv", "mod") and _class(t) == "i" and _power_of_two(e.rhs):
                name = "shift"  # a fused loop's indices (f // 2, f % 2): wiring
            elif name == "mul" and _class(t) == "i":
                widths = (narrow_bits(kids[0]), narrow_bits(kids[1]))
                impl = bound_impl(self.bind, "mul")
                if impl:
                    name = "mul_" + impl
                if name == "mul_dsp":  # the DSP48E2's pre-adder forms one operand (a packed pair of weights)
                    pre = next((c for c in kids if isinstance(c, BinOp) and c.op in ("add", "sub")), None)
                    if pre is not None:
                        self.preadd.add(id(pre))
            elif name in ("add", "sub") and _class(t) == "i" and bound_impl(self.bind, "mul") == "dsp" and (
                    id(e) in self.preadd or any(is_var_mul(c) for c in kids)):
                name = "add_dsp"  # the pre-adder before the multiplier, or the post-adder after it
            elif bound_impl(self.bind, bind_class(e)) == "fabric" and _class(t) == "f":
                name += "_fabric"  # a float add or multiply in LUTs only
            ops.append((name, t, widths))
            return op_latency(name, t, self.clock) + max(self.expr(c, ops) for c in kids)
        if isinstance(e, Cast):
            src = e.operand.dtype
            wiring = isinstance(src, IntType) and isinstance(e.dtype, IntType) or (
                isinstance(src, (IntType, FixedType)) and isinstance(e.dtype, (IntType, FixedType))
                and _bits(e.dtype) >= _bits(src))
            if not wiring:  # sign or zero extension of an integer is wiring, and so is its truncation
                ops.append(("cast", src, None))
            return op_latency("cast", e.operand.dtype, self.clock) + self.expr(e.operand, ops)
        if isinstance(e, Select):
            return 1 + max(self.expr(x, ops) for x in (e.cond, e.then, e.orelse))
        return 0

    def _charge(self, ops: list, copies: int) -> None:
        for name, t, widths in ops:
            d, lut = op_cost(name, t, widths)
            self.res["dsp"] += d * copies
            self.res["lut"] += lut * copies
            self.res["ff"] += 2 * lut * copies

    def body(self, stmts, copies: int, unrolled: bool) -> int:
        total = 0
        for s in stmts:
            total += self.stmt(s, copies, unrolled)
        return total

    def stmt(self, s, copies: int, unrolled: bool) -> int:
        ops: list = []
        if isinstance(s, Decl):
            self.ranges.set(s.name, s.init if isinstance(s.dtype, IntType) else None)
        elif isinstance(s, Assign):
            self.ranges.set(s.name, None)  # reassigned: its interval is no longer known
        if isinstance(s, (Store, Assign, Decl)):
            lat = self.expr(s.value if not isinstance(s, Decl) else s.init, ops) + (1 if isinstance(s, Store) else 0)
            self._charge(ops, copies)
            return lat
        if isinstance(s, If):
            lat = 1 + self.expr(s.cond, ops)
            return lat + max(self.body(s.then, copies, unrolled), self.body(s.orelse, copies, unrolled))
        if isinstance(s, Alloc):
            self.alloc(s)
            return 0 if s.init is None else math.ceil(s.type.size / max(1, self.banks[s.name]))
        if isinstance(s, CallKernel):
            sub = _Model(self.k.callee(s.callee), self.clock)
            cyc = sub.body(sub.k.body, copies, unrolled)
            for key in self.res:
                self.res[key] += sub.res[key]
            return cyc
        if isinstance(s, For):
            return self.loop(s, copies, unrolled)
        return 0

    def loop(self, s: For, copies: int, unrolled: bool) -> int:
        binds = loop_binds(s.attrs)
        bound = bool(binds)
        if bound:
            self.bind.append(binds)
        try:
            return self._loop(s, copies, unrolled)
        finally:
            if bound:
                self.bind.pop()

    def _loop(self, s: For, copies: int, unrolled: bool) -> int:
        trips = _trips(s, self.ranges)
        self.ranges.loop(s.var, s.start, s.stop)
        if unrolled or s.attrs.get("unroll") == 0:
            lat = self.body(s.body, copies * trips, True)
            return lat + _tree_depth(s, trips, self.clock)
        auto = "pipeline" not in s.attrs and _is_pipelined(s)
        chain = self._perfect_chain(s)
        if chain is not None:
            return self._flattened(chain, copies)
        if "pipeline" in s.attrs or auto:
            ii_req = int(s.attrs.get("pipeline", 1))
            depth = self.body(s.body, copies, True)
            ii_rec = _recurrence(s, self.clock)
            ii_mem = self._port_ii(s)
            ii = max(ii_req, ii_rec, ii_mem)
            cycles = (trips - 1) * ii + depth + 1
            note = ["auto-pipelined (Vitis default for > 64 trips)"] if auto else []
            if ii != ii_req:
                note.append(f"II {ii} > {ii_req}: " + ("accumulation recurrence" if ii == ii_rec else "memory ports"))
            self.loops.append(LoopEstimate(s.var, trips, cycles, ii, depth, "; ".join(note)))
            return cycles
        f = s.attrs.get("unroll") or 1
        body = self.body(s.body, copies * f, False)
        if f > 1 and _holds_loop(s):  # copies of a rolled or pipelined loop run one after another (UG1399)
            cycles = trips * (body + 1)
            note = f"unrolled x{f}: the copies run one after another (each holds a loop that is not unrolled)"
        else:
            cycles = math.ceil(trips / f) * (body + 1)
            note = f"unrolled x{f}" if f > 1 else ""
        self.loops.append(LoopEstimate(s.var, trips, cycles, note=note))
        return cycles

    def _perfect_chain(self, s: For) -> list[For] | None:
        """``s`` and the loops down to a pipelined one when they form a perfect nest Vitis flattens: each holds
        only the next, constant bounds, no directive but the innermost's pipeline."""
        chain = [s]
        while True:
            lp = chain[-1]
            if lp is not s and _is_pipelined(lp):
                return chain
            if ("pipeline" in lp.attrs or "unroll" in lp.attrs or not isinstance(lp.start, Const)
                    or not isinstance(lp.stop, Const) or len(lp.body) != 1 or not isinstance(lp.body[0], For)):
                return None
            chain.append(lp.body[0])

    def _flattened(self, chain: list[For], copies: int) -> int:
        """One pipeline over the iterations of a perfect nest: ``(prod trips - 1) x II + depth``; an accumulation
        the outer loops carry recurs only after the loops inside them come round (its distance)."""
        for lp in chain[1:-1]:
            self.ranges.loop(lp.var, lp.start, lp.stop)
        self.loop(chain[-1], copies, False)
        inner = self.loops[-1]
        total = math.prod(_trips(lp) for lp in chain)
        ii = max(inner.ii or 1, _flat_recurrence(chain, self.clock))
        cycles = (total - 1) * ii + (inner.depth or 0) + 1
        names = " x ".join(lp.var for lp in chain)
        self.loops.append(LoopEstimate(chain[0].var, total, cycles, ii, inner.depth,
                                       f"perfect nest {names} flattened into one pipeline (Vitis default)"))
        return cycles

    def _port_ii(self, s: For) -> int:
        """Accesses per iteration to one bank / 2 ports.  The unrolled copies of an access touch as many
        addresses as the unrolled loops its index uses make (copies along a loop it does not use share an
        address: one read, merged, or one write, the last); a local declared inside makes every copy count.
        A local partitioned into registers (a bank an element) has no ports to run out of."""
        count: dict[str, int] = {}
        accesses = list(_accesses_in_loops(s.body, ()))
        deps = _local_deps(s.body)
        for n, around in accesses:
            used = _through(set().union(*map(names_in, n.indices)), deps)
            counted = [lp for lp in around if lp.var in used]
            count[n.name] = count.get(n.name, 0) + math.prod(_trips(lp) for lp in counted)
        worst = 1
        for name, c in count.items():
            if name not in self.regs:
                worst = max(worst, math.ceil(c / (2 * self.banks.get(name, 1))))
        return worst

    def alloc(self, a: Alloc) -> None:
        bits = a.type.size * (a.type.dtype.bits if hasattr(a.type.dtype, "bits") else a.type.dtype.width)
        bind = a.attrs.get("bind")
        banks = self.banks[a.name]
        if _in_registers(a, banks):
            self.res["ff"] += bits
        elif bind == "lutram" or (bind is None and bits / banks <= SMALL_BANK_BITS):
            self.res["lut"] += banks * math.ceil(bits / banks / 64)  # distributed RAM: 64 bits per LUT
        elif bind == "uram":
            self.res["uram"] += banks * math.ceil(bits / banks / URAM_BITS)
        else:
            self.res["bram"] += banks * math.ceil(bits / banks / BRAM_BITS)


def lane_cost(k: Kernel, stmts, board: str = "u55c", clock_mhz: float = 250.0) -> float:
    """The logic of one copy of ``stmts`` (inner loops unrolled), in LUTs plus DSPs at the board's LUTs per DSP:
    what one more lane of a loop with this body costs, as a share of the board."""
    m = _Model(k, clock_mhz)
    m.body(stmts, 1, True)
    b = BOARD_BUDGET[board if board in BOARD_BUDGET else "u55c"]
    return m.res["lut"] + m.res["dsp"] * b["lut"] / b["dsp"]


def _local_deps(stmts) -> dict[str, set]:
    """The variables each scalar local declared in ``stmts`` depends on (through the locals it reads); a local
    reassigned there depends on every loop of ``stmts`` (its value moves from copy to copy)."""
    deps: dict[str, set] = {}
    nodes = [n for b in stmts for n in walk(b)]
    every = {n.var for n in nodes if isinstance(n, For)}
    for n in nodes:
        if isinstance(n, Decl):
            deps[n.name] = _through(names_in(n.init), deps)
        elif isinstance(n, Assign) and n.name in deps:
            deps[n.name] = deps[n.name] | every
    return deps


def _through(names: set, deps: dict[str, set]) -> set:
    """``names`` with each local replaced by the variables it depends on (:func:`_local_deps`)."""
    return set().union(*(deps.get(v, {v}) for v in names))


def narrow_bits(e) -> int:
    """Significant bits of an integer operand: a widening cast keeps its source's width; sums and products of
    integers (a packed pair of weights ``w1 * 2**S + w0``) take the width of their value range."""
    if isinstance(e, Cast) and isinstance(e.operand.dtype, (IntType, FixedType)):
        return min(_bits(e.dtype), narrow_bits(e.operand))
    if isinstance(e, Const) and isinstance(e.value, int):
        return max(1, abs(int(e.value)).bit_length() + 1)
    r = _int_range(e)
    if r is not None:
        lo, hi = r
        return min(_bits(e.dtype), max(1, hi.bit_length(), (-lo - 1).bit_length()) + (1 if lo < 0 else 0))
    return _bits(e.dtype)


def _int_range(e) -> tuple[int, int] | None:
    """The values an integer expression of casts, constants, adds, subtracts and multiplies can take."""
    t = e.dtype
    if not isinstance(t, IntType):
        return None
    if isinstance(e, Const) and isinstance(e.value, int):
        return int(e.value), int(e.value)
    if isinstance(e, Cast) and isinstance(e.operand.dtype, IntType) and _bits(t) >= _bits(e.operand.dtype):
        return _int_range(e.operand)  # widening: the source's values
    if isinstance(e, BinOp) and e.op in ("add", "sub", "mul"):
        a, b = _int_range(e.lhs), _int_range(e.rhs)
        if a is not None and b is not None:
            if e.op == "add":
                lo, hi = a[0] + b[0], a[1] + b[1]
            elif e.op == "sub":
                lo, hi = a[0] - b[1], a[1] - b[0]
            else:
                ps = [x * y for x in a for y in b]
                lo, hi = min(ps), max(ps)
            if t.min <= lo and hi <= t.max:  # no wrap-around
                return lo, hi
    return t.min, t.max


def _trips(s: For, ranges: Ranges | None = None) -> int:
    """Iterations of loop ``s``; with expression bounds, the most it can make (:class:`~streamdsl.ir.bounds.Ranges`
    of the scalars in scope), else the largest constant in its bounds."""
    if isinstance(s.start, Const) and isinstance(s.stop, Const):
        return max(0, -(-(s.stop.value - s.start.value) // s.step))
    most = ranges.max_trips(s.start, s.stop, s.step) if ranges is not None else None
    return max(1, most if most is not None else _bound_guess(s))


def _bound_guess(s: For) -> int:
    """Trips of a loop with bounds on unknown scalars: the largest constant in its bounds."""
    consts = [n.value for e in (s.start, s.stop) for n in walk(e) if isinstance(n, Const) and isinstance(n.value, int)]
    return max(consts, default=1)


def _tree_depth(s: For, trips: int, clock: float) -> int:
    """Extra latency of an unrolled accumulation: a chain of adds for floats (not reassociated), a balanced
    tree for integers (Vitis balances integer expressions); copies that accumulate into locations of their
    own do not chain, and copies into ``T[e % p]`` make ``p`` chains side by side."""
    def steps(dtype, n: int) -> int:
        return n - 1 if isinstance(dtype, FloatType) else max(0, math.ceil(math.log2(max(1, n))))

    chains = [(n, op, trips) for n, op in carried_accumulations(s)]
    chains += [(n, op, math.ceil(trips / p)) for n, op, p in periodic_accumulations(s)]
    return max((steps(n.value.dtype, m) * op_latency(op, n.value.dtype, clock) for n, op, m in chains), default=0)


def _is_pipelined(s: For) -> bool:
    """Explicitly pipelined, or an innermost loop of more than AUTO_PIPELINE_TRIPS constant trips (auto)."""
    if "pipeline" in s.attrs:
        return True
    return ("unroll" not in s.attrs and isinstance(s.start, Const) and isinstance(s.stop, Const)
            and _trips(s) > AUTO_PIPELINE_TRIPS and not any(isinstance(n, For) for b in s.body for n in walk(b)))


def _holds_loop(s: For) -> bool:
    """Does ``s`` hold a loop that is not fully unrolled (so its unrolled copies cannot overlap)?"""
    return any(isinstance(n, For) and n.attrs.get("unroll") != 0 for b in s.body for n in walk(b))


def _flat_recurrence(chain: list[For], clock: float) -> int:
    """The II an accumulation allows in the flattened nest ``chain``: its location recurs once the loops inside
    the innermost loop that does not index it have come round, so II >= latency / that distance."""
    worst = 1
    for k, lp in enumerate(chain):
        distance = math.prod(_trips(x) for x in chain[k + 1:])
        inner = {id(n) for x in chain[k + 1:] for n, _ in carried_accumulations(x)}
        for n, op in carried_accumulations(lp):
            if id(n) not in inner:  # lp is the innermost loop carrying it
                worst = max(worst, math.ceil(op_latency(op, n.value.dtype, clock) / max(1, distance)))
    return worst


def _recurrence(s: For, clock: float) -> int:
    """Accumulations into a location the loop does not index carry a dependence of one op latency; into one
    that comes round every ``p`` iterations (``T[j % 4]``), of the latency over ``p``."""
    return max([1] + [op_latency(op, n.value.dtype, clock) for n, op in carried_accumulations(s)]
               + [math.ceil(op_latency(op, n.value.dtype, clock) / p) for n, op, p in periodic_accumulations(s)])


def _accesses_in_loops(stmts, around: tuple):
    """(Load or Store, the loops inside the pipeline around it) of every access in ``stmts``, in one pass."""
    for st in stmts:
        if isinstance(st, For):
            yield from _accesses_in_loops(st.body, around + (st,))
        elif isinstance(st, If):
            for n in walk(st.cond):
                if isinstance(n, Load):
                    yield n, around
            yield from _accesses_in_loops(st.then, around)
            yield from _accesses_in_loops(st.orelse, around)
        else:
            for n in walk(st):
                if isinstance(n, (Load, Store)):
                    yield n, around


def _in_registers(a: Alloc, banks: int) -> bool:
    """Is local ``a`` (in ``banks`` banks) a set of registers: bound so, or a bank an element?"""
    return a.attrs.get("bind") == "reg" or banks >= a.type.size


def alloc_banks(a: Alloc) -> int:
    return _banks_of(a.attrs.get("partition", ()), a.type.shape)


def _banks_of(parts, shape) -> int:
    banks = 1
    for dim, kind, factor in parts:
        dims = range(1, len(shape) + 1) if dim == 0 else (dim,)
        for d in dims:
            banks *= shape[d - 1] if kind == "complete" else factor
    return banks


def estimate(k: Kernel, board: str = "u55c", clock_mhz: float = 250.0) -> KernelReport:
    m = _Model(k, clock_mhz)
    cycles = m.body(k.body, 1, False)
    for p in k.params:
        if hasattr(p.type, "shape"):
            m.res["lut"] += 1500  # one m_axi adapter per array port
            m.res["ff"] += 2000
    return KernelReport(k.name, board, clock_mhz, cycles, m.res, BOARD_BUDGET[board], m.loops)
