"""Hatch metadata hook for the `tensorplay` meta-package (packages/tensorplay/hatch_build.py).

Pins the four pillar wheels to exactly this package's version (read from VERSION by hatch's regex version
source before this hook runs), keeping all five wheels in lockstep without hand-edited pins.
"""

from __future__ import annotations

from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

PILLARS = ("tensorplay-p10", "tensorplay-tpx", "tensorplay-stax", "tensorplay-nn")


class LockstepPinsHook(MetadataHookInterface):
    """Fill `project.dependencies` with `<pillar>==<version>` for every pillar."""

    PLUGIN_NAME = "custom"

    def update(self, metadata: dict[str, Any]) -> None:
        version = metadata["version"]
        metadata["dependencies"] = [f"{name}=={version}" for name in PILLARS]
