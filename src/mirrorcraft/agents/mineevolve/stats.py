"""Per-episode figures of a MineEvolve run: calls, retrieval cost, curation and feedback counts.

They go into the episode record (``memory`` field) and feed the knowledge-growth
and overhead tables (store size, retrieved tokens, retrieval latency, model calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.agents.mineevolve.curator import Retrieval, Verdict
from mirrorcraft.agents.mineevolve.feedback import Feedback

MEMORY_PURPOSES = ("skill", "remedy", "reflection", "curate")
"""Calls spent building and curating knowledge (the "extra calls" of the overhead table)."""


@dataclass
class SubgoalStats:
    """What every method that runs checked subgoals reports per episode (MineEvolve here, the
    baselines in ``agents/baselines/executor.py``): store size, calls, plans, retrieval cost
    and subgoal outcomes, under the same record keys."""

    store_at_start: dict[str, int] = field(default_factory=dict)
    store_at_end: dict[str, int] = field(default_factory=dict)
    writable: bool = True
    calls: dict[str, int] = field(default_factory=dict)
    plans: int = 0
    json_repairs: int = 0
    operations: int = 0
    retrievals: int = 0
    retrieved_entries: int = 0
    retrieved_tokens: int = 0
    retrieval_seconds: float = 0.0
    subgoals: int = 0
    subgoal_successes: int = 0
    failure_types: dict[str, int] = field(default_factory=dict)

    def call(self, purpose: str) -> None:
        self.calls[purpose] = self.calls.get(purpose, 0) + 1

    def add_retrieval(self, entries: int, tokens: int, seconds: float) -> None:
        self.retrievals += 1
        self.retrieved_entries += entries
        self.retrieved_tokens += tokens
        self.retrieval_seconds += seconds

    def feedback(self, fb: Feedback) -> None:
        self.subgoals += 1
        self.subgoal_successes += int(fb.success)
        if not fb.success:
            self.failure_types[fb.failure_type] = self.failure_types.get(fb.failure_type, 0) + 1

    def common_json(self) -> dict[str, Any]:
        n = max(self.retrievals, 1)
        return {
            "store_at_start": dict(self.store_at_start),
            "store_at_end": dict(self.store_at_end),
            "writable": self.writable,
            "calls": dict(sorted(self.calls.items())),
            "plans": self.plans,
            "json_repairs": self.json_repairs,
            "operations": self.operations,
            "retrievals": self.retrievals,
            "retrieved_entries_mean": round(self.retrieved_entries / n, 3),
            "retrieved_tokens_mean": round(self.retrieved_tokens / n, 2),
            "retrieval_ms_mean": round(1000 * self.retrieval_seconds / n, 4),
            "subgoals": self.subgoals,
            "subgoal_successes": self.subgoal_successes,
            "failure_types": dict(sorted(self.failure_types.items())),
        }


@dataclass
class EpisodeStats(SubgoalStats):
    repairs: int = 0
    fallback_repairs: int = 0
    full_replans: int = 0
    retries: int = 0
    remedies_due: int = 0
    skill_inductions: int = 0
    remedy_inductions: int = 0
    skills_known: int = 0
    accepted: int = 0
    merged: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    uses: int = 0
    remedy_claims: int = 0
    unknown_claims: int = 0
    prefix_disagreements: int = 0
    judged: int = 0
    bare_replans: int = 0
    stagnant: int = 0

    def retrieval(self, found: Retrieval, seconds: float) -> None:
        self.add_retrieval(len(found.entries), found.tokens, seconds)

    def verdict(self, verdict: Verdict) -> None:
        if verdict.reason == "merged":
            self.merged += 1
        elif verdict.accepted:
            self.accepted += 1
        else:
            self.rejected[verdict.reason] = self.rejected.get(verdict.reason, 0) + 1

    def feedback(self, fb: Feedback) -> None:
        super().feedback(fb)
        self.stagnant += int(fb.stagnant)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.common_json(),
            "memory_calls": sum(self.calls.get(p, 0) for p in MEMORY_PURPOSES),
            "repairs": self.repairs,
            "fallback_repairs": self.fallback_repairs,
            "full_replans": self.full_replans,
            "retries": self.retries,
            "remedies_due": self.remedies_due,
            "skill_inductions": self.skill_inductions,
            "remedy_inductions": self.remedy_inductions,
            "skills_known": self.skills_known,
            "accepted": self.accepted,
            "merged": self.merged,
            "rejected": dict(sorted(self.rejected.items())),
            "uses": self.uses,
            "remedy_claims": self.remedy_claims,
            "unknown_claims": self.unknown_claims,
            "prefix_disagreements": self.prefix_disagreements,
            "judged": self.judged,
            "bare_replans": self.bare_replans,
            "stagnant": self.stagnant,
        }
