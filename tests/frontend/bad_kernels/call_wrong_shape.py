import numpy as np
import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i]
    return C


x = np.zeros(8, dtype=np.float32)
print(k(x))
y = np.zeros((4, 2), dtype=np.float32)
print(k(y))  # EXPECT shape error: argument 'A' of 'k' has shape (4, 2), but the kernel declares A: f32[8]
