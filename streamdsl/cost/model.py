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
* Vitis's own pipelining (:func:`_is_pipelined`, ``pipeline_loops`` = :data:`AUTO_PIPELINE_TRIPS`, UG1399
  "Automatic Loop Pipelining"): an innermost loop of at least 64 constant trips, or a loop whose inner loops
  all have fewer (unrolled into its pipeline); a perfect nest of them is flattened first.  Loads that do not
  move with a pipeline are hoisted before it, repeated reads of one address merged, and a memory written at
  several fixed locations and read in the pipeline serialises its iterations (the rules, with the reports
  they come from, are in docs/architecture.md; ``benchmarks/calibration.py`` checks them).
* Device facts by family (:data:`FAMILIES`, :func:`family` of a board or part name): the DSP slice's
  multiplier and the operator latencies the family differs in; interface adapters by kind (:data:`ADAPTER`).
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

from ..boards import Board, board as get_board, part
from ..ir.bounds import Ranges
from ..ir.loops import trip_count
from ..ir.deps import (
    bind_class, bound_impl, carried_accumulations, is_var_mul, loop_binds, names_in, periodic_accumulations,
)
from ..ir.nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, For, If, Kernel, Load, Return, Select, Store, UnaryOp, Var,
    walk,
)
from ..types import FixedType, FloatType, IntType
from ..sched.rewrite import map_expr


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
AUTO_PIPELINE_TRIPS = 64  # syn.compile.pipeline_loops (UG1399 "config_compile"): loops of this many trips or more


@dataclass(frozen=True)
class Family:
    """Facts of one device family that the model prices by: the DSP slice's multiplier (its two signed input
    widths) and the operator latencies that differ from :data:`LATENCY` (cycles at a reference clock)."""

    name: str
    dsp_a: int  # the wide input of the DSP multiplier (signed bits)
    dsp_b: int  # the narrow one
    latency: dict = field(default_factory=dict)  # (class, op) -> (cycles, at MHz)


FAMILIES = {
    # DSP48E2 27 x 18 (UG579); LATENCY's table is this family's, but for a 32 x 32 integer multiply, one
    # stage at 200 MHz (mul_32s_32s_32_1_1 in the LAP reports on the xck24)
    "ultrascale+": Family("ultrascale+", 27, 18, {("i", "mul"): (0, 200.0)}),
    # DSP48E1 25 x 18 (UG479); a 32 x 32 integer multiply is 3 slices and 4 cycles at 200 MHz
    # (mul_32s_32s_32_5_1 in the LAP reports on the xc7k160t, benchmarks/calibration/published.json)
    "7series": Family("7series", 25, 18, {("i", "mul"): (4, 200.0)}),
    # DSP58 27 x 24 (AM004)
    "versal": Family("versal", 27, 24),
}


def as_board(board, clock_mhz: float | None = None) -> Board:
    """A Board, a board's name, or a bare AMD part's name (``"xc7k160t-fbg484-1"``: :func:`streamdsl.boards.part`)."""
    if isinstance(board, str) and board.lower().startswith("xc"):
        return part(board, clock_mhz or 250.0)
    return get_board(board)


def family(board) -> Family:
    """The device family of a board or an AMD part name (u55c is an xcu55c: UltraScale+)."""
    return FAMILIES[as_board(board).family]


BRAM_BITS = 18 * 1024
SMALL_BANK_BITS = 1024  # a bank this small is distributed RAM (LUTs), not a BRAM18K of its own
URAM_BITS = 288 * 1024


def _class(t) -> str:
    return "f" if isinstance(t, FloatType) else "i"


def op_latency(op: str, t, clock_mhz: float, fam: Family | None = None) -> int:
    """Cycles of one operator at ``clock_mhz``: :data:`LATENCY` (at 250 MHz) scaled by the clock and rounded up,
    or the family's own figure (a report's, at its clock) up to that clock; above it, the larger of the two
    (an operator a report shows combinational at 200 MHz need not be at 300)."""
    table = LATENCY[_class(t)]
    key = "cmp" if op in ("eq", "ne", "lt", "le", "gt", "ge") else op
    base = math.ceil(table.get(key, 1 if _class(t) == "i" else 4) * clock_mhz / 250.0)
    own = (fam or FAMILIES["ultrascale+"]).latency.get((_class(t), key))
    if own is None:
        return base
    scaled = math.ceil(own[0] * clock_mhz / own[1])
    return scaled if clock_mhz <= own[1] else max(scaled, base)


def _power_of_two(e) -> bool:
    return isinstance(e, Const) and not isinstance(e.value, bool) and float(e.value).is_integer() and \
        int(e.value) > 0 and int(e.value) & (int(e.value) - 1) == 0


_LOW_BITS = {"add", "sub", "mul", "mul_const", "mul_dsp", "mul_fabric", "add_dsp", "neg", "bitand", "bitor",
             "bitxor", "invert"}  # ops whose low result bits need only the operands' low bits


def _bits(t) -> int:
    return t.bits if isinstance(t, IntType) else t.width if isinstance(t, FixedType) else 32


def dsp_tiles(a: int, b: int, out: int, fam: Family) -> int:
    """DSP slices of an ``a`` x ``b`` bit multiply whose result keeps its low ``out`` bits: the operands cut into
    the slice's unsigned widths (its signed inputs less the sign), one slice per pair of pieces whose product
    lands below bit ``out`` (a 32 x 32 multiply into 32 bits is 3 slices on a DSP48E1 or DSP48E2, not 4)."""
    narrow, wide = fam.dsp_b - 1, fam.dsp_a - 1
    return sum(1 for i in range(0, a, narrow) for j in range(0, b, wide) if i + j < out)


def op_cost(op: str, t, widths: tuple[int, int] | None = None, fam: Family | None = None) -> tuple[int, int]:
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
        return (dsp_tiles(a, b, bits, fam or FAMILIES["ultrascale+"]), 20)
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
    prologue: int = 0  # cycles of the loads hoisted out of a pipeline, before its first iteration


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
            out.append(f"    {key.upper():<5} {used:>9} / {avail:<9} " + (f"({100.0 * used / avail:.2f} %)" if avail else "(unknown)"))
        out.append("  assumptions: see streamdsl/backend/hls/report.py (op latencies at 250 MHz, "
                   "loop control 1 cycle/iteration, 2 ports per memory bank)")
        return "\n".join(out)


class _Model:
    def __init__(self, k: Kernel, clock: float, fam: Family | None = None):
        self.k, self.clock, self.fam = k, clock, fam or FAMILIES["ultrascale+"]
        self.res = dict(dsp=0, bram=0, uram=0, lut=0, ff=0)
        self.loops: list[LoopEstimate] = []
        self.bind: list[dict[str, str]] = []  # bind_op classes -> impls of the loops around (innermost last)
        self.preadd: set[int] = set()  # ids of adds that feed a DSP multiplier (its pre-adder)
        self.ranges = Ranges()  # integer scalars' intervals, for loops with expression bounds
        self.pipe_vars: frozenset = frozenset()  # the loops of the flattened nest being modeled, outside its pipeline
        self.forced: set[int] = set()  # ids of loops pipelined as the innermost of a flattened nest
        self.banks = {p.name: 1 for p in k.params}
        self.regs: set[str] = set()  # locals partitioned into registers (a bank an element): no port limit
        # returned arrays of an ap_memory kernel are the caller's RAMs behind its ports: no storage here
        ret = k.body[-1] if k.body and isinstance(k.body[-1], Return) else None
        self.ports = {v.name for v in ret.values if hasattr(v, "name")} \
            if ret is not None and k.attrs.get("interface") == "ap_memory" else set()
        for n in (n for s in k.body for n in walk(s)):
            if isinstance(n, Alloc):
                self.banks[n.name] = alloc_banks(n)
                if _in_registers(n, self.banks[n.name]):
                    self.regs.add(n.name)
        for name, parts in k.attrs.get("partition", ()):
            self.banks[name] = _banks_of(parts, dict((p.name, p.type) for p in k.params)[name].shape)

    # latency of an expression (critical path), and its operators for resources.  ``demand``: the low bits of
    # ``e`` its user keeps (an integer result cast to a narrower type): the low bits of a sum, difference,
    # product or bitwise op depend only on the operands' low bits, so it is built that wide (as Vitis trims it)
    def expr(self, e, ops: list, demand: int | None = None) -> int:
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
            low = demand if name in _LOW_BITS and isinstance(t, IntType) else None
            if low is not None and low < t.bits:
                t = IntType(low, t.signed)
            ops.append((name, t, widths))
            return op_latency(name, t, self.clock, self.fam) + max(self.expr(c, ops, low) for c in kids)
        if isinstance(e, Cast):
            src = e.operand.dtype
            wiring = isinstance(src, IntType) and isinstance(e.dtype, IntType) or (
                isinstance(src, (IntType, FixedType)) and isinstance(e.dtype, (IntType, FixedType))
                and _bits(e.dtype) >= _bits(src))
            if not wiring:  # sign or zero extension of an integer is wiring, and so is its truncation
                ops.append(("cast", src, None))
            keep = None
            if isinstance(src, IntType) and isinstance(e.dtype, IntType):
                keep = min(e.dtype.bits, demand) if demand is not None else e.dtype.bits
            return op_latency("cast", e.operand.dtype, self.clock, self.fam) + self.expr(e.operand, ops, keep)
        if isinstance(e, Select):
            return 1 + max(self.expr(x, ops) for x in (e.cond, e.then, e.orelse))
        return 0

    def _charge(self, ops: list, copies: int) -> None:
        for name, t, widths in ops:
            d, lut = op_cost(name, t, widths, self.fam)
            self.res["dsp"] += d * copies
            self.res["lut"] += lut * copies
            if name == "mul" and d > 1 and _class(t) == "i":  # an integer multiply over several slices keeps its partial products in
                # fabric registers at every stage: 2 x result bits a cycle of its latency
                self.res["ff"] += 2 * _bits(t) * op_latency(name, t, self.clock, self.fam) * copies
            else:
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
            sub = _Model(self.k.callee(s.callee), self.clock, self.fam)
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
        auto = "pipeline" not in s.attrs and (_is_pipelined(s) or id(s) in self.forced)
        chain = self._perfect_chain(s)
        if chain is not None:
            return self._flattened(chain, copies)
        if "pipeline" in s.attrs or auto:
            ii_req = int(s.attrs.get("pipeline", 1))
            pipe = self.pipe_vars | {s.var}
            depth = self.body(s.body, copies, True)
            ii_rec = _recurrence(s, self.clock)
            ii_mem, prologue = self._port_ii(s, pipe)
            ii_carry = depth if self._memory_carried(s, pipe) else 1
            ii = max(ii_req, ii_rec, ii_mem, ii_carry)
            cycles = (trips - 1) * ii + depth + 1 + prologue
            note = ["auto-pipelined (Vitis's pipeline_loops)"] if auto else []
            if ii != ii_req:
                why = ("accumulation recurrence" if ii == ii_rec else "memory ports" if ii == ii_mem
                       else "a memory location each iteration reads and writes (the iteration waits for the last)")
                note.append(f"II {ii} > {ii_req}: {why}")
            if prologue:
                note.append(f"loop-invariant loads hoisted before it ({prologue} cycles)")
            self.loops.append(LoopEstimate(s.var, trips, cycles, ii, depth, "; ".join(note), prologue))
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
        """``s`` and the loops down to the innermost when they form a perfect nest Vitis flattens (UG1399
        "Working with Nested Loops": each loop holds only the next, no directive but the innermost's pipeline,
        only the outermost with bounds that are expressions), ending at a pipelined loop or at an innermost loop
        the flattened nest's trips make pipelined (``pipeline_loops``: at least 64 in all)."""
        chain = [s]
        while True:
            lp = chain[-1]
            if lp is not s and not _constant(lp):
                return None
            if lp is not s and _is_pipelined(lp):
                return chain
            if "pipeline" in lp.attrs or "unroll" in lp.attrs:
                return None
            if len(lp.body) == 1 and isinstance(lp.body[0], For):
                chain.append(lp.body[0])
                continue
            if lp is s or _holds_loop(lp):
                return None
            total = _trips(s, self.ranges) * math.prod(_trips(x) for x in chain[1:])
            return chain if total >= AUTO_PIPELINE_TRIPS else None

    def _flattened(self, chain: list[For], copies: int) -> int:
        """One pipeline over the iterations of a perfect nest: ``(prod trips - 1) x II + depth``; an accumulation
        the outer loops carry recurs only after the loops inside them come round (its distance).  The outermost
        loop's trips are its largest (a triangular nest counts its longest row, as the reports do)."""
        total = _trips(chain[0], self.ranges) * math.prod(_trips(lp) for lp in chain[1:])
        for lp in chain[1:-1]:
            self.ranges.loop(lp.var, lp.start, lp.stop)
        outer, self.pipe_vars = self.pipe_vars, self.pipe_vars | {lp.var for lp in chain[:-1]}
        self.forced.add(id(chain[-1]))
        try:
            self.loop(chain[-1], copies, False)
        finally:
            self.pipe_vars = outer
            self.forced.discard(id(chain[-1]))
        inner = self.loops[-1]
        ii = max(inner.ii or 1, _flat_recurrence(chain, self.clock))
        cycles = (total - 1) * ii + (inner.depth or 0) + 1 + inner.prologue
        names = " x ".join(lp.var for lp in chain)
        self.loops.append(LoopEstimate(chain[0].var, total, cycles, ii, inner.depth,
                                       f"perfect nest {names} flattened into one pipeline (Vitis default)",
                                       inner.prologue))
        return cycles

    def _port_ii(self, s: For, pipe: set) -> tuple[int, int]:
        """(II the memory ports allow, cycles of the hoisted loads).  Accesses per iteration to one bank / 2
        ports, where:

        * the unrolled copies of an access touch as many addresses as the unrolled loops its index uses make
          (copies along a loop it does not use share an address: one read, merged, or one write, the last);
          a local declared inside makes every copy count;
        * accesses of one array at the same index over the same unrolled loops are one access (Vitis merges
          repeated reads of an address in an iteration, even from two statements: atax reads ``A[i][j]`` in
          two loops over ``j`` at II 34, not port-bound);
        * a load whose index does not move with the pipelined loops, from an array the pipeline does not
          write, is hoisted before the pipeline and kept in registers (covariance reads ``data[k][i]`` once per
          row: II 16 for the 32 reads of ``data[k][j]``, and 542 - 523 cycles of a row are those loads);
        * a local partitioned into registers (a bank an element) has no ports to run out of."""
        count: dict[str, int] = {}
        seen: set = set()
        hoisted: dict[str, int] = {}
        accesses = list(_accesses_in_loops(s.body, ()))
        deps = _local_deps(s.body)
        stored = {n.name for n, _ in accesses if isinstance(n, Store)}
        moving = _assigned(s.body)  # locals reassigned inside: their value moves with the pipeline
        for n, around in accesses:
            names = set().union(*map(names_in, n.indices))
            used = _through(names, deps)
            counted = [lp for lp in around if lp.var in used]
            copies = math.prod(_trips(lp) for lp in counted)
            key = (n.name, isinstance(n, Store), _addresses(n.indices, counted))
            if key in seen:
                continue
            seen.add(key)
            if isinstance(n, Load) and n.name not in stored and not (used & pipe) and not (names & moving):
                hoisted[n.name] = hoisted.get(n.name, 0) + copies
                self.res["ff"] += copies * _bits(n.dtype)  # the registers that keep them
                continue
            count[n.name] = count.get(n.name, 0) + copies
        worst = 1
        for name, c in count.items():
            if name not in self.regs:
                worst = max(worst, math.ceil(c / (2 * self.banks.get(name, 1))))
        # the hoisted loads share the entry cycle already counted; the rest of their reads come first
        prologue = max((math.ceil(c / (2 * self.banks.get(name, 1))) - 1 for name, c in hoisted.items()
                        if name not in self.regs), default=0)
        return worst, prologue

    def _memory_carried(self, s: For, pipe: set) -> bool:
        """Does the pipeline write several locations of a memory that do not move with it and read that memory
        too?  Then each iteration reads what the one before wrote, through the RAM's two ports, and waits for
        its last write: the II is the iteration's latency (atax's ``y[j]`` and bicg's ``s[j]``, updated for
        every ``j`` in each iteration of the pipelined ``i``: II 34 = depth 34, II 30 = depth 30).  One such
        location (a sum into ``Y[0]``) is :func:`_recurrence`'s accumulation instead.  A write at an address
        read from memory (``A[addr[i]]``) may hit what the next iteration reads, so Vitis waits for it too
        (getTanh's ``A[address]`` update: II 18, depth 22)."""
        accesses = list(_accesses_in_loops(s.body, ()))
        deps = _local_deps(s.body)
        loaded = {n.name for n, _ in accesses if isinstance(n, Load)}
        gathered = _from_memory(s.body)
        fixed: dict[str, int] = {}
        for n, around in accesses:
            if not isinstance(n, Store) or n.name in self.regs or n.name not in loaded:
                continue
            names = set().union(*map(names_in, n.indices))
            if names & gathered:
                return True
            used = _through(names, deps)
            if not used & pipe:
                fixed[n.name] = fixed.get(n.name, 0) + math.prod(_trips(lp) for lp in around if lp.var in used)
        return any(c > 1 for c in fixed.values())

    def alloc(self, a: Alloc) -> None:
        if a.name in self.ports:
            return
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


def lane_cost(k: Kernel, stmts, board="u55c", clock_mhz: float | None = None) -> float:
    """The logic of one copy of ``stmts`` (inner loops unrolled), in LUTs plus DSPs at the board's LUTs per DSP:
    what one more lane of a loop with this body costs, as a share of the board."""
    b = as_board(board)
    m = _Model(k, clock_mhz or b.clock_mhz, FAMILIES[b.family])
    m.body(stmts, 1, True)
    t = b.total
    return m.res["lut"] + m.res["dsp"] * t["lut"] / max(1, t["dsp"])


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
    n = trip_count(s)
    if n is not None:
        return n
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


def _constant(s: For) -> bool:
    return isinstance(s.start, Const) and isinstance(s.stop, Const)


def _small(s: For) -> bool:
    """A loop Vitis unrolls into the pipeline of the loop around it: no directive, constant trips below
    ``pipeline_loops`` (64), and only such loops inside."""
    return ("pipeline" not in s.attrs and "unroll" not in s.attrs and _constant(s) and _trips(s) < AUTO_PIPELINE_TRIPS
            and all(_small(n) for b in s.body for n in walk(b) if isinstance(n, For) and n is not s))


def _is_pipelined(s: For) -> bool:
    """Explicitly pipelined, or pipelined by Vitis on its own (``pipeline_loops`` = 64, UG1399 "config_compile"
    and "Automatic Loop Pipelining"): an innermost loop of at least 64 constant trips; or, moving up the nest,
    a loop with no directive whose inner loops all have fewer trips (they are unrolled into its pipeline:
    matvec's rows at II 15, atax and bicg's at 34 and 30) and whose body is not just one loop (a perfect
    nest is flattened instead, :meth:`_Model._perfect_chain`).  Its own bounds may be expressions (covariance's
    ``for j in range(i, 32)``)."""
    if "pipeline" in s.attrs:
        return True
    if "unroll" in s.attrs:
        return False
    inner = [n for b in s.body for n in walk(b) if isinstance(n, For)]
    if not inner:
        return _constant(s) and _trips(s) >= AUTO_PIPELINE_TRIPS
    single = len(s.body) == 1 and isinstance(s.body[0], For)
    return not single and all(_small(n) for n in inner)


def _addresses(indices, loops) -> str:
    """The addresses an access's unrolled copies touch, as text that two accesses share when they touch the
    same ones: its index with each unrolled loop's variable written as that loop's range (two loops over the
    same range, renamed ``j`` and ``j1`` by the frontend, give the same addresses)."""
    ranges = {lp.var: f"{lp.start!r}:{lp.stop!r}:{lp.step}" for lp in loops}
    named = lambda e: Var(ranges[e.name], e.dtype) if isinstance(e, Var) and e.name in ranges else None  # noqa: E731
    return repr(tuple(map_expr(i, named) for i in indices))


def _from_memory(stmts) -> set[str]:
    """Scalar locals of ``stmts`` whose value is read from memory (directly or through other such locals):
    an address made of one is unknown to the scheduler."""
    out: set[str] = set()
    for n in (n for b in stmts for n in walk(b)):
        value = n.init if isinstance(n, Decl) else n.value if isinstance(n, Assign) else None
        if value is not None and any(isinstance(x, Load) or isinstance(x, Var) and x.name in out for x in walk(value)):
            out.add(n.name)
    return out


def _assigned(stmts) -> set[str]:
    """Scalars assigned (not declared) in ``stmts``."""
    return {n.name for b in stmts for n in walk(b) if isinstance(n, Assign)}


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


ADAPTER = {  # (LUT, FF) of one top-level array port by interface kind
    "m_axi": (1500, 2000),  # an AXI master: address channel, burst logic, read and write buffers
    "ap_memory": (0, 0),  # RAM ports: address, enable and data wires; the LAP reports list no adapter instance
}


def estimate(k: Kernel, board="u55c", clock_mhz: float | None = None) -> KernelReport:
    """Cycles and resources of kernel ``k`` on ``board`` (a Board, a board name, or a bare AMD part name such as
    ``"xc7k160t-fbg484-1"``) at ``clock_mhz`` (default: the board's kernel clock)."""
    b = as_board(board, clock_mhz)
    clock_mhz = float(clock_mhz or b.clock_mhz)
    m = _Model(k, clock_mhz, FAMILIES[b.family])
    cycles = m.body(k.body, 1, False)
    lut, ff = ADAPTER[k.attrs.get("interface", "m_axi")]
    ports = [p for p in k.params if hasattr(p.type, "shape")]
    m.res["lut"] += lut * len(ports)
    m.res["ff"] += ff * len(ports)
    return KernelReport(k.name, b.name, clock_mhz, cycles, m.res, b.total, m.loops)
