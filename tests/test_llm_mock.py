"""MockLLM used directly: scripted policies, meta, deterministic tokens, injected faults."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from mirrorcraft.llm.base import CallMeta, LLMClient, LLMUnavailable, Message
from mirrorcraft.llm.mock import FaultPlan, MockLLM, scripted

ASK = [Message("system", "be brief"), Message("user", "what next?")]


def test_scripted_replies_cycle() -> None:
    mock = MockLLM(scripted(["a", "b"]))

    async def three() -> list[str]:
        return [(await mock.complete(ASK)).text for _ in range(3)]

    assert asyncio.run(three()) == ["a", "b", "a"]
    with pytest.raises(ValueError):
        scripted([])


def test_policy_sees_messages_and_meta() -> None:
    seen: list[tuple[int, str]] = []

    def policy(messages: Sequence[Message], meta: CallMeta | None) -> str:
        seen.append((len(messages), meta.purpose if meta else "-"))
        return "ok"

    mock: LLMClient = MockLLM(policy, model="mock-planner")
    result = asyncio.run(mock.complete(ASK, meta=CallMeta(purpose="reflect")))
    assert seen == [(2, "reflect")]
    assert result.model == "mock-planner" and result.cost_usd == 0.0 and not result.cached


def test_tokens_are_deterministic() -> None:
    result = asyncio.run(MockLLM(scripted(["x" * 41])).complete(ASK))
    assert result.prompt_tokens == len("be briefwhat next?") // 4
    assert result.completion_tokens == 10


def test_transport_faults_surface_as_unavailable_without_retry() -> None:
    mock = MockLLM(scripted(["ok"]), faults=FaultPlan(at={2: "server_error", 3: "timeout"}))

    async def run() -> list[str]:
        out = []
        for _ in range(4):
            try:
                out.append((await mock.complete(ASK)).text)
            except LLMUnavailable as exc:
                out.append(f"fault: {exc}")
        return out

    out = asyncio.run(run())
    assert out[0] == "ok" and out[3] == "ok"
    assert "server_error" in out[1] and "timeout" in out[2]
    assert [fault for _, fault in mock.history] == [None, "server_error", "timeout", None]


def test_fraction_of_faults_is_seeded() -> None:
    plan = FaultPlan(rate=0.3, kinds=("rate_limit", "empty"))
    first = [plan.fault_for(n, seed=5) for n in range(1, 200)]
    again = [plan.fault_for(n, seed=5) for n in range(1, 200)]
    other = [plan.fault_for(n, seed=6) for n in range(1, 200)]
    assert first == again and first != other
    hits = sum(f is not None for f in first)
    assert 30 < hits < 90
    assert {f for f in first if f} == {"rate_limit", "empty"}


def test_fault_plan_validation() -> None:
    with pytest.raises(ValueError):
        FaultPlan(rate=1.5)
    with pytest.raises(ValueError):
        FaultPlan(at={1: "explode"})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        FaultPlan(rate=0.5, kinds=())
