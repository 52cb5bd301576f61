"""How tensors move on the bus and lie in DRAM: beats of a stream, words of a DMA.

**Beats.**  A stream token (an itensor's element tile, ``N`` values of ``b``
bits) moves as ``B = ceil(N / L)`` beats of ``L = min(N, 512 // b)`` values
(flat, row-major order of the tile; the last beat may be partly empty), so no
FIFO is wider than the 512-bit bus: 16 f32, 64 int8 or 128 int4 values a beat.
A stream whose DMA holds ``P`` memory channels is ``P`` FIFOs side by side
(its *lanes*): beat ``j`` of a token goes to FIFO ``j % P``, so ``P`` beats
move a cycle and a token takes ``ceil(B / P)`` cycles.

**Words.**  Every tensor a DMA reads or writes lies in DRAM as dense 512-bit
words (``ap_uint<512>``; value ``i`` of a word in bits ``[i*b, (i+1)*b)``,
int4 two to a byte), a tile at a time, one word a beat (:class:`Packing`):

* ``rows``: the tensor's own row-major order.  Tensors that several DMAs share
  (a KV cache read whole and written a row at a time), results and anything
  the host reads back lie this way; a DMA gathers its tiles from rows.
* ``tiles``: the unique tiles of the one load layout that reads it, in stream
  order, each tile row-major (the paper's packed layout).  A read-only input
  with one load DMA lies this way, so its DMA reads the words in order: one
  burst, whatever order the consumer walks the tensor in.

A DMA with ``P`` lanes reads word ``w`` of its tensor through port ``w % P``
(each port is an m_axi bundle on its own HBM channel), so the words are split
over ``P`` buffers (:meth:`Packing.split`).  :func:`pack` / :func:`unpack`
turn NumPy arrays into those buffers and back: the C-simulation testbench and
the accelerator's host use them, so what the host writes is what the DMA reads.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..numeric import compute_np, convert
from ..types import FixedType, FloatType, IntType, TensorType
from .itensor import ITensor

BUS_BITS = 512  # the AXI/HBM data width: one beat, one DRAM word
WORD_BYTES = BUS_BITS // 8


def elem_bits(dtype) -> int:
    bits = getattr(dtype, "bits", None)
    return int(bits if bits is not None else dtype.width)


@dataclass(frozen=True)
class Beats:
    """The beats of one token: ``lanes`` values of ``bits`` bits each, ``beats`` of them a token."""

    lanes: int
    beats: int
    bits: int
    values: int  # values in the token

    @property
    def width(self) -> int:
        """Bits of one beat (the FIFO's width)."""
        return self.lanes * self.bits

    def cycles(self, parallel: int = 1) -> int:
        """Cycles to move one token over ``parallel`` FIFOs (one beat a FIFO a cycle)."""
        return -(-self.beats // max(1, parallel))


def beats_of(it: ITensor) -> Beats:
    n = math.prod(it.element)
    b = elem_bits(it.dtype)
    lanes = max(1, min(n, BUS_BITS // b))
    return Beats(lanes, -(-n // lanes), b, n)


@dataclass(frozen=True)
class Packing:
    """Where each value of a tensor lies in its DRAM words: the unique tiles of ``layout`` (a layout whose tiles
    partition the tensor) in stream order, each tile as its beats, one word a beat; tiles smaller than a word
    that divide it lie ``per_word`` to a word (32 int4 values: four tiles a word), others a word each."""

    tensor_type: TensorType
    layout: ITensor

    @property
    def bits(self) -> int:
        return elem_bits(self.tensor_type.dtype)

    @property
    def beats(self) -> Beats:
        return beats_of(self.layout)

    @property
    def tiles(self) -> int:
        return math.prod(n for k, n in enumerate(self.layout.trips) if k in self.layout.map)

    @property
    def per_word(self) -> int:
        """Tiles a word holds (1 unless a tile's bits divide a word's)."""
        bt = self.beats
        bits = bt.values * self.bits
        return BUS_BITS // bits if bt.beats == 1 and bits < BUS_BITS and BUS_BITS % bits == 0 else 1

    @property
    def words(self) -> int:
        return -(-self.tiles // self.per_word) * self.beats.beats

    @property
    def bytes(self) -> int:
        return self.words * WORD_BYTES

    def rank_exprs(self, index: list[str]) -> str:
        """C expression of the tile rank of the value at multi-index ``index`` (C expressions, one per dim)."""
        it, rank = self.layout, "0"
        for k, trips in enumerate(it.trips):
            if k not in it.map or trips == 1:
                continue
            d = it.map.index(k)
            digit = index[d] if it.steps[k] == 1 else f"({index[d]}) / {it.steps[k]}"
            rank = digit if rank == "0" else f"({rank}) * {trips} + {digit}"
        return rank

    def word_expr(self, index: list[str], beat: str) -> str:
        """C expression of the word holding beat ``beat`` of the tile that holds ``index`` (its first value); with
        several tiles a word, the word that holds the tile."""
        B, K = self.beats.beats, self.per_word
        rank = self.rank_exprs(index)
        if K > 1:
            return rank if rank == "0" else f"({rank}) / {K}"
        base = rank if B == 1 else f"({rank}) * {B}"
        return base if beat == "0" else f"{base} + {beat}"

    def slot_in_word(self, index: list[str]) -> str:
        """C expression of the first value slot of the tile that holds ``index`` within its word (0 but for
        several tiles a word)."""
        K = self.per_word
        if K == 1:
            return "0"
        rank = self.rank_exprs(index)
        return "0" if rank == "0" else f"(({rank}) % {K}) * {self.beats.values}"

    def positions(self) -> np.ndarray:
        """For each value in row-major order of the tensor, its slot among the words' values (word * per word
        + lane; :data:`BUS_BITS` // bits values a word)."""
        shape = tuple(self.tensor_type.shape)
        it, bt = self.layout, self.beats
        flat = np.arange(math.prod(shape), dtype=np.int64)
        idx = np.unravel_index(flat, shape)
        rank = np.zeros_like(flat)
        for k, trips in enumerate(it.trips):
            if k in it.map and trips > 1:
                d = it.map.index(k)
                rank = rank * trips + idx[d] // it.steps[k]
        inner = np.zeros_like(flat)
        for d, e in enumerate(it.element):
            inner = inner * e + idx[d] % e
        K = self.per_word
        if K > 1:
            return (rank // K) * (BUS_BITS // self.bits) + (rank % K) * bt.values + inner
        word = rank * bt.beats + inner // bt.lanes
        return word * (BUS_BITS // self.bits) + inner % bt.lanes

    @property
    def plain(self) -> bool:
        """Is the DRAM image the tensor's row-major values back to back (no padding, no reordering)?"""
        n = math.prod(self.tensor_type.shape)
        return self.words * (BUS_BITS // self.bits) == n and bool((self.positions() == np.arange(n)).all())

    def split(self, lanes: int) -> list[int]:
        """Words of each of ``lanes`` port buffers (word ``w`` in buffer ``w % lanes``)."""
        return [-(-(self.words - j) // lanes) for j in range(lanes)]

    def __str__(self) -> str:
        bt = self.beats
        each = f"{self.per_word} tiles a word" if self.per_word > 1 else f"{bt.beats} word(s) a tile"
        return (f"{self.words} x {BUS_BITS}-bit words: {self.tiles} tile(s) of {self.layout} in stream order, "
                f"{each}, {bt.lanes} value(s) a beat")


def partitions(it: ITensor, t: TensorType) -> bool:
    """Do the unique tiles of ``it`` partition ``t`` (no overlap, no gap)?"""
    if tuple(it.tensor_shape) != tuple(t.shape):
        return False
    for k, (trips, step) in enumerate(zip(it.trips, it.steps)):
        if k in it.map:
            d = it.map.index(k)
            if step != it.element[d] or trips * step != t.shape[d]:
                return False
    return True


def rows(t: TensorType) -> ITensor:
    """The row layout of ``t``: tiles of one innermost row, row-major."""
    *outer, inner = tuple(t.shape) or (1,)
    return ITensor(t.dtype, (1,) * len(outer) + (inner,), tuple(outer) + (1,), (1,) * len(outer) + (inner,),
                   tuple(range(len(outer) + 1)))


def _raw_bits(values: np.ndarray, dtype) -> np.ndarray:
    """The bit patterns of ``values`` (of streamdsl type ``dtype``) as unsigned 64-bit integers."""
    v = convert(np.asarray(values), dtype)
    if isinstance(dtype, FloatType):
        if dtype.name == "f32":
            return v.astype(np.float32).view(np.uint32).astype(np.uint64)
        return v.astype(np.float64).view(np.uint64)
    if isinstance(dtype, FixedType):
        raw = np.rint(v.astype(np.float64) * (2.0 ** (dtype.width - dtype.int_bits))).astype(np.int64)
        return raw.view(np.uint64) & np.uint64((1 << dtype.width) - 1 if dtype.width < 64 else (1 << 64) - 1)
    b = dtype.bits
    mask = np.uint64((1 << b) - 1) if b < 64 else np.uint64((1 << 64) - 1)
    return v.astype(np.int64).view(np.uint64) & mask if dtype.signed else v.astype(np.uint64) & mask


def _from_bits(raw: np.ndarray, dtype) -> np.ndarray:
    if isinstance(dtype, FloatType):
        if dtype.name == "f32":
            return raw.astype(np.uint32).view(np.float32)
        return raw.view(np.float64)
    if isinstance(dtype, FixedType):
        w = dtype.width
        x = raw.astype(np.int64)
        if dtype.signed and w < 64:
            x = np.where(x >= (1 << (w - 1)), x - (1 << w), x)
        return (x.astype(np.float64) / (2.0 ** (w - dtype.int_bits))).astype(compute_np(dtype))
    b = dtype.bits
    x = raw.astype(np.uint64)
    if dtype.signed:
        s = x.astype(np.int64)
        if b < 64:
            s = np.where(s >= (1 << (b - 1)), s - (1 << b), s)
        return s.astype(compute_np(dtype))
    return x.astype(compute_np(dtype))


def pack(values: np.ndarray, p: Packing, lanes: int = 1) -> list[bytes]:
    """The DRAM image of ``values`` (the tensor in its own shape) in packing ``p``: one little-endian byte
    buffer per port (``lanes`` of them), each a whole number of 64-byte words."""
    bits, per = p.bits, BUS_BITS // p.bits
    flat = np.asarray(values).reshape(-1)
    raw = np.zeros(p.words * per, dtype=np.uint64)
    raw[p.positions()] = _raw_bits(flat, p.tensor_type.dtype)
    words = np.zeros((p.words, BUS_BITS // 64), dtype=np.uint64)  # eight 64-bit limbs a word, low limb first
    lane = np.arange(per)
    for limb in range(BUS_BITS // 64):  # value i of a word sits in bits [i*bits, (i+1)*bits)
        lo = lane * bits - 64 * limb
        for part in ("low", "high"):
            hit = (lo >= 0) & (lo < 64) if part == "low" else (lo < 0) & (lo + bits > 0)
            if not hit.any():
                continue
            sel = raw.reshape(p.words, per)[:, hit]
            sh = lo[hit]
            if part == "low":
                words[:, limb] |= np.bitwise_or.reduce(sel << sh.astype(np.uint64), axis=1)
            else:
                words[:, limb] |= np.bitwise_or.reduce(sel >> (-sh).astype(np.uint64), axis=1)
    return [words[j::lanes].astype("<u8").tobytes() for j in range(lanes)]


def unpack(buffers: list[bytes], p: Packing) -> np.ndarray:
    """The tensor (its own shape, the simulator's NumPy type) from its port buffers (see :func:`pack`)."""
    lanes = len(buffers)
    words = np.zeros((p.words, BUS_BITS // 64), dtype=np.uint64)
    for j, buf in enumerate(buffers):
        part = np.frombuffer(buf, dtype="<u8").reshape(-1, BUS_BITS // 64)
        words[j::lanes] = part[:len(words[j::lanes])]
    bits, per = p.bits, BUS_BITS // p.bits
    raw = np.zeros((p.words, per), dtype=np.uint64)
    lane = np.arange(per)
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64((1 << 64) - 1)
    for limb in range(BUS_BITS // 64):
        lo = lane * bits - 64 * limb
        low = (lo >= 0) & (lo < 64)
        if low.any():
            raw[:, low] |= (words[:, limb:limb + 1] >> lo[low].astype(np.uint64))
        high = (lo < 0) & (lo + bits > 0)
        if high.any():
            raw[:, high] |= (words[:, limb:limb + 1] << (-lo[high]).astype(np.uint64))
    raw = raw.reshape(-1) & mask
    vals = raw[p.positions()]
    return _from_bits(vals, p.tensor_type.dtype).reshape(p.tensor_type.shape)


__all__ = ["BUS_BITS", "Beats", "Packing", "WORD_BYTES", "beats_of", "elem_bits", "pack", "partitions", "rows", "unpack"]
