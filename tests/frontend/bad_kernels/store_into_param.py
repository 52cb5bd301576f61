import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    for i in range(8):
        A[i] = A[i] * 2.0  # EXPECT syntax error: parameter 'A' is read-only
    return A


print(k.ir)
