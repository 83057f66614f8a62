"""Helpers for tests that drive the embedded simulator directly."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.backends.sim import SimEpisode, StepOutcome
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.world.registry import load_world


def episode(
    world: str = "plains-1",
    rules: str = "vanilla",
    task: str = "diamond",
    seed: int = 0,
    inventory: Mapping[str, int] | None = None,
    budget: int | None = None,
) -> SimEpisode:
    t = get_task(task)
    if budget:
        t = t.with_budget(budget)
    return SimEpisode(
        load_world(world),
        resolve_rules(rules),
        vanilla_rules(),
        t,
        seed=seed,
        start_inventory=inventory,
    )


def act(ep: SimEpisode, skill: str, **args: Any) -> StepOutcome:
    return ep.step({"skill": skill, "args": args})
