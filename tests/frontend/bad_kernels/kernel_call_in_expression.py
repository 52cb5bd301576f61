import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def total(A: sd.f32[8]) -> sd.f32:
    s: sd.f32 = 0.0
    for i in range(8):
        s += A[i]
    return s


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32:
    t = total(A) + 1.0  # EXPECT syntax error: a kernel call must be assigned to names
    return t


print(k.ir)
