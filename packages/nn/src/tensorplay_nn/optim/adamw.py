"""`AdamW`: Adam with decoupled weight decay (Loshchilov & Hutter, 2017).

Where it sits: `Adam` (adam.py) with `decoupled_weight_decay=True` and PyTorch's AdamW default
`weight_decay=1e-2`; the update, state and fused path are Adam's.
"""

from __future__ import annotations

from tensorplay_p10 import Tensor

from .adam import Adam
from .optimizer import ParamsT

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""AdamW, step for step PyTorch's `torch.optim.AdamW`.

    The weights shrink before the Adam step instead of the gradient carrying an L2 term:

    .. math::
        \theta_{t-1} \leftarrow (1 - \gamma\lambda)\,\theta_{t-1}, \qquad
        \theta_t = \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\,
                   \frac{m_t}{\sqrt{\hat v_t}/\sqrt{1-\beta_2^t}+\epsilon}

    Args are `Adam`'s (without `decoupled_weight_decay`, which is always on); `weight_decay` defaults to 1e-2.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tp.optim.AdamW([w], lr=0.1, weight_decay=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> [round(v, 3) for v in w.tolist()]
        [0.89, -1.88]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict) -> None:
        """Loading always keeps AdamW's decoupled weight decay on, whatever the saved groups say."""
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
