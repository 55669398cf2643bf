"""``tensorplay.nn.utils``: helpers around training (gradient clipping, flat parameter vectors), one concept
per file, re-exported one import line per file."""

from __future__ import annotations

from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
