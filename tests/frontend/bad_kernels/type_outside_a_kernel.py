import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames

Weights = sd.Fixed(8, 12)  # EXPECT type error: fixed-point type needs 1 <= width <= 64 and int_bits <= width, got (8, 12)
