"""What a kernel's top function does with its arrays, shared by the HLS emitter and the cost model.

A kernel built as a project is the top function: its array parameters and results are its ports.  Vitis
takes neither ``array_partition`` nor ``bind_storage`` on a port, so

* a partitioned parameter is copied into a local first (a pipelined loop over its elements);
* a returned local with such pragmas (or one not allocated at the top of the body, or returned twice) is
  computed in a local and copied to its port at the end; any other returned local is computed in the port
  itself ("in place");
* every other access of a parameter, and every access of a result computed in place, goes through the port:
  on the default ``m_axi`` interface one AXI read channel and one write channel, a value each a cycle.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..types import TensorType
from .nodes import Alloc, Kernel, Ref, Return


@dataclass(frozen=True)
class TopArrays:
    copied_in: tuple[str, ...]  # partitioned parameters, copied into locals before the body
    copied_out: tuple[str, ...]  # returned locals copied to their ports after the body
    in_place: tuple[str, ...]  # returned locals computed in their ports
    ports: tuple[str, ...]  # the arrays whose accesses go through a port (parameters and results in place)


def top_arrays(k: Kernel) -> TopArrays:
    """How the top function of ``k`` keeps its arrays (see the module docstring)."""
    ret = k.body[-1] if k.body and isinstance(k.body[-1], Return) else None
    params = {p.name for p in k.params if isinstance(p.type, TensorType)}
    partitioned = {name for name, _ in k.attrs.get("partition", ())}
    top_allocs = {s.name: s for s in k.body if isinstance(s, Alloc)}
    values = list(ret.values) if ret is not None else []
    copied_out, in_place = [], []
    for n, (v, t) in enumerate(zip(values, k.results)):
        if not isinstance(t, TensorType) or not isinstance(v, Ref):
            continue
        if v.name in params:  # a parameter returned: copied to the result's port
            copied_out.append(v.name)
            continue
        others = [x.name for i, x in enumerate(values) if i != n and isinstance(x, Ref)]
        a = top_allocs.get(v.name)
        if a is not None and not a.attrs and v.name not in others:
            in_place.append(v.name)
        else:
            copied_out.append(v.name)
    copied_in = [p.name for p in k.params if p.name in params and p.name in partitioned]
    ports = [p for p in sorted(params) if p not in partitioned] + in_place
    return TopArrays(tuple(copied_in), tuple(dict.fromkeys(copied_out)), tuple(in_place), tuple(ports))


__all__ = ["TopArrays", "top_arrays"]
