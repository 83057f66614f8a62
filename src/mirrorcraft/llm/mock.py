"""An offline model: replies come from a Python policy, failures from a fault plan.

``MockLLM`` can be used in two ways:

* directly, as an ``LLMClient``: ``await mock.complete(messages, meta=...)``.
  There is no retry loop in front of it, so an injected transport fault
  (timeout, 429, 500) surfaces at once as ``LLMUnavailable``;
* as a transport under ``OpenAIClient``: ``OpenAIClient(settings,
  transport=mock.transport)``. Then the faults go through exactly the retry,
  backoff and concurrency logic a real endpoint would meet.

A policy returns the reply text, or a ``ChatReply`` carrying tool calls (for calls
that offer function tools; without tools only its text is used).

Call numbers count attempts (a retried call uses several), start at 1 and are
shared by both ways of use. Token counts are deterministic: a quarter of the
character count of the prompt and of the reply.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from mirrorcraft.llm.base import (
    CallMeta,
    ChatReply,
    Completion,
    LLMUnavailable,
    Message,
    Sampling,
    ToolCall,
    Tools,
)
from mirrorcraft.llm.transport import ChatRequest, ChatResponse, TransportError, fault_kind

DEFAULT_SAMPLING = Sampling()

Policy = Callable[[Sequence[Message], CallMeta | None], str | ChatReply]
"""Produces the reply (text, or text with tool calls) for a conversation (and the call's
meta, when given)."""

FaultKind = Literal["timeout", "rate_limit", "server_error", "malformed", "empty"]
FAULT_KINDS: tuple[FaultKind, ...] = ("timeout", "rate_limit", "server_error", "malformed", "empty")


def scripted(replies: Sequence[str]) -> Policy:
    """A policy that returns ``replies`` in order and starts again after the last one."""
    if not replies:
        raise ValueError("scripted() needs at least one reply")
    items = list(replies)
    position = 0

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        nonlocal position
        reply = items[position % len(items)]
        position += 1
        return reply

    return policy


@dataclass(frozen=True)
class FaultPlan:
    """Which attempts fail, and how.

    ``at`` maps call numbers (1-based) to a fault. Independently, each other
    call fails with probability ``rate``, the fault drawn from ``kinds``; the
    draw depends only on the mock's seed and the call number, so a plan
    replays the same way whatever else happens. ``rate_limit`` faults carry a
    ``retry_after_s`` wait (None: no header). ``malformed`` and ``empty`` are
    not transport errors: the call succeeds with unusable text.
    """

    at: Mapping[int, FaultKind] = field(default_factory=dict)
    rate: float = 0.0
    kinds: tuple[FaultKind, ...] = ("server_error",)
    retry_after_s: float | None = 1.0
    malformed_text: str = '{"skill": "mine", "args": {'

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {self.rate}")
        unknown = [k for k in (*self.at.values(), *self.kinds) if k not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; choose from {FAULT_KINDS}")
        if self.rate > 0 and not self.kinds:
            raise ValueError("a fault rate needs at least one kind to draw from")

    def fault_for(self, call_number: int, seed: int = 0) -> FaultKind | None:
        if call_number in self.at:
            return self.at[call_number]
        if self.rate <= 0.0:
            return None
        draw = random.Random(f"{seed}:{call_number}")
        if draw.random() >= self.rate:
            return None
        return self.kinds[draw.randrange(len(self.kinds))]


def _prompt_text(messages: Sequence[Message]) -> str:
    return "".join(m.content for m in messages)


def _reply_chars(reply: ChatReply) -> int:
    return len(reply.text) + sum(len(c.name) + len(c.arguments) for c in reply.tool_calls)


class MockLLM:
    """A deterministic stand-in for a chat model (see the module docstring)."""

    def __init__(
        self,
        policy: Policy,
        *,
        model: str = "mock",
        latency_s: float = 0.0,
        faults: FaultPlan | None = None,
        seed: int = 0,
    ) -> None:
        self.model = model
        self.endpoint = "mock"
        self.policy = policy
        self.latency_s = latency_s
        self.faults = faults or FaultPlan()
        self.seed = seed
        """Seeds the draws of a fault plan's ``rate``."""
        self.calls = 0
        """Attempts made so far, failed ones included."""
        self.history: list[tuple[int, FaultKind | None]] = []
        """(call number, fault injected or None) for every attempt."""

    def __repr__(self) -> str:
        return f"MockLLM(model={self.model!r}, calls={self.calls})"

    async def _attempt(
        self, messages: Sequence[Message], meta: CallMeta | None, tools: Tools | None = None
    ) -> ChatReply:
        self.calls += 1
        number = self.calls
        fault = self.faults.fault_for(number, self.seed)
        self.history.append((number, fault))
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if fault == "timeout":
            raise TransportError("timeout", f"mock call {number}: injected timeout")
        if fault == "rate_limit":
            raise TransportError(
                "rate_limit",
                f"mock call {number}: injected rate limit",
                status=429,
                retry_after=self.faults.retry_after_s,
            )
        if fault == "server_error":
            raise TransportError(
                "server_error", f"mock call {number}: injected server error", status=500
            )
        if fault == "malformed":
            if tools is not None:
                return ChatReply("", (ToolCall("mine", self.faults.malformed_text, "call_0"),))
            return ChatReply(self.faults.malformed_text)
        if fault == "empty":
            return ChatReply("")
        reply = self.policy(messages, meta)
        if isinstance(reply, str):
            return ChatReply(reply)
        return reply if tools is not None else ChatReply(reply.text)

    async def aclose(self) -> None:
        """Nothing to release; present so that every client can be closed the same way."""

    async def transport(self, request: ChatRequest) -> ChatResponse:
        """The mock as a transport for ``OpenAIClient`` (a single attempt)."""
        messages = [Message(m["role"], m["content"]) for m in request.messages]
        reply = await self._attempt(messages, request.meta, request.tools)
        return ChatResponse(
            text=reply.text,
            model=self.model,
            prompt_tokens=len(_prompt_text(messages)) // 4,
            completion_tokens=_reply_chars(reply) // 4,
            finish_reason="tool_calls" if reply.tool_calls else "stop",
            tool_calls=reply.tool_calls,
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling = DEFAULT_SAMPLING,
        meta: CallMeta | None = None,
        tools: Tools | None = None,
    ) -> Completion:
        try:
            reply = await self._attempt(messages, meta, tools)
        except TransportError as exc:
            raise LLMUnavailable(
                f"model {self.model!r} at mock: {exc.kind} ({exc}); the mock has no retries",
                kind=fault_kind(exc),
            ) from None
        return Completion(
            text=reply.text,
            model=self.model,
            prompt_tokens=len(_prompt_text(messages)) // 4,
            completion_tokens=_reply_chars(reply) // 4,
            cost_usd=0.0,
            cached=False,
            latency_s=self.latency_s,
            tool_calls=reply.tool_calls,
        )
