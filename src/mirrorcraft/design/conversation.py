"""Model calls for the construction loop: one call, one repair call when the reply is unusable.

Each exchange records the prompt hash (SHA-256 over the roles and texts), the
reply, and the repair problem and reply when there was one; token counts and
cost are summed in ``Usage`` (cost ``None`` once any call's price is unknown), with
the calls answered from the response cache (a rerun into the same folder pays nothing
for them; their cost is what they cost when first made) and those whose token counts
were estimated counted apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mirrorcraft.llm.base import CallMeta, LLMClient, Message, Sampling

T = TypeVar("T")


def prompt_hash(messages: Sequence[Message]) -> str:
    text = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    cached_calls: int = 0
    estimated_calls: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Exchange:
    """One model call and, when its reply was unusable, the repair call after it."""

    purpose: str
    prompt_hash: str = ""
    reply: str = ""
    problem: str = ""
    repair: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"prompt_hash": self.prompt_hash, "reply": self.reply}
        if self.repair is not None:
            out["repair"] = self.repair
        if self.problem:
            out["problem"] = self.problem
        return out


class Conversation:
    def __init__(self, client: LLMClient, usage: Usage) -> None:
        self.client = client
        self.usage = usage

    async def _call(self, messages: Sequence[Message], sampling: Sampling, meta: CallMeta) -> str:
        done = await self.client.complete(messages, sampling=sampling, meta=meta)
        u = self.usage
        u.calls += 1
        u.prompt_tokens += done.prompt_tokens
        u.completion_tokens += done.completion_tokens
        u.cached_calls += int(done.cached)
        u.estimated_calls += int(done.estimated)
        u.cost_usd = (
            None if u.cost_usd is None or done.cost_usd is None else u.cost_usd + done.cost_usd
        )
        return done.text

    async def ask(
        self,
        messages: list[Message],
        sampling: Sampling,
        meta: CallMeta,
        read: Callable[[str], tuple[T | None, str]],
        repair: Callable[[str], str],
    ) -> tuple[T | None, Exchange]:
        ex = Exchange(meta.purpose, prompt_hash(messages))
        ex.reply = await self._call(messages, sampling, meta)
        value, problem = read(ex.reply)
        if value is not None:
            return value, ex
        again = [*messages, Message("assistant", ex.reply), Message("user", repair(problem))]
        meta2 = CallMeta(f"{meta.purpose}_repair", meta.contract, meta.observation, meta.extra)
        text = await self._call(again, sampling, meta2)
        value, problem2 = read(text)
        ex.repair = {"problem": problem, "prompt_hash": prompt_hash(again), "reply": text}
        ex.problem = problem2
        return value, ex
