"""``Schedule``: the current IR of one kernel plus the trace of primitives applied.

Loops and buffers are handles.  ``print(s)`` shows the scheduled IR,
``print(s.trace)`` shows Python that rebuilds it, ``s.trace.replay(kernel)``
applies the same primitives to a fresh schedule.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field

from .. import registry
from ..errors import ScheduleError, StreamDSLError, caller_loc, user_facing, user_facing_methods
from ..ir.nodes import Kernel
from . import primitives as P
from .fusion import compute_at
from .reuse import buffer_at, reuse_at
from .rewrite import loops_with_paths, unique_loop_vars



_caller_loc = caller_loc  # the user's call site, for located ScheduleErrors


@dataclass(frozen=True)
class LoopRef:
    """A loop of a schedule, named by its (unique) loop variable."""

    schedule: "Schedule" = field(repr=False, compare=False)
    var: str

    def __repr__(self) -> str:
        named = self.schedule._user_loops.get(self.var)
        if named is not None and named[0] != self.var:  # a second loop of one name, renamed apart
            return f"<loop {self.var}: the {_ordinal(named[1] + 1)} loop '{named[0]}' (line {named[2]})>"
        return f"<loop {self.var}>"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


@dataclass(frozen=True)
class BufferRef:
    schedule: "Schedule" = field(repr=False, compare=False)
    name: str

    def __repr__(self) -> str:
        return f"<buffer {self.name}>"


@dataclass(frozen=True)
class Step:
    """One recorded primitive: its name, arguments and the loops it created."""

    primitive: str
    args: tuple
    kwargs: tuple
    outs: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"primitive": self.primitive, "args": [_enc(a) for a in self.args],
                "kwargs": {k: _enc(v) for k, v in self.kwargs}, "outs": list(self.outs)}

    @staticmethod
    def from_json(d, n: int = 0) -> "Step":
        """Step ``n`` of a trace's JSON; anything but a recorded schedule primitive is a :class:`TraceError`."""
        if not isinstance(d, dict) or set(d) != {"primitive", "args", "kwargs", "outs"}:
            raise _bad(f"step {n} is not an object with the keys primitive, args, kwargs and outs", d)
        prim, args, kwargs, outs = d["primitive"], d["args"], d["kwargs"], d["outs"]
        if prim not in PRIMITIVES:
            raise _bad(f"step {n} names {prim!r}, which is not a schedule primitive", prim,
                       hint=f"a trace replays only the primitives: {', '.join(sorted(PRIMITIVES))}")
        if not isinstance(args, list) or not isinstance(kwargs, dict) or not isinstance(outs, list) \
                or not all(isinstance(o, str) for o in outs):
            raise _bad(f"step {n} ({prim}): args must be a list, kwargs an object and outs a list of names", d)
        return Step(prim, tuple(_dec(a, n) for a in args), tuple((k, _dec(v, n)) for k, v in kwargs.items()),
                    tuple(outs))


# What a trace may replay: the Schedule methods marked @primitive, each recording its steps under its own name.
PRIMITIVES: set[str] = set()


def primitive(method):
    """Mark a Schedule method as a primitive: its recorded steps replay (and only such steps do)."""
    PRIMITIVES.add(method.__name__)
    return method


class TraceError(ScheduleError):
    """A trace's JSON is not a trace streamdsl wrote (malformed, or naming something other than a primitive)."""

    kind = "trace error"


def _bad(message: str, what=None, hint: str | None = None) -> TraceError:
    shown = json.dumps(what)[:200] if what is not None else ""
    return TraceError(f"Trace.from_json: {message}" + (f": {shown}" if shown else ""), _caller_loc(),
                      hint=hint or "pass the text Trace.to_json() wrote")


def _enc(a):
    if isinstance(a, tuple) and len(a) == 2 and a[0] in ("loop", "buffer"):
        return {a[0]: a[1]}
    return a


def _dec(a, n: int = 0):
    """A step's argument: a loop or buffer handle ({"loop": name}), or a plain value (number, string, None,
    or a list of them)."""
    if isinstance(a, dict):
        if len(a) != 1 or next(iter(a)) not in ("loop", "buffer") or not isinstance(next(iter(a.values())), str):
            raise _bad(f"step {n}: an argument object must be {{\"loop\": name}} or {{\"buffer\": name}}", a)
        ((kind, name),) = a.items()
        return (kind, name)
    if isinstance(a, list):
        return [_dec(x, n) for x in a]
    if a is not None and not isinstance(a, (bool, int, float, str)):
        raise _bad(f"step {n}: unexpected argument", a)
    return a


class Trace:
    """The primitives applied to a schedule, printable as Python and as JSON."""

    def __init__(self, kernel_name: str, steps: tuple[Step, ...] = ()):
        self.kernel_name = kernel_name
        self.steps = list(steps)
        self.aliases: dict[str, tuple[str, int]] = {}  # a loop sharing its name with another: var -> (name, which)

    def __str__(self) -> str:
        lines = [f"s = sd.schedule({self.kernel_name})"]
        bound: set[str] = set()
        for st in self.steps:
            lines.append(step_line(st, "s", bound, self.aliases))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        """Jupyter: the trace as Python, escaped."""
        import html

        return f"<pre>{html.escape(str(self))}</pre>"

    def to_json(self) -> str:
        return json.dumps({"kernel": self.kernel_name, "steps": [s.to_json() for s in self.steps]}, indent=1)

    @staticmethod
    @user_facing
    def from_json(text: str) -> "Trace":
        """The trace :meth:`to_json` wrote; malformed JSON, or a step that is not a schedule primitive, is a
        :class:`TraceError` at the call."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if not isinstance(text, str):
            raise _bad(f"expected the JSON text of a trace, got {type(text).__name__}")
        try:
            d = json.loads(text)
        except json.JSONDecodeError as err:
            raise _bad(f"not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
        if not isinstance(d, dict) or not isinstance(d.get("kernel"), str) or not isinstance(d.get("steps"), list):
            raise _bad("expected an object with \"kernel\" (a name) and \"steps\" (a list)", d)
        return Trace(d["kernel"], tuple(Step.from_json(s, n) for n, s in enumerate(d["steps"])))

    @user_facing
    def replay(self, kernel) -> "Schedule":
        """Apply the recorded primitives to a fresh schedule of ``kernel`` (only primitives: see PRIMITIVES)."""
        s = Schedule(kernel)
        for n, st in enumerate(self.steps):
            apply_step(s, st, n)
        return s


def step_line(st: Step, var: str, bound: set[str] | None, aliases: dict | None = None) -> str:
    """One recorded step as a line of Python on schedule variable ``var``; ``bound``: the loop names already
    assigned to Python variables by earlier lines (updated), or None to assign none and name every loop;
    ``aliases``: loops that share their name with another, as (name, which) (``s.loop("h", 1)``)."""
    def ref(a):
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "loop":
            if bound is not None and a[1] in bound:
                return a[1]
            if aliases and a[1] in aliases:
                return f'{var}.loop("{aliases[a[1]][0]}", {aliases[a[1]][1]})'
            return f'{var}.loop("{a[1]}")'
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "buffer":
            return f'{var}.buffer("{a[1]}")'
        return repr(a)

    call = ", ".join([ref(a) for a in st.args] + [f"{k}={ref(v)}" for k, v in st.kwargs])
    if bound is None:
        return f"{var}.{st.primitive}({call})"
    lhs = ", ".join(st.outs)
    bound.update(st.outs)
    return f"{lhs + ' = ' if lhs else ''}{var}.{st.primitive}({call})"


def apply_step(s: "Schedule", st: Step, n: int = 0) -> None:
    """Apply step ``n``, ``st``, to schedule ``s`` (its handles resolved in ``s``): only a primitive, with the
    arguments it takes (a :class:`TraceError` otherwise)."""
    import inspect

    if st.primitive not in PRIMITIVES:
        raise _bad(f"step {n} names {st.primitive!r}, which is not a schedule primitive", st.primitive,
                   hint=f"a trace replays only the primitives: {', '.join(sorted(PRIMITIVES))}")
    method = getattr(s, st.primitive)
    args = [s._ref(a) for a in st.args]
    kwargs = {k: s._ref(v) for k, v in st.kwargs}
    try:
        inspect.signature(method).bind(*args, **kwargs)
    except TypeError as err:
        raise _bad(f"step {n} ({st.primitive}): {err}") from None
    method(*args, **kwargs)


@user_facing_methods
class Schedule:
    """Interactive schedule of one kernel; every primitive returns handles."""

    def __init__(self, kernel):
        ir = kernel.ir if hasattr(kernel, "ir") else kernel
        if not isinstance(ir, Kernel):
            raise ScheduleError(f"sd.schedule takes a kernel, got {type(kernel).__name__}", _caller_loc(),
                                hint="decorate the function with @sd.kernel")
        self.source = kernel
        self.ir: Kernel = unique_loop_vars(ir)
        self.trace = Trace(ir.name)
        self._deferred = False  # inside batch(): the IR is verified once, at the end
        # loops the user gave one name: var -> (their name, which of them in program order, line)
        self._user_loops: dict[str, tuple[str, int, int | None]] = {}
        count: dict[str, int] = {}
        for (_p, before), (_q, after) in zip(loops_with_paths(ir.body), loops_with_paths(self.ir.body)):
            n = count[before.var] = count.get(before.var, -1) + 1
            self._user_loops[after.var] = (before.var, n, before.loc.line if before.loc else None)
        self.trace.aliases = {v: (name, n) for v, (name, n, _line) in self._user_loops.items() if count[name] > 0}

    # ------------------------------------------------------------- handles
    def loops(self) -> list[LoopRef]:
        """Every loop, in nest order (outermost first, then program order)."""
        return [LoopRef(self, lp.var) for _p, lp in loops_with_paths(self.ir.body)]

    def loop(self, name, which: int | None = None) -> LoopRef:
        """The loop ``name``; when the kernel has several loops of that name, ``which`` (0, 1, ... in program
        order) picks one (each also has a handle of its own, ``h1``, shown by ``s.loops()``).  Code that walks
        the IR passes the loop's node (or a handle) instead of a name."""
        live = [lp.var for _p, lp in loops_with_paths(self.ir.body)]
        if not isinstance(name, str) and isinstance(getattr(name, "var", None), str) and name.var in live:
            return LoopRef(self, name.var)
        same = [v for v in live if self._user_loops.get(v, (None,))[0] == name]
        if which is not None:
            match = [v for v in same if self._user_loops[v][1] == which]
            if not match:
                raise ScheduleError(f"loop: kernel '{self.ir.name}' has no loop '{name}' number {which!r}",
                                    _caller_loc(), hint=f"it has {len(same)} loop(s) named '{name}', numbered from 0")
            return LoopRef(self, match[0])
        if len(same) > 1:
            places = ", ".join(f"s.loop({name!r}, {self._user_loops[v][1]}) (line {self._user_loops[v][2]}, "
                               f"handle {v})" for v in same)
            raise ScheduleError(f"loop: kernel '{self.ir.name}' has {len(same)} loops named '{name}'",
                                _caller_loc(), hint=f"pick one: {places}")
        if name not in live:
            raise ScheduleError(f"loop: kernel '{self.ir.name}' has no loop '{name}'", _caller_loc(),
                                hint=f"its loops are: {', '.join(live) or 'none'}")
        return LoopRef(self, name)

    def buffer(self, name: str) -> BufferRef:
        try:
            P._buffer(self.ir, name)
        except P.Refusal as r:
            raise ScheduleError(f"buffer: {r.message}", _caller_loc(), hint=r.hint) from None
        return BufferRef(self, name)

    def _ref(self, a):
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "loop":
            return LoopRef(self, a[1])
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "buffer":
            return BufferRef(self, a[1])
        return a

    # ----------------------------------------------------------- primitives
    @primitive
    def split(self, loop, factor, tail="guard"):
        """Split ``loop`` by ``factor`` into (outer, inner); see :func:`primitives.split`.

        ``tail="guard"`` guards the last partial tile of a non-dividing factor,
        ``tail="refuse"`` refuses such a factor.
        """
        k, o, i = self._apply("split", P.split, (loop, factor), {} if tail == "guard" else {"tail": tail}, plain=(1,))
        return LoopRef(self, o), LoopRef(self, i)

    def tile(self, l1, l2, f1, f2):
        """Split two nested loops and move both inner loops inside: (l1_o, l2_o, l1_i, l2_i).

        All or nothing: when a step is refused the schedule is left as it was.
        """
        ir, steps = self.ir, len(self.trace.steps)
        try:
            o1, i1 = self.split(l1, f1)
            o2, i2 = self.split(l2, f2)
            self.reorder(o1, o2, i1, i2)
        except ScheduleError:
            self.restore(ir, self.trace.steps[:steps])
            raise
        return o1, o2, i1, i2

    @primitive
    def inline(self, callee):
        """Inline every call to the kernel named ``callee`` (or given as a kernel); see :func:`primitives.inline`."""
        name = callee if isinstance(callee, str) else getattr(getattr(callee, "ir", callee), "name", callee)
        self._apply("inline", P.inline, (name,), {}, plain=(0,))

    @primitive
    def rfactor(self, loop, factor, lanes=None):
        """Split the scalar sums/max/min of ``loop`` over ``factor`` partial accumulators, ``lanes`` of them
        (default all) updated per pipeline iteration; see :func:`primitives.rfactor`.  Returns (outer loop,
        lane loop, partial buffer)."""
        kw = {} if lanes is None else {"lanes": lanes}
        _k, o, i, buf = self._apply("rfactor", P.rfactor, (loop, factor), kw, plain=(1,))
        return LoopRef(self, o), LoopRef(self, i), BufferRef(self, buf)

    @primitive
    def reorder(self, *loops):
        self._apply("reorder", lambda k, *vs: P.reorder(k, vs), loops, {})

    @primitive
    def fuse(self, *loops):
        _k, name = self._apply("fuse", lambda k, *vs: P.fuse(k, vs), loops, {})
        return LoopRef(self, name)

    @primitive
    def pipeline(self, loop, ii=1):
        self._apply("pipeline", P.pipeline, (loop,), {"ii": ii})

    @primitive
    def unroll(self, loop, factor=None):
        self._apply("unroll", P.unroll, (loop,), {"factor": factor})

    @primitive
    def partition(self, buf, dim=0, kind=None, factor=None):
        """``#pragma HLS array_partition``: ``dim=0`` every dimension; ``kind`` complete (the default, as in Vitis,
        when no factor is given), cyclic (the default with a factor) or block."""
        kind = kind if kind is not None else "complete" if factor is None else "cyclic"
        self._apply("partition", P.partition, (buf,), {"dim": dim, "kind": kind, "factor": factor})

    @primitive
    def buffer_at(self, buf, loop):
        """A local buffer for the window of ``buf`` one iteration of ``loop`` touches; returns it
        (:func:`reuse.buffer_at`)."""
        _k, name = self._apply("buffer_at", buffer_at, (buf, loop), {})
        return BufferRef(self, name)

    @primitive
    def reuse_at(self, buf, loop):
        """A line or window buffer of ``buf`` at ``loop``: what the next iteration reads again stays on chip
        (:func:`reuse.reuse_at`); returns the buffer (reuse it at an inner loop for a window)."""
        _k, name = self._apply("reuse_at", reuse_at, (buf, loop), {})
        return BufferRef(self, name)

    @primitive
    def compute_at(self, producer_loop, consumer_loop):
        """Compute the producer nest inside the consumer nest at ``consumer_loop``, the loops down to both fused;
        see :func:`fusion.compute_at`."""
        self._apply("compute_at", compute_at, (producer_loop, consumer_loop), {})

    @primitive
    def reassociate(self, loop):
        """Let the float sums inside ``loop`` be reordered (``reorder``, ``compute_at``, ``rfactor``); see
        :func:`primitives.reassociate`."""
        self._apply("reassociate", P.reassociate, (loop,), {})

    @primitive
    def bind(self, buf, storage):
        self._apply("bind", P.bind, (buf, storage), {})

    @primitive
    def interface(self, mode="ap_memory"):
        """The top function's array ports as ``ap_memory`` RAM ports or ``m_axi`` masters (the default)."""
        self._apply("interface", P.interface, (), {"mode": mode})

    @primitive
    def bind_op(self, loop, op="mul", impl="dsp"):
        """The integer multiplies inside ``loop`` in DSPs (``impl="dsp"``) or LUTs (``"fabric"``)."""
        self._apply("bind_op", P.bind_op, (loop, op, impl), {}, plain=(1, 2))

    @contextmanager
    def batch(self):
        """Apply several primitives with the IR verified once, when the block ends, instead of after each
        (the explorer's recipes run thousands); a primitive's refusal still leaves the IR as it was."""
        from ..ir.verify import verify

        outer, self._deferred = self._deferred, True
        try:
            yield self
        finally:
            self._deferred = outer
        if not outer:
            self.ir = verify(self.ir)

    def restore(self, ir: Kernel, steps) -> None:
        """Set the schedule to IR ``ir`` with the trace ``steps``: a state it was in (undoing what came after), or
        what those steps were seen to give from an IR equal to this one (a memo of primitives: the explorer's
        recipes).  ``ir`` is taken as verified: it is one the primitives made.  Not a primitive (no @primitive): it
        records no step of its own, so no trace replays it; the steps it sets are the ones that replay."""
        if not isinstance(ir, Kernel):
            raise ScheduleError(f"restore takes a kernel IR, got {type(ir).__name__}", _caller_loc(),
                                hint="s.restore(ir, steps) with an IR and the steps a schedule recorded")
        self.ir = ir
        self.trace.steps[:] = steps

    # --------------------------------------------------------------- plumbing
    def _apply(self, name, fn, args, kwargs, plain=()):
        """Run primitive ``fn``; the arguments at positions ``plain`` are values, not handles."""
        assert name in PRIMITIVES, f"{name}: a recorded step must be replayable (mark its method @primitive)"
        loc = _caller_loc()
        raw = [a if n in plain else self._unwrap(name, a, loc) for n, a in enumerate(args)]
        raw_kw = {k: self._unwrap(name, v, loc) if isinstance(v, (LoopRef, BufferRef)) else v
                  for k, v in kwargs.items()}  # keyword options (tail=, kind=) may be strings
        try:
            out = fn(self.ir, *raw, **raw_kw)
        except P.Refusal as r:
            raise ScheduleError(f"{name}: {r.message}", loc, hint=self._hint(r)) from None
        k, outs = (out[0], tuple(out[1:])) if isinstance(out, tuple) else (out, ())
        from ..ir.verify import verify

        self.ir = k if self._deferred else verify(k)
        enc = lambda a: ("loop", a.var) if isinstance(a, LoopRef) else ("buffer", a.name) if isinstance(a, BufferRef) else a  # noqa: E731
        self.trace.steps.append(Step(name, tuple(enc(a) for a in args),
                                     tuple((k_, enc(v)) for k_, v in kwargs.items()), outs))
        return out

    def _unwrap(self, prim, a, loc):
        if isinstance(a, LoopRef):
            if a.schedule is not self:
                raise ScheduleError(f"{prim}: {a!r} belongs to another schedule", loc,
                                    hint="use handles from this schedule: s.loop(name)")
            if not any(lp.var == a.var for _p, lp in loops_with_paths(self.ir.body)):
                raise ScheduleError(f"{prim}: loop '{a.var}' no longer exists (an earlier primitive replaced it)",
                                    loc, hint="use the handles the earlier primitive returned")
            return a.var
        if isinstance(a, BufferRef):
            if a.schedule is not self:
                raise ScheduleError(f"{prim}: {a!r} belongs to another schedule", loc,
                                    hint="use handles from this schedule: s.buffer(name)")
            return a.name
        if isinstance(a, str) and prim in ("partition", "bind"):
            return a
        if isinstance(a, str):
            raise ScheduleError(f"{prim}: pass loop handles, not the string {a!r}", loc,
                                hint=f's.{prim}(s.loop("{a}"), ...)')
        return a

    def _hint(self, r: P.Refusal) -> str | None:
        hint = r.hint or ""
        if r.loop is None:
            return hint or None
        text = str(self.ir).splitlines()
        marked = []
        for line in text:
            if line.lstrip().startswith(f"for {r.loop} in "):
                marked.append(line + "    <-- here")
            else:
                marked.append(line)
        idx = next((n for n, line in enumerate(marked) if line.endswith("<-- here")), 0)
        window = marked[max(0, idx - 3): idx + 4]
        return (hint + "\n" if hint else "") + "     in the IR:\n" + "\n".join("       " + w for w in window)

    def build(self, target: str = "hls", output=None, board="u55c", overwrite: bool = False):
        """Hand the scheduled IR to the backend registered as ``target``: ``"hls"`` a Vitis HLS project, ``"sim"``
        the reference simulator running the scheduled kernel (``s.build("sim")(A, B)``, as ``s(A, B)`` does)."""
        loc = _caller_loc()
        try:
            impl = registry.lookup("build.kernel", target)
        except StreamDSLError as err:
            raise ScheduleError(f"build: {err.message}", loc, hint=err.hint) from None
        try:
            return impl(self.ir, output=output, board=board, overwrite=overwrite)
        except StreamDSLError as err:
            if err.loc is None:  # a project error (board, folder): point at the build call
                err.loc = loc
            raise

    @user_facing
    def __call__(self, *args):
        """Run the scheduled kernel on the reference simulator: ``s.build("sim")(*args)``."""
        return registry.lookup("build.kernel", "sim")(self.ir).run(args, _caller_loc())

    def __str__(self) -> str:
        return str(self.ir)

    def __repr__(self) -> str:
        return f"<Schedule of {self.ir.name}: {len(self.trace.steps)} step(s)>"

    def _repr_html_(self) -> str:
        """Jupyter: the scheduled IR, and the trace that rebuilds it, escaped."""
        import html

        return (f"<div><b>{html.escape(repr(self))}</b></div><pre>{html.escape(str(self.ir))}</pre>"
                f"<details><summary>trace</summary><pre>{html.escape(str(self.trace))}</pre></details>")


def schedule(kernel) -> Schedule:
    """Start scheduling ``kernel`` (an ``@sd.kernel`` function or a Kernel IR)."""
    return Schedule(kernel)


_APPLIED: dict = {}  # (id of the IR, what) -> (the IR, the IR after, the steps it took, what fn returned)
_APPLIED_KEPT = 2048


def apply_cached(s: Schedule, what, fn):
    """``fn(s)``, or, when it was applied to this very IR before (``what`` names it), that IR and those trace
    steps again: a design explorer builds every candidate from the same kernels, and each new IR object would
    otherwise be modeled as a new kernel."""
    key = (id(s.ir), what)
    hit = _APPLIED.get(key)
    if hit is not None and hit[0] is s.ir:
        s.restore(hit[1], s.trace.steps + list(hit[2]))
        return hit[3]
    base, n = s.ir, len(s.trace.steps)
    got = fn(s)
    if len(_APPLIED) >= _APPLIED_KEPT:
        _APPLIED.pop(next(iter(_APPLIED)))
    _APPLIED[key] = (base, s.ir, tuple(s.trace.steps[n:]), got)
    return got
