import numpy as np
import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i]
    return C


def run():
    x = np.zeros(8)
    return k(x)  # EXPECT type error: argument 'A' of 'k' has dtype float64, but the kernel declares A: f32[8]


run()
