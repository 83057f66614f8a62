"""The per-episode model-call budget: a client wrapper that refuses calls beyond a cap.

The MineEvolve paper compares methods under the same evaluation-time LLM-call
budget. A spec's ``call_budget`` caps the model calls one episode may make (every
call counts: planning, acting, reflection, induction, curation and JSON-repair
calls, cached replies included). The wrapper answers the first ``limit`` calls
and raises ``CallBudgetExhausted`` when one more is asked for; the episode loop
ends the episode there with termination ``call_budget``, an outcome that is
scored like an exhausted action budget, never an infrastructure fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mirrorcraft.llm.base import CallMeta, Completion, LLMClient, Message, Sampling, Tools

DEFAULT_SAMPLING = Sampling()


class CallBudgetExhausted(Exception):
    """The episode asked for a model call after using all ``limit`` calls of its budget."""

    def __init__(self, limit: int):
        super().__init__(f"the episode used all {limit} model calls of its call budget")
        self.limit = limit


class BudgetedClient:
    """An ``LLMClient`` that passes at most ``limit`` calls per episode to ``inner``."""

    def __init__(self, inner: LLMClient, limit: int):
        if limit < 1:
            raise ValueError("a call budget must allow at least one call")
        self.inner = inner
        self.limit = limit
        self.used = 0

    @property
    def model(self) -> str:
        return self.inner.model

    def reset(self) -> None:
        """Start a new episode's count."""
        self.used = 0

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling = DEFAULT_SAMPLING,
        meta: CallMeta | None = None,
        tools: Tools | None = None,
    ) -> Completion:
        if self.used >= self.limit:
            raise CallBudgetExhausted(self.limit)
        self.used += 1
        if tools is None:
            return await self.inner.complete(messages, sampling=sampling, meta=meta)
        return await self.inner.complete(messages, sampling=sampling, meta=meta, tools=tools)

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
