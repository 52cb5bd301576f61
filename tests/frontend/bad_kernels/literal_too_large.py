import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.u8[8]) -> sd.u8[8]:
    C: sd.u8[8] = 0
    for i in range(8):
        C[i] = A[i] + 300  # EXPECT type error: literal 300 does not fit in u8 (range 0..255)
    return C


print(k.ir)
