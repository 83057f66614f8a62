"""RuleSet: the vanilla pack plus datapacks in load order, compiled into one immutable value.

Layering follows the server: a later pack's file replaces an earlier file at the
same resource location (recipes, loot tables, advancements); tags merge unless a
later file says ``"replace": true``. Every file is parsed and checked before the
RuleSet exists, so a broken pack never half-loads. Two RuleSets can live side by
side; nothing here is global except a cache of the packaged vanilla pack.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mirrorcraft.rules.advancements import Advancement, AdvancementParser
from mirrorcraft.rules.crafting import CraftingMatcher, CraftOutcome, Grid
from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.game import GameData, load_game_data
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot import MAX_LOOT_WORK, LootCompiler, LootTable, loot_work
from mirrorcraft.rules.loot_context import (
    BlockLookup,
    EntityState,
    LootContext,
    LootRuntime,
    RandomSource,
)
from mirrorcraft.rules.pack import PackData, load_pack, resource_path
from mirrorcraft.rules.recipes import (
    COOKING_TYPES,
    CookingRecipe,
    InertRecipe,
    Recipe,
    RecipeParser,
    ShapedRecipe,
    ShapelessRecipe,
)
from mirrorcraft.rules.special_recipes import ENGINE_RULES, SpecialRecipeSet
from mirrorcraft.rules.tags import layer_tags, resolve_tags

STATION_COOKING = {station: kind for kind, station in COOKING_TYPES.items()}
"""Station block -> the recipe type it runs (furnace -> smelting, ...)."""

NEEDS_TIER_TAGS = (("needs_diamond_tool", 3), ("needs_iron_tool", 2), ("needs_stone_tool", 1))


def vanilla_pack_path() -> Path:
    return Path(str(resources.files("mirrorcraft") / "data" / "packs" / "vanilla"))


@lru_cache(maxsize=1)
def vanilla_pack() -> PackData:
    """The packaged vanilla 1.19 pack (parsed once per process; PackData is immutable)."""
    return load_pack(vanilla_pack_path(), name="vanilla")


def tasks_pack_path() -> Path:
    return Path(str(resources.files("mirrorcraft") / "data" / "packs" / "tasks"))


@lru_cache(maxsize=1)
def tasks_pack() -> PackData:
    """The packaged task advancements (the tech-tree suite), layered right after vanilla."""
    return load_pack(tasks_pack_path(), name="tasks")


@dataclass(frozen=True, eq=False)
class RuleSet:
    name: str
    packs: tuple[str, ...]
    game: GameData
    item_tags: Mapping[str, frozenset[str]]
    block_tags: Mapping[str, frozenset[str]]
    recipes: Mapping[str, Recipe]
    loot_tables: Mapping[str, LootTable]
    advancements: Mapping[str, Advancement]
    fuels: Mapping[str, int]
    documents: Mapping[tuple[str, str], Any]
    """(category, location) -> the JSON document in force (after layering)."""
    sources: Mapping[tuple[str, str], str]
    """(category, location) -> the name of the pack the document came from."""
    fingerprint: str
    _crafting: CraftingMatcher
    _cooking: Mapping[tuple[str, str], CookingRecipe]
    _loot_memo: dict[tuple[Any, ...], tuple[LootTable, tuple[ItemStack, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Rolls that drew no random number and read no neighbouring block, by table and
    context: rolling them again gives the same drops (see ``roll``)."""
    _harvests: dict[tuple[str, str | None], bool] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """``can_harvest`` answers by (block, tool): a function of the game data and tags."""
    _dig_ticks: dict[tuple[str, str | None, int, int], int] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """``dig_ticks`` answers by (block, tool, efficiency, haste)."""

    # -- construction ----------------------------------------------------------
    @classmethod
    def load(
        cls,
        extra: Sequence[str | Path | PackData] = (),
        *,
        name: str | None = None,
        game: GameData | None = None,
        base: PackData | None = None,
    ) -> RuleSet:
        """Vanilla and the task pack (or ``base`` alone) plus ``extra`` packs in load order.

        The task pack defines the tech-tree tasks' advancements; it sits right after
        vanilla so every rule set carries it and a later pack may override it.
        """
        packs = [base] if base is not None else [vanilla_pack(), tasks_pack()]
        for item in extra:
            packs.append(item if isinstance(item, PackData) else load_pack(item))
        label = name or "+".join(p.name for p in packs)
        return build_ruleset(packs, game or load_game_data(), label)

    # -- crafting and processing ---------------------------------------------
    def craft(self, grid: Grid, station: str) -> CraftOutcome | None:
        """What the result slot shows for this grid at ``inventory`` or ``crafting_table``."""
        return self._crafting.match(grid, station)

    def cooking(self, item: str, station: str) -> CookingRecipe | None:
        """The recipe a furnace-like ``station`` applies to one ``item`` (None: it will not cook)."""
        kind = STATION_COOKING.get(station)
        if kind is None:
            return None
        return self._cooking.get((kind, item))

    def smelt_result(self, item: str) -> str | None:
        recipe = self._cooking.get(("smelting", item))
        return recipe.result if recipe else None

    def fuel_ticks(self, item: str) -> int:
        """Burn time in ticks; 0 when the item is not a fuel. Tags follow this RuleSet."""
        return self.fuels.get(item, 0)

    # -- blocks, tools and loot ------------------------------------------------
    def required_tool(self, block: str) -> tuple[str, int] | None:
        """(tool kind, minimum tier level) a block needs to drop anything, or None."""
        info = self.game.blocks.get(block)
        if info is None or not info.requires_tool:
            return None
        kinds = [
            k
            for k in ("pickaxe", "axe", "shovel", "hoe")
            if block in self.block_tags.get(f"mineable/{k}", ())
        ]
        tier = next((lv for tag, lv in NEEDS_TIER_TAGS if block in self.block_tags.get(tag, ())), 0)
        return (kinds[0] if kinds else "none", tier)

    def can_harvest(self, block: str, tool: str | None) -> bool:
        """Would breaking ``block`` with ``tool`` (None: bare hand) drop its loot? (Answers
        are remembered per rule set: they depend only on its game data and tags.)"""
        known = self._harvests.get((block, tool))
        if known is None:
            known = self._harvests[(block, tool)] = self._can_harvest(block, tool)
        return known

    def speeds_up(self, block: str, tool: str | None) -> bool:
        """Does ``tool`` dig ``block`` at its own speed (its kind's mineable tag holds the
        block, or the game hard-codes it as right for it)? Bare hands dig at speed 1."""
        spec = self.game.tools.get(tool) if tool else None
        if spec is None:
            return False
        if block in spec.correct_for:
            return True
        return block in self.block_tags.get(f"mineable/{spec.kind}", ())

    def dig_ticks(self, block: str, tool: str | None, efficiency: int = 0, haste: int = 0) -> int:
        """Game ticks a player on the ground, out of water, takes to break ``block`` with
        ``tool`` (None: bare hand), as the game computes it: 0 for a block broken at once,
        -1 for one that cannot be broken. Efficiency and Haste levels speed it up."""
        key = (block, tool, efficiency, haste)
        known = self._dig_ticks.get(key)
        if known is None:
            known = self._dig_ticks[key] = self._dig_time(block, tool, efficiency, haste)
        return known

    def _dig_time(self, block: str, tool: str | None, efficiency: int, haste: int) -> int:
        info = self.game.blocks.get(block)
        if info is None or not info.diggable or info.hardness < 0:
            return -1
        if info.hardness == 0:
            return 0
        speed = 1.0
        if tool is not None and self.speeds_up(block, tool):
            speed = self.game.tools[tool].speed
        if efficiency > 0 and speed > 1:  # as the game: only a tool that speeds it up
            speed += efficiency * efficiency + 1
        if haste > 0:
            speed *= 1 + 0.2 * haste
        per_tick = speed / info.hardness / (30 if self.can_harvest(block, tool) else 100)
        if per_tick >= 1:
            return 0
        return math.ceil(1 / per_tick)

    def _can_harvest(self, block: str, tool: str | None) -> bool:
        info = self.game.blocks.get(block)
        if info is None or not info.diggable:
            return False
        if not info.requires_tool:
            return True
        spec = self.game.tools.get(tool) if tool else None
        if spec is None:
            return False
        if block in spec.correct_for:
            return True
        for tag, level in NEEDS_TIER_TAGS:
            if spec.tier_level < level and block in self.block_tags.get(tag, ()):
                return False
        return block in self.block_tags.get(f"mineable/{spec.kind}", ())

    def block_table(self, block: str) -> LootTable | None:
        info = self.game.blocks.get(block)
        location = info.loot_table if info is not None else f"minecraft:blocks/{block}"
        return self.loot_tables.get(location) if location else None

    def entity_table(self, entity: str, variant: str = "") -> LootTable | None:
        """The table a mob drops from; a variant (a sheep's colour) picks its own table."""
        info = self.game.entities.get(entity)
        location = info.loot_table(variant) if info is not None else None
        return self.loot_tables.get(location or f"minecraft:entities/{entity}")

    def entity_variants(self, entity: str) -> tuple[tuple[str, int], ...]:
        """(variant, weight) a natural spawn draws from; empty for mobs without variants."""
        info = self.game.entities.get(entity)
        return info.variant_weights if info is not None else ()

    def block_context(
        self,
        block: str,
        tool: ItemStack | None,
        *,
        properties: Mapping[str, str] | None = None,
        lookup: BlockLookup | None = None,
    ) -> LootContext:
        """The loot context of a player breaking ``block`` with ``tool`` (None: bare hand)."""
        info = self.game.blocks.get(block)
        return LootContext(
            tool=tool,
            block=block,
            block_properties=properties
            if properties is not None
            else (info.default_state if info else {}),
            this_entity=_PLAYER,
            lookup=lookup,
        )

    def roll(self, table: LootTable, ctx: LootContext, rng: RandomSource) -> list[ItemStack]:
        """Roll ``table``. A random source that tells whether it was drawn from (``drawn``)
        lets a roll that drew nothing and asked nothing about neighbouring blocks be
        remembered: the same table and context then give the same drops without rolling.
        """
        key = _memo_key(table, ctx) if hasattr(rng, "drawn") else None
        if key is not None:
            known = self._loot_memo.get(key)
            if known is not None and known[0] is table:
                return list(known[1])
            spy = _LookupSpy(ctx.lookup)
            ctx = replace(ctx, lookup=spy if ctx.lookup is not None else None)
        runtime = LootRuntime(rng=rng, ctx=ctx, tables=self.loot_tables, smelt=self.smelt_result)
        drops = table.roll(runtime)
        if key is not None and not getattr(rng, "drawn", True) and not spy.used:
            if len(self._loot_memo) > LOOT_MEMO_LIMIT:
                self._loot_memo.clear()
            self._loot_memo[key] = (table, tuple(drops))
        return drops

    def table_outputs(self, table: LootTable) -> frozenset[str]:
        """Every item a table can drop, following references and furnace_smelt."""
        seen: set[str] = set()
        out: set[str] = set()
        todo = [table]
        while todo:
            current = todo.pop()
            if current.location in seen:
                continue
            seen.add(current.location)
            out |= current.outputs
            if current.smelts:
                out |= {r for r in map(self.smelt_result, current.outputs) if r}
            todo.extend(
                t for ref in current.references if (t := self.loot_tables.get(ref)) is not None
            )
        return frozenset(out)

    def display_name(self, item: str) -> str:
        return self.game.display_names.get(item, item)


LOOT_MEMO_LIMIT = 4096
_PLAYER = EntityState("player")
"""Who breaks a block (frozen, so one is shared)."""


class _LookupSpy:
    """A block lookup that notes whether a roll asked it anything."""

    __slots__ = ("inner", "used")

    def __init__(self, inner: BlockLookup | None):
        self.inner = inner
        self.used = False

    def __call__(self, dx: int, dy: int, dz: int) -> tuple[str, Mapping[str, str]]:
        self.used = True
        assert self.inner is not None
        return self.inner(dx, dy, dz)


def _memo_key(table: LootTable, ctx: LootContext) -> tuple[Any, ...] | None:
    """Everything of a loot context a roll can depend on, except the world around it.

    A tool's wear is left out: no loot predicate the simulator interprets reads it.
    """
    tool = ctx.tool
    return (
        id(table),
        table.location,
        None if tool is None else (tool.item, tool.count, tool.enchantments),
        ctx.explosion_radius,
        ctx.this_entity,
        ctx.killer_is_player,
        ctx.looting,
        ctx.luck,
        ctx.block,
        tuple(sorted(ctx.block_properties.items())),
    )


def _layered(packs: Sequence[PackData], category: str) -> dict[str, tuple[str, Any]]:
    merged: dict[str, tuple[str, Any]] = {}
    for pack in packs:
        for location, doc in pack.of(category).items():
            merged[location] = (pack.name, doc)
    return merged


def _resolve_fuels(game: GameData, item_tags: Mapping[str, frozenset[str]]) -> dict[str, int]:
    fuels: dict[str, int] = {}
    # Tags first, then single items, as the game's fuel map is built in one fixed order.
    for key, ticks in sorted(game.fuels.items(), key=lambda kv: (not kv[0].startswith("#"), kv[0])):
        members = item_tags.get(key[1:], frozenset()) if key.startswith("#") else {key}
        for item in members:
            fuels[item] = ticks
    for ref in game.never_fuel:
        for item in item_tags.get(ref[1:], frozenset()) if ref.startswith("#") else {ref}:
            fuels.pop(item, None)
    return fuels


def _special_recipes(recipes: Mapping[str, Recipe], game: GameData) -> SpecialRecipeSet:
    """The special recipes in force that have an engine rule and game facts."""
    found = tuple(
        (location, recipe.kind)
        for location, recipe in sorted(recipes.items())
        if isinstance(recipe, InertRecipe)
        and recipe.kind in ENGINE_RULES
        and recipe.kind in game.special_recipes
    )
    return SpecialRecipeSet(found, game.special_recipes, game.durability)


_PARSED: dict[tuple[str, str, int, int], tuple[Any, Any, bytes]] = {}
"""(category, location, id(document), parsing context) -> (the document, what it parsed
into, its canonical JSON). A pack is loaded once per process (``vanilla_pack``), so the
rule sets built on it hand the same document objects to ``build_ruleset``: the vanilla
files a suite leaves alone are parsed once, not once per rule set. Parsed rules are
immutable, so rule sets can share them. The document is kept, so its id stays its own."""
_CONTEXTS: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
"""(game fingerprint, resolved item tags) -> a small number naming that parsing context:
what a parser reads besides the document itself."""
PARSED_LIMIT = 20_000
CONTEXTS_LIMIT = 64
"""Parsing contexts kept; past it both memos start again (a context's number must never
name two contexts while anything parsed under it is kept)."""


def _tag_lines(tags: Mapping[str, frozenset[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((tag, ",".join(sorted(members))) for tag, members in sorted(tags.items()))


def build_ruleset(packs: Sequence[PackData], game: GameData, name: str) -> RuleSet:
    items, blocks = game.item_ids, game.block_ids
    item_tags = resolve_tags(layer_tags(packs, "tags/items"), items, "items")
    block_tags = resolve_tags(layer_tags(packs, "tags/blocks"), blocks, "blocks")
    item_lines = _tag_lines(item_tags)
    if len(_PARSED) > PARSED_LIMIT:
        _PARSED.clear()
    if (game.fingerprint, item_lines) not in _CONTEXTS and len(_CONTEXTS) >= CONTEXTS_LIMIT:
        _CONTEXTS.clear()
        _PARSED.clear()
    context = _CONTEXTS.setdefault((game.fingerprint, item_lines), len(_CONTEXTS))
    documents: dict[tuple[str, str], Any] = {}
    sources: dict[tuple[str, str], str] = {}
    canonical: dict[tuple[str, str], bytes] = {}

    def parse_all(category: str, parse: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for location, (pack_name, doc) in sorted(_layered(packs, category).items()):
            key = (category, location, id(doc), context)
            hit = _PARSED.get(key)
            if hit is not None and hit[0] is doc:
                out[location] = hit[1]
                canonical[(category, location)] = hit[2]
            else:
                try:
                    out[location] = parse(location, doc)
                except DatapackError as exc:
                    raise exc.located(
                        pack=pack_name, file=resource_path(category, location)
                    ) from None
                except ValueError as exc:  # a malformed id the parser met (``normalize_id``)
                    raise DatapackError(
                        str(exc), pack=pack_name, file=resource_path(category, location)
                    ) from None
                text = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
                canonical[(category, location)] = text
                _PARSED[key] = (doc, out[location], text)
            documents[(category, location)] = doc
            sources[(category, location)] = pack_name
        return out

    recipes: dict[str, Recipe] = parse_all("recipes", RecipeParser(item_tags, items).parse)
    loot_tables: dict[str, LootTable] = parse_all(
        "loot_tables", LootCompiler(item_tags, items).compile
    )
    for location, work in loot_work(loot_tables).items():
        if work > MAX_LOOT_WORK:
            raise DatapackError(
                f"one roll can cost more than {MAX_LOOT_WORK} entry expansions and stacks, "
                "following its loot_table references (see docs/limits.md)",
                pack=sources[("loot_tables", location)],
                file=resource_path("loot_tables", location),
            )
    for location in sorted(loot_tables):
        missing = sorted(r for r in loot_tables[location].references if r not in loot_tables)
        if missing:  # the game loads it but reports it, and the entry drops nothing
            raise DatapackError(
                f"a loot_table entry names {missing[0]!r}, which no pack defines "
                "(the entry would silently drop nothing)",
                pack=sources[("loot_tables", location)],
                file=resource_path("loot_tables", location),
            )
    adv_list = parse_all("advancements", AdvancementParser(item_tags, items).parse)
    advancements = {adv.id: adv for adv in adv_list.values()}
    for location in sorted(adv_list):
        adv = adv_list[location]
        if adv.parent is not None and adv.parent not in advancements:
            raise DatapackError(
                f"its parent {adv.parent!r} is an advancement no pack defines "
                "(a 1.19 server does not load an advancement whose parent is missing)",
                pack=sources[("advancements", location)],
                file=resource_path("advancements", location),
            )

    shaped = [r for r in recipes.values() if isinstance(r, ShapedRecipe)]
    shapeless = [r for r in recipes.values() if isinstance(r, ShapelessRecipe)]
    cooking: dict[tuple[str, str], CookingRecipe] = {}
    for location in sorted(recipes):
        recipe = recipes[location]
        if isinstance(recipe, CookingRecipe):
            for item in recipe.ingredient:
                cooking.setdefault((recipe.kind, item), recipe)

    digest = hashlib.sha256()
    digest.update(game.fingerprint.encode())
    for category, location in sorted(documents):
        digest.update(f"\0{category}\0{location}\0".encode())
        digest.update(canonical[(category, location)])
    for label, lines in (("items", item_lines), ("blocks", _tag_lines(block_tags))):
        for tag, members in lines:
            digest.update(f"\0tag/{label}/{tag}\0{members}".encode())

    return RuleSet(
        name=name,
        packs=tuple(p.name for p in packs),
        game=game,
        item_tags=MappingProxyType(item_tags),
        block_tags=MappingProxyType(block_tags),
        recipes=MappingProxyType(recipes),
        loot_tables=MappingProxyType(loot_tables),
        advancements=MappingProxyType(advancements),
        fuels=MappingProxyType(_resolve_fuels(game, item_tags)),
        documents=MappingProxyType(documents),
        sources=MappingProxyType(sources),
        fingerprint=digest.hexdigest()[:16],
        _crafting=CraftingMatcher(shaped, shapeless, _special_recipes(recipes, game)),
        _cooking=MappingProxyType(cooking),
    )


@lru_cache(maxsize=1)
def vanilla_ruleset() -> RuleSet:
    """The packaged vanilla rules, loaded once per process (a RuleSet is immutable)."""
    return RuleSet.load(name="vanilla")


def canonical_item(raw: str, ruleset: RuleSet) -> str:
    """Normalise an item id and check the game knows it (ValueError otherwise)."""
    item = normalize_id(raw)
    if item not in ruleset.game.items:
        raise ValueError(f"unknown item {item!r}")
    return item
