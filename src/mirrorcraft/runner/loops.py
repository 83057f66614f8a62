"""The run loops: a pool of worker processes (reference agents), one event loop (agents that
wait on model calls), or Ray. All three apply one fault policy (``runner.dispatch``) and
write every outcome through one ``Recorder``.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any

from mirrorcraft.faults import Fault, InfrastructureFault, redact
from mirrorcraft.runner.dispatch import Dispatcher, Entry
from mirrorcraft.runner.execution_spec import ExecutionSpec
from mirrorcraft.runner.executor import Job, run_job, run_job_async
from mirrorcraft.runner.fault_report import component_of
from mirrorcraft.runner.pool import NOT_STARTED, WorkerPool
from mirrorcraft.runner.progress import Progress
from mirrorcraft.runner.records import EpisodeRecord
from mirrorcraft.runner.store import ResultStore, given_up_reason, is_episode_timeout

POLL_S = 1.0
QUEUE_DEPTH = 2
"""Episodes handed to each worker process at once: the one it runs and the next, so it
never waits for the parent between episodes (``runner.pool``)."""
RAY_RECOUNT_S = 10.0
"""How often the Ray executor reads the cluster's CPU count again."""


def new_run_id() -> str:
    """An id for one invocation, stored with each fault it meets."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def secrets_of(job: Job) -> list[str]:
    """The API key values a job's model may use (redacted from every stored message)."""
    env = job.model_config.get("api_key_env")
    value = os.environ.get(env, "") if isinstance(env, str) else ""
    return [value] if value else []


class Recorder:
    """Writes each outcome to the store, keeps the progress line and applies the policy."""

    def __init__(
        self,
        store: ResultStore,
        progress: Progress,
        dispatcher: Dispatcher,
        run_id: str,
        on_record: Callable[[EpisodeRecord], None] | None = None,
    ) -> None:
        self.store, self.progress, self.dispatcher = store, progress, dispatcher
        self.run_id = run_id
        self.on_record = on_record
        progress.status = dispatcher.status

    def handle(self, entry: Entry, outcome: tuple[str, Any]) -> None:
        job: Job = entry.job
        kind, payload = outcome
        if kind == "ok":
            record, steps = payload[0], payload[1]
            self.store.write_episode(record, steps)
            self.dispatcher.succeeded(entry)
            self.progress.done += 1
            if self.on_record is not None:
                self.on_record(record)
            return
        fault = payload if isinstance(payload, Fault) else Fault("worker", str(payload))
        fault = replace(fault, message=redact(fault.message, secrets_of(job)))
        self.store.write_fault(
            job.condition.episode_id,
            fault.kind,
            fault.message,
            asdict(job.condition),
            self.run_id,
            component_of(fault, entry.endpoint, job.backend),
            None if fault.failed_attempts is None else dict(fault.failed_attempts),
        )
        self.progress.failed += 1
        self.progress.fault_kinds[fault.kind] += 1
        why = None
        episode_id = job.condition.episode_id
        policy = self.dispatcher.policy
        capped = fault.kind == "worker" or is_episode_timeout(fault.kind, fault.message)
        cap = policy.max_worker_faults if fault.kind == "worker" else policy.max_timeouts
        if capped and (n := self.store.capped_count(episode_id, fault.kind, job.timeout_s)) >= cap:
            why = given_up_reason(n, cap, fault.kind)
            self.store.give_up(episode_id, why)
        if not self.dispatcher.faulted(entry, fault, why):
            self.progress.left += 1


def _wait(dispatcher: Dispatcher, free: int) -> float:
    """How long to wait for results before looking at the queue again: until a waiting
    episode may start, if a slot is free for it; otherwise until a result arrives."""
    wake = dispatcher.wake_in() if free > 0 else None
    return min(POLL_S, wake) if wake is not None else POLL_S


def entries(jobs: Iterable[Job]) -> list[Entry]:
    return [Entry(j, j.endpoint) for j in jobs]


def warm(jobs: Iterable[Job]) -> None:
    """Load the worlds and rule sets of ``jobs`` once in this process before workers fork, so
    each worker inherits them instead of generating its own (and an episode's time limit
    measures the episode, not the loading). Loading problems are left to the episodes."""
    from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
    from mirrorcraft.world.registry import load_world

    jobs = list(jobs)
    try:
        vanilla_rules()
    except Exception:  # the episode that needs it records the problem as its fault
        return
    for rules in dict.fromkeys(j.condition.rules for j in jobs):
        try:
            resolve_rules(rules)
        except Exception:  # only the episodes that use this rule set report it
            continue
    for world in dict.fromkeys(j.condition.world for j in jobs if j.backend == "sim"):
        try:
            # Its surface heights too: worked out in each worker, they would cost each
            # one the time and bring the whole grid file into its resident memory.
            load_world(world).surface  # noqa: B018
        except Exception:  # only the episodes in this world report it
            continue


def run_local(
    jobs: list[Job],
    store: ResultStore,
    workers: int,
    progress: Progress,
    on_record: Callable[[EpisodeRecord], None] | None = None,
    *,
    policy: ExecutionSpec | None = None,
    run_id: str = "",
    not_answering: Iterable[str] = (),
) -> Dispatcher:
    """Episodes in ``workers`` worker processes (one episode each at a time)."""
    dispatcher = Dispatcher(
        entries(jobs), policy or ExecutionSpec(), say=progress.note, not_answering=not_answering
    )
    recorder = Recorder(store, progress, dispatcher, run_id or new_run_id(), on_record)
    running: dict[int, Entry] = {}
    warm(jobs)
    with WorkerPool(workers, run_job, depth=QUEUE_DEPTH) as pool:
        while True:
            for entry in dispatcher.take(pool.free()):
                running[id(entry)] = entry
                pool.submit(id(entry), entry.job, entry.job.timeout_s)
            if not running and dispatcher.idle:
                break
            progress.running = pool.busy
            progress.show()
            for token, outcome in pool.collect(_wait(dispatcher, pool.free())):
                entry = running.pop(token)
                if outcome is NOT_STARTED:  # queued behind an episode whose worker died
                    dispatcher.put_back(entry)
                else:
                    recorder.handle(entry, outcome)
    progress.running = 0
    return dispatcher


async def run_timed(job: Job) -> tuple[str, Any]:
    """One episode in this event loop, its wall-clock limit enforced at every await."""
    try:
        return await asyncio.wait_for(run_job_async(job), job.timeout_s)
    except TimeoutError:
        return (
            "fault",
            Fault(
                "timeout",
                f"the episode ran past its wall-clock limit of {job.timeout_s:g} s and was stopped",
            ),
        )


def run_async(
    jobs: list[Job],
    store: ResultStore,
    concurrency: int,
    progress: Progress,
    *,
    policy: ExecutionSpec | None = None,
    run_id: str = "",
    not_answering: Iterable[str] = (),
) -> Dispatcher:
    """Agents that wait on model calls: many episodes at once on one event loop."""
    dispatcher = Dispatcher(
        entries(jobs), policy or ExecutionSpec(), say=progress.note, not_answering=not_answering
    )
    recorder = Recorder(store, progress, dispatcher, run_id or new_run_id())
    slots = max(concurrency, 1)

    async def main() -> None:
        running: dict[asyncio.Task[tuple[str, Any]], Entry] = {}
        while True:
            for entry in dispatcher.take(slots - len(running)):
                running[asyncio.ensure_future(run_timed(entry.job))] = entry
            if not running and dispatcher.idle:
                return
            progress.running = len(running)
            progress.show()
            timeout = _wait(dispatcher, slots - len(running))
            if not running:
                await asyncio.sleep(timeout)
                continue
            done, _ = await asyncio.wait(
                list(running), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            for task in done:
                recorder.handle(running.pop(task), task.result())

    asyncio.run(main())
    progress.running = 0
    return dispatcher


def run_ray(
    jobs: list[Job],
    store: ResultStore,
    address: str | None,
    progress: Progress,
    *,
    policy: ExecutionSpec | None = None,
    run_id: str = "",
    not_answering: Iterable[str] = (),
) -> Dispatcher:
    """Episodes as Ray tasks; a lost worker or a task past its limit is a fault like locally."""
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
    dispatcher = Dispatcher(
        entries(jobs), policy or ExecutionSpec(), say=progress.note, not_answering=not_answering
    )
    recorder = Recorder(store, progress, dispatcher, run_id or new_run_id())
    refs: dict[Any, tuple[Entry, float]] = {}
    capacity, counted = 1, 0.0
    while True:
        if time.monotonic() - counted > RAY_RECOUNT_S:  # nodes may join or leave
            capacity = max(int(ray.cluster_resources().get("CPU", 1)), 1)
            counted = time.monotonic()
        # No more tasks than the cluster runs at once: a task's time limit counts from its
        # submission, so one left waiting in Ray's queue would be charged for the wait.
        for entry in dispatcher.take(min(capacity, 256) - len(refs)):
            limit = entry.job.timeout_s
            deadline = time.monotonic() + limit if limit else float("inf")
            refs[remote.remote(entry.job)] = (entry, deadline)
        if not refs and dispatcher.idle:
            break
        if not refs:
            time.sleep(POLL_S)
            continue
        ready, _ = ray.wait(list(refs), num_returns=1, timeout=POLL_S)
        for ref in ready:
            entry, _deadline = refs.pop(ref)
            try:
                outcome = ray.get(ref)
            except Exception as exc:  # the task's worker died or the task was cancelled
                outcome = ("fault", Fault("worker", f"ray task failed: {exc}"))
            recorder.handle(entry, outcome)
        now = time.monotonic()
        for ref, (entry, deadline) in list(refs.items()):
            if deadline <= now:
                ray.cancel(ref, force=True)
                refs.pop(ref)
                limit = entry.job.timeout_s or 0.0
                recorder.handle(
                    entry,
                    (
                        "fault",
                        Fault("timeout", f"the episode ran past its limit of {limit:g} s"),
                    ),
                )
        progress.running = len(refs)
        progress.show()
    return dispatcher
