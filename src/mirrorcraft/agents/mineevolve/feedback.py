"""The monitor: one subgoal execution compressed into typed feedback.

Every field comes from observations and action results: success, state change
(net movement, facilities and advancements gained), inventory change, a failure
type (the body's failure reasons grouped by ``failure_types`` in the settings),
a normalised progress value and a stagnation flag::

    p = (w_move * movement + w_inv * inventory + w_goal * goal) / (w_move + w_inv + w_goal)

where movement is the net displacement over ``movement_scale`` blocks, inventory
the units gained over ``inventory_scale`` and goal the gain in the subgoal's
check fractions (or 1 when the task score rose), each capped at 1. An execution
that did not complete and has ``p`` below ``stagnation_threshold`` is stagnant.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.agents.mineevolve.checks import fraction, satisfied
from mirrorcraft.agents.mineevolve.config import MonitorConfig
from mirrorcraft.agents.mineevolve.plan import Subgoal
from mirrorcraft.body.observation import Observation
from mirrorcraft.body.results import ActionResult

FEEDBACK_MODES = ("typed", "binary", "reflection")


@dataclass(frozen=True)
class Feedback:
    id: str
    subgoal: str
    signature: str
    skill: str
    target: str
    success: bool
    delta_inv: dict[str, int]
    delta_state: dict[str, Any]
    failure_type: str
    reasons: tuple[str, ...]
    progress: float
    stagnant: bool
    position: tuple[int, int, int]
    note: str = ""
    produced: dict[str, int] = field(default_factory=dict)
    source: str = ""

    def view(self, mode: str = "typed") -> dict[str, Any]:
        """What prompts see: every typed field, or only the outcome in binary mode."""
        if mode == "binary":
            return {"id": self.id, "subgoal": self.subgoal, "y": int(self.success)}
        return {
            "id": self.id,
            "subgoal": self.subgoal,
            "y": int(self.success),
            "delta_inv": self.delta_inv,
            "delta_state": self.delta_state,
            "f": self.failure_type,
            "p": self.progress,
            "stagnant": self.stagnant,
            "coords": list(self.position),
            "note": self.note,
        }


def inventory_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    out = {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}
    return {k: v for k, v in sorted(out.items()) if v}


def progress_value(cfg: MonitorConfig, moved: float, gained_units: int, goal_gain: float) -> float:
    w = cfg.weights
    parts = (
        w["movement"] * min(1.0, moved / cfg.movement_scale),
        w["inventory"] * min(1.0, gained_units / cfg.inventory_scale),
        w["goal"] * min(1.0, max(goal_gain, 0.0)),
    )
    return round(sum(parts) / sum(w.values()), 4)


def is_stagnant(cfg: MonitorConfig, progress: float, success: bool) -> bool:
    return not success and progress < cfg.stagnation_threshold


class Monitor:
    """Watches the current subgoal's execution; ``close`` yields its feedback."""

    def __init__(self, cfg: MonitorConfig, failure_type: Any):
        self.cfg = cfg
        self._failure_type = failure_type
        self.count = 0
        self.subgoal: Subgoal | None = None
        self.start_obs: Observation | None = None
        self.results: list[ActionResult] = []

    def begin(self, subgoal: Subgoal, obs: Observation) -> None:
        self.subgoal, self.start_obs, self.results = subgoal, obs, []

    def record(self, result: ActionResult) -> None:
        self.results.append(result)

    @property
    def actions(self) -> int:
        return len(self.results)

    @property
    def last_ok(self) -> bool | None:
        return self.results[-1].ok if self.results else None

    @property
    def failed_actions(self) -> int:
        return sum(1 for r in self.results if not r.ok)

    def close(self, obs: Observation) -> Feedback:
        sg, start = self.subgoal, self.start_obs
        assert sg is not None and start is not None, "close() before begin()"
        self.count += 1
        last_ok = self.results[-1].ok if self.results else None
        success = satisfied(sg.checks, obs, last_ok, start)
        d_inv = inventory_delta(start.inventory, obs.inventory)
        moved = math.dist(start.position, obs.position)
        goal_gain = sum(
            fraction(c, obs, last_ok, start) - fraction(c, start, None, start) for c in sg.checks
        ) / len(sg.checks)
        if obs.progress.score > start.progress.score:
            goal_gain = 1.0
        gained = sum(v for v in d_inv.values() if v > 0)
        p = 1.0 if success else progress_value(self.cfg, moved, gained, goal_gain)
        reasons = tuple(r.reason for r in self.results if not r.ok)
        produced: Counter[str] = Counter()
        for r in self.results:
            produced.update({k: v for k, v in r.produced.items() if v > 0})
        failure = "NONE"
        if not success:
            if reasons:
                failure = self._failure_type(reasons[-1])
            elif produced and not any(c.target in produced for c in sg.checks):
                failure = "UNEXPECTED_OUTPUT"
            else:
                failure = "NO_PROGRESS"
        start_fac = {f.id for f in start.facilities}
        start_adv = set(start.progress.completed_advancements)
        note = ""
        bad = [r for r in self.results if not r.ok]
        if bad:
            note = bad[-1].message[:160]
        elif failure == "UNEXPECTED_OUTPUT":
            note = "the action worked but produced " + ", ".join(sorted(produced))
        elif failure == "NO_PROGRESS":
            note = "actions succeeded but the completion check is still unmet"
        fb = Feedback(
            id=f"e_{self.count:03d}",
            subgoal=sg.condition,
            signature=sg.signature(),
            skill=sg.skill,
            target=sg.target,
            success=success,
            delta_inv=d_inv,
            delta_state={
                "moved": round(moved, 1),
                "actions": self.actions,
                "facilities_gained": sorted({f.id for f in obs.facilities} - start_fac),
                "advancements_gained": sorted(set(obs.progress.completed_advancements) - start_adv),
            },
            failure_type=failure,
            reasons=reasons,
            progress=p,
            stagnant=is_stagnant(self.cfg, p, success),
            position=obs.position,
            note=note,
            produced=dict(sorted(produced.items())),
            source=sg.source,
        )
        self.subgoal, self.start_obs, self.results = None, None, []
        return fb
