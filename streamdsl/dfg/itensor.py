"""Iterative tensors (the paper's ``itensor``) and minimal stream layout converters.

An :class:`ITensor` describes how a tensor streams as tokens: each token is one
element (tile) of ``element`` shape; the iteration space has ``trips`` and
``steps`` (outermost first); the iteration map sends iteration dims to data
dims (``map[k]`` is the iteration dim that indexes data dim ``k``).  Token
``n`` enumerates the iteration indices lexicographically, index_j = n_j *
step_j, and carries ``tensor[offset : offset + element]`` with ``offset[k] =
index[map[k]]``.  An iteration dim no data dim uses replays the same slices.

Two equal itensors can be connected by a plain FIFO; otherwise a
:class:`Converter` reorders the stream through a local buffer.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

from ..errors import ShapeError, StreamDSLError
from ..types import DType, parse_dtype


class ITensorParseError(StreamDSLError):
    kind = "itensor parse error"


@dataclass(frozen=True)
class ITensor:
    dtype: DType
    element: tuple[int, ...]
    trips: tuple[int, ...]
    steps: tuple[int, ...]
    map: tuple[int, ...]

    def __post_init__(self):
        if len(self.trips) != len(self.steps):
            raise ShapeError(f"itensor has {len(self.trips)} trip counts but {len(self.steps)} steps")
        if len(self.map) != len(self.element):
            raise ShapeError(f"itensor map gives {len(self.map)} data dims but the element has {len(self.element)}")
        for d in self.map:
            if not 0 <= d < len(self.trips):
                raise ShapeError(f"itensor map uses d{d}, but the iteration space has {len(self.trips)} dims")
        if any(t < 1 for t in self.trips) or any(s < 1 for s in self.steps) or any(e < 1 for e in self.element):
            raise ShapeError("itensor trip counts, steps and element sizes must be positive")

    # ------------------------------------------------------------ parse / print
    _RE = re.compile(
        r"^\s*itensor\s*<\s*(?P<elem>[0-9x]+)x(?P<dt>[A-Za-z_][A-Za-z0-9_]*)\s*,\s*(?:iter_space\s*:\s*)?"
        r"\[(?P<trips>[^\]]*)\]\s*\*\s*\[(?P<steps>[^\]]*)\]\s*,\s*(?:iter_map\s*:\s*)?"
        r"\((?P<dims>[^)]*)\)\s*->\s*\((?P<res>[^)]*)\)\s*>\s*$")

    @classmethod
    def parse(cls, text: str) -> "ITensor":
        """Parse ``itensor<4x2xf32, [4,2]*[2,4], (d0,d1)->(d1,d0)>`` (or the paper's long form)."""
        m = cls._RE.match(text)
        if not m:
            raise ITensorParseError(f"not an itensor type: {text!r}",
                                    hint="write itensor<4x2xf32, [4,2]*[2,4], (d0,d1)->(d1,d0)>")
        dt = parse_dtype(m["dt"])
        if dt is None:
            raise ITensorParseError(f"unknown element type {m['dt']!r} in {text!r}")
        ints = lambda s: tuple(int(x) for x in s.replace(" ", "").split(",") if x)  # noqa: E731
        dims = [d.strip() for d in m["dims"].split(",") if d.strip()]
        if dims != [f"d{n}" for n in range(len(dims))]:
            raise ITensorParseError(f"iteration dims must be named d0, d1, ... in order, got ({m['dims']})")
        res = [r.strip() for r in m["res"].split(",") if r.strip()]
        if any(r not in dims for r in res):
            raise ITensorParseError(f"the map's results must be iteration dims, got ({m['res']})",
                                    hint="streamdsl supports projection maps such as (d0,d1,d2)->(d2,d0)")
        trips, steps = ints(m["trips"]), ints(m["steps"])
        if len(trips) != len(dims):
            raise ITensorParseError(f"{len(trips)} trip counts for {len(dims)} iteration dims in {text!r}")
        return cls(dt, ints(m["elem"].replace("x", ",")), trips, steps, tuple(dims.index(r) for r in res))

    def __str__(self) -> str:
        dims = ",".join(f"d{n}" for n in range(len(self.trips)))
        res = ",".join(f"d{n}" for n in self.map)
        return (f"itensor<{'x'.join(map(str, self.element))}x{self.dtype}, [{','.join(map(str, self.trips))}]*"
                f"[{','.join(map(str, self.steps))}], ({dims})->({res})>")

    __repr__ = __str__

    # ----------------------------------------------------------------- queries
    @property
    def num_tokens(self) -> int:
        return int(np.prod(self.trips))

    @property
    def tensor_shape(self) -> tuple[int, ...]:
        return tuple((self.trips[d] - 1) * self.steps[d] + e for d, e in zip(self.map, self.element))

    @property
    def token_bytes(self) -> int:
        bits = getattr(self.dtype, "bits", None) or getattr(self.dtype, "width")
        return int(np.prod(self.element)) * bits // 8

    def iteration_indices(self):
        """Iteration indices (n_j * step_j) of every token, in stream order."""
        for ns in itertools.product(*(range(t) for t in self.trips)):
            yield tuple(n * s for n, s in zip(ns, self.steps))

    def offsets(self) -> list[tuple[int, ...]]:
        """The data offset of every token, in stream order."""
        return [tuple(idx[d] for d in self.map) for idx in self.iteration_indices()]

    def tokens(self, tensor: np.ndarray) -> list[np.ndarray]:
        """The tiles ``tensor`` streams as, in order."""
        if tuple(tensor.shape) != self.tensor_shape:
            raise ShapeError(f"{self} streams a tensor of shape {self.tensor_shape}, got {tensor.shape}")
        return [tensor[tuple(slice(o, o + e) for o, e in zip(off, self.element))] for off in self.offsets()]

    def replays(self) -> tuple[int, ...]:
        """Iteration dims no data dim uses: the slices stream again on each of their iterations."""
        return tuple(d for d in range(len(self.trips)) if d not in self.map)


@dataclass(frozen=True)
class Converter:
    """A stream layout converter from ``src`` to ``dst`` through one local buffer.

    ``shared`` are the outer loop levels both streams traverse identically; the
    converter runs inside them, so ``buffer_shape`` covers one iteration of the
    shared loops only (ping-pong doubling not counted).
    """

    src: ITensor
    dst: ITensor
    shared: tuple[int, ...]
    buffer_shape: tuple[int, ...]

    @property
    def is_identity(self) -> bool:
        return self.src == self.dst

    @property
    def buffer_bytes(self) -> int:
        bits = getattr(self.src.dtype, "bits", None) or getattr(self.src.dtype, "width")
        return int(np.prod(self.buffer_shape)) * bits // 8 if self.buffer_shape else 0

    def __str__(self) -> str:
        if self.is_identity:
            return f"fifo({self.src})"
        loops = ", ".join(f"d{d}:{self.src.trips[d]}" for d in self.shared) or "none"
        return (f"converter {self.src} -> {self.dst}: buffer {'x'.join(map(str, self.buffer_shape))}x{self.src.dtype}"
                f" ({self.buffer_bytes} B, x2 ping-pong), shared loops: {loops}")

    __repr__ = __str__

    def run(self, tensor: np.ndarray) -> list[np.ndarray]:
        """Convert ``tensor``'s src token stream into dst tokens, block by block, through the buffer.

        Within each iteration of the shared loops the converter takes the src
        tokens of that block into a buffer of ``buffer_shape`` and emits the
        dst tokens of the block from it; a token outside the buffer window is
        a bug in the sizing and raises.
        """
        src_tokens = list(zip(self.src.iteration_indices(), self.src.offsets(), self.src.tokens(tensor)))
        dst_offsets = list(zip(self.dst.iteration_indices(), self.dst.offsets()))
        key = lambda idx: tuple(idx[d] for d in self.shared)  # noqa: E731
        out = []
        blocks_src: dict = {}
        for idx, off, tile in src_tokens:
            blocks_src.setdefault(key(idx), []).append((off, tile))
        for k, group in itertools.groupby(dst_offsets, key=lambda t: key(t[0])):
            srcs = blocks_src.get(k, [])
            if not srcs:
                raise ShapeError(f"converter block {k} receives no source tokens")
            origin = tuple(min(off[d] for off, _ in srcs) for d in range(len(self.buffer_shape)))
            buf = np.zeros(self.buffer_shape, dtype=tensor.dtype)
            for off, tile in srcs:
                rel = [o - b for o, b in zip(off, origin)]
                if any(r < 0 or r + e > n for r, e, n in zip(rel, tile.shape, self.buffer_shape)):
                    raise ShapeError(f"source token at {off} falls outside the {self.buffer_shape} buffer")
                buf[tuple(slice(r, r + e) for r, e in zip(rel, tile.shape))] = tile
            for _idx, off in group:
                rel = [o - b for o, b in zip(off, origin)]
                if any(r < 0 or r + e > n for r, e, n in zip(rel, self.dst.element, self.buffer_shape)):
                    raise ShapeError(f"destination token at {off} is not in the buffer of block {k}")
                out.append(buf[tuple(slice(r, r + e) for r, e in zip(rel, self.dst.element))].copy())
        return out


def converter(src: ITensor, dst: ITensor) -> Converter:
    """The minimal layout converter between two itensors of one tensor (the paper's algorithm 1).

    A data dim shrinks to the element size only when both types have the same
    element size there and both maps send it to the same loop level, with the
    same trip count and step, and every loop outside that level is shared too
    (a shared loop under an unshared parent is dropped).  Other dims buffer
    their full extent.
    """
    if src.tensor_shape != dst.tensor_shape:
        raise ShapeError(f"cannot convert between itensors of different tensors: {src.tensor_shape} vs {dst.tensor_shape}")
    if src.dtype != dst.dtype:
        raise ShapeError(f"cannot convert {src.dtype} tokens into {dst.dtype} tokens")
    if src == dst:
        return Converter(src, dst, tuple(range(len(src.trips))), tuple(src.element))
    shared: list[int] = []
    for level in range(min(len(src.trips), len(dst.trips))):
        if src.trips[level] != dst.trips[level] or src.steps[level] != dst.steps[level]:
            break
        ks = [k for k, d in enumerate(src.map) if d == level]
        kd = [k for k, d in enumerate(dst.map) if d == level]
        if ks != kd or any(src.element[k] != dst.element[k] for k in ks):
            break
        shared.append(level)
    shape = tuple(src.element[k] if src.map[k] in shared else n for k, n in enumerate(src.tensor_shape))
    return Converter(src, dst, tuple(shared), shape)
