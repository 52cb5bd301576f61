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
* A (semi-)perfect nest around a pipelined loop is flattened into one pipeline, as Vitis does by default:
  ``(prod trips - 1) * II + depth`` (:meth:`_Model._perfect_chain`).  An accumulation the outer loops carry
  (``A[o] += ...`` inside ``for k: for o``) recurs only after the loops inside the innermost loop that does
  not index it come round, so it bounds II by latency / that distance.
* Vitis's own pipelining, partitioning and memory dependences: :mod:`streamdsl.cost.auto` (which loops it
  pipelines, ``pipeline_loops`` = 64, which arrays it partitions) and :mod:`streamdsl.cost.memdeps`; loads
  that do not move with a pipeline are hoisted before it, repeated reads of one address merged, float cores
  and DSP multipliers shared (:meth:`_Model.finish`); the rules, with the reports they come from, are in
  docs/architecture.md and ``benchmarks/calibration.py`` checks them.
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
  Vitis narrows it) unless its product is added to a value and its operands fit the DSP slice (a
  multiply-add: one slice, :meth:`_Model._mac`), or, inside a loop bound by ``bind_op`` to DSPs, one
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
* Registers and multiplexers (the Register and Multiplexer sections of a report): a pipeline's float values
  are registered (:data:`PIPELINE_REGS`), and a RAM several pipelines drive has a multiplexer on each port
  signal (:meth:`_Model.port_muxes`, :func:`mux_lut`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..boards import Board, board as get_board, part
from .memdeps import raw_distance
from .auto import AUTO_PIPELINE_TRIPS, partitioned_dims, pipelined_loops  # noqa: F401  (AUTO_PIPELINE_TRIPS: part of this module's face)
from ..ir.bounds import Ranges
from ..ir.loops import trip_count
from ..ir.deps import (
    bind_class, bound_impl, carried_accumulations, is_var_mul, loop_binds, names_in, periodic_accumulations,
    target_of,
)
from ..ir.toplevel import top_arrays
from ..ir.nodes import (
    Alloc, Assign, BinOp, Call, CallKernel, Cast, Const, Decl, For, If, Kernel, Load, Return, Select, Store, StreamMove,
    UnaryOp, Var, walk,
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
    "f64": {"abs": (0, 0), "neg": (0, 0), "add": (3, 700), "sub": (3, 700), "mul": (8, 110), "div": (0, 3200), "exp": (26, 2000),
            "add_fabric": (0, 1000), "sub_fabric": (0, 1000), "mul_fabric": (0, 2600)},
}


MUX_LUT = 10  # LUTs of the two input multiplexers of a shared core, per operation it serves: the reports' estimate
# of a k-input multiplexer is about 5 k LUTs whatever its width (HLStrans mvt: 2 fmul + 2 fadd cores serving 32
# operations each at II 32, 1351 multiplexer LUTs in the loop)


def mux_lut(inputs: int) -> int:
    """LUTs of an ``inputs``-input multiplexer as a csynth report estimates it, whatever its width: about 4.5
    an input (the HLStrans reports' Multiplexer sections: 2 inputs 9 LUT, 3: 14, 4: 20, 5: 26, 9: 49, 17: 81,
    34: 155, 41: 181)."""
    return math.ceil(4.5 * inputs) + 1


REPLICA_PORTS = 16  # read ports of a RAM_1WNR: 64 reads at II 4 in HLStrans gemm ("limited memory ports" at II 1-3)
UNSHARED = ("abs", "neg")  # float operators that are wiring, not a core to share
FP_FF = {  # registers of a floating-point core (the HLStrans reports' instances on the xcu55c at 200 MHz); others 2 x LUT
    ("f32", "add"): 205, ("f32", "sub"): 205, ("f32", "mul"): 143,
    ("f64", "add"): 457, ("f64", "sub"): 457, ("f64", "mul"): 312,
}
PIPELINE_REGS = """Every floating-point value a pipeline loads or computes is held in a register of its width for the
stage that uses it, beside the float cores' own registers (FP_FF, the instances of a report): the Register section
of HLStrans gemm_Pipeline_lp4_lp5 holds buff_C_load_reg, empty_10_reg (the tmp1 load), mul1_reg and add1_reg, 32 FF
each; lp1_lp2 its 64 + 64 loads, 128 products and 64 sums.  An integer value gets no register of its own: the LAP
integer chains are combinational within a cycle (mul_32s_32s_32_1_1, latency 0), and the 2 FF a LUT of integer
logic (:meth:`_Model._charge`) stand for their registers.  Not modeled: the further copies of a value that lives
across more than one stage (lp1_lp2's buff_B_load_*_pp0_iter1_reg, its products' shift registers)."""
FABRIC_FLOAT = frozenset({"div", "sqrt", "cast", "eq", "ne", "lt", "le", "gt", "ge"})  # float cores Vitis builds in
# fabric only (ddiv_..._no_dsp_1, IMPL fabric), which a csynth report lists at 0 LUT and 0 FF: every ddiv, dsqrt,
# dcmp, fcmp and sitodp instance of the HLStrans reports (trisolv's ddiv_64ns_64ns_64_22_no_dsp_1_U13: 0 / 0)


def unlisted_in_csynth(op: str, t) -> bool:
    """Is a core of ``op`` on ``t`` one the csynth estimate leaves out (:data:`FABRIC_FLOAT`)?  The model still
    charges it (the LUTs are real); :attr:`KernelReport.unlisted` says how much of its estimate that is."""
    return isinstance(t, FloatType) and op in FABRIC_FLOAT


@dataclass(frozen=True)
class Family:
    """Facts of one device family that the model prices by: the DSP slice's multiplier (its two signed input
    widths) and the operator latencies that differ from :data:`LATENCY` (cycles at a reference clock)."""

    name: str
    dsp_a: int  # the wide input of the DSP multiplier (signed bits)
    dsp_b: int  # the narrow one
    latency: dict = field(default_factory=dict)  # (dtype name or class, op) -> (cycles, at MHz)


FAMILIES = {
    # DSP48E2 27 x 18 (UG579); LATENCY's table is this family's, but for a 32 x 32 integer multiply, one
    # stage at 200 MHz (mul_32s_32s_32_1_1 in the LAP reports on the xck24), and the floating-point cores of the
    # HLStrans reports on the xcu55c at 200 MHz (Vitis 2022.2): fadd/fsub 5 cycles, fmul 4, dadd/dsub and dmul 5,
    # ddiv 22, dsqrt 17 (their cores' stages, fadd_32ns_32ns_32_5_full_dsp ...; the chained uses in atax's
    # 64-add row, depth 326 = 2 + 4 + 64 x 5, and jacobi-1d's 18 = 2 + 3 x 5 + 1)
    "ultrascale+": Family("ultrascale+", 27, 18, {
        ("i", "mul"): (0, 200.0), ("f32", "add"): (5, 200.0), ("f32", "sub"): (5, 200.0), ("f32", "mul"): (4, 200.0),
        ("f64", "add"): (5, 200.0), ("f64", "sub"): (5, 200.0), ("f64", "mul"): (5, 200.0),
        ("f64", "div"): (22, 200.0), ("f64", "sqrt"): (17, 200.0)}),
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
SMALL_BANK_BITS = 2048  # a bank this small is distributed RAM (LUTs), not a BRAM18K of its own: the 64 x 32-bit
# arrays and banks of the HLStrans reports are LUTRAM (atax's buff_x, tmp1, buff_A_0..63)
URAM_WORDS = 4096  # an unpartitioned local array this deep goes to UltraRAM where the part has it (a URAM is 4K x 72):
# the 4096 x 32-bit buffers of HLStrans gemm, k2mm, syrk and mvt are one URAM each on the xcu55c
URAM_BITS = 288 * 1024


def _class(t) -> str:
    return "f" if isinstance(t, FloatType) else "i"


def op_latency(op: str, t, clock_mhz: float, fam: Family | None = None) -> int:
    """Cycles of one operator at ``clock_mhz``: :data:`LATENCY` (at 250 MHz) scaled by the clock and rounded up,
    or the family's own figure for the dtype or its class (a report's, at its clock): the stages after the first
    scale with the clock, up to the report's clock; above it, the larger of that and the table's (an operator
    a report shows combinational at 200 MHz need not be at 300)."""
    table = LATENCY[_class(t)]
    key = "cmp" if op in ("eq", "ne", "lt", "le", "gt", "ge") else op
    base = math.ceil(table.get(key, 1 if _class(t) == "i" else 4) * clock_mhz / 250.0)
    figures = (fam or FAMILIES["ultrascale+"]).latency
    own = figures.get((getattr(t, "name", None), key)) or figures.get((_class(t), key))
    if own is None:
        return base
    cycles, at = own
    scaled = cycles and 1 + math.ceil((cycles - 1) * clock_mhz / at)
    return scaled if clock_mhz <= at else max(scaled, base)


def recurrence_latency(op: str, t, clock_mhz: float, fam: Family | None = None) -> int:
    """Cycles an accumulation waits for its previous value: the operator's latency, less one for a float add or
    subtract (the sum re-enters the core as it leaves its last stage: HLStrans durbin, covariance and ludcmp
    accumulate doubles at II 4 through a 5-stage dadd whose chained uses are 5 cycles apart)."""
    lat = op_latency(op, t, clock_mhz, fam)
    return max(1, lat - 1) if _class(t) == "f" and op in ("add", "sub") else lat


def _power_of_two(e) -> bool:
    return isinstance(e, Const) and not isinstance(e.value, bool) and float(e.value).is_integer() and \
        int(e.value) > 0 and int(e.value) & (int(e.value) - 1) == 0


_LOW_BITS = {"add", "sub", "mul", "mul_const", "mul_dsp", "mul_fabric", "add_dsp", "neg", "bitand", "bitor",
             "bitxor", "invert"}  # ops whose low result bits need only the operands' low bits


def _bits(t) -> int:
    return t.bits if isinstance(t, IntType) else t.width if isinstance(t, FixedType) else 32


MOVE_DEPTH = 2  # pipeline depth of a stream's beat loop: a FIFO read (or write) and a buffer write (or read)


def move_cycles(m: StreamMove, pipelined: bool) -> int:
    """Cycles of one execution of a dataflow task's token move (the average over its executions): its tokens'
    beats in one pipelined loop, ``token_cycles`` each, plus the loop's depth; inside a pipeline, where it moves
    at most a token an iteration, its depth (its II is :func:`stream_ii`'s)."""
    if pipelined:
        return MOVE_DEPTH if any(m.counts) else 0
    total = sum(c * m.token_cycles + MOVE_DEPTH for c in m.counts if c)
    return -(-total // max(1, len(m.counts)))


def stream_ii(s: For) -> int:
    """The II a pipelined loop's token moves allow: one token's beats an iteration (1 without moves)."""
    return max((m.token_cycles for m in walk(s) if isinstance(m, StreamMove) and any(m.counts)), default=1)


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
    # LUT and FF of ``resources`` that a Vitis csynth report lists at 0 (fabric-only float cores: see
    # unlisted_in_csynth): ``resources[k] - unlisted[k]`` is the figure to set beside a report's
    unlisted: dict[str, int] = field(default_factory=dict)

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
        out.append("  assumptions: see streamdsl/cost/model.py (op latencies at 250 MHz, loop control 1 "
                   "cycle/iteration, 2 ports per memory bank, an m_axi port a value a cycle each way, a top "
                   "function's copies and fills an element a cycle)")
        return "\n".join(out)


class _Model:
    def __init__(self, k: Kernel, clock: float, fam: Family | None = None, uram: bool = True, top: bool = False):
        self.k, self.clock, self.fam, self.uram = k, clock, fam or FAMILIES["ultrascale+"], uram
        # the top function's m_axi ports: one read and one write channel each, a value a cycle on each
        self.maxi = set(top_arrays(k).ports) if top and k.attrs.get("interface", "m_axi") == "m_axi" else set()
        self.res = dict(dsp=0, bram=0, uram=0, lut=0, ff=0)
        self.unlisted = dict(lut=0, ff=0)  # of res: what a csynth report lists at 0 (unlisted_in_csynth)
        self.loops: list[LoopEstimate] = []
        self.bind: list[dict[str, str]] = []  # bind_op classes -> impls of the loops around (innermost last)
        self.preadd: set[int] = set()  # ids of adds that feed a DSP multiplier (its pre-adder)
        self.macs: set[int] = set()  # ids of multiplies a multiply-add puts in a DSP (:meth:`_mac`)
        self.storage: dict[str, tuple[str, int]] = {}  # local array -> (resource, amount) of one copy
        self.replicas: dict[str, int] = {}  # local array -> copies kept for read ports
        self.cores: list = []  # [II or None, {(op, dtype): operations}] per pipeline or statement (:meth:`finish`)
        self.pending: dict | None = None  # the floating-point operations of the pipeline being modeled
        self.ranges = Ranges()  # integer scalars' intervals, for loops with expression bounds
        self.pipe_vars: frozenset = frozenset()  # the loops of the flattened nest being modeled, outside its pipeline
        self.forced: set[int] = set()  # ids of loops pipelined as the innermost of a flattened nest
        self.scalars = {p.name for p in k.params if not hasattr(p.type, "shape")}  # read-only scalar arguments
        self.bounds: dict = {}  # loop variable -> (start, stop), outermost first: for the dependence tests
        self.auto = pipelined_loops(k.body)  # ids of the loops Vitis pipelines on its own (cost/auto.py)
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
        local = {n.name: n for b in k.body for n in walk(b) if isinstance(n, Alloc)
                 and n.name not in self.ports and not n.attrs.get("partition") and n.attrs.get("bind") is None}
        for name, dim in partitioned_dims(k.body, self.auto, local).items():
            self.banks[name] = local[name].type.shape[dim - 1]  # Vitis's own partition (cost/auto.py)
            if _in_registers(local[name], self.banks[name]):
                self.regs.add(name)

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
            if self.pending is not None and isinstance(e.dtype, FloatType) and e.name not in self.regs:
                ops.append(("reg", e.dtype, None))  # its value held for the stage that uses it (PIPELINE_REGS)
            return lat
        if isinstance(e, (BinOp, UnaryOp, Call)):
            name, t, widths = self._operator(e)
            low = demand if name in _LOW_BITS and isinstance(t, IntType) else None
            if low is not None and low < t.bits:
                t = IntType(low, t.signed)
            ops.append((name, t, widths))
            lat = op_latency(name, t, self.clock, self.fam)
            if self.pending is not None and lat > 0 and isinstance(e.dtype, FloatType):
                ops.append(("reg", e.dtype, None))  # a float core's result, registered (PIPELINE_REGS)
            return lat + max(self.expr(c, ops, low) for c in _kids(e))
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

    def _operator(self, e) -> tuple:
        """(operator, dtype, operand widths) of an arithmetic node, after the rules that make a multiply a shift,
        a constant multiply, a DSP or LUT multiply, an add the DSP's pre- or post-adder, a float op in LUTs."""
        kids = _kids(e)
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
            impl = bound_impl(self.bind, "mul") or ("dsp" if id(e) in self.macs else None)
            if impl:
                name = "mul_" + impl
            if name == "mul_dsp":  # the DSP48E2's pre-adder forms one operand (a packed pair of weights)
                pre = next((c for c in kids if isinstance(c, BinOp) and c.op in ("add", "sub")), None)
                if pre is not None:
                    self.preadd.add(id(pre))
        elif name in ("add", "sub") and _class(t) == "i" and (id(e) in self.preadd or bound_impl(
                self.bind, "mul") == "dsp" and any(is_var_mul(c) for c in kids)):
            name = "add_dsp"  # the pre-adder before the multiplier, or the post-adder after it
        elif name in ("add", "sub") and _class(t) == "i" and bound_impl(self.bind, "mul") is None and any(
                self._mac(c) for c in kids):
            name = "add_dsp"  # a multiply-add: the DSP's post-adder (see _mac)
            self.macs.update(id(c) for c in kids if self._mac(c))
        elif bound_impl(self.bind, bind_class(e)) == "fabric" and _class(t) == "f":
            name += "_fabric"  # a float add or multiply in LUTs only
        return name, t, widths

    def _control(self, trips: int, depth: int) -> None:
        """The logic of a loop that is not unrolled: its counter's register, increment, exit compare and input
        mux (about 3 LUTs and one register a bit, and a few control bits: HLStrans histogram's 14-bit ``i``,
        51 LUT and 20 FF), and a pipeline's stage-enable register a cycle of its depth."""
        bits = max(1, trips).bit_length() + 1
        self.res["lut"] += 3 * bits + 9
        self.res["ff"] += bits + 6 + depth

    def _mac(self, e) -> bool:
        """Is ``e`` an integer multiply that, added to a value, Vitis builds as one DSP slice's multiply-add
        (``mac_muladd``): operands that fit the slice's multiplier, not bound elsewhere?  The CS-577 matrixmul
        report's ``char`` products: ``res += a * b`` is mac_muladd_8s_8s_16s (1 DSP each), where the first
        product of each sum, added to the 0 it starts from, is a LUT multiplier (mul_8s_8s_16, 41 LUT); the
        Vitis-generated module lists of public FINN and hls4ml projects bind int8 x int4 and int4 x int4
        multiply-adds the same way (mac_muladd_8s_4s_12s_13_4_1, mac_muladd_4s_4s_8s_9_4_1: IMPL dsp48)."""
        if not (is_var_mul(e) and _class(e.dtype) == "i"):
            return False
        a, b = sorted((narrow_bits(e.lhs), narrow_bits(e.rhs)))
        return a <= self.fam.dsp_b and b <= self.fam.dsp_a

    def _charge(self, ops: list, copies: int) -> None:
        """Charge ``copies`` of each operator; floating-point cores and DSP multipliers are pooled (:meth:`finish`)."""
        cores: dict = self.pending if self.pending is not None else {}
        for name, t, widths in ops:
            if name == "reg":  # a pipeline register of a float value (PIPELINE_REGS)
                self.res["ff"] += _bits(t) * copies
                continue
            d, lut = op_cost(name, t, widths, self.fam)
            if _class(t) == "f" and name not in UNSHARED or name == "mul" and d:
                n, most = cores.get((name, t, widths), (0, 0))
                cores[name, t, widths] = (n + copies, max(most, copies))
                continue
            self.res["dsp"] += d * copies
            self.res["lut"] += lut * copies
            self.res["ff"] += 2 * lut * copies
        if self.pending is None and cores:
            self.cores.append([None, cores])  # a statement outside any pipeline: its own state of the FSM

    def finish(self) -> None:
        """Charge the pooled operators: floating-point cores and DSP multipliers, shared as the reports share them.

        * A pipeline at II > 1 issues a float core's operations in different cycles of its II: ``ceil(n / II)``
          cores of a kind serve ``n`` operations an iteration (HLStrans doitgen's 30 dmul and 30 dadd at II 15:
          2 + 2 cores, 22 DSP; mvt's 64 + 64 at II 32: 2 + 2; gemm's 128 fmul and 64 fadd at II 4: 32 + 16).
          An integer multiplier is not shared within a pipeline (LAP matvec's 30 multiplies at II 15: 30 x 3
          DSP48E1).
        * The loops and statements of a kernel run one after another and share operators: of each kind the
          kernel has what its widest pipelines need together (II 1, the copies of an unrolled loop: each keeps
          its own, HLStrans gesummv's two rows of 64: 1024 DSP) and the largest need of the others (fdtd-2d's
          four II-1 stencils with a few doubles each: 20 DSP, not 48; atax's row at II 64 borrows the cores of
          its II-1 row: 320; k2mm's two products at II 4: 128; LAP 2mm's two nests: 20 multipliers, not 31).
        Not modeled: HLStrans lu keeps a dsub and a dmul in each of its two pipelines (22 DSP, modeled 11)."""
        kinds = {key for _, cores in self.cores for key in cores}
        for key in kinds:
            name, t, widths = key
            wide, other, users, muxes = 0, 0, 0, 0
            for ii, cores in self.cores:
                n, most = cores.get(key, (0, 0))
                if not n:
                    continue
                need = n if _class(t) == "i" else math.ceil(n / (ii or 1))
                muxes += need * MUX_LUT * math.ceil(n / need) if n > need else 0  # one core, several operations
                if ii == 1 and most > 1:
                    wide += need
                else:
                    other, users = max(other, need), users + 1
            n = wide + other if wide else other
            d, lut = op_cost(name, t, widths, self.fam)
            self.res["dsp"] += d * n
            self.res["lut"] += lut * n + muxes + (other * MUX_LUT * users if users > 1 else 0)
            if name == "mul" and _class(t) == "i" and d > 1:  # a multiply over several slices keeps its partial
                # products in fabric registers at every stage: 2 x result bits a cycle of its latency
                ff = 2 * _bits(t) * op_latency(name, t, self.clock, self.fam) * n
            else:
                ff = FP_FF.get((getattr(t, "name", None), name), 2 * lut) * n
            self.res["ff"] += ff
            if unlisted_in_csynth(name, t):  # the cores, not their input multiplexers (the report lists those)
                self.unlisted["lut"] += lut * n
                self.unlisted["ff"] += ff
        self.cores = []

    def body(self, stmts, copies: int, unrolled: bool) -> int:
        """Cycles of ``stmts`` one after another, but for consecutive pipelines that share no memory and no
        scalar: Vitis makes each pipelined loop a function of its own (the reports' ``<top>_Pipeline_<loop>``
        instances) and schedules independent functions side by side (UG1399 "Loop Parallelism": loops in
        separate functions "can be scheduled in parallel"): HLStrans gesummv's two rows over ``buff_A`` and
        ``buff_B`` (2621 cycles, not 2972) and k3mm's first two products run together; mvt's two rows, both
        reading ``buff_A`` through its ports, do not."""
        total, side = 0, []  # side: (cycles, what it touches) of the pipelines running together
        for s in stmts:
            lat = self.stmt(s, copies, unrolled)
            touched = None if unrolled or not isinstance(s, For) or not self._outlined(s) else self._touches(s)
            if touched is not None and all(not touched & t for _, t in side):
                side.append((lat, touched))
                continue
            total += max((c for c, _ in side), default=0)
            side = [] if touched is None else [(lat, touched)]
            if touched is None:
                total += lat
        return total + max((c for c, _ in side), default=0)

    def _outlined(self, s: For) -> bool:
        """Is loop ``s`` a pipeline of its own (explicit, Vitis's, or the flattened nest it starts)?"""
        return "pipeline" in s.attrs or id(s) in self.auto or self._perfect_chain(s) is not None

    def _touches(self, s: For) -> set[str]:
        """The memories and scalars pipeline ``s`` uses: its arrays (but those it reads only at addresses that
        do not move with its pipelined loops, which it reads once into registers first) and the scalars it
        reads or writes."""
        nodes = [n for b in s.body for n in walk(b)]
        chain = self._perfect_chain(s) or [s]
        pipe = {lp.var for lp in chain}
        deps = _local_deps(s.body)
        stored = {n.name for n in nodes if isinstance(n, Store)}
        out = set(stored)
        for n in nodes:
            if isinstance(n, Load) and (n.name in stored or _through(
                    set().union(*map(names_in, n.indices)), deps) & pipe):
                out.add(n.name)
            elif isinstance(n, (Assign, Var)) and n.name not in deps and n.name not in self.scalars:
                out.add(n.name)
        return out - {n.var for n in nodes if isinstance(n, For)} - {s.var}

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
            self._charge(ops, copies)
            return lat + max(self.body(s.then, copies, unrolled), self.body(s.orelse, copies, unrolled))
        if isinstance(s, Alloc):
            self.alloc(s)
            if s.init is None:
                return 0
            if unrolled:  # inside a pipeline the fill is unrolled: its writes share the banks' ports
                return math.ceil(s.type.size / max(1, self.banks[s.name]))
            return self._fill(s)
        if isinstance(s, CallKernel):
            sub = _Model(self.k.callee(s.callee), self.clock, self.fam, self.uram)
            sub.pending = self.pending
            cyc = sub.body(sub.k.body, copies, unrolled)
            self.cores += sub.cores
            for key in self.res:
                self.res[key] += sub.res[key]
            return cyc
        if isinstance(s, For):
            return self.loop(s, copies, unrolled)
        if isinstance(s, StreamMove):
            return move_cycles(s, unrolled)
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
        self.bounds[s.var] = (s.start, s.stop)
        if unrolled or s.attrs.get("unroll") == 0:
            lat = self.body(s.body, copies * trips, True)
            return lat + _tree_depth(s, trips, self.clock, self.fam)
        auto = "pipeline" not in s.attrs and (id(s) in self.auto or id(s) in self.forced)
        chain = self._perfect_chain(s)
        if chain is not None:
            return self._flattened(chain, copies)
        if "pipeline" in s.attrs or auto:
            ii_req = int(s.attrs.get("pipeline", 1))
            pipe = self.pipe_vars | {s.var}
            outer_cores, self.pending = self.pending, {}
            depth = self.body(s.body, copies, True)
            ii_rec = _recurrence(s, self.clock, self.fam)
            ii_mem, prologue = self._port_ii(s, pipe)
            ii_carry = self._memory_ii(s, pipe, depth)
            ii_stream = stream_ii(s)
            ii = max(ii_req, ii_rec, ii_mem, ii_carry, ii_stream)
            # one region per copy of the pipeline (an unrolled loop around it runs its copies one after another)
            mine = {key: (n // copies, most // copies) for key, (n, most) in self.pending.items()}
            self.cores += [[ii, mine] for _ in range(copies)]
            self.pending = outer_cores
            cycles = (trips - 1) * ii + depth + 1 + prologue
            note = ["auto-pipelined (Vitis's pipeline_loops)"] if auto else []
            if ii != ii_req:
                why = ("accumulation recurrence" if ii == ii_rec else "memory ports" if ii == ii_mem
                       else "a stream token's beats each iteration" if ii == ii_stream
                       else "a memory location each iteration reads and writes (the iteration waits for the last)")
                note.append(f"II {ii} > {ii_req}: {why}")
            if prologue:
                note.append(f"loop-invariant loads hoisted before it ({prologue} cycles)")
            self.loops.append(LoopEstimate(s.var, trips, cycles, ii, depth, "; ".join(note), prologue))
            self._control(trips, depth)
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
        self._control(trips, 0)
        return cycles

    def _perfect_chain(self, s: For) -> list[For] | None:
        """``s`` and the loops down to a pipelined loop when Vitis flattens them into one pipeline (UG1399 "Working
        with Nested Loops"): each loop but the last holds only the next (a perfect nest) or, with constant bounds,
        the next and statements around it that hold no loop (a semi-perfect nest: they run in the first or last
        iteration of the flattened loop; HLStrans covariance's ``mean[j] = 0`` and ``mean[j] /= n`` around a
        100-trip loop); no directive but the last loop's pipeline; an inner loop's bounds may be expressions of
        variables outside the nest only (HLStrans lu's ``j`` x ``k``, ``k < i``), the outermost's of any."""
        if id(s) in self.auto:
            return None
        chain = [s]
        while True:
            lp = chain[-1]
            if lp is not s:
                if (names_in(lp.start) | names_in(lp.stop)) & {x.var for x in chain[:-1]}:
                    return None
                if "pipeline" in lp.attrs or id(lp) in self.auto:
                    return chain
            if "pipeline" in lp.attrs or "unroll" in lp.attrs:
                return None
            loops = [x for x in lp.body if isinstance(x, For)]
            others = [x for x in lp.body if not isinstance(x, For)]
            if len(loops) != 1 or any(isinstance(n, For) for x in others for n in walk(x)):
                return None
            if others and not _constant(lp):
                return None
            chain.append(loops[0])

    def _flattened(self, chain: list[For], copies: int) -> int:
        """One pipeline over the iterations of a (semi-)perfect nest: ``(prod trips - 1) x II + depth``, the
        statements around the inner loops in its depth; an accumulation the outer loops carry recurs only after
        the loops inside them come round (its distance).  Each loop's trips are its largest (a triangular nest
        counts its longest row, as the reports do)."""
        total = 1
        around = 0
        for lp in chain[:-1]:
            total *= _trips(lp, self.ranges)
            self.ranges.loop(lp.var, lp.start, lp.stop)
            around += sum(self.stmt(x, copies, False) for x in lp.body if not isinstance(x, For))
        total *= _trips(chain[-1], self.ranges)
        outer, self.pipe_vars = self.pipe_vars, self.pipe_vars | {lp.var for lp in chain[:-1]}
        self.forced.add(id(chain[-1]))
        try:
            self.loop(chain[-1], copies, False)
        finally:
            self.pipe_vars = outer
            self.forced.discard(id(chain[-1]))
        inner = self.loops[-1]
        ii = max(inner.ii or 1, _flat_recurrence(chain, self.clock, self.fam))
        for region in self.cores[len(self.cores) - copies:]:
            region[0] = ii  # the pipeline's cores are shared over the flattened loop's II
        depth = (inner.depth or 0) + around
        cycles = (total - 1) * ii + depth + 1 + inner.prologue
        for lp in chain[:-1]:
            self._control(_trips(lp, self.ranges), 0)  # each level keeps its index beside the flattened counter
        names = " x ".join(lp.var for lp in chain)
        self.loops.append(LoopEstimate(chain[0].var, total, cycles, ii, depth,
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
        * a local partitioned into registers (a bank an element) has no ports to run out of;
        * a whole local array read more than twice an iteration by the pipeline of a flattened nest is made a
          RAM_1WNR, one write and up to :data:`REPLICA_PORTS` read ports, by copies of it (HLStrans gemm, k2mm
          and syrk: ``buff_A_RAM_1WNR``, 15 URAM for 64 reads an iteration at II 4, where the unflattened rows of
          mvt keep a two-port ``buff_A`` at II 32; machsuite viterbi's ``llike`` likewise)."""
        count: dict[str, int] = {}
        written: dict[str, int] = {}
        reads: dict[str, int] = {}
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
                if not isinstance(n.dtype, FloatType):  # a float load's register is charged with it (expr)
                    self.res["ff"] += copies * _bits(n.dtype)  # the registers that keep them
                continue
            count[n.name] = count.get(n.name, 0) + copies
            if isinstance(n, Store):
                written[n.name] = written.get(n.name, 0) + copies
            if isinstance(n, Load):
                reads[n.name] = reads.get(n.name, 0) + copies
        worst = 1
        for name, c in count.items():
            if name in self.maxi:  # an AXI port: its reads on one channel, its writes on the other
                worst = max(worst, c - written.get(name, 0), written.get(name, 0))
                continue
            if name in self.regs:
                continue
            ports = 2 * self.banks.get(name, 1)
            if self.pipe_vars and self.banks.get(name, 1) == 1 and name in self.storage and reads.get(name, 0) > 2:
                ports = max(ports, min(REPLICA_PORTS, reads[name]))  # a RAM_1WNR: one copy a read port past the first
                self._replicate(name, ports - 1)
            worst = max(worst, math.ceil(c / ports))
        # the hoisted loads share the entry cycle already counted; the rest of their reads come first
        prologue = max((c - 1 if name in self.maxi else math.ceil(c / (2 * self.banks.get(name, 1))) - 1
                        for name, c in hoisted.items() if name not in self.regs), default=0)
        return worst, prologue

    def _memory_ii(self, s: For, pipe: set, depth: int) -> int:
        """The II the pipeline's dependences through memory allow.

        * A location that does not move with the pipeline, updated in place (read and written each iteration):
          one such location of an array the pipeline touches nowhere else is kept in a register (a sum, bound by
          :func:`_recurrence`); several (atax's ``y[j]`` and bicg's ``s[j]`` for every unrolled ``j``), or one
          of an array also read at other addresses (trisolv's ``x[i]`` beside ``x[j]``, lu's ``A[i][j]`` beside
          ``A[i][k]``), stay in the RAM, and each iteration waits for the one before: II = depth (LAP atax 34 =
          34, bicg 30 = 30; HLStrans trisolv 13 = 13, lu 11 at depth 13).
        * A store whose address a later iteration's load may read (:func:`~streamdsl.cost.memdeps.raw_distance`:
          an address read from memory, a constant distance along the loop, or indices the bounds do not keep
          apart) holds that load back until it is written: II >= (path from the load to the store - 2) /
          distance, the load's two cycles overlapping the previous store (HLStrans histogram's ``hist[val] += 1``:
          II 1; LAP getTanh's ``A[addr[i]]`` update: II 18; PolyBench seidel-2d's ``A[i][j-1]``: II 62)."""
        accesses = list(_accesses_in_loops(s.body, ()))
        deps = _local_deps(s.body)
        gathered = _from_memory(s.body)
        loads = [n for n, _ in accesses if isinstance(n, Load) and n.name not in self.regs]
        fixed: dict[str, int] = {}
        worst = 1
        for n, around in accesses:
            same = [x for x in loads if x.name == n.name]
            if not isinstance(n, Store) or not same:
                continue
            used = _through(set().union(*map(names_in, n.indices)), deps)
            if not used & pipe and not used & gathered:
                others = any(repr(x.indices) != repr(n.indices) for x in same)
                fixed[n.name] = fixed.get(n.name, 0) + math.prod(_trips(lp) for lp in around if lp.var in used) + others
                continue
            for x in same:
                d = raw_distance(n.indices, x.indices, s.var, self.bounds, gathered)
                if d is not None:
                    worst = max(worst, math.ceil(max(1, self._path(s.body, x, n) - 2) / d))
        if any(c > 1 for c in fixed.values()):
            worst = max(worst, depth)
        return worst

    def _path(self, stmts, load: Load, store: Store) -> int:
        """Cycles from the issue of ``load`` to the value ``store`` writes, through the locals and the conditions
        of the statements between (0 when the value does not depend on the load)."""
        env: dict[str, int] = {}

        def ex(e) -> int | None:
            if e is load:
                return 2
            if isinstance(e, Var):
                return env.get(e.name)
            if isinstance(e, Load):
                sub = [p for p in map(ex, e.indices) if p is not None]
                return 2 + max(sub) if sub else None
            if isinstance(e, (BinOp, UnaryOp, Call)):
                sub = [p for p in map(ex, _kids(e)) if p is not None]
                name, t, _ = self._operator(e)
                return op_latency(name, t, self.clock, self.fam) + max(sub) if sub else None
            if isinstance(e, Cast):
                p = ex(e.operand)
                return None if p is None else p + op_latency("cast", e.operand.dtype, self.clock, self.fam)
            if isinstance(e, Select):
                sub = [p for p in map(ex, (e.cond, e.then, e.orelse)) if p is not None]
                return 1 + max(sub) if sub else None
            return None

        def later(*ps):
            ps = [p for p in ps if p is not None]
            return max(ps) if ps else None

        found = [0]

        def run(body, ctrl):
            for st in body:
                if isinstance(st, (Decl, Assign)):
                    env[st.name] = later(ex(st.init if isinstance(st, Decl) else st.value), ctrl)
                elif st is store:
                    found[0] = later(ex(st.value), ctrl, *map(ex, st.indices)) or 0
                elif isinstance(st, If):
                    c = ex(st.cond)
                    inner = later(ctrl, None if c is None else c + 1)
                    run(st.then, inner)
                    run(st.orelse, inner)
                elif isinstance(st, For):
                    run(st.body, ctrl)

        run(stmts, None)
        return found[0]

    def _fill(self, a: Alloc) -> int:
        """An initialised array outside a pipeline: the emitted fill is a loop nest over its elements, its
        innermost pipelined at II 1 (flattened: an element a cycle)."""
        return element_loop(a.type.size)

    def alloc(self, a: Alloc) -> None:
        if a.name in self.ports:
            return
        bits = a.type.size * (a.type.dtype.bits if hasattr(a.type.dtype, "bits") else a.type.dtype.width)
        bind = a.attrs.get("bind")
        banks = self.banks[a.name]
        if _in_registers(a, banks):
            self.res["ff"] += bits
            return
        if bind == "lutram" or (bind is None and bits / banks <= SMALL_BANK_BITS):
            kind, n = "lut", banks * math.ceil(bits / banks / 64)  # distributed RAM: 64 bits per LUT
        elif bind == "uram" or (bind is None and self.uram and a.type.size // banks >= URAM_WORDS):
            kind, n = "uram", banks * math.ceil(bits / banks / URAM_BITS)
        else:
            kind, n = "bram", banks * math.ceil(bits / banks / BRAM_BITS)
        self.res[kind] += n
        self.storage[a.name] = (kind, n)

    def port_muxes(self) -> None:
        """The multiplexers in front of a RAM that several functions of the top drive.  Vitis makes each
        pipeline of the top a function of its own (:meth:`body`); a local RAM (or an ``ap_memory`` port) that
        ``k`` of them, or they and the top's own states, access takes on each signal of each of its ports a
        multiplexer of ``k + 1`` inputs (the idle value the last): address and enable on every port a reader or
        writer uses, write enable from its writers, data where two or more write.  The HLStrans tops list them
        in their Multiplexer section: mvt's ``buff_A`` (written by lprd, read by lp1 and lp3) has
        ``buff_A_address0/1`` and ``buff_A_ce0/1`` of 4 inputs and ``buff_A_we0/1`` of 2; ``buff_x1`` (lprd and
        lp1 write it, lpwr reads it) ``buff_x1_d0`` of 3; fir's ``delay_lane`` the same pattern, 114 LUT of
        its 333.  Each is priced by :func:`mux_lut`.  Not modeled: the hoisted reads of the top's own states
        (mvt's ``buff_y1_address0`` of 34 inputs) and which of a bank's two ports a function uses (both are
        counted when it makes two accesses an iteration or more)."""
        arrays = {a.name for st in self.k.body for a in walk(st) if isinstance(a, Alloc) and a.name not in self.regs}
        if self.k.attrs.get("interface") == "ap_memory":
            arrays |= {p.name for p in self.k.params if hasattr(p.type, "shape")}
        users: dict[str, list[tuple[bool, int]]] = {}  # array -> (writes?, accesses an iteration) per function

        def use(stmts, wide: bool) -> dict[str, tuple[bool, int]]:
            seen: dict[str, tuple[bool, int]] = {}
            for st in stmts:
                for n in walk(st):
                    if isinstance(n, (Load, Store)) and n.name in arrays:
                        w, c = seen.get(n.name, (False, 0))
                        seen[n.name] = (w or isinstance(n, Store), c + (2 if wide else 1))
            return seen

        def functions(stmts) -> None:
            own = []
            for st in stmts:
                if isinstance(st, For) and self._outlined(st):
                    chain = self._perfect_chain(st) or [st]
                    inner = [x for x in chain[-1].body if any(isinstance(n, For) for n in walk(x))]
                    rest = [x for x in chain[-1].body if x not in inner]
                    found = use(rest, False)
                    for name, (w, c) in use(inner, True).items():
                        w0, c0 = found.get(name, (False, 0))
                        found[name] = (w or w0, c + c0)
                    for name, u in found.items():
                        users.setdefault(name, []).append(u)
                elif isinstance(st, For):
                    functions(st.body)
                elif isinstance(st, If):
                    functions(st.then)
                    functions(st.orelse)
                else:
                    own.append(st)
            for name, u in use(own, False).items():
                users.setdefault(name, []).append(u)

        functions(self.k.body)
        for name, us in users.items():
            if len(us) < 2:
                continue
            k, writers = len(us), sum(w for w, _ in us)
            ports = 2 if any(c > 1 for _, c in us) else 1
            per_port = 2 * mux_lut(k + 1) + (mux_lut(writers + 1) if writers else 0) + (
                mux_lut(writers + 1) if writers > 1 else 0)
            self.res["lut"] += self.banks.get(name, 1) * ports * per_port

    def _replicate(self, name: str, copies: int) -> None:
        """Keep ``copies`` copies of local array ``name`` (a RAM_1WNR's read ports)."""
        kind, n = self.storage[name]
        extra = max(0, copies - self.replicas.get(name, 1))
        if extra:
            self.res[kind] += extra * n
            self.replicas[name] = copies


def lane_cost(k: Kernel, stmts, board="u55c", clock_mhz: float | None = None) -> float:
    """The logic of one copy of ``stmts`` (inner loops unrolled), in LUTs plus DSPs at the board's LUTs per DSP:
    what one more lane of a loop with this body costs, as a share of the board."""
    b = as_board(board)
    m = _Model(k, clock_mhz or b.clock_mhz, FAMILIES[b.family], b.device_total["uram"] > 0)
    m.pending = {}
    m.body(stmts, 1, True)
    m.cores.append([1, m.pending])
    m.finish()
    t = b.total
    return m.res["lut"] + m.res["dsp"] * t["lut"] / max(1, t["dsp"])


def _kids(e) -> tuple:
    return (e.lhs, e.rhs) if isinstance(e, BinOp) else (e.operand,) if isinstance(e, UnaryOp) else tuple(e.args)


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


_MEASURED: dict[int, int] = {}  # id of a For -> the trips a C-simulation counted (estimate(..., measured=))


def _trips(s: For, ranges: Ranges | None = None) -> int:
    """Iterations of loop ``s``; with expression bounds, the most it can make (:class:`~streamdsl.ir.bounds.Ranges`
    of the scalars in scope), else the largest constant in its bounds."""
    if id(s) in _MEASURED:
        return _MEASURED[id(s)]
    n = trip_count(s)
    if n is not None:
        return n
    most = ranges.max_trips(s.start, s.stop, s.step) if ranges is not None else None
    return max(1, most if most is not None else _bound_guess(s))


def _bound_guess(s: For) -> int:
    """Trips of a loop with bounds on unknown scalars: the largest constant in its bounds."""
    consts = [n.value for e in (s.start, s.stop) for n in walk(e) if isinstance(n, Const) and isinstance(n.value, int)]
    return max(consts, default=1)


def _tree_depth(s: For, trips: int, clock: float, fam: Family | None = None) -> int:
    """Extra latency of an unrolled accumulation: a chain of adds for floats (not reassociated), a balanced
    tree for integers (Vitis balances integer expressions); copies that accumulate into locations of their
    own do not chain, and copies into ``T[e % p]`` make ``p`` chains side by side."""
    def steps(dtype, n: int) -> int:
        return n - 1 if isinstance(dtype, FloatType) else max(0, math.ceil(math.log2(max(1, n))))

    chains = [(n, op, trips) for n, op in _carried(s)]
    chains += [(n, op, math.ceil(trips / p)) for n, op, p in periodic_accumulations(s)]
    return max((steps(n.value.dtype, m) * op_latency(op, n.value.dtype, clock, fam) for n, op, m in chains), default=0)


def _constant(s: For) -> bool:
    return isinstance(s.start, Const) and isinstance(s.stop, Const)


def _addresses(indices, loops) -> str:
    """The addresses an access's unrolled copies touch, as text that two accesses share when they touch the
    same ones: its index with each unrolled loop's variable written as that loop's range (two loops over the
    same range, renamed ``j`` and ``j1`` by the frontend, give the same addresses)."""
    if not loops:  # no variable to rename: the index as it is
        return repr(tuple(indices))
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


def _flat_recurrence(chain: list[For], clock: float, fam: Family) -> int:
    """The II an accumulation allows in the flattened nest ``chain``: its location recurs once the loops inside
    the innermost loop that does not index it have come round, so II >= latency / that distance."""
    worst = 1
    for k, lp in enumerate(chain):
        distance = math.prod(_trips(x) for x in chain[k + 1:])
        inner = {id(n) for x in chain[k + 1:] for n, _ in _carried(x)}
        for n, op in _carried(lp):
            if id(n) not in inner:  # lp is the innermost loop carrying it
                worst = max(worst, math.ceil(recurrence_latency(op, n.value.dtype, clock, fam) / max(1, distance)))
    return worst


def _carried(loop: For) -> list:
    """(stmt, op) of the updates ``loop`` carries from one iteration to the next: its accumulations
    (:func:`~streamdsl.ir.deps.carried_accumulations`) and the subtractions ``x = x - e`` into a location that
    does not move with it (not an accumulation to reassociate, but a recurrence all the same: HLStrans
    ludcmp's ``w -= A[i][k] * A[k][j]`` at II 4, the dsub's)."""
    out = list(carried_accumulations(loop))
    fresh = {n.name for b in loop.body for n in walk(b) if isinstance(n, (Decl, Alloc))}
    for n in (n for b in loop.body for n in walk(b)):
        if not isinstance(n, (Assign, Store)) or n.name in fresh or not (
                isinstance(n.value, BinOp) and n.value.op == "sub"):
            continue
        target = target_of(n)
        moves = any(loop.var in names_in(i) for i in getattr(n, "indices", ()))
        if target(n.value.lhs) and not moves and not any(target(x) for x in walk(n.value.rhs)):
            out.append((n, "sub"))
    return out


def _recurrence(s: For, clock: float, fam: Family) -> int:
    """Accumulations into a location the loop does not index carry a dependence of one op latency; into one
    that comes round every ``p`` iterations (``T[j % 4]``), of the latency over ``p``."""
    return max([1] + [recurrence_latency(op, n.value.dtype, clock, fam) for n, op in _carried(s)]
               + [math.ceil(recurrence_latency(op, n.value.dtype, clock, fam) / p) for n, op, p in periodic_accumulations(s)])


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


COPY_DEPTH = 3
"""Pipeline depth of the top function's element copies (a port read or write, a register, a RAM write)."""


def element_loop(n: int) -> int:
    """Cycles of an emitted loop over ``n`` elements, pipelined at II 1 and flattened (a copy or a fill)."""
    return n + COPY_DEPTH if n else 0


def top_copies(k: Kernel, counted: dict[str, int] | None = None) -> int:
    """Cycles of the top function's element copies (:mod:`streamdsl.ir.toplevel`): each a pipelined loop over
    the array at II 1, flattened (``counted``: array -> the elements a run copied, for the accounting)."""
    t = top_arrays(k)
    types = {p.name: p.type for p in k.params}
    types.update({s.name: s.type for s in (n for st in k.body for n in walk(st)) if isinstance(s, Alloc)})
    total = 0
    for name in t.copied_in + t.copied_out:
        size = types[name].size if counted is None else counted.get(name, 0)
        total += element_loop(size)
    return total


def estimate(k: Kernel, board="u55c", clock_mhz: float | None = None, measured: dict | None = None,
             top: bool = False) -> KernelReport:
    """Cycles and resources of kernel ``k`` on ``board`` (a Board, a board name, or a bare AMD part name such as
    ``"xc7k160t-fbg484-1"``) at ``clock_mhz`` (default: the board's kernel clock).  ``measured``: For node ->
    the trips a run counted, instead of the trips its bounds give (the emitted code's accounting).  ``top``:
    ``k`` is a project's top function, its arrays behind its ports (:func:`streamdsl.ir.toplevel.top_arrays`:
    an m_axi port moves a value a cycle each way, partitioned arrays are copied in and out)."""
    b = as_board(board, clock_mhz)
    clock_mhz = float(clock_mhz or b.clock_mhz)
    m = _Model(k, clock_mhz, FAMILIES[b.family], b.device_total["uram"] > 0, top)
    if top:  # the locals a partitioned parameter is copied into
        types = {p.name: p.type for p in k.params}
        for name in top_arrays(k).copied_in:
            m.alloc(Alloc(name, types[name], None))
    _MEASURED.update({id(lp): n for lp, n in (measured or {}).items()})
    try:
        cycles = m.body(k.body, 1, False) + (top_copies(k) if top and measured is None else 0)
    finally:
        _MEASURED.clear()
    m.finish()
    m.port_muxes()
    lut, ff = ADAPTER[k.attrs.get("interface", "m_axi")]
    ports = [p for p in k.params if hasattr(p.type, "shape")]
    m.res["lut"] += lut * len(ports)
    m.res["ff"] += ff * len(ports)
    return KernelReport(k.name, b.name, clock_mhz, cycles, m.res, b.total, m.loops, m.unlisted)
