"""Running an experiment's episodes: a local process pool (default) or Ray, resumable.

The parent process is the only writer of the results database: workers return
finished episodes, the parent writes each one atomically. Killing a run loses at
most the episodes in flight; rerunning the same command completes the rest.
Infrastructure faults (a crashed backend, an unreachable model endpoint) are
recorded and the episode is retried under the same id; deaths, exhausted budgets
and agent errors are outcomes and stay.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any

from mirrorcraft.agents.registry import make_agent, needs_model
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.datapack.suites import compiled, find_suite, load_manifest_file
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.faults import InfrastructureFault
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.runner.records import EpisodeRecord, StepRecord
from mirrorcraft.runner.spec import EpisodeCondition, ExperimentSpec
from mirrorcraft.runner.store import ResultStore
from mirrorcraft.runner.warm import warm
from mirrorcraft.world.registry import load_world

MAX_ATTEMPTS = 3


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


def rule_sheet_for(rules: str) -> str | None:
    """The disclosed rule sheet of a packaged suite or a suite manifest file (None otherwise)."""
    manifest = find_suite(rules)
    if manifest is None and rules.endswith((".yaml", ".yml", ".manifest.json")):
        from pathlib import Path

        if Path(rules).is_file():
            manifest = load_manifest_file(Path(rules))
    return compiled(manifest).render_sheet() if manifest is not None else None


async def run_job_async(job: Job) -> tuple[str, Any]:
    """Run one episode: ("ok", (record, steps)) or ("fault", message)."""
    c = job.condition
    try:
        loaded = load_world(c.world)
        active = resolve_rules(c.rules)
        vanilla = vanilla_rules()
        settings = dict(job.model_config)
        overrides = settings.pop("client", None) or {}
        extra: dict[str, Any] = {}
        name = job.agent_name or c.agent
        if needs_model(name):
            extra = {"cache_scope": c.episode_id, "client_settings": overrides}
            if c.call_budget is not None:
                extra["call_budget"] = c.call_budget
        if job.agent_options:
            extra["options"] = job.agent_options
        agent = make_agent(name, active=active, vanilla=vanilla, model=c.model, **settings, **extra)
        version = _load_memory(agent, job.memory)
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
        )
        backend_episode = None
        try:
            if job.backend == "mineflayer":
                from mirrorcraft.backends.mineflayer.backend import MineflayerOptions, start_episode

                backend_episode = await asyncio.to_thread(
                    start_episode,
                    MineflayerOptions.from_dict(job.backend_options),
                    world=c.world,
                    rules=c.rules,
                    task=task,
                    vanilla=vanilla,
                    seed=c.seed,
                )
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
        from mirrorcraft.agents.memory import episode_delta

        delta = episode_delta(agent) if job.memory.writable else []
        record.memory = {**record.memory, **job.memory.info, "store_version": version}
        return ("ok", (record, steps, delta))
    except InfrastructureFault as exc:
        return ("fault", f"infrastructure: {exc}")
    except (
        Exception
    ) as exc:  # a bug in the simulator or harness, or a bad setting: record it, rerun later
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return ("fault", f"internal error: {detail}")


def _load_memory(agent: Any, memory: MemoryPlan | None) -> int:
    """Give the agent its store's memory; returns the store version read (0: empty start)."""
    if memory is None:
        return 0
    from mirrorcraft.agents.memory import load_store

    return load_store(agent, memory.store, memory.writable)


def run_job(job: Job) -> tuple[str, Any]:
    """Run one episode in this process (for the process pool)."""
    return asyncio.run(run_job_async(job))


def run_async(jobs: list[Job], store: ResultStore, concurrency: int, progress: Progress) -> None:
    """Agents that wait on model calls: many episodes at once on one event loop."""
    attempts = {j.condition.episode_id: store.fault_count(j.condition.episode_id) for j in jobs}
    queue = [j for j in jobs if attempts[j.condition.episode_id] < MAX_ATTEMPTS]

    async def main() -> None:
        limit = asyncio.Semaphore(max(concurrency, 1))

        async def one(job: Job) -> None:
            async with limit:
                progress.running += 1
                outcome = await run_job_async(job)
                progress.running -= 1
            retry: list[Job] = []
            _handle(job, outcome, store, progress, attempts, retry, None)
            progress.show()
            if retry:
                await one(retry[0])

        await asyncio.gather(*(one(j) for j in queue))

    asyncio.run(main())


class Progress:
    def __init__(self, total: int, stream: Any = sys.stderr):
        self.total, self.done, self.failed, self.running = total, 0, 0, 0
        self.start = time.monotonic()
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self._last = 0.0

    def show(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < (0.2 if self.tty else 5.0):
            return
        self._last = now
        elapsed = now - self.start
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        left = (self.total - self.done) / rate if rate else float("nan")
        eta = "--" if left != left else f"{int(left // 60)}m{int(left % 60):02d}s"
        line = f"episodes {self.done}/{self.total} done, {self.running} running, {self.failed} faults, ETA {eta}"
        if self.tty:
            self.stream.write("\r" + line.ljust(78))
            if force:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def run_local(
    jobs: list[Job],
    store: ResultStore,
    workers: int,
    progress: Progress,
    on_record: Callable[[EpisodeRecord], None] | None = None,
) -> None:
    attempts = {j.condition.episode_id: store.fault_count(j.condition.episode_id) for j in jobs}
    pending = [j for j in jobs if attempts[j.condition.episode_id] < MAX_ATTEMPTS]
    if workers <= 1:
        for job in pending:
            progress.running = 1
            _handle(job, run_job(job), store, progress, attempts, pending, on_record)
            progress.show()
        progress.running = 0
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    if method == "fork":  # workers inherit what the parent loaded (runner/warm.py)
        warm((j.condition.world, j.condition.rules) for j in pending if j.backend == "sim")
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context(method)
    ) as pool:
        queue = list(pending)
        running: dict[Future[tuple[str, Any]], Job] = {}
        while queue or running:
            while queue and len(running) < workers * 2:
                job = queue.pop(0)
                running[pool.submit(run_job, job)] = job
            progress.running = min(len(running), workers)
            progress.show()
            done, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED)
            for fut in done:
                job = running.pop(fut)
                try:
                    outcome = fut.result()
                except Exception as exc:  # the worker process died
                    outcome = ("fault", f"worker crashed: {exc}")
                _handle(job, outcome, store, progress, attempts, queue, on_record)
    progress.running = 0


def _handle(
    job: Job,
    outcome: tuple[str, Any],
    store: ResultStore,
    progress: Progress,
    attempts: dict[str, int],
    queue: list[Job],
    on_record: Callable[[EpisodeRecord], None] | None,
) -> None:
    eid = job.condition.episode_id
    kind, payload = outcome
    if kind == "ok":
        record, steps = payload
        store.write_episode(record, steps)
        progress.done += 1
        if on_record is not None:
            on_record(record)
        return
    store.write_fault(eid, "infrastructure", str(payload), asdict(job.condition))
    attempts[eid] += 1
    progress.failed += 1
    if attempts[eid] < MAX_ATTEMPTS:
        queue.append(job)
    else:
        progress.done += 1


def run_ray(jobs: list[Job], store: ResultStore, address: str | None, progress: Progress) -> None:
    try:
        import ray  # type: ignore[import-not-found]
    except ImportError:
        raise InfrastructureFault(
            "the Ray executor needs the optional extra: pip install 'mirrorcraft[ray]' "
            "(from a source checkout: pip install -e '.[ray]')"
        ) from None
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    remote = ray.remote(run_job)
    attempts = {j.condition.episode_id: store.fault_count(j.condition.episode_id) for j in jobs}
    queue = [j for j in jobs if attempts[j.condition.episode_id] < MAX_ATTEMPTS]
    refs: dict[Any, Job] = {}
    while queue or refs:
        while queue and len(refs) < 256:
            job = queue.pop(0)
            refs[remote.remote(job)] = job
        ready, _ = ray.wait(list(refs), num_returns=1, timeout=1.0)
        for ref in ready:
            job = refs.pop(ref)
            try:
                outcome = ray.get(ref)
            except Exception as exc:
                outcome = ("fault", f"ray task failed: {exc}")
            _handle(job, outcome, store, progress, attempts, queue, None)
        progress.running = len(refs)
        progress.show()


def plan_jobs(
    spec: ExperimentSpec,
    conditions: list[EpisodeCondition],
    finished: set[str],
    cache_path: Any = None,
    backend: str | None = None,
    backend_options: dict[str, Any] | None = None,
) -> list[Job]:
    models: dict[str, dict[str, Any]] = {
        m.name: {k: v for k, v in m.model_dump().items() if k != "name"} for m in spec.models
    }
    for name, cfg in models.items():
        if name == "none":
            cfg.clear()  # reference agents take no model settings
        else:
            cfg["cache_path"] = cache_path
    chosen = backend or spec.backend
    return [
        Job(
            c,
            spec.name,
            spec.hash,
            models.get(c.model, {}),
            backend=chosen,
            backend_options=dict(backend_options or {}),
        )
        for c in conditions
        if c.episode_id not in finished
    ]


__all__ = [
    "InfrastructureFault",
    "Job",
    "Progress",
    "StepRecord",
    "plan_jobs",
    "run_local",
    "run_ray",
]
