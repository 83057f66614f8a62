"""Advancement progress as the server tracks it, and the task Score derived from it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from mirrorcraft.body.observation import MilestoneStatus, ProgressView
from mirrorcraft.evaluator.tasks import Task
from mirrorcraft.rules.advancements import (
    Criterion,
    InventoryView,
    enchanted_item_fires,
    inventory_changed_fires,
)
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.ruleset import RuleSet


def tracked_advancements(rules: RuleSet, task: Task) -> list[str]:
    """The vanilla (``minecraft`` namespace) advancements plus the task's own milestones.

    Other namespaces (the tech-tree suite's ``techtree:``, a user pack's own) are left
    out, so another task's advancements never show as completed and do not cost a check
    on every inventory change.
    """
    own = {m.advancement for m in task.milestones}
    return sorted(a for a in rules.advancements if ":" not in a or a in own)


class TaskProgress:
    """Score, success and the public progress view, from the completed advancements.

    Shared by the embedded evaluator's tracker and the real-server one; a subclass
    provides ``task`` and ``completed`` (advancement id -> 1-based action index).
    """

    task: Task
    completed: dict[str, int]

    def score(self) -> int:
        return max(
            (m.value for m in self.task.milestones if m.advancement in self.completed), default=0
        )

    def success(self) -> bool:
        return self.task.final.advancement in self.completed

    def milestone_steps(self) -> dict[str, int]:
        return {
            m.advancement: self.completed[m.advancement]
            for m in self.task.milestones
            if m.advancement in self.completed
        }

    def next_milestone(self) -> str | None:
        return next(
            (m.advancement for m in self.task.milestones if m.advancement not in self.completed),
            None,
        )

    def view(self, advancements: Iterable[str]) -> ProgressView:
        """What the agent may see: the task's milestones and the advancements it has."""
        return ProgressView(
            task=self.task.id,
            title=self.task.title,
            milestones=tuple(
                MilestoneStatus(
                    m.advancement, m.title, m.description, m.value, m.advancement in self.completed
                )
                for m in self.task.milestones
            ),
            next_milestone=self.next_milestone(),
            score=self.score(),
            completed_advancements=tuple(sorted(advancements)),
        )


@dataclass
class MilestoneTracker(TaskProgress):
    """Grants advancements from the active RuleSet's definitions; knows the task's values.

    Only ``tracked_advancements`` are granted; the task's score and success read its
    milestones among them.
    """

    rules: RuleSet
    task: Task
    met: dict[str, set[str]] = field(default_factory=dict)
    completed: dict[str, int] = field(default_factory=dict)
    """advancement id -> action index (1-based) at which it was completed."""

    def __post_init__(self) -> None:
        self._order = tracked_advancements(self.rules, self.task)
        self._rank = {a: i for i, a in enumerate(self._order)}
        self._scanned = False
        # inventory_changed criteria that test one changed stack against fixed item ids are
        # looked up by the gained items; every other one is checked on every change.
        self._by_item: dict[str, set[str]] = {}
        self._always: set[str] = set()
        for adv_id in self._order:
            for crit in self.rules.advancements[adv_id].criteria.values():
                if crit.trigger != "inventory_changed":
                    continue
                s = crit.slots
                plain = s.occupied.is_any and s.full.is_any and s.empty.is_any
                if plain and len(crit.items) == 1 and crit.items[0].items is not None:
                    for item in crit.items[0].items:
                        self._by_item.setdefault(item, set()).add(adv_id)
                else:
                    self._always.add(adv_id)

    def _grant(
        self, fires_for: str, fires: object, step: int, candidates: set[str] | None = None
    ) -> list[str]:
        """Grant what ``fires`` newly meets; ``candidates`` (after a first full pass): only
        these advancements can change, every other one is skipped."""
        order = self._order
        first = not self._scanned
        if candidates is not None and not first:
            order = sorted(candidates, key=self._rank.__getitem__)
        self._scanned = True
        newly: list[str] = []
        for adv_id in order:
            if adv_id in self.completed:
                continue
            adv = self.rules.advancements[adv_id]
            have = self.met.setdefault(adv_id, set())
            added = False
            for name, crit in adv.criteria.items():
                if name not in have and crit.trigger == fires_for and fires(crit):  # type: ignore[operator]
                    have.add(name)
                    added = True
            # An advancement not done is only re-judged when it met a criterion (after the
            # first pass, which judges every one): its requirements read nothing else.
            if (first or added) and adv.is_done(have):
                self.completed[adv_id] = step
                newly.append(adv_id)
        return newly

    def inventory_changed(
        self, stacks: Sequence[ItemStack], gained: Sequence[ItemStack], step: int
    ) -> list[str]:
        candidates = set(self._always)
        for g in gained:
            candidates.update(self._by_item.get(g.item, ()))
        if self._scanned and candidates <= self.completed.keys():
            return []  # nothing this change could grant is still open
        view = InventoryView(tuple(stacks))
        sizes = self.rules.game.items

        def fires(crit: Criterion) -> bool:
            return any(inventory_changed_fires(crit, view, g, sizes) for g in gained)

        return self._grant("inventory_changed", fires, step, candidates)

    def item_enchanted(self, item: ItemStack, levels: int, step: int) -> list[str]:
        return self._grant(
            "enchanted_item", lambda crit: enchanted_item_fires(crit, item, levels), step
        )
