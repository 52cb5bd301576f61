"""A scheduled dataflow graph -> Vitis HLS C++: regions, streams, tasks, converters, DMAs.

What a lowered graph (:mod:`streamdsl.dfg.lower`) becomes:

* **top function** ``<name>(inputs..., outputs..., dram_<edge>...)``: every
  tensor is an ``m_axi`` port widened to the 512-bit bus
  (``max_widen_bitwidth``); an edge between two regions travels through a
  DRAM buffer the host allocates (``dram_<edge>``).  It calls the regions in
  order.
* **region function** with ``#pragma HLS dataflow``: its streams
  (``hls::stream<sd::token<T, N>, depth>`` plus ``#pragma HLS stream
  depth=``, the depth the schedule holds) and one process per node.  In
  C-simulation the processes run on their own threads
  (``hls::sim::run_dataflow``) over bounded streams, so a design that would
  deadlock in hardware is reported as a deadlock instead of passing (vendor
  C-sim runs processes one after another over unbounded streams).
* **kernel task**: the kernel's own loop nest over local buffers, with its
  streams read and written between steps as :mod:`streamdsl.dfg.access`
  computed (``need_*`` / ``done_*`` tables), so it moves tokens when the token
  simulator says it does.
* **converter**: two processes around a ping-pong buffer (a depth-2 stream of
  whole blocks): ``_fill`` takes one block of source tokens, ``_drain`` emits
  it in the destination order while the next block fills.
* **fork**: one read, one write per branch; **load/store DMA**: tile gathers and
  scatters between the ``m_axi`` array and the stream.

Where the token simulator moves several tokens in one atomic iteration, the
C code moves them one after the other: it reads first the FIFO whose first
token arrives latest and writes first to the FIFO that is read latest (in
the LP schedule), so it blocks where the simulator does -- a full bypass
blocks the writer before the short path gets its token.
"""
from __future__ import annotations

import math

from ...dfg.access import StepTables, pipelined, step_body
from ...dfg.itensor import Converter, ITensor
from ...dfg.lower import Fifo, Lowered, Node, result_locals
from ...ir import build as B
from ...ir.nodes import CallKernel, Kernel, Load, Return, Var
from ...sched.rewrite import map_stmt_exprs, replace
from ...types import TensorType
from ..text import comment
from .emit import Emitter, KernelNames, ctype, declare, dims, function, kernel_names, literal, partition_pragma
from .names import Scope, renamed_comment
from .project import _kernels_in_order, file_scope


def cname(name: str) -> str:
    """A node, FIFO or edge name as the base of a generated identifier (``h:mm_1`` -> ``h_mm_1``)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def token_type(it: ITensor) -> str:
    return f"sd::token<{ctype(it.dtype)}, {math.prod(it.element)}>"


def offset_exprs(it: ITensor, p: str) -> list[str]:
    """C expressions of the data offset of token ``p`` (stream position) in each dim."""
    idx = []
    for level, (trips, step) in enumerate(zip(it.trips, it.steps)):
        inner = math.prod(it.trips[level + 1:])
        e = p if inner == 1 else f"{p} / {inner}"
        if level > 0:
            e = f"({e}) % {trips}"
        idx.append(f"({e}) * {step}" if step != 1 else f"({e})")
    return [idx[d] if it.trips[d] > 1 else "0" for d in it.map]


class _Code:
    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, line: str = "", depth: int = 0) -> None:
        self.lines.append("  " * depth + line if line else "")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def tile_loop(code: _Code, it: ITensor, body: str, depth: int, var: str | Scope = "e", unroll: bool = False) -> None:
    """``for e0, e1, ...`` over one tile; ``body`` uses ``{o}`` (data index) and ``{f}`` (flat index).
    ``var``: the variables' base name, or the scope to draw ``e0, e1, ...`` from (they end with the loops).
    ``unroll``: the copy sits inside a pipelined loop, so it is unrolled (one token a pipeline iteration)."""
    rank = len(it.element)
    if isinstance(var, Scope):
        scope = var
        names = [scope.fresh(f"e{d}") for d in range(rank)]
        scope.release(*names)
    else:
        names = [f"{var}{d}" for d in range(rank)]
    for d, n in enumerate(it.element):
        code(f"for (int {names[d]} = 0; {names[d]} < {n}; {names[d]}++) {{", depth + d)
        if unroll:
            code("#pragma HLS unroll", depth + d + 1)
        elif d == rank - 1:
            code("#pragma HLS pipeline II=1", depth + d + 1)
    flat = " + ".join(names[d] + "".join(f" * {m}" for m in it.element[d + 1:]) for d in range(rank)) or "0"
    code(body.format(f=flat, e=names), depth + rank)
    for d in reversed(range(rank)):
        code("}", depth + d)


def _sub(buf: str, offs: list[str], ev: list[str]) -> str:
    return buf + "".join(f"[{o} + {e}]" if o != "0" else f"[{e}]" for o, e in zip(offs, ev))


def _in_window(e, windows: dict[str, tuple[int, ...]]):
    """A read of a one-token window: each index taken within the tile (tiles start at multiples of its size)."""
    if not (isinstance(e, Load) and e.name in windows):
        return None
    idx = tuple(B.const(0, i.dtype) if n == 1 else B.binop("mod", i, B.const(n, i.dtype))
                for i, n in zip(e.indices, windows[e.name]))
    return replace(e, indices=idx)


class DataflowEmitter:
    """The C++ of a lowered graph.  Names (:mod:`.names`): ``file`` holds the functions -- the user's kernels
    first, then every process, struct and step table, all named before any body is written -- and ``graph``
    the top function's arrays and scalars and the regions' streams; each process has a scope of its own."""

    def __init__(self, g, low: Lowered, depths: dict[str, int], priority: dict[str, tuple[int, int]]):
        self.g, self.low, self.depths, self.priority = g, low, depths, priority
        self.graph = g.graph
        self.params = {p.name: p.type for p in self.graph.ir.params}
        self.placements = g.placements()  # g.store_at: edge -> where its store writes
        self.fns: list[str] = []
        self.kernels_done: set[str] = set()
        self.calls = {t: s for t, s in zip(self.graph.tasks, (x for x in self.graph.ir.body if isinstance(x, CallKernel)))}
        kernels = [self.graph.ir] + [x for t in self.graph.tasks for x in _kernels_in_order(g.kernel_ir(t))[::-1]]
        self.file = file_scope(kernels)
        self.fn: dict[tuple[str, str], str] = {}  # (what, node or edge) -> its function, struct or table
        for n in low.nodes.values():
            if n.kind == "task":
                self.fn["task", n.name] = self.file.fresh(f"task_{cname(n.name)}")
                t = self.graph.tasks[n.name]
                for e in dict.fromkeys(x for x in t.inputs if x is not None):
                    self.fn["need", n.name, e] = self.file.fresh(f"need_task_{cname(n.name)}_{cname(e)}")
                for e in t.outputs:
                    self.fn["done", n.name, e] = self.file.fresh(f"done_task_{cname(n.name)}_{cname(e)}")
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
        self.streams = {f.name: self.top.fresh(f"s_{cname(f.name)}") for f in low.streams}
        self.blocks = {n.name: self.top.fresh(f"{cname(n.name)}_buf") for n in low.nodes.values() if n.kind == "converter"}

    # ------------------------------------------------------------ helpers
    def stream(self, f: Fifo) -> str:
        return self.streams[f.name]

    def local(self) -> Scope:
        """The scope of one process function: the graph's names stay out of its locals."""
        return Scope(self.top)

    def ins(self, node: str) -> list[Fifo]:
        return [f for f in self.low.streams if f.dst == node]

    def outs(self, node: str) -> list[Fifo]:
        """Output FIFOs of ``node``, the one whose reader starts latest first."""
        fs = [f for f in self.low.streams if f.src == node]
        return sorted(fs, key=lambda f: -self.priority.get(f.name, (0, 0))[1])

    def port(self, f: Fifo) -> str:
        return f"hls::stream<{token_type(f.layout)}> &{self.stream(f)}"

    def task_edges(self, task: str) -> tuple[list[str], list[str]]:
        """A task's input and output edges in the order it moves their tokens within a step.

        The token simulator moves all of a step's tokens at once; blocking C
        code moves them one after the other.  Reading first the input whose
        writer starts latest, and writing first to the reader that starts
        latest, makes the C code block where the simulator would (it never
        takes a short-path token while it waits for the bypass)."""
        t = self.graph.tasks[task]
        ins = {f.edge: f for f in self.ins(task)}
        outs = {f.edge: f for f in self.outs(task)}
        in_edges = sorted((e for e in dict.fromkeys(t.inputs) if e is not None),
                          key=lambda e: -self.priority.get(ins[e].name, (0, 0))[0])
        out_edges = sorted(t.outputs, key=lambda e: -self.priority.get(outs[e].name, (0, 0))[1])
        return in_edges, out_edges

    # ---------------------------------------------------------- processes
    def dma(self, n: Node) -> str:
        d, code, local = n.dma, _Code(), self.local()
        it = d.layout
        arr = self.array_name(d.tensor)
        args = [decl for decl, _ in self._dma_params(n)]
        if d.direction == "load":
            outs = self.outs(n.name)
        else:
            (inp,) = self.ins(n.name)
        p, t = local.fresh("p"), local.fresh("t")
        code(f"// {comment(d)}")
        code(f"static void {self.fn['process', n.name]}({', '.join(args)}) {{")
        offs = offset_exprs(it, p)
        place = self.placed(n)
        if place is not None:  # g.store_at: the rows land at the offset (clamped) of a larger array
            last, off, at = place.extent - d.tensor_type.shape[place.axis], self.top[place.offset], local.fresh("at")
            code(f"// {comment(d.tensor)} {comment(place)}", 1)
            code(f"const int {at} = {off} < 0 ? 0 : ({off} > {last} ? {last} : {off});", 1)
            offs[place.axis] = at if offs[place.axis] == "0" else f"{at} + {offs[place.axis]}"
        code(f"L_{cname(n.name)}: for (int {p} = 0; {p} < {it.num_tokens}; {p}++) {{", 1)
        if d.direction == "load":
            code(f"{token_type(it)} {t};", 2)
            tile_loop(code, it, t + ".v[{f}] = " + _sub(arr, offs, ["{e[%d]}" % k for k in range(len(offs))]) + ";",
                      2, local)
            for f in outs:
                code(f"{self.stream(f)}.write({t});", 2)
        else:
            code(f"const {token_type(it)} {t} = {self.stream(inp)}.read();", 2)
            tile_loop(code, it, _sub(arr, offs, ["{e[%d]}" % k for k in range(len(offs))]) + f" = {t}.v[{{f}}];",
                      2, local)
        code("}", 1)
        code("}")
        return code.text()

    def _dma_params(self, n: Node) -> list[tuple[str, str]]:
        """(declaration, name) of each parameter of the DMA's process: its array and its streams."""
        d = n.dma
        t, arr = d.tensor_type, self.array_name(d.tensor)
        if d.direction == "load":
            return [(f"const {ctype(t.dtype)} {arr}{dims(t)}", arr)] + [(self.port(f), self.stream(f))
                                                                       for f in self.outs(n.name)]
        f = self.ins(n.name)[0]
        place = self.placed(n)
        if place is None:
            return [(self.port(f), self.stream(f)), (f"{ctype(t.dtype)} {arr}{dims(t)}", arr)]
        off, name = self.params[place.offset], self.top[place.offset]
        return [(self.port(f), self.stream(f)), (f"{ctype(t.dtype)} {arr}{dims(self.array_type(n))}", arr),
                (f"{ctype(off)} {name}", name)]

    def placed(self, n: Node):
        """The placement (``g.store_at``) of the result a store DMA writes, if any."""
        return self.placements.get(n.dma.tensor) if n.kind == "store" else None

    def array_type(self, n: Node) -> TensorType:
        """The type of the array a DMA reads or writes: the tensor's, or the larger one ``store_at`` places it in."""
        t, place = n.dma.tensor_type, self.placed(n)
        return t if place is None else TensorType(t.dtype, place.full_shape(t.shape))

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
        p, t = local.fresh("p"), local.fresh("t")
        code(f"// fork of '{n.edge}': every token to {', '.join(f.dst for f in outs)} (latest reader first)")
        code(f"static void {self.fn['process', n.name]}({', '.join([self.port(inp)] + [self.port(f) for f in outs])}) {{")
        code(f"L_{cname(n.name)}: for (int {p} = 0; {p} < {inp.layout.num_tokens}; {p}++) {{", 1)
        code("#pragma HLS pipeline II=1", 2)
        code(f"const {token_type(inp.layout)} {t} = {self.stream(inp)}.read();", 2)
        for f in outs:
            code(f"{self.stream(f)}.write({t});", 2)
        code("}", 1)
        code("}")
        return code.text()

    def converter(self, n: Node) -> tuple[str, list[str]]:
        """(code, the block-channel declaration lines for the region)."""
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
        code(f"struct {block_t} {{")
        code(f"{elem} v{bdims};", 1)
        code("};")
        code()

        def rel(it: ITensor, p: str) -> list[str]:
            return ["0" if it.map[k] in cv.shared else o for k, o in enumerate(offset_exprs(it, p))]

        ev = ["{e[%d]}" % k for k in range(len(cv.buffer_shape))]
        for side in ("in", "out"):
            local = self.local()
            b, blk, q, p, t = (local.fresh(x) for x in ("b", "blk", "q", "p", "t"))
            it, per = (src, per_src) if side == "in" else (dst, per_dst)
            if side == "in":
                code(f"static void {fill}({self.port(inp)}, hls::stream<{block_t}> &{buf}) {{")
            else:
                code(f"static void {drain}(hls::stream<{block_t}> &{buf}, {', '.join(self.port(f) for f in outs)}) {{")
            code(f"L_{name}_blocks: for (int {b} = 0; {b} < {blocks}; {b}++) {{", 1)
            code(f"{block_t} {blk};" if side == "in" else f"const {block_t} {blk} = {buf}.read();", 2)
            code(f"L_{name}_{side}: for (int {q} = 0; {q} < {per}; {q}++) {{", 2)
            if any(o != "0" for o in rel(it, p)):
                code(f"const int {p} = {b} * {per} + {q};", 3)
            if side == "in":
                code(f"const {token_type(src)} {t} = {self.stream(inp)}.read();", 3)
                tile_loop(code, src, _sub(f"{blk}.v", rel(src, p), ev) + f" = {t}.v[{{f}}];", 3, local)
            else:
                code(f"{token_type(dst)} {t};", 3)
                tile_loop(code, dst, f"{t}.v[{{f}}] = " + _sub(f"{blk}.v", rel(dst, p), ev) + ";", 3, local)
                for f in outs:
                    code(f"{self.stream(f)}.write({t});", 3)
            code("}", 2)
            if side == "in":
                code(f"{buf}.write({blk});", 2)
            code("}", 1)
            code("}")
            if side == "in":
                code()
        decl = [f"hls::stream<{block_t}, 2> {buf}(\"{n.name}.buffer\");",
                f"#pragma HLS stream variable={buf} depth=2 type=pipo"]
        return code.text(), decl

    def task(self, n: Node) -> tuple[str, str, list[str]]:
        """(the task's process function, its call in the region, the region scalars the call uses)."""
        k: Kernel = self.g.kernel_ir(n.name)
        for callee in _kernels_in_order(k)[:-1]:
            if callee.name not in self.kernels_done:
                self.kernels_done.add(callee.name)
                self.fns.append(function(callee, kernel_names(callee, self.file)))
        tables: StepTables = n.tables
        ins = {f.edge: f for f in self.ins(n.name)}
        outs = {f.edge: f for f in self.outs(n.name)}
        in_edges, out_edges = self.task_edges(n.name)
        scope = Scope(self.file)  # its streams, then the kernel's names, then the task's own
        for f in [ins[e] for e in in_edges] + [outs[e] for e in out_edges]:
            scope.take(self.stream(f))
        declare(scope, k)
        c = scope.user
        ports = [self.port(ins[e]) for e in in_edges] + [self.port(outs[e]) for e in out_edges]
        call_args = [self.stream(ins[e]) for e in in_edges] + [self.stream(outs[e]) for e in out_edges]
        args, used = [], []  # the scalar parameters, and the region's scalars the call passes
        for p, a in zip(k.params, self.calls[n.name].args):
            if not isinstance(p.type, TensorType):
                args.append(f"{ctype(p.type)} {c(p.name)}")
                call_args.append(self.top[a.name] if isinstance(a, Var) else literal(a))
                if isinstance(a, Var):
                    used.append(a.name)
        name = self.fn["task", n.name]
        results = dict(zip(result_locals(k), k.results))
        names = KernelNames(name, scope, [c(r) for r in results], {r: c(r) for r in results})
        em = Emitter(k, names, top=False)  # the results are declared up front: writes may come first
        moved = {e: scope.fresh(f"moved_{cname(e)}") for e in in_edges + out_edges}
        step = scope.fresh("step")
        code = _Code()
        code(f"// task {n.name}: kernel {k.name}, {tables.num_steps} steps")
        for e in in_edges:
            code(f"//   reads {e} ({comment(ins[e].layout)}): {tables.summary(n.ports[e][0])}")
        for e in out_edges:
            code(f"//   writes {e} ({comment(outs[e].layout)}): {tables.summary(n.ports[e][0])}")
        for e in in_edges:
            code(f"static const int {self.fn['need', n.name, e]}[{tables.num_steps}] = "
                 f"{{{', '.join(map(str, tables.need[n.ports[e][0]]))}}};")
        for e in out_edges:
            code(f"static const int {self.fn['done', n.name, e]}[{tables.num_steps}] = "
                 f"{{{', '.join(map(str, tables.done[n.ports[e][0]]))}}};")
        code.lines += renamed_comment(scope.renamed())
        code(f"static void {name}({', '.join(ports + args)}) {{")
        params = {p.name: p.type for p in k.params}
        parts = dict(k.attrs.get("partition", ()))
        windows = {pname: ins[e].layout.element for e in in_edges for pname in n.ports[e] if pname in tables.windows}
        for e in in_edges:
            for pname in n.ports[e]:
                t = params[pname]
                shape = windows.get(pname, t.shape)
                if pname in windows:
                    em.emit(f"// {c(pname)}: a one-token window (every step reads only the token it has just read)", 1)
                em.emit(f"{ctype(t.dtype)} {c(pname)}{''.join(f'[{d}]' for d in shape)};", 1)
                for d, kind, factor in parts.get(pname, ()):
                    size = shape[d - 1] if d > 0 else 0
                    if d > 0 and size == 1:
                        continue
                    full = kind == "complete" or (d > 0 and factor >= size)
                    em.emit(partition_pragma(c(pname), d, "complete" if full else kind, factor), 1)
        for r, rt in results.items():
            em.emit(f"{ctype(rt.dtype)} {c(r)}{dims(rt)};", 1)
        for e in in_edges + out_edges:
            em.emit(f"int {moved[e]} = 0;", 1)
        em.emit(f"int {step} = 0;", 1)

        def moves(e: str, depth: int, upto: str, one: bool) -> None:
            """The loop (``one``: the test, inside a pipeline) that moves tokens of ``e`` up to ``upto``."""
            if one:
                em.emit(f"if ({moved[e]} < {upto}) {{", depth)
            else:
                em.emit(f"for (; {moved[e]} < {upto}; {moved[e]}++) {{", depth)

        def get(e: str, depth: int, upto: str, one: bool = False) -> None:
            f = ins[e]
            moves(e, depth, upto, one)
            t = scope.fresh("t")
            em.emit(f"const {token_type(f.layout)} {t} = {self.stream(f)}.read();", depth + 1)
            offs = offset_exprs(f.layout, moved[e])
            sub = _Code()
            for pname in n.ports[e]:
                where = ["0"] * len(offs) if pname in windows else offs
                tile_loop(sub, f.layout, _sub(c(pname), where, ["{e[%d]}" % i for i in range(len(offs))])
                          + f" = {t}.v[{{f}}];", 0, scope, unroll=one)
            for line in sub.lines:
                em.emit(line, depth + 1)
            if one:
                em.emit(f"{moved[e]}++;", depth + 1)
            em.emit("}", depth)
            scope.release(t)

        def put(e: str, depth: int, upto: str, one: bool = False) -> None:
            f = outs[e]
            local = c(n.ports[e][0])
            moves(e, depth, upto, one)
            t = scope.fresh("t")
            em.emit(f"{token_type(f.layout)} {t};", depth + 1)
            offs = offset_exprs(f.layout, moved[e])
            sub = _Code()
            tile_loop(sub, f.layout, f"{t}.v[{{f}}] = " + _sub(local, offs, ["{e[%d]}" % i for i in range(len(offs))])
                      + ";", 0, scope, unroll=one)
            for line in sub.lines:
                em.emit(line, depth + 1)
            em.emit(f"{self.stream(f)}.write({t});", depth + 1)
            if one:
                em.emit(f"{moved[e]}++;", depth + 1)
            em.emit("}", depth)
            scope.release(t)

        def before(depth: int, one: bool = False) -> None:
            for e in in_edges:
                get(e, depth, f"{self.fn['need', n.name, e]}[{step}]", one)

        def after(depth: int, one: bool = False) -> None:
            for e in out_edges:
                put(e, depth, f"{self.fn['done', n.name, e]}[{step}]", one)
            em.emit(f"{step}++;", depth)

        body = step_body(k)
        if windows:
            body = tuple(map_stmt_exprs(s, lambda x: _in_window(x, windows)) for s in body)
        for i, s in enumerate(body):
            if isinstance(s, Return):
                continue
            if i in tables.split:  # a step an iteration; inside a pipeline a step moves at most a token a stream
                one = pipelined(s)
                em.open_for(s, 1)
                before(2, one)
                em.body(s.body, 2)
                after(2, one)
                em.emit("}", 1)
            else:
                before(1)
                em.stmt(s, 1)
                after(1)
        for e in in_edges:  # replayed or unused tokens still leave the FIFO
            get(e, 1, str(ins[e].layout.num_tokens))
        for e in out_edges:
            put(e, 1, str(outs[e].layout.num_tokens))
        code.lines += em.lines
        code("}")
        return code.text(), f"{name}({', '.join(call_args)});", used

    # ------------------------------------------------------------ regions
    def array_name(self, edge: str) -> str:
        """The m_axi array a DMA of ``edge`` reads or writes: a port, or a DRAM buffer between regions."""
        return self.arrays[edge]

    def region(self, r: int, nodes: list[Node]) -> tuple[str, list[str], list[tuple[str, TensorType, bool]]]:
        """(function text, process calls, its arrays (name, type, written))."""
        code = _Code()
        arrays: dict[str, tuple[TensorType, bool]] = {}
        decls: list[str] = []
        procs: list[str] = []
        scalars: list[str] = []
        for n in nodes:
            if n.kind in ("load", "store"):
                arr = self.array_name(n.dma.tensor)
                written = n.kind == "store"
                old = arrays.get(arr, (self.array_type(n), False))
                arrays[arr] = (self.array_type(n), old[1] or written)
                place = self.placed(n)
                if place is not None and self.top[place.offset] not in scalars:
                    scalars.append(self.top[place.offset])
        streams = [f for f in self.low.streams if self.low.nodes[f.dst].region == r]
        for f in streams:
            d = self.depths[f.name]
            decls.append(f"hls::stream<{token_type(f.layout)}, {d}> {self.stream(f)}(\"{f.name}\");")
            decls.append(f"#pragma HLS stream variable={self.stream(f)} depth={d}")
        here = {n.name for n in nodes}
        for n in nodes:
            if n.kind in ("load", "store"):
                self.fns.append(self.dma(n))
                if self.low.bundle_of(n.name) is None:
                    procs.append(f"{self.fn['process', n.name]}({', '.join(name for _, name in self._dma_params(n))});")
            elif n.kind == "fork":
                self.fns.append(self.fork(n))
                a = [self.stream(f) for f in self.ins(n.name) + self.outs(n.name)]
                procs.append(f"{self.fn['process', n.name]}({', '.join(a)});")
            elif n.kind == "converter":
                text, decl = self.converter(n)
                self.fns.append(text)
                decls += decl
                buf = self.blocks[n.name]
                (inp,) = self.ins(n.name)
                procs.append(f"{self.fn['fill', n.name]}({self.stream(inp)}, {buf});")
                procs.append(f"{self.fn['drain', n.name]}({buf}, {', '.join(self.stream(f) for f in self.outs(n.name))});")
            else:
                text, call, used = self.task(n)
                self.fns.append(text)
                procs.append(call)
                scalars += [self.top[v] for v in used if self.top[v] not in scalars]
        for b in self.low.bundles:  # one process reads a bundle's inputs in turn
            if b[0] in here:
                self.fns.append(self.bundle(b))
                args = [name for m in b for _, name in self._dma_params(self.low.nodes[m])]
                procs.append(f"{self.fn['bundle', b[0]]}({', '.join(args)});")
        params = {self.top[p.name]: p.type for p in self.graph.ir.params}
        sig = [f"{'' if w else 'const '}{ctype(t.dtype)} {a}{dims(t)}" for a, (t, w) in arrays.items()]
        sig += [f"{ctype(params[s])} {s}" for s in scalars]
        code(f"// region {r}: {', '.join(n.name for n in nodes)}")
        code(f"static void {self.fn['region', str(r)]}({', '.join(sig)}) {{")
        code("#pragma HLS dataflow", 1)
        for line in decls:
            code(line, 1)
        code("#ifndef __SYNTHESIS__", 0)
        code("hls::sim::run_dataflow(", 1)
        for i, p in enumerate(procs):
            code(f"[&] {{ {p} }}{',' if i < len(procs) - 1 else ');'}", 3)
        code("#else", 0)
        for p in procs:
            code(p, 1)
        code("#endif", 0)
        code("}")
        call = f"{self.fn['region', str(r)]}({', '.join(list(arrays) + scalars)});"
        self.fns.append(code.text())
        return call, [(a, t, w) for a, (t, w) in arrays.items()]


def emit(g, low: Lowered, depths: dict[str, int], priority: dict[str, tuple[int, int]]):
    """(the emitter, functions in definition order, top body lines, the DRAM scratch buffers (name, type))."""
    em = DataflowEmitter(g, low, depths, priority)
    calls, scratch = [], {}
    ports = {em.arrays[e] for e, x in g.graph.edges.items() if x.is_input or x.is_output}
    for r, _tasks in enumerate(g.regions()):
        nodes = [n for n in low.nodes.values() if n.region == r]
        call, arrays = em.region(r, nodes)
        calls.append(call)
        for a, t, _w in arrays:
            if a not in ports:
                scratch[a] = t
    return em, em.fns, calls, list(scratch.items())


__all__ = ["build", "emit", "generate"]


def placed_results(g) -> dict:
    """Result index -> its placement (``g.store_at``) in a larger array, for the results that have one."""
    ret = next(s for s in g.graph.ir.body if isinstance(s, Return))
    return {n: g.placements()[v.name] for n, v in enumerate(ret.values) if v.name in g.placements()}


def top_function(g, em: DataflowEmitter, calls: list[str], scratch: list[tuple[str, TensorType]]) -> tuple[str, str]:
    """(prototype, definition) of the top function: m_axi ports, then the regions in order."""
    ir = g.graph.ir
    ports: list[tuple[str, object, bool]] = [(em.top[p.name], p.type, False) for p in ir.params]
    ret = next(s for s in ir.body if isinstance(s, Return))
    placed = g.placements()
    ports += [(em.top[v.name], TensorType(t.dtype, placed[v.name].full_shape(t.shape)) if v.name in placed else t, True)
              for v, t in zip(ret.values, ir.results)]
    ports += [(b, t, True) for b, t in scratch]
    args, pragmas = [], []
    for n, (name, t, written) in enumerate(ports):
        if isinstance(t, TensorType):
            args.append(f"{'' if written else 'const '}{ctype(t.dtype)} {name}{dims(t)}")
            pragmas.append(f"#pragma HLS interface mode=m_axi port={name} offset=slave bundle=gmem{n} depth={t.size} "
                           "max_widen_bitwidth=512")
        else:
            args.append(f"{ctype(t)} {name}")
        pragmas.append(f"#pragma HLS interface mode=s_axilite port={name}")
    pragmas.append("#pragma HLS interface mode=s_axilite port=return")
    proto = f"void {em.file[ir.name]}({', '.join(args)})"
    body = "\n".join("  " + line for line in pragmas + calls)
    head = renamed_comment([(ir.name, em.file[ir.name])] + em.top.renamed())
    return proto, "\n".join(head + [f"{proto} {{", body, "}"]) + "\n"


def generate(g, low: Lowered, depths: dict[str, int], priority: dict[str, tuple[int, int]], board: str, source: str):
    """The project files of a dataflow schedule (see :func:`project.project_files`)."""
    from .project import project_files

    for t in g.graph.tasks:
        from .lint import lint

        lint(g.kernel_ir(t))
    em, fns, calls, scratch = emit(g, low, depths, priority)
    proto, top = top_function(g, em, calls, scratch)
    return project_files(g.graph.ir, fns + [top], [proto], board, source, em.file, em.file[g.graph.ir.name], scratch,
                         includes=("hls_stream.h",), placed=placed_results(g))


def build(g, output=None, board: str = "u55c", overwrite: bool = False):
    """Write (when ``output`` is given) and return the HLS project of dataflow schedule ``g``."""
    from pathlib import Path

    from ...boards import board as get_board
    from ...dfg.fifo import start_offsets
    from .project import DataflowProject, write

    b = get_board(board)
    low = g.lowered()
    timing = g.timing(b)  # the one timing model: the FIFO order follows the schedule the depths were sized for
    tasks, edges = timing.tasks, timing.edges
    starts = start_offsets(list(tasks.values()), edges)
    priority = {}  # FIFO -> (cycle its first token is written, cycle it is first read), LP schedule
    for e in edges:
        src, dst = tasks[e.src], tasks[e.dst]
        priority[e.name] = (starts[e.src] + e.write_iter(src, 0) * src.ii + src.lat,
                            starts[e.dst] + e.read_iter(dst, 0) * dst.ii)
    ir = g.graph.ir
    files = generate(g, low, g.depths(low), priority, b, ir.loc.file if ir.loc else "?")
    out = Path(output) if output is not None else None
    if out is not None:
        write(files, out, overwrite=overwrite)
    return DataflowProject(ir, files, out, b.name, b.part, b.clock_mhz, schedule=g)
