import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    C = A  # EXPECT syntax error: cannot assign a value to the whole tensor 'C'
    return C


print(k.ir)
