import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel  # EXPECT syntax error: @sd.kernel takes a Python function written with def, got a class
class Gemm:
    def __call__(self, A):
        return A
