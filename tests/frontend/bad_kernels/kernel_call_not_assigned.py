import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def double(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i] * 2.0
    return C


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    double(A)  # EXPECT type error: kernel 'double' returns 1 value
    return A


print(k.ir)
