"""Build the client stack for a model named in an experiment spec.

``make_client`` returns an ``OpenAIClient`` for the endpoint, wrapped in a
``CachedClient`` when a cache path is given. Mock models are not built here:
tests construct ``MockLLM`` directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mirrorcraft.llm.base import LLMClient, LLMConfigError
from mirrorcraft.llm.cache import CachedClient, open_cache
from mirrorcraft.llm.openai_client import OpenAIClient, OpenAISettings
from mirrorcraft.llm.prices import PriceTable


async def close_client(client: LLMClient) -> None:
    """Release a client's connections; call it before the event loop that used the client ends.

    ``LLMClient`` has no ``aclose``; clients built here (and the mock) have one.
    """
    closer = getattr(client, "aclose", None)
    if closer is not None:
        await closer()


def make_settings(
    model: str, base_url: str | None, api_key_env: str | None, **overrides: Any
) -> OpenAISettings:
    """Validated settings, or ``LLMConfigError`` saying which field is wrong."""
    if model in ("", "none"):
        raise LLMConfigError("this agent calls a model, but the experiment names none")
    if not base_url:
        raise LLMConfigError(
            f"model {model!r} has no endpoint: give its OpenAI-compatible API root as base_url"
            " in the spec's models entry (or --base-url with --model), e.g."
            " http://127.0.0.1:8000/v1 for a local server"
        )
    try:
        return OpenAISettings(model=model, base_url=base_url, api_key_env=api_key_env, **overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
            for err in exc.errors()
        )
        raise LLMConfigError(f"model {model!r}: invalid client settings: {problems}") from None


def make_client(
    model: str,
    base_url: str | None,
    api_key_env: str | None,
    *,
    cache_path: Path | None = None,
    cache_scope: str = "",
    prices: PriceTable | None = None,
    **overrides: Any,
) -> LLMClient:
    """An ``LLMClient`` for ``model`` at ``base_url``, reading its key from ``$api_key_env``.

    ``overrides`` are further ``OpenAISettings`` fields (timeout_s,
    max_retries, concurrency, reasoning_effort, extra_body, ...); unknown
    names are rejected. With ``cache_path``, responses are cached there;
    ``cache_scope`` should be the episode id (see ``mirrorcraft.llm.cache``).
    An unusable cache file is reported as a warning and the client runs
    without a cache. Raises ``LLMConfigError`` for a missing base URL, an
    unset key variable or bad settings.
    """
    settings = make_settings(model, base_url, api_key_env, **overrides)
    client = OpenAIClient(settings, prices=prices)
    if cache_path is None:
        return client
    return CachedClient(client, open_cache(cache_path), scope=cache_scope)
