import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i] % 2.0  # EXPECT type error: floor division and modulo of floats are not supported
    return C


print(k.ir)
