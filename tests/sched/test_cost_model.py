"""The cost model's loop rules, each against a hand count: expression bounds at their largest (ir/bounds.py),
one read for an address every unrolled copy shares, and a scalar declared inside a loop carries nothing."""
from __future__ import annotations

import math

import numpy as np

import streamdsl as sd
from streamdsl import f32, i8, i32
from streamdsl.ir.bounds import Ranges, loop_trips
from streamdsl.ir.deps import carried_accumulations
from streamdsl.ir.nodes import For, walk
from streamdsl.cost.model import estimate, op_latency, recurrence_latency


@sd.kernel
def windowed(X: f32[64], n_valid: i32) -> f32[1]:
    Y: f32[1]
    n: i32 = max(min(n_valid, 64), 1)
    pos: i32 = n - 1
    lo: i32 = max(0, pos - 8 + 1)
    acc: f32 = 0.0
    for j in range(lo, pos + 1):
        acc += X[j]
    Y[0] = acc
    return Y


@sd.kernel
def causal(X: f32[64, 64], n_valid: i32) -> f32[64]:
    Y: f32[64]
    n: i32 = max(min(n_valid, 64), 1)
    for i in range(4):
        pos: i32 = n - 4 + i
        acc: f32 = 0.0
        for j in range(0, pos + 1):
            acc += X[i, j]
        Y[i] = acc
    return Y


@sd.kernel
def scaled(A: f32[256], s: f32[1]) -> f32[256]:
    Y: f32[256]
    for k in range(256):
        Y[k] = A[k] * s[0]
    return Y


@sd.kernel
def rowdots(A: f32[32, 16], B: f32[16]) -> f32[32]:
    Y: f32[32]
    for j in range(32):
        dot: f32 = 0.0
        for e in range(16):
            dot += A[j, e] * B[e]
        Y[j] = dot
    return Y


def _loop(k, var):
    return next(n for st in k.body for n in walk(st) if isinstance(n, For) and n.var == var)


def test_a_sliding_window_loop_makes_at_most_the_window():
    trips = loop_trips(windowed.ir.body)
    assert trips[id(_loop(windowed.ir, "j"))] == 8  # (pos + 1) - max(0, pos - 7): pos cancels
    lp = next(x for x in estimate(windowed.ir).loops if x.var == "j")
    assert lp.trips == 8


def test_a_causal_loop_makes_at_most_the_cache():
    # n in [1, 64]; pos = n - 4 + i with i in [0, 3]: pos + 1 <= 64
    assert loop_trips(causal.ir.body)[id(_loop(causal.ir, "j"))] == 64
    assert next(x for x in estimate(causal.ir).loops if x.var == "j").trips == 64


def test_ranges_of_unknown_scalars_stay_unbounded():
    r = Ranges()
    v = _loop(windowed.ir, "j").stop  # pos + 1 with pos unknown
    assert r.max_trips(_loop(windowed.ir, "j").start, v) is None


def test_a_shared_address_is_one_read_per_iteration():
    s = sd.schedule(scaled)
    o, i = s.split(s.loop("k"), 16)
    s.pipeline(o)
    s.unroll(i)
    s.partition(s.buffer("A"), 1, "cyclic", 16)
    s.partition(s.buffer("Y"), 1, "cyclic", 16)
    lp = next(x for x in estimate(s.ir).loops if x.var == o.var)
    assert lp.ii == 1  # s[0] is the same word in all 16 copies: one read, not 16 on 2 ports
    s2 = sd.schedule(scaled)
    o2, i2 = s2.split(s2.loop("k"), 16)
    s2.pipeline(o2)
    s2.unroll(i2)  # A and Y not partitioned: 16 reads and 16 writes on 2 ports each
    assert next(x for x in estimate(s2.ir).loops if x.var == o2.var).ii == 8


def test_a_scalar_declared_in_the_loop_is_not_carried():
    j = _loop(rowdots.ir, "j")
    assert list(carried_accumulations(j)) == []  # dot starts afresh every j
    assert len(list(carried_accumulations(_loop(rowdots.ir, "e")))) == 1
    s = sd.schedule(rowdots)
    s.pipeline(s.loop("j"))  # e unrolled inside: II 1, the 16 adds a chain in the depth
    s.partition(s.buffer("A"), 2, "complete")
    s.partition(s.buffer("B"), 1, "complete")
    lp = next(x for x in estimate(s.ir).loops if x.var == "j")
    assert lp.ii == 1 and lp.depth >= 15 * 4


@sd.kernel
def outer_sum(X: f32[16, 64]) -> f32[16]:
    Y: f32[16]
    for i in range(16):
        Y[i] = 0.0
    for k in range(64):
        for i2 in range(16):
            Y[i2] += X[i2, k]
    return Y


@sd.kernel
def rowsums(X: f32[8, 128]) -> f32[8]:
    Y: f32[8]
    for i in range(8):
        acc: f32 = 0.0
        for k in range(128):
            acc += X[i, k]
        Y[i] = acc
    return Y


def test_a_perfect_nest_flattens_and_an_outer_sum_recurs_at_its_distance():
    s = sd.schedule(outer_sum)
    s.pipeline(s.loop("i2"))
    est = estimate(s.ir)
    flat = next(x for x in est.loops if x.var == "k")
    # k x i2 flattened: 1024 iterations; Y[i2] recurs every 16 iterations, more than the fadd's 4 cycles: II 1
    assert flat.trips == 1024 and flat.ii == 1 and "flattened" in flat.note
    assert flat.cycles == 1023 * 1 + flat.depth + 1


def test_unrolled_copies_of_a_pipelined_loop_run_one_after_another():
    s = sd.schedule(rowsums)
    s.pipeline(s.loop("k"))
    base = estimate(s.ir)
    # rows i around the pipelined k with statements beside it: a semi-perfect nest, flattened (HLStrans covariance)
    assert "flattened" in next(x for x in base.loops if x.var == "i").note
    s.unroll(s.loop("i"), 4)
    est = estimate(s.ir)
    four = next(x for x in est.loops if x.var == "i")
    k = next(x for x in est.loops if x.var == "k")
    # 4 copies of the k pipeline, in sequence: no faster than 8 rows (each: the pipeline, Y's store, the control)
    assert four.cycles == 8 * (k.cycles + 1 + 1)
    assert "one after another" in four.note
    assert est.resources["dsp"] == base.resources["dsp"]  # and, one after another, they share its float adder


def test_an_unrolled_integer_sum_is_a_tree_and_a_float_sum_a_chain():
    from streamdsl.cost.model import _tree_depth

    s = sd.schedule(rowsums)
    lp = _loop(s.ir, "k")
    assert _tree_depth(lp, 128, 250.0) == 127 * op_latency("add", f32, 250.0)  # fp32: 127 chained fadds
    from tests.sched.test_rfactor import dot_i8

    assert _tree_depth(_loop(dot_i8.ir, "k"), 512, 250.0) == 9  # int: log2(512) levels of 1-cycle adds


@sd.kernel
def head_rows(Q: f32[4, 16], K: f32[4, 32, 16], g: i32) -> f32[32]:
    S: f32[32]
    for j in range(32):
        h: i32 = g % 4  # a local that does not move with j: one address for every copy of j
        dot: f32 = 0.0
        for e in range(16):
            dot += Q[h, e] * K[h, j, e]
        S[j] = dot
    return S


def test_a_local_index_counts_copies_only_of_the_loops_it_depends_on():
    s = sd.schedule(head_rows)
    o, i = s.split(s.loop("j"), 4)
    s.pipeline(o)
    s.unroll(i)
    s.partition(s.buffer("Q"), 2, "complete")
    s.partition(s.buffer("K"), 2, "cyclic", 4)
    s.partition(s.buffer("K"), 3, "complete")
    s.partition(s.buffer("S"), 1, "cyclic", 4)
    # Q[h, e]: 16 banks, the 4 copies of j share each address (h does not depend on j): one read; counting
    # every copy because h is a local would give 4 reads on 2 ports, II 2
    assert next(x for x in estimate(s.ir).loops if x.var == o.var).ii == 1


@sd.kernel
def signs(X: f32[64]) -> f32[64]:
    Y: f32[64]
    for k in range(64):
        Y[k] = -abs(X[k])
    return Y


@sd.kernel
def copy64(X: f32[64]) -> f32[64]:
    Y: f32[64]
    for k in range(64):
        Y[k] = X[k]
    return Y


def test_sign_bit_operations_cost_no_logic():
    # -abs(x) clears and sets the sign bit: wiring, the same LUTs and DSPs as a plain copy
    assert estimate(signs.ir).resources == estimate(copy64.ir).resources


@sd.kernel
def qmac(X: i8[32], W: i8[16, 32]) -> i32[16]:
    A: i32[16] = 0
    for k in range(32):
        for o in range(16):
            A[o] += sd.cast(X[k], i32) * sd.cast(W[o, k], i32)
    return A


def _bound(kernel, buffers, op="mul", impl=None):
    """The estimate of ``kernel`` with loop k pipelined, ``buffers`` partitioned whole along their first
    dimension (every lane its own bank) and, with ``impl``, k's ``op`` bound to it."""
    s = sd.schedule(kernel)
    s.pipeline(s.loop("k"))
    for b in buffers:
        s.partition(s.buffer(b), 1, "complete")
    if impl:
        s.bind_op(s.loop("k"), op, impl)
    return estimate(s.ir)


def test_a_multiply_add_is_one_dsp_unless_bound_to_luts():
    default, lut, dsp = _bound(qmac, "WA"), _bound(qmac, "WA", impl="fabric"), _bound(qmac, "WA", impl="dsp")
    # 16 lanes of an 8 x 8 multiply added to an i32: a DSP48E2 each, the add in its post-adder (Vitis's
    # mac_muladd, the CS-577 matrixmul report), as when bound to DSPs; bound to LUTs, an 8 x 8 multiplier (64
    # LUTs) and the i32 add (32), no DSP
    assert default.resources == dsp.resources
    assert lut.resources["dsp"] == 0 and dsp.resources["dsp"] == 16
    assert lut.resources["lut"] - dsp.resources["lut"] == 16 * (64 + 32)
    assert lut.cycles == dsp.cycles  # a DSP MAC: 3 cycles, as the LUT multiply (2) and add (1)


@sd.kernel
def packed_mac(X: i8[32], W: sd.Int(4)[16, 32]) -> sd.Int(48)[8]:
    P: sd.Int(48)[8] = 0
    for k in range(32):
        for h in range(8):  # outputs 2h and 2h + 1 in one product: (w1 * 2**22 + w0) * x
            P[h] += (sd.cast(W[2 * h + 1, k], sd.Int(48)) * 4194304 + sd.cast(W[2 * h, k], sd.Int(48))) * \
                sd.cast(X[k], sd.Int(48))
    return P


def test_a_packed_pair_of_int4_weights_is_one_dsp_with_its_pre_adder():
    from streamdsl.ir.nodes import BinOp
    from streamdsl.cost.model import narrow_bits

    mul = next(n for n in walk(packed_mac.ir.body[1]) if isinstance(n, BinOp) and n.op == "mul"
               and isinstance(n.lhs, BinOp) and n.lhs.op == "add")
    # w1 * 2**22 + w0 with w in [-8, 7] lies in [-2**25 - 8, 7 * 2**22 + 7]: 27 bits signed, the DSP48E2's
    # 27-bit pre-adder and multiplier port; the activation is 8 bits
    assert narrow_bits(mul.lhs) == 27 and narrow_bits(mul.rhs) == 8

    default, lut, dsp = (_bound(packed_mac, "WP", impl=impl) for impl in (None, "fabric", "dsp"))
    # a DSP48E2 per pair (two MACs), the packing add in its pre-adder, the shift by 2**22 wiring and the
    # accumulation in its post-adder: no LUT left for the 8 lanes; a multiply-add whose operands fit the slice
    # is one by default. Bound to LUTs: an 8 x 27 multiplier, the 48-bit packing add and the 48-bit accumulate
    assert default.resources == dsp.resources
    assert dsp.resources["dsp"] == 8 and lut.resources["dsp"] == 0
    assert lut.resources["lut"] - dsp.resources["lut"] == 8 * (8 * 27 + 48 + 48)


@sd.kernel
def truncate(X: sd.Int(48)[64]) -> i32[64]:
    Y: i32[64]
    for k in range(64):
        Y[k] = sd.cast(sd.cast(X[k], sd.Int(22)), i32) * 8
    return Y


@sd.kernel
def copy_i48(X: sd.Int(48)[64]) -> i32[64]:
    Y: i32[64]
    for k in range(64):
        Y[k] = sd.cast(X[k], i32)
    return Y


def test_integer_truncation_and_multiplies_by_powers_of_two_are_wiring():
    assert estimate(truncate.ir).resources == estimate(copy_i48.ir).resources


@sd.kernel
def fsum(X: f32[16, 64], W: f32[16, 64]) -> f32[16]:
    A: f32[16] = 0.0
    for k in range(64):
        for o in range(16):
            A[o] = A[o] + X[o, k] * W[o, k]
    return A


def test_float_adds_bound_to_fabric_leave_the_dsps():
    dsp, fabric, full = (_bound(fsum, "XWA", "fadd", impl) for impl in (None, "fabric", "fulldsp"))
    # 16 lanes at the II of A's recurrence, which shares each core over that many of them: an fp32 add in 2 DSPs
    # and 220 LUTs by default (fulldsp), in 430 LUTs bound to fabric; the multiplies keep their 3 DSPs each
    ii = next(x for x in dsp.loops if x.var == "k").ii
    cores = math.ceil(16 / ii)
    assert ii == recurrence_latency("add", f32, 250.0) > 1
    assert full.resources == dsp.resources
    assert dsp.resources["dsp"] - fabric.resources["dsp"] == cores * 2 and fabric.resources["dsp"] == cores * 3
    assert fabric.resources["lut"] - dsp.resources["lut"] == cores * (430 - 220)
    assert fabric.cycles <= dsp.cycles  # the table's fabric adder, no slower than the reports' DSP adder



@sd.kernel
def parts4(X: f32[64]) -> f32[4]:
    T: f32[4] = 0.0
    for j in range(64):
        T[j % 4] += X[j]  # part j % 4 comes round every 4th key
    return T


@sd.kernel
def parts2(X: f32[64]) -> f32[2]:
    T: f32[2] = 0.0
    for j in range(64):
        T[j % 2] += X[j]
    return T


@sd.kernel
def runs4(X: f32[64]) -> f32[4]:
    T: f32[4] = 0.0
    for j in range(64):
        T[j // 16] += X[j]  # the same part for 16 keys in a row: carried from one key to the next
    return T


def _pipelined(k):
    s = sd.schedule(k)
    s.pipeline(s.loop("j"))
    return s.ir


def test_a_sum_into_interleaved_parts_recurs_once_per_round():
    from streamdsl.backend.sim import simulate
    from streamdsl.ir.deps import periodic_accumulations

    # an fp32 sum recurs every r cycles: a part that comes round every 4th key allows II ceil(r / 4), every 2nd
    # ceil(r / 2); a part that stays put for 16 keys recurs every key (II r)
    r = recurrence_latency("add", f32, 250.0)
    assert [lp.ii for lp in estimate(_pipelined(parts4)).loops] == [math.ceil(r / 4)]
    assert [lp.ii for lp in estimate(_pipelined(parts2)).loops] == [math.ceil(r / 2)]
    assert [lp.ii for lp in estimate(_pipelined(runs4)).loops] == [r]
    j = _pipelined(parts4).body[1]
    assert [p for _, _, p in periodic_accumulations(j)] == [4] and not list(carried_accumulations(j))
    x = np.arange(64, dtype=np.float32) / 7
    want = np.array([sum(x[r::4].tolist(), 0.0) for r in range(4)])
    np.testing.assert_allclose(simulate(_pipelined(parts4), x), want, rtol=1e-6)


def test_the_lanes_of_an_interleaved_rfactor_carry_nothing():
    # dot_rf[(e_o % 4) * 4 + e_i]: each lane k_i its own partial (no chain of adds across the unrolled lanes),
    # and along k_o a partial that comes round every 4th iteration
    from streamdsl.ir.deps import periodic_accumulations

    s = sd.schedule(rowdots)
    s.pipeline(s.loop("e"))
    s.reassociate(s.loop("e"))
    outer, lane, _ = s.rfactor(s.loop("e"), 16, lanes=4)
    assert not list(carried_accumulations(_loop(s.ir, lane.var)))
    assert not list(carried_accumulations(_loop(s.ir, outer.var)))
    assert [p for _, _, p in periodic_accumulations(_loop(s.ir, outer.var))] == [4]


def test_unrolled_copies_into_interleaved_parts_make_chains_side_by_side():
    # 64 copies unrolled into 4 parts: 4 chains of 16 fp32 adds side by side, not one of 64 (nor none)
    s = sd.schedule(parts4)
    s.unroll(s.loop("j"))
    one = sd.schedule(rowsum64)
    one.unroll(one.loop("j"))
    # both clear T with the loop the emitter writes (an element a cycle, pipelined), registers or not
    assert estimate(one.ir).cycles - estimate(s.ir).cycles == (63 - 15) * op_latency("add", f32, 250.0)


@sd.kernel
def rowsum64(X: f32[64]) -> f32[4]:
    T: f32[4] = 0.0
    for j in range(64):
        T[0] += X[j]
    return T
