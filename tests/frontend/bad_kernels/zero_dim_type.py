import streamdsl as sd

Empty = sd.f32[4, 0]  # EXPECT shape error: tensor dimension must be a positive integer, got 0
