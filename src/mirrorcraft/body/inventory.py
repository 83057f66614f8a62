"""The agent's inventory and equipment.

Items are counted per (item, enchantments, damage) so that an enchanted pickaxe,
a plain one and a worn one stay distinct. Slots are derived: each key fills
ceil(count / stack size) of the 36 slots, as the game would stack it (damageable
items have a stack size of 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from mirrorcraft.rules.items import ItemStack

Enchantments = tuple[tuple[str, int], ...]
Key = tuple[str, Enchantments, int]
"""(item, enchantments, damage): one kind of stack."""


def key_of(stack: ItemStack) -> Key:
    return (stack.item, stack.enchantments, stack.damage)


def stack_of(key: Key, count: int = 1) -> ItemStack:
    return ItemStack(key[0], count, key[1], key[2])


def _spend_order(k: Key) -> tuple[int, Enchantments, int]:
    """Which copies a removal takes first: plain before enchanted, worn before new."""
    return (len(k[1]), k[1], -k[2])


@dataclass
class Inventory:
    stack_sizes: Mapping[str, int]
    slots: int = 36
    counts: dict[Key, int] = field(default_factory=dict)
    version: int = 0
    """Bumped on every change, so callers can cache what they derive from the contents."""
    kinds: int = 0
    """Bumped when an item id enters or leaves the inventory (not when a copy wears): for
    what depends only on which items are owned."""
    _slots: int = field(default=0, init=False, repr=False, compare=False)
    _slots_at: int = field(default=-1, init=False, repr=False, compare=False)
    _totals: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _totals_at: int = field(default=-1, init=False, repr=False, compare=False)
    _stacks: list[ItemStack] = field(default_factory=list, init=False, repr=False, compare=False)
    _stacks_at: int = field(default=-1, init=False, repr=False, compare=False)
    _derived: dict[object, object] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _key_stacks: dict[Key, tuple[int, tuple[ItemStack, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _keys_per_item: dict[str, int] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _derived_at: int = field(default=-1, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Set here as well as declared: compiled by mypyc (setup.py), the dataclass's own
        # __init__ leaves an init=False field with a plain default unset.
        self._slots, self._slots_at = 0, -1
        self._totals_at = self._stacks_at = self._derived_at = -1
        for name, _e, _d in (k for k, c in self.counts.items() if c > 0):
            self._keys_per_item[name] = self._keys_per_item.get(name, 0) + 1

    def derived(self) -> dict[object, object]:
        """A scratch dict for values computed from the contents: emptied on every change."""
        if self._derived_at != self.version:
            self._derived, self._derived_at = {}, self.version
        return self._derived

    def total(self, item: str) -> int:
        return sum(c for (name, _e, _d), c in self.counts.items() if name == item)

    def totals(self) -> dict[str, int]:
        """Count per item id, sorted by id (a fresh dict; computed once per version)."""
        if self._totals_at != self.version:
            out: dict[str, int] = {}
            for (name, _e, _d), c in self.counts.items():
                out[name] = out.get(name, 0) + c
            self._totals = dict(sorted(out.items()))
            self._totals_at = self.version
        return dict(self._totals)

    def keys_of(self, item: str) -> list[Key]:
        return sorted(k for k in self.counts if k[0] == item)

    def enchanted(self) -> list[ItemStack]:
        return sorted(
            (stack_of(k, c) for k, c in self.counts.items() if k[1]),
            key=lambda s: (s.item, s.enchantments, s.damage),
        )

    def used_slots(self) -> int:
        if self._slots_at != self.version:
            self._slots = sum(
                -(-c // max(self.stack_sizes.get(k[0], 64), 1)) for k, c in self.counts.items()
            )
            self._slots_at = self.version
        return self._slots

    def _changed(self, key: Key, old: int, new: int) -> None:
        """Record that ``key``'s count went from ``old`` to ``new``: bump the version, and
        keep the used-slot count current when it was (its slots change by the difference);
        bump ``kinds`` when an item id came in or left."""
        if self._slots_at == self.version:
            size = max(self.stack_sizes.get(key[0], 64), 1)
            self._slots += -(-new // size) + (old // -size)
            self._slots_at = self.version + 1
        self.version += 1
        if (old > 0) != (new > 0):
            keys = self._keys_per_item.get(key[0], 0) + (1 if new > 0 else -1)
            self._keys_per_item[key[0]] = keys
            if keys == 0 or (keys == 1 and new > 0):
                self.kinds += 1

    def room_for(self, item: str, enchantments: Enchantments = (), damage: int = 0) -> int:
        """How many more of this item fit (existing partial stacks plus free slots)."""
        size = max(self.stack_sizes.get(item, 64), 1)
        have = self.counts.get((item, enchantments, damage), 0)
        partial = (-have) % size
        free = self.slots - self.used_slots()
        return partial + max(free, 0) * size

    def add(self, stack: ItemStack) -> int:
        """Add as much as fits; returns how many were added."""
        fit = min(stack.count, self.room_for(stack.item, stack.enchantments, stack.damage))
        if fit > 0:
            k = key_of(stack)
            old = self.counts.get(k, 0)
            self.counts[k] = old + fit
            self._changed(k, old, old + fit)
        return fit

    def put(self, key: Key, count: int = 1) -> None:
        """Add copies of exactly this key whether or not they fit (a worn tool replacing itself)."""
        old = self.counts.get(key, 0)
        self.counts[key] = old + count
        self._changed(key, old, old + count)

    def take(self, key: Key, count: int = 1) -> int:
        """Remove up to ``count`` copies of exactly this key; returns how many were removed."""
        n = min(self.counts.get(key, 0), count)
        if n > 0:
            old = self.counts[key]
            if old == n:
                del self.counts[key]
            else:
                self.counts[key] = old - n
            self._changed(key, old, old - n)
        return n

    def remove(self, item: str, count: int) -> list[ItemStack]:
        """Remove ``count`` of an item (plain copies first, the most worn first); the caller checked there are enough."""
        taken: list[ItemStack] = []
        for k in sorted((k for k in self.counts if k[0] == item), key=_spend_order):
            if count <= 0:
                break
            n = self.take(k, count)
            count -= n
            taken.append(stack_of(k, n))
        return taken

    def stacks(self) -> list[ItemStack]:
        """Slot stacks, each at most a stack size, in a fixed order (a fresh list; the
        stacks are immutable and computed once per version)."""
        if self._stacks_at != self.version:
            out: list[ItemStack] = []
            made = self._key_stacks
            kept: dict[Key, tuple[int, tuple[ItemStack, ...]]] = {}
            for key, count in sorted(self.counts.items()):
                known = made.get(key)
                if known is None or known[0] != count:  # a key's stacks are made again
                    size = max(self.stack_sizes.get(key[0], 64), 1)  # only when its count moved
                    full, rest = divmod(count, size) if count > 0 else (0, 0)
                    known = (
                        count,
                        (stack_of(key, size),) * full + ((stack_of(key, rest),) if rest else ()),
                    )
                kept[key] = known
                out.extend(known[1])
            self._key_stacks = kept
            self._stacks, self._stacks_at = out, self.version
        return list(self._stacks)


def delta(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    keys: Iterable[str] = sorted(set(before) | set(after))
    return {
        k: after.get(k, 0) - before.get(k, 0) for k in keys if after.get(k, 0) != before.get(k, 0)
    }
