"""Kernels of the HLStrans dataset (zanehpn/HLStrans: LLM-written HLS variants of PolyBench with their Vitis
reports), written in the DSL with the loops, sizes and int types of the variant's C source; the small
functions it calls are inlined, as Vitis inlined them (the report lists only the loops of the top)."""
from __future__ import annotations

import streamdsl as sd
from streamdsl import i32


@sd.kernel
def atax16(A: i32[16, 16], x: i32[16]) -> i32[16]:
    y: i32[16]  # a local of the top, kept in LUTRAM (the report's y_U, ram_s2p)
    y_out: i32[16]
    for i in range(16):
        y[i] = 0
        for j in range(16):
            y[i] += A[i, j] * x[j]
    for j in range(16):
        y_out[j] = 0
        for i in range(16):
            y_out[j] += A[i, j] * y[i]
    return y_out


KERNELS = {"atax16": atax16}


def scheduled(name: str):
    """The kernel's IR as the report's project built it: ap_memory ports (the Vivado IP flow), no directive."""
    s = sd.schedule(KERNELS[name])
    s.interface("ap_memory")
    return s.ir
