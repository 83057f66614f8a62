"""The transport layer under ``OpenAIClient``: one request out, one response or one failure back.

A transport is any ``async (ChatRequest) -> ChatResponse`` function. It makes a
single attempt and reports failure by raising ``TransportError`` with a kind
(and the HTTP status and requested wait where there is one); the client decides
what to retry. The default transport speaks to an OpenAI-compatible endpoint
through the ``openai`` SDK (see ``openai_client``); ``MockLLM.transport`` plays
replies and injected faults without a network, so the same retry logic can be
tested against both.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mirrorcraft.faults import FaultKind
from mirrorcraft.llm.base import CallMeta, ToolCall, Tools

FailureKind = Literal[
    "rate_limit",  # HTTP 429
    "server_error",  # HTTP 5xx
    "timeout",  # no complete answer within the time limit
    "connection",  # could not connect, or the connection dropped
    "malformed_response",  # a 2xx answer that is not a chat completion
    "auth",  # HTTP 401 / 403
    "not_found",  # HTTP 404 (unknown model, or a base URL missing its /v1 part)
    "client_error",  # any other 4xx (400 bad request, 413 too large, 422, ...)
]

RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limit", "server_error", "timeout", "connection", "malformed_response"}
)
RETRYABLE_STATUSES: frozenset[int] = frozenset({408, 409, 429})
"""4xx statuses worth another attempt (request timeout, conflict, rate limit); all 5xx are too."""


@dataclass(frozen=True)
class ChatRequest:
    """What one attempt sends. ``meta`` never leaves the process; only mock transports read it."""

    model: str
    messages: tuple[Mapping[str, str], ...]
    temperature: float
    max_tokens: int
    max_tokens_field: str = "max_tokens"
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    reasoning_effort: str | None = None
    meta: CallMeta | None = None
    tools: Tools | None = None
    """Function tools offered (sent as ``tools`` and ``tool_choice``); None: none."""


@dataclass(frozen=True)
class ChatResponse:
    """The parts of a chat completion the harness uses.

    Token counts are None when the endpoint did not report usage; the client
    then estimates them. ``cached_prompt_tokens`` is the provider's count of
    prompt tokens served from its own prompt cache (billed at a lower price).
    """

    text: str
    model: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_prompt_tokens: int = 0
    finish_reason: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class TransportError(Exception):
    """One failed attempt. The message must never contain a credential."""

    def __init__(
        self,
        kind: FailureKind,
        message: str = "",
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message or kind)
        self.kind: FailureKind = kind
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    def __repr__(self) -> str:
        return (
            f"TransportError({self.kind!r}, status={self.status}, retry_after={self.retry_after})"
        )


Transport = Callable[[ChatRequest], Awaitable[ChatResponse]]


def kind_for_status(status: int) -> FailureKind:
    """Map an HTTP error status to the kind of failure it means for us."""
    if status == 429:
        return "rate_limit"
    if status >= 500 or status in RETRYABLE_STATUSES:
        return "server_error"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    return "client_error"


def fault_kind(error: TransportError) -> FaultKind:
    """The infrastructure fault kind of a failed call (see ``mirrorcraft.faults``)."""
    if error.kind == "timeout":
        return "timeout"
    if error.kind == "connection":
        return "connection"
    if error.kind in ("auth", "not_found", "client_error"):
        return "config"
    return "server"


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after-ms`` (milliseconds, used by OpenAI and Azure) wins over
    ``retry-after`` (seconds or an HTTP date). Unparseable or negative values
    are ignored (None), so the client falls back to its own backoff.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            ms = float(raw_ms)
        except ValueError:
            ms = -1.0
        if ms >= 0:
            return ms / 1000.0
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if seconds >= 0 else None
