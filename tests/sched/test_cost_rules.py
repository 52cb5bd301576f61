"""The cost model's rules for what Vitis does on its own (issue 23), each on a small kernel against a hand count.
The figures the rules come from are the published reports of benchmarks/calibration/published.json (LAP,
HLStrans, CS-577), named beside each test."""
from __future__ import annotations

import streamdsl as sd
from streamdsl import f32, f64, i32
from streamdsl.cost.model import (
    FAMILIES, dsp_tiles, estimate, family, mux_lut, op_cost, op_latency, recurrence_latency, unlisted_in_csynth,
)

US = FAMILIES["ultrascale+"]


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


def test_a_loop_with_no_loop_around_it_is_pipelined_whatever_its_trips():
    # UG1399 config_compile -pipeline_loops: "if the innermost loop has no parent loop, it is pipelined
    # regardless of its tripcount" (HLStrans fir: 19 and 20 trips, II 1)
    assert _loop(estimate(short.ir), "i").ii == 1
    assert _loop(estimate(long.ir), "i").ii == 1


@sd.kernel
def copy64(X: i32[8, 64]) -> i32[8, 64]:
    Y: i32[8, 64]
    for i in range(8):
        s: i32 = i * 2
        for j in range(64):
            Y[i, j] = X[i, j] + s
    return Y


@sd.kernel
def copy65(X: i32[8, 65]) -> i32[8, 65]:
    Y: i32[8, 65]
    for i in range(8):
        s: i32 = i * 2
        for j in range(65):
            Y[i, j] = X[i, j] + s
    return Y


def test_inner_loops_of_at_most_64_iterations_are_unrolled_into_their_pipelined_parent():
    # HLStrans gemm: lp3's 64 trips are unrolled into lp2's pipeline; above 64 the inner loop is pipelined
    rep = estimate(_ap(copy64), "xcu55c", 200)
    assert [x.var for x in rep.loops if x.ii] == ["i"] and _loop(rep, "i").ii == 32  # 64 reads of X on 2 ports
    rep = estimate(_ap(copy65), "xcu55c", 200)  # j pipelined at II 1, then flattened with i around it
    assert _loop(rep, "j").ii == 1 and _loop(rep, "i").trips == 8 * 65


@sd.kernel
def stencil3(A: i32[8, 8, 8]) -> i32[8, 8, 8]:
    B: i32[8, 8, 8]
    for i in range(1, 7):
        for j in range(1, 7):
            for k in range(1, 7):
                B[i, j, k] = A[i + 1, j, k] + A[i, j, k - 1]
    return B


def test_a_perfect_level_is_flattened_with_its_short_inner_loop_not_unrolled_over_it():
    # HLStrans heat-3d: 18-trip k pipelined and flattened with i and j (5832 trips at II 4), not unrolled
    flat = _loop(estimate(_ap(stencil3), "xcu55c", 200), "i")
    assert flat.trips == 6 * 6 * 6 and "flattened" in flat.note and flat.ii == 1


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
    # one m_axi adapter for X, and with m_axi Y is a local of 64 x 32 bits: distributed RAM, 32 LUTs
    assert axi.resources["lut"] - ram.resources["lut"] == 1500 + 32
    assert ram.resources["bram"] == 0  # with ap_memory Y is the caller's RAM behind the port, not a local
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


@sd.kernel
def scatter_poly(addr: i32[64], w: i32[64]) -> i32[64]:
    H: i32[64]
    for i in range(64):
        a: i32 = addr[i]
        h: i32 = H[a]
        H[a] = h * h * h + w[i]
    return H


def test_an_update_at_an_address_read_from_memory_waits_for_the_path_from_its_load():
    # H[a] may be what the next iteration reads: Vitis forwards the stored value (HLStrans histogram's
    # addr_cmp / reuse_select), so the next load waits only for the path from the load to the store: an add,
    # II 1; two 7-series multiplies of 4 cycles and the add: II 2 + 4 + 4 + 1 - 2 (LAP getTanh: II 18)
    assert _loop(estimate(_ap(scatter), "xc7k160t", 200), "i").ii == 1
    assert _loop(estimate(_ap(scatter_poly), "xc7k160t", 200), "i").ii == 9


# rules read from the HLStrans reports (xcu55c, 200 MHz, Vitis 2022.2.2)

@sd.kernel
def solve(L: f64[16, 16], b: f64[16]) -> f64[16]:
    x: f64[16]
    for i in range(16):
        x[i] = b[i]
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] = x[i] / L[i, i]
    return x


@sd.kernel
def dots(D: f64[16, 16]) -> f64[16]:
    c: f64[16]
    for i in range(16):
        for j in range(i):
            c[i] += D[j, i] * D[j, i]
    return c


def test_a_variable_trip_loop_updating_a_fixed_location_waits_for_it_unless_it_is_a_register():
    # trisolv: j < i cannot be unrolled, so it is pipelined; x[i] is updated in the RAM beside the reads of x[j]:
    # each iteration waits for the last (II 13 = depth 13). covariance's cov[i][j], read nowhere else, is a
    # register: the dadd's recurrence, its 5 cycles less one (II 4)
    lp = _loop(estimate(_ap(solve), "xcu55c", 200), "j")
    assert lp.ii == lp.depth == 2 + 5 + 5 + 1
    assert _loop(estimate(_ap(dots), "xcu55c", 200), "j").ii == 4 == recurrence_latency("add", f64, 200, US)


def test_float_cores_of_the_ultrascale_plus_reports():
    # fadd_32ns_32ns_32_5_full_dsp, fmul_..._4_max_dsp, dadd/dmul_64ns_..._5 at 200 MHz; a 250 MHz design scales
    # the stages after the first: 1 + ceil(4 x 250 / 200) = 6
    assert [op_latency(op, t, 200, US) for op, t in (("add", f32), ("mul", f32), ("add", f64), ("mul", f64))] \
        == [5, 4, 5, 5]
    assert op_latency("add", f32, 250, US) == 6 and recurrence_latency("add", f32, 250, US) == 5
    assert op_latency("add", i32, 200, US) == recurrence_latency("add", i32, 200, US) == 1


@sd.kernel
def means(data: f64[100, 8]) -> f64[8]:
    mean: f64[8]
    for j in range(8):
        mean[j] = 0.0
        for i in range(100):
            mean[j] += data[i, j]
        mean[j] /= 100.0
    return mean


def test_statements_around_a_pipelined_loop_are_flattened_into_it():
    # covariance: mean[j] = 0, the 100-trip sum, mean[j] /= n: one pipeline of 8000 trips at the sum's II
    flat = _loop(estimate(_ap(means), "xcu55c", 200), "j")
    assert flat.trips == 800 and "flattened" in flat.note and flat.ii == 4


@sd.kernel
def lower(A: f64[16, 16]) -> f64[16, 16]:
    B: f64[16, 16]
    for i in range(16):
        for j in range(i, 16):
            for k in range(i):
                B[i, j] += A[i, k] * A[k, j]
    return B


def test_a_nest_whose_inner_bounds_are_set_outside_it_is_flattened():
    # lu: j from i and k below i, for a fixed i a rectangle: flattened, its trips at their largest
    flat = _loop(estimate(_ap(lower), "xcu55c", 200), "j")
    assert "flattened" in flat.note and flat.trips == 16 * 15


@sd.kernel
def sweep(A: f64[16, 16]) -> f64[16, 16]:
    B: f64[16, 16]
    for i in range(16):
        for j in range(1, 16):
            B[i, j] = B[i, j - 1] * 0.5 + A[i, j]
    return B


@sd.kernel
def relax(P: i32[16, 16]) -> i32[16, 16]:
    Q: i32[16, 16]
    for k in range(16):
        for i in range(16):
            for j in range(16):
                Q[i, j] = Q[i, j] if Q[i, j] < Q[i, k] + Q[k, j] else Q[i, k] + Q[k, j]
    return Q


def test_a_store_a_later_iteration_reads_holds_that_read_back():
    # seidel-2d: B[i][j - 1] is read one iteration after its store: II = the path from that load to the store
    # less the load's two cycles: dmul 5 + dadd 5 + the store's 1 (II 62 on seidel's 9-point sum and divide)
    assert _loop(estimate(_ap(sweep), "xcu55c", 200), "i").ii == 2 + 5 + 5 - 2
    # floyd-warshall: Q[i][k] may be the Q[i][j] just written (j == k): the load, the add, the compare and the
    # select, less the load's two cycles (the report's II 2 chains the compare and the select in one cycle)
    assert _loop(estimate(_ap(relax), "xcu55c", 200), "k").ii == 2 + 1 + 1 + 1 - 2


@sd.kernel
def rowmix(A: f64[30, 30], B: f64[30, 30]) -> f64[30, 30]:
    C: f64[30, 30]
    for i in range(30):
        for p in range(30):
            acc: f64 = 0.0
            for s in range(30):
                acc += A[i, s] * B[s, p]
            C[i, p] = acc
    return C


def test_float_cores_are_shared_over_the_ii():
    # doitgen: 30 dmul and 30 dadd an iteration at II 15 (30 reads of B's column on 2 ports): 2 + 2 cores
    rep = estimate(_ap(rowmix), "xcu55c", 200)
    assert _loop(rep, "i").ii == 15 and rep.resources["dsp"] == 2 * 8 + 2 * 3


@sd.kernel
def two_sweeps(A: f64[64], B: f64[64]) -> (f64[64], f64[64]):
    X: f64[64]
    Y: f64[64]
    for i in range(64):
        X[i] = A[i] * 0.5 - B[i]
    for i in range(64):
        Y[i] = B[i] * 0.5 - A[i]
    return X, Y


@sd.kernel
def two_rows(A: f32[64, 64], x: f32[64]) -> (f32[64], f32[64]):
    a: f32[64, 64]
    s: f32[64]
    t: f32[64]
    for i in range(64):
        s[i] = 0.0  # a statement beside the copy of a row: the row loop takes j (atax's lprd_1)
        for j in range(64):
            a[i, j] = A[i, j]
    for i in range(64):
        acc: f32 = 0.0
        for j in range(64):
            acc += a[i, j] * x[j]
        s[i] = acc
    for i in range(64):
        acc2: f32 = 0.0
        for j in range(64):
            acc2 += a[i, j] * x[j]
        t[i] = acc2
    return s, t


def test_loops_run_one_after_another_share_cores_unless_each_is_wide():
    # fdtd-2d, jacobi-1d: the loops of a kernel share their few float cores (one dmul, one dsub here); gesummv:
    # two rows of 64 unrolled multiply-adds at II 1 keep their own (1024 DSP)
    assert estimate(_ap(two_sweeps), "xcu55c", 200).resources["dsp"] == 8 + 3
    # a partitioned by Vitis along j (every access unrolls it), x hoisted: both rows at II 1, 64 + 64 cores each
    rep = estimate(_ap(two_rows), "xcu55c", 200)
    assert [x.ii for x in rep.loops if x.var in ("i1", "i2")] == [1, 1] and rep.resources["dsp"] == 2 * 64 * (3 + 2)


@sd.kernel
def row_col(A: f32[64, 64]) -> (f32[64], f32[64]):
    buf: f32[64, 64]
    r: f32[64]
    c: f32[64]
    for i in range(64):
        for j in range(64):
            buf[i, j] = A[i, j]
    for i in range(64):
        acc: f32 = 0.0
        for j in range(64):
            acc += buf[i, j]
        r[i] = acc
    for i in range(64):
        acc2: f32 = 0.0
        for j in range(64):
            acc2 += buf[j, i]
        c[i] = acc2
    return r, c


def test_an_array_read_along_two_dimensions_is_not_partitioned_and_deep_ones_are_uram():
    # mvt: buff_A read by rows and by columns stays whole (II 32 on 2 ports) in one URAM (4096 words); on a
    # part without URAM, 8 BRAM18K
    rep = estimate(_ap(row_col), "xcu55c", 200)
    assert [x.ii for x in rep.loops if x.var in ("i1", "i2")] == [32, 32]
    assert rep.resources["uram"] == 1 and rep.resources["bram"] == 0
    assert estimate(_ap(row_col), "xc7k160t", 200).resources["bram"] == 8


@sd.kernel
def mm(A: f32[64, 64], B: f32[64, 64]) -> f32[64, 64]:
    a: f32[64, 64]
    C: f32[64, 64]
    for i in range(64):
        for j in range(64):
            a[i, j] = A[i, j]
    for i in range(64):
        for j in range(64):
            acc: f32 = 0.0
            for k in range(64):
                acc += a[i, k] * B[k, j]
            C[i, j] = acc
    return C


def test_a_flattened_nest_reads_a_whole_array_through_sixteen_ports():
    # gemm: buff_A_RAM_1WNR, 64 reads an iteration at II 4 (15 URAM); B is a port: 2 reads a cycle
    rep = estimate(_ap(mm), "xcu55c", 200)
    flat = _loop(rep, "i1")
    assert "flattened" in flat.note and flat.ii == 32  # B's 64 reads of a column on the port's 2
    assert rep.resources["uram"] == 15


@sd.kernel
def two_products(A: f32[64], B: f32[64], C: f32[64], D: f32[64]) -> (f32[64], f32[64], f32[64]):
    X: f32[64]
    Y: f32[64]
    Z: f32[64]
    for i in range(128):
        X[i % 64] = A[i % 64] * B[i % 64]
    for i in range(128):
        Y[i % 64] = C[i % 64] * D[i % 64]
    for i in range(128):
        Z[i % 64] = X[i % 64] + Y[i % 64]
    return X, Y, Z


def test_pipelines_that_share_no_memory_run_side_by_side():
    # k3mm, gesummv: each pipelined loop is a function of its own; the first two share nothing and run
    # together, the third reads what they wrote and waits (UG1399 "Loop Parallelism")
    rep = estimate(_ap(two_products), "xcu55c", 200)
    first, second, third = (x.cycles for x in rep.loops)
    assert rep.cycles == max(first, second) + third


@sd.kernel
def back_subst(A: f64[16, 16], b: f64[16]) -> f64[16]:
    y: f64[16]
    for i in range(16):
        w: f64 = b[i]
        for j in range(i):
            w -= A[i, j] * y[j]
        y[i] = w
    return y


def test_a_subtract_into_a_scalar_recurs_like_a_sum():
    # ludcmp: w -= A[i][k] * A[k][j] at II 4, the dsub's recurrence
    assert _loop(estimate(_ap(back_subst), "xcu55c", 200), "j").ii == 4


@sd.kernel
def scale(A: f64[100], d: f64) -> f64[100]:
    B: f64[100]
    for i in range(100):
        B[i] = A[i] / d + A[i]
    return B


def test_fabric_only_float_cores_are_charged_but_named_as_left_out_of_csynth():
    # HLStrans trisolv, durbin, lu, covariance: ddiv_64ns_64ns_64_22_no_dsp_1 listed at 0 LUT, 0 FF; the dadd is not
    rep = estimate(_ap(scale), "xcu55c", 200)
    _, div_lut = op_cost("div", f64)
    assert unlisted_in_csynth("div", f64) and not unlisted_in_csynth("add", f64)
    assert not unlisted_in_csynth("div", i32)
    assert rep.unlisted == {"lut": div_lut, "ff": 2 * div_lut}  # one ddiv core (II 1, one divide an iteration)
    assert rep.resources["lut"] > div_lut  # still in the model's estimate: the LUTs are on the chip


@sd.kernel
def product(X: f32[128], W: f32[128]) -> f32[128]:
    Y: f32[128]
    for i in range(128):
        Y[i] = X[i] * W[i]
    return Y


@sd.kernel
def product_int(X: i32[128], W: i32[128]) -> i32[128]:
    Y: i32[128]
    for i in range(128):
        Y[i] = X[i] * W[i]
    return Y


def test_every_float_value_of_a_pipeline_is_held_in_a_register():
    # HLStrans gemm_Pipeline_lp4_lp5's Register section: buff_C_load_reg, empty_10_reg (the tmp1 load), mul1_reg
    # and add1_reg, 32 FF each, beside the shared cores' own registers (listed as instances)
    rep = estimate(_ap(product), "xcu55c-fsvh2892-2L-e", 200)
    lp = _loop(rep, "i")
    control = (128).bit_length() + 1 + 6 + lp.depth  # the counter, a few control bits, a stage enable a cycle
    fmul = 143  # fmul_32ns_32ns_32_4_max_dsp's own registers
    assert rep.resources["ff"] == control + fmul + 3 * 32  # X[i], W[i] and their product
    # an integer pipeline's values get no register of their own: the LAP reports' integer chains are combinational
    # within a cycle (mul_32s_32s_32_1_1, latency 0); the model's 2 FF a LUT of integer logic stand for them
    ints = estimate(_ap(product_int), "xcu55c-fsvh2892-2L-e", 200)
    assert ints.resources["ff"] == (128).bit_length() + 1 + 6 + _loop(ints, "i").depth


@sd.kernel
def handed_on(X: f32[128], W: f32[128]) -> f32[128]:
    buf: f32[128]
    Y: f32[128]
    for i in range(128):
        buf[i] = X[i] + 1.0
    for i in range(128):
        Y[i] = buf[i] * 2.0
    return Y


@sd.kernel
def kept(X: f32[128], W: f32[128]) -> f32[128]:
    buf: f32[128]
    Y: f32[128]
    for i in range(128):
        buf[i] = X[i] + 1.0
    for i in range(128):
        Y[i] = W[i] * 2.0
    return Y


def test_a_ram_two_pipelines_drive_has_a_multiplexer_on_each_port_signal():
    # HLStrans mvt's top: buff_A, written by lprd and read by lp1 and lp3, has buff_A_address0 and buff_A_ce0 of
    # 4 inputs (3 functions and idle) and buff_A_we0 of 2; a 3-input mux is 14 LUT, 5 inputs 26, whatever the width
    assert [mux_lut(n) for n in (2, 3, 5)] == [10, 15, 24]
    shared = estimate(_ap(handed_on), "xcu55c-fsvh2892-2L-e", 200).resources["lut"]
    alone = estimate(_ap(kept), "xcu55c-fsvh2892-2L-e", 200).resources["lut"]
    # buf: one port (an access an iteration), address and enable of 2 + 1 inputs, write enable of 1 + 1
    assert shared - alone == 2 * mux_lut(3) + mux_lut(2)
