"""Hidden-rule integrity: nothing the agent interface returns may reveal the rules.

Runs episodes in every rule set and scans everything an agent can receive (the
episode context, every observation in JSON and text form, action results, the
skill listing, the function tools offered to models, and every message the remote
agent protocol sends: reset, each act with its observation block, close) for suite ids and names, twin ids, datapack and resource paths,
rule-set fingerprints, the rule-sheet sentences, and recipe or loot-table content.
A suite that is not packaged (one being designed) is scanned by passing its
``Manifest``; its name, id, sheet and fingerprint join the forbidden tokens.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.llm.tools import skill_tools
from mirrorcraft.agents.reference import AdaptivePlannerAgent
from mirrorcraft.agents.remote.agent import RemoteAgent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.body.actions import skill_listing
from mirrorcraft.body.observation import Observation
from mirrorcraft.datapack.manifest import Manifest
from mirrorcraft.datapack.suites import compiled, list_suites
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.controls import SuiteRef, suite_rules
from mirrorcraft.world.registry import LoadedWorld, load_world

GENERIC_PATTERNS = [
    r"minecraft:",  # resource locations (agent-facing ids are bare)
    r"mirrorcraft:",  # the suites' own namespace
    r"loot_tables?",  # datapack folder names
    r"\brecipes/",
    r"pack\.mcmeta",
    r"datapack",
    r"\bsuite\b",
    r"@M0\d",  # twin ids such as plains-1@M04
    r"\bM0[1-6]\b",
    r"\bmirror\b",
    r"\bvanilla\b",
]


@dataclass(frozen=True)
class Leak:
    rules: str
    task: str
    where: str
    token: str
    excerpt: str


def forbidden_tokens(extra: Sequence[Manifest] = ()) -> list[str]:
    tokens = []
    for m in [*list_suites(), *extra]:
        tokens += [m.name]
        tokens += [line[:40] for line in compiled(m).sheet]
    tokens += [resolve_rules(m.id).fingerprint for m in list_suites()] + [
        vanilla_rules().fingerprint
    ]
    tokens += [suite_rules(m).fingerprint for m in extra]
    tokens += [m.id for m in extra if len(m.id) >= 3]
    return tokens


SHORT_TOKEN = 8
"""Tokens shorter than this (a designed suite's id, such as ``D07``) are looked for as whole
words: as a substring, ``d07`` turns up in one random 32-digit hex id in about 140 (the
remote protocol's episode token is one), and a clean candidate failed its controls."""


def scan_text(text: str, tokens: list[str]) -> list[tuple[str, str]]:
    found = []
    lower = text.lower()
    for pattern in GENERIC_PATTERNS:
        m = re.search(pattern, text, flags=re.IGNORECASE)
        if m:
            found.append((pattern, text[max(m.start() - 30, 0) : m.end() + 30]))
    for token in tokens:
        needle = token.lower()
        if len(token) < SHORT_TOKEN:
            m = re.search(rf"(?<![0-9a-z]){re.escape(needle)}(?![0-9a-z])", lower)
            i = m.start() if m else -1
        else:
            i = lower.find(needle)
        if i >= 0:
            found.append((token, text[max(i - 30, 0) : i + len(token) + 30]))
    return found


def scan_episode(
    world: str | LoadedWorld, rules_ref: SuiteRef, task_id: str, seed: int = 3
) -> list[Leak]:
    loaded = world if isinstance(world, LoadedWorld) else load_world(world)
    rules = suite_rules(rules_ref)
    rules_name = rules_ref.id if isinstance(rules_ref, Manifest) else rules_ref
    task = get_task(task_id)
    tokens = forbidden_tokens((rules_ref,) if isinstance(rules_ref, Manifest) else ())
    leaks: list[Leak] = []

    def check(where: str, text: str) -> None:
        for token, excerpt in scan_text(text, tokens):
            leaks.append(Leak(rules_name, task_id, where, token, excerpt))

    ctx = EpisodeContext(task.id, task.title, task.budget, seed)
    check(
        "context", json.dumps({k: v for k, v in ctx.__dict__.items() if k not in ("rng", "client")})
    )
    check("skills", skill_listing())
    check("tools", json.dumps(skill_tools(), sort_keys=True))
    vanilla = vanilla_rules()
    episode = SimEpisode(loaded, rules, vanilla, task, seed=seed)
    planner = AdaptivePlannerAgent(vanilla)
    planner.start(ctx)
    seen: list[Observation] = []

    async def remote(path: str, message: dict[str, Any]) -> Any:
        """The remote protocol's transport: every message is scanned; the planner answers."""
        check(f"remote {path[1:]} {message.get('step', '')}".strip(), json.dumps(message))
        if path != "/act":
            return {}
        decision = await planner.act(seen[-1])
        return {"action": None if decision is None else decision.action}

    # The episode is played through the remote protocol, so its messages are what is scanned.
    agent = RemoteAgent("integrity", "http://integrity.invalid", vanilla, transport=remote)
    agent.start(ctx)

    async def play() -> Observation:
        obs = episode.observe()
        while not episode.done:
            check(f"observation {obs.step}", json.dumps(obs.to_json(), sort_keys=True))
            check(f"observation text {obs.step}", obs.render_text())
            seen.append(obs)
            decision = await agent.act(obs)
            if decision is None:
                break
            out = episode.step(decision.action)
            result = json.dumps(out.result.to_json(), sort_keys=True)
            check(f"result {out.observation.step}", result)
            obs = out.observation
        await agent.finish(obs)
        return obs

    obs = asyncio.run(play())
    check(f"observation {obs.step}", json.dumps(obs.to_json(), sort_keys=True))
    return leaks
