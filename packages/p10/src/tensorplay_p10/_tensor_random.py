"""The in-place random fills of ``tensorplay.Tensor`` (``x.uniform_()``, ``x.normal_()``, ...).

Where it sits: a base class of ``Tensor`` (``_tensor.py``). Each method calls the random op of the same name,
which draws from the generator given (or the default one): the streams equal PyTorch's CPU streams
(``random.py``).

Example:
    >>> import tensorplay_p10 as tp
    >>> _ = tp.manual_seed(0)
    >>> tp.empty(3).uniform_(0, 1).shape
    tensorplay.Size([3])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _C

if TYPE_CHECKING:
    from ._tensor import Tensor

_op = _C._op


class TensorRandomFills:
    """``uniform_``, ``normal_``, ``random_``, ... and ``bernoulli``, ``multinomial``, as Tensor methods."""

    __slots__ = ()

    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> Tensor:
        return _op("uniform_")(self, from_, to, generator=generator)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        return _op("normal_")(self, mean, std, generator=generator)

    def random_(self, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
        if "from" in kwargs:
            args = (kwargs.pop("from"),) + args
        if "to" in kwargs:
            args = args + (kwargs.pop("to"),) if args else (kwargs.pop("to"),)
        if len(args) == 2:
            return _op("random_.from")(self, args[0], args[1], generator=generator)
        if len(args) == 1:
            return _op("random_.to")(self, args[0], generator=generator)
        return _op("random_")(self, generator=generator)

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        return _op("exponential_")(self, lambd, generator=generator)

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
        return _op("cauchy_")(self, median, sigma, generator=generator)

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
        return _op("log_normal_")(self, mean, std, generator=generator)

    def geometric_(self, p: float, *, generator: Any = None) -> Tensor:
        return _op("geometric_")(self, p, generator=generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        """0/1 draws of probability ``p``: a number, or a tensor broadcast to ``self`` (as PyTorch)."""
        if isinstance(p, TensorRandomFills):  # a Tensor (every Tensor has these methods)
            return _op("bernoulli_.Tensor")(self, p, generator=generator)
        return _op("bernoulli_.float")(self, p, generator=generator)

    def bernoulli(self, *, generator: Any = None) -> Tensor:
        return _op("bernoulli")(self, generator=generator)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator: Any = None) -> Tensor:
        return _op("multinomial")(self, num_samples, replacement, generator=generator)
