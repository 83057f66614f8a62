"""``REPLAY_VERSION`` guarded: knowledge stores cache the state their operations replay to,
keyed by it, so a change to how operations apply (``knowledge_base.apply_op``) must raise
it or every folder resumes from a stale cached state. This test pins what a fixed stream of
every operation kind replays to, together with the ``REPLAY_VERSION`` it was recorded
under; when the replay changes, it fails telling the developer what to do."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry
from mirrorcraft.agents.mineevolve.knowledge_base import OPS, REPLAY_VERSION, apply_op
from mirrorcraft.agents.mineevolve.store import KnowledgeStore

PINNED = {1: "705faef8716e37240c0be56385ee2e74"}
"""REPLAY_VERSION -> the digest of the state ``STREAM`` replays to under it."""


def _add(eid: str, kind: str, **fields: Any) -> dict[str, Any]:
    entry = KnowledgeEntry(id=eid, kind=kind, trigger=("target:stick",), **fields)  # type: ignore[arg-type]
    return {"op": "add", "entry": entry.model_dump(mode="json")}


STREAM: list[list[dict[str, Any]]] = [
    [  # episode 1: one entry of each kind
        _add(
            "s1", "skill", steps=({"action": {"skill": "wait", "args": {}}},), effects={"stick": 4}
        ),
        _add("r1", "remedy", failure_type="MISSING_STATION", risk_pattern="no table"),
        _add("t1", "reflection", text="sticks need planks", initial_confidence=0.7),
    ],
    [  # episode 2: reinforcement (evidence kept once, in order, the last 20), uses
        {"op": "reinforce", "id": "r1", "evidence": [f"ep{i}" for i in range(25)]},
        {"op": "reinforce", "id": "r1", "evidence": ["ep3", "new"]},
        {"op": "use", "id": "s1", "success": True},
        {"op": "use", "id": "s1", "success": False},
        {"op": "use", "id": "r1"},
    ],
    [  # episode 3: retirement, an add that replaces an entry, operations on unknown ids
        {"op": "retire", "id": "t1"},
        _add("s1", "skill", initial_confidence=0.9),
        {"op": "use", "id": "s1", "success": True},
        {"op": "reinforce", "id": "nobody", "evidence": ["x"]},
        {"op": "use", "id": "nobody", "success": True},
        {"op": "retire", "id": "nobody"},
    ],
]


def _digest(entries: dict[str, KnowledgeEntry]) -> str:
    doc = {k: e.model_dump(mode="json") for k, e in sorted(entries.items())}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32]


def test_the_stream_uses_every_operation_kind() -> None:
    assert {op["op"] for ops in STREAM for op in ops} == set(OPS), (
        "a new knowledge operation kind: add it to STREAM and re-pin the digest"
    )


def test_the_replayed_state_is_pinned_with_its_replay_version(tmp_path: Path) -> None:
    """In memory (``apply_op``) and through a store (its replay and its cached state)."""
    entries: dict[str, KnowledgeEntry] = {}
    for ops in STREAM:
        for op in ops:
            apply_op(entries, op)
    got = _digest(entries)
    told = (
        f"the knowledge operations now replay to another state (digest {got}) than the one "
        f"pinned under REPLAY_VERSION {REPLAY_VERSION}: if apply_op (or what an entry "
        "holds) changed on purpose, raise REPLAY_VERSION in "
        "agents/mineevolve/knowledge_base.py, so stores rebuild their cached states, and "
        f"pin {{{REPLAY_VERSION + 1}: {got!r}}} in PINNED here; otherwise the change is a bug"
    )
    assert REPLAY_VERSION in PINNED, (
        f"REPLAY_VERSION is {REPLAY_VERSION}, not pinned: add {{{REPLAY_VERSION}: {got!r}}} "
        "to PINNED"
    )
    assert got == PINNED[REPLAY_VERSION], told
    with KnowledgeStore.open(tmp_path / "k.sqlite") as store:
        for i, ops in enumerate(STREAM):
            store.commit(f"ep{i}", "vanilla", ops)
        assert _digest(store.state(use_cache=False)) == got
        assert _digest(store.state()) == got  # writes the cache
    with KnowledgeStore.open(tmp_path / "k.sqlite") as store:
        assert _digest(store.state()) == got  # read from the cache
