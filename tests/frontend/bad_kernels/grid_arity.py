import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[4, 4]) -> sd.f32[4, 4]:
    C: sd.f32[4, 4] = 0.0
    for i, j in sd.grid(4, 4, 4):  # EXPECT syntax error: sd.grid has 3 extents but the loop binds 2 names
        C[i, j] = A[i, j]
    return C


print(k.ir)
