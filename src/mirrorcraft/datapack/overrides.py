"""Structured overrides: each changed transition of a suite as one line of data.

The disclosed condition gives ReAct the prose rule sheet followed by these lines
(the paper's "Structured Overrides" form, appendix L.11): for every resource a
change writes, the operation that triggers it (``craft_grid``, ``smelt``,
``mine``, ``attack``), its input, what standard 1.19 gives and what this suite
gives. Both outputs are read from the compiled rules, never from the prose:
recipes from the vanilla and suite recipe tables, drops by rolling each loot
table with fixed seeds (a count shown as ``0-2`` varies between those bounds).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mirrorcraft.datapack.manifest import Manifest
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.rules.pack import PackData
from mirrorcraft.rules.recipes import (
    COOKING_TYPES,
    CookingRecipe,
    Ingredient,
    ShapedRecipe,
    ShapelessRecipe,
)
from mirrorcraft.rules.ruleset import RuleSet

ROLLS = 64
"""Loot rolls per table (seeds 0..63) from which a drop's count range is read."""
LINES_PER_CHANGE = 3
"""Full lines shown per change; further inputs of the same change are named on one line."""
HEADER = (
    "Structured overrides (one changed transition per line: operation, input, "
    "what standard Minecraft 1.19 gives, what this world gives):"
)


class SuiteRules(Protocol):
    """What the structured lines read of a compiled suite (``datapack.compiler.CompiledSuite``,
    which imports this module to render its sheet)."""

    @property
    def manifest(self) -> Manifest: ...

    @property
    def changed(self) -> dict[int, tuple[tuple[str, str], ...]]: ...

    def pack(self) -> PackData: ...


@dataclass(frozen=True)
class Override:
    change: int
    """Index of the manifest change that writes it."""
    operator: str
    """The skill that triggers it: craft_grid, smelt, mine or attack."""
    subject: str
    """The input's short id (recipe result, cooked item, block or creature)."""
    input: str
    vanilla: str
    new: str

    def line(self, index: int) -> str:
        return f"{index}. {self.operator} {self.input} | vanilla: {self.vanilla} | now: {self.new}"


def _ingredient(ing: Ingredient | None) -> str | None:
    if ing is None or not ing:
        return None
    items = sorted(ing)
    if len(items) <= 4:
        return "/".join(items)
    return "/".join(items[:3]) + f"/... ({len(items)} kinds)"


def _grid(recipe: ShapedRecipe) -> str:
    rows = []
    for r in range(recipe.height):
        cells = recipe.cells[r * recipe.width : (r + 1) * recipe.width]
        rows.append("[" + ",".join(_ingredient(c) or "null" for c in cells) + "]")
    station = "crafting_table" if recipe.height > 2 or recipe.width > 2 else "inventory"
    return f"grid [{','.join(rows)}] ({station})"


def _shapeless(recipe: ShapelessRecipe) -> str:
    counts: dict[str, int] = {}
    for ing in recipe.ingredients:
        name = _ingredient(ing) or "?"
        counts[name] = counts.get(name, 0) + 1
    station = "crafting_table" if len(recipe.ingredients) > 4 else "inventory"
    parts = ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))
    return f"any arrangement of {parts} ({station})"


def _stack(item: str, count: int) -> str:
    return f"{item} x{count}"


def _drops(rules: RuleSet, location: str, ctx: LootContext) -> str:
    table = rules.loot_tables.get(location)
    if table is None:
        return "nothing"
    per_roll: list[dict[str, int]] = []
    for seed in range(ROLLS):
        got: dict[str, int] = {}
        for stack in rules.roll(table, ctx, random.Random(seed)):
            got[stack.item] = got.get(stack.item, 0) + stack.count
        per_roll.append(got)
    items = sorted({i for roll in per_roll for i in roll})
    if not items:
        return "nothing"
    parts = []
    for item in items:
        counts = [roll.get(item, 0) for roll in per_roll]
        low, high = min(counts), max(counts)
        parts.append(f"{item} x{low}" if low == high else f"{item} x{low}-{high}")
    return ", ".join(parts)


def _block_context(vanilla: RuleSet, block: str) -> LootContext:
    """Breaking ``block`` with the plainest tool that harvests it (no enchantment)."""
    tool: str | None = None
    if not vanilla.can_harvest(block, None):
        able = sorted(
            (t for t in vanilla.game.tools if vanilla.can_harvest(block, t)),
            key=lambda t: (vanilla.game.tools[t].tier_level, t),
        )
        tool = able[0] if able else None
    info = vanilla.game.blocks[block]
    return LootContext(
        tool=ItemStack(tool) if tool else None,
        block=block,
        block_properties=info.default_state,
        this_entity=EntityState("player"),
    )


def _recipe_overrides(
    index: int, location: str, vanilla: RuleSet, mirror: RuleSet
) -> list[Override]:
    new = mirror.recipes.get(location)
    old = vanilla.recipes.get(location)
    if isinstance(new, ShapedRecipe | ShapelessRecipe):
        shape = _grid(new) if isinstance(new, ShapedRecipe) else _shapeless(new)
        before = (
            _stack(old.result, old.count)
            if isinstance(old, ShapedRecipe | ShapelessRecipe)
            else "nothing"
        )
        return [
            Override(index, "craft_grid", new.result, shape, before, _stack(new.result, new.count))
        ]
    if isinstance(new, CookingRecipe):
        station = COOKING_TYPES[new.kind]
        out = []
        for item in sorted(new.ingredient):
            was = vanilla.cooking(item, station)
            before = _stack(was.result, was.count) if was is not None else "nothing (no recipe)"
            out.append(
                Override(
                    index,
                    "smelt",
                    item,
                    f"{item} in a {station}",
                    before,
                    _stack(new.result, new.count),
                )
            )
        return out
    return []


def structured_overrides(
    suite: SuiteRules, vanilla: RuleSet, mirror: RuleSet | None = None
) -> list[Override]:
    """Every transition the suite changes, in manifest order.

    A rewritten resource can keep some of its inputs as they were (a cooking recipe
    that loses one ingredient to a new recipe); those unchanged inputs are left out.
    """
    if mirror is None:
        mirror = RuleSet.load([suite.pack()], name=suite.manifest.id)
    out: list[Override] = []
    for index in sorted(suite.changed):
        for category, location in suite.changed[index]:
            if category == "recipes":
                out += _recipe_overrides(index, location, vanilla, mirror)
            elif category == "loot_tables" and location.startswith("minecraft:entities/"):
                entity = normalize_id(location.rsplit("/", 1)[1])
                ctx = LootContext(this_entity=EntityState(entity), killer_is_player=True)
                out.append(
                    Override(
                        index,
                        "attack",
                        entity,
                        entity,
                        _drops(vanilla, location, ctx),
                        _drops(mirror, location, ctx),
                    )
                )
            elif category == "loot_tables":
                blocks = sorted(
                    b for b, info in vanilla.game.blocks.items() if info.loot_table == location
                )
                for block in blocks:
                    ctx = _block_context(vanilla, block)
                    out.append(
                        Override(
                            index,
                            "mine",
                            block,
                            block,
                            _drops(vanilla, location, ctx),
                            _drops(mirror, location, ctx),
                        )
                    )
    return [o for o in out if o.vanilla != o.new]


def render_overrides(overrides: Sequence[Override]) -> str:
    """The structured lines, at most ``LINES_PER_CHANGE`` per change plus the other inputs."""
    lines = [HEADER]
    n = 0
    for change in sorted({o.change for o in overrides}):
        mine = sorted(
            (o for o in overrides if o.change == change),
            key=lambda o: (len(o.subject), o.subject, o.input),
        )
        for o in mine[:LINES_PER_CHANGE]:
            n += 1
            lines.append(o.line(n))
        rest = sorted({o.subject for o in mine[LINES_PER_CHANGE:]})
        if rest:
            lines.append(f"   (the same change, in the same way, for: {', '.join(rest)})")
    return "\n".join(lines)
