"""A minimal scripted client for LLM-agent tests (the full mock lives in mirrorcraft.llm.mock)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.datapack.suites import compiled, find_suite
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import CallMeta, Completion, Message, Sampling
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world

M05_SHEET = compiled(find_suite("M05")).render_sheet()  # type: ignore[arg-type]
HIDDEN_PHRASES = (
    "RULE INFORMATION",
    "rules differ",
    "rules may differ",
    "differ from standard",
    "modified rules",
    "rules have changed",
    "rule sheet",
)
"""Wording that must never reach a model in the hidden condition."""


class FakeClient:
    model = "fake"

    def __init__(self, policy: Callable[[Sequence[Message], CallMeta | None], str]):
        self.policy = policy
        self.calls: list[tuple[Sequence[Message], CallMeta | None]] = []

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling | None = None,
        meta: CallMeta | None = None,
    ) -> Completion:
        self.calls.append((messages, meta))
        text = self.policy(messages, meta)
        return Completion(text, self.model, 10 * len(messages), max(len(text) // 4, 1), 0.0)


def episode(
    agent_cls: Any,
    rules: str,
    task: str,
    *,
    policy: Any = None,
    world: str = "plains-1",
    sheet: str | None = None,
    budget: int | None = None,
) -> tuple[Any, Any, FakeClient, Any]:
    vanilla = vanilla_rules()
    active = resolve_rules(rules)
    pol = policy or PlannerPolicy(vanilla)
    client = FakeClient(pol)
    agent = agent_cls(agent_cls.__name__.lower(), client, vanilla)
    t = get_task(task)
    if budget:
        t = t.with_budget(budget)
    spec = EpisodeSpec(
        "t", "t", world, rules, t, "x", "fake", "disclosed" if sheet else "hidden", 0, 1
    )
    record, steps = asyncio.run(
        run_episode(spec, agent, load_world(world), active, vanilla, rule_sheet=sheet)
    )
    return record, steps, client, agent
