"""A scheduled dataflow graph -> Vitis HLS C++: regions, streams of bus beats, tasks, converters, burst DMAs.

What a lowered graph (:mod:`streamdsl.dfg.lower`) becomes, following its bus plan
(:mod:`streamdsl.dfg.streamplan`, the one the timing model prices):

* **top function** ``<name>(ports..., scalars...)``: each tensor a DMA touches is
  one or more ``m_axi`` ports of 512-bit words (``const sd::word *``), each on
  its own bundle: the tensor's words split over its DMA's ports (word ``w`` in
  port ``w % P``), laid out by its :class:`~streamdsl.dfg.packing.Packing`;
  an edge between two regions travels through a DRAM buffer the host allocates
  (``dram_<edge>``).  It calls the regions in order.
* **region function** with ``#pragma HLS dataflow``: its streams (FIFOs of
  ``sd::beat<T, L>``, at most 512 bits, ``P`` side by side for a stream whose
  DMA holds ``P`` ports; depth in beats) and one process per node, producers
  first.  In C-simulation the processes run on their own threads
  (``hls::sim::run_dataflow``) over bounded streams, so a design that would
  deadlock in hardware is reported as a deadlock instead of passing.
* **kernel task**: its process IR (:mod:`streamdsl.dfg.tasks`, the kernel's
  loop nest with its token moves written in) as C++: a token move is one
  pipelined loop over the tokens' beats (inside a pipelined loop, the token's
  beats unrolled in the iteration), filling or emptying the kernel's buffers.
* **converter**: two processes around a ping-pong buffer, an
  ``hls::stream_of_blocks`` of two blocks (UG1399's PIPO between dataflow
  processes, the two blocks of memory the model prices): ``_fill`` takes a
  block under an ``hls::write_lock`` and writes one block of source tokens
  into it, ``_drain`` takes the oldest filled block under an
  ``hls::read_lock`` and emits it in the destination order while the next
  block fills; each lock gives its block back at the end of the block loop's
  iteration.
* **fork**: every beat to each branch; **load/store DMA**: one word a beat per
  port, in order (a burst); a DMA whose beats are not whole words of its
  tensor's packing moves a word per value.

Every labelled loop counts its entries and trips when compiled with ``-DSD_ACCOUNT``
(``SD_ENTRY``/``SD_TRIP``): :meth:`HLSProject.accounting` prices those counts.

Where the token simulator moves several tokens in one atomic iteration, the
C code moves them one after the other: it reads first the FIFO whose first
token arrives latest and writes first to the FIFO that is read latest (in
the LP schedule), so it blocks where the simulator does.
"""
from __future__ import annotations

import math

from ...dfg.itensor import Converter, ITensor
from ...dfg.lower import Fifo, Lowered, Node, result_locals
from ...dfg.packing import Packing, elem_bits
from ...dfg.tasks import task_ir
from ...ir.nodes import CallKernel, Kernel, Return, StreamMove, Var, walk
from ...types import TensorType
from ..text import comment
from .emit import Emitter, KernelNames, ctype, declare, function, kernel_names, literal
from .names import Scope, renamed_comment
from .project import _kernels_in_order, file_scope


def cname(name: str) -> str:
    """A node, FIFO or edge name as the base of a generated identifier (``h:mm_1`` -> ``h_mm_1``)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def offset_exprs(it: ITensor, p: str) -> list[str]:
    """C expressions of the data offset of token ``p`` (stream position) in each dim."""
    p = p if p.isidentifier() or p.isdigit() else f"({p})"
    idx = []
    for level, (trips, step) in enumerate(zip(it.trips, it.steps)):
        inner = math.prod(it.trips[level + 1:])
        e = p if inner == 1 else f"{p} / {inner}"
        if level > 0:
            e = f"({e}) % {trips}"
        idx.append(f"({e}) * {step}" if step != 1 else f"({e})")
    return [idx[d] if it.trips[d] > 1 else "0" for d in it.map]


def unflatten(v: str, element: tuple[int, ...]) -> list[str]:
    """C expressions of the index in each dim of value ``v`` (flat, row-major) of a tile ``element``."""
    v = v if v.isidentifier() or v.isdigit() else f"({v})"
    out = []
    for d, n in enumerate(element):
        inner = math.prod(element[d + 1:])
        e = v if inner == 1 else f"({v}) / {inner}"
        out.append("0" if n == 1 else (e if d == 0 else f"({e}) % {n}"))
    return out


def _plus(a: str, b: str) -> str:
    return b if a == "0" else a if b == "0" else f"{a} + {b}"


class _Code:
    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, line: str = "", depth: int = 0) -> None:
        self.lines.append("  " * depth + line if line else "")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class DataflowEmitter:
    """The C++ of a lowered graph.  Names (:mod:`.names`): ``file`` holds the functions -- the user's kernels
    first, then every process, struct and table, all named before any body is written -- and ``top`` the top
    function's ports and scalars and the regions' streams; each process has a scope of its own."""

    def __init__(self, g, low: Lowered, depths: dict[str, int], priority: dict[str, tuple[int, int]], timing):
        self.g, self.low, self.depths, self.priority = g, low, depths, priority
        self.timing, self.plan = timing, timing.plan
        self.graph = g.graph
        self.params = {p.name: p.type for p in self.graph.ir.params}
        self.placements = g.placements()  # g.store_at: edge -> where its store writes
        self.fns: list[str] = []
        self.emitted: dict[str, tuple] = {}  # task -> (its function, its process IR, {id of a loop: its label})
        self.kernels_done: set[str] = set()
        self.calls = {t: s for t, s in zip(self.graph.tasks, (x for x in self.graph.ir.body if isinstance(x, CallKernel)))}
        kernels = [self.graph.ir] + [x for t in self.graph.tasks for x in _kernels_in_order(g.kernel_ir(t))[::-1]]
        self.file = file_scope(kernels)
        self.fn: dict[tuple, str] = {}  # (what, node or edge) -> its function, struct or table
        for n in low.nodes.values():
            if n.kind == "task":
                self.fn["task", n.name] = self.file.fresh(f"task_{cname(n.name)}")
            elif n.kind == "converter":
                for part in ("block", "fill", "drain"):
                    self.fn[part, n.name] = self.file.fresh(f"{cname(n.name)}_{part}")
            else:
                self.fn["process", n.name] = self.file.fresh(cname(n.name))
        for b in low.bundles:
            self.fn["bundle", b[0]] = self.file.fresh(f"bundle_{cname(b[0])}")
        for r in range(len(g.regions())):
            self.fn["region", str(r)] = self.file.fresh(f"{self.file[self.graph.ir.name]}_region{r}")
        self.top = Scope(self.file)  # the top function's ports and scalars, then the regions' streams
        for p in self.graph.ir.params:
            self.top.user(p.name)
        for v in next(s for s in self.graph.ir.body if isinstance(s, Return)).values:
            self.top.user(v.name)
        self.arrays = {e: self.top[e] if (x.is_input or x.is_output) else self.top.fresh(f"dram_{cname(e)}")
                       for e, x in self.graph.edges.items()}
        # a tensor's ports: lane 0 keeps the array's name, the others are numbered after it
        self.ports = {e: [a] + [self.top.fresh(f"{a}_{j}") for j in range(1, self.plan.ports[e])]
                      for e, a in self.arrays.items() if e in self.plan.ports}
        self.streams = {}
        self.fifo_depths: dict[str, int] = {}  # stream variable -> its depth in beats (what the lint checks)
        for f in low.streams:
            base = self.top.fresh(f"s_{cname(f.name)}")
            lanes = self.plan.lanes[f.name]
            self.streams[f.name] = [base] if lanes == 1 else [base] + [self.top.fresh(f"{base}_{j}") for j in range(1, lanes)]
        self.blocks = {n.name: self.top.fresh(f"{cname(n.name)}_buf") for n in low.nodes.values() if n.kind == "converter"}

    # ------------------------------------------------------------ helpers
    def stream(self, f: Fifo) -> list[str]:
        """The FIFOs of stream ``f``: beat ``j`` of a token travels on the ``j % P``-th."""
        return self.streams[f.name]

    def beat_type(self, f: Fifo) -> str:
        return f"sd::beat<{ctype(f.layout.dtype)}, {self.plan.beats[f.name].lanes}>"

    def port(self, f: Fifo) -> str:
        return ", ".join(f"hls::stream<{self.beat_type(f)}> &{s}" for s in self.stream(f))

    def local(self) -> Scope:
        """The scope of one process function: the graph's names stay out of its locals."""
        return Scope(self.top)

    def ins(self, node: str) -> list[Fifo]:
        return [f for f in self.low.streams if f.dst == node]

    def outs(self, node: str) -> list[Fifo]:
        """Output FIFOs of ``node``, the one whose reader starts latest first."""
        fs = [f for f in self.low.streams if f.src == node]
        return sorted(fs, key=lambda f: -self.priority.get(f.name, (0, 0))[1])

    def task_edges(self, task: str) -> tuple[list[str], list[str]]:
        """A task's input and output edges in the order it moves their tokens within a step: first the input
        whose writer starts latest, first to the reader that starts latest, so the C code blocks where the
        token simulator would (it never takes a short-path token while it waits for the bypass)."""
        t = self.graph.tasks[task]
        ins = {f.edge: f for f in self.ins(task)}
        outs = {f.edge: f for f in self.outs(task)}
        in_edges = sorted((e for e in dict.fromkeys(t.inputs) if e is not None),
                          key=lambda e: -self.priority.get(ins[e].name, (0, 0))[0])
        out_edges = sorted(t.outputs, key=lambda e: -self.priority.get(outs[e].name, (0, 0))[1])
        return in_edges, out_edges

    def beats_loop(self, code: _Code, local: Scope, depth: int, label: str, tokens: str, per: int, body,
                   unrolled: bool = False) -> None:
        """``tokens`` tokens of ``per`` beat groups each (a group: a beat on every FIFO): one loop of
        ``tokens * per`` iterations, pipelined at II 1, whose ``body(depth, token, group)`` moves one group;
        ``unrolled``: one token inside an enclosing pipeline's iteration, its groups unrolled."""
        i = local.fresh("i")
        count = per if tokens == "1" else (tokens if per == 1 else f"({tokens}) * {per}")
        code(f"SD_ENTRY({label});", depth)
        code(f"{label}: for (int {i} = 0; {i} < {count}; {i}++) {{", depth)
        code("#pragma HLS unroll" if unrolled else "#pragma HLS pipeline II=1", depth + 1)
        code(f"SD_TRIP({label});", depth + 1)
        tok = "0" if tokens == "1" else (i if per == 1 else f"{i} / {per}")
        grp = "0" if per == 1 else (i if tokens == "1" else f"{i} % {per}")
        body(depth + 1, tok, grp)
        code("}", depth)
        local.release(i)

    def values(self, code: _Code, local: Scope, depth: int, f: Fifo, beat: str, assign) -> None:
        """``assign(depth, lane, value_index)`` for each value of beat ``beat`` of a token of ``f`` (unrolled)."""
        bt = self.plan.beats[f.name]
        lane = local.fresh("l")
        code(f"for (int {lane} = 0; {lane} < {bt.lanes}; {lane}++) {{", depth)
        code("#pragma HLS unroll", depth + 1)
        v = lane if beat == "0" else f"({beat}) * {bt.lanes} + {lane}"
        if bt.values % bt.lanes:
            code(f"if ({v} < {bt.values}) {{", depth + 1)
            assign(depth + 2, lane, v)
            code("}", depth + 1)
        else:
            assign(depth + 1, lane, v)
        code("}", depth)
        local.release(lane)

    def lane_beats(self, f: Fifo, group: str) -> list[tuple[str, str]]:
        """(FIFO, beat index) of the beats of beat group ``group``: beat ``group * P + j`` on FIFO ``j``."""
        lanes = self.stream(f)
        P = len(lanes)
        return [(s, group if P == 1 else (str(j) if group == "0" else f"({group}) * {P} + {j}"))
                for j, s in enumerate(lanes)]

    # ---------------------------------------------------------- processes
    def dma(self, n: Node) -> str:
        d, code, local = n.dma, _Code(), self.local()
        it, pk = d.layout, self.plan.packings[d.tensor]
        bt = self.plan.beats[(self.outs(n.name) if d.direction == "load" else self.ins(n.name))[0].name]
        args = [decl for decl, _ in self._dma_params(n)]
        fifo = self.outs(n.name)[0] if d.direction == "load" else self.ins(n.name)[0]
        ports = self.ports[d.tensor]
        P, lanes = len(ports), len(self.stream(fifo))
        code(f"// {comment(d)}")
        code(f"//   in DRAM: {comment(pk)}; {P} port(s)")
        code(f"static void {self.fn['process', n.name]}({', '.join(args)}) {{")
        place = self.placed(n)
        at = None
        if place is not None:  # g.store_at: the rows land at the offset (clamped) of a larger array
            last, off = place.extent - d.tensor_type.shape[place.axis], self.top[place.offset]
            code(f"// {comment(d.tensor)} {comment(place)}", 1)
            if last > 0:  # else the rows fill the whole axis: the offset clamps to 0
                at = local.fresh("at")
                code(f"const int {at} = {off} < 0 ? 0 : ({off} > {last} ? {last} : {off});", 1)
        elem, bits = ctype(it.dtype), elem_bits(it.dtype)
        label = f"L_{cname(n.name)}"
        outs = self.outs(n.name) if d.direction == "load" else []

        def first_index(tok: str, beat: str) -> list[str]:
            """The data index of the first value of beat ``beat`` of token ``tok`` (in the placed array)."""
            offs = offset_exprs(it, tok)
            inner = unflatten("0" if beat == "0" else f"({beat}) * {bt.lanes}", it.element)
            idx = [_plus(o, i) for o, i in zip(offs, inner)]
            if at is not None:
                idx[place.axis] = _plus(at, idx[place.axis])
            return idx

        if self.plan.aligned[n.name] and (pk.per_word > 1 or not self._within_word(n, pk)):
            # several tokens to a word (or beats that start inside one): a word read once, its tokens taken out
            cur, cur_w, w, slot = local.fresh("cur"), local.fresh("cur_w"), local.fresh("w"), local.fresh("slot")
            if d.direction == "load":
                code(f"sd::word {cur} = 0;", 1)
                code(f"int {cur_w} = -1;", 1)
            per_value = 512 // bits

            def body(depth: int, tok: str, grp: str) -> None:
                (s, beat), = self.lane_beats(fifo, grp)
                idx = first_index(tok, beat)
                inner = self._slot_expr(pk, idx)
                code(f"const int {slot} = {inner};", depth)
                if d.direction == "store":  # aligned: the beat is all the word holds, from its first slot
                    code(f"{ports[0]}[{slot} / {per_value}] = sd::beat_word<{elem}, {bt.lanes}, {bits}>({s}.read());",
                         depth)
                    return
                code(f"const int {w} = {slot} / {per_value};", depth)
                code(f"if ({w} != {cur_w}) {{", depth)
                code(f"{cur} = {ports[0]}[{w}];", depth + 1)
                code(f"{cur_w} = {w};", depth + 1)
                code("}", depth)
                for f in outs:
                    code(f"{self.stream(f)[0]}.write(sd::word_beat_at<{elem}, {bt.lanes}, {bits}>({cur}, "
                         f"{slot} % {per_value}));", depth)

            self.beats_loop(code, local, 1, label, str(it.num_tokens), bt.beats, body)
        elif self.plan.aligned[n.name]:
            per = bt.cycles(lanes)

            def body(depth: int, tok: str, grp: str) -> None:
                for j, (s, beat) in enumerate(self.lane_beats(fifo, grp)):
                    word = pk.word_expr(first_index(tok, "0"), beat)
                    port = ports[j] if P > 1 else ports[0]
                    at_word = word if P == 1 else f"({word}) / {P}"
                    if d.direction == "load":
                        for f in outs:
                            code(f"{self.stream(f)[j]}.write(sd::word_beat<{elem}, {bt.lanes}, {bits}>({port}[{at_word}]));",
                                 depth)
                    else:
                        code(f"{port}[{at_word}] = sd::beat_word<{elem}, {bt.lanes}, {bits}>({s}.read());", depth)

            self.beats_loop(code, local, 1, label, str(it.num_tokens), per, body)
        else:  # its beats are not whole words of the packing: a word per value
            per_word = 512 // bits
            b, w = local.fresh("b"), local.fresh("w")

            def body(depth: int, tok: str, grp: str) -> None:
                (s, beat), = self.lane_beats(fifo, grp)
                code(f"sd::beat<{elem}, {bt.lanes}> {b};", depth)
                if d.direction == "store":
                    code(f"{b} = {s}.read();", depth)

                def one(dd: int, lane: str, v: str) -> None:
                    offs = offset_exprs(it, tok)
                    idx = [_plus(o, x) for o, x in zip(offs, unflatten(v, it.element))]
                    if at is not None:
                        idx[place.axis] = _plus(at, idx[place.axis])
                    slot = self._slot_expr(pk, idx)
                    code(f"const int {w} = {slot};", dd)
                    if d.direction == "load":
                        code(f"{b}.v[{lane}] = sd::word_value<{elem}, {bits}>({ports[0]}[{w} / {per_word}], "
                             f"{w} % {per_word});", dd)
                    else:
                        code(f"sd::set_word_value<{elem}, {bits}>({ports[0]}[{w} / {per_word}], {w} % {per_word}, "
                             f"{b}.v[{lane}]);", dd)

                self.values(code, local, depth, fifo, beat, one)
                if d.direction == "load":
                    for f in outs:
                        code(f"{self.stream(f)[0]}.write({b});", depth)

            self.beats_loop(code, local, 1, label, str(it.num_tokens), bt.beats, body)
        code("}")
        return code.text()

    def _slot_expr(self, pk: Packing, idx: list[str]) -> str:
        """C expression of the slot (word * values a word + value) of the value at data index ``idx``."""
        bt = pk.beats
        inner = "0"
        for d, e in enumerate(pk.layout.element):
            term = "0" if e == 1 or idx[d] == "0" else f"({idx[d]}) % {e}"
            inner = term if inner == "0" else (f"({inner}) * {e}" if term == "0" else f"({inner}) * {e} + {term}")
        if pk.per_word > 1:
            return _plus(f"({pk.word_expr(idx, '0')}) * {512 // pk.bits}", _plus(pk.slot_in_word(idx), inner))
        word = pk.word_expr(idx, "0" if bt.beats == 1 else f"({inner}) / {bt.lanes}")
        lane = "0" if bt.lanes == 1 else f"({inner}) % {bt.lanes}"
        return f"({word}) * {512 // pk.bits} + {lane}"

    def _within_word(self, n: Node, pk: Packing) -> bool:
        """Does every beat of the DMA start a word (its layout is its tensor's packing of a word a beat)?"""
        return n.dma.layout == pk.layout and pk.per_word == 1

    def _dma_params(self, n: Node) -> list[tuple[str, str]]:
        """(declaration, name) of each parameter of the DMA's process: its ports and its streams."""
        d = n.dma
        ports = self.ports[d.tensor]
        const = "const " if d.direction == "load" else ""
        arrays = [(f"{const}sd::word *{p}", p) for p in ports]
        if d.direction == "load":
            return arrays + [(self.port(f), ", ".join(self.stream(f))) for f in self.outs(n.name)]
        f = self.ins(n.name)[0]
        place = self.placed(n)
        out = [(self.port(f), ", ".join(self.stream(f)))] + arrays
        if place is not None:
            off, name = self.params[place.offset], self.top[place.offset]
            out.append((f"{ctype(off)} {name}", name))
        return out

    def placed(self, n: Node):
        """The placement (``g.store_at``) of the result a store DMA writes, if any."""
        return self.placements.get(n.dma.tensor) if n.kind == "store" else None

    def bundle(self, names: tuple[str, ...]) -> str:
        """One process that runs the bundled loads one after the other (``g.bundle``)."""
        code = _Code()
        params, calls = [], []
        for m in names:
            n = self.low.nodes[m]
            ps = self._dma_params(n)
            params += [decl for decl, _ in ps]
            calls.append(f"{self.fn['process', m]}({', '.join(name for _, name in ps)});")
        code(f"// bundle: {', '.join(names)} read in turn by one DMA process")
        code(f"static void {self.fn['bundle', names[0]]}({', '.join(params)}) {{")
        for c in calls:
            code(c, 1)
        code("}")
        return code.text()

    def fork(self, n: Node) -> str:
        (inp,) = self.ins(n.name)
        outs = self.outs(n.name)
        code, local = _Code(), self.local()
        bt, P = self.plan.beats[inp.name], len(self.stream(inp))
        b = local.fresh("b")
        code(f"// fork of '{comment(n.edge)}': every beat to {', '.join(f.dst for f in outs)} (latest reader first)")
        code(f"static void {self.fn['process', n.name]}({', '.join([self.port(inp)] + [self.port(f) for f in outs])}) {{")

        def body(depth: int, tok: str, grp: str) -> None:
            for j, s in enumerate(self.stream(inp)):
                code(f"const {self.beat_type(inp)} {b}{j} = {s}.read();", depth)
                for f in outs:
                    code(f"{self.stream(f)[j]}.write({b}{j});", depth)

        self.beats_loop(code, local, 1, f"L_{cname(n.name)}", str(inp.layout.num_tokens), bt.cycles(P), body)
        code("}")
        return code.text()

    def converter(self, n: Node) -> tuple[str, list[str], list[str]]:
        """(code, the block channel's declaration lines for the region, its lines for streamdsl's C-simulation
        only: the name its deadlock reports give it)."""
        cv: Converter = n.converter
        (inp,) = self.ins(n.name)
        outs = self.outs(n.name)
        src, dst = cv.src, cv.dst
        blocks = math.prod(src.trips[d] for d in cv.shared) if cv.shared else 1
        per_src, per_dst = src.num_tokens // blocks, dst.num_tokens // blocks
        name = cname(n.name)  # the labels' base
        elem = ctype(src.dtype)
        block_t, fill, drain, buf = self.fn["block", n.name], self.fn["fill", n.name], self.fn["drain", n.name], \
            self.blocks[n.name]
        bdims = "".join(f"[{x}]" for x in cv.buffer_shape)
        code = _Code()
        code(f"// {comment(cv)}")
        code(f"typedef {elem} {block_t}{bdims};  // a block of the ping-pong buffer")
        code()

        def rel(it: ITensor, p: str) -> list[str]:
            return ["0" if it.map[k] in cv.shared else o for k, o in enumerate(offset_exprs(it, p))]

        for side in ("in", "out"):
            local = self.local()
            blk, q, bt_ = local.fresh("blk"), local.fresh("q"), local.fresh("bt")
            it, per, f = (src, per_src, inp) if side == "in" else (dst, per_dst, outs[0])
            bt, lanes = self.plan.beats[f.name], self.stream(f)
            if side == "in":
                code(f"static void {fill}({self.port(inp)}, hls::stream_of_blocks<{block_t}> &{buf}) {{")
            else:
                code(f"static void {drain}(hls::stream_of_blocks<{block_t}> &{buf}, "
                     f"{', '.join(self.port(g) for g in outs)}) {{")
            b = local.fresh("b")
            code(f"SD_ENTRY(L_{name}_blocks);", 1)
            code(f"L_{name}_blocks: for (int {b} = 0; {b} < {blocks}; {b}++) {{", 1)
            code(f"SD_TRIP(L_{name}_blocks);", 2)
            # the block the lock holds, given back when the lock goes out of scope (the iteration's end)
            code(f"hls::{'write' if side == 'in' else 'read'}_lock<{block_t}> {blk}({buf});", 2)

            def body(depth: int, tok: str, grp: str, it=it, f=f, bt=bt, side=side) -> None:
                p = tok if per == 1 else f"{b} * {per} + {tok}"
                offs = rel(it, p)
                for s, beat in self.lane_beats(f, grp):
                    if side == "in":
                        code(f"const {self.beat_type(f)} {bt_}_{s} = {s}.read();", depth)
                    else:
                        code(f"{self.beat_type(f)} {bt_}_{s};", depth)

                    def one(dd: int, lane: str, v: str, s=s) -> None:
                        sub = "".join(f"[{_plus(o, x)}]" for o, x in zip(offs, unflatten(v, it.element)))
                        if side == "in":
                            code(f"{blk}{sub} = {bt_}_{s}.v[{lane}];", dd)
                        else:
                            code(f"{bt_}_{s}.v[{lane}] = {blk}{sub};", dd)

                    self.values(code, local, depth, f, beat, one)
                    if side == "out":
                        for g in outs:
                            code(f"{self.stream(g)[self.stream(f).index(s)]}.write({bt_}_{s});", depth)

            self.beats_loop(code, local, 2, f"L_{name}_{side}", str(per), bt.cycles(len(lanes)), body)
            code("}", 1)
            code("}")
            if side == "in":
                code()
            del q
        decl = [f"hls::stream_of_blocks<{block_t}, 2> {buf};  // the ping-pong buffer: two blocks of memory"]
        return code.text(), decl, [f"{buf}.set_name(\"{n.name}.buffer\");"]

    def task(self, n: Node) -> tuple[str, str, list[str]]:
        """(the task's process function, its call in the region, the region scalars the call uses)."""
        k: Kernel = self.g.kernel_ir(n.name)
        for callee in _kernels_in_order(k)[:-1]:
            if callee.name not in self.kernels_done:
                self.kernels_done.add(callee.name)
                self.fns.append(function(callee, kernel_names(callee, self.file)))
        ins = {f.edge: f for f in self.ins(n.name)}
        outs = {f.edge: f for f in self.outs(n.name)}
        in_edges, out_edges = self.task_edges(n.name)
        # the process the timing model priced, its moves in each step in the order that blocks where the token
        # simulator does (the order within a step changes no cycle count)
        proc: Kernel = task_ir(k, n, self.plan, {**ins, **outs}, in_edges, out_edges)
        scope = Scope(self.file)  # its streams, then the kernel's names, then the task's own
        for f in [ins[e] for e in in_edges] + [outs[e] for e in out_edges]:
            for s in self.stream(f):
                scope.take(s)
        declare(scope, k)
        c = scope.user
        ports = [self.port(ins[e]) for e in in_edges] + [self.port(outs[e]) for e in out_edges]
        call_args = [s for e in in_edges for s in self.stream(ins[e])] + \
            [s for e in out_edges for s in self.stream(outs[e])]
        args, used = [], []  # the scalar parameters, and the region's scalars the call passes
        for p, a in zip(k.params, self.calls[n.name].args):
            if not isinstance(p.type, TensorType):
                args.append(f"{ctype(p.type)} {c(p.name)}")
                call_args.append(self.top[a.name] if isinstance(a, Var) else literal(a))
                if isinstance(a, Var):
                    used.append(a.name)
        name = self.fn["task", n.name]
        results = dict(zip(result_locals(k), k.results))
        names = KernelNames(name, scope, [c(r) for r in results], {})
        em = Emitter(proc, names, top=False)
        moved = {e: scope.fresh(f"moved_{cname(e)}") for e in in_edges + out_edges}
        fifos = {**ins, **outs}
        tables: list[str] = []
        execs: dict[int, str] = {}
        local = Scope(scope)
        moves = [s for s in walk(proc) if isinstance(s, StreamMove)]
        for m in moves:  # a move whose token count varies between its executions reads it from a table
            if len(set(m.counts)) > 1:
                tab = self.file.fresh(f"n_{name}_{cname(m.stream)}")
                execs[id(m)] = scope.fresh(f"x_{cname(m.stream)}")
                tables.append(f"static const int {tab}[{len(m.counts)}] = {{{', '.join(map(str, m.counts))}}};")
                execs[id(m), "table"] = tab
        windows = list(dict.fromkeys(p for e in in_edges for p in n.ports[e]  # in port order: the file is the same
                                     if _shape_of(proc, p) != _param_shape(k, p)))  # whatever the hash seed

        def on_move(s: StreamMove, depth: int, inpipe: bool) -> None:
            f = fifos[s.stream]
            bt, P = self.plan.beats[f.name], len(self.stream(f))
            per = bt.cycles(P)
            if id(s) in execs:
                count = f"{execs[id(s), 'table']}[{execs[id(s)]}++]"
            else:
                count = str(s.counts[0])
            mv = moved[s.stream]
            em.emit(f"// {s.direction} {comment(s.stream)}: {bt.beats} beat(s) of {bt.lanes} a token over {P} FIFO(s)",
                    depth)
            em.emit("{", depth)
            n_tok = local.fresh("n")
            em.emit(f"const int {n_tok} = {count};", depth + 1)
            sub = _Code()
            bufs = n.ports[s.stream] if s.direction == "read" else [n.ports[s.stream][0]]

            def body(dd: int, tok: str, grp: str) -> None:
                t = _plus(mv, tok) if tok != "0" else mv
                names = []
                for lane_s, beat in self.lane_beats(f, grp):
                    bv = local.fresh("bt")
                    names.append(bv)
                    if s.direction == "read":
                        sub(f"const {self.beat_type(f)} {bv} = {lane_s}.read();", dd)
                    else:
                        sub(f"{self.beat_type(f)} {bv};", dd)

                    def one(d3: int, lane: str, v: str) -> None:
                        for pname in bufs:
                            win = pname in windows
                            offs = ["0"] * len(f.layout.element) if win else offset_exprs(f.layout, t)
                            idx = "".join(f"[{_plus(o, x)}]" for o, x in zip(offs, unflatten(v, f.layout.element)))
                            if s.direction == "read":
                                sub(f"{c(pname)}{idx} = {bv}.v[{lane}];", d3)
                            else:
                                sub(f"{bv}.v[{lane}] = {c(pname)}{idx};", d3)

                    self.values(sub, local, dd, f, beat, one)
                    if s.direction == "write":
                        sub(f"{lane_s}.write({bv});", dd)
                local.release(*names)

            label = em.label(f"L_{'get' if s.direction == 'read' else 'put'}_{cname(s.stream)}")
            em.loop_labels[id(s)] = label
            sub(f"if ({n_tok}) {{", 0)  # entered only when it moves tokens (the accounting counts those)
            if inpipe:
                self.beats_loop(sub, local, 1, label, "1", per, body, unrolled=True)
            else:
                self.beats_loop(sub, local, 1, label, n_tok, per, body)
            sub("}", 0)
            for line in sub.lines:
                em.emit(line, depth + 1)
            em.emit(f"{mv} += {n_tok};", depth + 1)
            em.emit("}", depth)
            local.release(n_tok)

        em.on_move = on_move
        code = _Code()
        code(f"// task {comment(n.name)}: kernel {comment(k.name)} as its process (streamdsl.dfg.tasks)")
        for e in in_edges:
            code(f"//   reads {comment(e)} ({comment(ins[e].layout)}): {n.tables.summary(n.ports[e][0])}")
        for e in out_edges:
            code(f"//   writes {comment(e)} ({comment(outs[e].layout)}): {n.tables.summary(n.ports[e][0])}")
        for line in tables:
            code(line)
        code.lines += renamed_comment(scope.renamed())
        code(f"static void {name}({', '.join(ports + args)}) {{")
        for e in in_edges + out_edges:
            em.emit(f"int {moved[e]} = 0;", 1)
        for key, var in execs.items():
            if isinstance(key, int):
                em.emit(f"int {var} = 0;", 1)
        for p in windows:
            em.emit(f"// {c(p)}: a one-token window (every step reads only the token it has just read)", 1)
        em.body(proc.body, 1)
        code.lines += em.lines
        code("}")
        self.emitted[n.name] = (name, proc, dict(em.loop_labels))
        return code.text(), f"{name}({', '.join(call_args)});", used

    # ------------------------------------------------------------ regions
    def canonical(self, nodes: list[Node]) -> list[str]:
        """The region's nodes in the order its processes are called (UG1448's canonical form): the loads, then
        the tasks, converters and forks in topological order of their streams (ties in the lowering's order),
        then the stores -- every process after the processes that feed it, so Vitis C-simulation, which runs
        them one after the other, never reads an empty stream."""
        inner = [n.name for n in nodes if n.kind not in ("load", "store")]
        feeds = {m: {f.src for f in self.low.streams if f.dst == m and f.src in inner} for m in inner}
        order: list[str] = []
        while len(order) < len(inner):
            rest = [m for m in inner if m not in order]
            order.append(next((m for m in rest if feeds[m] <= set(order)), rest[0]))  # rest[0]: a cycle, as given
        return [n.name for n in nodes if n.kind == "load"] + order + [n.name for n in nodes if n.kind == "store"]

    def region(self, r: int, nodes: list[Node]) -> tuple[str, list[tuple[str, str, bool]]]:
        """(the call of the region, its ports (name, tensor, written))."""
        code = _Code()
        ports: dict[str, tuple[str, bool]] = {}
        decls: list[str] = []
        csim: list[str] = []  # lines of streamdsl's threaded C-simulation only
        scalars: list[str] = []
        for n in nodes:
            if n.kind in ("load", "store"):
                for p in self.ports[n.dma.tensor]:
                    old = ports.get(p, (n.dma.tensor, False))
                    ports[p] = (n.dma.tensor, old[1] or n.kind == "store")
                place = self.placed(n)
                if place is not None and self.top[place.offset] not in scalars:
                    scalars.append(self.top[place.offset])
        streams = [f for f in self.low.streams if self.low.nodes[f.dst].region == r]
        for f in streams:
            d = self.depths[f.name] * self.plan.token_cycles(f.name)  # a token's beats on each FIFO
            for s in self.stream(f):
                self.fifo_depths[s] = d
                decls.append(f"hls::stream<{self.beat_type(f)}, {d}> {s}(\"{f.name}\");")
                decls.append(f"#pragma HLS stream variable={s} depth={d}")
        here = {n.name for n in nodes}
        calls: dict[str, list[str]] = {}  # node -> its process calls (a bundle's: under its first load)
        for n in nodes:
            call = calls.setdefault(n.name, []).append
            if n.kind in ("load", "store"):
                self.fns.append(self.dma(n))
                if self.low.bundle_of(n.name) is None:
                    call(f"{self.fn['process', n.name]}({', '.join(name for _, name in self._dma_params(n))});")
            elif n.kind == "fork":
                self.fns.append(self.fork(n))
                a = [s for f in self.ins(n.name) + self.outs(n.name) for s in self.stream(f)]
                call(f"{self.fn['process', n.name]}({', '.join(a)});")
            elif n.kind == "converter":
                text, decl, named = self.converter(n)
                self.fns.append(text)
                decls += decl
                csim += named
                buf = self.blocks[n.name]
                (inp,) = self.ins(n.name)
                call(f"{self.fn['fill', n.name]}({', '.join(self.stream(inp))}, {buf});")
                outs = ", ".join(s for f in self.outs(n.name) for s in self.stream(f))
                call(f"{self.fn['drain', n.name]}({buf}, {outs});")
            else:
                text, task_call, used = self.task(n)
                self.fns.append(text)
                call(task_call)
                scalars += [self.top[v] for v in used if self.top[v] not in scalars]
        for b in self.low.bundles:  # one process reads a bundle's inputs in turn
            if b[0] in here:
                self.fns.append(self.bundle(b))
                args = [name for m in b for _, name in self._dma_params(self.low.nodes[m])]
                calls[b[0]].append(f"{self.fn['bundle', b[0]]}({', '.join(args)});")
        procs = [c for m in self.canonical(nodes) for c in calls[m]]
        params = {self.top[p.name]: p.type for p in self.graph.ir.params}
        sig = [f"{'' if w else 'const '}sd::word *{a}" for a, (_t, w) in ports.items()]
        sig += [f"{ctype(params[s])} {s}" for s in scalars]
        code(f"// region {r}: {', '.join(n.name for n in nodes)}")
        code(f"static void {self.fn['region', str(r)]}({', '.join(sig)}) {{")
        code("#pragma HLS dataflow", 1)
        for line in decls:
            code(line, 1)
        code("#ifdef STREAMDSL_THREADED_DATAFLOW", 0)  # streamdsl's C-sim: threads, bounded FIFOs; else in turn
        for line in csim:
            code(line, 1)
        code("hls::sim::run_dataflow(", 1)
        for i, p in enumerate(procs):
            code(f"[&] {{ {p} }}{',' if i < len(procs) - 1 else ');'}", 3)
        code("#else", 0)
        for p in procs:
            code(p, 1)
        code("#endif", 0)
        code("}")
        call = f"{self.fn['region', str(r)]}({', '.join(list(ports) + scalars)});"
        self.fns.append(code.text())
        return call, [(a, t, w) for a, (t, w) in ports.items()]


def _shape_of(proc: Kernel, name: str):
    from ...ir.nodes import Alloc

    return next((tuple(s.type.shape) for s in proc.body if isinstance(s, Alloc) and s.name == name), None)


def _param_shape(k: Kernel, name: str):
    return next((tuple(p.type.shape) for p in k.params if p.name == name and isinstance(p.type, TensorType)), None)


def emit(g, low: Lowered, depths: dict[str, int], priority: dict[str, tuple[int, int]], timing):
    """(the emitter, functions in definition order, top body lines, the DRAM scratch ports (name, tensor))."""
    em = DataflowEmitter(g, low, depths, priority, timing)
    calls, scratch = [], {}
    graph_ports = {p for e, x in g.graph.edges.items() if (x.is_input or x.is_output) and e in em.ports
                   for p in em.ports[e]}
    for r, _tasks in enumerate(g.regions()):
        nodes = [n for n in low.nodes.values() if n.region == r]
        call, ports = em.region(r, nodes)
        calls.append(call)
        for a, tensor, _w in ports:
            if a not in graph_ports:
                scratch[a] = tensor
    return em, em.fns, calls, list(scratch.items())


__all__ = ["build", "emit", "generate"]


def placed_results(g) -> dict:
    """Result index -> its placement (``g.store_at``) in a larger array, for the results that have one."""
    ret = next(s for s in g.graph.ir.body if isinstance(s, Return))
    return {n: g.placements()[v.name] for n, v in enumerate(ret.values) if v.name in g.placements()}


def port_table(g, em: DataflowEmitter, scratch: list[tuple[str, str]]) -> list[dict]:
    """The top function's array ports in order: name, tensor, kind ("in", "out", "scratch"), lane and lanes,
    words, and the tensor's packing (what the testbench and the host fill and read)."""
    ir = g.graph.ir
    out = []
    ret = next(s for s in ir.body if isinstance(s, Return))
    tensors = [(p.name, "in") for p in ir.params if isinstance(p.type, TensorType)]
    tensors += [(v.name, "out") for v in ret.values]
    tensors += [(t, "scratch") for _, t in dict.fromkeys(scratch)]
    seen = set()
    for tensor, kind in tensors:
        if tensor not in em.ports or (tensor, kind) in seen:
            continue
        seen.add((tensor, kind))
        pk = em.plan.packings[tensor]
        ports = em.ports[tensor]
        into = getattr(em.placements.get(tensor), "into", None) if kind == "out" else None
        for j, (name, words) in enumerate(zip(ports, pk.split(len(ports)))):
            alias = em.ports[into][j] if into is not None else None  # the host passes the input's buffer
            out.append(dict(name=name, tensor=tensor, kind=kind, lane=j, lanes=len(ports), words=words, packing=pk,
                            alias=alias))
    return out


def top_function(g, em: DataflowEmitter, calls: list[str], ports: list[dict]) -> tuple[str, str]:
    """(prototype, definition) of the top function: m_axi ports of words, the scalars, then the regions."""
    ir = g.graph.ir
    args, pragmas = [], []
    written = {p["name"] for p in ports if p["kind"] != "in"}
    for n, p in enumerate(ports):
        args.append(f"{'' if p['name'] in written else 'const '}sd::word *{p['name']}")
        pragmas.append(f"#pragma HLS interface mode=m_axi port={p['name']} offset=slave bundle=gmem{n} "
                       f"depth={max(1, p['words'])} max_read_burst_length=64 max_write_burst_length=64")
    for q in ir.params:
        if not isinstance(q.type, TensorType):
            args.append(f"{ctype(q.type)} {em.top[q.name]}")
    for p in ports:
        pragmas.append(f"#pragma HLS interface mode=s_axilite port={p['name']}")
    for q in ir.params:
        if not isinstance(q.type, TensorType):
            pragmas.append(f"#pragma HLS interface mode=s_axilite port={em.top[q.name]}")
    pragmas.append("#pragma HLS interface mode=s_axilite port=return")
    proto = f"void {em.file[ir.name]}({', '.join(args)})"
    body = "\n".join("  " + line for line in pragmas + calls)
    head = renamed_comment([(ir.name, em.file[ir.name])] + em.top.renamed())
    return proto, "\n".join(head + [f"{proto} {{", body, "}"]) + "\n"


def generate(g, low: Lowered, depths: dict[str, int], priority: dict[str, tuple[int, int]], board, source: str,
             timing):
    """(the project files of a dataflow schedule, its array ports (:func:`port_table`))."""
    from .lint import lint
    from .project import dataflow_files

    for t in g.graph.tasks:
        lint(g.kernel_ir(t))
    em, fns, calls, scratch = emit(g, low, depths, priority, timing)
    ports = port_table(g, em, scratch)
    proto, top = top_function(g, em, calls, ports)
    files = dataflow_files(g.graph.ir, fns + [top], [proto], board, source, em.file, em.file[g.graph.ir.name],
                           ports, {q.name: em.top[q.name] for q in g.graph.ir.params}, blocks=bool(em.blocks))
    processes = {n: em.fn["process", n] for (what, n) in [k for k in em.fn if k[0] == "process"]}
    scalars = [(q.name, em.top[q.name], ctype(q.type)) for q in g.graph.ir.params if not isinstance(q.type, TensorType)]
    functions = []  # (C++ function, the kernel it was emitted from, its statements): what the lint checks
    for t in g.graph.tasks:
        name, proc, _labels = em.emitted[t]
        functions.append((name, proc, proc.body))
        functions += [(em.file[c.name], c, c.body) for c in _kernels_in_order(g.kernel_ir(t))[:-1]]
    return files, ports, dict(tasks=em.emitted, processes=processes, scalars=scalars, functions=functions,
                              fifos=dict(em.fifo_depths))


def build(g, output=None, board: str = "u55c", overwrite: bool = False):
    """Write (when ``output`` is given) and return the HLS project of dataflow schedule ``g``."""
    from pathlib import Path

    from ...boards import board as get_board
    from ...dfg.fifo import start_offsets
    from .project import DataflowProject, emitted, write

    b = get_board(board)
    low = g.lowered()
    timing = g.timing(b)  # the one timing model: the FIFO order and the bus plan are the ones it priced
    tasks, edges = timing.tasks, timing.edges
    starts = start_offsets(list(tasks.values()), edges)
    priority = {}  # FIFO -> (cycle its first token is written, cycle it is first read), LP schedule
    for e in edges:
        src, dst = tasks[e.src], tasks[e.dst]
        priority[e.name] = (starts[e.src] + e.write_iter(src, 0) * src.ii + src.lat,
                            starts[e.dst] + e.read_iter(dst, 0) * dst.ii)
    ir = g.graph.ir
    files, ports, record = generate(g, low, g.depths(low), priority, b, ir.loc.file if ir.loc else "?", timing)
    out = Path(output) if output is not None else None
    if out is not None:
        write(files, out, overwrite=overwrite)
    return emitted(DataflowProject(ir, files, out, b.name, b.part, b.clock_mhz, schedule=g, ports=ports, timing=timing,
                                   emitted=record))
