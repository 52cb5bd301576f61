print('streamdsl demo: coming up')
