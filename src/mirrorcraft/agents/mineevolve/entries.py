"""Knowledge entries (skills, remedies, free-text reflections) and the terms they trigger on.

A trigger is a list of ``field:value`` terms that can be matched against the
agent's planning context (``context_terms``): ``goal:`` an item the task wants,
``target:`` the current subgoal's target, ``skill:`` its skill, ``have:`` /
``lacks:`` an inventory item, ``facility:`` a placed station nearby, ``near:`` a
visible block or creature, ``failure:`` a recent failure type, ``biome:``.

An entry's confidence is its initial confidence ``c0`` updated by what happened
when it was used and how often it was re-induced::

    confidence = (k * c0 + successes + (support - 1)) / (k + uses + (support - 1))

with ``k`` the curator's ``prior_weight``. The rule regime an entry was learned
under is kept by the store beside the entry, never in it: the agent never sees it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mirrorcraft.agents.llm.worldview import norm
from mirrorcraft.agents.mineevolve.checks import Check, parse_check
from mirrorcraft.agents.mineevolve.plan import Subgoal, parse_subgoals
from mirrorcraft.body.observation import Observation

TRIGGER_FIELDS = (
    "goal",
    "target",
    "skill",
    "have",
    "lacks",
    "facility",
    "near",
    "failure",
    "biome",
)
SCOPES = ("subgoal", "unfinished_plan_suffix", "task")
KINDS = ("skill", "remedy", "reflection")
_TERM = re.compile(r"^([a-z]+):([a-z0-9_:/.#-]{1,64})$")


class KnowledgeEntry(BaseModel):
    """One stored entry, as the store persists it and the agent holds it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]{1,64}$")
    kind: Literal["skill", "remedy", "reflection"]
    trigger: tuple[str, ...]
    preconditions: tuple[str, ...] = ()
    steps: tuple[dict[str, Any], ...] = ()
    """Skill steps as subgoal objects (see ``plan.parse_subgoal``)."""
    verification: dict[str, Any] | None = None
    effects: dict[str, int] = {}
    failure_type: str = ""
    risk_pattern: str = ""
    repair: tuple[dict[str, Any], ...] = ()
    """Remedy repair as subgoal objects inserted into the unfinished plan."""
    scope: str = "unfinished_plan_suffix"
    text: str = ""
    """A free-text reflection (the text-reflection ablation only)."""
    initial_confidence: float = Field(0.5, ge=0, le=1)
    support: int = Field(1, ge=1)
    uses: int = Field(0, ge=0)
    successes: int = Field(0, ge=0)
    evidence: tuple[str, ...] = ()
    retired: bool = False

    def confidence(self, prior_weight: float) -> float:
        extra = self.support - 1
        value = (prior_weight * self.initial_confidence + self.successes + extra) / (
            prior_weight + self.uses + extra
        )
        return round(min(max(value, 0.0), 1.0), 4)

    def step_subgoals(self, max_actions: int = 64) -> tuple[Subgoal, ...]:
        subgoals, _problem = parse_subgoals(list(self.steps), max_actions, 64)
        return subgoals

    def repair_subgoals(self, max_actions: int = 64) -> tuple[Subgoal, ...]:
        subgoals, _problem = parse_subgoals(list(self.repair), max_actions, 64)
        return subgoals

    def check(self) -> Check | None:
        parsed = parse_check(self.verification) if self.verification else None
        return parsed if isinstance(parsed, Check) else None

    def content_key(self) -> str:
        """What the entry says, without bookkeeping: equal keys mean the same knowledge."""
        if self.kind == "skill":
            body: Any = [s.signature() for s in self.step_subgoals()]
        elif self.kind == "remedy":
            body = [self.failure_type, [s.signature() for s in self.repair_subgoals()]]
        else:
            body = " ".join(self.text.lower().split())
        return json.dumps([self.kind, sorted(self.trigger), body], sort_keys=True)

    def topic(self) -> str:
        """What the entry is about: a skill's verified item, a remedy's trigger and failure type."""
        if self.kind == "skill":
            check = self.check()
            return f"skill:{check.type}:{check.target}" if check else "skill:?"
        if self.kind == "remedy":
            return f"remedy:{self.failure_type}:{','.join(sorted(self.trigger))}"
        return f"reflection:{','.join(sorted(self.trigger))}"

    def render(self, prior_weight: float) -> str:
        """The entry as the planner sees it (compact; no bookkeeping beyond confidence)."""
        conf = self.confidence(prior_weight)
        lines = [
            f"- id: {self.id} (confidence {conf:.2f})",
            f"  trigger: {', '.join(self.trigger)}",
        ]
        if self.kind == "skill":
            if self.preconditions:
                lines.append(f"  preconditions: {', '.join(self.preconditions)}")
            steps = [json.dumps(s, sort_keys=True, separators=(",", ":")) for s in self.steps]
            lines.append("  steps: " + "; ".join(steps))
            lines.append(f"  verification: {json.dumps(self.verification, sort_keys=True)}")
        elif self.kind == "remedy":
            lines.append(f"  failure_type: {self.failure_type}")
            lines.append(f"  risk: {self.risk_pattern}")
            repair = [json.dumps(s, sort_keys=True, separators=(",", ":")) for s in self.repair]
            lines.append("  repair: " + "; ".join(repair))
            lines.append(f"  scope: {self.scope}")
        else:
            lines.append(f"  note: {self.text}")
        return "\n".join(lines)


def estimate_tokens(text: str) -> int:
    """The token estimate used for the retrieval budget: one token per four characters."""
    return (len(text) + 3) // 4


def split_term(term: str) -> tuple[str, str] | None:
    m = _TERM.match(term.strip().lower()) if isinstance(term, str) else None
    return (m.group(1), m.group(2)) if m else None


def context_terms(
    obs: Observation,
    goal_items: Iterable[str],
    subgoal: Subgoal | None,
    recent_failures: Iterable[str],
    route_items: Iterable[str] = (),
) -> frozenset[str]:
    """The planning context as trigger terms.

    Everything comes from the observation, except ``route_items``: the items the agent's
    vanilla prior expects on the way to the goal, as ``target:`` terms (what the next
    subgoals are likely about; under changed rules that expectation may be wrong).
    """
    terms = {f"goal:{norm(i)}" for i in goal_items}
    terms |= {f"target:{norm(i)}" for i in route_items}
    terms |= {f"have:{i}" for i, n in obs.inventory.items() if n > 0}
    terms |= {f"facility:{f.id}" for f in obs.facilities}
    terms |= {f"near:{n.id}" for n in (*obs.nearby_blocks, *obs.nearby_entities)}
    terms |= {f"failure:{f}" for f in recent_failures if f and f != "NONE"}
    terms.add(f"biome:{obs.biome}")
    if subgoal is not None:
        terms.add(f"skill:{subgoal.skill}")
        if subgoal.target:
            terms.add(f"target:{subgoal.target}")
            if obs.inventory.get(subgoal.target, 0) <= 0:
                terms.add(f"lacks:{subgoal.target}")
        for value in subgoal.action.get("args", {}).values():
            if isinstance(value, str):
                terms.add(f"target:{norm(value)}")
    for m in obs.progress.milestones:
        if not m.done:
            terms.add(f"goal:{m.advancement}")
    return frozenset(terms)


def matched(entry: KnowledgeEntry, context: frozenset[str]) -> float:
    """Share of the entry's trigger terms present in the context (0 when none is)."""
    if not entry.trigger:
        return 0.0
    hits = sum(1 for t in entry.trigger if t in context)
    return hits / len(entry.trigger)


def dedupe(entries: Sequence[KnowledgeEntry]) -> list[KnowledgeEntry]:
    """The entries in order, each id once (its first)."""
    seen: dict[str, KnowledgeEntry] = {}
    for e in entries:
        seen.setdefault(e.id, e)
    return list(seen.values())
