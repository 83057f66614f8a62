"""The planner's unit costs through the compiled core (``_unit_costs.c``), when it is built.

``Planner._unit_costs`` is the reference; the C module is a port of it that does the same
arithmetic in the same order on the same doubles. This module turns the planners'
compiled ways (``plan_costs``, shared by every planner of the process) into rows of flat
arrays, once per way; each relevance (``plan_relevance``, kept per belief and goal) into
the lists of ways that make and use each relevant item, once per relevance; and each
step's facts (counts owned, stations at hand, tools owned, exploring costs) into four
small arrays.

The core is optional: ``pip install`` builds it where a C compiler is found, and the
planner falls back to the Python reference where it is not. ``MIRRORCRAFT_PURE_PYTHON=1``
makes every planner use the reference (the tests compare the two at every decision of
recorded episodes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mirrorcraft.agents.plan_costs import CRAFT, SMELT, SOURCE, Entry, Use

try:
    from mirrorcraft.agents import _unit_costs as _core  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler at install time): the Python reference runs
    _core = None

BUILT = _core is not None
"""Whether the C module was built at install time."""
ENABLED = BUILT and os.environ.get("MIRRORCRAFT_PURE_PYTHON", "") in ("", "0")
"""Whether planners use the compiled core (read once, when the module is imported)."""


def _i64(values: Sequence[int]) -> NDArray[np.int64]:
    return np.asarray(values, dtype=np.int64) if values else np.zeros(1, dtype=np.int64)


def _grown(old: tuple[int, NDArray[Any]] | None, values: Sequence[Any], dtype: Any) -> NDArray[Any]:
    """``values`` as an array (one zero when empty). ``old``: (length, array) of an earlier,
    shorter state of the same list; only the values added since are converted."""
    if not values:
        return np.zeros(1, dtype=dtype)
    if old is None or old[0] == 0 or old[0] > len(values):
        return np.asarray(values, dtype=dtype)
    done, array = old
    if done == len(values):
        return array
    return np.concatenate((array, np.asarray(values[done:], dtype=dtype)))


class _Table:
    """Every item name and compiled way the process's planners have met, numbered once.

    Names, ways, stations and exploring targets get global numbers, so a way is encoded
    once however many relevances use it (the ways themselves are shared through
    ``plan_costs``' caches). The objects whose ids key the caches are kept alive here.
    """

    COLUMNS = ("kind", "station", "a", "b", "c", "d", "e", "pair_hi")
    LISTS = ("cell_one", "cell_n", "cell_lo", "cell_hi", "citems", "pair_f", "pair_m")

    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self.name_list: list[str] = []
        self.cols: dict[str, list[int]] = {k: [] for k in (*self.COLUMNS, *self.LISTS)}
        self.base: list[float] = []
        self.entries: dict[int, int] = {}
        self.uses: dict[int, tuple[int, int, int, int]] = {}
        self.kept: list[object] = []
        """The ways and uses whose ids key ``entries`` and ``uses``."""
        self.tools: dict[frozenset[str], tuple[int, ...]] = {}
        self.stations: dict[str, int] = {}
        self.station_list: list[str] = []
        self.station_item: list[int] = []
        self.explore: dict[tuple[str, str], int] = {}
        self.explore_list: list[tuple[str, str]] = []
        self._arrays: tuple[int, int, tuple[NDArray[Any], ...]] | None = None
        self._lengths: list[int] = []
        """How long each list was when ``_arrays`` was built."""

    def name(self, name: str) -> int:
        i = self.names.get(name)
        if i is None:
            i = self.names[name] = len(self.names)
            self.name_list.append(name)
        return i

    def station(self, name: str) -> int:
        i = self.stations.get(name)
        if i is None:
            i = self.stations[name] = len(self.stations)
            self.station_list.append(name)
            self.station_item.append(self.name(name))
        return i

    def entry(self, e: Entry, fuels: Mapping[str, int]) -> int:
        """The number of a compiled way (its row is added the first time)."""
        hit = self.entries.get(id(e))
        if hit is not None:  # the way is kept in the table, so its id is not reused
            return hit
        c = self.cols
        row = dict.fromkeys(self.COLUMNS, 0)
        row["kind"], base = e[0], 0.0
        if e[0] == CRAFT:
            base, row["station"], row["a"] = float(e[1]), self.station(e[2]), len(c["cell_one"])
            for one, items, n in e[3]:
                c["cell_one"].append(-1 if one is None else self.name(one))
                c["cell_n"].append(n)
                c["cell_lo"].append(len(c["citems"]))
                c["citems"].extend(self.name(i) for i in items)
                c["cell_hi"].append(len(c["citems"]))
            row["b"] = len(c["cell_one"])
        elif e[0] == SMELT:
            _k, base, station, source, units, need, pairs = e
            row.update(station=self.station(station), a=self.name(source), b=units, c=need)
            row["d"], row["e"] = fuels.get(source, 0), len(c["pair_f"])
            for f, mult in pairs:
                c["pair_f"].append(self.name(f))
                c["pair_m"].append(mult)
            row["pair_hi"] = len(c["pair_f"])
        elif e[0] == SOURCE:
            key = (e[2], e[3])
            slot = self.explore.get(key, -1)
            if slot < 0:
                slot = self.explore[key] = len(self.explore_list)
                self.explore_list.append(key)
            base, row["a"] = float(e[1]), slot
            row["b"] = self.name(e[2]) if e[3] == "block" else -1
        for k, v in row.items():
            c[k].append(v)
        self.base.append(base)
        eid = len(self.base) - 1
        self.entries[id(e)] = eid
        self.kept.append(e)
        return eid

    def use(self, u: Use, fuels: Mapping[str, int]) -> tuple[int, int, int, int]:
        hit = self.uses.get(id(u))
        if hit is not None:  # the use is kept in the table, so its id is not reused
            return hit
        user, entry, smelted, units = u
        code = (
            self.name(user),
            self.entry(entry, fuels),
            -1 if smelted is None else self.name(smelted),
            units,
        )
        self.uses[id(u)] = code
        self.kept.append(u)
        return code

    def tools_of(self, owned: frozenset[str]) -> tuple[int, ...]:
        """The numbers of the tools that harvest a block, in the order of their names."""
        hit = self.tools.get(owned)
        if hit is None:
            hit = self.tools[owned] = tuple(self.name(t) for t in sorted(owned))
        return hit

    def arrays(self) -> tuple[NDArray[Any], ...]:
        """The ways' rows as arrays, brought up to date when ways were added since the last
        call (only the rows added are converted; the table only grows)."""
        size = (len(self.base), len(self.station_item))
        if self._arrays is None or self._arrays[:2] != size:
            c = self.cols
            lists: list[Sequence[Any]] = [
                *(c[k] for k in self.COLUMNS),
                self.base,
                *(c[k] for k in self.LISTS),
                self.station_item,
            ]
            old = self._lengths
            built = tuple(
                _grown(
                    None if self._arrays is None else (old[i], self._arrays[2][i]),
                    values,
                    np.float64 if values is self.base else np.int64,
                )
                for i, values in enumerate(lists)
            )
            self._lengths = [len(values) for values in lists]
            self._arrays = (*size, built)
        return self._arrays[2]


_TABLE = _Table()


@dataclass
class Encoded:
    """One relevance: which ways make and use each relevant item, by global numbers."""

    relevant: list[str]
    arrays: tuple[NDArray[Any], ...]
    """relevant items' numbers, ways making each (bounds, ways), ways using each (bounds,
    4 numbers a use), and the harvesting tools of each block (bounds by block number, tools)."""
    stations: list[tuple[int, str]]
    explore: list[tuple[int, str, str]]
    blocks: list[tuple[int, bool, frozenset[str]]]
    """Per block mined by some way: its number, whether the hand harvests it, its tools."""
    size: int
    """How many names were numbered when it was encoded (its arrays' bound)."""
    keep: tuple[object, ...]
    """The objects the cache key holds ids of, kept so an id cannot be reused."""


def encode(
    relevant: list[str],
    compiled: tuple[Mapping[str, tuple[Entry, ...]], Mapping[str, list[Use]]],
    harvest: Mapping[str, frozenset[str]],
    fuels: Mapping[str, int],
    table: _Table | None = None,
    keep: tuple[object, ...] | None = None,
) -> Encoded:
    """A relevance as flat arrays. ``keep``: the objects a cache key holds ids of (default:
    the compiled ways, the harvest map and the fuels)."""
    table = table or _TABLE
    produced, uses_of = compiled
    rel = [table.name(i) for i in relevant]
    known, codes = table.entries, table.uses
    prod_lo: list[int] = [0]
    prod: list[int] = []
    use_lo: list[int] = [0]
    uses: list[int] = []
    for item in relevant:
        made = produced.get(item, ())
        try:
            prod.extend(map(known.__getitem__, map(id, made)))
        except KeyError:  # a way met for the first time: number them all again
            del prod[prod_lo[-1] :]
            prod.extend(table.entry(e, fuels) for e in made)
        prod_lo.append(len(prod))
    for item in relevant:
        used = uses_of.get(item, ())
        try:
            uses.extend(chain.from_iterable(map(codes.__getitem__, map(id, used))))
        except KeyError:
            del uses[use_lo[-1] * 4 :]
            uses.extend(chain.from_iterable(table.use(u, fuels) for u in used))
        use_lo.append(len(uses) >> 2)
    arrays = table.arrays()
    ways = np.asarray(prod, dtype=np.int64)  # (their kinds, stations and slots, below)
    kind, station, a, b = arrays[0][ways], arrays[1][ways], arrays[2][ways], arrays[3][ways]
    sourced = kind == SOURCE
    stations = np.unique(station[(kind == CRAFT) | (kind == SMELT)]).tolist()
    explore = np.unique(a[sourced]).tolist()
    blocks = np.unique(b[sourced & (b >= 0)]).tolist()
    size = len(table.names)
    tool_lo, tool_hi = [0] * size, [0] * size
    tools: list[int] = []
    block_rows = []
    for block in blocks:
        owned = harvest.get(table.name_list[block], frozenset())
        tool_lo[block] = len(tools)
        tools.extend(table.tools_of(owned))
        tool_hi[block] = len(tools)
        block_rows.append((block, "hand" in owned, owned))
    return Encoded(
        relevant=list(relevant),
        arrays=tuple(_i64(v) for v in (rel, prod_lo, prod, use_lo, uses, tool_lo, tool_hi, tools)),
        stations=[(s, table.station_list[s]) for s in stations],
        explore=[(e, *table.explore_list[e]) for e in explore],
        blocks=block_rows,
        size=len(table.names),
        keep=keep or (compiled, harvest, fuels),
    )


_CACHE: dict[tuple[int, int, int], Encoded] = {}
CACHE_LIMIT = 1024
"""Encodings kept (a grid of the adaptive planner meets a few hundred relevances)."""
TABLE_LIMIT = 500_000
"""Ways and uses kept in the table before it is started afresh (with the cache of
relevances); a grid of the reference planners numbers a few thousand."""


_SEEN: dict[tuple[int, int, int], tuple[object, ...]] = {}
"""Relevances used once so far (by the same key as ``_CACHE``, with its objects)."""


def encoded(
    relevant: list[str],
    compiled: Any,
    harvest: Mapping[str, frozenset[str]],
    fuels: Any,
    harvest_owner: object | None = None,
) -> Encoded | None:
    """``encode``, kept per (compiled ways, harvesting tools, fuels) object; None the first
    time a relevance is seen. Encoding one costs about two decisions of the reference, and
    the adaptive planner revises its belief (a new relevance) every few decisions, so a
    relevance is encoded when it is used a second time.

    ``harvest_owner``: an object that stands for ``harvest``'s contents (the shared belief
    a belief was copied from: every copy has its own dict with the same contents, which no
    revision changes), so one encoding serves every episode whose relevance is shared."""
    owner = harvest if harvest_owner is None else harvest_owner
    key = (id(compiled), id(owner), id(fuels))
    hit = _CACHE.get(key)
    if (
        hit is not None
        and hit.keep[0] is compiled
        and hit.keep[1] is owner
        and hit.keep[2] is fuels
    ):
        return hit
    objects = (compiled, owner, fuels)
    seen = _SEEN.get(key)
    if seen is None or any(a is not b for a, b in zip(seen, objects, strict=True)):
        if len(_SEEN) > CACHE_LIMIT:
            _SEEN.clear()
        _SEEN[key] = objects
        return None
    del _SEEN[key]
    global _TABLE
    if len(_TABLE.base) + len(_TABLE.uses) > TABLE_LIMIT:
        _TABLE = _Table()
        _CACHE.clear()
    if len(_CACHE) > CACHE_LIMIT:
        _CACHE.clear()
    hit = _CACHE[key] = encode(relevant, compiled, harvest, fuels, keep=objects)
    return hit


def unit_costs(planner: Any, relevant: list[str]) -> dict[str, float] | None:
    """The same dict ``Planner._unit_costs`` leaves in ``planner.unit``; None where the
    reference should compute it (a relevance's first use: see ``encoded``)."""
    assert _core is not None
    belief = planner.b
    enc = encoded(relevant, planner._compiled, belief.harvest, belief.rules.fuels, belief.root)
    if enc is None:
        return None
    table = _TABLE
    inv: dict[str, int] = planner.inv
    counts = np.zeros(enc.size + 1, dtype=np.int64)
    names = table.names
    have = set()
    for item, count in inv.items():
        i = names.get(item)
        if i is not None and i < enc.size:
            counts[i] = count
        if count > 0:
            have.add(item)
    facilities = planner.facilities
    fixed = np.zeros(len(table.station_item) + 1, dtype=np.float64)
    for slot, s in enc.stations:
        fixed[slot] = 0.0 if s == "inventory" or s in facilities else 1.0 if s in have else -1.0
    free = np.full(enc.size + 1, 1, dtype=np.int64)
    for b, hand, owned in enc.blocks:
        free[b] = hand or not owned.isdisjoint(have)
    explore = np.zeros(len(table.explore) + 1, dtype=np.float64)
    planner.explore_costs(enc.explore, explore)
    values = _core.unit_costs(
        len(enc.relevant),
        enc.size,
        planner.fuel_ticks,
        *table.arrays(),
        *enc.arrays,
        counts,
        fixed,
        free,
        explore,
        enc.relevant,
    )
    assert isinstance(values, dict)
    return values
