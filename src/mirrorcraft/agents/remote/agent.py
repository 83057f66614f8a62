"""``RemoteAgent``: an agent in another process, reached over HTTP with the remote protocol.

The runner treats it like an LLM configuration: it runs in the event loop with the other
agents that wait on the network, under the run's concurrency limit and the episode time
limit, and its failures follow the one failure taxonomy:

* the agent cannot be reached, times out, or answers 5xx/429/408 after ``max_retries``
  retries: ``RemoteAgentUnavailable``, an infrastructure fault (kind ``connection``,
  ``timeout`` or ``server``) charged to the agent's URL, which the runner pauses like a
  failing model endpoint; the episode is retried;
* it answers 404/405 or another 4xx (a wrong URL or a protocol mismatch): a ``config``
  fault, which stops dispatch to it for the run;
* it answers 2xx with something that is not a protocol reply (not JSON, an unknown key,
  a missing action): ``MalformedReply``, the agent's own outcome (``agent_error``);
* an action that follows the protocol but names an unknown skill or bad arguments is
  played, and the body reports ``invalid_args`` as for any agent.

``reset`` is sent just before the first ``act`` of an episode and ``close`` from
``finish`` (best effort: a failure to close never changes a finished episode). Every
message is built from the observation, the episode context and the agent's options
only; ``runner/integrity.py`` scans them all.
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mirrorcraft.agents.base import USER_THOUGHT_LIMIT, Decision, EpisodeContext, Usage
from mirrorcraft.agents.llm.history import History, Step
from mirrorcraft.agents.llm.prior import VanillaPrior
from mirrorcraft.agents.llm.render import observation_fields, render_fields
from mirrorcraft.agents.llm.templates import prompt_hashes
from mirrorcraft.agents.remote.http import HttpError, HttpPool, acquire, release
from mirrorcraft.agents.remote.protocol import PROTOCOL, ActReply, ResetReply
from mirrorcraft.body.observation import Observation
from mirrorcraft.faults import FaultKind, InfrastructureFault
from mirrorcraft.redact import redact_url
from mirrorcraft.rules.ruleset import RuleSet

TEXT_MODES = ("block", "compact", "none")
RUNNER_KEYS = ("text", "client")
"""Option keys the runner reads itself; every other option is sent to the agent in reset."""

Transport = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Replaces HTTP (tests, the integrity scan): (path, message) -> the reply document."""


class RemoteSettings(BaseModel):
    """How the runner talks to a remote agent (``options.client``; not part of the condition)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(60.0, gt=0, le=3600, description="limit for one request")
    max_retries: int = Field(3, ge=0, le=20, description="attempts after the first")
    concurrency: int = Field(16, ge=1, le=1000, description="requests in flight per agent URL")
    backoff_base_s: float = Field(0.5, ge=0, le=60)
    backoff_max_s: float = Field(8.0, ge=0, le=600)


def remote_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options of a remote agent, checked: ``text`` (block, compact or none), ``client``
    (``RemoteSettings``), and anything else, which must be JSON, for the agent itself."""
    given = dict(options or {})
    text = given.get("text", "block")
    if text not in TEXT_MODES:
        raise ValueError(f"text must be one of {', '.join(TEXT_MODES)}, got {text!r}")
    client = given.get("client", {})
    if not isinstance(client, dict):
        raise ValueError("client must be a mapping of timeout_s, max_retries, concurrency, ...")
    try:
        settings = RemoteSettings(**client)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"client.{where}: {first['msg']}") from None
    try:
        json.dumps(given)
    except (TypeError, ValueError):
        raise ValueError("options must be plain JSON values") from None
    return {**given, "text": text, "client": settings.model_dump()}


class RemoteAgentUnavailable(InfrastructureFault):
    """The agent could not be reached or kept failing (kind connection, timeout or server)."""

    endpoint = True


class RemoteAgentConfigError(InfrastructureFault):
    """The agent's URL or protocol is wrong: no retry can help; dispatch to it stops."""

    kind = "config"
    endpoint = True


class MalformedReply(Exception):
    """The agent answered, but not with a protocol reply: the agent's outcome (agent_error)."""


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "the reply"
    return f"{where}: {err['msg']}"


class RemoteAgent:
    """See the module docstring. ``transport`` replaces HTTP (tests, the integrity scan)."""

    cross_episode_memory = False

    def __init__(
        self,
        name: str,
        url: str,
        vanilla: RuleSet,
        *,
        options: Mapping[str, Any] | None = None,
        transport: Transport | None = None,
    ) -> None:
        checked = remote_options(options)
        self.name = name
        self.url = url.rstrip("/")
        self.where = f"agent at {redact_url(self.url)}"
        self.text_mode: str = checked["text"]
        self.settings = RemoteSettings(**checked["client"])
        self.agent_options = {k: v for k, v in checked.items() if k not in RUNNER_KEYS}
        self.vanilla = vanilla
        self.tools = {t: (s.kind, s.tier) for t, s in vanilla.game.tools.items()}
        self.transport: Transport = transport or self._http
        self.client = _Connection(self.url, self.settings.concurrency)
        self.rng = random.Random(0)
        self.ctx: EpisodeContext | None = None
        self.token = ""
        self.started = False
        self.history = History()
        self.prior: VanillaPrior | None = None
        self._pending: tuple[Any, str] | None = None
        self._last_obs: Observation | None = None
        self.origin_details: dict[str, str] = {}
        """The agent's own name and version from its reset reply (stored in the record)."""
        self.unreported_usage = Usage()

    @property
    def template_hashes(self) -> dict[str, str]:
        return prompt_hashes(("observation",)) if self.uses_block else {}

    @property
    def uses_block(self) -> bool:
        return self.text_mode == "block"

    # -- episode lifecycle ---------------------------------------------------------------
    def start(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx
        self.token = uuid.uuid4().hex
        self.started = False
        self.history = History()
        self.prior = VanillaPrior.for_task(self.vanilla, ctx.task) if self.uses_block else None
        self._pending, self._last_obs = None, None
        self.rng = random.Random(ctx.seed)
        self.unreported_usage = Usage()

    async def act(self, obs: Observation) -> Decision | None:
        self._record(obs)
        if not self.started:
            await self._reset()
        message = {
            "protocol": PROTOCOL,
            "episode": self.token,
            "step": obs.step,
            "observation": obs.to_json(),
            "text": self.text(obs),
            "budget_left": obs.budget.remaining,
            "last_result": None if obs.last_result is None else obs.last_result.to_json(),
        }
        raw = await self.transport("/act", message)
        try:
            reply = ActReply.model_validate(raw)
        except ValidationError as exc:
            raise MalformedReply(
                f"{self.where}: the reply to act is not a protocol reply ({_first_error(exc)})"
            ) from None
        u = reply.usage
        usage = Usage(u.calls, u.prompt_tokens, u.completion_tokens, u.cost_usd)
        if reply.action is None:
            self.unreported_usage = usage
            return None
        action = {"skill": reply.action.skill, "args": dict(reply.action.args)}
        thought = reply.thought[:USER_THOUGHT_LIMIT]
        self._pending, self._last_obs = (action, thought), obs
        return Decision(action, thought, usage)

    async def finish(self, obs: Observation) -> None:
        self._record(obs)
        if not self.started:
            return
        message = {
            "protocol": PROTOCOL,
            "episode": self.token,
            "step": obs.step,
            "observation": obs.to_json(),
        }
        try:
            async with asyncio.timeout(min(self.settings.timeout_s, 10.0)):
                await self.transport("/close", message)
        except Exception:  # best effort: the episode is over whatever the agent says
            return

    async def aclose(self) -> None:
        await self.client.aclose()

    async def _reset(self) -> None:
        assert self.ctx is not None
        ctx = self.ctx
        message = {
            "protocol": PROTOCOL,
            "episode": self.token,
            "task": {"id": ctx.task, "title": ctx.task_title},
            "budget": ctx.budget,
            "seed": ctx.seed,
            "rule_sheet": ctx.rule_sheet,
            "options": self.agent_options,
        }
        raw = await self.transport("/reset", message)
        try:
            reply = ResetReply.model_validate(raw)
        except ValidationError as exc:
            raise MalformedReply(
                f"{self.where}: the reply to reset is not a protocol reply ({_first_error(exc)})"
            ) from None
        if reply.protocol is not None and reply.protocol != PROTOCOL:
            raise RemoteAgentConfigError(
                f"{self.where} speaks {reply.protocol[:60]!r}, the runner speaks {PROTOCOL!r}"
            )
        if reply.agent is not None:
            self.origin_details = {
                k: v
                for k, v in (("package", reply.agent.name), ("version", reply.agent.version))
                if v
            }
        self.started = True

    # -- what the agent is shown -----------------------------------------------------------
    def text(self, obs: Observation) -> str | None:
        if self.text_mode == "none":
            return None
        if self.text_mode == "compact":
            return obs.render_text()
        assert self.prior is not None
        fields = observation_fields(obs, self.history, self.prior, self.tools)
        fields["learned_rules"] = None
        return render_fields(fields, with_feedback=True)

    def _record(self, obs: Observation) -> None:
        """Add the last action and its result to the history (for the observation block)."""
        if self._pending is None or self._last_obs is None or obs.last_result is None:
            return
        action, thought = self._pending
        before = self._last_obs
        if self.uses_block:
            self.history.record(Step.between(before, obs, action, thought))
        self._pending = None

    # -- HTTP ------------------------------------------------------------------------------
    async def _http(self, path: str, message: dict[str, Any]) -> Any:
        body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        pool = self.client.pool()
        s = self.settings
        attempt = 0
        kind: FaultKind
        while True:
            try:
                async with asyncio.timeout(s.timeout_s):
                    response = await pool.post(path, body)
            except TimeoutError:
                problem, kind = f"no answer within {s.timeout_s:g} s", "timeout"
            except HttpError as exc:
                if exc.kind in ("too_large", "malformed"):
                    raise MalformedReply(f"{self.where}: {path[1:]}: {exc}") from None
                problem, kind = str(exc), "connection"
            else:
                status = response.status
                if 200 <= status < 300:
                    return self._parse(path, response.body)
                detail = f"HTTP {status} {response.reason}".strip()
                snippet = " ".join(response.body[:200].decode("utf-8", "replace").split())
                if status not in (408, 429) and status < 500:
                    hint = (
                        "; the runner posts to <url>/reset, <url>/act and <url>/close"
                        if status in (404, 405)
                        else ""
                    )
                    raise RemoteAgentConfigError(
                        f"{self.where}: POST {path} answered {detail}"
                        f"{': ' + snippet[:120] if snippet else ''}{hint}"
                    )
                problem, kind = detail, "server"
            if attempt >= s.max_retries:
                raise RemoteAgentUnavailable(
                    f"{self.where} still failing after {attempt + 1} attempt(s) of POST {path}; "
                    f"last: {problem}",
                    kind=kind,
                )
            ceiling = min(s.backoff_max_s, s.backoff_base_s * 2.0**attempt)
            await asyncio.sleep(ceiling * (0.5 + 0.5 * self.rng.random()))
            attempt += 1

    def _parse(self, path: str, body: bytes) -> Any:
        try:
            return json.loads(body.decode("utf-8")) if body.strip() else {}
        except (UnicodeDecodeError, ValueError, RecursionError):
            start = " ".join(body[:80].decode("utf-8", "replace").split())
            raise MalformedReply(
                f"{self.where}: the reply to {path[1:]} is not JSON (starts {start!r})"
            ) from None


class _Connection:
    """The agent's share of the HTTP pool for its URL; ``aclose`` lets go of it (the runner
    closes an agent's ``client`` when its episode ends, however it ended)."""

    def __init__(self, url: str, limit: int) -> None:
        self.url, self.limit = url, limit
        self._pool: HttpPool | None = None

    def pool(self) -> HttpPool:
        if self._pool is None:
            self._pool = acquire(self.url, self.limit)
        return self._pool

    async def aclose(self) -> None:
        if self._pool is not None:
            release(self._pool)
            self._pool = None
