import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.i32[8]) -> sd.i32[8]:
    C: sd.i32[8] = 0
    for i in range(8):
        C[i] = A[i] + 3000000000  # EXPECT type error: literal 3000000000 does not fit in i32
    return C


print(k.ir)
