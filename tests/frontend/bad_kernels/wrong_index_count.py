import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[4, 4]) -> sd.f32[4]:
    C: sd.f32[4] = 0.0
    for i in range(4):
        C[i] = A[i]  # EXPECT shape error: tensor 'A' has rank 2 but is indexed with 1 index
    return C


print(k.ir)
