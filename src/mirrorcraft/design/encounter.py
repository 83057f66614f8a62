"""Relevance and encounterability of each change in a candidate suite (static estimates).

A change is *triggered* by actions: mining a block whose loot table it rewrites,
defeating a creature whose loot it rewrites, crafting a recipe it rewrites, or
cooking its input at one of its stations.

**Relevance** follows ``runner.controls.changes_on_routes``: the tasks whose
Vanilla or Mirror witness route needs an item that a changed rule produces
(under either rule set). A change relevant to no selected task is a hard failure.

**Encounterability** asks whether an agent pursuing a task meets the change. Per
packaged world and task, a trigger is:

- ``witness``: a step of the task's Vanilla witness route (an agent following the
  familiar route performs it), still executable under the suite;
- ``familiar``: under Vanilla rules it produces one of the task's familiar items
  (the route widened by interchangeable siblings, ``dependency.familiar_items``)
  and it can be performed under both rule sets;
- ``mirror_route``: a step of the task's Mirror witness route (an agent that
  completes the task the new way performs it, e.g. smelting the hoe a changed
  pickaxe recipe now makes).

A change that is familiar somewhere, but whose trigger cannot be performed under
the suite wherever it is familiar and that lies on no Mirror route, is
``shadowed`` (another change removed its inputs, e.g. logs that now drop planks
shadow a change to the log-to-planks recipe). Otherwise it is ``none``. The best
level over worlds and tasks is reported; ``shadowed`` and ``none`` are warnings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.datapack.compiler import CompiledSuite
from mirrorcraft.datapack.manifest import BlockDrops, CookingResult, EntityLoot, RecipeOutput
from mirrorcraft.datapack.routes import Reachability, Transition
from mirrorcraft.design.dependency import WorldRoutes, WorldView, route_items
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.recipes import ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.runner.controls import resource_outputs

LEVELS = ("witness", "familiar", "mirror_route", "shadowed", "none")


@dataclass(frozen=True)
class Trigger:
    kind: str  # mine | kill | craft | cook
    subject: str  # block, creature, recipe location, or cooking input
    station: str | None = None

    def describe(self) -> str:
        if self.kind == "cook":
            return f"cook {self.subject} in {self.station}"
        verb = {"mine": "mine", "kill": "defeat", "craft": "craft"}[self.kind]
        return f"{verb} {self.subject}"


def triggers_of(index: int, suite: CompiledSuite, vanilla: RuleSet) -> list[Trigger]:
    change = suite.manifest.changes[index]
    written = suite.changed.get(index, ())
    if isinstance(change, RecipeOutput):
        return [Trigger("craft", loc) for cat, loc in written if cat == "recipes"]
    if isinstance(change, CookingResult):
        item = normalize_id(change.input)
        return [Trigger("cook", item, s) for s in change.stations]
    if isinstance(change, BlockDrops):
        tables = {loc for cat, loc in written if cat == "loot_tables"}
        blocks = sorted(b for b, info in vanilla.game.blocks.items() if info.loot_table in tables)
        return [Trigger("mine", b) for b in blocks]
    if isinstance(change, EntityLoot):
        return [Trigger("kill", normalize_id(change.target))]
    return []


def vanilla_outputs(trigger: Trigger, vanilla: RuleSet) -> set[str]:
    if trigger.kind == "mine":
        table = vanilla.block_table(trigger.subject)
        return set(vanilla.table_outputs(table)) if table is not None else set()
    if trigger.kind == "kill":
        table = vanilla.entity_table(trigger.subject)
        return set(vanilla.table_outputs(table)) if table is not None else set()
    if trigger.kind == "craft":
        recipe = vanilla.recipes.get(trigger.subject)
        return {recipe.result} if isinstance(recipe, ShapedRecipe | ShapelessRecipe) else set()
    cooked = vanilla.cooking(trigger.subject, trigger.station or "")
    return {cooked.result} if cooked is not None else set()


def executable(
    trigger: Trigger, rules: RuleSet, vanilla: RuleSet, reach: Reachability, view: WorldView
) -> bool:
    """Can the trigger be performed in this world with what is obtainable under ``rules``?"""
    have = reach.obtainable
    if trigger.kind == "mine":
        block = trigger.subject
        tools = [t for t in have if t in rules.game.tools]
        return block in view.blocks and (
            rules.can_harvest(block, None) or any(rules.can_harvest(block, t) for t in tools)
        )
    if trigger.kind == "kill":
        return trigger.subject in view.mobs
    if trigger.kind == "craft":
        recipe = vanilla.recipes.get(trigger.subject)  # a changed recipe keeps its inputs
        if isinstance(recipe, ShapedRecipe):
            cells = [c for c in recipe.cells if c]
            big = recipe.height > 2 or recipe.width > 2
        elif isinstance(recipe, ShapelessRecipe):
            cells = list(recipe.ingredients)
            big = len(cells) > 4
        else:
            return False
        return all(c & have.keys() for c in cells) and (not big or "crafting_table" in have)
    return trigger.subject in have and (trigger.station or "") in have


def on_steps(trigger: Trigger, steps: Sequence[Transition]) -> bool:
    for t in steps:
        if (
            trigger.kind in ("mine", "kill")
            and t.kind == trigger.kind
            and t.source == trigger.subject
        ):
            return True
        if trigger.kind == "craft" and t.kind == "craft" and t.resource[1] == trigger.subject:
            return True
        if (
            trigger.kind == "cook"
            and t.kind == "cook"
            and t.needs[:2]
            == (
                trigger.subject,
                trigger.station,
            )
        ):
            return True
    return False


@dataclass
class ChangeEvidence:
    index: int
    triggers: list[Trigger]
    relevant_to: list[str] = field(default_factory=list)
    tasks_by_level: dict[str, set[str]] = field(default_factory=dict)

    @property
    def level(self) -> str:
        return next((lv for lv in LEVELS[:4] if self.tasks_by_level.get(lv)), "none")

    @property
    def encounter_tasks(self) -> list[str]:
        found: set[str] = set()
        for lv in LEVELS[:3]:
            found |= self.tasks_by_level.get(lv, set())
        return sorted(found)

    def to_json(self) -> dict[str, Any]:
        return {
            "triggers": [t.describe() for t in self.triggers[:6]],
            "relevant_to": self.relevant_to,
            "encounter": self.level,
            "encountered_in": self.encounter_tasks,
        }


def assess_changes(
    suite: CompiledSuite,
    vanilla: RuleSet,
    mirror: RuleSet,
    views: Sequence[WorldView],
    vanilla_worlds: Sequence[WorldRoutes],
    mirror_worlds: Sequence[WorldRoutes],
    familiar: Sequence[dict[str, frozenset[str]]],
    tasks: Sequence[str],
) -> list[ChangeEvidence]:
    needed: dict[str, set[str]] = {t: set() for t in tasks}
    for worlds in (vanilla_worlds, mirror_worlds):
        for wr in worlds:
            for task in tasks:
                needed[task] |= route_items(wr.routes[task].steps)
    out = []
    for i in range(len(suite.manifest.changes)):
        ev = ChangeEvidence(i, triggers_of(i, suite, vanilla))
        touched: set[str] = set()
        for res in suite.changed.get(i, ()):
            touched |= resource_outputs(vanilla, res) | resource_outputs(mirror, res)
        ev.relevant_to = [t for t in tasks if touched & needed[t]]
        levels: dict[str, set[str]] = {lv: set() for lv in LEVELS[:4]}
        shadow_free: set[str] = set()
        for view, vw, mw, fam in zip(views, vanilla_worlds, mirror_worlds, familiar, strict=True):
            for trig in ev.triggers:
                out_v = vanilla_outputs(trig, vanilla)
                can_v = executable(trig, vanilla, vanilla, vw.reach, view)
                can_m = executable(trig, mirror, vanilla, mw.reach, view)
                for task in tasks:
                    if can_m and on_steps(trig, vw.routes[task].steps):
                        levels["witness"].add(task)
                    if can_v and out_v & fam[task]:
                        if can_m:
                            levels["familiar"].add(task)
                            shadow_free.add(task)
                        else:
                            levels["shadowed"].add(task)
                    if on_steps(trig, mw.routes[task].steps):
                        levels["mirror_route"].add(task)
        levels["shadowed"] -= shadow_free
        ev.tasks_by_level = levels
        out.append(ev)
    return out
