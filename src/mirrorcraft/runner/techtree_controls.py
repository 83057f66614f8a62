"""Controls for the tech-tree suite: every task solvable, and which rule sets leave no route.

- **oracle** (the "cheat" that proves a task solvable): in every selected world, the
  oracle agent, given the vanilla rules, obtains the task's item from an empty
  inventory within the task's budget. The evaluator, not the agent, decides success.
- **routes**: for every rule set (vanilla and the Mirror suites) and world, static
  route analysis (``task_route``) looks for a way to the task's advancement. A Mirror
  suite may leave a tech-tree task without a route (a hidden rule can make an item
  unobtainable); that is allowed, but such tasks are listed. Vanilla must have a route
  everywhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mirrorcraft.agents.reference import OracleAgent
from mirrorcraft.backends.rulesets import VANILLA, resolve_rules, vanilla_rules
from mirrorcraft.datapack.routes import analyse, task_route
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.runner.controls import world_resources
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import LoadedWorld, load_world


@dataclass(frozen=True)
class OracleRun:
    world: str
    task: str
    budget: int
    success: bool
    actions: int
    termination: str

    @property
    def passed(self) -> bool:
        return self.success and self.actions <= self.budget


@dataclass
class TechTreeReport:
    oracle: list[OracleRun] = field(default_factory=list)
    no_route: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """rule set -> task -> the worlds in which static analysis finds no route."""

    @property
    def passed(self) -> bool:
        """Every oracle run succeeded within budget and vanilla has a route everywhere."""
        return all(r.passed for r in self.oracle) and not self.no_route.get(VANILLA)

    def worst_actions(self) -> dict[str, int]:
        """Task -> the most actions a successful oracle run used (over the worlds run)."""
        out: dict[str, int] = {}
        for r in self.oracle:
            if r.success:
                out[r.task] = max(out.get(r.task, 0), r.actions)
        return out


def oracle_run(
    loaded: LoadedWorld,
    rules: RuleSet,
    rules_name: str,
    task_id: str,
    seed: int = 1,
    budget: int | None = None,
) -> OracleRun:
    """One oracle episode (given ``rules``) on a fresh copy of ``loaded``."""
    task = get_task(task_id)
    if budget is not None:
        task = task.with_budget(budget)
    world = loaded.world.world_id
    spec = EpisodeSpec(
        f"techtree-{world}-{rules_name}-{task_id}",
        "controls",
        world,
        rules_name,
        task,
        "oracle",
        "none",
        "hidden",
        0,
        seed,
    )
    record, _steps = asyncio.run(
        run_episode(spec, OracleAgent(rules), loaded, rules, vanilla_rules())
    )
    return OracleRun(
        world,
        task_id,
        get_task(task_id).budget,
        record.success,
        record.actions_used,
        record.termination,
    )


def missing_routes(
    rules: RuleSet, worlds: Sequence[LoadedWorld], tasks: Sequence[str]
) -> dict[str, list[str]]:
    """Task -> worlds without a static route under ``rules`` (tasks with a route omitted)."""
    out: dict[str, list[str]] = {}
    for loaded in worlds:
        blocks, mobs = world_resources(loaded)
        reach = analyse(rules, blocks, mobs)
        for task in tasks:
            if not task_route(rules, reach, get_task(task).final.advancement)[0]:
                out.setdefault(task, []).append(loaded.world.world_id)
    return out


def run_techtree_controls(
    worlds: Sequence[str],
    rule_sets: Sequence[str],
    tasks: Sequence[str],
    *,
    seed: int = 1,
    budget: int | None = None,
    progress: Callable[[OracleRun], None] | None = None,
) -> TechTreeReport:
    """Oracle runs (vanilla rules) in every world, and missing routes per rule set.

    ``budget`` overrides the tasks' budgets for the oracle runs (calibration uses a
    generous one); rows still report the task's own budget.
    """
    report = TechTreeReport()
    loaded = [load_world(w) for w in worlds]
    vanilla = vanilla_rules()
    for lw in loaded:
        for task in tasks:
            run = oracle_run(lw, vanilla, VANILLA, task, seed, budget)
            report.oracle.append(run)
            if progress is not None:
                progress(run)
    for name in rule_sets:
        rules = vanilla if name == VANILLA else resolve_rules(name)
        report.no_route[name] = missing_routes(rules, loaded, tasks)
    return report
