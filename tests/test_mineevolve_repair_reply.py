"""What MineEvolve reads from a plan or repair reply beyond its subgoals: the remedies a
repair says it used (``active_remedies_used``), the prefix it says it kept (``kept_prefix``)
and a plan's ``global_constraints`` (the paper's plan and repair schemas)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mirrorcraft.agents.mineevolve.plan import PlanReply, parse_plan_reply, parse_subgoal
from mirrorcraft.llm.base import CallMeta, Message
from tests.test_mineevolve_agent import MISSING_TABLE_REMEDY, SUBGOALS, play


def scripted(
    repair: dict[str, Any], constraints: Sequence[str] = ()
) -> tuple[Any, list[dict[str, Any]]]:
    """The reply script of test_mineevolve_agent's repair episode, with this repair reply
    (``"{remedy}"`` in it stands for the first active remedy's id); and the remedies each
    repair call was shown."""
    shown: list[dict[str, Any]] = []

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        assert meta is not None
        if meta.purpose == "plan":
            subgoals = [SUBGOALS["mine"], SUBGOALS["pick"], SUBGOALS["pick"]]
            return json.dumps({"subgoals": subgoals, "global_constraints": list(constraints)})
        if meta.purpose == "remedy":
            return json.dumps(MISSING_TABLE_REMEDY)
        if meta.purpose == "repair":
            shown.append(meta.extra["remedies"][0])
            text = json.dumps(repair).replace("{remedy}", meta.extra["remedies"][0]["id"])
            return text
        if meta.purpose == "curate":
            return json.dumps({"accepted": [meta.extra["candidate"]["id"]], "rejected": []})
        return "{}"

    return policy, shown


def test_a_remedy_named_only_in_active_remedies_used_is_credited_once() -> None:
    policy, shown = scripted(
        {
            "kept_prefix": ["sg_001"],
            "repaired_suffix": [SUBGOALS["planks"]],
            "active_remedies_used": ["{remedy}", "remedy:{remedy}", "remedy_9999"],
        }
    )
    record, _client, agent = play(policy, budget=8)
    # Three repairs (the same remedy again merges into it); the first two repaired parts'
    # first subgoals ended before the budget did: one use each, whatever the outcome.
    assert record.memory["repairs"] == 3 and {r["id"] for r in shown} == {"remedy_0001"}
    assert agent.kb.entries["remedy_0001"].uses == 2 and record.memory["remedy_claims"] == 2
    assert record.memory["unknown_claims"] == 3


def test_a_remedy_named_by_source_and_in_active_remedies_used_is_not_credited_twice() -> None:
    policy, shown = scripted(
        {
            "kept_prefix": ["sg_001"],
            "repaired_suffix": [dict(SUBGOALS["planks"], source="remedy:{remedy}")],
            "active_remedies_used": ["{remedy}"],
        }
    )
    record, _client, agent = play(policy, budget=8)
    assert record.memory["repairs"] == 3 and {r["id"] for r in shown} == {"remedy_0001"}
    assert agent.kb.entries["remedy_0001"].uses == 2 and record.memory["remedy_claims"] == 0
    assert record.memory["unknown_claims"] == 0


def test_a_repair_whose_kept_prefix_disagrees_is_counted_and_the_prefix_kept() -> None:
    policy, _shown = scripted({"kept_prefix": [], "repaired_suffix": [SUBGOALS["planks"]]})
    record, _client, agent = play(policy, budget=4)
    assert agent.plan is not None and agent.plan.subgoals[0].id == "sg_001"
    assert record.memory["repairs"] == 1 and record.memory["prefix_disagreements"] == 1
    policy, _shown = scripted({"kept_prefix": ["sg_001"], "repaired_suffix": [SUBGOALS["planks"]]})
    record, _client, _agent = play(policy, budget=4)
    assert record.memory["prefix_disagreements"] == 0
    # A reply that does not state the prefix is no disagreement.
    policy, _shown = scripted({"repaired_suffix": [SUBGOALS["planks"]]})
    record, _client, _agent = play(policy, budget=4)
    assert record.memory["prefix_disagreements"] == 0


def test_a_plans_global_constraints_reach_its_repair() -> None:
    policy, _shown = scripted(
        {"kept_prefix": ["sg_001"], "repaired_suffix": [SUBGOALS["planks"]]},
        constraints=["never break the crafting table"],
    )
    _record, client, agent = play(policy, budget=4)
    repair_prompt = next(m for m, meta in client.calls if meta and meta.purpose == "repair")
    assert 'PLAN CONSTRAINTS: ["never break the crafting table"]' in repair_prompt[1].content
    assert agent.plan is not None and agent.plan.constraints == ("never break the crafting table",)
    policy, _shown = scripted({"kept_prefix": ["sg_001"], "repaired_suffix": [SUBGOALS["planks"]]})
    _record, client, _agent = play(policy, budget=4)
    repair_prompt = next(m for m, meta in client.calls if meta and meta.purpose == "repair")
    assert "PLAN CONSTRAINTS: none" in repair_prompt[1].content


def test_reply_fields_of_the_wrong_type_are_ignored() -> None:
    doc = {
        "subgoals": [SUBGOALS["planks"]],
        "global_constraints": "no lava",
        "kept_prefix": "sg_001",
        "active_remedies_used": [3, None, "remedy_0001"],
    }
    got, problem = parse_plan_reply(doc, "subgoals", 3, 8)
    assert problem == "" and isinstance(got, PlanReply)
    assert got.constraints == () and got.kept_prefix is None
    assert got.remedies_used == ("remedy_0001",)
    sg = parse_subgoal(dict(SUBGOALS["planks"], source="remedy_0001"), 0, 3)
    assert not isinstance(sg, str)
    assert PlanReply((sg,), remedies_used=("remedy_0001", "remedy_0002")).claimed(
        ["remedy_0001", "remedy_0002"]
    ) == (("remedy_0002",), 0)
