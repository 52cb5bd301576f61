import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(0, 8, 0):  # EXPECT syntax error: a loop step must be a nonzero integer constant
        C[i] = A[i]
    return C


print(k.ir)
