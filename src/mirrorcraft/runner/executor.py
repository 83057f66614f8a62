"""Episodes as jobs: what one episode needs, and running it in the current process.

The parent process is the only writer of the results database: workers return
finished episodes, the parent writes each one atomically. Killing a run loses at
most the episodes in flight; rerunning the same command completes the rest.
Infrastructure faults (a crashed backend, an unreachable model endpoint, a dead
worker, an episode past its time limit) come back as ``("fault", Fault)`` and are
retried under the same id (see ``runner.dispatch`` and ``runner.loops``); deaths,
exhausted budgets and agent errors are outcomes and stay.
"""

from __future__ import annotations

import asyncio
import traceback
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.agents.registry import make_agent, needs_model, runs_in_event_loop
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.datapack.suites import find_suite, load_manifest_file, rule_sheet
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.faults import Fault, InfrastructureFault
from mirrorcraft.runner.agent_exits import exits_end_the_episode
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.runner.records import StepRecord, encode_step
from mirrorcraft.runner.spec import EpisodeCondition, ExperimentSpec
from mirrorcraft.world.registry import load_world


@dataclass(frozen=True)
class MemoryPlan:
    """Where an agent's knowledge comes from for one episode (agents with a knowledge store).

    ``store`` is a knowledge-store file read at the start (None: start empty);
    with ``writable`` the episode's knowledge operations are returned for the
    caller to commit; ``info`` is copied into the record's ``memory`` field.
    """

    store: str | None
    writable: bool
    info: dict[str, Any]


@dataclass(frozen=True)
class Job:
    condition: EpisodeCondition
    experiment: str
    spec_hash: str
    model_config: dict[str, Any]
    memory: MemoryPlan | None = None
    agent_name: str | None = None
    """The configuration to build when ``condition.agent`` is only a label (accumulation runs)."""
    agent_options: dict[str, Any] | None = None
    backend: str = "sim"
    """``sim`` (embedded) or ``mineflayer`` (a real server per episode; see docs/real_server.md)."""
    backend_options: dict[str, Any] = field(default_factory=dict)
    endpoint: str | None = None
    """The model endpoint the episode calls ("'model' at host"), None for agents without one;
    faults from one endpoint pause dispatch to it (``runner.dispatch``)."""
    timeout_s: float | None = None
    """Wall-clock limit of the episode (None: none)."""
    agent_origin: dict[str, str] = field(default_factory=dict)
    """Where a user agent came from (stored in the record; empty for packaged agents)."""

    @property
    def agent_ref(self) -> str:
        """The agent to build: a configuration, import path, entry point or URL."""
        return self.agent_name or self.condition.agent

    @property
    def in_event_loop(self) -> bool:
        """Whether the episode waits on the network (run on the event loop, not a worker)."""
        return runs_in_event_loop(self.agent_ref)


def rule_sheet_for(rules: str) -> str | None:
    """The disclosed rule sheet of a packaged suite or a suite manifest file (None otherwise)."""
    manifest = find_suite(rules)
    if manifest is None and rules.endswith((".yaml", ".yml", ".manifest.json")):
        from pathlib import Path

        if Path(rules).is_file():
            manifest = load_manifest_file(Path(rules))
    return rule_sheet(manifest) if manifest is not None else None


async def run_job_async(job: Job) -> tuple[str, Any]:
    """Run one episode: ("ok", (record, steps[, knowledge delta])) or ("fault", Fault)."""
    c = job.condition
    try:
        loaded = load_world(c.world)
        active = resolve_rules(c.rules)
        vanilla = vanilla_rules()
        settings = dict(job.model_config)
        overrides = settings.pop("client", None) or {}
        extra: dict[str, Any] = {}
        name = job.agent_ref
        if name != c.agent:
            extra["label"] = c.agent
        if needs_model(name):
            extra = {"cache_scope": c.episode_id, "client_settings": overrides}
            if c.call_budget is not None:
                extra["call_budget"] = c.call_budget
        if job.agent_options:
            extra["options"] = job.agent_options
        agent = make_agent(name, active=active, vanilla=vanilla, model=c.model, **settings, **extra)
        from mirrorcraft.agents.memory import MemoryDeltaError

        try:
            version = _load_memory(agent, job.memory)
        except MemoryDeltaError as exc:
            return ("fault", Fault("config", str(exc)))
        task = get_task(c.task).with_budget(c.budget)
        sheet = rule_sheet_for(c.rules) if c.disclosure == "disclosed" else None
        spec = EpisodeSpec(
            c.episode_id,
            job.experiment,
            c.world,
            c.rules,
            task,
            c.agent,
            c.model,
            c.disclosure,
            c.repetition,
            c.seed,
            job.spec_hash,
            c.call_budget,
            dict(job.agent_origin),
        )
        backend_episode = None
        try:
            if job.backend == "mineflayer":
                from mirrorcraft.backends.mineflayer.backend import (
                    MineflayerOptions,
                    StartHandle,
                    start_episode,
                )

                handle = StartHandle()
                try:
                    backend_episode = await asyncio.to_thread(
                        start_episode,
                        MineflayerOptions.from_dict(job.backend_options),
                        world=c.world,
                        rules=c.rules,
                        task=task,
                        vanilla=vanilla,
                        seed=c.seed,
                        handle=handle,
                    )
                except BaseException:
                    # Stopped while the server starts (time limit, Ctrl-C, worker stopped):
                    # the start thread runs on, and what it started would outlive the run.
                    handle.cancel()
                    raise
            record, steps = await run_episode(
                spec,
                agent,
                loaded,
                active,
                vanilla,
                rule_sheet=sheet,
                backend_episode=backend_episode,
            )
        finally:
            if backend_episode is not None:
                await asyncio.to_thread(backend_episode.close)
            client = getattr(agent, "client", None)
            if client is not None:
                from mirrorcraft.llm.factory import close_client

                await close_client(client)
        if job.memory is None:
            return ("ok", (record, steps))
        from mirrorcraft.agents.memory import episode_delta, store_sizes

        try:
            delta = episode_delta(agent) if job.memory.writable else []
        except MemoryDeltaError as exc:  # the agent's own bug: nothing reaches its store
            return ("fault", Fault("config", str(exc)))
        sizes = store_sizes(agent, delta)
        record.memory = {**record.memory, **sizes, **job.memory.info, "store_version": version}
        return ("ok", (record, steps, delta))
    except InfrastructureFault as exc:
        return ("fault", Fault.of(exc))
    except (
        Exception
    ) as exc:  # a bug in the simulator or harness, or a bad setting: record it, rerun later
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return ("fault", Fault("worker", f"internal error: {detail}"))


def _load_memory(agent: Any, memory: MemoryPlan | None) -> int:
    """Give the agent its store's memory; returns the store version read (0: empty start)."""
    if memory is None:
        return 0
    from mirrorcraft.agents.memory import load_store

    return load_store(agent, memory.store, memory.writable)


def run_job(job: Job) -> tuple[str, Any]:
    """Run one episode in this process (for the worker pool). The trace comes back encoded
    as the store writes it (``records.encode_step``): sending text is cheaper than sending
    step objects, and the parent process then has nothing to encode."""
    with exits_end_the_episode():
        kind, payload = asyncio.run(run_job_async(job))
    if kind == "ok":
        record, steps, *rest = payload
        payload = (record, [encode_step(s) for s in steps], *rest)
    return kind, payload


def plan_jobs(
    spec: ExperimentSpec,
    conditions: list[EpisodeCondition],
    finished: set[str],
    cache_path: Any = None,
    backend: str | None = None,
    backend_options: dict[str, Any] | None = None,
    spec_hash: str | None = None,
) -> list[Job]:
    """The jobs of ``conditions`` not in ``finished``, stamped with ``spec_hash`` (default
    ``spec.hash``; a folder's own hash, see ``spec.run_identity``)."""
    models: dict[str, dict[str, Any]] = {
        m.name: {k: v for k, v in m.model_dump().items() if k != "name"} for m in spec.models
    }
    for name, cfg in models.items():
        if name == "none":
            cfg.clear()  # reference agents take no model settings
        else:
            cfg["cache_path"] = cache_path
    chosen = backend or spec.backend
    endpoints = {m.name: endpoint_label(m.name, m.base_url) for m in spec.models}
    entries = {e.id: e for e in spec.agent_entries}
    origins = {e.id: agent_origin(e.name, e.options) for e in spec.agent_entries}
    jobs = []
    for c in conditions:
        if c.episode_id in finished:
            continue
        entry = entries.get(c.agent)
        ref = entry.name if entry is not None else c.agent
        waits = runs_in_event_loop(ref)
        endpoint = endpoints.get(c.model) if needs_model(ref) else None
        if ref.startswith(("http://", "https://")):
            endpoint = remote_label(ref)
        jobs.append(
            Job(
                c,
                spec.name,
                spec_hash or spec.hash,
                models.get(c.model, {}),
                agent_name=ref if ref != c.agent else None,
                agent_options=dict(entry.options) if entry is not None and entry.options else None,
                backend=chosen,
                backend_options=dict(backend_options or {}),
                endpoint=endpoint,
                timeout_s=spec.execution.episode_timeout(
                    calls_model=waits, real_server=chosen == "mineflayer"
                ),
                agent_origin=origins.get(c.agent, {}),
            )
        )
    return jobs


def agent_origin(name: str, options: dict[str, Any] | None) -> dict[str, str]:
    """What a record stores of where a user agent came from ({} for packaged agents without
    options: their provenance is the software version)."""
    from mirrorcraft.agents.plugins import PluginError, options_hash, origin_of
    from mirrorcraft.agents.registry import is_builtin
    from mirrorcraft.runner.spec import runner_options

    hashed = runner_options(dict(options or {}))
    if is_builtin(name):
        if not hashed:
            return {}
        return {"kind": "builtin", "ref": name, "options_hash": options_hash(hashed)}
    try:
        return origin_of(name, hashed).to_json()
    except PluginError:
        return {}


def remote_label(url: str) -> str:
    """How a remote agent is named in messages and endpoint pauses (never its credentials)."""
    from mirrorcraft.redact import redact_url

    return f"agent at {redact_url(url.rstrip('/'))}"


def endpoint_label(model: str, base_url: str | None) -> str:
    """How a model endpoint is named in messages: ``'model' at host`` (never its credentials)."""
    if not base_url:
        return repr(model)
    from mirrorcraft.llm.openai_client import endpoint_host

    return f"{model!r} at {endpoint_host(base_url)}"


__all__ = [
    "InfrastructureFault",
    "Job",
    "MemoryPlan",
    "StepRecord",
    "plan_jobs",
    "run_job",
    "run_job_async",
]
