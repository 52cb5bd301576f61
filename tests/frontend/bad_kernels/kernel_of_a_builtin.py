import streamdsl as sd

length = sd.kernel(len)  # EXPECT syntax error: @sd.kernel takes a Python function written with def, got the builtin 'len'
