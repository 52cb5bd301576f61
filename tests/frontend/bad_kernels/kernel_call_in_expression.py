import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def stats(A: sd.f32[8]) -> (sd.f32, sd.f32):
    s: sd.f32 = 0.0
    m: sd.f32 = -1000.0
    for i in range(8):
        s += A[i]
        m = max(m, A[i])
    return s, m


@sd.kernel
def k(A: sd.f32[8]) -> sd.f32:
    t = stats(A) + 1.0  # EXPECT syntax error: kernel 'stats' returns 2 values; a call used as a value returns one
    return t


print(k.ir)
