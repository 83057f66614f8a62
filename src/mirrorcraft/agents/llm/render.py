"""The shared observation block every LLM configuration receives.

``observation_fields`` computes the values of every field of the paper's shared
observation block (appendix L.8): goal, task route, task state, budget, current
blocker, inventory, equipment, experience, capabilities, the three facility
lines (available facility fact, observed facilities, owned unplaced
facilities), nearby targets, drops and entities, completed advancements,
position, current progress, verified action effects, static vanilla recipe
hypotheses, actionable verified transformations, the two unused-output
warnings, last-action feedback, the stagnation warning with the forbidden exact
action, blocked-action prerequisites, failure and stagnation cycles and, for a
configuration that keeps them, its learned rules. ``render_fields`` writes them
as lines in the paper's order from the template file ``prompts/observation.md``;
enchanted items, biome and survival are MirrorCraft additions. The recipe
hypotheses come from the packaged vanilla pack: a public prior, never the
connected world's rules. Nothing here says whether the rules differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mirrorcraft.agents.knowledge import Belief, CraftOption, build_belief
from mirrorcraft.agents.llm.history import History
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.agents.planner import Memory, Planner, goal_of
from mirrorcraft.body.observation import Observation
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.ruleset import RuleSet

HYPOTHESIS_LIMIT = 8
FACILITIES = ("crafting_table", "furnace", "blast_furnace", "smoker", "enchanting_table")
JAVA_VERSION = "1.19"
REPEATS_BEFORE_BLOCK = 3
"""A transformation repeated this many times in a row with its output unused gets the
blocking variant of the unused-output warning (the quantity-check variant before)."""


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def j(value: Any) -> str:
    """Compact JSON with sorted keys (one shared encoder: the same text as ``json.dumps``
    with these options, without building an encoder per value)."""
    return _ENCODER.encode(value)


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
    _cache: dict[Any, list[dict[str, Any]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

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
    def _prepared(self) -> tuple[tuple[_Option, ...], frozenset[str], frozenset[str]]:
        """The options prepared for filling, every item whose count can change the
        hypotheses (an input of an option, or a facility an option makes), and every
        station an option needs."""
        prepared = tuple(_Option.of(o) for o in self.options)
        items = frozenset(i for o in prepared for i in o.items) | frozenset(
            o.output for o in prepared if o.facility
        )
        return prepared, items, frozenset(o.station for o in prepared)

    def hypotheses(self, inventory: dict[str, int], facilities: set[str]) -> list[dict[str, Any]]:
        """The vanilla recipes worth trying with what is owned (cached per inventory and
        facilities as far as they matter: the same counts of the items the options use
        and the same stations always give the same list)."""
        _options, items, stations = self._prepared
        key = (
            tuple(kv for kv in sorted(inventory.items()) if kv[0] in items),
            frozenset(facilities) & stations,
        )
        known = self._cache.get(key)
        if known is None:
            if len(self._cache) > 256:
                self._cache.clear()
            known = self._cache[key] = self._hypotheses(inventory, facilities)
        return [
            {**h, "grid": [list(row) for row in h["grid"]], "missing": dict(h["missing"])}
            for h in known
        ]

    def _hypotheses(self, inventory: dict[str, int], facilities: set[str]) -> list[dict[str, Any]]:
        owned = {i for i, n in inventory.items() if n > 0}
        narrowed: dict[tuple[str, ...], tuple[str, ...]] = {}
        found: list[tuple[tuple[bool, int, str], dict[str, Any]]] = []
        for option in self._prepared[0]:
            if option.facility and option.output in inventory:
                continue
            if option.items.isdisjoint(owned):
                continue
            grid, missing = option.fill(inventory, narrowed)
            ready = option.station == "inventory" or option.station in facilities
            executable = not missing and ready
            hypothesis = {
                "output": option.output,
                "count": option.count,
                "station": option.station,
                "grid": grid,
                "missing": missing,
                "executable": executable,
                "stationReady": ready,
            }
            found.append(((not executable, len(missing), option.output), hypothesis))
        found.sort(key=lambda f: f[0])  # stable: ties keep the options' order
        return [hypothesis for _key, hypothesis in found[:HYPOTHESIS_LIMIT]]


_PRIORS: dict[tuple[int, str], tuple[RuleSet, VanillaPrior]] = {}


def capabilities(obs: Observation, tools: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Owned tools by kind (best tier); facilities have their own lines."""
    best: dict[str, str] = {}
    order = ["wood", "gold", "stone", "iron", "diamond", "netherite"]
    for item in obs.inventory:
        if item in tools:
            kind, tier = tools[item]
            if kind not in best or order.index(tier) > order.index(best[kind]):
                best[kind] = tier
    return {"tools": best}


def owned_unplaced(obs: Observation) -> list[dict[str, Any]]:
    """Facilities in the inventory, each with the action that places it."""
    return [
        {
            "item": item,
            "count": obs.inventory[item],
            "place": {"skill": "place", "args": {"block": item}},
        }
        for item in sorted(i for i in obs.inventory if i in FACILITIES)
    ]


def highest_completed(obs: Observation) -> str:
    done = [m for m in obs.progress.milestones if m.done]
    if not done:
        return "none"
    best = max(done, key=lambda m: m.value)
    return f"{best.title} ({best.advancement})"


def unused_output_variant(warning: dict[str, Any] | None, singular: frozenset[str]) -> str | None:
    """``blocked`` when one of the unused output suffices or the repeat ran long, else ``quantity``."""
    if not warning:
        return None
    if warning.get("times", 0) >= REPEATS_BEFORE_BLOCK or any(
        item in singular for item in warning["output_in_inventory"]
    ):
        return "blocked"
    return "quantity"


def blocker(history: History) -> dict[str, Any] | None:
    if not history.steps or history.steps[-1].result.ok:
        return None
    r = history.steps[-1].result
    return {"action": history.steps[-1].action, "reason": r.reason, "message": r.message}


def actionable(history: History, inventory: dict[str, int]) -> list[dict[str, Any]]:
    """Verified transformations doable now that produce an item a blocked action misses."""
    wanted = set()
    for s in history.steps[-8:]:
        item = s.result.details.get("item") if s.result.reason == "missing_item" else None
        if isinstance(item, str):
            wanted.add(item)
    out = []
    for e in history.verified_effects():
        if set(e["produced"]) & wanted and all(
            inventory.get(k, 0) >= v for k, v in e["consumed"].items()
        ):
            out.append(e)
    return out


def observation_fields(
    obs: Observation, history: History, prior: VanillaPrior, tools: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    """Every field of the shared observation block, as plain JSON-able values."""
    p = obs.progress
    inv = dict(obs.inventory)
    last = obs.last_result
    warning = history.unused_output(inv)
    repeats = history.repeat_count()
    return {
        "goal": f"the advancement {p.milestones[-1].title} ({p.milestones[-1].advancement})",
        "task": {
            "title": p.title,
            "route": [
                {
                    "id": m.advancement,
                    "title": m.title,
                    "points": m.value,
                    "description": m.description,
                }
                for m in p.milestones
            ],
        },
        "task_state": {
            "progress": p.score,
            "next_milestone": p.next_milestone,
            "completed_milestones": [m.advancement for m in p.milestones if m.done],
        },
        "action_budget": {
            "used": obs.budget.used,
            "remaining": obs.budget.remaining,
            "total": obs.budget.total,
        },
        "current_blocker": blocker(history),
        "inventory": inv,
        "enchanted_items": obs.enchanted_items,
        "tool_durability": obs.durability,
        "equipped": obs.equipped,
        "experience": {"level": obs.experience_level},
        "capabilities": capabilities(obs, tools),
        "nearby_facilities": sorted({f.id for f in obs.facilities}),
        "observed_facilities": [
            {"block": f.id, "nearestDistance": f.distance} for f in obs.facilities
        ],
        "owned_unplaced_facilities": owned_unplaced(obs),
        "nearby_targets": [
            {"block": n.id, "nearestDistance": n.distance} for n in obs.nearby_blocks
        ],
        "nearby_drops": [
            {"item": n.id, "count": n.count, "nearestDistance": n.distance}
            for n in obs.nearby_drops
        ],
        "nearby_entities": [
            {"type": n.id, "count": n.count, "nearestDistance": n.distance}
            for n in obs.nearby_entities
        ],
        "completed_advancements": list(p.completed_advancements),
        "position": {"x": obs.position[0], "y": obs.position[1], "z": obs.position[2]},
        "biome": obs.biome,
        "survival": {"health": obs.health, "food": obs.food},
        "current_progress": {"score": p.score, "highest_completed": highest_completed(obs)},
        "verified_action_effects": history.verified_effects(),
        "vanilla_recipe_hypotheses": prior.hypotheses(inv, {f.id for f in obs.facilities}),
        "actionable_verified_transformations": actionable(history, inv),
        "unused_output_warning": warning,
        "unused_output_variant": unused_output_variant(warning, prior.singular),
        "last_action_feedback": None
        if last is None
        else {
            "skill": last.skill,
            "ok": last.ok,
            "reason": last.reason,
            "message": last.message,
            "produced": dict(last.produced),
            "consumed": dict(last.consumed),
            "inventory_change": dict(last.inventory_delta),
        },
        "repeat_count": repeats,
        "forbidden_exact_action": history.steps[-1].action if repeats >= 2 else None,
        "blocked_actions": history.still_blocked(inv),
        "failure_cycle": history.failure_cycle(),
        "stagnation_cycle": history.stagnation_cycle(),
        "learned_rules": None,
    }


LINE_ORDER = (
    "goal",
    "task",
    "task_state",
    "action_budget",
    "current_blocker",
    "inventory",
    "enchanted_items",
    "tool_durability",
    "equipped",
    "experience",
    "current_capabilities",
    "available_facility_fact",
    "observed_facilities",
    "owned_unplaced_facilities",
    "nearby_targets",
    "nearby_drops",
    "completed_advancements",
    "nearby_entities",
    "position",
    "biome",
    "survival",
    "current_progress",
    "verified_action_effects",
    "vanilla_recipe_hypotheses",
    "actionable_verified_transformations",
    "unused_output",
    "last_action_feedback",
    "stagnation_warning",
    "blocked_action_prerequisites",
    "failure_cycle",
    "stagnation_cycle",
    "learned_rules",
)
"""The block's lines in the paper's order (``unused_output`` is one of its two variants)."""

ADDITIONS = ("enchanted_items", "tool_durability", "biome", "survival")
"""Lines MirrorCraft adds to the paper's block."""


_SIMPLE = {
    "task": ("TASK_JSON", "task"),
    "task_state": ("TASK_STATE_JSON", "task_state"),
    "action_budget": ("ACTION_BUDGET_JSON", "action_budget"),
    "inventory": ("INVENTORY_JSON", "inventory"),
    "enchanted_items": ("ENCHANTED_ITEMS_JSON", "enchanted_items"),
    "tool_durability": ("TOOL_DURABILITY_JSON", "tool_durability"),
    "equipped": ("EQUIPPED_JSON", "equipped"),
    "experience": ("EXPERIENCE_JSON", "experience"),
    "current_capabilities": ("CURRENT_CAPABILITIES_JSON", "capabilities"),
    "observed_facilities": ("OBSERVED_FACILITIES_JSON", "observed_facilities"),
    "nearby_targets": ("NEARBY_TARGETS_JSON", "nearby_targets"),
    "nearby_drops": ("NEARBY_DROPS_JSON", "nearby_drops"),
    "completed_advancements": ("COMPLETED_ADVANCEMENTS_JSON", "completed_advancements"),
    "nearby_entities": ("NEARBY_ENTITIES_JSON", "nearby_entities"),
    "survival": ("SURVIVAL_JSON", "survival"),
    "verified_action_effects": ("VERIFIED_ACTION_EFFECTS_JSON", "verified_action_effects"),
}
"""Lines that are one JSON value: line name -> (placeholder, field)."""

_LISTS = {
    "blocked_action_prerequisites": ("BLOCKED_ACTION_PREREQUISITES_JSON", "blocked_actions"),
    "failure_cycle": ("FAILURE_CYCLE_JSON", "failure_cycle"),
    "stagnation_cycle": ("STAGNATION_CYCLE_JSON", "stagnation_cycle"),
}
"""Lines left out when their list is empty: line name -> (placeholder, field)."""


def _line(f: dict[str, Any], name: str, with_feedback: bool) -> str | None:
    """One line (or None when the paper's block leaves it out in this state)."""
    t = load_template("observation")
    if name in _SIMPLE:
        key, field = _SIMPLE[name]
        return t.render(name, {key: j(f[field])})
    if name == "goal":
        return t.render("goal", {"GOAL": f["goal"]})
    if name == "current_blocker":
        blocked = f["current_blocker"]
        return t.render(name, {"CURRENT_BLOCKER_JSON": j(blocked)}) if blocked else None
    if name == "available_facility_fact":
        near = f["nearby_facilities"]
        return t.render(name, {"NEARBY_FACILITIES": ", ".join(near)}) if near else None
    if name == "owned_unplaced_facilities":
        owned = f["owned_unplaced_facilities"]
        return t.render(name, {"OWNED_UNPLACED_FACILITIES_JSON": j(owned)}) if owned else None
    if name == "position":
        pos = f["position"]
        return t.render(
            name,
            {"POSITION_X": str(pos["x"]), "POSITION_Y": str(pos["y"]), "POSITION_Z": str(pos["z"])},
        )
    if name == "biome":
        return t.render(name, {"BIOME": str(f["biome"])})
    if name == "current_progress":
        cp = f["current_progress"]
        return t.render(
            name,
            {
                "CURRENT_PROGRESS": str(cp["score"]),
                "HIGHEST_COMPLETED_MILESTONE": cp["highest_completed"],
            },
        )
    if name == "vanilla_recipe_hypotheses":
        return t.render(
            name,
            {
                "JAVA_VERSION": JAVA_VERSION,
                "VANILLA_RECIPE_HYPOTHESES_JSON": j(f["vanilla_recipe_hypotheses"]),
            },
        )
    if name == "actionable_verified_transformations":
        found = f["actionable_verified_transformations"]
        return (
            t.render(name, {"ACTIONABLE_VERIFIED_TRANSFORMATIONS_JSON": j(found)})
            if found
            else None
        )
    if name == "unused_output":
        variant = f["unused_output_variant"]
        if not variant:
            return None
        return t.render(
            f"unused_output_{variant}",
            {"UNUSED_OUTPUT_WARNING_JSON": j(f["unused_output_warning"])},
        )
    if name == "last_action_feedback":
        if not with_feedback:
            return None
        return t.render(name, {"LAST_ACTION_FEEDBACK_JSON": j(f["last_action_feedback"])})
    if name == "stagnation_warning":
        if f["forbidden_exact_action"] is None:
            return None
        return t.render(
            name,
            {
                "REPEAT_COUNT": str(f["repeat_count"]),
                "FORBIDDEN_EXACT_ACTION_JSON": j(f["forbidden_exact_action"]),
            },
        )
    if name in _LISTS:
        key, field = _LISTS[name]
        return t.render(name, {key: j(f[field])}) if f[field] else None
    if name == "learned_rules":
        rules = f.get("learned_rules")
        if rules is None:
            return None  # this configuration keeps no learned-rule ledger
        entries = [
            t.render(
                "learned_rule",
                {"SKILL": r["skill"], "TARGET": r["target"], "KNOWN_OUTPUT": r["output"]},
            )
            for r in rules
        ]
        return t.render(name, {"LEARNED_RULES": "\n".join(entries) or t.render("none", {})})
    raise KeyError(name)


def render_fields(f: dict[str, Any], *, with_feedback: bool = True) -> str:
    """The observation block as lines in the paper's order (one JSON value per field).

    ``with_feedback=False`` leaves out LAST_ACTION_FEEDBACK: ReAct, ReAct with rules and
    Reflexion see the latest result through their trace of recent steps instead.
    """
    lines = (_line(f, name, with_feedback) for name in LINE_ORDER)
    return "\n".join(line for line in lines if line)
