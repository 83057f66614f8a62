"""The Agent protocol shared by reference agents and LLM configurations.

An episode calls ``start`` once, then ``act`` with each observation until the
episode ends (``act`` returning ``None`` means "no executable action", which
ends the episode), then ``finish``. ``act`` is async so that agents waiting on
model calls can share one event loop; reference agents return at once.
Agent state is cleared by ``start`` unless the agent declares cross-episode
memory (``cross_episode_memory = True``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mirrorcraft.body.observation import Observation


@dataclass(frozen=True)
class EpisodeContext:
    """What an agent is told at the start of an episode (never the suite or twin id)."""

    task: str
    task_title: str
    budget: int
    seed: int
    rule_sheet: str | None = None
    """The disclosed rule sheet, only in the disclosure condition."""


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    cached_calls: int = 0
    """Calls answered from the response cache (not paid for in this run)."""
    estimated_calls: int = 0
    """Calls whose token counts were estimated (the endpoint reported none)."""

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_calls += other.cached_calls
        self.estimated_calls += other.estimated_calls
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd


@dataclass(frozen=True)
class Decision:
    action: Any
    """The action as sent to the body (a dict; may be malformed if the agent erred)."""
    thought: str = ""
    usage: Usage = field(default_factory=Usage)


class Agent(Protocol):
    name: str
    cross_episode_memory: bool

    def start(self, ctx: EpisodeContext) -> None: ...

    async def act(self, obs: Observation) -> Decision | None: ...

    def finish(self, obs: Observation) -> None: ...
