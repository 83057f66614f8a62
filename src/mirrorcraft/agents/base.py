"""The Agent protocol shared by reference agents, LLM configurations and users' own agents.

This is a public API (``docs/agent_api.md`` explains it for people writing agents).
An episode calls ``start`` once with an ``EpisodeContext``, then ``act`` with each
``Observation`` until the episode ends (``act`` returning ``None`` means "no
executable action", which ends the episode), then ``finish`` with the last
observation. ``act`` is async so that agents waiting on model calls can share one
event loop; reference agents return at once. ``act`` returns a ``Decision``: the
action (``{"skill": ..., "args": {...}}``), an optional thought stored in the trace,
and the ``Usage`` of model calls made for it that the harness did not make itself
(calls through ``EpisodeContext.client`` are counted by the harness).

Each episode gets a fresh agent instance in grid runs. ``cross_episode_memory =
True`` declares memory that outlives an episode; it is carried only by the knowledge
stores of accumulation runs, through ``load_knowledge`` and ``knowledge_delta``
(``agents/memory.py``; for users' agents, ``docs/agent_api.md``).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable
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
    rng: random.Random | None = field(default=None, compare=False)
    """A generator seeded with the episode's seed (the Vanilla and Mirror twins of a pair get
    the same draws); agents draw their randomness from it."""
    client: Any = field(default=None, compare=False)
    """The episode's model client (an ``llm.base.LLMClient``), only for user agents that set
    ``uses_model = True``; None otherwise."""


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
    failed_attempts: dict[str, int] = field(default_factory=dict)
    """Attempts that failed and were retried before a reply came, by kind (``rate_limit``,
    ``server_error``, ``timeout``, ...): not calls."""
    unusable_replies: int = 0
    """Replies (counted in ``calls``) the agent could not use: each one asked for a repair
    call or left the step without an action."""
    failures_counted: bool = False
    """True when the harness counted ``failed_attempts`` and ``unusable_replies`` for these
    calls. Calls an agent reports itself (a user's or a remote agent's own model) leave it
    False: their failures are not known, which the record says (null) rather than 0."""

    def add(self, other: Usage) -> None:
        uncounted = (self.calls > 0 and not self.failures_counted) or (
            other.calls > 0 and not other.failures_counted
        )
        counted = (self.failures_counted or other.failures_counted) and not uncounted
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_calls += other.cached_calls
        self.estimated_calls += other.estimated_calls
        for kind, n in other.failed_attempts.items():
            self.failed_attempts[kind] = self.failed_attempts.get(kind, 0) + n
        self.unusable_replies += other.unusable_replies
        self.failures_counted = counted
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd

    def count_call(self, completion: Any) -> None:
        """Add one call the harness made (an ``llm.base.Completion``): its tokens, cost and
        the attempts that failed before it."""
        self.add(
            Usage(
                1,
                completion.prompt_tokens,
                completion.completion_tokens,
                completion.cost_usd,
                cached_calls=int(completion.cached),
                estimated_calls=int(completion.estimated),
                failed_attempts=tally(getattr(completion, "failed_attempts", ())),
                failures_counted=True,
            )
        )


def tally(kinds: Any) -> dict[str, int]:
    """Kind -> how many times it occurs, for a sequence of failure kinds."""
    out: dict[str, int] = {}
    for kind in kinds or ():
        out[str(kind)] = out.get(str(kind), 0) + 1
    return out


USER_THOUGHT_LIMIT = 2000
"""The characters of a thought kept in the step trace for a user's agent (a Python plugin or
a remote agent): the first ones; a thought is a note, and the trace is stored whole."""


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

    def finish(self, obs: Observation) -> Awaitable[None] | None: ...
