import numpy as np

import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames

TABLE = np.arange(8, dtype=np.float32)  # a constant tensor inside the kernel (a ROM)


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    for i in range(8):
        TABLE[i] = A[i] * 2.0  # EXPECT syntax error: 'TABLE' is a constant array from the enclosing scope
    return A


print(k.ir)
