"""Loot tables of 1.19: compiled once, rolled with an explicit random source.

Semantics follow the game's LootTable / LootPool code: a pool rolls
``rolls + floor(bonus_rolls * luck)`` times; each roll expands the pool's
entries (alternatives take the first child that applies, sequences stop at the
first that does not, groups take all), drops those of weight 0, and picks one
by weight. Entry functions apply before pool functions, then table functions.
Anything the simulator cannot decide exactly is rejected at load time with the
file and field named, never silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.ids import full_id, normalize_id
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_conditions import Condition, ConditionCompiler
from mirrorcraft.rules.loot_context import LootRuntime
from mirrorcraft.rules.loot_numbers import (
    MAX_LOOT_NUMBER,
    MAX_LOOT_ROLLS,
    IntRange,
    NumberProvider,
    bounded_number,
    parse_number,
)

Function = Callable[[ItemStack, LootRuntime], ItemStack]
Emit = Callable[[ItemStack], None]
MAX_REFERENCE_DEPTH = 16
"""How deep a chain of ``loot_table`` references is followed (a safety limit: the game has
none, but a chain this long of distinct tables is not a real pack). A reference back to a
table being rolled is refused before that, as the game refuses it."""
MAX_LOOT_WORK = 100_000
"""Most entry expansions plus stacks one roll of a table may cost, following loot_table
references to MAX_REFERENCE_DEPTH (checked at load time by ``loot_work``)."""

Leaf = tuple[int, str | None]
"""What one choice of a pool can make: (stacks, None), or (0, referenced table)."""
PoolShape = tuple[int, tuple[Leaf, ...]]
"""(most rolls, the leaves a roll chooses among) of one pool."""


@dataclass(frozen=True)
class Choice:
    """One leaf a pool roll can pick: weight/quality and how to make its items."""

    weight: int
    quality: int
    make: Callable[[Emit, LootRuntime], None]

    def effective_weight(self, luck: float) -> int:
        return max(int(self.weight + self.quality * luck), 0)


Expander = Callable[[LootRuntime, Callable[[Choice], None]], bool]


def _compose(functions: list[Function]) -> Function | None:
    if not functions:
        return None
    if len(functions) == 1:
        return functions[0]

    def run(stack: ItemStack, rt: LootRuntime) -> ItemStack:
        for fn in functions:
            stack = fn(stack, rt)
        return stack

    return run


def _decorate(emit: Emit, fn: Function | None, rt: LootRuntime) -> Emit:
    if fn is None:
        return emit
    return lambda stack: emit(fn(stack, rt))


class LootTable:
    """A compiled loot table; ``roll`` returns the dropped stacks (count > 0)."""

    def __init__(
        self,
        location: str,
        kind: str,
        pools: list[Callable[[Emit, LootRuntime], None]],
        function: Function | None,
        outputs: frozenset[str],
        references: frozenset[str],
        smelts: bool = False,
        shape: tuple[PoolShape, ...] = (),
    ):
        self.location = location
        self.kind = kind
        self._pools = pools
        self._function = function
        self.outputs = outputs
        """Items this table can name directly (before furnace_smelt); see LootCompiler."""
        self.references = references
        self.smelts = smelts
        """True when a furnace_smelt function may turn outputs into their smelting results."""
        self.shape = shape
        """Per pool: the most rolls and the leaves a roll picks from (for ``loot_work``)."""

    def emit_raw(self, emit: Emit, rt: LootRuntime) -> None:
        """Roll the pools into ``emit``. As in the game, a table already being rolled in this
        roll (reached again through ``loot_table`` entries) drops nothing the second time."""
        if self.location in rt.visiting:
            return
        rt.visiting.add(self.location)
        try:
            out = _decorate(emit, self._function, rt)
            for pool in self._pools:
                pool(out, rt)
        finally:
            rt.visiting.discard(self.location)

    def roll(self, rt: LootRuntime) -> list[ItemStack]:
        drops: list[ItemStack] = []

        def collect(stack: ItemStack) -> None:
            if stack.count > 0:
                drops.append(stack)

        self.emit_raw(collect, rt)
        return drops


class LootCompiler:
    """Compiles loot-table documents; keeps the items and references each can name."""

    def __init__(self, item_tags: Mapping[str, frozenset[str]], known_items: frozenset[str]):
        self.item_tags = item_tags
        self.known_items = known_items
        self.conditions = ConditionCompiler(item_tags, known_items)
        self._outputs: set[str] = set()
        self._refs: set[str] = set()
        self._smelts = False
        self._leaves: list[Leaf] = []
        self._shape: list[PoolShape] = []

    def compile(self, location: str, doc: Mapping[str, Any]) -> LootTable:
        self._outputs, self._refs, self._smelts = set(), set(), False
        self._shape = []
        kind = normalize_id(doc.get("type", "minecraft:generic"))
        pools_raw = doc.get("pools", [])
        if not isinstance(pools_raw, list):
            raise DatapackError("must be a list", field="pools")
        pools = [self._pool(p, f"pools[{i}]") for i, p in enumerate(pools_raw)]
        function = self._functions(doc.get("functions"), "functions")
        return LootTable(
            location,
            kind,
            pools,
            function,
            frozenset(self._outputs),
            frozenset(self._refs),
            self._smelts,
            tuple(self._shape),
        )

    # -- pools and entries -------------------------------------------------
    def _pool(self, raw: Any, field: str) -> Callable[[Emit, LootRuntime], None]:
        if not isinstance(raw, dict):
            raise DatapackError("a pool must be an object", field=field)
        rolls = parse_number(raw.get("rolls", 1), f"{field}.rolls")
        bonus = parse_number(raw.get("bonus_rolls", 0.0), f"{field}.bonus_rolls")
        most = max(rolls.bounds[1], 0) + max(abs(bonus.bounds[0]), abs(bonus.bounds[1]))
        if most > MAX_LOOT_ROLLS:
            raise DatapackError(
                f"a pool may roll up to {most} times, more than the limit of {MAX_LOOT_ROLLS} "
                "(see docs/limits.md)",
                field=f"{field}.rolls",
            )
        if most <= 0:  # the game rolls it no times: a mistake, never a rule
            raise DatapackError(
                f"a pool that rolls at most {rolls.bounds[1]} times never drops anything",
                field=f"{field}.rolls",
            )
        cond = self.conditions.all_of(raw.get("conditions"), f"{field}.conditions")
        entries_raw = raw.get("entries")
        if not isinstance(entries_raw, list):
            raise DatapackError("must be a list", field=f"{field}.entries")
        self._leaves = []
        entries = [self._entry(e, f"{field}.entries[{i}]") for i, e in enumerate(entries_raw)]
        self._shape.append((most, tuple(self._leaves)))
        function = self._functions(raw.get("functions"), f"{field}.functions")

        def roll_pool(emit: Emit, rt: LootRuntime) -> None:
            if cond is not None and not cond(rt):
                return
            out = _decorate(emit, function, rt)
            times = rolls.as_int(rt.rng) + int(bonus.as_float(rt.rng) * rt.ctx.luck)
            for _ in range(times):
                choices: list[Choice] = []
                for expand in entries:
                    expand(rt, choices.append)
                weighted = [(c, c.effective_weight(rt.ctx.luck)) for c in choices]
                weighted = [(c, w) for c, w in weighted if w > 0]
                if not weighted:
                    continue
                if len(weighted) == 1:
                    weighted[0][0].make(out, rt)
                    continue
                pick = rt.rng.randrange(sum(w for _, w in weighted))
                for choice, w in weighted:
                    pick -= w
                    if pick < 0:
                        choice.make(out, rt)
                        break

        return roll_pool

    def _entry(self, raw: Any, field: str) -> Expander:
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise DatapackError("an entry needs a 'type'", field=field)
        kind = normalize_id(raw["type"])
        cond = self.conditions.all_of(raw.get("conditions"), f"{field}.conditions")
        if kind in ("alternatives", "group", "sequence"):
            children_raw = raw.get("children")
            if not isinstance(children_raw, list):
                raise DatapackError("must be a list", field=f"{field}.children")
            children = [
                self._entry(c, f"{field}.children[{i}]") for i, c in enumerate(children_raw)
            ]
            return _composite(kind, children, cond)
        weight = _int(raw, "weight", 1, field)
        quality = _int(raw, "quality", 0, field)
        function = self._functions(raw.get("functions"), f"{field}.functions")
        if kind == "item":
            item = self._known_item(raw.get("name"), f"{field}.name")
            self._outputs.add(item)
            self._leaves.append((1, None))

            def make_item(emit: Emit, rt: LootRuntime) -> None:
                stack = ItemStack(item, 1)
                emit(function(stack, rt) if function else stack)

            return _leaf(Choice(weight, quality, make_item), cond)
        if kind == "empty":
            self._leaves.append((0, None))
            return _leaf(Choice(weight, quality, lambda emit, rt: None), cond)
        if kind == "tag":
            tag = normalize_id(raw.get("name", ""))
            if tag not in self.item_tags:
                raise DatapackError(f"unknown item tag {tag!r}", field=f"{field}.name")
            members = sorted(self.item_tags[tag])
            self._outputs.update(members)
            expand = raw.get("expand")
            if not isinstance(expand, bool):
                raise DatapackError("must be true or false", field=f"{field}.expand")

            def maker(items: list[str]) -> Callable[[Emit, LootRuntime], None]:
                def make(emit: Emit, rt: LootRuntime) -> None:
                    for it in items:
                        stack = ItemStack(it, 1)
                        emit(function(stack, rt) if function else stack)

                return make

            self._leaves.append((1 if expand else len(members), None))
            if not expand:
                return _leaf(Choice(weight, quality, maker(members)), cond)
            expanded = [Choice(weight, quality, maker([m])) for m in members]

            def expand_tag(rt: LootRuntime, accept: Callable[[Choice], None]) -> bool:
                if cond is not None and not cond(rt):
                    return False
                for choice in expanded:
                    accept(choice)
                return True

            return expand_tag
        if kind == "loot_table":
            try:  # tables are keyed by their full location (minecraft:entities/sheep)
                target = full_id(normalize_id(raw.get("name", "")))
            except ValueError as exc:
                raise DatapackError(str(exc), field=f"{field}.name") from None
            self._refs.add(target)
            self._leaves.append((0, target))

            def make_ref(emit: Emit, rt: LootRuntime) -> None:
                table = rt.tables.get(target)
                if not isinstance(table, LootTable):
                    return  # a missing table drops nothing, as in the game
                if rt.depth >= MAX_REFERENCE_DEPTH:
                    return
                rt.depth += 1
                try:
                    table.emit_raw(_decorate(emit, function, rt), rt)
                finally:
                    rt.depth -= 1

            return _leaf(Choice(weight, quality, make_ref), cond)
        raise DatapackError(
            f"loot entry type {raw['type']!r} is not interpreted", field=f"{field}.type"
        )

    def _known_item(self, raw: Any, field: str) -> str:
        try:
            item = normalize_id(raw)
        except ValueError as exc:
            raise DatapackError(str(exc), field=field) from None
        if item not in self.known_items:
            raise DatapackError(f"unknown item {item!r}", field=field)
        return item

    # -- functions -----------------------------------------------------------
    def _functions(self, raw: Any, field: str) -> Function | None:
        if raw is None:
            return None
        if not isinstance(raw, list):
            raise DatapackError("must be a list", field=field)
        return _compose([self._function(f, f"{field}[{i}]") for i, f in enumerate(raw)])

    def _function(self, raw: Any, field: str) -> Function:
        if not isinstance(raw, dict) or not isinstance(raw.get("function"), str):
            raise DatapackError("a function needs a 'function' id", field=field)
        kind = normalize_id(raw["function"])
        builder = _FUNCTIONS.get(kind)
        if builder is None:
            raise DatapackError(
                f"loot function {raw['function']!r} is not interpreted", field=f"{field}.function"
            )
        body = builder(raw, field)
        if kind == "furnace_smelt":
            self._smelts = True
        cond = self.conditions.all_of(raw.get("conditions"), f"{field}.conditions")
        if cond is None:
            return body
        return lambda stack, rt: body(stack, rt) if cond(rt) else stack


def _leaf(choice: Choice, cond: Condition | None) -> Expander:
    def expand(rt: LootRuntime, accept: Callable[[Choice], None]) -> bool:
        if cond is not None and not cond(rt):
            return False
        accept(choice)
        return True

    return expand


def _composite(kind: str, children: list[Expander], cond: Condition | None) -> Expander:
    def expand(rt: LootRuntime, accept: Callable[[Choice], None]) -> bool:
        if cond is not None and not cond(rt):
            return False
        if kind == "alternatives":
            return any(child(rt, accept) for child in children)
        if kind == "sequence":
            return all(child(rt, accept) for child in children)
        for child in children:
            child(rt, accept)
        return True

    return expand


def _int(raw: Mapping[str, Any], key: str, default: int, field: str) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise DatapackError("must be an integer", field=f"{field}.{key}")
    return value


# -- the functions the simulator interprets ----------------------------------


def _set_count(raw: dict[str, Any], field: str) -> Function:
    count: NumberProvider = parse_number(raw.get("count"), f"{field}.count")
    add = bool(raw.get("add", False))
    if not add and count.bounds[1] <= 0 and not raw.get("conditions"):
        # the game empties the stack, every time: never dropped (with conditions it may be
        # a deliberate "nothing in this case")
        raise DatapackError(
            f"a count of at most {count.bounds[1]} never drops anything",
            field=f"{field}.count",
        )

    def apply(stack: ItemStack, rt: LootRuntime) -> ItemStack:
        n = count.as_int(rt.rng)
        return _capped(stack, stack.count + n if add else n)

    return apply


def _apply_bonus(raw: dict[str, Any], field: str) -> Function:
    ench = normalize_id(raw.get("enchantment", ""))
    formula = normalize_id(raw.get("formula", ""))
    params = raw.get("parameters", {})
    if not isinstance(params, dict):
        raise DatapackError("must be an object", field=f"{field}.parameters")
    if formula == "ore_drops":

        def ore_drops(stack: ItemStack, rt: LootRuntime) -> ItemStack:
            level = rt.ctx.enchantment_level(ench)
            if level <= 0:
                return stack
            bonus = max(rt.rng.randrange(level + 2) - 1, 0)
            return _capped(stack, stack.count * (bonus + 1))

        return ore_drops
    if formula == "uniform_bonus_count":
        mult = int(bounded_number(params.get("bonusMultiplier", 1), f"{field}.parameters"))

        def uniform_bonus(stack: ItemStack, rt: LootRuntime) -> ItemStack:
            level = rt.ctx.enchantment_level(ench)
            return _capped(stack, stack.count + rt.rng.randrange(max(mult * level, 0) + 1))

        return uniform_bonus
    if formula == "binomial_with_bonus_count":
        extra = int(bounded_number(params.get("extra", 0), f"{field}.parameters.extra"))
        prob = bounded_number(params.get("probability", 0.0), f"{field}.parameters.probability")

        def binomial_bonus(stack: ItemStack, rt: LootRuntime) -> ItemStack:
            n = min(rt.ctx.enchantment_level(ench) + extra, MAX_LOOT_NUMBER)
            return _capped(stack, stack.count + sum(1 for _ in range(n) if rt.rng.random() < prob))

        return binomial_bonus
    raise DatapackError(
        f"apply_bonus formula {formula!r} is not interpreted", field=f"{field}.formula"
    )


def _capped(stack: ItemStack, count: int) -> ItemStack:
    """A stack of ``count`` items, never more than MAX_LOOT_NUMBER (functions may multiply)."""
    return stack.with_count(min(count, MAX_LOOT_NUMBER))


def _explosion_decay(raw: dict[str, Any], field: str) -> Function:
    def apply(stack: ItemStack, rt: LootRuntime) -> ItemStack:
        radius = rt.ctx.explosion_radius
        if radius is None:
            return stack
        kept = sum(1 for _ in range(stack.count) if rt.rng.random() <= 1.0 / radius)
        return stack.with_count(kept)

    return apply


def _limit_count(raw: dict[str, Any], field: str) -> Function:
    limit = IntRange(raw.get("limit"), f"{field}.limit")
    return lambda stack, rt: stack.with_count(limit.clamp(stack.count, rt.rng))


def _looting_enchant(raw: dict[str, Any], field: str) -> Function:
    count = parse_number(raw.get("count"), f"{field}.count")
    limit = int(bounded_number(raw.get("limit", 0), f"{field}.limit"))

    def apply(stack: ItemStack, rt: LootRuntime) -> ItemStack:
        level = rt.ctx.looting
        if level <= 0:
            return stack
        n = stack.count + round(level * count.as_float(rt.rng))
        return _capped(stack, min(n, limit) if limit > 0 else n)

    return apply


def _furnace_smelt(raw: dict[str, Any], field: str) -> Function:
    def apply(stack: ItemStack, rt: LootRuntime) -> ItemStack:
        if stack.count <= 0:
            return stack
        result = rt.smelt(stack.item)
        return stack.with_item(result) if result else stack

    return apply


def _no_data(raw: dict[str, Any], field: str) -> Function:
    # copy_name / copy_nbt / copy_state copy block-entity data onto the item. Simulated
    # blocks carry no names, NBT or per-item state, so there is nothing to copy.
    return lambda stack, rt: stack


_FUNCTIONS: dict[str, Callable[[dict[str, Any], str], Function]] = {
    "set_count": _set_count,
    "apply_bonus": _apply_bonus,
    "explosion_decay": _explosion_decay,
    "limit_count": _limit_count,
    "looting_enchant": _looting_enchant,
    "furnace_smelt": _furnace_smelt,
    "copy_name": _no_data,
    "copy_nbt": _no_data,
    "copy_state": _no_data,
}


def loot_work(tables: Mapping[str, LootTable]) -> dict[str, int]:
    """The most work (entry expansions plus stacks made) one roll of each table can cost.

    Follows ``loot_table`` entries to MAX_REFERENCE_DEPTH levels. An upper bound: a
    reference back to a table being rolled, which the interpreter refuses, is priced as if
    followed. Memoised per (table, depth): linear in the tables.
    """
    memo: dict[tuple[str, int], int] = {}

    def cost(location: str, depth: int) -> int:
        key = (location, depth)
        if key not in memo:
            memo[key] = 0  # a table being priced refers back to itself: bounded by depth
            table = tables.get(location)
            total = 0
            for rolls, leaves in table.shape if table is not None else ():
                best = 0
                for stacks, ref in leaves:
                    made = stacks
                    if ref is not None and depth < MAX_REFERENCE_DEPTH:
                        made = cost(ref, depth + 1)
                    best = max(best, made)
                total += rolls * (len(leaves) + best)
                if total > MAX_LOOT_WORK:
                    break
            memo[key] = min(total, MAX_LOOT_WORK + 1)
        return memo[key]

    return {location: cost(location, 0) for location in sorted(tables)}
