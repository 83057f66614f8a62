"""The LLMClient protocol every configuration talks to, and its value types.

A client takes chat messages and returns a ``Completion`` with token usage and
cost. A call may offer function tools (``Tools``: OpenAI ``tools`` objects and the
``tool_choice``); the model's ``tool_calls`` then come back in the ``Completion``.
``meta`` carries structured context (the reply contract expected, the
current observation as JSON) that real clients ignore and the mock client uses
to play a scripted policy. An endpoint that still fails after retries raises
``LLMUnavailable`` (an infrastructure fault: the episode is rerun); a setting that
no retry can fix raises ``LLMConfigError`` (a fault of kind ``config``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mirrorcraft.faults import InfrastructureFault


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant
    content: str


@dataclass(frozen=True)
class Sampling:
    """The paper's defaults: temperature 0.7, at most 2,048 completion tokens."""

    temperature: float = 0.7
    max_tokens: int = 2048


@dataclass(frozen=True)
class ToolCall:
    """One function call a model asked for: the tool's name and its arguments as the JSON text
    the model wrote (parsed by the caller, which decides what a malformed call means)."""

    name: str
    arguments: str
    id: str = ""

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class Tools:
    """Function tools offered with one call: OpenAI ``{"type": "function", ...}`` objects and
    the ``tool_choice`` (``auto``: the model may answer in text; ``required``: it must call
    one)."""

    functions: tuple[Mapping[str, Any], ...]
    choice: str = "auto"

    def canonical(self) -> str:
        """The tools as canonical JSON (what a response cache keys on)."""
        return json.dumps(
            {"tools": list(self.functions), "tool_choice": self.choice},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )


@dataclass(frozen=True)
class ChatReply:
    """A reply with tool calls, as a scripted policy (``MockLLM``) returns one; a policy
    that returns plain text answers without tool calls."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    """None when the model's price is unknown (never silently zero)."""
    cached: bool = False
    """Answered from the response cache: nothing was paid for this call in this run."""
    latency_s: float = 0.0
    estimated: bool = False
    """The endpoint reported no token usage: the token counts (and the cost from them) are
    estimates from text length."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The function calls the model asked for (only when the call offered ``Tools``)."""
    failed_attempts: tuple[str, ...] = ()
    """The kind (``transport.FailureKind``) of each attempt that failed and was retried before
    this reply came: not calls, and not in the token counts or the cost. Empty for a reply
    from the response cache (nothing was sent in this run)."""


@dataclass(frozen=True)
class CallMeta:
    """Context for a call; only the mock client reads it."""

    purpose: str
    """What the call is for: act, repair, reflect, critic, program, init_graph, plan, discover, ..."""
    contract: str = ""
    """The reply format expected (e.g. "action", "react_action", "reflection")."""
    observation: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)


class LLMClient(Protocol):
    model: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling = Sampling(),
        meta: CallMeta | None = None,
        tools: Tools | None = None,
    ) -> Completion: ...


class LLMUnavailable(InfrastructureFault):
    """The endpoint failed after all retries (rate limits, server errors, timeouts, network).

    ``kind`` says how (``connection``, ``timeout`` or ``server``; see ``mirrorcraft.faults``).
    """

    endpoint = True
    failed_attempts: tuple[str, ...] = ()
    """The kind of every attempt of the call that failed (the last one included)."""


class LLMConfigError(InfrastructureFault):
    """A setting is wrong and no retry can fix it: no base URL, no key in the named variable,
    bad settings, refused credentials, an unknown model or path, a request larger than the
    endpoint's context window. Before a run it stops the run; inside an episode it is an
    infrastructure fault of kind ``config`` that stops dispatch to the endpoint."""

    kind = "config"
    endpoint = True
    failed_attempts: tuple[str, ...] = ()
    """The kind of every attempt of the call that failed (the last one included); empty when
    the call was never sent (a missing key, bad settings)."""
