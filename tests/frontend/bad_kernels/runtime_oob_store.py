import numpy as np
import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames

N = 8


@sd.kernel
def k(A: sd.f32[N, N]) -> sd.f32[N, N]:
    C: sd.f32[N, N] = 0.0
    for i in range(N):
        for j in range(N + 1):
            C[i, j] = A[i, 0]  # EXPECT shape error: index 8 is out of bounds for dimension 1 of 'C' (size 8)
    return C


k(np.zeros((N, N), dtype=np.float32))
