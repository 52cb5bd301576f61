"""Emitted-code accounting: does the model price the C++ the project holds?

The C-simulation is built with ``-DSD_ACCOUNT``: every labelled loop of the emitted code counts how often it
is entered and how many iterations it runs (``SD_ENTRY`` / ``SD_TRIP`` in ``streamdsl_rt.h``).  Those counts
are then priced by the cost model's own rules: each task's process IR (the IR its C++ was written from) is
estimated again with every loop at the trips the run counted and every token move at the tokens it moved, and
every DMA at the words it moved.  Set beside the model's own cycles, per task and for the whole design (the
token simulator re-run at the accounted cycles), a difference shows a loop the model does not see or trips it
assumes wrongly; a counted loop the model has no node for is listed as unpriced.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from ...cost.model import estimate, top_copies
from ...dfg.channels import dma_timing
from ...dfg.timing import spread
from ...dfg.tokensim import DeadlockError, Task, simulate
from ...ir.nodes import For, If, Kernel, StreamMove, walk
from ...ir.toplevel import top_arrays


@dataclass
class Row:
    name: str
    kind: str  # "task" | "load" | "store" | "fork" | "converter"
    modeled: int
    accounted: int
    unpriced: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.accounted / max(1, self.modeled)


@dataclass
class Accounting:
    design: str
    rows: list[Row]
    modeled: int  # the model's cycles of the design (its token simulation)
    accounted: int  # the token simulation at the accounted cycles

    @property
    def ratio(self) -> float:
        return self.accounted / max(1, self.modeled)

    def worst(self) -> Row | None:
        return max(self.rows, key=lambda r: abs(math.log(max(r.ratio, 1e-9))), default=None)

    def __str__(self) -> str:
        w = max([len(r.name) for r in self.rows] + [8])
        out = [f"emitted-code accounting of {self.design}: modeled {self.modeled:,} cycles, accounted "
               f"{self.accounted:,} ({self.ratio:.3f}x)",
               f"  {'process':<{w}} {'kind':<9} {'modeled':>12} {'accounted':>12} {'ratio':>7}"]
        for r in self.rows:
            extra = f"  unpriced loops: {', '.join(r.unpriced)}" if r.unpriced else ""
            out.append(f"  {r.name:<{w}} {r.kind:<9} {r.modeled:>12,} {r.accounted:>12,} {r.ratio:>7.3f}{extra}")
        return "\n".join(out)


def parse_counts(text: str) -> dict[tuple[str, str], tuple[int, int]]:
    """``function label entries trips`` lines -> {(function, label): (entries, trips)}."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4:
            out[parts[0], parts[1]] = (int(parts[2]), int(parts[3]))
    return out


def _measured_process(proc: Kernel, labels: dict[int, str], counts: dict, fn: str, per: dict[str, int]):
    """(the process with its moves' counts as moved, {For: counted trips an entry}, labels not in the IR)."""
    measured: dict = {}

    def rebuild(stmts):
        out = []
        for s in stmts:
            if isinstance(s, For):
                new = dataclasses.replace(s, body=tuple(rebuild(s.body)))
                e, t = counts.get((fn, labels.get(id(s), "")), (0, 0))
                measured[new] = round(t / e) if e else 0
                out.append(new)
            elif isinstance(s, If):
                out.append(dataclasses.replace(s, then=tuple(rebuild(s.then)), orelse=tuple(rebuild(s.orelse))))
            elif isinstance(s, StreamMove):
                e, t = counts.get((fn, labels.get(id(s), "")), (0, 0))
                tokens = t // max(1, per[s.stream])
                execs = max(len(s.counts), e)
                c = tuple((tokens // e + (1 if i < tokens % e else 0)) if i < e else 0 for i in range(execs)) if e \
                    else (0,) * len(s.counts)
                out.append(dataclasses.replace(s, counts=c))
            else:
                out.append(s)
        return out

    body = tuple(rebuild(proc.body))
    known = set(labels.values())
    unpriced = sorted(lb for (f, lb) in counts if f == fn and lb not in known
                      and not any(lb.rsplit("_", 1)[-1].startswith(w) for w in ("init", "copy")))
    return dataclasses.replace(proc, body=body), measured, unpriced


def account_dataflow(prj, counts_text: str) -> Accounting:
    """Price a dataflow project's counted loops (see the module docstring)."""
    g, timing = prj.schedule, prj.timing
    low = g.lowered()
    counts = parse_counts(counts_text)
    plan = timing.plan
    rows: list[Row] = []
    tasks: dict[str, Task] = dict(timing.tasks)
    for n in low.nodes.values():
        if n.kind == "task":
            fn, proc, labels = prj.emitted["tasks"][n.name]
            fifos = {f.edge: f for f in low.streams if f.dst == n.name or f.src == n.name}
            per = {e: plan.token_cycles(f.name) for e, f in fifos.items()}  # beat-loop trips a token
            mproc, measured, unpriced = _measured_process(proc, labels, counts, fn, per)
            rep = estimate(mproc, timing.board, timing.clock_mhz, measured=measured)
            modeled = int(timing.kernels[n.name].cycles)
            rows.append(Row(n.name, "task", modeled, int(rep.cycles), unpriced))
            depth = max((lp.depth for lp in rep.loops if lp.depth is not None), default=0)
            tasks[n.name] = spread(n.name, max(1, int(rep.cycles)), int(depth), n.iters)
        elif n.kind in ("load", "store"):
            fn = prj.emitted["processes"][n.name]
            e, trips = next(((en, t) for (f, lb), (en, t) in counts.items() if f == fn), (0, 0))
            d = next(x for x in timing.dmas if x.name == n.name)
            lanes = plan.dma_ports[n.name]  # words an iteration of its beat loop: one a port
            words = trips * lanes if plan.aligned[n.name] else trips
            per_cycle = d.gbs * 1e9 / (timing.clock_mhz * 1e6)
            tok = max(1, d.tokens)
            ii, lat = dma_timing(tok, words * 64 // tok, per_cycle)
            old = tasks[n.name]
            tasks[n.name] = Task(n.name, old.iters, ii, lat, fill=old.fill, drain=old.drain)
            rows.append(Row(n.name, n.kind, timing.tasks[n.name].latency, tasks[n.name].latency))
        else:
            fn = prj.emitted["processes"].get(n.name)
            mine = {lb: c for (f, lb), c in counts.items() if f == fn or (fn is None and f.startswith(n.name))}
            trips = sum(t for _e, t in mine.values())
            old = timing.tasks[n.name]
            ii = max(1, round(trips / max(1, old.iters)))
            tasks[n.name] = Task(n.name, old.iters, ii, old.lat, fill=old.fill, drain=old.drain)
            rows.append(Row(n.name, n.kind, old.latency, tasks[n.name].latency))
    depths = g.depths(low)
    modeled = _cycles(list(timing.tasks.values()), timing.edges, depths)
    accounted = _cycles(list(tasks.values()), timing.edges, depths)
    return Accounting(g.graph.ir.name, rows, modeled, accounted)


def _cycles(tasks, edges, depths) -> int:
    try:
        return simulate(tasks, edges, depths).cycles
    except DeadlockError:
        return 0


def account_kernel(prj, counts_text: str) -> Accounting:
    """A kernel project: its function's loops at the counted trips."""
    counts = parse_counts(counts_text)
    k = prj.kernel
    labels = getattr(prj, "labels", {})
    fn = prj.top
    measured = {}
    for s in (x for st in k.body for x in walk(st)):
        if isinstance(s, For):
            e, t = counts.get((fn, labels.get(id(s), "L_" + s.var)), (0, 0))
            measured[s] = round(t / e) if e else 0
    modeled = estimate(k, prj.board, prj.clock_mhz, top=True)
    accounted = estimate(k, prj.board, prj.clock_mhz, measured=measured, top=True)
    copies = top_arrays(k)
    elements = {key: labs for key, labs in labels.items() if isinstance(key, tuple)}  # (what, array) -> labels
    copied = {}  # array -> the elements its copy ran (its innermost loop's trips)
    for name in copies.copied_in + copies.copied_out:
        labs = elements.get(("load", name), ()) + elements.get(("copy", name), ())
        copied[name] = max((counts.get((fn, lab), (0, 0))[1] for lab in labs[-1:]), default=0)
    known = {v for key, v in labels.items() if not isinstance(key, tuple)} | {
        lab for labs in elements.values() for lab in labs}
    unpriced = sorted(lab for (f, lab) in counts if f == fn and lab not in known)
    row = Row(k.name, "kernel", int(modeled.cycles), int(accounted.cycles) + top_copies(k, copied), unpriced)
    return Accounting(k.name, [row], row.modeled, row.accounted)


__all__ = ["Accounting", "Row", "account_dataflow", "account_kernel", "parse_counts"]
