import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(8 / 2):  # EXPECT type error: loop bound 4.0 is not an integer
        C[i] = A[i]
    return C


print(k.ir)
