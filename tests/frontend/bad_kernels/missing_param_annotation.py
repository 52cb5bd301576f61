import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames


@sd.kernel
def k(A: sd.f32[4],
      n) -> sd.f32[4]:  # EXPECT type error: parameter 'n' needs a type annotation
    C: sd.f32[4] = 0.0
    return C


print(k.ir)
