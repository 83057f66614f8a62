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
hypotheses come from the packaged vanilla pack (``prior.py``): a public prior, never
the connected world's rules. Nothing here says whether the rules differ.
"""

from __future__ import annotations

from typing import Any

from mirrorcraft.agents.llm.history import History, j
from mirrorcraft.agents.llm.prior import FACILITIES, VanillaPrior, copies
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.body.observation import Observation

JAVA_VERSION = "1.19"
REPEATS_BEFORE_BLOCK = 3
"""A transformation repeated this many times in a row with its output unused gets the
blocking variant of the unused-output warning (the quantity-check variant before)."""


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


Texts = dict[str, tuple[Any, str]]
"""Field name -> (the value a JSON text was made from, that text), for ``render_fields``."""


def observation_fields(
    obs: Observation,
    history: History,
    prior: VanillaPrior,
    tools: dict[str, tuple[str, str]],
    texts: Texts | None = None,
) -> dict[str, Any]:
    """Every field of the shared observation block, as plain JSON-able values.

    ``texts``, when given, receives the JSON text of the fields that come with one already
    made (the recipe hypotheses and the verified action effects), for ``render_fields``.
    """
    p = obs.progress
    inv = dict(obs.inventory)
    hypotheses = prior.hypotheses_text(inv, {f.id for f in obs.facilities})
    if texts is not None:
        texts["vanilla_recipe_hypotheses"] = hypotheses
        texts["verified_action_effects"] = history.verified_effects_text()
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
        "vanilla_recipe_hypotheses": copies(hypotheses[0]),
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


def _json(f: dict[str, Any], field: str, texts: Texts | None) -> str:
    """A field's compact JSON: the text made with it when the field still equals the value
    that text was made from, else encoded now."""
    known = texts.get(field) if texts else None
    value = f[field]
    if known is not None and value == known[0]:
        return known[1]
    return j(value)


def _line(f: dict[str, Any], name: str, with_feedback: bool, texts: Texts | None) -> str | None:
    """One line (or None when the paper's block leaves it out in this state)."""
    t = load_template("observation")
    if name in _SIMPLE:
        key, field = _SIMPLE[name]
        return t.render(name, {key: _json(f, field, texts)})
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
                "VANILLA_RECIPE_HYPOTHESES_JSON": _json(f, "vanilla_recipe_hypotheses", texts),
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


def render_fields(
    f: dict[str, Any], *, with_feedback: bool = True, texts: Texts | None = None
) -> str:
    """The observation block as lines in the paper's order (one JSON value per field).

    ``with_feedback=False`` leaves out LAST_ACTION_FEEDBACK: ReAct, ReAct with rules and
    Reflexion see the latest result through their trace of recent steps instead.
    ``texts`` are JSON texts ``observation_fields`` made along with ``f`` (see ``_json``).
    """
    lines = (_line(f, name, with_feedback, texts) for name in LINE_ORDER)
    return "\n".join(line for line in lines if line)
