"""tensorplay_nn.nn.functional — the stateless forms of the layers (seen as `tensorplay.nn.functional`, `F`).

Each family lives in its own file and lists its names in `__all__`; the lines below re-export them.
"""

from .activation import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .loss import *  # noqa: F403
from .loss_margin import *  # noqa: F403
from .pooling import *  # noqa: F403
from .vision import *  # noqa: F403
