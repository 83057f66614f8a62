"""The knowledge an agent holds during an episode, and the changes it makes to it.

Every change is an operation (``add``, ``reinforce``, ``use``, ``retire``) applied
by ``apply_op``; the agent collects its operations as the episode's delta and the
persistent store replays the same operations, so an entry evolves identically in
memory and on disk.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry

OPS = ("add", "reinforce", "use", "retire")
REPLAY_VERSION = 1
"""Raise when ``apply_op`` would turn the same operations into other entries: stores cache the
state their operations replay to, and a cache made under another value is rebuilt.
``tests/test_mineevolve_replay_pin.py`` pins what a stream of every operation kind replays
to under each value, and fails when the replay changes under the same one."""


class KnowledgeOpError(ValueError):
    pass


def apply_op(entries: dict[str, KnowledgeEntry], op: dict[str, Any]) -> None:
    """Apply one operation in place (unknown entry ids are ignored for all but ``add``)."""
    kind = op.get("op")
    if kind == "add":
        entry = KnowledgeEntry.model_validate(op["entry"])
        entries[entry.id] = entry
        return
    if kind not in OPS:
        raise KnowledgeOpError(f"unknown knowledge operation {kind!r}")
    current = entries.get(str(op.get("id")))
    if current is None:
        return
    if kind == "reinforce":
        evidence = tuple(dict.fromkeys((*current.evidence, *op.get("evidence", ()))))[-20:]
        entries[current.id] = current.model_copy(
            update={"support": current.support + 1, "evidence": evidence}
        )
    elif kind == "use":
        entries[current.id] = current.model_copy(
            update={
                "uses": current.uses + 1,
                "successes": current.successes + (1 if op.get("success") else 0),
            }
        )
    else:
        entries[current.id] = current.model_copy(update={"retired": True})


@dataclass
class KnowledgeBase:
    """Entries by id plus the operations applied since loading (the episode's delta)."""

    entries: dict[str, KnowledgeEntry] = field(default_factory=dict)
    writable: bool = True
    ops: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, entries: Iterable[KnowledgeEntry], *, writable: bool = True) -> KnowledgeBase:
        return cls({e.id: e for e in entries}, writable)

    def apply(self, op: dict[str, Any]) -> None:
        if not self.writable:
            return
        apply_op(self.entries, op)
        self.ops.append(op)

    def add(self, entry: KnowledgeEntry) -> None:
        self.apply({"op": "add", "entry": entry.model_dump(mode="json")})

    def reinforce(self, entry_id: str, evidence: Sequence[str]) -> None:
        self.apply({"op": "reinforce", "id": entry_id, "evidence": list(evidence)})

    def use(self, entry_id: str, success: bool) -> None:
        self.apply({"op": "use", "id": entry_id, "success": success})

    def retire(self, entry_id: str) -> None:
        self.apply({"op": "retire", "id": entry_id})

    def live(self) -> list[KnowledgeEntry]:
        return [e for _id, e in sorted(self.entries.items()) if not e.retired]

    def counts(self) -> dict[str, int]:
        out = {"skill": 0, "remedy": 0, "reflection": 0}
        for e in self.live():
            out[e.kind] += 1
        return out

    def fresh_id(self, prefix: str, taken: Collection[str] = ()) -> str:
        """An id no entry has, nor any of ``taken`` (entries held outside the base: the
        remedies a read-only episode keeps active)."""
        n = len(self.entries) + 1
        while f"{prefix}_{n:04d}" in self.entries or f"{prefix}_{n:04d}" in taken:
            n += 1
        return f"{prefix}_{n:04d}"
