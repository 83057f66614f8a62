"""What a loot roll knows about the world: tool, killer, explosion, block state."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from mirrorcraft.rules.items import ItemStack


class RandomSource(Protocol):
    """The draws loot tables make; ``random.Random`` satisfies it."""

    def random(self) -> float: ...

    def randrange(self, stop: int, /) -> int: ...


@dataclass(frozen=True)
class EntityState:
    """The parts of an entity that loot predicates can ask about."""

    type: str
    on_fire: bool = False
    is_baby: bool = False


BlockLookup = Callable[[int, int, int], tuple[str, Mapping[str, str]]]
"""(dx, dy, dz) relative to the broken block -> (block id, block-state properties) there."""


@dataclass(frozen=True, init=False)
class LootContext:
    tool: ItemStack | None = None
    """The item used to break the block (None when no tool parameter exists)."""
    explosion_radius: float | None = None
    this_entity: EntityState | None = None
    killer_is_player: bool = False
    looting: int = 0
    luck: float = 0.0
    block: str | None = None
    """The block being broken (for block_state_property)."""
    block_properties: Mapping[str, str] = field(default_factory=dict)
    lookup: BlockLookup | None = field(default=None, compare=False)
    """Where the world can answer location_check predicates; None outside a world."""

    def __init__(
        self,
        tool: ItemStack | None = None,
        explosion_radius: float | None = None,
        this_entity: EntityState | None = None,
        killer_is_player: bool = False,
        looting: int = 0,
        luck: float = 0.0,
        block: str | None = None,
        block_properties: Mapping[str, str] | None = None,
        lookup: BlockLookup | None = None,
    ) -> None:
        # Written to the instance dict directly, as ItemStack does: every block dug makes a
        # context, and the generated frozen __init__ costs a call per field.
        self.__dict__.update(
            tool=tool,
            explosion_radius=explosion_radius,
            this_entity=this_entity,
            killer_is_player=killer_is_player,
            looting=looting,
            luck=luck,
            block=block,
            block_properties={} if block_properties is None else block_properties,
            lookup=lookup,
        )

    def enchantment_level(self, enchantment: str) -> int:
        return self.tool.enchantment_level(enchantment) if self.tool else 0


@dataclass
class LootRuntime:
    """Per-roll services: the random source, referenced tables and furnace smelting."""

    rng: RandomSource
    ctx: LootContext
    tables: Mapping[str, object]
    smelt: Callable[[str], str | None]
    depth: int = 0
    visiting: set[str] = field(default_factory=set)
    """Locations of the tables being rolled (each refuses to be rolled again inside itself)."""
