"""What a planner believes the rules are: craft, smelt, mine and kill options.

A ``Belief`` is built from a RuleSet (the vanilla pack for the vanilla and
adaptive planners; the active rules for the oracle). Options are indexed by what
they produce. The adaptive planner overrides options with what it observed.
Expected drops are estimated by rolling each loot table a fixed number of times
with fixed seeds, so beliefs are deterministic.
"""

from __future__ import annotations

import bisect
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass, field, replace
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.rules.recipes import CookingRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import STATION_COOKING, RuleSet
from mirrorcraft.safeload import load_yaml_file

Cell = frozenset[str] | None
Index = tuple[dict[str, list[Any]], dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]
"""A belief's options by what they yield; craft positions by key; by output (see Belief)."""


@dataclass(frozen=True)
class CraftOption:
    key: str
    """Identity used to attach observations (the recipe it was derived from)."""
    station: str  # inventory | crafting_table
    rows: tuple[tuple[Cell, ...], ...]
    outputs: tuple[tuple[str, int], ...]
    """What crafting it yields (item, count); empty when believed to yield nothing."""

    @cached_property
    def inputs(self) -> dict[frozenset[str], int]:
        need: dict[frozenset[str], int] = defaultdict(int)
        for row in self.rows:
            for cell in row:
                if cell is not None:
                    need[cell] += 1
        return dict(need)

    @cached_property
    def ordered_inputs(self) -> tuple[tuple[int, tuple[str, ...]], ...]:
        """(count, the cell's items sorted) per input cell, the cells in the order of their
        sorted items: the order the planner settles them in, worked out once."""
        cells = ((qty, tuple(sorted(cell))) for cell, qty in self.inputs.items())
        return tuple(sorted(cells, key=lambda c: c[1]))

    @cached_property
    def yields(self) -> dict[str, int]:
        return dict(self.outputs)


@dataclass(frozen=True)
class SmeltOption:
    input: str
    station: str  # furnace | blast_furnace | smoker
    outputs: tuple[tuple[str, int], ...]
    cook_time: int

    @cached_property
    def yields(self) -> dict[str, int]:
        return dict(self.outputs)


@dataclass(frozen=True)
class SourceOption:
    """Breaking a block or defeating a mob: expected drops per block or per kill."""

    kind: str  # block | mob
    source: str
    drops: tuple[tuple[str, float], ...]

    @cached_property
    def yields(self) -> dict[str, float]:
        return dict(self.drops)


@dataclass(frozen=True)
class PlannerConfig:
    natural_blocks: tuple[str, ...]
    natural_mobs: tuple[str, ...]
    sample_tools: tuple[str, ...]
    loot_samples: int
    bulk_blocks: tuple[str, ...]
    enchant_candidates: tuple[str, ...]
    explore_cooldown: int
    worn_tool_uses: int = 0
    """A tool with fewer uses left than this is planned for as if it were already gone."""


@lru_cache(maxsize=1)
def planner_config() -> PlannerConfig:
    path = Path(str(resources.files("mirrorcraft") / "data" / "planner.yaml"))
    raw = load_yaml_file(path)
    return PlannerConfig(
        tuple(raw["natural_blocks"]),
        tuple(raw["natural_mobs"]),
        tuple(raw["sample_tools"]),
        int(raw["loot_samples"]),
        tuple(raw["bulk_blocks"]),
        tuple(raw["enchant_candidates"]),
        int(raw["explore_cooldown"]),
        int(raw.get("worn_tool_uses", 0)),
    )


def expand_refs(rules: RuleSet, refs: Iterable[str]) -> list[str]:
    out: list[str] = []
    for ref in refs:
        if ref.startswith("#"):
            tag = ref[1:].removeprefix("minecraft:")
            names = sorted(
                rules.block_tags.get(tag, frozenset()) | rules.item_tags.get(tag, frozenset())
            )
        else:
            names = [ref]
        out.extend(n for n in names if n not in out)
    return out


def concrete_grid(
    option: CraftOption, inventory: Mapping[str, int]
) -> tuple[list[list[str | None]], dict[str, int]]:
    """A grid for an option filled from ``inventory`` (most plentiful alternative first),
    and the items still missing for it."""
    left = dict(inventory)
    missing: dict[str, int] = {}
    rows: list[list[str | None]] = []
    for row in option.rows:
        out: list[str | None] = []
        for cell in row:
            if cell is None:
                out.append(None)
                continue
            choice = max(sorted(cell), key=lambda i: left.get(i, 0))
            if left.get(choice, 0) > 0:
                left[choice] -= 1
            else:
                missing[choice] = missing.get(choice, 0) + 1
            out.append(choice)
        rows.append(out)
    return rows, missing


def _craft_options(rules: RuleSet) -> list[CraftOption]:
    options = []
    for loc, recipe in sorted(rules.recipes.items()):
        if isinstance(recipe, ShapedRecipe):
            rows = tuple(
                tuple(recipe.cells[r * recipe.width + c] for c in range(recipe.width))
                for r in range(recipe.height)
            )
            station = "inventory" if recipe.height <= 2 and recipe.width <= 2 else "crafting_table"
        elif isinstance(recipe, ShapelessRecipe):
            ings: list[Cell] = list(recipe.ingredients)
            width = 2 if len(ings) <= 4 else 3
            station = "inventory" if len(ings) <= 4 else "crafting_table"
            ings += [None] * (-len(ings) % width)
            rows = tuple(tuple(ings[i : i + width]) for i in range(0, len(ings), width))
        else:
            continue
        if any(cell is not None and not cell for row in rows for cell in row):
            continue
        options.append(CraftOption(loc, station, rows, ((recipe.result, recipe.count),)))
    return options


def _roll_mob(rules: RuleSet, mob: str, ctx: LootContext, rng: random.Random) -> list[ItemStack]:
    """One kill's drops; a mob with natural variants is one drawn by weight first."""
    variants = rules.entity_variants(mob)
    variant = ""
    if variants:
        pick = rng.randrange(sum(w for _v, w in variants))
        for name, weight in variants:
            pick -= weight
            if pick < 0:
                variant = name
                break
    table = rules.entity_table(mob, variant)
    return rules.roll(table, ctx, rng) if table is not None else []


def _sample_drops(rules: RuleSet, table_roll: Any, n: int) -> tuple[tuple[str, float], ...]:
    totals: dict[str, int] = defaultdict(int)
    for i in range(n):
        for stack in table_roll(random.Random(i)):
            totals[stack.item] += stack.count
    return tuple(sorted((item, count / n) for item, count in totals.items()))


@dataclass
class Belief:
    """Mutable beliefs (the adaptive planner revises them); built fresh per episode."""

    rules: RuleSet
    crafts: list[CraftOption]
    smelts: dict[tuple[str, str], SmeltOption]
    blocks: dict[str, SourceOption]
    mobs: dict[str, SourceOption]
    harvest: dict[str, frozenset[str]]
    """Block -> tools believed to harvest it ("hand" when no tool is needed)."""
    config: PlannerConfig
    produced_by: dict[str, list[Any]] = field(default_factory=dict)
    version: int = 0
    root: object | None = field(default=None, compare=False)
    """The shared belief this one was copied from, kept after revisions."""
    revisions: tuple[tuple[Any, ...], ...] = field(default=(), compare=False)
    """The ``set_`` calls made since the copy, in order (with ``root``: a key of the
    contents, since every revision is a function of the contents and its arguments)."""

    _craft_at: dict[str, tuple[int, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Craft key -> its positions in ``crafts`` (as of the last full index)."""
    _craft_outs: dict[str, tuple[int, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Item -> positions in ``crafts`` of the options yielding it, once per output line."""
    _indexed: list[CraftOption] | None = field(default=None, init=False, repr=False, compare=False)
    """The ``crafts`` list the craft positions were taken from."""

    index: InitVar[Index | None] = None
    """An index of these very options made earlier (``indexed``), to start from."""

    def __post_init__(self, index: Index | None) -> None:
        if index is None:
            self.reindex()
            return
        produced_by, self._craft_at, self._craft_outs = index
        self.produced_by = dict(produced_by)
        self._indexed = self.crafts
        self._revised()

    def indexed(self) -> Index:
        """The index as it is now (its lists are never changed in place)."""
        return self.produced_by, self._craft_at, self._craft_outs

    def reindex(self) -> None:
        """Index every option by what it yields, from scratch (call it after changing the
        option lists other than through the ``set_`` methods)."""
        self.root = None  # changed other than by the revisions recorded: no longer a key
        index: dict[str, list[Any]] = defaultdict(list)
        at: dict[str, list[int]] = defaultdict(list)
        outs: dict[str, list[int]] = defaultdict(list)
        for i, c in enumerate(self.crafts):
            at[c.key].append(i)
            for item, _n in c.outputs:
                index[item].append(c)
                outs[item].append(i)
        for s in self.smelts.values():
            for item, _n in s.outputs:
                index[item].append(s)
        for src in [*self.blocks.values(), *self.mobs.values()]:
            for item, y in src.drops:
                if y > 0:
                    index[item].append(src)
        self.produced_by = dict(index)
        self._craft_at = {k: tuple(v) for k, v in at.items()}
        self._craft_outs = {k: tuple(v) for k, v in outs.items()}
        self._indexed = self.crafts
        self._revised()

    @property
    def origin(self) -> object | None:
        """The shared belief this one was copied from while it is unrevised; None after."""
        return self.root if self.version <= 1 else None

    def _revised(self) -> None:
        self.version += 1

    def _reindex_items(self, items: Iterable[str]) -> None:
        """Rebuild the index of ``items`` only: the same lists, in the same order, as
        ``reindex`` gives (crafts in list order, then smelts, then blocks and mobs). The
        lists are replaced, never changed in place (copies of a belief share them)."""
        index = dict(self.produced_by)
        wanted = dict.fromkeys(items)
        ways: dict[str, list[Any]] = {
            item: [self.crafts[i] for i in self._craft_outs.get(item, ())] for item in wanted
        }
        for s in self.smelts.values():
            for out, _n in s.outputs:
                if out in wanted:
                    ways[out].append(s)
        for src in [*self.blocks.values(), *self.mobs.values()]:
            for out, y in src.drops:
                if y > 0 and out in wanted:
                    ways[out].append(src)
        for item, found in ways.items():
            if found:
                index[item] = found
            else:
                index.pop(item, None)
        self.produced_by = index
        self._revised()

    def craft(self, key: str) -> CraftOption | None:
        """The first craft option with this key (None when there is none)."""
        if self._indexed is not self.crafts:
            self.reindex()
        at = self._craft_at.get(key)
        return self.crafts[at[0]] if at else None

    # -- revisions from observed outcomes ---------------------------------------------
    def set_craft(self, key: str, outputs: tuple[tuple[str, int], ...]) -> None:
        self.revisions = (*self.revisions, ("craft", key, tuple(outputs)))
        if self._indexed is not self.crafts:  # the list was replaced: index it afresh
            self.crafts = [replace(c, outputs=outputs) if c.key == key else c for c in self.crafts]
            self.reindex()
            return
        crafts = list(self.crafts)
        outs = dict(self._craft_outs)
        touched: list[str] = []
        for i in self._craft_at.get(key, ()):
            old = crafts[i]
            crafts[i] = replace(old, outputs=outputs)
            for item, _n in old.outputs:
                held = list(outs.get(item, ()))
                held.remove(i)
                outs[item] = tuple(held)
                touched.append(item)
            for item, _n in outputs:
                held = list(outs.get(item, ()))
                bisect.insort(held, i)
                outs[item] = tuple(held)
                touched.append(item)
        self.crafts = self._indexed = crafts
        self._craft_outs = outs
        self._reindex_items(touched)

    def set_smelt(
        self, item: str, station: str, outputs: tuple[tuple[str, int], ...], cook: int = 200
    ) -> None:
        self.revisions = (*self.revisions, ("smelt", item, station, tuple(outputs), cook))
        old = self.smelts.get((item, station))
        self.smelts[(item, station)] = SmeltOption(
            item, station, outputs, old.cook_time if old else cook
        )
        before = [out for out, _n in old.outputs] if old else []
        self._reindex_items([*before, *(out for out, _n in outputs)])

    def set_source(self, kind: str, source: str, yields: Mapping[str, float]) -> None:
        option = SourceOption(kind, source, tuple(sorted(yields.items())))
        self.revisions = (*self.revisions, ("source", kind, source, option.drops))
        options = self.blocks if kind == "block" else self.mobs
        old = options.get(source)
        options[source] = option
        before = [out for out, _y in old.drops] if old else []
        self._reindex_items([*before, *(out for out, _y in option.drops)])


def build_belief(rules: RuleSet, config: PlannerConfig | None = None) -> Belief:
    cfg = config or planner_config()
    return _cached_belief(rules, cfg).copy()


@dataclass(frozen=True)
class _FrozenBelief:
    crafts: tuple[CraftOption, ...]
    smelts: tuple[tuple[tuple[str, str], SmeltOption], ...]
    blocks: tuple[tuple[str, SourceOption], ...]
    mobs: tuple[tuple[str, SourceOption], ...]
    harvest: tuple[tuple[str, frozenset[str]], ...]
    rules: RuleSet
    config: PlannerConfig

    def copy(self) -> Belief:
        return self._belief(root=self, index=self._index)

    @cached_property
    def _index(self) -> Index:
        """The index every copy starts from (worked out by the first copy made)."""
        return self._belief().indexed()

    def _belief(self, **shared: Any) -> Belief:
        """A belief with its own lists and maps of these options."""
        return Belief(
            self.rules,
            list(self.crafts),
            dict(self.smelts),
            dict(self.blocks),
            dict(self.mobs),
            dict(self.harvest),
            self.config,
            **shared,
        )


@lru_cache(maxsize=16)
def _cached_belief(rules: RuleSet, cfg: PlannerConfig) -> _FrozenBelief:
    crafts = _craft_options(rules)
    smelts: dict[tuple[str, str], SmeltOption] = {}
    for recipe in rules.recipes.values():
        if isinstance(recipe, CookingRecipe) and recipe.kind != "campfire_cooking":
            station = next(s for s, k in STATION_COOKING.items() if k == recipe.kind)
            for item in sorted(recipe.ingredient):
                current = rules.cooking(item, station)
                if current is not None and (item, station) not in smelts:
                    smelts[(item, station)] = SmeltOption(
                        item, station, ((current.result, current.count),), current.cooking_time
                    )
    tools = [t for t in cfg.sample_tools if t in rules.game.items]
    blocks: dict[str, SourceOption] = {}
    harvest: dict[str, frozenset[str]] = {}
    for block in expand_refs(rules, cfg.natural_blocks):
        if block not in rules.game.blocks:
            continue
        able = frozenset(t for t in rules.game.tools if rules.can_harvest(block, t))
        harvest[block] = able | ({"hand"} if rules.can_harvest(block, None) else frozenset())
        table = rules.block_table(block)
        if table is None:
            continue
        tool = next((t for t in tools if rules.can_harvest(block, t)), None)
        ctx = LootContext(
            tool=ItemStack(tool) if tool else None,
            block=block,
            block_properties=rules.game.blocks[block].default_state,
            this_entity=EntityState("player"),
        )
        blocks[block] = SourceOption(
            "block",
            block,
            _sample_drops(rules, lambda r, t=table, c=ctx: rules.roll(t, c, r), cfg.loot_samples),
        )
    mobs: dict[str, SourceOption] = {}
    for mob in cfg.natural_mobs:
        if rules.entity_table(mob) is None:
            continue
        ctx = LootContext(this_entity=EntityState(mob), killer_is_player=True)
        mobs[mob] = SourceOption(
            "mob",
            mob,
            _sample_drops(
                rules, lambda r, m=mob, c=ctx: _roll_mob(rules, m, c, r), cfg.loot_samples
            ),
        )
    return _FrozenBelief(
        tuple(crafts),
        tuple(sorted(smelts.items())),
        tuple(sorted(blocks.items())),
        tuple(sorted(mobs.items())),
        tuple(sorted(harvest.items())),
        rules,
        cfg,
    )
