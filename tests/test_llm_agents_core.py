"""Direct, ReAct (with and without rules) and Reflexion: mechanisms and limits, with a scripted model."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.agents.llm.direct import DirectAgent
from mirrorcraft.agents.llm.react import TRACE_LENGTH, ReActAgent
from mirrorcraft.agents.llm.reflexion import LESSON_TTL, MAX_LESSONS, MAX_REVIEWS, ReflexionAgent
from mirrorcraft.agents.llm.templates import TemplateError, load_template
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.datapack.suites import compiled, find_suite
from mirrorcraft.llm.base import CallMeta, Completion, Message
from tests.llm_fakes import episode

SHEET = compiled(find_suite("M05")).render_sheet()  # type: ignore[arg-type]


def test_direct_makes_one_call_per_action_and_plays_the_task() -> None:
    record, _steps, client, _ = episode(DirectAgent, "M04", "iron_armor")
    assert record.success
    assert record.model_calls == len(client.calls) == record.actions_used
    assert set(record.template_hashes) == {"prompt_version", "common", "direct", "observation"}
    user = client.calls[-1][0][1].content
    for field in (
        "VERIFIED_ACTION_EFFECTS",
        "VANILLA_RECIPE_HYPOTHESES",
        "INVENTORY",
        "NEARBY_TARGETS",
        "TASK_STATE",
        "ACTION_BUDGET",
        "CURRENT_CAPABILITIES",
        "COMPLETED_ADVANCEMENTS",
        "LAST_ACTION_FEEDBACK",
    ):
        assert field in user


def test_react_keeps_at_most_16_recent_steps_and_never_sees_the_sheet_when_hidden() -> None:
    record, _steps, client, _ = episode(ReActAgent, "M05", "enchantment")
    assert record.actions_used > TRACE_LENGTH
    for messages, _meta in client.calls:
        user = messages[1].content
        assert user.count("\n#") <= TRACE_LENGTH
        text = messages[0].content + user
        assert "RULE INFORMATION" not in text and "blast furnace instead" not in text
        assert "differ from standard" not in text


def test_react_with_rules_has_the_sheet_in_every_call_and_is_otherwise_identical() -> None:
    _r, _s, hidden, _ = episode(ReActAgent, "M05", "diamond")
    record, _s2, disclosed, _ = episode(ReActAgent, "M05", "diamond", sheet=SHEET)
    assert record.disclosure == "disclosed"
    for messages, _meta in disclosed.calls:
        assert SHEET in messages[0].content and "RULE INFORMATION: DISCLOSED" in messages[0].content
    assert (
        hidden.calls[0][0][0].content in disclosed.calls[0][0][0].content
    )  # the same system prompt plus the sheet
    assert hidden.calls[0][0][1].content == disclosed.calls[0][0][1].content


def test_hidden_prompts_are_the_same_in_vanilla_and_mirror_worlds() -> None:
    _a, _b, van, _ = episode(ReActAgent, "vanilla", "diamond", budget=3)
    _c, _d, mir, _ = episode(ReActAgent, "M05", "diamond", budget=3)
    assert van.calls[0][0][0].content == mir.calls[0][0][0].content
    assert (
        van.calls[0][0][1].content == mir.calls[0][0][1].content
    )  # nothing differs before a changed rule fires


def test_reflexion_limits_lessons_reviews_and_retention() -> None:
    record, _steps, client, agent = episode(ReflexionAgent, "M01", "enchantment")
    reviews = [m for _msgs, m in client.calls if m is not None and m.purpose == "reflect"]
    assert 1 <= len(reviews) <= MAX_REVIEWS and agent.reviews <= MAX_REVIEWS
    assert (
        record.model_calls == len(client.calls) > record.actions_used
    )  # reflection calls are counted
    for messages, meta in client.calls:
        if meta is not None and meta.purpose == "act":
            lessons = [
                line
                for line in messages[1].content.splitlines()
                if line[:3] in ("1. ", "2. ", "3. ", "4. ")
            ]
            assert len(lessons) <= MAX_LESSONS
    assert len(agent.lessons) <= MAX_LESSONS
    assert all(record.actions_used - les.created < LESSON_TTL + 1 for les in agent.lessons)


def test_reflexion_reviews_a_changed_smelt_and_each_contradiction_once() -> None:
    """M01 smelts raw iron into nuggets: conflicting evidence as much as a changed craft. The
    same changed recipe used again is not reviewed again (it used to take four of the six
    reviews of an M01 Enchantment episode, re-reviewing two planks from a log)."""
    _record, _steps, client, _agent = episode(ReflexionAgent, "M01", "enchantment")
    conflicts = [
        m.extra["evidence"]
        for _msgs, m in client.calls
        if m is not None
        and m.purpose == "reflect"
        and m.extra["evidence"]["trigger"] == "conflicting_evidence"
    ]
    smelts = [e for e in conflicts if e["action"]["skill"] == "smelt"]
    assert smelts and smelts[0]["observed_output"] == {
        "iron_nugget": 3 * smelts[0]["action"]["args"]["count"]
    }
    crafts = [json.dumps(e, sort_keys=True) for e in conflicts if e not in smelts]
    assert crafts and len(crafts) == len(set(crafts))
    assert len(smelts) == 1  # the same per-unit output whatever the count


def test_an_unparseable_reply_gets_one_repair_call() -> None:
    planner = PlannerPolicy(vanilla_rules())
    seen: list[str] = []

    def flaky(messages: Sequence[Message], meta: CallMeta | None) -> str:
        seen.append(meta.purpose if meta else "")
        if len(seen) == 1:
            return "Sure! I think I should mine a log."  # no JSON at all
        return planner(messages, meta)

    record, _steps, client, _ = episode(DirectAgent, "vanilla", "diamond", policy=flaky, budget=5)
    assert seen[:2] == ["act", "repair"] and record.actions_used == 5
    assert "FORMAT REPAIR" in client.calls[1][0][0].content


def test_still_unusable_after_repair_ends_the_episode_with_no_executable_action() -> None:
    replies = itertools.cycle(['{"skill": "fly", "args": {}}', ""])
    record, steps, client, _ = episode(
        ReActAgent, "vanilla", "diamond", policy=lambda m, meta: next(replies)
    )
    assert record.termination == "no_action" and record.actions_used == 0 and not steps
    assert record.model_calls == 2 == len(client.calls)  # the failed calls are still counted


def test_calls_made_before_a_configuration_error_are_still_counted() -> None:
    """An error inside a configuration after its model calls of the step (a bug, an
    unexpected reply) ends the episode as agent_error; those calls were paid for and count."""

    class FailsAfterCalling(DirectAgent):
        async def decide(self, obs: Any) -> tuple[dict[str, Any], str] | None:
            chosen = await super().decide(obs)
            if obs.step >= 2:
                raise RuntimeError("a bug after the call")
            return chosen

    record, steps, client, _ = episode(FailsAfterCalling, "vanilla", "diamond", budget=5)
    assert record.termination == "agent_error" and len(steps) == 2
    assert record.model_calls == 3 == len(client.calls)
    assert record.prompt_tokens == sum(10 * len(messages) for messages, _ in client.calls)


def test_calls_made_before_a_users_agent_fails_are_still_counted() -> None:
    """The same for a user's agent calling the episode's client (``docs/agent_api.md``)."""
    from mirrorcraft.agents.plugins import PluginAgent
    from mirrorcraft.backends.rulesets import vanilla_rules as rules
    from mirrorcraft.evaluator.tasks import get_task
    from mirrorcraft.runner.episode import EpisodeSpec, run_episode
    from mirrorcraft.world.registry import load_world
    from tests.llm_fakes import FakeClient

    class CallsThenFails:
        def start(self, ctx: Any) -> None:
            self.client = ctx.client

        async def act(self, obs: Any) -> dict[str, Any]:
            await self.client.complete([Message("user", "next?")])
            await self.client.complete([Message("user", "sure?")])
            if obs.step >= 1:
                raise RuntimeError("my parser broke")
            return {"skill": "wait", "args": {}}

    client = FakeClient(lambda messages, meta: "fine")
    agent = PluginAgent("p", CallsThenFails(), client)
    task = get_task("diamond").with_budget(4)
    spec = EpisodeSpec("e", "x", "plains-1", "vanilla", task, "p", "m", "hidden", 0, 7)
    record, steps = asyncio.run(run_episode(spec, agent, load_world("plains-1"), rules(), rules()))
    assert record.termination == "agent_error" and len(steps) == 1
    assert len(client.calls) == 4
    assert record.model_calls == 4 and record.prompt_tokens == 40


@pytest.mark.parametrize(
    "absurd",
    [
        '{"skill": ' + "[" * 50_000 + "]" * 50_000 + "}",
        '{"skill": "mine", "n": ' + "7" * 5000 + "}",
    ],
    ids=["nested", "long_number"],
)
def test_a_reply_too_deep_or_too_long_to_decode_is_an_unusable_reply(absurd: str) -> None:
    """JSON nested past the recursion limit, or a number past Python's 4,300 digits, used to
    end the episode as an agent error without the repair call every unusable reply gets."""
    record, _steps, client, _ = episode(
        ReActAgent, "vanilla", "diamond", policy=lambda m, meta: absurd
    )
    assert record.termination == "no_action" and record.actions_used == 0
    assert record.model_calls == 2 == len(client.calls)


def test_nan_and_infinity_in_a_reply_are_not_json() -> None:
    """Python's decoder reads NaN and Infinity; a model that wrote them got them into its
    plans and, for MineEvolve, into the knowledge store's JSON."""
    from mirrorcraft.agents.llm.replies import first_json_object

    assert first_json_object('{"skill": NaN} then {"skill": "wait"}') == {"skill": "wait"}
    assert first_json_object('{"level": Infinity}') is None
    assert first_json_object('{"level": -Infinity, "x": 1}') is None
    assert first_json_object('{"note": "NaN is text here"}') == {"note": "NaN is text here"}


def test_a_draft_action_in_a_reasoning_block_is_not_the_answer() -> None:
    """Reasoning models served without a reasoning parser write their thinking, drafts of
    the JSON included, in a <think> block before the answer. The first object in the text
    was read, so the agent executed a draft the model had rejected instead of its answer."""
    draft = '{"skill": "explore", "args": {"target": "oak_log"}}'
    answer = '{"thought": "logs are in view", "skill": "mine", "args": {"block": "oak_log"}}'
    reply = f"<think>Maybe {draft}? No: oak_log is in NEARBY_TARGETS.</think>\n{answer}"
    _record, steps, _client, _ = episode(
        ReActAgent, "vanilla", "diamond", policy=lambda m, meta: reply, budget=1
    )
    assert steps[0].action == {"skill": "mine", "args": {"block": "oak_log"}}
    assert steps[0].thought == "logs are in view"


def test_templates_are_strict() -> None:
    t = load_template("direct")
    with pytest.raises(TemplateError, match="no value"):
        t.render("user", {})
    with pytest.raises(TemplateError, match="unused"):
        t.render("user", {"OBSERVATION": "x", "EXTRA": "y"})
    assert json.dumps(t.digest)


def test_records_count_cached_and_estimated_calls_and_the_cost_table_shows_them(
    tmp_path: Path,
) -> None:
    """Cached calls are counted apart from paid ones; estimated token counts are marked."""
    import asyncio
    import dataclasses

    from mirrorcraft.analysis.loading import load_results
    from mirrorcraft.analysis.summary import summarize
    from mirrorcraft.backends.rulesets import resolve_rules
    from mirrorcraft.evaluator.tasks import get_task
    from mirrorcraft.report.render import render_text
    from mirrorcraft.report.tables import build_tables
    from mirrorcraft.runner.episode import EpisodeSpec, run_episode
    from mirrorcraft.world.registry import load_world
    from tests.llm_fakes import FakeClient
    from tests.test_analysis_helpers import write_jsonl

    class Marked(FakeClient):
        async def complete(self, messages: Sequence[Message], **kw: object) -> Completion:  # type: ignore[override]
            done = await super().complete(messages, **kw)  # type: ignore[arg-type]
            n = len(self.calls)
            return dataclasses.replace(done, cached=n % 2 == 0, estimated=n % 3 == 0)

    vanilla = vanilla_rules()
    records = []
    for rules in ("vanilla", "M04"):
        client = Marked(PlannerPolicy(vanilla))
        agent = DirectAgent("direct", client, vanilla)
        spec = EpisodeSpec(
            f"ep-{rules}", "t", "plains-1", rules, get_task("iron_armor"), "direct", "fake",
            "hidden", 0, 1,
        )  # fmt: skip
        record, _ = asyncio.run(
            run_episode(spec, agent, load_world("plains-1"), resolve_rules(rules), vanilla)
        )
        n = len(client.calls)
        assert record.model_calls == n
        assert record.cached_calls == n // 2 and record.estimated_calls == n // 3
        records.append(record)
    loaded = load_results(write_jsonl(tmp_path / "r.jsonl", records))  # passes every check
    summary = summarize(loaded.records)
    (row,) = summary["configurations"]
    mirror = records[1]
    assert row["cached_calls"] == mirror.cached_calls
    assert row["paid_calls"] == mirror.model_calls - mirror.cached_calls
    assert row["cost_estimated"] == 1
    text = "\n".join(render_text(t) for t in build_tables(summary))
    assert "Model calls, tokens and cost per Mirror episode" in text
    assert "0.000 est." in text
