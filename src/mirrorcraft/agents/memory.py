"""Giving an agent the memory a knowledge store holds, whatever the configuration.

MineEvolve receives the store's curated entries (``KnowledgeEntry``); the
baselines with memory (JARVIS-1, Optimus-1) receive the store's operations and
replay them (``memory_format = "operations"``). Both write their episode's
operations back through ``knowledge_delta``; the store file format is the same.
"""

from __future__ import annotations

from typing import Any

from mirrorcraft.agents.mineevolve.store import KnowledgeStore


def load_store(agent: Any, store: str | None, writable: bool) -> int:
    """Give ``agent`` the memory of ``store`` (None: start empty); returns the version read."""
    if not hasattr(agent, "load_knowledge"):
        if store is None and not writable:
            return 0
        raise ValueError(f"agent {agent.name!r} keeps no knowledge store")
    if store is None:
        agent.load_knowledge([], writable=writable)
        return 0
    with KnowledgeStore.open(store, read_only=True) as opened:
        if getattr(agent, "memory_format", "entries") == "operations":
            agent.load_knowledge(opened.operations(), writable=writable)
        else:
            agent.load_knowledge(opened.entries(), writable=writable)
        return opened.version


def episode_delta(agent: Any) -> list[dict[str, Any]]:
    """The memory operations the agent's last episode made (none for agents without memory)."""
    delta = getattr(agent, "knowledge_delta", None)
    return list(delta()) if callable(delta) else []
