"""A user's Python agent failing in ways the adapter must turn into its own outcome: a
constructor that raises in an episode (after the instance built before the run was
fine), thoughts that a record should not hold whole, an async act that blocks the event
loop; a label that would pass it off as a packaged agent. Each ends as a recorded
``agent_error``, a bounded record or a one-line refusal, never a misattributed
infrastructure fault, a lost record, a run that outlives its time limit or a table that
shows one agent as another."""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.agents import plugins
from mirrorcraft.agents.base import USER_THOUGHT_LIMIT, Decision
from mirrorcraft.agents.memory import load_store
from mirrorcraft.agents.registry import make_agent
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.runner.records import encode_step
from mirrorcraft.runner.spec import SpecError, parse_spec
from mirrorcraft.world.registry import load_world

AGENTS = '''
import sys


class FailsLater:
    """The first instance (the one built before the run) is fine; later ones fail."""
    made = 0
    def __init__(self):
        type(self).made += 1
        if type(self).made > 1:
            raise RuntimeError("out of GPU memory")
    def start(self, ctx):
        pass
    def act(self, obs):
        return {"skill": "wait", "args": {}}


class ExitsInInit(FailsLater):
    def __init__(self):
        sys.exit(5)
'''


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "user_failing_t.py").write_text(textwrap.dedent(AGENTS))
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.resolve.cache_clear()
    return "user_failing_t"


def _play(agent: Any, budget: int = 4) -> Any:
    vanilla = vanilla_rules()
    task = get_task("diamond").with_budget(budget)
    spec = EpisodeSpec("e", "x", "plains-1", "vanilla", task, agent.name, "m", "hidden", 0, 7)
    return asyncio.run(run_episode(spec, agent, load_world("plains-1"), vanilla, vanilla))


def test_a_constructor_failing_in_an_episode_is_the_agents_outcome(user_module: str) -> None:
    """It was a worker fault ("internal error: UnknownAgentError ...", advice: out of
    memory?), retried and never recorded, though the agent's own code had raised."""
    name = f"{user_module}:FailsLater"
    vanilla = vanilla_rules()
    plugins.build_plugin(name, name, None)  # the instance built before the run is fine
    with pytest.raises(plugins.PluginError, match="out of GPU memory"):
        plugins.build_plugin(name, name, None)  # before a run: one line, nothing stored
    agent = make_agent(name, active=vanilla, vanilla=vanilla)
    assert load_store(agent, None, writable=True) == 0  # an accumulation episode loads nothing
    record, steps = _play(agent)
    assert record.termination == "agent_error" and steps == [] and record.actions_used == 0
    assert record.agent_error == "in __init__: RuntimeError: out of GPU memory"


def test_sys_exit_in_a_constructor_is_a_one_line_refusal_or_the_agents_outcome(
    user_module: str,
) -> None:
    """Before the run it ended the command with the agent's exit status and no message."""
    name = f"{user_module}:ExitsInInit"
    with pytest.raises(plugins.PluginError, match="creating ExitsInInit failed: SystemExit: 5"):
        plugins.build_plugin(name, name, None)
    vanilla = vanilla_rules()
    record, _steps = _play(make_agent(name, active=vanilla, vanilla=vanilla))
    assert record.agent_error == "in __init__: SystemExit: 5"


def _spec_with(agent: Any) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "name": "n",
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M01"],
        "tasks": ["diamond"],
        "agents": [agent],
    }


@pytest.mark.parametrize("label", ["oracle", "react", "vanilla-planner", "mineevolve[no_curator]"])
def test_a_label_that_names_a_packaged_agent_is_refused(label: str) -> None:
    """Labelled ``oracle``, a user's agent was stored as the oracle and left out of every
    benchmark table as a control; labelled ``react`` it was the configuration told the rules."""
    with pytest.raises(SpecError, match=f"label '{re.escape(label)}' of agent 'my.mod:Agent'"):
        parse_spec(_spec_with({"name": "my.mod:Agent", "label": label}), "s.yaml")
    parse_spec(_spec_with({"name": "react", "label": "react"}), "s.yaml")  # its own name
    parse_spec(_spec_with({"name": "my.mod:Agent", "label": "mine"}), "s.yaml")


def test_a_mistake_in_an_agent_mapping_is_named_not_called_a_missing_string() -> None:
    """Every error in an agent entry given as a mapping read "field 'agents.0.str': Input
    should be a valid string" (the other branch of 'a name or a mapping')."""
    with pytest.raises(SpecError) as caught:
        parse_spec(_spec_with({"name": "my.mod:Agent", "lable": "x"}), "s.yaml")
    assert str(caught.value) == "s.yaml: field 'agents.0.lable': Extra inputs are not permitted"
    with pytest.raises(SpecError, match=r"field 'agents\.0': Input should be a valid string"):
        parse_spec(_spec_with(5), "s.yaml")


class _Noter:
    """Sends the thought it is given with a well-formed action."""

    def __init__(self, thought: Any) -> None:
        self.thought = thought

    def start(self, ctx: Any) -> None:
        pass

    def act(self, obs: Any) -> Decision:
        return Decision({"skill": "wait", "args": {}}, self.thought)


def test_a_long_thought_is_kept_to_its_first_characters_as_a_remote_agents_is() -> None:
    """A plugin returning a 10 MB thought at each step had it stored whole: a 50-step pair of
    episodes made a 1 GB database."""
    record, steps = _play(plugins.PluginAgent("p", _Noter("x" * 100_000)))
    assert record.termination == "budget" and len(steps) == 4
    assert all(s.thought == "x" * USER_THOUGHT_LIMIT for s in steps)


@pytest.mark.parametrize(
    ("thought", "kept"), [(None, ""), (42, "42"), ({"plan": 1}, "{'plan': 1}")]
)
def test_a_thought_that_is_not_text_does_not_hide_the_action_it_came_with(
    thought: Any, kept: str
) -> None:
    """The step was stored with its (well-formed, played) action replaced by
    ``unencodable_action`` because its thought was not JSON."""
    _record, steps = _play(plugins.PluginAgent("p", _Noter(thought)))
    doc = json.loads(encode_step(steps[0]).text)
    assert doc["action"] == {"skill": "wait", "args": {}} and doc["thought"] == kept


def test_an_async_act_that_never_awaits_still_gives_the_event_loop_a_turn() -> None:
    """An ``async def act`` making a blocking call (``requests.post``, ``time.sleep``) never
    awaited: its whole episode ran in one go, past its wall-clock limit (enforced only at an
    await) and holding up every other episode of the loop. Now the loop has a turn at each
    action: another episode's task runs between them, and a time limit can stop it."""
    seen: list[int] = []
    ticks = [0]

    class Blocking:
        run_in_event_loop = True

        def start(self, ctx: Any) -> None:
            pass

        async def act(self, obs: Any) -> dict[str, Any]:
            seen.append(ticks[0])  # what the other task managed meanwhile
            return {"skill": "wait", "args": {}}

    async def other() -> None:
        while True:
            ticks[0] += 1
            await asyncio.sleep(0)

    async def both() -> Any:
        vanilla = vanilla_rules()
        task = get_task("diamond").with_budget(6)
        spec = EpisodeSpec("e", "x", "plains-1", "vanilla", task, "p", "m", "hidden", 0, 7)
        ticker = asyncio.create_task(other())
        agent = plugins.PluginAgent("p", Blocking())
        try:
            return await run_episode(spec, agent, load_world("plains-1"), vanilla, vanilla)
        finally:
            ticker.cancel()

    record, _steps = asyncio.run(both())
    assert record.termination == "budget" and len(seen) == 6
    assert seen == sorted(seen) and seen[-1] > seen[0], seen
