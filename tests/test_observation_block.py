"""The shared observation block against appendix L.8: one test per field, the paper's order,
and which configurations see the last-action feedback line (L.2-L.4 leave it out)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from mirrorcraft.agents.llm.adam import AdamAgent
from mirrorcraft.agents.llm.adam_causal import Edge
from mirrorcraft.agents.llm.direct import DirectAgent
from mirrorcraft.agents.llm.history import History, Step
from mirrorcraft.agents.llm.react import ReActAgent
from mirrorcraft.agents.llm.reflexion import ReflexionAgent
from mirrorcraft.agents.llm.render import (
    ADDITIONS,
    VanillaPrior,
    observation_fields,
    render_fields,
)
from mirrorcraft.agents.llm.voyager import VoyagerAgent
from mirrorcraft.agents.llm.xenon import XenonAgent
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body.observation import Observation
from mirrorcraft.env import make
from tests.llm_fakes import FakeClient, episode

PAPER_ORDER = (
    "GOAL",
    "TASK",
    "TASK_STATE",
    "ACTION_BUDGET",
    "CURRENT_BLOCKER",
    "INVENTORY",
    "EQUIPPED",
    "EXPERIENCE",
    "CURRENT_CAPABILITIES",
    "AVAILABLE_FACILITY_FACT",
    "OBSERVED_FACILITIES",
    "OWNED_UNPLACED_FACILITIES",
    "NEARBY_TARGETS",
    "NEARBY_DROPS",
    "COMPLETED_ADVANCEMENTS",
    "NEARBY_ENTITIES",
    "POSITION",
    "CURRENT_PROGRESS",
    "VERIFIED_ACTION_EFFECTS",
    "VANILLA_RECIPE_HYPOTHESES",
    "ACTIONABLE_VERIFIED_TRANSFORMATIONS",
    "UNUSED_OUTPUT_WARNING",
    "LAST_ACTION_FEEDBACK",
    "STAGNATION_WARNING",
    "BLOCKED_ACTION_PREREQUISITES",
    "FAILURE_CYCLE",
    "STAGNATION_CYCLE",
    "LEARNED RULES",
)
"""The field labels of appendix L.8, in its order (RECENT STEPS lives in the ReAct trace)."""

CONSTRAINT_LABELS = {
    "BLOCKER_RULE",
    "FACILITY_CONSTRAINT",
    "VANILLA_PRIOR_RULE",
    "RECOVERY_CONSTRAINT",
    "OUTPUT_USE_REQUIRED",
    "OUTPUT_USE_CHECK",
    "FORBIDDEN_EXACT_ACTION_UNTIL_STATE_CHANGES",
    "HARD_CONSTRAINT",
    "CYCLE_BREAK_REQUIRED",
    "NO_PROGRESS_CYCLE_BREAK_REQUIRED",
}
"""Sentences the paper attaches to a field; each is a full line of its own here."""

PLANKS = {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log", None]]}}
TABLE = {
    "skill": "craft_grid",
    "args": {
        "station": "inventory",
        "grid": [["oak_planks", "oak_planks"], ["oak_planks", "oak_planks"]],
    },
}
STICKS = {
    "skill": "craft_grid",
    "args": {"station": "inventory", "grid": [["oak_planks", None], ["oak_planks", None]]},
}
MINE_DIAMOND = {"skill": "mine", "args": {"block": "diamond_ore", "count": 1}}


def play(
    actions: list[dict[str, Any]],
    inventory: dict[str, int],
    task: str = "iron_armor",
) -> tuple[Observation, History]:
    """Run actions in plains-1 and keep the history an LLM agent would keep."""
    env = make(f"plains-1/{task}", start_inventory=inventory)
    obs, _ = env.reset(seed=1)
    history = History()
    for action in actions:
        before = obs
        obs, *_ = env.step(action)
        assert obs.last_result is not None
        history.record(
            Step(
                obs.step,
                "t",
                action,
                obs.last_result,
                dict(before.inventory),
                dict(obs.inventory),
                before.progress.score,
                obs.progress.score,
                before.position != obs.position,
            )
        )
    return obs, history


def fields(obs: Observation, history: History, task: str = "iron_armor") -> dict[str, Any]:
    vanilla = vanilla_rules()
    tools = {t: (s.kind, s.tier) for t, s in vanilla.game.tools.items()}
    return observation_fields(obs, history, VanillaPrior.for_task(vanilla, task), tools)


def labels(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        m = re.match(r"^([A-Z_]+(?: RULES)?)(?: \(|:)", line)
        if m:
            out.append(m.group(1))
    return out


def line(text: str, label: str) -> str:
    found = [x for x in text.splitlines() if x.startswith(label)]
    assert found, f"no {label} line in:\n{text}"
    return found[0]


def value(text: str, label: str) -> Any:
    return json.loads(line(text, label).split(": ", 1)[1])


@pytest.fixture(scope="module")
def busy() -> tuple[Observation, History]:
    """A state in which every conditional line applies at once (learned rules aside)."""
    return play([PLANKS, PLANKS, MINE_DIAMOND, MINE_DIAMOND], {"oak_log": 4, "crafting_table": 1})


def test_every_line_is_a_paper_field_a_constraint_or_a_documented_addition(
    busy: tuple[Observation, History],
) -> None:
    f = fields(*busy)
    f["learned_rules"] = [{"skill": "smelt", "target": "raw_iron", "output": "iron_nugget"}]
    text = render_fields(f)
    additions = {a.upper() for a in ADDITIONS}
    for label in labels(text):
        assert label in PAPER_ORDER or label in CONSTRAINT_LABELS or label in additions, label


def test_the_fields_come_in_the_papers_order(busy: tuple[Observation, History]) -> None:
    obs, history = busy
    f = fields(obs, history)
    f["learned_rules"] = []
    f["stagnation_cycle"] = [{"action": PLANKS, "times": 2}]  # success without change
    f["actionable_verified_transformations"] = [{"action": PLANKS}]
    text = render_fields(f)
    shown = [x for x in labels(text) if x in PAPER_ORDER]
    assert shown == [x for x in PAPER_ORDER if x in shown]
    missing = set(PAPER_ORDER) - set(shown) - {"AVAILABLE_FACILITY_FACT", "OBSERVED_FACILITIES"}
    assert not missing  # every field is shown once it applies (facilities: see their own test)


def test_goal_task_state_and_budget() -> None:
    obs, history = play([], {})
    text = render_fields(fields(obs, history))
    assert line(text, "GOAL: complete ").endswith("(story/obtain_armor)")
    route = value(text, "TASK")["route"]
    assert [m["points"] for m in route] == [15, 35, 65, 100]
    assert value(text, "TASK_STATE") == {
        "completed_milestones": [],
        "next_milestone": "story/mine_stone",
        "progress": 0,
    }
    assert value(text, "ACTION_BUDGET") == {"remaining": 50, "total": 50, "used": 0}


def test_current_blocker_carries_its_rule() -> None:
    obs, history = play([MINE_DIAMOND], {"oak_log": 1})
    text = render_fields(fields(obs, history))
    blocker = value(text, "CURRENT_BLOCKER")
    assert blocker["action"] == MINE_DIAMOND and blocker["reason"]
    assert labels(text)[labels(text).index("CURRENT_BLOCKER") + 1] == "BLOCKER_RULE"
    obs, history = play([PLANKS], {"oak_log": 1})
    assert "CURRENT_BLOCKER" not in render_fields(fields(obs, history))


def test_inventory_equipment_experience_and_capabilities() -> None:
    obs, history = play([], {"oak_log": 3, "stone_pickaxe": 1})
    text = render_fields(fields(obs, history))
    assert value(text, "INVENTORY (only these items are owned)") == {
        "oak_log": 3,
        "stone_pickaxe": 1,
    }
    assert "hand" in value(text, "EQUIPPED")
    assert value(text, "EXPERIENCE") == {"level": 100}  # the paper's starting level
    assert value(text, "CURRENT_CAPABILITIES") == {"tools": {"pickaxe": "stone"}}


def test_facility_lines_are_separate() -> None:
    obs, history = play([PLANKS, TABLE], {"oak_log": 1})
    text = render_fields(fields(obs, history))
    owned = value(text, "OWNED_UNPLACED_FACILITIES")
    assert owned == [
        {
            "count": 1,
            "item": "crafting_table",
            "place": {"args": {"block": "crafting_table"}, "skill": "place"},
        }
    ]
    assert "FACILITY_CONSTRAINT" in labels(text)
    assert "AVAILABLE_FACILITY_FACT" not in text and value(text, "OBSERVED_FACILITIES") == []
    assert "facilit" not in line(text, "CURRENT_CAPABILITIES")
    placed, history = play(
        [PLANKS, TABLE, {"skill": "place", "args": {"block": "crafting_table"}}], {"oak_log": 1}
    )
    text = render_fields(fields(placed, history))
    assert line(text, "AVAILABLE_FACILITY_FACT: crafting_table already stand nearby")
    assert [f["block"] for f in value(text, "OBSERVED_FACILITIES")] == ["crafting_table"]
    assert "OWNED_UNPLACED_FACILITIES" not in text


def test_nearby_targets_drops_entities_and_completed_advancements() -> None:
    obs, history = play([{"skill": "mine", "args": {"block": "stone"}}], {"wooden_pickaxe": 1})
    text = render_fields(fields(obs, history))
    targets = value(text, "NEARBY_TARGETS (a filtered list")
    assert targets and set(targets[0]) == {"block", "nearestDistance"}
    assert isinstance(value(text, "NEARBY_DROPS"), list)
    entities = value(text, "NEARBY_ENTITIES")
    assert all(set(e) == {"type", "count", "nearestDistance"} for e in entities)
    assert "story/mine_stone" in value(text, "COMPLETED_ADVANCEMENTS")


def test_position_and_current_progress() -> None:
    obs, history = play([{"skill": "mine", "args": {"block": "stone"}}], {"wooden_pickaxe": 1})
    text = render_fields(fields(obs, history))
    x, y, z = obs.position
    assert line(text, "POSITION") == f"POSITION: x={x}, y={y}, z={z}"
    assert line(text, "CURRENT_PROGRESS") == (
        "CURRENT_PROGRESS: 15/100; highest completed milestone=Stone Age (story/mine_stone)"
    )
    start, history = play([], {})
    assert line(render_fields(fields(start, history)), "CURRENT_PROGRESS") == (
        "CURRENT_PROGRESS: 0/100; highest completed milestone=none"
    )


def test_verified_effects_and_vanilla_hypotheses() -> None:
    obs, history = play([PLANKS], {"oak_log": 2})
    text = render_fields(fields(obs, history))
    effects = value(text, "VERIFIED_ACTION_EFFECTS")
    assert effects == [
        {"action": PLANKS, "consumed": {"oak_log": 1}, "produced": {"oak_planks": 4}, "step": 1}
    ]
    assert "Java 1.19 recipes" in line(text, "VANILLA_RECIPE_HYPOTHESES")
    hypotheses = json.loads(line(text, "VANILLA_RECIPE_HYPOTHESES").split("): ", 1)[1])
    assert hypotheses and {"executable", "stationReady", "grid", "station"} <= set(hypotheses[0])
    assert labels(text)[labels(text).index("VANILLA_RECIPE_HYPOTHESES") + 1] == "VANILLA_PRIOR_RULE"


def test_actionable_verified_transformations() -> None:
    obs, history = play([PLANKS, TABLE, STICKS], {"oak_log": 2})
    text = render_fields(fields(obs, history))
    found = value(text, "ACTIONABLE_VERIFIED_TRANSFORMATIONS")
    assert [e["action"] for e in found] == [PLANKS]
    assert "RECOVERY_CONSTRAINT" in labels(text)


def test_unused_output_warning_has_two_variants() -> None:
    obs, history = play([PLANKS, PLANKS], {"oak_log": 4})
    text = render_fields(fields(obs, history))
    assert value(text, "UNUSED_OUTPUT_WARNING")["times"] == 2
    assert "OUTPUT_USE_CHECK" in labels(text) and "OUTPUT_USE_REQUIRED" not in text
    obs, history = play([PLANKS, PLANKS, PLANKS], {"oak_log": 4})
    text = render_fields(fields(obs, history))
    assert "OUTPUT_USE_REQUIRED" in labels(text) and "OUTPUT_USE_CHECK" not in text
    # one of a facility is enough: the first repeat already blocks
    obs, history = play([PLANKS, PLANKS, TABLE, TABLE], {"oak_log": 2})
    text = render_fields(fields(obs, history))
    assert value(text, "UNUSED_OUTPUT_WARNING")["output_in_inventory"] == {"crafting_table": 2}
    assert "OUTPUT_USE_REQUIRED" in labels(text)


def test_stagnation_warning_names_the_forbidden_exact_action() -> None:
    obs, history = play([MINE_DIAMOND], {})
    assert "STAGNATION_WARNING" not in render_fields(fields(obs, history))
    obs, history = play([MINE_DIAMOND, MINE_DIAMOND], {})
    text = render_fields(fields(obs, history))
    assert line(text, "STAGNATION_WARNING").endswith("failed 2 times in a row.")
    assert value(text, "FORBIDDEN_EXACT_ACTION_UNTIL_STATE_CHANGES") == MINE_DIAMOND
    assert labels(text)[labels(text).index("STAGNATION_WARNING") + 1 :][:2] == [
        "FORBIDDEN_EXACT_ACTION_UNTIL_STATE_CHANGES",
        "HARD_CONSTRAINT",
    ]


def test_blocked_prerequisites_failure_cycle_and_stagnation_cycle() -> None:
    obs, history = play([MINE_DIAMOND, MINE_DIAMOND], {})
    text = render_fields(fields(obs, history))
    assert [b["action"] for b in value(text, "BLOCKED_ACTION_PREREQUISITES")] == [MINE_DIAMOND]
    assert value(text, "FAILURE_CYCLE") == [{"action": MINE_DIAMOND, "times": 2}]
    order = labels(text)
    assert order[order.index("BLOCKED_ACTION_PREREQUISITES") + 1] == "HARD_CONSTRAINT"
    assert order[order.index("FAILURE_CYCLE") + 1] == "CYCLE_BREAK_REQUIRED"
    equip = {"skill": "equip", "args": {"item": "wooden_pickaxe"}}
    obs, history = play([equip, equip], {"wooden_pickaxe": 1})
    text = render_fields(fields(obs, history))
    assert value(text, "STAGNATION_CYCLE") == [{"action": equip, "times": 2}]
    assert "NO_PROGRESS_CYCLE_BREAK_REQUIRED" in labels(text)


def test_last_action_feedback_is_optional() -> None:
    obs, history = play([PLANKS], {"oak_log": 1})
    f = fields(obs, history)
    assert value(render_fields(f), "LAST_ACTION_FEEDBACK")["produced"] == {"oak_planks": 4}
    assert "LAST_ACTION_FEEDBACK" not in render_fields(f, with_feedback=False)


def test_learned_rules_only_for_a_configuration_that_keeps_them() -> None:
    obs, history = play([], {})
    f = fields(obs, history)
    assert "LEARNED RULES" not in render_fields(f)
    f["learned_rules"] = []
    assert render_fields(f).endswith(
        "LEARNED RULES (found by your own tests in this episode; "
        "where they disagree with what you expect from Minecraft, believe them):\n(none yet)"
    )
    f["learned_rules"] = [{"skill": "smelt", "target": "raw_iron", "output": "iron_nugget"}]
    assert render_fields(f).endswith("\n- smelt raw_iron -> iron_nugget")
    # ADAM reports the edges an intervention verified, and nothing else
    adam = AdamAgent("adam", FakeClient(lambda m, meta: ""), vanilla_rules())
    adam.reset()
    verified = Edge(
        'smelt {"input":"raw_iron","station":"furnace"}',
        [{"type": "item", "name": "raw_iron", "count": 1}],
        [{"type": "item", "name": "iron_nugget"}],
        status="verified",
    )
    guessed = Edge('mine {"block":"stone"}', [], [{"type": "item", "name": "stone"}])
    adam.graph.edges = {verified.sample_key: verified, guessed.sample_key: guessed}
    assert adam.learned_rules() == [
        {
            "skill": "smelt",
            "target": '{"input":"raw_iron","station":"furnace"}',
            "output": "iron_nugget",
        }
    ]
    for cls in (DirectAgent, ReActAgent, ReflexionAgent, VoyagerAgent, XenonAgent):
        assert cls("x", FakeClient(lambda m, meta: ""), vanilla_rules()).learned_rules() is None


@pytest.mark.parametrize(
    ("agent_cls", "sees_feedback"),
    [
        (DirectAgent, True),
        (ReActAgent, False),
        (ReflexionAgent, False),
        (VoyagerAgent, True),
        (XenonAgent, True),
        (AdamAgent, True),
    ],
)
def test_react_family_reads_the_last_result_from_its_trace_only(
    agent_cls: Any, sees_feedback: bool
) -> None:
    """L.2-L.4: ReAct, ReAct with rules and Reflexion get the observation without the
    last-action feedback line; the latest result is the last entry of RECENT STEPS."""
    _record, steps, client, _agent = episode(agent_cls, "vanilla", "iron_armor", budget=4)
    acting = [
        m
        for m, meta in client.calls
        if meta is not None and meta.purpose in ("act", "program", "program_repair")
    ]
    later = acting[1:]
    assert later and len(steps) >= 2
    for messages in later:
        user = messages[1].content
        assert ("LAST_ACTION_FEEDBACK" in user) == sees_feedback
        assert "GOAL: complete" in user and "CURRENT_PROGRESS" in user
    if not sees_feedback:
        assert "| result:" in later[-1][1].content
