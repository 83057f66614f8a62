"""make_client: the client stack from a model name, endpoint and key variable."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.llm.base import LLMConfigError
from mirrorcraft.llm.cache import CachedClient
from mirrorcraft.llm.factory import close_client, make_client
from mirrorcraft.llm.mock import MockLLM, scripted
from mirrorcraft.llm.openai_client import OpenAIClient

KEY_ENV = "MIRRORCRAFT_TEST_FACTORY_KEY"
SECRET = "sk-factory-0123456789abcdef"


def test_builds_a_client_with_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    client = make_client(
        "deepseek-v4-flash",
        "https://api.example.com/v1",
        KEY_ENV,
        timeout_s=12,
        concurrency=4,
        reasoning_effort="none",
    )
    assert isinstance(client, OpenAIClient)
    assert client.model == "deepseek-v4-flash" and client.endpoint == "api.example.com"
    assert (client.settings.timeout_s, client.settings.concurrency) == (12, 4)
    assert SECRET not in repr(client) and SECRET not in client.settings.model_dump_json()


def test_cache_path_wraps_the_client(tmp_path: Path) -> None:
    client = make_client(
        "local-model",
        "http://127.0.0.1:8080/v1",
        None,
        cache_path=tmp_path / "runs" / "x" / "llm_cache.sqlite",
        cache_scope="episode-7",
    )
    assert isinstance(client, CachedClient) and client.scope == "episode-7"
    assert client.endpoint == "127.0.0.1:8080" and client.cache is not None
    assert (tmp_path / "runs" / "x" / "llm_cache.sqlite").exists()


@pytest.mark.parametrize(
    ("model", "base_url", "key_env", "overrides", "message"),
    [
        ("deepseek-v4-flash", None, KEY_ENV, {}, "has no endpoint"),
        ("deepseek-v4-flash", "", KEY_ENV, {}, "has no endpoint"),
        ("none", "http://x/v1", None, {}, "names none"),
        ("m", "api.example.com/v1", None, {}, "base_url"),
        ("m", "http://x/v1", None, {"retries": 3}, "retries"),
        ("m", "http://x/v1", None, {"concurrency": 0}, "concurrency"),
        ("m", "http://x/v1", "MIRRORCRAFT_SURELY_UNSET_VAR", {}, "MIRRORCRAFT_SURELY_UNSET_VAR"),
    ],
)
def test_configuration_mistakes_are_clear(
    model: str,
    base_url: str | None,
    key_env: str | None,
    overrides: dict[str, Any],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    monkeypatch.delenv("MIRRORCRAFT_SURELY_UNSET_VAR", raising=False)
    with pytest.raises(LLMConfigError, match=message) as caught:
        make_client(model, base_url, key_env, **overrides)
    assert SECRET not in str(caught.value)


def test_empty_key_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "   ")
    with pytest.raises(LLMConfigError, match="not set or empty"):
        make_client("m", "http://x/v1", KEY_ENV)


def test_close_client_accepts_every_client(tmp_path: Path) -> None:
    clients = [
        MockLLM(scripted(["x"])),
        make_client("m", "http://127.0.0.1:9/v1", None),
        make_client("m", "http://127.0.0.1:9/v1", None, cache_path=tmp_path / "c.sqlite"),
    ]

    async def close_all() -> None:
        for client in clients:
            await close_client(client)

    asyncio.run(close_all())
