"""Reference data that pins behaviour across performance work (issue 22).

The fixtures, recorded once from the code as it was before the optimisations and kept
under ``tests/fixtures/``:

- ``planner_decisions.json``: every action the three planning reference agents chose in
  63 episodes (each agent x 7 rule sets x 3 tasks, the world rotating through the ten);
  ``tests/test_perf_reference.py`` replays them and compares every decision.
- ``llm_prompts.json``: per LLM configuration (every one in ``agents.registry.LLM_AGENTS``,
  and the variants with prompts of their own: ``PROMPT_CONFIGS``), a digest of every prompt
  it sends in two episodes against the offline mock planner (hidden change, then the
  disclosed condition; some replies unusable, so the repair prompts are sent too): a
  failure names the configuration whose prompts changed.
- ``reference_grid.json``: a digest of each episode record (wall time left out) and of
  its step trace, from a small grid run through ``mirrorcraft run`` with one worker.
- ``simulator_version.json``: the simulator behaviour version (``SIMULATOR_VERSION``) they
  were recorded under; writing refuses changed grid results under an unchanged version.
- ``prompt_version.json``: the prompt-building version (``PROMPT_VERSION``) the prompt
  digests were recorded under; writing refuses a configuration's changed digest under an
  unchanged prompt version, unless the simulator version changed too (``prompt_refusal``).

Regenerate (only when a behaviour change is intended, and say so in the commit):
``.venv/bin/python -m tests.perf_reference --write`` (``--prompts-only``: the prompt digests and
the prompt version alone).
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

from mirrorcraft.agents.registry import LLM_AGENTS

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


PROMPT_EPISODES: tuple[tuple[str, str, str, str], ...] = (
    ("M05", "enchantment", "jungle-2", "hidden"),
    ("M03", "diamond", "taiga-1", "disclosed"),
)
"""(rules, task, world, disclosure) of the episodes each configuration plays, in this order and
with one agent (the memory configurations carry what they learned into the second episode):
a hidden change the mock's plan fails against (remedies, reflections, critics, repairs), then
the disclosed condition (the rule sheet in every system prompt)."""
PROMPT_BUDGET = 60
PROMPT_FAULTS: dict[int, str] = {1: "malformed", 4: "malformed", 12: "malformed", 30: "empty"}
"""Replies replaced by unusable text (by call number), so each configuration's repair prompts
are sent too."""

PROMPT_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    **{name: (name, {}) for name in LLM_AGENTS},
    "mineevolve": ("mineevolve", {"memory": "carry"}),
    "jarvis1": ("jarvis1", {"memory": "carry"}),
    "optimus1": ("optimus1", {"memory": "carry"}),
    "mineevolve[text_reflection]": ("mineevolve[text_reflection]", {}),
    "mineevolve[binary_feedback]": ("mineevolve[binary_feedback]", {}),
    "voyager[subgoal_repairs]": ("voyager[subgoal_repairs]", {}),
}
"""Digest key -> (agent name, options): every packaged configuration that calls a model
(``agents.registry.LLM_AGENTS``; the memory ones keep their memory across the two episodes),
and the variants that send prompts of their own (MineEvolve's text reflection and binary
feedback, Voyager's subgoal repairs). ReAct with rules is every configuration's second
episode (disclosed)."""


class _RecordingClient:
    """A model client that adds everything each call sends (the messages, and the function
    tools offered) to a digest, and lets the offline mock planner answer."""

    def __init__(self, inner: Any, digest: Any) -> None:
        self.inner, self.digest = inner, digest
        self.model, self.endpoint = inner.model, inner.endpoint

    async def complete(
        self, messages: Any, *, sampling: Any = None, meta: Any = None, tools: Any = None
    ) -> Any:
        self.digest.update(json.dumps([[m.role, m.content] for m in messages]).encode())
        if tools is not None:
            self.digest.update(tools.canonical().encode())
        return await self.inner.complete(messages, meta=meta, tools=tools)

    async def aclose(self) -> None:
        """Nothing to release."""


def play_prompts(key: str) -> tuple[str, list[dict[str, str]]]:
    """The digest of every prompt configuration ``key`` sends in its reference episodes (the
    offline mock planner answering; ``PROMPT_FAULTS`` unusable), and its records'
    ``template_hashes``."""
    from mirrorcraft.agents.mock_planner import PlannerPolicy
    from mirrorcraft.agents.registry import MOCK_MODEL, make_agent
    from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
    from mirrorcraft.evaluator.tasks import get_task
    from mirrorcraft.llm.mock import FaultPlan, MockLLM
    from mirrorcraft.runner.episode import EpisodeSpec, run_episode
    from mirrorcraft.runner.executor import rule_sheet_for
    from mirrorcraft.world.registry import load_world

    name, options = PROMPT_CONFIGS[key]
    vanilla = vanilla_rules()
    h = hashlib.sha256()
    faults = FaultPlan(at=PROMPT_FAULTS)  # type: ignore[arg-type]
    mock = MockLLM(PlannerPolicy(vanilla), model=MOCK_MODEL, faults=faults)
    client = _RecordingClient(mock, h)
    agent = make_agent(name, active=vanilla, vanilla=vanilla, client=client, options=options)
    hashes = []
    for rules, task_id, world, disclosure in PROMPT_EPISODES:
        sheet = rule_sheet_for(rules) if disclosure == "disclosed" else None
        task = get_task(task_id).with_budget(PROMPT_BUDGET)
        spec = EpisodeSpec("p", "p", world, rules, task, name, MOCK_MODEL, disclosure, 0, 3)
        active = resolve_rules(rules)
        record, _steps = asyncio.run(
            run_episode(spec, agent, load_world(world), active, vanilla, rule_sheet=sheet)
        )
        hashes.append(record.template_hashes)
    return h.hexdigest()[:32], hashes


PromptEntry = dict[str, Any]
"""A configuration's fixture entry: ``digest`` (of every prompt it sends) and ``templates``
(the digests of the template files its records name, ``template_hashes`` less the version)."""


def prompt_entry(key: str) -> PromptEntry:
    digest, hashes = play_prompts(key)
    templates = {k: v for k, v in hashes[0].items() if k != "prompt_version"}
    return {"digest": digest, "templates": templates}


def prompt_digests() -> dict[str, PromptEntry]:
    """Per configuration (``PROMPT_CONFIGS``), its prompts' digest and template digests."""
    return {key: prompt_entry(key) for key in PROMPT_CONFIGS}


def recorded_prompt_digests() -> dict[str, PromptEntry]:
    doc: dict[str, PromptEntry] = json.loads((FIXTURES / "llm_prompts.json").read_text())
    return doc


def recorded_simulator_version() -> int:
    """The simulator behaviour version the fixtures were recorded under."""
    return int(json.loads((FIXTURES / "simulator_version.json").read_text())["simulator_version"])


def recorded_prompt_version() -> int:
    """The prompt-building version (``PROMPT_VERSION``) the prompt digest was recorded under."""
    return int(json.loads((FIXTURES / "prompt_version.json").read_text())["prompt_version"])


def prompt_refusal(
    recorded: dict[str, PromptEntry] | None,
    now: dict[str, PromptEntry],
    *,
    versions_then: tuple[int, int],
    versions_now: tuple[int, int],
    mock_replies_changed: bool = False,
) -> str | None:
    """Why the prompt digests ``now`` may not replace the ``recorded`` ones (None: they may).

    ``versions_*`` are (``PROMPT_VERSION``, ``SIMULATOR_VERSION``) when the digests were
    recorded and now. A configuration whose digest changed under the same two versions and
    the same template files is refused: its prompts are built differently, so
    ``PROMPT_VERSION`` must be raised. A changed template file accepts it (its digest is in
    the records, which tell the two apart already), and so does a raised
    simulator version (the observations in the prompts follow the
    simulator's behaviour; its records are already told apart by the body fingerprint), and so
    does ``mock_replies_changed`` (only the offline mock planner's replies changed, which steer
    the episodes the digests follow; no prompt is built differently). A configuration new to
    the fixture, or gone from it, is not a change."""
    if recorded is None or versions_then != versions_now or mock_replies_changed:
        return None
    changed = sorted(
        k
        for k in recorded.keys() & now.keys()
        if recorded[k]["digest"] != now[k]["digest"]
        and recorded[k]["templates"] == now[k]["templates"]
    )
    if not changed:
        return None
    return (
        f"the prompts of {', '.join(changed)} changed under prompt version {versions_now[0]} "
        f"and simulator version {versions_now[1]}, with the same template files: raise "
        "PROMPT_VERSION in "
        "mirrorcraft/agents/llm/templates.py (episodes prompted the old way must not resume or "
        "pool with the new), then write again. If only the offline mock planner's replies "
        "changed (agents/mock_policy.py, the mock_replies modules, agents/llm/scripted.py) and "
        "no prompt is built differently, write with --mock-replies-changed"
    )


def write_prompts(*, mock_replies_changed: bool = False) -> None:
    """Record the prompt digests and the prompt version (refused as ``prompt_refusal`` says)."""
    from mirrorcraft.agents.llm.templates import PROMPT_VERSION
    from mirrorcraft.body.config import SIMULATOR_VERSION

    digests = prompt_digests()
    digest_file = FIXTURES / "llm_prompts.json"
    recorded = recorded_prompt_digests() if digest_file.is_file() else None
    problem = prompt_refusal(
        recorded,
        digests,
        versions_then=(recorded_prompt_version(), recorded_simulator_version()),
        versions_now=(PROMPT_VERSION, SIMULATOR_VERSION),
        mock_replies_changed=mock_replies_changed,
    )
    if problem is not None:
        sys.exit(problem)
    digest_file.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    (FIXTURES / "prompt_version.json").write_text(
        json.dumps({"prompt_version": PROMPT_VERSION}) + "\n"
    )
    print(f"wrote the prompt digests of {len(digests)} LLM configurations")


def write(*, mock_replies_changed: bool = False) -> None:
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
    # The prompts first: their guard reads the simulator version recorded before this write.
    write_prompts(mock_replies_changed=mock_replies_changed)
    decisions = planner_decisions()
    (FIXTURES / "planner_decisions.json").write_text(json.dumps(decisions, indent=0) + "\n")
    (FIXTURES / "simulator_version.json").write_text(
        json.dumps({"simulator_version": SIMULATOR_VERSION}) + "\n"
    )
    (FIXTURES / "reference_grid.json").write_text(json.dumps(grid, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(decisions)} planner episodes and {len(grid)} grid episodes")


USAGE = (
    "usage: python -m tests.perf_reference --write [--prompts-only] [--mock-replies-changed]"
    " (--prompts-only records only the prompt digests and the prompt version)"
)

if __name__ == "__main__":
    args = sys.argv[1:]
    if (
        not args
        or args[0] != "--write"
        or set(args[1:]) - {"--prompts-only", "--mock-replies-changed"}
    ):
        sys.exit(USAGE)
    mock = "--mock-replies-changed" in args
    if "--prompts-only" in args:
        write_prompts(mock_replies_changed=mock)
    else:
        write(mock_replies_changed=mock)
