"""Errors that are not evaluation outcomes: the episode is rerun under the same id.

DESIGN.md's failure taxonomy: an *outcome* (success, budget, death, no
executable action, agent error) is scored; an *infrastructure fault* is never
scored and is retried by a later attempt or a later run. Every fault has one of
five kinds:

* ``connection``: an endpoint or backend could not be reached, or dropped the line;
* ``timeout``: no answer in time (one model call, or the whole episode's limit);
* ``server``: the other side answered with a failure (5xx, 429 after retries, a dead
  game server, an unreadable reply);
* ``config``: a setting is wrong and retrying the same request cannot help (refused
  credentials, unknown model or path, a request larger than the context window);
  it stops dispatch to whatever caused it;
* ``worker``: the process running the episode died, or the harness itself failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

FaultKind = Literal["connection", "timeout", "server", "config", "worker"]
FAULT_KINDS: tuple[FaultKind, ...] = ("connection", "timeout", "server", "config", "worker")


class InfrastructureFault(Exception):
    """Something outside the evaluation failed (backend crash, disconnect, unreachable model endpoint).

    ``kind`` is one of ``FAULT_KINDS``; ``endpoint`` is true when a model endpoint
    (rather than the game backend) failed, so the runner can pause that endpoint.
    """

    kind: FaultKind = "server"
    endpoint: bool = False

    def __init__(self, message: str = "", *, kind: FaultKind | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


@dataclass(frozen=True)
class Fault:
    """One failed attempt of an episode, as the runner records it."""

    kind: FaultKind
    message: str
    endpoint: bool = False
    """True when a model endpoint failed (counts towards pausing that endpoint)."""
    failed_attempts: tuple[tuple[str, int], ...] | None = None
    """Model-call attempts of this episode attempt that failed, by kind (those of the call
    that failed for good included): (kind, count) pairs. None when not known (a fault
    that did not come out of an episode's model calls)."""

    @classmethod
    def of(cls, exc: InfrastructureFault) -> Fault:
        counted: dict[str, int] | None = getattr(exc, "episode_failed_attempts", None)
        kinds: tuple[str, ...] = tuple(getattr(exc, "failed_attempts", None) or ())
        if counted is None and kinds:
            counted = {}
            for kind in kinds:
                counted[kind] = counted.get(kind, 0) + 1
        return cls(
            exc.kind,
            str(exc) or type(exc).__name__,
            bool(exc.endpoint),
            None if counted is None else tuple(sorted(counted.items())),
        )


_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
_BEARER = re.compile(r"(?i)\bbearer\s+[^\s\"',;]+")
_KEY_PARAM = re.compile(r"(?i)\b((?:api[_-]?key|access[_-]?token|token|key)=)[^&\s\"']+")
_SK_TOKEN = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of an exception raised by code we do not own (a user's agent);
    one whose message cannot be read (its ``__str__`` raises) is named by its type."""
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:
        return f"{type(exc).__name__} (its message could not be read)"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with credentials replaced: the given secret values, URL user-info,
    bearer tokens, ``key=``/``token=`` query values and ``sk-...`` keys."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    text = _URL_USERINFO.sub(r"\1[redacted]@", text)
    text = _BEARER.sub("Bearer [redacted]", text)
    text = _KEY_PARAM.sub(r"\1[redacted]", text)
    return _SK_TOKEN.sub("sk-[redacted]", text)
