import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.i32[8]) -> sd.i32[8]:
    C: sd.i32[8] = 0
    for i in range(8):
        bias: sd.i32 = 1.5  # EXPECT type error: float 1.5 assigned to i32
        C[i] = A[i] + bias
    return C


print(k.ir)
