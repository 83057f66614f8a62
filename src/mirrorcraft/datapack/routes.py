"""Static route analysis: can each task be completed from a world's resources under a RuleSet?

A fixpoint over what is obtainable: blocks present in the world that an obtainable
tool (or the hand) can harvest, with their loot; creatures' loot; crafting recipes
whose every ingredient is obtainable (3x3 ones also need a crafting table);
cooking recipes whose station, fuel and input are obtainable. Loot outputs are
read by rolling each table a fixed number of times with fixed seeds (so rare
drops may be missed, which only makes the analysis stricter). A task has a
route when its final advancement's criteria can be met. The first way each item
was found is kept, so a witness route can be read back.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.rules.recipes import CookingRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import STATION_COOKING, RuleSet

SAMPLES = 32
FUEL_ORDER = (
    "coal",
    "charcoal",
    "oak_planks",
    "spruce_planks",
    "birch_planks",
    "jungle_planks",
    "acacia_planks",
)


@dataclass(frozen=True)
class Transition:
    kind: str  # mine | kill | craft | cook
    source: str
    """The block, creature, or recipe location."""
    output: str
    resource: tuple[str, str]
    """(category, location) of the rule data that decides it."""
    needs: tuple[str, ...] = ()
    """Items it needed when it was found (ingredients, tool, station, fuel)."""

    def describe(self) -> str:
        verb = {"mine": "mine", "kill": "defeat", "craft": "craft", "cook": "cook"}[self.kind]
        via = self.source if self.kind in ("mine", "kill") else self.resource[1]
        return f"{verb} {via} -> {self.output}"


@dataclass
class Reachability:
    obtainable: dict[str, Transition | None] = field(default_factory=dict)
    """Item -> the first transition that produced it."""
    enchanting: bool = False

    def route_to(self, items: Iterable[str], rules: RuleSet) -> list[Transition]:
        """A witness route (prerequisites first) for the first obtainable of ``items``."""
        order: list[Transition] = []
        seen: set[str] = set()

        def visit(item: str) -> None:
            if item in seen:
                return
            seen.add(item)
            t = self.obtainable.get(item)
            if t is None:
                return
            for dep in t.needs:
                visit(dep)
            order.append(t)

        for item in items:
            if item in self.obtainable:
                visit(item)
                break
        return order


def _best_tool(rules: RuleSet, block: str, have: Iterable[str]) -> str | bool | None:
    """The tool used on a block (None: the hand); False when no obtainable tool harvests it."""
    if rules.can_harvest(block, None):
        return None
    able = [t for t in have if t in rules.game.tools and rules.can_harvest(block, t)]
    if not able:
        return False
    return max(sorted(able), key=lambda t: rules.game.tools[t].tier_level)


def _station_for(recipe: object) -> str | None:
    if isinstance(recipe, ShapedRecipe):
        return None if recipe.height <= 2 and recipe.width <= 2 else "crafting_table"
    if isinstance(recipe, ShapelessRecipe):
        return None if len(recipe.ingredients) <= 4 else "crafting_table"
    return None


def _sample(rules: RuleSet, table_name: str, ctx: LootContext) -> set[str]:
    table = rules.loot_tables.get(table_name)
    if table is None:
        return set()
    out: set[str] = set()
    for i in range(SAMPLES):
        out.update(s.item for s in rules.roll(table, ctx, random.Random(i)))
    return out


def analyse(rules: RuleSet, blocks: Iterable[str], mobs: Iterable[str]) -> Reachability:
    reach = Reachability()
    obtained = reach.obtainable
    blocks = sorted(b for b in set(blocks) if b in rules.game.blocks)
    mobs = sorted(set(mobs))
    harvested: dict[str, object] = {}
    crafting = sorted(
        (
            (loc, r)
            for loc, r in rules.recipes.items()
            if isinstance(r, ShapedRecipe | ShapelessRecipe)
        ),
        key=lambda x: x[0],
    )
    cooking = sorted(
        ((loc, r) for loc, r in rules.recipes.items() if isinstance(r, CookingRecipe)),
        key=lambda x: x[0],
    )
    for mob in mobs:
        ctx = LootContext(this_entity=EntityState(mob), killer_is_player=True)
        # A mob with natural variants (sheep colours) drops from its variant's table.
        variants = [v for v, w in rules.entity_variants(mob) if w > 0] or [""]
        for variant in variants:
            table = rules.entity_table(mob, variant)
            if table is None:
                continue
            for item in sorted(_sample(rules, table.location, ctx)):
                obtained.setdefault(
                    item, Transition("kill", mob, item, ("loot_tables", table.location))
                )
    changed = True
    while changed:
        changed = False
        for block in blocks:
            tool = _best_tool(rules, block, obtained)
            if tool is False or harvested.get(block, "unset") == tool:
                continue
            harvested[block] = tool
            info = rules.game.blocks[block]
            ctx = LootContext(
                tool=ItemStack(tool) if isinstance(tool, str) else None,
                block=block,
                block_properties=info.default_state,
                this_entity=EntityState("player"),
            )
            needs: tuple[str, ...] = (tool,) if isinstance(tool, str) else ()
            for item in sorted(_sample(rules, info.loot_table or "", ctx)):
                if item not in obtained:
                    obtained[item] = Transition(
                        "mine", block, item, ("loot_tables", info.loot_table or ""), needs
                    )
                    changed = True
        for loc, r in crafting:
            if r.result in obtained:
                continue
            cells = r.cells if isinstance(r, ShapedRecipe) else r.ingredients
            station = _station_for(r)
            if station and station not in obtained:
                continue
            if all(c is None or any(i in obtained for i in c) for c in cells):
                picks = [next(i for i in sorted(c) if i in obtained) for c in cells if c]
                needs = tuple(dict.fromkeys([*picks, *([station] if station else [])]))
                obtained[r.result] = Transition("craft", loc, r.result, ("recipes", loc), needs)
                changed = True
        fuels = [i for i in FUEL_ORDER if i in obtained] or sorted(
            i for i in obtained if rules.fuel_ticks(i) > 0
        )
        fuel = bool(fuels)
        for loc, cr in cooking:
            if cr.result in obtained or not fuel or cr.kind == "campfire_cooking":
                continue
            station = next(s for s, k in STATION_COOKING.items() if k == cr.kind)
            if station in obtained and any(i in obtained for i in cr.ingredient):
                item = next(i for i in sorted(cr.ingredient) if i in obtained)
                needs = (item, station, fuels[0])
                obtained[cr.result] = Transition("cook", loc, cr.result, ("recipes", loc), needs)
                changed = True
    from mirrorcraft.body.enchanting import is_enchantable

    reach.enchanting = (
        "enchanting_table" in obtained
        and "lapis_lazuli" in obtained
        and any(is_enchantable(rules.game, i) for i in obtained)
    )
    return reach


def goal_items(rules: RuleSet, advancement: str) -> tuple[bool, list[str]]:
    """(needs an enchantment, items any of which completes the advancement)."""
    adv = rules.advancements[advancement]
    items: list[str] = []
    enchant = False
    for crit in adv.criteria.values():
        if crit.trigger == "enchanted_item":
            enchant = True
        for pred in crit.items:
            items.extend(sorted(pred.items or ()))
    return enchant, items


def task_route(
    rules: RuleSet, reach: Reachability, advancement: str
) -> tuple[bool, list[Transition]]:
    """Whether the advancement can be completed, and a witness route to it."""
    enchant, items = goal_items(rules, advancement)
    if enchant:
        from mirrorcraft.body.enchanting import is_enchantable

        if not reach.enchanting:
            return False, []
        item = next(i for i in sorted(reach.obtainable) if is_enchantable(rules.game, i))
        route: list[Transition] = []
        for goal in ("enchanting_table", "lapis_lazuli", item):
            route += [t for t in reach.route_to([goal], rules) if t not in route]
        return True, route
    ok = any(i in reach.obtainable for i in items)
    return ok, reach.route_to(items, rules) if ok else []
