import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[4]:
    C: sd.f32[4] = 0.0
    for i in range(4):
        C[i] = A[0:4]  # EXPECT syntax error: slices are not supported
    return C


print(k.ir)
