"""``DataflowTrace``: the primitives applied to a dataflow schedule, as Python and as JSON, and their replay.

Each dataflow step (``stream``, ``fuse``, ``size_fifos``, ...) records its arguments with handles as
``("task" | "edge" | "fifo", name)``, and a snapshot of how many steps each task's kernel schedule had
then, so that a kernel primitive applied between two dataflow steps (``s.pipeline(...)`` after
``g.schedule(task)``) is printed and replayed between them, as it happened: FIFO sizing depends on it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import ScheduleError, caller_loc
from ..sched.schedule import Step, apply_step, step_line

PRIMITIVES = ("schedule", "stream", "bundle", "store_at", "ports", "fuse", "auto_fuse", "fifo", "size_fifos")
HANDLES = ("task", "edge", "fifo")


@dataclass(frozen=True)
class DataflowStep:
    primitive: str
    args: tuple
    kwargs: tuple
    kernel_steps: tuple[tuple[str, int], ...] = ()  # (task, how many kernel steps it had) when this step ran

    def to_json(self) -> dict:
        return {"primitive": self.primitive, "args": [_enc(a) for a in self.args],
                "kwargs": {k: _enc(v) for k, v in self.kwargs}, "kernel_steps": dict(self.kernel_steps)}


def _enc(a):
    if isinstance(a, tuple) and len(a) == 2 and a[0] in HANDLES:
        return {a[0]: a[1]}
    if isinstance(a, tuple):
        return {"tuple": [_enc(x) for x in a]}
    return a


def _dec(a):
    if isinstance(a, dict) and set(a) == {"tuple"}:
        return tuple(_dec(x) for x in a["tuple"])
    if isinstance(a, dict) and len(a) == 1 and next(iter(a)) in HANDLES:
        ((kind, name),) = a.items()
        return (kind, name)
    if isinstance(a, list):
        return [_dec(x) for x in a]
    return a


def _bad(message: str) -> ScheduleError:
    return ScheduleError(f"dataflow trace: {message}", caller_loc(),
                         hint="a trace comes from print(g.trace) / g.trace.to_json() of a dataflow schedule")


class DataflowTrace:
    """The steps of one dataflow schedule; ``str()`` is Python that rebuilds it, ``replay(fn)`` applies it."""

    def __init__(self, name: str, steps=(), kernels: dict[str, tuple[Step, ...]] | None = None, live=None):
        self.name = name
        self.steps: list[DataflowStep] = list(steps)
        self._kernels: dict[str, tuple[Step, ...]] = dict(kernels or {})
        self._live = live  # a schedule's own trace: its task -> kernel Schedule dict, read as it grows

    @property
    def kernels(self) -> dict[str, tuple[Step, ...]]:
        """Task -> the steps of its kernel schedule."""
        if self._live is not None:
            return {t: tuple(s.trace.steps) for t, s in self._live.items()}
        return dict(self._kernels)

    def _interleaved(self):
        """(``"df"``, step) and (``"kernel"``, task, step) in the order they were applied."""
        done: dict[str, int] = {}
        kernels = self.kernels
        for st in self.steps:
            for task, n in st.kernel_steps:
                for k in kernels.get(task, ())[done.get(task, 0):n]:
                    yield "kernel", task, k
                done[task] = n
            yield "df", st
        for task, steps in kernels.items():
            for k in steps[done.get(task, 0):]:
                yield "kernel", task, k

    def __str__(self) -> str:
        lines = [f"g = sd.schedule({self.name})"]

        def ref(a):
            if isinstance(a, tuple) and len(a) == 2 and a[0] in ("task", "edge"):
                return f'g.{a[0]}("{a[1]}")'
            if isinstance(a, tuple) and len(a) == 2 and a[0] == "fifo":
                return f'g.fifo_handle("{a[1]}")'
            return repr(a)

        for item in self._interleaved():
            if item[0] == "df":
                st = item[1]
                call = ", ".join([ref(a) for a in st.args] + [f"{k}={ref(v)}" for k, v in st.kwargs])
                if st.primitive == "schedule":
                    lines.append(f"s_{st.args[0][1]} = g.schedule({call})")
                else:
                    lines.append(f"g.{st.primitive}({call})")
            else:
                _, task, step = item
                aliases = self._live[task].trace.aliases if self._live is not None and task in self._live else None
                lines.append(step_line(step, f"s_{task}", None, aliases))  # loops named: kernels may share names
        return "\n".join(lines)

    __repr__ = __str__

    def __contains__(self, text: str) -> bool:
        return text in str(self)

    def to_json(self) -> str:
        kernels = self.kernels
        return json.dumps({"dataflow": self.name, "steps": [s.to_json() for s in self.steps],
                           "kernels": {t: [k.to_json() for k in ks] for t, ks in kernels.items()}}, indent=1)

    @staticmethod
    def from_json(text: str) -> "DataflowTrace":
        try:
            d = json.loads(text)
            steps = [DataflowStep(s["primitive"], tuple(_dec(a) for a in s["args"]),
                                  tuple((k, _dec(v)) for k, v in s["kwargs"].items()),
                                  tuple((t, int(n)) for t, n in s.get("kernel_steps", {}).items()))
                     for s in d["steps"]]
            kernels = {t: tuple(Step.from_json(k) for k in ks) for t, ks in d.get("kernels", {}).items()}
            name = d["dataflow"]
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise _bad(f"not a dataflow trace ({type(err).__name__}: {err})") from None
        for s in steps:
            if s.primitive not in PRIMITIVES:
                raise _bad(f"'{s.primitive}' is not a dataflow schedule primitive (they are {', '.join(PRIMITIVES)})")
        return DataflowTrace(name, steps, kernels)

    def replay(self, fn):
        """Apply the recorded steps to a fresh schedule of dataflow function ``fn``; returns it."""
        from .dfschedule import DataflowSchedule

        g = DataflowSchedule(fn)
        for item in self._interleaved():
            if item[0] == "kernel":
                _, task, step = item
                apply_step(g.schedule(g.task(task)), step)
                continue
            st = item[1]
            if st.primitive not in PRIMITIVES:
                raise _bad(f"'{st.primitive}' is not a dataflow schedule primitive")
            args = [g._handle(a) for a in st.args]
            kwargs = {k: g._handle(v) for k, v in st.kwargs}
            getattr(g, st.primitive)(*args, **kwargs)
        return g


__all__ = ["DataflowStep", "DataflowTrace", "PRIMITIVES"]
