"""Number providers (constant, uniform, binomial) and integer ranges of 1.19 loot tables."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.loot_context import RandomSource

MAX_LOOT_NUMBER = 4096
"""Largest magnitude of any number in a loot table (counts, uniform bounds, binomial trials,
limits, bonus parameters); vanilla 1.19 never passes 9. A stack a loot table makes is also
capped at this many items, however its functions combine."""
MAX_LOOT_ROLLS = 256
"""Most rolls (rolls plus bonus_rolls) one pool may make; vanilla rolls at most 1."""

FloatFn = Callable[[RandomSource], float]
IntFn = Callable[[RandomSource], int]


class NumberProvider:
    """A compiled number provider with the game's separate int and float draws."""

    def __init__(self, as_float: FloatFn, as_int: IntFn, spec: str, outputs: tuple[int, int]):
        self.as_float = as_float
        self.as_int = as_int
        self.spec = spec
        self.bounds = outputs  # smallest and largest integer this provider can return

    def __repr__(self) -> str:
        return f"NumberProvider({self.spec})"


def parse_number(raw: Any, field: str) -> NumberProvider:
    if isinstance(raw, bool):
        raise DatapackError("must be a number or a number provider", field=field)
    if isinstance(raw, int | float):
        check_magnitude(raw, field)
        value = float(raw)
        return NumberProvider(
            lambda _r: value, lambda _r: math.floor(value), f"{value:g}", (math.floor(value),) * 2
        )
    if not isinstance(raw, dict):
        raise DatapackError("must be a number or a number provider", field=field)
    kind = normalize_id(raw.get("type", "minecraft:uniform"))
    if kind == "constant":
        return parse_number(raw.get("value"), f"{field}.value")
    if kind == "uniform":
        low = parse_number(raw.get("min"), f"{field}.min")
        high = parse_number(raw.get("max"), f"{field}.max")

        def uniform_float(r: RandomSource) -> float:
            a, b = low.as_float(r), high.as_float(r)
            return a if a >= b else a + r.random() * (b - a)

        def uniform_int(r: RandomSource) -> int:
            a, b = low.as_int(r), high.as_int(r)
            return a if a >= b else a + r.randrange(b - a + 1)

        return NumberProvider(
            uniform_float,
            uniform_int,
            f"{low.spec}-{high.spec}",
            (low.bounds[0], max(low.bounds[1], high.bounds[1])),
        )
    if kind == "binomial":
        trials = parse_number(raw.get("n"), f"{field}.n")
        chance = parse_number(raw.get("p"), f"{field}.p")

        def binomial_int(r: RandomSource) -> int:
            n, p = trials.as_int(r), chance.as_float(r)
            return sum(1 for _ in range(n) if r.random() < p)

        return NumberProvider(
            lambda r: float(binomial_int(r)),
            binomial_int,
            f"binomial({trials.spec},{chance.spec})",
            (0, max(0, trials.bounds[1])),
        )
    raise DatapackError(f"number provider type {kind!r} is not interpreted", field=f"{field}.type")


def check_magnitude(raw: int | float, field: str, limit: int = MAX_LOOT_NUMBER) -> None:
    """Refuse a number that is not finite or whose magnitude passes ``limit``."""
    if isinstance(raw, float) and not math.isfinite(raw):
        raise DatapackError("must be a finite number", field=field)
    if abs(raw) > limit:
        shown = str(raw) if abs(raw) < 10**30 else f"a number of {len(str(int(raw)))} digits"
        raise DatapackError(
            f"{shown} is beyond the limit of {limit} (see docs/limits.md)",
            field=field,
        )


def bounded_number(raw: Any, field: str, limit: int = MAX_LOOT_NUMBER) -> float:
    """A plain number (not a provider) within ``limit``; DatapackError otherwise."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise DatapackError("must be a number", field=field)
    check_magnitude(raw, field, limit)
    return float(raw)


class IntRange:
    """IntRange of limit_count: optional min and max number providers."""

    def __init__(self, raw: Any, field: str):
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            self.low: NumberProvider | None = parse_number(raw, field)
            self.high: NumberProvider | None = self.low
            return
        if not isinstance(raw, dict):
            raise DatapackError("must be a number or {min, max}", field=field)
        self.low = parse_number(raw["min"], f"{field}.min") if "min" in raw else None
        self.high = parse_number(raw["max"], f"{field}.max") if "max" in raw else None

    def clamp(self, value: int, r: RandomSource) -> int:
        if self.low is not None:
            value = max(value, self.low.as_int(r))
        if self.high is not None:
            value = min(value, self.high.as_int(r))
        return value
