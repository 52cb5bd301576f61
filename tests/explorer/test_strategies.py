"""The strategies that share a layer's unroll budget and the board among its kernels, on hand-made estimates."""
from __future__ import annotations

from streamdsl.explorer import KernelEstimate, Room
from streamdsl.explorer.strategies import unroll_by_gain, unroll_by_heap

NO_MOVES = {"split": (), "dsp": (), "fabric": ()}


def _room(limit: dict) -> Room:
    return Room(rest={r: 0 for r in limit}, limit=limit, slr_limit=limit)


def test_unrolling_by_gain_widens_the_cheap_kernel_first():
    def est(tk, f, moves=frozenset()):  # a cheap short kernel and a costly long one
        if moves:
            return None  # no multiplies to move to DSPs, no float adds to LUTs
        lut = {"add": 100, "mac": 4000}[tk] * f
        return KernelEstimate({"add": 1024, "mac": 8192}[tk] // min(f, 64), {"lut": lut, "dsp": 0, "ff": 0}, f)

    tasks = ["add", "mac"]
    room = _room({"lut": 40000.0, "dsp": 1.0, "ff": 1.0})
    a = unroll_by_gain(tasks, {tk: est(tk, 1) for tk in tasks}, est, room, 1 << 30)
    # add saturates at 64 lanes for 6400 LUTs (16 cycles); mac then takes what is left: 8 lanes (32000)
    assert a.factors == {"add": 64, "mac": 8} and a.total == 72 and a.why.startswith("by gain") and a.moved == NO_MOVES
    assert room.used({tk: est(tk, a.factors[tk]) for tk in tasks})["lut"] <= room.limit["lut"]

    def est2(tk, f, moves=frozenset()):  # mac's multiplies may move to DSPs: a DSP and 1000 LUTs a lane
        if tk == "mac" and moves == {"dsp"}:
            return KernelEstimate(8192 // min(f, 64), {"lut": 1000 * f, "dsp": f, "ff": 0}, f)
        return est(tk, f, moves)

    a = unroll_by_gain(tasks, {tk: est2(tk, 1) for tk in tasks}, est2, _room({"lut": 40000.0, "dsp": 32.0, "ff": 1.0}),
                       1 << 30)
    # once the LUTs hold add's 64 lanes and 8 of mac's, mac's lanes move to DSPs: 32 of them (32 DSPs,
    # 32000 LUTs), so mac runs 4x faster than in LUTs alone
    assert a.moved == {**NO_MOVES, "dsp": ("mac",)} and a.factors == {"add": 64, "mac": 32} and "in DSPs" in a.why


def test_unrolling_by_gain_moves_float_adds_to_luts_when_the_dsps_run_out():
    # norm: float adds that take 2 DSPs a lane by default, or 500 LUTs in fabric; mac: a DSP a lane
    def est(tk, f, moves=frozenset()):
        if moves - ({"fabric"} if tk == "norm" else set()):
            return None  # nothing of that kind to move
        if tk == "norm":
            res = {"lut": 500 * f, "dsp": 0, "ff": 0} if moves else {"lut": 100 * f, "dsp": 2 * f, "ff": 0}
            return KernelEstimate(4096 // min(f, 64), res, f)
        return KernelEstimate(8192 // min(f, 64), {"lut": 10 * f, "dsp": f, "ff": 0}, f)

    tasks = ["norm", "mac"]
    room = _room({"lut": 40000.0, "dsp": 64.0, "ff": 1.0})
    a = unroll_by_gain(tasks, {tk: est(tk, 1) for tk in tasks}, est, room, 1 << 30)
    # the norm's adds leave the DSPs, so all 64 go to mac's lanes
    assert a.moved == {**NO_MOVES, "fabric": ("norm",)} and a.factors["mac"] == 64
    assert "float adds of 1 kernel(s) in LUTs" in a.why
    assert room.used({tk: est(tk, a.factors[tk], a.moves_of(tk)) for tk in tasks})["dsp"] <= room.limit["dsp"]


def test_the_heap_doubles_the_slowest_kernel_until_the_board_is_full():
    def est(tk, f, moves=frozenset()):  # slow doubles its lanes up to 64; fast is already fast
        cycles = {"slow": 4096, "fast": 256}[tk] // min(f, 64)
        return KernelEstimate(cycles, {"lut": 1000 * f, "dsp": 0, "ff": 0}, min(f, 64))

    tasks = ["slow", "fast"]
    room = _room({"lut": 20000.0, "dsp": 1.0, "ff": 1.0})
    snaps = unroll_by_heap(tasks, {tk: est(tk, 1) for tk in tasks}, est, room, 1 << 30)
    # slow 4096 -> 256 at 16 lanes (16000 LUTs); fast doubles to 2 (18000); slow's next doubling (32000 LUTs)
    # would overfill the room; fast doubles to 4 (20000), 8 would not fit
    last = snaps[-1]
    assert last.factors == {"slow": 16, "fast": 4} and last.total == 20
    assert last.why.startswith("board full at") and last.moved == NO_MOVES
    assert [s.total for s in snaps] == sorted(s.total for s in snaps)  # one allocation per mark, in order
    assert unroll_by_heap(tasks, {tk: est(tk, 1) for tk in tasks}, est, room, 8)[-1].why.startswith("budget reached")


def test_a_room_scaled_keeps_one_kernels_slr_limit():
    room = Room(rest={"lut": 100}, limit={"lut": 1000.0}, slr_limit={"lut": 400.0})
    half = room.scaled(0.5)
    assert half.limit == {"lut": 500.0} and half.slr_limit == room.slr_limit and half.rest == room.rest
    old, now = KernelEstimate(1, {"lut": 300}, 1), {"lut": 900}  # the rest (100), this kernel and another
    assert room.used({"a": old, "b": KernelEstimate(1, {"lut": 500}, 1)}) == now
    assert not room.on_one_slr(KernelEstimate(1, {"lut": 450}, 1))  # one kernel past one SLR's 400
    assert not room.over(now, old, KernelEstimate(1, {"lut": 400}, 1)) and room.over(now, old, KernelEstimate(1, {"lut": 401}, 1))


def test_the_room_is_ug1393s_guideline_less_what_the_device_holds_beside():
    """Kernels widen only as far as a design can still close timing (LUT 70 %, FF 50 %, DSP/BRAM/URAM 80 % of the
    board, what fit_designs checks), whatever util asks, and less what other kernels of the device hold."""
    from types import SimpleNamespace

    from streamdsl.perf import GUIDELINE

    b = __import__("streamdsl").board("u55c")
    zero = {r: 0 for r in GUIDELINE}
    perf = SimpleNamespace(total=dict(zero), nodes={})
    room = Room.beside(perf, {}, b, util=0.85)
    assert room.limit["lut"] == 0.70 * b.total["lut"] and room.limit["ff"] == 0.50 * b.total["ff"]
    assert room.limit["dsp"] == 0.80 * b.total["dsp"]  # the guideline, under util's 85 %
    assert Room.beside(perf, {}, b, util=0.6).limit["dsp"] == 0.6 * b.total["dsp"]  # util, under the guideline
    held = Room.beside(perf, {}, b, util=0.85, reserve={"lut": 1000.0})
    assert held.used({})["lut"] == 1000.0 and held.used({})["ff"] == 0
