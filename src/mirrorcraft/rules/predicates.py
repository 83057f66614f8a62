"""Item predicates and numeric bounds shared by loot conditions and advancement criteria."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.items import ItemStack


@dataclass(frozen=True)
class Bounds:
    """MinMaxBounds: a number (exact) or {"min": a, "max": b}; either side may be missing."""

    low: float | None = None
    high: float | None = None

    def matches(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    @property
    def is_any(self) -> bool:
        return self.low is None and self.high is None


ANY_BOUNDS = Bounds()


def parse_bounds(raw: Any, field: str) -> Bounds:
    if raw is None:
        return ANY_BOUNDS
    if isinstance(raw, bool):
        raise DatapackError("must be a number or {min, max}", field=field)
    if isinstance(raw, int | float):
        return Bounds(float(raw), float(raw))
    if isinstance(raw, dict):
        unknown = set(raw) - {"min", "max"}
        if unknown:
            raise DatapackError(f"unknown keys {sorted(unknown)}", field=field)
        values: list[float | None] = []
        for side in ("min", "max"):
            v = raw.get(side)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
                raise DatapackError("must be a number", field=f"{field}.{side}")
            values.append(None if v is None else float(v))
        return Bounds(values[0], values[1])
    raise DatapackError("must be a number or {min, max}", field=field)


@dataclass(frozen=True)
class EnchantmentPredicate:
    enchantment: str | None
    levels: Bounds

    def matches(self, enchantments: Mapping[str, int]) -> bool:
        if self.enchantment is not None:
            level = enchantments.get(self.enchantment)
            if level is None:
                return False
            return self.levels.is_any or self.levels.matches(level)
        if not self.levels.is_any:
            return any(self.levels.matches(lv) for lv in enchantments.values())
        return True


@dataclass(frozen=True)
class ItemPredicate:
    """The subset of 1.19 item predicates the simulator can decide exactly."""

    items: frozenset[str] | None = None
    count: Bounds = ANY_BOUNDS
    enchantments: tuple[EnchantmentPredicate, ...] = ()
    stored_enchantments: tuple[EnchantmentPredicate, ...] = ()

    def matches(self, stack: ItemStack | None) -> bool:
        if stack is None:
            return False
        if self.items is not None and stack.item not in self.items:
            return False
        if not self.count.matches(stack.count):
            return False
        if self.enchantments or self.stored_enchantments:
            ench = stack.enchantment_map
            if stack.item == "enchanted_book":
                # Enchanted books carry stored enchantments, not active ones.
                if any(not p.matches({}) for p in self.enchantments):
                    return False
                return all(p.matches(ench) for p in self.stored_enchantments)
            if any(not p.matches(ench) for p in self.enchantments):
                return False
            if any(not p.matches({}) for p in self.stored_enchantments):
                return False
        return True


_ITEM_PREDICATE_KEYS = {"items", "item", "tag", "count", "enchantments", "stored_enchantments"}
_UNSUPPORTED_ITEM_KEYS = {"durability", "potion", "nbt"}


def _parse_enchantment_list(raw: Any, field: str) -> tuple[EnchantmentPredicate, ...]:
    if not isinstance(raw, list):
        raise DatapackError("must be a list", field=field)
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise DatapackError("must be an object", field=f"{field}[{i}]")
        name = entry.get("enchantment")
        try:
            ench = normalize_id(name) if name is not None else None
        except ValueError as exc:
            raise DatapackError(str(exc), field=f"{field}[{i}].enchantment") from None
        out.append(
            EnchantmentPredicate(ench, parse_bounds(entry.get("levels"), f"{field}[{i}].levels"))
        )
    return tuple(out)


def parse_item_predicate(
    raw: Any, field: str, item_tags: Mapping[str, frozenset[str]], known_items: frozenset[str]
) -> ItemPredicate:
    if not isinstance(raw, dict):
        raise DatapackError("an item predicate must be an object", field=field)
    bad = set(raw) & _UNSUPPORTED_ITEM_KEYS
    if bad:
        raise DatapackError(
            f"item predicate key {sorted(bad)[0]!r} is not interpreted by the simulator",
            field=field,
        )
    unknown = set(raw) - _ITEM_PREDICATE_KEYS - _UNSUPPORTED_ITEM_KEYS
    if unknown:
        raise DatapackError(f"unknown item predicate keys {sorted(unknown)}", field=field)
    items: set[str] | None = None
    names = raw.get("items", [raw["item"]] if "item" in raw else None)
    if names is not None:
        if not isinstance(names, list):
            raise DatapackError("must be a list of item ids", field=f"{field}.items")
        items = set()
        for i, name in enumerate(names):
            try:
                item = normalize_id(name)
            except ValueError as exc:
                raise DatapackError(str(exc), field=f"{field}.items[{i}]") from None
            if item not in known_items:
                raise DatapackError(f"unknown item {item!r}", field=f"{field}.items[{i}]")
            items.add(item)
    if "tag" in raw:
        try:
            tag = normalize_id(raw["tag"])
        except ValueError as exc:
            raise DatapackError(str(exc), field=f"{field}.tag") from None
        if tag not in item_tags:
            raise DatapackError(f"unknown item tag {tag!r}", field=f"{field}.tag")
        members = item_tags[tag]
        items = set(members) if items is None else items & members
    return ItemPredicate(
        items=frozenset(items) if items is not None else None,
        count=parse_bounds(raw.get("count"), f"{field}.count"),
        enchantments=_parse_enchantment_list(raw.get("enchantments", []), f"{field}.enchantments"),
        stored_enchantments=_parse_enchantment_list(
            raw.get("stored_enchantments", []), f"{field}.stored_enchantments"
        ),
    )
