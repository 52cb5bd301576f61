import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = sd.max(A[i], b=0.0)  # EXPECT syntax error: keyword arguments are not supported
    return C


print(k.ir)
