"""MirrorCraft: paired evaluation of agents under hidden Minecraft rule changes."""

from mirrorcraft import step_build

__version__ = "0.1.0"

step_build.choose()  # compiled step or Python sources, before any step module is imported
