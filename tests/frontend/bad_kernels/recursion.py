import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames
from streamdsl import f32


@sd.kernel
def again(A: f32[4]) -> f32[4]:
    T = again(A)  # EXPECT syntax error: kernel 'again' calls itself
    return T


print(again.ir)
