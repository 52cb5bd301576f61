import numpy as np

import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    B: sd.f32[10**12] = 0.0  # EXPECT shape error: local tensor 'B: f32[1000000000000]' needs 3.64 TiB, more than the simulator can allocate
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i] + B[i]
    return C


k(np.zeros(8, np.float32))
