"""The episode loop: reset a fresh world copy, let the agent act until the episode ends.

Ends on the final milestone (success), an exhausted budget, death, the agent
having no executable action, or the agent asking for a model call beyond the
episode's call budget (``call_budget``). Returns the episode record and the full step trace.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft import __version__
from mirrorcraft.agents.base import Agent, EpisodeContext, Usage
from mirrorcraft.agents.plugins import AgentInitError
from mirrorcraft.backends.base import EpisodeBackend
from mirrorcraft.backends.rulesets import rules_title
from mirrorcraft.backends.sim import SimEpisode, StepOutcome
from mirrorcraft.body.actions import Action, action_signature, parse_action
from mirrorcraft.body.config import body_fingerprint
from mirrorcraft.evaluator.tasks import Task, task_fingerprint
from mirrorcraft.faults import InfrastructureFault, exception_text
from mirrorcraft.llm.budget import CallBudgetExhausted
from mirrorcraft.redact import redact_text
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.runner.agent_exits import agent_code, interrupt_is_the_agents
from mirrorcraft.runner.pool import WorkerStopped
from mirrorcraft.runner.records import EncounterRecord, EpisodeRecord, StepRecord
from mirrorcraft.world.registry import LoadedWorld


@dataclass(frozen=True)
class EpisodeSpec:
    episode_id: str
    experiment: str
    world: str
    rules_name: str
    task: Task
    agent: str
    model: str
    disclosure: str
    repetition: int
    seed: int
    spec_hash: str = ""
    call_budget: int | None = None
    agent_origin: dict[str, str] = field(default_factory=dict)
    """Where a user agent came from (``agents.plugins.AgentOrigin``); empty for built-ins."""


def _memory_stats(agent: Agent) -> dict[str, Any]:
    stats = getattr(agent, "memory_stats", None)
    return dict(stats()) if callable(stats) else {}


def _failures(usage: Usage) -> dict[str, Any]:
    """The record's ``failed_attempts`` and ``unusable_replies``: counted when the harness made
    every call (None, not recorded, when an agent reported calls of its own, or for an agent
    that made no call through the harness and reported none)."""
    if usage.failures_counted:
        return {
            "failed_attempts": dict(sorted(usage.failed_attempts.items())),
            "unusable_replies": usage.unusable_replies,
        }
    return {"failed_attempts": None, "unusable_replies": None}


def _note_failed_attempts(exc: InfrastructureFault, usage: Usage, leftover: Any) -> None:
    """Give a fault that ends this episode attempt the model-call attempts that failed in it
    (``episode_failed_attempts``, kind -> count; the runner stores them with the fault): the
    retried ones before the calls that got a reply, and the failing call's own. Left unset
    when the harness did not count the calls' failures."""
    total = Usage()
    total.add(usage)
    if isinstance(leftover, Usage):
        total.add(leftover)
    if total.calls and not total.failures_counted:
        return
    counted = dict(total.failed_attempts)
    for kind in getattr(exc, "failed_attempts", ()) or ():
        counted[kind] = counted.get(kind, 0) + 1
    if counted or total.calls or getattr(exc, "endpoint", False):
        exc.episode_failed_attempts = counted  # type: ignore[attr-defined]


def _signature(raw: Any, parsed_as: tuple[Any, Any] | None = None) -> list[str]:
    """The action's semantic signature. ``parsed_as``: (action, what it parsed into) as the
    embedded backend kept it from the step just taken; used when it is this very action,
    so a step's action is parsed once."""
    parsed = parsed_as[1] if parsed_as is not None and parsed_as[0] is raw else parse_action(raw)
    if isinstance(parsed, Action):
        return list(action_signature(parsed))
    skill = raw.get("skill") if isinstance(raw, dict) else None
    return [str(skill)[:32] if isinstance(skill, str) else "<invalid>"]


def _agent_failure(where: str, exc: BaseException) -> str:
    """The record's ``agent_error`` for an exception the agent raised (in ``start``, ``act``
    or ``finish``); an exception whose message cannot be read is named by its type."""
    prefix = f"in {where}: " if where else ""
    return redact_text(prefix + exception_text(exc))[:500]


AGENT_FAILURES = (BaseException,)
"""What an agent's own code may raise that ends its episode as its outcome (``agent_error``):
any exception, and ``sys.exit`` (which in the event loop would otherwise end the whole run,
and in a worker process end the worker), ``os._exit`` in a worker (``agent_exits``), a
``KeyboardInterrupt`` that cannot be the user's Ctrl-C and an ``asyncio.CancelledError``
that is not the runner cancelling the episode (``_own``), and any other ``BaseException``
subclass (one escaping a worker ended it with "exited with status 1", retried as a
``worker`` fault; one escaping the event loop ended the whole run with a traceback).
``WorkerStopped``, the runner's own stop, and infrastructure faults are re-raised before
this is caught."""


def _own(exc: BaseException) -> BaseException:
    """``exc``, unless it is a ``KeyboardInterrupt`` that may be the user's, or a
    cancellation of the episode's task by the runner (its time limit): re-raised."""
    if isinstance(exc, KeyboardInterrupt) and not interrupt_is_the_agents():
        raise exc
    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        if task is None or task.cancelling() > 0:
            raise exc
    return exc


async def _step(episode: EpisodeBackend, action: Any) -> StepOutcome:
    """Backends that wait on a real game step in a thread, so other episodes keep running."""
    if getattr(episode, "blocking", False):
        return await asyncio.to_thread(episode.step, action)
    return episode.step(action)


async def run_episode(
    spec: EpisodeSpec,
    agent: Agent,
    loaded: LoadedWorld,
    rules: RuleSet,
    vanilla: RuleSet,
    *,
    rule_sheet: str | None = None,
    backend_episode: EpisodeBackend | None = None,
) -> tuple[EpisodeRecord, list[StepRecord]]:
    """Play one episode; ``backend_episode`` (the caller creates and closes it) replaces the embedded one."""
    started = time.perf_counter()
    episode: EpisodeBackend = (
        backend_episode
        if backend_episode is not None
        else SimEpisode(loaded, rules, vanilla, spec.task, seed=spec.seed)
    )
    termination = "budget"
    agent_error = ""
    try:
        with agent_code():
            agent.start(
                EpisodeContext(
                    spec.task.id,
                    spec.task.title,
                    spec.task.budget,
                    spec.seed,
                    rule_sheet,
                    rng=random.Random(spec.seed),
                )
            )
    except (InfrastructureFault, WorkerStopped):
        raise
    except AgentInitError as exc:  # its constructor raised: no instance to start
        termination, agent_error = "agent_error", _agent_failure("__init__", exc.original)
    except AGENT_FAILURES as exc:  # the agent's own failure, before its first action
        termination, agent_error = "agent_error", _agent_failure("start", _own(exc))
    obs = episode.observe()
    usage = Usage()
    steps: list[StepRecord] = []
    signatures: list[list[str]] = []
    scores: list[int] = []
    seen_encounters = 0
    while not agent_error:
        # Give the event loop a turn at every action: an async act that never awaits (a
        # blocking call inside ``async def``) otherwise runs the whole episode in one go,
        # past its wall-clock limit and holding up every other episode of the loop.
        await asyncio.sleep(0)
        try:
            with agent_code():
                decision = await agent.act(obs)
        except InfrastructureFault as exc:
            _note_failed_attempts(exc, usage, getattr(agent, "unreported_usage", None))
            raise
        except CallBudgetExhausted:
            termination = "call_budget"
            leftover = getattr(agent, "unreported_usage", None)
            if isinstance(leftover, Usage):
                usage.add(leftover)
            break
        except WorkerStopped:
            raise
        except AGENT_FAILURES as exc:  # the agent's own failure is an outcome, not a fault
            termination, agent_error = "agent_error", _agent_failure("", _own(exc))
            leftover = getattr(agent, "unreported_usage", None)
            if isinstance(leftover, Usage):  # the calls made before it failed were paid for
                usage.add(leftover)
            break
        if decision is None:
            termination = "no_action"
            leftover = getattr(agent, "unreported_usage", None)
            if isinstance(leftover, Usage):
                usage.add(leftover)
            break
        usage.add(decision.usage)
        try:
            out = await _step(episode, decision.action)
        except InfrastructureFault as exc:
            _note_failed_attempts(exc, usage, None)
            raise
        obs = out.observation
        encounters = episode.evaluator.encounters.encounters
        new_rules = sorted({e.rule for e in encounters[seen_encounters:]})
        seen_encounters = len(encounters)
        signatures.append(_signature(decision.action, getattr(episode, "parsed", None)))
        scores.append(out.score)
        steps.append(
            StepRecord(
                spec.episode_id,
                out.observation.step,
                decision.action,
                decision.thought,
                out.result.to_json(),
                dict(obs.inventory),  # the agent is handed obs next and may change it
                list(obs.position),
                out.score,
                list(out.new_milestones),
                new_rules,
            )
        )
        if out.terminated:
            termination = "success" if episode.evaluator.success() else "death"
            break
        if out.truncated:
            termination = "budget"
            break
    try:
        with agent_code():
            finished = agent.finish(obs)
            # agents in another process say goodbye over the network
            if inspect.isawaitable(finished):
                await finished
    except (InfrastructureFault, WorkerStopped):
        raise
    except AGENT_FAILURES as exc:  # the episode is over: its outcome stands, the error is kept
        agent_error = agent_error or _agent_failure("finish", _own(exc))
    ev = episode.evaluator
    record = EpisodeRecord(
        episode_id=spec.episode_id,
        experiment=spec.experiment,
        world=spec.world,
        biome=loaded.world.biome,
        rules=spec.rules_name,
        rules_title=rules_title(spec.rules_name),
        task=spec.task.id,
        agent=spec.agent,
        model=spec.model,
        disclosure=spec.disclosure,
        budget=spec.task.budget,
        call_budget=spec.call_budget,
        repetition=spec.repetition,
        seed=spec.seed,
        score=ev.score(),
        success=ev.success(),
        milestones=dict(ev.milestones.milestone_steps()),
        termination=termination,
        actions_used=episode.used,
        score_trace=scores,
        signatures=signatures,
        encounters=[
            EncounterRecord(
                e.step,
                e.rule,
                e.kind,
                list(e.signature),
                e.to_json()["vanilla"],
                e.to_json()["actual"],
            )
            for e in ev.encounters.encounters
        ],
        model_calls=usage.calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_calls=usage.cached_calls,
        estimated_calls=usage.estimated_calls,
        **_failures(usage),
        cost_usd=usage.cost_usd,
        software_version=__version__,
        ruleset_fingerprint=rules.fingerprint,
        vanilla_fingerprint=vanilla.fingerprint,
        world_fingerprint=getattr(episode, "world_fingerprint", "") or loaded.world.fingerprint,
        spec_hash=spec.spec_hash,
        body_fingerprint=body_fingerprint(
            "sim" if isinstance(episode, SimEpisode) else "mineflayer"
        ),
        task_fingerprint=task_fingerprint(spec.task),
        wall_seconds=round(time.perf_counter() - started, 4),
        agent_error=agent_error,
        memory=_memory_stats(agent),
        template_hashes=dict(getattr(agent, "template_hashes", {}) or {}),
        agent_origin={**spec.agent_origin, **dict(getattr(agent, "origin_details", {}) or {})},
    )
    return record, steps
