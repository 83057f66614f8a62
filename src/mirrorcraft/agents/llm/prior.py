"""The vanilla recipe hypotheses of the shared observation block.

A ``VanillaPrior`` holds the packaged vanilla pack's crafting options whose output
matters to a task: a public prior every configuration may see, never the
connected world's rules. For an inventory it lists the options worth trying, each
with a grid filled from what is owned and what is still missing.

The list is cached per inventory (as far as it matters), and a grid is refilled
only for the options whose input counts changed since the last list was made:
the same counts of an option's inputs always fill the same grid.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mirrorcraft.agents.knowledge import Belief, CraftOption, build_belief
from mirrorcraft.agents.llm.history import j
from mirrorcraft.agents.plan_types import Memory, goal_of
from mirrorcraft.agents.planner import Planner
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.ruleset import RuleSet

HYPOTHESIS_LIMIT = 8
FACILITIES = ("crafting_table", "furnace", "blast_furnace", "smoker", "enchanting_table")


_Cells = tuple[tuple[tuple[str, ...] | None, ...], ...]


@dataclass(frozen=True)
class _Option:
    """A crafting option prepared for filling grids: each cell's alternatives sorted once."""

    output: str
    count: int
    station: str
    facility: bool
    """The output is a facility (skipped once one is owned)."""
    items: frozenset[str]
    rows: _Cells

    @classmethod
    def of(cls, option: CraftOption) -> _Option:
        rows = tuple(
            tuple(None if cell is None else tuple(sorted(cell)) for cell in row)
            for row in option.rows
        )
        items = frozenset(i for row in option.rows for cell in row if cell for i in cell)
        output, count = option.outputs[0]
        return cls(output, count, option.station, output in FACILITIES, items, rows)

    def fill(
        self, inventory: dict[str, int], owned: dict[tuple[str, ...], tuple[str, ...]]
    ) -> tuple[list[list[str | None]], dict[str, int]]:
        """``concrete_grid`` for this option: each cell takes its most plentiful alternative
        left (the first in sorted order on a tie, so the first of all when none is left),
        and what runs short is missing. ``owned`` narrows a cell's alternatives to those
        owned (filled in here; shared by the options filled from one inventory)."""
        used: dict[str, int] = {}
        missing: dict[str, int] = {}
        grid: list[list[str | None]] = []
        for row in self.rows:
            out: list[str | None] = []
            for alts in row:
                if alts is None:
                    out.append(None)
                    continue
                candidates = owned.get(alts)
                if candidates is None:
                    candidates = owned[alts] = tuple(a for a in alts if inventory.get(a, 0) > 0)
                choice, have = alts[0], 0
                for alt in candidates:
                    left = inventory[alt] - used.get(alt, 0)
                    if left > have:
                        choice, have = alt, left
                if have > 0:
                    used[choice] = used.get(choice, 0) + 1
                else:
                    missing[choice] = missing.get(choice, 0) + 1
                out.append(choice)
            grid.append(out)
        return grid, missing


@dataclass
class VanillaPrior:
    """Static vanilla recipes relevant to a task (the prior every configuration may see)."""

    belief: Belief
    relevant: frozenset[str]
    options: tuple[CraftOption, ...] = ()
    """The vanilla crafting options whose output is relevant (filtered once)."""
    singular: frozenset[str] = frozenset(FACILITIES)
    """Items of which one is enough (facilities, and items that do not stack: tools, armour)."""
    _cache: dict[Any, tuple[list[dict[str, Any]], str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Hypotheses and their JSON text by inventory and facilities (as far as they matter)."""
    _counts: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    """The inventory the grids in ``_fills`` were filled from."""
    _fills: dict[int, tuple[list[list[str | None]], dict[str, int]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Option index -> its grid and missing items for the inventory ``_counts``."""
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )
    """Held while ``_counts`` and ``_fills`` change (a prior is shared by every agent of a
    process, and one might act from another thread)."""

    @classmethod
    def for_task(cls, vanilla: RuleSet, task: str) -> VanillaPrior:
        """The prior for a task (shared: it is only read, and its hypotheses depend on
        nothing but the inventory and facilities they are asked about)."""
        key = (id(vanilla), task)
        hit = _PRIORS.get(key)
        if hit is not None and hit[0] is vanilla:
            return hit[1]
        prior = cls._build(vanilla, task)
        if len(_PRIORS) > 64:
            _PRIORS.clear()
        _PRIORS[key] = (vanilla, prior)
        return prior

    @classmethod
    def _build(cls, vanilla: RuleSet, task: str) -> VanillaPrior:
        belief = build_belief(vanilla)
        goal = goal_of(vanilla, get_task(task).final.advancement)
        items, _uses = Planner(belief, Memory())._relevant(goal[1])
        relevant = frozenset(items)
        options = tuple(o for o in belief.crafts if o.outputs and o.outputs[0][0] in relevant)
        singular = frozenset(FACILITIES) | frozenset(
            item for item, stack in vanilla.game.items.items() if stack == 1
        )
        return cls(belief, relevant, options, singular)

    @cached_property
    def _prepared(
        self,
    ) -> tuple[tuple[_Option, ...], frozenset[str], frozenset[str], dict[str, tuple[int, ...]]]:
        """The options prepared for filling; every item whose count can change the
        hypotheses (an input of an option, or a facility an option makes); every station
        an option needs; and for each input, the options that use it."""
        prepared = tuple(_Option.of(o) for o in self.options)
        items = frozenset(i for o in prepared for i in o.items) | frozenset(
            o.output for o in prepared if o.facility
        )
        users: dict[str, list[int]] = {}
        for k, option in enumerate(prepared):
            for item in option.items:
                users.setdefault(item, []).append(k)
        return (
            prepared,
            items,
            frozenset(o.station for o in prepared),
            {item: tuple(ks) for item, ks in users.items()},
        )

    def hypotheses(self, inventory: dict[str, int], facilities: set[str]) -> list[dict[str, Any]]:
        """The vanilla recipes worth trying with what is owned (a fresh copy: callers may
        change it)."""
        return copies(self.hypotheses_text(inventory, facilities)[0])

    def hypotheses_text(
        self, inventory: dict[str, int], facilities: set[str]
    ) -> tuple[list[dict[str, Any]], str]:
        """The hypotheses as this prior keeps them (never to be changed) and their compact
        JSON text, cached per inventory and facilities as far as they matter: the same
        counts of the items the options use and the same stations give the same list."""
        _options, items, stations, _users = self._prepared
        key = (
            tuple(kv for kv in sorted(inventory.items()) if kv[0] in items),
            frozenset(facilities) & stations,
        )
        known = self._cache.get(key)
        if known is None:
            with self._lock:
                found = self._hypotheses(inventory, facilities)
            if len(self._cache) > 256:
                self._cache.clear()
            known = self._cache[key] = (found, j(found))
        return known

    def _refill(self, inventory: dict[str, int]) -> None:
        """Forget the grids of the options an input of which changed count since ``_counts``."""
        last, users = self._counts, self._prepared[3]
        for item in inventory.keys() | last.keys():
            if inventory.get(item, 0) != last.get(item, 0):
                for k in users.get(item, ()):
                    self._fills.pop(k, None)
        self._counts = dict(inventory)

    def _hypotheses(self, inventory: dict[str, int], facilities: set[str]) -> list[dict[str, Any]]:
        self._refill(inventory)
        fills = self._fills
        options, _items, _stations, users = self._prepared
        # The options that use something owned, in their order.
        using: set[int] = set()
        for item, n in inventory.items():
            if n > 0:
                using.update(users.get(item, ()))
        narrowed: dict[tuple[str, ...], tuple[str, ...]] = {}
        found: list[tuple[tuple[bool, int, str], int, bool]] = []
        for k in sorted(using):
            option = options[k]
            if option.facility and option.output in inventory:
                continue
            filled = fills.get(k)
            if filled is None:
                filled = fills[k] = option.fill(inventory, narrowed)
            ready = option.station == "inventory" or option.station in facilities
            executable = not filled[1] and ready
            found.append(((not executable, len(filled[1]), option.output), k, ready))
        found.sort(key=lambda f: f[0])  # stable: ties keep the options' order
        out = []
        for (not_executable, _missing, _output), k, ready in found[:HYPOTHESIS_LIMIT]:
            option = options[k]
            grid, missing = fills[k]
            out.append(
                {
                    "output": option.output,
                    "count": option.count,
                    "station": option.station,
                    "grid": grid,
                    "missing": missing,
                    "executable": not not_executable,
                    "stationReady": ready,
                }
            )
        return out


def copies(hypotheses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of hypotheses a prior keeps, to hand out (grids and missing items included)."""
    return [
        {**h, "grid": [list(row) for row in h["grid"]], "missing": dict(h["missing"])}
        for h in hypotheses
    ]


_PRIORS: dict[tuple[int, str], tuple[RuleSet, VanillaPrior]] = {}
