"""The planner's unit-cost methods compiled into flat tuples, once per belief version.

``Planner._unit_costs`` evaluates every way of making every relevant item about a
thousand times per decision. Evaluating a ``CraftOption``/``SmeltOption``/``SourceOption``
directly re-derives the same constants each time (yields, batch sizes, sorted input
cells, fuel multiples); here they are derived once per belief version and goal, and the
planner only adds up what depends on the current step. The arithmetic, and its order, is
that of ``Planner._method_cost`` with ``n = 1``, so the costs are the same floats.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mirrorcraft.agents.knowledge import CraftOption, SmeltOption, SourceOption

CRAFT, SMELT, SOURCE, NEVER = 0, 1, 2, 3

Entry = tuple[Any, ...]
"""(CRAFT, k, station, ((the cell's only item or None, sorted cell items, count needed), ...))
(SMELT, units / 6, station, input, units, fuel ticks needed, ((fuel, multiple), ...))
(SOURCE, batches / 4, source, kind)   (NEVER,)"""


def compile_method(
    m: Any, item: str, fuels: Mapping[str, int], fuel_choices: Sequence[str]
) -> Entry:
    """One way of making one unit of ``item``, with everything fixed precomputed."""
    if isinstance(m, CraftOption):
        q = m.yields.get(item, 0)
        if q <= 0:
            return (NEVER,)
        k = math.ceil(1 / q)
        cells = tuple(
            (next(iter(cell)) if len(cell) == 1 else None, tuple(sorted(cell)), qty * k)
            for cell, qty in m.inputs.items()
        )
        return (CRAFT, k, m.station, cells)
    if isinstance(m, SmeltOption):
        q = m.yields.get(item, 0)
        if q <= 0:
            return (NEVER,)
        units = math.ceil(1 / q)
        need = units * 200
        pairs = tuple(
            (fuel, math.ceil(need / fuels[fuel]))
            for fuel in fuel_choices
            if fuels.get(fuel, 0) > 0 and fuel != m.input
        )
        return (SMELT, units / 6, m.station, m.input, units, need, pairs)
    if isinstance(m, SourceOption):
        y = m.yields.get(item, 0.0)
        if y <= 0:
            return (NEVER,)
        return (SOURCE, math.ceil(1 / y) / 4, m.source, m.kind)
    return (NEVER,)


_MEMO: dict[tuple[int, str, int], tuple[Any, Mapping[str, int], Entry]] = {}
"""(id(way), item, id(fuels)) -> (way, fuels, entry): ways are shared by the beliefs built
from one rule set, so each is compiled once per process (the objects are kept, so an id
cannot be reused while its entry is here)."""
MEMO_LIMIT = 200_000


def compiled(m: Any, item: str, fuels: Mapping[str, int], fuel_choices: Sequence[str]) -> Entry:
    key = (id(m), item, id(fuels))
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is m and hit[1] is fuels:
        return hit[2]
    if len(_MEMO) > MEMO_LIMIT:
        _MEMO.clear()
    entry = compile_method(m, item, fuels, fuel_choices)
    _MEMO[key] = (m, fuels, entry)
    return entry


Use = tuple[str, Entry, "str | None", int]
"""(user, compiled way, the smelt's input when the way is a smelt else None, its units)."""

_USES: dict[tuple[int, str], tuple[Any, Mapping[str, int], Any, Use, tuple[str, ...]]] = {}
"""(id(way), item) -> (way, fuels, harvesting tools of its block, the way's Use, its sorted
dependencies): what the relevance walk derives from one way, derived once per process."""


def way_use(
    m: Any,
    item: str,
    fuels: Mapping[str, int],
    fuel_choices: Sequence[str],
    harvest: Mapping[str, frozenset[str]],
) -> tuple[Use, tuple[str, ...]]:
    """One way of making ``item`` as the relevance walk uses it: its Use (see ``Use``) and
    the items it depends on, sorted (its station and input cells; a smelt's input, station
    and every fuel; the tools that harvest a block, the hand left out)."""
    able = harvest.get(m.source) if isinstance(m, SourceOption) else None
    key = (id(m), item)
    hit = _USES.get(key)
    if hit is not None and hit[0] is m and hit[1] is fuels and hit[2] is able:
        return hit[3], hit[4]
    deps: set[str] = set()
    if isinstance(m, CraftOption):
        deps.add(m.station)
        for cell in m.inputs:
            deps.update(cell)
    elif isinstance(m, SmeltOption):
        deps.update((m.input, m.station, *fuel_choices))
    elif m.kind == "block":
        deps.update(t for t in (able or ()) if t != "hand")
    entry = compiled(m, item, fuels, fuel_choices)
    smelted = entry[3] if entry[0] == SMELT else None
    use: Use = (item, entry, smelted, entry[4] if entry[0] == SMELT else 0)
    if len(_USES) > MEMO_LIMIT:
        _USES.clear()
    ordered = tuple(sorted(deps))
    _USES[key] = (m, fuels, able, use, ordered)
    return use, ordered
