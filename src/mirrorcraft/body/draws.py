"""Deterministic draws and the canonical form of what a roll gave.

Every random outcome of the body (a loot roll, an experience count) is drawn from a
generator keyed by what it is for, so the same seed and actions give the same trace and a
Vanilla twin draws what its Mirror twin draws until a changed rule fires.
"""

from __future__ import annotations

import hashlib
import random

from mirrorcraft.rules.items import ItemStack


def keyed_random(*parts: object) -> random.Random:
    """A generator seeded from a key, so the same key always draws the same numbers."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


class LazyKeyedRandom:
    """The draws of ``keyed_random(*parts)``, seeded only when a first number is drawn.

    Most loot rolls (a stone or a log breaking) draw nothing; seeding a generator costs
    more than the roll itself.
    """

    __slots__ = ("_parts", "_rng")

    def __init__(self, *parts: object):
        self._parts = parts
        self._rng: random.Random | None = None

    @property
    def drawn(self) -> bool:
        """Whether any number has been drawn (a roll that drew none can be remembered)."""
        return self._rng is not None

    def _real(self) -> random.Random:
        if self._rng is None:
            self._rng = keyed_random(*self._parts)
        return self._rng

    def random(self) -> float:
        return self._real().random()

    def randrange(self, stop: int, /) -> int:
        return self._real().randrange(stop)


def canon_stacks(
    stacks: list[ItemStack],
) -> tuple[tuple[str, int, tuple[tuple[str, int], ...]], ...]:
    """Stacks merged by item and enchantments and sorted: what a roll gave, whatever the
    order of its entries."""
    if len(stacks) <= 1:  # most rolls: nothing to merge or sort
        return tuple((s.item, s.count, s.enchantments) for s in stacks)
    merged: dict[tuple[str, tuple[tuple[str, int], ...]], int] = {}
    for s in stacks:
        merged[(s.item, s.enchantments)] = merged.get((s.item, s.enchantments), 0) + s.count
    return tuple(sorted((k[0], c, k[1]) for k, c in merged.items()))
