import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[4]) -> sd.f32[4]:
    C: sd.f32[4] = 0.0
    for i in range(4):
        try:  # EXPECT syntax error: try/except is not supported
            C[i] = A[i]
        except IndexError:
            pass
    return C


print(k.ir)
