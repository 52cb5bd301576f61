import numpy as np
import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i + 1] - A[i]  # EXPECT shape error: index 8 is out of bounds for dimension 0 of 'A' (size 8)
    return C


k(np.zeros(8, dtype=np.float32))
