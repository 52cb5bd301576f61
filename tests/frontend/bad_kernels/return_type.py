import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[4]:
    C: sd.f32[8] = 0.0
    for i in range(8):
        C[i] = A[i]
    return C  # EXPECT shape error: returns 'C' of type f32[8], but the annotation says f32[4]


print(k.ir)
