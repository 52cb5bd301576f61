import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[8, 4]) -> sd.f32[8]:
    C: sd.f32[8] = 0.0
    for i in range(A.shape[0]):  # EXPECT syntax error: 'A.shape': kernel values have no attributes
        C[i] = A[i, 0]
    return C


print(k.ir)
