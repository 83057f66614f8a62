"""Giving an agent the memory a knowledge store holds, whatever the configuration.

MineEvolve receives the store's curated entries (``KnowledgeEntry``); the
baselines with memory (JARVIS-1, Optimus-1) receive the store's operations and
replay them (``memory_format = "operations"``). Both write their episode's
operations back through ``knowledge_delta``; the store file format is the same.

A user's agent (``agents/plugins.py``) keeps records: it receives the records the
store's operations build (id -> record), and returns its episode's operations,
``{"op": "put", "id": ..., "record": {"kind": ..., ...}}`` or ``{"op": "drop", "id": ...}``
(the baselines' format, ``agents/baselines/memory.py``). They are checked here before
anything is committed, so an agent's bad operation never reaches a store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mirrorcraft.agents.baselines.memory import MemoryOpError, RecordMemory, apply_memory_op
from mirrorcraft.agents.mineevolve.store import KnowledgeStore, KnowledgeStoreError
from mirrorcraft.agents.plugins import PluginAgent
from mirrorcraft.agents.registry import split_name
from mirrorcraft.faults import exception_text

MAX_DELTA_BYTES = 1 << 20
"""The most one episode of a user agent may add to its store (JSON), 1 MiB."""
MAX_ID_CHARS = 200


class MemoryDeltaError(ValueError):
    """A user agent returned operations a knowledge store cannot take, or was given a store it
    cannot read; the message says which."""


def load_store(agent: Any, store: str | None, writable: bool) -> int:
    """Give ``agent`` the memory of ``store`` (None: start empty); returns the version read."""
    if isinstance(agent, PluginAgent):
        return _load_plugin(agent, store, writable)
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


def start_problem(agent: str, store: str) -> str | None:
    """Why ``agent`` (a configuration or a user agent's reference) cannot start from the
    knowledge store ``store``, or None when it can: the file must be a store whose every
    operation the agent's memory replays (MineEvolve's entries; the records of the baselines
    and of user agents). Checked before a run, so a store of another kind of memory is refused
    instead of failing, or being scored, in every episode that reads it."""
    try:
        with KnowledgeStore.open(store, read_only=True) as opened:
            if split_name(agent)[0] == "mineevolve":
                try:
                    opened.state()
                except KnowledgeStoreError as exc:
                    detail = str(exc).removeprefix(f"{opened.path}: ")
                    return f"{store}: holds memory {agent} cannot read ({detail})"
                return None
            records: dict[str, dict[str, Any]] = {}
            for op in opened.operations():
                apply_memory_op(records, op)
    except KnowledgeStoreError as exc:
        return str(exc)
    except MemoryOpError as exc:
        return f"{store}: holds memory {agent} cannot read ({exc})"
    return None


def _load_plugin(agent: PluginAgent, store: str | None, writable: bool) -> int:
    if agent.init_error is not None:  # no instance: its episode ends in start, nothing learnt
        if store is None:
            return 0
        with KnowledgeStore.open(store, read_only=True) as opened:
            return opened.version
    if not agent.keeps_memory:
        if store is None and not writable:
            return 0
        raise ValueError(f"agent {agent.name!r} keeps no knowledge store")
    records: dict[str, dict[str, Any]] = {}
    version = 0
    if store is not None:
        with KnowledgeStore.open(store, read_only=True) as opened:
            try:
                for op in opened.operations():
                    apply_memory_op(records, op)
            except MemoryOpError as exc:
                raise MemoryDeltaError(
                    f"agent {agent.name!r}: {store} holds memory this agent cannot read ({exc}); "
                    "a user agent starts from a store that a user agent wrote"
                ) from None
            version = opened.version
    agent.loaded_records = {k: dict(v) for k, v in records.items()}
    try:
        agent.inner.load_knowledge(records, writable=writable)
    except Exception as exc:  # the agent's own bug: say so, and whose
        raise MemoryDeltaError(
            f"agent {agent.name!r}: load_knowledge raised {exception_text(exc)}"
        ) from None
    return version


def store_sizes(agent: Any, delta: list[dict[str, Any]]) -> dict[str, Any]:
    """For a user agent with memory: its store's records by kind when the episode started and
    with the episode's operations applied (the record's ``store_at_start``/``store_at_end``,
    as the packaged memory configurations report them); empty for other agents."""
    loaded = getattr(agent, "loaded_records", None) if isinstance(agent, PluginAgent) else None
    if loaded is None:
        return {}
    after = {k: dict(v) for k, v in loaded.items()}
    for op in delta:
        apply_memory_op(after, op)
    return {
        "store_at_start": RecordMemory(loaded).counts(()),
        "store_at_end": RecordMemory(after).counts(()),
    }


def episode_delta(agent: Any) -> list[dict[str, Any]]:
    """The memory operations the agent's last episode made (none for agents without memory)."""
    if isinstance(agent, PluginAgent):
        if not agent.keeps_memory:
            return []
        try:
            delta = agent.inner.knowledge_delta()
        except Exception as exc:  # nothing reaches the store; the fault names the agent
            raise MemoryDeltaError(
                f"agent {agent.name!r}: knowledge_delta raised {exception_text(exc)}"
            ) from None
        return checked_delta(agent.name, delta)
    delta = getattr(agent, "knowledge_delta", None)
    return list(delta()) if callable(delta) else []


def checked_delta(name: str, delta: Any) -> list[dict[str, Any]]:
    """A user agent's operations as plain JSON objects, or ``MemoryDeltaError`` saying what is
    wrong: a list of put/drop operations with string ids, records that are JSON objects with a
    ``kind``, at most ``MAX_DELTA_BYTES`` in all."""
    where = f"agent {name!r}: knowledge_delta"
    if isinstance(delta, str | bytes | Mapping) or not hasattr(delta, "__iter__"):
        raise MemoryDeltaError(
            f"{where} must return a list of operations, not {type(delta).__name__}"
        )
    out: list[dict[str, Any]] = []
    scratch: dict[str, dict[str, Any]] = {}
    size = 0
    for i, op in enumerate(delta):
        if not isinstance(op, Mapping):
            raise MemoryDeltaError(
                f"{where}: operation {i} is a {type(op).__name__}, not an object"
            )
        key = op.get("id")
        if isinstance(key, str) and len(key) > MAX_ID_CHARS:
            raise MemoryDeltaError(
                f"{where}: operation {i}: id longer than {MAX_ID_CHARS} characters"
            )
        try:
            apply_memory_op(scratch, op)
            text = json.dumps(dict(op), sort_keys=True, allow_nan=False)
        except MemoryOpError as exc:
            raise MemoryDeltaError(f"{where}: operation {i}: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise MemoryDeltaError(f"{where}: operation {i} is not plain JSON ({exc})") from None
        size += len(text)
        if size > MAX_DELTA_BYTES:
            raise MemoryDeltaError(
                f"{where}: the episode's operations exceed {MAX_DELTA_BYTES // 1024} KiB"
            )
        out.append(json.loads(text))
    return out
