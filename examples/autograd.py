"""The README's "Autograd in five lines", as a file (tests/test_readme.py keeps the two identical)."""

import tensorplay as tp

x = tp.Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = tp.Tensor([[5.0, 6.0], [7.0, 8.0]])
z = x.matmul(y) + tp.ones_like(x)
z.sum().backward()
print(x.grad)  # tensor([[11., 15.], [11., 15.]])
