"""MirrorCraft: paired evaluation of agents under hidden Minecraft rule changes."""

__version__ = "0.1.0"
