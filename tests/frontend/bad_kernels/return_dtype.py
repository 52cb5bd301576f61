import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.i32[8] = 0
    for i in range(8):
        C[i] = i
    return C  # EXPECT type error: returns 'C' of type i32[8], but the annotation says f32[8]


print(k.ir)
