"""Lowering a scheduled dataflow graph to hardware nodes and FIFOs.

From the graph, the stream layouts of both sides of every edge and the
region of every task, this builds what the accelerator is made of:

* kernel tasks;
* a **layout converter** where a producer and a consumer in the same region
  stream one tensor in different layouts (consumers that want the same
  layout share one converter: the paper merges redundant converters);
* a **fork** where a kernel's output stream goes to more than one place (a
  kernel writes one stream per result; converters and DMAs are generated
  code and write several streams themselves);
* **DMAs** where a tensor enters or leaves a region (graph inputs and
  outputs, and edges between regions, which go through DRAM: a store in the
  producer's region, a load per consumer layout in each consumer region).
  DRAM is random access, so an edge between regions never needs a converter:
  each DMA reads or writes in its side's layout;
* **FIFOs** between all of these.  An edge with one FIFO calls it by the
  tensor's name; otherwise each FIFO is ``tensor:destination``.  The DRAM
  hand-off from a store to a load is recorded as a one-token ``dram`` link
  so the token simulator orders the regions; it is not a FIFO.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .access import StepTables, step_tables
from .graph import DataflowGraph
from .itensor import Converter, ITensor, converter
from ..errors import ShapeError
from ..ir.memo import IdentityMemo
from ..ir.nodes import Kernel, Return
from .layout import DMA, whole
from .timing import converter_task, local_bytes
from .tokensim import Edge


@dataclass
class Node:
    name: str
    kind: str  # "task" | "converter" | "fork" | "load" | "store"
    region: int
    edge: str | None
    iters: int  # the node's token-moving iterations (its timing on a board: timing.design_timing)
    converter: Converter | None = None
    dma: DMA | None = None
    local_bytes: int = 0
    tables: StepTables | None = None  # kernel tasks: when each token moves
    ports: dict[str, tuple[str, ...]] = field(default_factory=dict)  # kernel tasks: edge -> kernel names

    def schedule_of(self, edge: str, reading: bool) -> tuple[int, ...] | None:
        """The iteration that moves each token of ``edge`` (None: not a kernel task)."""
        if self.tables is None:
            return None
        _, reads, writes = self.tables.iterations
        per = [(reads if reading else writes)[n] for n in self.ports[edge]]
        if len(per) == 1:  # one kernel name on the edge (the common case): its schedule as it is
            return tuple(per[0])
        return tuple(min(x) for x in zip(*per))


@dataclass
class Fifo:
    name: str
    edge: str
    src: str
    dst: str
    layout: ITensor
    kind: str = "fifo"  # "fifo" | "dram"

    @property
    def tokens(self) -> int:
        return 1 if self.kind == "dram" else self.layout.num_tokens

    @property
    def token_bytes(self) -> int:
        return self.layout.token_bytes


@dataclass
class Lowered:
    nodes: dict[str, Node] = field(default_factory=dict)
    fifos: list[Fifo] = field(default_factory=list)
    bundles: list[tuple[str, ...]] = field(default_factory=list)  # load DMAs one process runs in turn

    def bundle_of(self, node: str) -> tuple[str, ...] | None:
        return next((b for b in self.bundles if node in b), None)

    def of_kind(self, kind: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.kind == kind]

    @property
    def streams(self) -> list[Fifo]:
        """The real FIFOs (not the DRAM links)."""
        return [f for f in self.fifos if f.kind == "fifo"]

    def fifo(self, name: str) -> Fifo:
        return next(f for f in self.fifos if f.name == name)

    def sim_edges(self) -> list[Edge]:
        out = []
        for f in self.fifos:
            w = self.nodes[f.src].schedule_of(f.edge, False) if f.kind == "fifo" else None
            r = self.nodes[f.dst].schedule_of(f.edge, True) if f.kind == "fifo" else None
            out.append(Edge(f.name, f.src, f.dst, f.tokens, w, r))
        for b in self.bundles:  # a bundled DMA starts once the one before it has issued its last read
            for a, c in zip(b, b[1:]):
                out.append(Edge(f"{a}->{c}", a, c, 1, (self.nodes[a].iters - 1,), (0,)))
        return out


class _Builder:
    def __init__(self, g: DataflowGraph, kernels, regions, prod, cons, bundles=()):
        self.bundles = list(bundles)
        self.g, self.kernels, self.regions = g, kernels, regions
        self.prod, self.cons = prod, cons
        self.out = Lowered()
        self.pending: list[Fifo] = []  # FIFOs of the current edge, named when the edge is done

    def producer_layout(self, e: str) -> ITensor:
        return self.prod.get(e) or whole(self.g.edges[e].type)

    def consumer_layout(self, e: str, task: str) -> ITensor:
        return self.cons.get((e, task)) or whole(self.g.edges[e].type)

    def fresh(self, base: str, numbered: bool = False) -> str:
        """``base`` (or ``base_1``, ``base_2``, ... when several of a kind exist) not yet taken."""
        n = 1
        name = f"{base}_1" if numbered else base
        while name in self.out.nodes or name in self.g.tasks:
            n += 1
            name = f"{base}_{n}"
        return name

    def add(self, node: Node) -> str:
        self.out.nodes[node.name] = node
        return node.name

    def link(self, e: str, src: str, dst: str, layout: ITensor, kind: str = "fifo") -> None:
        self.pending.append(Fifo("", e, src, dst, layout, kind))

    def dma(self, e: str, direction: str, region: int, layout: ITensor, count: int) -> str:
        name = self.fresh(f"{direction}_{e}", numbered=count > 1)
        d = DMA(name, e, direction, region, layout, self.g.edges[e].type)
        return self.add(Node(name, direction, region, e, max(1, layout.num_tokens), dma=d))

    def build(self) -> Lowered:
        for t in self.g.tasks.values():  # kernel tasks first, in program order
            k = self.kernels(t.name)
            ports: dict[str, tuple[str, ...]] = {}
            ins: dict[str, ITensor] = {}
            for p, e in zip(k.params, t.inputs):
                if e is not None:
                    ins[p.name] = self.consumer_layout(e, t.name)
                    ports[e] = ports.get(e, ()) + (p.name,)
            outs: dict[str, ITensor] = {}
            for n, e in zip(result_locals(k), t.outputs):
                outs[n] = self.producer_layout(e)
                ports[e] = ports.get(e, ()) + (n,)
            tables = _tables(k, ins, outs)
            self.add(Node(t.name, "task", self.regions[t.name], None, max(1, tables.iterations[0]),
                          local_bytes=local_bytes(k), tables=tables, ports=ports))
        for e in self.g.edges.values():
            self.pending = []
            self.edge(e.name)
            self.name_fifos(e.name)
        for b in self.bundles:
            self.bundle(b)
        return self.out

    def bundle(self, edges: tuple[str, ...]) -> None:
        """Chain the loads of ``edges`` region by region (an input loaded twice in a region stays apart)."""
        loads: dict[str, list[str]] = {}
        for n in self.out.nodes.values():
            if n.kind == "load" and n.edge in edges:
                loads.setdefault(n.edge, []).append(n.name)
        by_region: dict[int, list[str]] = {}
        for e in edges:
            if len(loads.get(e, ())) == 1:
                name = loads[e][0]
                by_region.setdefault(self.out.nodes[name].region, []).append(name)
        self.out.bundles += [tuple(b) for b in by_region.values() if len(b) > 1]

    def edge(self, e: str) -> None:
        edge = self.g.edges[e]
        consumers = [c for c, _ in edge.consumers]
        if edge.is_input:
            by_region: dict[int, list[str]] = {}
            for c in consumers:
                by_region.setdefault(self.regions[c], []).append(c)
            loads = sum(len({self.consumer_layout(e, c) for c in cs}) for cs in by_region.values())
            for r, cs in by_region.items():
                self.loads(e, r, cs, None, loads)
            return
        p = edge.producer
        region = self.regions[p]
        lp = self.producer_layout(e)
        local = [c for c in consumers if self.regions[c] == region]
        remote: dict[int, list[str]] = {}
        for c in consumers:
            if self.regions[c] != region:
                remote.setdefault(self.regions[c], []).append(c)
        targets: list[tuple[str, ITensor]] = []  # what the producer's stream feeds (in layout lp)
        groups: dict[ITensor, list[str]] = {}
        for c in local:
            groups.setdefault(self.consumer_layout(e, c), []).append(c)
        n_cvt = sum(1 for lay in groups if lay != lp)
        for lay, cs in groups.items():
            if lay == lp:
                targets += [(c, lp) for c in cs]
                continue
            cv = converter(lp, lay)
            name = self.fresh(f"cvt_{e}", numbered=n_cvt > 1)
            self.add(Node(name, "converter", region, e, converter_task(name, cv).iters, converter=cv))
            targets.append((name, lp))
            for c in cs:
                self.link(e, name, c, lay)
        store = None
        if edge.is_output or remote:
            store = self.dma(e, "store", region, lp, 1)
            targets.append((store, lp))
        if len(targets) > 1:
            fork = self.fresh(f"fork_{e}")
            self.add(Node(fork, "fork", region, e, max(1, lp.num_tokens)))
            self.link(e, p, fork, lp)
            for dst, lay in targets:
                self.link(e, fork, dst, lay)
        else:
            self.link(e, p, targets[0][0], lp)
        loads = sum(len({self.consumer_layout(e, c) for c in cs}) for cs in remote.values())
        for r, cs in remote.items():
            self.loads(e, r, cs, store, loads)

    def loads(self, e: str, region: int, consumers: list[str], store: str | None, count: int) -> None:
        groups: dict[ITensor, list[str]] = {}
        for c in consumers:
            groups.setdefault(self.consumer_layout(e, c), []).append(c)
        for lay, cs in groups.items():
            load = self.dma(e, "load", region, lay, count)
            if store is not None:
                self.link(e, store, load, lay, kind="dram")
            for c in cs:
                self.link(e, load, c, lay)

    def name_fifos(self, e: str) -> None:
        rank = {"task": 0, "load": 0, "fork": 1, "converter": 2, "store": 3}
        real = sorted((f for f in self.pending if f.kind == "fifo"), key=lambda f: rank[self.out.nodes[f.src].kind])
        drams = [f for f in self.pending if f.kind == "dram"]
        used: set[str] = set()
        for f in real:
            base = e if len(real) == 1 else f"{e}:{f.dst}"
            name, n = base, 1
            while name in used:
                n += 1
                name = f"{base}#{n}"
            used.add(name)
            f.name = name
        for f in drams:
            f.name = f"{e}:dram" if len(drams) == 1 else f"{e}:dram->{f.dst}"
        self.out.fifos.extend(real + drams)


_TABLES = IdentityMemo(lambda k, ins, outs: step_tables(k, dict(ins), dict(outs)), 512)


def _tables(k: Kernel, ins: dict[str, ITensor], outs: dict[str, ITensor]) -> StepTables:
    """:func:`step_tables`, remembered per kernel IR object and layouts: a design is lowered again after every
    primitive and print."""
    return _TABLES(k, tuple(ins.items()), tuple(outs.items()))


def result_locals(k: Kernel) -> list[str]:
    """The local tensor each result of ``k`` returns (what its output stream is written from)."""
    ret = next((s for s in reversed(k.body) if isinstance(s, Return)), None)
    names = [v.name for v in ret.values] if ret is not None else []
    if len(names) != len(set(names)) or any(n in {p.name for p in k.params} for n in names):
        raise ShapeError(f"kernel '{k.name}' returns an input or one tensor twice; a dataflow task writes each "
                         "result from a local tensor of its own", k.loc,
                         hint="copy into a local (Y: f32[...] = 0.0, then a loop Y[i, j] = X[i, j]) and return Y")
    return names


def lower(g: DataflowGraph, kernels, regions: dict[str, int], prod: dict[str, ITensor],
          cons: dict[tuple[str, str], ITensor], bundles=()) -> Lowered:
    """``kernels(task)`` gives the task's current (scheduled) Kernel IR; ``bundles``: inputs one DMA reads in turn."""
    return _Builder(g, kernels, regions, prod, cons, bundles).build()
