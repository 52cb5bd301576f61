"""Results of pure functions of immutable IR objects, remembered by the object's identity."""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable


class IdentityMemo:
    """``fn(obj, *extra)`` remembered per (``id(obj)``, ``extra``), the least recently used dropped past ``size``.

    IR nodes are immutable, so identity is a sound key; each entry keeps its
    object alive, so an id cannot be reused while its entry stands."""

    def __init__(self, fn: Callable, size: int):
        self.fn, self.size = fn, size
        self._entries: OrderedDict[tuple, tuple] = OrderedDict()

    def __call__(self, obj, *extra):
        key = (id(obj),) + extra
        hit = self._entries.get(key)
        if hit is not None and hit[0] is obj:
            self._entries.move_to_end(key)
            return hit[1]
        value = self.fn(obj, *extra)
        self._entries[key] = (obj, value)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value
