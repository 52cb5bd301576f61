import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> (sd.f32[8], sd.f32[8]):
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i]
    return C  # EXPECT type error: kernel returns 1 value(s) but is annotated with 2


print(k.ir)
