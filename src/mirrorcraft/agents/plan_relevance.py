"""What a planner derives from its belief, goal and rules alone: which items can matter
for a goal with the compiled ways that use each of them, and the rules' bulk blocks,
fuels and facilities.

The planner settles unit costs only over these items (``Planner._unit_costs``). The walk
depends only on the belief and the goal, so it is kept: shared by every episode whose
belief was copied from the same shared belief and went through the same revisions
(``Belief.root`` and ``Belief.revisions``), and per belief and version otherwise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from mirrorcraft.agents.knowledge import Belief, expand_refs
from mirrorcraft.agents.plan_costs import Entry, Use, way_use
from mirrorcraft.body.config import default_body_config
from mirrorcraft.rules.ruleset import RuleSet

Uses = dict[str, list[Use]]
Compiled = tuple[dict[str, tuple[Entry, ...]], Uses]
Relevance = tuple[list[str], Uses, Compiled]
_SHARED: dict[tuple[int, tuple[Any, ...], tuple[str, ...]], tuple[object, Relevance]] = {}
"""(id of the shared belief a belief was copied from, the revisions made to the copy since,
goal) -> (that shared belief, the relevance): every episode planning with the same rules
whose belief went through the same revisions gets the same relevance (the shared belief
is kept, so its id cannot be reused while the entry is here)."""
_OWN: dict[int, tuple[object, int, tuple[str, ...], Relevance]] = {}
"""id of a belief not copied from a shared one -> (that belief, its version, goal,
relevance)."""
CACHE_LIMIT = 64
SHARED_LIMIT = 1024
"""Relevances kept by revision history: a grid of the adaptive planner meets a few hundred."""


def relevance(
    belief: Belief, goal_items: tuple[str, ...], fuel_choices: Sequence[str]
) -> Relevance:
    """The relevant items (sorted), for each item the ways of relevant items using it (as
    ``plan_costs.Use``: the user first, then the compiled way), and the compiled ways that
    produce each relevant item together with those uses."""
    root = belief.root
    key = (id(root), belief.revisions, goal_items)
    if root is not None:
        shared = _SHARED.get(key)
        if shared is not None and shared[0] is root:
            return shared[1]
    else:
        own = _OWN.get(id(belief))
        if (
            own is not None
            and own[0] is belief
            and own[1] == belief.version
            and own[2] == goal_items
        ):
            return own[3]
    todo = [
        *list(goal_items),
        "enchanting_table",
        "lapis_lazuli",
        *belief.config.enchant_candidates,
    ]
    todo += [f for f in fuel_choices if f in belief.rules.game.items]
    produced_by, harvest, fuels = belief.produced_by, belief.harvest, belief.rules.fuels
    seen: set[str] = set()
    uses: dict[str, list[Use]] = defaultdict(list)
    produced: dict[str, tuple[Entry, ...]] = {}
    while todo:
        item = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        entries = []
        for m in produced_by.get(item, ()):
            use, deps = way_use(m, item, fuels, fuel_choices, harvest)
            entries.append(use[1])
            if item != "inventory":  # not a relevant item: its ways are never settled
                for d in deps:
                    uses[d].append(use)
            todo.extend(deps)
        produced[item] = tuple(entries)
    seen.discard("inventory")
    relevant = sorted(seen)
    found = dict(uses)
    entry: Relevance = (relevant, found, ({i: produced[i] for i in relevant}, found))
    if root is not None:
        if len(_SHARED) > SHARED_LIMIT:
            _SHARED.clear()
        _SHARED[key] = (root, entry)
    else:
        if len(_OWN) > CACHE_LIMIT:
            _OWN.clear()
        _OWN[id(belief)] = (belief, belief.version, goal_items, entry)
    return entry


_SETUP: dict[tuple[int, int], tuple[Any, Any, set[str], list[str], frozenset[str]]] = {}


def rules_setup(rules: RuleSet, cfg: Any) -> tuple[set[str], list[str], frozenset[str]]:
    """What a planner derives from its rules and settings alone (the same every decision):
    bulk blocks, fuels best first, facilities never burnt. Kept per (rules, settings)."""
    key = (id(rules), id(cfg))
    hit = _SETUP.get(key)
    if hit is None or hit[0] is not rules or hit[1] is not cfg:
        bulk = set(expand_refs(rules, cfg.bulk_blocks))
        fuels = sorted(
            (i for i in rules.fuels if rules.fuels[i] > 0 and i not in rules.game.tools),
            key=lambda i: (-rules.fuels[i], i),
        )
        if len(_SETUP) > CACHE_LIMIT:
            _SETUP.clear()
        hit = _SETUP[key] = (rules, cfg, bulk, fuels, frozenset(default_body_config().facilities))
    return set(hit[2]), list(hit[3]), hit[4]
