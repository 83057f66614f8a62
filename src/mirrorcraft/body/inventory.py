"""The agent's inventory and equipment.

Items are counted per (item, enchantments) so that an enchanted pickaxe and a
plain one stay distinct. Slots are derived: each key fills ceil(count / stack
size) of the 36 slots, as the game would stack it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from mirrorcraft.rules.items import ItemStack

Key = tuple[str, tuple[tuple[str, int], ...]]


def key_of(stack: ItemStack) -> Key:
    return (stack.item, stack.enchantments)


@dataclass
class Inventory:
    stack_sizes: Mapping[str, int]
    slots: int = 36
    counts: dict[Key, int] = field(default_factory=dict)
    version: int = 0
    """Bumped on every change, so callers can cache what they derive from the contents."""

    def total(self, item: str) -> int:
        return sum(c for (name, _), c in self.counts.items() if name == item)

    def totals(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (name, _), c in self.counts.items():
            out[name] = out.get(name, 0) + c
        return dict(sorted(out.items()))

    def enchanted(self) -> list[ItemStack]:
        return sorted(
            (ItemStack(n, c, e) for (n, e), c in self.counts.items() if e),
            key=lambda s: (s.item, s.enchantments),
        )

    def used_slots(self) -> int:
        return sum(
            -(-c // max(self.stack_sizes.get(n, 64), 1)) for (n, _), c in self.counts.items()
        )

    def room_for(self, item: str, enchantments: tuple[tuple[str, int], ...] = ()) -> int:
        """How many more of this item fit (existing partial stacks plus free slots)."""
        size = max(self.stack_sizes.get(item, 64), 1)
        have = self.counts.get((item, enchantments), 0)
        partial = (-have) % size
        free = self.slots - self.used_slots()
        return partial + max(free, 0) * size

    def add(self, stack: ItemStack) -> int:
        """Add as much as fits; returns how many were added."""
        fit = min(stack.count, self.room_for(stack.item, stack.enchantments))
        if fit > 0:
            k = key_of(stack)
            self.counts[k] = self.counts.get(k, 0) + fit
            self.version += 1
        return fit

    def remove(self, item: str, count: int) -> list[ItemStack]:
        """Remove ``count`` of an item (plain copies first); the caller checked there are enough."""
        taken: list[ItemStack] = []
        for k in sorted((k for k in self.counts if k[0] == item), key=lambda k: (len(k[1]), k[1])):
            if count <= 0:
                break
            n = min(self.counts[k], count)
            self.counts[k] -= n
            count -= n
            taken.append(ItemStack(k[0], n, k[1]))
            self.version += 1
            if self.counts[k] == 0:
                del self.counts[k]
        return taken

    def stacks(self) -> list[ItemStack]:
        """Slot stacks, each at most a stack size, in a fixed order."""
        out: list[ItemStack] = []
        for (name, ench), count in sorted(self.counts.items()):
            size = max(self.stack_sizes.get(name, 64), 1)
            while count > 0:
                out.append(ItemStack(name, min(count, size), ench))
                count -= size
        return out


def delta(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    keys: Iterable[str] = sorted(set(before) | set(after))
    return {
        k: after.get(k, 0) - before.get(k, 0) for k in keys if after.get(k, 0) != before.get(k, 0)
    }
