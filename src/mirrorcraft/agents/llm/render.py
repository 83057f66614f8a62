"""The shared observation block every LLM configuration receives.

It carries every field of the paper's shared observation (task route and next
milestone, budget, inventory, equipment, experience, capabilities, facilities,
nearby targets, drops and entities, position, survival, completed advancements,
latest result, blockers, failure and stagnation cycles, verified action effects,
static vanilla recipe hypotheses, actionable verified transformations and
unused-output warnings). The recipe hypotheses come from the packaged vanilla
pack: a public prior, never the connected world's rules. Nothing here says
whether the rules differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.agents.knowledge import Belief, CraftOption, build_belief, concrete_grid
from mirrorcraft.agents.llm.history import History
from mirrorcraft.agents.planner import Memory, Planner, goal_of
from mirrorcraft.body.observation import Observation
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.ruleset import RuleSet

HYPOTHESIS_LIMIT = 8
FACILITIES = ("crafting_table", "furnace", "blast_furnace", "smoker", "enchanting_table")


def j(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass
class VanillaPrior:
    """Static vanilla recipes relevant to a task (the prior every configuration may see)."""

    belief: Belief
    relevant: frozenset[str]
    options: tuple[CraftOption, ...] = ()
    """The vanilla crafting options whose output is relevant (filtered once)."""
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
        return cls(belief, relevant, options)

    def hypotheses(self, inventory: dict[str, int], facilities: set[str]) -> list[dict[str, Any]]:
        """The vanilla recipes worth trying with what is owned (cached per inventory and
        facilities: the same state always gives the same list)."""
        key = (tuple(sorted(inventory.items())), frozenset(facilities))
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
        out: list[dict[str, Any]] = []
        for option in self.options:
            result = option.outputs[0][0]
            if result in inventory and result in FACILITIES:
                continue
            owned_any = any(inventory.get(i, 0) > 0 for cell in option.inputs for i in cell)
            if not owned_any:
                continue
            grid, missing = concrete_grid(option, inventory)
            ready = option.station == "inventory" or option.station in facilities
            out.append(
                {
                    "output": result,
                    "count": option.outputs[0][1],
                    "station": option.station,
                    "grid": grid,
                    "missing": missing,
                    "executable": not missing and ready,
                    "stationReady": ready,
                }
            )
        out.sort(key=lambda h: (not h["executable"], len(dict(h["missing"])), str(h["output"])))
        return out[:HYPOTHESIS_LIMIT]


_PRIORS: dict[tuple[int, str], tuple[RuleSet, VanillaPrior]] = {}


def capabilities(obs: Observation, tools: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Owned tools by kind (best tier) and the facilities at hand."""
    best: dict[str, str] = {}
    order = ["wood", "gold", "stone", "iron", "diamond", "netherite"]
    for item in obs.inventory:
        if item in tools:
            kind, tier = tools[item]
            if kind not in best or order.index(tier) > order.index(best[kind]):
                best[kind] = tier
    return {
        "tools": best,
        "facilities_nearby": sorted({f.id for f in obs.facilities}),
        "owned_unplaced_facilities": sorted(i for i in obs.inventory if i in FACILITIES),
    }


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
    return {
        "goal": f"complete the advancement {p.milestones[-1].title} ({p.milestones[-1].advancement})",
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
        "verified_action_effects": history.verified_effects(),
        "vanilla_recipe_hypotheses": prior.hypotheses(inv, {f.id for f in obs.facilities}),
        "actionable_verified_transformations": actionable(history, inv),
        "unused_output_warning": history.unused_output(inv),
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
        "repeat_count": history.repeat_count(),
        "blocked_actions": history.still_blocked(inv),
        "failure_cycle": history.failure_cycle(),
        "stagnation_cycle": history.stagnation_cycle(),
    }


def render_fields(f: dict[str, Any], *, with_feedback: bool = True) -> str:
    """The observation block as labelled lines (one JSON value per line)."""
    lines = [
        f"GOAL: {f['goal']}",
        f"TASK: {j(f['task'])}",
        f"TASK_STATE: {j(f['task_state'])}",
        f"ACTION_BUDGET: {j(f['action_budget'])}",
        f"INVENTORY (only these items are owned): {j(f['inventory'])}",
        f"ENCHANTED_ITEMS: {j(f['enchanted_items'])}",
        f"TOOL_DURABILITY (uses left before each owned tool breaks): {j(f['tool_durability'])}",
        f"EQUIPPED: {j(f['equipped'])}",
        f"EXPERIENCE: {j(f['experience'])}",
        f"CURRENT_CAPABILITIES: {j(f['capabilities'])}",
        f"NEARBY_TARGETS (nearest distance in blocks, not a count): {j(f['nearby_targets'])}",
        f"NEARBY_DROPS: {j(f['nearby_drops'])}",
        f"NEARBY_ENTITIES (visible count and nearest distance): {j(f['nearby_entities'])}",
        f"COMPLETED_ADVANCEMENTS: {j(f['completed_advancements'])}",
        f"POSITION: {j(f['position'])}; BIOME: {f['biome']}; SURVIVAL: {j(f['survival'])}",
        f"VERIFIED_ACTION_EFFECTS (seen in this episode; they say nothing about untested inputs): {j(f['verified_action_effects'])}",
        "VANILLA_RECIPE_HYPOTHESES (the published Java 1.19 recipes, not a reading of this world; "
        f"one submission is a test and its real output wins): {j(f['vanilla_recipe_hypotheses'])}",
    ]
    if f["actionable_verified_transformations"]:
        lines.append(
            "ACTIONABLE_VERIFIED_TRANSFORMATIONS (inputs owned now; they make something a blocked action "
            f"lacks, so do them before gathering more): {j(f['actionable_verified_transformations'])}"
        )
    if f["unused_output_warning"]:
        lines.append(
            "UNUSED_OUTPUT_WARNING (this transformation was repeated while its output is still unused; "
            f"use the output or state why more is needed): {j(f['unused_output_warning'])}"
        )
    if f["current_blocker"]:
        lines.append(
            f"CURRENT_BLOCKER (resolve this specific missing requirement if it matters for the next milestone): {j(f['current_blocker'])}"
        )
    if with_feedback:
        lines.append(f"LAST_ACTION_FEEDBACK: {j(f['last_action_feedback'])}")
    if f["repeat_count"] >= 2:
        lines.append(
            f"STAGNATION_WARNING: the same failed action was just repeated {f['repeat_count']} times; "
            "do not send it again until something relevant changes"
        )
    if f["blocked_actions"]:
        lines.append(
            f"BLOCKED_ACTION_PREREQUISITES (each applies to its own action only): {j(f['blocked_actions'])}"
        )
    if f["failure_cycle"]:
        lines.append(
            f"FAILURE_CYCLE (choose something outside it that changes the state): {j(f['failure_cycle'])}"
        )
    if f["stagnation_cycle"]:
        lines.append(
            f"STAGNATION_CYCLE (these succeeded but changed nothing): {j(f['stagnation_cycle'])}"
        )
    return "\n".join(lines)
