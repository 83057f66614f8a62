"""Cross-episode memory of the baselines: records by id, changed only through logged operations.

JARVIS-1 keeps successful plans, Optimus-1 knowledge-graph edges and experience
summaries. Each is a record ``{"kind": ..., ...}`` under an id. A change is an
operation (``put`` a record, ``drop`` one) applied by ``apply``; the agent returns
its operations as the episode's delta and a knowledge store (the same file format
MineEvolve uses) replays them, so memory evolves identically in an episode and on
disk. A read-only memory applies nothing and logs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MEMORY_OPS = ("put", "drop")


class MemoryOpError(ValueError):
    pass


def apply_memory_op(records: dict[str, dict[str, Any]], op: Mapping[str, Any]) -> None:
    kind = op.get("op")
    if kind not in MEMORY_OPS:
        raise MemoryOpError(f"unknown memory operation {kind!r}")
    key = op.get("id")
    if not isinstance(key, str) or not key:
        raise MemoryOpError("a memory operation needs a string id")
    if kind == "drop":
        records.pop(key, None)
        return
    value = op.get("record")
    if not isinstance(value, Mapping) or not isinstance(value.get("kind"), str):
        raise MemoryOpError(f"memory record {key!r} must be an object with a kind")
    records[key] = dict(value)


@dataclass
class RecordMemory:
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    writable: bool = True
    ops: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def replay(cls, ops: Iterable[Mapping[str, Any]], *, writable: bool = True) -> RecordMemory:
        records: dict[str, dict[str, Any]] = {}
        for op in ops:
            apply_memory_op(records, op)
        return cls(records, writable)

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        if not self.writable:
            return
        op = {"op": "put", "id": key, "record": dict(record)}
        apply_memory_op(self.records, op)
        self.ops.append(op)

    def drop(self, key: str) -> None:
        if not self.writable or key not in self.records:
            return
        op = {"op": "drop", "id": key}
        apply_memory_op(self.records, op)
        self.ops.append(op)

    def of_kind(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        return [(k, r) for k, r in sorted(self.records.items()) if r.get("kind") == kind]

    def counts(self, kinds: Iterable[str]) -> dict[str, int]:
        out = {k: 0 for k in kinds}
        for r in self.records.values():
            out[str(r["kind"])] = out.get(str(r["kind"]), 0) + 1
        return out

    def fresh_id(self, prefix: str) -> str:
        n = len(self.records) + 1
        while f"{prefix}_{n:04d}" in self.records:
            n += 1
        return f"{prefix}_{n:04d}"
