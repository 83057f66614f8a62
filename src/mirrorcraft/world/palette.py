"""Block ids in world grids: one fixed palette over every block the game data knows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache

AIR = "air"

PASSABLE = frozenset(
    {
        "air",
        "cave_air",
        "water",
        "grass",
        "tall_grass",
        "fern",
        "large_fern",
        "dandelion",
        "poppy",
        "blue_orchid",
        "allium",
        "azure_bluet",
        "oxeye_daisy",
        "cornflower",
        "lily_of_the_valley",
        "dead_bush",
        "snow",
        "sugar_cane",
        "sweet_berry_bush",
        "vine",
        "torch",
        "red_tulip",
        "orange_tulip",
        "white_tulip",
        "pink_tulip",
        "sunflower",
        "lilac",
        "rose_bush",
        "peony",
        "brown_mushroom",
        "red_mushroom",
        "oak_sapling",
        "spruce_sapling",
        "birch_sapling",
        "jungle_sapling",
        "acacia_sapling",
        "dark_oak_sapling",
    }
)
"""Blocks a body can stand in or walk through (no collision box), as Mineflayer treats them."""


@dataclass(frozen=True)
class Palette:
    names: tuple[str, ...]
    ids: Mapping[str, int]

    def id(self, name: str) -> int:
        return self.ids[name]

    def name(self, block_id: int) -> str:
        return self.names[block_id]

    @cached_property
    def passable_ids(self) -> frozenset[int]:
        return frozenset(self.ids[n] for n in PASSABLE if n in self.ids)


@lru_cache(maxsize=4)
def make_palette(blocks: Iterable[str]) -> Palette:
    names = (AIR, *sorted(b for b in set(blocks) if b != AIR))
    if len(names) > 65535:
        raise ValueError("too many block types for a 16-bit grid")
    return Palette(names, {n: i for i, n in enumerate(names)})
