import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[4]) -> sd.f32[4]:
    C: sd.f32[4] = 0.0
    s = [A[i] for i in range(4)]  # EXPECT syntax error: list comprehensions are not supported
    return C


print(k.ir)
