import numpy as np
import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(1, 9):
        C[i - 1] = C[i - 2] + A[i - 1]  # EXPECT shape error: index -1 is out of bounds for dimension 0 of 'C' (size 8)
    return C


k(np.zeros(8, dtype=np.float32))
