"""The ``tools`` configuration: skills as function tools generated from data/skills.yaml, tool
calls through the client layer (OpenAI client, cache, budget, mock, fake endpoint), the one
repair, and records comparable with ``react``'s."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mirrorcraft.agents.llm.react import ReActAgent
from mirrorcraft.agents.llm.tool_calling import ToolsAgent
from mirrorcraft.agents.llm.tools import action_from_calls, arg_schema, skill_tools, skill_toolset
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.agents.registry import make_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.body.actions import Action, parse_action, skill_specs
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import CallMeta, ChatReply, Message, Sampling, ToolCall
from mirrorcraft.llm.budget import BudgetedClient
from mirrorcraft.llm.cache import CachedClient, ResponseCache, cache_key
from mirrorcraft.llm.fakeserver import FakeOpenAIServer, Reply
from mirrorcraft.llm.mock import MockLLM
from mirrorcraft.llm.openai_client import OpenAIClient, OpenAISettings
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.safeload import load_yaml_file
from mirrorcraft.world.registry import load_world

SKILLS_YAML = Path(__file__).resolve().parents[1] / "src/mirrorcraft/data/skills.yaml"


def test_every_skill_is_a_tool_with_the_yaml_arguments() -> None:
    raw = load_yaml_file(SKILLS_YAML)["skills"]
    tools = {t["function"]["name"]: t["function"] for t in skill_tools()}
    assert list(tools) == list(raw) and len(tools) == 13
    for name, doc in raw.items():
        params = tools[name]["parameters"]
        assert tools[name]["description"] == doc["summary"]
        assert set(params["properties"]) == set(doc["args"])
        assert params["required"] == [a for a, d in doc["args"].items() if "default" not in d]
        assert params["additionalProperties"] is False
        for arg, d in doc["args"].items():
            prop = params["properties"][arg]
            if d["type"] == "int":
                assert (prop["minimum"], prop["maximum"]) == (d["min"], d["max"])
            if d["type"] == "enum":
                assert prop["enum"] == d["choices"]
            if "default" in d:
                assert prop["default"] == d["default"]


def test_a_changed_skill_definition_changes_its_tool() -> None:
    """The schema is generated from the skill definition, not written a second time."""
    spec = skill_specs()["mine"]
    count = next(a for a in spec.args if a.name == "count")
    wider = type(count)(count.name, count.type, count.default, count.required, 1, 9)
    assert arg_schema(wider)["maximum"] == 9 and arg_schema(count)["maximum"] == 4


@pytest.mark.parametrize(
    ("skill", "args"),
    [
        ("mine", {"block": "oak_log", "count": 2}),
        ("mine", {"block": "log"}),
        ("craft_grid", {"station": "inventory", "grid": [["oak_log", None], [None, None]]}),
        ("smelt", {"input": "raw_iron", "count": 6}),
        ("trade", {"give": "emerald", "get": "bread"}),
        ("wait", {}),
        ("mine", {"block": "oak_log", "count": 5}),
        ("mine", {"count": 1}),
        ("mine", {"block": "oak_log", "depth": 1}),
        ("craft_grid", {"station": "furnace", "grid": [["a"]]}),
        ("craft_grid", {"station": "inventory", "grid": ["oak_log"]}),
        ("enchant", {"item": "book", "option": "best"}),
        ("ascend", {"height": 7}),
    ],
)
def test_the_schema_and_the_body_agree(skill: str, args: dict[str, Any]) -> None:
    """Arguments the tool schema accepts are exactly those the body's checks accept."""
    schema = next(t for t in skill_tools() if t["function"]["name"] == skill)
    validator = jsonschema.Draft202012Validator(schema["function"]["parameters"])
    by_schema = validator.is_valid(args)
    by_body = isinstance(parse_action({"skill": skill, "args": args}), Action)
    assert by_schema == by_body, (skill, args, by_schema, by_body)
    action, problem = action_from_calls([ToolCall(skill, json.dumps(args))])
    assert (action is not None) == by_body and (problem == "") == by_body


@pytest.mark.parametrize(
    ("calls", "problem"),
    [
        ([], "called no function"),
        ([ToolCall("dig", "{}")], "unknown function 'dig'"),
        ([ToolCall("mine", '{"block": ')], "not valid JSON"),
        ([ToolCall("mine", '{"block": "stone", "count": NaN}')], "not valid JSON"),
        ([ToolCall("mine", '{"block": "stone", "count": -Infinity}')], "not valid JSON"),
        ([ToolCall("mine", '["oak_log"]')], "must be a JSON object"),
        ([ToolCall("mine", '{"count": 2}')], "needs argument 'block'"),
    ],
)
def test_malformed_calls_say_why(calls: list[ToolCall], problem: str) -> None:
    action, why = action_from_calls(calls)
    assert action is None and problem in why


def test_the_first_of_several_calls_is_the_action() -> None:
    calls = [ToolCall("wait", ""), ToolCall("mine", '{"block": "stone"}')]
    assert action_from_calls(calls) == ({"skill": "wait", "args": {}}, "")


def test_an_unknown_tool_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="tool_choice"):
        skill_toolset("any")
    vanilla = vanilla_rules()
    with pytest.raises(ValueError, match="unknown option"):
        ToolsAgent("tools", MockLLM(lambda m, c: "{}"), vanilla, options={"choice": "auto"})


def _episode(agent: Any, rules: str, budget: int = 12, sheet: str | None = None) -> Any:
    vanilla = vanilla_rules()
    task = get_task("diamond").with_budget(budget)
    disclosure = "disclosed" if sheet else "hidden"
    spec = EpisodeSpec("e", "x", "plains-1", rules, task, agent.name, "m", disclosure, 0, 1)
    return asyncio.run(
        run_episode(
            spec, agent, load_world("plains-1"), resolve_rules(rules), vanilla, rule_sheet=sheet
        )
    )


class Recording:
    """A policy wrapper keeping each call's messages and reply."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.prompts: list[Sequence[Message]] = []

    def __call__(self, messages: Sequence[Message], meta: CallMeta | None) -> str | ChatReply:
        self.prompts.append(messages)
        reply: str | ChatReply = self.inner(messages, meta)
        return reply


def test_tools_and_react_play_the_same_steps_on_the_same_prompts() -> None:
    """Records comparable with react's: the same actions from the same planner, the same user
    prompt at every step, the same record fields; only the reply channel differs."""
    vanilla = vanilla_rules()
    runs = {}
    for cls in (ToolsAgent, ReActAgent):
        policy = Recording(PlannerPolicy(vanilla))
        agent = cls(cls.__name__, MockLLM(policy), vanilla)
        record, steps = _episode(agent, "M04", budget=20)
        runs[cls] = (record, steps, policy)
    (t_rec, t_steps, t_pol), (r_rec, r_steps, r_pol) = runs[ToolsAgent], runs[ReActAgent]
    assert [s.action for s in t_steps] == [s.action for s in r_steps]
    assert (t_rec.score, t_rec.actions_used, t_rec.model_calls) == (
        r_rec.score,
        r_rec.actions_used,
        r_rec.model_calls,
    )
    assert [p[1].content for p in t_pol.prompts] == [p[1].content for p in r_pol.prompts]
    assert t_pol.prompts[0][0].content != r_pol.prompts[0][0].content
    assert set(t_rec.to_json()) == set(r_rec.to_json())
    assert set(t_rec.template_hashes) == {
        "prompt_version",
        "common",
        "react",
        "tools",
        "observation",
    }


def test_a_reply_without_a_call_gets_one_repair_then_no_action() -> None:
    vanilla = vanilla_rules()
    planner = PlannerPolicy(vanilla)
    replies: list[str] = []

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str | ChatReply:
        assert meta is not None
        replies.append(meta.purpose)
        if len(replies) == 1:
            return "I think I should mine a log"  # text, no tool call: repaired
        if len(replies) <= 3:
            return planner(messages, meta)
        return ChatReply("", (ToolCall("mine", '{"block": '),))  # malformed from here on

    agent = ToolsAgent("tools", MockLLM(policy), vanilla)
    record, _steps = _episode(agent, "vanilla")
    assert replies[:2] == ["act", "repair"]
    assert record.termination == "no_action" and record.actions_used == 2
    assert record.model_calls == 5  # 2 + 1 actions, then an act and its repair that failed


def test_disclosed_condition_carries_the_sheet_and_hidden_never_does() -> None:
    vanilla = vanilla_rules()
    sheet = "RULE SHEET LINE: iron ore drops gravel"
    for given in (None, sheet):
        policy = Recording(PlannerPolicy(vanilla))
        agent = ToolsAgent("tools", MockLLM(policy), vanilla)
        _episode(agent, "M04", budget=3, sheet=given)
        systems = [p[0].content for p in policy.prompts]
        assert all((sheet in s) == (given is not None) for s in systems)
        assert all("DISCLOSED" not in s for s in systems) == (given is None)


def test_tool_calls_through_the_openai_client_and_the_fake_endpoint() -> None:
    call = {"name": "mine", "arguments": {"block": "oak_log"}}
    with FakeOpenAIServer(Reply("going for wood", tool_calls=(call,))) as server:
        settings = OpenAISettings(model="m", base_url=server.base_url, max_retries=0)
        client = OpenAIClient(settings)
        tools = skill_toolset("required")

        async def both() -> tuple[Any, Any]:
            with_tools = await client.complete([Message("user", "hi")], tools=tools)
            plain = await client.complete([Message("user", "hi")])
            await client.aclose()
            return with_tools, plain

        with_tools, plain = asyncio.run(both())
        sent = server.received[0].body
    assert sent["tool_choice"] == "required" and len(sent["tools"]) == 13
    assert sent["tools"][0] == skill_tools()[0]
    assert with_tools.text == "going for wood"
    assert with_tools.tool_calls == (ToolCall("mine", '{"block": "oak_log"}', "call_0"),)
    assert action_from_calls(with_tools.tool_calls)[0] == {
        "skill": "mine",
        "args": {"block": "oak_log"},
    }
    assert plain.tool_calls == () and "tools" not in server.received[1].body


def test_the_cache_keys_on_the_tools_and_replays_the_calls(tmp_path: Path) -> None:
    messages = [Message("user", "hi")]
    plain = cache_key("m", "e", messages, Sampling())
    auto = cache_key("m", "e", messages, Sampling(), tools=skill_toolset("auto"))
    required = cache_key("m", "e", messages, Sampling(), tools=skill_toolset("required"))
    assert len({plain, auto, required}) == 3
    reply = ChatReply("t", (ToolCall("wait", '{"ticks": 20}', "c1"),))
    mock = MockLLM(lambda m, c: reply)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        client = BudgetedClient(CachedClient(mock, cache, scope="ep"), 10)
        first = asyncio.run(client.complete(messages, tools=skill_toolset()))
        again = BudgetedClient(CachedClient(mock, cache, scope="ep"), 10)
        second = asyncio.run(again.complete(messages, tools=skill_toolset()))
    assert mock.calls == 1 and second.cached and second.tool_calls == first.tool_calls
    assert first.tool_calls == reply.tool_calls


def test_the_registry_builds_tools_with_options() -> None:
    vanilla = vanilla_rules()
    agent = make_agent(
        "tools",
        active=vanilla,
        vanilla=vanilla,
        model="mock-planner",
        options={"tool_choice": "required"},
    )
    assert isinstance(agent, ToolsAgent) and agent.toolset.choice == "required"


def test_tools_against_the_fake_endpoint_in_a_paired_grid(tmp_path: Path) -> None:
    """``mirrorcraft run`` with ``tools`` against the packaged fake endpoint answering with
    tool calls, hidden and disclosed, then ``analyze`` and ``report`` as a user runs them."""
    import subprocess
    import sys

    from tests.runcli import cli, faults, llm_spec, ok_records, rows, write_spec

    explore = {"name": "explore", "arguments": {"target": "log"}}
    with FakeOpenAIServer(Reply("looking for trees", tool_calls=(explore,))) as server:
        spec = llm_spec(
            server.base_url,
            "tools-grid",
            agents=["tools", "react"],
            disclosure=["hidden", "disclosed"],
            disclosed_agents=["tools", "react"],
            repetitions=1,
        )
        done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
        bodies = [r.body for r in server.received]
    assert done.returncode == 0, done.stderr
    db = tmp_path / "out" / "results.sqlite"
    assert not faults(db)
    records = ok_records(db)
    tools = [r for r in records.values() if r["agent"] == "tools"]
    react = [r for r in records.values() if r["agent"] == "react"]
    # vanilla, M01, M04 hidden, and M01, M04 disclosed, for each configuration
    assert len(tools) == len(react) == 5
    assert all(r["actions_used"] == 3 and r["model_calls"] == 3 for r in tools)
    # react gets text ("looking for trees", no JSON): a repair, then no action
    assert all(r["termination"] == "no_action" and r["model_calls"] == 2 for r in react)
    with_tools = [b for b in bodies if "tools" in b]
    assert with_tools and all(len(b["tools"]) == 13 for b in with_tools)
    assert all("tools" not in b for b in bodies if b.get("max_tokens") == 1)  # the preflight
    disclosed = [
        b for b in with_tools if "RULE INFORMATION: DISCLOSED" in b["messages"][0]["content"]
    ]
    assert len(disclosed) == 6  # two disclosed episodes, three calls each
    steps = [json.loads(t) for (t,) in rows(db, "SELECT record FROM steps")]
    assert {json.dumps(s["action"], sort_keys=True) for s in steps} == {
        json.dumps({"skill": "explore", "args": {"target": "log"}}, sort_keys=True)
    }
    assert {s["thought"] for s in steps} == {"looking for trees"}
    base = [sys.executable, "-m", "mirrorcraft.cli"]
    analysed = subprocess.run(
        [*base, "analyze", str(db)], capture_output=True, text=True, timeout=300
    )
    assert analysed.returncode == 0 and "tools" in analysed.stdout, analysed.stderr
    reported = subprocess.run(
        [*base, "report", str(db), "--out", str(tmp_path / "report")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert reported.returncode == 0 and (tmp_path / "report" / "index.html").is_file()


def test_the_fake_endpoint_command_line_checks_its_tool_call() -> None:
    from mirrorcraft.llm.fakeserver import main

    for bad in ("not json", '["explore"]', '{"arguments": {}}'):
        with pytest.raises(SystemExit) as exc:
            main(["--tool-call", bad])
        assert exc.value.code == 2


def test_the_fake_endpoint_serves_while_a_command_runs(tmp_path: Path) -> None:
    """``fakeserver ... -- COMMAND`` replaces {url}, serves while it runs, returns its status."""
    import sys

    from mirrorcraft.llm.fakeserver import main

    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json, sys, urllib.request\n"
        "body = json.dumps({'model': 'm', 'messages': [], 'tools': [{}]}).encode()\n"
        "req = urllib.request.Request(sys.argv[1] + '/chat/completions', body)\n"
        "doc = json.load(urllib.request.urlopen(req))\n"
        "call = doc['choices'][0]['message']['tool_calls'][0]['function']\n"
        "sys.exit(0 if call == {'name': 'wait', 'arguments': '{}'} else 3)\n"
    )
    call = '{"name": "wait", "arguments": {}}'
    assert main(["--tool-call", call, "--", sys.executable, str(probe), "{url}"]) == 0
    assert main(["--", sys.executable, "-c", "raise SystemExit(5)"]) == 5
