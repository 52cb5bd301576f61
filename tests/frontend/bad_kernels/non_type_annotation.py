import numpy as np
import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: np.float32) -> sd.f32[4]:  # EXPECT type error: 'np.float32' is not a type
    C: sd.f32[4] = 0.0
    return C


print(k.ir)
