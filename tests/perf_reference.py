"""Reference data that pins behaviour across performance work (issue 22).

Two fixtures, recorded once from the code as it was before the optimisations and kept
under ``tests/fixtures/``:

- ``planner_decisions.json``: every action the three planning reference agents chose in
  63 episodes (each agent x 7 rule sets x 3 tasks, the world rotating through the ten);
  ``tests/test_perf_reference.py`` replays them and compares every decision.
- ``llm_prompts.sha256``: a digest of every prompt three LLM configurations send in 80
  steps against a mock model (the history and observation block they render).
- ``reference_grid.json``: a digest of each episode record (wall time left out) and of
  its step trace, from a small grid run through ``mirrorcraft run`` with one worker.
- ``simulator_version.json``: the simulator behaviour version (``SIMULATOR_VERSION``) they
  were recorded under; writing refuses changed grid results under an unchanged version.
- ``prompt_version.json``: the prompt-building version (``PROMPT_VERSION``) the prompt
  digest was recorded under; writing refuses a changed digest under an unchanged version.

Regenerate (only when a behaviour change is intended, and say so in the commit):
``.venv/bin/python -m tests.perf_reference --write``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).parent / "fixtures"
PLANNERS = ("vanilla-planner", "adaptive-planner", "oracle")
RULES = ("vanilla", "M01", "M02", "M03", "M04", "M05", "M06")
TASKS = ("iron_armor", "diamond", "enchantment")

GRID_SPEC: dict[str, Any] = {
    "schema_version": 1,
    "name": "perf-reference",
    "worlds": ["plains-1", "jungle-2"],
    "rules": ["vanilla", "M03", "M05"],
    "tasks": ["iron_armor", "enchantment"],
    "agents": ["vanilla-planner", "adaptive-planner", "oracle", "random"],
    "repetitions": 1,
    "seed": 7,
}
VOLATILE = ("wall_seconds", "body_fingerprint", "task_fingerprint")
"""Record fields left out of the digests: timings, which differ between two runs of the same
grid, and the body and task fingerprints, stamped after the fixture was recorded (the
simulator's behaviour version is pinned by ``simulator_version.json`` instead)."""


def planner_episodes() -> list[tuple[str, str, str, str]]:
    """(agent, world, rules, task) of the recorded planner episodes."""
    from mirrorcraft.world.registry import world_ids

    worlds = world_ids()
    out = []
    i = 0
    for agent in PLANNERS:
        for rules in RULES:
            for task in TASKS:
                out.append((agent, worlds[i % len(worlds)], rules, task))
                i += 1
    return out


def episode_key(agent: str, world: str, rules: str, task: str) -> str:
    return f"{agent}/{world}/{rules}/{task}"


def play_planner(agent_name: str, world: str, rules_name: str, task_id: str) -> list[str]:
    """The actions one planner chooses in one episode, as canonical JSON strings."""
    from mirrorcraft.agents.registry import make_agent
    from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
    from mirrorcraft.evaluator.tasks import get_task
    from mirrorcraft.runner.episode import EpisodeSpec, run_episode
    from mirrorcraft.world.registry import load_world

    vanilla = vanilla_rules()
    rules = resolve_rules(rules_name)
    agent = make_agent(agent_name, active=rules, vanilla=vanilla, model="none")
    spec = EpisodeSpec(
        "ref", "ref", world, rules_name, get_task(task_id), agent_name, "none", "hidden", 0, 11
    )
    _record, steps = asyncio.run(run_episode(spec, agent, load_world(world), rules, vanilla))
    return [json.dumps(s.action, sort_keys=True) for s in steps]


def planner_decisions() -> dict[str, list[str]]:
    return {episode_key(*e): play_planner(*e) for e in planner_episodes()}


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def grid_digests(workers: int = 1) -> dict[str, dict[str, Any]]:
    """Run the reference grid through the CLI; per episode: outcome and digests."""
    from mirrorcraft.cli import main
    from mirrorcraft.runner.store import ResultStore

    with tempfile.TemporaryDirectory() as tmp:
        spec_path = Path(tmp) / "grid.yaml"
        spec_path.write_text(yaml.safe_dump(GRID_SPEC))
        out = Path(tmp) / "run"
        code = main(
            ["run", str(spec_path), "--out", str(out), "--workers", str(workers), "--no-report"]
        )
        if code != 0:
            raise RuntimeError(f"the reference grid run exited {code}")
        result: dict[str, dict[str, Any]] = {}
        with ResultStore(out / "results.sqlite") as store:
            for record in store.records():
                doc = {k: v for k, v in record.to_json().items() if k not in VOLATILE}
                steps = store.steps(record.episode_id)
                result[record.episode_id] = {
                    "condition": f"{record.agent}/{record.world}/{record.rules}/{record.task}",
                    "score": record.score,
                    "termination": record.termination,
                    "actions_used": record.actions_used,
                    "record": _digest(doc),
                    "steps": _digest(steps),
                }
    return result


LLM_ACTIONS: list[dict[str, Any]] = [
    {"thought": "get wood", "skill": "mine", "args": {"block": "log", "count": 1}},
    {
        "thought": "planks",
        "skill": "craft_grid",
        "args": {"station": "inventory", "grid": [["oak_log", None], [None, None]]},
    },
    {"thought": "look", "skill": "wait", "args": {"ticks": 20}},
    {"thought": "stone", "skill": "mine", "args": {"block": "stone", "count": 2}},
    {
        "thought": "table",
        "skill": "craft_grid",
        "args": {
            "station": "inventory",
            "grid": [["oak_planks", "oak_planks"], ["oak_planks", "oak_planks"]],
        },
    },
    {"thought": "bad", "skill": "smelt", "args": {"input": "raw_iron", "count": 1}},
]


def llm_prompt_digest(steps: int = 80) -> str:
    """A digest of every prompt Direct, ReAct and Reflexion send over 80 steps (mock model)."""
    from mirrorcraft.agents.base import EpisodeContext
    from mirrorcraft.agents.llm.direct import DirectAgent
    from mirrorcraft.agents.llm.react import ReActAgent
    from mirrorcraft.agents.llm.reflexion import ReflexionAgent
    from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
    from mirrorcraft.backends.sim import SimEpisode
    from mirrorcraft.evaluator.tasks import get_task
    from mirrorcraft.llm.mock import MockLLM
    from mirrorcraft.world.registry import load_world

    h = hashlib.sha256()
    for cls in (DirectAgent, ReActAgent, ReflexionAgent):
        for rules in ("vanilla", "M02"):
            n = {"i": 0}

            def policy(messages: Any, meta: Any, n: dict[str, int] = n) -> str:
                h.update(json.dumps([m.content for m in messages]).encode())
                n["i"] += 1
                return json.dumps(LLM_ACTIONS[(n["i"] * 7) % len(LLM_ACTIONS)])

            vanilla, active = vanilla_rules(), resolve_rules(rules)
            agent = cls(cls.__name__, MockLLM(policy), vanilla)
            agent.start(EpisodeContext("iron_armor", "Iron", 10_000, 1))
            task = get_task("iron_armor").with_budget(10_000)
            ep = SimEpisode(load_world("taiga-1"), active, vanilla, task, seed=3)
            obs = ep.observe()
            for _ in range(steps):
                decision = asyncio.run(agent.act(obs))
                if decision is None:
                    break
                obs = ep.step(decision.action).observation
    return h.hexdigest()


def recorded_simulator_version() -> int:
    """The simulator behaviour version the fixtures were recorded under."""
    return int(json.loads((FIXTURES / "simulator_version.json").read_text())["simulator_version"])


def recorded_prompt_version() -> int:
    """The prompt-building version (``PROMPT_VERSION``) the prompt digest was recorded under."""
    return int(json.loads((FIXTURES / "prompt_version.json").read_text())["prompt_version"])


def write() -> None:
    from mirrorcraft.agents.llm.templates import PROMPT_VERSION
    from mirrorcraft.body.config import SIMULATOR_VERSION

    FIXTURES.mkdir(exist_ok=True)
    grid = grid_digests()
    old = FIXTURES / "reference_grid.json"
    if (
        old.is_file()
        and recorded_simulator_version() == SIMULATOR_VERSION
        and json.loads(old.read_text()) != grid
    ):
        sys.exit(
            f"the reference grid's results changed under simulator version {SIMULATOR_VERSION}: "
            "raise SIMULATOR_VERSION in mirrorcraft/body/config.py (stored results of the old "
            "behaviour must not resume or pool with the new), then write again"
        )
    prompts = llm_prompt_digest()
    digest_file = FIXTURES / "llm_prompts.sha256"
    if (
        digest_file.is_file()
        and recorded_prompt_version() == PROMPT_VERSION
        and digest_file.read_text().strip() != prompts
    ):
        sys.exit(
            f"the LLM configurations' prompts changed under prompt version {PROMPT_VERSION}: "
            "raise PROMPT_VERSION in mirrorcraft/agents/llm/templates.py (episodes prompted "
            "the old way must not pool with the new), then write again"
        )
    decisions = planner_decisions()
    (FIXTURES / "planner_decisions.json").write_text(json.dumps(decisions, indent=0) + "\n")
    (FIXTURES / "simulator_version.json").write_text(
        json.dumps({"simulator_version": SIMULATOR_VERSION}) + "\n"
    )
    (FIXTURES / "reference_grid.json").write_text(json.dumps(grid, indent=1, sort_keys=True) + "\n")
    digest_file.write_text(prompts + "\n")
    (FIXTURES / "prompt_version.json").write_text(
        json.dumps({"prompt_version": PROMPT_VERSION}) + "\n"
    )
    print(f"wrote {len(decisions)} planner episodes and {len(grid)} grid episodes")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.perf_reference --write")
    write()
