import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames

Empty = sd.f32[4, 0]  # EXPECT shape error: tensor dimension must be a positive integer, got 0
