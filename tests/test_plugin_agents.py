"""Users' own Python agents: the example package through run, analyze and report; entry point
discovery; options checked by the agent and part of the episode id; recorded origins and the
resume guard; model calls counted; the adapter's contract."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.agents import plugins
from mirrorcraft.agents.base import Decision, Usage
from mirrorcraft.agents.registry import make_agent, needs_model, runs_in_event_loop
from mirrorcraft.analysis.validate import Declared, agent_problem
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.runner.records import EpisodeRecord
from mirrorcraft.runner.spec import expand, parse_spec
from mirrorcraft.world.registry import load_world
from tests.runcli import ok_records, write_spec

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_agent"
GREEDY = "my_agent.greedy:GreedyAgent"


def spec_doc(name: str = "plugin", **changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": 1,
        "name": name,
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M01", "M04"],
        "tasks": ["diamond"],
        "agents": [GREEDY],
        "budget": 20,
    }
    doc.update(changes)
    return doc


def mc(*args: str, path: list[Path] | None = None, timeout: float = 300) -> Any:
    """``mirrorcraft ARGS`` in a subprocess with ``path`` on PYTHONPATH (then the sources of the
    mirrorcraft these tests import, so a checkout not installed runs its own code)."""
    env = {**os.environ}
    own = Path(plugins.__file__).resolve().parents[2]
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (*(path or [EXAMPLE]), own))
    return subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_the_example_package_runs_is_analysed_and_reported(tmp_path: Path) -> None:
    agents = [
        GREEDY,
        {"name": GREEDY, "label": "greedy-iron", "options": {"logs": 4, "explore": ["iron_ore"]}},
    ]
    spec = write_spec(tmp_path / "spec.yaml", spec_doc(agents=agents))
    out = tmp_path / "out"
    done = mc("run", str(spec), "--out", str(out), "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert "greedy-iron" in done.stdout and (out / "report" / "index.html").is_file()
    records = ok_records(out / "results.sqlite")
    assert len(records) == 6
    plain = [r for r in records.values() if r["agent"] == GREEDY]
    labelled = [r for r in records.values() if r["agent"] == "greedy-iron"]
    assert len(plain) == len(labelled) == 3
    for r in plain:
        assert r["agent_origin"] == {
            "kind": "import",
            "ref": GREEDY,
            "package": "my_agent",
            "version": "0.1.0",
        }
    assert {r["agent_origin"]["options_hash"] for r in labelled} == {
        plugins.options_hash({"logs": 4, "explore": ["iron_ore"]})
    }
    assert len({r["seed"] for r in plain}) == 1  # the Vanilla episode and its twins share it
    vanilla = next(r for r in plain if r["rules"] == "vanilla")
    assert vanilla["score"] == 25 and vanilla["termination"] == "budget"

    db = out / "results.sqlite"
    analysed = mc("analyze", str(db), "--json")
    assert analysed.returncode == 0, analysed.stderr
    assert {GREEDY, "greedy-iron"} <= set(analysed.stdout.split('"')), analysed.stdout[:500]
    reported = mc("report", str(db), "--out", str(tmp_path / "report"))
    assert reported.returncode == 0 and (tmp_path / "report" / "index.html").is_file()
    # An export has no stored spec: the recorded origins are what vouch for the agents.
    jsonl = tmp_path / "episodes.jsonl"
    assert mc("export", str(db), "--out", str(jsonl)).returncode == 0
    again = mc("analyze", str(jsonl))
    assert again.returncode == 0 and "greedy-iron" in again.stdout, again.stderr


def test_an_agent_id_with_a_colon_needs_a_recorded_origin() -> None:
    record = EpisodeRecord.from_json(
        {
            **{k: "" for k in ("episode_id", "experiment", "world", "biome", "rules", "model")},
            "task": "diamond",
            "agent": GREEDY,
            "disclosure": "hidden",
            "budget": 1,
            "repetition": 0,
            "seed": 0,
            "score": 0,
            "success": False,
            "milestones": {},
            "termination": "budget",
            "actions_used": 0,
            "score_trace": [],
            "signatures": [],
        }
    )
    assert "not a known configuration" in (agent_problem(GREEDY, Declared(), record) or "")
    record.agent_origin = {"kind": "import", "ref": GREEDY}
    assert agent_problem(GREEDY, Declared(), record) is None
    record.agent_origin = {"kind": "builtin", "ref": "no-such-agent"}
    assert agent_problem("x", Declared(), record) is not None


def _dist_info(folder: Path, version: str = "0.1.0") -> Path:
    """An installed-looking distribution declaring the example's entry point."""
    info = folder / f"mirrorcraft_my_agent-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: mirrorcraft-my-agent\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text(
        f"[mirrorcraft.agents]\ngreedy = {GREEDY}\nnotebook = my_agent.notebook:NotebookAgent\n"
    )
    (info / "top_level.txt").write_text("my_agent\n")
    return info


def test_an_installed_entry_point_is_listed_and_runs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _dist_info(site)
    path = [site, EXAMPLE]
    listed = mc("agents", "list", "--json", path=path)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["greedy"]["kind"] == "entry point"
    assert rows["greedy"]["origin"] == f"{GREEDY} (mirrorcraft-my-agent 0.1.0)"
    assert rows["react"]["origin"].startswith("built-in") and "tools" in rows
    assert rows["notebook"]["memory"] and not rows["greedy"]["memory"]  # may learn across episodes
    assert rows["mineevolve"]["memory"] and not rows["react"]["memory"]
    text = mc("agents", "list", path=path)
    assert "greedy" in text.stdout and "entry point" in text.stdout

    spec = write_spec(tmp_path / "spec.yaml", spec_doc(rules=["vanilla", "M04"], budget=5))
    done = mc("run", str(spec), "--out", str(tmp_path / "out"), "--agent", "greedy", path=path)
    assert done.returncode == 0, done.stderr
    records = ok_records(tmp_path / "out" / "results.sqlite")
    assert {r["agent"] for r in records.values()} == {"greedy"}
    assert all(
        r["agent_origin"]
        == {
            "kind": "entry_point",
            "ref": GREEDY,
            "entry_point": "greedy",
            "package": "mirrorcraft-my-agent",
            "version": "0.1.0",
        }
        for r in records.values()
    )


def test_a_newer_version_of_the_agent_refuses_to_resume(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(EXAMPLE / "my_agent", site / "my_agent")
    spec = write_spec(tmp_path / "spec.yaml", spec_doc(rules=["vanilla", "M04"], budget=3))
    out = tmp_path / "out"
    first = mc("run", str(spec), "--out", str(out), "--no-report", path=[site])
    assert first.returncode == 0, first.stderr
    init = site / "my_agent" / "__init__.py"
    init.write_text(init.read_text().replace('"0.1.0"', '"0.2.0"'))
    refused = mc("run", str(spec), "--out", str(out), "--no-report", path=[site])
    assert refused.returncode == 2
    assert "changed since its 2 stored episode(s) ran" in refused.stderr
    assert "version 0.1.0" in refused.stderr and "version 0.2.0" in refused.stderr
    assert "Traceback" not in refused.stderr
    allowed = mc(
        "run", str(spec), "--out", str(out), "--no-report", "--allow-changed-spec", path=[site]
    )
    assert allowed.returncode == 0, allowed.stderr
    versions = {r["agent_origin"]["version"] for r in ok_records(out / "results.sqlite").values()}
    assert versions == {"0.2.0"}


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        ([{"name": GREEDY, "options": {"logs": 99}}], "logs must be a whole number"),
        # Named by its label, as the spec and the tables name it, not by its import path.
        (
            [{"name": GREEDY, "label": "greedy-a", "options": {"logs": 99}}],
            "agent 'greedy-a': invalid options: logs must be a whole number",
        ),
        ([{"name": GREEDY, "options": {"depth": 1}}], "unknown option 'depth'"),
        ([{"name": "nosuch.module:Agent"}], "cannot import module 'nosuch.module'"),
        ([{"name": "my_agent.greedy:Nope"}], "has no 'Nope'"),
        ([{"name": "my_agent.greedy:skill"}], "is not a class"),
        (["no-such-agent"], "unknown agent 'no-such-agent'"),
        ([{"name": "react", "options": {"tool_choice": "required"}}], "takes no options"),
        ([{"name": "tools", "options": {"tool_choice": "any"}}], "invalid options"),
        ([GREEDY, GREEDY], "listed twice; give each entry its own label"),
    ],
)
def test_bad_agents_and_options_are_one_line_errors(
    tmp_path: Path, agents: list[Any], message: str
) -> None:
    spec = write_spec(tmp_path / "spec.yaml", spec_doc(agents=agents))
    done = mc("run", str(spec), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out" / "results.sqlite").exists()


def test_options_enter_the_episode_id_and_keep_the_pairing() -> None:
    def ids(options: dict[str, Any]) -> list[tuple[str, str, int]]:
        entry: dict[str, Any] = {"name": "vanilla-planner", "label": "p"}
        if options:
            entry["options"] = options
        spec = parse_spec(spec_doc(agents=[entry]), "t")
        return [(c.rules, c.episode_id, c.seed) for c in expand(spec)]

    none, some, other = ids({}), ids({"a": 1}), ids({"a": 2})
    assert len({e for _r, e, _s in none + some + other}) == 9
    for run in (none, some, other):
        assert len({s for _r, _e, s in run}) == 1  # every rule set shares the seed
    # A remote agent's client settings are not part of the condition.
    url = "http://127.0.0.1:9"
    a = parse_spec(spec_doc(agents=[{"name": url, "options": {"client": {"timeout_s": 5}}}]), "t")
    b = parse_spec(spec_doc(agents=[{"name": url, "options": {"client": {"timeout_s": 9}}}]), "t")
    assert a.hash == b.hash and [c.episode_id for c in expand(a)] == [
        c.episode_id for c in expand(b)
    ]
    # Plain names keep the ids (and spec hashes) they always had.
    plain = parse_spec(spec_doc(agents=["vanilla-planner"]), "t")
    entry = parse_spec(spec_doc(agents=[{"name": "vanilla-planner"}]), "t")
    assert [c.episode_id for c in expand(plain)] == [c.episode_id for c in expand(entry)]


# -- the adapter's contract, with agents written here ----------------------------------------

AGENTS = '''
import json
from mirrorcraft.agents.base import Decision, Usage
from mirrorcraft.llm.base import CallMeta, Message


class Sync:
    """act is a plain function returning a dict; no finish."""
    def start(self, ctx):
        self.rng = ctx.rng
        self.draws = [ctx.rng.random() for _ in range(3)]
    def act(self, obs):
        return {"skill": "wait", "args": {"ticks": 20}}


class Broken:
    def start(self, ctx):
        pass
    async def act(self, obs):
        if obs.step >= 2:
            raise RuntimeError("the agent's own bug")
        return Decision({"skill": "wait", "args": {}}, usage=Usage(1, 10, 5, 0.5))


class FailsToStart:
    def start(self, ctx):
        raise RuntimeError("no start for me")
    def act(self, obs):
        raise AssertionError("act after a failed start")


class FailsToFinish(Sync):
    def finish(self, obs):
        raise RuntimeError("no goodbye")


class Unreadable(Exception):
    def __str__(self):
        raise RuntimeError("no message")


class RaisesUnreadable(Sync):
    def act(self, obs):
        raise Unreadable()


class Scribbler(Sync):
    """Writes into each observation it is handed."""
    def act(self, obs):
        obs.inventory["diamond"] = 64
        return {"skill": "mine", "args": {"block": "log"}}


class Thinker:
    """Calls the episode's model once per action and swallows every exception."""
    uses_model = True
    def start(self, ctx):
        self.client = ctx.client
    async def act(self, obs):
        try:
            await self.client.complete([Message("user", "next?")], meta=CallMeta("act"))
        except Exception:
            pass
        return {"skill": "wait", "args": {}}
'''


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "user_agents_t.py").write_text(textwrap.dedent(AGENTS))
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.resolve.cache_clear()
    return "user_agents_t"


def _play(
    agent: Any, rules: str = "vanilla", budget: int = 4, call_budget: int | None = None
) -> Any:
    vanilla = vanilla_rules()
    task = get_task("diamond").with_budget(budget)
    spec = EpisodeSpec(
        "e", "x", "plains-1", rules, task, agent.name, "m", "hidden", 0, 7, "", call_budget
    )
    return asyncio.run(
        run_episode(spec, agent, load_world("plains-1"), resolve_rules(rules), vanilla)
    )


def test_a_sync_agent_returning_dicts_gets_a_seeded_rng(user_module: str) -> None:
    vanilla = vanilla_rules()
    name = f"{user_module}:Sync"
    assert not needs_model(name) and not runs_in_event_loop(name)
    draws = []
    for rules in ("vanilla", "M04"):
        agent = make_agent(name, active=resolve_rules(rules), vanilla=vanilla)
        record, steps = _play(agent, rules)
        assert record.termination == "budget" and [s.action["skill"] for s in steps] == ["wait"] * 4
        draws.append(agent.inner.draws)
    assert draws[0] == draws[1]  # the twins of a pair draw the same numbers


def test_an_exception_in_the_agent_is_its_outcome_and_usage_is_kept(user_module: str) -> None:
    vanilla = vanilla_rules()
    agent = make_agent(f"{user_module}:Broken", active=vanilla, vanilla=vanilla)
    record, _steps = _play(agent)
    assert record.termination == "agent_error" and "the agent's own bug" in record.agent_error
    assert record.model_calls == 2 and record.prompt_tokens == 20 and record.cost_usd == 1.0


def test_exceptions_in_start_and_finish_are_the_agents_outcome(user_module: str) -> None:
    """They are the agent's bugs, recorded like one in act, never an infrastructure fault
    (which the runner would retry, and report as a dead worker process)."""
    vanilla = vanilla_rules()
    agent = make_agent(f"{user_module}:FailsToStart", active=vanilla, vanilla=vanilla)
    record, steps = _play(agent)
    assert record.termination == "agent_error" and steps == [] and record.actions_used == 0
    assert record.agent_error == "in start: RuntimeError: no start for me"
    agent = make_agent(f"{user_module}:FailsToFinish", active=vanilla, vanilla=vanilla)
    record, steps = _play(agent)
    # The episode had ended on its budget before finish ran: that outcome stands.
    assert record.termination == "budget" and len(steps) == 4
    assert record.agent_error == "in finish: RuntimeError: no goodbye"


def test_an_exception_without_a_readable_message_is_still_the_agents_outcome(
    user_module: str,
) -> None:
    vanilla = vanilla_rules()
    agent = make_agent(f"{user_module}:RaisesUnreadable", active=vanilla, vanilla=vanilla)
    record, _steps = _play(agent)
    assert record.termination == "agent_error"
    assert record.agent_error == "Unreadable (its message could not be read)"


def test_an_agent_that_writes_into_its_observation_cannot_change_the_stored_trace(
    user_module: str,
) -> None:
    vanilla = vanilla_rules()
    agent = make_agent(f"{user_module}:Scribbler", active=vanilla, vanilla=vanilla)
    record, steps = _play(agent)
    assert record.termination == "budget" and len(steps) == 4
    assert all("diamond" not in s.inventory for s in steps), [s.inventory for s in steps]
    assert sum(steps[-1].inventory.values()) > 0  # it did mine


@pytest.mark.parametrize(
    ("usage", "message"),
    [
        ("a lot", "must be a mirrorcraft.agents.base.Usage, not str"),
        (Usage(1, 10, 5, float("nan")), "has cost_usd nan"),
        (Usage(1, 10, 5, float("inf")), "has cost_usd inf"),
        (Usage(-5, 10, 5, 0.1), "has calls -5"),
        (Usage(1, 2.5, 5, 0.1), "has prompt_tokens 2.5"),  # type: ignore[arg-type]
    ],
)
def test_usage_a_record_cannot_hold_is_the_agents_error(usage: Any, message: str) -> None:
    """Stored as it came, such usage broke the run (a worker fault), or left a record that is
    not JSON (NaN) or that the analysis refuses (negative counts)."""

    class Reporter:
        def start(self, ctx: Any) -> None:
            pass

        def act(self, obs: Any) -> Decision:
            return Decision({"skill": "wait", "args": {}}, "", usage)

    record, steps = _play(plugins.PluginAgent("p", Reporter()))
    assert record.termination == "agent_error" and steps == []
    assert message in record.agent_error and record.model_calls == 0
    json.loads(record.json_text(), parse_constant=lambda c: pytest.fail(c))


def test_an_action_holding_nan_or_infinity_is_stored_as_json_the_readers_accept() -> None:
    """Written as NaN or Infinity, such a step made every later ``report`` of the run stop
    with 'not valid JSON'."""
    from mirrorcraft.analysis.loading import parse_step
    from mirrorcraft.runner.records import encode_step
    from mirrorcraft.safeload import parse_json

    class Odd:
        def start(self, ctx: Any) -> None:
            pass

        def act(self, obs: Any) -> Decision:
            arg = float("nan") if obs.step % 2 else float("inf")
            return Decision({"skill": "wait", "args": {"ticks": arg}}, float("nan"))  # type: ignore[arg-type]

    record, steps = _play(plugins.PluginAgent("p", Odd()))
    assert record.termination == "budget" and len(steps) == 4
    for s in steps:
        back = parse_step(parse_json(encode_step(s).text, "step"))
        assert back.action == {"unencodable_action": repr(s.action)} and back.thought == "nan"
        assert back.result["reason"] == "invalid_args"


@pytest.mark.parametrize(
    ("stats", "message"),
    [
        (lambda: {"handle": object()}, "TypeError: Object of type object is not JSON"),
        (lambda: {"ratio": float("nan")}, "ValueError: Out of range float values"),
        (lambda: 5, "TypeError: it returned a int, not a mapping"),
        (lambda: 1 / 0, "ZeroDivisionError: division by zero"),
    ],
)
def test_memory_stats_a_record_cannot_hold_are_replaced_by_the_reason(
    stats: Any, message: str
) -> None:
    """Such stats crashed the whole run while it stored the record (object), stored a
    record that is not JSON (NaN), or made the episode a worker fault (the others)."""

    class Counting:
        def start(self, ctx: Any) -> None:
            pass

        def act(self, obs: Any) -> dict[str, Any]:
            return {"skill": "wait", "args": {}}

    agent = Counting()
    agent.memory_stats = stats  # type: ignore[attr-defined]
    record, steps = _play(plugins.PluginAgent("p", agent))
    assert record.termination == "budget" and len(steps) == 4
    assert list(record.memory) == ["memory_stats_error"]
    assert record.memory["memory_stats_error"].startswith(message), record.memory
    json.loads(record.json_text(), parse_constant=lambda c: pytest.fail(c))


def test_sys_exit_in_the_agent_is_its_outcome_but_a_worker_stop_is_not() -> None:
    """sys.exit from an agent that runs in the event loop ended the whole run with a
    traceback (and in a worker process, the worker: a fault, retried)."""
    import sys

    from mirrorcraft.runner.pool import WorkerStopped

    class Quitter:
        run_in_event_loop = True

        def __init__(self, stop: BaseException) -> None:
            self.stop = stop

        def start(self, ctx: Any) -> None:
            pass

        def act(self, obs: Any) -> dict[str, Any]:
            if obs.step == 2:
                if isinstance(self.stop, WorkerStopped):
                    raise self.stop
                sys.exit(3)
            return {"skill": "wait", "args": {}}

    record, steps = _play(plugins.PluginAgent("p", Quitter(SystemExit(3))))
    assert record.termination == "agent_error" and record.agent_error == "SystemExit: 3"
    assert len(steps) == 2
    with pytest.raises(WorkerStopped):  # the runner stopping a worker still stops it
        _play(plugins.PluginAgent("p", Quitter(WorkerStopped(143))))


def test_model_calls_through_the_episode_client_are_counted_and_capped(
    user_module: str,
) -> None:
    vanilla = vanilla_rules()
    name = f"{user_module}:Thinker"
    assert needs_model(name) and runs_in_event_loop(name)
    agent = make_agent(name, active=vanilla, vanilla=vanilla, model="mock-planner")
    record, _ = _play(agent)
    assert record.model_calls == 4 and record.prompt_tokens > 0
    capped = make_agent(name, active=vanilla, vanilla=vanilla, model="mock-planner", call_budget=2)
    record, _ = _play(capped, call_budget=2)
    # The agent swallowed the exception; the harness still ends the episode on its call budget.
    assert record.termination == "call_budget" and record.model_calls == 2


def test_the_adapter_passes_decisions_through() -> None:
    class Plain:
        def start(self, ctx: Any) -> None:
            pass

        async def act(self, obs: Any) -> Decision:
            return Decision({"skill": "wait", "args": {}}, "thinking")

    adapter = plugins.PluginAgent("p", Plain())
    vanilla = vanilla_rules()
    record, steps = _play(adapter)
    assert steps[0].thought == "thinking" and record.model_calls == 0
    assert adapter.template_hashes == {} and adapter.memory_stats() == {}
    assert not adapter.cross_episode_memory and vanilla is not None


def test_an_action_that_is_not_json_is_stored_as_its_repr_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    """An agent whose actions hold a set: the episode runs (the body reads what it can),
    the step is stored with the action's repr, and no worker dies or run crashes."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "oddagent.py").write_text(
        textwrap.dedent(
            """
            from mirrorcraft.agents.base import Decision

            class OddAgent:
                name = "odd"
                cross_episode_memory = False

                def start(self, ctx):
                    self.n = 0

                async def act(self, obs):
                    self.n += 1
                    if self.n > 3:
                        return None
                    return Decision({"skill": "wait", "args": {"ticks": 20}, "x": {1, 2}}, "odd")

                def finish(self, obs):
                    return None
            """
        )
    )
    spec = write_spec(
        tmp_path / "odd.yaml", spec_doc("odd", rules=["vanilla"], agents=["oddagent:OddAgent"])
    )
    out = tmp_path / "out"
    done = mc("run", str(spec), "--out", str(out), "--workers", "2", path=[package])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    records = list(ok_records(out / "results.sqlite").values())
    assert len(records) == 1 and records[0]["termination"] == "no_action"
    import sqlite3

    with sqlite3.connect(out / "results.sqlite") as db:
        steps = [json.loads(t) for (t,) in db.execute("SELECT record FROM steps ORDER BY step")]
    assert len(steps) == 3
    assert steps[0]["action"] == {
        "unencodable_action": "{'skill': 'wait', 'args': {'ticks': 20}, 'x': {1, 2}}"
    }
