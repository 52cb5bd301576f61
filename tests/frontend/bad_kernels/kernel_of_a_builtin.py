import streamdsl as sd

sd.install_excepthook()  # a script that wants located errors without streamdsl's frames

length = sd.kernel(len)  # EXPECT syntax error: @sd.kernel takes a Python function written with def, got the builtin 'len'
