"""Voyager: bounded programs, stop at the first failure, critic, library, retrieval, repairs, fallback."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.agents.llm.voyager import MAX_REPAIRS, VoyagerAgent
from mirrorcraft.agents.llm.voyager_library import (
    LIBRARY_SIZE,
    MAX_PROGRAM_ACTIONS,
    RETRIEVE_LIMIT,
    Library,
    Program,
    check_success,
    parse_program,
)
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.llm.base import CallMeta, Message
from tests.llm_fakes import HIDDEN_PHRASES, FakeClient, episode
from tests.llm_fakes import M05_SHEET as SHEET

PLACE_TABLE = {"skill": "place", "args": {"block": "crafting_table"}}
WAIT = {"skill": "wait", "args": {"ticks": 20}}


def purposes(client: Any) -> list[str]:
    return [meta.purpose for _messages, meta in client.calls]


def step_of(meta: CallMeta | None) -> int:
    assert meta is not None
    return int(meta.extra["obs"].step)


def retrieved_lines(user: str) -> list[str]:
    block = user.split("RETRIEVED VERIFIED PROGRAMS (most relevant first):\n", 1)[1]
    block = block.split("\nPREVIOUS PROGRAM AND WHAT HAPPENED", 1)[0]
    return [] if block.strip() == "none" else block.splitlines()


def test_voyager_plays_m05_with_programs_critic_library_and_repairs() -> None:
    record, steps, client, agent = episode(VoyagerAgent, "M05", "diamond")
    assert record.success and record.termination == "success"
    assert set(record.template_hashes) == {
        "prompt_version",
        "common",
        "react",
        "voyager",
        "observation",
    }
    # Every primitive is one budgeted action; generation and critic calls cost none but are counted.
    running = (
        len(agent.program.actions) - len(agent.queue) if agent.program else 0
    )  # the one still open
    assert record.actions_used == len(steps) == sum(p["executed"] for p in agent.programs) + running
    assert record.model_calls == len(client.calls) > record.actions_used
    counts = Counter(purposes(client))
    assert counts["critic"] == sum(1 for p in agent.programs if not p["aborted"])
    assert all(p["actions"] <= MAX_PROGRAM_ACTIONS for p in agent.programs)
    assert len(agent.library) <= LIBRARY_SIZE and all(n <= RETRIEVE_LIMIT for n in agent.retrievals)
    assert any(p["reused"] for p in agent.programs)  # a verified program was retrieved and reused
    # The M05 pickaxe recipe makes a hoe: the check and the critic reject it, and a repair round follows.
    pick = next(p for p in agent.programs if p["subgoal"] == "iron_pickaxe")
    assert pick["check"] is False and pick["critic"] is False and not pick["success"]
    assert "craft_grid_iron_pickaxe" not in agent.library.skills  # a failed program never enters
    repair = next(
        m
        for m, meta in client.calls
        if meta.purpose == "program_repair" and step_of(meta) == pick["step"]
    )
    assert (
        '"iron_hoe":1' in repair[1].content and "did not achieve its subgoal" in repair[1].content
    )
    assert all(n <= MAX_REPAIRS for n in agent.repairs.values())
    for messages, meta in client.calls:
        if meta.purpose.startswith("program"):
            assert len(retrieved_lines(messages[1].content)) <= RETRIEVE_LIMIT
        if (
            meta.purpose == "critic"
        ):  # the critic judges the program it follows from before/after states
            assert (
                "STATE BEFORE" in messages[1].content and "AUTOMATIC CHECK" in messages[1].content
            )


def _with_program(
    planner: PlannerPolicy, messages: Sequence[Message], meta: CallMeta | None, actions: Any
) -> str:
    doc = json.loads(planner(messages, meta))
    program = doc.get("program") or {
        "name": "x",
        "subgoal": "x",
        "success": {"kind": "state_change"},
    }
    program["actions"] = actions(program.get("actions") or [WAIT])
    return json.dumps({"explain": "", "plan": "", "program": program})


def test_a_failed_primitive_stops_the_program_and_a_full_program_runs_without_calls() -> None:
    planner = PlannerPolicy(vanilla_rules())
    programs = 0

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        nonlocal programs
        if meta is None or meta.contract != "voyager_program":
            return planner(messages, meta)
        programs += 1
        if programs == 1:  # mine (works), place a table we do not have (fails), then two waits
            return _with_program(planner, messages, meta, lambda a: [a[0], PLACE_TABLE, WAIT, WAIT])
        if programs == 3:
            return _with_program(planner, messages, meta, lambda a: [a[0], WAIT])
        return planner(messages, meta)

    record, steps, client, agent = episode(VoyagerAgent, "M05", "diamond", policy=policy, budget=8)
    first = agent.programs[0]
    assert (
        first["actions"] == 4
        and first["executed"] == 2
        and first["aborted"]
        and not first["success"]
    )
    assert steps[1].action == PLACE_TABLE and not steps[1].result["ok"]
    assert steps[2].action != WAIT  # the rest of the failed program was abandoned
    assert purposes(client)[:2] == [
        "program",
        "program_repair",
    ]  # no critic after an aborted program
    assert (
        "missing_item" in client.calls[1][0][1].content
    )  # the execution error is the repair feedback
    full = next(p for p in agent.programs if p["actions"] == 2)
    assert full["executed"] == 2 and not full["aborted"]
    start = full["step"] - 2
    assert steps[start + 1].action == WAIT
    assert start + 1 not in {
        step_of(meta) for _m, meta in client.calls
    }  # the second primitive needed no call
    assert record.actions_used == len(steps) <= 8


def test_overlong_or_unparseable_programs_get_one_json_repair_round() -> None:
    planner = PlannerPolicy(vanilla_rules())
    seen: list[str] = []

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        assert meta is not None
        seen.append(meta.purpose)
        if meta.contract == "voyager_program" and len(seen) == 1:
            return _with_program(planner, messages, meta, lambda a: [WAIT] * 6)
        if (
            meta.contract == "voyager_program"
            and seen.count("program") == 2
            and seen[-1] == "program"
        ):
            return "Let me think about this... I would mine some logs."
        return planner(messages, meta)

    _record, _steps, client, agent = episode(
        VoyagerAgent, "vanilla", "diamond", policy=policy, budget=4
    )
    assert seen[:2] == ["program", "program_json_repair"]
    assert f"at most {MAX_PROGRAM_ACTIONS}" in client.calls[1][0][1].content
    assert "6 actions" in client.calls[1][0][1].content
    second = [i for i, p in enumerate(seen) if p == "program"][1]
    assert seen[second + 1] == "program_json_repair"
    assert all(p["actions"] <= MAX_PROGRAM_ACTIONS for p in agent.programs) and agent.fallbacks == 0


def test_unusable_programs_fall_back_to_one_react_action_and_end_only_when_that_fails() -> None:
    planner = PlannerPolicy(vanilla_rules())

    def garbage_programs(messages: Sequence[Message], meta: CallMeta | None) -> str:
        return (
            "no"
            if meta is not None and meta.contract == "voyager_program"
            else planner(messages, meta)
        )

    record, steps, client, agent = episode(
        VoyagerAgent, "vanilla", "diamond", policy=garbage_programs, budget=4
    )
    assert record.actions_used == 4 == agent.fallbacks and not agent.programs
    assert purposes(client)[:3] == ["program", "program_json_repair", "fallback"]
    assert steps[0].action["skill"] == "mine"

    record, steps, client, _agent = episode(
        VoyagerAgent, "vanilla", "diamond", policy=lambda m, meta: ""
    )
    assert record.termination == "no_action" and not steps
    assert purposes(client) == ["program", "program_json_repair", "fallback", "repair"]
    assert record.model_calls == 4


def test_a_failing_subgoal_gets_at_most_four_repair_rounds() -> None:
    planner = PlannerPolicy(vanilla_rules())
    program = {
        "name": "get_table",
        "description": "",
        "subgoal": "impossible_thing",
        "success": {"kind": "facility_available", "facility": "crafting_table"},
        "actions": [PLACE_TABLE],
    }

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        if meta is not None and meta.contract == "voyager_program":
            return json.dumps({"explain": "", "plan": "", "program": program})
        return planner(messages, meta)

    for agent_cls in (VoyagerAgent, SubgoalRepairVoyager):
        record, _steps, client, agent = episode(
            agent_cls, "vanilla", "diamond", policy=policy, budget=9
        )
        calls = purposes(client)
        key = "impossible_thing" if agent.repair_scope == "subgoal" else "episode"
        assert agent.repairs == {key: MAX_REPAIRS}
        assert calls.count("program_repair") == MAX_REPAIRS
        assert calls[: MAX_REPAIRS + 2] == ["program", *["program_repair"] * MAX_REPAIRS, "program"]
        assert record.actions_used == 9 and all(p["aborted"] for p in agent.programs)


class SubgoalRepairVoyager(VoyagerAgent):
    """The ``voyager[subgoal_repairs]`` reading: the allowance counts per failing subgoal."""

    def __init__(self, name: str, client: object, vanilla: object) -> None:
        super().__init__(name, client, vanilla, options={"variant": "subgoal_repairs"})  # type: ignore[arg-type]


@pytest.mark.parametrize(("agent_cls", "limit"), [(VoyagerAgent, 4), (SubgoalRepairVoyager, 8)])
def test_the_repair_allowance_is_per_episode_unless_the_subgoal_reading_is_chosen(
    agent_cls: type[VoyagerAgent], limit: int
) -> None:
    """Appendix D: "at most four repairs". Two subgoals that always fail, in turns: the
    default (per episode) stops at 4 repairs in all; the subgoal reading allows 4 each."""
    planner = PlannerPolicy(vanilla_rules())
    turn = itertools.count()

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        if meta is not None and meta.contract == "voyager_program":
            subgoal = "first_impossible" if next(turn) % 2 == 0 else "second_impossible"
            program = {
                "name": subgoal,
                "description": "",
                "subgoal": subgoal,
                "success": {"kind": "facility_available", "facility": "crafting_table"},
                "actions": [PLACE_TABLE],
            }
            return json.dumps({"explain": "", "plan": "", "program": program})
        return planner(messages, meta)

    _record, _steps, client, agent = episode(
        agent_cls, "vanilla", "diamond", policy=policy, budget=20
    )
    assert purposes(client).count("program_repair") == limit
    assert sum(agent.repairs.values()) == limit


def test_voyager_options_are_checked() -> None:
    from mirrorcraft.agents.llm.voyager import VoyagerOptionError
    from mirrorcraft.agents.registry import is_known_agent

    client = FakeClient(lambda m, meta: "")
    with pytest.raises(VoyagerOptionError, match="repair_scope"):
        VoyagerAgent("v", client, vanilla_rules(), options={"repair_scope": "forever"})
    with pytest.raises(VoyagerOptionError, match="unknown Voyager option"):
        VoyagerAgent("v", client, vanilla_rules(), options={"repairs": 9})
    assert VoyagerAgent("v", client, vanilla_rules()).repair_scope == "episode"
    assert is_known_agent("voyager[subgoal_repairs]") and not is_known_agent("voyager[x]")


def test_library_capacity_eviction_and_retrieval_limit() -> None:
    record, steps, client, _agent = episode(VoyagerAgent, "vanilla", "diamond", budget=2)
    obs = client.calls[-1][1].extra["obs"]
    library = Library()
    for i in range(LIBRARY_SIZE + 4):
        action = {
            "skill": "craft_grid",
            "args": {"station": "inventory", "grid": [["birch_log", None]]},
        }
        p = Program(
            f"skill_{i}",
            "planks",
            f"item_{i}",
            {"kind": "state_change"},
            ({"skill": "mine", "args": {"block": f"block_{i}"}}, action),
        )
        library.add(p, i)
        if i == 3:
            library.add(
                Program("skill_3", "", "item_3", {"kind": "state_change"}, p.actions, reused=True),
                i,
            )
    assert len(library) == LIBRARY_SIZE
    assert library.evicted == [
        "skill_0",
        "skill_1",
        "skill_2",
        "skill_4",
    ]  # fewest uses, oldest first
    assert library.skills["skill_3"].uses == 2
    assert len(library.retrieve(obs)) <= RETRIEVE_LIMIT
    got, problem = parse_program({"reuse_skill": "skill_3"}, library)
    assert got is not None and got.reused and not problem
    assert parse_program({"reuse_skill": "nope"}, library)[0] is None
    assert (
        parse_program(
            {"program": {"actions": [{"skill": "fly"}], "success": {"kind": "state_change"}}},
            library,
        )[0]
        is None
    )
    assert (
        parse_program({"program": {"actions": [WAIT], "success": {"kind": "vibes"}}}, library)[0]
        is None
    )
    assert check_success({"kind": "position_change"}, obs, obs, [], 1)["passed"] is False
    assert check_success({"kind": "action_result"}, obs, obs, [{"ok": True}], 1)["passed"] is True
    assert record.actions_used == len(steps) == 2


def test_hidden_prompts_never_mention_rules_and_disclosed_prompts_carry_the_sheet() -> None:
    _r, _s, hidden, _ = episode(VoyagerAgent, "M05", "diamond", budget=20)
    for messages, _meta in hidden.calls:
        text = messages[0].content + messages[1].content
        assert SHEET not in text and not any(p in text for p in HIDDEN_PHRASES)
    record, _s2, disclosed, _ = episode(VoyagerAgent, "M05", "diamond", sheet=SHEET, budget=20)
    assert record.disclosure == "disclosed"
    for (
        messages,
        _meta,
    ) in disclosed.calls:  # acting calls (programs, fallback) and the critic alike
        assert SHEET in messages[0].content and "RULE INFORMATION: DISCLOSED" in messages[0].content
    _a, _b, van, _ = episode(VoyagerAgent, "vanilla", "diamond", budget=2)
    _c, _d, mir, _ = episode(VoyagerAgent, "M05", "diamond", budget=2)
    assert [m[0].content for m, _ in van.calls[:1]] == [m[0].content for m, _ in mir.calls[:1]]
    assert van.calls[0][0][1].content == mir.calls[0][0][1].content


def test_state_is_cleared_between_episodes() -> None:
    _r, _s, client, agent = episode(VoyagerAgent, "vanilla", "diamond", budget=6)
    assert len(agent.library) > 0
    agent.start(EpisodeContext("diamond", "Diamond", 50, 2))
    assert (
        len(agent.library) == 0
        and not agent.programs
        and not agent.repairs
        and agent.program is None
    )
    assert client.calls


def test_a_quoted_count_or_distance_in_a_success_condition_is_read() -> None:
    """A program's success condition with "count": "3" (a number quoted, as models sometimes
    write it) was checked against 1, so one log passed a program meant to gather three and
    the program entered the library as verified; a quoted distance was dropped."""
    from tests.simtools import act
    from tests.simtools import episode as sim

    ep = sim(inventory={"crafting_table": 1})
    start = ep.observe()
    final = act(ep, "mine", block="oak_log", count=1).observation
    assert final.inventory.get("oak_log", 0) == 1
    for count in ("3", 3):
        check = {"kind": "inventory_at_least", "item": "oak_log", "count": count}
        assert check_success(check, start, final, [], 1)["passed"] is False
    assert check_success({**check, "count": "1"}, start, final, [], 1)["passed"] is True
    placed = act(ep, "place", block="crafting_table").observation
    near = {"kind": "facility_available", "facility": "crafting_table", "distance": "0.5"}
    assert check_success(near, start, placed, [], 1)["passed"] is False


def test_an_empty_reuse_skill_beside_a_new_program_is_no_reuse() -> None:
    """A reply that fills in every key the prompt names, "reuse_skill": "" beside its new
    program, was refused as naming a program not in the library."""
    doc = {
        "explain": "logs are in view",
        "plan": "mine one",
        "reuse_skill": "",
        "program": {
            "name": "mine_log",
            "description": "one log",
            "subgoal": "oak_log",
            "success": {"kind": "inventory_delta", "item": "oak_log", "count": 1},
            "actions": [{"skill": "mine", "args": {"block": "oak_log"}}],
        },
    }
    got, problem = parse_program(doc, Library())
    assert got is not None and got.name == "mine_log" and not got.reused, problem


def test_a_success_condition_copied_from_the_prompts_example_does_not_limit_distance() -> None:
    """The program prompt's example showed "count": 1, "distance": 1 without saying what a
    distance does; a model that copied it asked for iron ore within one block after an
    explore that found it 13 blocks away, and every such program failed its check."""
    from tests.simtools import act
    from tests.simtools import episode as sim

    section = load_template("voyager").sections["program_system"]
    example = section[section.index('"success": {') + len('"success": ') :]
    shown = json.JSONDecoder().raw_decode(example)[0]
    numbers = {k: v for k, v in shown.items() if isinstance(v, int | float)}
    ep = sim()
    start = ep.observe()
    found = act(ep, "explore", target="iron_ore").observation
    near = [n.distance for n in found.nearby_blocks if n.id == "iron_ore"]
    assert near and min(near) > 1
    check = {**numbers, "kind": "target_visible", "target": "iron_ore"}
    assert check_success(check, start, found, [], 1)["passed"] is True, check
