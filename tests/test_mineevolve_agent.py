"""The MineEvolve configuration end to end with scripted clients: repair, ablations, hygiene."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from mirrorcraft.agents.mineevolve.agent import MineEvolveAgent
from mirrorcraft.agents.mineevolve.config import MineEvolveConfigError
from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.agents.registry import MOCK_MODEL, is_known_agent, make_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import CallMeta, Message
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world
from tests.llm_fakes import HIDDEN_PHRASES, FakeClient

V = vanilla_rules()


def play(
    policy: Any,
    *,
    rules: str = "vanilla",
    task: str = "iron_armor",
    variant: str = "full",
    budget: int | None = None,
    world: str = "plains-1",
) -> tuple[Any, FakeClient, MineEvolveAgent]:
    client = FakeClient(policy)
    agent = MineEvolveAgent("mineevolve", client, V, options={"variant": variant})
    t = get_task(task) if budget is None else get_task(task).with_budget(budget)
    spec = EpisodeSpec("t", "t", world, rules, t, "mineevolve", "fake", "hidden", 0, 1)
    record, _steps = asyncio.run(
        run_episode(spec, agent, load_world(world), resolve_rules(rules), V)
    )
    return record, client, agent


def purposes(client: FakeClient) -> Counter[str]:
    return Counter(meta.purpose for _m, meta in client.calls if meta is not None)


def test_solves_vanilla_tasks_with_the_scripted_planner_and_learns_skills() -> None:
    record, client, agent = play(PlannerPolicy(V), task="diamond")
    assert record.success and record.termination == "success"
    assert record.model_calls == len(client.calls) and record.memory["calls"]["plan"] >= 1
    assert agent.kb.counts()["skill"] >= 1 and agent.knowledge_delta()
    assert record.memory["store_at_end"]["skill"] == agent.kb.counts()["skill"]
    assert set(record.template_hashes) == {"prompt_version", "common", "mineevolve", "observation"}


SUBGOALS = {
    "mine": {
        "subgoal_id": "sg_001",
        "condition": "get logs",
        "action": {"skill": "mine", "args": {"block": "log", "count": 2}},
        "checks": [{"type": "action_ok"}],
    },
    "pick": {
        "subgoal_id": "sg_002",
        "condition": "craft a pickaxe",
        "action": {
            "skill": "craft_grid",
            "args": {
                "station": "crafting_table",
                "grid": [["oak_planks"] * 3, [None, "stick", None], [None, "stick", None]],
            },
        },
        "checks": [{"type": "inv_gain", "item": "wooden_pickaxe", "n": 1}],
    },
    "planks": {
        "subgoal_id": "sg_009",
        "condition": "make planks",
        "action": {
            "skill": "craft_grid",
            "args": {"station": "inventory", "grid": [["birch_log"]]},
        },
        "checks": [{"type": "action_ok"}],
    },
}


MISSING_TABLE_REMEDY = {
    "trigger_context": ["target:wooden_pickaxe", "skill:craft_grid"],
    "failure_type": "MISSING_STATION",
    "risk_pattern": "a table recipe fails without a placed crafting table",
    "repair_action": [SUBGOALS["planks"]],
    "scope": "unfinished_plan_suffix",
}
"""A remedy reply for the crafting table the scripted plans lack."""


def scripted_repair(messages: Sequence[Message], meta: CallMeta | None) -> str:
    assert meta is not None
    if meta.purpose == "plan":
        return json.dumps({"subgoals": [SUBGOALS["mine"], SUBGOALS["pick"], SUBGOALS["pick"]]})
    if meta.purpose == "remedy":
        return json.dumps(MISSING_TABLE_REMEDY)
    if meta.purpose == "repair":
        # The reply claims to keep nothing: the adaptor still keeps the completed prefix.
        return json.dumps({"kept_prefix": [], "repaired_suffix": [SUBGOALS["planks"]]})
    if meta.purpose == "curate":
        return json.dumps({"accepted": [meta.extra["candidate"]["id"]], "rejected": []})
    return "{}"


def test_adaptor_keeps_the_completed_prefix_and_replaces_only_the_suffix() -> None:
    record, client, agent = play(scripted_repair, budget=4)
    assert purposes(client)["repair"] == 1 and purposes(client)["remedy"] == 1
    assert agent.plan is not None
    assert agent.plan.subgoals[0].id == "sg_001" and agent.plan.subgoals[0].condition == "get logs"
    assert agent.plan.done >= 1
    assert [s.condition for s in agent.plan.subgoals[1:]] == ["make planks"]
    repair_prompt = next(m for m, meta in client.calls if meta and meta.purpose == "repair")
    assert 'COMPLETED PREFIX (kept): ["sg_001"]' in repair_prompt[1].content
    assert "[failed]" in repair_prompt[1].content and "remedy_" in repair_prompt[1].content
    assert record.memory["repairs"] == 1 and record.memory["remedies_due"] == 1


def test_unusable_replies_end_the_episode_after_one_json_repair() -> None:
    record, client, _agent = play(lambda m, meta: "I would rather chat.", budget=5)
    assert record.termination == "no_action" and record.actions_used == 0
    assert record.model_calls == 2 and purposes(client)["plan"] == 2
    assert record.memory["json_repairs"] == 1


@pytest.mark.parametrize(
    ("variant", "present", "absent"),
    [
        ("skills_only", {"skill"}, {"remedy", "reflection"}),
        ("remedies_only", {"remedy"}, {"skill", "reflection"}),
        ("text_reflection", {"reflection"}, {"skill", "remedy"}),
        ("no_adaptor", {"remedy"}, {"repair"}),
    ],
)
def test_ablation_switches_change_which_calls_happen(
    variant: str, present: set[str], absent: set[str]
) -> None:
    record, client, agent = play(PlannerPolicy(V), rules="M01", variant=variant)
    used = set(purposes(client))
    assert present <= used and not (absent & used), (variant, used)
    if variant == "no_adaptor":
        assert record.memory["full_replans"] >= 1 and record.memory["repairs"] == 0
    if variant == "text_reflection":
        assert agent.kb.counts()["reflection"] >= 1 and agent.kb.counts()["remedy"] == 0


def test_binary_feedback_hides_the_typed_fields() -> None:
    _record, client, _agent = play(PlannerPolicy(V), rules="M01", variant="binary_feedback")
    prompts = [m[1].content for m, meta in client.calls if meta and meta.purpose == "remedy"]
    assert prompts and all(
        '"f":' not in p and '"stagnant"' not in p and '"y":0' in p for p in prompts
    )


def test_static_store_learns_nothing() -> None:
    record, _client, agent = play(PlannerPolicy(V), rules="M01", variant="static_store")
    assert agent.knowledge_delta() == [] and agent.kb.counts()["skill"] == 0
    assert record.memory["writable"] is False


def test_prompts_never_name_the_rule_suite() -> None:
    _record, client, _agent = play(PlannerPolicy(V), rules="M01")
    text = "\n".join(m.content for msgs, _meta in client.calls for m in msgs)
    assert "M01" not in text
    assert not [p for p in HIDDEN_PHRASES if p.lower() in text.lower()]


def test_registry_builds_variants_and_the_offline_mock_model() -> None:
    assert is_known_agent("mineevolve[no_curator]") and not is_known_agent("mineevolve[nope]")
    agent = make_agent("mineevolve[no_curator]", active=V, vanilla=V, model=MOCK_MODEL)
    assert isinstance(agent, MineEvolveAgent) and agent.switches.curator is False
    with pytest.raises(MineEvolveConfigError, match=r"inducer\.window"):
        MineEvolveAgent("x", agent.client, V, options={"settings": {"inducer": {"window": 0}}})
    with pytest.raises(ValueError, match="unknown MineEvolve options"):
        MineEvolveAgent("x", agent.client, V, options={"colour": "red"})


def test_a_skill_verifying_what_its_segment_did_not_reach_is_not_stored() -> None:
    """Every induced skill claims 64 diamonds: none holds where its segment ended, so the
    curator rejects each as not executable and nothing is judged or stored (it used to
    admit them all, each topic then blocking the true skill for that item)."""
    inner = PlannerPolicy(V)

    def boastful(messages: Sequence[Message], meta: CallMeta | None) -> str:
        text = inner(messages, meta)
        if meta is not None and meta.purpose == "skill":
            doc = json.loads(text)
            doc["verification"] = {"type": "inv_ge", "item": "diamond", "n": 64}
            text = json.dumps(doc)
        return text

    record, _client, agent = play(boastful, task="diamond", variant="deterministic_curator")
    assert record.memory["calls"]["skill"] >= 1
    assert agent.kb.counts()["skill"] == 0
    assert record.memory["rejected"].get("exec", 0) == record.memory["calls"]["skill"]


def test_remedies_induced_in_a_read_only_episode_stay_active_side_by_side() -> None:
    """Reading a frozen store (every checkpoint evaluation, and the static-store ablation),
    each remedy induced in the episode used to get the same id, so the newest replaced
    the others among the active remedies: only one ever stayed active."""
    record, client, agent = play(
        PlannerPolicy(V), rules="M05", task="diamond", variant="static_store"
    )
    judged = [
        meta.extra["candidate"]["id"]
        for _m, meta in client.calls
        if meta and meta.purpose == "curate"
    ]
    assert len(judged) >= 2 and len(set(judged)) == len(judged)
    assert [e.id for e in agent.temporary] == judged[-4:]
    assert agent.knowledge_delta() == [] and record.memory["writable"] is False
    last_repair = [m[1].content for m, meta in client.calls if meta and meta.purpose == "repair"][
        -1
    ]
    assert all(eid in last_repair for eid in judged[-4:])


def test_an_episode_that_cannot_keep_a_skill_does_not_ask_for_one() -> None:
    """Reading a store without updates, every skill call (eight per diamond episode) used to
    be spent on a skill thrown away unused, inflating evaluation-time model calls."""
    record, client, _agent = play(PlannerPolicy(V), task="diamond", variant="static_store")
    assert purposes(client)["skill"] == 0 and record.memory["skill_inductions"] == 0
    frozen = MineEvolveAgent("mineevolve", FakeClient(PlannerPolicy(V)), V)
    frozen.load_knowledge([], writable=False)  # a checkpoint evaluation of the full variant
    t = get_task("diamond")
    spec = EpisodeSpec("t", "t", "plains-1", "vanilla", t, "mineevolve", "fake", "hidden", 0, 1)
    asyncio.run(run_episode(spec, frozen, load_world("plains-1"), V, V))
    assert purposes(frozen.client)["skill"] == 0 and frozen.knowledge_delta() == []
    _record, learnt_client, _ = play(PlannerPolicy(V), task="diamond")
    assert purposes(learnt_client)["skill"] >= 1


def test_binary_feedback_keeps_failure_types_out_of_judging_and_retrieval() -> None:
    """The binary-feedback ablation keeps only success or failure, yet the curator's judge
    was told the recent typed failure types and retrieval ranked remedies by them."""
    _record, client, agent = play(PlannerPolicy(V), rules="M01", variant="binary_feedback")
    judged = [m[1].content for m, meta in client.calls if meta and meta.purpose == "curate"]
    assert judged and all("recent failure types []" in p for p in judged)
    assert any(not f.success for f, _ in agent.history_fb) and agent._recent_failures() == []
    _record, typed_client, _agent = play(PlannerPolicy(V), rules="M01")
    typed = [m[1].content for m, meta in typed_client.calls if meta and meta.purpose == "curate"]
    assert any("recent failure types []" not in p for p in typed)


def test_a_subgoal_naming_its_entry_by_the_bare_id_credits_that_entry() -> None:
    """The planner is told to put the copied entry's id in "source", and the paper's repair
    schema writes ``"repair_source": "remedy_nav_obstacle"``: a bare id. Only the mock wrote
    "skill:<id>", so with a real model no use was ever counted, and confidence and
    retirement never moved."""
    step = dict(SUBGOALS["mine"], checks=[{"type": "inv_gain", "item": "log", "n": 1}])
    skill = KnowledgeEntry(
        id="skill_0001",
        kind="skill",
        trigger=("target:log",),
        steps=(step,),
        verification={"type": "inv_gain", "item": "log", "n": 1},
    )

    def planner(messages: Sequence[Message], meta: CallMeta | None) -> str:
        assert meta is not None
        if meta.purpose == "plan":
            return json.dumps({"subgoals": [dict(SUBGOALS["mine"], source="skill_0001")]})
        return "{}"

    for source in ("skill_0001", "skill:skill_0001"):
        client = FakeClient(
            lambda m, meta, s=source: planner(m, meta).replace('"skill_0001"', json.dumps(s))
        )
        agent = MineEvolveAgent("mineevolve", client, V)
        agent.load_knowledge([skill], writable=True)
        t = get_task("iron_armor").with_budget(2)
        spec = EpisodeSpec("t", "t", "plains-1", "vanilla", t, "mineevolve", "f", "hidden", 0, 1)
        record, _ = asyncio.run(run_episode(spec, agent, load_world("plains-1"), V, V))
        assert record.memory["uses"] >= 1, source
        assert agent.kb.entries["skill_0001"].uses == record.memory["uses"], source


def test_a_read_only_episode_can_be_told_to_generate_no_knowledge() -> None:
    """The paper's checkpoint evaluation says "no further knowledge is updated or generated";
    the adaptor's temporary remedy is the one exception our default reads into it. With
    switches.read_only_remedies false a read-only episode makes no remedy or curate call
    and still repairs its plan under the retrieved knowledge."""
    t = get_task("diamond")
    spec = EpisodeSpec("t", "t", "plains-1", "M05", t, "mineevolve", "fake", "hidden", 0, 1)
    calls = {}
    for generate in (True, False):
        settings = {"switches": {"read_only_remedies": generate}}
        agent = MineEvolveAgent(
            "mineevolve", FakeClient(PlannerPolicy(V)), V, options={"settings": settings}
        )
        agent.load_knowledge([], writable=False)
        record, _ = asyncio.run(
            run_episode(spec, agent, load_world("plains-1"), resolve_rules("M05"), V)
        )
        calls[generate] = purposes(agent.client)
        assert agent.knowledge_delta() == [] and record.memory["writable"] is False
    assert calls[True]["remedy"] >= 1 and calls[True]["curate"] >= 1
    assert calls[False]["remedy"] == 0 and calls[False]["curate"] == 0
    assert calls[False]["repair"] >= 1
