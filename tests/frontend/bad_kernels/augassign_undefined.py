import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32:
    for i in range(8):
        acc += A[i]  # EXPECT syntax error: 'acc' is not defined
    return 0.0


print(k.ir)
