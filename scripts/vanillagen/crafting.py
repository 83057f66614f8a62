"""Crafting recipes from minecraft-data, regrouped into vanilla tag/list ingredients and named.

minecraft-data expands every tag ingredient into separate recipes (one per tag member; several
tags multiply) and drops recipe names. The regrouping below undoes that:

1. Recipes with the same result item, count, type and shape (same filled cells) form a group.
2. Inside a group, cells that vary are split into classes of cells that always hold the same
   item (minecraft-data expands one tag once, so all cells of one tag move together).
3. If every class's set of items is one vanilla ingredient (a tag with exactly that content, or
   a list/tag fixed for this result in recipes.yaml) and the group is the full product of the
   classes' sets, the group is ONE vanilla recipe. Otherwise the first unresolvable class is
   split into the largest tags it contains plus single items, and each part is regrouped.

In vanilla a tag ingredient used in several cells lets each cell take any member independently,
so one regrouped recipe accepts everything the expanded ones did (and mixed planks too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import Any

from .common import McData, load_facts, mc, strip_ns
from .tags import Tags

RECIPE_FACTS = "recipes.yaml"
SYMBOLS = "#XISCBDEFGHJKLMNOPQRTUVWYZ"

Cells = tuple[str, ...]


@dataclass
class Crafting:
    """One regrouped crafting recipe before naming."""

    result: str  # bare item name
    count: int
    shaped: bool
    width: int
    mask: tuple[tuple[bool, ...], ...]  # shaped only: filled cells row by row
    cells: list[tuple[str, ...]]  # per filled cell: accepted items (1 = plain item)
    ingredients: list[Any]  # per filled cell: JSON ingredient
    tokens: frozenset[str]  # items and '#tags' used, for name matching
    grouped: bool  # True when a tag or list ingredient came from regrouping

    def to_json(self, group: str | None) -> dict[str, Any]:
        result: dict[str, Any] = {"item": mc(self.result)}
        if self.count != 1:
            result["count"] = self.count
        obj: dict[str, Any] = {"result": result}
        if group:
            obj["group"] = group
        if not self.shaped:
            obj["type"] = "minecraft:crafting_shapeless"
            obj["ingredients"] = self.ingredients
            return obj
        obj["type"] = "minecraft:crafting_shaped"
        key: dict[str, Any] = {}
        symbol_of: dict[str, str] = {}
        flat: list[str] = []
        for ing in self.ingredients:
            ident = repr(ing)
            if ident not in symbol_of:
                symbol_of[ident] = SYMBOLS[len(symbol_of)]
                key[symbol_of[ident]] = ing
            flat.append(symbol_of[ident])
        rows, pos = [], 0
        for row in self.mask:
            text = ""
            for filled in row:
                text += flat[pos] if filled else " "
                pos += int(filled)
            rows.append(text)
        obj["pattern"] = rows
        obj["key"] = key
        return obj


class Regrouper:
    def __init__(self, data: McData, tags: Tags) -> None:
        self.data = data
        self.tags = tags
        facts = load_facts(RECIPE_FACTS)
        self.choices: dict[str, dict[frozenset[str], str]] = {}
        for result, entries in (facts.get("ingredient_choice") or {}).items():
            self.choices[result] = {frozenset(e["items"]): e["use"] for e in entries}
        self.tag_sets: dict[frozenset[str], list[str]] = {}
        for name in sorted(tags.items):
            members = frozenset(strip_ns(v) for v in tags.expand("items", name))
            self.tag_sets.setdefault(members, []).append(name)
        self.used_choices: set[tuple[str, frozenset[str]]] = set()

    # -- ingredient resolution -------------------------------------------------------------
    def resolve(self, result: str, values: frozenset[str]) -> Any | None:
        """JSON ingredient for a set of alternative items, or None if not one vanilla ingredient."""
        if len(values) == 1:
            return {"item": mc(next(iter(values)))}
        choice = self.choices.get(result, {}).get(values)
        if choice is not None:
            self.used_choices.add((result, values))
            if choice == "list":
                return [{"item": mc(v)} for v in self._ordered(values)]
            return {"tag": mc(choice.lstrip("#"))}
        candidates = self.tag_sets.get(values, [])
        if len(candidates) > 1:
            raise ValueError(f"{result}: {sorted(values)} matches tags {candidates}; add a choice")
        return {"tag": mc(candidates[0])} if candidates else None

    def _ordered(self, values: frozenset[str]) -> list[str]:
        """Items in minecraft-data id order (vanilla lists follow registry order too)."""
        return sorted(values, key=lambda n: int(self.data.items[n]["id"]))

    def split(self, values: frozenset[str]) -> list[frozenset[str]]:
        """Split an unresolvable set into the largest contained tags plus single items."""
        left = set(values)
        parts: list[frozenset[str]] = []
        for members in sorted(self.tag_sets, key=lambda s: (-len(s), sorted(s))):
            if len(members) > 1 and members <= left:
                parts.append(members)
                left -= members
        parts.extend(frozenset([v]) for v in sorted(left))
        return parts

    # -- regrouping ------------------------------------------------------------------------
    def regroup(self, result: str, recipes: list[Cells]) -> list[list[frozenset[str]]]:
        """Partition expanded recipes into vanilla recipes; returns per-recipe cell sets."""
        recipes = sorted(set(recipes))
        if len(recipes) == 1:
            return [[frozenset([c]) for c in recipes[0]]]
        width = len(recipes[0])
        varying = [p for p in range(width) if len({r[p] for r in recipes}) > 1]
        classes: list[list[int]] = []
        for p in varying:
            for cls in classes:
                if all(r[p] == r[cls[0]] for r in recipes):
                    cls.append(p)
                    break
            else:
                classes.append([p])
        sets = [frozenset(r[cls[0]] for r in recipes) for cls in classes]
        resolved = [self.resolve(result, s) for s in sets]
        full = len(recipes) == math.prod(len(s) for s in sets) and self._is_product(
            recipes, classes, sets
        )
        if full and all(r is not None for r in resolved):
            cells = [frozenset([c]) for c in recipes[0]]
            for cls, values in zip(classes, sets, strict=True):
                for p in cls:
                    cells[p] = values
            return [cells]
        bad = next((i for i, r in enumerate(resolved) if r is None), 0)
        pos = classes[bad][0]
        parts = (
            self.split(sets[bad])
            if resolved[bad] is None
            else [frozenset([v]) for v in sorted(sets[bad])]
        )
        out: list[list[frozenset[str]]] = []
        for part in parts:
            out.extend(self.regroup(result, [r for r in recipes if r[pos] in part]))
        return out

    @staticmethod
    def _is_product(
        recipes: list[Cells], classes: list[list[int]], sets: list[frozenset[str]]
    ) -> bool:
        have = {tuple(r[cls[0]] for cls in classes) for r in recipes}
        return have == set(product(*sets))


def _normalise(data: McData, raw: dict[str, Any]) -> tuple[tuple[Any, ...], Cells]:
    """(shape key, filled cells) for one minecraft-data recipe."""
    if "inShape" in raw:
        rows = [[data.item_name(c) for c in row] for row in raw["inShape"]]
        width = max(len(row) for row in rows)
        rows = [row + [None] * (width - len(row)) for row in rows]
        mask = tuple(tuple(c is not None for c in row) for row in rows)
        cells = tuple(str(c) for row in rows for c in row if c is not None)
        return ("shaped", width, mask), cells
    cells = tuple(str(data.item_name(c)) for c in raw["ingredients"])
    return ("shapeless", len(cells), ()), cells


def regroup_all(data: McData, tags: Tags) -> dict[str, list[Crafting]]:
    """All minecraft-data crafting recipes, regrouped; keyed by result item name."""
    facts = load_facts(RECIPE_FACTS)
    skip = set(facts.get("replaced_by_special_recipes") or [])
    regrouper = Regrouper(data, tags)
    out: dict[str, list[Crafting]] = {}
    for result, raws in data.recipes().items():
        if result in skip:
            continue
        groups: dict[tuple[Any, ...], list[Cells]] = {}
        for raw in raws:
            shape, cells = _normalise(data, raw)
            groups.setdefault((int(raw["result"]["count"]), *shape), []).append(cells)
        for key in sorted(groups, key=repr):
            count, kind, width, mask = key
            for cell_sets in regrouper.regroup(result, groups[key]):
                ings = [regrouper.resolve(result, s) for s in cell_sets]
                tokens = set()
                for s, ing in zip(cell_sets, ings, strict=True):
                    if isinstance(ing, dict) and "tag" in ing:
                        tokens.add("#" + strip_ns(ing["tag"]))
                    tokens.update(s)
                out.setdefault(result, []).append(
                    Crafting(
                        result=result,
                        count=count,
                        shaped=kind == "shaped",
                        width=width,
                        mask=mask,
                        cells=[tuple(sorted(s)) for s in cell_sets],
                        ingredients=ings,
                        tokens=frozenset(tokens),
                        grouped=any(len(s) > 1 for s in cell_sets),
                    )
                )
    unused = {(r, tuple(sorted(v))) for r, vs in regrouper.choices.items() for v in vs} - {
        (r, tuple(sorted(v))) for r, v in regrouper.used_choices
    }
    if unused:
        raise ValueError(f"ingredient_choice entries never used: {sorted(unused)}")
    return out
