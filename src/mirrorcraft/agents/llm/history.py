"""What an LLM agent remembers within one episode, and the evidence derived from it.

Every configuration keeps the same deterministic record of its own actions and
their verified results; the shared observation block is computed from it:
verified action effects, actions still blocked by an unmet prerequisite,
failure and stagnation cycles, and unused outputs of repeated transformations.
All of it comes from outcomes the agent saw, never from the rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mirrorcraft.body.observation import Observation
from mirrorcraft.body.results import ActionResult

EFFECT_LIMIT = 12

_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def j(value: Any) -> str:
    """Compact JSON with sorted keys, as prompts show values (one shared encoder: the same
    text as ``json.dumps`` with these options, without building an encoder per value)."""
    return _ENCODER.encode(value)


@dataclass(frozen=True)
class Step:
    index: int
    thought: str
    action: Any
    result: ActionResult
    before: Mapping[str, int]
    after: Mapping[str, int]
    score_before: int
    score_after: int
    moved: bool

    @classmethod
    def between(cls, before: Observation, after: Observation, action: Any, thought: str) -> Step:
        """The step that led from ``before`` to ``after`` (``after.last_result`` set)."""
        assert after.last_result is not None
        return cls(
            after.step,
            thought,
            action,
            after.last_result,
            dict(before.inventory),
            dict(after.inventory),
            before.progress.score,
            after.progress.score,
            before.position != after.position,
        )

    @cached_property
    def key(self) -> str:
        return json.dumps(self.action, sort_keys=True)[:400]

    @cached_property
    def changed(self) -> bool:
        """Did the step change the inventory, raise the score or move the agent (computed
        once: a recorded step never changes)?"""
        return (
            dict(self.before) != dict(self.after)
            or self.score_after > self.score_before
            or self.moved
        )


@dataclass
class History:
    steps: list[Step] = field(default_factory=list)
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Action signature -> its last verified effect (consumed, produced)."""

    blocked: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Failed actions not undone by a later success of the same action (see still_blocked),
    kept up to date as steps are recorded."""

    rendered: dict[tuple[str, int], str] = field(default_factory=dict)
    """Text a renderer made from one recorded step, by (renderer, step index): a step never
    changes once recorded, so neither does its text."""

    effect_texts: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    """Action signature -> a private copy of its entry in ``effects`` and that entry's compact
    JSON text (made once when the effect is recorded)."""

    transforms: list[Step] = field(default_factory=list)
    """The last two successful craft_grid or smelt steps (what ``unused_output`` compares)."""

    transform_run: int = 0
    """How many identical successful transformations end the episode's transformations."""

    def record(self, step: Step) -> None:
        self.steps.append(step)
        r = step.result
        if r.ok and r.skill in ("craft_grid", "smelt"):
            same = bool(self.transforms) and self.transforms[-1].key == step.key
            self.transform_run = self.transform_run + 1 if same else 1
            self.transforms = [*self.transforms[-1:], step]
        if r.ok:
            self.blocked.pop(step.key, None)
        elif r.reason != "invalid_args":
            self.blocked[step.key] = {
                "action": _compact(step.action),
                "reason": r.reason,
                "message": r.message,
                "inventory_then": dict(step.after),
            }
        if r.ok and (r.produced or r.consumed):
            sig = _effect_key(step.action)
            self.effects.pop(sig, None)
            self.effect_texts.pop(sig, None)
            entry = self.effects[sig] = {
                "action": _compact(step.action),
                "consumed": dict(r.consumed),
                "produced": dict(r.produced),
                "step": step.index,
            }
            text = j(entry)
            self.effect_texts[sig] = (json.loads(text), text)
            while len(self.effects) > EFFECT_LIMIT:
                oldest = next(iter(self.effects))
                self.effects.pop(oldest)
                self.effect_texts.pop(oldest, None)

    def recent(self, n: int) -> list[Step]:
        return self.steps[-n:]

    # -- derived evidence ------------------------------------------------------
    def still_blocked(self, inventory: Mapping[str, int]) -> list[dict[str, Any]]:
        """Failed actions whose relevant state has not changed since they failed."""
        inventory = dict(inventory)
        return [
            {k: v for k, v in b.items() if k != "inventory_then"}
            for b in self.blocked.values()
            if b["inventory_then"] == inventory
        ][-6:]

    def failure_cycle(self) -> list[dict[str, Any]]:
        """The same failing action repeated in the last actions."""
        tail = self.steps[-4:]
        fails = [s for s in tail if not s.result.ok]
        keys = [s.key for s in fails]
        repeated = sorted({k for k in keys if keys.count(k) >= 2})
        return [{"action": json.loads(k), "times": keys.count(k)} for k in repeated]

    def stagnation_cycle(self) -> list[dict[str, Any]]:
        """Successful actions that changed nothing (inventory, score or position), repeated."""
        tail = [s for s in self.steps[-6:] if s.result.ok and not s.changed]
        keys = [s.key for s in tail]
        return [
            {"action": json.loads(k), "times": keys.count(k)}
            for k in sorted(set(keys))
            if keys.count(k) >= 2
        ]

    def repeat_count(self) -> int:
        """How many times the last action was repeated with the same failure."""
        if not self.steps or self.steps[-1].result.ok:
            return 0
        last = self.steps[-1].key
        n = 0
        for s in reversed(self.steps):
            if s.key != last or s.result.ok:
                break
            n += 1
        return n

    def unused_output(self, inventory: Mapping[str, int]) -> dict[str, Any] | None:
        """The last transformation was repeated while its earlier output is still unused.

        ``times`` counts the identical successful transformations in a row at the end
        of the episode's crafting and smelting (2 on the first repeat).
        """
        done = self.transforms
        if len(done) < 2 or done[-1].key != done[-2].key:
            return None
        produced = dict(done[-1].result.produced)
        unused = {k: inventory.get(k, 0) for k in produced if inventory.get(k, 0) > produced[k]}
        if not unused:
            return None
        return {
            "action": _compact(done[-1].action),
            "output_in_inventory": unused,
            "times": self.transform_run,
        }

    def verified_effects(self) -> list[dict[str, Any]]:
        return list(self.effects.values())

    def verified_effects_text(self) -> tuple[list[dict[str, Any]], str]:
        """What ``verified_effects`` held when each effect was recorded (private copies) and
        its compact JSON text, joined from the texts made then."""
        kept = self.effect_texts.values()
        return [copy for copy, _text in kept], "[" + ",".join(text for _copy, text in kept) + "]"


def _effect_key(action: Any) -> str:
    if isinstance(action, dict):
        args = dict(action.get("args") or {})
        args.pop("count", None)
        return json.dumps({"skill": action.get("skill"), "args": args}, sort_keys=True)
    return json.dumps(action)[:200]


def _compact(action: Any) -> Any:
    return json.loads(json.dumps(action))


def inventory_of(obs: Observation) -> dict[str, int]:
    return dict(obs.inventory)
