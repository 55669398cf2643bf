"""tensorplay_nn.optim — optimisers (seen as `tensorplay.optim`), following `torch.optim` (docs/design.md §6).

One algorithm per file, each a subclass of `Optimizer` (optimizer.py) whose update is written with plain
tensor ops under no_grad, step for step PyTorch's for-loop implementation. SGD, Adam and AdamW also have a
fused path (`foreach=True` / `fused=True`): one native call per parameter group (_fused.py, over
packages/nn/csrc/fused_optim.cpp). Learning-rate schedules live in `lr_scheduler`.

    >>> import tensorplay as tp
    >>> w = tp.zeros(3, requires_grad=True)
    >>> opt = tp.optim.AdamW([w], lr=1e-2)
    >>> sched = tp.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .lion import Lion
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Lion",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "SGD",
    "lr_scheduler",
]
