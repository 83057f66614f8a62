"""The mirror catalog: what a rule-suite designer may edit, generated from our data.

Nothing here is a hand-written list of recipes or drops. The catalog is read from
the vanilla RuleSet, the packaged worlds and the static route analysis of the
selected tasks, and it doubles as the allowlist the static report enforces:

- **route items**: every item on a selected task's Vanilla witness route in any
  packaged world; **variant items**: the interchangeable siblings and milestone
  alternatives that widen those routes (``dependency.familiar_items``: the other
  logs and planks, any iron armour piece).
- **crafting recipes**: *route* recipes (their result is a route item), *variant*
  recipes (their result is a variant item) and *neighbour* recipes (every
  ingredient accepts a route or variant item) whose result is a tool, an item some
  advancement names, a station, or a storage form that a route recipe unpacks.
  Decorative neighbours (doors, slabs, boats...) are left out. A change that only
  touches variants lies on no witness route and is rejected as off-route (the
  controls' definition); to reach every wood type, target the tag or select.
- **cooking**: the vanilla cooking recipes, per station, of the processing inputs
  (route items and catalog recipe results); ``cooking_result`` may also give an
  input a result it has no vanilla recipe for.
- **blocks / entities**: everything present in a packaged world (or named by a
  packaged biome spec, such as deepslate ore variants) that has a vanilla loot
  table; **block tags** and **result tags**: vanilla tags (at most
  64 members) that contain a route block or route item.
- **outputs**: route items, catalog recipe results and ingredients, vanilla drops
  of catalog blocks and entities, tools of the same kind as a route tool, and
  stations.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body.config import default_body_config
from mirrorcraft.datapack.manifest import BlockDrops, CookingResult, EntityLoot, RecipeOutput
from mirrorcraft.design.dependency import (
    packaged_spec_blocks,
    packaged_views,
    route_items,
    vanilla_familiar,
    vanilla_routes,
)
from mirrorcraft.design.schema import field_table
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.recipes import CookingRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import STATION_COOKING, RuleSet

MAX_TAG_SIZE = 64
PREFERRED_CHANGES = (2, 6)
"""Design policy: a suite should have two to six changes (a warning outside)."""
LARGE_COUNT = 16
"""Design policy: an output count above this is flagged as extreme."""
OPERATORS: dict[str, type[BaseModel]] = {
    "recipe_output": RecipeOutput,
    "cooking_result": CookingResult,
    "block_drops": BlockDrops,
    "entity_loot": EntityLoot,
}


@dataclass(frozen=True)
class CraftEntry:
    location: str
    result: str
    count: int
    station: str
    needs: dict[str, int]
    role: str  # route | variant | neighbour


@dataclass(frozen=True)
class MirrorCatalog:
    tasks: tuple[str, ...]
    route_items: frozenset[str]
    variant_items: frozenset[str]
    crafting: dict[str, CraftEntry]
    cooking: dict[str, list[dict[str, Any]]]
    processing_inputs: frozenset[str]
    stations: tuple[str, ...]
    blocks: dict[str, dict[str, Any]]
    entities: dict[str, dict[str, Any]]
    block_tags: dict[str, list[str]]
    result_tags: dict[str, list[str]]
    outputs: frozenset[str]
    routes: dict[str, dict[str, Any]]

    def to_prompt(self) -> dict[str, Any]:
        """A compact JSON-able view for the designer's prompt."""
        return {
            "kind": "mirror",
            "selected_tasks": list(self.tasks),
            "operators": {name: field_table(model) for name, model in OPERATORS.items()},
            "bounds": {
                "changes": {"min": 1, "max": 32, "preferred": list(PREFERRED_CHANGES)},
                "count": {"min": 1, "max": 64, "flagged_above": LARGE_COUNT},
            },
            "task_routes": self.routes,
            "route_items": sorted(self.route_items),
            "variant_items": sorted(self.variant_items),
            "crafting_recipes": [
                {
                    "id": e.location,
                    "makes": e.result,
                    "count": e.count,
                    "needs": e.needs,
                    "station": e.station,
                    "role": e.role,
                }
                for e in self.crafting.values()
            ],
            "cooking": self.cooking,
            "processing_inputs": sorted(self.processing_inputs),
            "stations": list(self.stations),
            "blocks": self.blocks,
            "entities": self.entities,
            "block_tags": self.block_tags,
            "result_tags": self.result_tags,
            "output_items": sorted(self.outputs),
            "special_outputs": {
                "{crafted}": "block_drops only: the item vanilla crafting turns the broken block into"
            },
        }


def _cells(recipe: ShapedRecipe | ShapelessRecipe) -> list[frozenset[str]]:
    cells = recipe.cells if isinstance(recipe, ShapedRecipe) else recipe.ingredients
    return [c for c in cells if c]


def _station(recipe: ShapedRecipe | ShapelessRecipe) -> str:
    if isinstance(recipe, ShapedRecipe):
        small = recipe.height <= 2 and recipe.width <= 2
    else:
        small = len(recipe.ingredients) <= 4
    return "inventory" if small else "crafting_table"


def _cell_name(rules: RuleSet, cell: frozenset[str]) -> str:
    if len(cell) == 1:
        return next(iter(cell))
    for tag, members in sorted(rules.item_tags.items()):
        if members == cell:
            return f"#{tag}"
    return "|".join(sorted(cell))


def _needs(rules: RuleSet, recipe: ShapedRecipe | ShapelessRecipe) -> dict[str, int]:
    out: dict[str, int] = {}
    for cell in _cells(recipe):
        name = _cell_name(rules, cell)
        out[name] = out.get(name, 0) + 1
    return out


def _notable(rules: RuleSet) -> set[str]:
    """Items a neighbour recipe may make and still be listed.

    Tools, items some advancement names, stations, and the blocks the body lists
    among nearby targets (bookshelves, chests...).
    """
    body = default_body_config()
    items = set(rules.game.tools) | set(body.facilities) | set(STATION_COOKING)
    items |= {b for b in body.observable_blocks if not b.startswith("#")}
    for adv in rules.advancements.values():
        for crit in adv.criteria.values():
            for pred in crit.items:
                items |= set(pred.items or ())
    return items


def _roles(drops: list[str], witness: frozenset[str], familiar: frozenset[str]) -> dict[str, bool]:
    out = {"route": bool(set(drops) & witness)}
    if not out["route"] and set(drops) & familiar:
        out["variant"] = True
    return out


def _route_text(tasks: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    reference = vanilla_routes(tasks)[0]
    out = {}
    for task in tasks:
        t = get_task(task)
        out[task] = {
            "milestones": [f"{m.advancement} ({m.title}: {m.description})" for m in t.milestones],
            "vanilla_route_in_" + reference.world: reference.routes[task].text(),
        }
    return out


@lru_cache(maxsize=8)
def mirror_catalog(tasks: tuple[str, ...]) -> MirrorCatalog:
    rules = vanilla_rules()
    familiar = vanilla_familiar(tasks)
    route = frozenset(i for per_world in familiar for items in per_world.values() for i in items)
    witness = frozenset(
        i for wr in vanilla_routes(tasks) for r in wr.routes.values() for i in route_items(r.steps)
    )
    crafting_recipes = sorted(
        (loc, r)
        for loc, r in rules.recipes.items()
        if isinstance(r, ShapedRecipe | ShapelessRecipe)
    )
    route_recipes = [(loc, r) for loc, r in crafting_recipes if r.result in route]
    preimages = {i for _loc, r in route_recipes for c in _cells(r) for i in c} - route
    notable = _notable(rules) | preimages
    crafting: dict[str, CraftEntry] = {}
    for loc, r in crafting_recipes:
        if r.result in route:
            role = "route" if r.result in witness else "variant"
        elif r.result in notable and all(c & route for c in _cells(r)):
            role = "neighbour"
        else:
            continue
        crafting[loc] = CraftEntry(loc, r.result, r.count, _station(r), _needs(rules, r), role)
    results = {e.result for e in crafting.values()}
    processing = frozenset(route | results)
    cooking: dict[str, list[dict[str, Any]]] = {}
    for station, kind in STATION_COOKING.items():
        if kind == "campfire_cooking":
            continue
        cooking[station] = [
            {"inputs": sorted(cr.ingredient & processing), "result": cr.result, "count": cr.count}
            for _loc, cr in sorted(rules.recipes.items())
            if isinstance(cr, CookingRecipe) and cr.kind == kind and cr.ingredient & processing
        ]
    present_blocks = sorted(
        {b for v in packaged_views() for b in v.blocks} | packaged_spec_blocks()
    )
    blocks: dict[str, dict[str, Any]] = {}
    for block in present_blocks:
        table = rules.block_table(block)
        drops = sorted(rules.table_outputs(table)) if table is not None else []
        if not drops:
            continue
        need = rules.required_tool(block)
        tool = "hand" if need is None else f"{need[0]} tier {need[1]}+"
        blocks[block] = {"drops": drops, "tool": tool, **_roles(drops, witness, route)}
    entities: dict[str, dict[str, Any]] = {}
    for mob in sorted({m for v in packaged_views() for m in v.mobs}):
        table = rules.entity_table(mob)
        if table is not None:
            drops = sorted(rules.table_outputs(table))
            entities[mob] = {"drops": drops, **_roles(drops, witness, route)}
    route_blocks = {b for b, e in blocks.items() if e["route"] or e.get("variant")}
    block_tags = {
        tag: sorted(members & set(blocks))
        for tag, members in sorted(rules.block_tags.items())
        if len(members) <= MAX_TAG_SIZE
        and members & route_blocks
        and not tag.startswith(("mineable/", "needs_"))
    }
    result_tags = {
        tag: sorted(members & results)
        for tag, members in sorted(rules.item_tags.items())
        if len(members) <= MAX_TAG_SIZE and members & route and len(members & results) >= 2
    }
    route_tool_kinds = {rules.game.tools[i].kind for i in route if i in rules.game.tools}
    outputs = set(route) | results | preimages | set(STATION_COOKING) - {"campfire"}
    outputs |= {i for e in crafting.values() for n in e.needs if not n.startswith("#") for i in [n]}
    outputs |= {d for e in [*blocks.values(), *entities.values()] for d in e["drops"]}
    outputs |= {t for t, info in rules.game.tools.items() if info.kind in route_tool_kinds}
    outputs = {o for o in outputs if "|" not in o and o in rules.game.items}
    stations = tuple(s for s in STATION_COOKING if s != "campfire")
    return MirrorCatalog(
        tasks=tasks,
        route_items=witness,
        variant_items=route - witness,
        crafting=crafting,
        cooking=cooking,
        processing_inputs=processing,
        stations=stations,
        blocks=blocks,
        entities=entities,
        block_tags=block_tags,
        result_tags=result_tags,
        outputs=frozenset(outputs),
        routes=_route_text(tasks),
    )
