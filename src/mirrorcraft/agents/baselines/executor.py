"""The subgoal executor the planning baselines share with MineEvolve, and their common plumbing.

The MineEvolve paper runs DEPS, JARVIS-1, Optimus-1 and MineEvolve over one
low-level policy; here that policy is the checked-subgoal executor: a subgoal is
one skill action repeated until its checks hold, or until it used
``executor.max_actions`` actions or had ``executor.max_failed_actions`` failed ones
(limits read from mineevolve.yaml, so every method runs under the same ones). The
monitor's typed feedback (the same fields for every method) describes each
execution. A subclass decides how plans are made (``make_plan``), which ready
subgoal runs next (``choose_next``), what a failure leads to (``on_failure``) and
what an episode leaves in memory (``end_episode``).

Baselines that keep memory across episodes hold it in a ``RecordMemory``:
``load_knowledge`` receives a knowledge store's operations before ``start`` and
``knowledge_delta`` returns the operations an episode made. Without a store
memory lasts one episode (``memory: episode``) or stays in this object
(``memory: carry``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.agents.baselines.config import SharedLimits, baseline_settings, shared_limits
from mirrorcraft.agents.baselines.memory import RecordMemory
from mirrorcraft.agents.llm.base import LLMAgent, Reply
from mirrorcraft.agents.llm.templates import TemplateFile, load_template
from mirrorcraft.agents.mineevolve.checks import satisfied
from mirrorcraft.agents.mineevolve.feedback import Feedback, Monitor
from mirrorcraft.agents.mineevolve.plan import Plan, Subgoal, parse_subgoals
from mirrorcraft.agents.mineevolve.stats import SubgoalStats
from mirrorcraft.agents.plan_types import goal_of
from mirrorcraft.body.observation import Observation
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import CallMeta
from mirrorcraft.rules.ruleset import RuleSet

MAX_LOOPS = 64
MAX_PLANS_PER_STEP = 3
Parse = Callable[[dict[str, Any] | None], tuple[Any, str]]


@dataclass
class BaselineStats(SubgoalStats):
    """Per-episode figures (the record's ``memory`` field): calls, plans, memory and retrieval."""

    memory_calls: int = 0
    replans: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self, purpose: str, *, memory: bool = False) -> None:
        super().call(purpose)
        self.memory_calls += int(memory)

    def retrieval(self, entries: int, tokens: int, seconds: float) -> None:
        self.add_retrieval(entries, tokens, seconds)

    def count(self, key: str, n: int = 1) -> None:
        self.extra[key] = int(self.extra.get(key, 0)) + n

    def to_json(self) -> dict[str, Any]:
        return {
            **self.common_json(),
            "memory_calls": self.memory_calls,
            "replans": self.replans,
            **dict(sorted(self.extra.items())),
        }


def estimate_tokens(text: str) -> int:
    """One token per four characters: the estimate MineEvolve's retrieval budget uses too."""
    return (len(text) + 3) // 4


class SubgoalAgent(LLMAgent):
    """A planner of checked subgoals over the shared executor; subclasses supply the method."""

    method = ""
    """The configuration name; also its section in baselines.yaml."""
    template_names: tuple[str, ...] = ("common", "baselines")
    keeps_memory = False
    """True for methods whose memory can persist across episodes in a knowledge store."""
    memory_kinds: tuple[str, ...] = ()
    memory_format = "operations"

    def __init__(
        self,
        name: str,
        client: Any,
        vanilla: RuleSet,
        *,
        options: dict[str, Any] | None = None,
        **kwargs: Any,
    ):
        super().__init__(name, client, vanilla, **kwargs)
        opts = dict(options or {})
        overrides = opts.pop("settings", None) or {}
        self.memory_mode = str(opts.pop("memory", "episode"))
        if self.memory_mode not in ("episode", "carry"):
            raise ValueError(f"memory must be 'episode' or 'carry', not {self.memory_mode!r}")
        if opts:
            raise ValueError(f"unknown {self.method} options: {sorted(opts)}")
        self.limits: SharedLimits = shared_limits(overrides)
        self.settings: Any = baseline_settings(self.method, overrides)
        self.shared = load_template("baselines")
        self.prompts: TemplateFile = load_template(self.method)
        self.memory = RecordMemory()
        self._loaded: list[dict[str, Any]] = []
        self._writable = True
        self._store_attached = False
        self.stats = BaselineStats()
        self.cross_episode_memory = self.keeps_memory

    # -- memory across episodes -----------------------------------------------------------
    def load_knowledge(self, ops: Sequence[Mapping[str, Any]], *, writable: bool) -> None:
        """A store's operations the next episode starts from; read-only when not writable."""
        if not self.keeps_memory:
            if ops or writable:
                raise ValueError(f"{self.method} keeps no memory across episodes")
            return
        self._loaded = [dict(op) for op in ops]
        self._writable = writable
        self._store_attached = True

    def knowledge_delta(self) -> list[dict[str, Any]]:
        return list(self.memory.ops)

    def memory_stats(self) -> dict[str, Any]:
        return self.stats.to_json()

    # -- episode lifecycle ---------------------------------------------------------------------
    def reset(self) -> None:
        if self.memory_mode == "carry" and not self._store_attached:
            memory = RecordMemory(dict(self.memory.records), self._writable)
        else:
            memory = RecordMemory.replay(self._loaded, writable=self._writable)
        self.memory = memory
        self.monitor = Monitor(self.limits.monitor, self.limits.failure_type)
        self.plan: Plan | None = None
        self.history_fb: list[tuple[Feedback, Subgoal]] = []
        self.completed: list[Subgoal] = []
        self._awaiting = False
        self._unseen: list[tuple[dict[str, Any], Observation]] = []
        self._plan_no = 0
        self.stats = BaselineStats(
            store_at_start=self.memory.counts(self.memory_kinds), writable=self.memory.writable
        )
        assert self.ctx is not None
        self.goal_items = goal_of(self.vanilla, get_task(self.ctx.task).final.advancement)[1]
        self.begin_episode()

    def begin_episode(self) -> None:
        """Method-specific state (called at the end of ``reset``)."""

    def finish(self, obs: Observation) -> None:
        super().finish(obs)
        sg = self.monitor.subgoal
        if self._awaiting and obs.last_result is not None and sg is not None:
            self.monitor.record(obs.last_result)
            self.observe_result(sg.action, obs)
            fb = self.monitor.close(obs)
            self.history_fb.append((fb, sg))
            self.stats.feedback(fb)
            if fb.success:
                self.completed.append(sg)
        self._awaiting = False
        self.end_episode(obs, succeeded(obs))
        self.stats.store_at_end = self.memory.counts(self.memory_kinds)
        self.stats.operations = len(self.memory.ops)

    def end_episode(self, obs: Observation, success: bool) -> None:
        """What the episode leaves in memory (no model calls here)."""

    # -- the control loop ---------------------------------------------------------------------------
    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        if self._awaiting and obs.last_result is not None and self.monitor.subgoal is not None:
            self.monitor.record(obs.last_result)
            self._unseen.append((self.monitor.subgoal.action, obs))
            self.observe_result(self.monitor.subgoal.action, obs)
        self._awaiting = False
        plans = 0
        for _ in range(MAX_LOOPS):
            if self.plan is None or self.plan.current is None:
                if plans >= MAX_PLANS_PER_STEP:
                    return None
                plans += 1
                stale = plans > 1 and self.plan is not None and self.plan.current is None
                self.plan = await self.make_plan(obs, stale=stale)
                if self.plan is None:
                    return None
                self._plan_no += 1
                self.stats.plans += 1
                continue
            if self.monitor.subgoal is not self.plan.current:
                self.choose_next(self.plan, obs)
                sg = self.plan.current
                assert sg is not None
                self.monitor.begin(sg, obs)
                if satisfied(sg.checks, obs, None, obs):
                    await self._succeeded(self.monitor.close(obs), sg, obs)
                    continue
            sg = self.plan.current
            assert sg is not None
            if satisfied(sg.checks, obs, self.monitor.last_ok, self.monitor.start_obs):
                await self._succeeded(self.monitor.close(obs), sg, obs)
                continue
            if (
                self.monitor.failed_actions >= self.limits.executor.max_failed_actions
                or self.monitor.actions >= sg.max_actions
            ):
                fb = self.monitor.close(obs)
                self.history_fb.append((fb, sg))
                self.stats.feedback(fb)
                plans += await self.on_failure(fb, sg, obs)
                continue
            self._awaiting = True
            return dict(sg.action), f"{sg.id}: {sg.condition}"
        return None

    async def _succeeded(self, fb: Feedback, sg: Subgoal, obs: Observation) -> None:
        assert self.plan is not None
        self.history_fb.append((fb, sg))
        self.stats.feedback(fb)
        self.plan.done += 1
        self.completed.append(sg)
        await self.after_success(fb, sg, obs)

    def observe_result(self, action: dict[str, Any], obs: Observation) -> None:
        """Hook for each action result the executor sees (``obs.last_result``)."""

    async def after_success(self, fb: Feedback, sg: Subgoal, obs: Observation) -> None:
        """Hook after a subgoal's checks held."""

    def choose_next(self, plan: Plan, obs: Observation) -> None:
        """Put the subgoal to run next at ``plan.done`` (default: plan order)."""

    async def make_plan(self, obs: Observation, *, stale: bool = False) -> Plan | None:
        raise NotImplementedError

    async def on_failure(self, fb: Feedback, sg: Subgoal, obs: Observation) -> int:
        """Handle a failed subgoal; return 1 when it made a new plan (counted per step)."""
        raise NotImplementedError

    # -- model calls -------------------------------------------------------------------------------------
    def system_parts(self) -> dict[str, str]:
        fmt = self.shared.render(
            "subgoal_format", {"MAX_SUBGOALS": str(self.limits.executor.max_plan_subgoals)}
        )
        return {**self.system_common(), "SUBGOAL_FORMAT": fmt}

    async def ask(
        self,
        system: str,
        user: str,
        purpose: str,
        obs: Observation,
        extra: Mapping[str, Any],
        *,
        memory: bool = False,
    ) -> Reply:
        # Observations acted on without a call (only the offline scripted policy reads them).
        observed = [(a, o) for a, o in self._unseen if o.step < obs.step]
        self._unseen = []
        meta = CallMeta(
            purpose,
            f"{self.method}_{purpose}",
            self.fields(obs),
            {"obs": obs, "observed": observed, **extra},
        )
        self.stats.call(purpose, memory=memory)
        return await self.call(system, user, meta)

    async def ask_json(
        self,
        system: str,
        user: str,
        purpose: str,
        obs: Observation,
        extra: Mapping[str, Any],
        parse: Parse,
        *,
        memory: bool = False,
    ) -> Any:
        """One call and, when ``parse`` finds the reply unusable, one JSON repair call."""
        reply = await self.ask(system, user, purpose, obs, extra, memory=memory)
        value, problem = parse(reply.doc)
        if value is not None:
            return value
        self.unusable()
        self.stats.json_repairs += 1
        again = self.shared.render("json_repair", {"ORIGINAL_USER": user, "PROBLEM": problem})
        reply = await self.ask(system, again, purpose, obs, extra, memory=memory)
        value, _problem = parse(reply.doc)
        if value is None:
            self.unusable()
        return value

    def parse_plan(self, key: str = "subgoals") -> Parse:
        ex = self.limits.executor

        def parse(doc: dict[str, Any] | None) -> tuple[tuple[Subgoal, ...] | None, str]:
            if doc is None:
                return None, "no JSON object found"
            subgoals, problem = parse_subgoals(doc.get(key), ex.max_actions, ex.max_plan_subgoals)
            return (subgoals or None), problem

        return parse

    def new_plan(self, subgoals: Sequence[Subgoal]) -> Plan:
        return Plan(f"p_{self._plan_no + 1}", list(subgoals))

    def timed(self) -> float:
        return time.perf_counter()


def succeeded(obs: Observation) -> bool:
    """Whether the task's final milestone is done in this observation."""
    milestones = obs.progress.milestones
    return bool(milestones) and milestones[-1].done
