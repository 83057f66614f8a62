"""What the episode loop needs from a backend's episode (``SimEpisode``, ``MineflayerEpisode``).

A backend episode is created fresh for every episode (that is the reset), observes,
steps, exposes its hidden evaluator's outcome, and is closed when the loop ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from mirrorcraft.backends.sim import StepOutcome
from mirrorcraft.body.observation import Observation
from mirrorcraft.evaluator.encounters import Encounter
from mirrorcraft.evaluator.tasks import Task

BACKENDS = ("sim", "mineflayer")


class MilestoneView(Protocol):
    def milestone_steps(self) -> Mapping[str, int]: ...


class EncounterView(Protocol):
    @property
    def encounters(self) -> Sequence[Encounter]: ...


class EvaluatorView(Protocol):
    @property
    def milestones(self) -> MilestoneView: ...

    @property
    def encounters(self) -> EncounterView: ...

    def score(self) -> int: ...

    def success(self) -> bool: ...


class EpisodeBackend(Protocol):
    task: Task
    used: int

    @property
    def evaluator(self) -> EvaluatorView: ...

    def observe(self) -> Observation: ...

    def step(self, raw: Any) -> StepOutcome: ...

    def close(self) -> None: ...
