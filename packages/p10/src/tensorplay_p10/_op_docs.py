"""Hand-written docstrings of ops: the maths and a runnable example, shown first by ``help(tp.<op>)``.

Where it sits: data read by ``_op_signature._doc`` (the ``__doc__`` of every op packet), keyed by the op's
name as ``tp.<name>`` spells it. An op without an entry still documents itself: its signature and every
overload's schema. ``__test__`` makes the examples doctests (tests/test_docstrings.py runs them).
"""

from __future__ import annotations

DOCS: dict[str, str] = {
    "exp": """
        The exponential of each element: ``out[i] = e ** self[i]``.

        >>> import tensorplay_p10 as tp
        >>> tp.exp(tp.tensor([0.0, 1.0]))
        tensor([1.0000, 2.7183])
    """,
    "log": """
        The natural logarithm of each element: ``out[i] = ln(self[i])`` (NaN below 0, -inf at 0).

        >>> import tensorplay_p10 as tp
        >>> tp.log(tp.tensor([1.0, 0.0]))
        tensor([0., -inf])
    """,
    "add": """
        ``self + alpha * other``, broadcast and type-promoted like every elementwise op.

        >>> import tensorplay_p10 as tp
        >>> tp.ops.add(tp.tensor([1, 2]), tp.tensor([10, 20]), alpha=2)
        tensor([21, 42])
    """,
    "mul": """
        ``self * other``, elementwise with broadcasting.

        >>> import tensorplay_p10 as tp
        >>> tp.ops.mul(tp.tensor([[1], [2]]), tp.tensor([3, 4]))
        tensor([[3, 4],
                [6, 8]])
    """,
    "sum": """
        The sum of the elements, over every dimension or over ``dim`` (kept as size 1 with ``keepdim``).

        >>> import tensorplay_p10 as tp
        >>> tp.sum(tp.tensor([[1, 2], [3, 4]]), dim=0)
        tensor([4, 6])
    """,
    "mean": """
        The arithmetic mean over every dimension or over ``dim``; integer inputs need a floating ``dtype``.

        >>> import tensorplay_p10 as tp
        >>> tp.mean(tp.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=1)
        tensor([1.5000, 3.5000])
    """,
    "matmul": """
        The matrix product, with NumPy's rules for 1-D operands and broadcast batch dimensions.

        >>> import tensorplay_p10 as tp
        >>> tp.matmul(tp.tensor([[1.0, 2.0]]), tp.tensor([[3.0], [4.0]]))
        tensor([[11.]])
    """,
    "where": """
        ``self`` where ``condition`` is true, else ``other``, elementwise with broadcasting.

        >>> import tensorplay_p10 as tp
        >>> tp.where(tp.tensor([True, False]), tp.tensor([1, 2]), tp.tensor([8, 9]))
        tensor([1, 9])
    """,
    "cat": """
        Joins tensors of equal shape (but for ``dim``) along the existing dimension ``dim``.

        >>> import tensorplay_p10 as tp
        >>> tp.cat([tp.tensor([1, 2]), tp.tensor([3])])
        tensor([1, 2, 3])
    """,
    "view": """
        The same data seen with another shape: no copy, the result shares storage with ``self`` (its schema
        says ``Tensor(a) self -> Tensor(a)``). The sizes must be compatible with ``self``'s strides.

        >>> import tensorplay_p10 as tp
        >>> tp.arange(6).view([2, 3])
        tensor([[0, 1, 2],
                [3, 4, 5]])
    """,
    "relu": """
        ``max(self, 0)`` elementwise.

        >>> import tensorplay_p10 as tp
        >>> tp.relu(tp.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """,
}

__test__ = DOCS
