"""Integrity and reachability controls (the paper's section 3.7), run before agents are scored.

For every world x rule set x task:
- **route**: static analysis finds a complete route under the rule set;
- **oracle**: the oracle agent (given the active rules) completes the task; its
  action count is reported against the budget;
- **twins**: replaying the vanilla oracle's actions in the Mirror twin gives
  byte-identical serialised observations up to the first action that triggers a
  changed rule.
For every suite change and world:
- **observable**: the change's triggering action gives a different visible outcome
  in the Mirror world than in Vanilla, and the evaluator logs it as an encounter of
  that rule.
The hidden-rule integrity scan lives in ``integrity.py``.

Rule sets are named as everywhere else (``vanilla``, a packaged suite id, a
path); a ``Manifest`` that is not packaged (a suite being designed) can be passed
instead of a name, and a ``LoadedWorld`` (a world generated from a candidate
biome spec) instead of a world id.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from mirrorcraft.agents.reference import OracleAgent
from mirrorcraft.backends.rulesets import VANILLA, resolve_rules, vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.datapack.compiler import CompiledSuite
from mirrorcraft.datapack.manifest import (
    BlockDrops,
    CookingResult,
    EntityLoot,
    Manifest,
    RecipeOutput,
)
from mirrorcraft.datapack.routes import analyse, task_route
from mirrorcraft.datapack.suites import compiled, find_suite
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.recipes import CookingRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import LoadedWorld, load_world

SuiteRef = str | Manifest
"""A packaged suite id, or a manifest that need not be packaged."""


def suite_manifest(suite: SuiteRef) -> Manifest:
    if isinstance(suite, Manifest):
        return suite
    found = find_suite(suite)
    if found is None:
        raise ValueError(f"unknown suite {suite!r}")
    return found


@lru_cache(maxsize=8)
def _manifest_rules(manifest: Manifest) -> RuleSet:
    return RuleSet.load([compiled(manifest).pack()], name=manifest.id)


def suite_rules(rules: SuiteRef) -> RuleSet:
    """The RuleSet for a rule-set name (see ``resolve_rules``) or an unpackaged manifest."""
    if isinstance(rules, Manifest):
        return _manifest_rules(rules)
    return resolve_rules(rules)


def _load(world: str | LoadedWorld) -> LoadedWorld:
    return world if isinstance(world, LoadedWorld) else load_world(world)


@dataclass
class ControlRow:
    world: str
    rules: str
    task: str
    budget: int
    route: bool
    route_text: str
    oracle_success: bool
    oracle_actions: int
    twins_equal: bool
    twin_prefix: int
    """Observations compared equal before the first changed-rule action (or the whole run)."""
    neutral_equal: bool = True
    """The neutral script gave identical observations and triggered no changed rule."""

    @property
    def passed(self) -> bool:
        return (
            self.route
            and self.oracle_success
            and self.oracle_actions <= self.budget
            and self.twins_equal
            and self.neutral_equal
        )


@dataclass
class ObservabilityRow:
    world: str
    rules: str
    change: int
    sheet: str
    trigger: str
    observable: bool
    logged: bool
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.observable and self.logged


@dataclass
class ControlReport:
    rows: list[ControlRow] = field(default_factory=list)
    observability: list[ObservabilityRow] = field(default_factory=list)
    off_route: list[tuple[str, int, str]] = field(default_factory=list)
    """(suite, change index, sheet line) for changes that lie on no selected task's route."""

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows) and all(o.passed for o in self.observability)


def world_resources(loaded: LoadedWorld) -> tuple[set[str], set[str]]:
    w = loaded.world
    return {w.palette.names[i] for i in np.unique(w.grid).tolist()}, {m.type for m in w.mobs}


def _oracle(
    loaded: LoadedWorld, rules: RuleSet, rules_name: str, task: str, seed: int
) -> tuple[bool, int, list[Any]]:
    t = get_task(task)
    spec = EpisodeSpec(
        f"controls-{loaded.world.world_id}-{rules_name}-{task}",
        "controls",
        loaded.world.world_id,
        rules_name,
        t,
        "oracle",
        "none",
        "hidden",
        0,
        seed,
    )
    record, steps = asyncio.run(
        run_episode(spec, OracleAgent(rules), loaded, rules, vanilla_rules())
    )
    return record.success, record.actions_used, [s.action for s in steps]


NEUTRAL_SCRIPT: tuple[dict[str, Any], ...] = (
    {"skill": "mine", "args": {"block": "dirt", "count": 3}},
    {"skill": "mine", "args": {"block": "grass_block", "count": 2}},
    {"skill": "place", "args": {"block": "dirt"}},
    {"skill": "equip", "args": {"item": "dirt"}},
    {"skill": "explore", "args": {"target": "sheep"}},
    {"skill": "attack", "args": {"target": "sheep", "count": 1}},
    {"skill": "mine", "args": {"block": "sand", "count": 2}},
    {"skill": "ascend", "args": {"height": 1}},
    {"skill": "wait", "args": {"ticks": 20}},
    {
        "skill": "craft_grid",
        "args": {"station": "inventory", "grid": [["sand", "sand"], ["sand", "sand"]]},
    },
    {"skill": "mine", "args": {"block": "unknown_thing", "count": 1}},
    {"skill": "explore", "args": {"target": "sugar_cane"}},
)
"""Actions that touch no rule any packaged suite changes (so twins must stay identical)."""


def twin_prefix(
    loaded: LoadedWorld, mirror: RuleSet, task: str, actions: list[Any], seed: int
) -> tuple[bool, int]:
    """Replay actions in both twins; compare observations until the Mirror logs an encounter."""
    t = get_task(task)
    van = SimEpisode(loaded, vanilla_rules(), vanilla_rules(), t, seed=seed)
    mir = SimEpisode(loaded, mirror, vanilla_rules(), t, seed=seed)
    if _ser(van.observe()) != _ser(mir.observe()):
        return False, 0
    compared = 0
    for action in actions:
        if van.done or mir.done:
            break
        a, b = van.step(action), mir.step(action)
        if mir.evaluator.encounters.encounters:
            break
        if _ser(a.observation) != _ser(b.observation):
            return False, compared
        compared += 1
    return True, compared


def _ser(obs: Any) -> str:
    return json.dumps(obs.to_json(), sort_keys=True)


# -- observability of each change ---------------------------------------------------


def _grid_for(rules: RuleSet, location: str) -> list[list[str | None]]:
    recipe = rules.recipes[location]
    rows: list[list[str | None]] = [[None] * 3 for _ in range(3)]
    if isinstance(recipe, ShapedRecipe):
        for r in range(recipe.height):
            for c in range(recipe.width):
                cell = recipe.cells[r * recipe.width + c]
                rows[r][c] = sorted(cell)[0] if cell else None
    elif isinstance(recipe, ShapelessRecipe):
        for i, ing in enumerate(recipe.ingredients):
            rows[i // 3][i % 3] = sorted(ing)[0]
    return rows


def _harvest_tool(rules: RuleSet, block: str) -> str | None:
    if rules.can_harvest(block, None):
        return None
    return next(
        (
            t
            for t in ("diamond_pickaxe", "diamond_axe", "diamond_shovel", "shears")
            if rules.can_harvest(block, t)
        ),
        None,
    )


def triggers(
    suite: CompiledSuite, vanilla: RuleSet, limit_targets: int = 3
) -> list[tuple[int, str, dict[str, int], list[dict[str, Any]]]]:
    """(change index, description, start inventory, actions) that exercise each change."""
    out: list[tuple[int, str, dict[str, int], list[dict[str, Any]]]] = []
    for i, change in enumerate(suite.manifest.changes):
        if isinstance(change, RecipeOutput):
            for _cat, loc in [r for r in suite.changed.get(i, ()) if r[0] == "recipes"][
                :limit_targets
            ]:
                grid = _grid_for(vanilla, loc)
                inv: dict[str, int] = {"crafting_table": 1}
                for row in grid:
                    for cell in row:
                        if cell:
                            inv[cell] = inv.get(cell, 0) + 1
                actions = [
                    {"skill": "place", "args": {"block": "crafting_table"}},
                    {"skill": "craft_grid", "args": {"station": "crafting_table", "grid": grid}},
                ]
                out.append((i, f"craft {loc}", inv, actions))
        elif isinstance(change, CookingResult):
            item = normalize_id(change.input)
            for station in change.stations:
                actions = [
                    {"skill": "place", "args": {"block": station}},
                    {"skill": "smelt", "args": {"input": item, "station": station, "count": 1}},
                ]
                out.append(
                    (i, f"smelt {item} in {station}", {item: 1, station: 1, "coal": 2}, actions)
                )
        elif isinstance(change, BlockDrops):
            blocks = sorted(
                {
                    loc.split("/", 1)[1]
                    for cat, loc in suite.changed.get(i, ())
                    if cat == "loot_tables"
                }
            )
            for block in blocks[:limit_targets]:
                inv = {block: 1}
                tool = _harvest_tool(vanilla, block)
                if tool:
                    inv[tool] = 1
                actions = [
                    {"skill": "place", "args": {"block": block}},
                    {"skill": "mine", "args": {"block": block, "count": 1}},
                ]
                out.append((i, f"mine {block}", inv, actions))
        elif isinstance(change, EntityLoot):
            mob = normalize_id(change.target)
            actions = [
                {"skill": "explore", "args": {"target": mob}},
                {"skill": "attack", "args": {"target": mob, "count": 1}},
            ]
            out.append((i, f"attack {mob}", {}, actions))
    return out


def observability(loaded: LoadedWorld, suite: SuiteRef, seed: int = 7) -> list[ObservabilityRow]:
    manifest = suite_manifest(suite)
    suite_id = manifest.id
    compiled_suite = compiled(manifest)
    mirror = suite_rules(suite)
    vanilla = vanilla_rules()
    task = get_task("enchantment")
    rows = []
    for index, desc, inv, actions in triggers(compiled_suite, vanilla):
        results = []
        for rules in (vanilla, mirror):
            ep = SimEpisode(loaded, rules, vanilla, task, seed=seed, start_inventory=inv)
            outs = [ep.step(a).result for a in actions]
            results.append((outs[-1], ep.evaluator.encounters.encounters))
        (v_res, _), (m_res, encounters) = results
        written = {f"{cat}/{loc}" for cat, loc in compiled_suite.changed.get(index, ())}
        logged = any(e.rule in written for e in encounters)
        observable = (dict(v_res.produced), v_res.reason) != (dict(m_res.produced), m_res.reason)
        detail = f"vanilla {dict(v_res.produced) or v_res.reason}, mirror {dict(m_res.produced) or m_res.reason}"
        rows.append(
            ObservabilityRow(
                loaded.world.world_id,
                suite_id,
                index,
                manifest.changes[index].sheet,
                desc,
                observable,
                logged,
                detail,
            )
        )
    return rows


def resource_outputs(rules: RuleSet, resource: tuple[str, str]) -> set[str]:
    """Items a rule resource produces under these rules (a recipe's result, a table's drops)."""
    category, location = resource
    if category == "recipes":
        recipe = rules.recipes.get(location)
        return (
            {recipe.result}
            if isinstance(recipe, ShapedRecipe | ShapelessRecipe | CookingRecipe)
            else set()
        )
    table = rules.loot_tables.get(location)
    return set(rules.table_outputs(table)) if table is not None else set()


def changes_on_routes(
    suite_ref: SuiteRef, loaded_worlds: Iterable[LoadedWorld], tasks: Iterable[str]
) -> dict[int, list[str]]:
    """Change index -> the tasks whose route (Vanilla or Mirror witness) needs an item it produces."""
    manifest = suite_manifest(suite_ref)
    suite = compiled(manifest)
    mirror, vanilla = suite_rules(suite_ref), vanilla_rules()
    needed: dict[str, set[str]] = {t: set() for t in tasks}
    for loaded in loaded_worlds:
        blocks, mobs = world_resources(loaded)
        for rules in (vanilla, mirror):
            reach = analyse(rules, blocks, mobs)
            for task in needed:
                _ok, route = task_route(rules, reach, get_task(task).final.advancement)
                for t in route:
                    needed[task].add(t.output)
                    needed[task].update(t.needs)
    out: dict[int, list[str]] = {}
    for i in range(len(manifest.changes)):
        touched: set[str] = set()
        for res in suite.changed.get(i, ()):
            touched |= resource_outputs(vanilla, res) | resource_outputs(mirror, res)
        out[i] = [t for t in needed if touched & needed[t]]
    return out


def off_route_changes(
    suite_ref: SuiteRef, loaded_worlds: Iterable[LoadedWorld], tasks: Iterable[str]
) -> list[tuple[str, int, str]]:
    manifest = suite_manifest(suite_ref)
    on = changes_on_routes(suite_ref, loaded_worlds, tasks)
    return [(manifest.id, i, manifest.changes[i].sheet) for i, ts in sorted(on.items()) if not ts]


def _is_suite(rules: SuiteRef) -> bool:
    return isinstance(rules, Manifest) or (rules != VANILLA and find_suite(rules) is not None)


def run_controls(
    worlds: Sequence[str | LoadedWorld],
    rule_sets: Sequence[SuiteRef],
    tasks: list[str],
    seed: int = 1,
    progress: Callable[[ControlRow], None] | None = None,
) -> ControlReport:
    """Every world x rule set x task row, then observability and the changes off every route.

    ``progress`` is called with each row as it is finished.
    """
    report = ControlReport()
    vanilla = vanilla_rules()
    for world_ref in worlds:
        loaded = _load(world_ref)
        world = loaded.world.world_id
        blocks, mobs = world_resources(loaded)
        vanilla_runs = {t: _oracle(loaded, vanilla, VANILLA, t, seed) for t in tasks}
        for rules_ref in rule_sets:
            rules = suite_rules(rules_ref)
            rules_name = rules_ref.id if isinstance(rules_ref, Manifest) else rules_ref
            reach = analyse(rules, blocks, mobs)
            for task in tasks:
                t = get_task(task)
                ok, route = task_route(rules, reach, t.final.advancement)
                success, used, _ = (
                    vanilla_runs[task]
                    if rules_name == VANILLA
                    else _oracle(loaded, rules, rules_name, task, seed)
                )
                if rules_name == VANILLA:
                    equal, prefix, neutral = True, len(vanilla_runs[task][2]), True
                else:
                    equal, prefix = twin_prefix(loaded, rules, task, vanilla_runs[task][2], seed)
                    neutral_ok, n = twin_prefix(loaded, rules, task, list(NEUTRAL_SCRIPT), seed)
                    neutral = neutral_ok and n == len(NEUTRAL_SCRIPT)
                row = ControlRow(
                    world,
                    rules_name,
                    task,
                    t.budget,
                    ok,
                    " | ".join(x.describe() for x in route),
                    success,
                    used,
                    equal,
                    prefix,
                    neutral,
                )
                report.rows.append(row)
                if progress is not None:
                    progress(row)
            if _is_suite(rules_ref):
                report.observability.extend(observability(loaded, rules_ref))
    loaded_all = [_load(w) for w in worlds]
    for rules_ref in rule_sets:
        if _is_suite(rules_ref):
            report.off_route.extend(off_route_changes(rules_ref, loaded_all, tasks))
    return report
