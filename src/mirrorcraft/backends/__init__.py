"""Backends run episodes: ``sim`` (embedded simulator, default) and ``mineflayer`` (real server)."""
