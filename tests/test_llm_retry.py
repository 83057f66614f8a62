"""OpenAIClient's retry, backoff, timeout and concurrency policy, driven through MockLLM's transport."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from mirrorcraft.llm.base import CallMeta, LLMConfigError, LLMUnavailable, Message, Sampling
from mirrorcraft.llm.mock import FaultPlan, MockLLM, scripted
from mirrorcraft.llm.openai_client import OpenAIClient, OpenAISettings
from mirrorcraft.llm.prices import PriceFile, PriceTable
from mirrorcraft.llm.transport import (
    ChatRequest,
    ChatResponse,
    TransportError,
    kind_for_status,
    parse_retry_after,
)

HELLO = [Message("user", "hello there, model")]


class Sleeps:
    """Records requested waits instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def settings(**overrides: Any) -> OpenAISettings:
    base: dict[str, Any] = {"model": "mock", "base_url": "http://llm.example:8080/v1"}
    return OpenAISettings(**(base | overrides))


def client_over(transport: Any, sleeps: Sleeps | None = None, **overrides: Any) -> OpenAIClient:
    return OpenAIClient(settings(**overrides), transport=transport, sleep=sleeps or Sleeps())


def test_retry_after_header_parsing() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "2", "retry-after-ms": "1500"}) == 1.5
    assert (
        parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10
    )
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({"Retry-After": "-4"}) is None
    assert parse_retry_after({"retry-after-ms": "x", "retry-after": "1"}) == 1.0
    assert parse_retry_after({}) is None


def test_status_kinds() -> None:
    assert kind_for_status(429) == "rate_limit"
    assert kind_for_status(503) == "server_error"
    assert kind_for_status(408) == "server_error"
    assert kind_for_status(401) == "auth"
    assert kind_for_status(403) == "auth"
    assert kind_for_status(404) == "not_found"
    assert kind_for_status(400) == "client_error"
    assert kind_for_status(413) == "client_error"


def test_transient_faults_are_retried_with_exact_retry_after() -> None:
    mock = MockLLM(
        scripted(["fine"]),
        faults=FaultPlan(at={1: "rate_limit", 2: "server_error", 3: "timeout"}, retry_after_s=7.5),
    )
    sleeps = Sleeps()
    client = client_over(mock.transport, sleeps)
    result = asyncio.run(client.complete(HELLO))
    assert result.text == "fine"
    assert mock.calls == 4
    assert sleeps.delays[0] == 7.5  # the server's wait, honoured exactly
    assert 1.0 <= sleeps.delays[1] < 2.0  # backoff ceiling 2 s, jitter factor in [0.5, 1)
    assert 2.0 <= sleeps.delays[2] < 4.0


def test_backoff_is_seeded_and_capped() -> None:
    def delays(seed: int) -> list[float]:
        client = client_over(
            MockLLM(scripted(["x"])).transport, backoff_base_s=1.0, backoff_max_s=5.0, seed=seed
        )
        return [client.backoff(attempt, None) for attempt in range(8)]

    assert delays(3) == delays(3)
    assert delays(3) != delays(4)
    assert all(d < 5.0 for d in delays(3))
    assert all(d >= 2.5 for d in delays(3)[3:])  # the cap times the smallest jitter factor
    injected = OpenAIClient(
        settings(), transport=MockLLM(scripted(["x"])).transport, rng=random.Random(9)
    )
    assert injected.backoff(0, None) == OpenAIClient(
        settings(), transport=MockLLM(scripted(["x"])).transport, rng=random.Random(9)
    ).backoff(0, None)


def test_server_wait_is_capped() -> None:
    mock = MockLLM(scripted(["ok"]), faults=FaultPlan(at={1: "rate_limit"}, retry_after_s=3600))
    sleeps = Sleeps()
    client = client_over(mock.transport, sleeps, retry_after_max_s=30)
    asyncio.run(client.complete(HELLO))
    assert sleeps.delays == [30]


def test_exhausted_retries_name_model_host_and_kind() -> None:
    mock = MockLLM(scripted(["never"]), faults=FaultPlan(rate=1.0, kinds=("server_error",)))
    sleeps = Sleeps()
    client = client_over(mock.transport, sleeps, max_retries=3)
    with pytest.raises(LLMUnavailable) as caught:
        asyncio.run(client.complete(HELLO))
    message = str(caught.value)
    assert "'mock'" in message and "llm.example:8080" in message and "server_error" in message
    assert "4 attempt" in message and "HTTP 500" in message
    assert mock.calls == 4 and len(sleeps.delays) == 3


def test_zero_retries_fail_on_first_error() -> None:
    mock = MockLLM(scripted(["x"]), faults=FaultPlan(at={1: "rate_limit"}))
    with pytest.raises(LLMUnavailable, match="rate_limit"):
        asyncio.run(client_over(mock.transport, max_retries=0).complete(HELLO))
    assert mock.calls == 1


def failing(error: TransportError) -> tuple[Any, list[ChatRequest]]:
    seen: list[ChatRequest] = []

    async def transport(request: ChatRequest) -> ChatResponse:
        seen.append(request)
        raise error

    return transport, seen


@pytest.mark.parametrize(
    ("status", "kind", "raised", "text"),
    [
        (401, "auth", LLMConfigError, "refused the credentials"),
        (403, "auth", LLMConfigError, "refused the credentials"),
        (404, "not_found", LLMConfigError, "not found"),
        (400, "client_error", LLMConfigError, "HTTP 400"),
        (422, "client_error", LLMConfigError, "HTTP 422"),
    ],
)
def test_client_errors_are_not_retried(
    status: int, kind: Any, raised: type[Exception], text: str
) -> None:
    transport, seen = failing(TransportError(kind, "nope", status=status))
    sleeps = Sleeps()
    with pytest.raises(raised, match=text) as caught:
        asyncio.run(client_over(transport, sleeps, api_key_env="SOME_KEY").complete(HELLO))
    assert len(seen) == 1 and sleeps.delays == []
    assert getattr(caught.value, "kind", None) == "config"  # a fault that stops the endpoint


def test_hanging_transport_times_out_and_is_retried() -> None:
    attempts = 0

    async def slow_then_fast(request: ChatRequest) -> ChatResponse:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            await asyncio.sleep(30)
        return ChatResponse(text="late but fine", prompt_tokens=3, completion_tokens=2)

    sleeps = Sleeps()
    result = asyncio.run(client_over(slow_then_fast, sleeps, timeout_s=0.05).complete(HELLO))
    assert result.text == "late but fine" and attempts == 2 and len(sleeps.delays) == 1


def test_malformed_and_empty_replies_are_returned_not_retried() -> None:
    mock = MockLLM(scripted(["good"]), faults=FaultPlan(at={1: "malformed", 2: "empty"}))
    client = client_over(mock.transport)
    first = asyncio.run(client.complete(HELLO))
    second = asyncio.run(client.complete(HELLO))
    third = asyncio.run(client.complete(HELLO))
    assert first.text == FaultPlan().malformed_text
    assert second.text == "" and second.completion_tokens == 0
    assert third.text == "good"
    assert mock.calls == 3


def test_usage_is_estimated_when_missing_and_cost_follows_prices() -> None:
    async def no_usage(request: ChatRequest) -> ChatResponse:
        return ChatResponse(text="x" * 40)

    table = PriceTable(
        PriceFile.model_validate(
            {
                "schema_version": 1,
                "models": {
                    "priced": {"input_per_mtok": 1.0, "output_per_mtok": 2.0, "verified": True}
                },
            }
        )
    )
    client = OpenAIClient(
        settings(model="priced"), transport=no_usage, prices=table, sleep=Sleeps()
    )
    result = asyncio.run(client.complete([Message("user", "y" * 80)]))
    assert (result.prompt_tokens, result.completion_tokens) == (20, 10)
    assert client.usage_estimated == 1 and result.estimated
    assert result.cost_usd == pytest.approx((20 * 1.0 + 10 * 2.0) / 1e6)
    unknown = OpenAIClient(settings(model="who-knows"), transport=no_usage, prices=table)
    assert asyncio.run(unknown.complete(HELLO)).cost_usd is None


def test_request_carries_sampling_meta_and_reasoning_switches() -> None:
    seen: list[ChatRequest] = []

    async def record(request: ChatRequest) -> ChatResponse:
        seen.append(request)
        return ChatResponse(text="ok", prompt_tokens=1, completion_tokens=1)

    client = client_over(
        record,
        reasoning_effort="none",
        extra_body={"thinking": {"type": "disabled"}},
        max_tokens_field="max_completion_tokens",
    )
    meta = CallMeta(purpose="act", contract="action")
    asyncio.run(client.complete(HELLO, sampling=Sampling(0.2, 64), meta=meta))
    request = seen[0]
    assert (request.temperature, request.max_tokens) == (0.2, 64)
    assert request.max_tokens_field == "max_completion_tokens"
    assert (
        request.reasoning_effort == "none" and request.extra_body["thinking"]["type"] == "disabled"
    )
    assert request.meta is meta and request.messages == (
        {"role": "user", "content": HELLO[0].content},
    )


def test_concurrency_cap_holds_and_survives_a_new_event_loop() -> None:
    state = {"now": 0, "peak": 0}

    async def counting(request: ChatRequest) -> ChatResponse:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        state["now"] -= 1
        return ChatResponse(text="ok", prompt_tokens=1, completion_tokens=1)

    client = client_over(counting, concurrency=3)

    async def burst() -> None:
        await asyncio.gather(*(client.complete(HELLO) for _ in range(12)))

    asyncio.run(burst())
    assert state["peak"] == 3
    state["peak"] = 0
    asyncio.run(burst())  # a second loop: the semaphore is rebuilt, not reused
    assert state["peak"] == 3


def test_settings_reject_unknown_keys_and_bad_urls() -> None:
    with pytest.raises(ValueError):
        OpenAISettings(model="m", base_url="http://x/v1", api_key="sk-nope")  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        OpenAISettings(model="m", base_url="ftp://x/v1")
    assert OpenAISettings(model="m", base_url="http://x/v1/").base_url == "http://x/v1"


@pytest.mark.parametrize(
    "field", ["timeout_s", "backoff_base_s", "backoff_max_s", "retry_after_max_s"]
)
def test_settings_reject_an_infinite_wait(field: str) -> None:
    """``timeout_s: .inf`` (or 1e400 in a spec) was accepted: a hanging endpoint then held an
    episode until its wall-clock limit, hours later; every wait must be a finite number."""
    with pytest.raises(ValueError, match="finite"):
        OpenAISettings(model="m", base_url="http://x/v1", **{field: float("inf")})
