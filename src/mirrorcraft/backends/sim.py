"""The embedded backend: one episode = a fresh WorldState + Body + hidden Evaluator."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.body.actions import Action, ActionError, parse_action
from mirrorcraft.body.body import Body
from mirrorcraft.body.config import BodyConfig, default_body_config
from mirrorcraft.body.observation import Budget, Observation, ObservationBuilder
from mirrorcraft.body.results import INVALID_ARGS, ActionResult
from mirrorcraft.body.skills import HANDLERS
from mirrorcraft.evaluator.evaluator import Evaluator
from mirrorcraft.evaluator.tasks import Task
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.world.registry import LoadedWorld
from mirrorcraft.world.state import WorldState


@dataclass(frozen=True)
class StepOutcome:
    observation: Observation
    result: ActionResult
    reward: int
    terminated: bool
    truncated: bool
    score: int
    new_milestones: tuple[str, ...]


class SimEpisode:
    """A live episode. Create a new one for every episode (that is the reset)."""

    def __init__(
        self,
        loaded: LoadedWorld,
        rules: RuleSet,
        vanilla: RuleSet,
        task: Task,
        *,
        seed: int,
        config: BodyConfig | None = None,
        start_inventory: Mapping[str, int] | None = None,
    ):
        self.task = task
        self.seed = seed
        self.state = WorldState.fresh(loaded)
        self.evaluator = Evaluator(rules, vanilla, task)
        self.body = Body(
            self.state,
            rules,
            config or default_body_config(),
            episode_seed=seed,
            events=self.evaluator,
            start_inventory=start_inventory,
        )
        if start_inventory:
            self.evaluator.inventory_changed(
                self.body.inventory.stacks(), self.body.inventory.stacks(), 0
            )
        self.observer = ObservationBuilder(self.body)
        self.used = 0
        self.last: ActionResult | None = None
        self.parsed: tuple[Any, Action | ActionError] | None = None
        """The last step's action and what it parsed into (the runner's signature reuses it)."""
        self.done = False

    def observe(self) -> Observation:
        return self.observer.build(
            self.evaluator.public_view(), Budget(self.task.budget, self.used), self.last
        )

    def step(self, raw: Any) -> StepOutcome:
        if self.done:
            raise RuntimeError("the episode has ended; start a new one")
        before_score = self.evaluator.score()
        before_done = set(self.evaluator.milestones.completed)
        self.used += 1
        self.body.step = self.used
        parsed = parse_action(raw)
        self.parsed = (raw, parsed)
        if isinstance(parsed, ActionError):
            skill = parsed.skill if parsed.skill in HANDLERS else str(parsed.skill or "")
            result = ActionResult(skill, {}, False, INVALID_ARGS, parsed.message)
        else:
            result = self._run(parsed)
        self.last = result
        score = self.evaluator.score()
        new = tuple(a for a in sorted(self.evaluator.milestones.completed) if a not in before_done)
        terminated = self.evaluator.success() or not self.body.alive
        truncated = not terminated and self.used >= self.task.budget
        self.done = terminated or truncated
        return StepOutcome(
            self.observe(), result, score - before_score, terminated, truncated, score, new
        )

    def _run(self, action: Action) -> ActionResult:
        return self.body.execute(action, HANDLERS)

    def close(self) -> None:
        """Nothing to release in the embedded backend (the Backend protocol asks for it)."""
