import sys; sys.path.insert(0, '/tmp/probeB')
from harness import *
f = []
x = make_values('float32', 64, 1); m = make_mask(64, 1)
out = poison('float32', 64)
G.k_reduceMin[1, 64](x, m, out)
check('neg', 'reduceMax', x, m, out, expected('reduceMax', x, m, 64), np.dtype('float32'), f)
check('pos', 'reduceMin', x, m, out, expected('reduceMin', x, m, 64), np.dtype('float32'), f)
print(x[:10], out[:10])
# sum with subnormals check: is exp using subnormals?
x = make_values('float32', 64, 3); print(x[:10])
