"""Running an accumulation experiment: training streams, snapshots, evaluations; resumable.

This process is the only writer of the knowledge stores and of the two results
databases (``train.sqlite`` for training episodes, ``results.sqlite`` for
evaluation episodes, the one the standard report reads). An episode's knowledge
operations are committed to its store *before* its record is written, so after
an interruption a store can only be ahead of the records; a rerun truncates it to
the finished prefix of its stream and continues, and re-creates any missing
snapshot from the store's retained versions.

Faults follow the same lifecycle as grid runs (``runner.dispatch``): attempts
per invocation with growing waits, a paused or stopped model endpoint, episodes
in worker processes that fail alone (``runner.pool``) and a wall-clock limit per
episode. A stream whose episode is given up stops there; a rerun continues it.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mirrorcraft.agents.baselines.config import settings_for
from mirrorcraft.agents.memory import start_problem
from mirrorcraft.agents.mineevolve.store import KnowledgeStore, KnowledgeStoreError
from mirrorcraft.agents.registry import LLM_AGENTS, needs_model
from mirrorcraft.faults import Fault, redact
from mirrorcraft.runner.accumulation import AccumulationSpec, Stream, plan_streams
from mirrorcraft.runner.dispatch import Breaker
from mirrorcraft.runner.executor import Job, MemoryPlan, agent_origin, endpoint_label, run_job
from mirrorcraft.runner.fault_report import component_of
from mirrorcraft.runner.loops import new_run_id, run_timed, secrets_of
from mirrorcraft.runner.pool import WorkerPool
from mirrorcraft.runner.spec import IDENTITY_KEY, run_identity
from mirrorcraft.runner.store import CAPPED, ResultStore, given_up_reason
from mirrorcraft.runner.versions import VERSIONS_KEY, with_version

LIMITED = "left for a later run by --limit"


class AccumulationError(Exception):
    """An accumulation run cannot continue as asked; the message says why."""


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@-]+", "_", text)


@dataclass
class Outcome:
    planned: int = 0
    done: int = 0
    skipped: int = 0
    faults: int = 0
    missing: list[str] = field(default_factory=list)
    """Streams (or checkpoints) that could not finish, with the reason."""
    held_back: int = 0
    """Episodes not started because ``limit`` was reached (rerun to continue)."""
    fault_table: str = ""
    """The closing table of this run's infrastructure faults (empty when there were none)."""
    given_up: dict[str, str] = field(default_factory=dict)
    """Episodes given up over all runs (``execution.max_worker_faults``,
    ``execution.max_timeouts``) -> the setting to raise: a rerun does not run them, nor what
    follows them in their stream, until it is raised."""


class AccumulationRunner:
    def __init__(
        self,
        spec: AccumulationSpec,
        out: Path,
        *,
        workers: int = 1,
        on_done: Callable[[str], None] | None = None,
        limit: int | None = None,
        say: Callable[[str], None] = print,
    ):
        self.spec = spec
        self.out = out
        self.stores = out / "stores"
        self.workers = max(workers, 1)
        self.on_done = on_done
        self.starts_left = limit
        self.train_db = ResultStore(out / "train.sqlite")
        self.eval_db = ResultStore(out / "results.sqlite")
        identity = run_identity(spec, self.eval_db.meta)
        if identity == spec.hash:  # a folder whose training ran but no evaluation yet
            identity = run_identity(spec, self.train_db.meta)
        self.spec_hash = identity
        """The hash stamped on this run's episodes (``spec.run_identity``)."""
        self.carried: list[list[str]] = []
        """Per database (training, evaluation): stored episodes of a version of the spec that
        differs only in prose, to stamp with this run's hash (``runner.versions``)."""
        self.outcome = Outcome()
        self.ready: dict[str, asyncio.Event] = {}
        self.failed: dict[str, str] = {}
        self.given_up: dict[str, str] = {}
        """Episode id -> why it was given up in this run."""
        models = {
            m.name: {k: v for k, v in m.model_dump().items() if k != "name"} for m in spec.models
        }
        for cfg in models.values():
            cfg["cache_path"] = out / "llm_cache.sqlite"
        self.models = models
        self.settings = dict(spec.agent_settings)
        self.options = {v.name: dict(v.options) for v in spec.variants}
        self.endpoints = {m.name: endpoint_label(m.name, m.base_url) for m in spec.models}
        self.breaker = Breaker(spec.execution, say)
        self.run_id = new_run_id()
        self._pool: WorkerPool | None = None
        self._pump_task: asyncio.Future[None] | None = None
        self._waiting: dict[int, asyncio.Future[tuple[str, Any]]] = {}
        self._limit: asyncio.Semaphore | None = None

    def close(self) -> None:
        self.train_db.close()
        self.eval_db.close()

    def start_from(self, variant: str) -> Path | None:
        v = next(x for x in self.spec.variants if x.name == variant)
        if v.start_from is None:
            return None
        path = Path(v.start_from)
        if not path.is_file():
            raise AccumulationError(f"variant {variant}: start_from {path} is not a file")
        return path

    # -- names ----------------------------------------------------------------------------
    def store_path(self, stream: Stream) -> Path:
        model = stream.conditions[0].model if stream.conditions else "none"
        return self.stores / _safe(f"{stream.variant}--{model}.sqlite")

    def snapshot_path(self, variant: str, model: str, checkpoint: int) -> Path:
        return self.stores / _safe(f"{variant}--{model}@{checkpoint}.sqlite")

    @staticmethod
    def checkpoint_key(variant: str, model: str, checkpoint: int) -> str:
        return f"{variant}/{model}@{checkpoint}"

    # -- running -----------------------------------------------------------------------------
    def carried_path(self, stream: Stream) -> Path:
        """The working copy an evaluation stream with updates carries its snapshot in."""
        c0 = stream.conditions[0]
        cp = stream.checkpoint if stream.checkpoint is not None else 0
        return self.stores / _safe(f"{stream.variant}--{c0.model}@{cp}--{c0.rules}.carried.sqlite")

    def check_store_names(self) -> None:
        """Refuse a spec two of whose streams would write one store file: a file name keeps
        only letters, digits and ``_.@-``, so models such as ``org/m`` and ``org_m`` would
        share it, and each stream would commit into (and truncate) the other's store."""
        train, evals = plan_streams(self.spec)
        owners: dict[Path, str] = {}
        paths: list[tuple[Path, str]] = []
        for s in train:
            model = s.conditions[0].model
            owner = f"variant {s.variant!r} with model {model!r}"
            paths.append((self.store_path(s), owner))
            paths += [
                (self.snapshot_path(s.variant, model, cp), owner) for cp in self.spec.checkpoints
            ]
        for s in evals:
            if s.writable:
                c0 = s.conditions[0]
                paths.append((self.carried_path(s), f"evaluation {s.key} under {c0.rules!r}"))
        for path, owner in paths:
            other = owners.setdefault(path, owner)
            if other != owner:
                raise AccumulationError(
                    f"{other} and {owner} would write one knowledge store, {path} (a store's "
                    "file name keeps only letters, digits and _.@-): rename one of the models"
                )

    def check_stores(self) -> None:
        """Refuse to start while a store this run would read cannot be replayed: every
        episode reading it would fail, and a rerun would meet the same file.

        The stores this run writes are opened for writing first, as the run would: that
        rolls back a transaction a killed run left unfinished, which a read-only look
        cannot do (snapshots are written under another name and moved into place whole)."""
        train, evals = plan_streams(self.spec)
        keep = "restore it from a copy, or remove the results folder to start over"
        again = "remove it and rerun: it is made again from the training store"
        checks: list[tuple[Path, str, str, bool]] = []
        for s in train:
            checks.append((self.store_path(s), s.agent, keep, True))
            for cp in self.spec.checkpoints:
                snapshot = self.snapshot_path(s.variant, s.conditions[0].model, cp)
                checks.append((snapshot, s.agent, again, False))
        checks += [(self.carried_path(s), s.agent, keep, True) for s in evals if s.writable]
        for path, agent, advice, written in checks:
            if not path.is_file():
                continue
            problem = None
            if written:
                try:
                    KnowledgeStore.open(path).close()
                except KnowledgeStoreError as exc:
                    problem = str(exc)
            if problem or (problem := start_problem(agent, str(path))):
                raise AccumulationError(f"{problem}; {advice}")

    def run(self) -> Outcome:
        if self.stores.exists() and not self.stores.is_dir():
            raise AccumulationError(
                f"{self.stores} is a file: the run keeps its knowledge stores in a folder of "
                "that name; move the file away"
            )
        self.check_store_names()
        self.stores.mkdir(parents=True, exist_ok=True)
        self.check_stores()
        dump = self.spec.public_dump()
        for db, carried in zip(
            (self.train_db, self.eval_db), self.carried or [[], []], strict=True
        ):
            meta = {
                "spec": dump,
                "spec_hash": self.spec_hash,
                IDENTITY_KEY: self.spec.hash,
                VERSIONS_KEY: with_version(db.meta, self.spec_hash, dump),
            }
            db.restamp(carried, self.spec_hash, meta)
        asyncio.run(self._main())
        return self.outcome

    async def _main(self) -> None:
        train, evals = plan_streams(self.spec)
        self.outcome.planned = sum(len(s.conditions) for s in (*train, *evals))
        self._limit = asyncio.Semaphore(self.workers)
        trained = {(s.variant, s.conditions[0].model) for s in train if s.conditions}
        for v in self.spec.variants:
            for m in self.spec.models:
                for cp in self.spec.checkpoints:
                    key = self.checkpoint_key(v.name, m.name, cp)
                    self.ready[key] = asyncio.Event()
                    if (v.name, m.name) not in trained:
                        self.ready[key].set()  # no training: every checkpoint starts empty
        try:
            await asyncio.gather(
                *(self._train(s) for s in train), *(self._evaluate(s, trained) for s in evals)
            )
        finally:
            if self._pump_task is not None:
                self._pump_task.cancel()
            if self._pool is not None:
                self._pool.close()

    async def _pump(self) -> None:
        """Hand the pool's finished episodes to the coroutines waiting for them."""
        assert self._pool is not None
        while True:
            for token, outcome in self._pool.collect(0.0):
                future = self._waiting.pop(token, None)
                if future is not None and not future.done():
                    future.set_result(outcome)
            await asyncio.sleep(0.05)

    async def _episode(self, job: Job) -> tuple[str, Any]:
        assert self._limit is not None
        async with self._limit:
            # Only an agent that waits on the network runs on this event loop (with one
            # worker): the time limit of one that computes (a plugin, a reference agent) is
            # enforced by stopping its worker process. On the event loop, a blocking act held
            # the loop and the limit never fired: the run hung without a fault.
            if self._pool is None and (self.workers > 1 or not job.in_event_loop):
                self._pool = WorkerPool(self.workers, run_job)
                self._pump_task = asyncio.ensure_future(self._pump())
            if self._pool is None:
                return await run_timed(job)
            future: asyncio.Future[tuple[str, Any]] = asyncio.get_running_loop().create_future()
            token = id(future)
            self._waiting[token] = future
            self._pool.submit(token, job, job.timeout_s)
            return await future

    def _job(self, stream: Stream, index: int, store: Path | None, writable: bool) -> Job:
        c = stream.conditions[index]
        info = {
            "phase": stream.phase,
            "agent": stream.agent,
            "variant": stream.variant,
            "switches": stream.switches,
            "checkpoint": stream.checkpoint,
            "stream": stream.key,
            "position": index + 1 if stream.phase == "train" else c.repetition,
            "store": store.name if store is not None else None,
            "store_updates": writable,
        }
        memory = MemoryPlan(str(store) if store is not None else None, writable, info)
        calls = needs_model(stream.agent)
        origin: dict[str, str] = {}
        if stream.agent not in LLM_AGENTS:  # a user's agent, with the variant's own options
            options = dict(self.options.get(stream.variant) or {})
            origin = agent_origin(stream.agent, options)
        else:
            settings = settings_for(stream.agent, self.settings)
            options = {"settings": settings} if settings else {}
        return Job(
            c,
            self.spec.name,
            self.spec_hash,
            dict(self.models.get(c.model, {})),
            memory,
            agent_name=stream.agent_name,
            agent_options=options or None,
            endpoint=self.endpoints.get(c.model) if calls else None,
            timeout_s=self.spec.execution.episode_timeout(calls_model=calls, real_server=False),
            agent_origin=origin,
        )

    def _may_start(self, left_in_stream: int) -> bool:
        """Whether ``limit`` leaves room for one more episode; if not, count the stream's rest."""
        if self.starts_left is None:
            return True
        if self.starts_left <= 0:
            self.outcome.held_back += left_in_stream
            return False
        self.starts_left -= 1
        return True

    def _hold_back(self, stream: Stream, model: str) -> None:
        """Checkpoints this stream has not reached wait for a later run (not a failure)."""
        for cp in self.spec.checkpoints:
            key = self.checkpoint_key(stream.variant, model, cp)
            if not self.ready[key].is_set():
                self.failed[key] = LIMITED
                self.ready[key].set()

    async def _run_with_retries(self, job: Job, db: ResultStore) -> tuple[Any, Any, Any] | None:
        """The episode's outcome, or None when it is given up in this run (the reason is in
        ``self.given_up``); attempts count from zero in every run."""
        eid = job.condition.episode_id
        policy = self.spec.execution
        label = job.endpoint or ""
        attempts = 0
        if (why := self._over_cap(eid, db, job.timeout_s)) is not None:  # given up by earlier runs
            return None
        while True:
            probe = self.breaker.probing(self.breaker.get(label))
            why = await self._admit(label)
            if why is not None:
                self.given_up[eid] = why
                return None
            kind, payload = await self._episode(job)
            self.breaker.release(label)
            if kind == "ok":
                self.breaker.success(label)
                record, steps, delta = payload
                return record, steps, delta
            fault = payload if isinstance(payload, Fault) else Fault("worker", str(payload))
            fault = replace(fault, message=redact(fault.message, secrets_of(job)))
            condition = {**asdict(job.condition), "stream": job.memory.info if job.memory else {}}
            component = component_of(fault, job.endpoint, job.backend)
            db.write_fault(
                eid,
                fault.kind,
                fault.message,
                condition,
                self.run_id,
                component,
                None if fault.failed_attempts is None else dict(fault.failed_attempts),
            )
            self.outcome.faults += 1
            if not (probe and fault.endpoint and fault.kind != "config"):
                attempts += 1  # a failed probe of a paused endpoint is the endpoint's fault
            self.breaker.fault(label, fault, time.monotonic())
            if (why := self._over_cap(eid, db, job.timeout_s)) is not None:
                return None
            why = self.breaker.stopped(label, time.monotonic())
            if why is None and attempts >= policy.max_attempts:
                why = f"{attempts} fault(s) in this run, the last: {fault.kind}: {fault.message}"
            if why is not None:
                self.given_up[eid] = why
                return None
            await asyncio.sleep(policy.retry_delay(attempts))

    def _over_cap(self, eid: str, db: ResultStore, limit: float | None) -> str | None:
        """Why ``eid`` is given up, when its worker faults or time-outs over all runs reached
        their cap (stored as given up, and noted in ``self.given_up`` and the outcome); else
        None. A stream cannot skip it: it stops there in every rerun, saying so, until the
        cap is raised (grid runs give such episodes up the same way: ``ResultStore``)."""
        policy = self.spec.execution
        for kind, cap in (("worker", policy.max_worker_faults), ("timeout", policy.max_timeouts)):
            n = db.capped_count(eid, kind, limit)  # time-outs at its limit now or longer
            if n >= cap:
                why = given_up_reason(n, cap, kind)
                db.give_up(eid, why)
                self.given_up[eid] = why
                longer = "execution.episode_timeout_s or " if kind == "timeout" else ""
                self.outcome.given_up[eid] = longer + CAPPED[kind][0]
                return why
        return None

    async def _admit(self, label: str) -> str | None:
        """Wait while the endpoint is paused; the reason it is stopped, or None to go."""
        while True:
            now = time.monotonic()
            why = self.breaker.stopped(label, now)
            if why is not None:
                return why
            if self.breaker.start(label, now):
                return None
            wait = self.breaker.get(label).paused_until - now
            await asyncio.sleep(min(max(wait, 0.05), 1.0))

    async def _train(self, stream: Stream) -> None:
        model = stream.conditions[0].model
        path = self.store_path(stream)
        finished = self.train_db.finished_ids()
        done = 0
        while done < len(stream.conditions) and stream.conditions[done].episode_id in finished:
            done += 1
        source = self.start_from(stream.variant)
        with KnowledgeStore.open(path) as store:
            # Decided by the store, not by whether its file exists: a start that failed (a
            # full disk, a killed run) leaves an empty file, which must still start from it.
            if source is not None and store.version == 0 and "source" not in store.meta():
                with KnowledgeStore.open(source, read_only=True) as src:
                    store.start_from(src)
            base = store.base_version
            if store.version - base > done:
                store.truncate(base + done)
            if store.version - base < done:
                raise AccumulationError(
                    f"{path} holds {store.version - base} training episodes but {done} are "
                    "recorded; the store was replaced or deleted: remove the results folder "
                    "to start over"
                )
            self.outcome.skipped += done
            for cp in self.spec.checkpoints:
                if cp <= done:
                    self._snapshot(store, stream, model, cp)
            for i in range(done, len(stream.conditions)):
                if not self._may_start(len(stream.conditions) - i):
                    self._hold_back(stream, model)
                    return
                learning = stream.frozen_after is None or i < stream.frozen_after
                job = self._job(stream, i, path, learning)
                result = await self._run_with_retries(job, self.train_db)
                if result is None:
                    why = self.given_up.get(job.condition.episode_id, "see the faults table")
                    self._fail(stream, model, i, why)
                    return
                record, steps, delta = result
                store.commit(job.condition.episode_id, job.condition.rules, delta)
                self.train_db.write_episode(record, steps)
                self.outcome.done += 1
                if self.on_done is not None:
                    self.on_done(stream.phase)
                if i + 1 in stream.snapshots:
                    self._snapshot(store, stream, model, i + 1)

    def _snapshot(self, store: KnowledgeStore, stream: Stream, model: str, checkpoint: int) -> None:
        target = self.snapshot_path(stream.variant, model, checkpoint)
        if not target.exists():
            store.snapshot(target, store.base_version + checkpoint, freeze=True)
        self.ready[self.checkpoint_key(stream.variant, model, checkpoint)].set()

    def _fail(self, stream: Stream, model: str, index: int, why: str) -> None:
        self.outcome.missing.append(f"{stream.key} stopped at episode {index + 1}: {why}")
        for cp in self.spec.checkpoints:
            key = self.checkpoint_key(stream.variant, model, cp)
            if not self.ready[key].is_set():
                given_up = " (at an episode given up)" if why.startswith("given up") else ""
                self.failed[key] = (
                    f"training of {stream.variant} stopped before {cp} episodes{given_up}"
                )
                self.ready[key].set()

    async def _evaluate(self, stream: Stream, trained: set[tuple[str, str]]) -> None:
        model = stream.conditions[0].model
        cp = stream.checkpoint if stream.checkpoint is not None else 0
        source = stream.store_variant or stream.variant
        key = self.checkpoint_key(source, model, cp)
        await self.ready[key].wait()
        if self.failed.get(key) == LIMITED:
            self.outcome.held_back += len(stream.conditions)
            return
        if key in self.failed:
            self.outcome.missing.append(f"{stream.key}: {self.failed[key]}")
            return
        snapshot = (
            self.snapshot_path(source, model, cp)
            if (source, model) in trained
            else self.start_from(source)
        )
        finished = self.eval_db.finished_ids()
        if not stream.writable:
            for i, c in enumerate(stream.conditions):
                if c.episode_id in finished:
                    self.outcome.skipped += 1
                    continue
                if not self._may_start(1):
                    continue
                job = self._job(stream, i, snapshot, False)
                result = await self._run_with_retries(job, self.eval_db)
                if result is None:
                    why = self.given_up.get(c.episode_id, "see the faults table")
                    self.outcome.missing.append(f"{stream.key}: episode {c.episode_id}: {why}")
                    continue
                record, steps, _delta = result
                self.eval_db.write_episode(record, steps)
                self.outcome.done += 1
                if self.on_done is not None:
                    self.on_done(stream.phase)
            return
        await self._evaluate_carried(stream, snapshot, finished)

    async def _evaluate_carried(
        self, stream: Stream, snapshot: Path | None, finished: set[str]
    ) -> None:
        """Evaluation with updates: a working copy of the snapshot carried through the stream."""
        rules = stream.conditions[0].rules
        path = self.carried_path(stream)
        done = 0
        while done < len(stream.conditions) and stream.conditions[done].episode_id in finished:
            done += 1
        if not path.exists():
            if snapshot is not None:
                with KnowledgeStore.open(snapshot, read_only=True) as src:
                    src.snapshot(path, freeze=False)
            else:
                KnowledgeStore.open(path).close()
        with KnowledgeStore.open(path) as store:
            base = len([e for e in store.episode_ids() if not e.startswith("eval:")])
            if store.version - base < done:
                raise AccumulationError(
                    f"{path} holds {store.version - base} evaluation episodes but {done} are "
                    "recorded; the store was replaced or deleted: remove the results folder "
                    "to start over"
                )
            store.truncate(base + done)
            self.outcome.skipped += done
            for i in range(done, len(stream.conditions)):
                if not self._may_start(len(stream.conditions) - i):
                    return
                job = self._job(stream, i, path, True)
                result = await self._run_with_retries(job, self.eval_db)
                if result is None:
                    why = self.given_up.get(job.condition.episode_id, "see the faults table")
                    self.outcome.missing.append(f"{stream.key} stopped at episode {i + 1}: {why}")
                    return
                record, steps, delta = result
                store.commit(f"eval:{job.condition.episode_id}", rules, delta)
                self.eval_db.write_episode(record, steps)
                self.outcome.done += 1
                if self.on_done is not None:
                    self.on_done(stream.phase)
