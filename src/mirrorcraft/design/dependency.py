"""Task dependency routes over the packaged worlds, shared by the mirror catalog and report.

The static route analysis (``datapack.routes``) gives one witness route per task
and world: the first way it found to obtain each item. An agent following the
familiar route may take an interchangeable step instead (another kind of log,
cobblestone instead of cobbled deepslate), so ``familiar_items`` widens a route
with the *siblings* of its ingredients: the other obtainable items a recipe cell
or cooking input on the route accepts, together with their own routes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from mirrorcraft.datapack.routes import (
    Reachability,
    Transition,
    analyse,
    goal_items,
    task_route,
)
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.recipes import CookingRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.world.registry import LoadedWorld, biome_spec, load_world, world_ids, world_table
from mirrorcraft.world.spec import BiomeSpec


@dataclass(frozen=True)
class WorldView:
    """What the static analysis needs of a world: its blocks and its creatures."""

    world: str
    blocks: frozenset[str]
    mobs: frozenset[str]


def view_of(loaded: LoadedWorld) -> WorldView:
    # Imported here: runner.controls pulls in the episode machinery.
    from mirrorcraft.runner.controls import world_resources

    blocks, mobs = world_resources(loaded)
    return WorldView(loaded.world.world_id, frozenset(blocks), frozenset(mobs))


@lru_cache(maxsize=1)
def packaged_views() -> tuple[WorldView, ...]:
    return tuple(view_of(load_world(w)) for w in world_ids())


def blocks_named_by(spec: BiomeSpec) -> set[str]:
    """Every block a biome spec can place (terrain, ore bands, trees, plants)."""
    t = spec.terrain
    out = {t.top_block, t.filler_block, t.shore_block, t.stone_block, t.deep_block}
    for band in spec.ores:
        out.add(band.block)
        if band.deepslate_block:
            out.add(band.deepslate_block)
    for kind in spec.trees.kinds:
        out |= {kind.log, kind.leaves}
    out |= {p.block for p in spec.vegetation}
    return out


@lru_cache(maxsize=1)
def packaged_spec_blocks() -> frozenset[str]:
    biomes = sorted({e.biome for e in world_table().values()})
    return frozenset(b for biome in biomes for b in blocks_named_by(biome_spec(biome)))


@dataclass(frozen=True)
class TaskRoute:
    task: str
    ok: bool
    steps: tuple[Transition, ...]

    def text(self) -> list[str]:
        return [t.describe() for t in self.steps]


@dataclass(frozen=True)
class WorldRoutes:
    """Every selected task's witness route in one world under one rule set."""

    world: str
    reach: Reachability
    routes: dict[str, TaskRoute]


def routes_in(rules: RuleSet, view: WorldView, tasks: Iterable[str]) -> WorldRoutes:
    reach = analyse(rules, view.blocks, view.mobs)
    routes = {}
    for task in tasks:
        ok, steps = task_route(rules, reach, get_task(task).final.advancement)
        routes[task] = TaskRoute(task, ok, tuple(steps))
    return WorldRoutes(view.world, reach, routes)


def milestone_gaps(rules: RuleSet, reach: Reachability, task: str) -> list[str]:
    """Milestones (advancement ids) of a task that cannot be completed here."""
    return [
        m.advancement
        for m in get_task(task).milestones
        if not task_route(rules, reach, m.advancement)[0]
    ]


def route_items(steps: Iterable[Transition]) -> set[str]:
    out: set[str] = set()
    for t in steps:
        out.add(t.output)
        out.update(t.needs)
    return out


def _choices(rules: RuleSet, t: Transition) -> list[frozenset[str]]:
    """The ingredient choices of a craft or cook step (each cell or input accepts a set)."""
    recipe = rules.recipes.get(t.resource[1]) if t.resource[0] == "recipes" else None
    if isinstance(recipe, ShapedRecipe):
        return [c for c in recipe.cells if c]
    if isinstance(recipe, ShapelessRecipe):
        return list(recipe.ingredients)
    if isinstance(recipe, CookingRecipe):
        return [recipe.ingredient]
    return []


def familiar_items(
    rules: RuleSet, reach: Reachability, steps: Iterable[Transition], task: str | None = None
) -> set[str]:
    """The route's items plus interchangeable siblings and what obtaining them takes.

    With ``task``, every obtainable item that completes one of its milestones
    counts too (any iron armour piece, not only the one the witness chose).
    """
    todo = list(steps)
    if task is not None:
        for m in get_task(task).milestones:
            for goal in goal_items(rules, m.advancement)[1]:
                if goal in reach.obtainable:
                    todo.extend(t for t in reach.route_to([goal], rules) if t not in todo)
    items = route_items(todo)
    seen: set[Transition] = set()
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        for choice in _choices(rules, t):
            if not choice & items:
                continue
            for sibling in sorted(choice - items):
                if sibling in reach.obtainable:
                    extra = reach.route_to([sibling], rules)
                    items.add(sibling)
                    items |= route_items(extra)
                    todo.extend(extra)
    return items


@lru_cache(maxsize=8)
def vanilla_routes(tasks: tuple[str, ...]) -> tuple[WorldRoutes, ...]:
    """Vanilla witness routes of ``tasks`` in every packaged world (computed once)."""
    from mirrorcraft.backends.rulesets import vanilla_rules

    return tuple(routes_in(vanilla_rules(), v, tasks) for v in packaged_views())


@lru_cache(maxsize=8)
def vanilla_familiar(tasks: tuple[str, ...]) -> tuple[dict[str, frozenset[str]], ...]:
    """Per packaged world: task -> its familiar items under vanilla rules."""
    from mirrorcraft.backends.rulesets import vanilla_rules

    rules = vanilla_rules()
    return tuple(
        {t: frozenset(familiar_items(rules, wr.reach, r.steps, t)) for t, r in wr.routes.items()}
        for wr in vanilla_routes(tasks)
    )
