"""The planner's cost estimates: how many actions an item, a station, a tool, a fuel or a
look around is believed to cost, from the unit costs of the decision (``Planner``).

The attributes below are the decision's facts, set by ``Planner.decide``.
"""

from __future__ import annotations

import math
from typing import Any

from mirrorcraft.agents.knowledge import Belief, CraftOption, SmeltOption, SourceOption
from mirrorcraft.agents.plan_types import Memory

INF = 1e9
FUEL_CHOICES = (
    "coal",
    "charcoal",
    "oak_planks",
    "spruce_planks",
    "birch_planks",
    "jungle_planks",
    "acacia_planks",
    "oak_log",
)


class CostEstimates:
    b: Belief
    mem: Memory
    inv: dict[str, int]
    """What is owned (worn-out tools left out)."""
    unit: dict[str, float]
    """The marginal cost of one more unit of each relevant item."""
    facilities: set[str]
    near: dict[str, float]
    entities: set[str]
    fuel_ticks: int

    def cost(self, item: str, n: int) -> float:
        """Estimated actions to get ``n`` more of ``item`` beyond what is owned."""
        need = n - self.inv.get(item, 0)
        if need <= 0:
            return 0.0
        return self.unit.get(item, INF) * need

    def methods(self, item: str, n: int) -> list[tuple[float, Any]]:
        out = []
        for m in self.b.produced_by.get(item, ()):
            c = self._method_cost(m, item, n)
            if c < INF:
                out.append((c, m))
        if len(out) > 1:
            out.sort(key=lambda cm: (cm[0], _method_name(cm[1])))
        return out

    def _method_cost(self, m: Any, item: str, n: int) -> float:
        if isinstance(m, CraftOption):
            q = m.yields.get(item, 0)
            if q <= 0:
                return INF
            k = math.ceil(n / q)
            total = k + self.station_cost(m.station)
            inv_get, unit_get = self.inv.get, self.unit.get
            for cell, qty in m.inputs.items():
                want = qty * k
                best = INF  # the cheapest alternative, as ``cost(i, want)`` gives each
                for i in cell:
                    need = want - inv_get(i, 0)
                    c = 0.0 if need <= 0 else unit_get(i, INF) * need
                    if c < best:
                        best = c
                total += best
                if total >= INF:
                    return INF
            return total
        if isinstance(m, SmeltOption):
            q = m.yields.get(item, 0)
            if q <= 0:
                return INF
            units = math.ceil(n / q)
            total = units / 6 + self.station_cost(m.station) + self.fuel_cost(units, m.input)
            return total + self.cost(m.input, units)
        if isinstance(m, SourceOption):
            y = m.yields.get(item, 0.0)
            if y <= 0:
                return INF
            total = math.ceil(n / y) / 4 + self.explore_cost(m.source, m.kind)
            if m.kind == "block":
                total += self.tool_cost(m.source)
            return total
        return INF

    def station_cost(self, station: str) -> float:
        if station == "inventory" or station in self.facilities:
            return 0.0
        if self.inv.get(station, 0) > 0:
            return 1.0
        return 1.0 + self.unit.get(station, INF)

    def tool_cost(self, block: str) -> float:
        able = self.b.harvest.get(block, frozenset())
        if "hand" in able or any(self.inv.get(t, 0) > 0 for t in able):
            return 0.0
        return min((self.unit.get(t, INF) for t in sorted(able)), default=INF)

    def explore_cost(self, source: str, kind: str) -> float:
        visible = source in self.near if kind == "block" else source in self.entities
        if visible:
            return 0.0
        if source in self.mem.absent:
            return INF
        if self.mem.explore_cooldown.get(source, -1) >= self.mem.step:
            return 40.0
        return 1.5 if source in self.mem.seen else 4.0

    def explore_costs(self, wanted: list[tuple[int, str, str]], out: Any) -> None:
        """``out[slot] = explore_cost(source, kind)`` for each (slot, source, kind), in one
        loop (the compiled unit costs ask for about fifty a decision)."""
        near, ents, mem = self.near, self.entities, self.mem
        absent, cooldown, now, seen = mem.absent, mem.explore_cooldown, mem.step, mem.seen
        for slot, source, kind in wanted:
            if source in (near if kind == "block" else ents):
                out[slot] = 0.0
            elif source in absent:
                out[slot] = INF
            elif cooldown.get(source, -1) >= now:
                out[slot] = 40.0
            else:
                out[slot] = 1.5 if source in seen else 4.0

    def _owned_fuel_ticks(self, exclude: str) -> int:
        return self.fuel_ticks - self.b.rules.fuels.get(exclude, 0) * self.inv.get(exclude, 0)

    def fuel_cost(self, units: int, exclude: str) -> float:
        need = units * 200
        if self._owned_fuel_ticks(exclude) >= need:
            return 0.0
        best = INF
        for fuel in FUEL_CHOICES:
            ticks = self.b.rules.fuels.get(fuel, 0)
            if ticks > 0 and fuel != exclude:
                best = min(best, self.unit.get(fuel, INF) * math.ceil(need / ticks))
        return best


def _method_name(m: Any) -> str:
    if isinstance(m, CraftOption):
        return "craft:" + m.key
    if isinstance(m, SmeltOption):
        return f"smelt:{m.input}:{m.station}"
    return f"{m.kind}:{m.source}"
