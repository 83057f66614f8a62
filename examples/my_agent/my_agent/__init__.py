"""An example MirrorCraft agent package (see greedy.py and docs/agent_api.md)."""

__version__ = "0.1.0"
