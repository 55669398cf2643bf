"""The main job of `tools/dev demo`, for now: a tour of TensorPlay's tensor core.

It shows creation, arithmetic with broadcasting and type promotion, views that share memory, printing, the
random generator, NumPy interop, and `tp.explain` — which kernel ran for each op, and in which file. (Training
the README's TinyLM replaces this once the nn pillar lands.)
"""

import numpy as np

import tensorplay as tp


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * (70 - len(title)))


section("creation")
x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
print("x =", x)
print("tp.arange(6).reshape(2, 3) =", tp.arange(6).reshape(2, 3))
print("tp.linspace(0, 1, 5) =", tp.linspace(0, 1, 5))
print("tp.eye(3, dtype=tp.int32) =", tp.eye(3, dtype=tp.int32))

section("arithmetic, broadcasting, promotion")
print("x * 10 + tp.tensor([1., 2.]) =", x * 10 + tp.tensor([1.0, 2.0]))
i = tp.tensor([1, 2, 3])
print("int64 / 2 ->", i / 2, " (true division promotes to", (i / 2).dtype, ")")
print("float16 + 1.0 stays", (tp.ones(2, dtype=tp.float16) + 1.0).dtype)

section("views share memory")
v = x.t()
v[0, 1] = 100.0
print("after x.t()[0, 1] = 100:  x =", x)
print("strides of x and x.t():", x.stride(), v.stride(), " contiguous:", x.is_contiguous(), v.is_contiguous())

section("printing like PyTorch")
print(tp.arange(2000.0).reshape(40, 50) / 3)

section("random numbers (PyTorch's CPU stream, bit for bit)")
tp.manual_seed(0)
print("tp.manual_seed(0); tp.rand(3) =", tp.rand(3))

section("the CPU op library: reductions, matrix products, NN kernels, indexing")
m = tp.arange(6.0).reshape(2, 3)
print("m.sum(0) =", m.sum(0), "  m.max(dim=1) ->", m.max(dim=1).values)
print("m @ m.T =", m @ m.T)
print("softmax(m, dim=1) =", tp.softmax(m, 1))
print(
    "m[m > 2] =", m[m > 2], "  tp.sort(tp.tensor([3, 1, 2])).indices =", tp.sort(tp.tensor([3, 1, 2])).indices
)

section("NumPy interop without copies")
a = np.zeros(3, dtype=np.float32)
t = tp.from_numpy(a)
t += 1
print("numpy array after t += 1 on tp.from_numpy(a):", a)

section("tp.explain: what the dispatcher did")
tp.explain(lambda: (x + 1).reshape(4) * 2)
print("\nEvery op, with the keys that have kernels:  tp.ops.table()  (first lines)")
print("\n".join(tp.ops.table().splitlines()[:6]))

section("autograd (tensorplay-tpx): the graph, backward, and a second derivative")
w = tp.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
loss = (w.matmul(tp.tensor([[5.0, 6.0], [7.0, 8.0]])) + tp.ones_like(w)).sum()
print("loss =", loss)
print(
    "graph:", loss.grad_fn.name(), "<-", [n.name() for n, _ in loss.grad_fn.next_functions if n is not None]
)
loss.backward()
print("w.grad =", w.grad)
s = tp.tensor(2.0, requires_grad=True)
(ds,) = tp.autograd.grad(s**3, s, create_graph=True)
print("d/ds s^3 at 2 =", ds.item(), "  d2/ds2 =", tp.autograd.grad(ds, s)[0].item())
