import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def add(A: sd.f32[8], B: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i] + B[i]
    return C


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    T = add(A)  # EXPECT type error: kernel 'add' takes 2 argument(s), got 1
    return T


print(k.ir)
