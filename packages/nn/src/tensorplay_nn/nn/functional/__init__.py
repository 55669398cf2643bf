"""tensorplay_nn.nn.functional (local stand-in until nn-core lands)."""

from .activation import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .loss import *  # noqa: F403
from .loss_margin import *  # noqa: F403
from .pooling import *  # noqa: F403
from .vision import *  # noqa: F403
