import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    i: sd.i32 = 0
    while i < 8:  # EXPECT syntax error: while loops are not supported
        C[i] = A[i]
        i += 1
    return C


print(k.ir)
