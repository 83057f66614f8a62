"""Crafting-grid matching with the game's semantics, indexed for speed.

A submitted grid is trimmed to the bounding box of its filled cells. A shaped
recipe (whose pattern was trimmed the same way at load time) matches when the
boxes have the same size and every cell matches, either as written or
mirrored left-to-right; it can then sit anywhere in the grid. A shapeless
recipe matches when the filled cells can be assigned one-to-one to its
ingredients. A special recipe (see ``special_recipes``) matches when its engine
rule accepts the filled cells. The 2x2 inventory grid only takes recipes that fit in 2x2.
When several recipes match, the one with the smallest resource location wins,
so the choice is deterministic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mirrorcraft.rules.recipes import Ingredient, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.special_recipes import SpecialRecipeSet

Grid = tuple[tuple[str | None, ...], ...]

GRID_SIZES = {"inventory": 2, "crafting_table": 3}


@dataclass(frozen=True)
class CraftOutcome:
    """What the result slot shows: an item and count, and which recipe produced it."""

    item: str
    count: int
    recipe: str
    keeps: str | None = None
    """A special recipe's input whose copy (enchantments, wear) the result carries on."""
    repair: bool = False
    """A repair_item result: the two input copies' remaining uses are combined."""


def trim_grid(grid: Grid) -> tuple[int, int, tuple[str | None, ...]]:
    """Bounding box of the filled cells: (height, width, row-major cells); (0, 0, ()) if empty."""
    top = bottom = left = right = -1
    for i, row in enumerate(grid):
        for j, c in enumerate(row):
            if c is not None:
                if top < 0:
                    top = i
                bottom = i
                if left < 0 or j < left:
                    left = j
                if j > right:
                    right = j
    if top < 0:
        return 0, 0, ()
    cells = tuple(
        grid[i][j] if j < len(grid[i]) else None
        for i in range(top, bottom + 1)
        for j in range(left, right + 1)
    )
    return bottom - top + 1, right - left + 1, cells


def _mirror(
    height: int, width: int, cells: Sequence[Ingredient | None]
) -> tuple[Ingredient | None, ...]:
    return tuple(cells[r * width + (width - 1 - c)] for r in range(height) for c in range(width))


def _assignable(items: Sequence[str], ingredients: Sequence[Ingredient]) -> bool:
    """Is there a one-to-one assignment of items to ingredients? (bipartite matching)"""
    if len(items) != len(ingredients):
        return False
    owner: list[int] = [-1] * len(ingredients)

    def place(i: int, seen: list[bool]) -> bool:
        for j, ing in enumerate(ingredients):
            if items[i] in ing and not seen[j]:
                seen[j] = True
                if owner[j] < 0 or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(place(i, [False] * len(ingredients)) for i in range(len(items)))


class CraftingMatcher:
    """Answers "what does this grid produce?" for one set of crafting recipes."""

    def __init__(
        self,
        shaped: Iterable[ShapedRecipe],
        shapeless: Iterable[ShapelessRecipe],
        special: SpecialRecipeSet | None = None,
    ):
        self._special = special
        # Shaped index: (height, width, filled-mask, item in first filled cell) -> variants.
        self._shaped: dict[
            tuple[int, int, tuple[bool, ...], str],
            list[tuple[str, tuple[Ingredient | None, ...], ShapedRecipe]],
        ] = defaultdict(list)
        for recipe in shaped:
            variants = {recipe.cells, _mirror(recipe.height, recipe.width, recipe.cells)}
            for cells in variants:
                mask = tuple(c is not None for c in cells)
                first = next(c for c in cells if c is not None)
                for item in first:
                    key = (recipe.height, recipe.width, mask, item)
                    self._shaped[key].append((recipe.location, cells, recipe))
        # Shapeless index: (ingredient count, an item the first ingredient accepts) -> recipes.
        self._shapeless: dict[tuple[int, str], list[ShapelessRecipe]] = defaultdict(list)
        for sl in shapeless:
            for item in sl.ingredients[0]:
                self._shapeless[(len(sl.ingredients), item)].append(sl)
        for lst in self._shaped.values():
            lst.sort(key=lambda v: v[0])
        self._cache: dict[tuple[int, Grid], CraftOutcome | None] = {}

    def match(self, grid: Grid, station: str) -> CraftOutcome | None:
        """The outcome for a grid at a station (``inventory`` 2x2 or ``crafting_table`` 3x3)."""
        size = GRID_SIZES[station]
        key = (size, grid)
        cached = self._cache.get(key, self)
        if cached is not self:
            return cached  # type: ignore[return-value]
        height, width, cells = trim_grid(grid)
        result = self._match(size, height, width, cells)
        if len(self._cache) < 200_000:
            self._cache[key] = result
        return result

    def _match(
        self, size: int, height: int, width: int, cells: tuple[str | None, ...]
    ) -> CraftOutcome | None:
        if height == 0 or height > size or width > size:
            return None
        best: tuple[str, str, int] | None = None
        mask = tuple(c is not None for c in cells)
        items = [c for c in cells if c is not None]
        for location, pattern, recipe in self._shaped.get((height, width, mask, items[0]), ()):
            if all(c is None or c in ing for c, ing in zip(cells, pattern, strict=True)):  # type: ignore[operator]
                best = (location, recipe.result, recipe.count)
                break
        seen: set[str] = set()
        for item in items:
            if item in seen:
                continue
            seen.add(item)
            for sl in self._shapeless.get((len(items), item), ()):
                if best is not None and sl.location >= best[0]:
                    continue
                if _assignable(items, sl.ingredients):
                    best = (sl.location, sl.result, sl.count)
        if self._special is not None:
            hit = self._special.match(items, best[0] if best else None)
            if hit is not None:
                location, out = hit
                return CraftOutcome(out.item, out.count, location, out.keeps, out.repair)
        if best is None:
            return None
        return CraftOutcome(best[1], best[2], best[0])
