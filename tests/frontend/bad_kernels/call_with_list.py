import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[4]) -> sd.f32[4]:
    C: sd.f32[4] = 0.0
    for i in range(4):
        C[i] = A[i]
    return C


k([1.0, 2.0, 3.0, 4.0])  # EXPECT type error: argument 'A' of 'k' must be a NumPy array of f32[4], got list
