"""Recipe files (1.19 format) parsed into immutable values.

Ingredients are resolved against item tags at load time into frozensets of
item ids, exactly as the game resolves them when it reloads data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.ids import normalize_id

Ingredient = frozenset[str]
"""The item ids a cell or slot accepts (empty means the ingredient matches nothing)."""

COOKING_TYPES = {
    "smelting": "furnace",
    "blasting": "blast_furnace",
    "smoking": "smoker",
    "campfire_cooking": "campfire",
}
"""Recipe type -> the station that runs it."""

_INERT_TYPES = {"stonecutting", "smithing"}
"""Valid 1.19 recipe types no semantic skill uses; they load and are carried as-is."""


@dataclass(frozen=True)
class ShapedRecipe:
    location: str
    height: int
    width: int
    cells: tuple[Ingredient | None, ...]  # row-major, None is an empty cell
    result: str
    count: int
    group: str = ""


@dataclass(frozen=True)
class ShapelessRecipe:
    location: str
    ingredients: tuple[Ingredient, ...]
    result: str
    count: int
    group: str = ""


@dataclass(frozen=True)
class CookingRecipe:
    location: str
    kind: str  # smelting | blasting | smoking | campfire_cooking
    ingredient: Ingredient
    result: str
    count: int
    experience: float
    cooking_time: int
    group: str = ""


@dataclass(frozen=True)
class InertRecipe:
    location: str
    kind: str
    raw: str  # canonical JSON, kept for fingerprints and datapack round trips


Recipe = ShapedRecipe | ShapelessRecipe | CookingRecipe | InertRecipe


class RecipeParser:
    """Parses recipe documents against resolved item tags and the known item ids."""

    def __init__(self, item_tags: Mapping[str, frozenset[str]], known_items: frozenset[str]):
        self.item_tags = item_tags
        self.known_items = known_items

    def _item(self, raw: Any, field: str) -> str:
        try:
            item = normalize_id(raw)
        except ValueError as exc:
            raise DatapackError(str(exc), field=field) from None
        if item not in self.known_items:
            raise DatapackError(f"unknown item {item!r}", field=field)
        return item

    def ingredient(self, raw: Any, field: str) -> Ingredient:
        if isinstance(raw, list):
            if not raw:
                raise DatapackError("an ingredient list cannot be empty", field=field)
            out: set[str] = set()
            for i, alt in enumerate(raw):
                out |= self.ingredient(alt, f"{field}[{i}]")
            return frozenset(out)
        if not isinstance(raw, dict):
            raise DatapackError("an ingredient must be an object or a list", field=field)
        if "item" in raw and "tag" in raw:
            raise DatapackError("an ingredient has either 'item' or 'tag', not both", field=field)
        if "item" in raw:
            return frozenset({self._item(raw["item"], f"{field}.item")})
        if "tag" in raw:
            try:
                tag = normalize_id(raw["tag"])
            except ValueError as exc:
                raise DatapackError(str(exc), field=f"{field}.tag") from None
            if tag not in self.item_tags:
                raise DatapackError(f"unknown item tag {tag!r}", field=f"{field}.tag")
            return self.item_tags[tag]
        raise DatapackError("an ingredient needs 'item' or 'tag'", field=field)

    def _result(self, raw: Any, field: str) -> tuple[str, int]:
        if isinstance(raw, str):
            return self._item(raw, field), 1
        if not isinstance(raw, dict) or "item" not in raw:
            raise DatapackError("a result needs an 'item'", field=field)
        count = raw.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 64:
            raise DatapackError("count must be an integer from 1 to 64", field=f"{field}.count")
        return self._item(raw["item"], f"{field}.item"), count

    def parse(self, location: str, doc: Mapping[str, Any]) -> Recipe:
        kind_raw = doc.get("type")
        if not isinstance(kind_raw, str):
            raise DatapackError("missing recipe type", field="type")
        kind = normalize_id(kind_raw) if kind_raw else ""
        group = doc.get("group", "")
        if not isinstance(group, str):
            raise DatapackError("must be a string", field="group")
        if kind == "crafting_shaped":
            return self._shaped(location, doc, group)
        if kind == "crafting_shapeless":
            raw = doc.get("ingredients")
            if not isinstance(raw, list) or not 1 <= len(raw) <= 9:
                raise DatapackError("must be a list of 1 to 9 ingredients", field="ingredients")
            ingredients = tuple(self.ingredient(x, f"ingredients[{i}]") for i, x in enumerate(raw))
            item, count = self._result(doc.get("result"), "result")
            return ShapelessRecipe(location, ingredients, item, count, group)
        if kind in COOKING_TYPES:
            ingredient = self.ingredient(doc.get("ingredient"), "ingredient")
            # 1.19 takes an item id string here; {"item", "count"} is a MirrorCraft extension
            # used by suites that make one input cook into several items.
            item, count = self._result(doc.get("result"), "result")
            xp = doc.get("experience", 0.0)
            default_time = 200 if kind == "smelting" else 600 if kind == "campfire_cooking" else 100
            time = doc.get("cookingtime", default_time)
            if isinstance(xp, bool) or not isinstance(xp, int | float):
                raise DatapackError("must be a number", field="experience")
            if isinstance(time, bool) or not isinstance(time, int) or time <= 0:
                raise DatapackError("must be a positive integer", field="cookingtime")
            return CookingRecipe(location, kind, ingredient, item, count, float(xp), time, group)
        if kind in _INERT_TYPES or kind.startswith("crafting_special_"):
            return InertRecipe(location, kind, json.dumps(doc, sort_keys=True))
        raise DatapackError(f"unknown recipe type {kind_raw!r}", field="type")

    def _shaped(self, location: str, doc: Mapping[str, Any], group: str) -> ShapedRecipe:
        pattern = doc.get("pattern")
        if (
            not isinstance(pattern, list)
            or not 1 <= len(pattern) <= 3
            or not all(isinstance(r, str) for r in pattern)
        ):
            raise DatapackError("must be a list of 1 to 3 strings", field="pattern")
        width = len(pattern[0])
        if not 1 <= width <= 3 or any(len(r) != width for r in pattern):
            raise DatapackError("rows must all have the same width, 1 to 3", field="pattern")
        key_raw = doc.get("key")
        if not isinstance(key_raw, dict):
            raise DatapackError("must be an object", field="key")
        key: dict[str, Ingredient] = {}
        for symbol, raw in key_raw.items():
            if len(symbol) != 1 or symbol == " ":
                raise DatapackError(f"invalid key symbol {symbol!r}", field="key")
            key[symbol] = self.ingredient(raw, f"key.{symbol}")
        used = {c for row in pattern for c in row if c != " "}
        missing = used - set(key)
        if missing:
            raise DatapackError(
                f"pattern uses undefined symbol(s) {sorted(missing)}", field="pattern"
            )
        unused = set(key) - used
        if unused:
            raise DatapackError(f"key defines unused symbol(s) {sorted(unused)}", field="key")
        rows = _shrink([[key.get(c) if c != " " else None for c in row] for row in pattern])
        item, count = self._result(doc.get("result"), "result")
        cells = tuple(cell for row in rows for cell in row)
        return ShapedRecipe(location, len(rows), len(rows[0]), cells, item, count, group)


def _shrink(rows: list[list[Ingredient | None]]) -> list[list[Ingredient | None]]:
    """Drop empty outer rows and columns, as the game does when it loads a pattern."""
    while rows and all(c is None for c in rows[0]):
        rows.pop(0)
    while rows and all(c is None for c in rows[-1]):
        rows.pop()
    if not rows:
        raise DatapackError("pattern has no ingredients", field="pattern")
    while all(r[0] is None for r in rows):
        rows = [r[1:] for r in rows]
    while all(r[-1] is None for r in rows):
        rows = [r[:-1] for r in rows]
    return rows
