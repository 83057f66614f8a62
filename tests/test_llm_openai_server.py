"""The real OpenAIClient and openai SDK against the local fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.llm.base import LLMConfigError, LLMUnavailable, Message
from mirrorcraft.llm.cache import CachedClient, ResponseCache
from mirrorcraft.llm.fakeserver import Fail, FakeOpenAIServer, Hang, Malformed, Reply
from mirrorcraft.llm.openai_client import OpenAIClient, OpenAISettings
from mirrorcraft.llm.prices import PriceFile, PriceTable

KEY = "sk-test-7f3a9c1e5b2d4a6f8e0c"
KEY_ENV = "MIRRORCRAFT_TEST_LLM_KEY"
ASK = [Message("system", "you play minecraft"), Message("user", "inventory: 3 oak_log")]
PRICES = PriceTable(
    PriceFile.model_validate(
        {
            "schema_version": 1,
            "models": {
                "fake-model": {
                    "input_per_mtok": 2.0,
                    "output_per_mtok": 8.0,
                    "cached_input_per_mtok": 0.5,
                    "verified": True,
                }
            },
        }
    )
)


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAIServer() as running:
        yield running


def make(server: FakeOpenAIServer, sleeps: Sleeps | None = None, **overrides: Any) -> OpenAIClient:
    fields: dict[str, Any] = {
        "model": "fake-model",
        "base_url": server.base_url,
        "api_key_env": KEY_ENV,
        "timeout_s": 5.0,
        "max_retries": 3,
    }
    return OpenAIClient(
        OpenAISettings(**(fields | overrides)), prices=PRICES, sleep=sleeps or Sleeps()
    )


def call(client: OpenAIClient | CachedClient, messages: list[Message] = ASK) -> Any:
    async def go() -> Any:
        try:
            return await client.complete(messages)
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_normal_completion_with_usage_and_cached_prompt_price(server: FakeOpenAIServer) -> None:
    server.script(Reply('{"skill": "craft_grid"}', cached_tokens=4))
    result = call(make(server))
    assert result.text == '{"skill": "craft_grid"}'
    assert result.prompt_tokens == len("you play minecraftinventory: 3 oak_log") // 4
    assert result.completion_tokens == len(result.text) // 4
    expected = ((result.prompt_tokens - 4) * 2.0 + 4 * 0.5 + result.completion_tokens * 8.0) / 1e6
    assert result.cost_usd == pytest.approx(expected)
    sent = server.received[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.authorization == f"Bearer {KEY}"
    assert sent.body["model"] == "fake-model" and sent.body["temperature"] == 0.7
    assert sent.body["max_tokens"] == 2048
    assert sent.body["messages"][1] == {"role": "user", "content": "inventory: 3 oak_log"}


def test_settings_switches_reach_the_wire(server: FakeOpenAIServer) -> None:
    client = make(
        server,
        reasoning_effort="none",
        extra_body={"thinking": {"type": "disabled"}},
        max_tokens_field="max_completion_tokens",
    )
    call(client)
    body = server.received[0].body
    assert body["reasoning_effort"] == "none" and body["thinking"] == {"type": "disabled"}
    assert body["max_completion_tokens"] == 2048 and "max_tokens" not in body


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (Fail(429, retry_after="2"), 2.0),
        (Fail(429, retry_after_ms="1500", retry_after="9"), 1.5),
        (Fail(503, retry_after="4"), 4.0),
    ],
)
def test_retry_after_is_honoured(server: FakeOpenAIServer, failure: Fail, expected: float) -> None:
    server.script(failure)
    sleeps = Sleeps()
    assert call(make(server, sleeps)).text == "ok"
    assert sleeps.delays == [expected] and server.requests == 2


def test_server_errors_exhaust_retries(server: FakeOpenAIServer) -> None:
    server.default = Fail(500, message="boom")
    sleeps = Sleeps()
    with pytest.raises(LLMUnavailable) as caught:
        call(make(server, sleeps, max_retries=2))
    message = str(caught.value)
    assert "fake-model" in message and f"127.0.0.1:{server.port}" in message
    assert "server_error" in message and "HTTP 500" in message
    assert server.requests == 3 and len(sleeps.delays) == 2


def test_malformed_body_is_retried_then_succeeds(server: FakeOpenAIServer) -> None:
    server.script(Malformed(), Malformed(b"<html>bad gateway</html>"))
    assert call(make(server)).text == "ok"
    assert server.requests == 3


def test_hang_times_out(server: FakeOpenAIServer) -> None:
    server.default = Hang(30)
    with pytest.raises(LLMUnavailable, match="timeout"):
        call(make(server, timeout_s=0.3, max_retries=1))
    assert server.requests == 2


def test_empty_content_and_missing_usage(server: FakeOpenAIServer) -> None:
    server.script(Reply(None), Reply("abcdefgh", usage=False))
    client = make(server)

    async def both() -> tuple[Any, Any]:
        try:
            return await client.complete(ASK), await client.complete(ASK)
        finally:
            await client.aclose()

    empty, no_usage = asyncio.run(both())
    assert empty.text == "" and empty.completion_tokens == 0
    assert no_usage.text == "abcdefgh" and no_usage.completion_tokens == 2
    assert client.usage_estimated == 1
    assert no_usage.estimated and not empty.estimated  # the server reported usage for the first


def test_unauthorised_is_a_config_error_without_retry_or_key(server: FakeOpenAIServer) -> None:
    server.default = Fail(401, message=f"Incorrect API key provided: {KEY}")
    sleeps = Sleeps()
    with pytest.raises(LLMConfigError) as caught:
        call(make(server, sleeps))
    assert server.requests == 1 and sleeps.delays == []
    assert KEY_ENV in str(caught.value)
    rendered = "".join(traceback.format_exception(caught.value))
    assert KEY not in rendered and KEY not in repr(caught.value)


def test_other_client_errors_are_config_faults_and_scrubbed(server: FakeOpenAIServer) -> None:
    server.default = Fail(400, message=f"bad field; your key {KEY} is fine")
    with pytest.raises(LLMConfigError) as caught:
        call(make(server))
    assert server.requests == 1 and "HTTP 400" in str(caught.value)
    assert "bad field" in str(caught.value) and caught.value.kind == "config"
    assert KEY not in "".join(traceback.format_exception(caught.value))


def test_a_context_length_refusal_is_a_config_fault_never_retried(
    server: FakeOpenAIServer,
) -> None:
    server.default = Fail.context_length()  # llama.cpp's wording and status
    sleeps = Sleeps()
    with pytest.raises(LLMConfigError, match="context window") as caught:
        call(make(server, sleeps))
    assert server.requests == 1 and sleeps.delays == [] and caught.value.kind == "config"


def test_exhausted_errors_never_show_the_key(server: FakeOpenAIServer) -> None:
    server.default = Fail(503, message=f"overloaded (Authorization: Bearer {KEY})")
    with pytest.raises(LLMUnavailable) as caught:
        call(make(server, max_retries=1))
    assert KEY not in "".join(traceback.format_exception(caught.value))
    client = make(server)
    assert KEY not in repr(client) and KEY not in repr(client.settings)


def test_unreachable_server_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAIServer() as gone:
        url = gone.base_url
    settings = OpenAISettings(
        model="fake-model", base_url=url, api_key_env=KEY_ENV, max_retries=1, timeout_s=5
    )
    with pytest.raises(LLMUnavailable, match="connection") as caught:
        call(OpenAIClient(settings, prices=PRICES, sleep=Sleeps()))
    assert caught.value.kind == "connection"


def test_concurrency_limit_is_respected_at_the_server(server: FakeOpenAIServer) -> None:
    client = make(server, concurrency=3)
    server.hold()

    async def burst() -> list[Any]:
        calls = [asyncio.create_task(client.complete(ASK)) for _ in range(10)]
        for _ in range(500):  # wait (bounded) until the cap is reached
            if server.in_flight >= 3:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # give any call over the cap a chance to show up
        server.release()
        done = await asyncio.gather(*calls)
        await client.aclose()
        return done

    results = asyncio.run(burst())
    assert len(results) == 10 and server.requests == 10
    assert server.max_in_flight == 3


def test_cache_hit_avoids_a_second_request_and_stores_no_key(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "llm_cache.sqlite"
    with ResponseCache(path) as cache:
        first = call(CachedClient(make(server), cache, scope="ep-1"))
        again = call(CachedClient(make(server), cache, scope="ep-1"))
    assert server.requests == 1
    assert not first.cached and again.cached and again.text == first.text
    assert (again.prompt_tokens, again.completion_tokens) == (
        first.prompt_tokens,
        first.completion_tokens,
    )
    assert again.cost_usd == first.cost_usd
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert KEY.encode() not in stored and KEY_ENV.encode() not in stored


def test_missing_key_variable_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    settings = OpenAISettings(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=KEY_ENV)
    with pytest.raises(LLMConfigError, match=KEY_ENV):
        OpenAIClient(settings)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -40, "completion_tokens": 3},  # negative
        {"prompt_tokens": 10**400, "completion_tokens": 3},  # too large for a float
        {"prompt_tokens": 10**12, "completion_tokens": 3},  # beyond any context window
        {"prompt_tokens": True, "completion_tokens": 3},  # JSON true is not a count
        {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},  # a gateway's zeros
    ],
)
def test_unbelievable_usage_is_estimated_and_marked(
    server: FakeOpenAIServer, usage: dict[str, Any]
) -> None:
    """A provider's broken token counts never reach a record as negative, absurd or free
    calls (a negative count made the whole results file fail validation, a huge one made the
    cost computation raise inside the agent): they are estimated from text, and said so."""
    server.script(Reply("abcdefghijkl", usage_as=usage))
    client = make(server)
    result = call(client)
    prompt = len("you play minecraftinventory: 3 oak_log") // 4
    assert result.estimated and client.usage_estimated == 1
    assert result.prompt_tokens == prompt
    assert 0 < result.completion_tokens <= 3
    expected = (prompt * 2.0 + result.completion_tokens * 8.0) / 1e6
    assert result.cost_usd == pytest.approx(expected)


def test_believable_usage_and_cached_prompt_counts_are_kept(server: FakeOpenAIServer) -> None:
    """Sane counts pass through untouched, DeepSeek's own cached-token field is read, and a
    negative cached count bills nothing at the cached price."""
    server.script(
        Reply("abcd", usage_as={"prompt_tokens": 100, "completion_tokens": 0}),
        Reply(
            "abcd",
            usage_as={"prompt_tokens": 100, "completion_tokens": 7, "prompt_cache_hit_tokens": 60},
        ),
        Reply(
            "abcd",
            usage_as={
                "prompt_tokens": 100,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": -60},
            },
        ),
    )
    client = make(server)

    async def three() -> list[Any]:
        try:
            return [await client.complete(ASK) for _ in range(3)]
        finally:
            await client.aclose()

    plain, deepseek, negative = asyncio.run(three())
    assert not (plain.estimated or deepseek.estimated or negative.estimated)
    assert (plain.prompt_tokens, plain.completion_tokens) == (100, 0)
    assert deepseek.cost_usd == pytest.approx((40 * 2.0 + 60 * 0.5 + 7 * 8.0) / 1e6)
    assert negative.cost_usd == pytest.approx((100 * 2.0 + 7 * 8.0) / 1e6)
