"""Synthesizability lint over the IR the HLS backend emits (located errors)."""
from __future__ import annotations

from ...errors import StreamDSLError
from ...ir.nodes import Alloc, Const, For, Kernel, walk


class LintError(StreamDSLError):
    kind = "HLS lint error"


def lint(k: Kernel, _stack: tuple[str, ...] = ()) -> None:
    """Static sizes, no recursion, bounded loops, pragmas on the right constructs."""
    if k.name in _stack:
        raise LintError(f"kernel '{k.name}' calls itself (through {' -> '.join(_stack)}); hardware has no recursion",
                        k.loc, hint="write the recursion as a loop")
    for c in k.callees:
        lint(c, _stack + (k.name,))
    for n in (n for s in k.body for n in walk(s)):
        if isinstance(n, For):
            if not isinstance(n.start, Const) and not isinstance(n.stop, Const) and "pipeline" in n.attrs:
                pass  # variable-bound pipelined loops are legal; Vitis reports their latency as a range
            if n.attrs.get("unroll") == 0 and not (isinstance(n.start, Const) and isinstance(n.stop, Const)):
                raise LintError(f"loop '{n.var}' is fully unrolled but its trip count is not a constant", n.loc,
                                hint="unroll by a factor instead")
            ii = n.attrs.get("pipeline")
            if ii is not None and (not isinstance(ii, int) or ii < 1):
                raise LintError(f"loop '{n.var}' has pipeline II={ii!r}; II must be a positive integer", n.loc)
        if isinstance(n, Alloc):
            for dim, kind, factor in n.attrs.get("partition", ()):
                shape = n.type.shape
                if not 0 <= dim <= len(shape):
                    raise LintError(f"partition of '{n.name}' names dim {dim}, but it has {len(shape)}", n.loc)
                if kind != "complete" and any(factor > e for e in (shape if dim == 0 else (shape[dim - 1],))):
                    raise LintError(f"partition factor {factor} of '{n.name}' exceeds its dimension", n.loc)
