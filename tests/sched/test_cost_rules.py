"""The cost model's rules for what Vitis does on its own (issue 23), each on a small kernel against a hand count.
The figures the rules come from are the LAP reports in benchmarks/calibration/published.json."""
from __future__ import annotations

import streamdsl as sd
from streamdsl import i32
from streamdsl.cost.model import FAMILIES, dsp_tiles, estimate, family, op_latency


def _ap(k):
    s = sd.schedule(k)
    s.interface("ap_memory")
    return s.ir


def _loop(rep, var):
    return next(x for x in rep.loops if x.var == var and x.ii is not None)


@sd.kernel
def rows(M: i32[30, 30], V: i32[30]) -> i32[30]:
    Out: i32[30]
    for i in range(30):
        acc: i32 = 0
        for j in range(30):
            acc += V[j] * M[i, j]
        Out[i] = acc
    return Out


def test_a_loop_over_short_inner_loops_is_pipelined_with_them_unrolled():
    # UG1399 "Automatic Loop Pipelining": j (30 < 64 trips) is unrolled into i's pipeline
    lp = _loop(estimate(_ap(rows), "xc7k160t", 200), "i")
    assert lp.trips == 30
    # 30 reads of M[i, :] a row on 2 ports: II 15; V[j] does not move with i: hoisted, not counted
    assert lp.ii == 15
    assert lp.prologue == 30 // 2 - 1  # V's 30 reads before the pipeline, the first in its entry cycle


@sd.kernel
def short(X: i32[16]) -> i32[16]:
    Y: i32[16]
    for i in range(16):
        Y[i] = X[i] + 1
    return Y


@sd.kernel
def long(X: i32[64]) -> i32[64]:
    Y: i32[64]
    for i in range(64):
        Y[i] = X[i] + 1
    return Y


def test_an_innermost_loop_is_pipelined_from_64_trips():
    assert not any(x.ii for x in estimate(short.ir).loops)  # 16 trips: left sequential
    assert _loop(estimate(long.ir), "i").ii == 1  # 64 trips: pipelined ("a tripcount of 64 or greater")


@sd.kernel
def tri(c: i32[20]) -> i32[20, 20]:
    A: i32[20, 20]
    for j in range(1, 19):
        for i in range(j + 1, 19):
            for k in range(1, 20):
                A[i, k] = A[i, k] - c[j] * A[j, k]
    return A


def test_a_perfect_nest_under_a_variable_bound_is_flattened_at_its_longest():
    rep = estimate(_ap(tri), "xc7k160t", 200)
    flat = _loop(rep, "i")
    assert flat.trips == 17 * 19  # i at its largest (j = 1: 2..18) times k
    assert flat.ii == 2  # A: two reads and a write a cycle on 2 ports; c[j] is hoisted
    assert "flattened" in flat.note


@sd.kernel
def upper(D: i32[32, 32]) -> i32[32, 32]:
    C: i32[32, 32]
    for i in range(32):
        for j in range(i, 32):
            acc: i32 = 0
            for k in range(32):
                acc += D[k, i] * D[k, j]
            C[i, j] = acc
    return C


def test_a_variable_bound_loop_is_pipelined_and_not_flattened_with_its_parent():
    rep = estimate(_ap(upper), "xc7k160t", 200)
    lp = _loop(rep, "j")
    assert lp.trips == 32 and lp.ii == 16  # D[k, i] hoisted: 32 reads of D[k, j] on 2 ports
    assert not any("flattened" in x.note for x in rep.loops)
    row = next(x for x in rep.loops if x.var == "i")
    assert row.ii is None and row.cycles == 32 * (lp.cycles + 1)


@sd.kernel
def twice(A: i32[8, 8], x: i32[8]) -> i32[8]:
    Y: i32[8]
    for i in range(64):
        a: i32 = 0
        for j in range(8):
            a += A[i % 8, j] * x[j]
        b: i32 = 0
        for j in range(8):
            b += A[i % 8, j]
        Y[i % 8] = a + b
    return Y


def test_reads_of_one_address_in_two_loops_are_one_read():
    # A[i % 8, j] over two loops on the same range: 8 reads, not 16: II 4 on 2 ports, not 8
    assert _loop(estimate(_ap(twice), "xc7k160t", 200), "i").ii == 4


@sd.kernel
def rmw(A: i32[20, 4], x: i32[20]) -> i32[4]:
    y: i32[4]
    for i in range(20):
        t: i32 = x[i] * 3
        for j in range(4):
            y[j] = y[j] + A[i, j] * t
    return y


def test_a_memory_updated_at_fixed_locations_serialises_the_iteration():
    lp = _loop(estimate(_ap(rmw), "xc7k160t", 200), "i")
    assert lp.ii == lp.depth > 4  # each iteration reads the y[j] the previous one wrote (ports alone: II 4)
    assert "reads and writes" in lp.note


def test_device_families_price_multipliers_by_their_dsp_slice():
    assert family("u55c").name == "ultrascale+" and family("vck190").name == "versal"
    assert family("xc7k160t-fbg484-1").name == "7series" and family("xcvu11p-flga2577-1-e").name == "ultrascale+"
    assert family("xcvc1902-vsva2197").name == "versal" and family("xczu7ev").name == "ultrascale+"
    # 32 x 32 into 32 bits: the high partial product is dropped: 3 slices (the LAP reports' mul_32s_32s_32)
    assert dsp_tiles(32, 32, 32, FAMILIES["7series"]) == 3
    assert dsp_tiles(32, 32, 32, FAMILIES["ultrascale+"]) == 3
    assert dsp_tiles(16, 16, 32, FAMILIES["ultrascale+"]) == 1
    assert dsp_tiles(32, 32, 64, FAMILIES["7series"]) == 4
    assert op_latency("mul", i32, 200, FAMILIES["7series"]) == 4  # mul_32s_32s_32_5_1: 4 cycles at 200 MHz
    # one stage at 200 MHz on the xck24 (mul_32s_32s_32_1_1); above that clock the table's figure at least
    assert op_latency("mul", i32, 200, FAMILIES["ultrascale+"]) == 0
    assert op_latency("mul", i32, 300, FAMILIES["ultrascale+"]) == op_latency("mul", i32, 300) == 3


def test_interface_adapters_are_priced_by_kind():
    axi = estimate(long.ir)
    ram = estimate(_ap(long))
    assert axi.resources["lut"] - ram.resources["lut"] == 1500  # one m_axi adapter for X
    assert ram.resources["bram"] == 0  # Y is the caller's RAM behind the port, not a local
    assert axi.cycles == ram.cycles


def test_the_interface_primitive_is_traced_and_emitted():
    s = sd.schedule(long)
    s.interface("ap_memory")
    assert s.ir.attrs.get("interface") == "ap_memory"
    assert "interface" in str(s.trace)
    src = s.build("hls").files
    text = "\n".join(v for n, v in src.items() if n.endswith(".cpp"))
    assert "mode=ap_memory port=X" in text and "mode=m_axi" not in text
    assert s.trace.replay(long).ir == s.ir


@sd.kernel
def scatter(addr: i32[64], w: i32[64]) -> i32[64]:
    H: i32[64]
    for i in range(64):
        a: i32 = addr[i]
        H[a] = H[a] + w[i]
    return H


def test_an_update_at_an_address_read_from_memory_waits_for_the_previous_one():
    lp = _loop(estimate(_ap(scatter), "xc7k160t", 200), "i")
    assert lp.ii == lp.depth > 1  # H[a] may be what the next iteration reads (LAP getTanh: II 18 at depth 22)
