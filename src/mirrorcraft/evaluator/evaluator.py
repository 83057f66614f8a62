"""The hidden evaluator of one episode: milestones from advancements, and rule encounters.

It receives the body's events (it implements ``EventSink``). The agent-facing
code may read only ``public_view()``: completed advancements and task progress,
which a player sees in game too. Encounters and rule names stay here.
"""

from __future__ import annotations

from collections.abc import Sequence

from mirrorcraft.body.events import RuleApplication
from mirrorcraft.body.observation import ProgressView
from mirrorcraft.evaluator.encounters import EncounterLog
from mirrorcraft.evaluator.milestones import MilestoneTracker
from mirrorcraft.evaluator.tasks import Task
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.ruleset import RuleSet


class Evaluator:
    def __init__(self, active: RuleSet, vanilla: RuleSet, task: Task):
        self.task = task
        self.milestones = MilestoneTracker(active, task)
        self.encounters = EncounterLog(vanilla, active)
        self._view: tuple[int, ProgressView] | None = None

    # EventSink ---------------------------------------------------------------------
    def rule_applied(self, app: RuleApplication) -> None:
        self.encounters.check(app)

    def inventory_changed(
        self, stacks: Sequence[ItemStack], gained: Sequence[ItemStack], step: int
    ) -> None:
        self.milestones.inventory_changed(stacks, gained, step)

    def item_enchanted(self, item: ItemStack, levels: int, step: int) -> None:
        self.milestones.item_enchanted(item, levels, step)

    # views -------------------------------------------------------------------------
    def score(self) -> int:
        return self.milestones.score()

    def success(self) -> bool:
        return self.milestones.success()

    def public_view(self) -> ProgressView:
        """What the agent may see (an immutable value, rebuilt only when an advancement
        was completed: completions are only ever added)."""
        done = len(self.milestones.completed)
        if self._view is None or self._view[0] != done:
            self._view = (done, self.milestones.view(self.milestones.completed))
        return self._view[1]
