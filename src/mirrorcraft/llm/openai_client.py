"""A client for any OpenAI-compatible chat endpoint, with our own retry loop.

``OpenAIClient`` owns the policy (what to retry, how long to wait, how many
calls may be in flight, what it cost); a transport makes single attempts. The
default transport, ``OpenAITransport``, uses the ``openai`` SDK with the SDK's
own retries switched off, so every wait is decided here and can be observed
through the injectable ``sleep`` function.

Failure policy:

* 429, 408, 409, any 5xx, timeouts, dropped or refused connections and
  unparseable 2xx bodies are retried, up to ``max_retries`` times after the
  first attempt. A ``retry-after-ms`` or ``retry-after`` header sets the wait
  exactly (capped at ``retry_after_max_s``); otherwise the wait grows
  exponentially from ``backoff_base_s`` up to ``backoff_max_s``, scaled by a
  random factor in [0.5, 1) drawn from a seeded generator.
* 401/403 (credentials), 404 (model or path), and any other 4xx (a request
  larger than the context window, an unknown model, a setting the endpoint does
  not accept) are set-up mistakes that sending the same request again cannot
  fix: ``LLMConfigError`` (an infrastructure fault of kind ``config``; the runner
  stops dispatching to this endpoint and the episode is retried by a later run).
* When the retries run out: ``LLMUnavailable`` naming the model, the endpoint
  host and the last kind of failure; its fault kind is ``timeout``,
  ``connection`` or ``server``.
* Every failed attempt is counted by its kind: a reply carries those before it
  (``Completion.failed_attempts``, stored in the episode record), and the
  exception of a call that fails for good carries all of its own.

The API key is read from the environment variable named in the settings, held
only by the SDK client, and scrubbed from every message we build.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mirrorcraft.llm.base import (
    CallMeta,
    Completion,
    LLMConfigError,
    LLMUnavailable,
    Message,
    Sampling,
    ToolCall,
    Tools,
)
from mirrorcraft.llm.prices import PriceTable, load_prices
from mirrorcraft.llm.transport import (
    ChatRequest,
    ChatResponse,
    Transport,
    TransportError,
    fault_kind,
    kind_for_status,
    parse_retry_after,
)
from mirrorcraft.redact import redact_text

if TYPE_CHECKING:
    import openai

DEFAULT_SAMPLING = Sampling()

NO_KEY = "no-key"
"""Sent as the key when the settings name no key variable (local servers ignore it)."""


class OpenAISettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    base_url: str
    api_key_env: str | None = Field(
        None, description="name of the environment variable holding the key; None for no key"
    )
    timeout_s: float = Field(
        60.0, gt=0, allow_inf_nan=False, description="limit for one attempt, start to finish"
    )
    max_retries: int = Field(5, ge=0, le=100, description="attempts after the first")
    concurrency: int = Field(16, ge=1, le=10_000, description="calls in flight per client")
    backoff_base_s: float = Field(1.0, ge=0, allow_inf_nan=False)
    backoff_max_s: float = Field(60.0, ge=0, allow_inf_nan=False)
    retry_after_max_s: float = Field(
        300.0, ge=0, allow_inf_nan=False, description="cap on a server-requested wait"
    )
    seed: int = Field(0, description="seed of the backoff jitter")
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """OpenAI's own reasoning models only accept ``max_completion_tokens``."""
    reasoning_effort: str | None = None
    """Sent only when set, e.g. "none" or "minimal" where the provider supports it."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific request fields, e.g. a switch that turns reasoning off."""
    prompt_budget_tokens: int = Field(8192, ge=1, le=10_000_000)
    """The largest prompt the agents are expected to send; the run's preflight checks that
    the endpoint's context window (where it reports one) holds it plus ``max_tokens``."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL with a host")
        return value.rstrip("/")


def endpoint_host(base_url: str) -> str:
    """``host`` or ``host:port`` of a URL, never its user-info part."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host


def read_api_key(env_name: str) -> str:
    value = os.environ.get(env_name, "").strip()
    if not value:
        raise LLMConfigError(
            f"environment variable {env_name} is not set or empty; it must hold the API key"
        )
    return value


_BEARER = re.compile(r"(?i)bearer\s+\S+")


def scrub(text: str, secret: str | None, limit: int = 300) -> str:
    """``text`` shortened, with the secret, any bearer token and keys in URLs replaced."""
    if secret and secret != NO_KEY:
        text = text.replace(secret, "[redacted]")
    text = redact_text(_BEARER.sub("Bearer [redacted]", text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def split_query(base_url: str) -> tuple[str, dict[str, str]]:
    """The API root without its query string, and that query's parameters.

    Some gateways take a key as ``?api_key=...``; the SDK would glue the request path
    after the query (``/v1?api_key=Kchat/completions``), so the parameters are sent as
    its default query on every request instead."""
    parts = urlsplit(base_url)
    if not parts.query:
        return base_url, {}
    root = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return root, dict(parse_qsl(parts.query, keep_blank_values=True))


class OpenAITransport:
    """One attempt against an OpenAI-compatible endpoint through the ``openai`` SDK.

    The SDK client is created on first use in each event loop (an HTTP
    connection pool belongs to one loop), with its own retries switched off.
    """

    def __init__(self, base_url: str, api_key: str | None, timeout_s: float) -> None:
        self._base_url = base_url
        self._api_key = api_key or NO_KEY
        self._timeout_s = timeout_s
        self._client: openai.AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"OpenAITransport({endpoint_host(self._base_url)!r})"

    def _sdk(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            import openai

            root, query = split_query(self._base_url)
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=root,
                timeout=self._timeout_s,
                max_retries=0,
                default_query=query or None,
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None

    async def model_entry(self, model: str) -> dict[str, Any] | None:
        """The endpoint's listing entry for ``model`` (``GET <root>/models``), or None when the
        endpoint lists no models, does not list this one, or the listing fails."""
        import openai

        try:
            page: Any = await self._sdk().models.list()
        except (openai.OpenAIError, ValueError, TypeError):
            return None
        for entry in getattr(page, "data", None) or []:
            doc = entry.model_dump() if hasattr(entry, "model_dump") else None
            if isinstance(doc, dict) and doc.get("id") == model:
                return doc
        return None

    async def __call__(self, request: ChatRequest) -> ChatResponse:
        import openai

        body: dict[str, Any] = dict(request.extra_body)
        kwargs: dict[str, Any] = {}
        if request.reasoning_effort is not None:
            kwargs["reasoning_effort"] = request.reasoning_effort
        kwargs[request.max_tokens_field] = request.max_tokens
        if request.tools is not None:
            kwargs["tools"] = [dict(t) for t in request.tools.functions]
            kwargs["tool_choice"] = request.tools.choice
        try:
            raw: Any = await self._sdk().chat.completions.create(
                model=request.model,
                messages=[dict(m) for m in request.messages],  # type: ignore[misc]
                temperature=request.temperature,
                extra_body=body or None,
                **kwargs,
            )
        except openai.APIStatusError as exc:
            status = exc.status_code
            raise TransportError(
                kind_for_status(status),
                scrub(str(exc.message), self._api_key),
                status=status,
                retry_after=parse_retry_after(exc.response.headers),
            ) from None
        except openai.APITimeoutError:
            raise TransportError("timeout", "the request timed out") from None
        except openai.APIConnectionError as exc:
            raise TransportError("connection", scrub(str(exc.message), self._api_key)) from None
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            raise TransportError(
                "malformed_response", f"unreadable body ({type(exc).__name__})"
            ) from None
        return _parse_completion(raw)


def _parse_completion(raw: Any) -> ChatResponse:
    choices = getattr(raw, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise TransportError("malformed_response", "the body holds no chat completion")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        raise TransportError("malformed_response", "the message content is not text")
    calls = _tool_calls(getattr(message, "tool_calls", None))
    usage = getattr(raw, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(
        usage, "prompt_cache_hit_tokens", None
    )
    return ChatResponse(
        text=content or "",
        model=str(getattr(raw, "model", "") or ""),
        prompt_tokens=token_count(prompt),
        completion_tokens=token_count(completion),
        cached_prompt_tokens=token_count(cached) or 0,
        finish_reason=getattr(choices[0], "finish_reason", None),
        tool_calls=calls,
    )


MAX_REPORTED_TOKENS = 100_000_000
"""The largest token count believed from an endpoint for one call (ten times the largest
context window offered today); a larger one is a broken report, not a call."""


def token_count(value: Any) -> int | None:
    """A token count an endpoint reported, or None when it is not a believable count: not a
    whole number (a boolean, text, a fraction), negative, or above ``MAX_REPORTED_TOKENS``.
    The client then estimates the count, and marks the call as estimated, as when the
    endpoint reports no usage at all."""
    if type(value) is not int or not 0 <= value <= MAX_REPORTED_TOKENS:
        return None
    return value


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """The function calls of a reply message. A call whose name or arguments are not text is
    kept with what could be read (the agent decides what a malformed call means)."""
    if not isinstance(raw, list):
        return ()
    out: list[ToolCall] = []
    for call in raw:
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        arguments = getattr(function, "arguments", None)
        out.append(
            ToolCall(
                name if isinstance(name, str) else "",
                arguments if isinstance(arguments, str) else "",
                str(getattr(call, "id", "") or ""),
            )
        )
    return tuple(out)


def estimate_tokens(text: str) -> int:
    """A rough count (four characters a token) for endpoints that report no usage."""
    return len(text) // 4


class OpenAIClient:
    """``LLMClient`` for an OpenAI-compatible endpoint: retries, backoff, a concurrency cap, cost.

    ``transport`` replaces the SDK (tests, ``MockLLM.transport``); ``sleep``
    and ``rng`` replace the waiting and the jitter; ``prices`` replaces the
    price table. ``Completion.model`` is the configured model name (the name
    prices and the cache use), and ``latency_s`` covers the whole call,
    retries and waits included. When the endpoint reports no usage, or counts
    that cannot be right (see ``token_count``; zero prompt and completion tokens
    for a prompt with text), tokens are estimated from text length, the
    completion is marked ``estimated`` and ``usage_estimated`` counts such calls.
    """

    def __init__(
        self,
        settings: OpenAISettings,
        *,
        transport: Transport | None = None,
        prices: PriceTable | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.settings = settings
        self.model = settings.model
        self.endpoint = endpoint_host(settings.base_url)
        if transport is None:
            key = read_api_key(settings.api_key_env) if settings.api_key_env else None
            transport = OpenAITransport(settings.base_url, key, settings.timeout_s)
        self._transport = transport
        self._prices = prices if prices is not None else load_prices()
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random(settings.seed)
        self._clock = clock
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None
        self.usage_estimated = 0

    def __repr__(self) -> str:
        return f"OpenAIClient(model={self.model!r}, endpoint={self.endpoint!r})"

    @property
    def cache_variant(self) -> str:
        """The settings that change what the model answers, as canonical JSON, where any
        differs from its default ("" otherwise): part of the response cache's key."""
        s = self.settings
        changed: dict[str, Any] = {}
        if s.reasoning_effort is not None:
            changed["reasoning_effort"] = s.reasoning_effort
        if s.extra_body:
            changed["extra_body"] = s.extra_body
        if s.max_tokens_field != "max_tokens":
            changed["max_tokens_field"] = s.max_tokens_field
        if not changed:
            return ""
        return json.dumps(
            changed, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )

    async def aclose(self) -> None:
        closer = getattr(self._transport, "aclose", None)
        if closer is not None:
            await closer()

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling = DEFAULT_SAMPLING,
        meta: CallMeta | None = None,
        tools: Tools | None = None,
    ) -> Completion:
        request = ChatRequest(
            model=self.model,
            messages=tuple({"role": m.role, "content": m.content} for m in messages),
            temperature=sampling.temperature,
            max_tokens=sampling.max_tokens,
            max_tokens_field=self.settings.max_tokens_field,
            extra_body=self.settings.extra_body,
            reasoning_effort=self.settings.reasoning_effort,
            meta=meta,
            tools=tools,
        )
        started = self._clock()
        response, failed = await self._send_with_retries(request)
        latency = self._clock() - started
        prompt_tokens = token_count(response.prompt_tokens)
        completion_tokens = token_count(response.completion_tokens)
        if prompt_tokens == 0 and completion_tokens == 0 and any(m.content for m in messages):
            prompt_tokens = completion_tokens = None  # zeros for a real prompt: not counted
        estimated = prompt_tokens is None or completion_tokens is None
        if estimated:
            self.usage_estimated += 1
        if prompt_tokens is None:
            prompt_tokens = estimate_tokens("".join(m.content for m in messages))
        if completion_tokens is None:
            completion_tokens = estimate_tokens(
                response.text + "".join(c.name + c.arguments for c in response.tool_calls)
            )
        return Completion(
            text=response.text,
            model=self.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=self._prices.cost(
                self.model,
                prompt_tokens,
                completion_tokens,
                token_count(response.cached_prompt_tokens) or 0,
            ),
            cached=False,
            latency_s=latency,
            estimated=estimated,
            tool_calls=response.tool_calls,
            failed_attempts=tuple(failed),
        )

    async def context_window(self) -> int | None:
        """The context window the endpoint reports for this model, in tokens (None: unknown).

        Read from the model listing where the server puts it there: vLLM
        (``max_model_len``), OpenRouter, LM Studio and Groq (``context_length``,
        ``context_window``), llama.cpp when it reports ``meta.n_ctx``."""
        lookup = getattr(self._transport, "model_entry", None)
        if lookup is None:
            return None
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                entry = await lookup(self.model)
        except TimeoutError:
            return None
        if not isinstance(entry, dict):
            return None
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        for value in (
            entry.get("max_model_len"),
            entry.get("context_length"),
            entry.get("context_window"),
            entry.get("max_context_length"),
            meta.get("n_ctx") if isinstance(meta, dict) else None,
        ):
            if type(value) is int and value > 0:
                return value
        return None

    def _slots(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore = asyncio.Semaphore(self.settings.concurrency)
            self._semaphore_loop = loop
        return self._semaphore

    async def _send_with_retries(self, request: ChatRequest) -> tuple[ChatResponse, list[str]]:
        """The response and the kind of each failed attempt before it. When the call fails for
        good, the exception raised carries every failed attempt's kind (``failed_attempts``)."""
        attempt = 0
        failed: list[str] = []
        while True:
            try:
                async with self._slots(), asyncio.timeout(self.settings.timeout_s):
                    return await self._transport(request), failed
            except TransportError as exc:
                error = exc
            except TimeoutError:
                error = TransportError(
                    "timeout", f"no complete answer within {self.settings.timeout_s:g} s"
                )
            failed.append(error.kind)
            if not error.retryable:
                fatal = self._fatal(error)
                fatal.failed_attempts = tuple(failed)
                raise fatal from None
            if attempt >= self.settings.max_retries:
                exhausted = self._exhausted(error, attempt + 1)
                exhausted.failed_attempts = tuple(failed)
                raise exhausted from None
            await self._sleep(self.backoff(attempt, error.retry_after))
            attempt += 1

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        s = self.settings
        if retry_after is not None:
            return min(retry_after, s.retry_after_max_s)
        ceiling = min(s.backoff_max_s, s.backoff_base_s * 2.0**attempt)
        return ceiling * (0.5 + 0.5 * self._rng.random())

    def _describe(self, error: TransportError) -> str:
        status = f"HTTP {error.status}, " if error.status is not None else ""
        return f"{error.kind} ({status}{error})"

    def _fatal(self, error: TransportError) -> LLMConfigError:
        where = f"model {self.model!r} at {self.endpoint}"
        if error.kind == "auth":
            var = self.settings.api_key_env
            hint = (
                f"check that ${var} holds a valid key for this endpoint"
                if var
                else "no key variable is configured (set api_key_env)"
            )
            return LLMConfigError(
                f"{where}: the endpoint refused the credentials (HTTP {error.status}); {hint}"
            )
        if error.kind == "not_found":
            return LLMConfigError(
                f"{where}: not found (HTTP 404); check the model name and that the base URL "
                "ends at the API root (often /v1)"
            )
        text = str(error)
        if is_context_error(text):
            return LLMConfigError(
                f"{where}: the request does not fit the endpoint's context window "
                f"(HTTP {error.status}: {text}); give the server a larger context "
                "(llama.cpp: -c/--ctx-size; vLLM: --max-model-len) or use a model with one"
            )
        if is_unknown_model_error(text):
            return LLMConfigError(
                f"{where}: the endpoint does not know this model (HTTP {error.status}: {text}); "
                "check the model name"
            )
        return LLMConfigError(
            f"{where} rejected the request, not retried (a setting it does not accept?): "
            f"{self._describe(error)}"
        )

    def _exhausted(self, error: TransportError, attempts: int) -> LLMUnavailable:
        return LLMUnavailable(
            f"model {self.model!r} at {self.endpoint} still failing after {attempts} attempt(s); "
            f"last error: {self._describe(error)}",
            kind=fault_kind(error),
        )


_CONTEXT = re.compile(
    r"(?i)context[ _-]?(length|size|window)|maximum context|exceeds? the available context"
    r"|too many tokens|prompt is too long|n_ctx"
)
_UNKNOWN_MODEL = re.compile(
    r"(?i)(model[^.;]{0,60}(not (found|exist)|does not exist|unknown|no such))"
    r"|(unknown|invalid) model|model_not_found"
)


def is_context_error(text: str) -> bool:
    """Does an error message say the request exceeds the context window?

    Matches the wording of llama.cpp ("exceeds the available context size"), vLLM
    ("maximum context length is N tokens") and OpenAI ("context_length_exceeded")."""
    return bool(_CONTEXT.search(text))


def is_unknown_model_error(text: str) -> bool:
    return bool(_UNKNOWN_MODEL.search(text))
