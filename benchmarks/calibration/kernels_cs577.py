"""The matrixmul lab of an IIT Guwahati course repository (vishalcseiitg/CS-577-C-BASED-VLSI, lab_1: Xilinx's
matrixmul tutorial kernel), written in the DSL with the loops, sizes, types and pragma of its C source: ``char``
operands, a ``short`` result, the column loop pipelined at II 3.  C multiplies the promoted ``int`` values and
stores the sum as ``short``; the kernel does the same with casts."""
from __future__ import annotations

import streamdsl as sd
from streamdsl import i8, i16, i32


@sd.kernel
def matrixmul(a: i8[3, 3], b: i8[3, 3]) -> i16[3, 3]:
    res: i16[3, 3]  # output port
    for i in range(3):  # Row
        for j in range(3):  # Col: #pragma HLS PIPELINE II=3
            res[i, j] = 0
            for k in range(3):  # Product
                res[i, j] = sd.cast(sd.cast(res[i, j], i32) + sd.cast(a[i, k], i32) * sd.cast(b[k, j], i32), i16)
    return res


KERNELS = {"matrixmul": matrixmul}


def scheduled(name: str):
    """The kernel's IR as the report's project built it: ap_memory ports, the source's pipeline pragma."""
    s = sd.schedule(KERNELS[name])
    s.interface("ap_memory")
    s.pipeline(s.loop("j"), ii=3)
    return s.ir
