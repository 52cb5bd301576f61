import numpy as np
import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = np.exp(A[i])  # EXPECT syntax error: 'np.exp' cannot be called in a kernel
    return C


print(k.ir)
