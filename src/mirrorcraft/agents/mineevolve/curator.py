"""The curator: admits candidate knowledge, keeps its statistics, retrieves it under a budget.

A candidate (a skill, remedy or reflection proposed by the inducer) is admitted
only if it passes, in order:

- ``schema``: every required field is present and well typed;
- ``match``: every trigger term is ``field:value`` with a known field and a value
  the agent can observe (a known item, block, skill or failure type), and a
  remedy's failure type is one the monitor reports;
- ``exec``: every step or repair subgoal is an action the body accepts, with
  valid completion checks;
- ``specificity``: it is anchored to something concrete (not only a failure type
  or biome), its text is not generic advice ("try again", "be careful"), and a
  remedy's repair is not just the failing subgoal again;
- ``conflict``: no live entry about the same thing with confidence at or above
  ``high_confidence`` says something different.

A candidate saying exactly what a live entry says reinforces that entry instead.
With the curator switched off (the ablation) every candidate that can be stored
is added as it is, duplicates included. The model-judged stage that follows these
checks by default is in ``judge.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from mirrorcraft.agents.llm.worldview import norm
from mirrorcraft.agents.mineevolve.checks import Check, fraction, parse_check
from mirrorcraft.agents.mineevolve.config import CuratorConfig
from mirrorcraft.agents.mineevolve.entries import (
    SCOPES,
    TRIGGER_FIELDS,
    KnowledgeEntry,
    estimate_tokens,
    matched,
    split_term,
)
from mirrorcraft.agents.mineevolve.knowledge_base import KnowledgeBase
from mirrorcraft.agents.mineevolve.plan import Subgoal, parse_subgoals
from mirrorcraft.body.actions import skill_specs
from mirrorcraft.body.observation import Observation

REJECT_REASONS = ("schema", "match", "exec", "specificity", "conflict")
ANCHOR_FIELDS = frozenset(TRIGGER_FIELDS) - {"failure", "biome"}
_WORD = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Vocabulary:
    """What trigger values may name: ids the agent can observe."""

    items: frozenset[str]
    blocks: frozenset[str]
    skills: frozenset[str]
    failure_types: frozenset[str]
    entities: frozenset[str] = frozenset()
    """Creatures the body can meet (targets of ``attack`` and ``explore``)."""

    def known(self, value: str) -> bool:
        """Whether an action or check may name ``value``: an item, block or creature id,
        or "log" (any trunk block)."""
        return (
            value in self.items or value in self.blocks or value in self.entities or value == "log"
        )

    def valid(self, fld: str, value: str) -> bool:
        if fld == "failure":
            return value.upper() in self.failure_types
        if fld == "skill":
            return value in self.skills
        if fld in ("have", "lacks"):
            return value in self.items
        if fld == "facility":
            return value in self.blocks
        if fld == "goal":
            return value in self.items or value in self.blocks or "/" in value
        if fld in ("target", "near"):
            return (
                value in self.items
                or value in self.blocks
                or value == "log"
                or (value.isidentifier() and len(value) <= 40)
            )
        return fld == "biome" and value.replace("_", "").isalpha()


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    reason: str = ""
    """"" when accepted; one of REJECT_REASONS otherwise; "merged" when it reinforced an entry."""
    detail: str = ""
    entry: KnowledgeEntry | None = None


@dataclass(frozen=True)
class Retrieval:
    entries: tuple[KnowledgeEntry, ...]
    tokens: int
    text: str


def _strings(raw: Any) -> tuple[str, ...] | None:
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        return None
    if not all(isinstance(x, str) for x in raw):
        return None
    return tuple(x.strip() for x in raw if x.strip())


def _term(raw: str) -> str:
    """A trigger or precondition term in the form the planning context uses (``have:stick``
    for ``Have:minecraft:stick``), so that it can match; a malformed one is kept, lower-cased,
    for ``match`` to refuse."""
    parts = split_term(raw)
    return f"{parts[0]}:{norm(parts[1])}" if parts else raw.lower()


def _confidence(raw: Any) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool) and 0 <= raw <= 1:
        return float(raw)
    return 0.5


class Curator:
    def __init__(self, cfg: CuratorConfig, vocab: Vocabulary, *, enabled: bool = True):
        self.cfg = cfg
        self.vocab = vocab
        self.enabled = enabled
        self.generic = tuple(p.lower() for p in cfg.generic_phrases)

    # -- admission ----------------------------------------------------------------------
    def _fits(self, entry: KnowledgeEntry) -> str:
        """Why an entry is too long to ever be retrieved under the budget ("" when it fits)."""
        budget = self.cfg.budget_tokens
        tokens = estimate_tokens(entry.render(self.cfg.prior_weight) + "\n")
        if budget and tokens > budget:
            return (
                f"the entry renders to {tokens} tokens, more than the retrieval budget of "
                f"{budget}, so it could never be retrieved: write it shorter"
            )
        return ""

    def build(
        self, doc: Any, kind: str, entry_id: str, evidence: Sequence[str]
    ) -> tuple[KnowledgeEntry | None, str]:
        """Turn a reply document into an entry, or say which required field is missing."""
        if not isinstance(doc, Mapping):
            return None, "the reply is not a JSON object"
        trigger = _strings(doc.get("trigger_context"))
        if not trigger:
            return None, "trigger_context must be a non-empty list of strings"
        fields: dict[str, Any] = {
            "id": entry_id,
            "kind": kind,
            "trigger": tuple(_term(t) for t in trigger),
            "initial_confidence": _confidence(doc.get("confidence")),
            "evidence": tuple(evidence),
        }
        if kind == "skill":
            pre = _strings(doc.get("preconditions", []))
            steps = doc.get("steps")
            verification = doc.get("verification")
            if pre is None:
                return None, "preconditions must be a list of strings"
            if (
                not isinstance(steps, list)
                or not steps
                or not all(isinstance(s, Mapping) for s in steps)
            ):
                return None, "steps must be a non-empty list of subgoal objects"
            if not isinstance(verification, Mapping):
                return None, "verification must be a check object"
            effects = doc.get("observed_effects", {})
            fields.update(
                preconditions=tuple(_term(p) for p in pre),
                steps=tuple(dict(s) for s in steps),
                verification=dict(verification),
                effects={
                    str(k): int(v)
                    for k, v in (effects.items() if isinstance(effects, Mapping) else [])
                    if isinstance(v, int) and not isinstance(v, bool)
                },
            )
        elif kind == "remedy":
            repair = doc.get("repair_action")
            failure = doc.get("failure_type")
            risk = doc.get("risk_pattern")
            scope = doc.get("scope", "unfinished_plan_suffix")
            if not isinstance(failure, str) or not failure:
                return None, "failure_type must be a string"
            if not isinstance(risk, str) or not risk.strip():
                return None, "risk_pattern must be a non-empty string"
            if (
                not isinstance(repair, list)
                or not repair
                or not all(isinstance(s, Mapping) for s in repair)
            ):
                return None, "repair_action must be a non-empty list of subgoal objects"
            if scope not in SCOPES:
                return None, f"scope must be one of {', '.join(SCOPES)}"
            fields.update(
                failure_type=failure.upper(),
                risk_pattern=risk.strip()[:300],
                repair=tuple(dict(s) for s in repair),
                scope=scope,
            )
        else:
            text = doc.get("text")
            if not isinstance(text, str) or not text.strip():
                return None, "text must be a non-empty string"
            fields["text"] = text.strip()[:600]
        try:
            entry = KnowledgeEntry.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            return None, f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
        too_long = self._fits(entry)
        return (None, too_long) if too_long else (entry, "")

    def check_match(self, entry: KnowledgeEntry) -> str:
        for term in (*entry.trigger, *entry.preconditions):
            parts = split_term(term)
            if parts is None or parts[0] not in TRIGGER_FIELDS:
                return f"{term!r} is not a field:value term over {', '.join(TRIGGER_FIELDS)}"
            if not self.vocab.valid(parts[0], norm(parts[1])):
                return f"{term!r} names nothing the agent can observe"
        if entry.kind == "remedy" and not self.vocab.valid("failure", entry.failure_type):
            return f"failure type {entry.failure_type!r} is none the monitor reports"
        return ""

    def check_exec(self, entry: KnowledgeEntry) -> str:
        raw = entry.steps if entry.kind == "skill" else entry.repair
        if entry.kind == "reflection":
            return ""
        subgoals, problem = parse_subgoals(list(raw), 64, 64)
        if problem:
            return problem
        for i, sg in enumerate(subgoals):
            if unknown := self._unknown_ids(sg):
                return f"subgoal {i + 1} names {unknown!r}, which is no item, block or creature"
        if entry.kind == "skill":
            check = parse_check(entry.verification)
            if isinstance(check, str):
                return f"verification: {check}"
            if unknown := self._unknown_check(check):
                return f"verification names {unknown!r}, which is no item, block or creature"
        return ""

    def _unknown_check(self, check: Check) -> str:
        if check.type in ("milestone", "action_ok") or self.vocab.known(check.target):
            return ""
        return check.target

    def _unknown_ids(self, sg: Subgoal) -> str:
        """The first id an action argument, grid cell or check names that does not exist."""
        spec = skill_specs()[sg.skill]
        args = sg.action.get("args", {})
        for arg in spec.args:
            value = args.get(arg.name)
            if arg.type == "id" and isinstance(value, str) and not self.vocab.known(norm(value)):
                return value
            if arg.type == "grid" and isinstance(value, list):
                for row in value:
                    for cell in row if isinstance(row, list) else ():
                        if isinstance(cell, str) and not self.vocab.known(norm(cell)):
                            return cell
        for check in sg.checks:
            if unknown := self._unknown_check(check):
                return unknown
        return ""

    def check_verified(
        self, entry: KnowledgeEntry, final: Observation, gained: Mapping[str, int]
    ) -> str:
        """Why a skill's verification does not hold in the state its segment ended in (the
        paper induces a skill from a segment whose final state satisfies its verification
        rule); ``gained`` is the inventory change over the segment."""
        check = entry.check() if entry.kind == "skill" else None
        if check is None:
            return ""
        if check.type == "inv_gain":
            held = gained.get(check.target, 0) >= check.n
        else:
            held = fraction(check, final, True, None) >= 1.0
        if held:
            return ""
        return f"the verification ({check.describe()}) does not hold where the segment ended"

    def _generic(self, text: str) -> bool:
        low = " ".join(_WORD.findall(text.lower()))
        if not low:
            return True
        hit = any(p in low for p in self.generic)
        stripped = low
        for p in self.generic:
            stripped = stripped.replace(p, " ")
        return hit and len(stripped.split()) < 4

    def check_specific(self, entry: KnowledgeEntry, failing: str = "") -> str:
        fields = {t.split(":", 1)[0] for t in entry.trigger}
        if not fields & ANCHOR_FIELDS:
            return "the trigger names no target, skill, goal, item or station"
        if entry.kind == "remedy":
            if self._generic(entry.risk_pattern):
                return "the risk pattern is generic advice"
            repair = entry.repair_subgoals()
            if failing and all(s.signature() == failing for s in repair):
                return "the repair only repeats the failing subgoal"
            if any(self._generic(s.condition) and s.signature() == failing for s in repair):
                return "the repair is generic advice"
        if entry.kind == "reflection" and self._generic(entry.text):
            return "the reflection is generic advice"
        return ""

    def check_conflict(self, entry: KnowledgeEntry, kb: KnowledgeBase) -> tuple[str, str]:
        """("", "") when clear; ("merge", id) for the same knowledge; ("conflict", detail)."""
        topic, key = entry.topic(), entry.content_key()
        for other in kb.live():
            if other.kind != entry.kind or other.topic() != topic:
                continue
            if other.content_key() == key:
                return "merge", other.id
            if other.confidence(self.cfg.prior_weight) >= self.cfg.high_confidence:
                return "conflict", f"contradicts high-confidence entry {other.id}"
        return "", ""

    def screen(
        self,
        entry: KnowledgeEntry,
        kb: KnowledgeBase,
        failing: str = "",
        final: tuple[Observation, Mapping[str, int]] | None = None,
    ) -> Verdict:
        """The deterministic checks, writing nothing: a rejection, a merge or an acceptance.

        ``final``: for a skill, the observation its segment ended in and the segment's
        inventory change; its verification must hold there."""
        if not self.enabled:
            return Verdict(True, entry=entry)
        for reason, problem in (
            ("match", self.check_match(entry)),
            (
                "exec",
                self.check_exec(entry) or (self.check_verified(entry, *final) if final else ""),
            ),
            ("specificity", self.check_specific(entry, failing)),
        ):
            if problem:
                return Verdict(False, reason, problem)
        outcome, detail = self.check_conflict(entry, kb)
        if outcome == "conflict":
            return Verdict(False, "conflict", detail)
        if outcome == "merge":
            return Verdict(True, "merged", detail, kb.entries.get(detail))
        return Verdict(True, entry=entry)

    def write(self, verdict: Verdict, entry: KnowledgeEntry, kb: KnowledgeBase) -> Verdict:
        """Apply a verdict to ``kb``: add the entry, or reinforce the entry it merges into."""
        if verdict.reason == "merged":
            kb.reinforce(verdict.detail, entry.evidence)
            return Verdict(True, "merged", verdict.detail, kb.entries.get(verdict.detail))
        if verdict.accepted:
            kb.add(entry)
        return verdict

    def admit(self, entry: KnowledgeEntry, kb: KnowledgeBase, failing: str = "") -> Verdict:
        """Validate a built entry and, if accepted, write it (or the reinforcement) to ``kb``."""
        return self.write(self.screen(entry, kb, failing), entry, kb)

    # -- statistics -----------------------------------------------------------------------
    def record_use(self, kb: KnowledgeBase, entry_id: str, success: bool) -> None:
        """Count one use of an entry; retire it once it has proved unreliable."""
        if entry_id not in kb.entries:
            return
        kb.use(entry_id, success)
        entry = kb.entries[entry_id]
        if (
            self.enabled
            and entry.uses >= self.cfg.min_uses
            and entry.confidence(self.cfg.prior_weight) < self.cfg.retire_below
        ):
            kb.retire(entry_id)

    # -- retrieval --------------------------------------------------------------------------
    def score(self, entry: KnowledgeEntry, context: frozenset[str]) -> float:
        share = matched(entry, context)
        if share <= 0.0:
            return 0.0
        conf = entry.confidence(self.cfg.prior_weight)
        bonus = 0.0
        if entry.kind == "remedy" and f"failure:{entry.failure_type.lower()}" in {
            t.lower() for t in context
        }:
            bonus = 0.25
        if entry.preconditions:
            bonus += (
                0.1 * sum(1 for p in entry.preconditions if p in context) / len(entry.preconditions)
            )
        return round(share * (0.5 + 0.5 * conf) + bonus, 6)

    def retrieve(
        self,
        entries: Iterable[KnowledgeEntry],
        context: frozenset[str],
        kinds: Iterable[str],
        budget: int | None = None,
    ) -> Retrieval:
        """The most relevant live entries whose rendered text fits within ``budget`` tokens."""
        limit = self.cfg.budget_tokens if budget is None else budget
        wanted = set(kinds)
        ctx = frozenset(t.lower() for t in context)
        ranked = sorted(
            ((self.score(e, ctx), e) for e in entries if not e.retired and e.kind in wanted),
            key=lambda pair: (-pair[0], pair[1].id),
        )
        chosen: list[KnowledgeEntry] = []
        texts: list[str] = []
        used = 0
        for score, entry in ranked:
            if score <= 0.0 or len(chosen) >= self.cfg.top_k:
                break
            text = entry.render(self.cfg.prior_weight)
            cost = estimate_tokens(text + "\n")
            if used + cost > limit:
                continue
            chosen.append(entry)
            texts.append(text)
            used += cost
        return Retrieval(tuple(chosen), used, "\n".join(texts))
