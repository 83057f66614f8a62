"""One call per model endpoint before a run starts: configuration errors stop the run early.

A run of thousands of episodes should not discover a revoked key, a misspelt model
name, a wrong base URL or a server started with too small a context after it has
stored results. ``check_endpoint`` asks the endpoint for a one-token completion
(and, where the endpoint lists its models with a context size, reads it):

* 401/403, 404, an unknown model, any other 4xx, or a context window smaller than
  ``prompt_budget_tokens`` + ``max_tokens`` give a ``problem``: the run stops with
  that one line;
* an endpoint that does not answer now (connection refused, timeouts, 5xx) gives a
  ``warning``: the run goes on and pauses dispatch to it while it fails; one that timed out
  (each call waits the client's full time limit) is sent one episode at a time until it
  answers (``timed_out``; ``runner.dispatch.Breaker.not_answering``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from mirrorcraft.llm.base import LLMConfigError, LLMUnavailable, Message, Sampling
from mirrorcraft.llm.openai_client import OpenAIClient, OpenAISettings, endpoint_host

MAX_TOKENS = Sampling().max_tokens
"""The completion limit the agents ask for (the paper's 2,048)."""

PROBE = (Message("user", "Reply with the single word OK."),)

PREFLIGHT_MAX_RETRIES = 2
"""Retries of the one-token call at most (fewer when the model's ``max_retries`` is lower)."""


@dataclass(frozen=True)
class PreflightResult:
    model: str
    problem: str | None = None
    """A configuration error: the run must not start."""
    warning: str | None = None
    """The endpoint is not answering now; the run may go on."""
    timed_out: bool = False
    """The warning is a timeout: each call to it waits out the client's time limit, so the
    run starts it as a paused endpoint ends its pause (one episode at a time)."""
    context_window: int | None = None


async def check_endpoint(
    settings: OpenAISettings, *, max_tokens: int = MAX_TOKENS
) -> PreflightResult:
    """Probe one endpoint: its reported context window, then a one-token completion."""
    quick = settings.model_copy(
        update={
            "max_retries": min(settings.max_retries, PREFLIGHT_MAX_RETRIES),
            "backoff_max_s": min(settings.backoff_max_s, 5.0),
            "retry_after_max_s": min(settings.retry_after_max_s, 5.0),
        }
    )
    where = f"model {settings.model!r} at {endpoint_host(settings.base_url)}"
    try:
        client = OpenAIClient(quick)
    except LLMConfigError as exc:
        return PreflightResult(settings.model, problem=str(exc))
    try:
        window = await client.context_window()
        need = settings.prompt_budget_tokens + max_tokens
        if window is not None and window < need:
            return PreflightResult(
                settings.model,
                problem=(
                    f"{where}: its context window is {window} tokens, smaller than the prompt "
                    f"budget ({settings.prompt_budget_tokens}) plus max_tokens ({max_tokens}) = "
                    f"{need}; give the server a larger context (llama.cpp: -c/--ctx-size; vLLM: "
                    "--max-model-len) or lower client.prompt_budget_tokens in the spec"
                ),
                context_window=window,
            )
        await _one_token(client)
        return PreflightResult(settings.model, context_window=window)
    except LLMConfigError as exc:
        return PreflightResult(settings.model, problem=str(exc))
    except LLMUnavailable as exc:
        if exc.kind != "timeout":  # refused or 5xx: each call fails fast
            return PreflightResult(
                settings.model,
                warning=f"{exc}; the run goes on and pauses dispatch to this endpoint while it fails",
            )
        return PreflightResult(
            settings.model,
            warning=(
                f"{exc}; the run goes on, sending this endpoint one episode at a time until it "
                "answers (its other episodes wait; failing for execution.give_up_after_s, they "
                "are left for a rerun)"
            ),
            timed_out=True,
        )
    finally:
        await client.aclose()


async def _one_token(client: OpenAIClient) -> None:
    try:
        await client.complete(PROBE, sampling=Sampling(temperature=0.0, max_tokens=1))
    except LLMConfigError as exc:
        text = str(exc)
        if "max_tokens" not in text and "max_completion_tokens" not in text:
            raise
        # Some endpoints refuse so small a limit; that says nothing about the setup.
        await client.complete(PROBE, sampling=Sampling(temperature=0.0, max_tokens=16))


NOTICE_AFTER_S = 5.0
"""How long the probes may take before ``check_all`` calls its ``notice``."""


def check_all(
    settings: list[OpenAISettings], notice: Callable[[], None] | None = None
) -> list[PreflightResult]:
    """Probe every endpoint at once (one event loop). ``notice`` is called once if the probes
    are still waiting after ``NOTICE_AFTER_S`` (an endpoint that accepts connections and never
    answers holds them for every attempt's full ``timeout_s``)."""

    async def go() -> list[PreflightResult]:
        probes = asyncio.ensure_future(asyncio.gather(*(check_endpoint(s) for s in settings)))
        if notice is not None:
            await asyncio.wait({probes}, timeout=NOTICE_AFTER_S)
            if not probes.done():
                notice()
        return list(await probes)

    return asyncio.run(go())
