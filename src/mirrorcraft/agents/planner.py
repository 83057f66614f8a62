"""A goal-regression planner over believed rules, re-planned from the observation each step.

Given what it believes crafting, smelting, mining and fighting yield (a Belief),
the planner estimates the cost in actions of every way to obtain an item,
recursively, and expands the cheapest way into its first unmet prerequisite:
a station to place, a tool to make, an input to gather, a block to mine or to
explore for. That prerequisite becomes the next action. A virtual inventory
reserves items while the plan is expanded, so sibling needs are counted once.
Actions that already failed in the same inventory state are not repeated.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

from mirrorcraft.agents import plan_native
from mirrorcraft.agents.knowledge import (
    Belief,
    CraftOption,
    SmeltOption,
    SourceOption,
    concrete_grid,
)
from mirrorcraft.agents.plan_costs import CRAFT, SMELT, SOURCE, Entry, Use
from mirrorcraft.agents.plan_estimates import FUEL_CHOICES, INF, CostEstimates
from mirrorcraft.agents.plan_relevance import Uses, relevance, rules_setup
from mirrorcraft.agents.plan_types import Blocked, Memory, PlanStep, action_key, inventory_key
from mirrorcraft.body.enchanting import is_enchantable
from mirrorcraft.body.observation import Observation

MAX_DEPTH = 24
FACILITY_RANGE = 30.0
FURNACES = ("furnace", "blast_furnace", "smoker")


class Planner(CostEstimates):
    def __init__(self, belief: Belief, memory: Memory):
        self.b = belief
        self.mem = memory
        self.bulk, self.fuels, self.no_burn = rules_setup(belief.rules, belief.config)

    # -- entry point ----------------------------------------------------------------
    def decide(self, obs: Observation, goal: tuple[str, tuple[str, ...]]) -> PlanStep | None:
        self.inv: dict[str, int] = dict(obs.inventory)
        self.obs_inventory = obs.inventory
        self._discount_worn(obs)
        self.near = {n.id: n.distance for n in obs.nearby_blocks}
        self.facilities = {n.id for n in obs.facilities if n.distance <= FACILITY_RANGE}
        self.entities = {n.id for n in obs.nearby_entities}
        self.drops = {n.id for n in obs.nearby_drops}
        self.mem.seen.update(self.near)
        self.mem.seen.update(self.entities)
        self._inv_key: str | None = None  # made when a failure is looked up (_failed)
        self.unit: dict[str, float] = {}
        vinv = dict(self.inv)
        kind, items = goal
        # What the body will burn: it never burns tools or facilities (data/body.yaml).
        self.fuel_ticks = sum(
            self.b.rules.fuels.get(i, 0) * c
            for i, c in self.inv.items()
            if i not in self.b.rules.game.tools and i not in self.no_burn
        )
        self._unit_costs(*self._relevant(items))
        try:
            if kind == "enchant":
                step = self._enchant(vinv)
                return None if step is None else self._before_leaving(step, obs)
            if any(self.inv.get(i, 0) > 0 for i in items):
                return None
            best = sorted(items, key=lambda i: (self.cost(i, 1), i))
            for item in best:
                try:
                    step = self.expand(item, 1, vinv, 0, frozenset())
                except Blocked:
                    continue
                if step is not None:
                    return self._before_leaving(step, obs)
        except Blocked:
            return None
        return None

    def _discount_worn(self, obs: Observation) -> None:
        """Leave nearly worn-out tools out of the plan: their replacements come first."""
        limit = self.b.config.worn_tool_uses
        tools = self.b.rules.game.tools
        for copy in obs.durability:
            item, left = str(copy.get("item")), copy.get("remaining")
            if item in tools and isinstance(left, int) and left < limit and self.inv.get(item):
                self.inv[item] -= 1
                if self.inv[item] <= 0:
                    del self.inv[item]

    def _before_leaving(self, step: PlanStep, obs: Observation) -> PlanStep:
        """Take a placed crafting table along before travelling away from it."""
        if step.action["skill"] != "explore" or self.inv.get("crafting_table", 0) > 0:
            return step
        table = next((n for n in obs.facilities if n.id == "crafting_table"), None)
        if table is None or table.distance > 6:
            return step
        pick = {"skill": "mine", "args": {"block": "crafting_table", "count": 1}}
        if self._failed(pick):
            return step
        return PlanStep(pick, "take the crafting table along before moving on")

    # -- cost estimates ---------------------------------------------------------------
    def _relevant(self, goal_items: tuple[str, ...]) -> tuple[list[str], Uses]:
        """Items that can matter for the goal, and for each item the ways of relevant items
        using it (``plan_relevance.relevance``); the compiled ways are kept for costing."""
        relevant, uses, self._compiled = relevance(self.b, goal_items, FUEL_CHOICES)
        return relevant, uses

    def _unit_costs(self, relevant: list[str], uses: Uses) -> None:
        """Marginal cost of one more unit of each relevant item.

        Knuth's generalisation of Dijkstra's algorithm: every method costs at least as
        much as each of its inputs, so items are finalised cheapest first, and only the
        methods that use a newly finalised item are re-evaluated.

        Where the compiled core is built, it computes the same floats (``plan_native``);
        the code below is the reference the tests compare it with.
        """
        if plan_native.ENABLED:
            compiled = plan_native.unit_costs(self, relevant)
            if compiled is not None:
                self.unit = compiled
                return
        self.unit = unit = dict.fromkeys(relevant, INF)
        produced, uses_of = self._compiled
        no_uses: list[Use] = []
        unit_cost, tools = self._cost_function()
        inv_get, unit_get = self.inv.get, unit.get
        heap: list[tuple[float, str]] = []
        for item in relevant:
            best = INF  # only a value below INF is kept, so larger ones need not be told apart
            for e in produced.get(item, ()):
                if e[0] == SMELT and inv_get(e[3], 0) < e[4] and unit_get(e[3], INF) >= INF:
                    continue  # its input cannot be had: INF (see the same test below)
                value = unit_cost(e)
                if value < best:
                    best = value
            if best < INF:
                unit[item] = best
                heap.append((best, item))
        heapq.heapify(heap)
        final: set[str] = set()
        push, pop = heapq.heappush, heapq.heappop
        while heap:
            c, item = pop(heap)
            if item in final or c > unit[item]:
                continue
            final.add(item)
            for user, entry, smelted, units in uses_of.get(item, no_uses):
                if user in final:  # (every user is relevant, so it has a unit cost)
                    continue
                if smelted is not None:
                    if inv_get(smelted, 0) < units and unit_get(smelted, INF) >= INF:
                        # Its input is still not owned and cannot be had: the cost would be
                        # at least INF, which changes nothing (every fuel is a user of each
                        # smelt, so most re-evaluations end here without a call).
                        continue
                elif entry[0] == SOURCE and tools.get(entry[2], ()) is None:
                    # Mined with a tool owned (or by hand): its cost is what the first pass
                    # found, already no lower than the item's cost, so it changes nothing.
                    continue
                value = unit_cost(entry)
                if value < unit[user] - 1e-9:
                    unit[user] = value
                    push(heap, (value, user))

    def _cost_function(
        self,
    ) -> tuple[Callable[[Entry], float], dict[str, tuple[str, ...] | None]]:
        """``_method_cost(m, item, 1)`` of a compiled way (see plan_costs), reading the unit
        costs as they are being settled: the same floats as ``_method_cost``, except that a
        value >= INF may come back as INF (no caller tells them apart). What depends only
        on this step (stations owned, tools owned, exploring) is worked out once; the
        second value is that per block: None when no tool is needed or one is owned, else
        the tools that would harvest it."""
        inv, unit = self.inv, self.unit
        fuels = self.b.rules.fuels
        fuel_ticks = self.fuel_ticks
        stations: dict[str, float | None] = {}
        tools: dict[str, tuple[str, ...] | None] = {}
        explore: dict[tuple[str, str], float] = {}

        inv_get, unit_get, fuels_get, stations_get = inv.get, unit.get, fuels.get, stations.get
        facilities = self.facilities

        def station_fixed(station: str) -> float | None:
            """0 for a station at hand, 1 for one to place, None for one to make."""
            if station == "inventory" or station in facilities:
                fixed: float | None = 0.0
            elif inv_get(station, 0) > 0:
                fixed = 1.0
            else:
                fixed = None
            stations[station] = fixed
            return fixed

        def tool_cost(block: str) -> float:
            if block in tools:
                able = tools[block]
            else:
                owned = self.b.harvest.get(block, frozenset())
                free = "hand" in owned or any(inv.get(t, 0) > 0 for t in owned)
                able = tools[block] = None if free else tuple(sorted(owned))
            if able is None:
                return 0.0
            best = INF  # min(..., default=INF), without a generator
            for t in able:
                c = unit_get(t, INF)
                if c < best:
                    best = c
            return best

        def cost(e: Entry) -> float:
            kind = e[0]
            if kind == CRAFT:
                station = e[2]
                fixed = stations_get(station, -1.0)
                if fixed == -1.0:
                    fixed = station_fixed(station)
                total: float = e[1] + (1.0 + unit_get(station, INF) if fixed is None else fixed)
                for one, items, n in e[3]:
                    if one is not None:  # a cell with one item: no alternatives to compare
                        need = n - inv_get(one, 0)
                        best = 0.0 if need <= 0 else unit_get(one, INF) * need
                    else:
                        best = INF
                        first = True
                        for i in items:
                            need = n - inv_get(i, 0)
                            c = 0.0 if need <= 0 else unit_get(i, INF) * need
                            if first or c < best:
                                best, first = c, False
                    total += best
                    if total >= INF:
                        return INF
                return total
            if kind == SMELT:
                _k, sixth, station, source, units, need, pairs = e
                sixth_f: float = sixth
                need_in = units - inv_get(source, 0)
                cost_in = 0.0 if need_in <= 0 else unit_get(source, INF) * need_in
                if cost_in >= INF:
                    # Every other term is >= 0: the sum is >= INF, which changes no cost
                    # (callers keep only values below INF), so the rest is not added up.
                    return INF
                if fuel_ticks - fuels_get(source, 0) * inv_get(source, 0) >= need:
                    fuel = 0.0
                else:
                    fuel = INF
                    for f, mult in pairs:
                        v = unit_get(f, INF) * mult
                        if v < fuel:  # min(fuel, v), which keeps fuel unless v is lower
                            fuel = v
                fixed = stations_get(station, -1.0)
                if fixed == -1.0:
                    fixed = station_fixed(station)
                total = sixth_f + (1.0 + unit_get(station, INF) if fixed is None else fixed) + fuel
                return total + cost_in
            if kind == SOURCE:
                key = (e[2], e[3])
                seen = explore.get(key)
                if seen is None:
                    seen = explore[key] = self.explore_cost(e[2], e[3])
                base: float = e[1]
                total = base + seen
                if e[3] == "block":
                    total += tool_cost(e[2])
                return total
            return INF

        return cost, tools

    # -- expansion into the next action -----------------------------------------------
    def expand(
        self, item: str, n: int, vinv: dict[str, int], depth: int, stack: frozenset[str]
    ) -> PlanStep | None:
        take = min(vinv.get(item, 0), n)
        if take:
            vinv[item] -= take
            n -= take
        if n <= 0:
            return None
        if depth > MAX_DEPTH or item in stack:
            raise Blocked(item)
        for _c, m in self.methods(item, n):
            trial = dict(vinv)
            try:
                step = self._expand_method(m, item, n, trial, depth, stack | {item})
            except Blocked:
                continue
            vinv.clear()
            vinv.update(trial)
            return step
        raise Blocked(item)

    def _checked(
        self, action: dict[str, Any], thought: str, expects: tuple[str, Any] | None = None
    ) -> PlanStep:
        if self._failed(action):
            raise Blocked(action_key(action))
        return PlanStep(action, thought, expects)

    def _failed(self, action: dict[str, Any]) -> bool:
        """Failed before with this inventory (the agent's keys; none made if none failed)."""
        failures = self.mem.failures
        if not failures:
            return False
        if self._inv_key is None:
            self._inv_key = inventory_key(self.obs_inventory)
        return (action_key(action), self._inv_key) in failures

    def _expand_method(
        self, m: Any, item: str, n: int, vinv: dict[str, int], depth: int, stack: frozenset[str]
    ) -> PlanStep | None:
        if isinstance(m, CraftOption):
            return self._craft(m, item, n, vinv, depth, stack)
        if isinstance(m, SmeltOption):
            return self._smelt(m, item, n, vinv, depth, stack)
        assert isinstance(m, SourceOption)
        y = m.yields.get(item, 1.0)
        count = max(1, math.ceil(n / y))
        if m.kind == "mob":
            if m.source not in self.entities:
                return self._explore(m.source)
            return self._checked(
                {"skill": "attack", "args": {"target": m.source, "count": min(4, count)}},
                f"defeat {m.source} for {item}",
            )
        able = self.b.harvest.get(m.source, frozenset())
        if "hand" not in able and not any(self.inv.get(t, 0) > 0 for t in able):
            tools = sorted(able, key=lambda t: (self.cost(t, 1), t))
            for tool in tools:
                try:
                    step = self.expand(tool, 1, dict(self.inv), depth + 1, stack)
                except Blocked:
                    continue
                if step is not None:
                    return step
            raise Blocked(m.source)
        if m.source not in self.near:
            return self._explore(m.source)
        batch = 4 if m.source in self.bulk else min(4, count)
        return self._checked(
            {"skill": "mine", "args": {"block": m.source, "count": batch}},
            f"mine {m.source} for {item}",
        )

    def _explore(self, target: str) -> PlanStep:
        # A target recently not found costs more (see explore_cost), so other ways win when
        # they exist; when it is the only way, exploring further regions is still worth it.
        return self._checked({"skill": "explore", "args": {"target": target}}, f"look for {target}")

    def ensure_station(
        self, station: str, vinv: dict[str, int], depth: int, stack: frozenset[str]
    ) -> PlanStep | None:
        if station == "inventory" or station in self.facilities:
            return None
        if self.inv.get(station, 0) > 0:
            vinv[station] = max(vinv.get(station, 0) - 1, 0)
            return self._checked(
                {"skill": "place", "args": {"block": station}}, f"place a {station}"
            )
        step = self.expand(station, 1, vinv, depth + 1, stack)
        return (
            step
            if step is not None
            else self._checked({"skill": "place", "args": {"block": station}}, f"place a {station}")
        )

    def _craft(
        self,
        m: CraftOption,
        item: str,
        n: int,
        vinv: dict[str, int],
        depth: int,
        stack: frozenset[str],
    ) -> PlanStep | None:
        q = m.yields[item]
        k = math.ceil(n / q)
        for qty, names in m.ordered_inputs:
            need = qty * k
            covered = sum(vinv.get(i, 0) for i in names) >= need
            # Take what is held, the items held most first (ties by name).
            order = names if len(names) == 1 else sorted(names, key=lambda i: (-vinv.get(i, 0), i))
            for i in order:
                use = min(vinv.get(i, 0), need)
                vinv[i] = vinv.get(i, 0) - use
                need -= use
            if covered:
                continue
            target = min(names, key=lambda i: (self.cost(i, need), i))
            sub = self.expand(target, need, vinv, depth + 1, stack)
            if sub is not None:
                return sub
        step = self.ensure_station(m.station, vinv, depth, stack)
        if step is not None:
            return step
        grid = self._concrete_grid(m)
        if grid is None:
            raise Blocked(m.key)
        return self._checked(
            {"skill": "craft_grid", "args": {"station": m.station, "grid": grid}},
            f"craft {item} at {m.station}",
            ("craft", m.key),
        )

    def _concrete_grid(self, m: CraftOption) -> list[list[str | None]] | None:
        rows, missing = concrete_grid(m, self.inv)
        return None if missing else rows

    def _smelt(
        self,
        m: SmeltOption,
        item: str,
        n: int,
        vinv: dict[str, int],
        depth: int,
        stack: frozenset[str],
    ) -> PlanStep | None:
        q = m.yields[item]
        units = math.ceil(n / q)
        sub = self.expand(m.input, units, vinv, depth + 1, stack)
        if sub is not None:
            return sub
        batch = max(1, min(6, units, self.inv.get(m.input, 0)))
        owned = self._owned_fuel_ticks(m.input)
        if owned < batch * 200:
            try:
                sub = self._fuel_for(m, (batch * 200 - owned + 199) // 200, vinv, depth, stack)
            except Blocked:
                if owned < 200:
                    raise
                sub = None
            if sub is not None:
                return sub
            # Smelt what the owned fuel can run; the rest in a later batch.
            batch = max(1, min(batch, owned // 200))
        step = self.ensure_station(m.station, vinv, depth, stack)
        if step is not None:
            return step
        return self._checked(
            {"skill": "smelt", "args": {"input": m.input, "station": m.station, "count": batch}},
            f"smelt {m.input} for {item}",
            ("smelt", (m.input, m.station)),
        )

    def _fuel_for(
        self, m: SmeltOption, units: int, vinv: dict[str, int], depth: int, stack: frozenset[str]
    ) -> PlanStep | None:
        """The next step towards fuel for ``units`` more items, or None when there is none to do."""
        fuel = min(
            (f for f in FUEL_CHOICES if f != m.input and self.b.rules.fuels.get(f, 0) > 0),
            key=lambda f: (self.cost(f, math.ceil(units * 200 / self.b.rules.fuels[f])), f),
            default=None,
        )
        if fuel is None:
            raise Blocked("fuel")
        need = math.ceil(units * 200 / self.b.rules.fuels[fuel])
        return self.expand(fuel, need, vinv, depth + 1, stack)

    def _enchant(self, vinv: dict[str, int]) -> PlanStep | None:
        step = self.ensure_station("enchanting_table", vinv, 0, frozenset())
        if step is not None:
            return step
        sub = self.expand("lapis_lazuli", 1, vinv, 1, frozenset())
        if sub is not None:
            return sub
        game = self.b.rules.game
        owned = [
            i
            for i in self.b.config.enchant_candidates
            if vinv.get(i, 0) > 0 and is_enchantable(game, i)
        ]
        if not owned:
            candidates = [i for i in self.b.config.enchant_candidates if is_enchantable(game, i)]
            target = min(candidates, key=lambda i: (self.cost(i, 1), i))
            sub = self.expand(target, 1, vinv, 1, frozenset())
            if sub is not None:
                return sub
            owned = [target]
        return self._checked(
            {"skill": "enchant", "args": {"item": owned[0], "option": "lowest"}},
            f"enchant {owned[0]}",
        )
