"""Stream layouts of dataflow edges and the DMAs that load and store them.

``g.stream(edge, tile=(r, c), order=...)`` describes a layout the way a user
thinks of it (a tile and the order in which tiles are visited);
:func:`tiled` turns that into the paper's :class:`~.itensor.ITensor`, which
is what the rest of the dataflow layer compares and sizes.  An edge nobody
streamed is one token carrying the whole tensor (:func:`whole`): correct but
with no overlap between producer and consumer, which is what a design gets
before it is tuned.

DMAs sit where a stream enters or leaves a fused region.  As in the paper, a
DMA moves the tensor *packed* in its tile layout (a 64x64 tensor with 16x16
tiles is stored as 4x4x16x16, tiles in stream order) so every token is a
contiguous burst, widened to the 512-bit HBM/AXI bus: one bus word holds
``512 / bits`` elements (16 f32, 64 int8).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..types import DType, TensorType
from .itensor import ITensor

BUS_BITS = 512  # the AXI/HBM data width the paper widens DMAs to


class LayoutRefusal(Exception):
    """A layout request that cannot be honoured; the caller turns it into a located ScheduleError."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


def dtype_bits(dt: DType) -> int:
    bits = getattr(dt, "bits", None)
    return int(bits if bits is not None else dt.width)


def whole(t: TensorType) -> ITensor:
    """The default layout: one token that is the whole tensor."""
    return ITensor(t.dtype, tuple(t.shape), (1,) * t.rank, tuple(max(1, n) for n in t.shape), tuple(range(t.rank)))


def tiled(t: TensorType, tile, order=None) -> ITensor:
    """Tiles of shape ``tile`` visited with data dim ``order[0]`` outermost (row-major by default).

    Iteration dim ``j`` walks data dim ``order[j]`` in steps of its tile size,
    so ``tile=(4, 2), order=(1, 0)`` on an 8x8 tensor is the paper's Fig. 5 (b)
    ``itensor<4x2xf32, [4,2]*[2,4], (d0,d1)->(d1,d0)>``.
    """
    try:
        tile = tuple(int(x) for x in tile)
    except (TypeError, ValueError):
        raise LayoutRefusal(f"tile must be a tuple of integers, got {tile!r}",
                            hint=f"tile=({', '.join('1' for _ in t.shape)}) for a tensor {t}") from None
    if len(tile) != t.rank:
        raise LayoutRefusal(f"tile {tile} has {len(tile)} dims but the tensor {t} has {t.rank}",
                            hint=f"give one tile size per dim, e.g. tile={tuple(t.shape)} for the whole tensor")
    bad = [(d, n, s) for d, (n, s) in enumerate(zip(t.shape, tile)) if s < 1 or n % s]
    if bad:
        d, n, s = bad[0]
        divisors = [x for x in range(1, n + 1) if n % x == 0]
        raise LayoutRefusal(f"tile {tile} does not divide the tensor shape {tuple(t.shape)} (dim {d}: {n} by {s})",
                            hint=f"dim {d} can be tiled by {', '.join(map(str, divisors))}")
    if order is None:
        order = tuple(range(t.rank))
    try:
        order = tuple(int(x) for x in order)
    except (TypeError, ValueError):
        raise LayoutRefusal(f"order must be a permutation of the data dims, got {order!r}",
                            hint=f"e.g. order={tuple(reversed(range(t.rank)))} for column-major tiles") from None
    if sorted(order) != list(range(t.rank)):
        raise LayoutRefusal(f"order {order} is not a permutation of the data dims 0..{t.rank - 1}",
                            hint=f"list every dim once, outermost first, e.g. order={tuple(reversed(range(t.rank)))}")
    trips = tuple(t.shape[d] // tile[d] for d in order)
    steps = tuple(tile[d] for d in order)
    imap = tuple(order.index(k) for k in range(t.rank))
    return ITensor(t.dtype, tile, trips, steps, imap)


def check_layout(t: TensorType, it: ITensor) -> ITensor:
    """An itensor given directly must stream this edge's tensor."""
    if not isinstance(it, ITensor):
        try:
            it = ITensor.parse(str(it))
        except Exception as err:  # ITensorParseError carries its own hint
            raise LayoutRefusal(getattr(err, "message", str(err)), getattr(err, "hint", None)) from None
    if it.dtype != t.dtype:
        raise LayoutRefusal(f"{it} streams {it.dtype} but the edge carries {t}",
                            hint=f"write the element type as x{t.dtype}")
    if it.tensor_shape != tuple(t.shape):
        raise LayoutRefusal(f"{it} covers a tensor of shape {it.tensor_shape}, but the edge is {t}",
                            hint="trip counts times steps (plus the element) must span the tensor")
    return it


def describe(it: ITensor) -> str:
    """The itensor, plus its token count (the number the timing model uses)."""
    return f"{it} ({it.num_tokens} token{'s' if it.num_tokens != 1 else ''})"


@dataclass(frozen=True)
class DMA:
    """A load (DRAM -> stream) or store (stream -> DRAM) at a region boundary."""

    name: str
    tensor: str
    direction: str  # "load" | "store"
    region: int
    layout: ITensor
    tensor_type: TensorType

    @property
    def lanes(self) -> int:
        """Elements per 512-bit bus word."""
        return max(1, BUS_BITS // dtype_bits(self.layout.dtype))

    @property
    def packed_shape(self) -> tuple[int, ...]:
        """The tensor as stored for this DMA: tile grid in stream order, then the tile.

        Replayed iteration dims are not stored twice: the DMA re-reads them.
        """
        grid = tuple(n for d, n in enumerate(self.layout.trips) if d in self.layout.map)
        return grid + tuple(self.layout.element)

    @property
    def words_per_token(self) -> int:
        return math.ceil(math.prod(self.layout.element) / self.lanes)

    @property
    def words(self) -> int:
        """Bus words moved per run (replays re-read from DRAM)."""
        return self.words_per_token * self.layout.num_tokens

    @property
    def bus_bits(self) -> int:
        return BUS_BITS

    def __str__(self) -> str:
        arrow = f"DRAM -> {self.tensor}" if self.direction == "load" else f"{self.tensor} -> DRAM"
        packed = "x".join(map(str, self.packed_shape))
        return (f"{self.name} ({arrow}, region {self.region}): packed {packed}x{self.layout.dtype}, "
                f"{self.bus_bits}-bit bus: {self.lanes} lanes, {self.words_per_token} word(s)/token, "
                f"{self.words} words, stream {self.layout}")
