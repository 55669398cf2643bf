"""tensorplay_tpx.utils — autograd utilities (seen as ``tensorplay.utils.checkpoint``)."""
