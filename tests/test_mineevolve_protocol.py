"""The comparison protocol: the equal call budget, and ablations that differ in exactly one way."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from mirrorcraft.agents.mineevolve.agent import MineEvolveAgent
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.agents.registry import MOCK_MODEL, make_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.cli import main
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import CallMeta, Message
from mirrorcraft.llm.budget import BudgetedClient, CallBudgetExhausted
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.runner.records import TERMINATIONS
from mirrorcraft.runner.spec import EpisodeCondition
from mirrorcraft.world.registry import load_world
from tests.llm_fakes import FakeClient

V = vanilla_rules()


def play(
    agent: Any,
    *,
    task: str = "obtain_iron_pickaxe",
    rules: str = "vanilla",
    call_budget: int | None = None,
    world: str = "plains-1",
) -> tuple[Any, list[Any]]:
    spec = EpisodeSpec(
        "t", "t", world, rules, get_task(task), agent.name, "m", "hidden", 0, 1, "", call_budget
    )
    return asyncio.run(run_episode(spec, agent, load_world(world), resolve_rules(rules), V))


# -- the call budget ---------------------------------------------------------------------------------


def test_the_budgeted_client_refuses_the_call_after_the_last_one() -> None:
    inner = FakeClient(lambda m, meta: "{}")
    client = BudgetedClient(inner, 2)
    msgs = [Message("user", "hi")]
    asyncio.run(client.complete(msgs))
    asyncio.run(client.complete(msgs))
    with pytest.raises(CallBudgetExhausted, match="all 2 model calls"):
        asyncio.run(client.complete(msgs))
    assert len(inner.calls) == 2 and client.model == "fake"
    client.reset()
    asyncio.run(client.complete(msgs))
    assert len(inner.calls) == 3
    with pytest.raises(ValueError):
        BudgetedClient(inner, 0)


@pytest.mark.parametrize("name", ["mineevolve", "deps", "jarvis1", "optimus1", "optimus2"])
def test_the_call_budget_ends_an_episode_as_a_scored_outcome(name: str) -> None:
    agent = make_agent(name, active=V, vanilla=V, model=MOCK_MODEL, call_budget=5)
    record, steps = play(agent, call_budget=5)
    assert "call_budget" in TERMINATIONS
    assert record.termination == "call_budget" and not record.success
    assert record.model_calls == 5 and record.call_budget == 5
    assert (
        record.actions_used == len(steps)
        and record.actions_used < get_task("obtain_iron_pickaxe").budget
    )
    # Without a cap the same configuration finishes the task.
    free, _ = play(make_agent(name, active=V, vanilla=V, model=MOCK_MODEL))
    assert free.success and free.model_calls > 5 and free.call_budget is None


def test_the_call_budget_is_part_of_the_condition_only_when_set() -> None:
    base = ("plains-1", "vanilla", "obtain_stick", "deps", "m", "hidden", 10, 0, 7)
    plain = EpisodeCondition(*base)
    old_key = json.dumps(list(base))
    assert plain.episode_id == hashlib.sha256(old_key.encode()).hexdigest()[:20]
    assert EpisodeCondition(*base, call_budget=30).episode_id != plain.episode_id


def _records(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as con:
        return [json.loads(r) for (r,) in con.execute("SELECT record FROM episodes")]


def test_a_spec_call_budget_is_enforced_for_every_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = {
        "schema_version": 1,
        "name": "capped",
        "worlds": ["plains-1"],
        "rules": ["vanilla"],
        "tasks": ["obtain_iron_pickaxe", "obtain_logs"],
        "agents": ["mineevolve", "deps", "optimus2", "vanilla-planner"],
        "models": [{"name": MOCK_MODEL}],
        "call_budget": 6,
    }
    path = tmp_path / "capped.yaml"
    path.write_text(yaml.safe_dump(spec))
    assert (
        main(["run", str(path), "--out", str(tmp_path / "o"), "--workers", "1", "--no-report"]) == 0
    )
    records = _records(tmp_path / "o" / "results.sqlite")
    llm = [r for r in records if r["agent"] != "vanilla-planner"]
    assert len(llm) == 6 and all(r["model_calls"] <= 6 for r in llm)
    assert {r["termination"] for r in llm if r["task"] == "obtain_iron_pickaxe"} == {"call_budget"}
    assert {r["termination"] for r in llm if r["task"] == "obtain_logs"} == {"success"}
    assert all(r["call_budget"] == 6 for r in llm)
    assert all(r["call_budget"] is None for r in records if r["agent"] == "vanilla-planner")
    capsys.readouterr()
    assert main(["analyze", str(tmp_path / "o" / "results.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "Call cap hit (%)" in out and "capped at 6" in out


# -- ablations differ from the full agent in exactly the documented way ------------------------------


def _play_variant(variant: str, policy: Any, **kw: Any) -> tuple[Any, FakeClient, MineEvolveAgent]:
    client = FakeClient(policy)
    agent = MineEvolveAgent("mineevolve", client, V, options={"variant": variant, **kw})
    record, _steps = play(agent, rules="M01", task="iron_armor")
    return record, client, agent


def _purposes(client: FakeClient) -> Counter[str]:
    return Counter(meta.purpose for _m, meta in client.calls if meta is not None)


def test_the_deterministic_curator_differs_only_by_the_judged_stage() -> None:
    full, full_client, full_agent = _play_variant("full", PlannerPolicy(V))
    det, det_client, det_agent = _play_variant("deterministic_curator", PlannerPolicy(V))
    assert _purposes(full_client)["curate"] >= 1 and _purposes(det_client)["curate"] == 0
    # The mock judge accepts what the checks let through, so everything else is identical.
    assert full.signatures == det.signatures and full.score_trace == det.score_trace
    assert {k: v for k, v in _purposes(full_client).items() if k != "curate"} == _purposes(
        det_client
    )
    assert full_agent.kb.entries == det_agent.kb.entries
    assert full.memory["judged"] == _purposes(full_client)["curate"] and det.memory["judged"] == 0
    assert full.memory["memory_calls"] > det.memory["memory_calls"]


def test_a_rejecting_judge_keeps_candidates_out_of_the_store() -> None:
    planner = PlannerPolicy(V)

    def strict(messages: Sequence[Message], meta: CallMeta | None) -> str:
        if meta is not None and meta.purpose == "curate":
            cid = meta.extra["candidate"]["id"]
            return json.dumps({"accepted": [], "rejected": [{"id": cid, "reason": "specificity"}]})
        return planner(messages, meta)

    record, client, agent = _play_variant("full", strict)
    judged = _purposes(client)["curate"]
    assert judged >= 1 and record.memory["rejected"].get("specificity", 0) >= judged
    assert agent.kb.counts() == {"skill": 0, "remedy": 0, "reflection": 0}
    assert record.memory["accepted"] == 0


def test_without_the_adaptor_knowledge_reaches_only_the_first_plan() -> None:
    # A store to start from: what a full episode learned.
    _r, _c, teacher = _play_variant("full", PlannerPolicy(V))
    entries = teacher.kb.live()
    assert entries

    def run(variant: str) -> tuple[Any, FakeClient]:
        client = FakeClient(PlannerPolicy(V))
        agent = MineEvolveAgent("mineevolve", client, V, options={"variant": variant})
        agent.load_knowledge(entries, writable=False)
        record, _steps = play(agent, rules="M01", task="iron_armor")
        return record, client

    ablated, client = run("no_adaptor")
    plans = [m[1].content for m, meta in client.calls if meta and meta.purpose == "plan"]
    assert len(plans) >= 2
    assert "RETRIEVED SKILLS:\nnone\nACTIVE REMEDIES:\nnone" not in plans[0]
    assert all("RETRIEVED SKILLS:\nnone\nACTIVE REMEDIES:\nnone" in p for p in plans[1:])
    assert _purposes(client)["repair"] == 0 and ablated.memory["bare_replans"] == len(plans) - 1
    full, full_client = run("full")
    repairs = [m[1].content for m, meta in full_client.calls if meta and meta.purpose == "repair"]
    assert repairs and full.memory["bare_replans"] == 0
    assert any("ACTIVE REMEDIES:\nnone" not in p for p in repairs)


def test_the_static_store_reads_knowledge_but_never_changes_it() -> None:
    _r, _c, teacher = _play_variant("full", PlannerPolicy(V))
    client = FakeClient(PlannerPolicy(V))
    agent = MineEvolveAgent("mineevolve", client, V, options={"variant": "static_store"})
    agent.load_knowledge(teacher.kb.live(), writable=True)
    record, _steps = play(agent, rules="M01", task="iron_armor")
    assert record.memory["writable"] is False and agent.knowledge_delta() == []
    assert record.memory["store_at_end"] == record.memory["store_at_start"]
    assert record.memory["retrieved_tokens_mean"] > 0  # it still reads the frozen knowledge
