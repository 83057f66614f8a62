"""Nothing a configuration sends to its model names the rules, except the disclosed sheet.

Every packaged configuration plays a Vanilla/Mirror pair of episodes against a recording
offline model. The model is the mock planner with faults mixed in (prose replies, actions
that fail, crafts of items not owned), so the repair, reflection, critique, replanning and
probe prompts are sent too. Every message of every call is scanned for suite ids, twin ids,
rule-set names, datapack paths, rule-set fingerprints, the rule-sheet sentences and the
hidden-condition wording. The memory configurations also start the second episode from the
knowledge store the first one wrote (memory carried between episodes). ReAct with rules is
scanned for the same strings outside its rule sheet, and its sheet must reach every call.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.agents.memory import load_store
from mirrorcraft.agents.mineevolve.store import KnowledgeStore
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.agents.registry import LLM_AGENTS, MEMORY_AGENTS, MOCK_MODEL, make_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.datapack.suites import compiled, find_suite
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import CallMeta, ChatReply, Message
from mirrorcraft.llm.mock import MockLLM
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.runner.integrity import GENERIC_PATTERNS, forbidden_tokens, scan_text
from mirrorcraft.world.registry import load_world
from tests.llm_fakes import HIDDEN_PHRASES

WORLD, TASK, MIRROR = "plains-1", "iron_armor", "M04"

PATTERNS = (
    r"minecraft:",
    r"mirrorcraft:",
    r"loot_tables?",
    r"\brecipes/",
    r"pack\.mcmeta",
    r"datapack",
    r"@[MD]\d\d",  # twin ids such as plains-1@M04
    r"\bM0[1-6]\b",
    r"\bmirror\b",
    r"\bsuites?\b",
    r"\brule[ -]?sets?\b",
)
"""What a prompt may never hold. Unlike the observation scan (``runner/integrity.py``) the
word "vanilla" is allowed: the prompts name the static Vanilla recipe hypotheses."""

PROSE = "I think I should mine some wood first."
FAILING = {
    "thought": "t",
    "subgoal": "diamond",
    "skill": "mine",
    "args": {"block": "diamond_ore", "count": 1},
}
NOT_OWNED = {
    "thought": "t",
    "subgoal": "iron_ingot",
    "skill": "craft_grid",
    "args": {"station": "inventory", "grid": [["iron_ingot", "iron_ingot"], [None, None]]},
}


def leaks(text: str, *, hidden: bool = True) -> list[str]:
    """What ``text`` gives away; with ``hidden=False`` the disclosure's own wording is allowed."""
    found = [p for p in PATTERNS if re.search(p, text, flags=re.IGNORECASE)]
    tokens = scan_text(text, forbidden_tokens())
    found += [t for t, _ in tokens if t not in GENERIC_PATTERNS]
    found += [p for p in HIDDEN_PHRASES if hidden and p.lower() in text.lower()]
    return found


class Recorder:
    """The mock planner, with a fault every few calls; keeps every message it is sent."""

    def __init__(self) -> None:
        self.policy = PlannerPolicy(vanilla_rules())
        self.sent: list[str] = []

    def __call__(self, messages: Sequence[Message], meta: CallMeta | None) -> str | ChatReply:
        self.sent.append("\n".join(str(m.content) for m in messages))
        n = len(self.sent)
        if n % 5 == 0:
            return PROSE
        if n % 7 == 0:
            return json.dumps(FAILING)
        if n % 11 == 0:
            return json.dumps(NOT_OWNED)
        return self.policy(messages, meta)


def play(name: str, rules: str, *, sheet: str | None = None, store: str | None = None) -> Any:
    recorder = Recorder()
    vanilla = vanilla_rules()
    active = resolve_rules(rules)
    agent = make_agent(
        name, active=active, vanilla=vanilla, client=MockLLM(recorder, model=MOCK_MODEL)
    )
    if name in MEMORY_AGENTS:
        load_store(agent, store, writable=True)
    disclosure = "disclosed" if sheet else "hidden"
    spec = EpisodeSpec("e", "x", WORLD, rules, get_task(TASK), name, MOCK_MODEL, disclosure, 0, 7)
    record, _steps = asyncio.run(
        run_episode(spec, agent, load_world(WORLD), active, vanilla, rule_sheet=sheet)
    )
    return record, recorder, agent


@pytest.mark.parametrize("name", list(LLM_AGENTS))
def test_no_configuration_sends_its_model_the_rules(name: str, tmp_path: Path) -> None:
    store = None
    for rules in (MIRROR, "vanilla"):  # Mirror first, so its memory reaches the Vanilla twin
        record, recorder, agent = play(name, rules, store=store)
        assert record.model_calls == len(recorder.sent) > 0
        for i, text in enumerate(recorder.sent):
            assert not leaks(text), (name, rules, i, leaks(text))
        if name in MEMORY_AGENTS:
            path = tmp_path / f"{name}.sqlite"
            with KnowledgeStore.open(path) as opened:
                opened.commit(f"{name}-{rules}", rules, agent.knowledge_delta())
            store = str(path)
    if name in MEMORY_AGENTS:
        assert store is not None
        with KnowledgeStore.open(store, read_only=True) as opened:
            assert opened.version == 2


def test_the_test_catches_what_it_looks_for() -> None:
    for text in (
        "world plains-1@M04",
        "as suite M04 says",
        compiled(find_suite("M04")).sheet[0],  # type: ignore[arg-type]
        "see data/minecraft/loot_tables/blocks/iron_ore.json",
        find_suite("M05").name,  # type: ignore[union-attr]
        "the rule set here",
        "RULE INFORMATION",
    ):
        assert leaks(text), text
    assert not leaks("STATIC VANILLA RECIPE HYPOTHESES: iron_pickaxe <- 3 iron_ingot, 2 stick")


@pytest.mark.parametrize("disclosed", ["react", "tools"])
def test_rules_reach_react_with_rules_only_through_its_sheet(disclosed: str) -> None:
    suite = find_suite(MIRROR)
    assert suite is not None
    sheet = compiled(suite).render_sheet()
    _record, recorder, _agent = play(disclosed, MIRROR, sheet=sheet)
    assert recorder.sent
    for i, text in enumerate(recorder.sent):
        assert sheet in text, i  # on every call, repairs included
        rest = text.replace(sheet, "")
        assert not leaks(rest, hidden=False), (i, leaks(rest, hidden=False))
