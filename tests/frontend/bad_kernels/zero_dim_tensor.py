import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[0]) -> sd.f32[1]:  # EXPECT shape error: tensor dimension must be a positive integer, got 0
    C: sd.f32[1] = 0.0
    return C


print(k.ir)
