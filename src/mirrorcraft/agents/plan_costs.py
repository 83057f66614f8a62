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
"""(CRAFT, k, station, ((sorted cell items, count needed), ...))
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
        cells = tuple((tuple(sorted(cell)), qty * k) for cell, qty in m.inputs.items())
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


class CompiledUses:
    """Per item, the (user, compiled way) pairs that use it, compiled when first asked for
    (a decision only asks for the items it settles; the tables live across decisions)."""

    __slots__ = ("_done", "_fuel_choices", "_fuels", "_uses")

    def __init__(
        self,
        uses: Mapping[str, Sequence[tuple[str, Any]]],
        fuels: Mapping[str, int],
        fuel_choices: Sequence[str],
    ):
        self._uses = uses
        self._fuels = fuels
        self._fuel_choices = fuel_choices
        self._done: dict[str, tuple[tuple[str, Entry], ...]] = {}

    def get(self, item: str) -> tuple[tuple[str, Entry], ...]:
        done = self._done.get(item)
        if done is None:
            fuels, choices = self._fuels, self._fuel_choices
            done = self._done[item] = tuple(
                (user, compiled(m, user, fuels, choices)) for user, m in self._uses.get(item, ())
            )
        return done


def compile_tables(
    relevant: Sequence[str],
    uses: Mapping[str, Sequence[tuple[str, Any]]],
    produced_by: Mapping[str, Sequence[Any]],
    fuels: Mapping[str, int],
    fuel_choices: Sequence[str],
) -> tuple[dict[str, tuple[Entry, ...]], CompiledUses]:
    """Per relevant item its compiled ways; per item the (user, compiled way) pairs using it."""
    produced = {
        item: tuple(compiled(m, item, fuels, fuel_choices) for m in produced_by.get(item, ()))
        for item in relevant
    }
    return produced, CompiledUses(uses, fuels, fuel_choices)
